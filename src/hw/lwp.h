/* AMD Lightweight Profiling (LWP) to the register: one LWP unit per
 * logical CPU, as AMD's 2007 Lightweight Profiling proposal
 * describes it, with the layouts docs/registers.md section 3
 * fixes where the proposal leaves them open.
 *
 * What it models:
 * - CPUID 0x80000001 ECX[15] (LWP present) and leaf 0x8000001C (5.1,
 *   Table 2): EAX is this CPU's LWPMSR0; EBX, ECX and EDX come from the
 *   profile's qos.lwp section.
 * - LWPMSR0 0xC0000105 (5.2.1, Table 3) and LWPMSR1 0xC0000106 (5.2.2),
 *   whose read performs SLWPCB and whose write performs LLWPCB.
 * - LLWPCB and SLWPCB (5.3) on a process address space (sim/cpu/vmem.h) that
 *   holds the LWPCB (5.4, Table 4) and the event ring buffer.
 * - Storing an event record into the ring (3 "Store" and "Report", 5.4
 *   BufferHeadOffset, MissedEvents and Threshold, 5.5.3).
 * - The event engine (lwp_engine.c): counting retired instructions,
 *   branches and DCache misses and gathering their records (3 "Count" and
 *   "Gather", 4.1-4.3, 5.5.1), fed by the core's retirement observer.
 * - The volatile state a context switch saves and restores (5.5.2).
 *
 * Choices where the proposal is silent (project choices, each the way AMD's
 * shipped LWP or Linux behaves, or the reading the text supports best):
 * - Presence is CPUID 0x80000001 ECX[15], the bit AMD shipped (the proposal
 *   says "EDX bit TBD"; docs/registers.md 3).
 * - 0x8000001C ECX[23:16] is LwpMinBufferSize, as AMD's later LWP
 *   specification places it (see the register table below): the profile's
 *   min_buffer, the smallest ring LLWPCB accepts, in units of 32 records; 0
 *   (a profile without min_buffer) is no minimum. The proposal reserves
 *   these bits, so software written to it reads them as nothing; software
 *   written to the later spec learns the minimum before LLWPCB. The rest of
 *   ECX[29:6] and EAX[30] (Extension) read 0: branch_prediction and
 *   ip_filter of the profile are reported nowhere.
 * - EDX: Enabled, IRE and BRE are available on every LWP profile; DME only
 *   when the profile filters cache misses by level or by latency, since
 *   Table 2 requires at least one of the two; Interrupt is available (the
 *   delivery method is TBD in 5.5.5; the unit latches a pending interrupt
 *   for the OS model to take with lwp_take_irq).
 * - LWPMSR0: a bit may be set only when its feature is available in EDX (the
 *   two number features differently; docs/registers.md 3); reserved bits [30:4]
 *   and [63:32] are #GP. Clearing Enabled stops LWP on the CPU but keeps its
 *   state (LLWPCB and SLWPCB #UD until it is set again); the OS saves and
 *   switches that state (5.5.4).
 * - LWPMSR1 exists only while LWPMSR0.Enabled is set: otherwise rdmsr and
 *   wrmsr #GP (the instructions would #UD; an MSR access can only #GP). A
 *   wrmsr runs at CPL 0, so it loads the pointer and defers the rest to the
 *   next entry to ring 3 (5.3); a non-canonical address is #GP, as for
 *   every MSR that holds a linear address. Flushing an active state from
 *   the MSR path is a supervisor access and can end in #PF.
 * - LLWPCB checks the new LWPCB (LWPCBSize bytes, writable by the process)
 *   before anything else, then flushes the old state, then loads the new:
 *   a #PF on either leaves the unit and memory as they were, so the
 *   instruction can restart after the fault (5.5.6, "generate a fault").
 *   The LWPCB is used at the address given (16-byte alignment is advice:
 *   the proposal names no fault for it).
 * - Outside ring 3, LLWPCB loads the pointer (SLWPCB then returns it) and
 *   flushes the old state with supervisor rights; lwp_ring3 performs the
 *   deferred load, which may #PF, and is retried at the next entry if it
 *   does. An LWP instruction at ring 3 first completes a deferred load, as
 *   the entry to ring 3 would have.
 * - Loading reads, as the shipped LWP normalises them: BufferBase with its
 *   low 5 bits cleared (5.4); BufferSize [27:0], BufferHeadOffset,
 *   BufferTailOffset and Threshold rounded down to a multiple of the event
 *   size; a head or tail past the buffer taken as 0; EventCounter_i as the
 *   starting count (5.4 "Starting or current value"), so that LLWPCB 0 and
 *   LLWPCB old resume where profiling stopped. A counter of 0 records the
 *   next occurrence; an interval of 0 records every one.
 * - An event counts when its EventId is 1, 2 or 3 (Table 1), it is allowed
 *   in LWPMSR0 and no earlier slot has the same EventId (5.3). A buffer of
 *   fewer than LwpMinBufferSize x 32 records (the value CPUID reports), or
 *   with no whole record at all (BufferSize below 32, even with no
 *   minimum), cannot run LWP: like no valid event, Flags is written 0 and
 *   LWP is off. A ring of one record runs, but its one slot is the one
 *   always kept free: each record is written there and counted missed.
 * - Flags (Figure 6) is output only in the proposal (R/W "Init"): EN, the
 *   bit of every event counted, and INT when LWPMSR0 allows interrupts and
 *   Threshold is non-zero (a zero Threshold never interrupts, 5.4).
 * - A flush writes BufferHeadOffset, every counted slot's EventCounter (the
 *   dword, bits [31:26] zero) and any MissedEvents increment still owed; it
 *   needs the whole LWPCB writable. Other fields are never written back.
 * - Record byte 1, "CPU core number", is the logical CPU number mod 256 (on
 *   amd-lwp, one thread per core, that is the core number).
 * - A store that faults (ring buffer or LWPCB not writable from ring 3)
 *   changes nothing and reports #PF (5.5.6, first option).
 * - Random (5.4): each reload sets the interval's low Random bits to a value
 *   from the CPU's generator, seeded from lwp_init's seed.
 *
 * The event engine (lwp_retire), project choices where the proposal leaves
 * the implementation free:
 * - Every instruction the simulated tasks run is a user-mode (CPL 3)
 *   instruction (3: only those count); the machine runs no kernel code.
 * - A counter counts down once per occurrence of its event; the occurrence
 *   that finds it at 1 or 0 is the one recorded (4.1), and the counter stays
 *   at 0 ("freezes", 3 "Gather") until its record is stored or MissedEvents
 *   grows, when it reloads (3 "Reset", in lwp_store). An occurrence of an
 *   event whose counter is frozen at 0 is recorded at once.
 * - One record per instruction (5.5.1, the "basic implementation" of 3):
 *   when several counters expire on one instruction, the DCache miss is
 *   recorded, else the branch, else the instruction; the others stay at 0
 *   and take the next instruction that has their event. The rarest event
 *   goes first because a loser waits for its event's next occurrence: one
 *   instruction for instructions retired, thousands for a miss.
 * - The core shows the engine only the instructions it asks for
 *   (lwp_ask): the one that will bring a counter to zero; the others it
 *   counts and reports in bulk (core_insn.skipped, lwp_observe_sync), which
 *   the counters take off at once. Records and counters come out exactly as
 *   if every instruction had been shown (tested), at a fraction of the cost.
 * - A record that cannot be stored (#PF on the ring or the LWPCB) leaves its
 *   counter at 0, so the next occurrence is gathered again, and the
 *   instruction still retires (5.5.6, "generate a trap"); lwp_observe
 *   latches the fault for the OS model (lwp_take_pf).
 * - Branches retired (4.2): every instruction the trace marks as a branch.
 *   NDB drops unconditional direct jumps (TREC_F_DIRECT), the only
 *   "RIP-relative unconditional" branches a trace can tell apart. Byte 3
 *   bit 31 is taken, bits 29 and 30 the core's prediction (a direct jump is
 *   always predicted, 4.2) when the profile has branch_prediction; without
 *   it, or without a predictor on the core, PRD valid is 0. Bytes 16-23:
 *   the next instruction's address, the target or the fall-through.
 * - DCache misses (4.3): an L1D miss of a load; a TREC_M access (a
 *   read-modify-write) is a load too, stores are not counted ("each time a
 *   load from memory causes a DCache miss"). Each load of an instruction
 *   counts once. Latency: the access's load-to-use cycles rounded down to a
 *   multiple of 16 and capped at 2^LWPCacheMax - 16 (4.3.1). Filters (5.4),
 *   both applied when both are on: with LWPCacheLatency, latency >=
 *   MinLatency x 16 (capped alike; 0: none); with LWPCacheLevels and CLF,
 *   only sources whose bit is set: NBC the L3 (on Family 10h and 15h the L3
 *   sits in the northbridge), RDC another node's cache, RAM memory (local
 *   or remote node), OTH MMIO and the like. Data source (Figure 4): 1 local
 *   L3, 3 DRAM; 0 for an L2 hit, which never leaves the core and so has no
 *   northbridge status (and is never eligible under CLF). The machine has
 *   no cache-to-cache transfers or MMIO, so 2 and 7 do not occur. The data
 *   address (virtual) and bit 28 are there when the profile has
 *   data_address. LWP's own record and LWPCB writes bypass the cache model,
 *   so they never count (4.3).
 *
 * Context switch (5.5.2): lwp_save is the OS's XSAVE of the thread's
 * volatile LWP state (the LWPCB address, BufferHeadOffset, the counters,
 * the MissedEvents flag) and forces the head to the LWPCB (5.5.3);
 * lwp_restore is XRSTOR, run by the OS outside ring 3: it restores that
 * state at once and leaves the rest to be reconstructed from the LWPCB at
 * the next entry to ring 3 (lwp_ring3, 5.5.2.1, 5.5.2.4), keeping the saved
 * head and counters rather than the LWPCB's. A thread that never used LWP
 * has the zero state, which turns LWP off, so no thread ever runs with
 * another's LWPCB, ring or counters (5.5.4). LWPMSR0 is the OS's and the
 * threshold interrupt a CPU's: neither is thread state; the OS takes a
 * pending interrupt (lwp_take_irq) before it switches.
 */
