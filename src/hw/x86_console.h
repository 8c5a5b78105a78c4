/* The x86 register console's interpreter (qosim regs, docs/regs.md): one
 * script line in, at most one output line out. Kept apart from the command
 * line so that fuzzing drives exactly what users type. Besides CPUID and
 * the MSRs, the LWP instructions as the current process executes them at
 * ring 3, and that process's memory:
 *   llwpcb CPU ADDR                      ok, #UD or #PF
 *   slwpcb CPU                           0x%016x, #UD or #PF
 *   mem read32|read64 ADDR               0x%08x / 0x%016x, or #PF
 *   mem write32|write64 ADDR VALUE       ok or #PF
 *   mem map ADDR LEN [user|kernel] [rw|ro]   ok (fresh zero pages) */
#ifndef QOSIM_HW_X86_CONSOLE_H
#define QOSIM_HW_X86_CONSOLE_H

#include "console.h"
#include "lwp_proc.h"
#include "x86.h"

#include <stdio.h>

struct x86_console {
    struct x86 *x;
    struct console k;      /* run, ctx; lines and errors so far */
    struct lwp_proc *proc; /* the current process (LWP's LWPCB and ring live there) */
};

/* Interprets one line (modified in place): blank and comment-only lines
 * print nothing; every command prints exactly one line to out. */
void x86_console_line(struct x86_console *c, char *text, FILE *out);
/* Whether a line sets something that changes what the machine's cores do:
 * a wrmsr (the QoS MSRs are settings). Every other line only looks at the
 * model (cpuid, rdmsr), acts on the console's own process (llwpcb,
 * slwpcb, mem), or moves time (run), which whoever runs the machine
 * handles as observation. A console attached to a running guest
 * (qemu/plugin/qosim-vm.c) simulates the guest's pending accesses before a
 * setting only, so a console that only looks changes nothing. */
int x86_console_sets(const char *text);

#endif
