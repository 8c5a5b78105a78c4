/* share: CBQRI style proportional sharing with reservations.
 *
 * A window of `window` ticks carries C = capacity * window bytes; class c is
 * guaranteed R_c = C * rbwb_c / nblks of them. Windows are numbered
 * now / window; the current window is the latest one any request fell in.
 * A ring keeps the SHARE_PAST windows up to the current one (for requests
 * that come late) and the SHARE_AHEAD after it (for transfers booked ahead),
 * each with what every class used in it, the classes' allowances, its total
 * and its capacity.
 *
 * Allowances. When a new window becomes current, each class gets an
 * allowance for it from what happened lately (water-filling):
 *   - a class is contending if it had a transfer pushed out of a recent
 *     window (it wanted more than it got) or has transfers booked in the new
 *     window or later; its demand counts as unbounded;
 *   - any other class is light: its demand is what it used in a recent
 *     window (the most) plus one transfer, room to grow a little without
 *     contending, and it keeps that much (up to R_c from its reservation,
 *     the rest from the spare);
 *   - every class first gets min(demand, R_c); the spare, the capacity less
 *     those, is split among the classes wanting more in proportion to
 *     weight, a class whose need is below its proportional part keeping just
 *     its need and leaving the rest to the others.
 * Weight 0: such a class gets spare only after every class of positive
 * weight wanting more is satisfied (never, while one of them contends); what
 * is left then is split equally among the weight-0 classes wanting more, so a
 * weight-0 class contending alone still gets everything.
 * Hard limit: CBQRI 1.0 reads weight 0 otherwise, "the configured limit is
 * a hard limit, and the use of unused or non-reserved bandwidth is not
 * allowed", with the allocation scaling linearly with Rbwb. A class with
 * weight 0 and `hard` set gets min(demand, R_c) and never any spare: not
 * from the water-filling, not from rule (c) below, not past R_c in the
 * bookings beyond the ring. Its reservation stays guaranteed as rule (a)
 * guarantees any other's. So that its share is exact however R_c divides
 * into whole transfers, its limit in window w is not R_c itself but the
 * transfers (of its largest size t) that bring windows 0..w together to
 * floor((w + 1) R_c / t): floor or ceiling of R_c / t each, R_c on average,
 * depending on nothing but w (no banking of idle windows). Its crossings
 * are thus settled by that schedule, not by the carries below. Rbwb 0,
 * which CBQRI 1.0 forbids in CONFIG_LIMIT (Rbwb >= 1), would never admit
 * anything; such a class gets one transfer per window instead, so that its
 * requests still complete (project choice). And however small R_c is, it
 * gets at least one transfer per SHARE_HARD_SLOWEST windows, which bounds
 * the bookings a transfer may push ahead.
 * "Recent" is the previous window alone while requests arrive in time order;
 * when some come late (cores run in quanta), the previous windows are not
 * complete yet when a new one starts, so it stretches back over as many
 * windows as requests were seen to lag lately (at most SHARE_PAST - 1).
 * The new allowances also stand for the windows ahead, as the best guess.
 *
 * Admission. A transfer is charged to the window of its own now (or the
 * oldest one kept, if it lags even more); class c may take more in a window
 * if
 *   (a) c used less than R_c in it: the reservation is guaranteed, even if
 *       that takes the window past its capacity; or
 *   (b) c used less than its allowance and the window's total is below its
 *       capacity; or
 *   (c) the window's total plus the unused allowances of the other classes
 *       is below the capacity: capacity nobody was given (a class's unused
 *       reservation included) goes to whoever asks, so the limiter is
 *       work-conserving within the window too.
 * The transfer that crosses a limit is admitted whole. If its window has no
 * room, the following ones are tried, up to SHARE_AHEAD windows ahead of the
 * current one; the transfer proceeds at its own now in its own window, else
 * at the start of the window that took it. Beyond the ring (a backlog of
 * more than SHARE_AHEAD windows) a class books one window after another up
 * to max(allowance, R_c) each, and at least one transfer, so that even a
 * starved weight-0 class makes progress; these bookings are kept exactly
 * (a queue per class, as long as the backlog) and join the ring as it
 * moves on.
 *
 * Within the reservation. Each admission tells (bw_in_resv) whether the
 * class had used less than R_c of the window it was charged to (beyond
 * the ring: of the window it was booked in), the transfer crossing R_c
 * included, as rule (a) would admit it whatever the others do; a hard
 * class's quota is its reservation. The memory behind the controller serves
 * those transfers first (mem.h), so that R_c is what the class gets at the
 * channel too, not only at admission: CBQRI 1.0 (Bandwidth Allocation
 * Configuration) makes Rbwb available "even when all other RCID are using
 * their full allocation".
 *
 * Overshoot. What a window carries beyond its capacity (crossings,
 * reservations of a class that woke up, late transfers, bookings made ahead
 * on allowances that turned out smaller) comes off the capacity of the
 * window after it; the part that classes took past their own limits is
 * charged to their next allowances, and a class pushed out of a window that
 * filled up before it had its allowance is credited the difference (both
 * at most one transfer). So in the long run the limiter carries
 * its capacity and no more, and shares come out exact despite the whole
 * transfers. Windows only move forward, and everything depends only on the
 * calls: it is deterministic. */
