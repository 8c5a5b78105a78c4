/* qosim regs: a register console for the x86 QoS model. One command per
 * line, one output line per command, so a script and its output line up:
 *   cpuid LEAF [SUBLEAF] [cpu N]   eax=0x... ebx=0x... ecx=0x... edx=0x...
 *   rdmsr CPU MSR                  0x%016x or #GP
 *   wrmsr CPU MSR VALUE            ok or #GP
 *   run NS                         ok, after NS ns of the scenario's tasks
 * A malformed command prints "error: line N: ..." and the console goes on. */
#include "cli.h"

#include "hw/x86.h"
#include "sim/run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: qosim regs [--platform NAME|FILE | --scenario FILE] [SCRIPT|-]\n"
    "A console for the x86 QoS registers (docs/regs.md). Reads commands from SCRIPT or\n"
    "standard input, one per line ('#' starts a comment), numbers decimal or 0x-hex:\n"
    "  cpuid LEAF [SUBLEAF] [cpu N]   prints eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n"
    "  rdmsr CPU MSR                  prints the value as 0x%016x, or #GP\n"
    "  wrmsr CPU MSR VALUE            prints ok or #GP\n"
    "  run NS                         runs the scenario's tasks for NS nanoseconds; prints ok\n"
    "The platform is intel-xeon unless --platform or the scenario names another.\n";

struct console {
    struct x86 x;
    struct mach own; /* the machine when there is no scenario */
    struct run run;
    int has_run;
    uint64_t now; /* ticks */
};

/* The scheduler's context switch, as an OS does it: the incoming task's
 * class and RMID go into PQR_ASSOC (SDM 17.19.2 usage flow). A value the
 * registers refuse leaves the CPU in COS 0, RMID 0. */
static void switch_hook(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct console *c = ctx;
    s->m->cpu[cpu].task = task; /* ground truth follows the task */
    uint64_t v = 0;
    if (task >= 0)
        v = HW_FSET(HW_FSET(0, PQR_ASSOC, COS, s->task[task].cls), PQR_ASSOC, RMID,
                    s->task[task].tag);
    if (x86_wrmsr(&c->x, cpu, X86_PQR_ASSOC, v) != HW_OK)
        x86_wrmsr(&c->x, cpu, X86_PQR_ASSOC, 0);
}

