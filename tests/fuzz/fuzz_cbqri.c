/* libFuzzer harness for the RISC-V CBQRI register model (src/hw/cbqri.c)
 * in both texts a profile may choose (cbqri.h), and for its console
 * (src/hw/cbqri_console.c).
 *
 * The first byte picks the text and the platform: bits 5:4 select
 *   0  riscv-soc-draft: the 2023 draft (sqoscfg, secure windows, staged
 *      split writes);
 *   1  riscv-soc: CBQRI 1.0 + Ssqosid (srmcfg, Smstateen, CUNITS at L2
 *      and L3, XLEN 64);
 *   2  riscv-soc with `mcid_prefix: 2` (RCID-prefixed MCIDs, RPFX 1, P 2),
 *      without Smstateen and without CUNITS at L2;
 *   3  riscv-soc with `xlen: 32` (mstateen0h), CDP at L3 (per-AT limits
 *      and cc_cunits) and the controllers packed as tightly as 1.0 allows
 *      (stride 48 for capacity, 40 for bandwidth);
 * the 1.0 variants are the shipped riscv-soc's text with those lines
 * changed here (setup_text), loaded once per process each. Bits 1:0 pick
 * busy_cycles (64, 0, 1, 1000), bits 3:2 access_cycles (16, 0, 1, 100).
 *
 * The rest is a sequence of operations, each an opcode byte and its
 * operands: MMIO reads and writes of any size 0..9 (4 and 8 the legal
 * ones) at addresses drawn mostly from the controllers' windows
 * (registers, cc_cunits at 40, misaligned offsets, offsets past the
 * registers, the edges of the windows, anywhere at all) -- in 1.0 also
 * where the draft's secure windows would be -- with values shaped like
 * each register's fields or raw; CSR reads and writes of sqoscfg, srmcfg,
 * mstateen0, mstateen0h and other numbers; privilege changes per hart;
 * clock ticks; machine traffic (loads, stores, code fetches) from random
 * harts; a wait of exactly busy_cycles; a reset; and console lines,
 * formatted (mmio, csr by name or number, mode) or raw.
 *
 * Checked at every operation, against rules written here from the spec and
 * cbqri.h rather than read back from the model:
 *   - an access faults exactly when it should (hart, mode, size, alignment,
 *     window, privilege, register offset: five registers, six for a 1.0
 *     capacity controller; windows stride bytes long; no access to a
 *     secure-window address succeeds in 1.0); a fault changes nothing --
 *     no register, staging slot, table, clock, CSR or machine mask -- and
 *     counts once, keeping its address;
 *   - a CSR access raises exactly the exception its text, CSR number, mode
 *     and mstateen0 bit 55 call for, and changes nothing when it does; a
 *     read returns the CSR's XLEN bits, a write stores exactly the WARL
 *     value (srmcfg: RCID and MCID bits only; mstateen0: bit 55 only,
 *     through mstateen0h's bit 23 on RV32) and nothing else;
 *   - a read changes nothing but the clock, which moves by access_cycles,
 *     and returns the committed register (never a held half);
 *   - capabilities always read what the profile says per text (VER 0x01 or
 *     0x10, NCBLKS, FRCID, CUNITS, RPFX, P; NBWBLKS, MRBWB, RPFX, P), whole
 *     or by halves, whatever was written;
 *   - an occupancy counter never reads more lines than its cache holds;
 *   - a write takes the effect its text gives it: an 8-byte write at once;
 *     in the draft a lone 4-byte half commits nothing and the pair commits
 *     as one write; in 1.0 each half at once, a control register's high
 *     half and bc_bw_alloc's starting or changing nothing; the operand and
 *     cc_cunits take exactly their WARL value (cc_cunits clamped to the
 *     instance's lines, read-only 0 without CUNITS), a control register
 *     exactly its writable fields, and nothing changes while BUSY;
 *   - a write to one world's window (draft: normal or secure) changes
 *     nothing in the other world's windows, and a secure write no machine
 *     mask;
 *   - BUSY means STATUS 0, and every BUSY clears after busy_cycles; a
 *     control register changes only by a write to it or its operation's
 *     completion (STATUS valid until the next write), which sets a STATUS
 *     1..5 and keeps the other fields; STATUS is never "invalid AT" for a
 *     capacity controller without per-AT limits;
 *   - registers hold no bits outside their fields (WPRI and read-only
 *     bits read 0; cc_block_mask within NCBLKS; cc_cunits within [0,
 *     lines]); 1.0 holds no half anywhere;
 *   - capacity limits are non-empty masks within NCBLKS, and the machine's
 *     way masks of every class are exactly those limits' ways; cunits
 *     limits are within the lines, and none exist without CUNITS;
 *   - after traffic, the machine holds no more lines of an (RCID, AT) with
 *     a cunits limit at an instance than the limit, or than it held
 *     before (a lowered limit evicts nothing) -- mach_class_lines;
 *   - reserved bandwidth blocks sum to at most MRBWB, a shared allocation
 *     always points at an AT with one of its own, and the machine's
 *     limiter classes hold exactly the tables' Rbwb and Mweight, hard
 *     (Mweight 0 a hard limit) in 1.0 only, and map useShared;
 *   - sqoscfg / srmcfg hold no bits past the implemented RCID and MCID
 *     bits (no WPRI bit, at most XLEN bits), mstateen0 nothing but bit 55
 *     (and nothing at all without Smstateen), and the machine's class and
 *     tag of each hart are its RCID and MCID -- the effective MCID,
 *     RCID << P | (MCID & (2^P - 1)), in RCID-prefixed mode;
 *   - the model's clock never goes back. */
#include "fuzz_check.h"
#include "hw/cbqri_console.h"
#include "util/bits.h"
#include "util/conf.h"
#include "util/rng.h"

#include <string.h>

#define TICK_MAX (1ull << 24) /* the largest tick, so the clock never wraps */
#define NTEXT    4
#define MAX_WINS 64

/* ---- the address map, from the profile (not from the model) ---- */

struct win {
    uint64_t base, size; /* size: the profile's stride */
    int secure;          /* the draft's secure window */
    int ghost;           /* 1.0: where the draft's secure window would be; every access faults */
    enum cbqri_kind kind;
    const struct plat_cbqri_ctl *pc;
    unsigned ci;    /* the model's controller (its index in q.ctl) */
    unsigned nregs; /* registers at offsets 0, 8, ...: 5, or 6 for a 1.0 capacity controller */
    unsigned nat;   /* access types with limits of their own */
    int mon;        /* monitoring implemented */
    uint64_t lines; /* capacity: the instance's lines */
    uint64_t cap;   /* what capabilities must read */
};

/* One text, its machine and model, built once per process. */
struct text {
    const char *label;
    struct mach mach;
    struct cbqri q;
    struct cbqri_console con;
    int v10;             /* CBQRI 1.0 + Ssqosid; else the draft */
    unsigned nwin;       /* windows per controller instance: 2 draft, 1 in 1.0 */
    unsigned xlen;       /* the ID CSR's width */
    int smstateen, rpfx; /* mstateen0 gates srmcfg; RCID-prefixed MCIDs */
    unsigned pfx;        /* P */
    unsigned rcid_bits, mcid_bits;
    struct win wins[MAX_WINS];
    unsigned nwins;
    /* The ways each capacity block mask stands for, per level (NCBLKS <=
     * 16 here), from mach_cbm_ways once: the masks are checked at every
     * step. */
    uint64_t *ways_of[PLAT_NLEVEL];
    uint64_t last_now;
    uint64_t *snap; /* [nctl][2][2]: mon_ctl and alloc_ctl before the operation */
};

static struct text texts[NTEXT];
static struct text *X; /* the input's */
static struct mach *mach;
static struct cbqri *model;
static struct cbqri_console *con; /* its mode array is the harness's too */
static FILE *devnull;
static struct rng rng_s;

/* What the current operation may have written, for the STATUS check: a
 * control register (ctl, window, slot), or anything (console, reset). */
static struct {
    int any;
    unsigned ci, s, slot; /* slot ~0u: none */
} tgt;

