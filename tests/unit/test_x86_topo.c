/* Unit tests for what hw/x86.c tells software about the machine's shape:
 * the CPU signature (CPUID 1 EAX), the APIC ID layout, the cache and
 * topology leaves (4, 0BH, 1FH; AMD 0x80000001, 0x80000005, 0x80000006,
 * 0x80000008, 0x8000001D, 0x8000001E) and IA32_MBA_CFG, as docs/registers.md
 * 1.1 and 1.2 state them. Every expected value is worked out by hand from
 * the profile, in the comment beside it, never read back from the model.
 *
 * The APIC IDs must be the ones QEMU 7.2 gives a guest with -smp
 * sockets=S,dies=D,cores=C,threads=T (D = nodes x domains, C = modules x
 * cores), whose cpu index i is thread i % T, core i / T % C, die i / TC % D,
 * socket i / TCD: a guest sees the model's CPUID next to QEMU's ACPI tables.
 * The last tests read the leaves the way Linux 6.1 does and check that it
 * finds the machine's caches and domains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

#define X86_FIXTURE_NTASK 1
#include "x86_fixture.h"

#define MBA_CFG 0xC84u

/* ---- building machines ---- */

/* A small machine: vendor, topology counts, extra core keys (", family:
 * ..." or ""), who shares the L2, and anything to add at the end (a qos
 * section). L1D 2K 4-way, L1I 1K 2-way, L2 8K 4-way, L3 32K 8-way, line 64. */
static void tiny_text(char *buf, size_t cap, const char *vendor, const unsigned topo[6],
                      const char *core, const char *l2_by, const char *tail)
{
    snprintf(buf, cap,
             "name: tiny\n"
             "vendor: %s\n"
             "topology: {sockets: %u, nodes: %u, domains: %u, modules: %u, cores: %u,"
             " threads: %u}\n"
             "core: {frequency: 1GHz, cpi: 1%s}\n"
             "caches:\n"
             "  L1I: {size: 1K, ways: 2, latency: 2}\n"
             "  L1D: {size: 2K, ways: 4, latency: 2}\n"
             "  L2: {size: 8K, ways: 4, latency: 10, shared_by: %s}\n"
             "  L3: {size: 32K, ways: 8, latency: 30}\n"
             "memory: {channels: 1, peak: 10GB/s, latency: 100ns}\n"
             "%s",
             vendor, topo[0], topo[1], topo[2], topo[3], topo[4], topo[5], core, l2_by, tail);
}

static void boot_tiny(const char *vendor, const unsigned topo[6], const char *core,
                      const char *l2_by, const char *tail)
{
    char text[2048];
    tiny_text(text, sizeof text, vendor, topo, core, l2_by, tail);
    boot_text(text);
}

/* ---- checking registers, with the failing line in the message ---- */

static void cpuid_is_at(unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b,
                        uint32_t c, uint32_t d, int line)
{
    uint32_t r[4] = {0xdead, 0xdead, 0xdead, 0xdead};
    assert_int_equal(x86_cpuid(&X, cpu, leaf, sub, r), HW_OK);
    if (r[0] != a || r[1] != b || r[2] != c || r[3] != d)
        fail_msg("line %d: cpu %u cpuid(0x%x, %u) = %08x %08x %08x %08x, want %08x %08x %08x %08x",
                 line, cpu, leaf, sub, r[0], r[1], r[2], r[3], a, b, c, d);
}

#define CPUID_AT(cpu, leaf, sub, a, b, c, d)                                                       \
    cpuid_is_at((cpu), (leaf), (sub), (a), (b), (c), (d), __LINE__)
#define CPUID_IS(leaf, sub, a, b, c, d) CPUID_AT(0, leaf, sub, a, b, c, d)
#define CPUID_ZERO(leaf, sub)           CPUID_IS(leaf, sub, 0, 0, 0, 0)

static uint32_t reg(unsigned cpu, uint32_t leaf, uint32_t sub, int r)
{
    uint32_t o[4];
    x86_cpuid(&X, cpu, leaf, sub, o);
    return o[r];
}

enum { EAX, EBX, ECX, EDX };

#define APIC_IS(cpu, want)                                                                         \
    do {                                                                                           \
        uint32_t got_ = x86_apic_id(&X, (cpu));                                                    \
        if (got_ != (uint32_t)(want))                                                              \
            fail_msg("line %d: APIC ID of cpu %u = %u, want %u", __LINE__, (unsigned)(cpu), got_,  \
                     (unsigned)(want));                                                            \
    } while (0)

static void mba_expect(unsigned cpu, int write, uint64_t v, enum hw_fault want, int line)
{
    uint64_t got = v;
    enum hw_fault f = write ? x86_wrmsr(&X, cpu, MBA_CFG, v) : x86_rdmsr(&X, cpu, MBA_CFG, &got);
    if (f != want)
        fail_msg("line %d: %s cpu %u IA32_MBA_CFG = %s, want %s", line, write ? "wrmsr" : "rdmsr",
                 cpu, hw_fault_name(f), hw_fault_name(want));
}

#define MBA_WR(cpu, v, want) mba_expect((cpu), 1, (v), (want), __LINE__)
#define MBA_GP(cpu)                                                                                \
    do {                                                                                           \
        mba_expect((cpu), 0, 0, HW_GP, __LINE__);                                                  \
        mba_expect((cpu), 1, 0, HW_GP, __LINE__);                                                  \
    } while (0)
#define MBA_IS(cpu, want)                                                                          \
    do {                                                                                           \
        uint64_t v_ = 0xdead;                                                                      \
        mba_expect((cpu), 0, 0, HW_OK, __LINE__);                                                  \
        x86_rdmsr(&X, (cpu), MBA_CFG, &v_);                                                        \
        if (v_ != (want))                                                                          \
            fail_msg("line %d: IA32_MBA_CFG on cpu %u = 0x%llx, want 0x%llx", __LINE__,            \
                     (unsigned)(cpu), (unsigned long long)v_, (unsigned long long)(want));         \
    } while (0)

/* "GenuineIntel" and "AuthenticAMD" as EBX, EDX, ECX hold them. */
#define GENU 0x756e6547u
#define INEI 0x49656e69u
#define NTEL 0x6c65746eu
#define AUTH 0x68747541u
#define ENTI 0x69746e65u
#define CAMD 0x444d4163u

