#include "console.h"

#include "util/conf.h"

#include <errno.h>
#include <string.h>

int console_num(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v;
    if (!s || conf_parse_u64(s, &v) || v > max)
        return -1;
    *out = v;
    return 0;
}

void console_run(struct console *k, char **w, int n, char *err, FILE *out)
{
    uint64_t ns;
    struct err e;
    if (n != 2 || console_num(w[1], 1000000000000ull, &ns))
        snprintf(err, CONSOLE_ERR_SIZE, "usage: run NS (nanoseconds, up to 1000 s)");
    else if (k->run && k->run(k->ctx, ns, &e))
        snprintf(err, CONSOLE_ERR_SIZE, "the run failed: %s", e.msg);
    else
        fputs("ok\n", out);
}

void console_line(struct console *k, char *text, FILE *out, console_cmd_fn cmd, void *self)
{
    k->line++;
    char *hash = strchr(text, '#');
    if (hash)
        *hash = '\0';
    char *w[CONSOLE_MAX_WORDS], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(text, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == CONSOLE_MAX_WORDS) {
            fprintf(out, "error: line %u: too many words\n", k->line);
            k->errors++;
            return;
        }
        w[n++] = t;
    }
    if (!n)
        return;
    char err[CONSOLE_ERR_SIZE] = "";
    cmd(self, w, n, err, out);
    if (*err) {
        fprintf(out, "error: line %u: %s\n", k->line, err);
        k->errors++;
    }
}

long console_read(FILE *in, char *buf, size_t n)
{
    size_t len = 0, chars = 0;
    int c, nul = 0;
    while ((c = getc(in)) != EOF && c != '\n') {
        nul |= c == '\0';
        if (chars++ < n - 2)
            buf[len++] = (char)c;
    }
    if (c == '\n' && chars <= n - 2)
        buf[len++] = '\n';
    buf[len] = '\0';
    if (ferror(in) || (c == EOF && !chars))
        return 0;
    return chars > n - 2 ? CONSOLE_LONG : nul ? CONSOLE_NUL : (long)len;
}

void console_bad(struct console *k, long r, size_t n, FILE *out)
{
    k->line++;
    k->errors++;
    if (r == CONSOLE_LONG)
        fprintf(out, "error: line %u: line longer than %zu characters\n", k->line, n - 2);
    else
        fprintf(out, "error: line %u: a NUL byte in the line\n", k->line);
}

size_t console_reply(struct console *k, long r, char *line, char *out, size_t n,
                     void (*interp)(void *self, char *line, FILE *out), void *self)
{
    /* What was printed: out[0, got), whole when it fits in n - 2 bytes
     * (fmemopen may clobber the last byte of a full buffer). */
    size_t got = 0;
    unsigned errors = k->errors;
    char why[80] = "";
    FILE *f = fmemopen(out, n, "w");
    if (!f) {
        k->line += r != 0;
        snprintf(why, sizeof why, "cannot answer: %s", strerror(errno));
    } else {
        if (r < 0)
            console_bad(k, r, CONSOLE_LINE, f);
        else if (r > 0)
            interp(self, line, f);
        fflush(f);
        long pos = ftell(f);
        if (ferror(f) || pos < 0 || (size_t)pos > n - 2)
            snprintf(why, sizeof why, "reply longer than %zu characters", n - 2);
        got = pos < 0 ? 0 : (size_t)pos < n - 1 ? (size_t)pos : n - 1;
        fclose(f);
    }
    /* Well framed whatever was printed: no NUL byte, no empty line, the
     * last line ended. */
    size_t len = 0;
    for (size_t i = 0; i < got; i++)
        if (out[i] && (out[i] != '\n' || (len && out[len - 1] != '\n')))
            out[len++] = out[i];
    if (len && out[len - 1] != '\n') {
        if (!*why && len < n - 2)
            out[len++] = '\n';
        else if (!*why)
            snprintf(why, sizeof why, "reply longer than %zu characters", n - 2);
    }
    if (*why) { /* whole lines that leave room for the error line */
        char msg[128];
        size_t m = (size_t)snprintf(msg, sizeof msg, "error: line %u: %s\n", k->line, why);
        size_t room = n - 2 > m ? n - 2 - m : 0;
        if (len > room)
            len = room;
        while (len && out[len - 1] != '\n')
            len--;
        k->errors += k->errors == errors; /* one error for the line */
        if (m <= n - 2 - len) {
            memcpy(out + len, msg, m);
            len += m;
        }
    }
    out[len++] = '\n';
    out[len] = '\0';
    return len;
}
