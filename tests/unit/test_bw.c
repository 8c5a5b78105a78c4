/* Unit tests for the bandwidth limiters (sim/mem/bw.c, bw_delay.c, bw_rate.c,
 * bw_share.c).
 *
 * Small cases are derived by hand in the comments; the behavioural cases
 * drive a limiter with streams of requests and check the hardware behaviour
 * the limiters must show (caps, shares, reservations, work conservation) with
 * tolerances. A stream is either open-loop (a request every `spacing` ticks
 * whatever happens to the others) or closed-loop (k requests outstanding,
 * each reissued `svc` ticks after it was admitted), so a closed-loop stream
 * always has demand waiting: it saturates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "sim/mem/bw.h"
#include "testlib.h"
#include "util/rng.h"

/* ---- helpers ---------------------------------------------------------- */

static void mk(struct bw *b, const struct bw_cfg *cfg)
{
    struct err e = {0};
    if (bw_init(b, cfg, &e))
        fail_msg("bw_init: %s", e.msg);
}

static struct bw_cfg cfg_delay(unsigned nclass, unsigned nport, double link)
{
    return (struct bw_cfg){.kind = BW_DELAY, .nclass = nclass, .nport = nport, .link_rate = link};
}

static struct bw_cfg cfg_rate(unsigned nclass, uint64_t window)
{
    return (struct bw_cfg){.kind = BW_RATE, .nclass = nclass, .nport = 1, .window = window};
}

static struct bw_cfg cfg_share(unsigned nclass, uint64_t window, double cap, unsigned nblks)
{
    return (struct bw_cfg){.kind = BW_SHARE,
                           .nclass = nclass,
                           .nport = 1,
                           .window = window,
                           .capacity = cap,
                           .nblks = nblks};
}

static void set_delay(struct bw *b, unsigned cls, unsigned pct)
{
    struct bw_class_set s;
    bw_class_reset(b->cfg.kind, &s);
    s.delay_pct = pct;
    bw_set(b, cls, &s);
}

static void set_rate(struct bw *b, unsigned cls, double rate)
{
    struct bw_class_set s;
    bw_class_reset(b->cfg.kind, &s);
    s.rate = rate;
    bw_set(b, cls, &s);
}

static void set_share(struct bw *b, unsigned cls, unsigned rbwb, unsigned weight)
{
    struct bw_class_set s;
    bw_class_reset(b->cfg.kind, &s);
    s.rbwb = rbwb;
    s.weight = weight;
    bw_set(b, cls, &s);
}

/* Admits and checks the one promise every kind makes: never before now. */
static uint64_t admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    uint64_t t = bw_admit(b, cls, port, now, bytes);
    if (t < now)
        fail_msg("class %u port %u: admitted at %llu, before now = %llu", cls, port,
                 (unsigned long long)t, (unsigned long long)now);
    return t;
}

#define MAXSLOT 8

struct stream {
    unsigned cls, port;
    uint32_t bytes;
    int closed;       /* closed loop (k outstanding) or open loop */
    unsigned k;       /* closed: requests outstanding */
    uint64_t svc;     /* closed: ticks from admission to the reissue */
    uint64_t spacing; /* open: ticks between requests */
    uint64_t start;   /* first request */
    /* results */
    uint64_t ready[MAXSLOT];
    uint64_t reqs, delayed_reqs, max_delay;
    uint64_t meas_bytes;  /* admitted at a time in [m0, m1) */
    uint64_t after_bytes; /* admitted at m1 or later */
    uint64_t last_t;      /* latest admission time */
    uint64_t bytes_all;   /* every admitted byte */
};

static struct stream closed_loop(unsigned cls, unsigned k)
{
    return (struct stream){.cls = cls, .bytes = 64, .closed = 1, .k = k, .svc = 1};
}

static struct stream open_loop(unsigned cls, uint64_t spacing)
{
    return (struct stream){.cls = cls, .bytes = 64, .k = 1, .spacing = spacing};
}

/* Issues one request of stream s from slot i at ready[i]. */
static void step(struct bw *b, struct stream *s, unsigned i, uint64_t m0, uint64_t m1)
{
    uint64_t now = s->ready[i];
    uint64_t t = admit(b, s->cls, s->port, now, s->bytes);
    s->reqs++;
    s->bytes_all += s->bytes;
    if (t > now) {
        s->delayed_reqs++;
        if (t - now > s->max_delay)
            s->max_delay = t - now;
    }
    if (t >= m0 && t < m1)
        s->meas_bytes += s->bytes;
    if (t >= m1)
        s->after_bytes += s->bytes;
    if (t > s->last_t)
        s->last_t = t;
    s->ready[i] = s->closed ? t + s->svc : now + s->spacing;
}

/* Runs the streams until every request left is due at or after end,
 * measuring what is admitted in [m0, m1). With quantum 0 requests are issued
 * in time order (ties by stream, then slot); otherwise each stream is a core
 * run for `quantum` ticks in turn, so a later core's requests come up to a
 * quantum behind what the limiter already saw. */
static void run(struct bw *b, struct stream *s, unsigned n, uint64_t end, uint64_t m0, uint64_t m1,
                uint64_t quantum)
{
    for (unsigned j = 0; j < n; j++) {
        assert_true(s[j].k >= 1 && s[j].k <= MAXSLOT);
        for (unsigned i = 0; i < s[j].k; i++)
            s[j].ready[i] = s[j].start;
    }
    for (uint64_t q = quantum; q < end + quantum; q += quantum ? quantum : end) {
        uint64_t lim = quantum ? (q < end ? q : end) : end;
        for (unsigned j = 0; j < n; j++) {
            for (;;) {
                /* earliest request: of stream j alone, or of all streams */
                unsigned bj = n, bi = 0;
                uint64_t best = lim;
                for (unsigned jj = quantum ? j : 0; jj < (quantum ? j + 1 : n); jj++)
                    for (unsigned i = 0; i < s[jj].k; i++)
                        if (s[jj].ready[i] < best) {
                            best = s[jj].ready[i];
                            bj = jj;
                            bi = i;
                        }
                if (bj == n)
                    break;
                step(b, &s[bj], bi, m0, m1);
            }
            if (!quantum)
                break;
        }
    }
}

/* ---- the table, settings, validation ------------------------------------ */

static void test_kind_names_and_reset(void **state)
{
    (void)state;
    assert_string_equal(bw_kind_name[BW_NONE], "none");
    assert_string_equal(bw_kind_name[BW_DELAY], "delay");
    assert_string_equal(bw_kind_name[BW_RATE], "rate");
    assert_string_equal(bw_kind_name[BW_SHARE], "share");
    for (int k = 0; k < BW_NKIND; k++) {
        struct bw_class_set s = {.delay_pct = 7, .rate = 3, .rbwb = 5, .weight = 9};
        bw_class_reset((enum bw_kind)k, &s);
        assert_int_equal(s.delay_pct, 0);
        assert_true(s.rate == 0);
        assert_int_equal(s.rbwb, 0);
        assert_int_equal(s.weight, 1);
    }
    /* Every class of a new limiter starts in the reset setting. */
    struct bw b;
    struct bw_cfg c = cfg_share(3, 100, 1, 10);
    mk(&b, &c);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(b.set[i].weight, 1);
        assert_int_equal(b.set[i].rbwb, 0);
        assert_int_equal(b.stat[i].reqs, 0);
    }
    bw_free(&b);
    assert_null(b.set);
    bw_free(&b); /* twice is harmless */
}

