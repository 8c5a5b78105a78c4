#include "replay.h"

/* 1024 records are 16 KiB: the batch stays in the host L1 between parse and simulation. */
#define REPLAY_BATCH 1024

int replay_trace(struct hier *h, struct trace *t, uint64_t *records)
{
    static struct trace_rec r[REPLAY_BATCH];
    *records = 0;
    for (;;) {
        long n = trace_read(t, r, REPLAY_BATCH);
        if (n <= 0)
            return (int)n;
        for (long i = 0; i < n; i++)
            hier_access(h, r[i].kind, r[i].addr, r[i].size);
        *records += (uint64_t)n;
    }
}
