/* Intel architectural performance monitoring, version 4, over the machine's
 * event counts (SDM vol. 3B, "Architectural Performance Monitoring",
 * versions 1-4; vol. 4, the IA32_PERF_* MSRs; docs/registers.md 1.8).
 *
 * Each logical CPU has NGP general-purpose counters (IA32_PMCx with
 * IA32_PERFEVTSELx), three fixed counters (instructions retired, core
 * cycles, reference cycles) and the global control, status, status-reset,
 * status-set and in-use MSRs. What the counters count is pushed by whoever
 * runs the CPU (x86_pmu_count): the events one stretch of execution at one
 * privilege level caused, from the machine's ground truth. A counter that
 * passes its width sets its GLOBAL_STATUS bit and, with its interrupt
 * enabled, asks for a PMI, which the caller delivers through the local
 * APIC's LVT performance-counter entry.
 *
 * Enumeration per CPU model (CPUID 0AH): the counter count and width the
 * part has, at version 4 (project choice: Ice Lake-SP, Sapphire Rapids and
 * Tremont enumerate version 5, whose additions, the fixed-counter bitmap,
 * the AnyThread deprecation and the fourth fixed counter (TOPDOWN.SLOTS)
 * with PERF_METRICS, are left out as a documented subset Linux accepts).
 * Not modelled, and not enumerated: full-width counter writes and
 * IA32_PERF_CAPABILITIES (CPUID.1:ECX.PDCM is 0), PEBS and the DS area
 * (CPUID.1:EDX.DS is 0), LBRs, freeze on PMI (IA32_DEBUGCTL stays
 * QEMU's), the offcore-response MSRs. Intel parts only: AMD's PMU is
 * another model. */
#ifndef QOSIM_HW_X86_PMU_H
#define QOSIM_HW_X86_PMU_H

#include "hw.h"
#include "sim/mach.h"

#include <stdint.h>

/* MSR addresses (SDM vol. 4, table "IA32 Architectural MSRs"). */
enum {
    X86_PMC_0 = 0xC1,                     /* IA32_PMCx: 0xC1 + x */
    X86_PERFEVTSEL_0 = 0x186,             /* IA32_PERFEVTSELx: 0x186 + x */
    X86_FIXED_CTR_0 = 0x309,              /* IA32_FIXED_CTRx: 0x309 + x */
    X86_FIXED_CTR_CTRL = 0x38D,           /* IA32_FIXED_CTR_CTRL */
    X86_PERF_GLOBAL_STATUS = 0x38E,       /* IA32_PERF_GLOBAL_STATUS (RO) */
    X86_PERF_GLOBAL_CTRL = 0x38F,         /* IA32_PERF_GLOBAL_CTRL */
    X86_PERF_GLOBAL_STATUS_RESET = 0x390, /* IA32_PERF_GLOBAL_STATUS_RESET (v4; OVF_CTRL) */
    X86_PERF_GLOBAL_STATUS_SET = 0x391,   /* IA32_PERF_GLOBAL_STATUS_SET (v4) */
    X86_PERF_GLOBAL_INUSE = 0x392,        /* IA32_PERF_GLOBAL_INUSE (v4, RO) */
    X86_OFFCORE_RSP_0 = 0x1A6,            /* MSR_OFFCORE_RSP_0, model-specific */
    X86_OFFCORE_RSP_1 = 0x1A7,            /* MSR_OFFCORE_RSP_1 */
};

/* IA32_PERFEVTSELx (SDM vol. 3B, "Architectural Performance Monitoring
 * Version 1", figure "Layout of IA32_PERFEVTSELx MSRs"; AnyThread from
 * version 3). Bits 63:32 are reserved. */
