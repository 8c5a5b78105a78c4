/* Workloads: synthetic instruction streams and trace files behind one
 * interface (wl.h).
 *
 * A synthetic instruction is one TREC_I record at its instruction pointer
 * (size 4, with TREC_F_BRANCH and TREC_F_TAKEN on branches), followed, with
 * probability mem_ratio, by one data record of `access` bytes: a store with
 * probability write_ratio, else a load; a store is non-temporal (flagged
 * TREC_F_NT) with probability nt_ratio.
 *
 * Three random streams, all from the seed, each drawn a fixed number of times
 * per event it governs, so one part of the parameters does not reshuffle the
 * others' choices:
 *   code: one draw per instruction (high half: branch?, low half: taken?),
 *         one more for the target of a taken branch;
 *   mix:  one draw per instruction (high half: data access?, low half: store?
 *         and, below a lower threshold, write_ratio x nt_ratio, non-temporal?
 *         so nt_ratio changes no choice of load or store);
 *   data: the draws of the address patterns (random, zipf), per data access.
 * Probabilities are 32-bit fixed-point thresholds compared with 32 random
 * bits; they are kept in 64 bits so that 1.0 (2^32) is exactly "always".
 *
 * Code: the instruction pointer starts at WL_CODE_BASE and advances 4 bytes
 * per instruction, back to the start when the next instruction would not fit
 * in `code` bytes; a taken branch goes to a uniformly chosen 64-byte block
 * among the code / 64 whole blocks of the footprint.
 *
 * Data lies in [WL_DATA_BASE, WL_DATA_BASE + wss):
 *   seq, stride: the offset advances by `access` or `stride` bytes and goes
 *     back to 0 when the access would no longer fit in wss (accesses start
 *     at 0, so a stride that is not a multiple of `access` may cross lines);
 *   random: a uniform line of the wss / 64 whole lines, at a uniform
 *     `access`-aligned offset within it;
 *   chase: the lines of wss form one random cycle (Sattolo's algorithm, a
 *     4-byte table entry per line); each access is a load of the next line
 *     of the cycle at offset 0, flagged TREC_F_DEP. write_ratio does not
 *     apply: pointer chasing only loads;
 *   zipf: a rank r in [0, lines) with P(r) proportional to 1 / (r + 1)^alpha,
 *     drawn by rejection-inversion (Hoermann and Derflinger, "Rejection-
 *     inversion to generate variates from monotone discrete distributions",
 *     1996, in the form of Apache Commons RNG's sampler, which holds for every
 *     alpha > 0, 1 included): O(1) expected time, no table, no zeta(n). The
 *     rank then goes through a seeded bijection of [0, lines) (xor-shift-
 *     multiply rounds on the next power of two, cycle-walking back into
 *     range) so the hot lines are spread over the working set; the offset in
 *     the line is as for random.
 * Limits beyond wl.h's: wss at most 1 TiB (16 GiB for chase, whose table may
 * take 1 GiB), code at most WL_DATA_BASE - WL_CODE_BASE (252 MiB).
 *
 * A trace workload reads its file with trace_open (malformed records are
 * errors); a looping one opens the file again at its end. A pass without an
 * instruction record cannot loop (every record would be a data record of no
 * instruction, and an empty pass would never end): that is an error at the
 * first end. Standard input ("-") cannot be read twice, so it cannot loop.
 * A NULL format is the one trace_guess suggests.
 *
 * Lackey traces carry no branch information. A taken branch is inferred
 * where the next instruction does not start where the last one ended
 * (address + size): a branch not taken, or one taken to the next address,
 * cannot be told from straight-line code, so those are missed (and a
 * looping trace's return to its start counts as a taken branch). That
 * needs one instruction of lookahead: the records from the last
 * instruction of a batch on wait for the next. */
#include "wl.h"

#include "live.h"
#include "util/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WL_LINE 64u
/* wss bound: keeps addresses well inside 64 bits and zipf ranks exact in a double. */
#define WL_MAX_WSS (1ull << 40)
/* The chase table has a uint32_t per line; at most 1 GiB of it. */
#define WL_CHASE_MAX_LINES (1ull << 28)
/* Code must end before data starts, so the two never share a line. */
#define WL_MAX_CODE (WL_DATA_BASE - WL_CODE_BASE)

