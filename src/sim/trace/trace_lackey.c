/* Valgrind Lackey (--trace-mem=yes): "I  ADDR,SIZE" for an instruction fetch,
 * " L ADDR,SIZE", " S ..." and " M ..." for a load, a store, and a load and
 * store of one address by one instruction; ADDR is lowercase hex, SIZE
 * decimal. Valgrind's own lines begin with "==PID==" and are skipped, as are
 * empty lines. This parser is the hot loop of `qosim cachesim`. */
#include "trace.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Hex digit values, 0xff for anything else (the ',' that ends an address). */
static uint8_t lackey_hex[256];

static void lackey_tables(void)
{
    if (lackey_hex['0'] == 0 && lackey_hex['x'] == 0xff)
        return;
    memset(lackey_hex, 0xff, sizeof lackey_hex);
    for (int i = 0; i < 16; i++) {
        lackey_hex[(uint8_t) "0123456789abcdef"[i]] = (uint8_t)i;
        lackey_hex[(uint8_t) "0123456789ABCDEF"[i]] = (uint8_t)i;
    }
}

/* Eight ASCII hex digits (first digit in the lowest byte) to their value:
 * each byte becomes its nibble ('a'-'f' and 'A'-'F' have bit 6 set, digits
 * not), then neighbouring nibbles, bytes and halves are packed together. */
static inline uint64_t lackey_hex8(uint64_t x)
{
    x = (x & 0x0f0f0f0f0f0f0f0full) + ((x >> 6) & 0x0101010101010101ull) * 9;
    x = ((x << 4) | (x >> 8)) & 0x00ff00ff00ff00ffull;
    x = ((x << 8) | (x >> 16)) & 0x0000ffff0000ffffull;
    return ((x << 16) | (x >> 32)) & 0xffffffffull;
}

/* Parses the hex address at *pp, which must end at a ','; returns the number
 * of digits (0 if none), leaving *pp on the character after them. The buffer
 * has padding, so reading 16 bytes past any line start is safe. */
static inline int lackey_addr(const char **pp, uint64_t *out)
{
    const char *p = *pp;
#ifdef __SSE2__
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i lo = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i dig = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i alp = _mm_and_si128(_mm_cmpgt_epi8(lo, _mm_set1_epi8('a' - 1)),
                                _mm_cmplt_epi8(lo, _mm_set1_epi8('f' + 1)));
    unsigned hex = (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, alp));
    int n = __builtin_ctz(~hex); /* leading hex digits, 0..16 */
    uint64_t a, b;
    if (n >= 8) {
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        a = lackey_hex8(a);
        if (n > 8)
            /* The last n-8 digits, moved up so zero bytes (value 0) lead. */
            a = a << (4 * (n - 8)) | lackey_hex8(b << (8 * (16 - n)));
    } else {
        a = 0;
        for (int i = 0; i < n; i++)
            a = a << 4 | lackey_hex[(uint8_t)p[i]];
    }
    *pp = p + n;
    *out = a;
    return n;
#else
    uint64_t a = 0;
    uint8_t h;
    while ((h = lackey_hex[(uint8_t)*p]) < 16 && p - *pp < 17) {
        a = a << 4 | h;
        p++;
    }
    int n = (int)(p - *pp);
    *pp = p;
    *out = a;
    return n;
#endif
}

/* The start of the next line; [p, end) holds whole lines. */
static const char *lackey_eol(const char *p, const char *end)
{
    return (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
}

static long lackey_read(struct trace *t, struct trace_rec *r, size_t n)
{
    size_t k = 0;
    lackey_tables();
    while (k < n) {
        if (t->pos == t->lim) {
            int rc = trace_text_more(t);
            if (rc <= 0)
                return rc < 0 ? rc : (long)k;
        }
        const char *p = t->buf + t->pos, *end = t->buf + t->lim;
        uint64_t line = t->line;
        while (k < n && p < end) {
            const char *start = p;
            unsigned kind;
            line++;
            if (p[0] == 'I' && p[1] == ' ' && p[2] == ' ') {
                kind = TREC_I;
            } else if (p[0] == ' ' && p[2] == ' ' && (p[1] == 'L' || p[1] == 'S' || p[1] == 'M')) {
                kind = p[1] == 'L' ? TREC_L : p[1] == 'S' ? TREC_S : TREC_M;
            } else if (p[0] == '=' && p[1] == '=') {
                p = lackey_eol(p, end);
                continue;
            } else if (p[0] == '\n') {
                p++;
                continue;
            } else {
                goto bad;
            }
            p += 3;
            uint64_t a;
            int nd = lackey_addr(&p, &a);
            if (!nd || nd > 16 || *p != ',')
                goto bad;
            const char *d = ++p;
            uint32_t size = 0;
            while ((unsigned)(*p - '0') < 10u && p - d < 7)
                size = size * 10 + (uint32_t)(*p++ - '0');
            if (p == d || *p != '\n')
                goto bad;
            p++;
            r[k].addr = a;
            r[k].size = size;
            r[k].kind = (uint8_t)kind;
            r[k].flags = 0;
            k++;
            continue;
        bad:
            t->line = line;
            t->pos = (size_t)(start - t->buf);
            char q[64];
            trace_quote(q, sizeof q, start, end);
            int rc =
                trace_bad(t, -QOSIM_EPARSE,
                          "malformed lackey record \"%s\" (expected \"I  ADDR,SIZE\", \" L|S|M "
                          "ADDR,SIZE\" with hex ADDR of at most 16 digits and decimal SIZE "
                          "of at most 7, or a ==PID== line)",
                          q);
            if (rc)
                return rc;
            p = lackey_eol(start, end);
        }
        t->line = line;
        t->pos = (size_t)(p - t->buf);
    }
    return (long)k;
}

const struct trace_ops trace_lackey = {
    .name = "lackey",
    .desc = "Valgrind Lackey --trace-mem=yes text (qosim trace record)",
    .unit = "",
    .read = lackey_read,
};