/* Bits that hold values 0..n-1 (the IDs a CSR implements). */
static unsigned bits_for(unsigned n)
{
    return n <= 1 ? 0 : 64 - (unsigned)__builtin_clzll((uint64_t)n - 1);
}

static void add_win(uint64_t base, enum cbqri_kind kind, const struct plat_cbqri_ctl *pc,
                    unsigned ci)
{
    const struct plat *p = &mach->p;
    for (int s = 0; s < 2; s++) {
        if (X->nwins >= MAX_WINS)
            abort();
        struct win *w = &X->wins[X->nwins++];
        w->base = base + (s ? CBQRI_SECURE_OFFSET : 0);
        w->size = pc->stride;
        w->secure = s && !X->v10;
        w->ghost = s && X->v10;
        w->kind = kind;
        w->pc = pc;
        w->ci = ci;
        w->nregs = X->v10 && kind == CBQRI_CAPACITY ? 6 : 5;
        w->nat = kind == CBQRI_BANDWIDTH || p->cache[pc->level].alloc.cdp ? 2 : 1;
        w->mon = p->mon.tags &&
                 (kind == CBQRI_CAPACITY ? p->mon.occupancy && p->cache[pc->level].monitored
                                         : p->mon.total);
        uint64_t ver = X->v10 ? 0x10 : 0x01; /* 1.0 CC_CAP/BC_CAP; draft 3.1, 4.1 */
        if (kind == CBQRI_CAPACITY) {
            const struct cache_geom *g = &p->cache[pc->level].geom;
            w->lines = g->size / g->line;
            w->cap = ver | (uint64_t)pc->blocks << 8 | (uint64_t)(pc->frcid != 0) << 24;
            if (X->v10) /* CUNITS[25], RPFX[26], P[30:27] */
                w->cap |= (uint64_t)(pc->cunits != 0) << 25 | (uint64_t)X->rpfx << 26 |
                          (uint64_t)X->pfx << 27;
        } else {
            w->cap = ver | (uint64_t)pc->blocks << 8 | (uint64_t)pc->mrbwb << 32;
            if (X->v10) /* RPFX[24], P[28:25] */
                w->cap |= (uint64_t)X->rpfx << 24 | (uint64_t)X->pfx << 25;
        }
    }
    /* The model's controller ci is this instance (same order: the
     * profile's capacity controllers, then bandwidth). */
    const struct cbqri_ctl *c = &model->ctl[ci];
    unsigned nat = X->wins[X->nwins - 1].nat;
    if (ci >= model->nctl || c->base != base || c->kind != kind || c->nat != nat ||
        c->nwin != X->nwin || c->size != pc->stride) {
        fprintf(stderr, "fuzz_cbqri: %s: controller %u is not the profile's\n", X->label, ci);
        abort();
    }
}

static void build_map(void)
{
    const struct plat *p = &mach->p;
    unsigned ci = 0;
    for (unsigned k = 0; k < p->n_cbqri_cap; k++)
        for (unsigned i = 0; i < mach->ncache[p->cbqri_cap[k].level]; i++)
            add_win(p->cbqri_cap[k].base + i * p->cbqri_cap[k].stride, CBQRI_CAPACITY,
                    &p->cbqri_cap[k], ci++);
    for (unsigned k = 0; k < p->n_cbqri_bw; k++)
        for (unsigned i = 0; i < p->nnodes; i++)
            add_win(p->cbqri_bw[k].base + i * p->cbqri_bw[k].stride, CBQRI_BANDWIDTH,
                    &p->cbqri_bw[k], ci++);
    if (ci != model->nctl)
        abort();
    for (unsigned k = 0; k < p->n_cbqri_cap; k++) {
        enum plat_level l = p->cbqri_cap[k].level;
        size_t n = (size_t)1 << p->cbqri_cap[k].blocks;
        if (p->cbqri_cap[k].blocks > 16 || !(X->ways_of[l] = malloc(n * sizeof *X->ways_of[l])))
            abort();
        for (size_t b = 0; b < n; b++)
            X->ways_of[l][b] = mach_cbm_ways(mach, l, b);
    }
}

static const struct win *win_of(uint64_t addr)
{
    for (unsigned i = 0; i < X->nwins; i++)
        if (addr - X->wins[i].base < X->wins[i].size)
            return &X->wins[i];
    return NULL;
}

/* Whether an MMIO access must fault (cbqri.h: "Address map", "Accesses",
 * "Privilege"). */
static int must_fault(unsigned hart, unsigned md, uint64_t addr, unsigned size)
{
    if (hart >= mach->ncpu || md >= CBQRI_NMODE || (size != 4 && size != 8) || addr % size)
        return 1;
    const struct win *w = win_of(addr);
    if (!w || w->ghost) /* 1.0 has no secure windows */
        return 1;
    if (w->secure ? md != CBQRI_SECURE_M : md != CBQRI_M && md != CBQRI_S && md != CBQRI_SECURE_M)
        return 1;
    return (addr - w->base) / 8 >= w->nregs;
}

/* ---- state, hashed ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull + (h >> 29);
}

/* A window's committed registers and tables; with staging, its held halves
 * too. */
static uint64_t hash_win(const struct cbqri_ctl *c, const struct cbqri_win *w, int staging)
{
    uint64_t h = mix(mix(mix(mix(1, w->mon_ctl), w->ctr_val), w->alloc_ctl), w->operand);
    h = mix(mix(mix(h, w->mon_due), w->alloc_due), w->cunits);
    for (size_t i = 0; i < (size_t)c->pc->rcids * c->nat; i++)
        h = mix(mix(h, w->limit[i]), w->units ? w->units[i] : 0);
    for (unsigned i = 0; i < c->pc->mcids; i++) {
        const struct cbqri_ctr *k = &w->ctr[i];
        h = mix(mix(mix(mix(mix(h, k->evt), k->atv), k->at), k->frozen), k->base);
        if (c->kind == CBQRI_CAPACITY) /* the low-water mark the counter reads from */
            h = mix(h, mach_occupancy_low(mach, c->level, c->inst, i, MACH_ANY, (unsigned)w->secure,
                                          0));
    }
    for (int i = 0; staging && i < CBQRI_NREG; i++)
        h = mix(mix(h, w->half[i]), w->have[i]);
    return h;
}

/* Every window of one world (secure 0 or 1), or of both (-1). */
static uint64_t hash_world(int secure, int staging)
{
    uint64_t h = 7;
    for (unsigned i = 0; i < model->nctl; i++)
        for (unsigned s = 0; s < X->nwin; s++)
            if (secure < 0 || (int)s == secure)
                h = mix(h, hash_win(&model->ctl[i], &model->ctl[i].win[s], staging));
    return h;
}

/* The machine's mechanisms the model drives: the world-0 way masks of
 * every class, and every hart's class and tag. */
static uint64_t hash_mech(void)
{
    uint64_t h = 11;
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        for (unsigned i = 0; i < mach->ncache[l]; i++)
            for (unsigned c = 0; c < mach->cache[l][i].nclass; c++)
                for (int t = MACH_DATA; t <= MACH_CODE; t++)
                    h = mix(h, mach_get_mask(mach, l, i, c, t));
    for (unsigned c = 0; c < mach->ncpu; c++)
        h = mix(mix(h, mach->cpu[c].cls), mach->cpu[c].tag);
    return h;
}

static uint64_t hash_csrs(void)
{
    uint64_t h = 13;
    for (unsigned c = 0; c < mach->ncpu; c++)
        h = mix(mix(h, model->csr[c]), model->mstateen0[c]);
    return h;
}

/* Everything but the fault count: what a fault must leave alone. */
static uint64_t hash_all(void)
{
    return mix(mix(mix(hash_world(-1, 1), hash_mech()), model->now), hash_csrs());
}

/* ---- invariants after every operation ---- */

#define ST_BUSY (HW_FMASK(MON_CTL, STATUS) | HW_FMASK(MON_CTL, BUSY)) /* same in alloc_ctl */

/* The writable fields of a control register (1.0 CC_MCTL, CC_ALLOC,
 * BC_MCTL, BC_ALLOC; draft Figures 3, 5, 7, 9): AT (and ATV) only where
 * the controller has per-AT limits. */
