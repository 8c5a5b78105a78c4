#include "lwp.h"

#include "util/bits.h"

#include <stdlib.h>
#include <string.h>

#define LWP_CB_TABLE_(e, name, off, size, rw) {name, off, size, rw},
const struct lwp_cb_field lwp_cb_fields[] = {LWP_CB_FIELDS(LWP_CB_TABLE_)};
#undef LWP_CB_TABLE_
const unsigned lwp_cb_nfields = sizeof lwp_cb_fields / sizeof lwp_cb_fields[0];

/* The features LWPMSR0 enables, each with its bit in LWPMSR0 (Table 3, the
 * same as CPUID EAX) and in CPUID EDX (Table 2), which numbers them
 * differently (docs/registers.md 3). */
static const struct lwp_feature {
    const char *name;
    unsigned msr0, edx;
} lwp_features[] = {
    {"Enabled", LWPMSR0_Enabled_SHIFT, LWP_EDX_Enabled_SHIFT},
    {"IRE", LWPMSR0_IRE_SHIFT, LWP_EDX_IRE_SHIFT},
    {"BRE", LWPMSR0_BRE_SHIFT, LWP_EDX_BRE_SHIFT},
    {"DME", LWPMSR0_DME_SHIFT, LWP_EDX_DME_SHIFT},
    {"Interrupt", LWPMSR0_Interrupt_SHIFT, LWP_EDX_Interrupt_SHIFT},
};

/* ---- life cycle ---- */

unsigned lwp_cb_size(const struct lwp *u)
{
    return LWPCB_SIZE(u->cfg.max_events);
}

uint32_t lwp_min_ring(const struct lwp *u)
{
    return (uint32_t)HW_FGET(u->ecx, LWP_ECX, LwpMinBufferSize) * LWP_MIN_BUFFER_UNIT *
           LWP_EVENT_SIZE;
}

static void cpu_off(struct lwp_cpu *c)
{
    c->state = LWP_OFF;
    c->cb = 0;
    c->cb_vm = NULL;
    c->flags = 0;
    c->missed_pending = 0;
    c->live = 0;
    memset(c->ctr, 0, sizeof c->ctr);
    memset(c->slot, -1, sizeof c->slot);
}

void lwp_reset(struct lwp *u)
{
    for (unsigned i = 0; i < u->ncpu; i++) {
        struct lwp_cpu *c = &u->cpu[i];
        cpu_off(c);
        c->msr0 = 0;
        c->irq_pending = 0;
        c->pf_pending = 0;
    }
}

int lwp_init(struct lwp *u, const struct plat *p, uint64_t seed, struct err *e)
{
    memset(u, 0, sizeof *u);
    if (!p->lwp.present)
        return 0;
    const struct plat_lwp *l = &p->lwp;
    if (l->max_events < 1 || l->max_events > LWP_MAX_EVENTS || l->latency_bits < 10 ||
        l->latency_bits > 31 ||
        l->min_buffer > HW_FMASK(LWP_ECX, LwpMinBufferSize) >> LWP_ECX_LwpMinBufferSize_SHIFT)
        return err_set(e, -QOSIM_EINVAL, "%s: qos.lwp does not fit CPUID 0x8000001C", p->name);
    if (!(u->cpu = calloc(p->ncpus, sizeof *u->cpu)))
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate the LWP units");
    u->present = 1;
    u->cfg = *l;
    u->ncpu = p->ncpus;
    u->ebx = (uint32_t)(HW_FSET(0, LWP_EBX, LWPCBSize, lwp_cb_size(u)) |
                        HW_FSET(0, LWP_EBX, LWPEventSize, LWP_EVENT_SIZE) |
                        HW_FSET(0, LWP_EBX, LWPMaxEvents, l->max_events) |
                        HW_FSET(0, LWP_EBX, LWPVersion, LWP_VERSION));
    u->ecx = (uint32_t)(HW_FSET(0, LWP_ECX, LWPCacheMax, l->latency_bits) |
                        HW_FSET(0, LWP_ECX, LWPDataAddress, !!l->data_address) |
                        HW_FSET(0, LWP_ECX, LwpMinBufferSize, l->min_buffer) |
                        HW_FSET(0, LWP_ECX, LWPCacheLevels, !!l->cache_level) |
                        HW_FSET(0, LWP_ECX, LWPCacheLatency, !!l->cache_latency));
    /* Table 2: cache-related events need filtering by level or by latency. */
    u->edx = (uint32_t)(HW_FMASK(LWP_EDX, Enabled) | HW_FMASK(LWP_EDX, Interrupt) |
                        HW_FMASK(LWP_EDX, IRE) | HW_FMASK(LWP_EDX, BRE) |
                        (l->cache_level || l->cache_latency ? HW_FMASK(LWP_EDX, DME) : 0));
    for (size_t i = 0; i < sizeof lwp_features / sizeof lwp_features[0]; i++)
        if (u->edx >> lwp_features[i].edx & 1)
            u->msr0_ok |= 1ull << lwp_features[i].msr0;
    for (unsigned i = 0; i < u->ncpu; i++)
        rng_seed(&u->cpu[i].rng, seed, 0x4c5750u + i); /* a stream per CPU */
    lwp_reset(u);
    return 0;
}

