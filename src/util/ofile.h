/* Output files that never destroy what they name (docs/outputs.md):
 *   "-"                      standard output; so is any name of the file
 *                            standard output (or error) is open on, such as
 *                            /dev/stdout: written through that descriptor;
 *   a FIFO, a character device or another special file
 *                            written through as it is, never replaced;
 *   a symbolic link          followed to its target, which the rules below
 *                            apply to; the link stays a link (a dangling
 *                            link gets its target created, as the shell's
 *                            '>' does);
 *   a regular file or a new name
 *                            written to a temporary beside it and renamed
 *                            over it only when complete, so a failed or
 *                            interrupted run leaves nothing behind; an
 *                            existing file keeps its permissions.
 * Directories and block devices are refused. */
#ifndef QOSIM_UTIL_OFILE_H
#define QOSIM_UTIL_OFILE_H

#include "err.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

enum ofile_kind {
    OFILE_RENAME, /* a temporary, renamed over target on commit */
    OFILE_DIRECT, /* an existing special file, written through */
    OFILE_STDFD,  /* "-" or /dev/stdout: file descriptor 1 (or 2), left open */
};

struct ofile {
    FILE *f;  /* write here; NULL when not open */
    int fd;   /* what f writes to (for a child process to write into) */
    int werr; /* errno of the first failed write */
    enum ofile_kind kind;
    char path[1024];       /* as named, for messages */
    char target[PATH_MAX]; /* symbolic links followed */
    char tmp[PATH_MAX + 16];
};

/* Fails, naming path, when the output cannot be written at all: a missing
 * directory, a directory, a block device, no permission. A FIFO blocks
 * here until it has a reader, as the shell's '>' does. */
int ofile_open(struct ofile *o, const char *path, struct err *e);
/* The output goes to standard output (so nothing else should). */
int ofile_is_stdout(const struct ofile *o);
/* Flushes and closes; a temporary is renamed over the target, or removed
 * if anything failed (the message names the path and the reason). */
int ofile_commit(struct ofile *o, struct err *e);
/* Commits several outputs together: every one is flushed first, and if any
 * fails, none of the temporaries is renamed (all are removed). */
int ofile_commit_all(struct ofile *const *v, size_t n, struct err *e);
/* Drops the output (an error happened): a temporary is removed, a special
 * file closed. Safe on an ofile that is not open. */
void ofile_abort(struct ofile *o);

/* A file named on the command line: its option (or, for an input, what it
 * is: "the scenario") and its name. */
struct ofile_name {
    const char *what, *path;
};

/* Usage check before anything is opened: two outputs naming one file (the
 * same name, through a link, or "-" twice), or an output naming an input,
 * which writing it would destroy (a regular file; an input "-" is standard
 * input's file). NULL paths are skipped. -QOSIM_EINVAL with a message
 * naming both. */
int ofile_distinct(const struct ofile_name *out, size_t nout, const struct ofile_name *in,
                   size_t nin, struct err *e);

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE remove every pending temporary and
 * end the process by that signal (the shell shows 128 + its number). hook,
 * if not NULL, runs first, in the handler (async-signal-safe calls only).
 * A signal ignored when the process started stays ignored (nohup). */
void ofile_trap_signals(void (*hook)(int sig));
/* Removes every pending temporary; async-signal-safe. */
void ofile_unlink_pending(void);

#endif
