/* util/: the error list and messages, the JSON writer, paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "util/err.h"
#include "util/json.h"
#include "util/path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_errnames(void **state)
{
    (void)state;
    assert_string_equal(qosim_errname(0), "QOSIM_OK");
    assert_string_equal(qosim_errname(-QOSIM_ENOMEM), "QOSIM_ENOMEM");
    assert_string_equal(qosim_errname(-QOSIM_EPARSE), "QOSIM_EPARSE");
    assert_string_equal(qosim_errname(-QOSIM_ECHILD), "QOSIM_ECHILD");
    assert_string_equal(qosim_strerror(-QOSIM_ETRUNC), "truncated input");
    assert_string_equal(qosim_strerror(-QOSIM_EGEOM), "invalid cache geometry");
    /* Codes outside the list are named as unknown, never read out of bounds. */
    assert_string_equal(qosim_errname(-1000), "QOSIM_E?");
    assert_string_equal(qosim_errname(5), "QOSIM_E?");
    assert_string_equal(qosim_strerror(-QOSIM_ERR_COUNT_), "unknown error");
}

static void test_err_set(void **state)
{
    (void)state;
    struct err e = {0};
    assert_int_equal(err_set(&e, -QOSIM_EPARSE, "bad %s", "thing"), -QOSIM_EPARSE);
    assert_int_equal(e.code, -QOSIM_EPARSE);
    assert_string_equal(e.msg, "bad thing");
    /* A location prefixed to the message already there. */
    err_set(&e, e.code, "%s:%d: %s", "f.lackey", 7, e.msg);
    assert_string_equal(e.msg, "f.lackey:7: bad thing");
    /* Long messages are cut, not overflowed. */
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    err_set(&e, -QOSIM_EIO, "%s", big);
    assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
    assert_int_equal(err_set(NULL, -QOSIM_EIO, "ignored"), -QOSIM_EIO);
}

static void test_json(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct json j;
    json_init(&j, f);
    json_obj_begin(&j, NULL);
    json_str(&j, "s", "a\"b\\c\n\x01");
    json_u64(&j, "n", 18446744073709551615ull);
    json_arr_begin(&j, "a");
    json_u64(&j, NULL, 1);
    json_u64(&j, NULL, 2);
    json_arr_end(&j);
    json_obj_begin(&j, "empty");
    json_obj_end(&j);
    json_f64(&j, "x", 0.5);
    json_obj_end(&j);
    fclose(f);
    assert_string_equal(buf, "{\n"
                             "  \"s\": \"a\\\"b\\\\c\\u000a\\u0001\",\n"
                             "  \"n\": 18446744073709551615,\n"
                             "  \"a\": [\n"
                             "    1,\n"
                             "    2\n"
                             "  ],\n"
                             "  \"empty\": {},\n"
                             "  \"x\": 0.5\n"
                             "}\n");
    free(buf);
}

/* path_beside_exe: the folder of this test's own binary, then rel; -1
 * when that does not fit. */
static void test_beside_exe(void **state)
{
    (void)state;
    char exe[4096], out[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    char want[4200];
    snprintf(want, sizeof want, "%s/qemu/x.so", exe);
    assert_int_equal(path_beside_exe("qemu/x.so", out, sizeof out), 0);
    assert_string_equal(out, want);
    assert_int_equal(path_beside_exe("qemu/x.so", out, strlen(want)), -1);
    assert_int_equal(path_beside_exe("qemu/x.so", out, strlen(want) + 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errnames),
        cmocka_unit_test(test_err_set),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_beside_exe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