void lwp_free(struct lwp *u)
{
    free(u->cpu);
    memset(u, 0, sizeof *u);
}

/* ---- CPUID ---- */

void lwp_cpuid(const struct lwp *u, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    (void)sub;
    if (!u || !u->present || cpu >= u->ncpu)
        return;
    if (leaf == LWP_CPUID_EXT) {
        out[2] |= (uint32_t)HW_FMASK(CPUID_80000001_ECX, LWP);
    } else if (leaf == LWP_CPUID_LEAF) {
        /* EAX reflects LWPMSR0 (5.1): what software may use now. */
        out[0] = (uint32_t)u->cpu[cpu].msr0;
        out[1] = u->ebx;
        out[2] = u->ecx;
        out[3] = u->edx;
    }
}

/* ---- the LWPCB ---- */

static int enabled(const struct lwp *u, const struct lwp_cpu *c)
{
    return u->present && HW_FGET(c->msr0, LWPMSR0, Enabled);
}

static unsigned acc_of(unsigned ring)
{
    return ring == 3 ? VMEM_ACC_USER : 0;
}

/* Whether an access would fault, recording the fault as the #PF to report.
 * With no address space bound, every access finds nothing mapped. */
static int probe(struct lwp_cpu *c, const struct vmem *vm, uint64_t a, size_t n, unsigned acc)
{
    struct vmem_fault f = {a, (acc & VMEM_ACC_WRITE ? VMEM_PF_W : 0) |
                                  (acc & VMEM_ACC_USER ? VMEM_PF_U : 0)};
    if (vm && !vmem_probe(vm, a, n, acc, &f))
        return 0;
    c->pf = f;
    return 1;
}

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t le64(const uint8_t *b)
{
    return le32(b) | (uint64_t)le32(b + 4) << 32;
}

/* An offset software or a stale LWPCB gave: a whole record inside the buffer. */
static uint32_t norm_offset(uint32_t off, uint32_t size)
{
    off -= off % LWP_EVENT_SIZE;
    return off < size ? off : 0;
}

/* A counter reloads to its interval with the low Random bits drawn (5.4). */
static uint32_t reload(struct lwp_cpu *c, uint32_t interval)
{
    uint64_t m = bits_mask(c->random);
    return (uint32_t)(((interval & ~m) | (rng_next(&c->rng) & m)) &
                      HW_FMASK(LWPCB_COUNTER, EventCounter));
}

/* Sets up the internal state from the LWPCB at c->cb and writes its Flags
 * (5.3), with ring 3's rights: the LWPCB must be writable by the process.
 * After lwp_restore (LWP_RESTORING) the head, counters and MissedEvents
 * flag are the restored ones, not the LWPCB's (5.5.2). On #PF nothing
 * changes. */
