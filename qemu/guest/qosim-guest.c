/* qosim-guest: the small tools the qosim VM guest's tests need and busybox
 * lacks: MSR access (and a fuzzer of it), CPUID, a memory-bandwidth stream (on a NUMA node of
 * one's choice, such as the guest's slow memory), the switch of the model's
 * caches and memory (QOSIM_SIM_CTL) and powering QEMU off with an exit
 * status. Built static so the initramfs needs no libraries for it:
 *   cc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o qosim-guest qosim-guest.c
 *
 * Exit status: 0 on success, 2 for bad arguments and system errors, 3 when the
 * kernel reports that an MSR access raised #GP. */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../plugin/simctl.h"

#define EXIT_ERR 2
#define EXIT_GP  3

/* The port QEMU's isa-debug-exit device is expected at (iobase=0xf4). */
#define DEBUG_EXIT_PORT 0xf4

/* A file only the guest's initramfs has (qemu/guest/rootfs/). */
#define GUEST_MARK "/etc/qosim-guest"

static const char *prog = "qosim-guest";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s rdmsr CPU MSR\n"
            "       %s wrmsr CPU MSR VALUE\n"
            "       %s msrfuzz CPU SEED COUNT LO[-HI][:w]...\n"
            "       %s cpuid LEAF [SUBLEAF]\n"
            "       %s stream [--size BYTES[K|M|G]] [--passes N] [--write|--chase] [--node N]\n"
            "              [--move-to TASKS_FILE]... [--ready FILE] [--start-on FILE]\n"
            "              [--stop-on FILE] [--start-signal]\n"
            "       %s sim on|off|state\n"
            "       %s exit STATUS\n",
            prog, prog, prog, prog, prog, prog, prog);
}

static _Noreturn void bad_arg(const char *what, const char *arg)
{
    fprintf(stderr, "%s: bad %s '%s'\n", prog, what, arg);
    exit(EXIT_ERR);
}

/* An unsigned number in C notation (decimal, 0x hex, 0 octal) no larger
 * than max; what names the argument in the error message. */
static uint64_t parse_num(const char *what, const char *s, uint64_t max)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        bad_arg(what, s);
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end != '\0' || v > max)
        bad_arg(what, s);
    return v;
}

/* A byte count with an optional binary suffix K, M or G. */
static uint64_t parse_size(const char *what, const char *s)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        bad_arg(what, s);
    unsigned long long v = strtoull(s, &end, 0);
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (errno || *end != '\0' || v > (UINT64_MAX >> shift))
        bad_arg(what, s);
    return (uint64_t)v << shift;
}

/* Opens /dev/cpu/CPU/msr; the msr module provides it. */
static int open_msr(unsigned cpu, int flags)
{
    char path[64];
    snprintf(path, sizeof path, "/dev/cpu/%u/msr", cpu);
    int fd = open(path, flags);
    if (fd < 0) {
        int e = errno;
        fprintf(stderr, "%s: %s: %s%s\n", prog, path, strerror(e),
                e == ENOENT ? " (no such CPU, or the msr module is not loaded: modprobe msr)" : "");
        exit(EXIT_ERR);
    }
    return fd;
}

/* The msr driver turns a faulting RDMSR/WRMSR into EIO. */
static _Noreturn void msr_failed(const char *op, uint32_t msr, unsigned cpu, int e)
{
    if (e == EIO) {
        fprintf(stderr, "%s: %s 0x%x on cpu %u: #GP\n", prog, op, msr, cpu);
        exit(EXIT_GP);
    }
    fprintf(stderr, "%s: %s 0x%x on cpu %u: %s\n", prog, op, msr, cpu, strerror(e));
    exit(EXIT_ERR);
}

/* One RDMSR or WRMSR on cpu through the msr driver; a fault ends the
 * program (msr_failed). */
static uint64_t msr_read(unsigned cpu, uint32_t msr)
{
    int fd = open_msr(cpu, O_RDONLY);
    uint64_t v;
    ssize_t n = pread(fd, &v, sizeof v, msr);
    if (n != (ssize_t)sizeof v)
        msr_failed("rdmsr", msr, cpu, n < 0 ? errno : EIO);
    close(fd);
    return v;
}

