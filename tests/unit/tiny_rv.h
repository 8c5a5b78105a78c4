/* The tiny RISC-V profile the CBQRI tests share (test_cbqri.c, test_cbq.c):
 * 1 socket, 1 L3 domain, 2 modules of 2 harts (L2 per module): 4 harts.
 * L2 4 KiB 4 ways (16 sets, one way per block; 2 controllers, NCBLKS 4,
 * FRCID); L3 16 KiB 8 ways (32 sets, one way per block, code and data
 * apart; NCBLKS 8, no FRCID); memory NBWBLKS 16, MRBWB 12; 4 RCIDs,
 * 8 MCIDs; LRU everywhere. Controllers at 0x10000000 (L2), 0x10010000 (L3),
 * 0x10020000 (memory). In the 2023 draft's text (tiny_rv_plat) or CBQRI
 * 1.0's, with or without Smstateen, RCID-prefixed MCIDs and CUNITS
 * (tiny_rv_plat_opt), and in either text with other register-block places
 * (strides, the bandwidth controller's base) for the placement rules. */
#ifndef QOSIM_TESTS_TINY_RV_H
#define QOSIM_TESTS_TINY_RV_H

#include "sim/scen/plat.h"
#include "util/conf.h"

#include <stdio.h>
#include <string.h>

/* What differs between the texts (docs/cbqri-versions.md). */
struct tiny_rv_opt {
    int v10;       /* CBQRI 1.0 (else the 2023 draft) */
    int smstateen; /* 1.0: harts have mstateen0 */
    unsigned xlen; /* 1.0: 32 or 64 (0: 64) */
    int prefix;    /* 1.0: qos.cbqri.mcid_prefix P, or -1 for direct MCIDs */
    int cunits;    /* 1.0: both capacity controllers have CUNITS */
    /* Either text; 0 keeps the default (instances 4 KiB apart, memory's
     * controller at 0x10020000). */
    unsigned l2_stride, bw_stride; /* stride of the L2 and the memory controllers */
    uint64_t bw_base;              /* base of the memory controller */
};

/* Loads it with the given monitoring events ("occupancy: true, total:
 * true"), bandwidth counter width and sampling ("1", "0.5"), in the text
 * o says (NULL: the 2023 draft). */
static inline int tiny_rv_plat_opt(struct plat *p, unsigned width, const char *sample,
                                   const char *events, const struct tiny_rv_opt *o, struct err *e)
{
    char text[2560], core[96] = "", spec[96] = "    spec: draft-2023\n";
    char l2x[48] = "", bwx[64] = ", base: 0x10020000";
    const char *cu = "";
    if (o && o->l2_stride)
        snprintf(l2x, sizeof l2x, ", stride: %u", o->l2_stride);
    if (o && o->bw_base)
        snprintf(bwx, sizeof bwx, ", base: 0x%llx", (unsigned long long)o->bw_base);
    if (o && o->bw_stride)
        snprintf(bwx + strlen(bwx), sizeof bwx - strlen(bwx), ", stride: %u", o->bw_stride);
    if (o && o->v10) {
        snprintf(core, sizeof core, ", xlen: %u, smstateen: %s", o->xlen ? o->xlen : 64,
                 o->smstateen ? "true" : "false");
        if (o->prefix >= 0)
            snprintf(spec, sizeof spec, "    spec: \"1.0\"\n    mcid_prefix: %d\n", o->prefix);
        else
            snprintf(spec, sizeof spec, "    spec: \"1.0\"\n");
        cu = o->cunits ? ", cunits: true" : "";
    }
    snprintf(text, sizeof text,
             "name: tiny-rv\n"
             "vendor: riscv\n"
             "topology: {sockets: 1, nodes: 1, domains: 1, modules: 2, cores: 2, threads: 1}\n"
             "core: {frequency: 1GHz, cpi: 1, mlp: 1, link: 32%s}\n"
             "caches:\n"
             "  L1I: {size: 1K, ways: 2, latency: 2}\n"
             "  L1D: {size: 1K, ways: 2, latency: 2}\n"
             "  L2: {size: 4K, ways: 4, latency: 10, shared_by: module, policy: lru,\n"
             "       monitored: true, allocation: {classes: 4, cbm_len: 4}}\n"
             "  L3: {size: 16K, ways: 8, latency: 30, shared_by: domain, policy: lru,\n"
             "       monitored: true, allocation: {classes: 4, cbm_len: 8, cdp: true}}\n"
             "memory: {channels: 1, peak: 64GB/s, latency: 100ns}\n"
             "qos:\n"
             "  monitoring: {ids: 8, %s, width: %u, scale: 1, sample: %s}\n"
             "  bandwidth: {kind: share, classes: 4, blocks: 16, mrbwb: 12, window: 1us}\n"
             "  cbqri:\n"
             "%s"
             "    capacity:\n"
             "      - {at: L2, base: 0x10000000, rcids: 4, mcids: 8, blocks: 4, frcid: true%s%s}\n"
             "      - {at: L3, base: 0x10010000, rcids: 4, mcids: 8, blocks: 8%s}\n"
             "    bandwidth:\n"
             "      - {at: memory%s, rcids: 4, mcids: 8, blocks: 16, mrbwb: 12}\n",
             core, events, width, sample, spec, cu, l2x, cu, bwx);
    struct conf c;
    int rc = conf_load_mem(&c, "tiny-rv.yaml", text, strlen(text), e);
    if (rc)
        return rc;
    rc = plat_from_conf(p, &c, e);
    conf_free(&c);
    return rc;
}

/* The 2023 draft's tiny-rv. */
static inline int tiny_rv_plat(struct plat *p, unsigned width, const char *sample,
                               const char *events, struct err *e)
{
    return tiny_rv_plat_opt(p, width, sample, events, NULL, e);
}

#endif
