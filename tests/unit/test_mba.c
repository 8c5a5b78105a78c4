/* Unit tests for Intel MBA's request and spacing models (sim/mem/bw_delay.c
 * with qos.bandwidth.model: request or spacing). Request: a throttle value
 * adds a fixed delay to each request leaving L2, so a core gets about N
 * lines per (latency + delay) for N requests in flight. On a test profile
 * whose streaming core is link-bound unthrottled, the bandwidth at delays
 * 0..90 follows the calibration; a pointer chase (one request in flight)
 * and a stream (mlp in flight) keep different fractions at one delay; the
 * link model stays what it was. Spacing: a throttle value is a request
 * rate per core, which caps the stream and leaves the chase alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cpu/core.h"
#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "sim/wl/wl.h"
#include "util/conf.h"

#include "qosim.h"
#include "tiny_plat.h"

/* One socket, two cores, 1 GHz (a cycle is a nanosecond). A stream of
 * line-sized loads misses every level: its latency-bound rate, 64 * mlp /
 * (L3 + memory latency) = 64 * 16 / 140 = 7.3 bytes a cycle, is above the
 * link's 6, so unthrottled it runs at the link's rate and a delay D leaves
 * it min(6, 64 * 16 / (140 + D)), as Intel MBA behaves on one streaming
 * core ("below about 70 barely throttles", issue 23). The calibration: the
 * delays that leave it 100, 100, 100, 100, 100, 100, 96, 90, 60 and 30% at
 * throttle values 0..90 (the figures for one streaming core
 * between the measured points): a line takes cpi + (140 + D) / 16 cycles
 * when latency-bound, 64 / 6 at the link, so D = 16 * (64 / (6 f) - 0.25)
 * - 140 cycles, rounded. */
static const char profile[] = "name: mba-test\n"
                              "vendor: intel\n"
                              "topology: {sockets: 1, modules: 2}\n"
                              "core: {frequency: 1GHz, cpi: 0.25, mlp: 16, link: 6}\n"
                              "caches:\n"
                              "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                              "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                              "  L2: {size: 4K, ways: 4, latency: 10}\n"
                              "  L3: {size: 16K, ways: 8, latency: 40}\n"
                              "memory: {channels: 4, peak: 400GB/s, latency: 100ns}\n"
                              "qos:\n"
                              "  bandwidth:\n"
                              "    kind: delay\n"
                              "    classes: 4\n"
                              "    max: 90\n"
                              "    granularity: 10\n"
                              "    model: %s\n"
                              "%s";

static const char calib[] = "    request_delay: [0, 0, 0, 0, 0, 34, 46, 140, 425]\n";

static struct mach M;

static void build(const char *model, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text, profile, model, extra);
    text_mach(&M, "mba-test.yaml", text, 2, NULL);
}

static int teardown(void **state)
{
    (void)state;
    mach_free(&M);
    return 0;
}

/* Bytes per cycle task 0 reads from memory running `pattern` over 64 MiB
 * (every access a new line: mem_ratio 1, 64-byte accesses) on CPU 0 in
 * class 1 throttled by `delay`, for 200k cycles after a 20k-cycle warm-up. */
static double run_bw(enum wl_pattern pattern, unsigned delay)
{
    struct wl *w = line_wl(pattern, 64ull << 20, 1);
    struct err e = {0};
    static struct core_task t;
    core_task_init(&t, w, mach_phys_base(0, 0));
    struct bw_class_set s;
    bw_class_reset(BW_DELAY, &s);
    s.delay_pct = delay;
    assert_int_equal(mach_set_bw(&M, 0, 1, &s), 0);
    struct mach_cpu *p = &M.cpu[0];
    mach_set_assoc(&M, 0, 0, 1, 0);
    uint64_t warm = p->now + 20000 * MACH_TICK;
    assert_int_equal(core_run(&M, p, &t, warm, &e), 0);
    uint64_t b0 = M.ts[0].rd_bytes, t0 = p->now;
    assert_int_equal(core_run(&M, p, &t, t0 + 200000 * MACH_TICK, &e), 0);
    wl_free(w);
    return (double)(M.ts[0].rd_bytes - b0) / ((double)(p->now - t0) / MACH_TICK);
}

/* One streaming core at throttle values 0..90 gets the calibrated share of
 * its unthrottled bandwidth, within 5 percentage points. */
static void test_request_stream_calibration(void **state)
{
    (void)state;
    static const double want[10] = {1, 1, 1, 1, 1, 1, 0.96, 0.90, 0.60, 0.30};
    build("request", calib);
    double free_bw = run_bw(WL_SEQ, 0);
    /* Link-bound: 6 bytes a cycle, less the cpi's share (0.25 of each line's time). */
    if (free_bw < 5.0 || free_bw > 6.05)
        fail_msg("unthrottled stream: %.3f bytes/cycle, expected the link's 6 or just below",
                 free_bw);
    for (unsigned d = 0; d <= 90; d += 10) {
        double f = run_bw(WL_SEQ, d) / free_bw;
        if (f < want[d / 10] - 0.05 || f > want[d / 10] + 0.05)
            fail_msg("delay %u: the stream keeps %.1f%% of its bandwidth, calibration %.0f%%", d,
                     100 * f, 100 * want[d / 10]);
    }
}

