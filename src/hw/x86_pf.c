/* Prefetcher control MSRs (x86_pf.h): a core's value, and the prefetchers
 * it leaves on in the machine for each of the core's threads. */
#include "x86_pf.h"

#include "x86.h"

#include <stdlib.h>

/* The disable bits of each vendor's MSR, by enum pf_kind (Intel's order is
 * the kinds' order). */
static uint64_t kind_bits(const struct x86 *x, unsigned k)
{
    static const uint64_t amd[PF_NKIND] = {
        [PF_L2_STREAM] = HW_FMASK(PREFETCH_CONTROL, L2Stream),
        [PF_L2_ADJ] = HW_FMASK(PREFETCH_CONTROL, UpDown),
        [PF_L1_NEXT] = HW_FMASK(PREFETCH_CONTROL, L1Stream),
        [PF_L1_IP] = HW_FMASK(PREFETCH_CONTROL, L1Stride),
    };
    return x->amd ? amd[k] : 1ull << k;
}

static uint64_t writable(const struct x86 *x)
{
    if (x->amd)
        return HW_FMASK(PREFETCH_CONTROL, L1Stream) | HW_FMASK(PREFETCH_CONTROL, L1Stride) |
               HW_FMASK(PREFETCH_CONTROL, L1Region) | HW_FMASK(PREFETCH_CONTROL, L2Stream) |
               HW_FMASK(PREFETCH_CONTROL, UpDown);
    return HW_FMASK(MISC_FEATURE_CONTROL, L2_HW_PREFETCHER_DISABLE) |
           HW_FMASK(MISC_FEATURE_CONTROL, L2_ADJACENT_LINE_DISABLE) |
           HW_FMASK(MISC_FEATURE_CONTROL, DCU_PREFETCHER_DISABLE) |
           HW_FMASK(MISC_FEATURE_CONTROL, DCU_IP_PREFETCHER_DISABLE);
}

unsigned x86_pf_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->p->core.pf.present != 0;
}

static void apply(struct x86 *x, unsigned core)
{
    unsigned nthr = x->p->topo.threads, on = 0;
    for (unsigned k = 0; k < PF_NKIND; k++)
        if (!(x->pf_ctl[core] & kind_bits(x, k)))
            on |= 1u << k;
    for (unsigned t = 0; t < nthr; t++)
        mach_set_prefetch(x->m, core * nthr + t, on);
}

enum hw_fault x86_pf_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                          uint64_t *v)
{
    (void)r;
    (void)n;
    *v = x->pf_ctl[cpu / x->p->topo.threads];
    return HW_OK;
}

enum hw_fault x86_pf_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                           uint64_t v)
{
    (void)r;
    (void)n;
    if (v & ~writable(x))
        return HW_GP;
    unsigned core = cpu / x->p->topo.threads;
    x->pf_ctl[core] = v;
    apply(x, core);
    return HW_OK;
}

int x86_pf_init(struct x86 *x)
{
    unsigned ncores = x->m->ncpu / x->p->topo.threads;
    x->pf_ctl = calloc(ncores ? ncores : 1, sizeof *x->pf_ctl);
    return x->pf_ctl ? 0 : -1;
}

void x86_pf_reset(struct x86 *x)
{
    if (!x->p->core.pf.present)
        return;
    for (unsigned c = 0; c < x->m->ncpu / x->p->topo.threads; c++) {
        x->pf_ctl[c] = 0;
        apply(x, c);
    }
}