static void test_none(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = {.kind = BW_NONE, .nclass = 2};
    mk(&b, &c);
    for (uint64_t i = 0; i < 1000; i++)
        assert_int_equal(admit(&b, 1, 0, 5 + i / 2, 4096), 5 + i / 2);
    assert_int_equal(b.stat[1].reqs, 1000);
    assert_int_equal(b.stat[1].bytes, 4096000);
    assert_int_equal(b.stat[1].delayed, 0);
    assert_int_equal(b.stat[0].reqs, 0);
    bw_free(&b);
}

static void test_init_reject(void **state)
{
    (void)state;
    static const struct {
        struct bw_cfg c;
        const char *why;
    } bad[] = {
        {{.kind = BW_NKIND, .nclass = 1}, "unknown kind"},
        {{.kind = (enum bw_kind) - 1, .nclass = 1}, "unknown kind"},
        {{.kind = BW_NONE, .nclass = 0}, "nclass must be at least 1"},
        {{.kind = BW_DELAY, .nclass = 0, .nport = 1, .link_rate = 1}, "(delay): nclass"},
        {{.kind = BW_DELAY, .nclass = 1, .nport = 0, .link_rate = 1}, "nport must be at least 1"},
        {{.kind = BW_DELAY, .nclass = 1, .nport = 1, .link_rate = 0}, "link_rate must be"},
        {{.kind = BW_DELAY, .nclass = 1, .nport = 1, .link_rate = -2}, "(got -2)"},
        {{.kind = BW_DELAY, .nclass = 1, .nport = 1, .link_rate = NAN}, "link_rate must be"},
        {{.kind = BW_DELAY, .nclass = 1, .nport = 1, .link_rate = INFINITY}, "link_rate must be"},
        {{.kind = BW_RATE, .nclass = 1, .window = 0}, "(rate): window must be at least 1"},
        {{.kind = BW_SHARE, .nclass = 1, .window = 0, .capacity = 1, .nblks = 1},
         "(share): window must be at least 1"},
        {{.kind = BW_SHARE, .nclass = 1, .window = 10, .capacity = 0, .nblks = 1},
         "capacity must be a positive"},
        {{.kind = BW_SHARE, .nclass = 1, .window = 10, .capacity = NAN, .nblks = 1},
         "capacity must be a positive"},
        {{.kind = BW_SHARE, .nclass = 1, .window = 10, .capacity = 1, .nblks = 0},
         "nblks must be at least 1"},
        {{.kind = BW_SHARE, .nclass = 1, .window = 10000000000, .capacity = 1e300, .nblks = 1},
         "x window 10000000000 is out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct bw b;
        struct err e = {0};
        int rc = bw_init(&b, &bad[i].c, &e);
        if (rc != -QOSIM_EINVAL)
            fail_msg("case %zu: returned %d, want -QOSIM_EINVAL", i, rc);
        assert_int_equal(e.code, -QOSIM_EINVAL);
        assert_substr(e.msg, bad[i].why);
        /* Nothing is left allocated, and freeing is still allowed. */
        assert_null(b.set);
        assert_null(b.stat);
        assert_null(b.state);
        bw_free(&b);
        assert_int_equal(bw_init(&b, &bad[i].c, NULL), -QOSIM_EINVAL);
    }
    /* Fields a kind does not use are not checked. */
    struct bw b;
    struct bw_cfg ok[] = {
        {.kind = BW_NONE, .nclass = 1},
        {.kind = BW_RATE, .nclass = 1, .window = 1},
        cfg_delay(1, 1, 0.5),
        cfg_share(1, 1, 0.001, 1),
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        mk(&b, &ok[i]);
        bw_free(&b);
    }
}

static void test_set_clamps(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(2, 100, 1, 16);
    mk(&b, &c);
    struct bw_class_set s = {.delay_pct = 150, .rate = -3, .rbwb = 40, .weight = 300};
    bw_set(&b, 1, &s);
    assert_int_equal(b.set[1].delay_pct, 99);
    assert_true(b.set[1].rate == 0);
    assert_int_equal(b.set[1].rbwb, 16);
    assert_int_equal(b.set[1].weight, 255);
    s.rate = NAN;
    bw_set(&b, 1, &s);
    assert_true(b.set[1].rate == 0);
    s.rate = INFINITY;
    bw_set(&b, 1, &s);
    assert_true(b.set[1].rate == 0);
    s = (struct bw_class_set){.delay_pct = 99, .rate = 2.5, .rbwb = 16, .weight = 255};
    bw_set(&b, 0, &s);
    assert_int_equal(b.set[0].delay_pct, 99);
    assert_true(b.set[0].rate == 2.5);
    assert_int_equal(b.set[0].rbwb, 16);
    assert_int_equal(b.set[0].weight, 255);
    /* A class the limiter lacks: setting it changes nothing, admitting
     * through it is not limited and not counted. */
    bw_set(&b, 2, &s);
    assert_int_equal(admit(&b, 2, 0, 77, 64), 77);
    assert_int_equal(b.stat[0].reqs + b.stat[1].reqs, 0);
    bw_free(&b);
    /* On a delay limiter a port it lacks is not throttled. */
    c = cfg_delay(1, 2, 1);
    mk(&b, &c);
    assert_int_equal(admit(&b, 0, 2, 10, 64), 10);
    assert_int_equal(admit(&b, 0, 2, 10, 64), 10);
    bw_free(&b);
}

/* ---- delay ---------------------------------------------------------------- */

/* Hand-derived timelines. */
static void test_delay_exact(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_delay(2, 2, 1.0);
    mk(&b, &c);
    /* 1 byte/tick, no delay: 64 bytes hold the link 64 ticks. */
    assert_int_equal(admit(&b, 0, 0, 0, 64), 0);   /* next = 64 */
    assert_int_equal(admit(&b, 0, 0, 10, 64), 64); /* waits 54, next = 128 */
    assert_int_equal(b.stat[0].delayed, 54);
    assert_int_equal(admit(&b, 0, 0, 500, 64), 500); /* idle link: no wait, next = 564 */
    /* Another port has its own timeline. */
    assert_int_equal(admit(&b, 0, 1, 500, 64), 500);
    /* 50% delay: 0.5 bytes/tick, 64 bytes take 128 ticks. */
    set_delay(&b, 1, 50);
    assert_int_equal(admit(&b, 1, 0, 564, 64), 564); /* next = 692 */
    assert_int_equal(admit(&b, 0, 0, 564, 64), 692); /* class 0 behind it: next = 756 */
    assert_int_equal(b.stat[0].delayed, 54 + 128);
    assert_int_equal(b.stat[1].delayed, 0);
    assert_int_equal(b.stat[0].reqs, 5);
    assert_int_equal(b.stat[0].bytes, 320);
    bw_free(&b);

    /* 3 bytes/tick: 64 bytes take 21 1/3 ticks; starts are rounded up but
     * the fractions add up: request k starts at ceil(64 k / 3). */
    c = cfg_delay(1, 1, 3.0);
    mk(&b, &c);
    static const uint64_t want[] = {0, 22, 43, 64, 86, 107, 128};
    for (unsigned k = 0; k < 7; k++)
        assert_int_equal(admit(&b, 0, 0, 0, 64), want[k]);
    bw_free(&b);
}

/* Two throttles on one link (nthr 2, ports 0 and 1 on link 0, 2 and 3 on
 * link 1): each paces its own transfers at its class's rate, and the link
 * carries them together at link_rate, booked from the request on. */
static void test_delay_threads(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_delay(2, 4, 1.0);
    c.nthr = 2;
    mk(&b, &c);
    set_delay(&b, 1, 90); /* 0.1 byte/tick: 64 bytes hold the throttle 640 ticks */
    assert_int_equal(admit(&b, 1, 0, 0, 64), 0);     /* throttle 0 -> 640, link -> 64 */
    assert_int_equal(admit(&b, 0, 1, 0, 64), 64);    /* the link: after 64 bytes; -> 128 */
    assert_int_equal(admit(&b, 1, 0, 100, 64), 640); /* its throttle; link -> 192 */
    assert_int_equal(admit(&b, 0, 1, 100, 64), 192); /* not behind throttle 0's 640 */
    assert_int_equal(admit(&b, 0, 2, 0, 64), 0);     /* the other link is free */
    /* Both unthrottled, saturating: together the link's rate, not twice it. */
    uint64_t t = 0;
    for (unsigned k = 0; k < 100; k++) {
        t = admit(&b, 0, 2, 0, 64);
        t = admit(&b, 0, 3, 0, 64);
    }
    assert_true(t >= 200 * 64 - 64 && t <= 201 * 64);
    bw_free(&b);
    /* Ports must make whole links. */
    c = cfg_delay(1, 3, 1.0);
    c.nthr = 2;
    struct err e = {0};
    assert_int_equal(bw_init(&b, &c, &e), -QOSIM_EINVAL);
    assert_non_null(strstr(e.msg, "3 ports are not links of 2 throttles"));
}

/* ---- delay, spacing model (Intel MBA as a request rate per core) ---------- */

/* A spacing table of 2 ticks per delay percent: delay 50 spaces requests
 * 100 ticks apart, delay 90 180, delay 10 20, delay 0 not at all. */
static double spacing_table[BW_DELAY_REQ_STEPS];

static struct bw_cfg cfg_spacing(unsigned nclass, unsigned nport, double link)
{
    for (unsigned i = 0; i < BW_DELAY_REQ_STEPS; i++)
        spacing_table[i] = 2.0 * i;
    struct bw_cfg c = cfg_delay(nclass, nport, link);
    c.req_spacing = spacing_table;
    return c;
}

/* Hand-derived timelines: one request per spacing for a core that asks
 * faster, none delayed for one that asks slower, cores independent. The
 * link (64 bytes a tick: a line holds it one tick) never binds here. */
static void test_spacing_exact(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_spacing(2, 2, 64.0);
    mk(&b, &c);
    set_delay(&b, 1, 50); /* 100 ticks between requests */
    /* Faster than the spacing (every 10 ticks): exactly one per 100. */
    static const uint64_t fast[] = {0, 100, 200, 300, 400};
    for (unsigned k = 0; k < 5; k++)
        assert_int_equal(admit(&b, 1, 0, 10 * k, 64), fast[k]);
    assert_int_equal(b.stat[1].delayed, (100 - 10) + (200 - 20) + (300 - 30) + (400 - 40));
    /* Port 1 (another core) is not behind port 0's timeline. */
    assert_int_equal(admit(&b, 1, 1, 40, 64), 40);
    assert_int_equal(admit(&b, 1, 1, 40, 64), 140);
    bw_free(&b);

    /* Slower than the spacing (every 150 ticks): never delayed. */
    mk(&b, &c);
    set_delay(&b, 1, 50);
    for (unsigned k = 0; k < 20; k++)
        assert_int_equal(admit(&b, 1, 0, 150 * k, 64), 150 * k);
    assert_int_equal(b.stat[1].delayed, 0);
    /* An idle gap is no credit: after 10,000 idle ticks two requests at
     * once are still 100 apart. */
    assert_int_equal(admit(&b, 1, 0, 12850, 64), 12850);
    assert_int_equal(admit(&b, 1, 0, 12850, 64), 12950);
    /* An unthrottled class on the same port is not spaced (delay 0): two
     * requests at once are a link's tick apart. */
    assert_int_equal(admit(&b, 0, 0, 20000, 64), 20000);
    assert_int_equal(admit(&b, 0, 0, 20000, 64), 20001);
    bw_free(&b);

    /* A fractional spacing (delay 1: 2 ticks; with a spacing of 2.5 ticks
     * the starts are rounded up, the timeline keeps the fraction). */
    c = cfg_spacing(1, 1, 64.0);
    spacing_table[1] = 2.5;
    mk(&b, &c);
    set_delay(&b, 0, 1);
    static const uint64_t frac[] = {0, 3, 5, 8, 10, 13, 15};
    for (unsigned k = 0; k < 7; k++)
        assert_int_equal(admit(&b, 0, 0, 0, 64), frac[k]);
    bw_free(&b);
}

/* A new throttle value takes effect from the next request: the spacing
 * already given to the last one stands. */
static void test_spacing_change(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_spacing(1, 1, 64.0);
    mk(&b, &c);
    set_delay(&b, 0, 90);                            /* 180 ticks */
    assert_int_equal(admit(&b, 0, 0, 0, 64), 0);     /* next from 180 */
    assert_int_equal(admit(&b, 0, 0, 0, 64), 180);   /* next from 360 */
    set_delay(&b, 0, 10);                            /* 20 ticks */
    assert_int_equal(admit(&b, 0, 0, 0, 64), 360);   /* next from 380 */
    assert_int_equal(admit(&b, 0, 0, 0, 64), 380);   /* next from 400 */
    assert_int_equal(admit(&b, 0, 0, 390, 64), 400); /* next from 420 */
    set_delay(&b, 0, 0);                             /* no spacing */
    assert_int_equal(admit(&b, 0, 0, 410, 64), 420); /* the last spacing stands */
    assert_int_equal(admit(&b, 0, 0, 420, 64), 420); /* and adds nothing more */
    assert_int_equal(admit(&b, 0, 0, 500, 64), 500);
    assert_int_equal(admit(&b, 0, 0, 500, 64), 501); /* the link's tick */
    bw_free(&b);
}

/* Two throttles on one link (per-thread MBA): each spaces its own requests;
 * the link is booked from the request on at its full rate, as in the
 * request model (1 byte a tick: a line holds it 64 ticks). */
static void test_spacing_link(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_spacing(2, 2, 1.0);
    c.nthr = 2;
    mk(&b, &c);
    set_delay(&b, 1, 90);                           /* 180 ticks */
    assert_int_equal(admit(&b, 1, 0, 0, 64), 0);    /* throttle 0 -> 180, link -> 64 */
    assert_int_equal(admit(&b, 0, 1, 0, 64), 64);   /* behind the link; link -> 128 */
    assert_int_equal(admit(&b, 1, 0, 10, 64), 180); /* its spacing; link -> 192 */
    assert_int_equal(admit(&b, 0, 1, 10, 64), 192); /* the link, not throttle 0's 360 */
    bw_free(&b);
}

/* A spacing table is checked like a delay table, and excludes one. */
static void test_spacing_reject(void **state)
{
    (void)state;
    static const double bad[] = {-1, NAN, INFINITY, 1e15};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct bw_cfg c = cfg_spacing(1, 1, 1.0);
        spacing_table[37] = bad[i];
        struct bw b;
        struct err e = {0};
        assert_int_equal(bw_init(&b, &c, &e), -QOSIM_EINVAL);
        assert_substr(e.msg, "request spacing 37 must be a finite number of ticks >= 0");
        assert_null(b.state);
        bw_free(&b);
    }
    struct bw_cfg c = cfg_spacing(1, 1, 1.0);
    c.req_delay = spacing_table;
    struct bw b;
    struct err e = {0};
    assert_int_equal(bw_init(&b, &c, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "two models");
    bw_free(&b);
}

/* Acceptance: a saturating port's bandwidth falls strictly as the delay goes
 * 0, 10, ..., 90 and is link_rate * (100 - d) / 100 within 5%. */
static void test_delay_monotonic(void **state)
{
    (void)state;
    double prev = INFINITY;
    for (unsigned d = 0; d <= 90; d += 10) {
        struct bw b;
        struct bw_cfg c = cfg_delay(4, 4, 8.0);
        mk(&b, &c);
        set_delay(&b, 2, d);
        struct stream s = closed_loop(2, 4);
        s.port = 3;
        run(&b, &s, 1, 200000, 0, UINT64_MAX, 0);
        double bwd = (double)(s.bytes_all - s.bytes) / (double)s.last_t;
        double want = 8.0 * (100 - d) / 100;
        assert_near(bwd, want, 0.05);
        assert_near(bwd, want, 0.01); /* in fact exact but for the last request */
        if (!(bwd < prev))
            fail_msg("delay %u%%: %g bytes/tick, not below %g at the previous step", d, bwd, prev);
        prev = bwd;
        assert_true(b.stat[2].delayed > 0);
        bw_free(&b);
    }
}

/* ---- rate ---------------------------------------------------------------- */

/* Hand-derived: 0.1 byte/tick over windows of 1000 ticks is 100 bytes a
 * window; the request crossing the budget is admitted and its excess comes
 * off the next window. */
static void test_rate_exact(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_rate(2, 1000);
    mk(&b, &c);
    set_rate(&b, 0, 0.1);
    assert_int_equal(admit(&b, 0, 0, 0, 64), 0);    /* used 64 */
    assert_int_equal(admit(&b, 0, 0, 1, 64), 1);    /* 64 < 100: used 128 */
    assert_int_equal(admit(&b, 0, 0, 2, 64), 1000); /* spent: window 1 starts at 28, -> 92 */
    assert_int_equal(admit(&b, 0, 0, 3, 64), 1000); /* 92 < 100: used 156 */
    assert_int_equal(admit(&b, 0, 0, 4, 64), 2000); /* window 2 at 56, -> 120 */
    assert_int_equal(b.stat[0].delayed, 998 + 997 + 1996);
    /* Class 1 is unlimited (rate 0): never waits. */
    for (unsigned i = 0; i < 100; i++)
        assert_int_equal(admit(&b, 1, 0, 5, 4096), 5);
    assert_int_equal(b.stat[1].delayed, 0);
    /* Time moves on to window 5: the backlog is gone, the debt repaid. */
    assert_int_equal(admit(&b, 0, 0, 5500, 64), 5500);
    assert_int_equal(admit(&b, 0, 0, 5501, 64), 5501);
    assert_int_equal(admit(&b, 0, 0, 5502, 64), 6000);
    /* A request from before the current window (a core behind) is charged
     * to the current window and, budget left, proceeds at its own now. */
    assert_int_equal(admit(&b, 1, 0, 9000, 64), 9000);  /* the present: 9000 */
    assert_int_equal(admit(&b, 0, 0, 9100, 64), 9100);  /* window 9: used 64 */
    assert_int_equal(admit(&b, 0, 0, 8900, 64), 8900);  /* charged to window 9: 128 */
    assert_int_equal(admit(&b, 0, 0, 8950, 64), 10000); /* spent: queues */
    assert_int_equal(admit(&b, 0, 0, 8960, 64), 10000);
    assert_int_equal(admit(&b, 0, 0, 8970, 64), 11000);
    /* A new cap starts afresh. */
    set_rate(&b, 0, 1.0);
    assert_int_equal(admit(&b, 0, 0, 8600, 64), 8600);
    bw_free(&b);
}

/* Acceptance: a class demanding twice its cap for 200 windows gets the cap
 * within 5% (and in fact 2%); demand at half the cap is never delayed. */
static void test_rate_cap(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_rate(3, 1000);
    mk(&b, &c);
    set_rate(&b, 1, 0.5); /* 500 bytes a window */
    /* 64 bytes every 64 ticks: 1 byte/tick, twice the cap. */
    uint64_t perwin[1000] = {0};
    uint64_t bytes = 0, last = 0;
    for (uint64_t now = 0; now < 200 * 1000; now += 64) {
        uint64_t t = admit(&b, 1, 0, now, 64);
        assert_true(t >= last); /* one class's admissions stay in order */
        last = t;
        bytes += 64;
        assert_true(t / 1000 < 1000);
        perwin[t / 1000] += 64;
    }
    double got = (double)bytes / (double)last;
    assert_near(got, 0.5, 0.05);
    assert_near(got, 0.5, 0.02);
    assert_true(b.stat[1].delayed > 0);
    /* No window carries more than its budget plus the one crossing request. */
    for (unsigned w = 0; w < 1000; w++)
        if (perwin[w] > 500 + 64)
            fail_msg("window %u carried %llu bytes", w, (unsigned long long)perwin[w]);
    /* Half the cap: 64 bytes every 256 ticks, 0.25 byte/tick. */
    for (uint64_t now = 0; now < 200 * 1000; now += 256)
        assert_int_equal(admit(&b, 2, 0, now, 64), now); /* class 2 unlimited */
    set_rate(&b, 0, 0.5);
    for (uint64_t now = 0; now < 200 * 1000; now += 256)
        assert_int_equal(admit(&b, 0, 0, now, 64), now);
    assert_int_equal(b.stat[0].delayed, 0);
    assert_int_equal(b.stat[0].reqs, 200000 / 256 + 1);
    /* Just below the cap (0.49 byte/tick in bursts of 49 bytes every 100
     * ticks) is not delayed either. */
    set_rate(&b, 2, 0.5);
    for (uint64_t now = 300000; now < 500000; now += 100)
        assert_int_equal(admit(&b, 2, 0, now, 49), now);
    assert_int_equal(b.stat[2].delayed, 0);
    bw_free(&b);
}

/* Acceptance: two cores share one capped class and run in quanta of 700
 * ticks, so each one's requests come up to a quantum behind the other's. */
static void test_rate_backwards(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_rate(2, 1000);
    mk(&b, &c);
    set_rate(&b, 0, 0.5);
    set_rate(&b, 1, 0.5);
    /* Class 0: each core at the cap, together twice it. */
    struct stream s[2] = {open_loop(0, 128), open_loop(0, 128)};
    s[1].start = 37;
    run(&b, s, 2, 300000, 0, UINT64_MAX, 700);
    uint64_t last = s[0].last_t > s[1].last_t ? s[0].last_t : s[1].last_t;
    assert_near((double)(s[0].bytes_all + s[1].bytes_all) / (double)last, 0.5, 0.05);
    bw_free(&b);
    /* Together half the cap: never delayed. */
    mk(&b, &c);
    set_rate(&b, 1, 0.5);
    struct stream h[2] = {open_loop(1, 512), open_loop(1, 512)};
    h[1].start = 100;
    run(&b, h, 2, 300000, 0, UINT64_MAX, 700);
    assert_int_equal(h[0].delayed_reqs + h[1].delayed_reqs, 0);
    assert_int_equal(b.stat[1].delayed, 0);
    assert_true(b.stat[1].reqs > 1000);
    bw_free(&b);
}

/* ---- share --------------------------------------------------------------- */

/* The share setups: 16 bytes/tick, windows of 1000 ticks (16000 bytes, 250
 * requests of 64 bytes), 100 blocks, so rbwb is a percentage. Measured over
 * windows 10..69, after the start-up. */
#define SH_CAP   16.0
#define SH_WIN   1000
#define SH_M0    (10 * SH_WIN)
#define SH_M1    (70 * SH_WIN)
#define SH_END   (70 * SH_WIN)
#define SH_BYTES (SH_CAP * (SH_M1 - SH_M0))

/* Acceptance: two saturating classes, rbwb 20% and 30%, weights 1 and 3:
 * each gets its reservation and the spare 50% is split 1:3. */
static void share_two(uint64_t quantum)
{
    struct bw b;
    struct bw_cfg c = cfg_share(4, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 1, 20, 1);
    set_share(&b, 2, 30, 3);
    struct stream s[2] = {closed_loop(1, 4), closed_loop(2, 4)};
    run(&b, s, 2, SH_END, SH_M0, SH_M1, quantum);
    double f1 = s[0].meas_bytes / SH_BYTES, f2 = s[1].meas_bytes / SH_BYTES;
    assert_true(f1 >= 0.20);
    assert_true(f2 >= 0.30);
    /* spare: 12.5% and 37.5% */
    assert_near(f1 - 0.20, 0.125, 0.05);
    assert_near(f2 - 0.30, 0.375, 0.05);
    assert_near((f2 - 0.30) / (f1 - 0.20), 3.0, 0.05);
    assert_near((f2 - 0.30) / (f1 - 0.20), 3.0, 0.02); /* in fact exact but for rounding */
    /* Saturated: the capacity is used, and not exceeded (what a window
     * carries past it comes off the next). */
    assert_true(f1 + f2 >= 0.98);
    assert_true(f1 + f2 <= 1.002);
    bw_free(&b);
}

static void test_share_two_saturating(void **state)
{
    (void)state;
    share_two(0);
}

/* Acceptance: a class alone, with 10% reserved, gets >= 95% of capacity. */
static void test_share_alone(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(4, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    for (unsigned i = 0; i < 4; i++)
        set_share(&b, i, 10 + i, 1 + i);
    struct stream s = closed_loop(0, 4);
    run(&b, &s, 1, SH_END, SH_M0, SH_M1, 0);
    double f = s.meas_bytes / SH_BYTES;
    assert_true(f >= 0.95);
    assert_true(f <= 1.01);
    /* ...also when its weight is 0: it is the only contender (once class 0
     * has been idle for a window). */
    set_share(&b, 3, 0, 0);
    struct stream z = closed_loop(3, 4);
    z.start = SH_END + 2 * SH_WIN;
    run(&b, &z, 1, 2 * SH_END, SH_END + SH_M0, SH_END + SH_M1, 0);
    assert_true(z.meas_bytes / SH_BYTES >= 0.95);
    bw_free(&b);
}

/* Acceptance: a light class (10% of capacity, 30% reserved) is never delayed
 * while another saturates, and the saturating one gets the other 90%. */
static void test_share_light(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 0, 30, 1);
    set_share(&b, 1, 20, 1);
    /* 64 bytes every 40 ticks: 1.6 bytes/tick, 10%. */
    struct stream s[2] = {open_loop(0, 40), closed_loop(1, 4)};
    run(&b, s, 2, SH_END, SH_M0, SH_M1, 0);
    assert_int_equal(s[0].delayed_reqs, 0);
    assert_int_equal(b.stat[0].delayed, 0);
    assert_near(s[0].meas_bytes / SH_BYTES, 0.10, 0.01);
    assert_near(s[1].meas_bytes / SH_BYTES, 0.90, 0.05);
    bw_free(&b);

    /* The same with the light class behind in time: quanta of 900 ticks. */
    mk(&b, &c);
    set_share(&b, 0, 30, 1);
    set_share(&b, 1, 20, 1);
    struct stream q[2] = {closed_loop(1, 4), open_loop(0, 40)};
    run(&b, q, 2, SH_END, SH_M0, SH_M1, 900);
    assert_int_equal(q[1].delayed_reqs, 0);
    assert_near(q[0].meas_bytes / SH_BYTES, 0.90, 0.05);
    bw_free(&b);
}

/* A class that wakes up while another saturates gets its reservation at
 * once, in the very window it wakes up in. */
static void test_share_wakeup(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 0, 25, 1);
    set_share(&b, 1, 0, 1);
    struct stream s = closed_loop(1, 4);
    run(&b, &s, 1, 20 * SH_WIN, 20 * SH_WIN, 21 * SH_WIN, 0);
    /* In window 20 class 1 takes its allowance, the whole window, in its
     * first few hundred ticks; then class 0 asks for its 25% (4000 bytes). */
    struct stream more = closed_loop(1, 4);
    more.start = 20 * SH_WIN;
    run(&b, &more, 1, 20 * SH_WIN + 400, 20 * SH_WIN, 21 * SH_WIN, 0);
    assert_true(more.delayed_reqs > 0);
    assert_true(more.meas_bytes + s.meas_bytes >= 0.99 * SH_CAP * SH_WIN);
    /* 63 requests: the 63rd starts at 3968 < 4000 bytes and is admitted. */
    for (unsigned i = 0; i < 63; i++)
        assert_int_equal(admit(&b, 0, 0, 20 * SH_WIN + 500 + i, 64), 20 * SH_WIN + 500 + i);
    assert_int_equal(b.stat[0].delayed, 0);
    /* Beyond the reservation it waits: the window is full. */
    assert_int_equal(admit(&b, 0, 0, 20 * SH_WIN + 600, 64), 21 * SH_WIN);
    /* Window 20 carried class 0's 4032 bytes (plus class 1's crossing x)
     * past its capacity: window 21 has C - 4032 - x. Class 0, pushed out of
     * window 20, still contends: it gets R = 4000 and half the spare,
     * C - 4032 - x - 4000 plus what the two crossings pay back (32 + x), so
     * 4000 each; class 1 pays its crossing back out of its half. */
    struct stream next = closed_loop(1, 4);
    next.start = 21 * SH_WIN;
    run(&b, &next, 1, 22 * SH_WIN, 21 * SH_WIN, 22 * SH_WIN, 0);
    uint64_t w21 = next.meas_bytes + more.after_bytes;
    if (w21 < 4000 - 128 || w21 > 4000 + 64)
        fail_msg("class 1 carried %llu bytes in window 21", (unsigned long long)w21);
    bw_free(&b);
}