#include "bw_impl.h"

#include <math.h>
#include <stdlib.h>

#define SHARE_PAST  16 /* windows kept up to the current one */
#define SHARE_AHEAD 16 /* windows kept after it */
#define SHARE_RING  (SHARE_PAST + SHARE_AHEAD)
/* A hard class gets a transfer at least once in this many windows. */
#define SHARE_HARD_SLOWEST 65536.0

struct share_win {
    uint64_t idx; /* window number; UINT64_MAX: none yet */
    double total; /* bytes admitted in it, all classes */
    double cap;   /* its capacity: C less the overshoot carried in (may be < 0) */
    uint64_t lag; /* most windows a request lagged while it was current */
};

struct share_cls {
    /* Bookings beyond the ring: bytes in windows fw, fw + 1, ... (fn of
     * them), a queue in fq[fh..], fq_cap long, wrapping around. */
    double *fq;
    size_t fh, fn, fq_cap;
    uint64_t fw;
    uint64_t lc;   /* 1 + the last window it had a transfer pushed out of; 0: never */
    uint64_t last; /* 1 + the last window it booked in; 0: never */
    double need;   /* scratch for the water-filling: bytes wanted beyond allow */
    int want;      /* scratch: still wants some of the spare */
    double allow;  /* scratch: the allowance being computed */
    double over;   /* scratch: what it took past its limit last window (< 0: short of it) */
    double fair;   /* scratch: the allowance before that is settled */
    double maxb;   /* largest transfer it made */
};

struct share_state {
    uint64_t cur; /* current window */
    struct share_win w[SHARE_RING];
    double *used;  /* [SHARE_RING][nclass] */
    double *allow; /* [SHARE_RING][nclass] */
    struct share_cls c[];
};

static double share_c(const struct bw *b)
{
    return b->cfg.capacity * (double)b->cfg.window;
}

static double share_resv(const struct bw *b, unsigned cls)
{
    return share_c(b) * (double)b->set[cls].rbwb / (double)b->cfg.nblks;
}

/* Whether class cls is held to its reservation (CBQRI 1.0 Mweight 0). */
static int share_hard(const struct bw *b, unsigned cls)
{
    return b->set[cls].hard && b->set[cls].weight == 0;
}

/* What a hard class may take in window w (see the top): whole transfers of
 * its largest size t, so that windows 0..w carry floor((w + 1) R_c / t). */
static double share_hard_quota(const struct bw *b, const struct share_cls *k, unsigned cls,
                               uint64_t w)
{
    double t = k->maxb > 0 ? k->maxb : 1, r = share_resv(b, cls);
    if (r <= 0)
        return t; /* Rbwb 0: one transfer a window, to make progress */
    if (r < t / SHARE_HARD_SLOWEST)
        r = t / SHARE_HARD_SLOWEST;
    return t * (floor((double)(w + 1) * r / t) - floor((double)w * r / t));
}

/* Whether a transfer of class cls, which has used `used` bytes of the
 * window it is charged to, falls within its reservation (bw_in_resv): the
 * one that crosses R_c does, as it is admitted by rule (a). A hard class
 * takes only its quota, R_c on average, so all it takes does (unless its
 * Rbwb is 0: then its one transfer a window is not reserved). */
static int share_within(const struct bw *b, unsigned cls, double used)
{
    double r = share_resv(b, cls);
    return share_hard(b, cls) ? r > 0 : used < r;
}

static struct share_win *share_win(struct share_state *s, uint64_t w)
{
    return &s->w[w % SHARE_RING];
}

static double *share_used(const struct bw *b, struct share_state *s, uint64_t w)
{
    return &s->used[(w % SHARE_RING) * b->cfg.nclass];
}

static double *share_allow(const struct bw *b, struct share_state *s, uint64_t w)
{
    return &s->allow[(w % SHARE_RING) * b->cfg.nclass];
}

/* Window w enters the ring (ahead of the current one), with what classes
 * booked beyond the ring so far; allowances are set by the caller. */
