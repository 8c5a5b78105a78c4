/* Live programs without QEMU: build/tests/fake_qemu stands in for
 * qemu-x86_64, loads the real plugin (build/qemu/qosim-plugin.so) and
 * drives it through the plugin API from a script, and live.c reads the
 * ring. What is checked: the records for a known stream (lengths, branch
 * kinds, taken from the next instruction, a load and a store of one
 * address merged into a modify), a small ring that fills and wraps many
 * times, and every way a program ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/wl/live.h"
#include "testlib.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char script[PATH_MAX];

/* The fake emulator and the plugin beside this test's build directory. */
static int setup(void **state)
{
    (void)state;
    char self[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    *strrchr(self, '/') = '\0'; /* BUILD/tests */
    snprintf(path, sizeof path, "%s/fake_qemu", self);
    setenv("QOSIM_QEMU", path, 1);
    *strrchr(self, '/') = '\0'; /* BUILD */
    snprintf(path, sizeof path, "%s/qemu/qosim-plugin.so", self);
    setenv("QOSIM_PLUGIN", path, 1);
    snprintf(script, sizeof script, "/tmp/qosim-test-live-%d.txt", (int)getpid());
    setenv("FAKE_QEMU_SCRIPT", script, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(script);
    return 0;
}

static void write_script(const char *text)
{
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Starts the scripted "program" (any x86-64 executable passes the checks;
 * the fake emulator never runs it) with a ring of ring records. */
static struct live *start(uint64_t ring)
{
    static char *argv[] = {"true", NULL};
    struct live_opts o = {.argv = argv, .in_fd = -1, .out_fd = -1, .ring = ring};
    struct live *l = NULL;
    struct err e;
    if (live_start(&l, &o, &e))
        fail_msg("live_start: %s", e.msg);
    return l;
}

/* Reads everything, n records at a time; returns the count or the error. */
static long drain(struct live *l, struct trace_rec *out, size_t cap, size_t n, struct err *e)
{
    size_t k = 0;
    struct trace_rec buf[64];
    for (;;) {
        long got = live_read(l, buf, n, e);
        if (got <= 0)
            return got < 0 ? got : (long)k;
        for (long i = 0; i < got; i++, k++)
            if (k < cap)
                out[k] = buf[i];
    }
}

#define REC(a, s, k, f) ((struct trace_rec){.addr = (a), .size = (s), .kind = (k), .flags = (f)})

static void assert_recs(const struct trace_rec *got, const struct trace_rec *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i].addr != want[i].addr || got[i].size != want[i].size ||
            got[i].kind != want[i].kind || got[i].flags != want[i].flags)
            fail_msg("record %zu: got kind %u addr 0x%llx size %u flags 0x%x, want kind %u addr "
                     "0x%llx size %u flags 0x%x",
                     i, got[i].kind, (unsigned long long)got[i].addr, got[i].size, got[i].flags,
                     want[i].kind, (unsigned long long)want[i].addr, want[i].size, want[i].flags);
}

/* mov %rcx,(%rdi); addl $1,(%rdx); dec %ecx; jnz back; call f; f: ret. */
static void test_exact_stream(void **state)
{
    (void)state;
    /* The call at 0x100a goes to 0x1010, whose return comes back to
     * 0x100f: both taken, since neither is followed by its fall-through. */
    write_script("tb 1000 48890f|830201|ffc9|75f7|e801000000\n"
                 "tb 1010 c3\n"
                 "tb 100f 90\n"
                 "x 1000\ns 2000 8\nx 1003\nl 3000 4\ns 3000 4\nx 1006\nx 1008\n"
                 "x 1000\ns 2008 8\nx 1003\nl 3000 4\ns 3004 4\nx 1006\nx 1008\n"
                 "x 100a\ns 7ff8 8\nx 1010\nl 7ff8 8\nx 100f\n"
                 "exit 0\n");
    struct live *l = start(0);
    struct trace_rec r[32];
    struct err e;
    long n = drain(l, r, 32, 5, &e);
    const uint8_t cond = TREC_F_BRANCH | TREC_F_BR(TREC_BR_COND);
    const uint8_t call = TREC_F_BRANCH | TREC_F_BR(TREC_BR_CALL);
    const uint8_t ret = TREC_F_BRANCH | TREC_F_BR(TREC_BR_RET);
    const struct trace_rec want[] = {
        REC(0x1000, 3, TREC_I, 0),
        REC(0x2000, 8, TREC_S, 0),
        REC(0x1003, 3, TREC_I, 0),
        REC(0x3000, 4, TREC_M, 0), /* a load and a store of one address */
        REC(0x1006, 2, TREC_I, 0),
        REC(0x1008, 2, TREC_I, cond | TREC_F_TAKEN), /* back to 0x1000 */
        REC(0x1000, 3, TREC_I, 0),
        REC(0x2008, 8, TREC_S, 0),
        REC(0x1003, 3, TREC_I, 0),
        REC(0x3000, 4, TREC_L, 0), /* another address: two records */
        REC(0x3004, 4, TREC_S, 0),
        REC(0x1006, 2, TREC_I, 0),
        REC(0x1008, 2, TREC_I, cond), /* falls through to 0x100a */
        REC(0x100a, 5, TREC_I, call | TREC_F_TAKEN),
        REC(0x7ff8, 8, TREC_S, 0),
        REC(0x1010, 1, TREC_I, ret | TREC_F_TAKEN),
        REC(0x7ff8, 8, TREC_L, 0),
        REC(0x100f, 1, TREC_I, 0),
    };
    assert_int_equal(n, sizeof want / sizeof want[0]);
    assert_recs(r, want, sizeof want / sizeof want[0]);
    assert_string_equal(live_why(l), "exited with status 0");
    assert_int_equal(live_status(l), 0);
    live_stop(l);
}

/* A 64-record ring, 20,000 instructions with a store each: the guest waits
 * for the reader hundreds of times, and nothing is lost or reordered. */
static void test_small_ring(void **state)
{
    (void)state;
    write_script("tb 1000 48890f|ebfb\n"
                 "loop 20000\nx 1000\ns 100000+I*8 8\nx 1003\nend\nexit 7\n");
    struct live *l = start(64);
    struct err e;
    struct trace_rec buf[64];
    uint64_t k = 0;
    long got;
    while ((got = live_read(l, buf, 7, &e)) > 0)
        for (long i = 0; i < got; i++, k++) {
            uint64_t it = k / 3;
            switch (k % 3) {
            case 0:
                assert_int_equal(buf[i].addr, 0x1000);
                break;
            case 1:
                assert_int_equal(buf[i].kind, TREC_S);
                assert_int_equal(buf[i].addr, 0x100000 + it * 8);
                break;
            default:
                assert_int_equal(buf[i].addr, 0x1003);
                assert_int_equal(buf[i].flags, TREC_F_BRANCH | TREC_F_TAKEN | TREC_F_DIRECT |
                                                   TREC_F_BR(TREC_BR_JMP));
            }
        }
    assert_int_equal(got, 0);
    assert_int_equal(k, 60000);
    assert_int_equal(live_records(l), 60000);
    assert_string_equal(live_why(l), "exited with status 7");
    assert_int_equal(live_status(l), 7);
    live_stop(l);
}

static void expect_error(const char *text, uint64_t ring, const char *msg, long records)
{
    write_script(text);
    struct live *l = start(ring);
    struct trace_rec r[64];
    struct err e;
    long n = drain(l, r, 64, 64, &e);
    if (records < 0) {
        assert_true(n < 0);
        assert_substr(e.msg, msg);
        assert_int_equal(live_status(l), -1);
    } else {
        assert_int_equal(n, records);
        assert_string_equal(live_why(l), msg);
    }
    live_stop(l);
}

static void test_endings(void **state)
{
    (void)state;
    /* A second guest thread: refused, with what ran before it delivered. */
    expect_error("tb 1000 90|90\nx 1000\nx 1001\nvcpu\nx 1000\nexit 0\n", 0,
                 "the program started a second thread (guest CPU 1); qosim runs one thread per "
                 "program",
                 -1);
    /* Killed by a signal: the task ends, saying so. The system call
     * published both instructions before it. */
    expect_error("tb 1000 90|90\nx 1000\nx 1001\nsys\nkill 11\n", 0,
                 "killed by signal 11 (Segmentation fault)", 2);
    /* No instruction at all: the program did not start. */
    expect_error("exit 1\n", 0, "the program did not start (the emulator exited with status 1", -1);
    /* One instruction with more accesses than the ring holds. */
    expect_error("tb 1000 90\nx 1000\nloop 100\nl 2000+I*8 8\nend\nexit 0\n", 64,
                 "instruction at 0x1000 made more than 64 memory accesses", -1);
}

static void test_not_startable(void **state)
{
    (void)state;
    char *argv[] = {"no-such-program-anywhere", NULL};
    struct live_opts o = {.argv = argv, .in_fd = -1, .out_fd = -1};
    struct live *l = NULL;
    struct err e;
    assert_int_equal(live_start(&l, &o, &e), -QOSIM_ENOENT);
    assert_string_equal(e.msg, "program 'no-such-program-anywhere' not found on PATH");
    assert_null(l);
    char *argv2[] = {"/etc/passwd", NULL};
    o.argv = argv2;
    assert_true(live_start(&l, &o, &e) < 0);
    assert_substr(e.msg, "not found or not executable");
    o.argv = (char *[]){"true", NULL};
    o.ring = 100;
    assert_int_equal(live_start(&l, &o, &e), -QOSIM_EINVAL);
    assert_string_equal(e.msg, "ring of 100 records: not a power of two");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_stream),
        cmocka_unit_test(test_small_ring),
        cmocka_unit_test(test_endings),
        cmocka_unit_test(test_not_startable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