#ifndef QOSIM_HW_LWP_H
#define QOSIM_HW_LWP_H

#include "hw.h"
#include "sim/cpu/core.h"
#include "sim/scen/plat.h"
#include "sim/cpu/vmem.h"
#include "util/err.h"
#include "util/rng.h"

#include <stdint.h>

/* MSRs (5.2; the numbers AMD shipped, docs/registers.md 3). */
enum {
    LWP_MSR0 = 0xC0000105, /* LWPMSR0: LWP feature enable (Table 3) */
    LWP_MSR1 = 0xC0000106, /* LWPMSR1: LWPCB address (5.2.2) */
};

/* CPUID leaves (5.1). */
enum { LWP_CPUID_EXT = 0x80000001, LWP_CPUID_LEAF = 0x8000001C };
HW_FIELD(CPUID_80000001_ECX, LWP, 15, 1);

/* CPUID 0x8000001C, Table 2. */
HW_FIELD(LWP_EAX, Enabled, 0, 1);
HW_FIELD(LWP_EAX, IRE, 1, 1);
HW_FIELD(LWP_EAX, BRE, 2, 1);
HW_FIELD(LWP_EAX, DME, 3, 1);
HW_FIELD(LWP_EAX, Extension, 30, 1);
HW_FIELD(LWP_EAX, Interrupt, 31, 1);
HW_FIELD(LWP_EBX, LWPCBSize, 0, 8);
HW_FIELD(LWP_EBX, LWPEventSize, 8, 8);
HW_FIELD(LWP_EBX, LWPMaxEvents, 16, 8);
HW_FIELD(LWP_EBX, LWPVersion, 24, 8);
HW_FIELD(LWP_ECX, LWPCacheMax, 0, 5);
HW_FIELD(LWP_ECX, LWPDataAddress, 5, 1);
/* ECX[23:16] is where the proposal and AMD's later LWP specification
 * ("Lightweight Profiling Specification", pub. 43724, 2010; CPUID
 * Fn8000_001C_ECX) differ: Table 2 reserves ECX[29:6], the later spec puts
 * LwpMinBufferSize here, the smallest event ring buffer in units of 32
 * event records (0: no minimum). Bit range and unit as two public tables
 * of the later layout give them: the Linux kernel's
 * tools/arch/x86/kcpuid/cpuid.csv (generated by x86-cpuid-db; leaf
 * 0x8000001c, ecx 23:16, lwp_buf_min_sz, units of 32 event records) and
 * VMware's open-vm-tools lib/include/x86cpuid.h (leaf 81C, ECX, bit 16,
 * width 8, LWP_MIN_BUF_SIZE). The later spec's other new ECX fields
 * (LwpLatencyRnd [8:6], LwpVersion [15:9], [29:28] filters) are not
 * modelled and read 0. */