static void share_enter(struct bw *b, struct share_state *s, uint64_t w)
{
    struct share_win *x = share_win(s, w);
    *x = (struct share_win){.idx = w, .cap = share_c(b)};
    double *used = share_used(b, s, w);
    for (unsigned c = 0; c < b->cfg.nclass; c++) {
        struct share_cls *k = &s->c[c];
        used[c] = 0;
        if (k->fn && k->fw == w) { /* its bookings there join the ring */
            used[c] = k->fq[k->fh];
            k->fh = (k->fh + 1) % k->fq_cap;
            k->fn--;
            k->fw++;
        }
        x->total += used[c];
    }
}

static int share_init(struct bw *b, struct err *e)
{
    const struct bw_cfg *c = &b->cfg;
    if (c->window < 1)
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (share): window must be at least 1 tick");
    if (!bw_positive(c->capacity))
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (share): capacity must be a positive number of bytes "
                       "per tick (got %g)",
                       c->capacity);
    if (!bw_positive(c->capacity * (double)c->window))
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (share): capacity %g x window %llu is out of range",
                       c->capacity, (unsigned long long)c->window);
    if (c->nblks < 1)
        return err_set(e, -QOSIM_EINVAL, "bandwidth limiter (share): nblks must be at least 1");
    struct share_state *s = calloc(1, sizeof *s + c->nclass * sizeof s->c[0]);
    if (s) {
        s->used = calloc((size_t)SHARE_RING * c->nclass, sizeof *s->used);
        s->allow = calloc((size_t)SHARE_RING * c->nclass, sizeof *s->allow);
    }
    if (!s || !s->used || !s->allow) {
        if (s) {
            free(s->used);
            free(s->allow);
        }
        free(s);
        return err_set(e, -QOSIM_ENOMEM, "bandwidth limiter (share): cannot allocate %u classes",
                       c->nclass);
    }
    b->state = s;
    /* Window 0 is current. Before any history every allowance is 0, so it
     * goes first come, first served by rule (c), reservations guaranteed by
     * (a). Windows before 0 do not exist. */
    for (unsigned i = 0; i < SHARE_RING; i++)
        s->w[i].idx = UINT64_MAX;
    for (uint64_t w = 0; w <= SHARE_AHEAD; w++)
        share_enter(b, s, w);
    return 0;
}

static void share_free(struct bw *b)
{
    struct share_state *s = b->state;
    if (s) {
        for (unsigned c = 0; c < b->cfg.nclass; c++)
            free(s->c[c].fq);
        free(s->used);
        free(s->allow);
    }
    free(s);
    b->state = NULL;
}

/* Splits spare among the classes that want it (need more bytes each,
 * HUGE_VAL when unbounded) of positive weight, by weight, or of weight 0,
 * equally; adds the parts to their allowances and returns what is left. */
static double share_fill(const struct bw *b, struct share_state *s, int positive, double spare)
{
    unsigned n = b->cfg.nclass;
    while (spare > 0) {
        double sumw = 0;
        for (unsigned c = 0; c < n; c++)
            if (s->c[c].want && (b->set[c].weight > 0) == positive)
                sumw += positive ? b->set[c].weight : 1;
        if (sumw == 0)
            break;
        /* Those needing less than their part take their need and drop out. */
        int satisfied = 0;
        double left = spare;
        for (unsigned c = 0; c < n; c++) {
            if (!s->c[c].want || (b->set[c].weight > 0) != positive)
                continue;
            double part = spare * (positive ? b->set[c].weight : 1) / sumw;
            if (s->c[c].need <= part) {
                s->c[c].allow += s->c[c].need;
                left -= s->c[c].need;
                s->c[c].want = 0;
                satisfied = 1;
            }
        }
        if (!satisfied) {
            for (unsigned c = 0; c < n; c++)
                if (s->c[c].want && (b->set[c].weight > 0) == positive) {
                    s->c[c].allow += spare * (positive ? b->set[c].weight : 1) / sumw;
                    s->c[c].want = 0;
                }
            return 0;
        }
        spare = left > 0 ? left : 0;
    }
    return spare;
}

/* Window nw (> cur) becomes current: the ring moves on, and allowances for
 * nw and the windows after it come from recent ones. */
