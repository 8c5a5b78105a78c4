/* libFuzzer harness for the qtr reader (src/sim/trace/trace_qtr.c) and
 * writer (src/sim/trace/twrite_qtr.c).
 *
 * Each input is read as a trace file as every reader harness does
 * (fuzz_trace.h: batch sizes, skip-bad, .xz and zstd), and must read the
 * same with skip-bad (nothing in qtr can be skipped). A plain input is also
 * decoded by a reference decoder written here, byte by byte from the
 * format's description (docs/traces.md), which must give the same records
 * and the same error message. Then whatever records were read are written
 * again with the writer, handed over in pieces, and read back: they must
 * come back exactly, and the reference decoder must read the writer's bytes
 * the same way. */
#include "fuzz_trace.h"
#include "fuzz_tw.h"

static void check_rec(const struct trace_rec *r)
{
    (void)r; /* any address, size and flags are a record's */
}

/* The format, byte by byte, with explicit bounds. */
struct ref {
    const uint8_t *d;
    size_t n, pos;
    int trunc, wide;
};

static uint64_t ref_varint(struct ref *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->n) {
            r->trunc = 1;
            return 0;
        }
        uint8_t b = r->d[r->pos++];
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (i == 9 && b > 1)
            r->wide = 1; /* a 10th byte holds bit 63 only, and ends the varint */
        if (!(b & 0x80) || i == 9)
            return v;
    }
    return v;
}

static uint8_t ref_byte(struct ref *r)
{
    if (r->pos >= r->n) {
        r->trunc = 1;
        return 0;
    }
    return r->d[r->pos++];
}

static uint64_t zz(uint64_t z)
{
    return (z & 1) ? ~(z >> 1) : z >> 1;
}

/* Decodes d into ref->r; ref->code and ref->what ("byte N: ...") for the
 * first error. */
static void reference(const uint8_t *d, size_t n, struct fz_ref *out)
{
    static struct {
        uint64_t addr, stride;
    } slot[4096];
    memset(slot, 0, sizeof slot);
    if (!n)
        return;
    size_t m = n < 4 ? n : 4;
    if (memcmp(d, "QTR\x1a", m)) {
        char hex[16] = "";
        for (size_t i = 0; i < m; i++)
            snprintf(hex + 3 * i, sizeof hex - 3 * i, " %02x", d[i]);
        snprintf(out->what, sizeof out->what,
                 "byte 0: not a qtr stream (it starts%s, a qtr stream 51 54 52 1a)", hex);
        out->code = -QOSIM_EPARSE;
        return;
    }
    if (n < 5) {
        snprintf(out->what, sizeof out->what, "byte 0: truncated qtr header (%zu of 5 bytes)", n);
        out->code = -QOSIM_ETRUNC;
        return;
    }
    if (d[4] != 1) {
        snprintf(out->what, sizeof out->what,
                 "byte 4: qtr version %u (this reader reads version 1)", d[4]);
        out->code = -QOSIM_EUNSUP;
        return;
    }
    struct ref r = {.d = d, .n = n, .pos = 5};
    uint64_t next = 0, ip = 0, last = 0, k = 0;
    while (r.pos < n) {
        size_t at = r.pos;
        unsigned tag = ref_byte(&r);
        int data = tag >= 0x40;
        if (data && (tag & 3) == 3) {
            snprintf(out->what, sizeof out->what, "byte %zu: unknown qtr tag 0x%02x", at, tag);
            out->code = -QOSIM_EPARSE;
            return;
        }
        uint64_t size, flags = 0, z = 0;
        if (!data) {
            size = tag & 15 ? tag & 15 : ref_varint(&r);
            if (tag & 0x10)
                flags = ref_byte(&r);
            if (tag & 0x20)
                z = ref_varint(&r);
        } else {
            size = (tag >> 3 & 7) < 7 ? 1u << (tag >> 3 & 7) : ref_varint(&r);
            if (tag & 4)
                flags = ref_byte(&r);
            if ((tag & 3) != 0)
                z = ref_varint(&r);
        }
        if (r.trunc) {
            snprintf(
                out->what, sizeof out->what,
                "byte %zu: truncated qtr item (tag 0x%02x): the stream ends after %zu of its bytes",
                at, tag, n - at);
            out->code = -QOSIM_ETRUNC;
            return;
        }
        if (r.wide) {
            snprintf(out->what, sizeof out->what,
                     "byte %zu: varint of more than 64 bits in the item of tag 0x%02x", at, tag);
            out->code = -QOSIM_EPARSE;
            return;
        }
        if (size > UINT32_MAX) {
            snprintf(out->what, sizeof out->what,
                     "byte %zu: size %llu of more than 32 bits (tag 0x%02x)", at,
                     (unsigned long long)size, tag);
            out->code = -QOSIM_EPARSE;
            return;
        }
        if (!data) {
            ip = next + zz(z);
            next = ip + size;
            k = 0;
            fz_ref_add(out, ip, (uint32_t)size, TREC_I, (unsigned)flags);
            continue;
        }
        uint64_t key = (ip ^ (k++ << 57)) * 0x9E3779B97F4A7C15ull;
        unsigned s = (unsigned)(key >> 52);
        uint64_t a = (tag & 3) == 0   ? slot[s].addr + slot[s].stride
                     : (tag & 3) == 1 ? slot[s].addr + zz(z)
                                      : last + zz(z);
        slot[s].stride = a - slot[s].addr;
        slot[s].addr = a;
        last = a;
        fz_ref_add(out, a, (uint32_t)size, tag >> 6, (unsigned)flags);
    }
}