HW_FIELD(LWP_ECX, LwpMinBufferSize, 16, 8);
#define LWP_MIN_BUFFER_UNIT 32 /* records per unit of LwpMinBufferSize */
HW_FIELD(LWP_ECX, LWPCacheLevels, 30, 1);
HW_FIELD(LWP_ECX, LWPCacheLatency, 31, 1);
HW_FIELD(LWP_EDX, Enabled, 0, 1);
HW_FIELD(LWP_EDX, Interrupt, 1, 1);
HW_FIELD(LWP_EDX, IRE, 2, 1);
HW_FIELD(LWP_EDX, BRE, 3, 1);
HW_FIELD(LWP_EDX, DME, 4, 1);

/* LWPMSR0, Table 3: all R/W, reset 0; [30:4] reserved. */
HW_FIELD(LWPMSR0, Enabled, 0, 1);
HW_FIELD(LWPMSR0, IRE, 1, 1);
HW_FIELD(LWPMSR0, BRE, 2, 1);
HW_FIELD(LWPMSR0, DME, 3, 1);
HW_FIELD(LWPMSR0, Interrupt, 31, 1);

/* EventIds (Table 1). Flags bit n and LWPMSR0 bit n stand for EventId n. */
enum {
    LWP_EV_NONE = 0,   /* reserved: the counter is off */
    LWP_EV_INSTR = 1,  /* instructions retired (4.1) */
    LWP_EV_BRANCH = 2, /* branches retired (4.2) */
    LWP_EV_DCMISS = 3, /* DCache misses (4.3) */
    LWP_NEV = 4,
};