static enum hw_fault cb_load(struct lwp *u, struct lwp_cpu *c)
{
    unsigned n = lwp_cb_size(u);
    uint8_t cb[LWPCB_SIZE(LWP_MAX_EVENTS)];
    struct vmem_fault f;
    if (probe(c, c->cb_vm, c->cb, n, VMEM_ACC_USER | VMEM_ACC_WRITE))
        return HW_PF;
    vmem_read(c->cb_vm, c->cb, cb, n, VMEM_ACC_USER, &f);
    const int keep = c->state == LWP_RESTORING;
    uint32_t saved[LWP_MAX_EVENTS], saved_live = c->live, saved_head = c->head;
    for (unsigned i = 0; i < LWP_MAX_EVENTS; i++)
        saved[i] = c->ctr[i].counter;

    uint32_t bufsz = le32(cb + LWPCB_BUFFER_SIZE);
    uint32_t size = (uint32_t)HW_FGET(bufsz, LWPCB_BUFSZ, BufferSize);
    size -= size % LWP_EVENT_SIZE;
    uint32_t flags = 0;
    memset(c->ctr, 0, sizeof c->ctr);
    memset(c->slot, -1, sizeof c->slot);
    c->live = 0;
    for (unsigned i = 0; i < u->cfg.max_events; i++) {
        uint32_t ev = le32(cb + LWPCB_EVENT(i));
        unsigned id = (unsigned)HW_FGET(ev, LWPCB_EVENT, EventId);
        /* Implemented, allowed by the OS (LWPMSR0 bit n, like Flags bit n,
         * is EventId n: Table 3, Figure 6), and the first slot with this
         * EventId (5.3: later duplicates act as EventId 0). */
        if (id == LWP_EV_NONE || id >= LWP_NEV || !(c->msr0 >> id & 1) || c->slot[id] >= 0)
            continue;
        c->slot[id] = (signed char)i;
        c->ctr[i].id = id;
        c->ctr[i].interval = (uint32_t)HW_FGET(ev, LWPCB_EVENT, EventInterval);
        c->ctr[i].counter =
            keep && (saved_live >> i & 1)
                ? saved[i]
                : (uint32_t)HW_FGET(le32(cb + LWPCB_COUNTER(i)), LWPCB_COUNTER, EventCounter);
        c->live |= 1u << i;
        flags |= 1u << id;
    }
    /* The minimum ring CPUID reports (LwpMinBufferSize, in 32-record
     * units), and with no minimum still one whole record. */
    if (size < lwp_min_ring(u) || size < LWP_EVENT_SIZE)
        flags = 0;
    uint32_t threshold = le32(cb + LWPCB_THRESHOLD);
    threshold -= threshold % LWP_EVENT_SIZE;
    if (flags) {
        flags |= (uint32_t)HW_FMASK(LWPCB_FLAGS, EN);
        if (HW_FGET(c->msr0, LWPMSR0, Interrupt) && threshold)
            flags |= (uint32_t)HW_FMASK(LWPCB_FLAGS, INT);
    }
    vmem_write_u(c->cb_vm, c->cb + LWPCB_FLAGS, 4, flags, VMEM_ACC_USER, &f);
    if (!flags) {
        /* No event to collect: LWP is off and SLWPCB returns 0 (5.3). */
        cpu_off(c);
        return HW_OK;
    }
    c->flags = flags;
    c->base = le64(cb + LWPCB_BUFFER_BASE) & ~(uint64_t)(LWP_EVENT_SIZE - 1);
    c->size = size;
    c->head = norm_offset(keep ? saved_head : le32(cb + LWPCB_BUFFER_HEAD_OFFSET), size);
    c->tail = norm_offset(le32(cb + LWPCB_BUFFER_TAIL_OFFSET), size);
    c->threshold = threshold;
    c->filters = le32(cb + LWPCB_FILTERS);
    c->random = (unsigned)HW_FGET(bufsz, LWPCB_BUFSZ, Random);
    if (!keep)
        c->missed_pending = 0;
    c->state = LWP_ACTIVE;
    return HW_OK;
}

/* Writes the volatile state back to the LWPCB (5.3 "flushes its internal
 * state to memory"; 5.5.2 lists it) with the rights of acc. All or nothing. */
