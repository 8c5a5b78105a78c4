/* RISC-V CBQRI to the register, in both texts a profile may choose
 * (qos.cbqri.spec, docs/cbqri-versions.md): the ratified CBQRI 1.0 with the
 * Ssqosid 1.0 srmcfg CSR ("1.0"), and the
 * spring-2023 draft with its sqoscfg CSR and secure windows ("draft-2023",
 * figures in docs/registers.md 2). The
 * capacity controllers of the profile's caches, the bandwidth controller of
 * each node's memory, and every hart's CSRs, over the simulated machine.
 * Section numbers below are the draft's; 1.0's are its AsciiDoc anchors
 * (CC_CAP, BC_BMASK, ...).
 *
 * Address map. A controller of the profile's qos.cbqri list has one
 * instance per cache instance of its level (per NUMA node for memory);
 * instance i's registers are at base + i * stride (draft ch. 1: 4 KiB
 * aligned, 4 KiB multiples; 1.0 qos_intro: 8-byte aligned). In the draft,
 * each also has a secure window (5.2.1: "a second register programming
 * interface ... with the same register layout") at the same address plus
 * CBQRI_SECURE_OFFSET: project choice, as the draft leaves its place to the
 * platform; cbqri_init checks that no secure window lands on a normal one.
 * 1.0 has no secure interface and no C bit.
 *
 * Accesses (ch. 1, qos_intro). Naturally aligned 4- and 8-byte accesses,
 * little-endian. Anything else -- another size, an unaligned address, an
 * offset inside a window that holds no register, a hart that does not
 * exist, a privilege that may not reach the window -- is an access fault
 * (HW_ACCESS_FAULT, counted in `faults`, address kept in `fault_addr`) and
 * changes nothing: the spec calls such accesses UNSPECIFIED, and a fault is
 * what a PMP or a bus error gives on real systems.
 *
 * Privilege (project choice, the texts leave it to PMP and page tables):
 * the normal windows answer M, S (HS) and secure M-mode; U, VS and VU get
 * an access fault (a guest reaches the controllers only through a
 * hypervisor that emulates them, draft 6.1, 1.0 QoS Configurations for
 * Virtual Machines). The draft's secure windows answer secure M-mode (the
 * TSM, 5.2.1, 6.3) only.
 *
 * Split 8-byte writes. The draft (ch. 1): "any effects of the access must
 * only occur after both accesses have been observed": a 4-byte write to
 * either half of a register is held in that register's staging slot; when
 * the other half arrives, in either order, the two make one 8-byte write
 * and take effect then. A half written again before its partner replaces
 * the held one; an 8-byte write discards a held half; a lone half never
 * takes effect, and reads return the committed value, never a held half.
 * 1.0 (qos_intro) instead defines the registers so that the halves are
 * independent "as long as the register semantics, with regards to
 * side-effects, are respected between the two": each 4-byte write takes
 * effect at once on its half. The operation fields (OP, AT, IDs) are all in
 * the low half of a control register, so writing the low half starts the
 * operation; the high half holds only STATUS, BUSY and WPRI, and writing it
 * starts nothing (project choice: a write with no writable bit has no side
 * effect). Read-only registers ignore writes, whole or split, in both.
 *
 * Time and BUSY (3.2, 3.4, 4.2, 4.4; 1.0 CC_MCTL, CC_ALLOC, BC_MCTL,
 * BC_ALLOC). The model keeps its own clock in machine ticks: an access by a
 * hart happens at the later of the model's clock and that hart's clock,
 * cbqri_tick moves it on, and every MMIO access then costs access_cycles
 * (an uncached device access; it lets a driver that polls BUSY see it
 * clear without the machine running). A write to a *_mon_ctl or
 * *_alloc_ctl sets BUSY and clears STATUS; the operation is performed,
 * STATUS set and BUSY cleared busy_cycles later (at once when busy_cycles
 * is 0). STATUS is then valid until the next write of that register (1.0
 * says so; the draft implies it). While BUSY is set, writes to that control
 * register and to its operand registers (cc_block_mask, cc_cunits,
 * bc_bw_alloc) are ignored (project choice among those both texts allow).
 * Reset: the draft resets BUSY and STATUS, 1.0 only BUSY; the model reads
 * STATUS 0 after reset in both, a value 1.0 allows.
 *
 * Capacity monitoring (3.2, 3.3; 1.0 CC_MCTR). The capacity unit is the
 * cache line: the spec counts a "unit of capacity" a request allocates, and
 * a request allocates one line; a capacity block (NCBLKS) is too coarse to
 * measure with. With set sampling (qos.monitoring.sample < 1) the count is
 * the machine's estimate from the sampled sets. CONFIG_EVENT resets the
 * counter to 0; it then saturates at 0 on underflow (1.0: "shall not
 * decrement below zero"), i.e. it reads occupancy minus the lowest
 * occupancy since, which the machine follows at every eviction
 * (mach_occupancy_low), however rarely the registers are read. The
 * counter's INV bit (the draft's INVALID) is set
 *   - in the draft only, from an observed underflow (capacity allocated
 *     before the reset left, i.e. the MCID was reused: 3.3 "may be marked
 *     INVALID if it underflows") until the MCID's occupancy has been
 *     observed at zero -- 1.0 holds the counter at 0 and stays valid; and
 *   - in both, with set sampling, while the estimate rests on fewer than
 *     CBQRI_MIN_SAMPLES sampled lines ("not observed enough samples").
 * EVT_ID 0 stops the counter; it keeps its value (the draft says so, 1.0 is
 * silent: project choice, the same).
 *
 * Bandwidth monitoring (4.2, 4.3; 1.0 BC_MCTR). Bytes, event 1 reads and
 * writes, 2 reads, 3 writes, of the MCID's requests that this node's memory
 * served (the machine counts per serving node, unwrapped); CTR is
 * qos.monitoring.width bits wide, the bits above read-only zero, and OVF is
 * set when the count since CONFIG_EVENT passes 2^width. A writeback counts
 * against the MCID and AT of the request that filled the line.
 *
 * Effective MCIDs (1.0 EMCID). With qos.cbqri.mcid_prefix P every
 * controller reports RPFX 1 and that P, and counts a request at
 * RCID << P | (MCID & (2^P - 1)); the machine tags each hart's requests
 * with that effective MCID when srmcfg is written (one mode for the whole
 * platform: project choice, the uniform mode 1.0's hardware guidelines
 * recommend).
 *
 * Capacity units (1.0 CC_CUNITS). Where the profile gives a capacity
 * controller `cunits`, CUNITS is 1 and CONFIG_LIMIT also takes cc_cunits:
 * a limit on the lines the (RCID, AT) may occupy in its blocks at that
 * cache instance, 0 for none; the machine enforces it at fills
 * (mach_set_units: at its limit, a fill replaces one of the RCID's own
 * lines in the set, or does not allocate). cc_cunits is WARL: a value above
 * the instance's lines reads back as its lines. Without CUNITS it is
 * read-only zero; the draft has no register there (an access faults).
 *
 * Access types (2.2). A capacity controller supports AT 0 (data) and 1
 * (code) when its cache level's allocation has `cdp` in the profile, and
 * then programs the machine's data and code masks apart; otherwise its AT
 * fields are read-only zero and AT 0's mask serves both (a request of an
 * unsupported AT is handled as AT 0, so there a counter with ATV 1 counts
 * code too). The bandwidth controller supports AT 0 and 1: each (RCID, AT)
 * is a limiter class of its own, and useShared sends an AT's requests to
 * its sharedAT's class. Counters with ATV 1 count one AT (the machine keeps
 * occupancy and bytes per MCID, AT and, in the draft, C).
 *
 * Bandwidth sharing (4.5; 1.0 BC_BMASK). Rbwb blocks are reserved, the
 * rest shared by Mweight. Mweight 0: in the draft the class takes spare
 * bandwidth only when no weighted class wants it; in 1.0 "the configured
 * limit is a hard limit": never more than Rbwb (bw.h, hard).
 *
 * Confidential requests (draft 5.2.2). A request carries C when the running
 * task's TEE region (the scenario's `tee`) holds its address. Requests
 * with C use the allocations the secure window programs (the machine's
 * confidential classes) and count in the secure window's counters; the
 * others use and count in the normal window's. Nothing of one world shows
 * in the other's registers. The two windows' bandwidth reservations are
 * each checked against MRBWB alone (see bw_apply in cbqri.c).
 *
 * FLUSH_RCID (3.5; 1.0 CC_ALLOC) writes back and invalidates, at that cache
 * instance, every line the RCID's requests of that AT (both, where ATs are
 * not told apart) and of the window's world filled, as CBO.FLUSH would.
 * Copies above a non-inclusive cache stay. It needs FRCID (else STATUS 2)
 * and leaves cc_block_mask, cc_cunits and the configured limits alone.
 *
 * Hart CSRs. Draft: sqoscfg, 32 bits, no CSR number (CBQRI_CSR_SQOSCFG, a
 * name, docs/registers.md 2). 1.0: srmcfg, CSR 0x181, SXLEN bits (Ssqosid
 * ch. 2), and with Smstateen mstateen0 (0x30C; its high half mstateen0h,
 * 0x31C, when XLEN is 32), of which the model implements bit 55 only (the
 * other bits belong to extensions qosim does not model: read-only zero),
 * reset 0. */
