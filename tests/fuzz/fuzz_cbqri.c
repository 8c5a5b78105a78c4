/* libFuzzer harness for the RISC-V CBQRI register model (src/hw/cbqri.c)
 * on riscv-soc, and for its console (src/hw/cbqri_console.c).
 *
 * The input is a sequence of operations, each an opcode byte and its
 * operands: MMIO reads and writes of any size 0..9 (4 and 8 the legal
 * ones) at addresses drawn mostly from the controllers' normal and secure
 * windows (registers, misaligned offsets, offsets past the registers, the
 * edges of the windows, anywhere at all), with values shaped like each
 * register's fields or raw; sqoscfg reads and writes; privilege changes
 * per hart; clock ticks; machine traffic from random harts; a wait of
 * exactly busy_cycles; a reset; and console lines, formatted or raw. The
 * first byte picks busy_cycles and access_cycles.
 *
 * Checked at every operation, against rules written here from the spec and
 * cbqri.h rather than read back from the model:
 *   - an access faults exactly when it should (hart, mode, size, alignment,
 *     window, privilege, register offset); a fault changes nothing -- no
 *     register, staging slot, table, clock, sqoscfg or machine mask -- and
 *     counts once, keeping its address; a CSR access raises exactly the
 *     exception its mode calls for and changes nothing when it does;
 *   - a read changes nothing but the clock, which moves by access_cycles;
 *   - capabilities always read what the profile says (VER 1, NCBLKS,
 *     FRCID; NBWBLKS, MRBWB), whole or by halves, whatever was written;
 *   - an occupancy counter never reads more lines than its cache holds;
 *   - a write to one world's window (normal or secure) changes nothing in
 *     the other world's windows, and a secure write no machine mask;
 *   - a lone 4-byte half changes no committed register;
 *   - BUSY means STATUS 0, and every BUSY clears after busy_cycles;
 *     STATUS is 0..5, and never "invalid AT" for a capacity controller
 *     without per-AT limits;
 *   - registers hold no bits outside their fields (WPRI and read-only
 *     bits read 0; cc_block_mask within NCBLKS);
 *   - capacity limits are non-empty masks within NCBLKS, and the machine's
 *     way masks of every class are exactly those limits' ways;
 *   - reserved bandwidth blocks sum to at most MRBWB, and a shared
 *     allocation always points at an AT with one of its own;
 *   - sqoscfg holds no bits past the implemented RCID and MCID bits, and
 *     the machine's class and tag of each hart are its RCID and MCID;
 *   - the model's clock never goes back. */
#include "fuzz_check.h"
#include "hw/cbqri_console.h"
#include "util/bits.h"
#include "util/rng.h"

#include <string.h>

#define TICK_MAX (1ull << 24) /* the largest tick, so the clock never wraps */

static struct mach mach;
static struct cbqri model;
static struct cbqri_console con; /* its mode array is the harness's too */
static FILE *devnull;
static struct rng rng_s;

/* ---- the address map, from the profile (not from the model) ---- */

struct win {
    uint64_t base;
    int secure;
    enum cbqri_kind kind;
    const struct plat_cbqri_ctl *pc;
    uint64_t cap; /* what capabilities must read */
};
static struct win wins[64];
static unsigned nwins;
/* The ways each capacity block mask stands for, per level (NCBLKS <= 16
 * here), from mach_cbm_ways once: the masks are checked at every step. */
static uint64_t *ways_of[PLAT_NLEVEL];

static void add_win(uint64_t base, enum cbqri_kind kind, const struct plat_cbqri_ctl *pc)
{
    for (int s = 0; s < 2; s++) {
        struct win *w = &wins[nwins++];
        w->base = base + (s ? CBQRI_SECURE_OFFSET : 0);
        w->secure = s;
        w->kind = kind;
        w->pc = pc;
        if (kind == CBQRI_CAPACITY)
            w->cap = 0x01 | (uint64_t)pc->blocks << 8 | (uint64_t)(pc->frcid != 0) << 24;
        else
            w->cap = 0x01 | (uint64_t)pc->blocks << 8 | (uint64_t)pc->mrbwb << 32;
    }
}

