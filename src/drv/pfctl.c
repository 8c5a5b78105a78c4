#include "pfctl.h"

#include "sim/cache/pf.h"

#include <stdint.h>

enum { MSR_MISC_FEATURE_CONTROL = 0x1A4, MSR_AMD_PREFETCH_CONTROL = 0xC0000108 };

/* The disable bit of each kind: Intel's in the kinds' order (0 L2 streamer,
 * 1 adjacent line, 2 DCU, 3 DCU IP); AMD's L2Stream [3], UpDown [5],
 * L1Stream [0], L1Stride [1]. L1Region [2], which no modelled kind is, is
 * left clear (on). */
static const uint8_t amd_bit[PF_NKIND] = {
    [PF_L2_STREAM] = 3, [PF_L2_ADJ] = 5, [PF_L1_NEXT] = 0, [PF_L1_IP] = 1};

int pfctl_set(const struct hw_x86_if *r, int amd, unsigned cpu, unsigned on, struct err *e)
{
    uint32_t msr = amd ? MSR_AMD_PREFETCH_CONTROL : MSR_MISC_FEATURE_CONTROL;
    uint64_t v = 0;
    for (unsigned k = 0; k < PF_NKIND; k++)
        if (!(on >> k & 1))
            v |= 1ull << (amd ? amd_bit[k] : k);
    enum hw_fault f = r->wrmsr(r->ctx, cpu, msr, v);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "wrmsr CPU %u MSR 0x%x value 0x%llx: %s", cpu, msr,
                       (unsigned long long)v, hw_fault_name(f));
    return 0;
}
