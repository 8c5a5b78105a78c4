/* libFuzzer harness for the configuration loaders: util/conf.c (YAML into a
 * tree), sim/scen/plat.c (platform profiles) and sim/scen/scen.c (scenarios).
 *
 * The input is one YAML document, loaded as a profile and again as a
 * scenario. A refusal must carry a message that names where: the document
 * ("fuzz.yaml:") or, for a scenario's shipped platform, that profile. An
 * acceptance must be self-consistent. Nothing may crash, hang or leak.
 * Inputs naming files ('/') are skipped for scenarios: a platform path like
 * /dev/zero would make the harness read the filesystem. */
#include "drv/qos_scen.h"
#include "sim/scen/plat.h"
#include "sim/scen/scen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_check.h"

static void check_refusal(int rc, const struct err *e)
{
    FZ_CHECK(rc < 0, "rc %d", rc);
    FZ_CHECK(e->msg[0], "empty message for %d", rc);
    if (rc != -QOSIM_ENOMEM)
        FZ_CHECK(!strncmp(e->msg, "fuzz.yaml:", 10) || !strncmp(e->msg, "profiles/", 9),
                 "message does not say where: %s", e->msg);
}

/* Every key a reader asked a map for, whatever came of the load, is one the
 * map declared (conf_keys): a reader and its declaration agree. */
static void check_declared(const struct conf_node *n)
{
    FZ_CHECK(!n->undeclared, "key '%s' read but not declared", n->undeclared);
    for (unsigned i = 0; i < n->nkids; i++)
        check_declared(&n->kids[i]);
}

/* An accepted qos section is something the driver can carry out. */
static void check_set(const struct scen *s, const struct scen_qos_set *q)
{
    for (int l = 0; l < PLAT_NLEVEL; l++)
        for (int t = 0; t < 2; t++)
            if (q->has_mask[l] >> t & 1)
                FZ_CHECK(s->plat.cache[l].alloc.classes &&
                             q->mask[l][t] >> s->plat.cache[l].alloc.cbm_len == 0 &&
                             plat_mask_ok(&s->plat, (enum plat_level)l, q->mask[l][t], NULL),
                         "level %d mask 0x%llx", l, (unsigned long long)q->mask[l][t]);
    FZ_CHECK(!q->has_mba ||
                 (s->plat.bw.kind == BW_DELAY && q->mba <= 100 && 100 - q->mba <= s->plat.bw.max),
             "mba %u", q->mba);
    FZ_CHECK(!q->has_limit || s->plat.bw.kind == BW_RATE, "limit");
    FZ_CHECK(!q->has_smba || s->plat.sbw.kind == BW_RATE, "smba");
    /* CBQRI: non-empty block masks, Rbwb 1..MRBWB, Mweight a byte. */
    int rv = s->plat.vendor == PLAT_RISCV;
    for (int l = 0; rv && l < PLAT_NLEVEL; l++)
        for (int t = 0; t < 2; t++)
            FZ_CHECK(!(q->has_mask[l] >> t & 1) || q->mask[l][t], "empty CBQRI mask");
    FZ_CHECK(!q->has_share || (s->plat.bw.kind == BW_SHARE && q->rbwb >= 1 &&
                               q->rbwb <= s->plat.bw.mrbwb && q->weight <= 255),
             "share %u %u", q->rbwb, q->weight);
    int any = q->has_mba || q->has_limit || q->has_share;
    for (int l = 0; l < PLAT_NLEVEL; l++)
        any |= q->has_mask[l] != 0;
    FZ_CHECK(!q->secure || rv || !any, "confidential settings off RISC-V");
}

