/* qosim regs: a register console for the platform's QoS model, one command
 * per line and one output line per command, so a script and its output
 * line up. The platform's vendor picks the console:
 *   x86 (src/hw/x86_console.c), over the CPUID and MSR model:
 *     cpuid LEAF [SUBLEAF] [cpu N]   eax=0x... ebx=0x... ecx=0x... edx=0x...
 *     rdmsr CPU MSR                  0x%016x or #GP
 *     wrmsr CPU MSR VALUE            ok or #GP
 *     llwpcb CPU ADDR / slwpcb CPU   AMD LWP as the console's process runs them
 *     mem read32|read64|write32|write64|map ...   that process's memory
 *   RISC-V (src/hw/cbqri_console.c), over the CBQRI model:
 *     mmio read32|read64 ADDR [hart N]          0x%08x / 0x%016x or fault
 *     mmio write32|write64 ADDR VALUE [hart N]  ok or fault
 *     csr read HART CSR                         XLEN bits in hex, illegal or virtual
 *     csr write HART CSR VALUE                  ok, illegal or virtual
 *       (CSR: sqoscfg on the 2023 draft; srmcfg, mstateen0 on CBQRI 1.0)
 *     mode HART M|S|U|VS|VU|secure-M            ok
 *   both:
 *     run NS                         ok, after NS ns of the scenario's tasks
 * A malformed command prints "error: line N: ..." and the console goes on.
 * With a scenario, the scheduler's context switch writes the incoming
 * task's identifiers into the association register -- PQR_ASSOC, or
 * sqoscfg / srmcfg in S-mode -- as an OS does (on CBQRI 1.0, after the
 * firmware's M-mode side set mstateen0 bit 55 where harts have it). */
#include "cli.h"

#include "cli_qos.h"

#include "hw/cbqri_console.h"
#include "hw/lwp.h"
#include "hw/x86_console.h"
#include "drv/qos_scen.h"
#include "sim/scen/run.h"
#include "util/usock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: qosim regs [--platform NAME|FILE | --scenario FILE | --attach SOCKET] [SCRIPT|-]\n"
    "A console for the platform's QoS registers (docs/regs.md). Reads commands from\n"
    "SCRIPT or standard input, one per line ('#' starts a comment), numbers decimal or\n"
    "0x-hex. --attach drives the model of a running guest (qosim vm --console SOCKET).\n"
    "On x86 platforms:\n"
    "  cpuid LEAF [SUBLEAF] [cpu N]   prints eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n"
    "  rdmsr CPU MSR                  prints the value as 0x%016x, or #GP\n"
    "  wrmsr CPU MSR VALUE            prints ok or #GP\n"
    "  llwpcb CPU ADDR                AMD LWP's LLWPCB at ring 3: prints ok, #UD or #PF\n"
    "  slwpcb CPU                     prints the LWPCB address as 0x%016x, #UD or #PF\n"
    "  mem read32|read64 ADDR         the console process's memory: 0x... or #PF\n"
    "  mem write32|write64 ADDR VALUE prints ok or #PF\n"
    "  mem map ADDR LEN [user|kernel] [rw|ro]   maps zeroed pages; prints ok\n"
    "On RISC-V platforms (CBQRI; accesses at the hart's privilege, M at first):\n"
    "  mmio read32|read64 ADDR [hart N]          prints 0x%08x or 0x%016x, or fault\n"
    "  mmio write32|write64 ADDR VALUE [hart N]  prints ok or fault (hart 0 by default)\n"
    "  csr read HART CSR                         prints the CSR in hex, or illegal or virtual\n"
    "  csr write HART CSR VALUE                  prints ok, or illegal or virtual\n"
    "    CSR: srmcfg (0x181) and mstateen0 (0x30c) on CBQRI 1.0; sqoscfg on the 2023 draft\n"
    "  mode HART M|S|U|VS|VU|secure-M            sets the hart's privilege; prints ok\n"
    "On both:\n"
    "  run NS                         runs the scenario's tasks for NS nanoseconds; prints ok\n"
    "The platform is intel-xeon unless --platform or the scenario names another.\n";

