/* rate: AMD L3BE style absolute cap, enforced over accounting windows.
 *
 * Windows are [k * window, (k + 1) * window). Each class has a budget of
 * rate * window bytes per window and a cursor: the window its transfers are
 * charged to (`cur`) and what they used there (`used`). A transfer is
 * admitted in the cursor's window while used < budget; the one that crosses
 * the budget is admitted too and its excess is borrowed from the next window
 * (used keeps it when the cursor moves on), so a saturating class gets the
 * cap exactly in the long run even when the budget is not a multiple of the
 * request size. Once the budget is spent the cursor moves to the next window
 * (as many as the backlog needs) and transfers proceed at its start.
 *
 * Time may run a little backwards (cores in quanta): a request from a window
 * before the cursor's is charged to the cursor's window, and proceeds at once
 * if that window is not ahead of the present (the latest time seen) - the
 * cursor is only ahead of the present when the class has a backlog, and then
 * the request queues behind it. Windows only move forward. */
#include "bw_impl.h"

#include <math.h>
#include <stdlib.h>

struct rate_cls {
    uint64_t cur; /* start of the window being charged */
    double used;  /* bytes charged to it, may exceed the budget by one request */
};

struct rate_state {
    uint64_t present; /* latest now seen */
    struct rate_cls c[];
};

static int rate_init(struct bw *b, struct err *e)
{
    const struct bw_cfg *c = &b->cfg;
    if (c->window < 1)
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (rate): window must be at least 1 tick");
    struct rate_state *s = calloc(1, sizeof *s + c->nclass * sizeof s->c[0]);
    if (!s)
        return err_set(e, -QOSIM_ENOMEM, "bandwidth limiter (rate): cannot allocate %u classes",
                       c->nclass);
    b->state = s;
    return 0;
}

static void rate_free(struct bw *b)
{
    free(b->state);
    b->state = NULL;
}

/* A new cap starts afresh: no backlog or borrowing carried over. */
static void rate_set(struct bw *b, unsigned cls, const struct bw_class_set *old)
{
    struct rate_state *s = b->state;
    if (old->rate != b->set[cls].rate)
        s->c[cls] = (struct rate_cls){0};
}

static uint64_t rate_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    (void)port;
    struct rate_state *s = b->state;
    if (now > s->present)
        s->present = now;
    double rate = b->set[cls].rate;
    if (rate <= 0)
        return now;
    struct rate_cls *k = &s->c[cls];
    const uint64_t w = b->cfg.window;
    const double budget = rate * (double)w;

    uint64_t win = now - now % w;
    if (win > k->cur) {
        /* The cursor catches up with now: each window passed repays a
         * budget's worth of what was borrowed. */
        double repaid = (double)((win - k->cur) / w) * budget;
        k->used = k->used > repaid ? k->used - repaid : 0;
        k->cur = win;
    }
    if (k->used >= budget) {
        /* Spent: move on to the first window with budget left. */
        double n = floor(k->used / budget);
        if (n < 1e18) {
            k->used -= n * budget;
            if (k->used >= budget || k->used < 0) /* rounding */
                k->used = 0;
        } else { /* a budget of next to nothing: the end of time */
            n = 1e18;
            k->used = 0;
        }
        uint64_t room = (UINT64_MAX - k->cur) / w; /* windows left before time runs out */
        k->cur += (n < (double)room ? (uint64_t)n : room) * w;
    }
    k->used += bytes;
    uint64_t present = s->present - s->present % w;
    return k->cur > present && k->cur > now ? k->cur : now;
}

const struct bw_ops bw_rate_ops = {
    .kind = BW_RATE,
    .init = rate_init,
    .free = rate_free,
    .set = rate_set,
    .admit = rate_admit,
};