static void msr_write(unsigned cpu, uint32_t msr, uint64_t v)
{
    int fd = open_msr(cpu, O_WRONLY);
    ssize_t n = pwrite(fd, &v, sizeof v, msr);
    if (n != (ssize_t)sizeof v)
        msr_failed("wrmsr", msr, cpu, n < 0 ? errno : EIO);
    close(fd);
}

static int cmd_rdmsr(int argc, char **argv)
{
    if (argc != 3) {
        usage(stderr);
        return EXIT_ERR;
    }
    unsigned cpu = parse_num("CPU", argv[1], 65535);
    uint32_t msr = parse_num("MSR", argv[2], UINT32_MAX);
    printf("0x%016llx\n", (unsigned long long)msr_read(cpu, msr));
    return 0;
}

static int cmd_wrmsr(int argc, char **argv)
{
    if (argc != 4) {
        usage(stderr);
        return EXIT_ERR;
    }
    unsigned cpu = parse_num("CPU", argv[1], 65535);
    uint32_t msr = parse_num("MSR", argv[2], UINT32_MAX);
    msr_write(cpu, msr, parse_num("VALUE", argv[3], UINT64_MAX));
    return 0;
}

/* sim on|off: the model's caches and memory simulate what the guest runs
 * from here, or skip it (QOSIM_SIM_CTL, written on CPU 0: the switch is
 * the whole guest's); sim state prints "on" or "off". Outside qosim vm the
 * MSR is not there, and the msr driver reports the #GP. */
static int cmd_sim(int argc, char **argv)
{
    if (argc != 2 ||
        (strcmp(argv[1], "on") && strcmp(argv[1], "off") && strcmp(argv[1], "state"))) {
        usage(stderr);
        return EXIT_ERR;
    }
    if (!strcmp(argv[1], "state"))
        puts(msr_read(0, QOSIM_SIM_CTL) & QOSIM_SIM_CTL_SIM ? "on" : "off");
    else
        msr_write(0, QOSIM_SIM_CTL, !strcmp(argv[1], "on") ? QOSIM_SIM_CTL_SIM : 0);
    return 0;
}

/* msrfuzz: COUNT writes of random values to MSRs drawn from the ranges
 * given on CPU, each followed by a read of the same MSR, from a xorshift64
 * stream seeded with SEED. A range is LO or LO-HI (inclusive), each range
 * as likely as any other; an MSR in a range given with ":w" is written
 * only (a counter, whose reads move with time). First one line
 *   init MSR VALUE
 * for each readable MSR as the fuzzing finds it, then one line a write:
 *   MSR VALUE ok|gp READ|gp|-
 * so that the host can replay the same writes on the model's own console
 * (qosim regs) from the same state and compare every outcome: a hostile
 * guest's accesses get architectural answers (tests/e2e/msrfuzz.sh). */
struct fz_range {
    uint32_t lo, hi;
    int wonly;
};

static uint64_t fz_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Values where register checks live: anything; small numbers; runs of
 * ones (capacity masks) at the bottom or anywhere; single bits; a small
 * number in each half (PQR_ASSOC's COS and RMID, ABMC's fields). */
static uint64_t fz_value(uint64_t *s)
{
    uint64_t r = fz_next(s), k = fz_next(s) % 24, at = fz_next(s) % 16;
    switch (r % 6) {
    case 0:
        return fz_next(s);
    case 1:
        return fz_next(s) & 0xff;
    case 2:
        return (1ull << k) - 1;
    case 3:
        return ((1ull << k) - 1) << at;
    case 4:
        return 1ull << (fz_next(s) % 64);
    default:
        return (fz_next(s) & 0x1f) << 32 | (fz_next(s) & 0xff);
    }
}

/* Whether msr is write-only: in a range given with ":w", whichever range
 * it was drawn from (a counter inside a wide range is still a counter). */
static int fz_wonly(const struct fz_range *r, int nr, uint32_t msr)
{
    for (int i = 0; i < nr; i++)
        if (r[i].wonly && msr >= r[i].lo && msr <= r[i].hi)
            return 1;
    return 0;
}

