/* libFuzzer harness for the ChampSim writer (src/sim/trace/twrite_champsim.c)
 * and reader (src/sim/trace/trace_champsim.c) together.
 *
 * The input is turned into a stream of records (below), written with the
 * ChampSim writer in pieces of varying size (one input in sixteen as .xz),
 * and read back with the ChampSim reader. What comes back must be what
 * ChampSim can hold, as a model written here from docs/traces.md computes
 * it: per instruction at a non-zero address, its branch flags as ChampSim's
 * register rule gives them back, then the 64-byte lines its loads touch
 * (at most 4), then those its stores touch (at most 2), each line once; and
 * tw_dropped must count exactly what did not fit. */
#include "fuzz_trace.h"
#include "fuzz_tw.h"

static void check_rec(const struct trace_rec *r)
{
    FZ_CHECK(r->size == 1, "size %u", r->size);
}

/* Input bytes to records. Each record: a byte (bits 0-1 the kind, 2-3 how
 * the address comes, 4-5 how the size comes, 6 a flags byte follows), then
 * flags, size and address bytes. Addresses mostly near the previous one, so
 * lines repeat, straddle and fill the slots. */
struct cur {
    const uint8_t *d;
    size_t n, pos;
};

static uint64_t take(struct cur *c, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && c->pos < c->n; i++)
        v |= (uint64_t)c->d[c->pos++] << (8 * i);
    return v;
}

static size_t records(const uint8_t *d, size_t n, struct trace_rec *r, size_t max)
{
    struct cur c = {d, n, 0};
    uint64_t prev = 0x1000;
    size_t k = 0;
    while (c.pos < c.n && k < max) {
        unsigned b = (unsigned)take(&c, 1);
        uint8_t flags = b & 0x40 ? (uint8_t)take(&c, 1) : 0;
        unsigned sm = b >> 4 & 3, am = b >> 2 & 3;
        uint32_t size = sm == 0   ? 1u << (take(&c, 1) & 7)
                        : sm == 1 ? (uint32_t)take(&c, 1)
                        : sm == 2 ? (uint32_t)take(&c, 4)
                                  : 8;
        uint64_t a = am == 0   ? prev + (uint64_t)(int8_t)take(&c, 1)
                     : am == 1 ? prev + 8 * (uint64_t)(int16_t)take(&c, 2)
                     : am == 2 ? take(&c, 8)
                               : (prev | 63) - (take(&c, 1) & 15);
        r[k++] =
            (struct trace_rec){.addr = a, .size = size, .kind = (uint8_t)(b & 3), .flags = flags};
        prev = a;
    }
    return k;
}

/* The model: what the reader must give back, and the count dropped. */
struct model {
    struct fz_ref out;
    uint64_t dropped;
    int have;
    uint64_t ip;
    uint8_t flags;
    uint64_t mem[2][4]; /* [0] loads, [1] stores: the addresses kept */
    unsigned used[2];
};

static uint8_t model_flags(uint8_t f)
{
    if (!(f & TREC_F_BRANCH))
        return 0;
    unsigned kind = TREC_BR(f);
    if (kind > TREC_BR_RET)
        kind = TREC_BR_OTHER;
    if (kind == TREC_BR_OTHER && (f & TREC_F_DIRECT))
        kind = TREC_BR_JMP;
    int taken = (f & TREC_F_TAKEN) || (kind != TREC_BR_OTHER && kind != TREC_BR_COND);
    return (uint8_t)(TREC_F_BRANCH | (taken ? TREC_F_TAKEN : 0) |
                     (kind == TREC_BR_JMP ? TREC_F_DIRECT : 0) | TREC_F_BR(kind));
}

static void model_emit(struct model *m)
{
    if (!m->have)
        return;
    fz_ref_add(&m->out, m->ip, 1, TREC_I, m->flags);
    for (int s = 0; s < 2; s++)
        for (unsigned i = 0; i < m->used[s]; i++)
            fz_ref_add(&m->out, m->mem[s][i], 1, s ? TREC_S : TREC_L, 0);
    m->have = 0;
}

