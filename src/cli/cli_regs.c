/* qosim regs: a register console for the x86 QoS model. One command per
 * line, one output line per command, so a script and its output line up:
 *   cpuid LEAF [SUBLEAF] [cpu N]   eax=0x... ebx=0x... ecx=0x... edx=0x...
 *   rdmsr CPU MSR                  0x%016x or #GP
 *   wrmsr CPU MSR VALUE            ok or #GP
 *   run NS                         ok, after NS ns of the scenario's tasks
 * A malformed command prints "error: line N: ..." and the console goes on. */
#include "cli.h"

#include "drv/qos.h"
#include "hw/x86_console.h"
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
    struct qos q;    /* a scenario's qos section, through the driver */
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
    uint64_t v = 0;
    if (task >= 0)
        v = HW_FSET(HW_FSET(0, PQR_ASSOC, COS, s->task[task].cls), PQR_ASSOC, RMID,
                    s->task[task].tag);
    if (x86_wrmsr(&c->x, cpu, X86_PQR_ASSOC, v) != HW_OK)
        x86_wrmsr(&c->x, cpu, X86_PQR_ASSOC, 0);
}

static int run_ns(void *ctx, uint64_t ns, struct err *e)
{
    struct console *c = ctx;
    c->now += (uint64_t)((double)ns * 1e-9 * c->x.m->ticks_per_sec + 0.5);
    return c->has_run ? sched_run(&c->run.sch, c->now, e) : 0;
}

static int console_run(struct console *c, FILE *in, FILE *out)
{
    struct x86_console k = {.x = &c->x, .run = run_ns, .ctx = c};
    char buf[1024];
    while (fgets(buf, sizeof buf, in)) {
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            int ch;
            while ((ch = fgetc(in)) != EOF && ch != '\n')
                ;
            fprintf(out, "error: line %u: line longer than %zu characters\n", ++k.line,
                    sizeof buf - 2);
            k.errors++;
            continue;
        }
        x86_console_line(&k, buf, out);
        fflush(out);
    }
    if (ferror(in)) {
        cli_error("regs", "cannot read the script: %s", strerror(errno));
        return 1;
    }
    return k.errors ? 1 : 0;
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
            if (!rc && s.qos.present) { /* the driver's groups and its context switch */
                struct hw_x86_if ri;
                x86_regif(&c.x, &ri);
                rc = qos_init(&c.q, &ri, &c.run, &e);
            }
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
    if (c.q.run)
        qos_free(&c.q);
    x86_free(&c.x);
    if (c.has_run)
        run_free(&c.run);
    if (scen)
        scen_free(&s);
    if (c.own.cpu)
        mach_free(&c.own);
    return status;
}