/* Work conservation within a window: capacity that no allowance covers
 * goes to whoever asks at once, without waiting for the next window's
 * allowances - in the very first window, and when a class that was light
 * starts to saturate while the others are idle. */
static void test_share_in_window(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(3, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 0, 10, 1);
    set_share(&b, 1, 30, 1);
    set_share(&b, 2, 30, 1);
    struct stream s = closed_loop(0, 4);
    run(&b, &s, 1, SH_WIN, 0, SH_WIN, 0);
    assert_true(s.meas_bytes >= SH_CAP * SH_WIN);
    assert_true(s.meas_bytes <= SH_CAP * SH_WIN + 64);
    bw_free(&b);

    mk(&b, &c);
    set_share(&b, 0, 10, 1);
    set_share(&b, 1, 30, 1);
    struct stream l = open_loop(0, 80); /* 5% */
    run(&b, &l, 1, 10 * SH_WIN, 0, 0, 0);
    assert_int_equal(l.delayed_reqs, 0);
    struct stream h = closed_loop(0, 4);
    h.start = 10 * SH_WIN;
    run(&b, &h, 1, 11 * SH_WIN, 10 * SH_WIN, 11 * SH_WIN, 0);
    assert_true(h.meas_bytes >= 0.99 * SH_CAP * SH_WIN);
    bw_free(&b);
}

