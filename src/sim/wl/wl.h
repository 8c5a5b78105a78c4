/* Workloads: the instruction streams tasks run. A workload yields trace
 * records (trace.h): an instruction fetch record starts each instruction,
 * carrying its branch flags; data records after it are that instruction's
 * memory operands. Synthetic generators and trace files look the same to
 * the core.
 *
 * Addresses a workload yields are virtual; the machine places each task's
 * space in physical memory. Synthetic code lives at WL_CODE_BASE and data at
 * WL_DATA_BASE, so instruction and data lines never alias. */
#ifndef QOSIM_SIM_WL_H
#define QOSIM_SIM_WL_H

#include "sim/trace/trace.h"
#include "util/err.h"

#include <stdint.h>

#define WL_CODE_BASE 0x400000ull
#define WL_DATA_BASE 0x10000000ull

/* A load whose address came from the previous load (pointer chasing): the
 * core cannot overlap it with other misses. On data records only. */
enum { TREC_F_DEP = 4 };
/* A non-temporal store (MOVNTI and kin): written around the caches
 * (mach_ntstore). On store records only; bit 7, which no other record
 * flag uses. */
enum { TREC_F_NT = 0x80 };

enum wl_pattern {
    WL_SEQ,    /* sequential: each access the next `access` bytes, wrapping at wss */
    WL_STRIDE, /* every `stride` bytes, wrapping at wss */
    WL_RANDOM, /* uniform over the lines of wss */
    WL_CHASE,  /* a random cyclic permutation of the lines of wss, each load dependent */
    WL_ZIPF,   /* lines ranked by a zipf law of exponent zipf_alpha, hot lines scattered */
    WL_NPATTERN
};
extern const char *const wl_pattern_name[WL_NPATTERN];

struct wl_params {
    enum wl_pattern pattern;
    uint64_t wss;        /* data working set, bytes (>= one line) */
    uint32_t access;     /* bytes per data access (1..64) */
    uint32_t stride;     /* WL_STRIDE: bytes between accesses */
    double zipf_alpha;   /* WL_ZIPF: exponent (> 0) */
    double mem_ratio;    /* share of instructions with a data access, [0, 1] */
    double write_ratio;  /* share of data accesses that are stores, [0, 1] */
    double nt_ratio;     /* share of stores that are non-temporal (TREC_F_NT), [0, 1] */
    uint64_t code;       /* code footprint, bytes (>= 64) */
    double branch_ratio; /* share of instructions that are branches, [0, 1] */
    double taken_ratio;  /* share of branches taken, [0, 1]; a taken branch goes to a
                            uniformly chosen 64-byte block of the code footprint */
};

/* Defaults for every field: a sequential read of 1 MiB, 30% memory
 * instructions, 20% stores (none non-temporal), 4 KiB of code, 15% branches
 * of which 50% taken. */
void wl_params_default(struct wl_params *p);
/* NULL if the parameters are usable, else what is wrong ("zipf_alpha must be > 0"). */
const char *wl_params_check(const struct wl_params *p);

struct wl;

/* A synthetic generator; seed makes it reproducible. */
int wl_synth_new(const struct wl_params *p, uint64_t seed, struct wl **out, struct err *e);
/* A trace file as a workload; with loop it restarts at its end (a file with
 * no instruction record cannot loop: error). */
int wl_trace_new(const char *path, const struct trace_ops *fmt, int loop, struct wl **out,
                 struct err *e);
/* A live program (live.h) as a workload: it starts now, and runs as far
 * ahead of its core as the ring lets it. It does not loop: when it ends,
 * wl_fill returns 0 and wl_why says how it ended. */
struct live_opts;
struct live;
int wl_live_new(const struct live_opts *o, struct wl **out, struct err *e);
/* A workload its caller feeds, a stretch at a time: wl_fill hands out the
 * records of the last wl_feed (which stay the caller's), then returns 0
 * until the next. A whole guest's vCPUs run this way (qemu/plugin/qosim-vm.c):
 * the plugin collects a vCPU's instructions and accesses, then lets its
 * core run through them. */
int wl_feed_new(struct wl **out, struct err *e);
void wl_feed(struct wl *w, const struct trace_rec *r, size_t n);
/* The live program behind w; NULL for other workloads. */
struct live *wl_live(const struct wl *w);
/* Fills up to n (>= TRACE_MIN_BATCH) records, always ending on a whole
 * instruction for synthetic workloads; returns the count, 0 when a
 * non-looping trace ended, or a negative code with e set. */
long wl_fill(struct wl *w, struct trace_rec *buf, size_t n, struct err *e);
void wl_free(struct wl *w);

#endif