static void model_lines(struct model *m, int s, uint64_t addr, uint32_t size)
{
    unsigned cap = s ? 2 : 4;
    uint64_t end = addr + (size ? size - 1 : 0);
    if (end < addr)
        end = UINT64_MAX;
    uint64_t first = addr / 64, last = end / 64;
    if (!m->have) {
        m->dropped += last - first + 1;
        return;
    }
    for (uint64_t l = first;; l++) {
        uint64_t a = l == first ? addr : l * 64;
        int held = 0;
        for (unsigned i = 0; i < m->used[s]; i++)
            held |= m->mem[s][i] / 64 == l;
        if (held) {
            /* one address a line */
        } else if (!a) {
            m->dropped++;
        } else if (m->used[s] < cap) {
            m->mem[s][m->used[s]++] = a;
        } else {
            /* Full: the lines from l to last, less those held. */
            uint64_t left = last - l + 1;
            for (unsigned i = 0; i < cap; i++)
                left -= m->mem[s][i] / 64 >= l && m->mem[s][i] / 64 <= last;
            m->dropped += left;
            return;
        }
        if (l == last)
            return;
    }
}

static void model(const struct trace_rec *r, size_t n, struct model *m)
{
    for (size_t i = 0; i < n; i++) {
        if (r[i].kind == TREC_I) {
            model_emit(m);
            if (!r[i].addr) {
                m->dropped++;
                continue;
            }
            m->have = 1;
            m->ip = r[i].addr;
            m->flags = model_flags(r[i].flags);
            m->used[0] = m->used[1] = 0;
            continue;
        }
        if (r[i].kind != TREC_S)
            model_lines(m, 0, r[i].addr, r[i].size);
        if (r[i].kind != TREC_L)
            model_lines(m, 1, r[i].addr, r[i].size);
    }
    model_emit(m);
}

static struct fz_file fz_out;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct trace_rec r[4096];
    size_t n = records(data, size, r, 4096);
    uint64_t h = fz_hash(data, size);
    const char *name = h % 16 ? "rt.champsim" : "rt.champsim.xz";

    FZ_CHECK(!strcmp(tw_for_path(name)->name, "champsim"), "%s is not champsim", name);
    size_t len = 0;
    uint64_t dropped;
    char *mem = fz_write(NULL, name, r, n, h, 7, &len, &dropped);

    static struct model m;
    memset(&m, 0, sizeof m);
    model(r, n, &m);
    FZ_CHECK(dropped == m.dropped, "dropped %llu, model %llu", (unsigned long long)dropped,
             (unsigned long long)m.dropped);

    /* A plain trace whose first ip begins with the bytes of the .xz or zstd
     * magic is taken for compressed (docs/traces.md): not this harness's. */
    if (h % 16 && fz_is_packed((const uint8_t *)mem, len)) {
        free(m.out.r);
        free(mem);
        return 0;
    }
    fz_file_set(&fz_out, mem, len);
    struct fz_run back = fz_read(fz_out.path, &trace_champsim, 0, 4096, check_rec);
    FZ_CHECK(!back.rc, "reading back: %s", back.msg);
    FZ_CHECK(back.n == m.out.n, "%zu records read back, model %zu", back.n, m.out.n);
    for (size_t i = 0; i < back.n; i++)
        FZ_CHECK(fz_rec_eq(&back.r[i], &m.out.r[i]),
                 "record %zu: kind %u addr %llx flags %u, model kind %u addr %llx flags %u", i,
                 back.r[i].kind, (unsigned long long)back.r[i].addr, back.r[i].flags,
                 m.out.r[i].kind, (unsigned long long)m.out.r[i].addr, m.out.r[i].flags);
    fz_run_free(&back);
    free(m.out.r);
    free(mem);
    return 0;
}
