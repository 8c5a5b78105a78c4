#include "lwp_proc.h"

#include "lwp.h"
#include "x86.h"

#include <string.h>

void lwp_proc_init(struct lwp_proc *p, struct x86 *x, unsigned cpu)
{
    memset(p, 0, sizeof *p);
    p->x = x;
    p->cpu = cpu;
    p->brk = LWP_PROC_MMAP_BASE;
    vmem_init(&p->vm);
}

void lwp_proc_free(struct lwp_proc *p)
{
    vmem_free(&p->vm);
}

static void cpuid(void *ctx, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    struct lwp_proc *p = ctx;
    x86_cpuid(p->x, p->cpu, leaf, sub, out);
}

/* The instructions execute at ring 3, on the process's CPU. */
static enum hw_fault llwpcb(void *ctx, uint64_t addr)
{
    struct lwp_proc *p = ctx;
    enum hw_fault f = lwp_llwpcb(&p->x->lwp, p->cpu, &p->vm, addr, 3, NULL);
    if (f == HW_PF)
        p->pf = p->x->lwp.cpu[p->cpu].pf;
    return f;
}

static enum hw_fault slwpcb(void *ctx, uint64_t *addr)
{
    struct lwp_proc *p = ctx;
    enum hw_fault f = lwp_slwpcb(&p->x->lwp, p->cpu, &p->vm, 3, addr);
    if (f == HW_PF)
        p->pf = p->x->lwp.cpu[p->cpu].pf;
    return f;
}

static int rd(void *ctx, uint64_t addr, void *buf, size_t n)
{
    struct lwp_proc *p = ctx;
    return vmem_read(&p->vm, addr, buf, n, VMEM_ACC_USER, &p->pf) ? -1 : 0;
}

static int wr(void *ctx, uint64_t addr, const void *buf, size_t n)
{
    struct lwp_proc *p = ctx;
    return vmem_write(&p->vm, addr, buf, n, VMEM_ACC_USER, &p->pf) ? -1 : 0;
}

/* Page-granular, page-aligned, never reused: enough for a profiler's
 * control block and rings. */
static uint64_t map(void *ctx, uint64_t n)
{
    struct lwp_proc *p = ctx;
    uint64_t len = (n + VMEM_PAGE_SIZE - 1) & ~(VMEM_PAGE_SIZE - 1), a = p->brk;
    if (!n || vmem_map(&p->vm, a, len, VMEM_W | VMEM_U))
        return 0;
    p->brk += len + VMEM_PAGE_SIZE; /* a guard page between mappings */
    return a;
}

void lwp_proc_if(struct lwp_proc *p, struct lwp_procif *out)
{
    *out = (struct lwp_procif){p, cpuid, llwpcb, slwpcb, rd, wr, map};
}