static uint64_t ctl_writable(const struct win *w, unsigned off)
{
    if (off == CBQRI_MON_CTL)
        return w->mon
                   ? HW_FMASK(MON_CTL, OP) | HW_FMASK(MON_CTL, MCID) | HW_FMASK(MON_CTL, EVT_ID) |
                         (w->nat > 1 ? HW_FMASK(MON_CTL, AT) | HW_FMASK(MON_CTL, ATV) : 0)
                   : 0;
    return HW_FMASK(ALLOC_CTL, OP) | HW_FMASK(ALLOC_CTL, RCID) |
           (w->nat > 1 ? HW_FMASK(ALLOC_CTL, AT) : 0);
}

/* cc_block_mask's or bc_bw_alloc's writable bits. */
static uint64_t operand_writable(const struct win *w)
{
    if (w->kind == CBQRI_CAPACITY)
        return bits_mask(w->pc->blocks);
    return HW_FMASK(BW_ALLOC, Rbwb) | HW_FMASK(BW_ALLOC, Mweight) |
           (w->nat > 1 ? HW_FMASK(BW_ALLOC, sharedAT) | HW_FMASK(BW_ALLOC, useShared) : 0);
}

static void check_win(const struct win *hw, const struct cbqri_ctl *c, const struct cbqri_win *w)
{
    uint64_t ctl_bits = ctl_writable(hw, CBQRI_ALLOC_CTL) | ST_BUSY;
    uint64_t mon_bits = ctl_writable(hw, CBQRI_MON_CTL) | ST_BUSY;
    FZ_CHECK(!(w->alloc_ctl & ~ctl_bits), "alloc_ctl 0x%llx", (unsigned long long)w->alloc_ctl);
    FZ_CHECK(!(w->mon_ctl & ~mon_bits), "mon_ctl 0x%llx", (unsigned long long)w->mon_ctl);
    FZ_CHECK(hw->mon || !w->mon_ctl, "mon_ctl without monitoring");
    uint64_t ops[2] = {w->mon_ctl, w->alloc_ctl}, due[2] = {w->mon_due, w->alloc_due};
    for (int k = 0; k < 2; k++) {
        uint64_t st = HW_FGET(ops[k], MON_CTL, STATUS), busy = HW_FGET(ops[k], MON_CTL, BUSY);
        FZ_CHECK(st <= 5, "STATUS %llu", (unsigned long long)st);
        FZ_CHECK(!busy || !st, "BUSY with STATUS %llu", (unsigned long long)st);
        /* Started at due - busy_cycles, which is not in the future. */
        FZ_CHECK(!busy || due[k] <= model->now + model->busy_cycles * MACH_TICK,
                 "BUSY until %llu, now %llu", (unsigned long long)due[k],
                 (unsigned long long)model->now);
    }
    for (int i = 0; X->v10 && i < CBQRI_NREG; i++) /* 1.0: halves take effect at once */
        FZ_CHECK(!w->have[i], "1.0 holds a half of register %d", i);
    FZ_CHECK(!(w->operand & ~operand_writable(hw)), "operand 0x%llx past its fields",
             (unsigned long long)w->operand);
    size_t n = (size_t)c->pc->rcids * hw->nat;
    if (c->kind == CBQRI_CAPACITY) {
        uint64_t blocks = bits_mask(c->pc->blocks);
        FZ_CHECK(hw->nat > 1 || HW_FGET(w->alloc_ctl, ALLOC_CTL, STATUS) != 4,
                 "invalid AT from a controller without per-AT limits");
        for (size_t i = 0; i < n; i++)
            FZ_CHECK(w->limit[i] && !(w->limit[i] & ~blocks), "limit %zu: 0x%llx", i,
                     (unsigned long long)w->limit[i]);
        /* cc_cunits (1.0 CC_CUNITS): WARL within [0, lines], read-only 0
         * without CUNITS; the draft has none. */
        int cu = X->v10 && c->pc->cunits;
        FZ_CHECK(w->cunits <= (cu ? hw->lines : 0), "cc_cunits %llu (CUNITS %d, %llu lines)",
                 (unsigned long long)w->cunits, cu, (unsigned long long)hw->lines);
        FZ_CHECK(X->v10 == (w->units != NULL), "cunits table in the wrong text");
        if (w->units) {
            for (size_t i = 0; i < n; i++)
                FZ_CHECK(w->units[i] <= (cu ? hw->lines : 0), "cunits limit %zu: %llu", i,
                         (unsigned long long)w->units[i]);
        }
        if (hw->mon) /* the last counter read: an occupancy, within the cache */
            FZ_CHECK(HW_FGET(w->ctr_val, CC_CTR, CTR) <= hw->lines, "cc_mon_ctr_val %llu lines",
                     (unsigned long long)HW_FGET(w->ctr_val, CC_CTR, CTR));
        return;
    }
    FZ_CHECK(!w->cunits && !w->units, "cunits on a bandwidth controller");
    uint64_t sum = 0;
    for (unsigned r = 0; r < c->pc->rcids; r++)
        for (unsigned a = 0; a < hw->nat; a++) {
            uint64_t v = w->limit[(size_t)r * hw->nat + a];
            if (!HW_FGET(v, BW_ALLOC, useShared)) {
                sum += HW_FGET(v, BW_ALLOC, Rbwb);
                continue;
            }
            unsigned s = (unsigned)HW_FGET(v, BW_ALLOC, sharedAT);
            FZ_CHECK(s < hw->nat && s != a &&
                         !HW_FGET(w->limit[(size_t)r * hw->nat + s], BW_ALLOC, useShared),
                     "RCID %u AT %u shares AT %u", r, a, s);
        }
    FZ_CHECK(sum <= c->pc->mrbwb, "%llu blocks reserved, MRBWB %u", (unsigned long long)sum,
             c->pc->mrbwb);
}

/* The machine's way masks follow the normal window's limits (the secure
 * window's program world 1, which traffic here never uses). */
static void check_masks(const struct win *hw, const struct cbqri_ctl *c)
{
    const struct cbqri_win *w = &c->win[0];
    for (unsigned r = 0; r < c->pc->rcids; r++) {
        uint64_t d = w->limit[(size_t)r * hw->nat], k = w->limit[(size_t)r * hw->nat + hw->nat - 1];
        uint64_t md = mach_get_mask(mach, c->level, c->inst, r, MACH_DATA);
        uint64_t mk = mach_get_mask(mach, c->level, c->inst, r, MACH_CODE);
        FZ_CHECK(md && md == X->ways_of[c->level][d], "L%d/%u RCID %u data mask", c->level, c->inst,
                 r);
        FZ_CHECK(mk && mk == X->ways_of[c->level][k], "L%d/%u RCID %u code mask", c->level, c->inst,
                 r);
    }
}

/* The limiter classes follow the tables, per world: an allocation of its
 * own sets its class's Rbwb and Mweight, and `hard` in 1.0 only (BC_BMASK:
 * Mweight 0 is a hard limit; the draft's weight 0 takes spare bandwidth
 * last); useShared maps the (RCID, AT) to its sharedAT's class. */
static void check_bw(const struct win *hw, const struct cbqri_ctl *c)
{
    for (unsigned s = 0; s < X->nwin; s++)
        for (unsigned r = 0; r < c->pc->rcids; r++)
            for (unsigned a = 0; a < hw->nat; a++) {
                uint64_t v = c->win[s].limit[(size_t)r * hw->nat + a];
                unsigned own = mach_bw_class(mach, s, r, a), use = own;
                if (HW_FGET(v, BW_ALLOC, useShared)) {
                    use = mach_bw_class(mach, s, r, (unsigned)HW_FGET(v, BW_ALLOC, sharedAT));
                } else {
                    const struct bw_class_set *b = &mach->bw[c->inst].set[own];
                    FZ_CHECK(b->rbwb == HW_FGET(v, BW_ALLOC, Rbwb) &&
                                 b->weight == HW_FGET(v, BW_ALLOC, Mweight) && !b->hard == !X->v10,
                             "world %u RCID %u AT %u: limiter rbwb %u weight %u hard %d, table "
                             "0x%llx",
                             s, r, a, b->rbwb, b->weight, b->hard, (unsigned long long)v);
                }
                FZ_CHECK(mach->bw_map[(s * mach->p.bw.classes + r) * 2 + a] == use,
                         "world %u RCID %u AT %u maps to limiter class %u, not %u", s, r, a,
                         mach->bw_map[(s * mach->p.bw.classes + r) * 2 + a], use);
            }
}

