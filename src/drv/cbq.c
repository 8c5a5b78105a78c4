#include "cbq.h"

#include "util/bits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names, for messages ---- */

static const char *kind_name(enum cbqri_kind k)
{
    return k == CBQRI_CAPACITY ? "capacity" : "bandwidth";
}

/* The registers of a window as the spec names them (draft Tables 2 and 8;
 * 1.0 CC_REG adds cc_cunits). */
static const char *reg_name(const struct cbq_ctl *c, unsigned off)
{
    static const char *const cc[] = {"cc_capabilities", "cc_mon_ctl",    "cc_mon_ctr_val",
                                     "cc_alloc_ctl",    "cc_block_mask", "cc_cunits"};
    static const char *const bc[] = {"bc_capabilities", "bc_mon_ctl", "bc_mon_ctr_val",
                                     "bc_alloc_ctl", "bc_bw_alloc"};
    return c->kind == CBQRI_CAPACITY ? cc[off / 8 % 6] : bc[off / 8 % 5];
}

/* A section of the text the controller follows, for messages: the draft's
 * number or 1.0's anchor. */
static const char *sec(const struct cbq_ctl *c, const char *draft, const char *v10)
{
    return c->v10 ? v10 : draft;
}

struct name {
    char s[112];
};

/* "capacity controller 0x04828000", and the window used when secure. */
static struct name where(const struct cbq *d, const struct cbq_ctl *c)
{
    struct name n;
    int k = snprintf(n.s, sizeof n.s, "%s controller 0x%08llx", kind_name(c->kind),
                     (unsigned long long)c->base);
    if (d->win_off && k > 0)
        snprintf(n.s + k, sizeof n.s - (size_t)k, " (secure window 0x%llx)",
                 (unsigned long long)(c->base + d->win_off));
    return n;
}

#define WHERE(d, c) where((d), (c)).s

/* ---- one operation ---- */

struct op {
    int mon;          /* on *_mon_ctl; else on *_alloc_ctl */
    unsigned op;      /* OP (Tables 3, 6, 9, 12) */
    unsigned id;      /* MCID or RCID */
    unsigned at;      /* AT */
    unsigned evt;     /* CONFIG_EVENT: EVT_ID */
    unsigned atv;     /* CONFIG_EVENT: ATV */
    int has_operand;  /* an alloc operation that takes cc_block_mask / bc_bw_alloc */
    uint64_t operand; /* written before the control register (3.4, 4.4) */
    int has_cunits;   /* 1.0 CONFIG_LIMIT on a controller with CUNITS: cc_cunits too */
    uint64_t cunits;
};

static const char *op_name(const struct op *o)
{
    if (o->mon)
        return o->op == CBQRI_CONFIG_EVENT ? "CONFIG_EVENT" : "READ_COUNTER";
    return o->op == CBQRI_CONFIG_LIMIT ? "CONFIG_LIMIT"
           : o->op == CBQRI_READ_LIMIT ? "READ_LIMIT"
           : o->op == CBQRI_FLUSH_RCID ? "FLUSH_RCID"
                                       : "OP ?";
}

/* "CONFIG_LIMIT RCID 5 AT 0", "CONFIG_EVENT MCID 3 EVT_ID 1". */
static struct name describe(const struct op *o)
{
    struct name n;
    int k = snprintf(n.s, sizeof n.s, "%s %s %u", op_name(o), o->mon ? "MCID" : "RCID", o->id);
    if (k < 0)
        k = 0;
    if (o->mon && o->op != CBQRI_CONFIG_EVENT) /* READ_COUNTER uses neither (Tables 3, 9) */
        return n;
    if (o->mon)
        k += snprintf(n.s + k, sizeof n.s - (size_t)k, " EVT_ID %u", o->evt);
    if ((!o->mon || o->atv) && (size_t)k < sizeof n.s)
        snprintf(n.s + k, sizeof n.s - (size_t)k, " AT %u", o->at);
    return n;
}

static unsigned ctl_off(const struct op *o)
{
    return o->mon ? CBQRI_MON_CTL : CBQRI_ALLOC_CTL;
}

/* The control register value that requests o (Figures 3, 5, 7, 9). */
static uint64_t ctl_value(const struct op *o)
{
    if (o->mon) {
        uint64_t v = HW_FSET(0, MON_CTL, OP, o->op);
        v = HW_FSET(v, MON_CTL, MCID, o->id);
        v = HW_FSET(v, MON_CTL, EVT_ID, o->evt);
        v = HW_FSET(v, MON_CTL, ATV, o->atv);
        return HW_FSET(v, MON_CTL, AT, o->at);
    }
    uint64_t v = HW_FSET(0, ALLOC_CTL, OP, o->op);
    v = HW_FSET(v, ALLOC_CTL, RCID, o->id);
    return HW_FSET(v, ALLOC_CTL, AT, o->at);
}

static unsigned busy_of(const struct op *o, uint64_t v)
{
    return (unsigned)(o->mon ? HW_FGET(v, MON_CTL, BUSY) : HW_FGET(v, ALLOC_CTL, BUSY));
}

static unsigned status_of(const struct op *o, uint64_t v)
{
    return (unsigned)(o->mon ? HW_FGET(v, MON_CTL, STATUS) : HW_FGET(v, ALLOC_CTL, STATUS));
}

static unsigned op_of(const struct op *o, uint64_t v)
{
    return (unsigned)(o->mon ? HW_FGET(v, MON_CTL, OP) : HW_FGET(v, ALLOC_CTL, OP));
}

static unsigned id_of(const struct op *o, uint64_t v)
{
    return (unsigned)(o->mon ? HW_FGET(v, MON_CTL, MCID) : HW_FGET(v, ALLOC_CTL, RCID));
}

/* ---- register access ---- */

static uint64_t addr_of(const struct cbq *d, const struct cbq_ctl *c, unsigned off)
{
    return c->base + d->win_off + off;
}

/* 8-byte accesses, naturally aligned (spec ch. 1); a fault is the
 * platform's (PMP, bus error) and names the address. */