static enum hw_fault cb_flush(struct lwp *u, struct lwp_cpu *c, unsigned acc)
{
    if (c->state != LWP_ACTIVE && c->state != LWP_RESTORING)
        return HW_OK; /* a deferred load has no state yet */
    struct vmem_fault f;
    if (probe(c, c->cb_vm, c->cb, lwp_cb_size(u), acc | VMEM_ACC_WRITE))
        return HW_PF;
    struct vmem *vm = c->cb_vm;
    vmem_write_u(vm, c->cb + LWPCB_BUFFER_HEAD_OFFSET, 4, c->head, acc, &f);
    for (unsigned i = 0; i < u->cfg.max_events; i++)
        if (c->live >> i & 1)
            vmem_write_u(vm, c->cb + LWPCB_COUNTER(i), 4, c->ctr[i].counter, acc, &f);
    if (c->missed_pending) {
        uint64_t m = 0;
        vmem_read_u(vm, c->cb + LWPCB_MISSED_EVENTS, 8, &m, acc, &f);
        vmem_write_u(vm, c->cb + LWPCB_MISSED_EVENTS, 8, m + 1, acc, &f);
        c->missed_pending = 0;
    }
    return HW_OK;
}

/* At ring 3 a deferred load has already been attempted by the entry to
 * ring 3; an instruction finding one still pending completes it first. */
static enum hw_fault settle(struct lwp *u, struct lwp_cpu *c, unsigned ring)
{
    int deferred = c->state == LWP_PENDING || c->state == LWP_RESTORING;
    return ring == 3 && deferred ? cb_load(u, c) : HW_OK;
}

enum hw_fault lwp_llwpcb(struct lwp *u, unsigned cpu, struct vmem *vm, uint64_t addr, unsigned ring,
                         uint64_t *old)
{
    if (!u->present || cpu >= u->ncpu || !enabled(u, &u->cpu[cpu]))
        return HW_UD;
    struct lwp_cpu *c = &u->cpu[cpu];
    c->vm = vm;
    enum hw_fault r = settle(u, c, ring);
    if (r)
        return r;
    /* Every fault before any change, so the instruction can restart. */
    if (ring == 3 && addr && probe(c, vm, addr, lwp_cb_size(u), VMEM_ACC_USER | VMEM_ACC_WRITE))
        return HW_PF;
    if ((r = cb_flush(u, c, acc_of(ring))))
        return r;
    if (old)
        *old = c->cb;
    cpu_off(c);
    if (!addr)
        return HW_OK;
    c->cb = addr;
    c->cb_vm = vm;
    c->state = LWP_PENDING;
    /* Outside ring 3 the rest waits, so that the LWPCB's page fault, if
     * any, is taken from ring 3 (5.3, 5.5.2.4). */
    return ring == 3 ? cb_load(u, c) : HW_OK;
}

enum hw_fault lwp_slwpcb(struct lwp *u, unsigned cpu, struct vmem *vm, unsigned ring,
                         uint64_t *addr)
{
    if (!u->present || cpu >= u->ncpu || !enabled(u, &u->cpu[cpu]))
        return HW_UD;
    struct lwp_cpu *c = &u->cpu[cpu];
    c->vm = vm;
    enum hw_fault r = settle(u, c, ring);
    if (!r)
        r = cb_flush(u, c, acc_of(ring));
    if (!r)
        *addr = c->cb;
    return r;
}

enum hw_fault lwp_ring3(struct lwp *u, unsigned cpu)
{
    if (!u->present || cpu >= u->ncpu || !enabled(u, &u->cpu[cpu]))
        return HW_OK;
    return settle(u, &u->cpu[cpu], 3);
}

void lwp_bind(struct lwp *u, unsigned cpu, struct vmem *vm)
{
    if (u->present && cpu < u->ncpu)
        u->cpu[cpu].vm = vm;
}

/* ---- context switch (5.5.2) ---- */