/* ======================= intel-xeon ======================= */

/* intel-xeon: 2 sockets x 1 die (1 node x 1 domain) x 8 cores (8 modules x
 * 1) x 2 threads. Widths: thread 1, core 3, die 0 bits, so the package field
 * starts at bit 4 and the APIC ID of cpu i is i itself. Signature family 6,
 * model 0x6A, stepping 6: EAX 0x000606A6 (extended model 6, model A, family
 * 6, stepping 6). */
static void test_xeon_basic(void **state)
{
    (void)state;
    CPUID_IS(0x0, 0, 0x1F, GENU, NTEL, INEI);
    /* EBX: initial APIC ID [31:24], 1 << 4 = 16 IDs in the package [23:16],
     * CLFLUSH 64 / 8 = 8 [15:8]. EDX: HTT [28] and CLFSH [19]. */
    CPUID_AT(0, 0x1, 0, 0x000606A6, 0x00100800, 0, 0x10080000);
    CPUID_AT(17, 0x1, 0, 0x000606A6, 0x11100800, 0, 0x10080000);
    CPUID_AT(31, 0x1, 0, 0x000606A6, 0x1F100800, 0, 0x10080000);
    APIC_IS(0, 0);
    APIC_IS(1, 1);   /* thread 1 of core 0 */
    APIC_IS(14, 14); /* core 7, thread 0 */
    APIC_IS(16, 16); /* socket 1: bit 4 */
    APIC_IS(31, 31);
}

/* Leaf 4 on intel-xeon. EAX[31:26] is (1 << (3 + 0)) - 1 = 7 in every
 * subleaf; EAX[8] self-initializing.
 * L1D 32K 8-way 64 B: 64 sets; shared by a core's 2 threads: EAX[25:14] 1.
 *   EAX = 7 << 26 | 1 << 14 | 1 << 8 | 1 << 5 | 1 = 0x1C004121,
 *   EBX = 7 << 22 | 63 = 0x01C0003F, ECX = 63.
 * L1I: the same with type 2: 0x1C004122.
 * L2 1M 16-way per core: 1024 sets; EAX = 7 << 26 | 1 << 14 | 1 << 8 |
 *   2 << 5 | 3 = 0x1C004143, EBX = 15 << 22 | 63 = 0x03C0003F, ECX 0x3FF.
 * L3 11M 11-way per socket: 16384 sets; shared by 1 << (1 + 3) = 16 IDs:
 *   EAX = 7 << 26 | 15 << 14 | 1 << 8 | 3 << 5 | 3 = 0x1C03C163,
 *   EBX = 10 << 22 | 63 = 0x0280003F, ECX 0x3FFF.
 * No level is inclusive (EDX 0); subleaf 4 is the null one. */
static void test_xeon_leaf4(void **state)
{
    (void)state;
    CPUID_IS(0x4, 0, 0x1C004121, 0x01C0003F, 63, 0);
    CPUID_IS(0x4, 1, 0x1C004122, 0x01C0003F, 63, 0);
    CPUID_IS(0x4, 2, 0x1C004143, 0x03C0003F, 0x3FF, 0);
    CPUID_IS(0x4, 3, 0x1C03C163, 0x0280003F, 0x3FFF, 0);
    CPUID_ZERO(0x4, 4);
    CPUID_ZERO(0x4, 5);
    /* The same for every CPU. */
    CPUID_AT(31, 0x4, 3, 0x1C03C163, 0x0280003F, 0x3FFF, 0);
}

/* Leaves 0BH and 1FH on intel-xeon (one die a socket: 1FH is 0BH): SMT level
 * shift 1, 2 threads; core level shift 4 (to the package), 16 logical
 * CPUs; then invalid levels. EDX is the x2APIC ID, ECX[7:0] the subleaf and
 * ECX[15:8] the type (1 SMT, 2 core, 0 invalid). */
static void test_xeon_topology_leaves(void **state)
{
    (void)state;
    for (uint32_t leaf = 0xB; leaf <= 0x1F; leaf += 0x14) {
        CPUID_AT(5, leaf, 0, 1, 2, 0x100, 5);
        CPUID_AT(5, leaf, 1, 4, 16, 0x201, 5);
        CPUID_AT(5, leaf, 2, 0, 0, 0x002, 5);
        CPUID_AT(5, leaf, 3, 0, 0, 0x003, 5);
        CPUID_AT(5, leaf, 0x1FF, 0, 0, 0x0FF, 5);
        CPUID_AT(30, leaf, 1, 4, 16, 0x201, 30);
    }
}

/* Extended leaves on Intel: up to 0x80000008; 0x80000006 ECX the L2, 1024
 * KiB [31:16], 16 ways = code 8 [15:12], line 64 [7:0] = 0x04008040; the
 * AMD-only leaves read 0. */
static void test_xeon_extended(void **state)
{
    (void)state;
    CPUID_IS(0x80000000, 0, 0x80000008, 0, 0, 0);
    CPUID_ZERO(0x80000001, 0);
    CPUID_ZERO(0x80000005, 0);
    CPUID_IS(0x80000006, 0, 0, 0, 0x04008040, 0);
    CPUID_ZERO(0x80000008, 0);
    CPUID_ZERO(0x8000001D, 0);
    CPUID_ZERO(0x8000001E, 0);
}

/* ======================= intel-atom ======================= */

/* intel-atom: 1 socket x 1 die x 24 cores (6 modules x 4) x 1 thread:
 * thread 0, core 5 (24 rounds up to 32), die 0 bits; cpu i has APIC ID i.
 * Signature family 6, model 0x86, stepping 7: EAX 0x00080667. Leaf 1 EBX:
 * 32 IDs [23:16], CLFLUSH 8; HTT since the package holds 24 CPUs. */
static void test_atom_basic(void **state)
{
    (void)state;
    CPUID_IS(0x0, 0, 0x1F, GENU, NTEL, INEI);
    CPUID_AT(0, 0x1, 0, 0x00080667, 0x00200800, 0, 0x10080000);
    CPUID_AT(23, 0x1, 0, 0x00080667, 0x17200800, 0, 0x10080000);
    APIC_IS(0, 0);
    APIC_IS(4, 4);
    APIC_IS(23, 23);
}