/* A class using more than its reservation but less than its fair share
 * (10% reserved, 30% wanted, equal weights: its share is 50%) gets what it
 * wants, at worst a few ticks late at the end of a window, and the
 * saturating class the rest. */
static void test_share_light_above_resv(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 0, 10, 1);
    set_share(&b, 1, 10, 1);
    /* 64 bytes every 13 ticks: 4.92 bytes/tick, 30.8% */
    struct stream s[2] = {open_loop(0, 13), closed_loop(1, 4)};
    run(&b, s, 2, SH_M0, 0, 0, 0);
    /* After the start-up (class 1 grabs window 0, class 0 builds a backlog
     * and catches up), measured afresh. */
    s[0].start = s[0].ready[0];
    s[1].start = SH_M0;
    /* The backlog class 0 built in window 0 (booked ahead at its
     * reservation) does not hold back what it asks for later. */
    assert_true(s[0].delayed_reqs * 10 < s[0].reqs);
    s[0].max_delay = s[0].delayed_reqs = s[0].reqs = 0;
    run(&b, s, 2, SH_END, SH_M0, SH_M1, 0);
    double want = 64.0 / 13 / SH_CAP;
    assert_near(s[0].meas_bytes / SH_BYTES, want, 0.02);
    assert_near(s[1].meas_bytes / SH_BYTES, 1 - want, 0.05);
    assert_near(s[1].meas_bytes / SH_BYTES, 1 - want, 0.02);
    assert_true(s[0].max_delay < SH_WIN / 10);
    assert_true(s[0].delayed_reqs < s[0].reqs / 100);
    bw_free(&b);
}

