/* Pointer chase around a linked list of 64-byte nodes whose order is a fixed
 * pseudo-random permutation (an LCG with a constant seed): one dependent load
 * after another over 512 KiB, hostile to every cache. The nodes are a static
 * array, so no heap address, clock or environment steers the control flow. */
#include <stdint.h>
#include <stdio.h>

#define NODES 8192
#define LAPS  3

struct node {
    struct node *next;
    long val[7];
};

static struct node nodes[NODES];
static uint32_t perm[NODES];

int main(void)
{
    uint32_t x = 12345;
    for (uint32_t i = 0; i < NODES; i++)
        perm[i] = i;
    for (uint32_t i = NODES - 1; i > 0; i--) { /* Fisher-Yates, fixed seed */
        x = x * 1664525u + 1013904223u;
        uint32_t j = x % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint32_t i = 0; i < NODES; i++) {
        nodes[perm[i]].next = &nodes[perm[(i + 1) % NODES]];
        nodes[perm[i]].val[i % 7] = i;
    }
    long sum = 0;
    struct node *p = &nodes[perm[0]];
    for (int lap = 0; lap < LAPS; lap++)
        for (uint32_t i = 0; i < NODES; i++) {
            sum += p->val[i % 7];
            p = p->next;
        }
    printf("%ld %ld\n", sum, (long)(p - nodes));
    return 0;
}
