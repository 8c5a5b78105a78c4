/* A simulated process address space: sparse 4 KiB pages, each mapped
 * user or supervisor, writable or read-only, as x86 page tables say them
 * (U/S and R/W bits; a present page is always readable). It holds what
 * hardware writes into a process's memory on its own, such as LWP's control
 * block and event ring buffer, so that the hardware's accesses meet the
 * permissions and faults the process set up.
 *
 * Access rules (x86 paging, AMD APM vol. 2 5.6, with CR0.WP = 1 as Linux
 * runs and no SMAP, project choice): a user access (CPL 3) needs a user page;
 * a write needs a writable page, from any privilege; a supervisor access may
 * read and write user pages. An access that breaks a rule on any byte does
 * nothing at all and reports a fault: the linear address of the first byte
 * it could not reach (what CR2 would hold) and the #PF error code bits P, W
 * and U. A multi-byte access is little-endian and may cross pages.
 *
 * Pages live in an open-addressing hash table keyed by page number, with
 * linear probing and backward-shift deletion (no tombstones), kept at most
 * half full. A hash table rather than a
 * sorted array: the hardware looks a page up on every access it makes (each
 * event record, each control-block field), a ring buffer spans hundreds of
 * pages, and mapping must not shift the whole table; lookups stay O(1)
 * whatever the number of pages. A page's 4 KiB are allocated on its first
 * write and read as zeros until then (demand-zero), so mapping a large
 * region costs only its table entries. */
#ifndef QOSIM_SIM_VMEM_H
#define QOSIM_SIM_VMEM_H

#include <stddef.h>
#include <stdint.h>

#define VMEM_PAGE_SHIFT 12
#define VMEM_PAGE_SIZE  (1ull << VMEM_PAGE_SHIFT)
/* Most pages one space may hold (64 GiB): bounds the table a bad length
 * could ask for. */
#define VMEM_MAX_PAGES (1u << 24)

/* Page permissions. */
enum {
    VMEM_W = 1 << 0, /* writable (R/W = 1) */
    VMEM_U = 1 << 1, /* user page (U/S = 1); without it, supervisor only */
};

/* What an access is. */
enum {
    VMEM_ACC_WRITE = 1 << 0, /* a write (else a read) */
    VMEM_ACC_USER = 1 << 1,  /* from CPL 3 (else supervisor) */
};

/* #PF error code bits (APM vol. 2 8.4.2), as a fault reports them. */
enum {
    VMEM_PF_P = 1 << 0, /* the page was present: a protection violation */
    VMEM_PF_W = 1 << 1, /* the access was a write */
    VMEM_PF_U = 1 << 2, /* the access was from CPL 3 */
};

/* An access that failed: what CR2 and the error code would say. */
struct vmem_fault {
    uint64_t addr;
    unsigned code; /* VMEM_PF_* */
};

/* Result of an access that can fault. */
enum { VMEM_OK = 0, VMEM_FAULT = 1 };

struct vmem_page {
    uint64_t vpn;  /* page number (address >> 12) */
    unsigned perm; /* VMEM_W | VMEM_U */
    int used;      /* slot holds a page */
    uint8_t *data; /* 4 KiB, or NULL while the page is all zeros */
};

struct vmem {
    struct vmem_page *slot; /* [cap], cap a power of two or 0 */
    size_t cap, n;
    unsigned bits; /* cap = 1 << bits */
};

void vmem_init(struct vmem *vm);
void vmem_free(struct vmem *vm);

/* Maps fresh zero pages over every page [addr, addr + len) touches, with
 * perm; pages already there are replaced (as mmap MAP_FIXED). 0, or
 * -QOSIM_EINVAL for a range that wraps or is too large, -QOSIM_ENOMEM;
 * on error nothing changed. len 0 maps nothing. */
int vmem_map(struct vmem *vm, uint64_t addr, uint64_t len, unsigned perm);
/* Unmaps every page [addr, addr + len) touches; pages not mapped are
 * skipped (as munmap). */
void vmem_unmap(struct vmem *vm, uint64_t addr, uint64_t len);
/* Sets perm on every page [addr, addr + len) touches, keeping contents (as
 * mprotect). 0, or -QOSIM_EINVAL when one is not mapped (then nothing
 * changed). */
int vmem_protect(struct vmem *vm, uint64_t addr, uint64_t len, unsigned perm);
/* Whether the page of addr is mapped; its permissions in *perm (may be NULL). */
int vmem_mapped(const struct vmem *vm, uint64_t addr, unsigned *perm);
/* Pages mapped. */
size_t vmem_pages(const struct vmem *vm);

/* Whether an access of acc (VMEM_ACC_*) to [addr, addr + len) would
 * succeed: VMEM_OK, or VMEM_FAULT with *f filled. Hardware that must make
 * several accesses as one (all or none) probes them all first. */
int vmem_probe(const struct vmem *vm, uint64_t addr, size_t len, unsigned acc,
               struct vmem_fault *f);
/* Byte ranges. VMEM_OK, or VMEM_FAULT with *f filled and nothing done. */
int vmem_read(const struct vmem *vm, uint64_t addr, void *dst, size_t len, unsigned acc,
              struct vmem_fault *f);
int vmem_write(struct vmem *vm, uint64_t addr, const void *src, size_t len, unsigned acc,
               struct vmem_fault *f);

/* Little-endian scalars of size bytes (1, 2, 4, 8; at most 8 are taken);
 * acc's VMEM_ACC_WRITE is implied by the direction. */
int vmem_read_u(const struct vmem *vm, uint64_t addr, unsigned size, uint64_t *v, unsigned acc,
                struct vmem_fault *f);
int vmem_write_u(struct vmem *vm, uint64_t addr, unsigned size, uint64_t v, unsigned acc,
                 struct vmem_fault *f);

#endif