/* A new weight applies from the next windows on. */
static void test_share_reweight(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    struct stream s[2] = {closed_loop(0, 4), closed_loop(1, 4)};
    run(&b, s, 2, SH_END, SH_M0, SH_M1, 0);
    /* reset settings: no reservations, weights 1 and 1 */
    assert_near(s[0].meas_bytes / SH_BYTES, 0.5, 0.02);
    assert_near(s[1].meas_bytes / SH_BYTES, 0.5, 0.02);
    set_share(&b, 0, 0, 1);
    set_share(&b, 1, 0, 3);
    struct stream t[2] = {closed_loop(0, 4), closed_loop(1, 4)};
    t[0].start = t[1].start = SH_END;
    run(&b, t, 2, 2 * SH_END, SH_END + SH_M0, SH_END + SH_M1, 0);
    assert_near(t[0].meas_bytes / SH_BYTES, 0.25, 0.02);
    assert_near(t[1].meas_bytes / SH_BYTES, 0.75, 0.02);
    bw_free(&b);
}

/* Weight 0 gets no spare while a class of positive weight contends; its
 * reservation still holds, and it keeps making progress. */
static void test_share_weight0(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(3, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 0, 0, 0);
    set_share(&b, 1, 0, 1);
    set_share(&b, 2, 40, 0);
    struct stream s[3] = {closed_loop(0, 4), closed_loop(1, 4), closed_loop(2, 4)};
    run(&b, s, 3, SH_END, SH_M0, SH_M1, 0);
    double f0 = s[0].meas_bytes / SH_BYTES, f1 = s[1].meas_bytes / SH_BYTES,
           f2 = s[2].meas_bytes / SH_BYTES;
    /* class 2: its 40% reservation, no spare; class 0: one request a window. */
    assert_near(f2, 0.40, 0.02);
    assert_true(f0 > 0);
    assert_true(f0 <= 2 * 64.0 / (SH_CAP * SH_WIN));
    assert_near(f1, 0.60, 0.03);
    assert_true(f0 + f1 + f2 <= 1.01);
    bw_free(&b);

    /* Weight-0 classes contending among themselves split the spare equally. */
    mk(&b, &c);
    set_share(&b, 0, 0, 0);
    set_share(&b, 1, 0, 0);
    set_share(&b, 2, 0, 0);
    struct stream z[2] = {open_loop(0, 1), open_loop(2, 3)}; /* not in proportion to demand */
    run(&b, z, 2, SH_END, SH_M0, SH_M1, 0);
    assert_near(z[0].meas_bytes / SH_BYTES, 0.5, 0.05);
    assert_near(z[1].meas_bytes / SH_BYTES, 0.5, 0.05);
    bw_free(&b);
}