HW_FIELD(PERFEVTSEL, EventSelect, 0, 8);
HW_FIELD(PERFEVTSEL, UMask, 8, 8);
HW_FIELD(PERFEVTSEL, USR, 16, 1); /* count at CPL 1, 2 and 3 */
HW_FIELD(PERFEVTSEL, OS, 17, 1);  /* count at CPL 0 */
HW_FIELD(PERFEVTSEL, E, 18, 1);   /* edge detect */
HW_FIELD(PERFEVTSEL, PC, 19, 1);  /* pin control */
HW_FIELD(PERFEVTSEL, INT, 20, 1); /* APIC interrupt on overflow */
HW_FIELD(PERFEVTSEL, ANY, 21, 1); /* AnyThread: every thread of the core */
HW_FIELD(PERFEVTSEL, EN, 22, 1);
HW_FIELD(PERFEVTSEL, INV, 23, 1);
HW_FIELD(PERFEVTSEL, CMASK, 24, 8);

/* IA32_FIXED_CTR_CTRL: a 4-bit field per fixed counter i at 4i (SDM vol.
 * 3B, "Architectural Performance Monitoring Version 2" and 3). */
HW_FIELD(FIXED_CTR_CTRL, EN, 0, 2); /* bit 0: CPL 0, bit 1: CPL > 0 */
HW_FIELD(FIXED_CTR_CTRL, ANY, 2, 1);
HW_FIELD(FIXED_CTR_CTRL, PMI, 3, 1);

/* IA32_PERF_GLOBAL_STATUS bits beyond the counters' overflow bits
 * (32 + i for fixed counter i), version 4. */
HW_FIELD(PERF_GLOBAL_STATUS, Ovf_Uncore, 61, 1);
HW_FIELD(PERF_GLOBAL_STATUS, OvfBuf, 62, 1);
HW_FIELD(PERF_GLOBAL_STATUS, CondChgd, 63, 1);
HW_FIELD(PERF_GLOBAL_INUSE, PMI, 63, 1);

/* MSR_OFFCORE_RSP_x of Skylake and Ice Lake: which requests leaving the
 * core (bits 15:0) with which responses (bits 37:16) the
 * OFFCORE_RESPONSE events count (SDM vol. 3B, "Off-core Response
 * Performance Monitoring" of those microarchitectures; bit names as
 * Linux's arch/x86/events/intel/core.c spells them, SKL_*). Of the
 * requests the machine tells apart, only demand data reads (loads)
 * are counted. */
HW_FIELD(OFFCORE_RSP, DEMAND_DATA_RD, 0, 1);
HW_FIELD(OFFCORE_RSP, ANY_RESPONSE, 16, 1);
HW_FIELD(OFFCORE_RSP, L3_HIT, 18, 4);         /* L3_HIT_M, _E, _S, _F */
HW_FIELD(OFFCORE_RSP, L3_MISS_LOCAL, 26, 1);  /* L3_MISS_LOCAL_DRAM */
HW_FIELD(OFFCORE_RSP, L3_MISS_REMOTE, 27, 3); /* L3_MISS_REMOTE_HOP0/1/2P_DRAM */
HW_FIELD(OFFCORE_RSP, SNOOP, 30, 8);          /* SPL_HIT, SNOOP_NONE ... SNOOP_NON_DRAM */

/* Events the machine counts for a stretch of execution. */
enum x86_pmu_ev {
    X86_EV_INSTR,   /* instructions retired */
    X86_EV_CYCLES,  /* core cycles the CPU ran (not halted) */
    X86_EV_LLC_REF, /* L3 lookups */
    X86_EV_LLC_MISS,
    X86_EV_BRANCH, /* branch instructions retired */
    X86_EV_BR_MISS,
    X86_EV_L1D_MISS, /* lines brought into L1D */
    X86_EV_L2_REF,
    X86_EV_L2_MISS,
    X86_EV_LOADS, /* load accesses retired */
    X86_EV_STORES,
    X86_EV_LD_L2_HIT, /* loads that missed L1D, served by L2 */
    X86_EV_LD_L3_HIT,
    X86_EV_LD_MEM_LOCAL, /* ... that missed L3, served by the CPU's own node */
    X86_EV_LD_MEM_REMOTE,
    X86_PMU_NEV
};

