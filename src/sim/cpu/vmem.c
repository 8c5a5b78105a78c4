#include "vmem.h"

#include "qosim.h"

#include <stdlib.h>
#include <string.h>

#define NONE ((size_t)-1)

void vmem_init(struct vmem *vm)
{
    memset(vm, 0, sizeof *vm);
}

void vmem_free(struct vmem *vm)
{
    for (size_t i = 0; i < vm->cap; i++)
        free(vm->slot[i].data);
    free(vm->slot);
    memset(vm, 0, sizeof *vm);
}

size_t vmem_pages(const struct vmem *vm)
{
    return vm->n;
}

/* ---- the table ---- */

/* Fibonacci hashing: consecutive page numbers, the common case, spread. */
static size_t home(const struct vmem *vm, uint64_t vpn)
{
    return (size_t)((vpn * 0x9e3779b97f4a7c15ull) >> (64 - vm->bits));
}

static size_t find(const struct vmem *vm, uint64_t vpn)
{
    if (!vm->cap)
        return NONE;
    size_t mask = vm->cap - 1;
    for (size_t i = home(vm, vpn);; i = (i + 1) & mask) {
        if (!vm->slot[i].used)
            return NONE;
        if (vm->slot[i].vpn == vpn)
            return i;
    }
}

/* Into a table known to have room and to lack vpn. */
static struct vmem_page *insert(struct vmem *vm, uint64_t vpn)
{
    size_t mask = vm->cap - 1, i = home(vm, vpn);
    while (vm->slot[i].used)
        i = (i + 1) & mask;
    vm->slot[i] = (struct vmem_page){.vpn = vpn, .used = 1};
    vm->n++;
    return &vm->slot[i];
}

/* Room for extra more pages with the table at most half full. */
static int reserve(struct vmem *vm, size_t extra)
{
    size_t need = vm->n + extra, cap = vm->cap ? vm->cap : 16;
    unsigned bits = vm->cap ? vm->bits : 4;
    while (cap / 2 < need) {
        cap *= 2;
        bits++;
    }
    if (cap == vm->cap)
        return 0;
    struct vmem_page *old = vm->slot;
    size_t ocap = vm->cap;
    if (!(vm->slot = calloc(cap, sizeof *vm->slot))) {
        vm->slot = old;
        return -QOSIM_ENOMEM;
    }
    vm->cap = cap;
    vm->bits = bits;
    vm->n = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].used)
            *insert(vm, old[i].vpn) = old[i];
    free(old);
    return 0;
}

/* Backward-shift deletion: later entries of the probe run move up so that
 * no lookup stops early at the hole. */
static void erase(struct vmem *vm, size_t i)
{
    size_t mask = vm->cap - 1;
    free(vm->slot[i].data);
    for (size_t j = (i + 1) & mask; vm->slot[j].used; j = (j + 1) & mask) {
        size_t k = home(vm, vm->slot[j].vpn);
        /* Entry j may fill hole i when its home is not in (i, j], cyclically. */
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            vm->slot[i] = vm->slot[j];
            i = j;
        }
    }
    vm->slot[i] = (struct vmem_page){0};
    vm->n--;
}

/* ---- mapping ---- */

/* Page numbers [*first, *last] that [addr, addr + len) touches; -QOSIM_EINVAL
 * for a range past the top of the address space. */
static int span(uint64_t addr, uint64_t len, uint64_t *first, uint64_t *last)
{
    if (addr + (len - 1) < addr)
        return -QOSIM_EINVAL;
    *first = addr >> VMEM_PAGE_SHIFT;
    *last = (addr + (len - 1)) >> VMEM_PAGE_SHIFT;
    return 0;
}

int vmem_map(struct vmem *vm, uint64_t addr, uint64_t len, unsigned perm)
{
    uint64_t first, last;
    if (!len)
        return 0;
    if (perm & ~(unsigned)(VMEM_W | VMEM_U) || span(addr, len, &first, &last) ||
        last - first >= VMEM_MAX_PAGES)
        return -QOSIM_EINVAL;
    size_t fresh = 0;
    for (uint64_t p = first; p <= last; p++)
        fresh += find(vm, p) == NONE;
    if (vm->n + fresh > VMEM_MAX_PAGES)
        return -QOSIM_EINVAL;
    int rc = reserve(vm, fresh);
    if (rc)
        return rc;
    for (uint64_t p = first; p <= last; p++) {
        size_t i = find(vm, p);
        struct vmem_page *pg = i == NONE ? insert(vm, p) : &vm->slot[i];
        free(pg->data);
        pg->data = NULL;
        pg->perm = perm;
    }
    return 0;
}

void vmem_unmap(struct vmem *vm, uint64_t addr, uint64_t len)
{
    uint64_t first, last;
    if (!len || span(addr, len, &first, &last))
        return;
    /* A huge range over a small table: walk the table instead. */
    if (last - first >= vm->cap) {
        for (size_t i = 0; i < vm->cap;)
            if (vm->slot[i].used && vm->slot[i].vpn >= first && vm->slot[i].vpn <= last)
                erase(vm, i); /* slot i may now hold a shifted entry: look again */
            else
                i++;
        return;
    }
    for (uint64_t p = first;; p++) {
        size_t i = find(vm, p);
        if (i != NONE)
            erase(vm, i);
        if (p == last)
            break;
    }
}