static int cmd_msrfuzz(int argc, char **argv)
{
    if (argc < 5) {
        usage(stderr);
        return EXIT_ERR;
    }
    unsigned cpu = parse_num("CPU", argv[1], 65535);
    uint64_t seed = parse_num("SEED", argv[2], UINT64_MAX) | 1;
    uint64_t count = parse_num("COUNT", argv[3], 100000000);
    int nr = argc - 4;
    struct fz_range *r = calloc((size_t)nr, sizeof *r);
    if (!r)
        return EXIT_ERR;
    for (int i = 0; i < nr; i++) {
        char buf[64], *dash, *colon;
        snprintf(buf, sizeof buf, "%s", argv[4 + i]);
        if ((colon = strchr(buf, ':'))) {
            if (strcmp(colon, ":w"))
                bad_arg("range", argv[4 + i]);
            *colon = '\0';
            r[i].wonly = 1;
        }
        if ((dash = strchr(buf, '-')))
            *dash = '\0';
        r[i].lo = parse_num("MSR", buf, UINT32_MAX);
        r[i].hi = dash ? parse_num("MSR", dash + 1, UINT32_MAX) : r[i].lo;
        if (r[i].hi < r[i].lo)
            bad_arg("range", argv[4 + i]);
    }
    int fd = open_msr(cpu, O_RDWR);
    /* First the registers as the fuzzing finds them, so that a replay can
     * start from the same state: "init MSR VALUE" for each readable one. */
    for (int i = 0; i < nr; i++)
        for (uint64_t m = r[i].lo; m <= r[i].hi; m++) {
            uint64_t v;
            if (!fz_wonly(r, nr, (uint32_t)m) &&
                pread(fd, &v, sizeof v, (off_t)m) == (ssize_t)sizeof v)
                printf("init 0x%x 0x%016llx\n", (unsigned)m, (unsigned long long)v);
        }
    for (uint64_t n = 0; n < count; n++) {
        /* A range, then an MSR in it: a one-MSR range is as likely as a
         * wide one, so narrow ranges of registers that exist are not
         * drowned by wide ones of those that do not. */
        int i = (int)(fz_next(&seed) % (uint64_t)nr);
        uint32_t msr = r[i].lo + (uint32_t)(fz_next(&seed) % ((uint64_t)r[i].hi - r[i].lo + 1));
        uint64_t v = fz_value(&seed), got;
        int wok = pwrite(fd, &v, sizeof v, msr) == (ssize_t)sizeof v;
        if (!wok && errno != EIO)
            msr_failed("wrmsr", msr, cpu, errno);
        printf("0x%x 0x%016llx %s ", msr, (unsigned long long)v, wok ? "ok" : "gp");
        if (fz_wonly(r, nr, msr))
            printf("-\n");
        else if (pread(fd, &got, sizeof got, msr) == (ssize_t)sizeof got)
            printf("0x%016llx\n", (unsigned long long)got);
        else if (errno == EIO)
            printf("gp\n");
        else
            msr_failed("rdmsr", msr, cpu, errno);
    }
    close(fd);
    free(r);
    return 0;
}

static int cmd_cpuid(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        usage(stderr);
        return EXIT_ERR;
    }
    uint32_t leaf = parse_num("LEAF", argv[1], UINT32_MAX);
    uint32_t sub = argc == 3 ? parse_num("SUBLEAF", argv[2], UINT32_MAX) : 0;
    unsigned a, b, c, d;
    __cpuid_count(leaf, sub, a, b, c, d);
    printf("0x%08x 0x%08x 0x%08x 0x%08x\n", a, b, c, d);
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Keeps the sum the stream computes alive. */
static volatile uint64_t stream_sink;

static uint64_t stream_read(const uint64_t *buf, uint64_t lines)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < lines * 8; i++)
        sum += buf[i];
    return sum;
}

/* The chase: each line's first word holds the index of the next line, in
 * one cycle through every line in a random order (Sattolo's algorithm, from
 * a fixed seed, so every run walks the same cycle). Each load's address
 * comes from the load before, so the walk runs at the latency of where its
 * lines are and no prefetcher can follow it: the cache-sensitive program of
 * a noisy-neighbour experiment. */