static int rd(struct cbq *d, const struct cbq_ctl *c, unsigned off, uint64_t *v, struct err *e)
{
    uint64_t a = addr_of(d, c, off);
    enum hw_fault f = d->r.mmio_read(d->r.ctx, d->hart, d->mode, a, 8, v);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "%s: read of %s at 0x%llx by hart %u in %s-mode: %s",
                       WHERE(d, c), reg_name(c, off), (unsigned long long)a, d->hart,
                       cbqri_mode_name[d->mode], hw_fault_name(f));
    return 0;
}

static int wr(struct cbq *d, const struct cbq_ctl *c, unsigned off, uint64_t v, struct err *e)
{
    uint64_t a = addr_of(d, c, off);
    enum hw_fault f = d->r.mmio_write(d->r.ctx, d->hart, d->mode, a, 8, v);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO,
                       "%s: write of 0x%llx to %s at 0x%llx by hart %u in %s-mode: %s", WHERE(d, c),
                       (unsigned long long)v, reg_name(c, off), (unsigned long long)a, d->hart,
                       cbqri_mode_name[d->mode], hw_fault_name(f));
    return 0;
}

/* Polls o's control register until BUSY reads 0 ("When the BUSY bit reads 0
 * the operation is complete", 3.2, 3.4, 4.2, 4.4); *v gets the last value
 * read. The spec bounds no latency (FLUSH_RCID "may incur long latency"),
 * so poll_max does. */
static int wait_idle(struct cbq *d, const struct cbq_ctl *c, const struct op *o, const char *why,
                     uint64_t *v, struct err *e)
{
    unsigned n = d->poll_max ? d->poll_max : 1;
    for (unsigned i = 0; i < n; i++) {
        int rc = rd(d, c, ctl_off(o), v, e);
        if (rc)
            return rc;
        if (!busy_of(o, *v))
            return 0;
    }
    return err_set(e, -QOSIM_ETIMEDOUT, "%s: %s %s: %s.BUSY still 1 after %u polls", WHERE(d, c),
                   why, describe(o).s, reg_name(c, ctl_off(o)), n);
}

/* Requests o and waits for it; *back gets the control register as the
 * operation left it. Writes while BUSY is 1 are UNSPECIFIED (3.2, 3.4, 4.2:
 * "Software must verify that BUSY is 0 before writing"), so an operation in
 * flight -- another agent's, or one that timed out here -- is waited for
 * first; cc_block_mask and bc_bw_alloc are written before the control
 * register that uses them (3.4, 4.4). */
static int issue(struct cbq *d, const struct cbq_ctl *c, const struct op *o, uint64_t *back,
                 struct err *e)
{
    int rc = wait_idle(d, c, o, "before", back, e);
    if (!rc && o->has_operand)
        rc = wr(d, c, CBQRI_BLOCK_MASK, o->operand, e); /* = CBQRI_BW_ALLOC */
    if (!rc && o->has_cunits) /* 1.0 CC_ALLOC: both operands before the operation */
        rc = wr(d, c, CBQRI_CUNITS, o->cunits, e);
    if (!rc)
        rc = wr(d, c, ctl_off(o), ctl_value(o), e);
    if (!rc)
        rc = wait_idle(d, c, o, "during", back, e);
    return rc;
}

/* STATUS encodings (Tables 5, 7, 11, 13): 1-3 common, 4 and 5 per register. */
static const char *status_meaning(const struct cbq_ctl *c, const struct op *o, unsigned st)
{
    switch (st) {
    case 0:
        return "reserved: the controller reported no outcome";
    case CBQRI_ST_SUCCESS:
        return "operation was successfully completed";
    case CBQRI_ST_BAD_OP:
        return "invalid operation (OP) requested: operation not supported";
    case CBQRI_ST_BAD_ID:
        return o->mon ? "operation requested for an invalid MCID"
                      : "operation requested for an invalid RCID";
    case 4: /* CBQRI_ST_MON_BAD_EVT, CBQRI_ST_ALLOC_BAD_AT */
        return o->mon ? "operation requested for an invalid EVT_ID"
                      : "operation requested for an invalid AT";
    case 5: /* CBQRI_ST_MON_BAD_AT, CBQRI_ST_ALLOC_BAD_LIMIT */
        if (o->mon)
            return "operation requested for an invalid AT";
        return c->kind == CBQRI_CAPACITY
                   ? "invalid capacity block mask specified"
                   : "invalid/unsupported reserved bandwidth blocks requested (Rbwb must be "
                     "1..MRBWB and the sum over RCIDs at most MRBWB)";
    }
    return st < 64 ? "reserved for future standard use" : "designated for custom use";
}

static const char *status_table(const struct cbq_ctl *c, const struct op *o)
{
    if (c->kind == CBQRI_CAPACITY)
        return o->mon ? sec(c, "Table 5", "1.0 CC_MON_STS") : sec(c, "Table 7", "1.0 CC_ALLOC_STS");
    return o->mon ? sec(c, "Table 11", "1.0 BC_MON_STS") : sec(c, "Table 13", "1.0 BC_ALLOC_STS");
}

/* The outcome of o from its control register. The register must read back
 * the OP and ID written: the fields are WARL, so a controller with fewer ID
 * bits keeps fewer, and STATUS would then be another ID's. */
static int check(struct cbq *d, const struct cbq_ctl *c, const struct op *o, uint64_t back,
                 struct err *e)
{
    unsigned st = status_of(o, back);
    if (op_of(o, back) != o->op || id_of(o, back) != o->id)
        return err_set(e, -QOSIM_EIO,
                       "%s: %s: %s reads back OP %u %s %u (STATUS %u): the controller did not "
                       "take the request as written",
                       WHERE(d, c), describe(o).s, reg_name(c, ctl_off(o)), op_of(o, back),
                       o->mon ? "MCID" : "RCID", id_of(o, back), st);
    if (st == CBQRI_ST_SUCCESS)
        return 0;
    int code = st >= CBQRI_ST_BAD_OP && st <= 5 ? -QOSIM_EINVAL : -QOSIM_EIO;
    return err_set(e, code, "%s: %s: STATUS %u, %s (spec %s)", WHERE(d, c), describe(o).s, st,
                   status_meaning(c, o, st), status_table(c, o));
}

static int run(struct cbq *d, const struct cbq_ctl *c, const struct op *o, struct err *e)
{
    uint64_t back;
    int rc = issue(d, c, o, &back, e);
    return rc ? rc : check(d, c, o, back, e);
}

