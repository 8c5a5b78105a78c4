/* Unit tests for sim/trace/x86br.c, the x86-64 branch classifier. Every
 * case is bytes written down by hand with the instruction as GNU as and
 * objdump -d write it (AT&T syntax), checked with them when the case was
 * written: the test itself needs neither. The bytes of encodings binutils
 * 2.40 does not know (APX REX2 and JMPABS, FRED's ERETU and ERETS) follow
 * their specifications and say so. tests/e2e/test_x86br.sh compares the
 * classifier with objdump on whole binaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/trace/trace.h"
#include "sim/trace/x86br.h"

#define BR(kind) ((uint8_t)(TREC_F_BRANCH | TREC_F_BR(kind)))
#define NONE     0
#define COND     BR(TREC_BR_COND)
#define JMP      ((uint8_t)(BR(TREC_BR_JMP) | TREC_F_DIRECT | TREC_F_TAKEN))
#define JMP_IND  BR(TREC_BR_JMP_IND)
#define CALL     BR(TREC_BR_CALL)
#define CALL_IND BR(TREC_BR_CALL_IND)
#define RET      BR(TREC_BR_RET)
#define OTHER    BR(TREC_BR_OTHER)

struct tcase {
    const char *as; /* the instruction, as objdump prints it */
    const uint8_t *b;
    size_t len;
    uint8_t want;
};
#define C(want, as, ...)                                                                           \
    {                                                                                              \
        as, (const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}), want           \
    }

/* The flags of exactly len bytes on the heap, so that the sanitizer build
 * catches a read past the instruction. */
static uint8_t flags_of(const uint8_t *b, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    if (len)
        memcpy(p, b, len);
    uint8_t f = x86br_flags(p, len);
    free(p);
    return f;
}

static void check(const struct tcase *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t got = flags_of(t[i].b, t[i].len);
        if (got != t[i].want)
            fail_msg("%s (%zu bytes): flags %#04x, want %#04x", t[i].as, t[i].len, got, t[i].want);
    }
}
#define CHECK(cases) check(cases, sizeof cases / sizeof cases[0])

static void test_cond(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(COND, "jo .", 0x70, 0xfe),
        C(COND, "je .", 0x74, 0xfe),
        C(COND, "jg .", 0x7f, 0xfe),
        C(COND, "jo rel32", 0x0f, 0x80, 0x37, 0x01, 0x00, 0x00),
        C(COND, "jne rel32", 0x0f, 0x85, 0x00, 0x00, 0x00, 0x00),
        C(COND, "jg rel32", 0x0f, 0x8f, 0x31, 0x01, 0x00, 0x00),
        /* Branch hints (SDM 2.1.1: 2E not taken, 3E taken) */
        C(COND, "je,pt .", 0x3e, 0x74, 0xd1),
        C(COND, "je,pn .", 0x2e, 0x74, 0xce),
        C(COND, "je,pt rel32", 0x3e, 0x0f, 0x84, 0x00, 0x00, 0x00, 0x00),
        C(COND, "rex.W jne rel32", 0x48, 0x0f, 0x85, 0x24, 0x01, 0x00, 0x00),
        /* 66: objdump (AMD's reading) decodes "data16 je" and a rel16 Jcc;
         * Intel ignores 66 and keeps rel32 in 64-bit mode. Conditional
         * either way. */
        C(COND, "data16 je .", 0x66, 0x74, 0x00),
        C(COND, "je rel16 (AMD) / rel32 (Intel)", 0x66, 0x0f, 0x84, 0x00, 0x00, 0x00, 0x00),
        C(COND, "je rel16 (AMD)", 0x66, 0x0f, 0x84, 0x00, 0x00),
        C(COND, "loopne .", 0xe0, 0xc5),
        C(COND, "loope .", 0xe1, 0xc3),
        C(COND, "loop .", 0xe2, 0xc1),
        C(COND, "jrcxz .", 0xe3, 0xbf),
        C(COND, "jecxz .", 0x67, 0xe3, 0xbc),
    };
    CHECK(t);
    /* All sixteen conditions, both forms. */
    for (unsigned cc = 0; cc < 16; cc++) {
        uint8_t s[] = {(uint8_t)(0x70 + cc), 0x00};
        uint8_t l[] = {0x0f, (uint8_t)(0x80 + cc), 0x00, 0x00, 0x00, 0x00};
        assert_int_equal(flags_of(s, sizeof s), COND);
        assert_int_equal(flags_of(l, sizeof l), COND);
    }
}

