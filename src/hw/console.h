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

/* Reading lines and framing replies, shared by qosim regs (a script, and
 * the --attach client) and the plugin's socket server (qosim vm
 * --console), so that a line is one line to all of them whatever bytes it
 * holds (tests/fuzz/fuzz_console.c). */
#define CONSOLE_LINE  1024  /* bytes of a line's buffer: lines of up to 1022 characters */
#define CONSOLE_REPLY 4096  /* bytes of a reply's buffer, the server's and the client's */
#define CONSOLE_LONG  (-1L) /* console_read: the line has more characters than fit */
#define CONSOLE_NUL   (-2L) /* console_read: the line holds a NUL byte */

/* One line of in (n >= 2 bytes of buf): up to and with its '\n', or up to
 * the end for a last line without one. Returns its length (> 0), buf
 * NUL-terminated; CONSOLE_LONG when it has more than n - 2 characters
 * ('\n' aside), else CONSOLE_NUL when it holds a NUL byte, the whole line
 * consumed either way; 0 at the end of input or at a read error (ferror). */
long console_read(FILE *in, char *buf, size_t n);

/* The one error line of a line console_read refused (r < 0; n as given
 * to it), counted as a line and an error. */
void console_bad(struct console *k, long r, size_t n, FILE *out);

/* The server's reply to a line console_read gave as r (buf of CONSOLE_LINE
 * bytes): console_bad's line, or what interp prints for it (every line
 * ended, no empty one), then the empty line that ends every reply; in out
 * (n >= 128 bytes), NUL-terminated. Output past n - 2 bytes is cut to
 * whole lines and ended by an error line (an error unless the line already
 * counted one). Returns the reply's length. */
size_t console_reply(struct console *k, long r, char *line, char *out, size_t n,
                     void (*interp)(void *self, char *line, FILE *out), void *self);

#endif
