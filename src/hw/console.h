/* What the register consoles (qosim regs, docs/regs.md) share: a script
 * line split into words, numbers as configuration files write them, the
 * `run NS` command, and the one error line of a malformed command. The
 * x86 console (x86_console.c) and the RISC-V one (cbqri_console.c) are
 * their commands on top of this. */
#ifndef QOSIM_HW_CONSOLE_H
#define QOSIM_HW_CONSOLE_H

#include "util/err.h"

#include <stdint.h>
#include <stdio.h>

#define CONSOLE_MAX_WORDS 8   /* words in a command */
#define CONSOLE_ERR_SIZE  600 /* bytes of an error message */

struct console {
    /* Advances simulated time by ns nanoseconds; NULL: time has no tasks to run. */
    int (*run)(void *ctx, uint64_t ns, struct err *e);
    void *ctx;
    unsigned line;   /* lines read so far */
    unsigned errors; /* malformed commands so far */
};

/* One command, w[0..n-1] with n >= 1: prints its one output line to out,
 * or, when it is malformed, leaves why in err (CONSOLE_ERR_SIZE bytes,
 * empty on entry) and prints nothing. */
typedef void (*console_cmd_fn)(void *self, char **w, int n, char *err, FILE *out);

/* Interprets one line (modified in place): '#' starts a comment; blank and
 * comment-only lines print nothing; a command goes to cmd, and a malformed
 * one prints "error: line N: why" and counts in errors. */
void console_line(struct console *k, char *text, FILE *out, console_cmd_fn cmd, void *self);

/* A number as configuration files write them: decimal or 0x-hex, no sign,
 * at most max. 0, or -1 when s is NULL or no such number. */
int console_num(const char *s, uint64_t max, uint64_t *out);

/* The `run NS` command (w[0] is "run"): runs k->run, prints ok. */
void console_run(struct console *k, char **w, int n, char *err, FILE *out);

#endif