static void test_direct(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(JMP, "jmp .", 0xeb, 0xba),
        C(JMP, "jmp rel32", 0xe9, 0x12, 0x01, 0x00, 0x00),
        C(JMP, "bnd jmp rel32", 0xf2, 0xe9, 0x0c, 0x01, 0x00, 0x00),
        C(JMP, "jmpw rel16 (AMD)", 0x66, 0xe9, 0x00, 0x00),
        C(CALL, "call rel32", 0xe8, 0x07, 0x01, 0x00, 0x00),
        C(CALL, "bnd call rel32", 0xf2, 0xe8, 0x01, 0x01, 0x00, 0x00),
        C(CALL, "callw rel16 (AMD) / call rel32 (Intel)", 0x66, 0xe8, 0x00, 0x00, 0x00, 0x00),
        C(CALL, "rex.W call rel32", 0x48, 0xe8, 0x00, 0x00, 0x00, 0x00),
    };
    CHECK(t);
    /* Only the unconditional direct jump is taken and direct by itself. */
    assert_int_equal(JMP & (TREC_F_TAKEN | TREC_F_DIRECT), TREC_F_TAKEN | TREC_F_DIRECT);
    assert_int_equal(CALL & (TREC_F_TAKEN | TREC_F_DIRECT), 0);
    assert_int_equal(TREC_BR(flags_of((const uint8_t[]){0xe9, 0, 0, 0, 0}, 5)), TREC_BR_JMP);
}

static void test_ret(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(RET, "ret", 0xc3),
        C(RET, "ret $0x8", 0xc2, 0x08, 0x00),
        C(RET, "lret", 0xcb),
        C(RET, "lret $0x8", 0xca, 0x08, 0x00),
        C(RET, "lretq", 0x48, 0xcb),
        C(RET, "retw", 0x66, 0xc3),
        C(RET, "repz ret", 0xf3, 0xc3),
        C(RET, "bnd ret", 0xf2, 0xc3),
    };
    CHECK(t);
}

/* FF /2 and /3 (calls), /4 and /5 (jumps), with every addressing form:
 * register, register indirect, SIB with and without base, displacements of
 * 8 and 32 bits, RIP-relative, segment override, REX, NOTRACK. */
static void test_indirect(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(CALL_IND, "call *%rax", 0xff, 0xd0),
        C(CALL_IND, "call *(%rax)", 0xff, 0x10),
        C(CALL_IND, "call *%r11", 0x41, 0xff, 0xd3),
        C(CALL_IND, "rex.W call *%rax", 0x48, 0xff, 0xd0),
        C(CALL_IND, "call *0x10(%rax,%rbx,4)", 0xff, 0x54, 0x98, 0x10),
        C(CALL_IND, "call *0x12345678(%rax,%rbx,4)", 0xff, 0x94, 0x98, 0x78, 0x56, 0x34, 0x12),
        C(CALL_IND, "call *0x12345678(,%rcx,8)", 0xff, 0x14, 0xcd, 0x78, 0x56, 0x34, 0x12),
        C(CALL_IND, "call *0x1000", 0xff, 0x14, 0x25, 0x00, 0x10, 0x00, 0x00),
        C(CALL_IND, "call *0x100(%rip)", 0xff, 0x15, 0x00, 0x01, 0x00, 0x00),
        C(CALL_IND, "call *%fs:0x10", 0x64, 0xff, 0x14, 0x25, 0x10, 0x00, 0x00, 0x00),
        C(CALL_IND, "notrack call *%rax", 0x3e, 0xff, 0xd0),
        C(CALL_IND, "notrack call *0x8(%rax,%rsi,8)", 0x3e, 0xff, 0x54, 0xf0, 0x08),
        C(CALL_IND, "lcall *(%rax)", 0xff, 0x18),
        C(CALL_IND, "rex.W lcall *0x8(%rsp)", 0x48, 0xff, 0x5c, 0x24, 0x08),
        C(JMP_IND, "jmp *%rax", 0xff, 0xe0),
        C(JMP_IND, "jmp *%r15", 0x41, 0xff, 0xe7),
        C(JMP_IND, "jmp *(%rax)", 0xff, 0x20),
        C(JMP_IND, "jmp *0x8(%rsp)", 0xff, 0x64, 0x24, 0x08),
        C(JMP_IND, "jmp *-0x80(%rbp)", 0xff, 0x65, 0x80),
        C(JMP_IND, "jmp *0x100(%rip)", 0xff, 0x25, 0x00, 0x01, 0x00, 0x00),
        C(JMP_IND, "notrack jmp *%rax", 0x3e, 0xff, 0xe0),
        C(JMP_IND, "notrack jmp *(%rax,%rdx,8)", 0x3e, 0xff, 0x24, 0xd0),
        C(JMP_IND, "bnd jmp *%rax", 0xf2, 0xff, 0xe0),
        C(JMP_IND, "ljmp *(%rax)", 0xff, 0x28),
        C(JMP_IND, "rex.W ljmp *(%rax)", 0x48, 0xff, 0x28),
        /* Every prefix there is, in an odd order, REX last. */
        C(CALL_IND, "fs lock data16 es ss gs addr32 rex.W call *%gs:(%eax)", 0x64, 0x67, 0xf0, 0x66,
          0x26, 0x36, 0x65, 0x48, 0xff, 0x10),
        /* A REX followed by another prefix is ignored (SDM 2.2.1): still a
         * call (objdump prints the lone "rex.W" as an instruction). */
        C(CALL_IND, "rex.W; data16 call *%rax", 0x48, 0x66, 0xff, 0xd0),
        C(CALL, "rex.W; callw rel16", 0x48, 0x66, 0xe8, 0x00, 0x00),
    };
    CHECK(t);
}