/* Leaf 4 on intel-atom. EAX[31:26] = (1 << 5) - 1 = 31.
 * L1D: one thread a core: EAX[25:14] 0: 31 << 26 | 1 << 8 | 1 << 5 | 1 =
 *   0x7C000121; EBX 0x01C0003F; ECX 63. L1I 0x7C000122.
 * L2 4608K 18-way per module of 4 cores: 4096 sets, shared by 1 << 2 IDs:
 *   EAX = 31 << 26 | 3 << 14 | 1 << 8 | 2 << 5 | 3 = 0x7C00C143,
 *   EBX = 17 << 22 | 63 = 0x0440003F, ECX 0xFFF.
 * No L3: subleaf 3 is the null one. */
static void test_atom_leaf4(void **state)
{
    (void)state;
    CPUID_IS(0x4, 0, 0x7C000121, 0x01C0003F, 63, 0);
    CPUID_IS(0x4, 1, 0x7C000122, 0x01C0003F, 63, 0);
    CPUID_IS(0x4, 2, 0x7C00C143, 0x0440003F, 0xFFF, 0);
    CPUID_ZERO(0x4, 3);
    CPUID_AT(13, 0x4, 2, 0x7C00C143, 0x0440003F, 0xFFF, 0);
}

/* Leaves 0BH and 1FH on intel-atom: SMT shift 0, 1 thread; core shift 5, 24
 * CPUs. 0x80000006 ECX: 4608 KiB, 18 ways (no code: 7, "see leaf 4"), line
 * 64 = 0x12007040. */
static void test_atom_topology_and_extended(void **state)
{
    (void)state;
    for (uint32_t leaf = 0xB; leaf <= 0x1F; leaf += 0x14) {
        CPUID_AT(23, leaf, 0, 0, 1, 0x100, 23);
        CPUID_AT(23, leaf, 1, 5, 24, 0x201, 23);
        CPUID_AT(23, leaf, 2, 0, 0, 0x002, 23);
    }
    CPUID_IS(0x80000000, 0, 0x80000008, 0, 0, 0);
    CPUID_IS(0x80000006, 0, 0, 0, 0x12007040, 0);
}

/* ======================= amd-epyc ======================= */

/* amd-epyc: 2 sockets x 4 dies (1 node x 4 CCX) x 8 cores (8 modules x 1) x
 * 2 threads: thread 1, core 3, die 2 bits; package field from bit 6; cpu i
 * has APIC ID i. Signature family 0x19, model 0x01, stepping 1: family
 * field 0xF, extended family 0x19 - 0xF = 0xA: EAX 0x00A00F11. Leaf 1 EBX:
 * 64 IDs, CLFLUSH 8. AMD's basic leaves end at 10H: no leaf 4 or 1FH; 0BH
 * as on family 17h and later: SMT shift 1 (2 threads), core level shift 6
 * to the package (C x T = 16 logical CPUs), then the invalid level. */
static void test_epyc_basic(void **state)
{
    (void)state;
    CPUID_IS(0x0, 0, 0x10, AUTH, CAMD, ENTI);
    CPUID_AT(0, 0x1, 0, 0x00A00F11, 0x00400800, 0, 0x10080000);
    CPUID_AT(100, 0x1, 0, 0x00A00F11, 0x64400800, 0, 0x10080000);
    CPUID_ZERO(0x4, 0);
    CPUID_IS(0xB, 0, 1, 2, 0x100, 0);
    CPUID_IS(0xB, 1, 6, 16, 0x201, 0);
    CPUID_IS(0xB, 2, 0, 0, 0x002, 0);
    CPUID_AT(100, 0xB, 1, 6, 16, 0x201, 100);
    CPUID_ZERO(0x1F, 0);
    APIC_IS(0, 0);
    APIC_IS(17, 17);   /* CCX 1 (bit 4), core 0, thread 1 */
    APIC_IS(100, 100); /* socket 1, CCX 2, core 2, thread 0 */
    APIC_IS(127, 127);
}

/* AMD's extended leaves on amd-epyc.
 * 0x80000001: EAX the signature; ECX TopologyExtensions [22], CmpLegacy [1]
 *   (32 cores a package) = 0x00400002.
 * 0x80000005: L1D and L1I 32 KiB [31:24], 8 ways [23:16], 1 line a tag,
 *   64 B: 0x20080140 each.
 * 0x80000006: ECX L2 512 KiB, 8 ways = code 6, 1 line a tag, 64 B =
 *   0x02006140; EDX L3 32M = 64 x 512K [31:18], 16 ways = code 8, 1, 64 =
 *   0x01008140.
 * 0x80000008: EBX[6] BE; ECX NC 63 [7:0] (64 logical CPUs a package),
 *   ApicIdSize 6 [15:12] = 0x603F. */
static void test_epyc_extended(void **state)
{
    (void)state;
    CPUID_IS(0x80000000, 0, 0x80000020, AUTH, CAMD, ENTI);
    CPUID_IS(0x80000001, 0, 0x00A00F11, 0, 0x00400002, 0);
    CPUID_IS(0x80000005, 0, 0, 0, 0x20080140, 0x20080140);
    CPUID_IS(0x80000006, 0, 0, 0, 0x02006140, 0x01008140);
    CPUID_IS(0x80000008, 0, 0, 0x40, 0x603F, 0);
}

/* 0x8000001D on amd-epyc: the leaf 4 format, EAX[31:26] reserved (0).
 * L1D: 2 threads share it: 1 << 14 | 1 << 8 | 1 << 5 | 1 = 0x4121; EBX
 *   0x01C0003F; ECX 63. L1I 0x4122.
 * L2 512K 8-way: 1024 sets; 0x4143; EBX 7 << 22 | 63 = 0x01C0003F; ECX
 *   0x3FF; inclusive of the L1s: EDX[1].
 * L3 32M 16-way per CCX: 32768 sets; 16 IDs: 15 << 14 | 0x163 = 0x3C163;
 *   EBX 15 << 22 | 63 = 0x03C0003F; ECX 0x7FFF; EDX 0 (nine).
 * Subleaf 4 is the null one. */