#ifndef QOSIM_HW_CBQRI_H
#define QOSIM_HW_CBQRI_H

#include "hw.h"
#include "sim/mach.h"

#include <stdint.h>

#define CBQRI_WINDOW        4096ull           /* the draft's register block */
#define CBQRI_SECURE_OFFSET 0x100000000ull    /* draft: secure window = normal window + this */
#define CBQRI_VER           0x01              /* capabilities VER: draft 0.1 */
#define CBQRI_VER_1_0       0x10              /* capabilities VER: 1.0 (CC_CAP, BC_CAP) */
#define CBQRI_MIN_SAMPLES   16                /* sampled lines a valid sampled occupancy needs */
#define CBQRI_BUSY_CYCLES   PLAT_CBQRI_BUSY   /* default operation latency, core cycles */
#define CBQRI_ACCESS_CYCLES PLAT_CBQRI_ACCESS /* default cost of one MMIO access, core cycles */
#define CBQRI_NREG          6 /* registers in a window (NCBLKS <= 64: one cc_block_mask) */

/* Register offsets in a window (draft Tables 2 and 8; 1.0 CC_REG, BC_QOS). */
enum {
    CBQRI_CAPABILITIES = 0,
    CBQRI_MON_CTL = 8,
    CBQRI_MON_CTR_VAL = 16,
    CBQRI_ALLOC_CTL = 24,
    CBQRI_BLOCK_MASK = 32, /* capacity: cc_block_mask */
    CBQRI_BW_ALLOC = 32,   /* bandwidth: bc_bw_alloc */
    CBQRI_CUNITS = 40,     /* 1.0 capacity: cc_cunits, at 32 + BMW/8 with BMW 64 */
};

