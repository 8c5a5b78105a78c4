#include "core.h"

#include <string.h>

#define VA_MASK ((1ull << MACH_VA_BITS) - 1)

void core_task_init(struct core_task *t, struct wl *wl, uint64_t base)
{
    memset(t, 0, sizeof *t);
    t->wl = wl;
    t->base = base;
    t->va_mask = VA_MASK;
    t->last_iblock = UINT64_MAX;
}

/* The pending instruction: none, one kept in full since it may be shown,
 * or one the observer cannot want (within its instruction count, not a
 * branch it must see, and no misses counted), only counted. */
enum { CUR_NONE, CUR_KEPT, CUR_SILENT };

/* A data access of the kept instruction; 1 when it is a miss the observer
 * counts. */
static inline unsigned keep(struct core_insn *in, unsigned kind, uint64_t va, uint64_t lat,
                            unsigned src, const struct core_ask *a)
{
    if (in->nacc == CORE_MAX_ACC)
        return 0;
    uint64_t cyc = lat / MACH_TICK;
    in->acc[in->nacc++] = (struct core_acc){
        .addr = va,
        .lat = cyc > UINT32_MAX ? UINT32_MAX : (uint32_t)cyc,
        .kind = (uint8_t)kind,
        .src = (uint8_t)src,
    };
    if (!(a->want & CORE_WANT_LOAD_MISS))
        return 0;
    /* Without branches: kinds and sources are data the host would
     * mispredict. */
    return (unsigned)(kind != TREC_S) & (unsigned)(src != PLAT_L1D) &
           (unsigned)(cyc >= a->miss_lat) & (a->miss_src >> src);
}

/* The instruction at va, fetched, kept for the observer with the
 * prediction pred. */
static inline void fill(struct core_insn *in, uint64_t va, const struct trace_rec *r, unsigned pred)
{
    in->ip = va;
    in->next = va + r->size;
    in->flags = r->flags;
    in->pred = (uint8_t)pred;
    in->nacc = 0;
}

/* Brings the observer up to date at the start and end of a run. */
static void sync(struct core_task *t, const struct mach_cpu *p)
{
    if (t->obs->sync)
        t->ask = t->obs->sync(t->obs->ctx, p, &t->skipped);
    else
        t->ask = CORE_ASK_ALL;
    t->skipped = (struct core_skip){0, 0, 0};
}

/* How run() is instantiated: without an observer; without one for at most
 * *budget instructions (an observer's quiet stretch); with one. */
enum { PLAIN, LIMITED, OBSERVED };

/* Least quiet count worth leaving the observed loop for the plain one. */
#define CORE_FF_MIN 32

static int run_limited(struct mach *m, struct mach_cpu *p, struct core_task *t, uint64_t until,
                       struct err *e, uint64_t *budget);

/* The loop, instantiated per mode (a constant in each call), so that a
 * task nobody watches runs the code it ran before retirement could be
 * watched, and a quiet stretch of an observed task nearly the same. The
 * observer's counts live in locals: an instruction it does not need to see
 * costs a decrement and a compare or two. Returns 0, 1 when the task
 * ended, or a negative code. */
