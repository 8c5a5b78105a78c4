#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const gnuplot_colour[16] = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#000000", "#b5b800", "#ff00ff", "#008080", "#800000", "#000080", "#7fd13b", "#a0a0a0"};

int gnuplot_png(const struct ofile *o)
{
    size_t n = strlen(o->path);
    return n > 4 && !strcmp(o->path + n - 4, ".png");
}

void gnuplot_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        fprintf(f, *s == '\'' ? "''" : "%c", *s);
    fputc('\'', f);
}

int gnuplot_run(struct ofile *o, const char *opt, void (*prog)(FILE *f, void *ctx), void *ctx,
                struct err *e)
{
    const char *gp = getenv("QOSIM_GNUPLOT") ? getenv("QOSIM_GNUPLOT") : "gnuplot";
    int p[2];
    /* What the process buffered for standard output goes before the plot
     * when the plot goes there too, and is not written twice by the child. */
    fflush(stdout);
    if (pipe2(p, O_CLOEXEC))
        return err_set(e, -QOSIM_EIO, "cannot start gnuplot: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(p[0], 0) < 0 || dup2(o->fd, 1) < 0)
            _exit(127);
        execl("/bin/sh", "sh", "-c", gp, (char *)NULL);
        _exit(127);
    }
    int en = errno;
    close(p[0]);
    FILE *g = pid < 0 ? NULL : fdopen(p[1], "w");
    if (!g) {
        en = pid < 0 ? en : errno;
        close(p[1]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return err_set(e, -QOSIM_EIO, "cannot start gnuplot: %s", strerror(en));
    }
    /* A plotter that dies early must not kill qosim with SIGPIPE: its exit
     * status says what happened, and the output must be dropped. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    prog(g, ctx);
    fclose(g);
    sigaction(SIGPIPE, &old, NULL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (st == 0)
        return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        return err_set(e, -QOSIM_ENOTOOL,
                       "%s needs gnuplot, which was not found (apt-get install gnuplot-nox)", opt);
    return err_set(e, -QOSIM_ECHILD, "gnuplot failed to draw %s", o->path);
}