/* A control register changes only by a write to it, or by its operation
 * completing: STATUS stays valid until the next write (1.0 CC_MCTL ...),
 * and a completion sets a STATUS, clears BUSY and keeps the rest. */
static void check_kept(void)
{
    if (tgt.any)
        return;
    for (unsigned i = 0; i < model->nctl; i++)
        for (unsigned s = 0; s < X->nwin; s++) {
            const struct cbqri_win *w = &model->ctl[i].win[s];
            uint64_t now[2] = {w->mon_ctl, w->alloc_ctl};
            for (unsigned k = 0; k < 2; k++) {
                if (tgt.ci == i && tgt.s == s && tgt.slot == (k ? 3u : 1u))
                    continue;
                uint64_t was = X->snap[(i * 2 + s) * 2 + k];
                int busy = (int)HW_FGET(was, MON_CTL, BUSY);
                FZ_CHECK(now[k] == was ||
                             (busy && !HW_FGET(now[k], MON_CTL, BUSY) &&
                              HW_FGET(now[k], MON_CTL, STATUS) && !((now[k] ^ was) & ~ST_BUSY)),
                         "ctl %u window %u %s 0x%llx became 0x%llx without a write", i, s,
                         k ? "alloc_ctl" : "mon_ctl", (unsigned long long)was,
                         (unsigned long long)now[k]);
            }
        }
}

static void snapshot(void)
{
    for (unsigned i = 0; i < model->nctl; i++)
        for (unsigned s = 0; s < X->nwin; s++) {
            X->snap[(i * 2 + s) * 2] = model->ctl[i].win[s].mon_ctl;
            X->snap[(i * 2 + s) * 2 + 1] = model->ctl[i].win[s].alloc_ctl;
        }
    tgt.any = 0;
    tgt.slot = ~0u;
}

/* The tag the machine must carry for a hart's (RCID, MCID) (1.0 EMCID). */
static unsigned tag_of(uint64_t rcid, uint64_t mcid)
{
    uint64_t t = X->rpfx ? rcid << X->pfx | (mcid & bits_mask(X->pfx)) : mcid;
    return t < mach->ntags ? (unsigned)t : 0;
}

static void check_state(void)
{
    FZ_CHECK(model->now >= X->last_now, "the clock went back");
    X->last_now = model->now;
    for (unsigned i = 0; i < X->nwins; i++) {
        const struct win *hw = &X->wins[i];
        if (hw->ghost)
            continue;
        const struct cbqri_ctl *c = &model->ctl[hw->ci];
        check_win(hw, c, &c->win[hw->secure]);
        if (hw->secure)
            continue;
        if (c->kind == CBQRI_CAPACITY)
            check_masks(hw, c);
        else
            check_bw(hw, c);
    }
    check_kept();
    uint64_t ids = (HW_FMASK(SRMCFG, RCID) & bits_mask(X->rcid_bits)) | bits_mask(X->mcid_bits)
                                                                            << SRMCFG_MCID_SHIFT;
    const uint64_t se = 1ull << 55; /* mstateen0 bit 55 (Ssqosid ch. 2) */
    for (unsigned h = 0; h < mach->ncpu; h++) {
        uint64_t v = model->csr[h];
        FZ_CHECK(!(v & ~ids) && !(v & ~bits_mask(X->xlen)), "hart %u %s 0x%llx", h,
                 X->v10 ? "srmcfg" : "sqoscfg", (unsigned long long)v);
        FZ_CHECK(!(model->mstateen0[h] & ~(X->smstateen ? se : 0)), "hart %u mstateen0 0x%llx", h,
                 (unsigned long long)model->mstateen0[h]);
        uint64_t rcid = HW_FGET(v, SRMCFG, RCID), mcid = HW_FGET(v, SRMCFG, MCID);
        FZ_CHECK(mach->cpu[h].cls == rcid, "hart %u class %u, RCID %llu", h, mach->cpu[h].cls,
                 (unsigned long long)rcid);
        FZ_CHECK(mach->cpu[h].tag == tag_of(rcid, mcid), "hart %u tag %u, RCID %llu MCID %llu", h,
                 mach->cpu[h].tag, (unsigned long long)rcid, (unsigned long long)mcid);
    }
}

static int any_busy(void)
{
    for (unsigned i = 0; i < model->nctl; i++)
        for (unsigned s = 0; s < X->nwin; s++) {
            const struct cbqri_win *w = &model->ctl[i].win[s];
            if (HW_FGET(w->mon_ctl, MON_CTL, BUSY) || HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY))
                return 1;
        }
    return 0;
}

/* ---- the input ---- */

struct in {
    const uint8_t *d;
    size_t n, i;
};

static uint64_t get(struct in *in, int bytes)
{
    uint64_t v = 0;
    for (int k = 0; k < bytes; k++)
        v |= (uint64_t)(in->i < in->n ? in->d[in->i++] : 0) << (8 * k);
    return v;
}

static unsigned get_hart(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    return b < 0xf0 ? b % mach->ncpu : mach->ncpu + (b & 0xf); /* rarely one that does not exist */
}

static unsigned get_size(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    return b & 0x80 ? (b & 1 ? 8 : 4) : b % 10;
}

static uint64_t get_addr(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    const struct win *w = &X->wins[get(in, 1) % X->nwins];
    switch (b % 8) {
    default: { /* a register (cc_cunits too), its high half, or misaligned */
        unsigned m = (unsigned)get(in, 1);
        return w->base + (b >> 3) % 6 * 8 + (m & 0x80 ? 4 : 0) + (m & 0x40 ? m & 7 : 0);
    }
    case 5: { /* the edges of the window and of the block of windows */
        int64_t s = (int64_t)w->size;
        const int64_t edge[] = {-8, -4, -1, s - 8, s - 4, s - 1, s, s + 4, 0x10000};
        return w->base + (uint64_t)edge[(b >> 3) % 9];
    }
    case 6:
        return w->base + get(in, 2) % w->size;
    case 7:
        return get(in, 8);
    }
}

/* A value shaped like the register's fields, or raw. */
static uint64_t get_value(struct in *in, uint64_t addr)
{
    unsigned b = (unsigned)get(in, 1);
    const struct win *w = win_of(addr);
    if (!w || b & 0x80)
        return get(in, 8);
    unsigned off = (unsigned)(addr - w->base) & ~7u, f = (unsigned)get(in, 2);
    uint64_t v = 0;
    switch (off) {
    case CBQRI_MON_CTL:
        v = HW_FSET(v, MON_CTL, OP, b & 0x40 ? b & 31 : b % 4);
        v = HW_FSET(v, MON_CTL, AT, f & 0x100 ? 7 : f % 3);
        v = HW_FSET(v, MON_CTL, MCID, f & 0x200 ? get(in, 2) : (f >> 2) % 66);
        v = HW_FSET(v, MON_CTL, EVT_ID, f & 0x400 ? get(in, 1) : (f >> 4) % 5);
        v = HW_FSET(v, MON_CTL, ATV, (f >> 11) & 1);
        break;
    case CBQRI_ALLOC_CTL:
        v = HW_FSET(v, ALLOC_CTL, OP, b & 0x40 ? b & 31 : b % 5);
        v = HW_FSET(v, ALLOC_CTL, AT, f & 0x100 ? 7 : f % 3);
        v = HW_FSET(v, ALLOC_CTL, RCID, f & 0x200 ? get(in, 2) : (f >> 2) % 18);
        break;
    case CBQRI_BLOCK_MASK: /* = CBQRI_BW_ALLOC */
        if (w->kind == CBQRI_CAPACITY)
            return f & 0x8000 ? 0 : get(in, 2) & (f & 0x4000 ? ~0ull : bits_mask(w->pc->blocks));
        v = HW_FSET(v, BW_ALLOC, Rbwb, f & 0x100 ? get(in, 2) : get(in, 1) % (w->pc->mrbwb + 3));
        v = HW_FSET(v, BW_ALLOC, Mweight, f & 0x800 ? 0 : get(in, 1));
        v = HW_FSET(v, BW_ALLOC, sharedAT, f % 3);
        v = HW_FSET(v, BW_ALLOC, useShared, (f >> 2) & 1);
        break;
    case CBQRI_CUNITS: /* cc_cunits: small limits, the instance's lines and around, huge */
        if (w->kind != CBQRI_CAPACITY)
            return get(in, 8);
        switch (f % 8) {
        case 0:
            return 0;
        case 1:
            return (f >> 3) % 8 + 1;
        case 2:
            return w->lines - 1;
        case 3:
            return w->lines;
        case 4:
            return w->lines + 1 + (f >> 3) % 4;
        case 5:
            return 1ull << 32 | (f >> 3) % 8;
        case 6:
            return (f >> 3) % 1024 + 1;
        default:
            return get(in, 8);
        }
    default:
        return get(in, 8);
    }
    if (f & 0x1000) /* bits outside the fields: WPRI, STATUS, BUSY */
        v |= get(in, 8) & ~bits_mask(28);
    return v;
}