static void build_map(const struct plat *p)
{
    for (unsigned k = 0; k < p->n_cbqri_cap; k++)
        for (unsigned i = 0; i < mach.ncache[p->cbqri_cap[k].level]; i++)
            add_win(p->cbqri_cap[k].base + i * CBQRI_WINDOW, CBQRI_CAPACITY, &p->cbqri_cap[k]);
    for (unsigned k = 0; k < p->n_cbqri_bw; k++)
        for (unsigned i = 0; i < p->nnodes; i++)
            add_win(p->cbqri_bw[k].base + i * CBQRI_WINDOW, CBQRI_BANDWIDTH, &p->cbqri_bw[k]);
    for (unsigned k = 0; k < p->n_cbqri_cap; k++) {
        enum plat_level l = p->cbqri_cap[k].level;
        size_t n = (size_t)1 << p->cbqri_cap[k].blocks;
        if (p->cbqri_cap[k].blocks > 16 || !(ways_of[l] = malloc(n * sizeof *ways_of[l])))
            abort();
        for (size_t b = 0; b < n; b++)
            ways_of[l][b] = mach_cbm_ways(&mach, l, b);
    }
}

static const struct win *win_of(uint64_t addr)
{
    for (unsigned i = 0; i < nwins; i++)
        if (addr - wins[i].base < CBQRI_WINDOW)
            return &wins[i];
    return NULL;
}

/* Whether an MMIO access must fault (cbqri.h: "Accesses", "Privilege"). */
static int must_fault(unsigned hart, unsigned md, uint64_t addr, unsigned size)
{
    if (hart >= mach.ncpu || md >= CBQRI_NMODE || (size != 4 && size != 8) || addr % size)
        return 1;
    const struct win *w = win_of(addr);
    if (!w)
        return 1;
    if (w->secure ? md != CBQRI_SECURE_M : md != CBQRI_M && md != CBQRI_S && md != CBQRI_SECURE_M)
        return 1;
    return (addr - w->base) / 8 > 4; /* five 8-byte registers at offsets 0-32 */
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
    h = mix(mix(h, w->mon_due), w->alloc_due);
    for (size_t i = 0; i < (size_t)c->pc->rcids * c->nat; i++)
        h = mix(h, w->limit[i]);
    for (unsigned i = 0; i < c->pc->mcids; i++) {
        const struct cbqri_ctr *k = &w->ctr[i];
        h = mix(mix(mix(mix(mix(h, k->evt), k->atv), k->at), k->frozen), k->base);
        h = mix(h, k->low);
    }
    for (int i = 0; staging && i < CBQRI_NREG; i++)
        h = mix(mix(h, w->half[i]), w->have[i]);
    return h;
}

/* Every window of one world (secure 0 or 1), or of both (-1). */
static uint64_t hash_world(int secure, int staging)
{
    uint64_t h = 7;
    for (unsigned i = 0; i < model.nctl; i++)
        for (int s = 0; s < 2; s++)
            if (secure < 0 || s == secure)
                h = mix(h, hash_win(&model.ctl[i], &model.ctl[i].win[s], staging));
    return h;
}

/* The machine's mechanisms the model drives: the world-0 way masks of
 * every class, and every hart's class and tag. */
static uint64_t hash_mech(void)
{
    uint64_t h = 11;
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        for (unsigned i = 0; i < mach.ncache[l]; i++)
            for (unsigned c = 0; c < mach.cache[l][i].nclass; c++)
                for (int t = MACH_DATA; t <= MACH_CODE; t++)
                    h = mix(h, mach_get_mask(&mach, l, i, c, t));
    for (unsigned c = 0; c < mach.ncpu; c++)
        h = mix(mix(h, mach.cpu[c].cls), mach.cpu[c].tag);
    return h;
}

/* Everything but the fault count: what a fault must leave alone. */
static uint64_t hash_all(void)
{
    uint64_t h = mix(mix(hash_world(-1, 1), hash_mech()), model.now);
    for (unsigned c = 0; c < mach.ncpu; c++)
        h = mix(h, model.sqoscfg[c]);
    return h;
}

/* ---- invariants after every operation ---- */

static uint64_t last_now;

