/* A core running one task: instructions cost the base CPI; an access costs
 * the latency of the level that served it. Independent misses overlap
 * (latency / mlp); a dependent load (pointer chase) and an instruction
 * fetch miss stall for all of it. Instruction fetch looks the cache up once
 * per line the instruction pointer enters, as a fetch unit does.
 *
 * Retirement can be watched: a task with an observer (core_task.obs) shows
 * it retired instructions, in program order, with their address, branch
 * outcome and data accesses, as performance monitoring hardware (the LWP
 * unit) sees them at retirement. Every task instruction is a user-mode (CPL
 * 3) instruction: the machine runs no kernel code. An instruction retires
 * when the next one's record arrives, since only then is its successor (a
 * branch's target or fall-through) known; a quantum ends there too, so at
 * a context switch nothing is left unretired.
 *
 * Sampling hardware needs to see few instructions one by one: those that
 * bring one of its counters to zero. So each call returns what the
 * observer asks for next (struct core_ask): how many instructions, and how
 * many of the branches and of the load misses it counts, may go by before
 * it must see the one that uses up a count. The core retires the others by
 * decrementing those counts, and tells the observer how many of each went
 * by unseen, at the next call (core_insn.skipped) or at the end of the run
 * (sync), so the observer's counts are exact whenever software can look. A
 * task without an observer pays one predictable branch per run, not per
 * instruction. */
#ifndef QOSIM_SIM_CORE_H
#define QOSIM_SIM_CORE_H

#include "bpred.h"
#include "sim/mach.h"
#include "sim/wl/wl.h"

#define CORE_BATCH 512
/* Data accesses kept per retired instruction (ChampSim records have at most
 * 6); further ones are simulated but not shown to the observer. */
#define CORE_MAX_ACC 8

/* One data access of a retired instruction. */
struct core_acc {
    uint64_t addr; /* virtual */
    uint32_t lat;  /* cycles, load-to-use from what served it; 0: an L1 hit */
    uint8_t kind;  /* TREC_L, TREC_S or TREC_M */
    uint8_t src;   /* what served it: enum mach_src (PLAT_L1D on a hit) */
};

/* Branch prediction outcome of a retired branch. */
enum {
    CORE_PRD_VALID = 1, /* prediction known: a direct jump, or core_task.bp is set */
    CORE_PRD_OK = 2,    /* predicted right (a direct jump always is) */
};

/* Instructions retired unseen, and how many of them were branches and
 * qualifying load misses as the observer's last core_ask counts them. */
struct core_skip {
    uint64_t instr, branches, misses;
};

/* A retired instruction, as a retirement observer sees it. */
struct core_insn {
    uint64_t ip;              /* virtual */
    uint64_t next;            /* the next instruction's ip: a branch's target or fall-through */
    struct core_skip skipped; /* retired unseen since the observer's last call */
    uint8_t flags;            /* TREC_F_BRANCH, TREC_F_TAKEN, TREC_F_DIRECT, the TREC_BR kind */
    uint8_t pred;             /* CORE_PRD_* on a branch */
    uint8_t nacc;             /* data accesses in acc */
    struct core_acc acc[CORE_MAX_ACC];
};

/* Events an observer counts besides instructions. */
enum {
    CORE_WANT_BRANCH = 1,    /* branches (TREC_F_BRANCH) */
    CORE_WANT_LOAD_MISS = 2, /* loads (TREC_L, TREC_M) that missed L1D, each access once */
    CORE_WANT_NO_DIRECT = 4, /* with CORE_WANT_BRANCH: direct jumps are not counted */
};

/* What an observer asks to see from the next instruction on: an
 * instruction that uses up one of these counts is shown, the others only
 * counted. A load miss qualifies when at least miss_lat cycles long and
 * served from a source in miss_src; only an instruction's first
 * CORE_MAX_ACC accesses count. */
struct core_ask {
    unsigned want;       /* CORE_WANT_*: what it counts */
    uint64_t quiet;      /* instructions that may go by unseen */
    uint64_t quiet_br;   /* CORE_WANT_BRANCH: branches that may */
    uint64_t quiet_miss; /* CORE_WANT_LOAD_MISS: qualifying misses that may */
    uint32_t miss_lat;   /* cycles */
    uint32_t miss_src;   /* 1 << enum mach_src of each source that qualifies */
};
#define CORE_ASK_ALL ((struct core_ask){0}) /* every instruction */

struct core_obs {
    /* An instruction it asked to see, on the CPU p it ran on, after its
     * accesses. */
    struct core_ask (*retire)(void *ctx, const struct mach_cpu *p, const struct core_insn *in);
    /* At the start (nothing skipped) and end of a run on p: what retired
     * unseen since the last call. NULL: the observer sees everything. */
    struct core_ask (*sync)(void *ctx, const struct mach_cpu *p, const struct core_skip *n);
    void *ctx;
};

struct core_task {
    struct wl *wl;
    struct trace_rec buf[CORE_BATCH];
    size_t pos, n;
    uint64_t base;        /* physical placement of the task's virtual space */
    uint64_t va_mask;     /* the bits of a record's address kept before base is added: the
                             MACH_VA_BITS of a virtual space (core_task_init); all of them for
                             records that carry physical addresses, node bits included (qosim
                             vm's guest, whose memory spans a DRAM and a slow node) */
    uint64_t last_iblock; /* line the last instruction was fetched from */
    int ended;            /* a non-looping trace ran out */
    /* Optional, NULL after core_task_init; set them before running. */
    const struct core_obs *obs; /* retirement observer */
    struct bpred *bp;           /* with obs: predictor of the core it runs on (set at dispatch);
                                   it learns the branches the observer counts or may see */
    struct core_insn cur;       /* with obs: the instruction not yet retired */
    struct core_ask ask;        /* the observer's last answer */
    struct core_skip skipped;   /* retired unseen since the observer's last call */
};

void core_task_init(struct core_task *t, struct wl *wl, uint64_t base);
/* Runs t on CPU p until p->now reaches until (at an instruction boundary) or
 * the task ends. Returns 0, 1 when the task ended, or a negative code. */
int core_run(struct mach *m, struct mach_cpu *p, struct core_task *t, uint64_t until,
             struct err *e);

#endif