/* The whole of group 5, every ModRM byte: only /2-/5 branch, and the far
 * forms only with a memory operand (a register operand is #UD). */
static void test_group5(void **state)
{
    (void)state;
    for (unsigned m = 0; m < 256; m++) {
        unsigned reg = (m >> 3) & 7, mem = (m >> 6) != 3;
        uint8_t want = reg == 2   ? CALL_IND
                       : reg == 3 ? (mem ? CALL_IND : NONE)
                       : reg == 4 ? JMP_IND
                       : reg == 5 ? (mem ? JMP_IND : NONE)
                                  : NONE;
        /* Enough bytes for a SIB and a 32-bit displacement after the ModRM. */
        uint8_t b[] = {0xff, (uint8_t)m, 0x24, 0x00, 0x00, 0x00, 0x00};
        if (flags_of(b, sizeof b) != want)
            fail_msg("ff %02x: flags %#04x, want %#04x", m, flags_of(b, sizeof b), want);
        /* REX.R extends a register reg field, never an opcode extension. */
        uint8_t r[] = {0x4c, 0xff, (uint8_t)m, 0x24, 0x00, 0x00, 0x00, 0x00};
        assert_int_equal(flags_of(r, sizeof r), want);
    }
}

static void test_other(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(OTHER, "iret", 0xcf),
        C(OTHER, "iretq", 0x48, 0xcf),
        C(OTHER, "iretw", 0x66, 0xcf),
        C(OTHER, "uiret", 0xf3, 0x0f, 0x01, 0xec),
        /* Of F2 and F3 the later decides (QEMU's and objdump's reading);
         * 66 does not cancel F3. */
        C(OTHER, "repnz uiret", 0xf2, 0xf3, 0x0f, 0x01, 0xec),
        C(OTHER, "data16 uiret", 0xf3, 0x66, 0x0f, 0x01, 0xec),
        C(NONE, "repz repnz ... 0f 01 ec (F2 last: no UIRET)", 0xf3, 0xf2, 0x0f, 0x01, 0xec),
        C(NONE, "0f 01 ec without F3 (undefined)", 0x0f, 0x01, 0xec),
        C(NONE, "clac", 0x0f, 0x01, 0xca),
        C(NONE, "data16 clac", 0x66, 0x0f, 0x01, 0xca),
        /* Kernel-mode returns (see x86br.c). ERETU and ERETS: FRED
         * specification encodings, beyond binutils 2.40. */
        C(OTHER, "sysretl", 0x0f, 0x07),
        C(OTHER, "sysretq", 0x48, 0x0f, 0x07),
        C(OTHER, "sysexitl", 0x0f, 0x35),
        C(OTHER, "eretu", 0xf3, 0x0f, 0x01, 0xca),
        C(OTHER, "erets", 0xf2, 0x0f, 0x01, 0xca),
    };
    CHECK(t);
}