/* Fields, declared once, named as the spec spells them (docs/registers.md 2). */
HW_FIELD(CC_CAP, VER, 0, 8);
HW_FIELD(CC_CAP, NCBLKS, 8, 16);
HW_FIELD(CC_CAP, FRCID, 24, 1);
HW_FIELD(CC_CAP, CUNITS, 25, 1); /* 1.0 */
HW_FIELD(CC_CAP, RPFX, 26, 1);   /* 1.0 */
HW_FIELD(CC_CAP, P, 27, 4);      /* 1.0 */
HW_FIELD(BC_CAP, VER, 0, 8);
HW_FIELD(BC_CAP, NBWBLKS, 8, 16);
HW_FIELD(BC_CAP, RPFX, 24, 1); /* 1.0 */
HW_FIELD(BC_CAP, P, 25, 4);    /* 1.0 */
HW_FIELD(BC_CAP, MRBWB, 32, 16);
HW_FIELD(MON_CTL, OP, 0, 5);
HW_FIELD(MON_CTL, AT, 5, 3);
HW_FIELD(MON_CTL, MCID, 8, 12);
HW_FIELD(MON_CTL, EVT_ID, 20, 8);
HW_FIELD(MON_CTL, ATV, 28, 1);
HW_FIELD(MON_CTL, STATUS, 32, 7);
HW_FIELD(MON_CTL, BUSY, 39, 1);
HW_FIELD(ALLOC_CTL, OP, 0, 5);
HW_FIELD(ALLOC_CTL, AT, 5, 3);
HW_FIELD(ALLOC_CTL, RCID, 8, 12);
HW_FIELD(ALLOC_CTL, STATUS, 32, 7);
HW_FIELD(ALLOC_CTL, BUSY, 39, 1);
HW_FIELD(CC_CTR, CTR, 0, 63);
HW_FIELD(CC_CTR, INVALID, 63, 1); /* draft's name */
HW_FIELD(CC_CTR, INV, 63, 1);     /* 1.0's */
HW_FIELD(BC_CTR, CTR, 0, 62);
HW_FIELD(BC_CTR, INVALID, 62, 1);
HW_FIELD(BC_CTR, INV, 62, 1);
HW_FIELD(BC_CTR, OVF, 63, 1);
HW_FIELD(BW_ALLOC, Rbwb, 0, 16);
HW_FIELD(BW_ALLOC, Mweight, 20, 8);
HW_FIELD(BW_ALLOC, sharedAT, 28, 3);
HW_FIELD(BW_ALLOC, useShared, 31, 1);
HW_FIELD(SQOSCFG, RCID, 0, 12); /* draft 2.1.1, Figure 1 */
HW_FIELD(SQOSCFG, MCID, 16, 12);
HW_FIELD(SRMCFG, RCID, 0, 12); /* Ssqosid ch. 2; WPRI [15:12], [SXLEN-1:28] */
HW_FIELD(SRMCFG, MCID, 16, 12);
HW_FIELD(MSTATEEN0, SRMCFG, 55, 1); /* Ssqosid ch. 2: gates srmcfg below M */

