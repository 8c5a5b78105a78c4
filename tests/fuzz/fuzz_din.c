/* libFuzzer harness for the DineroIV din reader (src/sim/trace/trace_din.c).
 *
 * Each input is read as a trace file in small and large batches, with and
 * without skip-bad, plain and .xz-compressed, and the records and the first
 * error are compared with a line-by-line reference parser written here. */
#include "fuzz_trace.h"

static void check_rec(const struct trace_rec *r)
{
    FZ_CHECK(r->kind == TREC_I || r->kind == TREC_L || r->kind == TREC_S, "kind %u", r->kind);
    FZ_CHECK(r->size >= 1 && r->size <= 0xffff, "size %u", r->size);
    FZ_CHECK(r->flags == 0, "flags %u", r->flags);
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

static size_t blanks(const uint8_t *s, size_t p, size_t len)
{
    while (p < len && (s[p] == ' ' || s[p] == '\t'))
        p++;
    return p;
}

/* 1 to 16 hex digits after an optional 0x; 0 and *p moved on success. */
static int hex(const uint8_t *s, size_t *p, size_t len, uint64_t *out)
{
    size_t q = *p, nd = 0;
    uint64_t v = 0;
    if (q + 1 < len && s[q] == '0' && (s[q + 1] | 0x20) == 'x')
        q += 2;
    for (; q < len && hexval(s[q]) >= 0; q++, nd++)
        v = v << 4 | (uint64_t)hexval(s[q]);
    if (nd < 1 || nd > 16)
        return -1;
    *p = q;
    *out = v;
    return 0;
}

static void reference(const uint8_t *d, size_t n, struct fz_ref *ref)
{
    uint64_t line = 0;
    for (size_t i = 0; i < n;) {
        const uint8_t *s = d + i;
        size_t len = 0;
        while (i + len < n && s[len] != '\n')
            len++;
        i += len + 1;
        line++;
        size_t p = blanks(s, 0, len);
        if (p == len || (s[p] == '\r' && p + 1 == len))
            continue;
        const char *why = NULL;
        unsigned kind = 0;
        uint64_t a = 0, size = 0;
        if (s[p] == 'r')
            kind = TREC_L;
        else if (s[p] == 'w')
            kind = TREC_S;
        else if (s[p] == 'i')
            kind = TREC_I;
        else if (s[p] == 'm' || s[p] == 'c' || s[p] == 'v')
            why = "Dinero access type not replayed by qosim (it reads r, w and i)";
        else
            why = "unknown access type (expected r, w or i)";
        if (!why && (p + 1 == len || (s[p + 1] != ' ' && s[p + 1] != '\t')))
            why = "expected a blank after the access type";
        if (!why) {
            p = blanks(s, p + 1, len);
            if (hex(s, &p, len, &a))
                why = "address is not 1 to 16 hex digits";
        }
        if (!why) {
            size_t q = blanks(s, p, len);
            if (q == p || hex(s, &q, len, &size))
                why = "size is not 1 to 16 hex digits after a blank";
            else if (!size || size > 0xffff)
                why = "size must be 1 to 0xffff bytes";
            p = blanks(s, q, len);
        }
        if (!why && p < len && s[p] == '\r')
            p++;
        if (!why && p != len)
            why = "unexpected text after the size";
        if (why) {
            char q[64], what[160];
            trace_quote(q, sizeof q, (const char *)s, (const char *)s + len);
            snprintf(what, sizeof what, "malformed din record \"%s\": %s", q, why);
            fz_ref_bad(ref, line, -QOSIM_EPARSE, what);
            continue;
        }
        fz_ref_add(ref, a, (uint32_t)size, kind, 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_runs runs;
    fz_trace(data, size, &trace_din, check_rec, &runs);
    if (!fz_is_packed(data, size) && size < (1u << 20) - 2) {
        struct fz_ref ref = {0};
        reference(data, size, &ref);
        fz_ref_check(&ref, &runs.big, &runs.skip_big, fz_plain.path, "");
    }
    fz_runs_free(&runs);
    return 0;
}
