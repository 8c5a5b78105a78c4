/* delay: Intel MBA style throttling of each core's link to the interconnect.
 *
 * A port is a throttle on a link: link * nthr + throttle (nthr 1: one per
 * link). Each throttle and each link has a timeline, the time at which it
 * finishes what it was given so far, kept as a double so fractional gaps
 * add up exactly. A transfer of class c books the link for bytes /
 * link_rate from the later of now and the link's timeline, and starts at
 * the later of that and its throttle's timeline, holding its throttle for
 * bytes / (link_rate * (100 - delay_pct[c]) / 100) ticks. The start is returned rounded up to a
 * whole tick while the timelines keep the fraction, so a saturated throttle carries exactly the
 * throttled rate in the long run, and a link never more than link_rate. A `now` behind a timeline
 * (a core that runs behind another) just waits for it; timelines never move back.
 *
 * The request model (cfg.req_delay set) is MBA where Intel documents it: "a
 * programmable bandwidth controller between each core and the shared
 * high-speed interconnect" that inserts a delay into the requests a core
 * sends past its L2 (Herdrich, Cornu, Abbasi, "Introduction to Memory
 * Bandwidth Allocation", Intel, 2019; SDM vol. 3B 17.19.7, "the delay
 * value ... is a hint" and only approximately proportional). Each request
 * books the link at its full rate, as in the link model, and then waits
 * req_delay[delay_pct] ticks more: the delay is latency, not occupancy, so
 * a core with N requests in flight gets about N lines per (latency +
 * delay), and the bandwidth a throttle value leaves depends on N, as Linux's
 * resctrl documentation warns ("the same b/w percentage may mean different
 * actual b/w depending on # of threads", Documentation/x86/resctrl.rst,
 * "Memory bandwidth Allocation and monitoring"). The delay per throttle
 * value is a per-part calibration (qos.bandwidth.request_delay). Requests
 * of one throttle overlap in the delay (project choice: the controller
 * delays each request, it does not serialise them; Intel publishes no
 * queueing discipline).
 *
 * The spacing model (cfg.req_spacing set) puts the same controller at the
 * same place, between the core's L2 and the interconnect (Herdrich et al.
 * 2019; SDM vol. 3B 17.19.7), but lets its delay act between successive
 * requests rather than on each: a request, demand or prefetch, L3 hit or
 * not, leaves at the later of its link booking (as in the request model)
 * and its throttle's timeline, which then advances by
 * req_spacing[delay_pct] ticks. A throttle value is thus a request rate
 * per throttle (per core, or per thread with per-thread MBA), which costs
 * a core nothing while its own requests are further apart, and caps it at
 * line / spacing once they are closer. Project choice: Intel's texts say
 * only that a delay is inserted; the spacing is what the measurements
 * ask for. On the Xeon Gold 6254 an address-order stream (many requests
 * in flight, 14,179 MiB/s unthrottled) and a prefetch-hostile reader (few,
 * 6,874 MiB/s) end at about the same MiB/s at each low throttle value
 * (MB 10: 1,715 and 1,876; MB 40: 5,962 and 6,206), and a 22 MiB Xeon's
 * reader shows the same caps (docs/fidelity.md, "MBA"): a fixed delay per
 * request would cost both the same share instead. No residual per-request
 * delay is added (project choice: the spacing alone fits every tuning
 * point of both parts' MBA series). */
#include "bw_impl.h"

#include <math.h>
#include <stdlib.h>

struct delay_state {
    unsigned nthr;
    double *req;  /* request model: [BW_DELAY_REQ_STEPS] ticks per delay_pct; NULL: link model */
    double *gap;  /* spacing model: [BW_DELAY_REQ_STEPS] ticks between requests; NULL: none */
    double *link; /* [nport / nthr] */
    double thr[]; /* [nport] */
};

/* Copies a per-delay_pct table of ticks (NULL: the caller has none, *to
 * stays NULL), refusing an entry that is negative, not finite or absurd. */
