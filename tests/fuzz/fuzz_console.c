/* libFuzzer harness for the console protocol (src/hw/console.c): how qosim
 * regs and the plugin's socket server (qosim vm --console) cut what they
 * read into lines (console_read) and how the server frames its reply to
 * each (console_reply), with both consoles' interpreters behind it.
 *
 * The first byte picks the console (bit 0: intel-xeon's x86 console, or
 * riscv-soc's CBQRI one) and the reply buffer (bit 1 clear: CONSOLE_REPLY
 * bytes, as the server has; set: 128 + bits 7:2 bytes, so that longer
 * output lines are cut). The rest is what a client sends, read through
 * fmemopen as the server reads its socket, each line answered as the
 * server answers it. For every line:
 *   - console_read agrees with a reader written here: the line is the
 *     bytes up to and with the next '\n' (or to the end); CONSOLE_LONG when
 *     it has more than CONSOLE_LINE - 2 characters, else CONSOLE_NUL when
 *     it holds a NUL byte, else its bytes exactly;
 *   - the reply is well framed: "\n", or lines that end in '\n' followed
 *     by "\n", with no empty line and no NUL byte before, NUL-terminated;
 *   - a refused line's reply is exactly its error line; a blank or
 *     comment-only line's is "\n"; a command's is one line (the
 *     interpreters print one line per command), the reply-too-long error
 *     when that did not fit;
 *   - every error line names the line's number in the input, and the
 *     console counted as many errors as there are error lines.
 * After the input: all of it was read (console_read gave 0 at its end,
 * never more lines than bytes plus one), and the replies, one after the
 * other and read back as qosim regs --attach reads them (console_read of
 * CONSOLE_REPLY bytes, a reply ending at an empty line), are exactly one
 * per line of the input. */
#include "fuzz_check.h"
#include "hw/cbqri_console.h"
#include "hw/x86_console.h"

#include <string.h>

static struct mach machines[2];
static struct x86 x86;
static struct cbqri cbqri;
static struct cbqri_console ck;

static void setup(unsigned riscv)
{
    struct plat p;
    struct err e;
    if (plat_load(&p, riscv ? "riscv-soc" : "intel-xeon", &e) ||
        mach_init(&machines[riscv], &p, 16, &e) ||
        (riscv ? cbqri_init(&cbqri, &machines[1], &e) || cbqri_console_init(&ck, &cbqri, &e)
               : x86_init(&x86, &machines[0], &e))) {
        fprintf(stderr, "fuzz_console: %s\n", e.msg);
        abort();
    }
}

static void x86_interp(void *self, char *line, FILE *out)
{
    x86_console_line(self, line, out);
}

static void cbqri_interp(void *self, char *line, FILE *out)
{
    cbqri_console_line(self, line, out);
}

/* Lines of reply[0, n) that start with "error:", each naming line. */
static unsigned error_lines(const char *reply, size_t n, unsigned line)
{
    unsigned count = 0;
    for (const char *s = reply; s < reply + n; s = strchr(s, '\n') + 1) {
        if (strncmp(s, "error:", 6))
            continue;
        count++;
        char *end;
        FZ_CHECK(!strncmp(s, "error: line ", 12) && strtoul(s + 12, &end, 10) == line &&
                     *end == ':',
                 "line %u's error line is '%.*s'", line, (int)strcspn(s, "\n"), s);
    }
    return count;
}

/* Whether a line the console accepted is blank or a comment (the
 * interpreter's word separators are " \t\r\n"). */