void lwp_save(struct lwp *u, unsigned cpu, struct lwp_xsave *xs)
{
    memset(xs, 0, sizeof *xs);
    if (!u->present || cpu >= u->ncpu || u->cpu[cpu].state == LWP_OFF)
        return;
    struct lwp_cpu *c = &u->cpu[cpu];
    xs->cb = c->cb;
    if (c->state == LWP_PENDING) {
        xs->deferred = 1; /* nothing loaded yet: the LWPCB has it all */
        return;
    }
    /* A context switch forces the head to memory (5.5.3), so that software
     * draining the ring sees every record while the thread is off the CPU.
     * XSAVE runs in the kernel: a page that is out leaves it in *xs only. */
    struct vmem_fault f;
    if (c->cb_vm)
        vmem_write_u(c->cb_vm, c->cb + LWPCB_BUFFER_HEAD_OFFSET, 4, c->head, 0, &f);
    xs->head = c->head;
    xs->live = c->live;
    for (unsigned i = 0; i < LWP_MAX_EVENTS; i++)
        xs->counter[i] = c->ctr[i].counter;
    xs->missed = (uint8_t)c->missed_pending;
}

void lwp_restore(struct lwp *u, unsigned cpu, struct vmem *vm, const struct lwp_xsave *xs)
{
    if (!u->present || cpu >= u->ncpu)
        return;
    struct lwp_cpu *c = &u->cpu[cpu];
    cpu_off(c);
    c->vm = vm;
    if (!xs->cb)
        return;
    c->cb = xs->cb;
    c->cb_vm = vm;
    if (xs->deferred) {
        c->state = LWP_PENDING;
        return;
    }
    /* The volatile state now; the LWPCB is not touched outside ring 3,
     * where its page fault could not be taken (5.5.2.4). */
    c->state = LWP_RESTORING;
    c->head = xs->head;
    c->live = xs->live & (uint32_t)bits_mask(u->cfg.max_events);
    for (unsigned i = 0; i < u->cfg.max_events; i++)
        c->ctr[i].counter = xs->counter[i] & (uint32_t)HW_FMASK(LWPCB_COUNTER, EventCounter);
    c->missed_pending = xs->missed != 0;
}

/* ---- MSRs ---- */

int lwp_owns_msr(uint32_t msr)
{
    return msr == LWP_MSR0 || msr == LWP_MSR1;
}

enum hw_fault lwp_rdmsr(struct lwp *u, unsigned cpu, uint32_t msr, uint64_t *val)
{
    *val = 0;
    if (!u->present || cpu >= u->ncpu || !lwp_owns_msr(msr))
        return HW_GP;
    struct lwp_cpu *c = &u->cpu[cpu];
    if (msr == LWP_MSR0) {
        *val = c->msr0;
        return HW_OK;
    }
    /* LWPMSR1: SLWPCB at CPL 0 (5.2.2). */
    if (!enabled(u, c))
        return HW_GP;
    return lwp_slwpcb(u, cpu, c->vm, 0, val);
}

enum hw_fault lwp_wrmsr(struct lwp *u, unsigned cpu, uint32_t msr, uint64_t val)
{
    if (!u->present || cpu >= u->ncpu || !lwp_owns_msr(msr))
        return HW_GP;
    struct lwp_cpu *c = &u->cpu[cpu];
    if (msr == LWP_MSR0) {
        /* Only features CPUID EDX makes available; reserved bits #GP (5.2.1). */
        if (val & ~u->msr0_ok)
            return HW_GP;
        c->msr0 = val;
        return HW_OK;
    }
    /* LWPMSR1: LLWPCB at CPL 0 (5.2.2); a linear address must be canonical. */
    uint64_t top = val >> 47;
    if (!enabled(u, c) || (top != 0 && top != 0x1ffff))
        return HW_GP;
    return lwp_llwpcb(u, cpu, c->vm, val, 0, NULL);
}

/* ---- the ring buffer ---- */

void lwp_rec_encode(const struct lwp_rec *r, unsigned cpu, uint8_t out[LWP_EVENT_SIZE])
{
    /* Reserved fields are written as zero (4). */
    uint32_t dw0 =
        (uint32_t)(HW_FSET(0, LWP_REC, EventId, r->event_id) |
                   HW_FSET(0, LWP_REC, CoreId, cpu & 0xff) | (r->flags & HW_FMASK(LWP_REC, Flags)));
    uint64_t q[3] = {r->ip, r->addr, 0};
    memset(out, 0, LWP_EVENT_SIZE);
    for (unsigned i = 0; i < 4; i++) {
        out[i] = (uint8_t)(dw0 >> 8 * i);
        out[4 + i] = (uint8_t)(r->data >> 8 * i);
    }
    for (unsigned k = 0; k < 3; k++)
        for (unsigned i = 0; i < 8; i++)
            out[8 + 8 * k + i] = (uint8_t)(q[k] >> 8 * i);
}