static void set_hard(struct bw *b, unsigned cls, unsigned rbwb)
{
    struct bw_class_set s;
    bw_class_reset(b->cfg.kind, &s);
    s.rbwb = rbwb;
    s.weight = 0;
    s.hard = 1;
    bw_set(b, cls, &s);
}

/* What a saturating class alone, held hard to rbwb of nblks, gets. */
static double hard_alone(unsigned nblks, unsigned rbwb, uint64_t quantum)
{
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, nblks);
    mk(&b, &c);
    set_hard(&b, 1, rbwb);
    struct stream s = closed_loop(1, 4);
    run(&b, &s, 1, SH_END, SH_M0, SH_M1, quantum);
    bw_free(&b);
    return s.meas_bytes / SH_BYTES;
}

/* CBQRI 1.0: Mweight 0 makes Rbwb a hard limit, "the use of unused or
 * non-reserved bandwidth is not allowed". A class alone, with a quarter of
 * the blocks, gets a quarter of the capacity, not all of it; without the
 * hard flag weight 0 keeps the 2023 draft's reading (spare last: alone, it
 * gets everything). */
static void test_share_hard_alone(void **state)
{
    (void)state;
    assert_near(hard_alone(100, 25, 0), 0.25, 0.02);
    assert_near(hard_alone(100, 25, 700), 0.25, 0.02); /* cores behind in quanta */
    assert_near(hard_alone(100, 25, 2500), 0.25, 0.02);
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 1, 25, 0);
    struct stream s = closed_loop(1, 4);
    run(&b, &s, 1, SH_END, SH_M0, SH_M1, 0);
    assert_true(s.meas_bytes / SH_BYTES >= 0.95);
    bw_free(&b);
    /* A reservation of a quarter transfer a window (1 block of 1000: 16
     * bytes) is one transfer every fourth window, exactly. */
    assert_near(hard_alone(1000, 1, 0), 0.001, 0.0002);
}

