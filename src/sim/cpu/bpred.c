#include "bpred.h"

#include <string.h>

void bpred_init(struct bpred *b)
{
    memset(b, 0, sizeof *b);
    memset(b->ctr, 1, sizeof b->ctr); /* weakly not taken */
}

/* Address bits XOR history (McFarling's gshare). x86 instructions start at
 * any byte, so the low address bits are kept; folding bits 2 and up onto
 * them spreads code whose instructions are 4-byte aligned over the table. */
static unsigned slot(uint32_t hist, uint64_t ip)
{
    return (unsigned)((ip ^ ip >> 2 ^ hist) & (BPRED_SIZE - 1));
}

int bpred_predict(const struct bpred *b, uint64_t ip)
{
    return b->ctr[slot(b->hist, ip)] >= 2;
}

int bpred_branch(struct bpred *b, uint64_t ip, int taken)
{
    /* The saturating step as a table: outcomes are data, and a simulator
     * that branched on them would mispredict them itself. */
    static const uint8_t step[2][4] = {{0, 0, 1, 2}, {1, 2, 3, 3}};
    unsigned t = !!taken;
    uint8_t *c = &b->ctr[slot(b->hist, ip)];
    int ok = (*c >> 1) == t;
    *c = step[t][*c & 3];
    b->hist = (b->hist << 1 | t) & (BPRED_SIZE - 1);
    b->branches++;
    b->miss += !ok;
    return ok;
}