/* CSRs (draft 2.1.1; Ssqosid ch. 2; Smstateen). The draft's sqoscfg has no
 * number: CBQRI_CSR_SQOSCFG is a name, outside the 12-bit CSR space. */
enum {
    CBQRI_CSR_SRMCFG = 0x181,
    CBQRI_CSR_MSTATEEN0 = 0x30C,
    CBQRI_CSR_MSTATEEN0H = 0x31C, /* XLEN 32: mstateen0[63:32] */
    CBQRI_CSR_SQOSCFG = 0x1000,
};

/* Operations (spec Tables 3, 6, 9, 12). */
enum { CBQRI_CONFIG_EVENT = 1, CBQRI_READ_COUNTER = 2 };
enum { CBQRI_CONFIG_LIMIT = 1, CBQRI_READ_LIMIT = 2, CBQRI_FLUSH_RCID = 3 };
/* STATUS (spec Tables 5, 7, 11, 13): 1-3 common, 4 and 5 per register. */
enum {
    CBQRI_ST_SUCCESS = 1,
    CBQRI_ST_BAD_OP = 2,
    CBQRI_ST_BAD_ID = 3, /* MCID or RCID */
    CBQRI_ST_MON_BAD_EVT = 4,
    CBQRI_ST_MON_BAD_AT = 5,
    CBQRI_ST_ALLOC_BAD_AT = 4,
    CBQRI_ST_ALLOC_BAD_LIMIT = 5, /* empty block mask; Rbwb out of range or over-reserved */
};
/* Events (spec Tables 4, 10) and access types (Table 1). */
enum { CBQRI_EVT_OCCUPANCY = 1 };
enum { CBQRI_EVT_RW_BYTES = 1, CBQRI_EVT_RD_BYTES = 2, CBQRI_EVT_WR_BYTES = 3 };
enum { CBQRI_AT_DATA = 0, CBQRI_AT_CODE = 1 };