static void chase_init(uint64_t *buf, uint64_t lines)
{
    for (uint64_t i = 0; i < lines; i++)
        buf[i * 8] = i;
    uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift64 */
    for (uint64_t i = lines - 1; i > 0; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t j = x % i, t = buf[i * 8];
        buf[i * 8] = buf[j * 8];
        buf[j * 8] = t;
    }
}

/* Not inlined: a profiler (perf in the guest, docs/vm.md) names the walk. */
static __attribute__((noinline)) uint64_t chase(const uint64_t *buf, uint64_t lines)
{
    uint64_t i = 0;
    for (uint64_t n = 0; n < lines; n++)
        i = buf[i * 8];
    return i;
}

static uint64_t stream_rw(uint64_t *buf, uint64_t lines)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < lines * 8; i++) {
        sum += buf[i];
        buf[i] += 1;
    }
    return sum;
}

/* A buffer of len bytes whose pages all come from NUMA node `node`:
 * mapped, bound with mbind(MPOL_BIND) (raw system calls: the static binary
 * has no libnuma), and touched, which is when the kernel allocates them.
 * move_pages with no target nodes then reports where each page is; a page
 * elsewhere is an error, not a quietly wrong measurement. */
static uint64_t *node_buffer(uint64_t len, unsigned node)
{
    uint64_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "%s: cannot map %llu bytes: %s\n", prog, (unsigned long long)len,
                strerror(errno));
        exit(EXIT_ERR);
    }
    unsigned long mask = 1ul << node;
    /* maxnode counts one more than the mask's bits (the kernel's get_nodes
     * takes one off), as numactl passes it. */
    if (syscall(SYS_mbind, buf, len, MPOL_BIND, &mask, sizeof mask * 8 + 1, MPOL_MF_STRICT)) {
        fprintf(stderr, "%s: --node %u: mbind: %s%s\n", prog, node, strerror(errno),
                errno == EINVAL ? " (no such node, or it has no memory)" : "");
        exit(EXIT_ERR);
    }
    for (uint64_t i = 0; i < len / 8; i++)
        buf[i] = i;
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t npages = (len + pg - 1) / pg;
    void **pages = malloc(npages * sizeof *pages);
    int *st = malloc(npages * sizeof *st);
    if (!pages || !st) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(EXIT_ERR);
    }
    for (uint64_t i = 0; i < npages; i++)
        pages[i] = (char *)buf + i * pg;
    if (syscall(SYS_move_pages, 0, npages, pages, NULL, st, 0)) {
        fprintf(stderr, "%s: move_pages: %s\n", prog, strerror(errno));
        exit(EXIT_ERR);
    }
    for (uint64_t i = 0; i < npages; i++)
        if (st[i] != (int)node) {
            fprintf(stderr, "%s: --node %u: page %llu is on %d\n", prog, node,
                    (unsigned long long)i, st[i]);
            exit(EXIT_ERR);
        }
    free(pages);
    free(st);
    return buf;
}

/* Moves the calling process into the resctrl group whose tasks file is
 * `tasks`. Linux loads the group's class and RMID into PQR_ASSOC of the CPU
 * at once when a task moves itself, which the returned PQR_ASSOC (read on
 * the CPU the process runs on; UINT64_MAX when /dev/cpu/N/msr is absent)
 * shows. */
static uint64_t move_to(const char *tasks)
{
    FILE *f = fopen(tasks, "w");
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
        fprintf(stderr, "%s: --move-to %s: %s\n", prog, tasks, strerror(errno));
        exit(EXIT_ERR);
    }
    char path[64];
    snprintf(path, sizeof path, "/dev/cpu/%d/msr", sched_getcpu());
    int fd = open(path, O_RDONLY);
    uint64_t v = UINT64_MAX;
    if (fd >= 0) {
        if (pread(fd, &v, sizeof v, 0xC8F) != (ssize_t)sizeof v) /* IA32_PQR_ASSOC */
            v = UINT64_MAX;
        close(fd);
    }
    return v;
}

