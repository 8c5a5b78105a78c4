/* qosim trace record: any real program becomes a trace with one command. The
 * program runs under valgrind's lackey tool; its log arrives through a pipe
 * and is written (plain or .xz) to a temporary file that is renamed into
 * place only when the recording succeeded. */
#include "cli.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define REC_CHUNK (1u << 20)

static const char trace_help[] =
    "usage: qosim trace record [-o FILE] -- PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM under valgrind --tool=lackey --trace-mem=yes and writes its\n"
    "memory trace to FILE (default: PROGRAM's base name + .lackey). A FILE\n"
    "ending in .xz is compressed. Replay it with 'qosim cachesim FILE'.\n"
    "The environment variable QOSIM_VALGRIND names another valgrind binary.\n";

/* The valgrind to run: $QOSIM_VALGRIND, or the first on PATH; NULL if none. */
static char *find_valgrind(void)
{
    const char *env = getenv("QOSIM_VALGRIND");
    if (env && *env)
        return access(env, X_OK) ? NULL : strdup(env);
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    for (const char *p = path; *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        char buf[4096];
        if (n && n < sizeof buf - 10) {
            snprintf(buf, sizeof buf, "%.*s/valgrind", (int)n, p);
            if (!access(buf, X_OK))
                return strdup(buf);
        }
        p += n + (c != NULL);
    }
    return NULL;
}

struct sink {
    int fd, xz;
    lzma_stream lz;
    uint8_t out[REC_CHUNK];
};

static int sink_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int sink_put(struct sink *s, const uint8_t *p, size_t n, lzma_action act)
{
    if (!s->xz)
        return sink_write_all(s->fd, p, n);
    s->lz.next_in = p;
    s->lz.avail_in = n;
    for (;;) {
        s->lz.next_out = s->out;
        s->lz.avail_out = sizeof s->out;
        lzma_ret r = lzma_code(&s->lz, act);
        if (r != LZMA_OK && r != LZMA_STREAM_END)
            return -1;
        if (sink_write_all(s->fd, s->out, sizeof s->out - s->lz.avail_out))
            return -1;
        if (act == LZMA_FINISH ? r == LZMA_STREAM_END : !s->lz.avail_in)
            return 0;
    }
}

static int trace_record(int argc, char **argv)
{
    const char *out = NULL;
    int i = 1;
    for (; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(trace_help, stdout);
            return 0;
        }
        if ((v = cli_optval(argc, argv, &i, "-o", &missing)) ||
            (v = cli_optval(argc, argv, &i, "--output", &missing))) {
            if (missing || !*v) {
                cli_error("trace", "-o needs a file name");
                return 2;
            }
            out = v;
        } else if (argv[i][0] == '-') {
            cli_error("trace", "unknown option '%s' (see qosim trace --help)", argv[i]);
            return 2;
        } else {
            break;
        }
    }
    if (i >= argc) {
        cli_error("trace", "no program to record (usage: qosim trace record [-o FILE] -- "
                           "PROGRAM [ARGS...])");
        return 2;
    }
    char **prog = argv + i;
    char *vg = find_valgrind();
    if (!vg) {
        cli_error("trace", "valgrind not found (looked in $QOSIM_VALGRIND and PATH); install it "
                           "with 'apt-get install valgrind'");
        return 1;
    }
    char defname[4096], tmp[4200];
    if (!out) {
        const char *base = strrchr(prog[0], '/');
        snprintf(defname, sizeof defname, "%s.lackey", base ? base + 1 : prog[0]);
        out = defname;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    size_t olen = strlen(out);
    static struct sink s;
    s.xz = olen > 3 && !strcmp(out + olen - 3, ".xz");
    s.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s.fd < 0) {
        cli_error("trace", "cannot create %s: %s", tmp, strerror(errno));
        free(vg);
        return 1;
    }
    lzma_stream init = LZMA_STREAM_INIT;
    s.lz = init;
    if (s.xz && lzma_easy_encoder(&s.lz, 1, LZMA_CHECK_CRC64) != LZMA_OK) {
        cli_error("trace", "cannot set up the .xz encoder");
        close(s.fd);
        unlink(tmp);
        free(vg);
        return 1;
    }

    int p[2];
    if (pipe(p)) {
        cli_error("trace", "pipe: %s", strerror(errno));
        close(s.fd);
        unlink(tmp);
        free(vg);
        return 1;
    }
    char logfd[32];
    snprintf(logfd, sizeof logfd, "--log-fd=%d", p[1]);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        int n = argc - i;
        char **av = calloc((size_t)n + 6, sizeof *av);
        if (!av)
            _exit(127);
        av[0] = vg;
        av[1] = "--tool=lackey";
        av[2] = "--trace-mem=yes";
        av[3] = logfd;
        av[4] = "--";
        memcpy(av + 5, prog, (size_t)n * sizeof *av);
        execv(vg, av);
        fprintf(stderr, "qosim trace: cannot run %s: %s\n", vg, strerror(errno));
        _exit(127);
    }
    close(p[1]);
    if (pid < 0) {
        cli_error("trace", "fork: %s", strerror(errno));
        close(p[0]);
        close(s.fd);
        unlink(tmp);
        free(vg);
        return 1;
    }

    static uint8_t buf[REC_CHUNK];
    int werr = 0, saw = 0;
    uint64_t bytes = 0;
    char last = '\n';
    for (;;) {
        ssize_t r = read(p[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        /* A record line starts with "I  " or " L"/" S"/" M" after a newline. */
        for (ssize_t k = 0; !saw && k < r; k++) {
            if (last == '\n' && (buf[k] == 'I' || buf[k] == ' '))
                saw = 1;
            last = (char)buf[k];
        }
        bytes += (uint64_t)r;
        if (!werr && sink_put(&s, buf, (size_t)r, LZMA_RUN))
            werr = errno ? errno : EIO;
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!werr && s.xz && sink_put(&s, NULL, 0, LZMA_FINISH))
        werr = errno ? errno : EIO;
    if (s.xz)
        lzma_end(&s.lz);
    if (close(s.fd) && !werr)
        werr = errno;
    free(vg);

    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (werr || !saw) {
        unlink(tmp);
        if (werr)
            cli_error("trace", "cannot write %s: %s", out, strerror(werr));
        else
            cli_error("trace",
                      "valgrind recorded nothing for '%s' (exit status %d); see its "
                      "message above",
                      prog[0], code);
        return 1;
    }
    if (rename(tmp, out)) {
        cli_error("trace", "cannot rename %s to %s: %s", tmp, out, strerror(errno));
        unlink(tmp);
        return 1;
    }
    fprintf(stderr, "qosim trace: recorded '%s' into %s (%.1f MiB of trace%s)\n", prog[0], out,
            bytes / 1048576.0, s.xz ? ", xz-compressed" : "");
    if (code)
        fprintf(stderr, "qosim trace: note: '%s' exited with status %d; the trace is kept\n",
                prog[0], code);
    return 0;
}

int cli_trace(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(trace_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "record"))
        return trace_record(argc - 1, argv + 1);
    cli_error("trace", "unknown subcommand '%s' (record)", argv[1]);
    return 2;
}