/* Instructions that share bytes with branches, and the traps and faults
 * that are not branches (x86br.h). */
static void test_not_branches(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(NONE, "incl (%rax)", 0xff, 0x00),
        C(NONE, "inc %rax", 0x48, 0xff, 0xc0),
        C(NONE, "decq (%rax)", 0x48, 0xff, 0x08),
        C(NONE, "push (%rax)", 0xff, 0x30),
        C(NONE, "push 0x100(%rip)", 0xff, 0x35, 0x00, 0x01, 0x00, 0x00),
        C(NONE, "(bad): ff /3 with a register, #UD", 0xff, 0xd8),
        C(NONE, "(bad): ff /5 with a register, #UD", 0xff, 0xe8),
        C(NONE, "(bad): ff /7, reserved", 0xff, 0xf8),
        C(NONE, "push %rax", 0x50),
        C(NONE, "int3", 0xcc),
        C(NONE, "int $0x80", 0xcd, 0x80),
        C(NONE, "int1", 0xf1),
        C(NONE, "(bad): into, invalid in 64-bit mode", 0xce),
        C(NONE, "syscall", 0x0f, 0x05),
        C(NONE, "sysenter", 0x0f, 0x34),
        C(NONE, "ud2", 0x0f, 0x0b),
        C(NONE, "ud1 %eax,%eax", 0x0f, 0xb9, 0xc0),
        C(NONE, "ud0 %eax,%eax", 0x0f, 0xff, 0xc0),
        C(NONE, "hlt", 0xf4),
        C(NONE, "(bad): ljmp ptr16:32, invalid in 64-bit mode", 0xea, 0, 0, 0, 0, 0, 0),
        C(NONE, "(bad): lcall ptr16:32, invalid in 64-bit mode", 0x9a, 0, 0, 0, 0, 0, 0),
        C(NONE, "xbegin rel32", 0xc7, 0xf8, 0x32, 0x00, 0x00, 0x00),
        C(NONE, "xabort $0x1", 0xc6, 0xf8, 0x01),
        C(NONE, "xend", 0x0f, 0x01, 0xd5),
        C(NONE, "enter $0x8,$0x0", 0xc8, 0x08, 0x00, 0x00),
        C(NONE, "leave", 0xc9),
        C(NONE, "nop", 0x90),
        C(NONE, "nopw (%rax,%rax,1)", 0x66, 0x0f, 0x1f, 0x04, 0x00),
        C(NONE, "in $0x10,%al", 0xe4, 0x10),
        C(NONE, "movabs 0x1122334455667788,%eax", 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22,
          0x11),
        C(NONE, "push $0x12345678", 0x68, 0x78, 0x56, 0x34, 0x12),
        C(NONE, "mov %eax,(%rax)", 0x89, 0x00),
        /* VEX, EVEX and XOP: payloads that look like branch opcodes. */
        C(NONE, "vpsubsb %xmm0,%xmm1,%xmm2 (c5 .. e8)", 0xc5, 0xf1, 0xe8, 0xd0),
        C(NONE, "{vex3} vpsubsb %xmm0,%xmm1,%xmm2 (c4 .. e8)", 0xc4, 0xe1, 0x71, 0xe8, 0xd0),
        C(NONE, "vpsubsw %xmm0,%xmm1,%xmm2 (c5 .. e9)", 0xc5, 0xf1, 0xe9, 0xd0),
        C(NONE, "vpshufd $0x1b,%xmm0,%xmm1 (c5 .. 70)", 0xc5, 0xf9, 0x70, 0xc8, 0x1b),
        C(NONE, "vpcmpeqb %ymm1,%ymm0,%ymm0 (c5 .. 74)", 0xc5, 0xfd, 0x74, 0xc1),
        C(NONE, "vpsubsb %zmm0,%zmm1,%zmm2 (62 .. e8)", 0x62, 0xf1, 0x75, 0x48, 0xe8, 0xd0),
        C(NONE, "vfrczps %xmm1,%xmm2 (8f .. 80)", 0x8f, 0xe9, 0x78, 0x80, 0xd1),
        C(NONE, "vpcmov %xmm1,%xmm2,%xmm3,%xmm4", 0x8f, 0xe8, 0x60, 0xa2, 0xe2, 0x10),
        C(NONE, "3-byte VEX with ff and e8 in its payload", 0xc4, 0xe8, 0xff, 0xe8, 0xd0),
    };
    CHECK(t);
}

