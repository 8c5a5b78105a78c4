/* hw/console.c: reading a console's lines (console_read, console_bad) and
 * framing the socket server's replies (console_reply), as qosim regs, its
 * --attach client and the plugin's server share them (docs/regs.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "hw/console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stream over the n bytes of s (NUL bytes included). */
static FILE *bytes(const char *s, size_t n)
{
    FILE *f = fmemopen((void *)s, n, "r");
    assert_non_null(f);
    return f;
}

#define STREAM(lit) bytes(lit, sizeof lit - 1)

static void test_read_lines(void **state)
{
    (void)state;
    char buf[CONSOLE_LINE];
    FILE *f = STREAM("rdmsr 0 0xc8f\ncpuid 0\r\n\n# last, without a newline");
    assert_int_equal(console_read(f, buf, sizeof buf), 14);
    assert_string_equal(buf, "rdmsr 0 0xc8f\n");
    assert_int_equal(console_read(f, buf, sizeof buf), 9); /* CRLF: the '\r' is the line's */
    assert_string_equal(buf, "cpuid 0\r\n");
    assert_int_equal(console_read(f, buf, sizeof buf), 1);
    assert_string_equal(buf, "\n");
    assert_int_equal(console_read(f, buf, sizeof buf), 25);
    assert_string_equal(buf, "# last, without a newline");
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    assert_false(ferror(f));
    fclose(f);

    f = tmpfile(); /* empty input */
    assert_non_null(f);
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    assert_false(ferror(f));
    fclose(f);

    f = fopen("/dev/null", "w"); /* a read error: 0, and ferror says so */
    assert_non_null(f);
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    assert_true(ferror(f));
    fclose(f);
}

/* n - 2 characters fit, n - 1 do not; the rest of a long line is dropped
 * and the next line reads whole. */
static void test_read_long(void **state)
{
    (void)state;
    char buf[8];
    FILE *f = STREAM("abcdef\nabcdefg\nnext\nabcdefghijklmnop\0\nabcdef");
    assert_int_equal(console_read(f, buf, sizeof buf), 7);
    assert_string_equal(buf, "abcdef\n");
    assert_int_equal(console_read(f, buf, sizeof buf), CONSOLE_LONG);
    assert_int_equal(console_read(f, buf, sizeof buf), 5);
    assert_string_equal(buf, "next\n");
    assert_int_equal(console_read(f, buf, sizeof buf), CONSOLE_LONG); /* long before NUL */
    assert_int_equal(console_read(f, buf, sizeof buf), 6);
    assert_string_equal(buf, "abcdef");
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    fclose(f);

    f = STREAM("abcdefg"); /* too long at the end of input */
    assert_int_equal(console_read(f, buf, sizeof buf), CONSOLE_LONG);
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    fclose(f);

    /* The console's own size: 1022 characters and the newline, not 1023. */
    static char s[2 * CONSOLE_LINE + 16];
    memset(s, 'x', sizeof s);
    s[CONSOLE_LINE - 2] = '\n';
    s[2 * CONSOLE_LINE - 2] = '\n';
    memcpy(s + 2 * CONSOLE_LINE - 1, "cpuid 0\n", 8);
    char line[CONSOLE_LINE];
    f = bytes(s, 2 * CONSOLE_LINE + 7);
    assert_int_equal(console_read(f, line, sizeof line), CONSOLE_LINE - 1);
    assert_int_equal(strlen(line), CONSOLE_LINE - 1);
    assert_int_equal(console_read(f, line, sizeof line), CONSOLE_LONG);
    assert_int_equal(console_read(f, line, sizeof line), 8);
    assert_string_equal(line, "cpuid 0\n");
    assert_int_equal(console_read(f, line, sizeof line), 0);
    fclose(f);
}

/* A NUL byte refuses the whole line, wherever it is; the next reads whole. */
static void test_read_nul(void **state)
{
    (void)state;
    char buf[CONSOLE_LINE];
    FILE *f = STREAM("rdmsr 0\0 0xc8f\nrdmsr 0 0xc90\n\0\n\0");
    assert_int_equal(console_read(f, buf, sizeof buf), CONSOLE_NUL);
    assert_int_equal(console_read(f, buf, sizeof buf), 14);
    assert_string_equal(buf, "rdmsr 0 0xc90\n");
    assert_int_equal(console_read(f, buf, sizeof buf), CONSOLE_NUL);
    assert_int_equal(console_read(f, buf, sizeof buf), CONSOLE_NUL);
    assert_int_equal(console_read(f, buf, sizeof buf), 0);
    fclose(f);
}

static void test_bad(void **state)
{
    (void)state;
    struct console k = {.line = 4, .errors = 1};
    char out[256];
    FILE *f = fmemopen(out, sizeof out, "w");
    assert_non_null(f);
    console_bad(&k, CONSOLE_LONG, CONSOLE_LINE, f);
    console_bad(&k, CONSOLE_NUL, CONSOLE_LINE, f);
    console_bad(&k, CONSOLE_LONG, 8, f);
    fclose(f);
    assert_string_equal(out, "error: line 5: line longer than 1022 characters\n"
                             "error: line 6: a NUL byte in the line\n"
                             "error: line 7: line longer than 6 characters\n");
    assert_int_equal(k.line, 7);
    assert_int_equal(k.errors, 4);
}

/* A console of one command, `say WORD`, and `lines N`, which prints N
 * lines of 50 characters (more than a console prints: for the cut). */
