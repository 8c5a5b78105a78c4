/* Branch classification of one x86-64 instruction from its bytes, for a
 * source that sees every instruction's bytes once (a QEMU TCG plugin at
 * translation time) and must mark branches exactly.
 *
 * 64-bit mode only: in 64-bit mode 40-4F are REX prefixes, C4/C5 and 62 are
 * always the VEX and EVEX escapes, and EA/9A (far JMP/CALL ptr16:xx) do not
 * exist; none of that holds in compatibility or legacy mode (SDM vol. 2D,
 * Table A-2 "One-byte Opcode Map", superscript i64).
 *
 * The classifier reads the prefixes, the opcode and at most one ModRM byte,
 * so it is a few table-free comparisons per instruction; it never decodes
 * operands and does not check that the bytes are a valid or complete
 * encoding: len, the instruction's full length as the translator decoded
 * it, only bounds what is read. */
#ifndef QOSIM_SIM_TRACE_X86BR_H
#define QOSIM_SIM_TRACE_X86BR_H

#include <stddef.h>
#include <stdint.h>

/* 0 for an instruction that is not a branch, else TREC_F_BRANCH |
 * TREC_F_BR(kind) (trace.h):
 *   TREC_BR_COND      Jcc rel8/rel32 (70-7F, 0F 80-8F), LOOPNE/LOOPE/LOOP
 *                     and JrCXZ (E0-E3)
 *   TREC_BR_JMP       JMP rel8/rel32 (EB, E9), and APX JMPABS; these also
 *                     carry TREC_F_DIRECT | TREC_F_TAKEN: always taken, to a
 *                     target the front end knows at decode
 *   TREC_BR_CALL      CALL rel32 (E8)
 *   TREC_BR_RET       RET, RET imm16, far RET (C3, C2, CB, CA)
 *   TREC_BR_CALL_IND  CALL near or far through a register or memory (FF /2,
 *                     FF /3)
 *   TREC_BR_JMP_IND   JMP near or far through a register or memory (FF /4,
 *                     FF /5), with or without NOTRACK (3E)
 *   TREC_BR_OTHER     IRET, UIRET, SYSRET, SYSEXIT, ERETU, ERETS
 *
 * TREC_F_TAKEN is set only on the unconditional direct jumps. For every
 * other branch the caller decides it at run time, setting TREC_F_TAKEN
 * when the next instruction executed is not the fall-through (the address
 * after this one): a conditional branch by its outcome, and also calls,
 * returns and indirect jumps, which are unconditional but get no
 * TREC_F_TAKEN here, since their target may be the fall-through itself.
 *
 * Not branches: INT3, INT n, INT1, INTO, SYSCALL, SYSENTER, UD0/UD1/UD2 and
 * HLT. In a user-mode trace each of them either comes back to the next
 * instruction (the kernel, or QEMU's linux-user emulation, handles the
 * system call or the trap, and a signal handler, if there is one, returns)
 * or ends the program (SIGTRAP, SIGILL, SIGSEGV; HLT is privileged): they
 * are events, not branches. A whole-guest trace would see the trapping ones
 * enter the kernel; they are left unmarked there too, as an interrupt's
 * entry is. Neither are TSX's XBEGIN, XABORT and XEND: see x86br.c. */
uint8_t x86br_flags(const uint8_t *insn, size_t len);

#endif