/* APX REX2 (D5, payload M0 R4 X4 B4 W R3 X3 B3): encodings from the APX
 * specification, beyond binutils 2.40 and QEMU. */
static void test_rex2(void **state)
{
    (void)state;
    const struct tcase t[] = {
        C(CALL_IND, "call *%r16", 0xd5, 0x10, 0xff, 0xd0),
        C(CALL_IND, "call *(%r16,%r17,8)", 0xd5, 0x30, 0xff, 0x14, 0xc8),
        C(JMP_IND, "jmp *%r17", 0xd5, 0x10, 0xff, 0xe1),
        C(JMP_IND, "notrack jmp *%r31", 0x3e, 0xd5, 0x11, 0xff, 0xe7),
        C(NONE, "inc %r16", 0xd5, 0x18, 0xff, 0xc0),
        C(RET, "ret (REX2 ignored)", 0xd5, 0x00, 0xc3),
        C(JMP, "jmpabs $0x1122334455667788", 0xd5, 0x00, 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33,
          0x22, 0x11),
        C(JMP, "jmpabs, R/X/B bits ignored", 0xd5, 0x77, 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33,
          0x22, 0x11),
        C(NONE, "d5 08 a1: REX2.W=1, reserved", 0xd5, 0x08, 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44,
          0x33, 0x22, 0x11),
        C(NONE, "d5 00 74: Jcc under REX2, reserved", 0xd5, 0x00, 0x74, 0x00),
        C(NONE, "d5 00 e8: CALL under REX2, reserved", 0xd5, 0x00, 0xe8, 0x00, 0x00, 0x00, 0x00),
        C(NONE, "d5 00 eb: JMP under REX2, reserved", 0xd5, 0x00, 0xeb, 0x00),
        C(NONE, "d5 00 e2: LOOP under REX2, reserved", 0xd5, 0x00, 0xe2, 0x00),
        C(NONE, "d5 80 84: Jcc rel32 under REX2, reserved", 0xd5, 0x80, 0x84, 0x00, 0x00, 0x00,
          0x00),
        C(NONE, "d5 80 35: SYSEXIT under REX2, reserved", 0xd5, 0x80, 0x35),
        C(OTHER, "sysretq with REX2", 0xd5, 0x88, 0x07),
        C(NONE, "syscall with REX2", 0xd5, 0x80, 0x05),
        C(NONE, "d5 00 0f 84: no 0F escape after REX2", 0xd5, 0x00, 0x0f, 0x84, 0, 0, 0, 0),
    };
    CHECK(t);
}

/* No opcode outside the branch list is a branch, whatever follows it. */
static void test_no_spurious(void **state)
{
    (void)state;
    static const uint8_t pfx[] = {0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65, 0xf0};
    for (unsigned op = 0; op < 256; op++) {
        int skip = (op & 0xf0) == 0x40 || (op >= 0x70 && op <= 0x7f) ||
                   (op >= 0xe0 && op <= 0xe3) || op == 0xe8 || op == 0xe9 || op == 0xeb ||
                   op == 0xc2 || op == 0xc3 || op == 0xca || op == 0xcb || op == 0xcf ||
                   op == 0xff || op == 0x0f || op == 0xd5 || memchr(pfx, (int)op, sizeof pfx);
        for (unsigned m = 0; !skip && m < 256; m++) {
            uint8_t b[] = {(uint8_t)op, (uint8_t)m, 0xe8, 0xff, 0xd0, 0x0f, 0x84, 0xc3};
            if (flags_of(b, sizeof b))
                fail_msg("%02x %02x ...: flags %#04x, want 0", op, m, flags_of(b, sizeof b));
        }
        /* Map 1 (0F xx): only Jcc, SYSRET, SYSEXIT and group 7's returns. */
        int skip1 = (op >= 0x80 && op <= 0x8f) || op == 0x07 || op == 0x35;
        for (unsigned m = 0; !skip1 && m < 256; m++) {
            uint8_t b[] = {0xf3, 0x0f, (uint8_t)op, (uint8_t)m, 0xe8, 0x00, 0x00};
            uint8_t want = op == 0x01 && (m == 0xec || m == 0xca) ? OTHER : NONE;
            assert_int_equal(flags_of(b, sizeof b), want);
            assert_int_equal(flags_of(b + 1, sizeof b - 1), NONE);
        }
    }
}

