/* A scenario's `qos:` section: groups of tasks with allocation masks and
 * bandwidth settings, which the platform's driver turns into register
 * writes (drv/qos.c). Everything the driver will check is checked here
 * first against the profile, so a mistake is reported with its line before
 * the run, as resctrl rejects a bad schemata line before committing it. */
#include "qos_scen.h"

#include "rdt.h"
#include "sim/mach.h"
#include "util/bits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mon_names[] = {"none", "task", "group"};
/* resctrl's mbm_assign_mode values (info/L3_MON/mbm_assign_mode) */
static const char *const assign_names[] = {"default", "mbm_event"};
static const char *const evt_names[2] = {"total", "local"};
static const enum plat_level qos_levels[] = {PLAT_L3, PLAT_L2};

unsigned qos_scen_classes(const struct plat *p, const int cdp[PLAT_NLEVEL])
{
    unsigned n = UINT32_MAX;
    for (int l = 0; l < PLAT_NLEVEL; l++) {
        /* CDP pairs the mask MSRs: COS_MAX_CDP = COS_MAX >> 1 (docs/registers.md 1). */
        unsigned k = p->cache[l].alloc.classes >> (cdp[l] ? 1 : 0);
        if (p->cache[l].alloc.classes && k < n)
            n = k;
    }
    if (p->bw.kind != BW_NONE && p->bw.classes < n)
        n = p->bw.classes;
    /* SMBA's classes too, as rdt_init takes the least of every resource's. */
    if (p->sbw.kind != BW_NONE && p->sbw.classes < n)
        n = p->sbw.classes;
    return n == UINT32_MAX ? 1 : n;
}

/* The task an item of a tasks list names. */
static int list_task(const struct scen *s, struct conf *c, struct conf_node *x, unsigned *out,
                     struct err *e)
{
    for (unsigned i = 0; x->type == CONF_SCALAR && i < s->ntask; i++)
        if (!strcmp(s->task[i].name, x->val)) {
            *out = i;
            return 0;
        }
    return conf_error(c, x, e, "no task called '%s'",
                      x->type == CONF_SCALAR ? x->val : "(not a name)");
}

static int is_riscv(const struct scen *s)
{
    return s->plat.vendor == PLAT_RISCV;
}

/* The platform's vendor rule (plat_mask_ok), as the driver's writes will
 * meet it in the registers: refused here with the line of the mask. */
static int check_mask(const struct scen *s, struct conf *c, struct conf_node *n, enum plat_level l,
                      uint64_t v, struct err *e)
{
    const char *why;
    if (!plat_mask_ok(&s->plat, l, v, &why))
        return conf_error(c, n, e, "0x%llx: %s of %s %s", (unsigned long long)v, plat_level_name[l],
                          s->plat.name, why);
    return 0;
}

static int load_mask(const struct scen *s, struct conf *c, struct conf_node *map, enum plat_level l,
                     struct scen_qos_set *q, struct err *e)
{
    const char *key = plat_level_name[l];
    struct conf_node *n = conf_get(map, key);
    if (!n)
        return 0;
    const struct plat_alloc *a = &s->plat.cache[l].alloc;
    if (!s->plat.cache[l].present || !a->classes)
        return conf_error(c, n, e, "%s of %s has no allocation control", key, s->plat.name);
    uint64_t max = bits_mask(a->cbm_len), v;
    int rc;
    if (n->type != CONF_MAP) {
        if ((rc = conf_node_u64(c, n, 0, max, &v, e)) || (rc = check_mask(s, c, n, l, v, e)))
            return rc;
        q->mask[l][MACH_DATA] = q->mask[l][MACH_CODE] = v;
        q->has_mask[l] = 1u << MACH_DATA | 1u << MACH_CODE;
        return 0;
    }
    if (is_riscv(s) && !a->cdp)
        return conf_error(c, n, e,
                          "the %s capacity controllers of %s have one allocation for code and "
                          "data (no per-AT limits)",
                          key, s->plat.name);
    if (!is_riscv(s) && !s->qos.cdp[l])
        return conf_error(c, n, e, "code and data masks need CDP: add %s to qos.cdp", key);
    static const char *const types[2] = {[MACH_DATA] = "data", [MACH_CODE] = "code"};
    if ((rc = conf_keys(c, n, e, "code", "data", NULL)))
        return rc;
    for (int t = MACH_DATA; t <= MACH_CODE; t++) {
        struct conf_node *x = conf_get(n, types[t]);
        if (!x)
            continue;
        if ((rc = conf_node_u64(c, x, 0, max, &v, e)) || (rc = check_mask(s, c, x, l, v, e)))
            return rc;
        q->mask[l][t] = v;
        q->has_mask[l] |= 1u << t;
    }
    if (!q->has_mask[l])
        return conf_error(c, n, e, "give a code mask, a data mask, or both");
    return conf_check_unused(c, n, e);
}