static void share_roll(struct bw *b, struct share_state *s, uint64_t nw)
{
    const unsigned n = b->cfg.nclass;
    const uint64_t cur = s->cur;

    /* How far back "recent" goes: as far as requests lagged lately. */
    uint64_t lag = 0;
    for (uint64_t w = cur >= SHARE_PAST - 1 ? cur - (SHARE_PAST - 1) : 0; w <= cur; w++)
        if (share_win(s, w)->idx == w && share_win(s, w)->lag > lag)
            lag = share_win(s, w)->lag;
    if (lag > SHARE_PAST - 1)
        lag = SHARE_PAST - 1;
    uint64_t from = cur > lag ? cur - lag : 0;
    int recent = nw - cur <= lag + 1; /* else the recent windows are long past */

    /* Carry from the last window, when the new one follows it: a class
     * that took more than its limit (with the transfer that crossed it)
     * gives the excess back out of its next allowance; a class that was
     * pushed out of it because the window had filled up short of its
     * allowance gets the difference. Each is bounded by the largest
     * transfer the class made, so carries even out whole transfers and
     * never pile up. What the window carried past its capacity comes off
     * the next window's capacity, less what the classes pay back. */
    struct share_win *pw = share_win(s, cur);
    double over = pw->total > pw->cap ? pw->total - pw->cap : 0, own = 0;
    for (unsigned c = 0; c < n; c++) {
        struct share_cls *k = &s->c[c];
        double r = share_resv(b, c), a = share_allow(b, s, cur)[c], u = share_used(b, s, cur)[c];
        double d = u - (a > r ? a : r);
        k->over = 0;
        if (share_hard(b, c)) /* its quotas settle its crossings */
            continue;
        if (nw == cur + 1 && d > 0)
            k->over = d < k->maxb ? d : k->maxb;
        else if (nw == cur + 1 && k->lc == cur + 1 && pw->total >= pw->cap)
            k->over = -d < k->maxb ? d : -k->maxb;
        if (k->over > 0)
            own += k->over;
    }
    own = own < over ? own : over;

    double capn = nw <= cur + SHARE_AHEAD ? share_win(s, nw)->cap : share_c(b);
    if (nw == cur + 1)
        capn -= over;
    double spare = capn + own;
    for (unsigned c = 0; c < n; c++) {
        struct share_cls *k = &s->c[c];
        int contending = (recent && k->lc && k->lc - 1 >= from) || (k->last && k->last - 1 >= nw);
        double demand = 0;
        if (contending) {
            demand = HUGE_VAL;
        } else if (recent) {
            for (uint64_t w = from; w <= cur; w++)
                if (share_win(s, w)->idx == w && share_used(b, s, w)[c] > demand)
                    demand = share_used(b, s, w)[c];
            if (demand > 0) /* room to grow by a transfer without contending */
                demand += k->maxb;
        }
        double r = share_resv(b, c);
        k->allow = demand < r ? demand : r;
        spare -= k->allow;
        k->need = share_hard(b, c) ? 0 : demand - k->allow; /* a hard limit: no spare */
        k->want = k->need > 0;
    }
    if (spare > 0)
        spare = share_fill(b, s, 1, spare);
    if (spare > 0)
        share_fill(b, s, 0, spare);
    for (unsigned c = 0; c < n; c++) {
        struct share_cls *k = &s->c[c];
        k->fair = k->allow;
        k->allow = k->allow > k->over ? k->allow - k->over : 0;
    }

    /* The ring moves on (what leaves it was read above): windows up to
     * nw + SHARE_AHEAD enter, the overshoot goes to window cur + 1, and the
     * new allowances stand for nw and, as a guess, the windows after it. */
    uint64_t first = cur + SHARE_AHEAD + 1;
    if (nw + SHARE_AHEAD >= SHARE_RING && first < nw + SHARE_AHEAD - (SHARE_RING - 1))
        first = nw + SHARE_AHEAD - (SHARE_RING - 1);
    for (unsigned c = 0; c < n; c++) { /* bookings in windows skipped over */
        struct share_cls *k = &s->c[c];
        for (; k->fn && k->fw < first; k->fw++, k->fn--)
            k->fh = (k->fh + 1) % k->fq_cap;
    }
    for (uint64_t w = first; w <= nw + SHARE_AHEAD; w++)
        share_enter(b, s, w);
    if (share_win(s, cur + 1)->idx == cur + 1)
        share_win(s, cur + 1)->cap -= over;
    for (uint64_t w = nw; w <= nw + SHARE_AHEAD; w++) {
        double *allow = share_allow(b, s, w);
        for (unsigned c = 0; c < n; c++)
            allow[c] = w == nw ? s->c[c].allow : s->c[c].fair;
    }
    s->cur = nw;
}