/* Stream numbers for rng_seed. */
enum { WL_RNG_CODE = 1, WL_RNG_DATA, WL_RNG_MIX, WL_RNG_CHASE, WL_RNG_SCATTER };

const char *const wl_pattern_name[WL_NPATTERN] = {"seq", "stride", "random", "chase", "zipf"};

struct wl_zipf {
    double a;       /* exponent */
    double hx1;     /* hIntegral(1.5) - 1 */
    double hn;      /* hIntegral(lines + 0.5) */
    double s;       /* the squeeze: k - x <= s accepts at once */
    double n;       /* lines, as a double */
    double inv1a;   /* 1 / (1 - a), unless a = 1 */
    uint64_t mask;  /* the power of two >= lines, less one */
    uint64_t key;   /* seeded xor of the scatter */
    unsigned shift; /* of the scatter's xor-shifts */
};

struct wl {
    int trace; /* a trace workload (else synthetic) */

    /* Synthetic: the per-record state first. */
    enum wl_pattern pat;
    struct rng code_rng, mix_rng, data_rng;
    uint64_t p_branch, p_taken, p_mem, p_write, p_nt; /* thresholds, 0..2^32 */
    uint64_t ip, ip_last, code_blocks;
    uint64_t off, off_last, step; /* seq, stride: next offset, its largest value, advance */
    uint64_t lines;               /* random, chase, zipf */
    uint32_t access, amask;       /* bytes per access; in-line offset mask (random, zipf) */
    uint32_t *chase;              /* chase: next line of each line */
    uint64_t chase_cur;
    struct wl_zipf z;

    /* Trace. */
    struct trace t;
    const struct trace_ops *fmt;
    int loop, open, seen_insn;
    uint64_t pass_recs;                     /* records of the current pass */
    int infer;                              /* the format has no branches: infer taken ones */
    struct trace_rec held[TRACE_MIN_BATCH]; /* from the last instruction read on */
    size_t nheld;
    char *path;
    struct err fail; /* a failed reopen, repeated to later calls */

    /* Live program. */
    struct live *live;

    /* Fed by its caller: the records wl_feed gave it, not yet handed out. */
    int fed;
    const struct trace_rec *feed;
    size_t nfeed;
};

void wl_params_default(struct wl_params *p)
{
    memset(p, 0, sizeof *p);
    p->pattern = WL_SEQ;
    p->wss = 1u << 20;
    p->access = 8;
    p->stride = 64;
    p->zipf_alpha = 0.99; /* YCSB's */
    p->mem_ratio = 0.3;
    p->write_ratio = 0.2;
    p->nt_ratio = 0;
    p->code = 4096;
    p->branch_ratio = 0.15;
    p->taken_ratio = 0.5;
}

static int wl_ratio_ok(double r)
{
    return r >= 0 && r <= 1; /* false for NaN */
}

const char *wl_params_check(const struct wl_params *p)
{
    if ((unsigned)p->pattern >= WL_NPATTERN)
        return "pattern must be one of seq, stride, random, chase, zipf";
    if (p->wss < WL_LINE)
        return "wss must be at least 64 bytes (one line)";
    if (p->wss > WL_MAX_WSS)
        return "wss must be at most 1 TiB";
    if (p->access < 1 || p->access > WL_LINE || (p->access & (p->access - 1)))
        return "access must be a power of two from 1 to 64";
    if (p->pattern == WL_STRIDE && p->stride < 1)
        return "stride must be at least 1";
    if (p->pattern == WL_ZIPF && !(p->zipf_alpha > 0))
        return "zipf_alpha must be > 0";
    if (p->pattern == WL_ZIPF && isinf(p->zipf_alpha))
        return "zipf_alpha must be finite";
    if (p->pattern == WL_CHASE && p->wss / WL_LINE > WL_CHASE_MAX_LINES)
        return "wss must be at most 16 GiB for chase (a 1 GiB table of its lines)";
    if (!wl_ratio_ok(p->mem_ratio))
        return "mem_ratio must be in [0, 1]";
    if (!wl_ratio_ok(p->write_ratio))
        return "write_ratio must be in [0, 1]";
    if (!wl_ratio_ok(p->nt_ratio))
        return "nt_ratio must be in [0, 1]";
    if (!wl_ratio_ok(p->branch_ratio))
        return "branch_ratio must be in [0, 1]";
    if (!wl_ratio_ok(p->taken_ratio))
        return "taken_ratio must be in [0, 1]";
    if (p->code < WL_LINE)
        return "code must be at least 64 bytes";
    if (p->code > WL_MAX_CODE)
        return "code must be at most 252 MiB (code ends where data starts)";
    return NULL;
}

