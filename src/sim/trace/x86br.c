/* Branch classification of one x86-64 instruction (x86br.h).
 *
 * Sources: Intel SDM vol. 2A, 2.1.1 "Instruction Prefixes" and 2.2.1 "REX
 * Prefixes"; vol. 2D, Appendix A, Table A-2 "One-byte Opcode Map", Table
 * A-3 "Two-byte Opcode Map" and Table A-6 "Opcode Extensions for One- and
 * Two-byte Opcodes by Group Number"; the instruction pages of vol. 2 cited
 * by name below; AMD APM vol. 3, Appendix A "Opcode and Operand Encodings";
 * the Intel APX Architecture Specification for REX2 and JMPABS.
 *
 * Choices where the manuals leave one:
 * - Encodings that raise #UD are not branches (they never retire): FF /3
 *   and FF /5 with a register operand (a far pointer must be in memory),
 *   EA and 9A (far JMP/CALL ptr16:xx, invalid in 64-bit mode), and the
 *   branch opcodes APX reserves under REX2. A LOCK prefix on a branch, also
 *   #UD, is not looked at: such bytes are no compiler's output.
 * - XBEGIN (C7 F8), XABORT (C6 F8) and XEND (0F 01 D5) are not branches.
 *   XBEGIN itself always falls through; control reaches its fallback only
 *   when the transaction aborts, at some later instruction or interrupt,
 *   which no decoder of XBEGIN's bytes can mark. XABORT outside a
 *   transaction is a no-op. QEMU implements no RTM at all (its CPUID says so;
 *   QEMU 7.2's TCG even executes C7 F8 rel32 as MOV r/m32, imm32).
 * - SYSRET, SYSEXIT and FRED's ERETU and ERETS are TREC_BR_OTHER, like
 *   IRET and UIRET: they fault at CPL 3, so a user-mode trace never retires
 *   one, but in a whole-guest trace each always transfers control.
 * - Instructions whose transfer happens below or beside the traced software
 *   (VMLAUNCH, VMRESUME, VMRUN, RSM) are not branches: a guest never
 *   retires them, and RSM exists only in SMM.
 * - APX REX2 (D5) is decoded, though QEMU does not implement APX yet
 *   (D5 is #UD there): CALL/JMP through r16-r31 need it, and JMPABS is an
 *   unconditional direct jump. */
#include "x86br.h"

#include "trace.h"

#define BR(kind)             ((uint8_t)(TREC_F_BRANCH | TREC_F_BR(kind)))
#define BR_JMP               ((uint8_t)(BR(TREC_BR_JMP) | TREC_F_DIRECT | TREC_F_TAKEN))
#define REX2_M0              0x80 /* REX2 payload: map 1 (0F) rather than map 0 */
#define REX2_W               0x08 /* REX2 payload: W */
#define MODRM_REG(m)         (((m) >> 3) & 7)
#define MODRM_REG_OPERAND(m) (((m)&0xc0) == 0xc0) /* mod = 11b: no memory operand */

/* Group 5, FF /digit (Table A-6): /2 near CALL, /3 far CALL m16:xx, /4 near
 * JMP, /5 far JMP m16:xx; /0 INC, /1 DEC, /6 PUSH, /7 reserved. The reg
 * field is an opcode extension here, which REX.R and REX2.R4 never change
 * (SDM 2.2.1.2 "More on REX Prefix Fields"). */
static uint8_t group5(uint8_t modrm)
{
    switch (MODRM_REG(modrm)) {
    case 2:
        return BR(TREC_BR_CALL_IND);
    case 3:
        return MODRM_REG_OPERAND(modrm) ? 0 : BR(TREC_BR_CALL_IND);
    case 4:
        return BR(TREC_BR_JMP_IND);
    case 5:
        return MODRM_REG_OPERAND(modrm) ? 0 : BR(TREC_BR_JMP_IND);
    default:
        return 0;
    }
}

/* The one-byte map (Table A-2). rest: the nrest bytes after the opcode;
 * rex2: the instruction has a REX2 prefix, whose payload is r2. */
