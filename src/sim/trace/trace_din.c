/* DineroIV extended din (-informat D): "TYPE ADDR SIZE" per line, TYPE one of
 * r (data read), w (data write), i (instruction fetch), ADDR and SIZE in hex
 * (an optional 0x is accepted), fields separated by blanks. Dinero's other
 * types (m, c, v) do not describe accesses a cache simulator replays and are
 * refused by name. */
#include "trace.h"

#include <string.h>

static int din_hex(const char **pp, uint64_t *out)
{
    const char *p = *pp;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    uint64_t v = 0;
    int nd = 0;
    for (;; p++, nd++) {
        unsigned c = (unsigned char)*p, d;
        if (c - '0' < 10u)
            d = c - '0';
        else if ((c | 0x20) - 'a' < 6u)
            d = (c | 0x20) - 'a' + 10;
        else
            break;
        v = v << 4 | d;
    }
    if (!nd || nd > 16)
        return -1;
    *pp = p;
    *out = v;
    return 0;
}

static const char *din_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static long din_read(struct trace *t, struct trace_rec *r, size_t n)
{
    size_t k = 0;
    while (k < n) {
        if (t->pos == t->lim) {
            int rc = trace_text_more(t);
            if (rc <= 0)
                return rc < 0 ? rc : (long)k;
        }
        const char *start = t->buf + t->pos, *end = t->buf + t->lim;
        const char *eol = (const char *)memchr(start, '\n', (size_t)(end - start)) + 1;
        const char *p = din_blanks(start);
        const char *why = NULL;
        uint64_t a = 0, size = 0;
        unsigned kind = 0;
        t->line++;
        t->pos = (size_t)(eol - t->buf);
        /* A CR only ends a blank line before the newline: "\rw 10 4" was
         * skipped as blank, silently dropping the record. */
        if (*p == '\n' || (*p == '\r' && p[1] == '\n'))
            continue;
        switch (*p) {
        case 'r':
            kind = TREC_L;
            break;
        case 'w':
            kind = TREC_S;
            break;
        case 'i':
            kind = TREC_I;
            break;
        case 'm':
        case 'c':
        case 'v':
            why = "Dinero access type not replayed by qosim (it reads r, w and i)";
            break;
        default:
            why = "unknown access type (expected r, w or i)";
        }
        if (!why && p[1] != ' ' && p[1] != '\t')
            why = "expected a blank after the access type";
        if (!why) {
            p = din_blanks(p + 1);
            if (din_hex(&p, &a))
                why = "address is not 1 to 16 hex digits";
        }
        if (!why) {
            const char *q = din_blanks(p);
            if (q == p || din_hex(&q, &size))
                why = "size is not 1 to 16 hex digits after a blank";
            else if (!size || size > 0xffff)
                why = "size must be 1 to 0xffff bytes";
            p = din_blanks(q);
        }
        if (!why && *p == '\r')
            p++;
        if (!why && *p != '\n')
            why = "unexpected text after the size";
        if (why) {
            char q[64];
            trace_quote(q, sizeof q, start, end);
            int rc = trace_bad(t, -QOSIM_EPARSE, "malformed din record \"%s\": %s", q, why);
            if (rc)
                return rc;
            continue;
        }
        r[k++] = (struct trace_rec){.addr = a, .size = (uint32_t)size, .kind = (uint8_t)kind};
    }
    return (long)k;
}

const struct trace_ops trace_din = {
    .name = "din",
    .desc = "DineroIV extended din text: r|w|i ADDR SIZE (hex)",
    .unit = "",
    .read = din_read,
};