/* units: {L3: SIZE, L2: SIZE}: CBQRI 1.0's cc_cunits, a limit on the
 * capacity a group may occupy in its blocks at each cache instance, given
 * in bytes and programmed in capacity units (lines: cbqri.h). Only where
 * that level's capacity controllers report CUNITS. */
static int load_units(const struct scen *s, struct conf *c, struct conf_node *map,
                      struct scen_qos_set *q, struct err *e)
{
    struct conf_node *n = conf_get(map, "units");
    int rc = 0;
    if (!n)
        return 0;
    if (!is_riscv(s) || s->plat.cbqri_spec != PLAT_CBQRI_1_0)
        return conf_error(c, n, e, "%s has no capacity-unit limits (CBQRI 1.0's cc_cunits)",
                          s->plat.name);
    if ((rc = conf_expect(c, n, CONF_MAP, e)) || (rc = conf_keys(c, n, e, "L3", "L2", NULL)))
        return rc;
    for (unsigned k = 0; k < sizeof qos_levels / sizeof *qos_levels; k++) {
        enum plat_level l = qos_levels[k];
        const char *key = plat_level_name[l];
        if (!conf_get(n, key))
            continue;
        unsigned i = 0;
        while (i < s->plat.n_cbqri_cap && s->plat.cbqri_cap[i].level != l)
            i++;
        if (i == s->plat.n_cbqri_cap || !s->plat.cbqri_cap[i].cunits)
            return conf_error(c, conf_get(n, key), e,
                              "the %s capacity controllers of %s have no capacity-unit limits "
                              "(CUNITS 0)",
                              key, s->plat.name);
        const struct plat_cache *pc = &s->plat.cache[l];
        uint64_t bytes;
        if ((rc = conf_size(c, n, key, CONF_REQ, pc->geom.line, pc->geom.size, &bytes, e)))
            return rc;
        q->units[l] = bytes / pc->geom.line;
        q->has_units |= 1u << l;
    }
    return 0;
}

/* An AMD bandwidth limit, `limit` (L3BE) or `smba`: a rate in the 1/8
 * GB/s steps of L3QOS_BW_CONTROL_n and L3QOS_SMBW_CONTROL_n (56375; APM
 * vol. 2, 19.4.6), up to their len-bit field, 0 unlimited. */
static int load_amd_rate(struct conf *c, struct conf_node *map, const char *key, unsigned len,
                         double *out, struct err *e)
{
    double top = (double)bits_mask(len) * 0.125e9;
    int rc = conf_rate(c, map, key, CONF_REQ, 0, top, out, e);
    if (rc)
        return rc;
    if (*out > 0 && *out < 0.125e9)
        return conf_error(c, conf_get(map, key), e,
                          "the smallest limit is 0.125GB/s (0 means unlimited)");
    return 0;
}