struct regs {
    int riscv;           /* the platform's vendor picks the model and console */
    struct mach *m;      /* the scenario's machine, or own */
    struct cli_qos h;    /* the model, and a scenario's qos section through the driver */
    struct lwp_proc pr;  /* x86: the current process, for LWP */
    struct core_obs obs; /* x86 with LWP: the unit watches the tasks retire */
    struct mach own;     /* the machine when there is no scenario */
    struct run run;
    int has_run;
    uint64_t now; /* ticks */
    struct x86_console xk;
    struct cbqri_console ck;
    /* Intel's PMU counts what the tasks run (pmu_switch): per CPU the task
     * on it, its ground truth when last counted, ticks short of a cycle;
     * and the switch hook the PMU's wraps. */
    int *pmu_task;
    struct mach_tstat *pmu_base;
    uint64_t *pmu_rem;
    sched_switch_fn pmu_inner;
    void *pmu_inner_ctx;
};

/* The scheduler's context switch, as an OS does it: the incoming task's
 * class and RMID go into PQR_ASSOC (SDM 17.19.2 usage flow). A value the
 * registers refuse leaves the CPU in COS 0, RMID 0. */
static void switch_hook(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct regs *c = ctx;
    uint64_t v = 0;
    if (task >= 0)
        v = HW_FSET(HW_FSET(0, PQR_ASSOC, COS, s->task[task].cls), PQR_ASSOC, RMID,
                    s->task[task].tag);
    if (x86_wrmsr(&c->h.x, cpu, X86_PQR_ASSOC, v) != HW_OK)
        x86_wrmsr(&c->h.x, cpu, X86_PQR_ASSOC, 0);
}

/* The same on RISC-V: the S-mode scheduler writes the incoming task's class
 * and tag into sqoscfg (draft 6.1) or srmcfg (1.0) as its RCID and MCID;
 * idle harts get 0. The fields are WARL: bits past the implemented ones
 * are dropped. */
static void cbqri_switch_hook(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct regs *c = ctx;
    uint64_t v = 0;
    if (task >= 0)
        v = HW_FSET(HW_FSET(0, SRMCFG, RCID, s->task[task].cls), SRMCFG, MCID, s->task[task].tag);
    cbqri_csr_write(&c->h.cb, cpu, CBQRI_S, cbqri_id_csr(&c->h.cb), v);
}

/* The PMU's counters (hw/x86_pmu.h) count the events of the task on cpu
 * since they were last counted, at user level: a scenario's tasks are
 * user-mode code. */
static void pmu_feed(struct regs *c, unsigned cpu)
{
    int t = c->pmu_task[cpu];
    if (t < 0)
        return;
    uint64_t ev[X86_PMU_NEV];
    x86_pmu_events(&c->pmu_base[cpu], &c->m->ts[t], &c->pmu_rem[cpu], ev);
    c->pmu_base[cpu] = c->m->ts[t];
    x86_pmu_count(&c->h.x, cpu, 0, ev);
}

/* Every context switch counts the outgoing task's events on that CPU,
 * then switches as the model or the driver does. */
static void pmu_switch(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct regs *c = ctx;
    pmu_feed(c, cpu);
    c->pmu_task[cpu] = task;
    if (task >= 0)
        c->pmu_base[cpu] = c->m->ts[task];
    c->pmu_inner(c->pmu_inner_ctx, s, cpu, task);
}

/* The tasks run until every CPU has reached t, never past hard (the next
 * time a setting acts; UINT64_MAX: none known), where each stops exactly. */
static int run_to(struct regs *c, uint64_t t, uint64_t hard, struct err *e)
{
    if (!c->has_run)
        return 0;
    return t >= hard ? sched_run(&c->run.sch, hard, e) : sched_pause(&c->run.sch, t, hard, e);
}

/* Time moves for the tasks and, with them, for the CBQRI controllers,
 * whose operations in progress complete as their time comes. A step's end
 * is observation: the tasks pause there without cutting a turn, so `run`
 * steps of any size give the same run (sched_pause); a register write
 * after a step acts where each CPU paused, within a quantum of the step's
 * end. A CBQRI operation that changes a limit takes effect at its time
 * exactly: the tasks stop there. */
static int run_ns(void *ctx, uint64_t ns, struct err *e)
{
    struct regs *c = ctx;
    c->now += (uint64_t)((double)ns * 1e-9 * c->m->ticks_per_sec + 0.5);
    if (!c->riscv) {
        int rc = run_to(c, c->now, UINT64_MAX, e);
        /* What ran so far is counted, so that the step's end reads it
         * (observation: the tasks are not switched). */
        for (unsigned i = 0; c->pmu_task && i < c->m->ncpu; i++)
            pmu_feed(c, i);
        return rc;
    }
    for (;;) {
        uint64_t due = cbqri_next_due(&c->h.cb), t = due < c->now ? due : c->now;
        int rc = run_to(c, t, cbqri_next_setting_due(&c->h.cb), e);
        if (rc)
            return rc;
        cbqri_tick(&c->h.cb, t);
        if (t == c->now)
            return 0;
    }
}