/* May class cls take more in window w (rules a, b, c above)? */
static int share_fits(const struct bw *b, struct share_state *s, unsigned cls, uint64_t w)
{
    const struct share_win *x = share_win(s, w);
    const double *used = share_used(b, s, w), *allow = share_allow(b, s, w);
    if (share_hard(b, cls)) /* (a) alone, to the window's quota */
        return used[cls] < share_hard_quota(b, &s->c[cls], cls, w);
    if (used[cls] < share_resv(b, cls))
        return 1;
    if (used[cls] < allow[cls] && x->total < x->cap)
        return 1;
    double held = x->total;
    for (unsigned c = 0; c < b->cfg.nclass; c++)
        if (c != cls && allow[c] > used[c])
            held += allow[c] - used[c];
    return held < x->cap;
}

/* A new window at the end of the class's bookings beyond the ring; 0 if
 * there is no memory for it. */
static int share_far_push(struct share_cls *k)
{
    if (k->fn == k->fq_cap) {
        size_t nc = k->fq_cap ? 2 * k->fq_cap : 16;
        double *q = malloc(nc * sizeof *q);
        if (!q)
            return 0;
        for (size_t i = 0; i < k->fn; i++)
            q[i] = k->fq[(k->fh + i) % k->fq_cap];
        free(k->fq);
        k->fq = q;
        k->fq_cap = nc;
        k->fh = 0;
    }
    k->fq[(k->fh + k->fn++) % k->fq_cap] = 0;
    return 1;
}

/* Out of memory for a longer backlog: the transfer goes in the last window
 * booked, past the class's limit there (or, with nothing booked, just
 * beyond the ring, unaccounted). */
static uint64_t share_far_lost(const struct bw *b, struct share_cls *k, uint64_t now)
{
    uint64_t w = k->fw + (k->fn ? k->fn - 1 : 0);
    return w * b->cfg.window > now ? w * b->cfg.window : now;
}

static uint64_t share_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    (void)port;
    struct share_state *s = b->state;
    struct share_cls *k = &s->c[cls];
    const uint64_t ww = b->cfg.window;
    uint64_t nw = now / ww;
    if (bytes > k->maxb)
        k->maxb = bytes;
    if (nw > s->cur)
        share_roll(b, s, nw);
    struct share_win *cw = share_win(s, s->cur);
    if (nw < s->cur && s->cur - nw > cw->lag)
        cw->lag = s->cur - nw;

    uint64_t oldest = s->cur >= SHARE_PAST - 1 ? s->cur - (SHARE_PAST - 1) : 0;
    for (uint64_t w = nw > oldest ? nw : oldest; w <= s->cur + SHARE_AHEAD; w++) {
        if (!share_fits(b, s, cls, w)) {
            if (w <= s->cur)
                k->lc = w + 1;
            continue;
        }
        struct share_win *x = share_win(s, w);
        double before = x->total > x->cap ? x->total - x->cap : 0;
        b->resv = share_within(b, cls, share_used(b, s, w)[cls]);
        share_used(b, s, w)[cls] += bytes;
        x->total += bytes;
        if (w < s->cur) { /* a late overshoot comes off the current window */
            double after = x->total > x->cap ? x->total - x->cap : 0;
            cw->cap -= after - before;
        }
        if (k->last < w + 1)
            k->last = w + 1;
        uint64_t t = w * ww;
        return t > now ? t : now;
    }

    /* Beyond the ring: one window after another, at the class's limit. */
    double r = share_resv(b, cls), a = share_allow(b, s, s->cur)[cls];
    double lim = a > r ? a : r;
    if (share_hard(b, cls)) { /* the window's quota, which may be 0 where R_c < t */
        if (!k->fn) {
            k->fw = s->cur + SHARE_AHEAD + 1;
            if (!share_far_push(k))
                return share_far_lost(b, k, now);
        }
        while (k->fq[(k->fh + k->fn - 1) % k->fq_cap] >=
               share_hard_quota(b, k, cls, k->fw + k->fn - 1))
            if (!share_far_push(k))
                return share_far_lost(b, k, now);
    } else if (!k->fn) {
        k->fw = s->cur + SHARE_AHEAD + 1;
        if (!share_far_push(k))
            return share_far_lost(b, k, now);
    } else if (k->fq[(k->fh + k->fn - 1) % k->fq_cap] >= lim && !share_far_push(k)) {
        return share_far_lost(b, k, now);
    }
    b->resv = share_within(b, cls, k->fq[(k->fh + k->fn - 1) % k->fq_cap]);
    k->fq[(k->fh + k->fn - 1) % k->fq_cap] += bytes;
    uint64_t w = k->fw + k->fn - 1;
    k->last = w + 1;
    return w * ww > now ? w * ww : now;
}

const struct bw_ops bw_share_ops = {
    .kind = BW_SHARE,
    .init = share_init,
    .free = share_free,
    .admit = share_admit,
};