/* ---- operations ---- */

/* A committed register as a read must return it. */
static uint64_t reg_value(const struct win *hw, const struct cbqri_win *w, unsigned off)
{
    switch (off) {
    case CBQRI_MON_CTL:
        return w->mon_ctl;
    case CBQRI_ALLOC_CTL:
        return w->alloc_ctl;
    case CBQRI_BLOCK_MASK:
        return w->operand;
    case CBQRI_CUNITS:
        return hw->pc->cunits ? w->cunits : 0;
    }
    return 0;
}

/* What a write did to its register (the others: check_kept, and the
 * window hash for read-only registers). v64 is the write as one 8-byte
 * value: the halves of a draft pair joined, or a 1.0 half over the
 * register as it was; effective says whether it took effect at all. */
static void check_write(const struct win *hw, const struct cbqri_win *was,
                        const struct cbqri_win *w, unsigned off, int effective, uint64_t v64,
                        int high_half)
{
    int alloc_busy = (int)HW_FGET(was->alloc_ctl, ALLOC_CTL, BUSY);
    switch (off) {
    case CBQRI_MON_CTL:
    case CBQRI_ALLOC_CTL: {
        uint64_t before = off == CBQRI_MON_CTL ? was->mon_ctl : was->alloc_ctl;
        uint64_t after = off == CBQRI_MON_CTL ? w->mon_ctl : w->alloc_ctl;
        uint64_t wr = ctl_writable(hw, off);
        /* 1.0: the high half holds only STATUS, BUSY and WPRI: it starts
         * nothing. Without monitoring mon_ctl is read-only zero. */
        if (!effective || (X->v10 && high_half) || !wr || HW_FGET(before, MON_CTL, BUSY)) {
            FZ_CHECK(after == before, "offset %u: 0x%llx became 0x%llx by a write that %s", off,
                     (unsigned long long)before, (unsigned long long)after,
                     HW_FGET(before, MON_CTL, BUSY) ? "came while BUSY" : "starts nothing");
            return;
        }
        FZ_CHECK((after & ~ST_BUSY) == (v64 & wr), "offset %u wrote 0x%llx, holds 0x%llx", off,
                 (unsigned long long)v64, (unsigned long long)after);
        if (model->busy_cycles)
            FZ_CHECK(HW_FGET(after, MON_CTL, BUSY) && !HW_FGET(after, MON_CTL, STATUS),
                     "offset %u: not BUSY after a write (0x%llx)", off, (unsigned long long)after);
        else
            FZ_CHECK(!HW_FGET(after, MON_CTL, BUSY) && HW_FGET(after, MON_CTL, STATUS),
                     "offset %u: busy_cycles 0, yet 0x%llx", off, (unsigned long long)after);
        return;
    }
    case CBQRI_BLOCK_MASK: {
        uint64_t want = effective && !alloc_busy ? v64 & operand_writable(hw) : was->operand;
        FZ_CHECK(w->operand == want, "operand wrote 0x%llx, holds 0x%llx, want 0x%llx",
                 (unsigned long long)v64, (unsigned long long)w->operand, (unsigned long long)want);
        return;
    }
    case CBQRI_CUNITS: { /* 1.0 capacity only; WARL up to the lines */
        uint64_t want = was->cunits;
        if (effective && !alloc_busy && hw->pc->cunits)
            want = v64 < hw->lines ? v64 : hw->lines;
        FZ_CHECK(w->cunits == want, "cc_cunits wrote 0x%llx, holds %llu, want %llu",
                 (unsigned long long)v64, (unsigned long long)w->cunits, (unsigned long long)want);
        return;
    }
    }
}