#define LWP_VERSION    1  /* LWPVersion: LWP version 1 */
#define LWP_EVENT_SIZE 32 /* LWPEventSize: bytes of an event record (4) */
#define LWP_MAX_EVENTS 26 /* the most counters a profile may have (plat.c) */

/* The LWPCB (5.4, Table 4; offsets docs/registers.md 3), once, as data:
 * X(ENUM, spec name, offset, bytes, R/W as Table 4 gives it). Event slot i
 * sits at EVENT0 + 8i (EventInterval_i [25:0], EventId_i [31:26]) and
 * COUNTER0 + 8i (EventCounter_i [25:0]); LWPCB size 40 + 8 x LWPMaxEvents. */
#define LWP_CB_FIELDS(X)                                                                           \
    X(FLAGS, "Flags", 0, 4, "Init")                                                                \
    X(BUFFER_SIZE, "BufferSize", 4, 4, "No") /* BufferSize [27:0], Random [31:28] */               \
    X(BUFFER_BASE, "BufferBase", 8, 8, "No")                                                       \
    X(BUFFER_HEAD_OFFSET, "BufferHeadOffset", 16, 4, "LWP")                                        \
    X(BUFFER_TAIL_OFFSET, "BufferTailOffset", 20, 4, "SW")                                         \
    X(MISSED_EVENTS, "MissedEvents", 24, 8, "LWP")                                                 \
    X(THRESHOLD, "Threshold", 32, 4, "No")                                                         \
    X(FILTERS, "Filters", 36, 4, "No") /* MinLatency, NDB, CLF, NBC, RDC, RAM, OTH */              \
    X(EVENT0, "EventInterval0", 40, 4, "No")                                                       \
    X(COUNTER0, "EventCounter0", 44, 4, "LWP")

#define LWP_CB_ENUM_(e, name, off, size, rw) LWPCB_##e = (off),
enum { LWP_CB_FIELDS(LWP_CB_ENUM_) LWPCB_SLOT_STRIDE = 8, LWPCB_FIXED = 40 };
#undef LWP_CB_ENUM_
#define LWPCB_EVENT(i)   (LWPCB_EVENT0 + LWPCB_SLOT_STRIDE * (i))
#define LWPCB_COUNTER(i) (LWPCB_COUNTER0 + LWPCB_SLOT_STRIDE * (i))
#define LWPCB_SIZE(nev)  (LWPCB_FIXED + LWPCB_SLOT_STRIDE * (nev))