static inline __attribute__((always_inline)) int run(struct mach *m, struct mach_cpu *p,
                                                     struct core_task *t, uint64_t until,
                                                     struct err *e, const int mode,
                                                     uint64_t *budget)
{
    const int observe = mode == OBSERVED;
    struct mach_tstat *ts = p->ts;
    const uint64_t cpi = m->cpi_ticks, mlp = m->mlp_mul, base = t->base, vmask = t->va_mask;
    const unsigned lb = m->line_bits;
    int rc = 0, cur = CUR_NONE;
    unsigned cur_br = 0, cur_miss = 0; /* the pending one's counted branch and misses */
    struct core_ask ask = {0};
    struct core_skip sk = {0, 0, 0};
    if (observe) {
        sync(t, p); /* LWP state may have changed since the last run */
        ask = t->ask;
    }
/* Retires the pending instruction, whose successor is at nx. */
#define RETIRE(nx)                                                                                 \
    do {                                                                                           \
        if (__builtin_expect(cur == CUR_SILENT, 1) ||                                              \
            (ask.quiet && !(cur_br && !ask.quiet_br) && cur_miss <= ask.quiet_miss)) {             \
            ask.quiet--;                                                                           \
            sk.instr++;                                                                            \
            ask.quiet_br -= cur_br;                                                                \
            sk.branches += cur_br;                                                                 \
            ask.quiet_miss -= cur_miss;                                                            \
            sk.misses += cur_miss;                                                                 \
        } else {                                                                                   \
            t->cur.next = (nx);                                                                    \
            t->cur.skipped = sk;                                                                   \
            sk = (struct core_skip){0, 0, 0};                                                      \
            ask = t->obs->retire(t->obs->ctx, p, &t->cur);                                         \
        }                                                                                          \
        cur = CUR_NONE;                                                                            \
    } while (0)
    for (;;) {
        if (t->pos == t->n) {
            long n = wl_fill(t->wl, t->buf, CORE_BATCH, e);
            if (n <= 0) {
                t->ended = 1;
                rc = n < 0 ? (int)n : 1;
                if (observe && cur != CUR_NONE && n == 0)
                    RETIRE(t->cur.next); /* the last one: its successor is unknown */
                break;
            }
            t->pos = 0;
            t->n = (size_t)n;
        }
        const struct trace_rec *r = &t->buf[t->pos];
        uint64_t va = r->addr & vmask, a = va | base;
        if (r->kind == TREC_I) {
            if (observe && cur != CUR_NONE)
                RETIRE(va);
            if (p->now >= until)
                break;
            if (mode == LIMITED) {
                if (!*budget)
                    break;
                --*budget;
            }
            if (observe && !ask.want && ask.quiet >= CORE_FF_MIN) {
                /* Only the instruction count matters for a while: run
                 * that many without looking, then go on here. */
                uint64_t left = ask.quiet;
                rc = run_limited(m, p, t, until, e, &left);
                sk.instr += ask.quiet - left;
                ask.quiet = left;
                if (rc)
                    break;
                continue;
            }
            ts->instr++;
            p->now += cpi;
            p->ip = a; /* what an IP-indexed prefetcher (mach_pf_l1) keys on */
            if ((a >> lb) != t->last_iblock) {
                t->last_iblock = a >> lb;
                p->now += mach_access(m, p, HIER_IFETCH, a);
            } else {
                ts->ref[PLAT_L1I]++; /* the line the fetch unit already holds */
            }
            if (observe) {
                /* Tests on what the observer asked come first: they are
                 * the same run after run, where a branch flag is data. */
                const unsigned fl = r->flags;
                cur_br = 0;
                cur_miss = 0;
                if (ask.want & CORE_WANT_BRANCH) {
                    unsigned skip = ask.want & CORE_WANT_NO_DIRECT ? TREC_F_DIRECT : 0;
                    cur_br = (fl & TREC_F_BRANCH) & !(fl & skip);
                }
                int silent =
                    ask.quiet && !(ask.want & CORE_WANT_LOAD_MISS) && !(cur_br && !ask.quiet_br);
                /* A direct jump's target is known at decode: never
                 * mispredicted (LWP proposal 4.2). The predictor learns
                 * every branch while the observer counts branches or may
                 * see this one. */
                unsigned pred = 0;
                if (!silent || (ask.want & CORE_WANT_BRANCH)) {
                    if (fl & TREC_F_DIRECT)
                        pred = CORE_PRD_VALID | CORE_PRD_OK;
                    else if ((fl & TREC_F_BRANCH) && t->bp)
                        pred = CORE_PRD_VALID |
                               (bpred_branch(t->bp, va, fl & TREC_F_TAKEN) ? CORE_PRD_OK : 0);
                }
                if (silent) {
                    cur = CUR_SILENT;
                } else {
                    fill(&t->cur, va, r, pred);
                    cur = CUR_KEPT;
                }
            }
        } else {
            uint64_t lat = __builtin_expect(r->flags & TREC_F_NT, 0)
                               ? mach_ntstore(m, p, a)
                               : mach_access(m, p, r->kind, a);
            if (lat)
                p->now += (r->flags & TREC_F_DEP) ? lat : (lat * mlp) >> 16;
            if (observe && cur == CUR_KEPT)
                cur_miss += keep(&t->cur, r->kind, va, lat, p->src, &ask);
        }
        t->pos++;
    }
#undef RETIRE
    if (observe) {
        t->ask = ask;
        t->skipped = sk;
        if (sk.instr)
            sync(t, p);
    }
    return rc;
}

/* The quiet stretch, out of line: the observed loop stays small. */
static __attribute__((noinline)) int run_limited(struct mach *m, struct mach_cpu *p,
                                                 struct core_task *t, uint64_t until, struct err *e,
                                                 uint64_t *budget)
{
    return run(m, p, t, until, e, LIMITED, budget);
}

int core_run(struct mach *m, struct mach_cpu *p, struct core_task *t, uint64_t until, struct err *e)
{
    if (t->ended)
        return 1;
    const uint64_t start = p->now;
    int rc = t->obs ? run(m, p, t, until, e, OBSERVED, NULL) : run(m, p, t, until, e, PLAIN, NULL);
    p->ts->ticks += p->now - start;
    return rc;
}