/* Any prefixes, in any order and number, do not change a branch's class;
 * three deep over the eleven legacy prefixes and a REX. */
static void test_prefix_orders(void **state)
{
    (void)state;
    static const uint8_t pfx[] = {0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e,
                                  0x26, 0x36, 0x64, 0x65, 0xf0, 0x48};
    const struct tcase t[] = {
        C(COND, "je .", 0x74, 0x00),
        C(COND, "je rel32", 0x0f, 0x84, 0, 0, 0, 0),
        C(COND, "loop .", 0xe2, 0x00),
        C(JMP, "jmp rel32", 0xe9, 0, 0, 0, 0),
        C(CALL, "call rel32", 0xe8, 0, 0, 0, 0),
        C(RET, "ret", 0xc3),
        C(CALL_IND, "call *0x8(%rax,%rsi,8)", 0xff, 0x54, 0xf0, 0x08),
        C(JMP_IND, "jmp *%rax", 0xff, 0xe0),
        C(OTHER, "iretq", 0xcf),
        C(NONE, "inc %eax", 0xff, 0xc0),
        C(NONE, "syscall", 0x0f, 0x05),
    };
    const size_t np = sizeof pfx, nt = sizeof t / sizeof t[0];
    uint8_t b[16];
    for (size_t c = 0; c < nt; c++)
        for (size_t i = 0; i < np * np * np; i++) {
            b[0] = pfx[i % np];
            b[1] = pfx[i / np % np];
            b[2] = pfx[i / np / np];
            memcpy(b + 3, t[c].b, t[c].len);
            if (flags_of(b, 3 + t[c].len) != t[c].want)
                fail_msg("%02x %02x %02x + %s: flags %#04x, want %#04x", b[0], b[1], b[2], t[c].as,
                         flags_of(b, 3 + t[c].len), t[c].want);
        }
}

/* Short or truncated input never reads past len, and every answer is a
 * well-formed flags byte. Exhaustive to three bytes; the sanitizer build
 * catches a read past the heap block. */
static void test_bounds(void **state)
{
    (void)state;
    assert_int_equal(x86br_flags(NULL, 0), 0);
    const struct tcase t[] = {
        C(NONE, "0f (truncated)", 0x0f),
        C(NONE, "ff (truncated)", 0xff),
        C(NONE, "prefixes only", 0x66, 0xf2, 0x3e, 0x48),
        C(NONE, "d5 (truncated)", 0xd5),
        C(NONE, "d5 10 (truncated)", 0xd5, 0x10),
        C(NONE, "f3 0f 01 (truncated)", 0xf3, 0x0f, 0x01),
        C(NONE, "3e ff (truncated)", 0x3e, 0xff),
    };
    CHECK(t);
    uint8_t *p = malloc(3);
    assert_non_null(p);
    for (size_t len = 1; len <= 3; len++)
        for (uint32_t v = 0; v < (1u << (8 * len)); v++) {
            for (size_t k = 0; k < len; k++)
                p[3 - len + k] = (uint8_t)(v >> (8 * k));
            uint8_t f = x86br_flags(p + 3 - len, len);
            if (!f)
                continue;
            unsigned kind = TREC_BR(f);
            int direct = (f & (TREC_F_DIRECT | TREC_F_TAKEN)) != 0;
            if (!(f & TREC_F_BRANCH) || kind > TREC_BR_RET || direct != (kind == TREC_BR_JMP) ||
                (f & ~(TREC_F_BRANCH | TREC_F_TAKEN | TREC_F_DIRECT | TREC_BR_MASK)))
                fail_msg("%zu bytes %06x: malformed flags %#04x", len, (unsigned)v, f);
        }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cond),         cmocka_unit_test(test_direct),
        cmocka_unit_test(test_ret),          cmocka_unit_test(test_indirect),
        cmocka_unit_test(test_group5),       cmocka_unit_test(test_other),
        cmocka_unit_test(test_not_branches), cmocka_unit_test(test_rex2),
        cmocka_unit_test(test_no_spurious),  cmocka_unit_test(test_prefix_orders),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