static int load_bw(const struct scen *s, struct conf *c, struct conf_node *map,
                   struct scen_qos_set *q, struct err *e)
{
    const struct plat_bw *b = &s->plat.bw;
    struct conf_node *mba = conf_get(map, "mba"), *lim = conf_get(map, "limit");
    struct conf_node *res = conf_get(map, "reserve"), *wt = conf_get(map, "weight");
    int rc = 0;
    if ((res || wt) && b->kind != BW_SHARE)
        return conf_error(c, res ? res : wt, e,
                          "%s has no bandwidth reservations (reserve and weight are CBQRI's)",
                          s->plat.name);
    if ((mba || lim) && b->kind == BW_SHARE)
        return conf_error(c, mba ? mba : lim, e,
                          "%s reserves bandwidth blocks: use reserve (percent) and weight",
                          s->plat.name);
    if (res || wt) {
        /* Rbwb counts blocks of NBWBLKS (spec 4.5), 1 to MRBWB. */
        double pct = 0;
        uint64_t w = 1;
        if (res && (rc = conf_pct(c, map, "reserve", CONF_REQ, &pct, e)))
            return rc;
        if (wt && (rc = conf_u64(c, map, "weight", CONF_REQ, 0, 255, &w, e)))
            return rc;
        q->rbwb = (unsigned)(pct / 100 * b->nblks + 0.5);
        if (res && (q->rbwb < 1 || q->rbwb > b->mrbwb))
            return conf_error(c, res, e,
                              "%g%% is %u of %u blocks; a reservation is 1 to %u blocks (MRBWB)",
                              pct, q->rbwb, b->nblks, b->mrbwb);
        if (!res)
            q->rbwb = 1; /* a weight alone: the least reservation there is */
        q->weight = (unsigned)w;
        q->has_share = 1;
    }
    if (mba && b->kind != BW_DELAY)
        return conf_error(c, mba, e, "%s has no MBA throttle%s", s->plat.name,
                          b->kind == BW_RATE ? " (it limits bandwidth by rate: use limit)" : "");
    if (lim && b->kind != BW_RATE)
        return conf_error(c, lim, e, "%s has no bandwidth rate limit%s", s->plat.name,
                          b->kind == BW_DELAY ? " (it throttles by MBA percent: use mba)" : "");
    if (mba) {
        uint64_t v = 0;
        /* resctrl's MB: the share of bandwidth left, 100 - delay, from the
         * granularity (100 - max throttle) to 100. */
        if ((rc = conf_u64(c, map, "mba", CONF_REQ, 100 - b->max, 100, &v, e)))
            return rc;
        if (b->granularity && (100 - v) % b->granularity)
            return conf_error(c, mba, e, "%llu%%: %s takes steps of %u%%", (unsigned long long)v,
                              s->plat.name, b->granularity);
        q->has_mba = 1;
        q->mba = (unsigned)v;
    }
    if (lim) {
        if ((rc = load_amd_rate(c, map, "limit", b->max, &q->limit, e)))
            return rc;
        q->has_limit = 1;
    }
    return 0;
}

/* smba: RATE, AMD SMBA (qos.slow_bandwidth), resctrl's SMBA schemata line:
 * a cap on what the group's CPUs of each L3 domain read from slow memory,
 * all of it together. Linux gives SMBA the properties of AMD's MBA
 * resource (commit a5b699665580), so it is written as `limit` is: 1/8 GB/s
 * steps of L3QOS_SMBW_CONTROL_n's BW_LEN bits (APM vol. 2, 19.4.6), 0
 * unlimited. */
static int load_smba(const struct scen *s, struct conf *c, struct conf_node *map,
                     struct scen_qos_set *q, struct err *e)
{
    const struct plat_bw *b = &s->plat.sbw;
    struct conf_node *n = conf_get(map, "smba");
    if (!n)
        return 0;
    if (b->kind == BW_NONE)
        return conf_error(c, n, e,
                          "%s has no slow memory bandwidth allocation (SMBA, the profile's "
                          "qos.slow_bandwidth)",
                          s->plat.name);
    int rc = load_amd_rate(c, map, "smba", b->max, &q->smba, e);
    if (rc)
        return rc;
    q->has_smba = 1;
    return 0;
}

/* A group's reservations stay within what the controller lets be reserved,
 * with one block left for the default group (Rbwb is at least 1, 4.5). */
