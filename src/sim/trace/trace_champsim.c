/* ChampSim binary traces: 64-byte little-endian records, one per instruction
 * (ip u64, is_branch u8, branch_taken u8, destination_registers u8[2],
 * source_registers u8[4], destination_memory u64[2], source_memory u64[4];
 * zero means unused), usually .xz-compressed (handled by bsrc).
 *
 * Each record becomes an instruction fetch carrying the branch flags, then a
 * load per source address and a store per destination address. The records
 * carry no sizes: as in ChampSim, each address touches exactly its own line,
 * so every access is given size 1.
 *
 * A branch's kind comes from its registers by ChampSim's own rule (its
 * trace reader, inc/instruction.h), which looks at which of the stack
 * pointer, the flags and the instruction pointer an instruction reads and
 * writes, and whether it reads any other register. As in ChampSim, every
 * kind but a conditional branch (and "other") is taken; a direct jump is
 * also flagged TREC_F_DIRECT. A branch that does not write the instruction
 * pointer keeps the file's flags, of kind TREC_BR_OTHER. */
#include "champsim.h"
#include "trace.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

#define CHAMPSIM_BATCH   1024
#define CHAMPSIM_MAX_OUT 7 /* fetch + 4 loads + 2 stores */

/* A branch's flags by ChampSim's rule: the kind, and taken where ChampSim
 * makes it so; taken is the file's branch_taken. */
static uint8_t champsim_branch(const uint8_t *p, int taken)
{
    int wip = 0, wsp = 0, rip = 0, rsp = 0, rfl = 0, rother = 0;
    for (int i = CHAMPSIM_DST_REG; i < CHAMPSIM_DST_REG + CHAMPSIM_NDST; i++) {
        wip |= p[i] == CHAMPSIM_REG_IP;
        wsp |= p[i] == CHAMPSIM_REG_SP;
    }
    for (int i = CHAMPSIM_SRC_REG; i < CHAMPSIM_SRC_REG + CHAMPSIM_NSRC; i++) {
        rip |= p[i] == CHAMPSIM_REG_IP;
        rsp |= p[i] == CHAMPSIM_REG_SP;
        rfl |= p[i] == CHAMPSIM_REG_FLAGS;
        rother |= p[i] && p[i] != CHAMPSIM_REG_IP && p[i] != CHAMPSIM_REG_SP &&
                  p[i] != CHAMPSIM_REG_FLAGS;
    }
    if (!wip) /* not a branch to ChampSim: the file's flags */
        return (uint8_t)(TREC_F_BRANCH | (taken ? TREC_F_TAKEN : 0));
    unsigned kind = TREC_BR_OTHER;
    if (!rsp && !rfl && !rother)
        kind = TREC_BR_JMP;
    else if (!rsp && !rip && !rfl && rother)
        kind = TREC_BR_JMP_IND;
    else if (!rsp && rip && !wsp && (rfl || rother))
        kind = TREC_BR_COND;
    else if (rsp && rip && wsp && !rfl)
        kind = rother ? TREC_BR_CALL_IND : TREC_BR_CALL;
    else if (rsp && !rip && wsp)
        kind = TREC_BR_RET;
    if (kind != TREC_BR_OTHER && kind != TREC_BR_COND)
        taken = 1;
    return (uint8_t)(TREC_F_BRANCH | (taken ? TREC_F_TAKEN : 0) |
                     (kind == TREC_BR_JMP ? TREC_F_DIRECT : 0) | TREC_F_BR(kind));
}

/* Whole words, not a byte at a time: this is most of a ChampSim run's
 * reading. */
static inline uint64_t champsim_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

/* The reader keeps undecoded records in the text buffer fields. */
static long champsim_read(struct trace *t, struct trace_rec *r, size_t n)
{
    size_t k = 0;
    if (!t->buf) {
        t->buf = malloc(CHAMPSIM_REC * CHAMPSIM_BATCH);
        if (!t->buf)
            return err_set(&t->err, -QOSIM_ENOMEM, "%s: out of memory", t->name);
        t->cap = CHAMPSIM_REC * CHAMPSIM_BATCH;
    }
    while (k + CHAMPSIM_MAX_OUT <= n) {
        if (t->pos + CHAMPSIM_REC > t->len) {
            if (t->eof) {
                if (t->pos < t->len) {
                    size_t have = t->len - t->pos;
                    t->pos = t->len;
                    t->line++;
                    int rc = trace_bad(t, -QOSIM_ETRUNC,
                                       "truncated ChampSim record: %zu of %d bytes at byte offset "
                                       "%llu",
                                       have, CHAMPSIM_REC,
                                       (unsigned long long)(t->line - 1) * CHAMPSIM_REC);
                    if (rc)
                        return rc;
                }
                break;
            }
            memmove(t->buf, t->buf + t->pos, t->len - t->pos);
            t->len -= t->pos;
            t->pos = 0;
            while (t->len < t->cap && !t->eof) {
                long got = bsrc_read(&t->src, t->buf + t->len, t->cap - t->len, &t->err);
                if (got < 0)
                    return err_set(&t->err, (int)got, "%s:%s%llu: %s", t->name, trace_champsim.unit,
                                   (unsigned long long)t->line + 1 + t->len / CHAMPSIM_REC,
                                   t->err.msg);
                t->eof = !got;
                t->len += (size_t)got;
            }
            continue;
        }
        const uint8_t *p = (const uint8_t *)t->buf + t->pos;
        t->pos += CHAMPSIM_REC;
        t->line++;
        uint64_t ip = champsim_u64(p + CHAMPSIM_IP);
        unsigned br = p[CHAMPSIM_IS_BRANCH], tk = p[CHAMPSIM_TAKEN];
        if (br > 1 || tk > 1 || (tk && !br) || !ip) {
            int rc = trace_bad(t, -QOSIM_EPARSE,
                               "malformed ChampSim record at byte offset %llu: ip=0x%llx "
                               "is_branch=%u branch_taken=%u (ip must be non-zero, the flags 0 or "
                               "1, and only a branch can be taken)",
                               (unsigned long long)(t->line - 1) * CHAMPSIM_REC,
                               (unsigned long long)ip, br, tk);
            if (rc)
                return rc;
            continue;
        }
        r[k++] = (struct trace_rec){
            .addr = ip, .size = 1, .kind = TREC_I, .flags = br ? champsim_branch(p, tk) : 0};
        for (int i = 0; i < CHAMPSIM_NSRC; i++) {
            uint64_t a = champsim_u64(p + CHAMPSIM_SRC_MEM + 8 * i);
            if (a)
                r[k++] = (struct trace_rec){.addr = a, .size = 1, .kind = TREC_L};
        }
        for (int i = 0; i < CHAMPSIM_NDST; i++) {
            uint64_t a = champsim_u64(p + CHAMPSIM_DST_MEM + 8 * i);
            if (a)
                r[k++] = (struct trace_rec){.addr = a, .size = 1, .kind = TREC_S};
        }
    }
    return (long)k;
}

const struct trace_ops trace_champsim = {
    .name = "champsim",
    .desc = "ChampSim 64-byte binary instruction records, plain or .xz",
    .unit = "record ",
    .read = champsim_read,
};