static void check_win(const struct cbqri_ctl *c, const struct cbqri_win *w)
{
    uint64_t at = c->nat > 1 ? HW_FMASK(ALLOC_CTL, AT) : 0;
    uint64_t ctl_bits = HW_FMASK(ALLOC_CTL, OP) | HW_FMASK(ALLOC_CTL, RCID) | at |
                        HW_FMASK(ALLOC_CTL, STATUS) | HW_FMASK(ALLOC_CTL, BUSY);
    uint64_t mon_bits = HW_FMASK(MON_CTL, OP) | HW_FMASK(MON_CTL, MCID) |
                        HW_FMASK(MON_CTL, EVT_ID) | HW_FMASK(MON_CTL, AT) | HW_FMASK(MON_CTL, ATV) |
                        HW_FMASK(MON_CTL, STATUS) | HW_FMASK(MON_CTL, BUSY);
    FZ_CHECK(!(w->alloc_ctl & ~ctl_bits), "alloc_ctl 0x%llx", (unsigned long long)w->alloc_ctl);
    FZ_CHECK(!(w->mon_ctl & ~mon_bits), "mon_ctl 0x%llx", (unsigned long long)w->mon_ctl);
    FZ_CHECK(c->mon || !w->mon_ctl, "mon_ctl without monitoring");
    uint64_t ops[2] = {w->mon_ctl, w->alloc_ctl}, due[2] = {w->mon_due, w->alloc_due};
    for (int k = 0; k < 2; k++) {
        uint64_t st = HW_FGET(ops[k], MON_CTL, STATUS), busy = HW_FGET(ops[k], MON_CTL, BUSY);
        FZ_CHECK(st <= 5, "STATUS %llu", (unsigned long long)st);
        FZ_CHECK(!busy || !st, "BUSY with STATUS %llu", (unsigned long long)st);
        /* Started at due - busy_cycles, which is not in the future. */
        FZ_CHECK(!busy || due[k] <= model.now + model.busy_cycles * MACH_TICK,
                 "BUSY until %llu, now %llu", (unsigned long long)due[k],
                 (unsigned long long)model.now);
    }
    if (c->kind == CBQRI_CAPACITY) {
        uint64_t blocks = bits_mask(c->pc->blocks);
        FZ_CHECK(!(w->operand & ~blocks), "cc_block_mask 0x%llx past NCBLKS",
                 (unsigned long long)w->operand);
        FZ_CHECK(c->nat > 1 || HW_FGET(w->alloc_ctl, ALLOC_CTL, STATUS) != 4,
                 "invalid AT from a controller without per-AT limits");
        for (size_t i = 0; i < (size_t)c->pc->rcids * c->nat; i++)
            FZ_CHECK(w->limit[i] && !(w->limit[i] & ~blocks), "limit %zu: 0x%llx", i,
                     (unsigned long long)w->limit[i]);
        return;
    }
    uint64_t bw_bits =
        HW_FMASK(BW_ALLOC, Rbwb) | HW_FMASK(BW_ALLOC, Mweight) |
        (c->nat > 1 ? HW_FMASK(BW_ALLOC, sharedAT) | HW_FMASK(BW_ALLOC, useShared) : 0);
    FZ_CHECK(!(w->operand & ~bw_bits), "bc_bw_alloc 0x%llx", (unsigned long long)w->operand);
    uint64_t sum = 0;
    for (unsigned r = 0; r < c->pc->rcids; r++)
        for (unsigned a = 0; a < c->nat; a++) {
            uint64_t v = w->limit[(size_t)r * c->nat + a];
            if (!HW_FGET(v, BW_ALLOC, useShared)) {
                sum += HW_FGET(v, BW_ALLOC, Rbwb);
                continue;
            }
            unsigned s = (unsigned)HW_FGET(v, BW_ALLOC, sharedAT);
            FZ_CHECK(s < c->nat && s != a &&
                         !HW_FGET(w->limit[(size_t)r * c->nat + s], BW_ALLOC, useShared),
                     "RCID %u AT %u shares AT %u", r, a, s);
        }
    FZ_CHECK(sum <= c->pc->mrbwb, "%llu blocks reserved, MRBWB %u", (unsigned long long)sum,
             c->pc->mrbwb);
}