static int check_resv(struct scen *s, struct conf *c, struct conf_node *map,
                      const struct scen_qos_set *q, struct err *e)
{
    struct scen_qos *sq = &s->qos;
    if (!q->has_share || q->grp >= sq->ngrp)
        return 0;
    unsigned *r = &sq->resv[(q->secure ? sq->ngrp : 0)], sum = 0;
    r[q->grp] = q->rbwb;
    for (unsigned g = 0; g < sq->ngrp; g++)
        sum += r[g];
    if (sum + 1 > s->plat.bw.mrbwb)
        return conf_error(c, conf_get(map, "reserve") ? conf_get(map, "reserve") : map, e,
                          "%sgroups would reserve %u of %u blocks; at most %u may be, one "
                          "staying with the default group",
                          q->secure ? "confidential " : "", sum, s->plat.bw.nblks,
                          s->plat.bw.mrbwb - 1);
    return 0;
}

/* The settings keys of a group (qos.groups[i] or a phase's qos[i]); on a
 * CBQRI platform `confidential` holds the same keys for the group's
 * requests with C set, into *tee (NULL: not allowed here). */
static int load_settings(struct scen *s, struct conf *c, struct conf_node *map,
                         struct scen_qos_set *q, struct scen_qos_set *tee, struct err *e)
{
    q->line = map->line;
    int rc = 0;
    for (unsigned k = 0; k < sizeof qos_levels / sizeof *qos_levels && !rc; k++)
        rc = load_mask(s, c, map, qos_levels[k], q, e);
    if (!rc)
        rc = load_units(s, c, map, q, e);
    if (!rc)
        rc = load_bw(s, c, map, q, e);
    if (!rc)
        rc = load_smba(s, c, map, q, e);
    if (!rc)
        rc = check_resv(s, c, map, q, e);
    struct conf_node *t = conf_get(map, "confidential");
    if (rc || !t)
        return rc;
    if (!is_riscv(s) || s->plat.cbqri_spec != PLAT_CBQRI_DRAFT)
        return conf_error(c, t, e, "%s has no confidential (C bit) configuration%s", s->plat.name,
                          is_riscv(s) ? ": CBQRI 1.0 dropped the 2023 draft's secure windows" : "");
    if (!tee)
        return conf_error(c, t, e, "confidential settings go in a group, not inside another");
    /* tasks and confidential are refused in here, each with its reason. */
    if ((rc = conf_expect(c, t, CONF_MAP, e)) ||
        (rc = conf_keys(c, t, e, "L3", "L2", "units", "mba", "limit", "smba", "reserve", "weight",
                        "tasks", "confidential", NULL)))
        return rc;
    tee->grp = q->grp;
    tee->secure = 1;
    if ((rc = load_settings(s, c, t, tee, NULL, e)))
        return rc;
    if (conf_get(t, "tasks"))
        return conf_error(c, conf_get(t, "tasks"), e,
                          "a group's tasks are its tasks in both worlds: list them beside "
                          "confidential");
    return conf_check_unused(c, t, e);
}

/* groups[].counters: false leaves a group's monitoring IDs without ABMC
 * counters, as resctrl's mbm_L3_assignments "_" (or mbm_assign_on_mkdir 0). */
static int load_counters(struct scen *s, struct conf *c, struct conf_node *m, unsigned g,
                         struct err *e)
{
    struct conf_node *n = conf_get(m, "counters");
    int on = 1, rc;
    if (!n)
        return 0;
    if (!s->qos.mbm_event)
        return conf_error(
            c, n, e, "counters are assigned in ABMC's mbm_event mode only (qos.mbm_assign_mode)");
    if ((rc = conf_bool(c, m, "counters", CONF_REQ, &on, e)))
        return rc;
    s->qos.init[g].no_counters = !on;
    return 0;
}