static void test_epyc_8000001d(void **state)
{
    (void)state;
    CPUID_IS(0x8000001D, 0, 0x4121, 0x01C0003F, 63, 0);
    CPUID_IS(0x8000001D, 1, 0x4122, 0x01C0003F, 63, 0);
    CPUID_IS(0x8000001D, 2, 0x4143, 0x01C0003F, 0x3FF, 2);
    CPUID_IS(0x8000001D, 3, 0x3C163, 0x03C0003F, 0x7FFF, 0);
    CPUID_ZERO(0x8000001D, 4);
}

/* 0x8000001E on amd-epyc: EAX the APIC ID; EBX core ID within the package
 * (APIC ID bits 5:1) and threads per core - 1 = 1 [15:8]; ECX node ID (APIC
 * ID >> 4: socket and CCX) and 4 nodes a package - 1 = 3 [10:8].
 * cpu 37 = 0b0100101: core ID 0b10010 = 18, node 2.
 * cpu 100 = 0b1100100: core ID 0b10010 = 18 (CCX 2, core 2), node 6. */
static void test_epyc_8000001e(void **state)
{
    (void)state;
    CPUID_AT(0, 0x8000001E, 0, 0, 0x100, 0x300, 0);
    CPUID_AT(37, 0x8000001E, 0, 37, 0x112, 0x302, 0);
    CPUID_AT(100, 0x8000001E, 0, 100, 0x112, 0x306, 0);
    CPUID_AT(127, 0x8000001E, 0, 127, 0x11F, 0x307, 0);
}

/* ======================= layouts that leave gaps ======================= */

/* 2 sockets x 3 dies (3 domains) x 3 cores (3 modules) x 2 threads = 36
 * CPUs: thread 1, core 2, die 2 bits; die field at bit 3, package at 5.
 * cpu 7: thread 1, core 7 / 2 % 3 = 0, die 7 / 6 % 3 = 1: 1 << 3 | 1 = 9.
 * cpu 18: socket 1: 32. cpu 35: thread 1, core 17 % 3 = 2, die 5 % 3 = 2,
 * socket 1: 32 | 2 << 3 | 2 << 1 | 1 = 53. */
static const unsigned gappy[6] = {2, 1, 3, 3, 1, 2};

static void test_gaps_intel(void **state)
{
    (void)state;
    boot_tiny("intel", gappy, "", "core", "");
    APIC_IS(0, 0);
    APIC_IS(7, 9);
    APIC_IS(18, 32);
    APIC_IS(35, 53);
    /* Leaf 1 EBX: 1 << 5 = 32 IDs, CLFLUSH 8, APIC ID 53 = 0x35. */
    CPUID_AT(35, 0x1, 0, 0x000606A6, 0x35200800, 0, 0x10080000);
    /* 1FH with a die level: SMT shift 1, 2; core shift 3, 6 CPUs a die; die
     * (type 5) shift 5, 18 CPUs a package; then invalid. */
    CPUID_AT(35, 0x1F, 0, 1, 2, 0x100, 53);
    CPUID_AT(35, 0x1F, 1, 3, 6, 0x201, 53);
    CPUID_AT(35, 0x1F, 2, 5, 18, 0x502, 53);
    CPUID_AT(35, 0x1F, 3, 0, 0, 0x003, 53);
    /* 0BH has no die level: its core level shifts to the package and
     * counts a die's CPUs, as QEMU 7.2 answers. */
    CPUID_AT(35, 0xB, 0, 1, 2, 0x100, 53);
    CPUID_AT(35, 0xB, 1, 5, 6, 0x201, 53);
    CPUID_AT(35, 0xB, 2, 0, 0, 0x002, 53);
    /* Leaf 4: EAX[31:26] = (1 << (2 + 2)) - 1 = 15. L1D 2K 4-way: 8 sets,
     * shared by 2 IDs: 15 << 26 | 1 << 14 | 0x121 = 0x3C004121; EBX 3 << 22 |
     * 63 = 0x00C0003F. L3 32K 8-way: 64 sets, shared by 1 << 3 IDs:
     * 15 << 26 | 7 << 14 | 0x163 = 0x3C01C163; EBX 7 << 22 | 63. */
    CPUID_AT(35, 0x4, 0, 0x3C004121, 0x00C0003F, 7, 0);
    CPUID_AT(35, 0x4, 3, 0x3C01C163, 0x01C0003F, 63, 0);
}

/* The same machine from AMD: 0x80000008 NC 17 (18 CPUs a package),
 * ApicIdSize 5; 0x8000001E of cpu 35 (APIC ID 53): core ID (53 & 31) >> 1 =
 * 10 (die 2, core 2), 2 threads; node ID 53 >> 3 = 6, 3 nodes - 1 = 2;
 * 0x8000001D's L3 shared by 1 << 3 IDs: 7 << 14 | 0x163 = 0x1C163. */
static void test_gaps_amd(void **state)
{
    (void)state;
    boot_tiny("amd", gappy, "", "core", "");
    CPUID_IS(0x80000008, 0, 0, 0, 0x5011, 0);
    CPUID_AT(35, 0x8000001E, 0, 53, 0x10A, 0x206, 0);
    CPUID_AT(35, 0x8000001D, 3, 0x1C163, 0x01C0003F, 63, 0);
    /* Leaf 1 EBX: 32 IDs; 0x80000001 ECX: TopologyExtensions and
     * CmpLegacy. */
    CPUID_AT(35, 0x1, 0, 0x00A00F11, 0x35200800, 0, 0x10080000);
    CPUID_IS(0x80000001, 0, 0x00A00F11, 0, 0x00400002, 0);
}

/* One CPU: no HTT, 1 ID in the package, no CmpLegacy, APIC ID 0, and the
 * leaves' counts are all 1. */
static void test_single_cpu(void **state)
{
    (void)state;
    static const unsigned one[6] = {1, 1, 1, 1, 1, 1};
    boot_tiny("intel", one, "", "core", "");
    CPUID_IS(0x1, 0, 0x000606A6, 0x00010800, 0, 0x00080000);
    CPUID_IS(0xB, 0, 0, 1, 0x100, 0);
    CPUID_IS(0xB, 1, 0, 1, 0x201, 0);
    CPUID_IS(0x4, 0, 0x121, 0x00C0003F, 7, 0);
    boot_tiny("amd", one, "", "core", "");
    CPUID_IS(0x80000001, 0, 0x00A00F11, 0, 0x00400000, 0);
    CPUID_ZERO(0x80000008, 0);
    CPUID_IS(0x8000001E, 0, 0, 0, 0, 0);
}