/* A probability in [0, 1] as a threshold on 32 random bits. */
static uint64_t wl_thresh(double p)
{
    return (uint64_t)llround(p * 4294967296.0);
}

/* ------------------------------------------------------------------- zipf */

/* log1p(x) / x and expm1(x) / x, continuous through x = 0 (alpha = 1). */
static double zipf_helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double zipf_helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

/* The hat function x^-a, its integral H(x) = (x^(1-a) - 1) / (1 - a) (log x
 * for a = 1) and the inverse of H. */
static double zipf_h(const struct wl_zipf *z, double x)
{
    return exp(-z->a * log(x));
}

static double zipf_hint(const struct wl_zipf *z, double x)
{
    double lx = log(x);
    return zipf_helper2((1 - z->a) * lx) * lx;
}

static double zipf_hinv(const struct wl_zipf *z, double x)
{
    double t = x * (1 - z->a);
    if (t < -1)
        t = -1; /* rounding: H's range ends there */
    return exp(zipf_helper1(t) * x);
}

/* zipf_hinv in the sampling loop: log1p(t) / t * x is log1p(t) / (1 - a),
 * exact as long as a != 1 (t and 1 - a carry the same rounding), which
 * spares a division; x itself for a = 1. */
static inline double zipf_hinv_fast(const struct wl_zipf *z, double x)
{
    if (z->a == 1)
        return exp(x);
    double t = x * (1 - z->a);
    if (t < -1)
        t = -1;
    return exp(log1p(t) * z->inv1a);
}

static void zipf_init(struct wl_zipf *z, double a, uint64_t lines, uint64_t seed)
{
    z->a = a;
    z->inv1a = a == 1 ? 0 : 1 / (1 - a);
    z->n = (double)lines;
    z->hx1 = zipf_hint(z, 1.5) - 1;
    z->hn = zipf_hint(z, z->n + 0.5);
    z->s = 2 - zipf_hinv(z, zipf_hint(z, 2.5) - zipf_h(z, 2));
    unsigned bits = 0;
    while (bits < 64 && (1ull << bits) < lines)
        bits++;
    z->mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    z->shift = bits > 1 ? (bits + 1) / 2 : 1;
    struct rng r;
    rng_seed(&r, seed, WL_RNG_SCATTER);
    z->key = rng_next(&r) & z->mask;
}

/* One round of the scatter: a bijection of [0, mask]. */
static inline uint64_t zipf_mix(const struct wl_zipf *z, uint64_t x)
{
    x ^= z->key;
    x ^= x >> z->shift;
    x = (x * 0x9e3779b97f4a7c15ull) & z->mask;
    x ^= x >> z->shift;
    x = (x * 0xbf58476d1ce4e5b9ull) & z->mask;
    x ^= x >> z->shift;
    return x;
}

/* A line for rank r: the bijection, walked until it lands in [0, lines). */
static inline uint64_t zipf_scatter(const struct wl_zipf *z, uint64_t r, uint64_t lines)
{
    do
        r = zipf_mix(z, r);
    while (r >= lines);
    return r;
}

/* A rank in [0, lines); *bits gets 11 unused random bits of the last draw. */
static uint64_t zipf_rank(const struct wl_zipf *z, struct rng *r, uint64_t lines, uint64_t *bits)
{
    for (;;) {
        uint64_t x64 = rng_next(r);
        *bits = x64;
        double u = z->hn + (double)(x64 >> 11) * 0x1.0p-53 * (z->hx1 - z->hn);
        /* u is uniform in (hx1, hn]. */
        double x = zipf_hinv_fast(z, u);
        /* Rounded to the nearest rank (x > 0), clamped against rounding. */
        uint64_t k = x + 0.5 >= z->n ? lines : x < 0.5 ? 1 : (uint64_t)(x + 0.5);
        /* k = 1 always passes the second test; the first is a shortcut
         * (Theorem 2 of the paper) that spares the logarithms mostly. */
        if ((double)k - x <= z->s || u >= zipf_hint(z, (double)k + 0.5) - zipf_h(z, (double)k))
            return k - 1;
    }
}