#define X86_PMU_MAX_GP  8
#define X86_PMU_NFIXED  3
#define X86_PMU_VERSION 4
#define X86_PMU_WIDTH   48

/* One logical CPU's registers. */
struct x86_pmu_cpu {
    uint64_t evtsel[X86_PMU_MAX_GP], pmc[X86_PMU_MAX_GP];
    uint64_t fixed[X86_PMU_NFIXED];
    uint64_t fixed_ctrl, global_ctrl, global_status;
    uint64_t offcore[2]; /* MSR_OFFCORE_RSP_0, _1 */
};

struct pmu_part;

struct x86_pmu {
    const struct pmu_part *part; /* the CPU model's entry (x86_pmu.c); NULL: no PMU */
    unsigned ngp;                /* general-purpose counters per logical CPU; 0: no PMU */
    unsigned width;              /* counter width in bits */
    uint64_t offcore_bits;       /* MSR_OFFCORE_RSP_x's writable bits; 0: no such MSRs */
    unsigned threads;
    unsigned ncpu;
    struct x86_pmu_cpu *cpu;
};

struct x86;
struct x86_reg;

/* Sizes the PMU for the profile's CPU model (0 counters on AMD and on a
 * model the table lacks) and allocates it; -1 without memory. */
int x86_pmu_init(struct x86 *x);
void x86_pmu_reset(struct x86 *x);
void x86_pmu_free(struct x86 *x);
/* CPUID leaf 0AH (all zero without a PMU). */
void x86_pmu_leaf(const struct x86 *x, uint32_t out[4]);
/* The register table's callbacks (x86.c, x86_regs[]); n picks the
 * register of a bank, and for the single MSRs 0. */
unsigned x86_pmu_count_gp(const struct x86 *x, const struct x86_reg *r);
unsigned x86_pmu_count_fixed(const struct x86 *x, const struct x86_reg *r);
unsigned x86_pmu_count_one(const struct x86 *x, const struct x86_reg *r);
unsigned x86_pmu_count_offcore(const struct x86 *x, const struct x86_reg *r);
enum hw_fault x86_pmu_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                           uint64_t *v);
enum hw_fault x86_pmu_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                            uint64_t v);
/* RDPMC with ECX = ecx: the counter's value, or #GP for a counter the
 * CPU lacks (SDM vol. 2B, RDPMC; the CR4.PCE and CPL check is the
 * caller's). */
enum hw_fault x86_pmu_rdpmc(const struct x86 *x, unsigned cpu, uint32_t ecx, uint64_t *val);
/* Counts the events ev[] that cpu caused at CPL 0 (os = 1) or above
 * (os = 0): in cpu's counters, and in its sibling threads' AnyThread
 * counters. Returns the logical CPUs that an overflow with its interrupt
 * enabled asks a PMI of, as a mask of thread numbers within cpu's core
 * (bit t: CPU core * threads + t); 0 when none. */
unsigned x86_pmu_count(struct x86 *x, unsigned cpu, int os, const uint64_t ev[X86_PMU_NEV]);
/* Whether a general-purpose counter of some CPU counts (EN and its global
 * enable): only those count loads, stores and branches, which a caller
 * may count only while one does. */
int x86_pmu_gp_counting(const struct x86 *x);
/* The events a stretch of a task's execution caused, from its ground truth
 * before (b) and after (a) it: instructions, the cache events and the
 * loads' data sources; cycles from the ticks it ran plus *rem (ticks not
 * yet a whole cycle, kept for the next stretch). Loads, stores and
 * branches, which the machine does not count per task, are 0: a caller
 * that counts them adds them. */
void x86_pmu_events(const struct mach_tstat *b, const struct mach_tstat *a, uint64_t *rem,
                    uint64_t ev[X86_PMU_NEV]);

#endif