static int copy_table(const double *from, double **to, const char *what, struct err *e)
{
    *to = NULL;
    if (!from)
        return 0;
    for (unsigned i = 0; i < BW_DELAY_REQ_STEPS; i++)
        if (!(from[i] >= 0 && from[i] < 1e15))
            return err_set(e, -QOSIM_EINVAL,
                           "bandwidth limiter (delay): %s %u must be a finite number of ticks "
                           ">= 0",
                           what, i);
    if (!(*to = malloc(BW_DELAY_REQ_STEPS * sizeof **to)))
        return err_set(e, -QOSIM_ENOMEM, "bandwidth limiter (delay): cannot allocate the %s table",
                       what);
    for (unsigned i = 0; i < BW_DELAY_REQ_STEPS; i++)
        (*to)[i] = from[i];
    return 0;
}

static void delay_free(struct bw *b)
{
    struct delay_state *s = b->state;
    if (s) {
        free(s->link);
        free(s->req);
        free(s->gap);
    }
    free(s);
    b->state = NULL;
}

static int delay_init(struct bw *b, struct err *e)
{
    const struct bw_cfg *c = &b->cfg;
    unsigned nthr = c->nthr ? c->nthr : 1;
    if (c->nport < 1)
        return err_set(e, -QOSIM_EINVAL, "bandwidth limiter (delay): nport must be at least 1");
    if (c->nport % nthr)
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (delay): %u ports are not links of %u throttles",
                       c->nport, nthr);
    if (!bw_positive(c->link_rate))
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (delay): link_rate must be a positive number of bytes "
                       "per tick (got %g)",
                       c->link_rate);
    if (c->req_delay && c->req_spacing)
        return err_set(e, -QOSIM_EINVAL,
                       "bandwidth limiter (delay): a request delay and a request spacing are "
                       "two models; give one");
    struct delay_state *s = calloc(1, sizeof *s + c->nport * sizeof s->thr[0]);
    if (s && !(s->link = calloc(c->nport / nthr, sizeof *s->link))) {
        free(s);
        s = NULL;
    }
    if (!s)
        return err_set(e, -QOSIM_ENOMEM, "bandwidth limiter (delay): cannot allocate %u ports",
                       c->nport);
    s->nthr = nthr;
    b->state = s;
    int rc = copy_table(c->req_delay, &s->req, "request delay", e);
    if (!rc)
        rc = copy_table(c->req_spacing, &s->gap, "request spacing", e);
    if (rc) {
        delay_free(b);
        return rc;
    }
    /* the caller's arrays need not outlive init */
    b->cfg.req_delay = NULL;
    b->cfg.req_spacing = NULL;
    return 0;
}

/* The tick a request booked from `start` (fractional) proceeds at: rounded
 * up, never before now. */
static uint64_t proceed_at(double start, uint64_t now)
{
    double t = ceil(start);
    if (t >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)t > now ? (uint64_t)t : now;
}

/* Books bytes on a link at its full rate from the later of now and its
 * timeline; returns when the transfer gets the link. Every model books the
 * link from the request on, not from a throttled start: a throttle's
 * transfers set in the future must not hold the link against another
 * thread's in the meantime. */
static double book_link(double *link, uint64_t now, uint32_t bytes, double link_rate)
{
    double on = *link > (double)now ? *link : (double)now;
    *link = on + (double)bytes / link_rate;
    return on;
}

static uint64_t delay_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    struct delay_state *s = b->state;
    if (port >= b->cfg.nport)
        return now; /* no such link: nothing to throttle */
    double *link = &s->link[port / s->nthr], *thr = &s->thr[port];
    unsigned pct = b->set[cls].delay_pct;
    double on_link = book_link(link, now, bytes, b->cfg.link_rate), start;
    if (s->gap) {
        /* Spacing model: the throttle lets one request through per
         * gap[pct] ticks. A timeline behind the request (a core that sent
         * nothing for a while) is no credit: the request goes at once and
         * the next is spaced from it. */
        start = *thr > on_link ? *thr : on_link;
        *thr = start + s->gap[pct];
    } else if (s->req) {
        /* Request model: the throttle's fixed delay after the link. */
        start = on_link + s->req[pct];
    } else {
        /* Link model: the throttle passes the class's share of the link's rate. */
        start = *thr > on_link ? *thr : on_link;
        *thr = start + (double)bytes / (b->cfg.link_rate * (double)(100 - pct) / 100.0);
    }
    return proceed_at(start, now);
}

const struct bw_ops bw_delay_ops = {
    .kind = BW_DELAY,
    .init = delay_init,
    .free = delay_free,
    .admit = delay_admit,
};