static void op_mmio(struct in *in, int write)
{
    unsigned hart = get_hart(in), size = get_size(in);
    unsigned md = hart < mach->ncpu ? con->mode[hart] : CBQRI_M;
    if ((get(in, 1) & 0x3f) == 0)
        md = CBQRI_NMODE; /* a mode that does not exist */
    uint64_t addr = get_addr(in), v = write ? get_value(in, addr) : 0;
    if (size == 4)
        v = addr & 4 ? v >> 32 : v & 0xffffffffu;
    int fault = must_fault(hart, md, addr, size);
    const struct win *w = win_of(addr);
    if (!fault) /* what the access does first: nothing due completes inside it */
        cbqri_tick(model, mach->cpu[hart].now);
    uint64_t all = fault ? hash_all() : 0, faults = model->faults, now = model->now;
    uint64_t other = fault ? 0 : hash_world(!w->secure, 1);
    uint64_t mech = !fault && w->secure ? hash_mech() : 0, csrs = hash_csrs();
    const struct cbqri_ctl *ctl = NULL;
    int sec = -1;
    if (!fault) {
        cbqri_reg_name(model, addr, &ctl, &sec);
        FZ_CHECK(ctl == &model->ctl[w->ci] && sec == w->secure,
                 "0x%llx is not in controller %u's %s window", (unsigned long long)addr, w->ci,
                 w->secure ? "secure" : "normal");
    }
    const struct cbqri_win *cw = ctl ? &ctl->win[w->secure] : NULL;
    struct cbqri_win was;
    if (cw)
        was = *cw;
    uint64_t mine = cw ? hash_win(ctl, cw, 0) : 0, mine_st = cw ? hash_win(ctl, cw, 1) : 0;
    uint64_t got = 0x5a5a;
    enum hw_fault f = write ? cbqri_mmio_write(model, hart, md, addr, size, v)
                            : cbqri_mmio_read(model, hart, md, addr, size, &got);
    FZ_CHECK((f == HW_ACCESS_FAULT) == fault && (f == HW_OK || f == HW_ACCESS_FAULT),
             "%s: %s hart %u mode %u addr 0x%llx size %u: %s", X->label, write ? "write" : "read",
             hart, md, (unsigned long long)addr, size, hw_fault_name(f));
    if (fault) {
        FZ_CHECK(hash_all() == all, "a faulting access changed the state");
        FZ_CHECK(model->faults == faults + 1 && model->fault_addr == addr, "fault not counted");
        FZ_CHECK(write || got == 0, "a faulting read returned 0x%llx", (unsigned long long)got);
        return;
    }
    FZ_CHECK(model->faults == faults, "an access counted as a fault");
    FZ_CHECK(model->now == now + model->access_cycles * MACH_TICK, "an access took %llu ticks",
             (unsigned long long)(model->now - now));
    FZ_CHECK(hash_world(!w->secure, 1) == other, "a %s access changed the other world",
             w->secure ? "secure" : "normal");
    FZ_CHECK(hash_csrs() == csrs, "an MMIO access changed a CSR");
    if (w->secure)
        FZ_CHECK(hash_mech() == mech, "a secure access changed a machine mask");
    unsigned off = (unsigned)(addr - w->base) & ~7u, slot = off / 8;
    int high = size == 4 && (addr & 4);
    if (!write) {
        FZ_CHECK(hash_win(ctl, cw, 1) == mine_st, "a read changed registers");
        uint64_t want = 0;
        int known = 1;
        if (off == CBQRI_CAPABILITIES)
            want = w->cap;
        else if (off == CBQRI_MON_CTR_VAL)
            known = 0;
        else
            want = reg_value(w, cw, off); /* committed, never a held half */
        want = size == 8 ? want : high ? want >> 32 : want & 0xffffffffu;
        FZ_CHECK(!known || got == want, "%s offset %u read 0x%llx, want 0x%llx", X->label, off,
                 (unsigned long long)got, (unsigned long long)want);
        if (off == CBQRI_MON_CTR_VAL && size == 8 && w->kind == CBQRI_CAPACITY)
            /* An occupancy, exact or estimated, never passes the cache. */
            FZ_CHECK(HW_FGET(got, CC_CTR, CTR) <= w->lines, "occupancy %llu lines",
                     (unsigned long long)HW_FGET(got, CC_CTR, CTR));
        if (off == CBQRI_CUNITS)
            FZ_CHECK(got <= (w->pc->cunits ? w->lines : 0), "cc_cunits read %llu",
                     (unsigned long long)got);
        return;
    }
    tgt.ci = w->ci;
    tgt.s = (unsigned)w->secure;
    tgt.slot = slot;
    /* A write to a read-only register commits nothing. */
    if (off == CBQRI_CAPABILITIES || off == CBQRI_MON_CTR_VAL)
        FZ_CHECK(hash_win(ctl, cw, 0) == mine, "a write changed what it may not (offset %u)", off);
    /* The held halves of the other registers stay. */
    for (unsigned i = 0; i < CBQRI_NREG; i++)
        FZ_CHECK(i == slot || (cw->have[i] == was.have[i] && cw->half[i] == was.half[i]),
                 "a write to offset %u changed register %u's held half", off, i);
    uint64_t part = high ? v << 32 : v, keep = size == 8 ? 0 : high ? 0xffffffffu : ~0xffffffffull;
    uint64_t v64;
    int effective;
    if (size == 8) {
        effective = 1;
        v64 = v;
        FZ_CHECK(!cw->have[slot], "an 8-byte write left a half held");
    } else if (X->v10) { /* 1.0: the half over the register as it reads */
        effective = 1;
        v64 = (reg_value(w, &was, off) & keep) | part;
    } else { /* draft: the pair commits when both halves have come */
        effective = (was.have[slot] & (high ? 1 : 2)) != 0;
        v64 = (was.half[slot] & keep) | part;
        if (effective) {
            FZ_CHECK(!cw->have[slot], "a completed pair left a half held");
        } else {
            FZ_CHECK(hash_win(ctl, cw, 0) == mine, "a lone half committed (offset %u)", off);
            FZ_CHECK(cw->have[slot] == (was.have[slot] | (high ? 2 : 1)) &&
                         (cw->half[slot] & ~keep) == part,
                     "the half at offset %u is not held", off);
        }
    }
    check_write(w, &was, cw, off, effective, v64, high);
}

/* The CSR an access names: selector 0 the text's ID CSR, 1 mstateen0, 2
 * mstateen0h, 3 another (sqoscfg, srmcfg, any 12-bit or 32-bit number). */
static unsigned get_csr(struct in *in, unsigned sel)
{
    switch (sel) {
    case 0:
        return X->v10 ? CBQRI_CSR_SRMCFG : CBQRI_CSR_SQOSCFG;
    case 1:
        return CBQRI_CSR_MSTATEEN0;
    case 2:
        return CBQRI_CSR_MSTATEEN0H;
    default: {
        unsigned k = (unsigned)get(in, 1);
        switch (k % 4) {
        case 0:
            return CBQRI_CSR_SQOSCFG;
        case 1:
            return CBQRI_CSR_SRMCFG;
        case 2:
            return (unsigned)get(in, 2) & 0xfff;
        default:
            return (unsigned)get(in, 4);
        }
    }
    }
}

/* The exception a CSR access must raise (draft 2.1.1; Ssqosid ch. 2;
 * Smstateen): the ID CSR of the other text, mstateen0 without Smstateen,
 * mstateen0h unless RV32, and any other number do not exist; srmcfg and
 * sqoscfg are S-mode CSRs (U illegal, VS/VU virtual), srmcfg with
 * Smstateen and bit 55 clear illegal below M; mstateen0(h) M-mode only. */
static enum hw_fault csr_want(unsigned hart, unsigned md, unsigned csr)
{
    if (hart >= mach->ncpu || md >= CBQRI_NMODE)
        return HW_ILLEGAL;
    int m = md == CBQRI_M || md == CBQRI_SECURE_M;
    switch (csr) {
    case CBQRI_CSR_SQOSCFG:
        if (X->v10)
            return HW_ILLEGAL;
        break;
    case CBQRI_CSR_SRMCFG:
        if (!X->v10)
            return HW_ILLEGAL;
        if (m)
            return HW_OK;
        if (X->smstateen && !(model->mstateen0[hart] >> 55 & 1))
            return HW_ILLEGAL;
        break;
    case CBQRI_CSR_MSTATEEN0:
        return X->smstateen && m ? HW_OK : HW_ILLEGAL;
    case CBQRI_CSR_MSTATEEN0H:
        return X->smstateen && X->xlen == 32 && m ? HW_OK : HW_ILLEGAL;
    default:
        return HW_ILLEGAL;
    }
    return md == CBQRI_U ? HW_ILLEGAL : md == CBQRI_VS || md == CBQRI_VU ? HW_VIRTUAL : HW_OK;
}

static void op_csr(struct in *in, int write)
{
    unsigned hart = get_hart(in), b = (unsigned)get(in, 1);
    unsigned md = hart < mach->ncpu ? con->mode[hart] : CBQRI_M;
    if ((b & 0x3f) == 0)
        md = CBQRI_NMODE; /* a mode that does not exist */
    unsigned csr = get_csr(in, b >> 6);
    uint64_t v = get(in, 4), got = 0x5a5a;
    if (b & 0x20)
        v |= get(in, 4) << 32;
    if (b & 0x10) /* mstateen0 bit 55 (bit 23 of mstateen0h) */
        v |= csr == CBQRI_CSR_MSTATEEN0H ? 1ull << 23 : 1ull << 55;
    enum hw_fault want = csr_want(hart, md, csr);
    uint64_t all = hash_all(), faults = model->faults;
    uint64_t old_csr = hart < mach->ncpu ? model->csr[hart] : 0;
    uint64_t old_se = hart < mach->ncpu ? model->mstateen0[hart] : 0;
    enum hw_fault f = write ? cbqri_csr_write(model, hart, md, csr, v)
                            : cbqri_csr_read(model, hart, md, csr, &got);
    FZ_CHECK(f == want, "%s: CSR 0x%x hart %u mode %u: %s, want %s", X->label, csr, hart, md,
             hw_fault_name(f), hw_fault_name(want));
    FZ_CHECK(model->faults == faults, "a CSR access counted as an access fault");
    if (f != HW_OK) {
        FZ_CHECK(hash_all() == all, "a refused CSR access changed the state");
        FZ_CHECK(write || got == 0, "a refused CSR read returned 0x%llx", (unsigned long long)got);
        return;
    }
    uint64_t x = bits_mask(X->xlen), se = 1ull << 55;
    if (!write) {
        uint64_t exp = csr == CBQRI_CSR_MSTATEEN0    ? old_se & x
                       : csr == CBQRI_CSR_MSTATEEN0H ? old_se >> 32
                                                     : old_csr;
        FZ_CHECK(got == exp, "CSR 0x%x read 0x%llx, want 0x%llx", csr, (unsigned long long)got,
                 (unsigned long long)exp);
        FZ_CHECK(hash_all() == all, "a CSR read changed the state");
        return;
    }
    v &= x; /* the CSR is XLEN bits wide */
    if (csr == CBQRI_CSR_MSTATEEN0 || csr == CBQRI_CSR_MSTATEEN0H) {
        uint64_t exp = csr == CBQRI_CSR_MSTATEEN0 ? (old_se & ~x) | (v & se)
                                                  : (old_se & 0xffffffffu) | (v << 32 & se);
        FZ_CHECK(model->mstateen0[hart] == exp && model->csr[hart] == old_csr,
                 "CSR 0x%x wrote 0x%llx: mstateen0 0x%llx, want 0x%llx", csr, (unsigned long long)v,
                 (unsigned long long)model->mstateen0[hart], (unsigned long long)exp);
        return;
    }
    uint64_t r = HW_FGET(v, SRMCFG, RCID) & bits_mask(X->rcid_bits);
    uint64_t m = HW_FGET(v, SRMCFG, MCID) & bits_mask(X->mcid_bits);
    uint64_t exp = HW_FSET(HW_FSET(0, SRMCFG, RCID, r), SRMCFG, MCID, m);
    FZ_CHECK(model->csr[hart] == exp && model->mstateen0[hart] == old_se,
             "CSR 0x%x wrote 0x%llx, holds 0x%llx", csr, (unsigned long long)v,
             (unsigned long long)model->csr[hart]);
}

