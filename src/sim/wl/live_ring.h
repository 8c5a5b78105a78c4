/* The channel between a program running under QEMU's user-mode emulator
 * and the simulated core that runs it: one shared-memory ring of trace
 * records (trace.h) per program, written by the qosim TCG plugin
 * (qemu/plugin/) and read by live.c. The guest thread writes; the core
 * reads when it needs the next instructions, so a full ring stops the
 * guest: the simulated core, not the host's scheduler, sets the pace.
 *
 * Records appear in workload order (an instruction, then its data
 * accesses) and are published only up to an instruction boundary, after
 * the instruction before it is complete: its taken flag is known only
 * when the next instruction starts.
 *
 * Waiting is on futexes in the shared page; each side sets its *_waits
 * word before sleeping and the other wakes it after moving its index. A
 * sleeping side wakes every LIVE_POLL_MS to see whether the other process
 * still lives. This header is all the plugin knows of libqosim. */
#ifndef QOSIM_SIM_LIVE_RING_H
#define QOSIM_SIM_LIVE_RING_H

#include "sim/trace/trace.h"

#include <stdint.h>

#define LIVE_MAGIC   0x31726c6d69736f71ull /* "qosimlr1", little-endian */
#define LIVE_POLL_MS 50

enum live_state {
    LIVE_RUN,  /* the program runs */
    LIVE_END,  /* it exited: head is final */
    LIVE_FAIL, /* the plugin refused it: msg says why; head is final */
};

struct live_ring {
    uint64_t magic;
    uint64_t cap; /* records in rec[]: a power of two */
    /* The producer's line. */
    _Alignas(64) uint64_t head; /* records published */
    uint32_t head_seq;          /* futex word: bumped when head moves or the state changes */
    uint32_t prod_waits;        /* the producer sleeps (the ring is full) */
    uint64_t prod_need;         /* ... until tail reaches this: half the ring free, so
                                   that the two sides do not wake each other per batch */
    /* The consumer's line. */
    _Alignas(64) uint64_t tail; /* records consumed */
    uint32_t tail_seq;          /* futex word: bumped when tail moves */
    uint32_t cons_waits;        /* the consumer sleeps (the ring is empty) */
    /* Written by the producer before it publishes LIVE_END or LIVE_FAIL. */
    _Alignas(64) uint32_t state;
    uint32_t vcpus; /* guest threads seen */
    uint64_t insns; /* instructions written */
    char msg[256];
    _Alignas(64) struct trace_rec rec[];
};

#endif