int vmem_protect(struct vmem *vm, uint64_t addr, uint64_t len, unsigned perm)
{
    uint64_t first, last;
    if (!len)
        return 0;
    if (perm & ~(unsigned)(VMEM_W | VMEM_U) || span(addr, len, &first, &last) ||
        last - first >= VMEM_MAX_PAGES)
        return -QOSIM_EINVAL;
    for (uint64_t p = first; p <= last; p++)
        if (find(vm, p) == NONE)
            return -QOSIM_EINVAL;
    for (uint64_t p = first; p <= last; p++)
        vm->slot[find(vm, p)].perm = perm;
    return 0;
}

int vmem_mapped(const struct vmem *vm, uint64_t addr, unsigned *perm)
{
    size_t i = find(vm, addr >> VMEM_PAGE_SHIFT);
    if (i != NONE && perm)
        *perm = vm->slot[i].perm;
    return i != NONE;
}

/* ---- access ---- */

int vmem_probe(const struct vmem *vm, uint64_t addr, size_t len, unsigned acc, struct vmem_fault *f)
{
    int wr = (acc & VMEM_ACC_WRITE) != 0, user = (acc & VMEM_ACC_USER) != 0;
    unsigned code = (wr ? VMEM_PF_W : 0) | (user ? VMEM_PF_U : 0);
    /* Page by page; addresses wrap at 2^64 as linear addresses do. */
    for (uint64_t a = addr; len;) {
        size_t i = find(vm, a >> VMEM_PAGE_SHIFT);
        unsigned perm = i == NONE ? 0 : vm->slot[i].perm;
        if (i == NONE || (user && !(perm & VMEM_U)) || (wr && !(perm & VMEM_W))) {
            f->addr = a;
            f->code = code | (i == NONE ? 0 : VMEM_PF_P);
            return VMEM_FAULT;
        }
        uint64_t in = VMEM_PAGE_SIZE - (a & (VMEM_PAGE_SIZE - 1));
        if (in >= len)
            break;
        len -= (size_t)in;
        a += in;
    }
    return VMEM_OK;
}

int vmem_read(const struct vmem *vm, uint64_t addr, void *dst, size_t len, unsigned acc,
              struct vmem_fault *f)
{
    if (vmem_probe(vm, addr, len, acc & ~(unsigned)VMEM_ACC_WRITE, f))
        return VMEM_FAULT;
    uint8_t *d = dst;
    for (uint64_t a = addr; len;) {
        const struct vmem_page *pg = &vm->slot[find(vm, a >> VMEM_PAGE_SHIFT)];
        size_t off = (size_t)(a & (VMEM_PAGE_SIZE - 1)), n = (size_t)VMEM_PAGE_SIZE - off;
        if (n > len)
            n = len;
        if (pg->data)
            memcpy(d, pg->data + off, n);
        else
            memset(d, 0, n);
        d += n;
        len -= n;
        a += n;
    }
    return VMEM_OK;
}

int vmem_write(struct vmem *vm, uint64_t addr, const void *src, size_t len, unsigned acc,
               struct vmem_fault *f)
{
    if (vmem_probe(vm, addr, len, acc | VMEM_ACC_WRITE, f))
        return VMEM_FAULT;
    /* Allocate every page first, so that running out of memory (reported
     * as a fault at the page's address: the host cannot back the page)
     * leaves the write undone rather than half done. */
    for (uint64_t a = addr, left = len; left;) {
        struct vmem_page *pg = &vm->slot[find(vm, a >> VMEM_PAGE_SHIFT)];
        if (!pg->data && !(pg->data = calloc(1, VMEM_PAGE_SIZE))) {
            f->addr = a;
            f->code = VMEM_PF_P | VMEM_PF_W | (acc & VMEM_ACC_USER ? VMEM_PF_U : 0);
            return VMEM_FAULT;
        }
        uint64_t in = VMEM_PAGE_SIZE - (a & (VMEM_PAGE_SIZE - 1));
        if (in >= left)
            break;
        left -= in;
        a += in;
    }
    const uint8_t *s = src;
    for (uint64_t a = addr; len;) {
        struct vmem_page *pg = &vm->slot[find(vm, a >> VMEM_PAGE_SHIFT)];
        size_t off = (size_t)(a & (VMEM_PAGE_SIZE - 1)), n = (size_t)VMEM_PAGE_SIZE - off;
        if (n > len)
            n = len;
        memcpy(pg->data + off, s, n);
        s += n;
        len -= n;
        a += n;
    }
    return VMEM_OK;
}

int vmem_read_u(const struct vmem *vm, uint64_t addr, unsigned size, uint64_t *v, unsigned acc,
                struct vmem_fault *f)
{
    uint8_t b[8];
    if (size > 8)
        size = 8;
    if (vmem_read(vm, addr, b, size, acc, f))
        return VMEM_FAULT;
    uint64_t x = 0;
    for (unsigned i = size; i--;)
        x = x << 8 | b[i];
    *v = x;
    return VMEM_OK;
}

int vmem_write_u(struct vmem *vm, uint64_t addr, unsigned size, uint64_t v, unsigned acc,
                 struct vmem_fault *f)
{
    uint8_t b[8];
    if (size > 8)
        size = 8;
    for (unsigned i = 0; i < size; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return vmem_write(vm, addr, b, size, acc, f);
}