struct lwp_cb_field {
    const char *name;
    unsigned off, size;
    const char *rw; /* Table 4: Init, No, LWP or SW */
};
extern const struct lwp_cb_field lwp_cb_fields[];
extern const unsigned lwp_cb_nfields;

/* Figure 6: LWP Flags. Bits [30:1]: the event with that EventId is counted. */
HW_FIELD(LWPCB_FLAGS, EN, 0, 1);
HW_FIELD(LWPCB_FLAGS, IRE, 1, 1);
HW_FIELD(LWPCB_FLAGS, BRE, 2, 1);
HW_FIELD(LWPCB_FLAGS, DME, 3, 1);
HW_FIELD(LWPCB_FLAGS, INT, 31, 1);
HW_FIELD(LWPCB_BUFSZ, BufferSize, 0, 28);
HW_FIELD(LWPCB_BUFSZ, Random, 28, 4);
HW_FIELD(LWPCB_FILTERS, MinLatency, 0, 8); /* x 16 cycles */
HW_FIELD(LWPCB_FILTERS, NDB, 24, 1);
HW_FIELD(LWPCB_FILTERS, CLF, 27, 1);
HW_FIELD(LWPCB_FILTERS, NBC, 28, 1);
HW_FIELD(LWPCB_FILTERS, RDC, 29, 1);
HW_FIELD(LWPCB_FILTERS, RAM, 30, 1);
HW_FIELD(LWPCB_FILTERS, OTH, 31, 1);
HW_FIELD(LWPCB_EVENT, EventInterval, 0, 26);
HW_FIELD(LWPCB_EVENT, EventId, 26, 6);
HW_FIELD(LWPCB_COUNTER, EventCounter, 0, 26);

/* Event records (Figures 1-4; docs/registers.md 3): the first dword holds the
 * EventId [7:0], the core [15:8] and event flags [31:16]; then event data
 * (bytes 4-7), instruction address (8-15), event address (16-23) and a
 * reserved quadword written as zero. */
HW_FIELD(LWP_REC, EventId, 0, 8);
HW_FIELD(LWP_REC, CoreId, 8, 8);
HW_FIELD(LWP_REC, Flags, 16, 16);
HW_FIELD(LWP_REC_BR, PrdValid, 29, 1);  /* prediction information valid */
HW_FIELD(LWP_REC_BR, Predicted, 30, 1); /* predicted correctly */
HW_FIELD(LWP_REC_BR, Taken, 31, 1);
HW_FIELD(LWP_REC_DC, AddrValid, 28, 1); /* data address valid */
HW_FIELD(LWP_REC_DC, Source, 29, 3);    /* enum lwp_src */
enum lwp_src {
    LWP_SRC_NONE = 0,
    LWP_SRC_LOCAL_L3 = 1,
    LWP_SRC_REMOTE = 2,
    LWP_SRC_DRAM = 3,
    LWP_SRC_OTHER = 7
};

/* A record as the event engine gathers it. */
struct lwp_rec {
    unsigned event_id; /* 1..255 */
    uint32_t flags;    /* event flags in place: bits [31:16] of the first dword */
    uint32_t data;     /* bytes 4-7: DCache miss latency */
    uint64_t ip;       /* bytes 8-15: linear address of the instruction */
    uint64_t addr;     /* bytes 16-23: branch target or fall-through, data address */
};
/* The 32 bytes LWP writes for r on logical CPU cpu. */
void lwp_rec_encode(const struct lwp_rec *r, unsigned cpu, uint8_t out[LWP_EVENT_SIZE]);

enum lwp_state {
    LWP_OFF,       /* no LWPCB: SLWPCB returns 0 */
    LWP_PENDING,   /* LWPCB pointer loaded outside ring 3; the load waits for ring 3 */
    LWP_ACTIVE,    /* profiling from the cached LWPCB below */
    LWP_RESTORING, /* lwp_restore: head and counters here, the LWPCB read at ring 3 */
};