/* The link model is unchanged: at delay 60 the stream gets 40% of the
 * link, 2.4 bytes a cycle, less than the request model's 96%. */
static void test_link_model_kept(void **state)
{
    (void)state;
    build("link", "");
    double bw = run_bw(WL_SEQ, 60);
    if (bw < 2.3 || bw > 2.45)
        fail_msg("link model, delay 60: %.3f bytes/cycle, expected 40%% of 6", bw);
}

/* A pointer chase has one request in flight: a delay D costs it D of every
 * (L + D), L its line time unthrottled (L2, L3 and memory latency and the
 * cpi), whatever the stream keeps. At delay 80 (140 cycles) the chase keeps
 * L / (L + 140), about 50%, the stream 60%: different fractions at one
 * setting, as requests in flight differ. */
static void test_request_depends_on_inflight(void **state)
{
    (void)state;
    build("request", calib);
    double s0 = run_bw(WL_SEQ, 0), s80 = run_bw(WL_SEQ, 80);
    double c0 = run_bw(WL_CHASE, 0), c80 = run_bw(WL_CHASE, 80);
    double fs = s80 / s0, fc = c80 / c0;
    /* The chase's line time at delay 0, from its measured rate. */
    double l = 64 / c0, want = l / (l + 140);
    if (fc < want - 0.03 || fc > want + 0.03)
        fail_msg("chase at delay 80 keeps %.3f, expected %.3f", fc, want);
    if (fs - fc < 0.05)
        fail_msg("stream keeps %.3f and chase %.3f at delay 80: no difference", fs, fc);
}

/* Two cores at once, both in class 1: CPU 0 streams, CPU 1 chases
 * pointers; bytes per cycle each reads over 200k cycles at `delay`, run in
 * 1000-cycle quanta side by side. */
static void run_pair(unsigned delay, double *stream, double *chase)
{
    struct wl *w[2];
    static struct core_task t[2];
    struct err e = {0};
    for (unsigned c = 0; c < 2; c++) {
        w[c] = line_wl(c ? WL_CHASE : WL_SEQ, 64ull << 20, 1 + c);
        core_task_init(&t[c], w[c], mach_phys_base(0, c));
        mach_set_assoc(&M, c, (int)c, 1, c);
    }
    uint64_t base = M.cpu[0].now > M.cpu[1].now ? M.cpu[0].now : M.cpu[1].now;
    M.cpu[0].now = M.cpu[1].now = base;
    struct bw_class_set s;
    bw_class_reset(BW_DELAY, &s);
    s.delay_pct = delay;
    assert_int_equal(mach_set_bw(&M, 0, 1, &s), 0);
    uint64_t b0[2] = {0, 0}, t0 = base + 20000 * MACH_TICK;
    for (uint64_t q = base + 1000 * MACH_TICK; q <= base + 220000 * MACH_TICK;
         q += 1000 * MACH_TICK)
        for (unsigned c = 0; c < 2; c++) {
            assert_int_equal(core_run(&M, &M.cpu[c], &t[c], q, &e), 0);
            if (q == t0)
                b0[c] = M.ts[c].rd_bytes;
        }
    double span = 200000;
    *stream = (double)(M.ts[0].rd_bytes - b0[0]) / span;
    *chase = (double)(M.ts[1].rd_bytes - b0[1]) / span;
    for (unsigned c = 0; c < 2; c++)
        wl_free(w[c]);
}

/* At one throttle value, at once: the request model throttles the chase
 * (one request in flight) to L / (L + D) and the stream to its
 * calibration, 60% at delay 80; the link model leaves a chase that never
 * fills its link untouched, and cuts the stream to 20% of the link. */
static void test_two_cores_one_setting(void **state)
{
    (void)state;
    double s0, c0, s80, c80;
    build("request", calib);
    run_pair(0, &s0, &c0);
    run_pair(80, &s80, &c80);
    double l = 64 / c0, fc = c80 / c0, fs = s80 / s0;
    if (fs < 0.55 || fs > 0.65 || fc < l / (l + 140) - 0.03 || fc > l / (l + 140) + 0.03)
        fail_msg("request model, delay 80: stream keeps %.3f, chase %.3f (expected 0.60 and %.3f)",
                 fs, fc, l / (l + 140));
    mach_free(&M);
    build("link", "");
    run_pair(0, &s0, &c0);
    run_pair(80, &s80, &c80);
    if (c80 / c0 < 0.97 || s80 < 1.15 || s80 > 1.25)
        fail_msg("link model, delay 80: chase keeps %.3f, stream reads %.3f bytes/cycle", c80 / c0,
                 s80);
}