/* The allocation scales linearly with Rbwb (CBQRI 1.0). */
static void test_share_hard_linear(void **state)
{
    (void)state;
    assert_near(hard_alone(256, 32, 0), 0.125, 0.02);
    assert_near(hard_alone(256, 64, 0), 0.25, 0.02);
    assert_near(hard_alone(256, 128, 0), 0.50, 0.02);
    assert_near(hard_alone(256, 256, 0), 1.00, 0.02);
    /* 31.25 transfers a window: the quotas make it exact, not 32. */
    assert_near(hard_alone(256, 32, 0), 0.125, 0.002);
}

/* Beside a busy class of positive weight a hard class gets its reservation
 * (guaranteed, as any class's), and the other class everything else. */
static void test_share_hard_beside(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(3, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_hard(&b, 0, 30);
    set_share(&b, 1, 10, 1);
    struct stream s[2] = {closed_loop(0, 4), closed_loop(1, 4)};
    run(&b, s, 2, SH_END, SH_M0, SH_M1, 0);
    double f0 = s[0].meas_bytes / SH_BYTES, f1 = s[1].meas_bytes / SH_BYTES;
    assert_near(f0, 0.30, 0.02);
    assert_near(f1, 0.70, 0.02);
    assert_true(f0 + f1 <= 1.002);
    bw_free(&b);

    /* When the busy class stops, the hard one still gets no more. */
    mk(&b, &c);
    set_hard(&b, 0, 30);
    set_share(&b, 1, 10, 1);
    struct stream t[2] = {closed_loop(0, 4), closed_loop(1, 4)};
    run(&b, t, 2, SH_M0, 0, 0, 0);
    struct stream u = closed_loop(0, 4);
    u.start = t[0].ready[0];
    run(&b, &u, 1, 2 * SH_END, SH_END + SH_M0, SH_END + SH_M1, 0);
    assert_near(u.meas_bytes / SH_BYTES, 0.30, 0.02);
    bw_free(&b);

    /* A light class of positive weight is not held back by a hard one. */
    mk(&b, &c);
    set_hard(&b, 0, 50);
    set_share(&b, 1, 0, 1);
    struct stream v[2] = {closed_loop(0, 4), open_loop(1, 40)}; /* 10% */
    run(&b, v, 2, SH_END, SH_M0, SH_M1, 0);
    assert_near(v[0].meas_bytes / SH_BYTES, 0.50, 0.02);
    assert_near(v[1].meas_bytes / SH_BYTES, 0.10, 0.01);
    bw_free(&b);
}

/* Rbwb 0 with a hard limit (CBQRI 1.0 forbids it in CONFIG_LIMIT): one
 * transfer a window, so the class's requests still complete; the flag
 * means nothing with a positive weight; and it is a limit bw_limited sees. */
static void test_share_hard_edges(void **state)
{
    (void)state;
    double one = 64.0 / (SH_CAP * SH_WIN);
    assert_near(hard_alone(100, 0, 0), one, one / 10);
    struct bw b;
    struct bw_cfg c = cfg_share(2, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    struct bw_class_set r = {.hard = 1};
    bw_class_reset(BW_SHARE, &r);
    assert_int_equal(r.hard, 0);
    assert_false(bw_limited(&b, 1));
    set_hard(&b, 1, 25);
    assert_true(bw_limited(&b, 1));
    struct bw_class_set w = b.set[1];
    w.weight = 2;
    bw_set(&b, 1, &w);
    assert_false(bw_limited(&b, 1));
    struct stream s = closed_loop(1, 4);
    run(&b, &s, 1, SH_END, SH_M0, SH_M1, 0);
    assert_true(s.meas_bytes / SH_BYTES >= 0.95);
    bw_free(&b);
    /* Not a share limiter: the flag limits nothing. */
    struct bw_cfg d = cfg_rate(2, 100);
    mk(&b, &d);
    set_hard(&b, 1, 25);
    assert_false(bw_limited(&b, 1));
    bw_free(&b);
}

/* Which admissions fall within the reservation (bw_in_resv, what memory
 * serves first). SH: a window carries 16,000 bytes; 10 blocks of 100 are
 * 1,600 bytes, 25 transfers of 64: alone in window 0 a class gets all it
 * asks by rule (c), the first 25 within its reservation, the rest not. */
static void test_share_in_resv(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_share(3, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 0, 10, 1);
    set_share(&b, 1, 11, 1); /* 1,760 bytes: 27.5 transfers, the crossing one within */
    for (unsigned i = 0; i < 40; i++) {
        assert_int_equal(admit(&b, 0, 0, 0, 64), 0);
        assert_int_equal(bw_in_resv(&b), i < 25);
    }
    for (unsigned i = 0; i < 40; i++) {
        assert_int_equal(admit(&b, 1, 0, 10, 64), 10);
        assert_int_equal(bw_in_resv(&b), i < 28);
    }
    for (unsigned i = 0; i < 30; i++) { /* no reservation: never */
        admit(&b, 2, 0, 20, 64);
        assert_false(bw_in_resv(&b));
    }
    assert_int_equal(b.stat[0].resv, 1600);
    assert_int_equal(b.stat[1].resv, 28 * 64);
    assert_int_equal(b.stat[2].resv, 0);
    /* Each window has its own: window 1 starts over. */
    for (unsigned i = 0; i < 30; i++) {
        admit(&b, 0, 0, SH_WIN, 64);
        assert_int_equal(bw_in_resv(&b), i < 25);
    }
    assert_int_equal(b.stat[0].resv, 2 * 1600);
    admit(&b, 7, 0, SH_WIN, 64); /* a class it lacks: not limited, not reserved */
    assert_false(bw_in_resv(&b));
    bw_free(&b);

    /* A hard class takes only its quota, all of it within its reservation
     * (Rbwb 0: one transfer a window, not reserved). */
    mk(&b, &c);
    set_hard(&b, 0, 10);
    set_hard(&b, 1, 0);
    for (unsigned i = 0; i < 100; i++) {
        admit(&b, 0, 0, 0, 64);
        assert_true(bw_in_resv(&b));
        admit(&b, 1, 0, 0, 64);
        assert_false(bw_in_resv(&b));
    }
    assert_int_equal(b.stat[0].resv, 100 * 64);
    bw_free(&b);

    /* Beyond the ring (a backlog of more than 16 windows ahead) a class
     * books its limit, here its reservation, a window: all within it. The
     * ring's 17 windows take 250 transfers each, 25 of them reserved. */
    mk(&b, &c);
    set_share(&b, 0, 10, 1);
    for (unsigned i = 0; i < 17 * 250 + 100; i++) {
        uint64_t t = admit(&b, 0, 0, 0, 64);
        if (i >= 17 * 250) {
            assert_true(bw_in_resv(&b));
            assert_int_equal(t, (17 + (i - 17 * 250) / 25) * SH_WIN);
        }
    }
    assert_int_equal(b.stat[0].resv, 17 * 1600 + 100 * 64);
    bw_free(&b);

    /* Saturating beside another class: a quarter of the capacity (25
     * blocks) goes within the reservation, the rest by weight, outside it. */
    mk(&b, &c);
    set_share(&b, 0, 25, 1);
    set_share(&b, 1, 0, 1);
    struct stream s[2] = {closed_loop(0, 4), closed_loop(1, 4)};
    run(&b, s, 2, SH_END, SH_M0, SH_M1, 0);
    assert_near(b.stat[0].resv / (SH_CAP * SH_END), 0.25, 0.01);
    assert_near(s[0].meas_bytes / SH_BYTES, 0.625, 0.02);
    assert_int_equal(b.stat[1].resv, 0);
    bw_free(&b);

    /* The other kinds reserve nothing. */
    struct bw_cfg d[2] = {cfg_delay(2, 1, 4.0), cfg_rate(2, 100)};
    for (unsigned k = 0; k < 2; k++) {
        mk(&b, &d[k]);
        set_delay(&b, 1, 50);
        set_rate(&b, 0, 1.0);
        for (unsigned i = 0; i < 100; i++) {
            admit(&b, i % 2, 0, i, 64);
            assert_false(bw_in_resv(&b));
        }
        assert_int_equal(b.stat[0].resv + b.stat[1].resv, 0);
        bw_free(&b);
    }
}

/* Acceptance: time running backwards. Two delay ports with requests
 * jittering by up to 1000 ticks, and the two-class share case with the
 * classes as cores run in quanta. */
static void test_backwards(void **state)
{
    (void)state;
    struct bw b;
    struct bw_cfg c = cfg_delay(2, 2, 4.0);
    mk(&b, &c);
    set_delay(&b, 1, 50);
    uint64_t last[2] = {0, 0}, bytes[2] = {0, 0};
    struct rng x; /* jitter */
    rng_seed(&x, 88172645463325252ull, 0);
    /* Each port asked for 64 bytes every 8 ticks (8 bytes/tick, above both
     * links), at times that jitter by up to 1000 ticks either way. */
    for (uint64_t i = 0; i < 40000; i++) {
        for (unsigned p = 0; p < 2; p++) {
            uint64_t base = 1000 + i * 8;
            uint64_t now = base - 1000 + rng_next(&x) % 2001;
            uint64_t t = admit(&b, p, p, now, 64);
            if (t > last[p])
                last[p] = t;
            bytes[p] += 64;
        }
    }
    assert_near((double)bytes[0] / (double)last[0], 4.0, 0.05);
    assert_near((double)bytes[1] / (double)last[1], 2.0, 0.05);
    bw_free(&b);

    /* Two classes (20% and 30% reserved, weights 1 and 3) each asking for
     * twice the capacity, at times jittering by up to 1000 ticks. */
    c = cfg_share(3, SH_WIN, SH_CAP, 100);
    mk(&b, &c);
    set_share(&b, 1, 20, 1);
    set_share(&b, 2, 30, 3);
    uint64_t got[3] = {0, 0, 0};
    for (uint64_t i = 0; i < SH_END / 2; i++) {
        for (unsigned k = 1; k <= 2; k++) {
            uint64_t now = i * 2 + rng_next(&x) % 2001;
            uint64_t t = admit(&b, k, 0, now, 64);
            if (t >= SH_M0 && t < SH_M1)
                got[k] += 64;
        }
    }
    assert_near(got[1] / SH_BYTES, 0.325, 0.05);
    assert_near(got[2] / SH_BYTES, 0.675, 0.05);
    bw_free(&b);

    /* The share case with the classes as cores run in quanta, shorter and
     * longer than the window. */
    share_two(700);
    share_two(1000);
    share_two(1500);
    share_two(2500);
}

/* The same calls give the same answers. */
static void test_share_deterministic(void **state)
{
    (void)state;
    uint64_t sum[2] = {0, 0};
    for (unsigned r = 0; r < 2; r++) {
        struct bw b;
        struct bw_cfg c = cfg_share(3, 500, 3.3, 64);
        mk(&b, &c);
        set_share(&b, 0, 5, 7);
        set_share(&b, 1, 20, 1);
        set_share(&b, 2, 0, 0);
        struct rng x; /* jitter */
        rng_seed(&x, 12345, 0);
        for (unsigned i = 0; i < 50000; i++) {
            unsigned cls = (unsigned)(rng_next(&x) % 3);
            uint64_t now = i * 2 + rng_next(&x) % 300;
            sum[r] = sum[r] * 31 + admit(&b, cls, 0, now, 64);
        }
        bw_free(&b);
    }
    assert_true(sum[0] == sum[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names_and_reset),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_init_reject),
        cmocka_unit_test(test_set_clamps),
        cmocka_unit_test(test_delay_exact),
        cmocka_unit_test(test_delay_monotonic),
        cmocka_unit_test(test_delay_threads),
        cmocka_unit_test(test_spacing_exact),
        cmocka_unit_test(test_spacing_change),
        cmocka_unit_test(test_spacing_link),
        cmocka_unit_test(test_spacing_reject),
        cmocka_unit_test(test_rate_exact),
        cmocka_unit_test(test_rate_cap),
        cmocka_unit_test(test_rate_backwards),
        cmocka_unit_test(test_share_two_saturating),
        cmocka_unit_test(test_share_alone),
        cmocka_unit_test(test_share_light),
        cmocka_unit_test(test_share_wakeup),
        cmocka_unit_test(test_share_in_window),
        cmocka_unit_test(test_share_light_above_resv),
        cmocka_unit_test(test_share_reweight),
        cmocka_unit_test(test_share_weight0),
        cmocka_unit_test(test_share_hard_alone),
        cmocka_unit_test(test_share_hard_linear),
        cmocka_unit_test(test_share_hard_beside),
        cmocka_unit_test(test_share_hard_edges),
        cmocka_unit_test(test_share_in_resv),
        cmocka_unit_test(test_backwards),
        cmocka_unit_test(test_share_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