/* The privilege of the requesting hart. */
enum cbqri_mode { CBQRI_M, CBQRI_S, CBQRI_U, CBQRI_VS, CBQRI_VU, CBQRI_SECURE_M, CBQRI_NMODE };
extern const char *const cbqri_mode_name[CBQRI_NMODE]; /* "M" ... "secure-M" */

enum cbqri_kind { CBQRI_CAPACITY, CBQRI_BANDWIDTH };

/* One monitoring counter (per MCID of a window). */
struct cbqri_ctr {
    uint8_t evt, atv, at; /* configured event; evt 0: stopped */
    uint64_t frozen;      /* the register value a stopped counter keeps */
    uint64_t base;        /* capacity: occupancy at CONFIG_EVENT; bandwidth: bytes then */
};

/* One register window's state: registers, operation in flight, tables. */
struct cbqri_win {
    int secure;
    uint64_t mon_ctl, ctr_val, alloc_ctl, operand; /* operand: cc_block_mask or bc_bw_alloc */
    uint64_t cunits;                               /* 1.0: cc_cunits */
    uint64_t mon_due, alloc_due;                   /* when BUSY clears, ticks */
    uint64_t half[CBQRI_NREG];                     /* split writes held, per register */
    uint8_t have[CBQRI_NREG];                      /* bit 0: low half held, bit 1: high half */
    uint64_t *limit;                               /* [rcids * nat] block masks / bc_bw_alloc */
    uint64_t *units;                               /* [rcids * nat] 1.0: cc_cunits limits */
    struct cbqri_ctr *ctr;                         /* [mcids] */
};

struct cbqri_ctl {
    enum cbqri_kind kind;
    const struct plat_cbqri_ctl *pc;
    enum plat_level level;   /* capacity: the cache; bandwidth: PLAT_NLEVEL */
    unsigned inst;           /* cache instance or node */
    uint64_t base;           /* this instance's normal window */
    uint64_t size;           /* its length: the profile's stride */
    int v10;                 /* CBQRI 1.0, else the 2023 draft */
    unsigned nwin;           /* windows: 2 in the draft (normal, secure), 1 in 1.0 */
    unsigned nat;            /* access types with their own limits: 1 or 2 */
    int mon;                 /* monitoring implemented */
    uint64_t lines;          /* capacity: lines of the cache instance (cc_cunits' ceiling) */
    struct cbqri_win win[2]; /* normal, secure */
};

struct cbqri {
    struct mach *m;
    const struct plat *p;
    struct cbqri_ctl *ctl;
    unsigned nctl;
    uint64_t now; /* the model's clock, ticks */
    /* From the profile (qos.cbqri.busy_cycles, access_cycles); may be changed after cbqri_init. */
    uint64_t busy_cycles;          /* operation latency, core cycles */
    uint64_t access_cycles;        /* what one MMIO access costs, core cycles */
    unsigned ctr_width;            /* bc_mon_ctr_val.CTR bits in use */
    unsigned rcid_bits, mcid_bits; /* sqoscfg / srmcfg bits implemented */
    int v10;                       /* CBQRI 1.0 and Ssqosid; else the draft */
    unsigned xlen;                 /* SXLEN (1.0: srmcfg's width) */
    int smstateen;                 /* mstateen0 exists and gates srmcfg */
    int rpfx;                      /* RCID-prefixed MCIDs (RPFX), with pfx bits (P) */
    unsigned pfx;
    uint64_t *csr;               /* [ncpu] sqoscfg or srmcfg */
    uint64_t *mstateen0;         /* [ncpu] */
    uint64_t faults, fault_addr; /* access faults so far, and the last one's address */
};

/* Builds the controllers the profile lists (a RISC-V profile), at reset. */
int cbqri_init(struct cbqri *q, struct mach *m, struct err *e);
void cbqri_free(struct cbqri *q);
/* Reset (draft 3, 4, 2.1.1; 1.0 CC_REG, BC_QOS, Ssqosid): RCID 0 -- every
 * RCID here -- may allocate all capacity for every AT, with no cunits
 * limit; RCID 0 reserves MRBWB bandwidth blocks for AT 0, AT 1 shares AT
 * 0's, other RCIDs reserve none; every weight is 1; counters stopped at 0;
 * sqoscfg / srmcfg 0, mstateen0 0. Applied to the machine. Keeps the clock. */