/* ---- discovery ---- */

/* Monitoring (3.2, 4.2): "When the controller does not support ... usage
 * monitoring the *_mon_ctl register is read-only zero." A READ_COUNTER of
 * MCID 0 changes nothing but the snapshot in *_mon_ctr_val, so it is the
 * probe: a register that reads back 0 after it is not there. It is written
 * with ATV 1 as well, which READ_COUNTER does not use (Tables 3, 9) and
 * which reads back 1 only where monitoring by AT is implemented ("may
 * hardwire the ATV and AT fields to 0"). */
static int probe_mon(struct cbq *d, struct cbq_ctl *c, struct err *e)
{
    struct op o = {.mon = 1, .op = CBQRI_READ_COUNTER, .atv = 1};
    uint64_t back;
    int rc = issue(d, c, &o, &back, e);
    if (rc || !back)
        return rc;
    if ((rc = check(d, c, &o, back, e)))
        return rc;
    c->mon = 1;
    c->mon_at = HW_FGET(back, MON_CTL, ATV) != 0;
    return 0;
}

/* Allocation (3.4, 4.4): *_alloc_ctl is read-only zero where it is not
 * implemented, and NCBLKS 0 means none (3.5). A READ_LIMIT of RCID 0 --
 * which every controller has, as reset gives it all capacity or bandwidth
 * (ch. 3, 4) -- changes nothing but the operand register. Asked for AT 1,
 * the controller tells its access types: an AT field that reads back 0 (no
 * per-AT allocation: "the AT field is read-only zero") or STATUS 4 (AT 1
 * invalid) means AT 0 only; a success that keeps AT 1 means two. */
static int probe_alloc(struct cbq *d, struct cbq_ctl *c, struct err *e)
{
    c->nat = 1;
    if (c->kind == CBQRI_CAPACITY && !c->ncblks)
        return 0;
    struct op o = {.op = CBQRI_READ_LIMIT, .at = CBQRI_AT_CODE};
    uint64_t back;
    int rc = issue(d, c, &o, &back, e);
    if (rc || !back)
        return rc;
    c->alloc = 1;
    if (status_of(&o, back) == CBQRI_ST_ALLOC_BAD_AT && op_of(&o, back) == o.op &&
        id_of(&o, back) == 0)
        return 0;
    if ((rc = check(d, c, &o, back, e)))
        return rc;
    c->nat = HW_FGET(back, ALLOC_CTL, AT) == CBQRI_AT_CODE ? 2 : 1;
    return 0;
}

/* Whether a controller accepts an ID: READ_LIMIT (AT 0) or READ_COUNTER,
 * which change no limit or counter. STATUS 3, or an ID that reads back
 * changed (a narrower WARL field), says no. */
static int id_ok(struct cbq *d, struct cbq_ctl *c, int mon, unsigned id, int *ok, struct err *e)
{
    struct op o = {.mon = mon, .op = mon ? CBQRI_READ_COUNTER : CBQRI_READ_LIMIT, .id = id};
    uint64_t back;
    int rc = issue(d, c, &o, &back, e);
    if (rc)
        return rc;
    if (id_of(&o, back) != id || status_of(&o, back) == CBQRI_ST_BAD_ID) {
        *ok = 0;
        return 0;
    }
    rc = check(d, c, &o, back, e);
    *ok = !rc;
    return rc;
}

/* The draft has no count of RCIDs or MCIDs to read (5.1 only advises on
 * sizing), but IDs are numbered from 0 and an operation past the last ends
 * in STATUS 3: a binary search over the 12-bit field finds the first one
 * refused (13 operations). */
static int count_ids(struct cbq *d, struct cbq_ctl *c, int mon, unsigned *n, struct err *e)
{
    int ok = 0;
    int rc = id_ok(d, c, mon, 0, &ok, e);
    if (rc)
        return rc;
    if (!ok)
        return err_set(e, -QOSIM_EIO, "%s: refuses %s 0, which every controller has", WHERE(d, c),
                       mon ? "MCID" : "RCID");
    unsigned lo = 1, hi = CBQ_MAX_IDS;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if ((rc = id_ok(d, c, mon, mid, &ok, e)))
            return rc;
        if (ok)
            lo = mid + 1;
        else
            hi = mid;
    }
    *n = lo;
    return 0;
}

/* Capabilities (draft 3.1, 4.1; 1.0 CC_CAP, BC_CAP). VER: major in the
 * high nibble, minor in the low. The driver knows two texts: the 2023
 * draft (VER 0x01) and 1.0 (major 1: a minor version keeps 1.0's
 * registers). Which one a controller follows comes from VER, and must
 * agree with what firmware described (desc.ver), as the two differ in
 * where the registers may sit, what the capability bits above FRCID mean,
 * and which CSR the harts use. */
static int read_caps(struct cbq *d, struct cbq_ctl *c, unsigned described, struct err *e)
{
    uint64_t v;
    int rc = rd(d, c, CBQRI_CAPABILITIES, &v, e);
    if (rc)
        return rc;
    c->ver =
        (unsigned)(c->kind == CBQRI_CAPACITY ? HW_FGET(v, CC_CAP, VER) : HW_FGET(v, BC_CAP, VER));
    if (c->ver != CBQRI_VER && c->ver >> 4 != 1)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: %s.VER 0x%02x (version %u.%u): this driver implements the 2023 "
                       "draft (VER 0x%02x) and 1.0 (VER 0x%02x)",
                       WHERE(d, c), reg_name(c, CBQRI_CAPABILITIES), c->ver, c->ver >> 4,
                       c->ver & 15, CBQRI_VER, CBQRI_VER_1_0);
    c->v10 = c->ver != CBQRI_VER;
    if (described && (described == CBQRI_VER) == c->v10)
        return err_set(e, -QOSIM_EIO, "%s: firmware describes CBQRI %s, but %s.VER is 0x%02x (%s)",
                       WHERE(d, c), described == CBQRI_VER ? "draft 0.1" : "1.0",
                       reg_name(c, CBQRI_CAPABILITIES), c->ver, c->v10 ? "1.0" : "the draft");
    if (c->kind == CBQRI_CAPACITY) {
        c->ncblks = (unsigned)HW_FGET(v, CC_CAP, NCBLKS);
        c->frcid = (unsigned)HW_FGET(v, CC_CAP, FRCID);
        if (c->v10) { /* reserved bits in the draft */
            c->cunits = (unsigned)HW_FGET(v, CC_CAP, CUNITS);
            c->rpfx = (unsigned)HW_FGET(v, CC_CAP, RPFX);
            c->p = (unsigned)HW_FGET(v, CC_CAP, P);
        }
    } else {
        c->nbwblks = (unsigned)HW_FGET(v, BC_CAP, NBWBLKS);
        c->mrbwb = (unsigned)HW_FGET(v, BC_CAP, MRBWB);
        if (c->v10) {
            c->rpfx = (unsigned)HW_FGET(v, BC_CAP, RPFX);
            c->p = (unsigned)HW_FGET(v, BC_CAP, P);
        }
    }
    if (c->p > 12 || (!c->rpfx && c->p)) /* "Legal values of P range from 0 to 12" */
        return err_set(e, -QOSIM_EIO, "%s: RPFX %u with P %u: P is 0..12, and 0 without RPFX",
                       WHERE(d, c), c->rpfx, c->p);
    /* BMW = ((NCBLKS + 63) / 64) * 64 bits (3.5): one register up to 64. */
    if (c->ncblks > 64)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: NCBLKS %u: a cc_block_mask wider than 64 bits is not supported",
                       WHERE(d, c), c->ncblks);
    return 0;
}

