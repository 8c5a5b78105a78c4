/* The x86 register console's interpreter (qosim regs, docs/regs.md): one
 * script line in, at most one output line out. Kept apart from the command
 * line so that fuzzing drives exactly what users type. */
#ifndef QOSIM_HW_X86_CONSOLE_H
#define QOSIM_HW_X86_CONSOLE_H

#include "x86.h"

#include <stdio.h>

struct x86_console {
    struct x86 *x;
    /* Advances simulated time by ns nanoseconds; NULL: time has no tasks to run. */
    int (*run)(void *ctx, uint64_t ns, struct err *e);
    void *ctx;
    unsigned line;   /* lines read so far */
    unsigned errors; /* malformed commands so far */
};

/* Interprets one line (modified in place): blank and comment-only lines
 * print nothing; every command prints exactly one line to out. */
void x86_console_line(struct x86_console *c, char *text, FILE *out);

#endif