void cbqri_reset(struct cbqri *q);
/* Moves the model's clock to now (ticks; never backwards), completing the
 * operations due and observing the machine's counters. */
void cbqri_tick(struct cbqri *q, uint64_t now);
/* When the first operation in progress completes, in ticks (UINT64_MAX:
 * none is). Whoever runs the machine runs it up to there and ticks, so the
 * operation sees the machine as it is then -- a CONFIG_EVENT starts its
 * count there, a CONFIG_LIMIT takes effect there. */
uint64_t cbqri_next_due(const struct cbqri *q);
/* The same for the operations that change what the harts' accesses do
 * (CONFIG_LIMIT, FLUSH_RCID): a run stops every hart at that time exactly.
 * The others (monitoring, READ_LIMIT) only look, and a run may reach their
 * time up to a quantum late (sched_pause), so that looking changes nothing. */
uint64_t cbqri_next_setting_due(const struct cbqri *q);

/* The register interface. size: 4 or 8. */
enum hw_fault cbqri_mmio_read(struct cbqri *q, unsigned hart, enum cbqri_mode md, uint64_t addr,
                              unsigned size, uint64_t *val);
enum hw_fault cbqri_mmio_write(struct cbqri *q, unsigned hart, enum cbqri_mode md, uint64_t addr,
                               unsigned size, uint64_t val);
/* The hart CSRs (CBQRI_CSR_*). sqoscfg (draft 2.1.1) and srmcfg (Ssqosid)
 * are S-mode CSRs: U-mode gets HW_ILLEGAL, V=1 (VS, VU) HW_VIRTUAL; with
 * Smstateen and mstateen0 bit 55 clear, every mode below M gets
 * HW_ILLEGAL for srmcfg. mstateen0 (and mstateen0h) are M-mode CSRs. A CSR
 * the platform does not have is HW_ILLEGAL. A write to sqoscfg or srmcfg
 * loads the hart's (RCID, MCID) -- the effective MCID in RCID-prefixed
 * mode -- into the machine. */
enum hw_fault cbqri_csr_read(struct cbqri *q, unsigned hart, enum cbqri_mode md, unsigned csr,
                             uint64_t *val);
enum hw_fault cbqri_csr_write(struct cbqri *q, unsigned hart, enum cbqri_mode md, unsigned csr,
                              uint64_t val);
/* The CSR a platform's harts carry their IDs in: CBQRI_CSR_SRMCFG on 1.0,
 * CBQRI_CSR_SQOSCFG on the draft. */
unsigned cbqri_id_csr(const struct cbqri *q);
/* Whether the platform's harts have the CSR at all: sqoscfg on the draft;
 * srmcfg on 1.0, and with Smstateen mstateen0 (mstateen0h when XLEN is 32).
 * Who may reach one that exists is csr_read/csr_write's to answer. */
int cbqri_csr_exists(const struct cbqri *q, unsigned csr);

/* The register at addr, e.g. "cc_alloc_ctl", and which controller and
 * window; NULL where there is none. For consoles and messages. */
const char *cbqri_reg_name(const struct cbqri *q, uint64_t addr, const struct cbqri_ctl **ctl,
                           int *secure);

/* The register interface as a driver sees it (docs/architecture.md: drivers reach the
 * hardware only through it; a real-hardware backend implements it too). */
struct cbqri_regif {
    void *ctx;
    enum hw_fault (*mmio_read)(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t addr,
                               unsigned size, uint64_t *val);
    enum hw_fault (*mmio_write)(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t addr,
                                unsigned size, uint64_t val);
    enum hw_fault (*csr_read)(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                              uint64_t *val);
    enum hw_fault (*csr_write)(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                               uint64_t val);
};
void cbqri_regif(struct cbqri *q, struct cbqri_regif *out);

#endif