static int discover(struct cbq *d, struct cbq_ctl *c, unsigned described, struct err *e)
{
    int rc = read_caps(d, c, described, e);
    if (!rc)
        rc = probe_mon(d, c, e);
    if (!rc)
        rc = probe_alloc(d, c, e);
    if (!rc && c->alloc)
        rc = count_ids(d, c, 0, &c->nrcid, e);
    if (!rc && c->mon)
        rc = count_ids(d, c, 1, &c->nmcid, e);
    return rc;
}

static int check_desc(const struct cbq_desc *x, unsigned i, int secure, struct err *e)
{
    if (x->kind != CBQRI_CAPACITY && x->kind != CBQRI_BANDWIDTH)
        return err_set(e, -QOSIM_EINVAL,
                       "CBQRI controller %u: kind %d is neither capacity nor "
                       "bandwidth",
                       i, (int)x->kind);
    if (x->ver && x->ver != CBQRI_VER && x->ver >> 4 != 1)
        return err_set(e, -QOSIM_EINVAL,
                       "CBQRI controller %u: version 0x%02x is neither the draft's (0x%02x) "
                       "nor 1.x",
                       i, x->ver, CBQRI_VER);
    if (secure && x->ver >> 4 == 1)
        return err_set(e, -QOSIM_EUNSUP,
                       "CBQRI controller %u: CBQRI 1.0 has no secure register interface (the "
                       "draft's 5.2.1)",
                       i);
    /* Draft ch. 1: 4 KiB aligned; 1.0 qos_intro: 8-byte aligned. */
    uint64_t align = x->ver == CBQRI_VER || secure ? CBQRI_WINDOW : 8;
    if (x->base % align)
        return err_set(e, -QOSIM_EINVAL, "CBQRI controller %u: base 0x%llx is not %s aligned (%s)",
                       i, (unsigned long long)x->base, align == 8 ? "8-byte" : "4 KiB",
                       align == 8 ? "CBQRI 1.0" : "the draft, ch. 1");
    if (x->base > UINT64_MAX - CBQRI_WINDOW - (secure ? CBQRI_SECURE_OFFSET : 0))
        return err_set(e, -QOSIM_EINVAL,
                       "CBQRI controller %u: window at 0x%llx passes the top of the address "
                       "space",
                       i, (unsigned long long)x->base);
    if (x->ctr_width > 62)
        return err_set(e, -QOSIM_EINVAL,
                       "CBQRI controller %u: counter width %u: bc_mon_ctr_val.CTR is bits "
                       "61:0 (spec 4.3)",
                       i, x->ctr_width);
    return 0;
}

/* One driver drives one text and one monitoring mode: the hart CSR goes
 * with the text (the draft's sqoscfg; 1.0 moved it to Ssqosid's srmcfg),
 * and an MCID means one thing to every controller only if all of them take
 * it directly or all prefix it by the same P (1.0 QOS_SIZING recommends
 * the uniform mode). The draft's secure windows have no 1.0 counterpart. */
static int same_text(struct cbq *d, const struct cbq_ctl *c, int secure, struct err *e)
{
    const struct cbq_ctl *f = &d->ctl[0];
    if (c->v10 != f->v10)
        return err_set(e, -QOSIM_EUNSUP, "%s follows CBQRI %s, %s %s: one driver drives one text",
                       WHERE(d, c), c->v10 ? "1.0" : "draft 0.1", WHERE(d, f),
                       f->v10 ? "1.0" : "draft 0.1");
    if (c->rpfx != f->rpfx || c->p != f->p)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: RPFX %u P %u, but %s has RPFX %u P %u: effective MCIDs would differ "
                       "between controllers (1.0 QOS_SIZING recommends one mode)",
                       WHERE(d, c), c->rpfx, c->p, WHERE(d, f), f->rpfx, f->p);
    if (secure && c->v10)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: CBQRI 1.0 has no secure register interface (the draft's 5.2.1)",
                       WHERE(d, c));
    d->v10 = c->v10;
    d->rpfx = c->rpfx;
    d->p = c->p;
    d->csr = c->v10 ? CBQRI_CSR_SRMCFG : CBQRI_CSR_SQOSCFG;
    return 0;
}

