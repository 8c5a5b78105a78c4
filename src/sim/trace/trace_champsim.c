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
 * A branch whose registers say "direct jump" by ChampSim's own rule (its
 * trace reader: writes the instruction pointer, reads neither the stack
 * pointer, the flags nor any other register but the instruction pointer)
 * is flagged TREC_F_DIRECT, and taken, as ChampSim makes it. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#define CHAMPSIM_REC     64
#define CHAMPSIM_BATCH   1024
#define CHAMPSIM_MAX_OUT 7 /* fetch + 4 loads + 2 stores */

/* ChampSim's register numbers for what its branch rule looks at. */
enum { CHAMPSIM_REG_SP = 6, CHAMPSIM_REG_FLAGS = 25, CHAMPSIM_REG_IP = 26 };

static int champsim_direct_jump(const uint8_t *p)
{
    int writes_ip = p[10] == CHAMPSIM_REG_IP || p[11] == CHAMPSIM_REG_IP;
    for (int i = 12; i < 16; i++)
        if (p[i] && p[i] != CHAMPSIM_REG_IP)
            return 0; /* the stack pointer, the flags or another register */
    return writes_ip;
}

static uint64_t champsim_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
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
        uint64_t ip = champsim_u64(p);
        if (p[8] > 1 || p[9] > 1 || (p[9] && !p[8]) || !ip) {
            int rc = trace_bad(t, -QOSIM_EPARSE,
                               "malformed ChampSim record at byte offset %llu: ip=0x%llx "
                               "is_branch=%u branch_taken=%u (ip must be non-zero, the flags 0 or "
                               "1, and only a branch can be taken)",
                               (unsigned long long)(t->line - 1) * CHAMPSIM_REC,
                               (unsigned long long)ip, p[8], p[9]);
            if (rc)
                return rc;
            continue;
        }
        r[k++] = (struct trace_rec){
            .addr = ip,
            .size = 1,
            .kind = TREC_I,
            .flags = (uint8_t)((p[8] ? TREC_F_BRANCH : 0) | (p[9] ? TREC_F_TAKEN : 0))};
        if (p[8] && champsim_direct_jump(p))
            r[k - 1].flags |= TREC_F_TAKEN | TREC_F_DIRECT;
        for (int i = 0; i < 4; i++) {
            uint64_t a = champsim_u64(p + 32 + 8 * i);
            if (a)
                r[k++] = (struct trace_rec){.addr = a, .size = 1, .kind = TREC_L};
        }
        for (int i = 0; i < 2; i++) {
            uint64_t a = champsim_u64(p + 16 + 8 * i);
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