static int load_groups(struct scen *s, struct conf *c, struct conf_node *list, struct err *e)
{
    struct scen_qos *q = &s->qos;
    int rc = conf_expect(c, list, CONF_SEQ, e);
    if (rc)
        return rc;
    unsigned cap = qos_scen_classes(&s->plat, q->cdp);
    /* io_alloc takes the L3's highest class when groups could use it. */
    int io = q->has_io && cap == s->plat.cache[PLAT_L3].alloc.classes >> q->cdp[PLAT_L3];
    if (list->nkids + 1 + io > cap)
        return conf_error(c, list, e,
                          "%u groups and the default group need %u classes; %s offers %u%s%s",
                          list->nkids, list->nkids + 1, s->plat.name, cap - io,
                          q->cdp[PLAT_L3] || q->cdp[PLAT_L2] ? " with CDP on" : "",
                          io ? " beside io_alloc's" : "");
    q->ngrp = list->nkids;
    q->grp = calloc(q->ngrp + 1, sizeof *q->grp);
    q->init = calloc(q->ngrp + 1, sizeof *q->init);
    q->tinit = calloc(q->ngrp + 1, sizeof *q->tinit);
    q->resv = calloc(2 * (size_t)q->ngrp + 1, sizeof *q->resv);
    if (!q->grp || !q->init || !q->tinit || !q->resv)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    for (unsigned g = 0; g < q->ngrp && !rc; g++) {
        struct conf_node *m = &list->kids[g];
        const char *name = NULL;
        if ((rc = conf_expect(c, m, CONF_MAP, e)) ||
            (rc = conf_keys(c, m, e, "name", "tasks", "L3", "L2", "units", "mba", "limit", "smba",
                            "reserve", "weight", "confidential", "counters", NULL)) ||
            (rc = conf_str(c, m, "name", CONF_REQ, &name, e)) ||
            (rc = load_counters(s, c, m, g, e)))
            return rc;
        if (strlen(name) >= sizeof q->grp[g] || !*name || !strcmp(name, "default"))
            return conf_error(c, conf_get(m, "name"), e,
                              "names are 1 to 63 characters, and 'default' is class 0's");
        for (unsigned j = 0; j < g; j++)
            if (!strcmp(q->grp[j], name))
                return conf_error(c, conf_get(m, "name"), e, "a group called '%s' already exists",
                                  name);
        snprintf(q->grp[g], sizeof q->grp[g], "%s", name);
        q->init[g].grp = g;
        q->tinit[g].grp = g;
        q->tinit[g].secure = 1;
        if ((rc = load_settings(s, c, m, &q->init[g], &q->tinit[g], e)))
            return rc;
        struct conf_node *t = conf_get(m, "tasks");
        if (t && (rc = conf_expect(c, t, CONF_SEQ, e)))
            return rc;
        for (unsigned k = 0; t && k < t->nkids; k++) {
            struct conf_node *x = &t->kids[k];
            unsigned i;
            if ((rc = list_task(s, c, x, &i, e)))
                return rc;
            if (q->task_grp[i] >= 0)
                return conf_error(c, x, e, "task '%s' is already in group '%s'", x->val,
                                  q->grp[q->task_grp[i]]);
            q->task_grp[i] = (int)g;
        }
    }
    return rc;
}

/* A BMEC event's transaction types: a mask (bit i: type i) or a list of
 * resctrl's names for them (event_filter). */
static int load_types(struct conf *c, struct conf_node *n, uint32_t *out, struct err *e)
{
    uint64_t v = 0;
    int rc;
    if (n->type != CONF_SEQ) {
        rc = conf_node_u64(c, n, 0, bits_mask(RDT_NBW_TYPES), &v, e);
        *out = (uint32_t)v;
        return rc;
    }
    for (unsigned k = 0; k < n->nkids; k++) {
        struct conf_node *x = &n->kids[k];
        unsigned i = 0;
        while (x->type == CONF_SCALAR && i < RDT_NBW_TYPES && strcmp(x->val, rdt_bw_type_name[i]))
            i++;
        if (x->type != CONF_SCALAR || i == RDT_NBW_TYPES)
            return conf_error(c, x, e,
                              "'%s' is not a transaction type (local_reads, remote_reads, "
                              "local_non_temporal_writes, remote_non_temporal_writes, "
                              "local_reads_slow_memory, remote_reads_slow_memory, "
                              "dirty_victim_writes_all)",
                              x->type == CONF_SCALAR ? x->val : "(not a name)");
        v |= 1u << i;
    }
    *out = (uint32_t)v;
    return 0;
}