static uint8_t map0(uint8_t op, const uint8_t *rest, size_t nrest, int rex2, uint8_t r2)
{
    /* Under REX2, rows 7, A and E of this map are reserved (#UD), except
     * A1 with REX2.W = 0, which is JMPABS imm64 (APX specification, "REX2
     * prefix" and "JMPABS"). */
    if (rex2 && ((op >> 4) == 0x7 || (op >> 4) == 0xa || (op >> 4) == 0xe))
        return op == 0xa1 && !(r2 & REX2_W) ? BR_JMP : 0;
    if (op >= 0x70 && op <= 0x7f) /* Jcc rel8 */
        return BR(TREC_BR_COND);
    switch (op) {
    case 0xe0: /* LOOPNE rel8 */
    case 0xe1: /* LOOPE rel8 */
    case 0xe2: /* LOOP rel8 */
    case 0xe3: /* JrCXZ rel8 (JECXZ with 67) */
        return BR(TREC_BR_COND);
    case 0xe8: /* CALL rel32; with 66, rel16 on AMD, still rel32 on Intel */
        return BR(TREC_BR_CALL);
    case 0xe9: /* JMP rel32 */
    case 0xeb: /* JMP rel8 */
        return BR_JMP;
    case 0xc2: /* RET imm16 */
    case 0xc3: /* RET */
    case 0xca: /* far RET imm16 */
    case 0xcb: /* far RET ("RET—Return from Procedure") */
        return BR(TREC_BR_RET);
    case 0xcf: /* IRET, IRETQ with REX.W ("IRET/IRETD/IRETQ—Interrupt Return") */
        return BR(TREC_BR_OTHER);
    case 0xff:
        return nrest ? group5(rest[0]) : 0;
    default:
        return 0;
    }
}

/* The two-byte map, after 0F (Table A-3). rep: the last of F2 and F3, or
 * 0. Where an opcode is defined by an F2 or F3 "mandatory" prefix and both
 * are present, the manuals leave the outcome undefined; here, as in QEMU's
 * decoder, the later one cancels the earlier. */
static uint8_t map1(uint8_t op, const uint8_t *rest, size_t nrest, int rex2, uint8_t rep)
{
    if (op >= 0x80 && op <= 0x8f) /* Jcc rel32; rows 3 and 8 are reserved under REX2 */
        return rex2 ? 0 : BR(TREC_BR_COND);
    switch (op) {
    case 0x07: /* SYSRET ("SYSRET—Return From Fast System Call") */
        return BR(TREC_BR_OTHER);
    case 0x35: /* SYSEXIT ("SYSEXIT—Fast Return from Fast System Call") */
        return rex2 ? 0 : BR(TREC_BR_OTHER);
    case 0x01: /* group 7: the ModRM byte names the instruction */
        if (!nrest)
            return 0;
        /* F3 0F 01 EC UIRET ("UIRET—User-Interrupt Return"); F3 0F 01 CA
         * ERETU and F2 0F 01 CA ERETS (FRED); without a prefix, 0F 01 CA is
         * CLAC. */
        if ((rest[0] == 0xec && rep == 0xf3) || (rest[0] == 0xca && rep))
            return BR(TREC_BR_OTHER);
        return 0;
    default:
        return 0;
    }
}

uint8_t x86br_flags(const uint8_t *insn, size_t len)
{
    size_t i = 0;
    uint8_t rep = 0; /* the last of F2, F3 */
    /* Legacy prefixes in any number and order (SDM 2.1.1: groups 1-4), and
     * REX (40-4F). A REX counts only immediately before the opcode; one
     * followed by another prefix is ignored (SDM 2.2.1), so skipping it
     * like the others is right wherever it stands. */
    for (; i < len; i++) {
        uint8_t b = insn[i];
        if (b == 0xf2 || b == 0xf3)
            rep = b;
        else if (!(b == 0x66 || b == 0x67 || b == 0xf0 || b == 0x2e || b == 0x3e || b == 0x26 ||
                   b == 0x36 || b == 0x64 || b == 0x65 || (b & 0xf0) == 0x40))
            break;
    }
    if (i >= len)
        return 0;
    uint8_t op = insn[i++];
    /* VEX (C4, C5), EVEX (62) and XOP (8F with ModRM.reg != 0, AMD APM
     * vol. 3 Appendix A) open maps with no branch in them, and none of
     * these bytes is a branch opcode of map 0, so they fall through to
     * map0(), which returns 0 for them without looking at their payload. */
    if (op == 0xd5) { /* REX2: payload, then an opcode of map 0 or map 1 */
        if (i + 1 >= len)
            return 0;
        uint8_t r2 = insn[i];
        op = insn[i + 1];
        i += 2;
        if (r2 & REX2_M0)
            return map1(op, insn + i, len - i, 1, rep);
        /* The map comes from REX2.M0, so 0F is no escape after REX2. */
        return op == 0x0f ? 0 : map0(op, insn + i, len - i, 1, r2);
    }
    if (op == 0x0f) {
        if (i >= len)
            return 0;
        op = insn[i++];
        return map1(op, insn + i, len - i, 0, rep);
    }
    return map0(op, insn + i, len - i, 0, 0);
}
