#include "live.h"
#include "live_ring.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* QEMU hands the guest randomness from this seed, the same every run. */
#define LIVE_SEED "1"
/* The descriptor the plugin finds the ring on. */
#define LIVE_FD 3

struct live {
    struct live_ring *ring;
    size_t map_len;
    uint64_t mask, tail, records;
    pid_t pid;
    int status; /* waitpid's, once reaped */
    int reaped, ended, failed, group;
    char why[128];
    char label[400]; /* "task gzip: " or "" */
};

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

const char *live_plugin(void)
{
    static char path[4096];
    const char *env = getenv("QOSIM_PLUGIN");
    if (env && *env)
        return access(env, R_OK) ? NULL : env;
    if (path_beside_exe("qemu/qosim-plugin.so", path, sizeof path))
        return NULL;
    return access(path, R_OK) ? NULL : path;
}

static const char *live_qemu(char *out, size_t cap)
{
    const char *env = getenv("QOSIM_QEMU");
    if (env && *env)
        return access(env, X_OK) ? NULL : env;
    return path_which("qemu-x86_64", out, cap) ? NULL : out;
}

int live_check(const char *name, char *prog, size_t cap, struct err *e)
{
    char q[4096];
    if (!live_qemu(q, sizeof q))
        return err_set(e, -QOSIM_ENOENT,
                       "QEMU's user-mode emulator qemu-x86_64 not found (looked in $QOSIM_QEMU "
                       "and PATH); install it with 'apt-get install qemu-user'");
    if (!live_plugin())
        return err_set(e, -QOSIM_ENOENT,
                       "the qosim QEMU plugin is not built (looked in $QOSIM_PLUGIN and "
                       "qemu/qosim-plugin.so beside the qosim binary); run 'make'");
    if (!*name)
        return err_set(e, -QOSIM_EINVAL, "the program's name is empty");
    if (path_which(name, prog, cap))
        return err_set(e, -QOSIM_ENOENT, "program '%s' not found%s", name,
                       strchr(name, '/') ? " or not executable" : " on PATH");
    /* The emulator runs x86-64 ELF executables only: say so here, not
     * through QEMU's message after the run has started. */
    unsigned char h[20] = {0};
    int fd = open(prog, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, h, sizeof h);
    if (fd >= 0)
        close(fd);
    if (got < 0)
        return err_set(e, -QOSIM_EIO, "program '%s': cannot read %s: %s", name, prog,
                       strerror(errno));
    if (h[0] == '#' && h[1] == '!')
        return err_set(e, -QOSIM_EINVAL,
                       "program '%s' is a script; name its interpreter first (for example "
                       "[sh, %s])",
                       name, prog);
    if (got < 20 || memcmp(h, "\177ELF", 4) || h[4] != 2 || h[5] != 1 || h[18] != 62 || h[19])
        return err_set(e, -QOSIM_EINVAL, "program '%s' (%s) is not an x86-64 ELF executable", name,
                       prog);
    return 0;
}

/* The child: the ring on LIVE_FD, its standard input and output, the same
 * address space layout every run, and no life beyond qosim's. */
static void live_child(const struct live_opts *o, int ringfd, const char *qemu, const char *plugin,
                       const char *prog, pid_t parent)
{
    if (o->own_group)
        setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    int null = open("/dev/null", O_RDWR);
    int in = o->in_fd >= 0 ? o->in_fd : null, out = o->out_fd >= 0 ? o->out_fd : null;
    if (null < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
        (ringfd != LIVE_FD && dup2(ringfd, LIVE_FD) < 0))
        _exit(127);
    fcntl(LIVE_FD, F_SETFD, 0);
    if (o->dir && chdir(o->dir)) {
        fprintf(stderr, "qosim: cannot enter %s: %s\n", o->dir, strerror(errno));
        _exit(127);
    }
    /* As a shell's cd would: the environment, and so the guest's stack,
     * is then the same wherever qosim was started. */
    char cwd[PATH_MAX];
    if (o->dir && getcwd(cwd, sizeof cwd))
        setenv("PWD", cwd, 1);
    personality(ADDR_NO_RANDOMIZE);
    char parg[4200];
    snprintf(parg, sizeof parg, "%s,ring=%d", plugin, LIVE_FD);
    size_t n = 0;
    while (o->argv[n])
        n++;
    char **av = calloc(n + 8, sizeof *av);
    if (!av)
        _exit(127);
    av[0] = (char *)qemu;
    av[1] = "-seed";
    av[2] = LIVE_SEED;
    av[3] = "-plugin";
    av[4] = parg;
    /* The guest sees its name as it was written, as a shell would give it. */
    av[5] = "-0";
    av[6] = o->argv[0];
    av[7] = (char *)prog;
    for (size_t i = 1; i < n; i++)
        av[7 + i] = o->argv[i];
    execv(qemu, av);
    fprintf(stderr, "qosim: cannot run %s: %s\n", qemu, strerror(errno));
    _exit(127);
}