/* events: {total: TYPES, local: TYPES}: BMEC's QOS_EVT_CFG_0 and _1 in every
 * L3 domain, as resctrl's mbm_total_bytes_config / event_filter. */
static int load_events(const struct scen *s, struct conf *c, struct conf_node *n, unsigned *has,
                       uint32_t evt[2], struct err *e)
{
    const struct plat_mon *pm = &s->plat.mon;
    int rc;
    if (!pm->bmec)
        return conf_error(c, n, e,
                          "%s has no bandwidth event configuration (BMEC, CPUID 0x80000020 EBX[3])",
                          s->plat.name);
    if ((rc = conf_expect(c, n, CONF_MAP, e)) || (rc = conf_keys(c, n, e, "total", "local", NULL)))
        return rc;
    for (unsigned k = 0; k < 2; k++) {
        struct conf_node *x = conf_get(n, evt_names[k]);
        if (!x)
            continue;
        if (!(k ? pm->local : pm->total))
            return conf_error(c, x, e, "%s has no %s bandwidth event", s->plat.name, evt_names[k]);
        if ((rc = load_types(c, x, &evt[k], e)))
            return rc;
        *has |= 1u << k;
    }
    if (!*has)
        return conf_error(c, n, e, "give total, local or both");
    return conf_check_unused(c, n, e);
}

/* AMD's top-level keys: events (BMEC), mbm_assign_mode and
 * mbm_assign_events (ABMC), io_alloc (SDCIAE), each refused where the
 * profile lacks the feature. */
static int load_amd(struct scen *s, struct conf *c, struct conf_node *n, struct err *e)
{
    struct scen_qos *q = &s->qos;
    const struct plat_mon *pm = &s->plat.mon;
    struct conf_node *x;
    int rc = 0;
    if ((x = conf_get(n, "events")) && (rc = load_events(s, c, x, &q->has_evt, q->evt, e)))
        return rc;
    /* Linux turns mbm_event on at mount where ABMC is (rdt_get_mon_l3_config). */
    unsigned mode = pm->abmc && q->monitor != SCEN_MON_NONE;
    x = conf_get(n, "mbm_assign_mode");
    if (x && (rc = conf_enum(c, n, "mbm_assign_mode", CONF_REQ, assign_names, 2, &mode, e)))
        return rc;
    if (x && mode && !pm->abmc)
        return conf_error(c, x, e, "%s has no assignable counters (ABMC, CPUID 0x80000020 EBX[5])",
                          s->plat.name);
    if (x && mode && q->monitor == SCEN_MON_NONE)
        return conf_error(c, x, e, "counters count monitoring IDs, and monitor is none");
    q->mbm_event = (int)mode;
    q->assign_evts = (pm->total ? 1u : 0) | (pm->local ? 2u : 0);
    if ((x = conf_get(n, "mbm_assign_events"))) {
        if (!q->mbm_event)
            return conf_error(c, x, e, "events get counters in mbm_event mode only");
        if ((rc = conf_expect(c, x, CONF_SEQ, e)))
            return rc;
        q->assign_evts = 0;
        for (unsigned k = 0; k < x->nkids; k++) {
            struct conf_node *y = &x->kids[k];
            unsigned i = 0;
            while (y->type == CONF_SCALAR && i < 2 && strcmp(y->val, evt_names[i]))
                i++;
            if (i == 2 || !(i ? pm->local : pm->total))
                return conf_error(c, y, e, "'%s': the events are %s",
                                  y->type == CONF_SCALAR ? y->val : "",
                                  pm->total && pm->local ? "total and local"
                                  : pm->total            ? "total"
                                                         : "local");
            q->assign_evts |= 1u << i;
        }
    }
    if ((x = conf_get(n, "io_alloc"))) {
        const struct plat_alloc *a = &s->plat.cache[PLAT_L3].alloc;
        uint64_t v;
        if (!a->io)
            return conf_error(c, x, e,
                              "%s has no I/O allocation control (SDCIAE, CPUID 0x80000020 EBX[6])",
                              s->plat.name);
        if ((rc = conf_node_u64(c, x, 0, bits_mask(a->cbm_len), &v, e)) ||
            (rc = check_mask(s, c, x, PLAT_L3, v, e)))
            return rc;
        q->has_io = 1;
        q->io_cbm = v;
    }
    return 0;
}

