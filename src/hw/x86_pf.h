/* The MSRs that switch a core's hardware prefetchers (sim/cache/pf.h), as
 * real software switches them (docs/registers.md 1.7):
 *
 *   Intel MSR_MISC_FEATURE_CONTROL (0x1A4): bit 0 L2 hardware prefetcher
 *   (streamer) disable, 1 L2 adjacent cache line prefetcher disable, 2 DCU
 *   prefetcher disable, 3 DCU IP prefetcher disable; "other bits of this MSR
 *   are reserved"; one per core, shared by its hyper-threads ("Disclosure of
 *   H/W prefetcher control on some Intel processors", Intel, 2014; SDM vol. 4,
 *   MSR_MISC_FEATURE_CONTROL).
 *   AMD PrefetchControl (MSRC000_0108): bit 0 L1Stream, 1 L1Stride, 2
 *   L1Region, 3 L2Stream, 5 UpDown disable, 4 and 63:6 reserved, reset 0,
 *   per core (PPR for AMD Family 19h, Zen 4, "MSRC000_0108 [Prefetch
 *   Control]"; Family 1Ah, Zen 5, adds MasterEnable and an aggressiveness
 *   profile in bits 9:6, not modelled here).
 *
 * Each exists where the profile's part has prefetchers (core.prefetch) and
 * is the vendor's. Reserved bits set in a write are #GP (project choice:
 * neither source says, and Intel's SDM makes a reserved-bit write of an
 * architectural MSR #GP). AMD's L1Region bit is kept and read back but
 * switches nothing: the model has no region prefetcher. */
#ifndef QOSIM_HW_X86_PF_H
#define QOSIM_HW_X86_PF_H

#include "hw.h"

#include <stdint.h>

enum { X86_MISC_FEATURE_CONTROL = 0x1A4, X86_AMD_PREFETCH_CONTROL = 0xC0000108 };

HW_FIELD(MISC_FEATURE_CONTROL, L2_HW_PREFETCHER_DISABLE, 0, 1);
HW_FIELD(MISC_FEATURE_CONTROL, L2_ADJACENT_LINE_DISABLE, 1, 1);
HW_FIELD(MISC_FEATURE_CONTROL, DCU_PREFETCHER_DISABLE, 2, 1);
HW_FIELD(MISC_FEATURE_CONTROL, DCU_IP_PREFETCHER_DISABLE, 3, 1);
HW_FIELD(PREFETCH_CONTROL, L1Stream, 0, 1);
HW_FIELD(PREFETCH_CONTROL, L1Stride, 1, 1);
HW_FIELD(PREFETCH_CONTROL, L1Region, 2, 1);
HW_FIELD(PREFETCH_CONTROL, L2Stream, 3, 1);
HW_FIELD(PREFETCH_CONTROL, UpDown, 5, 1);

struct x86;
struct x86_reg;

/* The register table's callbacks (x86.c, x86_regs[]), scope per core. */
unsigned x86_pf_count(const struct x86 *x, const struct x86_reg *r);
enum hw_fault x86_pf_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                          uint64_t *v);
enum hw_fault x86_pf_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                           uint64_t v);
/* Allocates the per-core values (0, or -1 without memory) and resets them: 0,
 * every prefetcher on. */
int x86_pf_init(struct x86 *x);
void x86_pf_reset(struct x86 *x);

#endif