static void check_state(void)
{
    FZ_CHECK(model.now >= last_now, "the clock went back");
    last_now = model.now;
    for (unsigned i = 0; i < model.nctl; i++) {
        const struct cbqri_ctl *c = &model.ctl[i];
        for (int s = 0; s < 2; s++)
            check_win(c, &c->win[s]);
        if (c->kind != CBQRI_CAPACITY)
            continue;
        const struct cbqri_win *w = &c->win[0]; /* the world-0 masks follow the normal window */
        for (unsigned r = 0; r < c->pc->rcids; r++) {
            uint64_t d = w->limit[(size_t)r * c->nat],
                     k = w->limit[(size_t)r * c->nat + c->nat - 1];
            uint64_t md = mach_get_mask(&mach, c->level, c->inst, r, MACH_DATA);
            uint64_t mk = mach_get_mask(&mach, c->level, c->inst, r, MACH_CODE);
            FZ_CHECK(md && md == ways_of[c->level][d], "L%d/%u RCID %u data mask", c->level,
                     c->inst, r);
            FZ_CHECK(mk && mk == ways_of[c->level][k], "L%d/%u RCID %u code mask", c->level,
                     c->inst, r);
        }
    }
    uint32_t ids = (uint32_t)(HW_FMASK(SQOSCFG, RCID) & bits_mask(model.rcid_bits)) |
                   (uint32_t)(bits_mask(model.mcid_bits) << SQOSCFG_MCID_SHIFT);
    for (unsigned h = 0; h < mach.ncpu; h++) {
        uint32_t v = model.sqoscfg[h];
        FZ_CHECK(!(v & ~ids), "hart %u sqoscfg 0x%08x", h, v);
        unsigned mcid = (unsigned)HW_FGET(v, SQOSCFG, MCID);
        FZ_CHECK(mach.cpu[h].cls == HW_FGET(v, SQOSCFG, RCID), "hart %u class", h);
        FZ_CHECK(mach.cpu[h].tag == (mcid < mach.ntags ? mcid : 0), "hart %u tag", h);
    }
}