/* An L2 shared by a module of 2 cores (Bulldozer-like, 1 thread): leaf 4's
 * L2 is shared by 1 << 1 IDs (1 << 14 | 0x143); 0x8000001D's too; an
 * inclusive L2 says so in EDX[1]. */
static void test_module_l2(void **state)
{
    (void)state;
    static const unsigned mod[6] = {1, 1, 1, 4, 2, 1};
    boot_tiny("intel", mod, "", "module", "");
    /* EAX[31:26]: 8 cores, (1 << 3) - 1 = 7. L2 8K 4-way: 32 sets. */
    CPUID_IS(0x4, 2, 7u << 26 | 0x4143, 0x00C0003F, 31, 0);
    boot_text("name: bd\n"
              "vendor: amd\n"
              "topology: {sockets: 1, modules: 4, cores: 2}\n"
              "core: {frequency: 1GHz, cpi: 1}\n"
              "caches:\n"
              "  L1I: {size: 1K, ways: 2, latency: 2}\n"
              "  L1D: {size: 2K, ways: 4, latency: 2}\n"
              "  L2: {size: 8K, ways: 4, latency: 10, shared_by: module, inclusion: inclusive}\n"
              "memory: {channels: 1, peak: 10GB/s, latency: 100ns}\n");
    CPUID_IS(0x8000001D, 2, 0x4143, 0x00C0003F, 31, 2);
    /* No L3: the L2 is the last subleaf, and 0x80000006 EDX is 0. L2 8 KiB,
     * 4 ways = code 4: 0x00084140. */
    CPUID_ZERO(0x8000001D, 3);
    CPUID_IS(0x80000006, 0, 0, 0, 0x00084140, 0);
}

/* ======================= the APIC ID layout ======================= */

static unsigned width(unsigned n)
{
    unsigned b = 0;
    while ((1u << b) < n)
        b++;
    return b;
}

/* Every CPU's APIC ID is QEMU 7.2's for cpu index i, with the counts and
 * widths worked out here from the profile's topology. */
static void apic_ids_are_qemus(void)
{
    const struct plat_topo *t = &M.p.topo;
    unsigned T = t->threads, C = t->modules * t->cores, D = t->nodes * t->domains;
    unsigned tb = width(T), cb = width(C), db = width(D);
    for (unsigned i = 0; i < M.ncpu; i++) {
        unsigned thread = i % T, core = i / T % C, die = i / (T * C) % D, socket = i / (T * C * D);
        uint32_t want = ((socket << db | die) << cb | core) << tb | thread;
        APIC_IS(i, want);
        /* The ID leaf 1 and 0BH report, and 0x8000001E on AMD. */
        assert_int_equal(reg(i, 0x1, 0, EBX) >> 24, want & 0xff);
        if (X.amd)
            assert_int_equal(reg(i, 0x8000001E, 0, EAX), want);
        else
            assert_int_equal(reg(i, 0xB, 0, EDX), want);
    }
}

static void test_apic_ids_qemu_order(void **state)
{
    (void)state;
    static const char *const shipped[] = {"intel-xeon", "intel-atom", "amd-epyc", "amd-lwp"};
    for (unsigned k = 0; k < 4; k++) {
        boot(shipped[k]);
        apic_ids_are_qemus();
    }
    static const unsigned shapes[][6] = {
        {2, 1, 3, 3, 1, 2}, {1, 2, 2, 3, 1, 1}, {3, 1, 1, 5, 1, 3},
        {2, 2, 1, 1, 3, 2}, {1, 1, 5, 1, 1, 1}, {2, 1, 1, 3, 4, 1},
    };
    for (unsigned k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        boot_tiny(k % 2 ? "amd" : "intel", shapes[k], "", "core", "");
        apic_ids_are_qemus();
    }
}

/* ======================= the CPU signature ======================= */

/* Signature EAX of a profile with these core keys. */
static uint32_t sig_of(const char *vendor, const char *core)
{
    static const unsigned one[6] = {1, 1, 1, 1, 1, 1};
    boot_tiny(vendor, one, core, "core", "");
    return reg(0, 0x1, 0, EAX);
}

/* CPUID 1 EAX: stepping [3:0], model [7:4], family [11:8], extended model
 * [19:16], extended family [27:20]. */
static void test_signature_encoding(void **state)
{
    (void)state;
    /* The vendors' defaults: Intel 6/0x6A/6, AMD 0x19/0x01/1. */
    assert_int_equal(sig_of("intel", ""), 0x000606A6);
    assert_int_equal(sig_of("amd", ""), 0x00A00F11);
    /* Skylake-SP 6/0x55/4: extended model 5, model 5. */
    assert_int_equal(sig_of("intel", ", family: 6, model: 0x55, stepping: 4"), 0x00050654);
    /* Pentium MMX 5/4/3: no extended fields. */
    assert_int_equal(sig_of("intel", ", family: 5, model: 4, stepping: 3"), 0x00000543);
    /* Pentium 4 0xF/2/9: family 0xF, extended family 0. */
    assert_int_equal(sig_of("intel", ", family: 0xF, model: 2, stepping: 9"), 0x00000F29);
    /* Zen 2 0x17/0x31/0: extended family 8, extended model 3. */
    assert_int_equal(sig_of("amd", ", family: 0x17, model: 0x31, stepping: 0"), 0x00830F10);
    /* Bulldozer 0x15/1/2, as amd-lwp reports it, here and in 0x80000001. */
    assert_int_equal(sig_of("amd", ", family: 0x15, model: 1, stepping: 2"), 0x00600F12);
    assert_int_equal(reg(0, 0x80000001, 0, EAX), 0x00600F12);
    /* The largest: 0xF + 0xFF, 0xFF, 0xF. */
    assert_int_equal(sig_of("amd", ", family: 0x10E, model: 0xFF, stepping: 0xF"), 0x0FFF0FFF);
    /* A key left out keeps its vendor's default. */
    assert_int_equal(sig_of("intel", ", model: 0x8F"), 0x000806F6);
    assert_int_equal(sig_of("amd", ", stepping: 0"), 0x00A00F10);
    /* Decimal works as well as hex. */
    assert_int_equal(sig_of("intel", ", family: 6, model: 106, stepping: 6"), 0x000606A6);
    /* The shipped profiles: amd-lwp. */
    boot("amd-lwp");
    assert_int_equal(reg(0, 0x1, 0, EAX), 0x00600F12);
}