/* ------------------------------------------------------------- synthetic */

static int chase_init(struct wl *w, uint64_t seed, struct err *e)
{
    uint64_t n = w->lines;
    w->chase = malloc(n * sizeof *w->chase);
    if (!w->chase)
        return err_set(e, -QOSIM_ENOMEM,
                       "out of memory for the chase table of %llu lines (%llu MiB)",
                       (unsigned long long)n, (unsigned long long)(n * 4 >> 20));
    for (uint64_t i = 0; i < n; i++)
        w->chase[i] = (uint32_t)i;
    /* Sattolo: swapping with j < i only makes i -> chase[i] a single cycle. */
    struct rng r;
    rng_seed(&r, seed, WL_RNG_CHASE);
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = rng_below(&r, i);
        uint32_t t = w->chase[i];
        w->chase[i] = w->chase[j];
        w->chase[j] = t;
    }
    w->chase_cur = 0;
    return 0;
}

int wl_synth_new(const struct wl_params *p, uint64_t seed, struct wl **out, struct err *e)
{
    *out = NULL;
    const char *bad = wl_params_check(p);
    if (bad)
        return err_set(e, -QOSIM_EINVAL, "%s", bad);
    struct wl *w = calloc(1, sizeof *w);
    if (!w)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    w->pat = p->pattern;
    rng_seed(&w->code_rng, seed, WL_RNG_CODE);
    rng_seed(&w->data_rng, seed, WL_RNG_DATA);
    rng_seed(&w->mix_rng, seed, WL_RNG_MIX);
    w->p_branch = wl_thresh(p->branch_ratio);
    w->p_taken = wl_thresh(p->taken_ratio);
    w->p_mem = wl_thresh(p->mem_ratio);
    w->p_write = wl_thresh(p->write_ratio);
    w->p_nt = wl_thresh(p->write_ratio * p->nt_ratio);
    if (w->p_nt > w->p_write) /* rounding: a non-temporal access is always a store */
        w->p_nt = w->p_write;
    w->ip = WL_CODE_BASE;
    w->ip_last = WL_CODE_BASE + p->code - 4;
    w->code_blocks = p->code / WL_LINE;
    w->access = p->access;
    w->amask = (WL_LINE - 1) & ~(p->access - 1);
    w->off = 0;
    w->off_last = p->wss - p->access;
    w->step = p->pattern == WL_STRIDE ? p->stride : p->access;
    w->lines = p->wss / WL_LINE;
    if (p->pattern == WL_CHASE) {
        int rc = chase_init(w, seed, e);
        if (rc) {
            free(w);
            return rc;
        }
    }
    if (p->pattern == WL_ZIPF)
        zipf_init(&w->z, p->zipf_alpha, w->lines, seed);
    *out = w;
    return 0;
}

/* The fill loop, instantiated per pattern (pat is a constant in each call),
 * with the generator state in locals. Stops while two records still fit, so
 * an instruction is never split. */