/* The reference's reading agrees with the reader's (strict, big batches). */
static void ref_check(struct fz_ref *ref, const struct fz_run *run, const char *path)
{
    if (!run->capped) {
        char want[300];
        snprintf(want, sizeof want, "%s:%s", path, ref->what);
        FZ_CHECK(run->rc == ref->code, "rc %ld, reference %d (%s | %s)", run->rc, ref->code,
                 run->msg, want);
        FZ_CHECK(!ref->code || !strcmp(run->msg, want), "\"%s\", reference \"%s\"", run->msg, want);
        FZ_CHECK(ref->code ? run->n <= ref->n : run->n == ref->n, "%zu records, reference %zu",
                 run->n, ref->n);
        for (size_t i = 0; i < run->n; i++)
            FZ_CHECK(fz_rec_eq(&run->r[i], &ref->r[i]), "record %zu differs from the reference", i);
    }
    free(ref->r);
    *ref = (struct fz_ref){0};
}

static struct fz_file fz_rt;

/* Writes r[0..n) in pieces sized by seed, reads it back: all of it, exactly. */
static void round_trip(const struct trace_rec *r, size_t n, uint64_t seed)
{
    size_t len = 0;
    uint64_t dropped;
    char *mem = fz_write(&tw_qtr, "rt.qtr", r, n, seed, 5, &len, &dropped);
    FZ_CHECK(dropped == 0, "qtr dropped something");
    fz_file_set(&fz_rt, mem, len);
    struct fz_run back = fz_read(fz_rt.path, &trace_qtr, 0, 4096, check_rec);
    FZ_CHECK(!back.rc, "reading back: %s", back.msg);
    FZ_CHECK(back.n == n, "%zu records written, %zu read back", n, back.n);
    for (size_t i = 0; i < n; i++)
        FZ_CHECK(fz_rec_eq(&back.r[i], &r[i]), "record %zu did not come back", i);
    fz_run_free(&back);

    /* The writer's bytes, by the reference. */
    unsigned long long plen = ZSTD_getFrameContentSize(mem, len);
    FZ_CHECK(plen != ZSTD_CONTENTSIZE_ERROR, "not a zstd frame");
    size_t cap = 5 + 22 * n;
    uint8_t *plain = malloc(cap);
    FZ_CHECK(plain, "out of memory");
    size_t got = ZSTD_decompress(plain, cap, mem, len);
    FZ_CHECK(!ZSTD_isError(got), "zstd: %s", ZSTD_getErrorName(got));
    struct fz_ref ref = {0};
    reference(plain, got, &ref);
    FZ_CHECK(!ref.code && ref.n == n, "reference: %s, %zu of %zu records", ref.what, ref.n, n);
    for (size_t i = 0; i < n; i++)
        FZ_CHECK(fz_rec_eq(&ref.r[i], &r[i]), "reference: record %zu", i);
    free(ref.r);
    free(plain);
    free(mem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_runs runs;
    fz_trace(data, size, &trace_qtr, check_rec, &runs);
    fz_same(&runs.big, &runs.skip_big, "skip-bad");
    fz_same(&runs.small, &runs.skip, "skip-bad, small batches");
    if (!fz_is_packed(data, size)) {
        struct fz_ref ref = {0};
        reference(data, size, &ref);
        ref_check(&ref, &runs.big, fz_plain.path);
    }
    if (!runs.big.capped)
        round_trip(runs.big.r, runs.big.n, fz_hash(data, size));
    fz_runs_free(&runs);
    return 0;
}