static int load(struct scen *s, struct conf *c, struct err *e)
{
    struct conf_node *n = conf_get(c->root, "qos");
    if (!n)
        return 0;
    struct scen_qos *q = &s->qos;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "cdp", "monitor", "groups", "events", "mbm_assign_mode",
                       "mbm_assign_events", "io_alloc", NULL);
    if (rc)
        return rc;
    q->present = 1;
    q->task_grp = malloc(s->ntask * sizeof *q->task_grp);
    if (!q->task_grp)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    for (unsigned i = 0; i < s->ntask; i++)
        q->task_grp[i] = -1;
    /* The driver sets every task's identifiers; a task's own are a contradiction. */
    struct conf_node *tl = conf_get(c->root, "tasks");
    for (unsigned i = 0; i < s->ntask; i++)
        for (int k = 0; k < 2; k++) {
            struct conf_node *x = conf_get(&tl->kids[i], k ? "tag" : "class");
            if (x)
                return conf_error(c, x, e,
                                  "with a qos section the driver assigns classes and tags: put "
                                  "the task in a qos group instead");
        }
    struct conf_node *cdp = conf_get(n, "cdp");
    if (cdp && is_riscv(s))
        return conf_error(c, cdp, e,
                          "CBQRI has no CDP switch: give a group's L2 or L3 as {code, data} "
                          "where the controller has per-AT limits");
    if (cdp && (rc = conf_expect(c, cdp, CONF_SEQ, e)))
        return rc;
    for (unsigned k = 0; cdp && k < cdp->nkids; k++) {
        struct conf_node *x = &cdp->kids[k];
        unsigned l = x->type == CONF_SCALAR ? 0 : PLAT_NLEVEL;
        while (l < PLAT_NLEVEL && strcmp(x->val, plat_level_name[l]))
            l++;
        if (l != PLAT_L2 && l != PLAT_L3)
            return conf_error(c, x, e, "CDP is for L3 or L2");
        if (!s->plat.cache[l].alloc.cdp)
            return conf_error(c, x, e, "%s of %s has no code/data prioritization",
                              plat_level_name[l], s->plat.name);
        q->cdp[l] = 1;
    }
    unsigned mon = s->plat.mon.tags ? SCEN_MON_TASK : SCEN_MON_NONE;
    if ((rc = conf_enum(c, n, "monitor", CONF_OPT, mon_names, 3, &mon, e)))
        return rc;
    q->monitor = (enum scen_mon)mon;
    if ((rc = load_amd(s, c, n, e)))
        return rc;
    struct conf_node *g = conf_get(n, "groups");
    if (g && (rc = load_groups(s, c, g, e)))
        return rc;
    if (!g && !(q->grp = calloc(1, sizeof *q->grp)))
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    if (!g && !(q->resv = calloc(1, sizeof *q->resv)))
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    /* RMID 0 stays with the default group, as in resctrl. */
    unsigned need = 1 + (q->monitor == SCEN_MON_TASK ? s->ntask : q->ngrp);
    if (q->monitor != SCEN_MON_NONE && need > s->plat.mon.tags)
        return conf_error(c, conf_get(n, "monitor") ? conf_get(n, "monitor") : n, e,
                          "monitoring by %s needs %u RMIDs; %s has %u%s", mon_names[q->monitor],
                          need, s->plat.name, s->plat.mon.tags,
                          q->monitor == SCEN_MON_TASK && s->plat.mon.tags ? " (try monitor: group)"
                                                                          : "");
    return conf_check_unused(c, n, e);
}