static inline __attribute__((always_inline)) long synth_fill(struct wl *w, struct trace_rec *r,
                                                             size_t n, const enum wl_pattern pat)
{
    struct rng code = w->code_rng, mix = w->mix_rng, data = w->data_rng;
    const uint64_t p_branch = w->p_branch, p_taken = w->p_taken;
    const uint64_t p_mem = w->p_mem, p_write = w->p_write, p_nt = w->p_nt;
    const uint64_t ip_last = w->ip_last, blocks = w->code_blocks;
    const uint64_t off_last = w->off_last, step = w->step, lines = w->lines;
    const uint32_t access = w->access, amask = w->amask;
    const uint32_t *chase = w->chase;
    uint64_t ip = w->ip, off = w->off, cur = w->chase_cur;
    size_t k = 0;

    while (k + 2 <= n) {
        uint64_t c = rng_next(&code), m = rng_next(&mix);
        unsigned fl = 0;
        if ((c >> 32) < p_branch)
            fl = TREC_F_BRANCH | ((c & 0xffffffffu) < p_taken ? TREC_F_TAKEN : 0);
        r[k++] = (struct trace_rec){.addr = ip, .size = 4, .kind = TREC_I, .flags = (uint8_t)fl};
        if (fl & TREC_F_TAKEN)
            ip = WL_CODE_BASE + rng_below(&code, blocks) * WL_LINE;
        else if ((ip += 4) > ip_last)
            ip = WL_CODE_BASE;

        if ((m >> 32) >= p_mem)
            continue;
        uint64_t a;
        unsigned kind = (m & 0xffffffffu) < p_write ? TREC_S : TREC_L;
        unsigned f = (m & 0xffffffffu) < p_nt ? TREC_F_NT : 0;
        switch (pat) {
        case WL_SEQ:
        case WL_STRIDE:
            a = off;
            if ((off += step) > off_last)
                off = 0;
            break;
        case WL_RANDOM: {
            uint64_t x = rng_next(&data);
            a = (uint64_t)(((unsigned __int128)x * lines) >> 64) * WL_LINE + (x & amask);
            break;
        }
        case WL_CHASE:
            cur = chase[cur];
            a = cur * WL_LINE;
            kind = TREC_L;
            f = TREC_F_DEP;
            break;
        default: {
            uint64_t bits;
            uint64_t rank = zipf_rank(&w->z, &data, lines, &bits);
            a = zipf_scatter(&w->z, rank, lines) * WL_LINE + (bits & amask);
            break;
        }
        }
        r[k++] = (struct trace_rec){
            .addr = WL_DATA_BASE + a, .size = access, .kind = (uint8_t)kind, .flags = (uint8_t)f};
    }

    w->code_rng = code;
    w->mix_rng = mix;
    w->data_rng = data;
    w->ip = ip;
    w->off = off;
    w->chase_cur = cur;
    return (long)k;
}

/* ----------------------------------------------------------------- trace */