int cbq_init(struct cbq *d, const struct cbqri_regif *r, unsigned hart, enum cbqri_mode mode,
             int secure, const struct cbq_desc *desc, unsigned n, struct err *e)
{
    memset(d, 0, sizeof *d);
    if ((unsigned)mode >= CBQRI_NMODE)
        return err_set(e, -QOSIM_EINVAL, "CBQRI driver: privilege mode %d does not exist",
                       (int)mode);
    /* The secure windows are the TSM's (5.2.1: "restricted to the TSM (e.g.,
     * secure M-mode)"; 6.3). */
    if (secure && mode != CBQRI_SECURE_M)
        return err_set(e, -QOSIM_EINVAL,
                       "CBQRI driver: the secure register interface belongs to the TSM in "
                       "secure-M mode (spec 5.2.1, 6.3), not to %s-mode",
                       cbqri_mode_name[mode]);
    if (!n)
        return err_set(e, -QOSIM_EINVAL, "CBQRI driver: no controllers described");
    for (unsigned i = 0; i < n; i++) {
        int rc = check_desc(&desc[i], i, secure, e);
        if (rc)
            return rc;
    }
    d->r = *r;
    d->hart = hart;
    d->mode = mode;
    d->win_off = secure ? CBQRI_SECURE_OFFSET : 0;
    d->poll_max = CBQ_POLL_MAX;
    if (!(d->ctl = calloc(n, sizeof *d->ctl)))
        return err_set(e, -QOSIM_ENOMEM, "CBQRI driver: out of memory");
    d->nctl = n;
    d->nrcid = d->nmcid = CBQ_MAX_IDS;
    for (unsigned i = 0; i < n; i++) {
        struct cbq_ctl *c = &d->ctl[i];
        c->kind = desc[i].kind;
        c->base = desc[i].base;
        c->ctr_width = desc[i].kind == CBQRI_BANDWIDTH ? desc[i].ctr_width : 0;
        int rc = discover(d, c, desc[i].ver, e);
        if (!rc)
            rc = same_text(d, c, secure, e);
        if (rc) {
            cbq_free(d);
            return rc;
        }
        /* An ID every controller accepts (5.1 recommends identical counts). */
        if (c->alloc && c->nrcid < d->nrcid)
            d->nrcid = c->nrcid;
        if (c->mon && c->nmcid < d->nmcid)
            d->nmcid = c->nmcid;
    }
    return 0;
}

void cbq_free(struct cbq *d)
{
    free(d->ctl);
    d->ctl = NULL;
    d->nctl = 0;
}

/* ---- argument checks: what the hardware would alter rather than refuse ---- */

static int get_ctl(struct cbq *d, unsigned ctl, int kind, struct cbq_ctl **c, struct err *e)
{
    if (ctl >= d->nctl)
        return err_set(e, -QOSIM_EINVAL, "CBQRI controller %u does not exist (%u described)", ctl,
                       d->nctl);
    *c = &d->ctl[ctl];
    if (kind >= 0 && (*c)->kind != (enum cbqri_kind)kind)
        return err_set(e, -QOSIM_EINVAL, "%s (controller %u) is not a %s controller", WHERE(d, *c),
                       ctl, kind_name((enum cbqri_kind)kind));
    return 0;
}

/* RCID is WARL: a controller keeps the bits it has, so an RCID past its
 * last would program another. An unsupported AT is handled as AT 0 (2.2)
 * and the AT field of a controller without per-AT limits is read-only zero
 * (3.4, 4.4): asking for AT 1 there would program AT 0's limit. */
static int alloc_args(struct cbq *d, unsigned ctl, int kind, unsigned rcid, unsigned at,
                      struct cbq_ctl **c, struct err *e)
{
    int rc = get_ctl(d, ctl, kind, c, e);
    if (rc)
        return rc;
    if (!(*c)->alloc)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: allocation is not implemented (%s is read-only zero, spec %s)",
                       WHERE(d, *c), reg_name(*c, CBQRI_ALLOC_CTL),
                       (*c)->kind == CBQRI_CAPACITY ? "3.4" : "4.4");
    if (rcid >= (*c)->nrcid)
        return err_set(e, -QOSIM_EINVAL, "%s: RCID %u out of range: it has RCIDs 0..%u",
                       WHERE(d, *c), rcid, (*c)->nrcid - 1);
    if (at >= (*c)->nat)
        return err_set(e, -QOSIM_EINVAL, "%s: AT %u: %s", WHERE(d, *c), at,
                       (*c)->nat > 1 ? "it has limits for AT 0 (data) and 1 (code)"
                                     : "it has no per-AT limits (AT is read-only zero and "
                                       "every AT is AT 0, spec 2.2)");
    return 0;
}

static int mon_args(struct cbq *d, unsigned ctl, unsigned mcid, struct cbq_ctl **c, struct err *e)
{
    int rc = get_ctl(d, ctl, -1, c, e);
    if (rc)
        return rc;
    if (!(*c)->mon)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: monitoring is not implemented (%s is read-only zero, spec %s)",
                       WHERE(d, *c), reg_name(*c, CBQRI_MON_CTL),
                       (*c)->kind == CBQRI_CAPACITY ? "3.2" : "4.2");
    if (mcid >= (*c)->nmcid)
        return err_set(e, -QOSIM_EINVAL, "%s: MCID %u out of range: it has MCIDs 0..%u",
                       WHERE(d, *c), mcid, (*c)->nmcid - 1);
    return 0;
}

/* ---- capacity allocation (3.4, 3.5) ---- */

int cbq_set_cbm(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t mask,
                struct err *e)
{
    return cbq_set_cap(d, ctl, rcid, at, mask, 0, e);
}

/* On 1.0 with CUNITS, CONFIG_LIMIT takes cc_cunits as well (CC_ALLOC), so
 * it is always written -- 0, no limit, unless one is asked for -- lest a
 * value left there by another operation become the RCID's limit. */