/* A profile whose signature software cannot read is refused at its line. */
static void refused(const char *vendor, const char *core, const char *want)
{
    static const unsigned one[6] = {1, 1, 1, 1, 1, 1};
    char text[2048];
    tiny_text(text, sizeof text, vendor, one, core, "core", "");
    struct plat p;
    struct err e = {0};
    if (!load_text(&p, text, &e))
        fail_msg("core {%s} on %s accepted", core, vendor);
    assert_string_equal(e.msg, want);
}

static void test_signature_checks(void **state)
{
    (void)state;
    refused("intel", ", family: 0x10F", "test.yaml:4: core.family: 0x10F is out of range (1..270)");
    refused("intel", ", family: 0", "test.yaml:4: core.family: 0 is out of range (1..270)");
    refused("amd", ", model: 0x100", "test.yaml:4: core.model: 0x100 is out of range (0..255)");
    refused("intel", ", stepping: 16", "test.yaml:4: core.stepping: 16 is out of range (0..15)");
    /* A model above 0xF with a family whose extended model nobody reads:
     * the model given, or the family when the model is the default. */
    refused("intel", ", family: 5",
            "test.yaml:4: core.family: model 0x6A needs CPUID 1's extended model field, which "
            "software reads only for family 6 and 0xF and up; family is 0x5");
    refused("amd", ", family: 6, model: 0x10",
            "test.yaml:4: core.model: model 0x10 needs CPUID 1's extended model field, which "
            "software reads only for family 0xF and up; family is 0x6");
    refused("riscv", ", model: 3",
            "test.yaml:4: core.model: a CPU signature is x86's (CPUID 1); this is a riscv "
            "profile");
    /* AMD family 6 with a low model is fine (an Athlon). */
    assert_int_equal(sig_of("amd", ", family: 6, model: 8, stepping: 1"), 0x00000681);
}

/* x86 groups a cache's CPUs by APIC ID bits, so a module's cores sharing
 * an L2 must be a power of two; RISC-V has no such rule. */
static void test_module_cores_pow2(void **state)
{
    (void)state;
    static const unsigned three[6] = {1, 1, 1, 2, 3, 1};
    char text[2048];
    struct plat p;
    struct err e = {0};
    tiny_text(text, sizeof text, "intel", three, "", "module", "");
    assert_int_not_equal(load_text(&p, text, &e), 0);
    assert_string_equal(e.msg, "test.yaml:3: topology.cores: 3 cores per module cannot share an "
                               "L2 that CPUID describes (x86 groups the CPUs of a cache by APIC "
                               "ID bits: a module needs a power-of-two number of cores)");
    tiny_text(text, sizeof text, "amd", three, "", "module", "");
    assert_int_not_equal(load_text(&p, text, &e), 0);
    /* Per core, any count does. */
    tiny_text(text, sizeof text, "intel", three, "", "core", "");
    assert_int_equal(load_text(&p, text, &e), 0);
    tiny_text(text, sizeof text, "riscv", three, "", "module", "");
    assert_int_equal(load_text(&p, text, &e), 0);
}

/* ======================= what Linux finds ======================= */

/* get_count_order: the smallest b with 1 << b >= n. */
static unsigned count_order(unsigned n)
{
    return width(n);
}

/* Whether the CPUs fall into the same groups by two labellings. */
static void same_partition(const unsigned *a, const unsigned *b, unsigned n, const char *what)
{
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            if ((a[i] == a[j]) != (b[i] == b[j]))
                fail_msg("%s: cpus %u and %u: CPUID says %s, the machine %s", what, i, j,
                         a[i] == a[j] ? "together" : "apart", b[i] == b[j] ? "together" : "apart");
}

/* Linux 6.1's reading (arch/x86/kernel/cpu: cacheinfo.c, topology.c,
 * amd.c): a cache's ID is the APIC ID shifted right by get_count_order of
 * the CPUs sharing it (leaf 4, or 0x8000001D with TopologyExtensions); the
 * package is the APIC ID shifted by the last valid level of 1FH/0BH on
 * Intel, by 0x80000008's ApicIdSize on AMD. Each must group the CPUs as the
 * machine does: L3 domains, L2 instances, sockets. */
static void linux_groups(void)
{
    unsigned n = M.ncpu, l3[1024], l2[1024], pkg[1024], m3[1024], m2[1024], ms[1024];
    uint32_t cleaf = X.amd ? 0x8000001D : 0x4;
    for (unsigned c = 0; c < n; c++) {
        uint32_t id = reg(c, 0x1, 0, EBX) >> 24, sub, type;
        if (!X.amd)
            id = reg(c, 0xB, 0, EDX);
        for (sub = 0; (type = reg(c, cleaf, sub, EAX) & 0x1f); sub++) {
            unsigned level = reg(c, cleaf, sub, EAX) >> 5 & 7;
            unsigned sharing = (reg(c, cleaf, sub, EAX) >> 14 & 0xfff) + 1;
            if (level == 2)
                l2[c] = id >> count_order(sharing);
            if (level == 3)
                l3[c] = id >> count_order(sharing);
        }
        if (X.amd) {
            pkg[c] = id >> (reg(c, 0x80000008, 0, ECX) >> 12 & 0xf);
        } else {
            unsigned shift = 0;
            for (sub = 0; reg(c, 0x1F, sub, ECX) >> 8 & 0xff; sub++)
                shift = reg(c, 0x1F, sub, EAX) & 0x1f;
            pkg[c] = id >> shift;
        }
        m3[c] = M.cpu[c].domain;
        m2[c] = M.cpu[c].l2->inst;
        ms[c] = M.cpu[c].node / M.p.topo.nodes;
    }
    if (M.p.cache[PLAT_L3].present)
        same_partition(l3, m3, n, "L3");
    same_partition(l2, m2, n, "L2");
    same_partition(pkg, ms, n, "package");
}

