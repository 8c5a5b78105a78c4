#include "core.h"

#include <string.h>

void core_task_init(struct core_task *t, struct wl *wl, uint64_t base)
{
    memset(t, 0, sizeof *t);
    t->wl = wl;
    t->base = base;
    t->last_iblock = UINT64_MAX;
}

#define VA_MASK ((1ull << MACH_VA_BITS) - 1)

int core_run(struct mach *m, struct mach_cpu *p, struct core_task *t, uint64_t until, struct err *e)
{
    if (t->ended)
        return 1;
    struct mach_tstat *ts = p->ts;
    const uint64_t start = p->now, cpi = m->cpi_ticks, mlp = m->mlp_mul, base = t->base;
    const unsigned lb = m->line_bits;
    int rc = 0;
    for (;;) {
        if (t->pos == t->n) {
            long n = wl_fill(t->wl, t->buf, CORE_BATCH, e);
            if (n <= 0) {
                t->ended = 1;
                rc = n < 0 ? (int)n : 1;
                break;
            }
            t->pos = 0;
            t->n = (size_t)n;
        }
        const struct trace_rec *r = &t->buf[t->pos];
        uint64_t a = (r->addr & VA_MASK) | base;
        if (r->kind == TREC_I) {
            if (p->now >= until)
                break;
            ts->instr++;
            p->now += cpi;
            if ((a >> lb) != t->last_iblock) {
                t->last_iblock = a >> lb;
                p->now += mach_access(m, p, HIER_IFETCH, a);
            } else {
                ts->ref[PLAT_L1I]++; /* the line the fetch unit already holds */
            }
        } else {
            uint64_t lat = mach_access(m, p, r->kind, a);
            if (lat)
                p->now += (r->flags & TREC_F_DEP) ? lat : (lat * mlp) >> 16;
        }
        t->pos++;
    }
    ts->ticks += p->now - start;
    return rc;
}