int cbq_set_cap(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t mask,
                uint64_t cunits, struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = alloc_args(d, ctl, CBQRI_CAPACITY, rcid, at, &c, e);
    if (rc)
        return rc;
    if (cunits && !c->cunits)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: RCID %u AT %u: a limit of %llu capacity units needs "
                       "cc_capabilities.CUNITS, which is 0 (%s)",
                       WHERE(d, c), rcid, at, (unsigned long long)cunits,
                       sec(c, "the draft has no cc_cunits", "1.0 CC_CUNITS"));
    /* "At least one capacity block must be allocated" (3.5) is a rule for
     * software; the draft does not tie it to STATUS 5, so it is kept here. */
    if (!mask)
        return err_set(e, -QOSIM_EINVAL,
                       "%s: RCID %u AT %u: empty block mask: at least one capacity block must "
                       "be allocated (spec 3.5)",
                       WHERE(d, c), rcid, at);
    /* Bits NCBLKS..BMW-1 are read-only zero (3.5): they would vanish. */
    if (mask & ~bits_mask(c->ncblks))
        return err_set(e, -QOSIM_EINVAL,
                       "%s: RCID %u AT %u: mask 0x%llx has bits at or above NCBLKS %u "
                       "(read-only zero, spec 3.5)",
                       WHERE(d, c), rcid, at, (unsigned long long)mask, c->ncblks);
    struct op o = {.op = CBQRI_CONFIG_LIMIT,
                   .id = rcid,
                   .at = at,
                   .has_operand = 1,
                   .operand = mask,
                   .has_cunits = c->cunits != 0,
                   .cunits = cunits};
    rc = run(d, c, &o, e);
    uint64_t back = 0; /* cc_cunits is WARL: a limit past the cache's units reads back smaller */
    if (!rc && cunits && !(rc = rd(d, c, CBQRI_CUNITS, &back, e)) && back != cunits)
        return err_set(e, -QOSIM_EINVAL,
                       "%s: RCID %u AT %u: cc_cunits reads back %llu after %llu was written: "
                       "more capacity units than the controller has (WARL, 1.0 CC_CUNITS)",
                       WHERE(d, c), rcid, at, (unsigned long long)back, (unsigned long long)cunits);
    return rc;
}

/* READ_LIMIT leaves the limit in cc_block_mask / bc_bw_alloc (3.5, 4.5). */
static int read_limit(struct cbq *d, const struct cbq_ctl *c, unsigned rcid, unsigned at,
                      uint64_t *v, struct err *e)
{
    struct op o = {.op = CBQRI_READ_LIMIT, .id = rcid, .at = at};
    int rc = run(d, c, &o, e);
    return rc ? rc : rd(d, c, CBQRI_BLOCK_MASK, v, e);
}

int cbq_get_cbm(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t *mask,
                struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = alloc_args(d, ctl, CBQRI_CAPACITY, rcid, at, &c, e);
    return rc ? rc : read_limit(d, c, rcid, at, mask, e);
}

int cbq_get_cunits(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t *cunits,
                   struct err *e)
{
    struct cbq_ctl *c = NULL;
    uint64_t mask;
    int rc = alloc_args(d, ctl, CBQRI_CAPACITY, rcid, at, &c, e);
    if (!rc && !c->cunits)
        return err_set(e, -QOSIM_EUNSUP, "%s: no capacity-unit limits (CUNITS 0)", WHERE(d, c));
    if (!rc)
        rc = read_limit(d, c, rcid, at, &mask, e);
    return rc ? rc : rd(d, c, CBQRI_CUNITS, cunits, e);
}

int cbq_flush(struct cbq *d, unsigned ctl, unsigned rcid, struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = alloc_args(d, ctl, CBQRI_CAPACITY, rcid, 0, &c, e);
    if (rc)
        return rc;
    if (!c->frcid)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: FLUSH_RCID is not supported (cc_capabilities.FRCID is 0, spec 3.1)",
                       WHERE(d, c));
    /* FLUSH_RCID deallocates the capacity of one (RCID, AT) (Table 6): all of
     * an RCID's is every AT's. */
    for (unsigned at = 0; at < c->nat && !rc; at++) {
        struct op o = {.op = CBQRI_FLUSH_RCID, .id = rcid, .at = at};
        rc = run(d, c, &o, e);
    }
    return rc;
}

/* ---- bandwidth allocation (4.4, 4.5) ---- */

/* Rbwb and Mweight are checked only against their fields' widths, which
 * would truncate them; Rbwb out of 1..MRBWB, or reserving more than MRBWB
 * over all RCIDs, is the controller's to refuse ("fails with STATUS=5",
 * 4.5), as only it knows the other RCIDs' reservations. Mweight "must be
 * programmed identically for all access-types" (4.5): the caller's part. */
int cbq_set_bw(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, unsigned rbwb,
               unsigned mweight, struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = alloc_args(d, ctl, CBQRI_BANDWIDTH, rcid, at, &c, e);
    if (rc)
        return rc;
    if (rbwb > bits_mask(BW_ALLOC_Rbwb_LEN) || mweight > bits_mask(BW_ALLOC_Mweight_LEN))
        return err_set(e, -QOSIM_EINVAL,
                       "%s: RCID %u AT %u: Rbwb %u / Mweight %u do not fit bc_bw_alloc "
                       "(Rbwb 16 bits, Mweight 0..255, spec 4.5)",
                       WHERE(d, c), rcid, at, rbwb, mweight);
    uint64_t v = HW_FSET(HW_FSET(0, BW_ALLOC, Rbwb, rbwb), BW_ALLOC, Mweight, mweight);
    struct op o = {.op = CBQRI_CONFIG_LIMIT, .id = rcid, .at = at, .has_operand = 1, .operand = v};
    return run(d, c, &o, e);
}

/* useShared (4.5). Sharing the allocation of an AT that has none of its
 * own is UNSPECIFIED, so every other AT of the RCID is read first: the
 * shared one must hold its own, and none may be sharing this one, which is
 * about to give its own up. */
int cbq_share_bw(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, unsigned shared_at,
                 struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = get_ctl(d, ctl, CBQRI_BANDWIDTH, &c, e);
    if (rc)
        return rc;
    if (c->alloc && c->nat < 2)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: no per-AT bandwidth allocation: useShared and sharedAT are "
                       "reserved (spec 4.5)",
                       WHERE(d, c));
    if ((rc = alloc_args(d, ctl, CBQRI_BANDWIDTH, rcid, at, &c, e)))
        return rc;
    if (shared_at >= c->nat || shared_at == at)
        return err_set(e, -QOSIM_EINVAL,
                       "%s: RCID %u AT %u: sharedAT %u must be another of its ATs (0..%u)",
                       WHERE(d, c), rcid, at, shared_at, c->nat - 1);
    for (unsigned a = 0; a < c->nat; a++) {
        uint64_t v;
        if (a == at)
            continue;
        if ((rc = read_limit(d, c, rcid, a, &v, e)))
            return rc;
        unsigned shares = (unsigned)HW_FGET(v, BW_ALLOC, useShared);
        unsigned with = (unsigned)HW_FGET(v, BW_ALLOC, sharedAT);
        if (a == shared_at && shares)
            return err_set(e, -QOSIM_EINVAL,
                           "%s: RCID %u AT %u: sharedAT %u has no allocation of its own (it "
                           "shares AT %u's; UNSPECIFIED, spec 4.5)",
                           WHERE(d, c), rcid, at, a, with);
        if (a != shared_at && shares && with == at)
            return err_set(e, -QOSIM_EINVAL,
                           "%s: RCID %u AT %u: AT %u shares its allocation, which it cannot "
                           "give up (spec 4.5)",
                           WHERE(d, c), rcid, at, a);
    }
    uint64_t v = HW_FSET(HW_FSET(0, BW_ALLOC, useShared, 1), BW_ALLOC, sharedAT, shared_at);
    struct op o = {.op = CBQRI_CONFIG_LIMIT, .id = rcid, .at = at, .has_operand = 1, .operand = v};
    return run(d, c, &o, e);
}