static int cmd_stream(int argc, char **argv)
{
    uint64_t size = 64 << 20, passes = 4, assoc = UINT64_MAX;
    int write = 0, walk = 0, node = -1, ntasks = 0, start_sig = 0;
    const char *tasks[4], *ready = NULL, *start_on = NULL, *stop_on = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--write")) {
            write = 1;
        } else if (!strcmp(argv[i], "--chase")) {
            walk = 1;
        } else if (!strcmp(argv[i], "--start-signal")) {
            start_sig = 1;
        } else if (!strcmp(argv[i], "--size") || !strcmp(argv[i], "--passes") ||
                   !strcmp(argv[i], "--node") || !strcmp(argv[i], "--move-to") ||
                   !strcmp(argv[i], "--ready") || !strcmp(argv[i], "--start-on") ||
                   !strcmp(argv[i], "--stop-on")) {
            const char *opt = argv[i++];
            if (i == argc) {
                fprintf(stderr, "%s: %s needs a value\n", prog, opt);
                return EXIT_ERR;
            }
            if (!strcmp(opt, "--size"))
                size = parse_size("--size", argv[i]);
            else if (!strcmp(opt, "--node"))
                node = (int)parse_num("--node", argv[i], 63);
            else if (!strcmp(opt, "--ready"))
                ready = argv[i];
            else if (!strcmp(opt, "--start-on"))
                start_on = argv[i];
            else if (!strcmp(opt, "--stop-on"))
                stop_on = argv[i];
            else if (!strcmp(opt, "--move-to")) {
                if (ntasks == 4) {
                    fprintf(stderr, "%s: at most 4 --move-to\n", prog);
                    return EXIT_ERR;
                }
                tasks[ntasks++] = argv[i];
            } else
                passes = parse_num("--passes", argv[i], UINT32_MAX);
        } else {
            bad_arg("stream option", argv[i]);
        }
    }
    /* Whole 64-byte lines only. */
    uint64_t lines = size / 64;
    if (lines == 0) {
        fprintf(stderr, "%s: --size must be at least 64 bytes\n", prog);
        return EXIT_ERR;
    }
    if (write && walk) {
        fprintf(stderr, "%s: --write and --chase are two patterns; give one\n", prog);
        return EXIT_ERR;
    }
    if (passes == 0) {
        fprintf(stderr, "%s: --passes must be at least 1\n", prog);
        return EXIT_ERR;
    }
    /* --start-signal: SIGUSR1 is held from here on, so one sent before the
     * program waits for it is not lost. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (start_sig)
        sigprocmask(SIG_BLOCK, &usr1, NULL);
    uint64_t *buf =
        node >= 0 ? node_buffer(lines * 64, (unsigned)node) : aligned_alloc(64, lines * 64);
    if (!buf) {
        fprintf(stderr, "%s: cannot allocate %llu bytes\n", prog, (unsigned long long)(lines * 64));
        return EXIT_ERR;
    }
    /* Touch every page first so the timed loop sees no page faults
     * (node_buffer has). */
    for (uint64_t i = 0; node < 0 && i < lines * 8; i++)
        buf[i] = i;
    if (walk)
        chase_init(buf, lines);

    /* The passes only, in another group: what the buffer's setup read and
     * dirtied stays the caller's group's. Several files are moved to in
     * turn: Linux moves a task into a monitoring group only from that
     * group's parent. */
    for (int t = 0; t < ntasks; t++)
        assoc = move_to(tasks[t]);

    /* Set up: `ready` says so. The passes start once start_on exists: a
     * program set up beforehand, with the simulation off, is the region of
     * interest from its first pass (polled every millisecond, asleep in
     * between). */
    if (ready) {
        int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fprintf(stderr, "%s: --ready %s: %s\n", prog, ready, strerror(errno));
            return EXIT_ERR;
        }
        close(fd);
    }
    while (start_on && access(start_on, F_OK) != 0)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    /* Or once SIGUSR1 comes, asleep in the kernel until then: the program
     * runs no instruction between `ready` and the signal, so a counter
     * attached in between (perf stat -p) counts exactly the passes. */
    int sig;
    if (start_sig)
        sigwait(&usr1, &sig);

    /* Line after line, all eight words of each (and each written back with
     * --write): a plain memory-bound loop; or with --chase one line after
     * another in the cycle's order, one word of each. */
    uint64_t sum = 0;
    double t0 = now();
    uint64_t done = 0;
    for (; done < passes && !(stop_on && access(stop_on, F_OK) == 0); done++) {
        if (walk)
            sum += chase(buf, lines);
        else if (write)
            sum += stream_rw(buf, lines);
        else
            sum += stream_read(buf, lines);
    }
    double secs = now() - t0;
    stream_sink = sum;
    /* The chase reads one word of each line, but the line is what moves. */
    uint64_t bytes = lines * 64 * done * (write ? 2 : 1);
    printf("bytes=%llu seconds=%.6f MBps=%.1f", (unsigned long long)bytes, secs,
           secs > 0 ? bytes / secs / 1e6 : 0.0);
    if (node >= 0)
        printf(" node=%d", node); /* every page checked there */
    if (assoc != UINT64_MAX)
        printf(" assoc=0x%llx", (unsigned long long)assoc);
    printf("\n");
    if (node >= 0)
        munmap(buf, lines * 64);
    else
        free(buf);
    return 0;
}

