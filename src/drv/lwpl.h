/* The user side of AMD Lightweight Profiling (AMD's 2007
 * LWP proposal, layouts docs/registers.md 3): a small library a
 * process links to profile itself, as the proposal's section 2 describes
 * the software's part. It finds what the CPU offers with CPUID (5.1),
 * builds an LWPCB and a ring buffer in the process's own memory (5.4),
 * starts LWP with LLWPCB, drains the ring from BufferTailOffset to
 * BufferHeadOffset and hands each record on, advancing the tail (3
 * "Report", 5.5.3), and stops LWP with LLWPCB 0.
 *
 * It reaches the hardware only through struct lwp_procif -- the
 * instructions and memory a process has -- so the same code runs on a real
 * machine (LLWPCB/SLWPCB inline, memory by pointer) or on the simulated
 * one. */
#ifndef QOSIM_DRV_LWPL_H
#define QOSIM_DRV_LWPL_H

#include "hw/lwp_proc.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define LWPL_RECORD  32 /* bytes of an event record (LWPEventSize in version 1) */
#define LWPL_MAX_EVS 26

/* LWP as CPUID reports it (Table 2). */
struct lwpl_caps {
    int present;         /* CPUID 0x80000001 ECX[15] */
    uint32_t enabled;    /* 0x8000001C EAX: what the OS enabled (LWPMSR0) */
    uint32_t avail;      /* EDX: what the hardware offers */
    unsigned cb_size;    /* LWPCBSize, bytes */
    unsigned event_size; /* LWPEventSize, bytes */
    unsigned max_events; /* LWPMaxEvents */
    unsigned version;    /* LWPVersion */
    unsigned cache_max;  /* LWPCacheMax: bits of the latency counter */
    int data_address;    /* LWPDataAddress */
    int cache_levels;    /* LWPCacheLevels: the CLF filter works */
    int cache_latency;   /* LWPCacheLatency: the MinLatency filter works */
    unsigned min_buffer; /* LwpMinBufferSize (ECX[23:16], AMD's later LWP spec):
                          * the smallest ring LLWPCB takes, in units of 32
                          * records; 0: none (and on a CPU built to the 2007
                          * proposal, which reserves these bits) */
};

/* What to profile: events by EventId (1 instructions, 2 branches, 3 DCache
 * misses) with their intervals; the ring; the filters (5.4). */
struct lwpl_cfg {
    struct {
        unsigned id;
        uint32_t interval; /* record every interval-th occurrence (26 bits) */
    } ev[LWPL_MAX_EVS];
    unsigned nev;
    uint32_t buffer;    /* ring bytes (rounded down to whole records) */
    uint32_t threshold; /* bytes of records that raise the interrupt; 0: none */
    unsigned random;    /* Random: low interval bits to randomise, 0-15 */
    unsigned minlat;    /* MinLatency: DCache misses of at least minlat x 16 cycles */
    int clf;            /* filter DCache misses by source ... */
    unsigned levels;    /* ... keeping these: LWPL_NBC | LWPL_RDC | LWPL_RAM | LWPL_OTH */
    int ndb;            /* no direct branches */
};
enum { LWPL_NBC = 1, LWPL_RDC = 2, LWPL_RAM = 4, LWPL_OTH = 8 };

struct lwpl {
    struct lwp_procif r;
    struct lwpl_caps caps;
    struct lwpl_cfg cfg;
    uint64_t cb, buf; /* the LWPCB and the ring, in the process's memory */
    uint32_t size;    /* ring bytes */
    uint32_t flags;   /* LWPCB.Flags after LLWPCB */
    uint64_t drained; /* records handed on so far */
};

/* CPUID's view of LWP. */
void lwpl_caps(const struct lwp_procif *r, struct lwpl_caps *c);
/* Bytes of the smallest ring lwpl_open accepts on a CPU with caps c: two
 * records (one slot always stays free), or LwpMinBufferSize x 32 records
 * when that is more; a smaller ring is refused before LLWPCB, which would
 * only leave LWP off (Flags 0). */
uint32_t lwpl_min_buffer(const struct lwpl_caps *c);
/* Checks c against what the CPU offers and the OS enabled, builds the LWPCB
 * and ring, and starts LWP; fails naming what is missing. */
int lwpl_open(struct lwpl *l, const struct lwp_procif *r, const struct lwpl_cfg *c, struct err *e);
/* Hands every record between the tail and the head to fn, oldest first,
 * and moves the tail past them. With flush, SLWPCB first, so the head in
 * memory is current (the hardware writes it lazily, 5.5.3). Returns the
 * records drained, or a negative code. */
typedef void (*lwpl_fn)(void *ctx, const uint8_t rec[LWPL_RECORD]);
long lwpl_drain(struct lwpl *l, int flush, lwpl_fn fn, void *ctx, struct err *e);
/* MissedEvents as the LWPCB holds it. */
int lwpl_missed(struct lwpl *l, uint64_t *n, struct err *e);
/* Flushes, drains what is left into fn, and stops LWP (LLWPCB 0). */
int lwpl_close(struct lwpl *l, lwpl_fn fn, void *ctx, struct err *e);

#endif