static void op_tick(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    uint64_t d = b & 0x80 ? get(in, 3) % TICK_MAX : (b & 0x7f) * (MACH_TICK / 4);
    if (b & 0x40) { /* a hart's clock moves instead: its next access happens then */
        struct mach_cpu *p = &mach->cpu[get(in, 1) % mach->ncpu];
        p->now = (p->now > model->now ? p->now : model->now) + d;
        return;
    }
    cbqri_tick(model, model->now + d);
    if (!(b & 0x80))
        cbqri_tick(model, model->now - d); /* backwards: ignored */
}

/* BUSY clears busy_cycles after the write that set it, at the latest. */
static void op_wait(void)
{
    cbqri_tick(model, model->now + model->busy_cycles * MACH_TICK);
    FZ_CHECK(!any_busy(), "BUSY after busy_cycles");
}

/* The (capacity controller, RCID, AT)s with a cunits limit, and the lines
 * each held before the traffic. */
#define MAX_LIM 512
struct lim {
    unsigned ci, rcid, at;
    uint64_t limit, before;
};
static struct lim lim[MAX_LIM];

static unsigned limits_now(void)
{
    unsigned n = 0;
    for (unsigned i = 0; X->v10 && i < X->nwins; i++) {
        const struct win *hw = &X->wins[i];
        const struct cbqri_ctl *c = &model->ctl[hw->ci];
        if (hw->ghost || hw->kind != CBQRI_CAPACITY)
            continue;
        for (unsigned r = 0; r < c->pc->rcids; r++)
            for (unsigned a = 0; a < hw->nat; a++) {
                uint64_t l = c->win[0].units[(size_t)r * hw->nat + a];
                if (!l)
                    continue;
                FZ_CHECK(n < MAX_LIM, "too many limits");
                int at = hw->nat > 1 ? (int)a : MACH_ANY; /* one AT: one limit on every line */
                lim[n++] = (struct lim){hw->ci, r, a, l,
                                        mach_class_lines(mach, c->level, c->inst, 0, r, at)};
            }
    }
    return n;
}

/* Requests from random harts under their RCID and MCID, so counters count:
 * over 4 MiB per hart, or all in one cache set (lines 64 KiB apart: one L2
 * set, a few L3 sets), so that lines are evicted and occupancies fall;
 * loads and stores, and with b bit 6 code fetches too. Each hart's clock
 * moves on by what its request took, as a core's would: the memory's
 * queues stay those of a machine in time. Then no (RCID, AT) holds more
 * lines than its cunits limit, or than it held before. */
static void op_traffic(struct in *in)
{
    unsigned b = (unsigned)get(in, 1), set = (unsigned)get(in, 1) * 10 % 1024;
    unsigned nlim = limits_now();
    rng_seed(&rng_s, get(in, 2), 0);
    for (unsigned i = 0; i < ((b & 0x3f) + 1) * 4; i++) {
        uint64_t r = rng_next(&rng_s);
        struct mach_cpu *p = &mach->cpu[(r >> 33) % mach->ncpu];
        uint64_t a = b & 0x80 ? ((r >> 20) % 48) << 16 | (uint64_t)set << 6 : (r >> 20) & 0x3fffc0;
        unsigned kind = (r >> 13) & 1 ? HIER_LOAD : HIER_STORE;
        if (b & 0x40 && !((r >> 14) & 3))
            kind = HIER_IFETCH;
        p->now += MACH_TICK + mach_access(mach, p, kind, mach_phys_base(p->node, p->id) | a);
    }
    for (unsigned k = 0; k < nlim; k++) {
        const struct cbqri_ctl *c = &model->ctl[lim[k].ci];
        int at = c->nat > 1 ? (int)lim[k].at : MACH_ANY;
        uint64_t n = mach_class_lines(mach, c->level, c->inst, 0, lim[k].rcid, at);
        uint64_t most = lim[k].limit > lim[k].before ? lim[k].limit : lim[k].before;
        FZ_CHECK(n <= most, "%s: L%d/%u RCID %u AT %u holds %llu lines, limit %llu, %llu before",
                 X->label, c->level, c->inst, lim[k].rcid, lim[k].at, (unsigned long long)n,
                 (unsigned long long)lim[k].limit, (unsigned long long)lim[k].before);
    }
}

static const char *const reg_words[] = {"read32", "read64", "write32", "write64"};

/* A CSR as the console names it. */
static void csr_word(struct in *in, unsigned k, char *buf, size_t n)
{
    static const char *const names[] = {"sqoscfg", "srmcfg", "mstateen0", "mstateen0h"};
    switch (k) {
    case 0:
        snprintf(buf, n, "%s", X->v10 ? "srmcfg" : "sqoscfg");
        break;
    case 1:
    case 2:
    case 3:
    case 4:
        snprintf(buf, n, "%s", names[k - 1]);
        break;
    case 5: {
        static const unsigned num[] = {CBQRI_CSR_SRMCFG, CBQRI_CSR_MSTATEEN0, CBQRI_CSR_MSTATEEN0H,
                                       CBQRI_CSR_SQOSCFG};
        unsigned c = (unsigned)get(in, 1);
        if (c & 4)
            snprintf(buf, n, "%u", num[c % 4]);
        else
            snprintf(buf, n, "0x%x", num[c % 4]);
        break;
    }
    case 6:
        snprintf(buf, n, "0x%x", (unsigned)get(in, 2) & 0xfff);
        break;
    default:
        snprintf(buf, n, "%llu", (unsigned long long)get(in, 4));
    }
}

/* A console line: a command made from the operands, or raw bytes. */
static void op_console(struct in *in)
{
    char line[160], name[32];
    unsigned b = (unsigned)get(in, 1);
    switch (b % 4) {
    case 0: {
        unsigned k = b >> 2 & 3, hart = get_hart(in);
        uint64_t addr = get_addr(in), v = k >= 2 ? get_value(in, addr) : 0;
        if (k < 2)
            snprintf(line, sizeof line, "mmio %s 0x%llx hart %u", reg_words[k],
                     (unsigned long long)addr, hart);
        else
            snprintf(line, sizeof line, "mmio %s 0x%llx %llu hart %u", reg_words[k],
                     (unsigned long long)addr, (unsigned long long)(k == 2 ? v & 0xffffffffu : v),
                     hart);
        break;
    }
    case 1: {
        unsigned hart = get_hart(in);
        csr_word(in, b >> 3 & 7, name, sizeof name);
        uint64_t v = get(in, 4);
        if (b & 0x80) /* mstateen0 bit 55 and high bits */
            v |= get(in, 4) << 32 | 1ull << 55;
        snprintf(line, sizeof line, "csr %s %u %s 0x%llx", b & 4 ? "write" : "read", hart, name,
                 (unsigned long long)v);
        if (!(b & 4))
            *strrchr(line, ' ') = '\0';
        break;
    }
    case 2:
        snprintf(line, sizeof line, "mode %u %s", get_hart(in),
                 (b >> 2) % 8 < CBQRI_NMODE ? cbqri_mode_name[(b >> 2) % 8] : "HS");
        break;
    default: {
        size_t n = get(in, 1) % (sizeof line - 1);
        for (size_t i = 0; i < n; i++)
            line[i] = (char)get(in, 1);
        line[n] = '\0';
    }
    }
    cbqri_console_line(con, line, devnull);
}