static int any_busy(void)
{
    for (unsigned i = 0; i < model.nctl; i++)
        for (int s = 0; s < 2; s++) {
            const struct cbqri_win *w = &model.ctl[i].win[s];
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
    return b < 0xf0 ? b % mach.ncpu : mach.ncpu + (b & 0xf); /* rarely one that does not exist */
}

static unsigned get_size(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    return b & 0x80 ? (b & 1 ? 8 : 4) : b % 10;
}

static uint64_t get_addr(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    const struct win *w = &wins[get(in, 1) % nwins];
    switch (b % 8) {
    default: { /* a register, its high half, or misaligned */
        unsigned m = (unsigned)get(in, 1);
        return w->base + (b >> 3) % 6 * 8 + (m & 0x80 ? 4 : 0) + (m & 0x40 ? m & 7 : 0);
    }
    case 5: { /* the edges of the window and of the block of windows */
        static const int64_t edge[] = {-8, -4, -1, 4088, 4092, 4095, 4096, 4100, 0x10000};
        return w->base + (uint64_t)edge[(b >> 3) % 9];
    }
    case 6:
        return w->base + get(in, 2) % CBQRI_WINDOW;
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
        v = HW_FSET(v, BW_ALLOC, Mweight, get(in, 1));
        v = HW_FSET(v, BW_ALLOC, sharedAT, f % 3);
        v = HW_FSET(v, BW_ALLOC, useShared, (f >> 2) & 1);
        break;
    default:
        return get(in, 8);
    }
    if (f & 0x1000) /* bits outside the fields: WPRI, STATUS, BUSY */
        v |= get(in, 8) & ~bits_mask(28);
    return v;
}

/* ---- operations ---- */

static void op_mmio(struct in *in, int write)
{
    unsigned hart = get_hart(in), size = get_size(in);
    unsigned md = hart < mach.ncpu ? con.mode[hart] : CBQRI_M;
    if ((get(in, 1) & 0x3f) == 0)
        md = CBQRI_NMODE; /* a mode that does not exist */
    uint64_t addr = get_addr(in), v = write ? get_value(in, addr) : 0;
    if (size == 4)
        v = addr & 4 ? v >> 32 : v & 0xffffffffu;
    int fault = must_fault(hart, md, addr, size);
    const struct win *w = win_of(addr);
    unsigned slot = (unsigned)(addr % CBQRI_WINDOW) / 8;
    if (!fault) /* what the access does first: nothing due completes inside it */
        cbqri_tick(&model, mach.cpu[hart].now);
    uint64_t all = fault ? hash_all() : 0, faults = model.faults, now = model.now;
    uint64_t other = fault ? 0 : hash_world(!w->secure, 1);
    uint64_t mech = !fault && w->secure ? hash_mech() : 0;
    const struct cbqri_ctl *ctl = NULL;
    if (!fault)
        cbqri_reg_name(&model, addr, &ctl, NULL);
    const struct cbqri_win *cw = ctl ? &ctl->win[w->secure] : NULL;
    uint64_t mine = cw ? hash_win(ctl, cw, 0) : 0;
    uint64_t got = 0x5a5a;
    enum hw_fault f = write ? cbqri_mmio_write(&model, hart, md, addr, size, v)
                            : cbqri_mmio_read(&model, hart, md, addr, size, &got);
    FZ_CHECK((f == HW_ACCESS_FAULT) == fault && (f == HW_OK || f == HW_ACCESS_FAULT),
             "%s hart %u mode %u addr 0x%llx size %u: %s", write ? "write" : "read", hart, md,
             (unsigned long long)addr, size, hw_fault_name(f));
    if (fault) {
        FZ_CHECK(hash_all() == all, "a faulting access changed the state");
        FZ_CHECK(model.faults == faults + 1 && model.fault_addr == addr, "fault not counted");
        FZ_CHECK(write || got == 0, "a faulting read returned 0x%llx", (unsigned long long)got);
        return;
    }
    FZ_CHECK(model.faults == faults, "an access counted as a fault");
    FZ_CHECK(model.now == now + model.access_cycles * MACH_TICK, "an access took %llu ticks",
             (unsigned long long)(model.now - now));
    FZ_CHECK(hash_world(!w->secure, 1) == other, "a %s access changed the other world",
             w->secure ? "secure" : "normal");
    if (w->secure)
        FZ_CHECK(hash_mech() == mech, "a secure access changed a machine mask");
    unsigned off = (unsigned)(addr - w->base) & ~7u;
    if (!write) {
        FZ_CHECK(hash_win(ctl, cw, 0) == mine, "a read changed registers");
        if (off == CBQRI_MON_CTR_VAL && size == 8 && w->kind == CBQRI_CAPACITY) {
            /* An occupancy, exact or estimated, never passes the cache. */
            const struct mach_cache *x = &mach.cache[ctl->level][ctl->inst];
            FZ_CHECK(HW_FGET(got, CC_CTR, CTR) <= (uint64_t)x->c.sets * x->c.g.assoc,
                     "occupancy %llu lines", (unsigned long long)HW_FGET(got, CC_CTR, CTR));
        }
        if (off == CBQRI_CAPABILITIES) {
            uint64_t want = size == 8 ? w->cap : addr & 4 ? w->cap >> 32 : w->cap & 0xffffffffu;
            FZ_CHECK(got == want, "capabilities 0x%llx, want 0x%llx", (unsigned long long)got,
                     (unsigned long long)want);
        }
        return;
    }
    /* A lone half, or a write to a read-only register, commits nothing. */
    if ((size == 4 && cw->have[slot]) || off == CBQRI_CAPABILITIES || off == CBQRI_MON_CTR_VAL)
        FZ_CHECK(hash_win(ctl, cw, 0) == mine, "a write changed what it may not (offset %u)", off);
}

static void op_csr(struct in *in, int write)
{
    unsigned hart = get_hart(in);
    unsigned md = hart < mach.ncpu ? con.mode[hart] : CBQRI_M;
    if ((get(in, 1) & 0x3f) == 0)
        md = CBQRI_NMODE; /* a mode that does not exist */
    uint32_t v = (uint32_t)get(in, 4), got = 0x5a5a;
    enum hw_fault want = hart >= mach.ncpu || md >= CBQRI_NMODE || md == CBQRI_U ? HW_ILLEGAL
                         : md == CBQRI_VS || md == CBQRI_VU                      ? HW_VIRTUAL
                                                                                 : HW_OK;
    uint64_t all = want != HW_OK ? hash_all() : 0, faults = model.faults;
    enum hw_fault f =
        write ? cbqri_csr_write(&model, hart, md, v) : cbqri_csr_read(&model, hart, md, &got);
    FZ_CHECK(f == want, "sqoscfg hart %u mode %u: %s", hart, md, hw_fault_name(f));
    FZ_CHECK(model.faults == faults, "a CSR access counted as an access fault");
    if (f != HW_OK) {
        FZ_CHECK(hash_all() == all, "a refused CSR access changed the state");
        return;
    }
    if (!write) {
        FZ_CHECK(got == model.sqoscfg[hart], "sqoscfg read 0x%08x", got);
        return;
    }
    uint32_t r = (uint32_t)HW_FGET(model.sqoscfg[hart], SQOSCFG, RCID);
    uint32_t m = (uint32_t)HW_FGET(model.sqoscfg[hart], SQOSCFG, MCID);
    FZ_CHECK(r == (HW_FGET(v, SQOSCFG, RCID) & bits_mask(model.rcid_bits)) &&
                 m == (HW_FGET(v, SQOSCFG, MCID) & bits_mask(model.mcid_bits)),
             "sqoscfg wrote 0x%08x, holds 0x%08x", v, model.sqoscfg[hart]);
}

static void op_tick(struct in *in)
{
    unsigned b = (unsigned)get(in, 1);
    uint64_t d = b & 0x80 ? get(in, 3) % TICK_MAX : (b & 0x7f) * (MACH_TICK / 4);
    if (b & 0x40) { /* a hart's clock moves instead: its next access happens then */
        struct mach_cpu *p = &mach.cpu[get(in, 1) % mach.ncpu];
        p->now = (p->now > model.now ? p->now : model.now) + d;
        return;
    }
    cbqri_tick(&model, model.now + d);
    if (!(b & 0x80))
        cbqri_tick(&model, model.now - d); /* backwards: ignored */
}

/* BUSY clears busy_cycles after the write that set it, at the latest. */
static void op_wait(void)
{
    cbqri_tick(&model, model.now + model.busy_cycles * MACH_TICK);
    FZ_CHECK(!any_busy(), "BUSY after busy_cycles");
}

/* Requests from random harts under their sqoscfg, so counters count: over
 * 4 MiB per hart, or all in one cache set (lines 64 KiB apart: one L2 set,
 * a few L3 sets), so that lines are evicted and occupancies fall. Each
 * hart's clock moves on by what its request took, as a core's would: the
 * memory's queues stay those of a machine in time. */
static void op_traffic(struct in *in)
{
    unsigned b = (unsigned)get(in, 1), set = (unsigned)get(in, 1) * 10 % 1024;
    rng_seed(&rng_s, get(in, 2), 0);
    for (unsigned i = 0; i < ((b & 0x3f) + 1) * 4; i++) {
        uint64_t r = rng_next(&rng_s);
        struct mach_cpu *p = &mach.cpu[(r >> 33) % mach.ncpu];
        uint64_t a = b & 0x80 ? ((r >> 20) % 48) << 16 | (uint64_t)set << 6 : (r >> 20) & 0x3fffc0;
        p->now += MACH_TICK + mach_access(&mach, p, (r >> 13) & 1 ? HIER_LOAD : HIER_STORE,
                                          mach_phys_base(p->node, p->id) | a);
    }
}

static const char *const reg_words[] = {"read32", "read64", "write32", "write64"};

/* A console line: a command made from the operands, or raw bytes. */
static void op_console(struct in *in)
{
    char line[160];
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
    case 1:
        snprintf(line, sizeof line, "csr %s %u sqoscfg %u", b & 4 ? "write" : "read", get_hart(in),
                 (unsigned)get(in, 4));
        if (!(b & 4))
            *strrchr(line, ' ') = '\0';
        break;
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
    cbqri_console_line(&con, line, devnull);
}

static int run_ns(void *ctx, uint64_t ns, struct err *e)
{
    (void)ctx, (void)e;
    if (ns > 1000000)
        ns = 1000000;
    cbqri_tick(&model, model.now + (uint64_t)((double)ns * 1e-9 * mach.ticks_per_sec));
    return 0;
}

static void setup(void)
{
    struct plat p;
    struct err e;
    if (plat_load(&p, "riscv-soc", &e) || mach_init(&mach, &p, 16, &e) ||
        cbqri_init(&model, &mach, &e) || cbqri_console_init(&con, &model, &e)) {
        fprintf(stderr, "fuzz_cbqri: %s\n", e.msg);
        abort();
    }
    build_map(&mach.p);
    con.k.run = run_ns;
    devnull = fopen("/dev/null", "w");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    if (!model.ctl)
        setup();
    static const uint64_t busy[] = {CBQRI_BUSY_CYCLES, 0, 1, 1000};
    static const uint64_t access[] = {CBQRI_ACCESS_CYCLES, 0, 1, 100};
    model.busy_cycles = busy[data[0] & 3];
    model.access_cycles = access[data[0] >> 2 & 3];
    cbqri_reset(&model);
    for (unsigned h = 0; h < mach.ncpu; h++)
        con.mode[h] = CBQRI_M;
    check_state();
    struct in in = {data, size, 1};
    while (in.i < in.n) {
        unsigned op = (unsigned)get(&in, 1);
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
            unsigned h = (unsigned)get(&in, 1) % mach.ncpu;
            con.mode[h] = (enum cbqri_mode)(get(&in, 1) % CBQRI_NMODE);
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
            op_console(&in);
            break;
        default:
            if (op == 0xff)
                cbqri_reset(&model);
            else
                op_wait();
        }
        check_state();
    }
    return 0;
}