/* The spacing model (qos.bandwidth.model: spacing): delay 80 lets one
 * request leave a core's L2 every 40 cycles, delay 90 every 80, the rest
 * do not space. Two cores in class 1 at once: the stream (16 requests in
 * flight, link-bound at 6 bytes a cycle unthrottled) is held to a line a
 * spacing, 1.6 and 0.8 bytes a cycle; the chase, one request per line time
 * L (about 150 cycles, longer than either spacing), is not slowed at all.
 * The stream's throttle is its own core's: the chase's requests do not
 * count against it. */
static const char spacing[] = "    request_spacing: [0, 0, 0, 0, 0, 0, 0, 40, 80]\n";

static void test_spacing_caps_the_stream_only(void **state)
{
    (void)state;
    double s0, c0, s80, c80, s90, c90;
    build("spacing", spacing);
    run_pair(0, &s0, &c0);
    run_pair(80, &s80, &c80);
    run_pair(90, &s90, &c90);
    if (s0 < 5.0 || 64 / c0 < 80)
        fail_msg("unthrottled: stream %.3f bytes/cycle, chase line time %.1f cycles", s0, 64 / c0);
    if (s80 < 1.6 * 0.97 || s80 > 1.6 * 1.001 || s90 < 0.8 * 0.97 || s90 > 0.8 * 1.001)
        fail_msg("stream at delay 80 / 90: %.3f / %.3f bytes/cycle, expected 1.6 / 0.8", s80, s90);
    if (c80 / c0 < 0.98 || c90 / c0 < 0.98)
        fail_msg("chase at delay 80 / 90 keeps %.3f / %.3f, expected all of it", c80 / c0,
                 c90 / c0);
}

/* Profile errors name the key. */
static void bad_profile(const char *model, const char *extra, const char *msg)
{
    char text[2048];
    snprintf(text, sizeof text, profile, model, extra);
    struct conf c;
    struct err e = {0};
    struct plat p;
    assert_int_equal(conf_load_mem(&c, "mba-test.yaml", text, strlen(text), &e), 0);
    assert_int_not_equal(plat_from_conf(&p, &c, &e), 0);
    conf_free(&c);
    if (!strstr(e.msg, msg) || !strstr(e.msg, "mba-test.yaml:"))
        fail_msg("'%s' lacks '%s'", e.msg, msg);
}

static void test_profile_errors(void **state)
{
    (void)state;
    bad_profile("request", "", "model: request needs request_delay");
    bad_profile("link", calib, "request_delay needs model: request");
    bad_profile("request", "    request_delay: [1, 2, 3]\n", "3 entries for 9 throttle steps");
    bad_profile("request", "    request_delay: [0, 0, 0, 0, 0, 50, 46, 140, 425]\n",
                "a larger throttle value delays no less");
    bad_profile("queue", "", "model");
    bad_profile("spacing", "", "model: spacing needs request_spacing");
    bad_profile("request", spacing, "request_spacing needs model: spacing");
    bad_profile("link", spacing, "request_spacing needs model: spacing");
    bad_profile("spacing", calib, "request_delay needs model: request");
    bad_profile("spacing", "    request_spacing: [1, 2, 3]\n", "3 entries for 9 throttle steps");
    bad_profile("spacing", "    request_spacing: [0, 0, 0, 0, 0, 5, 4.5, 8, 16]\n",
                "4.5 cycles at 70 is less than 5 at 60: a larger throttle value spaces no less");
    bad_profile("spacing", "    request_spacing: [0, 0, 0, 0, -1, 5, 6, 8, 16]\n",
                "request_spacing[4]: -1 is out of range");
    bad_profile("spacing", "    request_spacing: [0, 0, 0, 0, .inf, 5, 6, 8, 16]\n",
                "request_spacing[4]: expected a number");
    bad_profile("spacing", "    request_spacing: [0, 0, 0, 0, nan, 5, 6, 8, 16]\n",
                "request_spacing[4]: expected a number");
    bad_profile("spacing", "    request_spacing: [0, 0, 0, 0, 1e300, 5, 6, 8, 16]\n",
                "request_spacing[4]: 1e300 is out of range");
    bad_profile("spacing", "    request_spacing: 40\n", "request_spacing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_request_stream_calibration, teardown),
        cmocka_unit_test_teardown(test_link_model_kept, teardown),
        cmocka_unit_test_teardown(test_request_depends_on_inflight, teardown),
        cmocka_unit_test_teardown(test_two_cores_one_setting, teardown),
        cmocka_unit_test_teardown(test_spacing_caps_the_stream_only, teardown),
        cmocka_unit_test(test_profile_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