static void say(void *self, char **w, int n, char *err, FILE *out)
{
    (void)self;
    if (!strcmp(w[0], "say") && n == 2)
        fprintf(out, "%s\n", w[1]);
    else if (!strcmp(w[0], "lines") && n == 2)
        for (int i = 0; i < atoi(w[1]); i++)
            fprintf(out, "%d%049d\n", i, 0);
    else
        snprintf(err, CONSOLE_ERR_SIZE, "unknown command '%s'", w[0]);
}

static void interp(void *self, char *line, FILE *out)
{
    console_line(self, line, out, say, NULL);
}

/* Prints the line itself, newlines, NUL bytes and all (up to its '!'). */
static void raw(void *self, char *line, FILE *out)
{
    (void)self;
    size_t n = 0;
    while (line[n] != '!')
        n++;
    fwrite(line, 1, n, out);
}

static size_t reply(struct console *k, const char *text, char *out, size_t n)
{
    char line[CONSOLE_LINE];
    snprintf(line, sizeof line, "%s", text);
    return console_reply(k, (long)strlen(line), line, out, n, interp, k);
}

static void test_reply(void **state)
{
    (void)state;
    struct console k = {0};
    char out[CONSOLE_REPLY], line[CONSOLE_LINE] = "";
    assert_int_equal(reply(&k, "say hello\n", out, sizeof out), 7);
    assert_string_equal(out, "hello\n\n");
    assert_int_equal(reply(&k, "  # a comment\r\n", out, sizeof out), 1); /* nothing to say */
    assert_string_equal(out, "\n");
    assert_int_equal(reply(&k, "\n", out, sizeof out), 1);
    assert_string_equal(out, "\n");
    assert_int_equal(reply(&k, "frob", out, sizeof out), 39);
    assert_string_equal(out, "error: line 4: unknown command 'frob'\n\n");
    assert_int_equal(console_reply(&k, CONSOLE_LONG, line, out, sizeof out, interp, &k), 49);
    assert_string_equal(out, "error: line 5: line longer than 1022 characters\n\n");
    assert_int_equal(console_reply(&k, CONSOLE_NUL, line, out, sizeof out, interp, &k), 39);
    assert_string_equal(out, "error: line 6: a NUL byte in the line\n\n");
    assert_int_equal(reply(&k, "lines 3", out, sizeof out), 3 * 51 + 1);
    assert_int_equal(k.line, 7);
    assert_int_equal(k.errors, 3);
}

/* Output that does not fit in n - 2 bytes is cut to whole lines and ends
 * in an error line: one error for the line, however many it had. */
static void test_reply_cut(void **state)
{
    (void)state;
    struct console k = {0};
    char out[128];
    /* 2 lines of 51: 102 bytes fit in 126. */
    assert_int_equal(reply(&k, "lines 2", out, sizeof out), 103);
    assert_int_equal(k.errors, 0);
    /* 3 do not: the first, then the error line (48 bytes; 2 lines need 150). */
    assert_int_equal(reply(&k, "lines 3", out, sizeof out), 51 + 48 + 1);
    assert_string_equal(out, "00000000000000000000000000000000000000000000000000\n"
                             "error: line 2: reply longer than 126 characters\n\n");
    assert_int_equal(k.errors, 1);
    /* An error line that does not fit is replaced: still one error. */
    char big[200];
    memset(big, 'z', sizeof big);
    big[sizeof big - 1] = '\0';
    assert_int_equal(reply(&k, big, out, sizeof out), 49);
    assert_string_equal(out, "error: line 3: reply longer than 126 characters\n\n");
    assert_int_equal(k.errors, 2);
    /* 126 bytes fit exactly; 127 do not. */
    char line[CONSOLE_LINE];
    memset(line, 'a', 125);
    strcpy(line + 125, "\n!");
    assert_int_equal(console_reply(&k, 127, line, out, sizeof out, raw, NULL), 127);
    assert_int_equal(out[125], '\n');
    assert_int_equal(out[126], '\n');
    assert_int_equal(out[127], '\0');
    assert_int_equal(k.errors, 2);
    memset(line, 'a', 126);
    strcpy(line + 126, "\n!");
    assert_int_equal(console_reply(&k, 128, line, out, sizeof out, raw, NULL), 49);
    assert_string_equal(out, "error: line 3: reply longer than 126 characters\n\n");
    assert_int_equal(k.errors, 3);
    /* Past the buffer altogether: the same. */
    static char huge[CONSOLE_LINE];
    memset(huge, 'b', sizeof huge - 2);
    huge[sizeof huge - 2] = '!';
    assert_int_equal(console_reply(&k, 1, huge, out, sizeof out, raw, NULL), 49);
    assert_string_equal(out, "error: line 3: reply longer than 126 characters\n\n");
}

/* Whatever the interpreter prints, the reply is well framed: no empty
 * line, no NUL byte, the last line ended. */
static void test_reply_framing(void **state)
{
    (void)state;
    struct console k = {0};
    char out[CONSOLE_REPLY];
    char line[] = "\n\na\n\nb\0c!";
    assert_int_equal(console_reply(&k, 1, line, out, sizeof out, raw, NULL), 6);
    assert_string_equal(out, "a\nbc\n\n");
    char nl[] = "\n\n!";
    assert_int_equal(console_reply(&k, 1, nl, out, sizeof out, raw, NULL), 1);
    assert_string_equal(out, "\n");
    assert_int_equal(k.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_lines),    cmocka_unit_test(test_read_long),
        cmocka_unit_test(test_read_nul),      cmocka_unit_test(test_bad),
        cmocka_unit_test(test_reply),         cmocka_unit_test(test_reply_cut),
        cmocka_unit_test(test_reply_framing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