int live_start(struct live **out, const struct live_opts *o, struct err *e)
{
    *out = NULL;
    char prog[4096], qemu[4096];
    int rc = live_check(o->argv[0], prog, sizeof prog, e);
    if (rc)
        return rc;
    /* The child changes directory before QEMU opens the program. */
    char abs[PATH_MAX];
    if (realpath(prog, abs))
        snprintf(prog, sizeof prog, "%s", abs);
    const char *plugin = live_plugin(), *q = live_qemu(qemu, sizeof qemu);
    uint64_t cap = o->ring ? o->ring : LIVE_RING;
    if (cap & (cap - 1))
        return err_set(e, -QOSIM_EINVAL, "ring of %llu records: not a power of two",
                       (unsigned long long)cap);
    struct live *l = calloc(1, sizeof *l);
    if (!l)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    l->map_len = sizeof *l->ring + cap * sizeof(struct trace_rec);
    int fd = memfd_create("qosim-ring", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)l->map_len)) {
        rc = err_set(e, -QOSIM_EIO, "cannot make the ring: %s", strerror(errno));
        goto fail;
    }
    l->ring = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (l->ring == MAP_FAILED) {
        l->ring = NULL;
        rc = err_set(e, -QOSIM_ENOMEM, "cannot map the ring: %s", strerror(errno));
        goto fail;
    }
    if (o->label)
        snprintf(l->label, sizeof l->label, "%s: ", o->label);
    l->ring->magic = LIVE_MAGIC;
    l->ring->cap = cap;
    l->mask = cap - 1;
    pid_t self = getpid();
    l->pid = fork();
    if (l->pid == 0)
        live_child(o, fd, q, plugin, prog, self);
    if (l->pid < 0) {
        rc = err_set(e, -QOSIM_EIO, "cannot start %s: %s", o->argv[0], strerror(errno));
        goto fail;
    }
    if (o->own_group)
        setpgid(l->pid, l->pid);
    l->group = o->own_group;
    close(fd);
    *out = l;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    if (l->ring)
        munmap(l->ring, l->map_len);
    free(l);
    return rc;
}

static void live_reap(struct live *l, int block)
{
    if (l->reaped)
        return;
    pid_t r;
    while ((r = waitpid(l->pid, &l->status, block ? 0 : WNOHANG)) < 0 && errno == EINTR)
        ;
    if (r == l->pid)
        l->reaped = 1;
}

/* The program is gone or done: say how. */
static long live_end(struct live *l, struct err *e)
{
    struct live_ring *g = l->ring;
    uint32_t st = __atomic_load_n(&g->state, __ATOMIC_ACQUIRE);
    live_reap(l, 1);
    l->ended = 1;
    if (st == LIVE_FAIL) {
        l->failed = 1;
        g->msg[sizeof g->msg - 1] = '\0';
        snprintf(l->why, sizeof l->why, "refused");
        return err_set(e, -QOSIM_EINVAL, "%s%s", l->label, g->msg);
    }
    int s = l->status;
    if (WIFSIGNALED(s))
        snprintf(l->why, sizeof l->why, "killed by signal %d (%s)", WTERMSIG(s),
                 strsignal(WTERMSIG(s)));
    else
        snprintf(l->why, sizeof l->why, "exited with status %d", WEXITSTATUS(s));
    if (!l->records) {
        /* No instruction ever ran: QEMU or the loader refused the program,
         * and said why on standard error. */
        l->failed = 1;
        return err_set(e, -QOSIM_EINVAL,
                       "%sthe program did not start (the emulator %s before its first "
                       "instruction; see its message above)",
                       l->label, l->why);
    }
    return 0;
}

long live_read(struct live *l, struct trace_rec *r, size_t n, struct err *e)
{
    struct live_ring *g = l->ring;
    if (l->ended)
        return l->failed ? err_set(e, -QOSIM_EINVAL, "%sthe program %s", l->label, l->why) : 0;
    for (unsigned spin = 0;; spin++) {
        uint64_t head = __atomic_load_n(&g->head, __ATOMIC_SEQ_CST);
        if (head != l->tail) {
            uint64_t k = head - l->tail < n ? head - l->tail : n;
            uint64_t at = l->tail & l->mask, first = l->mask + 1 - at < k ? l->mask + 1 - at : k;
            memcpy(r, g->rec + at, first * sizeof *r);
            memcpy(r + first, g->rec, (k - first) * sizeof *r);
            l->tail += k;
            l->records += k;
            __atomic_store_n(&g->tail, l->tail, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&g->prod_waits, __ATOMIC_SEQ_CST) && l->tail >= g->prod_need) {
                __atomic_add_fetch(&g->tail_seq, 1, __ATOMIC_SEQ_CST);
                futex(&g->tail_seq, FUTEX_WAKE, 1, NULL);
            }
            return (long)k;
        }
        if (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) != LIVE_RUN) {
            if (__atomic_load_n(&g->head, __ATOMIC_SEQ_CST) != l->tail)
                continue; /* the last records, published before the state */
            return live_end(l, e);
        }
        if (l->reaped) /* died without a word: a signal, or it never started */
            return live_end(l, e);
        if (spin < 256) {
            __builtin_ia32_pause();
            continue;
        }
        uint32_t seq = __atomic_load_n(&g->head_seq, __ATOMIC_SEQ_CST);
        __atomic_store_n(&g->cons_waits, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&g->head, __ATOMIC_SEQ_CST) == l->tail &&
            __atomic_load_n(&g->state, __ATOMIC_SEQ_CST) == LIVE_RUN) {
            struct timespec ts = {0, LIVE_POLL_MS * 1000000L};
            if (futex(&g->head_seq, FUTEX_WAIT, seq, &ts) && errno == ETIMEDOUT)
                live_reap(l, 0);
        }
        __atomic_store_n(&g->cons_waits, 0, __ATOMIC_SEQ_CST);
        spin = 0;
    }
}

const char *live_why(const struct live *l)
{
    return l->ended ? l->why : "still running";
}

int live_status(const struct live *l)
{
    return l->ended && !l->failed && WIFEXITED(l->status) ? WEXITSTATUS(l->status) : -1;
}

uint64_t live_records(const struct live *l)
{
    return l->records;
}

int live_pid(const struct live *l)
{
    return l->pid;
}

void live_stop(struct live *l)
{
    if (!l)
        return;
    if (!l->reaped) {
        kill(l->group ? -l->pid : l->pid, SIGKILL);
        live_reap(l, 1);
    }
    munmap(l->ring, l->map_len);
    free(l);
}