static void test_linux_groups(void **state)
{
    (void)state;
    static const char *const shipped[] = {"intel-xeon", "intel-atom", "amd-epyc", "amd-lwp"};
    for (unsigned k = 0; k < 4; k++) {
        boot(shipped[k]);
        linux_groups();
    }
    static const unsigned shapes[][6] = {
        {2, 1, 3, 3, 1, 2}, {1, 2, 2, 3, 1, 1}, {2, 1, 1, 3, 4, 2}};
    for (unsigned k = 0; k < 3; k++)
        for (unsigned v = 0; v < 2; v++) {
            boot_tiny(v ? "amd" : "intel", shapes[k], "", k == 2 ? "module" : "core", "");
            linux_groups();
        }
}

/* resctrl's max_threshold_occupancy: x86_cache_size (KiB) x 1024 / the
 * RMIDs, rounded down to the occupancy scale. Linux takes x86_cache_size
 * from leaf 4's last level on Intel (init_intel_cacheinfo: the L3) and from
 * 0x80000006 ECX[31:16] on AMD (cpu_detect_cache_sizes: the L2). intel-xeon:
 * 11264 KiB x 1024 / 176 = 65536; amd-epyc: 512 KiB x 1024 / 256 = 2048. */
static unsigned threshold(void)
{
    unsigned kib = 0;
    if (X.amd) {
        kib = reg(0, 0x80000006, 0, ECX) >> 16;
    } else {
        for (uint32_t sub = 0; reg(0, 0x4, sub, EAX) & 0x1f; sub++) {
            uint32_t b = reg(0, 0x4, sub, EBX);
            uint64_t size = (uint64_t)((b >> 22) + 1) * ((b >> 12 & 0x3ff) + 1) *
                            ((b & 0xfff) + 1) * (reg(0, 0x4, sub, ECX) + 1);
            kib = (unsigned)(size / 1024); /* the last level wins */
        }
    }
    unsigned rmids = reg(0, 0xF, 1, ECX) + 1, scale = reg(0, 0xF, 1, EBX);
    return kib * 1024 / rmids / scale * scale;
}

static void test_linux_threshold(void **state)
{
    (void)state;
    boot("intel-xeon");
    assert_int_equal(threshold(), 65536);
    boot("amd-epyc");
    assert_int_equal(threshold(), 2048);
}

/* ======================= IA32_MBA_CFG ======================= */

static const unsigned two_sockets[6] = {2, 1, 1, 2, 1, 2};

/* Intel MBA with these bandwidth keys. */
static void boot_mba(const char *bw)
{
    char tail[256];
    snprintf(tail, sizeof tail, "qos:\n  bandwidth: {kind: delay, max: 90, granularity: 10%s}\n",
             bw);
    boot_tiny("intel", two_sockets, "", "core", tail);
}

/* intel-xeon has 8 MBA classes: pqos sees MBA 1.0 and the register is not
 * there (rdmsr and wrmsr #GP, as for any MSR the platform lacks). */
static void test_mba_cfg_absent(void **state)
{
    (void)state;
    MBA_GP(0);
    boot("intel-atom"); /* no MBA at all */
    MBA_GP(0);
    boot("amd-epyc");
    MBA_GP(0);
    boot_mba(", classes: 16, min_max: false");
    MBA_GP(0);
}

/* More than 8 classes bring it: reset 0, MIN_DELAY [0] and LEGACY [1]
 * read back, every other bit #GP and leaves it as it was; one register per
 * package (CPUs 0-3 socket 0, 4-7 socket 1); x86_reset clears it. */
static void test_mba_cfg_register(void **state)
{
    (void)state;
    boot_mba(", classes: 16");
    for (unsigned c = 0; c < 8; c++)
        MBA_IS(c, 0);
    MBA_WR(1, 1, HW_OK);
    MBA_IS(0, 1);
    MBA_IS(3, 1);
    MBA_IS(4, 0);
    MBA_WR(5, 2, HW_OK);
    MBA_IS(7, 2);
    MBA_WR(5, 3, HW_OK);
    MBA_IS(4, 3);
    for (unsigned b = 2; b < 64; b++) {
        MBA_WR(0, 1ull << b, HW_GP);
        MBA_WR(0, 1ull << b | 1, HW_GP);
    }
    MBA_IS(0, 1);
    MBA_WR(0, 0, HW_OK);
    MBA_IS(2, 0);
    MBA_IS(6, 3);
    x86_reset(&X);
    MBA_IS(6, 0);
    /* No CPUID bit names it: leaf 10H.3 is what it was (16 classes, max
     * throttle 90, no per-thread control in ECX[0]). */
    CPUID_IS(0x10, 3, 89, 0, 0, 15);
}

/* The key: min_max: true brings it with 8 classes; on AMD the profile is
 * refused at its line. */
static void test_mba_cfg_key(void **state)
{
    (void)state;
    boot_mba(", classes: 8, min_max: true");
    MBA_IS(0, 0);
    MBA_WR(0, 1, HW_OK);
    boot_mba(", classes: 9");
    MBA_IS(0, 0);
    char text[2048];
    tiny_text(text, sizeof text, "amd", two_sockets, "", "core",
              "qos:\n  bandwidth: {kind: delay, classes: 4, max: 90, min_max: true}\n");
    struct plat p;
    struct err e = {0};
    assert_int_not_equal(load_text(&p, text, &e), 0);
    assert_string_equal(e.msg, "test.yaml:12: qos.bandwidth.min_max: IA32_MBA_CFG is Intel's; "
                               "this is an amd profile");
    /* Another kind's key is unknown. */
    tiny_text(text, sizeof text, "amd", two_sockets, "", "core",
              "qos:\n  bandwidth: {kind: rate, classes: 4, max: 11, min_max: true}\n");
    assert_int_not_equal(load_text(&p, text, &e), 0);
    assert_substr(e.msg, "qos.bandwidth.min_max: unknown key");
}