/* One event counter, by LWPCB slot. */
struct lwp_ctr {
    unsigned id;       /* EventId counted here; 0: slot unused or ignored */
    uint32_t interval; /* EventInterval, cached at load (5.5.3 allows it) */
    uint32_t counter;  /* events still to count; 0: the next occurrence is recorded */
};

/* A logical CPU's LWP unit. The fields from flags to tail are the copy of
 * the LWPCB the hardware keeps while profiling (5.5.2, 5.5.3). */
struct lwp_cpu {
    uint64_t msr0; /* LWPMSR0 */
    enum lwp_state state;
    uint64_t cb;        /* LWPMSR1: the LWPCB's linear address; 0 when off */
    struct vmem *cb_vm; /* the address space the LWPCB and the ring are in */
    struct vmem *vm;    /* the address space this CPU runs now (lwp_bind) */
    uint32_t flags;     /* as written to LWPCB.Flags */
    uint64_t base;      /* BufferBase, low 5 bits clear */
    uint32_t size;      /* BufferSize, a multiple of 32 */
    uint32_t head;      /* BufferHeadOffset, flushed lazily (5.5.3) */
    uint32_t tail;      /* BufferTailOffset as last read (5.5.3) */
    uint32_t threshold; /* Threshold, a multiple of 32; 0: none */
    uint32_t filters;   /* the Filters dword, for the event engine */
    unsigned random;    /* Random: low bits of each reload drawn at random */
    int missed_pending; /* a MissedEvents increment not yet in memory (5.5.2) */
    uint32_t live;      /* slots whose counter is counted (ctr[i].id, or restored) */
    struct lwp_ctr ctr[LWP_MAX_EVENTS];
    signed char slot[LWP_NEV]; /* EventId -> slot counting it, or -1 */
    int irq_pending;           /* threshold interrupt raised, not yet taken */
    uint64_t nirq;             /* threshold interrupts raised */
    uint64_t nstored, nmissed; /* records stored; MissedEvents increments */
    struct vmem_fault pf;      /* CR2 and error code of the last #PF */
    int pf_pending;            /* lwp_observe: a record store faulted, not yet taken */
    struct rng rng;
};

struct lwp {
    int present; /* the profile has LWP; otherwise every entry point acts as absent */
    struct plat_lwp cfg;
    unsigned ncpu;
    struct lwp_cpu *cpu;
    uint32_t ebx, ecx, edx; /* CPUID 0x8000001C, fixed by the profile */
    uint64_t msr0_ok;       /* LWPMSR0 bits that may be set (those EDX makes available) */
};

/* An LWP unit per logical CPU of p, or an absent one (present = 0) when p
 * has no LWP. Reset state. */
int lwp_init(struct lwp *u, const struct plat *p, uint64_t seed, struct err *e);
void lwp_free(struct lwp *u);
/* Architectural reset: LWPMSR0 0 (Table 3), LWP off on every CPU. */
void lwp_reset(struct lwp *u);
/* Bytes of the LWPCB: LWPCBSize, 40 + 8 x LWPMaxEvents. */
unsigned lwp_cb_size(const struct lwp *u);
/* Bytes of the smallest ring LLWPCB accepts, as CPUID reports it:
 * LwpMinBufferSize x 32 records x LWPEventSize; 0 when there is no minimum. */
uint32_t lwp_min_ring(const struct lwp *u);

/* CPUID: after the rest of the CPU model filled out (eax..edx) for leaf,
 * sets LWP's bits of 0x80000001 ECX and all of 0x8000001C; other leaves and
 * an absent unit leave out alone. */
void lwp_cpuid(const struct lwp *u, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4]);
/* Whether msr is one of LWP's (the x86 model routes these here). */
int lwp_owns_msr(uint32_t msr);
/* LWPMSR0 and LWPMSR1; #GP when LWP or the MSR is absent. A #PF from the
 * flush LWPMSR1 performs leaves its address in u->cpu[cpu].pf. */
enum hw_fault lwp_rdmsr(struct lwp *u, unsigned cpu, uint32_t msr, uint64_t *val);
enum hw_fault lwp_wrmsr(struct lwp *u, unsigned cpu, uint32_t msr, uint64_t val);