int cbq_get_bw(struct cbq *d, unsigned ctl, unsigned rcid, unsigned at, uint64_t *bw_alloc,
               struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = alloc_args(d, ctl, CBQRI_BANDWIDTH, rcid, at, &c, e);
    return rc ? rc : read_limit(d, c, rcid, at, bw_alloc, e);
}

/* ---- monitoring (3.2, 3.3, 4.2, 4.3) ---- */

/* EVT_ID is checked against its field only: which events a controller
 * counts is its STATUS 4 to give (Tables 4, 10 leave room for custom ones). */
int cbq_mon_config(struct cbq *d, unsigned ctl, unsigned mcid, unsigned evt, int atv, unsigned at,
                   struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = mon_args(d, ctl, mcid, &c, e);
    if (rc)
        return rc;
    if (evt > bits_mask(MON_CTL_EVT_ID_LEN))
        return err_set(e, -QOSIM_EINVAL, "%s: MCID %u: EVT_ID %u does not fit its 8 bits",
                       WHERE(d, c), mcid, evt);
    if (atv && !c->mon_at)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: MCID %u: no monitoring by access type (ATV is hardwired to 0, "
                       "spec %s): the counter would count every AT",
                       WHERE(d, c), mcid, c->kind == CBQRI_CAPACITY ? "3.2" : "4.2");
    if (atv && at >= c->nat)
        return err_set(e, -QOSIM_EINVAL, "%s: MCID %u: AT %u: it has ATs 0..%u", WHERE(d, c), mcid,
                       at, c->nat - 1);
    struct op o = {.mon = 1,
                   .op = CBQRI_CONFIG_EVENT,
                   .id = mcid,
                   .evt = evt,
                   .atv = atv ? 1 : 0,
                   .at = atv ? at : 0};
    return run(d, c, &o, e);
}

/* READ_COUNTER snapshots the counter into *_mon_ctr_val (Tables 3, 9). */
static int mon_raw(struct cbq *d, const struct cbq_ctl *c, unsigned mcid, uint64_t *ctr, int *ovf,
                   struct err *e)
{
    struct op o = {.mon = 1, .op = CBQRI_READ_COUNTER, .id = mcid};
    uint64_t v;
    int rc = run(d, c, &o, e);
    if (!rc)
        rc = rd(d, c, CBQRI_MON_CTR_VAL, &v, e);
    if (rc)
        return rc;
    int invalid =
        c->kind == CBQRI_CAPACITY ? HW_FGET(v, CC_CTR, INV) != 0 : HW_FGET(v, BC_CTR, INV) != 0;
    if (invalid)
        return err_set(e, -QOSIM_EIO, "%s: MCID %u: %s %s (%s: %s)", WHERE(d, c), mcid,
                       reg_name(c, CBQRI_MON_CTR_VAL), c->v10 ? "INV" : "INVALID",
                       c->kind == CBQRI_CAPACITY ? sec(c, "spec 3.3", "1.0 CC_MCTR")
                                                 : sec(c, "spec 4.3", "1.0 BC_MCTR"),
                       c->kind == CBQRI_CAPACITY && !c->v10
                           ? "an underflow, or too few samples yet; it may become valid"
                           : "no accurate value yet; it may become valid");
    if (c->kind == CBQRI_CAPACITY) {
        *ctr = HW_FGET(v, CC_CTR, CTR);
        *ovf = 0;
    } else {
        uint64_t x = HW_FGET(v, BC_CTR, CTR);
        *ctr = c->ctr_width ? x & bits_mask(c->ctr_width) : x;
        *ovf = HW_FGET(v, BC_CTR, OVF) != 0;
    }
    return 0;
}

int cbq_mon_read(struct cbq *d, unsigned ctl, unsigned mcid, uint64_t *ctr, int *ovf, struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = mon_args(d, ctl, mcid, &c, e);
    int o = 0;
    if (!rc)
        rc = mon_raw(d, c, mcid, ctr, &o, e);
    if (!rc && ovf)
        *ovf = o;
    return rc;
}

/* The bytes between two reads from CTR, which wraps at ctr_width bits, and
 * OVF, which the controller sets at the first wrap after CONFIG_EVENT and
 * only CONFIG_EVENT clears (4.2, 4.3):
 *   OVF 0 then 0: no wrap at all, so the difference is exact; a CTR lower
 *     than before means the event was reprogrammed in between, and CTR is
 *     what has been counted since;
 *   OVF 0 then 1: the counter has wrapped since the last read, so it is
 *     counted as one wrap (CTR + 2^width - prev) even when CTR is not below
 *     the last value -- the one case where the difference modulo 2^width
 *     would count none; this allows the first interval up to 2^(width+1);
 *   OVF 1 then 1: OVF says nothing new; the difference modulo 2^width is
 *     right as long as the counter wrapped at most once in between (4.3
 *     asks for a width that wraps at most once per sample at 1 Hz);
 *   OVF 1 then 0: the event was reprogrammed (CONFIG_EVENT clears OVF, as
 *     4.3 suggests software do after an overflow): CTR is since then.
 * The first call only takes the starting point, as rdt_mbm_update does. */
