/* libFuzzer harness for the ChampSim reader (src/sim/trace/trace_champsim.c).
 *
 * Each input is read as a trace file in small and large batches, with and
 * without skip-bad, plain and .xz-compressed; every instruction must come out
 * as an I record followed by its loads and then its stores, and the records
 * and the first error are compared with a reference decoder written here. */
#include "fuzz_trace.h"

static void check_rec(const struct trace_rec *r)
{
    FZ_CHECK(r->kind == TREC_I || r->kind == TREC_L || r->kind == TREC_S, "kind %u", r->kind);
    FZ_CHECK(r->size == 1, "size %u", r->size);
    FZ_CHECK(r->addr != 0, "address 0");
    FZ_CHECK(r->kind == TREC_I || r->flags == 0, "flags %u on a data record", r->flags);
    FZ_CHECK(!(r->flags & ~(TREC_F_BRANCH | TREC_F_TAKEN | TREC_F_DIRECT | TREC_BR_MASK)),
             "flags %u", r->flags);
    FZ_CHECK(!(r->flags & ~TREC_F_BRANCH) || (r->flags & TREC_F_BRANCH), "flags %u, not a branch",
             r->flags);
    FZ_CHECK(TREC_BR(r->flags) <= TREC_BR_RET, "branch kind %u", TREC_BR(r->flags));
    FZ_CHECK(!(r->flags & TREC_F_DIRECT) == (TREC_BR(r->flags) != TREC_BR_JMP),
             "direct, not a jump (flags %u)", r->flags);
    FZ_CHECK(!(r->flags & TREC_F_DIRECT) || (r->flags & TREC_F_TAKEN), "a jump not taken");
}

/* An instruction, then at most 4 loads, then at most 2 stores. */
static void check_order(const struct fz_run *run)
{
    for (size_t i = 0; i < run->n;) {
        FZ_CHECK(run->r[i].kind == TREC_I, "record %zu: kind %u where an I belongs", i,
                 run->r[i].kind);
        size_t j = i + 1, loads = 0, stores = 0;
        for (; j < run->n && run->r[j].kind == TREC_L; j++)
            loads++;
        for (; j < run->n && run->r[j].kind == TREC_S; j++)
            stores++;
        FZ_CHECK(loads <= 4 && stores <= 2, "record %zu: %zu loads, %zu stores", i, loads, stores);
        i = j;
    }
}

static uint64_t u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void reference(const uint8_t *d, size_t n, struct fz_ref *ref)
{
    uint64_t rec = 0;
    for (size_t off = 0; off < n; off += 64) {
        const uint8_t *p = d + off;
        char what[160];
        rec++;
        if (n - off < 64) {
            snprintf(what, sizeof what,
                     "truncated ChampSim record: %zu of 64 bytes at byte offset %zu", n - off, off);
            fz_ref_bad(ref, rec, -QOSIM_ETRUNC, what);
            break;
        }
        uint64_t ip = u64(p);
        unsigned br = p[8], tk = p[9];
        if (!ip || br > 1 || tk > 1 || (tk && !br)) {
            snprintf(what, sizeof what,
                     "malformed ChampSim record at byte offset %zu: ip=0x%llx is_branch=%u "
                     "branch_taken=%u (",
                     off, (unsigned long long)ip, br, tk);
            fz_ref_bad(ref, rec, -QOSIM_EPARSE, what);
            continue;
        }
        /* ChampSim's rule (inc/instruction.h) over the registers: SP 6,
         * FLAGS 25, IP 26, anything else "other"; zero is no register. */
        int wip = p[10] == 26 || p[11] == 26, wsp = p[10] == 6 || p[11] == 6;
        int rip = 0, rsp = 0, rfl = 0, roth = 0;
        for (int i = 12; i < 16; i++) {
            rip |= p[i] == 26;
            rsp |= p[i] == 6;
            rfl |= p[i] == 25;
            roth |= p[i] && p[i] != 26 && p[i] != 6 && p[i] != 25;
        }
        int kind = !wip                                   ? -1
                   : !rsp && !rfl && !roth                ? TREC_BR_JMP
                   : !rsp && !rip && !rfl && roth         ? TREC_BR_JMP_IND
                   : !rsp && rip && !wsp && (rfl || roth) ? TREC_BR_COND
                   : rsp && rip && wsp && !rfl            ? (roth ? TREC_BR_CALL_IND : TREC_BR_CALL)
                   : rsp && !rip && wsp                   ? TREC_BR_RET
                                                          : TREC_BR_OTHER;
        unsigned fl = 0;
        if (br) {
            int forced = kind > 0 && kind != TREC_BR_COND; /* TREC_BR_OTHER is 0 */
            fl = TREC_F_BRANCH | (tk || forced ? TREC_F_TAKEN : 0) |
                 (kind == TREC_BR_JMP ? TREC_F_DIRECT : 0) | (kind > 0 ? TREC_F_BR(kind) : 0);
        }
        fz_ref_add(ref, ip, 1, TREC_I, fl);
        for (int i = 0; i < 4; i++)
            if (u64(p + 32 + 8 * i))
                fz_ref_add(ref, u64(p + 32 + 8 * i), 1, TREC_L, 0);
        for (int i = 0; i < 2; i++)
            if (u64(p + 16 + 8 * i))
                fz_ref_add(ref, u64(p + 16 + 8 * i), 1, TREC_S, 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz_runs runs;
    fz_trace(data, size, &trace_champsim, check_rec, &runs);
    check_order(&runs.small);
    check_order(&runs.big);
    check_order(&runs.skip);
    check_order(&runs.skip_big);
    if (!fz_is_packed(data, size)) {
        struct fz_ref ref = {0};
        reference(data, size, &ref);
        fz_ref_check(&ref, &runs.big, &runs.skip_big, fz_plain.path, "record ");
    }
    fz_runs_free(&runs);
    return 0;
}
