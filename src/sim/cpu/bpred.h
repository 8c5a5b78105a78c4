/* A core's conditional branch predictor: gshare (S. McFarling, "Combining
 * Branch Predictors", DEC WRL TN-36, 1993, section 5; Hennessy & Patterson,
 * "Computer Architecture", 5th ed., 3.3 "correlating branch predictors").
 *
 * A table of 2-bit saturating counters (J. E. Smith, "A Study of Branch
 * Prediction Strategies", ISCA 1981): 0 and 1 predict not taken, 2 and 3
 * taken; a taken branch counts up, a not-taken one down. The counter a
 * branch uses is picked by its address XOR the global history, the
 * directions of the last BPRED_HIST conditional branches, so a branch whose
 * direction follows a short pattern (a loop of fewer iterations than the
 * history holds) is learned exactly, while a long loop's exit is
 * mispredicted once per run, as with a table indexed by address alone.
 *
 * Fixed size (4096 counters indexed by 12 history bits, 1 KiB of state:
 * small, and nothing here depends on matching one processor); counters
 * start weakly not taken and the history at zero, so every run is
 * deterministic. Only directions are predicted:
 * targets are not (a direct branch's is known at decode; traces do not tell
 * indirect branches apart). Unconditional direct jumps (TREC_F_DIRECT) do
 * not go through it. */
#ifndef QOSIM_SIM_BPRED_H
#define QOSIM_SIM_BPRED_H

#include <stdint.h>

#define BPRED_HIST 12
#define BPRED_SIZE (1u << BPRED_HIST)

struct bpred {
    uint8_t ctr[BPRED_SIZE]; /* 2-bit counters */
    uint32_t hist;           /* last BPRED_HIST directions, newest in bit 0 */
    uint64_t branches, miss; /* conditional branches seen, mispredicted */
};

void bpred_init(struct bpred *b);
/* The direction predicted for the branch at ip: 1 taken. */
int bpred_predict(const struct bpred *b, uint64_t ip);
/* The branch at ip resolved taken or not: predicts it, then learns the
 * outcome. Returns 1 when the prediction was right. */
int bpred_branch(struct bpred *b, uint64_t ip, int taken);

#endif
