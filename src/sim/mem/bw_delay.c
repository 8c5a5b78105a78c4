/* delay: Intel MBA style throttling of each core's link to the interconnect.
 *
 * Each port (link) has a timeline `next`, the time at which it finishes what
 * it was given so far, kept as a double so fractional gaps add up exactly. A
 * transfer of class c starts at max(now, next) and holds the link for
 * bytes / (link_rate * (100 - delay_pct[c]) / 100) ticks. The start is
 * returned rounded up to a whole tick while the timeline keeps the fraction,
 * so a saturated link carries exactly the throttled rate in the long run.
 * A `now` behind the timeline (a core that runs behind another) just waits
 * for it; the timeline never moves back. */
#include "bw_impl.h"

#include <math.h>
#include <stdlib.h>

static int delay_init(struct bw *b, struct err *e)
{
    const struct bw_cfg *c = &b->cfg;
    if (c->nport < 1)
        return err_set(e, -QOSIM_EINVAL, "bandwidth limiter (delay): nport must be at least 1");
    if (!bw_positive(c->link_rate))
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (delay): link_rate must be a positive number of bytes "
                       "per tick (got %g)",
                       c->link_rate);
    double *next = calloc(c->nport, sizeof *next); /* [nport] the links' timelines */
    if (!next)
        return err_set(e, -QOSIM_ENOMEM, "bandwidth limiter (delay): cannot allocate %u ports",
                       c->nport);
    b->state = next;
    return 0;
}

static void delay_free(struct bw *b)
{
    free(b->state);
    b->state = NULL;
}

static uint64_t delay_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    double *next = b->state;
    if (port >= b->cfg.nport)
        return now; /* no such link: nothing to throttle */
    double rate = b->cfg.link_rate * (double)(100 - b->set[cls].delay_pct) / 100.0;
    double start = next[port] > (double)now ? next[port] : (double)now;
    next[port] = start + (double)bytes / rate;
    double t = ceil(start);
    if (t >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)t > now ? (uint64_t)t : now;
}

const struct bw_ops bw_delay_ops = {
    .kind = BW_DELAY,
    .init = delay_init,
    .free = delay_free,
    .admit = delay_admit,
};
