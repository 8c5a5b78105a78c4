/* The table of trace formats, and what every reader shares: opening, the
 * text line buffer and error reporting. */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_BUF (1u << 20) /* also the longest line a text trace may have */
#define TRACE_PAD 64         /* zeros after the data: parsers may look a few bytes ahead */

static const struct trace_ops *const trace_table[] = {&trace_lackey, &trace_champsim, &trace_din,
                                                      &trace_qtr};

const struct trace_ops *trace_at(unsigned n)
{
    return n < sizeof trace_table / sizeof trace_table[0] ? trace_table[n] : NULL;
}

const struct trace_ops *trace_find(const char *name)
{
    for (unsigned i = 0; trace_at(i); i++)
        if (!strcmp(trace_at(i)->name, name))
            return trace_at(i);
    return NULL;
}

const char *trace_guess(const char *path)
{
    if (strstr(path, ".qtr"))
        return "qtr";
    if (strstr(path, "champsim"))
        return "champsim";
    if (strstr(path, ".din"))
        return "din";
    return "lackey";
}

int trace_open(struct trace *t, const char *path, const struct trace_ops *ops, int skip_bad,
               struct err *e)
{
    memset(t, 0, sizeof *t);
    t->ops = ops;
    t->skip_bad = skip_bad;
    snprintf(t->name, sizeof t->name, "%s", strcmp(path, "-") ? path : "<stdin>");
    int rc = bsrc_open(&t->src, path, e);
    if (rc)
        return err_set(e, rc, "%s: %s", t->name, e ? e->msg : "");
    return 0;
}

int trace_reopen(struct trace *t, const char *path, struct err *e)
{
    if (t->whole) {
        t->pos = t->lim = 0;
        t->len = t->whole;
        t->line = 0;
        return 0;
    }
    char *buf = t->buf;
    size_t cap = t->cap;
    bsrc_close(&t->src);
    free(t->priv);
    int rc = trace_open(t, path, t->ops, t->skip_bad, e);
    t->buf = buf;
    t->cap = cap;
    return rc;
}

long trace_read(struct trace *t, struct trace_rec *r, size_t n)
{
    return t->ops->read(t, r, n);
}

void trace_close(struct trace *t)
{
    bsrc_close(&t->src);
    free(t->buf);
    t->buf = NULL;
    free(t->priv);
    t->priv = NULL;
}

int trace_text_more(struct trace *t)
{
    if (!t->buf) {
        t->buf = calloc(1, TRACE_BUF + TRACE_PAD);
        if (!t->buf)
            return err_set(&t->err, -QOSIM_ENOMEM, "%s: out of memory", t->name);
        t->cap = TRACE_BUF;
    }
    /* Keep the unparsed tail (a partial line) and read behind it. */
    memmove(t->buf, t->buf + t->pos, t->len - t->pos);
    t->len -= t->pos;
    t->pos = t->lim = 0;
    for (;;) {
        char *nl = t->len ? memrchr(t->buf, '\n', t->len) : NULL;
        int full = t->len >= t->cap - 1;
        if (nl && (t->eof || full || nl == t->buf + t->len - 1)) {
            t->lim = (size_t)(nl - t->buf) + 1;
            break;
        }
        if (t->eof) {
            if (!t->len)
                return 0;
            t->buf[t->len++] = '\n'; /* the cap leaves room: a last line without newline */
            t->lim = t->len;
            break;
        }
        if (full)
            return err_set(&t->err, -QOSIM_EPARSE, "%s:%llu: line longer than %u bytes", t->name,
                           (unsigned long long)t->line + 1, TRACE_BUF - 1);
        long r = bsrc_read(&t->src, t->buf + t->len, t->cap - 1 - t->len, &t->err);
        if (r < 0) {
            /* Name the line where the data stops, past the whole lines already
             * in the buffer (t->line + 1 named the buffer's first line: line 1
             * for any small .xz, up to 1 MiB early for a large one). */
            uint64_t line = t->line + 1;
            for (const char *q = t->buf, *end = t->buf + t->len;
                 (q = memchr(q, '\n', (size_t)(end - q))); q++)
                line++;
            return err_set(&t->err, (int)r, "%s:%llu: %s", t->name, (unsigned long long)line,
                           t->err.msg);
        }
        if (!r) {
            t->eof = 1;
            /* All of the input came in reads that followed each other from
             * the buffer's start, and nothing was left over to move: it is
             * all still there, whole lines. */
            if (!t->split && !t->len && t->first && t->buf[t->first - 1] == '\n')
                t->whole = t->first;
        } else if (!t->split && t->len == t->first)
            t->first += (size_t)r;
        else
            t->split = 1;
        t->len += (size_t)r;
    }
    memset(t->buf + t->len, 0, TRACE_PAD);
    return 1;
}

int trace_bad(struct trace *t, int code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (t->skip_bad && (code == -QOSIM_EPARSE || code == -QOSIM_ETRUNC)) {
        if (!t->bad++)
            t->bad_first = t->line;
        return 0;
    }
    /* Binary formats count records, not lines: say so, as their I/O errors do. */
    return err_set(&t->err, code, "%s:%s%llu: %s", t->name, t->ops->unit,
                   (unsigned long long)t->line, msg);
}

void trace_quote(char *out, size_t cap, const char *s, const char *end)
{
    size_t k = 0;
    for (; s < end && *s != '\n' && k + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[k++] = (char)c;
        else
            k += (size_t)snprintf(out + k, cap - k, "\\x%02x", c);
    }
    if (s < end && *s != '\n' && k + 4 <= cap) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k < cap ? k : cap - 1] = '\0';
}
