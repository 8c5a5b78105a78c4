/* The ChampSim writer (the record: champsim.h), plain or .xz: one 64-byte
 * record per instruction, written when the next instruction (or the end)
 * shows that no more of its data records follow.
 *
 * A record holds no sizes, only addresses, as ChampSim needs them: one per
 * cache line an instruction touches. So each data record gives the address
 * of every 64-byte line it touches (its own address in its first line, the
 * line's start in the others); a load its lines in the 4 source_memory
 * slots, a store in the 2 destination_memory slots, a modify in both. A line
 * already in a slot is not repeated. Lines beyond the slots, an address 0
 * (ChampSim's "unused"), data before the first instruction and instructions
 * at address 0 (which ChampSim's reader refuses) are left out and counted
 * in tw_dropped.
 *
 * A branch's kind becomes the registers that ChampSim's rule (its
 * inc/instruction.h; trace_champsim.c reads them back) turns into that kind. */
#include "champsim.h"
#include "twrite_impl.h"

#include <endian.h>
#include <string.h>

#define CS_LINE 6 /* log2 of ChampSim's 64-byte lines */
/* Any register but the three the rule names: what an indirect branch reads. */
#define CS_REG_OTHER 10

/* destination_registers[2], source_registers[4] for each TREC_BR_* kind. */
static const uint8_t cs_regs[7][6] = {
    [TREC_BR_OTHER] = {CHAMPSIM_REG_IP, 0, CHAMPSIM_REG_SP, CHAMPSIM_REG_FLAGS},
    [TREC_BR_COND] = {CHAMPSIM_REG_IP, 0, CHAMPSIM_REG_IP, CHAMPSIM_REG_FLAGS},
    [TREC_BR_JMP] = {CHAMPSIM_REG_IP},
    [TREC_BR_JMP_IND] = {CHAMPSIM_REG_IP, 0, CS_REG_OTHER},
    [TREC_BR_CALL] = {CHAMPSIM_REG_IP, CHAMPSIM_REG_SP, CHAMPSIM_REG_IP, CHAMPSIM_REG_SP},
    [TREC_BR_CALL_IND] = {CHAMPSIM_REG_IP, CHAMPSIM_REG_SP, CHAMPSIM_REG_IP, CHAMPSIM_REG_SP,
                          CS_REG_OTHER},
    [TREC_BR_RET] = {CHAMPSIM_REG_IP, CHAMPSIM_REG_SP, CHAMPSIM_REG_SP},
};

struct cs_state {
    int have;            /* rec holds an instruction not yet written */
    unsigned nsrc, ndst; /* memory slots used */
    uint8_t rec[CHAMPSIM_REC];
};

static uint64_t cs_get(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

static void cs_set(uint8_t *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, sizeof v);
}

static void cs_branch(uint8_t *rec, unsigned flags)
{
    if (!(flags & TREC_F_BRANCH))
        return;
    unsigned kind = TREC_BR(flags);
    if (kind > TREC_BR_RET)
        kind = TREC_BR_OTHER;
    if (kind == TREC_BR_OTHER && (flags & TREC_F_DIRECT))
        kind = TREC_BR_JMP;
    rec[CHAMPSIM_IS_BRANCH] = 1;
    /* ChampSim takes every kind but these two as taken, whatever the file says. */
    rec[CHAMPSIM_TAKEN] = (flags & TREC_F_TAKEN) || (kind != TREC_BR_OTHER && kind != TREC_BR_COND);
    memcpy(rec + CHAMPSIM_DST_REG, cs_regs[kind], sizeof cs_regs[kind]);
}

/* Puts the lines of [addr, addr + size) in the n slots at mem (NULL: there
 * is no instruction), *used of them taken; returns how many are left out. */
static uint64_t cs_lines(uint8_t *mem, unsigned n, unsigned *used, uint64_t addr, uint32_t size)
{
    uint64_t end = addr + (size ? size - 1 : 0); /* the last byte; size 0 counts as 1 */
    if (end < addr)
        end = UINT64_MAX; /* the address space ends there */
    uint64_t first = addr >> CS_LINE, last = end >> CS_LINE;
    if (!mem)
        return last - first + 1;
    uint64_t dropped = 0;
    for (uint64_t l = first;; l++) {
        uint64_t a = l == first ? addr : l << CS_LINE;
        unsigned i = 0;
        while (i < *used && cs_get(mem + 8 * i) >> CS_LINE != l)
            i++;
        if (i < *used) {
            /* held already */
        } else if (!a) {
            dropped++;
        } else if (*used < n) {
            cs_set(mem + 8 * (*used)++, a);
        } else {
            /* Full: every line from here on that no slot holds is left out. */
            dropped += last - l + 1;
            for (i = 0; i < n; i++) {
                uint64_t s = cs_get(mem + 8 * i) >> CS_LINE;
                dropped -= s >= l && s <= last;
            }
            break;
        }
        if (l == last)
            break;
    }
    return dropped;
}

static int cs_emit(struct tw *w, struct cs_state *s, struct err *e)
{
    int rc = tw_room(w, e);
    if (rc)
        return rc;
    memcpy(w->buf + w->len, s->rec, CHAMPSIM_REC);
    w->len += CHAMPSIM_REC;
    s->have = 0;
    return 0;
}

static int cs_put(struct tw *w, const struct trace_rec *r, size_t n, struct err *e)
{
    struct cs_state *s = w->st;
    for (size_t i = 0; i < n; i++) {
        const struct trace_rec *x = &r[i];
        if (x->kind == TREC_I) {
            int rc = s->have ? cs_emit(w, s, e) : 0;
            if (rc)
                return rc;
            if (!x->addr) {
                w->dropped++;
                continue;
            }
            memset(s->rec, 0, sizeof s->rec);
            cs_set(s->rec + CHAMPSIM_IP, x->addr);
            cs_branch(s->rec, x->flags);
            s->have = 1;
            s->nsrc = s->ndst = 0;
        } else if (x->kind <= TREC_M) {
            if (x->kind != TREC_S)
                w->dropped += cs_lines(s->have ? s->rec + CHAMPSIM_SRC_MEM : NULL, CHAMPSIM_NSRC,
                                       &s->nsrc, x->addr, x->size);
            if (x->kind != TREC_L)
                w->dropped += cs_lines(s->have ? s->rec + CHAMPSIM_DST_MEM : NULL, CHAMPSIM_NDST,
                                       &s->ndst, x->addr, x->size);
        } else {
            return tw_bad(w, i, e, "kind %u is not I, L, S or M", x->kind);
        }
    }
    return 0;
}

static int cs_finish(struct tw *w, struct err *e)
{
    struct cs_state *s = w->st;
    return s->have ? cs_emit(w, s, e) : 0;
}

const struct tw_ops tw_champsim = {
    .name = "champsim",
    .desc = "ChampSim 64-byte instruction records, plain or .xz; no sizes, lines of 64 bytes",
    .state = sizeof(struct cs_state),
    .put = cs_put,
    .finish = cs_finish,
};
