/* qosim: the command line. */
#include "cli.h"

#include "qosim.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cli_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "qosim %s: ", sub);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *cli_optval(int argc, char **argv, int *i, const char *name, int *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n))
        return NULL;
    if (a[n] == '=' && a[n + 1])
        return a + n + 1;
    if (a[n] == '=' || (!a[n] && (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)))) {
        *missing = 1;
        return NULL;
    }
    if (a[n])
        return NULL;
    return argv[++*i];
}

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *what;
} cli_cmds[] = {
    {"cachesim", cli_cachesim, "replay a memory trace through caches (cachegrind-exact)"},
    {"trace", cli_trace, "record a real program's memory trace with valgrind"},
    {"run", cli_run, "run a scenario on a simulated platform (docs/scenarios.md)"},
    {"profiles", cli_profiles, "list the shipped platform profiles, or check or show one"},
    {"regs", cli_regs, "a console for the QoS registers: MSRs, CBQRI MMIO (docs/regs.md)"},
    {"lwp", cli_lwp, "profile a workload with AMD Lightweight Profiling (docs/lwp.md)"},
    {"vm", cli_vm,
     "boot Linux in QEMU on a simulated platform's registers and caches (docs/vm.md)"},
    {"sweep", cli_sweep, "run a scenario over axes of settings, here or on SLURM (docs/sweeps.md)"},
};

static void cli_usage(FILE *f)
{
    fprintf(f, "usage: qosim COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cli_cmds / sizeof cli_cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", cli_cmds[i].name, cli_cmds[i].what);
    fprintf(f, "\n'qosim COMMAND --help' describes each; 'qosim --version' prints the version.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        cli_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("qosim %s\n", QOSIM_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof cli_cmds / sizeof cli_cmds[0]; i++)
        if (!strcmp(argv[1], cli_cmds[i].name))
            return cli_cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "qosim: unknown command '%s'\n", argv[1]);
    cli_usage(stderr);
    return 2;
}