static int script_run(struct regs *c, FILE *in, FILE *out)
{
    struct console *k = c->riscv ? &c->ck.k : &c->xk.k;
    *k = (struct console){.run = run_ns, .ctx = c};
    char buf[CONSOLE_LINE];
    long r;
    while ((r = console_read(in, buf, sizeof buf))) {
        if (r < 0)
            console_bad(k, r, sizeof buf, out);
        else if (c->riscv)
            cbqri_console_line(&c->ck, buf, out);
        else
            x86_console_line(&c->xk, buf, out);
        fflush(out);
    }
    if (ferror(in)) {
        cli_error("regs", "cannot read the script: %s", strerror(errno));
        return 1;
    }
    return k->errors ? 1 : 0;
}

/* The console of the model's vendor. On x86 it has a process of its own,
 * whose memory LWP's control block and ring live in. */
static int console_init(struct regs *c, struct mach *m, struct err *e)
{
    c->m = m;
    c->riscv = c->h.riscv;
    if (c->riscv)
        return cbqri_console_init(&c->ck, &c->h.cb, e);
    lwp_proc_init(&c->pr, &c->h.x, 0);
    c->xk.x = &c->h.x;
    c->xk.proc = &c->pr;
    for (unsigned cpu = 0; cpu < m->ncpu; cpu++)
        lwp_bind(&c->h.x.lwp, cpu, &c->pr.vm);
    return 0;
}

/* A scenario's tasks run under the console: the model takes the context
 * switch, or the driver does when the scenario has a qos section; on a
 * platform with LWP the tasks run as the console's process, watched by the
 * LWP unit. */
static int scen_setup(struct regs *c, struct err *e)
{
    c->run.sch.on_switch = c->run.m.p.vendor == PLAT_RISCV ? cbqri_switch_hook : switch_hook;
    c->run.sch.ctx = c;
    int rc = cli_qos_init(&c->h, &c->run, e);
    if (!rc && c->h.riscv && !c->h.driver) { /* firmware lets the scheduler reach srmcfg */
        struct cbqri_regif ri;
        cbqri_regif(&c->h.cb, &ri);
        rc = cbq_boot(&ri, c->run.m.ncpu, e);
    }
    if (!rc)
        rc = console_init(c, &c->run.m, e);
    if (!rc && c->run.m.p.lwp.present) {
        c->obs = (struct core_obs){lwp_observe, lwp_observe_sync, &c->h.x.lwp};
        for (unsigned i = 0; i < c->run.s->ntask; i++)
            c->run.task[i].ct.obs = &c->obs;
    }
    if (!rc && !c->h.riscv && c->h.x.pmu.ngp) {
        unsigned n = c->run.m.ncpu;
        c->pmu_task = malloc(n * sizeof *c->pmu_task);
        c->pmu_base = calloc(n, sizeof *c->pmu_base);
        c->pmu_rem = calloc(n, sizeof *c->pmu_rem);
        if (!c->pmu_task || !c->pmu_base || !c->pmu_rem)
            return err_set(e, -QOSIM_ENOMEM, "out of memory");
        for (unsigned i = 0; i < n; i++)
            c->pmu_task[i] = -1;
        c->pmu_inner = c->run.sch.on_switch;
        c->pmu_inner_ctx = c->run.sch.ctx;
        c->run.sch.on_switch = pmu_switch;
        c->run.sch.ctx = c;
    }
    return rc;
}

/* A running guest's console (qosim vm --console, docs/vm.md): each line
 * goes to the plugin, which answers with the console's output for it and
 * an empty line. A line console_read refuses is answered here, and the
 * guest gets a blank line in its place.
 * Only a guest of our own user, or root's, gets the lines: a socket anyone
 * else serves could take register writes meant for ours. */