int cbq_mbm_update(struct cbq *d, unsigned ctl, unsigned mcid, struct cbq_mbm *st, struct err *e)
{
    struct cbq_ctl *c = NULL;
    int rc = get_ctl(d, ctl, CBQRI_BANDWIDTH, &c, e);
    if (!rc)
        rc = mon_args(d, ctl, mcid, &c, e);
    if (rc)
        return rc;
    if (!c->ctr_width)
        return err_set(e, -QOSIM_EUNSUP,
                       "%s: the counter's width is unknown (UNSPECIFIED, spec 4.3): firmware "
                       "must describe it",
                       WHERE(d, c));
    uint64_t raw;
    int ovf;
    if ((rc = mon_raw(d, c, mcid, &raw, &ovf, e)))
        return rc;
    uint64_t m = bits_mask(c->ctr_width);
    if (st->valid) {
        if (!st->ovf && !ovf)
            st->bytes += raw >= st->prev ? raw - st->prev : raw;
        else if (!st->ovf && ovf)
            st->bytes += raw + m + 1 - st->prev;
        else if (st->ovf && ovf)
            st->bytes += (raw - st->prev) & m;
        else
            st->bytes += raw;
    }
    st->prev = raw;
    st->ovf = ovf;
    st->valid = 1;
    return 0;
}

/* ---- association (draft 2.1.1, 6.1; Ssqosid; 1.0 QOS_SW_GUIDE) ---- */

unsigned cbq_emcid(const struct cbq *d, unsigned rcid, unsigned mcid)
{
    return d->rpfx ? rcid << d->p | (mcid & (unsigned)bits_mask(d->p)) : mcid;
}

static const char *csr_name(const struct cbq *d)
{
    return d->csr == CBQRI_CSR_SRMCFG ? "srmcfg" : "sqoscfg";
}

/* The register's RCID and MCID are WARL over the bits the hart implements,
 * and the rest is WPRI (kept as read). The value is read back: a hart with
 * fewer bits would tag its requests with other IDs, so the old value is
 * put back and the call fails. In RCID-prefixed mode the MCID a hart
 * carries is the low P bits of the counter's (EMCID). */
int cbq_assoc(struct cbq *d, unsigned hart, unsigned rcid, unsigned mcid, struct err *e)
{
    unsigned mmax = d->rpfx ? 1u << d->p : d->nmcid;
    if (rcid >= d->nrcid || mcid >= mmax)
        return err_set(e, -QOSIM_EINVAL,
                       "hart %u: RCID %u / MCID %u out of range: every controller takes RCIDs "
                       "0..%u and %s 0..%u",
                       hart, rcid, mcid, d->nrcid - 1,
                       d->rpfx ? "(RCID-prefixed, P bits) MCIDs" : "MCIDs", mmax - 1);
    uint64_t old = 0, got = 0;
    enum hw_fault f = d->r.csr_read(d->r.ctx, hart, d->mode, d->csr, &old);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "hart %u: %s read in %s-mode: %s", hart, csr_name(d),
                       cbqri_mode_name[d->mode], hw_fault_name(f));
    uint64_t v = HW_FSET(HW_FSET(old, SRMCFG, RCID, rcid), SRMCFG, MCID, mcid); /* = SQOSCFG's */
    if (v == old) /* written when the IDs change (draft 6.1, 1.0 QOS_SW_GUIDE) */
        return 0;
    if ((f = d->r.csr_write(d->r.ctx, hart, d->mode, d->csr, v)) != HW_OK)
        return err_set(e, -QOSIM_EIO, "hart %u: %s write of 0x%llx in %s-mode: %s", hart,
                       csr_name(d), (unsigned long long)v, cbqri_mode_name[d->mode],
                       hw_fault_name(f));
    if ((f = d->r.csr_read(d->r.ctx, hart, d->mode, d->csr, &got)) != HW_OK)
        return err_set(e, -QOSIM_EIO, "hart %u: %s read in %s-mode: %s", hart, csr_name(d),
                       cbqri_mode_name[d->mode], hw_fault_name(f));
    if (HW_FGET(got, SRMCFG, RCID) != rcid || HW_FGET(got, SRMCFG, MCID) != mcid) {
        d->r.csr_write(d->r.ctx, hart, d->mode, d->csr, old);
        return err_set(e, -QOSIM_EINVAL,
                       "hart %u: %s reads back RCID %u MCID %u after RCID %u MCID %u was "
                       "written: the hart has fewer ID bits (WARL, %s); put back 0x%llx",
                       hart, csr_name(d), (unsigned)HW_FGET(got, SRMCFG, RCID),
                       (unsigned)HW_FGET(got, SRMCFG, MCID), rcid, mcid,
                       d->v10 ? "Ssqosid" : "spec 2.1.1", (unsigned long long)old);
    }
    return 0;
}

/* The M-mode side (firmware, e.g. an SBI implementation, before the OS
 * runs): with Smstateen, srmcfg is out of reach below M until mstateen0
 * bit 55 is set (Ssqosid). A hart without mstateen0 (an illegal
 * instruction on reading it from M) has nothing to set up. */
int cbq_boot(const struct cbqri_regif *r, unsigned nhart, struct err *e)
{
    for (unsigned h = 0; h < nhart; h++) {
        uint64_t v;
        enum hw_fault f = r->csr_read(r->ctx, h, CBQRI_M, CBQRI_CSR_MSTATEEN0, &v);
        if (f == HW_ILLEGAL)
            continue;
        if (f == HW_OK)
            f = r->csr_write(r->ctx, h, CBQRI_M, CBQRI_CSR_MSTATEEN0,
                             HW_FSET(v, MSTATEEN0, SRMCFG, 1));
        if (f == HW_OK)
            f = r->csr_read(r->ctx, h, CBQRI_M, CBQRI_CSR_MSTATEEN0, &v);
        if (f == HW_OK && !HW_FGET(v, MSTATEEN0, SRMCFG)) { /* RV32: bit 55 is in mstateen0h */
            f = r->csr_read(r->ctx, h, CBQRI_M, CBQRI_CSR_MSTATEEN0H, &v);
            if (f == HW_OK)
                f = r->csr_write(r->ctx, h, CBQRI_M, CBQRI_CSR_MSTATEEN0H,
                                 v | 1ull << (MSTATEEN0_SRMCFG_SHIFT - 32));
        }
        if (f != HW_OK)
            return err_set(e, -QOSIM_EIO, "hart %u: mstateen0 in M-mode: %s", h, hw_fault_name(f));
    }
    return 0;
}
