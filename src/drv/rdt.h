/* The x86 QoS driver (Intel RDT, AMD PQoS): what an OS does with the
 * registers, through struct hw_x86_if only, so the same code can drive a
 * real machine. Enumeration follows the SDM's flow (17.16.3-4, 17.19) and
 * AMD 56375's (PQM/PQE, then leaves 0xF/0x10; BE, then 0x80000020). */
#ifndef QOSIM_DRV_RDT_H
#define QOSIM_DRV_RDT_H

#include "hw/hw.h"
#include "util/err.h"

#include <stdint.h>

enum rdt_res { RDT_L3, RDT_L2, RDT_NRES }; /* cache allocation resources */
enum rdt_type { RDT_BOTH, RDT_DATA, RDT_CODE };
enum { RDT_EVT_OCCUPANCY = 1, RDT_EVT_TOTAL = 2, RDT_EVT_LOCAL = 3 };

struct rdt_cat {
    int present;
    unsigned cbm_len;   /* bits */
    uint32_t shareable; /* CPUID.10H.n EBX */
    int cdp, sparse;
    unsigned num_cos; /* COS_MAX + 1 */
};

struct rdt_caps {
    int amd;
    int pqm, pqe;      /* CPUID.7.0 EBX[12], [15] */
    unsigned num_rmid; /* L3 monitoring: max RMID + 1 */
    uint32_t scale;    /* bytes per count */
    unsigned width;    /* counter bits */
    int occupancy, total, local;
    struct rdt_cat cat[RDT_NRES];
    int mba;          /* Intel MBA */
    unsigned mba_max; /* max throttle, percent */
    int mba_linear;
    unsigned mba_cos;
    int l3be;        /* AMD L3 external bandwidth enforcement */
    unsigned bw_len; /* bits of the limit */
    unsigned l3be_cos;
};

/* Monitoring state of one (RMID, event) in one L3 domain: the last raw
 * count and the running 64-bit total, so counter wraps are not lost as long
 * as reads come at least once per wrap period. */
struct rdt_mbm {
    uint64_t prev;  /* raw count at the last read */
    uint64_t bytes; /* accumulated */
    int valid;      /* prev holds a reading */
};

struct rdt {
    struct hw_x86_if r;
    struct rdt_caps caps;
    unsigned ndom[RDT_NRES]; /* L3 domains, L2 instances */
    uint64_t *rmid_used;     /* bitmap */
    uint64_t *cos_used;      /* bitmap */
    unsigned num_cos;        /* classes usable by every resource present */
    uint64_t *assoc;         /* [ncpu] last PQR_ASSOC written: a switch that changes
                                nothing writes nothing, as Linux's resctrl does */
    int cdp_on[RDT_NRES];
};

/* Enumerates and resets the driver's view; fails if there is no QoS at all. */
int rdt_init(struct rdt *d, const struct hw_x86_if *r, struct err *e);
void rdt_free(struct rdt *d);
/* The enumeration alone. */
int rdt_enumerate(const struct hw_x86_if *r, struct rdt_caps *c, struct err *e);

/* Allocation of identifiers: COS 0 and RMID 0 are the defaults and never
 * handed out. Return the identifier, or -1 when none is free. */
int rdt_alloc_cos(struct rdt *d);
void rdt_free_cos(struct rdt *d, unsigned cos);
int rdt_alloc_rmid(struct rdt *d);
void rdt_free_rmid(struct rdt *d, unsigned rmid);

/* A context switch onto cpu: the incoming task's identifiers go into
 * PQR_ASSOC (SDM 17.19.2 usage flow). */
int rdt_switch(struct rdt *d, unsigned cpu, unsigned cos, unsigned rmid, struct err *e);

/* A capacity bitmask for COS cos in the domain (an L3 domain or L2
 * instance) of resource res; with CDP on, type selects the data or code
 * mask (RDT_BOTH writes both). Checked against the enumerated rules. */
int rdt_set_cbm(struct rdt *d, enum rdt_res res, unsigned dom, unsigned cos, enum rdt_type type,
                uint64_t cbm, struct err *e);
/* CDP on or off for res in every domain, with the software sequence the
 * specs give: every mask to all ones and every CPU to COS 0 first. */
int rdt_set_cdp(struct rdt *d, enum rdt_res res, int on, struct err *e);
/* Intel MBA: throttle COS cos in L3 domain dom by percent (a multiple of the
 * granularity resctrl derives: 100 - max). */
int rdt_set_mba(struct rdt *d, unsigned dom, unsigned cos, unsigned percent, struct err *e);
/* AMD L3BE: limit COS cos in L3 domain dom to bytes_per_sec (0: unlimited),
 * rounded down to the 1/8 GB/s step (at least one step). */
int rdt_set_l3be(struct rdt *d, unsigned dom, unsigned cos, double bytes_per_sec, struct err *e);

/* One monitoring read of (event, rmid) in L3 domain dom: *raw is the
 * counter, already scaled to bytes. Returns 0, or -QOSIM_EINVAL for E
 * (unsupported event or RMID) and -QOSIM_EIO for U (no data now; try again). */
int rdt_mon_read(struct rdt *d, unsigned dom, unsigned evt, unsigned rmid, uint64_t *bytes,
                 struct err *e);
/* A bandwidth event read into the running total st (st->bytes). A U
 * reading is reported as -QOSIM_EIO; on Intel it leaves st untouched (no
 * data this time), on AMD the next count starts from zero (the RMID was not
 * tracked, and tracking restarts its counter). */
int rdt_mbm_update(struct rdt *d, unsigned dom, unsigned evt, unsigned rmid, struct rdt_mbm *st,
                   struct err *e);

#endif