/* How a package's cores share their MBA throttle: the largest of their
 * threads' delays at reset (Linux's thread_throttle_mode "max"), the
 * smallest once MIN_DELAY is set (pqos: "Min MBA delay enabled"), per
 * package; LEGACY changes nothing here. Per-thread controls (MBA 3.0):
 * CPUID.10H.3 ECX[0], each thread its own delay, and no IA32_MBA_CFG. */
static void test_mba_throttle_mode(void **state)
{
    (void)state;
    boot_mba(", classes: 16");
    unsigned d0 = M.cpu[0].domain, d1 = M.cpu[4].domain;
    assert_int_not_equal(d0, d1);
    assert_int_equal(M.thr[d0], MACH_THR_CORE_MAX);
    assert_int_equal(M.thr[d1], MACH_THR_CORE_MAX);
    MBA_WR(1, 1, HW_OK);
    assert_int_equal(M.thr[d0], MACH_THR_CORE_MIN);
    assert_int_equal(M.thr[d1], MACH_THR_CORE_MAX);
    MBA_WR(5, 2, HW_OK); /* LEGACY alone */
    assert_int_equal(M.thr[d1], MACH_THR_CORE_MAX);
    MBA_WR(5, 3, HW_OK);
    assert_int_equal(M.thr[d1], MACH_THR_CORE_MIN);
    MBA_WR(0, 0, HW_OK);
    assert_int_equal(M.thr[d0], MACH_THR_CORE_MAX);
    MBA_WR(0, 4, HW_GP); /* refused: the mode stays */
    assert_int_equal(M.thr[d0], MACH_THR_CORE_MAX);
    x86_reset(&X);
    assert_int_equal(M.thr[d1], MACH_THR_CORE_MAX);
    /* 8 classes, MBA 1.0: no register, the core-wide largest delay. */
    boot_mba(", classes: 8");
    assert_int_equal(M.thr[d0], MACH_THR_CORE_MAX);
    /* Per-thread controls. */
    boot_mba(", classes: 16, per_thread: true");
    CPUID_IS(0x10, 3, 89, 0, 1, 15);
    MBA_GP(0);
    assert_int_equal(M.thr[d0], MACH_THR_THREAD);
    x86_reset(&X);
    assert_int_equal(M.thr[d0], MACH_THR_THREAD);
    char text[2048];
    struct plat p;
    struct err e = {0};
    tiny_text(text, sizeof text, "intel", two_sockets, "", "core",
              "qos:\n  bandwidth: {kind: delay, classes: 16, max: 90, per_thread: true, "
              "min_max: true}\n");
    assert_int_not_equal(load_text(&p, text, &e), 0);
    assert_string_equal(e.msg, "test.yaml:12: qos.bandwidth.min_max: per-thread MBA (MBA 3.0) "
                               "has no core-wide min/max choice for IA32_MBA_CFG to make");
    tiny_text(text, sizeof text, "amd", two_sockets, "", "core",
              "qos:\n  bandwidth: {kind: delay, classes: 4, max: 90, per_thread: true}\n");
    assert_int_not_equal(load_text(&p, text, &e), 0);
    assert_string_equal(e.msg, "test.yaml:12: qos.bandwidth.per_thread: per-thread MBA is "
                               "Intel's (CPUID.10H.3 ECX[0]); this is an amd profile");
}

#define XEON(t) cmocka_unit_test_setup_teardown(t, setup_xeon, teardown)
#define ATOM(t) cmocka_unit_test_setup_teardown(t, setup_atom, teardown)
#define EPYC(t) cmocka_unit_test_setup_teardown(t, setup_epyc, teardown)
/* intel-xeon-spr: 15 MBA classes (COS_MAX 14 in 0x10.3 EDX), max throttle
 * 90 (EAX 89), linear (ECX[2]) and no per-thread controls, so IA32_MBA_CFG
 * is there, per package; 16 L3 classes of 15 bits with DDIO's two ways
 * shareable (0x10.1: EAX CBM length - 1, EBX 0x6000, ECX CDP [2], EDX 15);
 * contiguous masks only (ECX[3] clear: 0x101 is #GP). */
static void test_spr(void **state)
{
    (void)state;
    boot("intel-xeon-spr");
    CPUID_IS(0x10, 3, 89, 0, 4, 14);
    CPUID_IS(0x10, 1, 14, 0x6000, 4, 15);
    MBA_IS(0, 0);
    MBA_WR(0, 1, HW_OK);
    unsigned d0 = M.cpu[0].domain, d1 = M.cpu[64].domain;
    assert_int_equal(M.thr[d0], MACH_THR_CORE_MIN);
    assert_int_equal(M.thr[d1], MACH_THR_CORE_MAX); /* the other package's */
    uint64_t v;
    assert_int_equal(x86_wrmsr(&X, 0, 0xD50 + 14, 90), HW_OK);
    assert_int_equal(x86_wrmsr(&X, 0, 0xD50 + 15, 0), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, 0xC90 + 15, 0x7fff), HW_OK);
    assert_int_equal(x86_wrmsr(&X, 0, 0xC90 + 15, 0x101), HW_GP);
    assert_int_equal(x86_rdmsr(&X, 0, 0xC90 + 15, &v), HW_OK);
    assert_int_equal(v, 0x7fff);
}

#define NONE(t) cmocka_unit_test_setup_teardown(t, setup_none, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        XEON(test_xeon_basic),
        XEON(test_xeon_leaf4),
        XEON(test_xeon_topology_leaves),
        XEON(test_xeon_extended),
        ATOM(test_atom_basic),
        ATOM(test_atom_leaf4),
        ATOM(test_atom_topology_and_extended),
        EPYC(test_epyc_basic),
        EPYC(test_epyc_extended),
        EPYC(test_epyc_8000001d),
        EPYC(test_epyc_8000001e),
        NONE(test_gaps_intel),
        NONE(test_gaps_amd),
        NONE(test_single_cpu),
        NONE(test_module_l2),
        NONE(test_apic_ids_qemu_order),
        NONE(test_signature_encoding),
        NONE(test_signature_checks),
        NONE(test_module_cores_pow2),
        NONE(test_linux_groups),
        NONE(test_linux_threshold),
        XEON(test_mba_cfg_absent),
        NONE(test_mba_cfg_register),
        NONE(test_mba_cfg_key),
        NONE(test_mba_throttle_mode),
        NONE(test_spr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
