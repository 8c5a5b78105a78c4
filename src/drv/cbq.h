/* The RISC-V CBQRI driver, for both texts qosim models (CBQRI 1.0 with
 * Ssqosid, and the spring-2023 draft; docs/cbqri-versions.md): what an OS
 * -- or, on the draft's secure windows, the TEE security manager -- does
 * with capacity and bandwidth controllers and the hart's srmcfg (1.0) or
 * sqoscfg (draft) CSR. It reaches them only through struct cbqri_regif, so
 * the same code can drive real hardware; of hw/cbqri.h it uses the register
 * offsets, field declarations and encodings, which are the specs', never
 * the model's state.
 *
 * Neither text has an enumeration of its own: firmware (device tree, ACPI)
 * tells the OS where each controller is and what it is (struct cbq_desc);
 * cbq_init then reads each one's capabilities -- VER tells the texts apart
 * and must agree with the description; on 1.0 CUNITS, RPFX and P -- and
 * probes what they do not say (access types, monitoring, the number of
 * RCIDs and MCIDs). All controllers must follow one text and one MCID
 * mode; the hart CSR goes with the text.
 *
 * Every operation (spec 3.2, 3.4, 4.2, 4.4) waits for BUSY to read 0 (the
 * spec makes writes while BUSY UNSPECIFIED), writes the operand register,
 * writes the control register, polls it until BUSY reads 0, and turns
 * STATUS into an error that names the controller, operation, ID, STATUS
 * and its meaning. The driver refuses up front what the hardware would
 * silently change rather than refuse (WARL fields: mask bits at or above
 * NCBLKS, an AT the controller aliases to AT 0, IDs wider than the
 * controller's), and leaves to STATUS what the hardware reports (Rbwb over
 * MRBWB, an event the controller does not count).
 *
 * Errors: -QOSIM_EINVAL (bad argument or STATUS 2-5), -QOSIM_EUNSUP (the
 * controller lacks the capability), -QOSIM_EIO (an access fault, a counter
 * marked INVALID, a reserved or custom STATUS), -QOSIM_ETIMEDOUT (BUSY
 * still 1 after poll_max polls), -QOSIM_ENOMEM. Calls on one struct cbq
 * must not run concurrently (an OS holds a lock around them). */
#ifndef QOSIM_DRV_CBQ_H
#define QOSIM_DRV_CBQ_H

#include "hw/cbqri.h"
#include "util/err.h"

#include <stdint.h>

#define CBQ_POLL_MAX 10000 /* default BUSY polls before -QOSIM_ETIMEDOUT */
#define CBQ_MAX_IDS  4096  /* RCID and MCID fields are 12 bits (Figures 3, 5; sqoscfg) */

/* What firmware tells the OS of one controller instance. */
struct cbq_desc {
    enum cbqri_kind kind;
    uint64_t base;      /* normal register window: 4 KiB aligned (draft ch. 1), 8-byte (1.0) */
    unsigned ctr_width; /* bandwidth: bc_mon_ctr_val.CTR bits (1..62; the spec
                           leaves it UNSPECIFIED, 4.3); 0 for capacity, or unknown */
    unsigned ver;       /* the text firmware says it follows: CBQRI_VER (draft),
                           CBQRI_VER_1_0; 0: unknown, VER decides */
};

/* One controller as discovery found it. */
struct cbq_ctl {
    enum cbqri_kind kind;
    uint64_t base;               /* normal window; the driver uses base + win_off */
    unsigned ver, ncblks, frcid; /* capacity capabilities (3.1) */
    unsigned nbwblks, mrbwb;     /* bandwidth capabilities (4.1) */
    int v10;                     /* VER says 1.x */
    unsigned cunits, rpfx, p;    /* 1.0: CUNITS (capacity), RPFX and P (both kinds) */
    unsigned nat;                /* access types with limits of their own: 1 or 2 */
    int alloc;                   /* allocation implemented (*_alloc_ctl not read-only 0) */
    int mon;                     /* monitoring implemented (*_mon_ctl not read-only 0) */
    int mon_at;                  /* monitoring by access type (ATV writable) */
    unsigned nrcid, nmcid;       /* RCIDs / MCIDs it accepts (0: no allocation / monitoring) */
    unsigned ctr_width;          /* from the description */
};

/* Running 64-bit byte total of one bandwidth counter across its wraps. */
struct cbq_mbm {
    uint64_t prev, bytes;
    int valid;
    int ovf; /* OVF at the last read */
};