static unsigned phase_count(const struct conf_node *list)
{
    unsigned n = 0;
    for (unsigned i = 0; list && list->type == CONF_SEQ && i < list->nkids; i++) {
        n += 2; /* the settings, and their confidential part */
        struct conf_node *t = conf_get(&list->kids[i], "tasks");
        if (t && t->type == CONF_SEQ)
            n += t->nkids;
    }
    return n;
}

/* A phase's qos list: [{group: NAME, settings..., tasks: [moved here]}]. */
static int phase(struct scen *s, struct conf *c, struct conf_node *list, struct scen_phase *ph,
                 struct err *e)
{
    struct scen_qos *q = &s->qos;
    if (!q->present)
        return conf_error(c, list, e, "phase qos settings need a top-level qos section");
    int rc = conf_expect(c, list, CONF_SEQ, e);
    for (unsigned i = 0; !rc && i < list->nkids; i++) {
        struct conf_node *m = &list->kids[i];
        const char *name = NULL;
        if ((rc = conf_expect(c, m, CONF_MAP, e)))
            return rc;
        if (conf_get(m, "events")) {
            /* BMEC's configuration is the domains', not a group's. */
            if (conf_get(m, "group"))
                return conf_error(c, conf_get(m, "group"), e,
                                  "events configure every domain, not a group: give them in an "
                                  "item of their own");
            struct scen_set *o = &ph->set[ph->nset++];
            *o = (struct scen_set){.kind = SCEN_QOS, .q.grp = UINT32_MAX, .q.line = m->line};
            if ((rc = conf_keys(c, m, e, "events", NULL)) ||
                (rc = load_events(s, c, conf_get(m, "events"), &o->q.has_evt, o->q.evt, e)))
                return rc;
            continue;
        }
        if ((rc = conf_keys(c, m, e, "group", "tasks", "L3", "L2", "units", "mba", "limit", "smba",
                            "reserve", "weight", "confidential", NULL)) ||
            (rc = conf_str(c, m, "group", CONF_REQ, &name, e)))
            return rc;
        unsigned g = 0;
        int dflt = !strcmp(name, "default");
        while (!dflt && g < q->ngrp && strcmp(q->grp[g], name))
            g++;
        if (!dflt && g == q->ngrp)
            return conf_error(c, conf_get(m, "group"), e, "no qos group called '%s'", name);
        struct scen_set *o = &ph->set[ph->nset++];
        *o = (struct scen_set){.kind = SCEN_QOS, .q.grp = dflt ? UINT32_MAX : g};
        struct scen_set tee = {.kind = SCEN_QOS, .q.grp = o->q.grp, .q.secure = 1};
        if ((rc = load_settings(s, c, m, &o->q, &tee.q, e)))
            return rc;
        if (dflt &&
            (o->q.has_mask[PLAT_L3] || o->q.has_mask[PLAT_L2] || o->q.has_mba || o->q.has_limit ||
             o->q.has_smba || o->q.has_share || conf_get(m, "confidential")))
            return conf_error(c, m, e, "the default group (class 0) keeps its reset settings");
        if (conf_get(m, "confidential"))
            ph->set[ph->nset++] = tee;
        struct conf_node *t = conf_get(m, "tasks");
        if (t && (rc = conf_expect(c, t, CONF_SEQ, e)))
            return rc;
        for (unsigned k = 0; t && k < t->nkids; k++) {
            unsigned ti;
            if ((rc = list_task(s, c, &t->kids[k], &ti, e)))
                return rc;
            ph->set[ph->nset++] = (struct scen_set){
                .kind = SCEN_QOS_MOVE, .task = ti, .q.grp = o->q.grp, .q.line = t->kids[k].line};
        }
    }
    return rc;
}

const struct scen_sect qos_scen = {.load = load, .phase_count = phase_count, .phase = phase};
