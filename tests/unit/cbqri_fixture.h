/* The machine and CBQRI model the CBQRI register tests (test_cbqri.c for
 * the 2023 draft, test_cbqri10.c for 1.0) build and tear down, one at a
 * time, the addresses of their profiles' controllers, and the traffic they
 * drive. Define CBQRI_FIXTURE_NTASK (the machine's tasks) before including;
 * the machine-mask check uses the including file's IS. */
#ifndef QOSIM_TESTS_CBQRI_FIXTURE_H
#define QOSIM_TESTS_CBQRI_FIXTURE_H

#include "hw/cbqri.h"
#include "sim/mach.h"

static struct mach M;
static struct cbqri Q;
static int booted;

/* tiny-rv (tiny_rv.h): L2 instances 0 and 1 (module 0: harts 0-1, module
 * 1: harts 2-3; 4 KiB, 4 ways x 16 sets = 64 lines, NCBLKS 4, FRCID, one
 * AT), L3 (16 KiB, 8 ways x 32 sets = 256 lines, NCBLKS 8, no FRCID, data
 * and code apart), memory (NBWBLKS 16, MRBWB 12); 4 RCIDs, 8 MCIDs. */
#define T_L2(i) (0x10000000ull + (i)*0x1000ull)
#define T_L3    0x10010000ull
#define T_BW    0x10020000ull
/* riscv-soc and riscv-soc-draft: L2 controllers (4, NCBLKS 8, FRCID), L3
 * (2, NCBLKS 16, FRCID), memory (1, NBWBLKS 256, MRBWB 224); 16 RCIDs, 64
 * MCIDs; sampling 0.1. riscv-edge: L2 x2, L3 x1, memory, at the same
 * addresses. All 4 KiB apart. */
#define SOC_L2(i) (0x04820000ull + (i)*0x1000ull)
#define SOC_L3(i) (0x04828000ull + (i)*0x1000ull)
#define SOC_BW    0x04830000ull
/* The draft's secure window of a controller. */
#define SEC(a) ((a) + CBQRI_SECURE_OFFSET)

static inline void boot_plat(const struct plat *p)
{
    struct err e = {0};
    if (mach_init(&M, p, CBQRI_FIXTURE_NTASK, &e))
        fail_msg("mach_init(%s): %s", p->name, e.msg);
    if (cbqri_init(&Q, &M, &e)) {
        mach_free(&M);
        fail_msg("cbqri_init(%s): %s", p->name, e.msg);
    }
    booted = 1;
}

static inline void unboot(void)
{
    if (booted) {
        cbqri_free(&Q);
        mach_free(&M);
        booted = 0;
    }
}

/* A shipped profile. */
static inline void boot(const char *name)
{
    unboot();
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, name, &e))
        fail_msg("plat_load(%s): %s", name, e.msg);
    boot_plat(&p);
}

static inline int teardown(void **state)
{
    (void)state;
    unboot();
    return 0;
}

/* Line `line` of task `task`'s space on node 0: line i sits in set i mod
 * sets. */
static inline uint64_t addr(unsigned task, uint64_t line)
{
    return mach_phys_base(0, task) | (0x100000 + line * 64);
}

/* n accesses of one kind by hart `hart`, lines first.. of task `task`. */
static inline void access_n(unsigned hart, unsigned kind, unsigned task, uint64_t first, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        mach_access(&M, &M.cpu[hart], kind, addr(task, first + i));
}

/* The machine's data and code masks of a class are those capacity masks'
 * ways. */
#define MASKS_ARE(l, inst, cls, data, code)                                                        \
    do {                                                                                           \
        IS(mach_get_mask(&M, (l), (inst), (cls), MACH_DATA), mach_cbm_ways(&M, (l), (data)));      \
        IS(mach_get_mask(&M, (l), (inst), (cls), MACH_CODE), mach_cbm_ways(&M, (l), (code)));      \
    } while (0)

#endif
