/* qosim lwp's profile (cli_lwp_report.c): built only from the event
 * records the LWP hardware stored, as a profiler on a real machine would
 * build it from its ring buffer. */
#ifndef QOSIM_CLI_LWP_H
#define QOSIM_CLI_LWP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LWPR_LAT_BUCKETS 257 /* latencies, in 16-cycle steps (as LWP rounds them) to 4096 */

struct lwpr_br {
    uint64_t ip;
    uint8_t flags; /* the record's event flags, byte 3 of its first dword */
};

struct lwpr {
    uint64_t nrec[4]; /* records by EventId (1-3), [0]: others */
    uint64_t *ir;     /* instructions retired: instruction addresses */
    size_t nir, capir;
    struct lwpr_br *br; /* branches retired */
    size_t nbr, capbr;
    uint64_t *dline, *dip; /* DCache misses: data lines (address >> 6), instructions */
    size_t nd, capd;
    uint64_t lat[LWPR_LAT_BUCKETS];
    uint64_t src[8]; /* by data source (Figure 4) */
    uint64_t noaddr; /* DCache misses without a data address */
    FILE *raw;       /* --raw: the records as stored */
    int oom;
};

/* One 32-byte record as the ring held it. */
void lwpr_add(void *ctx, const uint8_t rec[32]);
void lwpr_free(struct lwpr *r);

/* What the run was, for the report's head. */
struct lwpr_head {
    const char *workload, *platform, *task;
    char events[256];
    uint32_t buffer, threshold;
    uint64_t instructions; /* the task's, ground truth */
    uint64_t missed;       /* MissedEvents */
    uint64_t drained, interrupts, drains;
};

void lwpr_print(FILE *f, const struct lwpr *r, const struct lwpr_head *h, unsigned top);
void lwpr_json(FILE *f, const struct lwpr *r, const struct lwpr_head *h, unsigned top);

#endif