static int attach(const char *path, FILE *in, FILE *out)
{
    struct err e;
    int fd = usock_connect(path, &e);
    if (fd < 0) {
        if (e.code == -QOSIM_EINVAL)
            cli_error("regs", "--attach %s", e.msg);
        else
            cli_error("regs", "--attach %s (is a guest running with qosim vm --console %s?)", e.msg,
                      path);
        return 2;
    }
    uid_t uid;
    pid_t pid;
    if (usock_peer(fd, &uid, &pid)) {
        cli_error("regs", "--attach %s: cannot tell who serves it: %s", path, strerror(errno));
        close(fd);
        return 2;
    }
    if (uid != geteuid() && uid != 0) {
        cli_error("regs",
                  "--attach %s: served by uid %u, not by us (uid %u) or root: refusing to send "
                  "it commands",
                  path, (unsigned)uid, (unsigned)geteuid());
        close(fd);
        return 2;
    }
    /* A guest that goes away mid-script is an error message, not SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    FILE *io = fdopen(fd, "r+");
    if (!io) {
        close(fd);
        cli_error("regs", "--attach %s: %s", path, strerror(errno));
        return 2;
    }
    char buf[CONSOLE_LINE], reply[CONSOLE_REPLY];
    struct console k = {0}; /* lines and errors, numbered as the script's */
    int rc = 0;
    long r;
    while (!rc && (r = console_read(in, buf, sizeof buf))) {
        if (r < 0) {
            /* Answered here; the guest gets a blank line in its place, so
             * that its line numbers stay the script's. */
            console_bad(&k, r, sizeof buf, out);
            strcpy(buf, "\n");
            r = 1;
        } else {
            k.line++;
        }
        fprintf(io, "%s%s", buf, buf[r - 1] == '\n' ? "" : "\n");
        if (fflush(io)) {
            cli_error("regs", "--attach %s: %s", path, strerror(errno));
            rc = 1;
            break;
        }
        for (;;) {
            long g = console_read(io, reply, sizeof reply);
            if (g <= 0) {
                cli_error("regs", "--attach %s: %s", path,
                          g ? "the guest's reply is malformed" : "the guest went away");
                rc = 1;
                break;
            }
            if (!strcmp(reply, "\n"))
                break;
            k.errors += !strncmp(reply, "error:", 6);
            fputs(reply, out);
        }
        fflush(out);
    }
    if (!rc && ferror(in)) {
        cli_error("regs", "cannot read the script: %s", strerror(errno));
        rc = 1;
    }
    fclose(io);
    return rc ? rc : k.errors ? 1 : 0;
}

int cli_regs(int argc, char **argv)
{
    const char *plat = NULL, *scen = NULL, *script = NULL, *sock = NULL;
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
        else if ((v = cli_optval(argc, argv, &i, "--attach", &missing)))
            sock = v;
        else if (missing) {
            cli_error("regs", "%.*s needs a value", (int)strcspn(argv[i], "="), argv[i]);
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
    if (sock && (plat || scen)) {
        cli_error("regs",
                  "--attach drives a running guest's platform: no --platform or --scenario");
        return 2;
    }
    FILE *in = stdin;
    if (script && strcmp(script, "-") && !(in = fopen(script, "r"))) {
        cli_error("regs", "%s: cannot open: %s", script, strerror(errno));
        return 2;
    }
    if (sock) {
        int st = attach(sock, in, stdout);
        if (in != stdin)
            fclose(in);
        return st;
    }
    static struct regs c;
    static struct scen s;
    struct err e;
    int rc;
    memset(&c, 0, sizeof c);
    if (scen) {
        if ((rc = scen_load(&s, scen, &qos_scen, &e)) == 0 &&
            (rc = run_init(&c.run, &s, &e)) == 0) {
            c.has_run = 1;
            rc = scen_setup(&c, &e);
        }
    } else {
        struct plat p;
        if ((rc = plat_load(&p, plat ? plat : "intel-xeon", &e)) == 0 &&
            (rc = mach_init(&c.own, &p, 0, &e)) == 0 && (rc = cli_qos_model(&c.h, &c.own, &e)) == 0)
            rc = console_init(&c, &c.own, &e);
    }
    int status = 2;
    if (rc)
        cli_error("regs", "%s", e.msg);
    else
        status = script_run(&c, in, stdout);
    if (in != stdin)
        fclose(in);
    cbqri_console_free(&c.ck);
    free(c.pmu_task);
    free(c.pmu_base);
    free(c.pmu_rem);
    lwp_proc_free(&c.pr);
    cli_qos_free(&c.h);
    if (c.has_run)
        run_free(&c.run);
    if (scen)
        scen_free(&s);
    if (c.own.cpu)
        mach_free(&c.own);
    return status;
}
