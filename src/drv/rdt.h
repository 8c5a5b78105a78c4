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
    /* AMD's later PQoS, CPUID 0x80000020 (APM vol. 2, 24593, 19.3.3, 19.4): */
    int smba;           /* slow memory bandwidth allocation (sub-leaf 0 EBX[2]) */
    unsigned smba_len;  /* sub-leaf 2 EAX: bits of its limit */
    unsigned smba_cos;  /* sub-leaf 2 EDX: COS_MAX + 1 */
    int bmec;           /* bandwidth monitoring event configuration (EBX[3]) */
    unsigned bmec_evts; /* sub-leaf 3 EBX[7:0]: configurable events (QOS_EVT_CFG_n) */
    uint32_t bw_types;  /* sub-leaf 3 ECX: transaction types the part can count */
    int abmc;           /* assignable bandwidth monitoring counters (EBX[5]) */
    unsigned abmc_ctrs; /* sub-leaf 5 EBX[15:0] + 1: counters per L3 domain */
    int abmc_by_cos;    /* sub-leaf 5 ECX[0]: a counter may count a COS */
    int sdciae;         /* smart data cache injection allocation enforcement (EBX[6]) */
};

/* BMEC's transaction types, bit i of QOS_EVT_CFG_n and L3_QOS_ABMC_CFG.BwType
 * (APM vol. 2, Table 19-9), under the names resctrl gives them
 * (fs/resctrl/monitor.c, mbm_transactions[]; resctrl.rst "event_filter"). */
enum {
    RDT_BW_LOCAL_READS,
    RDT_BW_REMOTE_READS,
    RDT_BW_LOCAL_NT_WRITES,
    RDT_BW_REMOTE_NT_WRITES,
    RDT_BW_LOCAL_SLOW_READS,
    RDT_BW_REMOTE_SLOW_READS,
    RDT_BW_DIRTY_VICTIMS,
    RDT_NBW_TYPES
};
extern const char *const rdt_bw_type_name[RDT_NBW_TYPES];

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
    int abmc_on;   /* every domain's CPUs have L3_QOS_EXT_CFG.ABMC_En set */
    int sdciae_on; /* ... and SDCIAE_En: the highest CLOS is the I/O agents' */
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

/* AMD SMBA: limit COS cos's reads from slow memory in L3 domain dom to
 * bytes_per_sec (0: unlimited), in 1/8 GB/s steps as rdt_set_l3be. */
int rdt_set_smba(struct rdt *d, unsigned dom, unsigned cos, double bytes_per_sec, struct err *e);

/* AMD BMEC: the transaction types (RDT_BW_* bits) event evt (RDT_EVT_TOTAL
 * or RDT_EVT_LOCAL) counts in L3 domain dom. Setting a new value clears
 * every RMID's counters of the domain (their next read is U); the same
 * value is not written again, as Linux's mbm_config_write_domain skips it. */
int rdt_get_evt_cfg(struct rdt *d, unsigned dom, unsigned evt, uint32_t *types, struct err *e);
int rdt_set_evt_cfg(struct rdt *d, unsigned dom, unsigned evt, uint32_t types, struct err *e);

/* AMD ABMC on or off: L3_QOS_EXT_CFG.ABMC_En read, changed and written on
 * every CPU of every L3 domain, as Linux's _resctrl_abmc_enable does; a
 * change resets every counter and assignment. */
int rdt_set_abmc(struct rdt *d, int on, struct err *e);
/* Counter cntr of L3 domain dom to count the transaction types `types` of
 * RMID src (or of COS src with is_cos), from zero; unassign stops it. */
int rdt_abmc_assign(struct rdt *d, unsigned dom, unsigned cntr, int is_cos, unsigned src,
                    uint32_t types, struct err *e);
int rdt_abmc_unassign(struct rdt *d, unsigned dom, unsigned cntr, struct err *e);
/* A read of counter cntr (QM_EVTSEL.ExtEvtID, EvtID L3CacheABMC), in bytes;
 * -QOSIM_EINVAL for E, -QOSIM_EIO for U, as rdt_mon_read. */
int rdt_abmc_read(struct rdt *d, unsigned dom, unsigned cntr, uint64_t *bytes, struct err *e);
/* The same into a running total across wraps, as rdt_mbm_update. */
int rdt_abmc_update(struct rdt *d, unsigned dom, unsigned cntr, struct rdt_mbm *st, struct err *e);

/* AMD SDCIAE on or off (L3_QOS_EXT_CFG.SDCIAE_En on every CPU, as resctrl's
 * io_alloc): I/O's L3 fills then go to the ways of the highest CLOS's mask,
 * which this reserves (refused while a group holds it). */
int rdt_set_sdciae(struct rdt *d, int on, struct err *e);
/* The CLOS SDCIAE confines I/O to: COS_MAX of the L3 (without CDP; with CDP,
 * the highest pair's code mask, L3_MASK_n with n = COS_MAX). */
unsigned rdt_io_cos(const struct rdt *d);
/* The I/O agents' L3 mask in domain dom (the MSR L3_MASK_COS_MAX). */
int rdt_set_io_cbm(struct rdt *d, unsigned dom, uint64_t cbm, struct err *e);

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
