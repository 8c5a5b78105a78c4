/* libFuzzer harness for the Valgrind Lackey reader (src/sim/trace/trace_lackey.c).
 *
 * Each input is read as a trace file in small and large batches, with and
 * without skip-bad, plain and .xz-compressed; the records are compared with
 * a simple line-by-line reference parser written here, and the SSE2 reader of
 * the library with the same source compiled without SSE2 (the scalar address
 * parser). Any disagreement aborts. */
#include "fuzz_trace.h"

/* The scalar reader: trace_lackey.c again, without SSE2, under another name. */
#pragma push_macro("__SSE2__")
#undef __SSE2__
#define trace_lackey trace_lackey_scalar
#include "sim/trace/trace_lackey.c"
#undef trace_lackey
#pragma pop_macro("__SSE2__")

static void check_rec(const struct trace_rec *r)
{
    FZ_CHECK(r->size <= 9999999, "size %u", r->size);
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

/* The format, one line at a time, as plainly as it can be said. */
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
        if (len == 0 || (len >= 2 && s[0] == '=' && s[1] == '='))
            continue;
        unsigned kind;
        if (len >= 3 && s[0] == 'I' && s[1] == ' ' && s[2] == ' ')
            kind = TREC_I;
        else if (len >= 3 && s[0] == ' ' && s[1] == 'L' && s[2] == ' ')
            kind = TREC_L;
        else if (len >= 3 && s[0] == ' ' && s[1] == 'S' && s[2] == ' ')
            kind = TREC_S;
        else if (len >= 3 && s[0] == ' ' && s[1] == 'M' && s[2] == ' ')
            kind = TREC_M;
        else
            goto bad;
        size_t p = 3, nd = 0, sd = 0;
        uint64_t a = 0;
        uint32_t size = 0;
        for (; p < len && hexval(s[p]) >= 0; p++, nd++)
            a = a << 4 | (uint64_t)hexval(s[p]);
        if (nd < 1 || nd > 16 || p == len || s[p] != ',')
            goto bad;
        for (p++; p < len && s[p] >= '0' && s[p] <= '9'; p++, sd++)
            size = sd < 8 ? size * 10 + (uint32_t)(s[p] - '0') : size;
        if (sd < 1 || sd > 7 || p != len)
            goto bad;
        fz_ref_add(ref, a, size, kind, 0);
        continue;
    bad:;
        char q[64], what[160];
        trace_quote(q, sizeof q, (const char *)s, (const char *)s + len);
        snprintf(what, sizeof what, "malformed lackey record \"%s\" (expected", q);
        fz_ref_bad(ref, line, -QOSIM_EPARSE, what);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_runs runs;
    fz_trace(data, size, &trace_lackey, check_rec, &runs);
    struct fz_run strict = fz_read(fz_plain.path, &trace_lackey_scalar, 0, 4096, check_rec);
    struct fz_run skip = fz_read(fz_plain.path, &trace_lackey_scalar, 1, 4096, check_rec);

    if (!fz_is_packed(data, size) && size < (1u << 20) - 2) {
        /* Plain text that fits the buffer: both readers agree with the
         * reference parser. */
        struct fz_ref ref = {0};
        reference(data, size, &ref);
        fz_ref_check(&ref, &runs.big, &runs.skip_big, fz_plain.path, "");
        reference(data, size, &ref);
        fz_ref_check(&ref, &strict, &skip, fz_plain.path, "");
    } else {
        /* Else the scalar reader agrees with the SSE2 one in everything. */
        fz_same(&runs.big, &strict, "sse2 vs scalar");
        fz_same(&runs.skip_big, &skip, "sse2 vs scalar, skip-bad");
        FZ_CHECK(runs.skip_big.bad_first == skip.bad_first, "sse2 vs scalar: bad_first");
    }
    fz_run_free(&strict);
    fz_run_free(&skip);
    fz_runs_free(&runs);
    return 0;
}