static int run_ns(void *ctx, uint64_t ns, struct err *e)
{
    struct text *t = ctx;
    (void)e;
    if (ns > 1000000)
        ns = 1000000;
    cbqri_tick(&t->q, t->q.now + (uint64_t)((double)ns * 1e-9 * t->mach.ticks_per_sec));
    return 0;
}

/* ---- the four texts ---- */

/* src with the first `from` replaced by `to` (the shipped profile must
 * still say `from`: a harness that silently fuzzed something else would
 * be worse than one that stops). */
static char *subst(char *src, const char *from, const char *to)
{
    char *at = strstr(src, from);
    if (!at) {
        fprintf(stderr, "fuzz_cbqri: riscv-soc no longer says '%s'\n", from);
        abort();
    }
    size_t n = strlen(src), a = (size_t)(at - src), f = strlen(from), t = strlen(to);
    char *out = malloc(n - f + t + 1);
    if (!out)
        abort();
    memcpy(out, src, a);
    memcpy(out + a, to, t);
    memcpy(out + a + t, at + f, n - a - f + 1);
    free(src);
    return out;
}

static int load_text(unsigned which, struct plat *p, struct err *e)
{
    if (which == 0)
        return plat_load(p, "riscv-soc-draft", e);
    if (which == 1)
        return plat_load(p, "riscv-soc", e);
    const char *base = plat_builtin_text("riscv-soc");
    char *s = base ? strdup(base) : NULL;
    if (!s)
        abort();
    if (which == 2) {
        s = subst(s, "name: riscv-soc\n", "name: riscv-soc-prefix\n");
        s = subst(s, "  cbqri:\n", "  cbqri:\n    mcid_prefix: 2\n");
        s = subst(s, "smstateen: true", "smstateen: false");
        s = subst(s, "blocks: 8, frcid: true, cunits: true}", "blocks: 8, frcid: true}");
    } else {
        s = subst(s, "name: riscv-soc\n", "name: riscv-soc-rv32\n");
        s = subst(s, "xlen: 64", "xlen: 32");
        s = subst(s, "allocation: {classes: 16, cbm_len: 16}",
                  "allocation: {classes: 16, cbm_len: 16, cdp: true}");
        s = subst(s, "blocks: 8, frcid: true, cunits: true}",
                  "blocks: 8, frcid: true, cunits: true, stride: 48}");
        s = subst(s, "blocks: 16, frcid: true, cunits: true}",
                  "blocks: 16, frcid: true, cunits: true, stride: 48}");
        s = subst(s, "mrbwb: 224}", "mrbwb: 224, stride: 40}");
    }
    struct conf c;
    int rc = conf_load_mem(&c, which == 2 ? "riscv-soc-prefix.yaml" : "riscv-soc-rv32.yaml", s,
                           strlen(s), e);
    if (!rc) {
        rc = plat_from_conf(p, &c, e);
        conf_free(&c);
    }
    free(s);
    return rc;
}

static void setup_text(unsigned which)
{
    static const char *const label[NTEXT] = {"draft", "1.0", "1.0 mcid_prefix 2", "1.0 xlen 32"};
    struct plat p;
    struct err e;
    X = &texts[which];
    mach = &X->mach;
    model = &X->q;
    con = &X->con;
    X->label = label[which];
    if (load_text(which, &p, &e) || mach_init(mach, &p, 16, &e) || cbqri_init(model, mach, &e) ||
        cbqri_console_init(con, model, &e)) {
        fprintf(stderr, "fuzz_cbqri: %s: %s\n", X->label, e.msg);
        abort();
    }
    /* What each text must be, from the profile's text (not the model). */
    const struct plat *q = &mach->p;
    X->v10 = q->cbqri_spec == PLAT_CBQRI_1_0;
    X->nwin = X->v10 ? 1 : 2;
    X->xlen = X->v10 ? q->core.xlen : 32;
    X->smstateen = X->v10 && q->core.smstateen;
    X->rpfx = X->v10 && q->cbqri_rpfx;
    X->pfx = X->rpfx ? q->cbqri_p : 0;
    unsigned maxr = 0;
    for (unsigned k = 0; k < q->n_cbqri_cap; k++)
        maxr = q->cbqri_cap[k].rcids > maxr ? q->cbqri_cap[k].rcids : maxr;
    for (unsigned k = 0; k < q->n_cbqri_bw; k++)
        maxr = q->cbqri_bw[k].rcids > maxr ? q->cbqri_bw[k].rcids : maxr;
    X->rcid_bits = bits_for(maxr);
    X->mcid_bits = bits_for(q->mon.tags);
    static const int want_v10[NTEXT] = {0, 1, 1, 1}, want_se[NTEXT] = {0, 1, 0, 1};
    static const unsigned want_xlen[NTEXT] = {32, 64, 64, 32}, want_pfx[NTEXT] = {0, 0, 2, 0};
    if (X->v10 != want_v10[which] || X->xlen != want_xlen[which] ||
        X->smstateen != want_se[which] || X->rpfx != (which == 2) || X->pfx != want_pfx[which] ||
        model->v10 != X->v10 || model->xlen != X->xlen || model->rpfx != X->rpfx ||
        model->pfx != X->pfx || model->smstateen != X->smstateen) {
        fprintf(stderr, "fuzz_cbqri: %s: the profile is not the text meant\n", X->label);
        abort();
    }
    build_map();
    if (!(X->snap = calloc((size_t)model->nctl * 4, sizeof *X->snap)))
        abort();
    con->k.run = run_ns;
    con->k.ctx = X;
    X->last_now = model->now;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    unsigned which = data[0] >> 4 & 3;
    if (!texts[which].label)
        setup_text(which);
    X = &texts[which];
    mach = &X->mach;
    model = &X->q;
    con = &X->con;
    static const uint64_t busy[] = {CBQRI_BUSY_CYCLES, 0, 1, 1000};
    static const uint64_t access[] = {CBQRI_ACCESS_CYCLES, 0, 1, 100};
    model->busy_cycles = busy[data[0] & 3];
    model->access_cycles = access[data[0] >> 2 & 3];
    cbqri_reset(model);
    for (unsigned h = 0; h < mach->ncpu; h++)
        con->mode[h] = CBQRI_M;
    snapshot();
    tgt.any = 1;
    check_state();
    struct in in = {data, size, 1};
    while (in.i < in.n) {
        unsigned op = (unsigned)get(&in, 1);
        snapshot();
        switch (op % 16) {
        case 0:
        case 1:
        case 2:
            op_mmio(&in, 0);
            break;
        case 3:
        case 4:
        case 5:
        case 6:
            op_mmio(&in, 1);
            break;
        case 7:
            op_csr(&in, 0);
            break;
        case 8:
            op_csr(&in, 1);
            break;
        case 9: {
            unsigned h = (unsigned)get(&in, 1) % mach->ncpu;
            con->mode[h] = (enum cbqri_mode)(get(&in, 1) % CBQRI_NMODE);
            break;
        }
        case 10:
            op_tick(&in);
            break;
        case 11:
            op_wait();
            break;
        case 12:
            op_traffic(&in);
            break;
        case 13:
        case 14:
            tgt.any = 1;
            op_console(&in);
            break;
        default:
            if (op == 0xff) {
                tgt.any = 1;
                cbqri_reset(model);
                for (unsigned h = 0; h < mach->ncpu; h++)
                    FZ_CHECK(!model->csr[h] && !model->mstateen0[h], "hart %u's CSRs after reset",
                             h);
            } else {
                op_wait();
            }
        }
        check_state();
    }
    return 0;
}