int wl_trace_new(const char *path, const struct trace_ops *fmt, int loop, struct wl **out,
                 struct err *e)
{
    *out = NULL;
    if (!fmt)
        fmt = trace_find(trace_guess(path));
    if (loop && !strcmp(path, "-"))
        return err_set(e, -QOSIM_EINVAL, "<stdin>: standard input cannot loop");
    struct wl *w = calloc(1, sizeof *w);
    char *copy = strdup(path);
    if (!w || !copy) {
        free(w);
        free(copy);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    w->trace = 1;
    w->fmt = fmt;
    w->infer = !strcmp(fmt->name, "lackey");
    w->loop = loop;
    w->path = copy;
    int rc = trace_open(&w->t, path, fmt, 0, e);
    if (rc) {
        trace_close(&w->t);
        free(w->path);
        free(w);
        return rc;
    }
    w->open = 1;
    *out = w;
    return 0;
}

static long trace_fill(struct wl *w, struct trace_rec *buf, size_t n, struct err *e)
{
    for (;;) {
        if (w->fail.code)
            return err_set(e, w->fail.code, "%s", w->fail.msg);
        if (!w->open)
            return 0; /* a non-looping trace that ended */
        long got = trace_read(&w->t, buf, n);
        if (got < 0)
            return err_set(e, (int)got, "%s", w->t.err.msg);
        if (got > 0) {
            for (long i = 0; !w->seen_insn && i < got; i++)
                w->seen_insn = buf[i].kind == TREC_I;
            w->pass_recs += (uint64_t)got;
            return got;
        }
        /* The end: stop, or start over. A pass with no instruction would
         * loop without end (checked on every pass: the file may change). */
        if (w->loop && (!w->seen_insn || !w->pass_recs))
            return err_set(e, -QOSIM_EINVAL,
                           "%s: a looping trace needs at least one instruction record", w->t.name);
        if (!w->loop) {
            trace_close(&w->t);
            w->open = 0;
            return 0;
        }
        int rc = trace_reopen(&w->t, w->path, &w->fail);
        if (rc) {
            trace_close(&w->t);
            w->open = 0;
            return err_set(e, rc, "%s", w->fail.msg);
        }
        w->pass_recs = 0;
    }
}

/* A lackey batch with taken branches inferred: what was held back comes
 * first, then new records; every instruction but the last is flagged when
 * its successor does not follow it, and the last one, with its data
 * records, is held back for the next call. */
static long infer_fill(struct wl *w, struct trace_rec *buf, size_t n, struct err *e)
{
    size_t m = w->nheld, ninsn = 0;
    memcpy(buf, w->held, m * sizeof *buf);
    for (size_t i = 0; i < m; i++)
        ninsn += buf[i].kind == TREC_I;
    long got;
    do { /* until the last instruction read has a successor, or the end */
        got = trace_fill(w, buf + m, n - m, e);
        if (got < 0)
            return got;
        for (size_t i = m; i < m + (size_t)got; i++)
            ninsn += buf[i].kind == TREC_I;
        m += (size_t)got;
    } while (got > 0 && m < n && ninsn == 1);
    size_t last = m;
    for (size_t i = 0; i < m; i++) {
        if (buf[i].kind != TREC_I)
            continue;
        if (last < m && buf[i].addr != buf[last].addr + buf[last].size)
            buf[last].flags |= TREC_F_BRANCH | TREC_F_TAKEN;
        last = i;
    }
    w->nheld = 0;
    /* At the end, or with no room to hold the rest (an instruction with
     * more data records than a batch), it all goes out. */
    if (!got || last == m || last == 0 || m - last > TRACE_MIN_BATCH)
        return (long)m;
    w->nheld = m - last;
    memcpy(w->held, buf + last, w->nheld * sizeof *buf);
    return (long)last;
}

/* ------------------------------------------------------------------ live */

int wl_live_new(const struct live_opts *o, struct wl **out, struct err *e)
{
    *out = NULL;
    struct wl *w = calloc(1, sizeof *w);
    if (!w)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    int rc = live_start(&w->live, o, e);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int wl_feed_new(struct wl **out, struct err *e)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    (*out)->fed = 1;
    return 0;
}

void wl_feed(struct wl *w, const struct trace_rec *r, size_t n)
{
    w->feed = r;
    w->nfeed = n;
}

static long feed_fill(struct wl *w, struct trace_rec *buf, size_t n)
{
    if (n > w->nfeed)
        n = w->nfeed;
    if (!n)
        return 0;
    memcpy(buf, w->feed, n * sizeof *buf);
    w->feed += n;
    w->nfeed -= n;
    return (long)n;
}

struct live *wl_live(const struct wl *w)
{
    return w->live;
}

/* ---------------------------------------------------------------- common */

/* n below TRACE_MIN_BATCH is refused (-QOSIM_EINVAL): a synthetic
 * instruction takes up to two records, a trace reader up to its own batch. */
long wl_fill(struct wl *w, struct trace_rec *buf, size_t n, struct err *e)
{
    if (n < TRACE_MIN_BATCH)
        return err_set(e, -QOSIM_EINVAL, "wl_fill: room for %zu records, at least %d needed", n,
                       TRACE_MIN_BATCH);
    if (w->live)
        return live_read(w->live, buf, n, e);
    if (w->fed)
        return feed_fill(w, buf, n);
    if (w->trace)
        return w->infer ? infer_fill(w, buf, n, e) : trace_fill(w, buf, n, e);
    switch (w->pat) {
    case WL_SEQ:
        return synth_fill(w, buf, n, WL_SEQ);
    case WL_STRIDE:
        return synth_fill(w, buf, n, WL_STRIDE);
    case WL_RANDOM:
        return synth_fill(w, buf, n, WL_RANDOM);
    case WL_CHASE:
        return synth_fill(w, buf, n, WL_CHASE);
    default:
        return synth_fill(w, buf, n, WL_ZIPF);
    }
}

void wl_free(struct wl *w)
{
    if (!w)
        return;
    if (w->trace && w->open)
        trace_close(&w->t);
    live_stop(w->live);
    free(w->path);
    free(w->chase);
    free(w);
}