/* A number: decimal or 0x-hex, no sign, no overflow. */
static int num(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
    if (*end || errno || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Runs one command; writes its one output line to out. */
static void command(struct console *c, char **w, int n, unsigned line, FILE *out, int *errors)
{
    char err[600] = "";
    uint64_t a = 0, b = 0, v = 0;
    unsigned ncpu = c->x.m->ncpu;
    if (!strcmp(w[0], "cpuid")) {
        uint64_t cpu = 0;
        int k = n;
        if (n >= 3 && !strcmp(w[n - 2], "cpu")) {
            k = n - 2;
            if (num(w[n - 1], UINT32_MAX, &cpu) || cpu >= ncpu)
                snprintf(err, sizeof err, "cpu '%s': expected a CPU number 0..%u", w[n - 1],
                         ncpu - 1);
        }
        if (!*err && (k < 2 || k > 3))
            snprintf(err, sizeof err, "usage: cpuid LEAF [SUBLEAF] [cpu N]");
        else if (!*err && (num(w[1], UINT32_MAX, &a) || (k == 3 && num(w[2], UINT32_MAX, &b))))
            snprintf(err, sizeof err, "leaf and subleaf are 32-bit numbers");
        if (!*err) {
            uint32_t r[4];
            x86_cpuid(&c->x, (unsigned)cpu, (uint32_t)a, (uint32_t)b, r);
            fprintf(out, "eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n", r[0], r[1], r[2], r[3]);
            return;
        }
    } else if (!strcmp(w[0], "rdmsr") || !strcmp(w[0], "wrmsr")) {
        int wr = w[0][0] == 'w';
        if (n != (wr ? 4 : 3))
            snprintf(err, sizeof err, "usage: %s", wr ? "wrmsr CPU MSR VALUE" : "rdmsr CPU MSR");
        else if (num(w[1], UINT32_MAX, &a) || a >= ncpu)
            snprintf(err, sizeof err, "CPU '%s': expected a CPU number 0..%u", w[1], ncpu - 1);
        else if (num(w[2], UINT32_MAX, &b))
            snprintf(err, sizeof err, "MSR '%s': expected a 32-bit number", w[2]);
        else if (wr && num(w[3], UINT64_MAX, &v))
            snprintf(err, sizeof err, "value '%s': expected a 64-bit number", w[3]);
        if (!*err) {
            enum hw_fault f = wr ? x86_wrmsr(&c->x, (unsigned)a, (uint32_t)b, v)
                                 : x86_rdmsr(&c->x, (unsigned)a, (uint32_t)b, &v);
            if (f != HW_OK)
                fprintf(out, "%s\n", hw_fault_name(f));
            else if (wr)
                fputs("ok\n", out);
            else
                fprintf(out, "0x%016llx\n", (unsigned long long)v);
            return;
        }
    } else if (!strcmp(w[0], "run")) {
        if (n != 2 || num(w[1], 1000000000000ull, &a))
            snprintf(err, sizeof err, "usage: run NS (nanoseconds, up to 1000 s)");
        else {
            c->now += (uint64_t)(a * 1e-9 * c->x.m->ticks_per_sec + 0.5);
            struct err e;
            if (c->has_run && sched_run(&c->run.sch, c->now, &e)) {
                snprintf(err, sizeof err, "the run failed: %s", e.msg);
            } else {
                fputs("ok\n", out);
                return;
            }
        }
    } else {
        snprintf(err, sizeof err, "unknown command '%s' (cpuid, rdmsr, wrmsr, run)", w[0]);
    }
    fprintf(out, "error: line %u: %s\n", line, err);
    (*errors)++;
}

static int console_run(struct console *c, FILE *in, FILE *out)
{
    char buf[1024];
    unsigned line = 0;
    int errors = 0;
    while (fgets(buf, sizeof buf, in)) {
        line++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            int ch;
            while ((ch = fgetc(in)) != EOF && ch != '\n')
                ;
            fprintf(out, "error: line %u: line longer than %zu characters\n", line, sizeof buf - 2);
            errors++;
            continue;
        }
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *w[8], *save = NULL;
        int n = 0;
        for (char *t = strtok_r(buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
            if (n < 8)
                w[n++] = t;
            else
                n = 9;
        if (n == 0)
            continue;
        if (n > 8) {
            fprintf(out, "error: line %u: too many words\n", line);
            errors++;
            continue;
        }
        command(c, w, n, line, out, &errors);
        fflush(out);
    }
    if (ferror(in)) {
        cli_error("regs", "cannot read the script: %s", strerror(errno));
        return 1;
    }
    return errors ? 1 : 0;
}

int cli_regs(int argc, char **argv)
{
    const char *plat = NULL, *scen = NULL, *script = NULL;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if ((v = cli_optval(argc, argv, &i, "--platform", &missing)))
            plat = v;
        else if ((v = cli_optval(argc, argv, &i, "--scenario", &missing)))
            scen = v;
        else if (missing) {
            cli_error("regs", "%s needs a value", argv[i]);
            return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("regs", "unknown option '%s'\n%s", argv[i], usage);
            return 2;
        } else if (script) {
            cli_error("regs", "one script at a time ('%s' and '%s')", script, argv[i]);
            return 2;
        } else
            script = argv[i];
    }
    if (plat && scen) {
        cli_error("regs", "--platform and --scenario both name a platform: give one");
        return 2;
    }
    FILE *in = stdin;
    if (script && strcmp(script, "-") && !(in = fopen(script, "r"))) {
        cli_error("regs", "%s: cannot open: %s", script, strerror(errno));
        return 2;
    }
    static struct console c;
    static struct scen s;
    struct err e;
    int rc;
    memset(&c, 0, sizeof c);
    if (scen) {
        if ((rc = scen_load(&s, scen, &e)) == 0 && (rc = run_init(&c.run, &s, &e)) == 0) {
            c.has_run = 1;
            rc = x86_init(&c.x, &c.run.m, &e);
            c.run.sch.on_switch = switch_hook;
            c.run.sch.ctx = &c;
        }
    } else {
        struct plat p;
        if ((rc = plat_load(&p, plat ? plat : "intel-xeon", &e)) == 0 &&
            (rc = mach_init(&c.own, &p, 0, &e)) == 0)
            rc = x86_init(&c.x, &c.own, &e);
    }
    int status = 2;
    if (rc)
        cli_error("regs", "%s", e.msg);
    else
        status = console_run(&c, in, stdout);
    if (in != stdin)
        fclose(in);
    x86_free(&c.x);
    if (c.has_run)
        run_free(&c.run);
    if (scen)
        scen_free(&s);
    if (c.own.cpu)
        mach_free(&c.own);
    return status;
}
