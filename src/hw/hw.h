/* What a register access can end in besides success: the architectural
 * faults the specifications name. Drivers see only these outcomes. */
#ifndef QOSIM_HW_HW_H
#define QOSIM_HW_HW_H

enum hw_fault {
    HW_OK = 0,
    HW_GP,           /* x86 general-protection fault, #GP(0) */
    HW_UD,           /* x86 invalid opcode, #UD */
    HW_ACCESS_FAULT, /* RISC-V load/store access fault: an MMIO access refused */
    HW_ILLEGAL,      /* RISC-V illegal-instruction exception: a CSR out of reach */
    HW_VIRTUAL,      /* RISC-V virtual-instruction exception: sqoscfg with V=1 */
    HW_PF,           /* x86 page fault, #PF: the faulting unit keeps CR2 and the error code */
};

/* "#GP" etc., for consoles and messages. */
const char *hw_fault_name(enum hw_fault f);

#include <stdint.h>

/* The x86 register interface a driver reaches hardware through, and
 * nothing else (docs/architecture.md): the simulated model implements it
 * (x86_regif()), a test implements it with a mock, and a real-hardware
 * backend (/dev/cpu/N/msr) would implement it later. */
struct hw_x86_if {
    void *ctx;
    enum hw_fault (*cpuid)(void *ctx, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4]);
    enum hw_fault (*rdmsr)(void *ctx, unsigned cpu, uint32_t msr, uint64_t *val);
    enum hw_fault (*wrmsr)(void *ctx, unsigned cpu, uint32_t msr, uint64_t val);
    /* What an OS knows of its topology (from ACPI and CPUID leaf 4 on real
     * machines): CPUs, and the L3 domain and L2 instance of each. */
    unsigned ncpu;
    const unsigned *l3_of, *l2_of;
};

/* A field of a register, declared once: NAME_SHIFT and NAME_LEN, read and
 * written through HW_FGET / HW_FSET (QEMU's registerfields, in miniature). */
#define HW_FIELD(reg, fld, shift, len)                                                             \
    enum { reg##_##fld##_SHIFT = (shift), reg##_##fld##_LEN = (len) }
#define HW_FMASK(reg, fld)                                                                         \
    ((reg##_##fld##_LEN >= 64 ? ~0ull : ((1ull << reg##_##fld##_LEN) - 1)) << reg##_##fld##_SHIFT)
#define HW_FGET(v, reg, fld) (((v)&HW_FMASK(reg, fld)) >> reg##_##fld##_SHIFT)
#define HW_FSET(v, reg, fld, x)                                                                    \
    (((v) & ~HW_FMASK(reg, fld)) | (((uint64_t)(x) << reg##_##fld##_SHIFT) & HW_FMASK(reg, fld)))

#endif