static int blank(const char *line)
{
    return line[strspn(line, " \t\r\n")] == '\0' || line[strspn(line, " \t\r\n")] == '#';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned riscv = data[0] & 1;
    size_t cap = data[0] & 2 ? 128 + (data[0] >> 2) : CONSOLE_REPLY;
    if (!machines[riscv].cpu)
        setup(riscv);
    static struct lwp_proc pr;
    struct x86_console xk = {.x = &x86, .proc = &pr};
    struct console *k = riscv ? &ck.k : &xk.k;
    void (*interp)(void *, char *, FILE *) = riscv ? cbqri_interp : x86_interp;
    void *self = riscv ? (void *)&ck : (void *)&xk;
    if (riscv) {
        cbqri_reset(&cbqri);
        for (unsigned h = 0; h < machines[1].ncpu; h++)
            ck.mode[h] = CBQRI_M;
    } else {
        x86_reset(&x86);
        lwp_proc_init(&pr, &x86, 0);
    }
    *k = (struct console){0}; /* run NULL: `run` has no tasks to run */

    const uint8_t *text = data + 1;
    size_t n = size - 1;
    uint8_t *copy = malloc(n);
    if (!copy)
        abort();
    memcpy(copy, text, n);
    FILE *in = fmemopen(copy, n, "r");
    char *all = NULL;
    size_t all_len = 0;
    FILE *replies = open_memstream(&all, &all_len);
    if (!in || !replies)
        abort();

    char line[CONSOLE_LINE], reply[CONSOLE_REPLY];
    unsigned lines = 0;
    size_t at = 0; /* where the next line starts, by the reader here */
    long r;
    while ((r = console_read(in, line, sizeof line))) {
        FZ_CHECK(at < n && lines <= n, "line %u read past the input's %zu bytes", lines + 1, n);
        lines++;
        const uint8_t *nl = memchr(text + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - text) + 1 - at : n - at;
        size_t chars = len - (nl != NULL);
        long want = chars > CONSOLE_LINE - 2         ? CONSOLE_LONG
                    : memchr(text + at, '\0', chars) ? CONSOLE_NUL
                                                     : (long)len;
        FZ_CHECK(r == want, "line %u: console_read gave %ld, not %ld", lines, r, want);
        FZ_CHECK(r < 0 || (!memcmp(line, text + at, len) && !line[len]),
                 "line %u: not the input's bytes", lines);
        at += len;
        int empty = r > 0 && blank(line);
        unsigned errors = k->errors;
        size_t got = console_reply(k, r, line, reply, cap, interp, self);
        FZ_CHECK(k->line == lines, "line %u counted as %u", lines, k->line);

        /* Framing. */
        FZ_CHECK(got >= 1 && got < cap && !reply[got] && reply[got - 1] == '\n' &&
                     (got == 1 || reply[got - 2] == '\n'),
                 "line %u: the reply ('%s') does not end in an empty line", lines, reply);
        FZ_CHECK(!memchr(reply, '\0', got), "line %u: a NUL byte in the reply", lines);
        FZ_CHECK(got == 1 || reply[0] != '\n', "line %u: an empty line first", lines);
        for (size_t i = 0; i + 2 < got; i++)
            FZ_CHECK(reply[i] != '\n' || reply[i + 1] != '\n',
                     "line %u: an empty line before the reply's end", lines);

        /* What the reply says. */
        unsigned nerr = error_lines(reply, got - 1, lines);
        FZ_CHECK(k->errors - errors == nerr, "line %u: %u errors counted, %u error lines", lines,
                 k->errors - errors, nerr);
        size_t nlines = 0;
        for (size_t i = 0; i < got - 1; i++)
            nlines += reply[i] == '\n';
        char bad[128];
        if (r < 0) {
            snprintf(bad, sizeof bad, "error: line %u: %s\n\n", lines,
                     r == CONSOLE_LONG ? "line longer than 1022 characters"
                                       : "a NUL byte in the line");
            FZ_CHECK(!strcmp(reply, bad), "line %u: '%s', not '%s'", lines, reply, bad);
        } else if (empty) {
            FZ_CHECK(got == 1, "blank line %u: the reply '%s'", lines, reply);
        } else {
            FZ_CHECK(nlines == 1, "command on line %u: the reply '%s'", lines, reply);
            int n0 = snprintf(bad, sizeof bad, "error: line %u: reply longer than", lines);
            if (!strncmp(reply, bad, (size_t)n0)) { /* cut: exactly the error line */
                snprintf(bad, sizeof bad, "error: line %u: reply longer than %zu characters\n\n",
                         lines, cap - 2);
                FZ_CHECK(!strcmp(reply, bad), "line %u: '%s', not '%s'", lines, reply, bad);
            }
        }
        FZ_CHECK(fwrite(reply, 1, got, replies) == got, "memstream");
    }
    FZ_CHECK(!ferror(in) && feof(in) && at == n && ftell(in) == (long)n,
             "the input not read to its end (%zu of %zu bytes, the stream at %ld)", at, n,
             ftell(in));
    fclose(in);
    free(copy);

    /* The client's side: one reply, up to an empty line, per line sent. */
    if (fclose(replies))
        abort();
    FILE *back = fmemopen(all, all_len, "r");
    if (!back)
        abort();
    unsigned got = 0, in_reply = 0;
    long g;
    while ((g = console_read(back, reply, sizeof reply))) {
        FZ_CHECK(g > 0, "reply %u: a line the client refuses (%ld)", got + 1, g);
        if (!strcmp(reply, "\n"))
            got++, in_reply = 0;
        else
            in_reply++;
    }
    FZ_CHECK(!in_reply && got == lines, "%u replies for %u lines (%u lines left over)", got, lines,
             in_reply);
    fclose(back);
    free(all);
    if (!riscv)
        lwp_proc_free(&pr);
    return 0;
}