struct cbq {
    struct cbqri_regif r;
    unsigned hart;        /* the hart whose accesses these are */
    enum cbqri_mode mode; /* S for the OS; CBQRI_SECURE_M for the TSM */
    uint64_t win_off;     /* 0, or CBQRI_SECURE_OFFSET when managing the secure windows */
    unsigned poll_max;    /* BUSY polls before giving up (CBQ_POLL_MAX) */
    struct cbq_ctl *ctl;
    unsigned nctl;
    unsigned nrcid, nmcid; /* IDs every allocating / monitoring controller accepts */
    int v10;               /* the controllers follow CBQRI 1.0 */
    unsigned rpfx, p;      /* their MCID mode: RCID-prefixed with P bits, or direct */
    unsigned csr;          /* the harts' ID CSR: CBQRI_CSR_SRMCFG (1.0) or _SQOSCFG (draft) */
};

/* Discovery of the n controllers desc describes: capabilities (VER 0x01,
 * the draft, or 1.x), then probes. secure: manage the draft's secure
 * windows (5.2.1), which needs mode CBQRI_SECURE_M. */
int cbq_init(struct cbq *d, const struct cbqri_regif *r, unsigned hart, enum cbqri_mode mode,
             int secure, const struct cbq_desc *desc, unsigned n, struct err *e);
void cbq_free(struct cbq *d);

/* Capacity allocation (3.4, 3.5): CONFIG_LIMIT of a block mask, READ_LIMIT.
 * cbq_set_cap also sets a limit on the capacity units (lines) the RCID may
 * occupy in those blocks, 0 for none (1.0 CC_CUNITS; -QOSIM_EUNSUP without
 * CUNITS); cbq_set_cbm is cbq_set_cap with no unit limit. */
int cbq_set_cbm(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t mask,
                struct err *e);
int cbq_set_cap(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t mask,
                uint64_t cunits, struct err *e);
int cbq_get_cunits(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t *cunits,
                   struct err *e);
int cbq_get_cbm(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t *mask,
                struct err *e);
/* Bandwidth allocation (4.4, 4.5): Rbwb reserved blocks and Mweight; an AT
 * that shares another's allocation (useShared); the bc_bw_alloc an
 * (RCID, AT) holds (read with HW_FGET(v, BW_ALLOC, ...)). */
int cbq_set_bw(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, unsigned rbwb,
               unsigned mweight, struct err *e);
int cbq_share_bw(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, unsigned shared_at,
                 struct err *e);
int cbq_get_bw(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t *bw_alloc,
               struct err *e);
/* FLUSH_RCID (3.4) for every AT of the controller; -QOSIM_EUNSUP without FRCID. */
int cbq_flush(struct cbq *d, unsigned ctl, unsigned rcid, struct err *e);

/* Monitoring (3.2-3.3, 4.2-4.3). CONFIG_EVENT: evt 0 stops the counter,
 * another starts it from 0 (and clears OVF); atv filters by AT. */
int cbq_mon_config(struct cbq *d, unsigned ctl, unsigned mcid, unsigned evt, int atv, unsigned at,
                   struct err *e);
/* READ_COUNTER, then the counter: occupancy units (capacity) or bytes
 * (bandwidth, CTR within ctr_width); ovf (may be NULL) gets OVF, 0 for
 * capacity. A counter marked INVALID is -QOSIM_EIO, and *ctr is left alone. */
int cbq_mon_read(struct cbq *d, unsigned ctl, unsigned mcid, uint64_t *ctr, int *ovf,
                 struct err *e);
/* Adds to st->bytes the bytes counted since the last call (the first call
 * only takes the starting point). Needs the counter's width. How the
 * counter's wraps and OVF are read is in cbq.c. */
int cbq_mbm_update(struct cbq *d, unsigned ctl, unsigned mcid, struct cbq_mbm *st, struct err *e);

/* Association (draft 2.1.1, 6.1; Ssqosid): writes hart's sqoscfg or
 * srmcfg, then reads it back. In RCID-prefixed mode mcid is the low P bits
 * a hart carries (0..2^P - 1). */
int cbq_assoc(struct cbq *d, unsigned hart, unsigned rcid, unsigned mcid, struct err *e);
/* The MCID the counters of (rcid, mcid) have: RCID << P | (MCID & (2^P -
 * 1)) in RCID-prefixed mode (1.0 EMCID), else mcid. Monitoring calls take
 * this effective MCID. */
unsigned cbq_emcid(const struct cbq *d, unsigned rcid, unsigned mcid);
/* The M-mode side before an S-mode driver runs: where harts have mstateen0
 * (Smstateen), set its bit 55 so that srmcfg is reachable below M
 * (Ssqosid). Harts 0..nhart-1. */
int cbq_boot(const struct cbqri_regif *r, unsigned nhart, struct err *e);

#endif