static void check_qos(const struct scen *s)
{
    const struct scen_qos *q = &s->qos;
    if (!q->present)
        return;
    FZ_CHECK(s->plat.vendor != PLAT_RISCV || (!q->cdp[PLAT_L2] && !q->cdp[PLAT_L3]),
             "CDP on riscv");
    FZ_CHECK(q->ngrp + 1 <= qos_scen_classes(&s->plat, q->cdp), "%u groups", q->ngrp);
    for (unsigned g = 0; g < q->ngrp; g++) {
        check_set(s, &q->init[g]);
        check_set(s, &q->tinit[g]);
    }
    for (unsigned i = 0; i < s->ntask; i++)
        FZ_CHECK(q->task_grp[i] >= -1 && q->task_grp[i] < (int)q->ngrp, "task %u", i);
    for (unsigned p = 0; p < s->nphase; p++)
        for (unsigned k = 0; k < s->phase[p].nset; k++) {
            const struct scen_set *x = &s->phase[p].set[k];
            FZ_CHECK(x->kind == SCEN_QOS || x->kind == SCEN_QOS_MOVE, "direct setting with qos");
            FZ_CHECK(x->q.grp < q->ngrp || x->q.grp == UINT32_MAX, "group %u", x->q.grp);
            if (x->kind == SCEN_QOS)
                check_set(s, &x->q);
            else
                FZ_CHECK(x->task < s->ntask, "task %u", x->task);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct conf c;
    struct err e = {0};
    int rc = conf_load_mem(&c, "fuzz.yaml", (const char *)data, size, &e);
    if (rc) {
        check_refusal(rc, &e);
        return 0;
    }
    struct plat *p = malloc(sizeof *p);
    if (!p)
        abort();
    rc = plat_from_conf(p, &c, &e);
    if (rc) {
        check_refusal(rc, &e);
    } else {
        FZ_CHECK(p->ncpus == p->ncores * p->topo.threads && p->ncpus <= PLAT_MAX_CPUS, "cpus %u",
                 p->ncpus);
        for (int l = 0; l < PLAT_NLEVEL; l++) {
            const struct plat_cache *pc = &p->cache[l];
            if (!pc->present)
                continue;
            FZ_CHECK(pc->geom.assoc && pc->repl, "level %d", l);
            if (pc->alloc.classes)
                FZ_CHECK(pc->alloc.cbm_len && pc->geom.assoc % pc->alloc.cbm_len == 0,
                         "cbm_len %u ways %u", pc->alloc.cbm_len, pc->geom.assoc);
        }
        for (unsigned i = 0; i < p->ncpus; i += 1 + p->ncpus / 8) {
            struct plat_place pl;
            plat_place(p, i, &pl);
            FZ_CHECK(pl.node < p->nnodes && pl.domain < p->ndomains, "cpu %u", i);
            for (int l = 0; l < PLAT_NLEVEL; l++)
                if (p->cache[l].present)
                    FZ_CHECK(plat_cache_inst(p, l, i) < plat_cache_count(p, l), "cpu %u", i);
        }
    }
    free(p);
    check_declared(c.root);
    conf_free(&c);

    if (memchr(data, '/', size))
        return 0;
    rc = conf_load_mem(&c, "fuzz.yaml", (const char *)data, size, &e);
    if (rc)
        return 0;
    struct scen *s = malloc(sizeof *s);
    if (!s)
        abort();
    rc = scen_from_conf(s, &c, "", &qos_scen, &e);
    if (rc) {
        check_refusal(rc, &e);
    } else {
        FZ_CHECK(s->ntask >= 1 && s->duration > 0 && s->interval > 0, "scenario");
        for (unsigned i = 0; i < s->ntask; i++)
            FZ_CHECK(s->task[i].cpu < s->plat.ncpus, "task %u cpu", i);
        for (unsigned i = 1; i < s->nphase; i++)
            FZ_CHECK(s->phase[i].at > s->phase[i - 1].at && s->phase[i].at < s->duration,
                     "phase %u", i);
        check_qos(s);
        /* Direct masks follow the vendor's rules as the qos section's do. */
        for (unsigned i = 0; i < s->nphase; i++)
            for (unsigned k = 0; k < s->phase[i].nset; k++) {
                const struct scen_set *x = &s->phase[i].set[k];
                FZ_CHECK(x->kind != SCEN_MASK || plat_mask_ok(&s->plat, x->level, x->cbm, NULL),
                         "phase %u mask 0x%llx", i, (unsigned long long)x->cbm);
            }
        scen_free(s);
    }
    free(s);
    check_declared(c.root);
    conf_free(&c);
    return 0;
}