/* The address space cpu now runs in (a CR3 load), for the MSR path. */
void lwp_bind(struct lwp *u, unsigned cpu, struct vmem *vm);
/* LLWPCB with rAX = addr executed at privilege level ring in address space
 * vm (also bound to cpu): HW_OK with the previous LWPCB address in *old
 * (may be NULL), HW_UD, or HW_PF with u->cpu[cpu].pf set. */
enum hw_fault lwp_llwpcb(struct lwp *u, unsigned cpu, struct vmem *vm, uint64_t addr, unsigned ring,
                         uint64_t *old);
/* SLWPCB: flushes the state and returns the LWPCB address in *addr, 0 when
 * LWP is off. HW_OK, HW_UD or HW_PF. */
enum hw_fault lwp_slwpcb(struct lwp *u, unsigned cpu, struct vmem *vm, unsigned ring,
                         uint64_t *addr);
/* cpu enters ring 3: a deferred LWPCB load happens now. HW_OK or HW_PF. */
enum hw_fault lwp_ring3(struct lwp *u, unsigned cpu);

/* Stores a gathered record into the ring (3 "Store", "Report" and "Reset";
 * 5.4; 5.5.3): at BufferBase + BufferHeadOffset; when the advanced head
 * would meet the tail (reread from the LWPCB first), MissedEvents += 1 and
 * the head stays; otherwise the head advances, and when the space used,
 * with the tail reread, reaches Threshold the head is written to the LWPCB
 * and, at exactly Threshold with INT set, a threshold interrupt is raised.
 * Then the counter of r's event reloads. HW_OK (nothing happens while LWP
 * is not active) or HW_PF with nothing changed. */
enum hw_fault lwp_store(struct lwp *u, unsigned cpu, const struct lwp_rec *r);
/* Takes cpu's pending threshold interrupt: 1 if there was one. */
int lwp_take_irq(struct lwp *u, unsigned cpu);

/* ---- the event engine (lwp_engine.c) ---- */

/* The instruction in retired (at CPL 3) on cpu, after the ones in
 * in->skipped, which the core only counted: counts its events and stores
 * at most one record (see the header comment). HW_OK, or HW_PF with
 * u->cpu[cpu].pf set when the record could not be stored. */
enum hw_fault lwp_retire(struct lwp *u, unsigned cpu, const struct core_insn *in);
/* What the engine needs to see of the instructions cpu retires next:
 * nothing while LWP is not counting; else the instruction, branch (NDB
 * applied) or qualifying load miss (the MinLatency and CLF filters in the
 * core's terms) that will bring its counter to zero. */
struct core_ask lwp_ask(const struct lwp *u, unsigned cpu);
/* A core retirement observer for an LWP unit: {lwp_observe,
 * lwp_observe_sync, the struct lwp}. The CPU is the one the instruction
 * ran on; a #PF is latched for lwp_take_pf. */
struct core_ask lwp_observe(void *u, const struct mach_cpu *p, const struct core_insn *in);
struct core_ask lwp_observe_sync(void *u, const struct mach_cpu *p, const struct core_skip *n);
/* Takes cpu's latched store fault: 1 with *f set if there was one. */
int lwp_take_pf(struct lwp *u, unsigned cpu, struct vmem_fault *f);

/* ---- context switch (5.5.2) ---- */

/* A thread's volatile LWP state, as XSAVE keeps it. All zero: LWP off (the
 * state of a thread that never used LWP). */
struct lwp_xsave {
    uint64_t cb;                      /* the LWPCB address; 0: off */
    uint32_t head;                    /* BufferHeadOffset */
    uint32_t counter[LWP_MAX_EVENTS]; /* EventCounter of each slot */
    uint32_t live;                    /* the slots counted */
    uint8_t missed;                   /* a MissedEvents increment owed */
    uint8_t deferred;                 /* LLWPCB outside ring 3 not yet completed */
};
/* Saves cpu's state into *xs, writing the head to the LWPCB with
 * supervisor rights (5.5.3; if that faults the head stays in *xs only).
 * The unit keeps running the state until lwp_restore replaces it. */
void lwp_save(struct lwp *u, unsigned cpu, struct lwp_xsave *xs);
/* Replaces cpu's state with *xs of a thread running in address space vm
 * (bound to cpu); the LWPCB is read at the next lwp_ring3. */
void lwp_restore(struct lwp *u, unsigned cpu, struct vmem *vm, const struct lwp_xsave *xs);

#endif
