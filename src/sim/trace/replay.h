/* Trace-driven replay: every record of a trace through a hierarchy. */
#ifndef QOSIM_SIM_REPLAY_H
#define QOSIM_SIM_REPLAY_H

#include "sim/cache/hier.h"
#include "trace.h"

/* Replays the whole trace; returns 0 or the reader's error (in t->err).
 * *records counts the accesses simulated. */
int replay_trace(struct hier *h, struct trace *t, uint64_t *records);

#endif