/* Waits (a few seconds at most) until a terminal has sent what was written
 * to it, so that powering off does not cut the end of the output. */
static void drain(int fd)
{
    alarm(5);
    tcdrain(fd);
    alarm(0);
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* Ends the VM with STATUS, in each of the two ways a launcher may listen:
 * - "qosim-status STATUS" on the second serial port, which `qosim vm` sends
 *   to a file, followed by an ACPI power-off (QEMU exits 0);
 * - QEMU's isa-debug-exit device at port 0xf4, when QEMU has one: QEMU exits
 *   at once with (STATUS << 1) | 1, of which its parent sees the low 8 bits.
 * A port or device that is absent is skipped silently. */
static int cmd_exit(int argc, char **argv)
{
    if (argc != 2) {
        usage(stderr);
        return EXIT_ERR;
    }
    uint32_t status = parse_num("STATUS", argv[1], 255);
    /* Run by mistake on a host, this would power the host off. */
    if (access(GUEST_MARK, F_OK) != 0) {
        fprintf(stderr, "%s: %s missing: not the qosim guest, not powering off\n", prog,
                GUEST_MARK);
        return EXIT_ERR;
    }
    /* tcdrain is only interrupted, not the program ended, by the alarm. */
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    sync();
    int con = open("/dev/console", O_WRONLY | O_NOCTTY | O_NONBLOCK);
    if (con >= 0)
        drain(con);
    int s1 = open("/dev/ttyS1", O_WRONLY | O_NOCTTY | O_NONBLOCK);
    if (s1 >= 0) {
        dprintf(s1, "qosim-status %u\n", status);
        drain(s1);
    }
    if (ioperm(DEBUG_EXIT_PORT, 4, 1) == 0)
        outl(status, DEBUG_EXIT_PORT);
    /* Still here: QEMU has no isa-debug-exit device. The kernel announces
     * the power-off at the emergency level, which even `quiet` shows; a
     * command's output should end with what the command wrote. */
    int pk = open("/proc/sys/kernel/printk", O_WRONLY);
    if (pk >= 0) {
        dprintf(pk, "0\n");
        close(pk);
    }
    reboot(RB_POWER_OFF);
    fprintf(stderr, "%s: cannot power off: %s\n", prog, strerror(errno));
    return EXIT_ERR;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_ERR;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "rdmsr"))
        return cmd_rdmsr(argc - 1, argv + 1);
    if (!strcmp(cmd, "wrmsr"))
        return cmd_wrmsr(argc - 1, argv + 1);
    if (!strcmp(cmd, "msrfuzz"))
        return cmd_msrfuzz(argc - 1, argv + 1);
    if (!strcmp(cmd, "cpuid"))
        return cmd_cpuid(argc - 1, argv + 1);
    if (!strcmp(cmd, "stream"))
        return cmd_stream(argc - 1, argv + 1);
    if (!strcmp(cmd, "sim"))
        return cmd_sim(argc - 1, argv + 1);
    if (!strcmp(cmd, "exit"))
        return cmd_exit(argc - 1, argv + 1);
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        usage(stdout);
        return 0;
    }
    bad_arg("command", cmd);
}
