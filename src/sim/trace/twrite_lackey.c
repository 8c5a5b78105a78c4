/* The Lackey writer, plain or .xz: each record as valgrind's lackey prints
 * it ("I  %08lx,%lu\n", " L ...", " S ...", " M ..."), so its reader and any
 * tool made for lackey's output take it. The text holds no flags; a size of
 * more than the 7 digits qosim's reader takes (lackey's are at most 512) is
 * left out and counted in tw_dropped, so what is written reads back. */
#include "twrite_impl.h"

#include <string.h>

#define LK_SIZE_MAX 9999999

/* "I  " + 16 hex digits + ',' + 7 decimal digits + '\n' */
_Static_assert(3 + 16 + 1 + 7 + 1 <= TW_REC_MAX, "tw_room leaves room for a line");

static int lk_put(struct tw *w, const struct trace_rec *r, size_t n, struct err *e)
{
    static const char prefix[4][4] = {"I  ", " L ", " S ", " M "};
    for (size_t i = 0; i < n; i++) {
        const struct trace_rec *x = &r[i];
        if (x->kind > TREC_M)
            return tw_bad(w, i, e, "kind %u is not I, L, S or M", x->kind);
        if (x->size > LK_SIZE_MAX) {
            w->dropped++;
            continue;
        }
        int rc = tw_room(w, e);
        if (rc)
            return rc;
        char *p = (char *)w->buf + w->len;
        memcpy(p, prefix[x->kind], 3);
        p += 3;
        /* %08llx: at least 8 digits, lowercase. */
        int nd = 8;
        while (nd < 16 && x->addr >> (4 * nd))
            nd++;
        for (int d = nd - 1; d >= 0; d--)
            *p++ = "0123456789abcdef"[(x->addr >> (4 * d)) & 15];
        *p++ = ',';
        char dec[7];
        int k = 0;
        uint32_t v = x->size;
        do
            dec[k++] = (char)('0' + v % 10);
        while ((v /= 10));
        while (k)
            *p++ = dec[--k];
        *p++ = '\n';
        w->len = (size_t)((uint8_t *)p - w->buf);
    }
    return 0;
}

const struct tw_ops tw_lackey = {
    .name = "lackey",
    .desc = "Valgrind Lackey text, plain or .xz; no flags",
    .put = lk_put,
};
