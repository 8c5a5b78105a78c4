/* Live programs: a real x86-64 program runs under QEMU's user-mode
 * emulator with the qosim TCG plugin (qemu/plugin/), and its instructions
 * and memory accesses arrive as trace records through a shared ring
 * (live_ring.h) as fast as the reader takes them: the guest waits while
 * its reader, a simulated core, is behind. The program's run is
 * reproducible: no address-space randomisation, and QEMU's -seed fixes
 * what it hands the guest as randomness (AT_RANDOM, getrandom). */
#ifndef QOSIM_SIM_LIVE_H
#define QOSIM_SIM_LIVE_H

#include "sim/trace/trace.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct live_opts {
    char *const *argv; /* the program (a path, or a name looked up on PATH) and its arguments */
    const char *dir;   /* its working directory; NULL: qosim's */
    int in_fd, out_fd; /* its standard input and output; -1: /dev/null */
    uint64_t ring;     /* ring size in records (a power of two); 0: LIVE_RING */
    int own_group;     /* in a process group of its own (Ctrl-C reaches qosim only) */
    const char *label; /* what messages after the start begin with ("task gzip"); NULL: none */
};

#define LIVE_RING (1u << 20)

struct live;

/* What live_start needs, checked before anything runs: the program is an
 * x86-64 ELF executable (path resolved into prog, PATH searched as execvp
 * does), QEMU ($QOSIM_QEMU or qemu-x86_64 on PATH) and the plugin
 * ($QOSIM_PLUGIN, or qemu/qosim-plugin.so beside the running binary). The
 * message says what is missing and how to get it. */
int live_check(const char *name, char *prog, size_t cap, struct err *e);
/* The plugin's path; NULL if there is none. */
const char *live_plugin(void);

int live_start(struct live **out, const struct live_opts *o, struct err *e);
/* Up to n records, waiting for the program when none are ready; 0 when it
 * has ended (live_why says how), or a negative code: the plugin refused
 * the program (a second thread), or it did not start. */
long live_read(struct live *l, struct trace_rec *r, size_t n, struct err *e);
/* After the end: "exited with status 0", "killed by signal 11 (Segmentation fault)". */
const char *live_why(const struct live *l);
/* It exited by itself with status 0..255; -1 otherwise (signal, refused, still running). */
int live_status(const struct live *l);
uint64_t live_records(const struct live *l);
/* The emulator's process id, which leads its process group with own_group. */
int live_pid(const struct live *l);
/* Stops the program if it still runs (SIGKILL to its process group) and frees l. */
void live_stop(struct live *l);

#endif
