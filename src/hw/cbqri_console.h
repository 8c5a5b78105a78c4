/* The RISC-V register console's interpreter (qosim regs on a RISC-V
 * platform, docs/regs.md): the CBQRI controllers' MMIO windows and every
 * hart's CSRs (src/hw/cbqri.h), one script line in, at most one output
 * line out, under the same rules as the x86 console (console.h):
 *   mmio read32|read64 ADDR [hart N]           0x%08x / 0x%016x, or fault
 *   mmio write32|write64 ADDR VALUE [hart N]   ok, or fault
 *   csr read HART CSR                          XLEN bits in hex, or illegal / virtual
 *   csr write HART CSR VALUE                   ok, or illegal / virtual
 * CSR: sqoscfg on a draft-2023 platform (32 bits); srmcfg (0x181) and, with
 * Smstateen, mstateen0 (0x30c; mstateen0h 0x31c on RV32) on a 1.0 one, by
 * name or number.
 *   mode HART M|S|U|VS|VU|secure-M             ok
 *   run NS                                     ok
 * Every access is made by a hart at that hart's privilege: MMIO by hart 0
 * unless `hart N` says otherwise, the CSR by the hart it names. Every hart
 * starts in M-mode (project choice): M reaches every normal window and
 * every CSR, so a fresh console can program everything but the draft's
 * secure windows, which need `mode N secure-M`. */
#ifndef QOSIM_HW_CBQRI_CONSOLE_H
#define QOSIM_HW_CBQRI_CONSOLE_H

#include "cbqri.h"
#include "console.h"

#include <stdio.h>

struct cbqri_console {
    struct cbqri *q;
    /* run, ctx; lines and errors so far. The run callback brings the
     * model's clock along (cbqri_tick) after the machine ran: the console
     * keeps no clock of its own. */
    struct console k;
    enum cbqri_mode *mode; /* [ncpu]: each hart's privilege */
};

/* Every hart in M-mode; k is left zero for the caller to fill. */
int cbqri_console_init(struct cbqri_console *c, struct cbqri *q, struct err *e);
void cbqri_console_free(struct cbqri_console *c);

/* Interprets one line (modified in place): blank and comment-only lines
 * print nothing; every command prints exactly one line to out. */
void cbqri_console_line(struct cbqri_console *c, char *text, FILE *out);

#endif