/* Bytes of records between tail and head, around the ring (5.4 Threshold). */
static uint32_t used(const struct lwp_cpu *c, uint32_t head, uint32_t tail)
{
    return head >= tail ? head - tail : head + c->size - tail;
}

enum hw_fault lwp_store(struct lwp *u, unsigned cpu, const struct lwp_rec *r)
{
    if (!u->present || cpu >= u->ncpu || u->cpu[cpu].state != LWP_ACTIVE)
        return HW_OK;
    struct lwp_cpu *c = &u->cpu[cpu];
    struct vmem *vm = c->cb_vm;
    const unsigned acc = VMEM_ACC_USER; /* LWP writes as the ring-3 process does */
    struct vmem_fault f;
    uint32_t next = c->head + LWP_EVENT_SIZE == c->size ? 0 : c->head + LWP_EVENT_SIZE;

    /* The tail is reread only when the ring looks full or past the
     * threshold by the cached copy (5.5.3): software only ever frees room,
     * so the cached copy errs on the full side. */
    uint32_t tail = c->tail;
    if (next == tail || (c->threshold && used(c, next, tail) >= c->threshold)) {
        uint64_t t;
        if (probe(c, vm, c->cb + LWPCB_BUFFER_TAIL_OFFSET, 4, acc))
            return HW_PF;
        vmem_read_u(vm, c->cb + LWPCB_BUFFER_TAIL_OFFSET, 4, &t, acc, &f);
        tail = norm_offset((uint32_t)t, c->size);
    }
    int full = next == tail;
    uint32_t space = full ? 0 : used(c, next, tail);
    int over = !full && c->threshold && space >= c->threshold;
    /* A full ring and a threshold reached force the head to memory (5.5.3). */
    int flush_head = full || over;

    if (probe(c, vm, c->base + c->head, LWP_EVENT_SIZE, acc | VMEM_ACC_WRITE) ||
        (flush_head && probe(c, vm, c->cb + LWPCB_BUFFER_HEAD_OFFSET, 4, acc | VMEM_ACC_WRITE)) ||
        (full && probe(c, vm, c->cb + LWPCB_MISSED_EVENTS, 8, acc | VMEM_ACC_WRITE)))
        return HW_PF;

    uint8_t rec[LWP_EVENT_SIZE];
    lwp_rec_encode(r, cpu, rec);
    vmem_write(vm, c->base + c->head, rec, sizeof rec, acc, &f);
    c->tail = tail;
    if (full) {
        /* 5.4 MissedEvents: the record stays written, the head does not
         * move, so the next record overwrites it. */
        uint64_t m = 0;
        vmem_read_u(vm, c->cb + LWPCB_MISSED_EVENTS, 8, &m, acc, &f);
        vmem_write_u(vm, c->cb + LWPCB_MISSED_EVENTS, 8, m + 1, acc, &f);
        c->nmissed++;
    } else {
        c->head = next;
        c->nstored++;
        /* Equality only, so one crossing interrupts once (5.4 Threshold). */
        if (space == c->threshold && HW_FGET(c->flags, LWPCB_FLAGS, INT)) {
            c->irq_pending = 1;
            c->nirq++;
        }
    }
    if (flush_head)
        vmem_write_u(vm, c->cb + LWPCB_BUFFER_HEAD_OFFSET, 4, c->head, acc, &f);
    /* 3 "Reset": stored or missed, the event's counter starts again. */
    if (r->event_id < LWP_NEV && c->slot[r->event_id] >= 0) {
        struct lwp_ctr *k = &c->ctr[(unsigned)c->slot[r->event_id]];
        k->counter = reload(c, k->interval);
    }
    return HW_OK;
}

int lwp_take_irq(struct lwp *u, unsigned cpu)
{
    if (!u->present || cpu >= u->ncpu || !u->cpu[cpu].irq_pending)
        return 0;
    u->cpu[cpu].irq_pending = 0;
    return 1;
}
