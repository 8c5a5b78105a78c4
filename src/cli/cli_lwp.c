/* qosim lwp: a workload under AMD Lightweight Profiling, profiled the way
 * a process profiles itself on real hardware. The simulated OS enables LWP
 * in LWPMSR0 on every CPU, saves and restores each thread's LWP state at
 * every context switch (lwp_save / lwp_restore, 5.5.2) and delivers the
 * threshold interrupt to the thread that owns the ring; the profiled task
 * uses the LWP library (drv/lwpl.h) in its own address space to build its
 * LWPCB and ring, start LWP with LLWPCB and drain the records, on the
 * interrupt or by polling. The profile printed comes only from the records
 * the hardware stored. */
#include "cli.h"
#include "cli_lwp.h"

#include "drv/lwpl.h"
#include "hw/lwp.h"
#include "hw/x86.h"
#include "drv/qos_scen.h"
#include "sim/scen/run.h"
#include "util/conf.h"
#include "util/ofile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: qosim lwp (--trace FILE [--format FMT] [--platform NAME|FILE] | --scenario FILE\n"
    "                  [--task NAME]) --event SPEC [--event SPEC...] [--buffer BYTES]\n"
    "                  [--threshold BYTES] [--random BITS] [--top N] [--json FILE] [--raw FILE]\n"
    "Runs a workload under AMD Lightweight Profiling (docs/lwp.md) and prints the profile its\n"
    "event records give: hottest instructions, branches and their mispredict rates, DCache\n"
    "miss latencies and data addresses, and the events LWP missed.\n"
    "  --trace FILE        a lackey, champsim, din or qtr trace, run once on CPU 0\n"
    "  --format FMT        the trace's format (default: from its name)\n"
    "  --platform P        a platform with LWP (default amd-lwp)\n"
    "  --scenario FILE     a scenario (docs/scenarios.md) on a platform with LWP\n"
    "  --task NAME         the scenario's task to profile (default: its first)\n"
    "  --event ir:N        instructions retired, a record every N\n"
    "  --event br:N[,ndb]  branches retired; ndb: not direct jumps\n"
    "  --event dcm:N[,minlat=M][,levels=nbc+rdc+ram+oth]\n"
    "                      DCache misses; minlat: at least M x 16 cycles; levels: only those\n"
    "                      sources (NBC the L3, RDC another node's cache, RAM memory)\n"
    "  --buffer BYTES      ring buffer size (default 64K)\n"
    "  --threshold BYTES   interrupt when this much of the ring is used, and drain then\n"
    "                      (default: none, the ring is polled every 100 us)\n"
    "  --random BITS       randomise the low BITS of each interval (0-15)\n"
    "  --top N             rows of each table (default 10)\n"
    "  --json FILE         the profile as JSON\n"
    "  --raw FILE          the 32-byte event records as the ring held them\n";

/* ---- options ---- */

struct opts {
    const char *trace, *format, *platform, *scenario, *task, *json, *raw;
    struct lwpl_cfg cfg;
    uint64_t buffer, threshold, random, top;
    int have_threshold;
    char events[256];
};

/* A usage error: the message, exit status 2. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error("lwp", "%s", msg);
    return 2;
}

/* N of "ir:N" and the like: a whole interval of 1 to 2^26 - 1. */
static int interval(const char *spec, const char *s, uint32_t *out)
{
    uint64_t v;
    if (conf_parse_u64(s, &v) || v < 1 || v > HW_FMASK(LWPCB_EVENT, EventInterval))
        return bad("--event %s: the interval '%s' is not 1 to 67108863", spec, s);
    *out = (uint32_t)v;
    return 0;
}

static int event(struct opts *o, const char *spec)
{
    static const char *const names[] = {NULL, "ir", "br", "dcm"};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *colon = strchr(buf, ':');
    unsigned id = 1;
    while (colon && id < 4 && strncmp(buf, names[id], (size_t)(colon - buf)))
        id++;
    if (!colon || id == 4 || (size_t)(colon - buf) != strlen(names[id]))
        return bad("--event %s: expected ir:N, br:N or dcm:N", spec);
    for (unsigned i = 0; i < o->cfg.nev; i++)
        if (o->cfg.ev[i].id == id)
            return bad("--event %s: %s given twice", spec, names[id]);
    if (o->cfg.nev == LWPL_MAX_EVS)
        return bad("--event %s: too many events", spec);
    char *save = NULL, *tok = strtok_r(colon + 1, ",", &save);
    uint32_t n = 0;
    if (!tok || interval(spec, tok, &n))
        return tok ? 2 : bad("--event %s: the interval is missing", spec);
    while ((tok = strtok_r(NULL, ",", &save))) {
        uint64_t v;
        if (id == 2 && !strcmp(tok, "ndb")) {
            o->cfg.ndb = 1;
        } else if (id == 3 && !strncmp(tok, "minlat=", 7)) {
            if (conf_parse_u64(tok + 7, &v) || v > 255)
                return bad("--event %s: minlat '%s' is not 0 to 255 (units of 16 cycles)", spec,
                           tok + 7);
            o->cfg.minlat = (unsigned)v;
        } else if (id == 3 && !strncmp(tok, "levels=", 7)) {
            static const char *const lv[] = {"nbc", "rdc", "ram", "oth"};
            char *s2 = NULL, *l = strtok_r(tok + 7, "+", &s2);
            o->cfg.clf = 1;
            for (; l; l = strtok_r(NULL, "+", &s2)) {
                unsigned k = 0;
                while (k < 4 && strcmp(l, lv[k]))
                    k++;
                if (k == 4)
                    return bad("--event %s: level '%s' is not nbc, rdc, ram or oth", spec, l);
                o->cfg.levels |= 1u << k;
            }
        } else {
            return bad("--event %s: unknown setting '%s'", spec, tok);
        }
    }
    o->cfg.ev[o->cfg.nev].id = id;
    o->cfg.ev[o->cfg.nev].interval = n;
    o->cfg.nev++;
    size_t len = strlen(o->events);
    snprintf(o->events + len, sizeof o->events - len, "%s%s", len ? " " : "", spec);
    return 0;
}

/* An output option names one file: a second one is a mistake, not an override. */
static int set_once(const char *opt, const char **slot, const char *v)
{
    if (*slot)
        return bad("%s given twice ('%s' and '%s')", opt, *slot, v);
    *slot = v;
    return 0;
}

static int size_opt(const char *name, const char *v, uint64_t max, uint64_t *out)
{
    if (!conf_parse_size(v, out) && *out <= max)
        return 0;
    cli_error("lwp", "%s: '%s' is not a size of at most %llu bytes (e.g. 64K)", name, v,
              (unsigned long long)max);
    return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->buffer = 64 << 10;
    o->top = 10;
    for (int i = 1; i < argc; i++) {
        int missing = 0, rc = 0;
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 1;
        }
        if ((v = cli_optval(argc, argv, &i, "--trace", &missing)))
            o->trace = v;
        else if ((v = cli_optval(argc, argv, &i, "--format", &missing)))
            o->format = v;
        else if ((v = cli_optval(argc, argv, &i, "--platform", &missing)))
            o->platform = v;
        else if ((v = cli_optval(argc, argv, &i, "--scenario", &missing)))
            o->scenario = v;
        else if ((v = cli_optval(argc, argv, &i, "--task", &missing)))
            o->task = v;
        else if ((v = cli_optval(argc, argv, &i, "--json", &missing)))
            rc = set_once("--json", &o->json, v);
        else if ((v = cli_optval(argc, argv, &i, "--raw", &missing)))
            rc = set_once("--raw", &o->raw, v);
        else if ((v = cli_optval(argc, argv, &i, "--event", &missing)))
            rc = event(o, v);
        else if ((v = cli_optval(argc, argv, &i, "--buffer", &missing)))
            rc = size_opt("--buffer", v, HW_FMASK(LWPCB_BUFSZ, BufferSize), &o->buffer);
        else if ((v = cli_optval(argc, argv, &i, "--threshold", &missing))) {
            rc = size_opt("--threshold", v, HW_FMASK(LWPCB_BUFSZ, BufferSize), &o->threshold);
            o->have_threshold = 1;
        } else if ((v = cli_optval(argc, argv, &i, "--random", &missing))) {
            if (conf_parse_u64(v, &o->random) || o->random > 15)
                rc = bad("--random: '%s' is not 0 to 15", v);
        } else if ((v = cli_optval(argc, argv, &i, "--top", &missing))) {
            if (conf_parse_u64(v, &o->top) || !o->top || o->top > 1000000)
                rc = bad("--top: '%s' is not 1 to 1000000", v);
        } else if (missing)
            rc = bad("%.*s needs a value", (int)strcspn(argv[i], "="), argv[i]);
        else
            rc = bad("unknown argument '%s'\n%s", argv[i], usage);
        if (rc)
            return rc;
    }
    if (!o->trace == !o->scenario)
        return bad("give one of --trace and --scenario");
    if (o->scenario && (o->platform || o->format))
        return bad("--scenario names its platform and workloads: no --platform or --format");
    if (o->trace && o->task)
        return bad("--task picks a scenario's task; a trace is one task");
    if (o->format && !trace_find(o->format))
        return bad("--format: unknown format '%s' (lackey, champsim, din or qtr)", o->format);
    if (!o->cfg.nev)
        return bad("give at least one --event (ir:N, br:N or dcm:N)");
    if (o->buffer / LWPL_RECORD < 2)
        return bad("--buffer: %llu bytes hold fewer than two 32-byte records",
                   (unsigned long long)o->buffer);
    if (o->have_threshold && o->threshold >= o->buffer / LWPL_RECORD * LWPL_RECORD)
        return bad("--threshold: must be below the ring's size");
    if (o->have_threshold && o->threshold == 0)
        return bad("--threshold: 0 means no interrupt; leave it out to poll");
    o->cfg.buffer = (uint32_t)o->buffer;
    o->cfg.threshold = (uint32_t)o->threshold;
    o->cfg.random = (unsigned)o->random;
    return 0;
}

/* ---- the simulated OS ---- */

struct os {
    struct run *run;
    struct x86 *x;
    unsigned prof;         /* the profiled task */
    struct lwp_proc *proc; /* [ntask] each task's process */
    struct lwp_xsave *xs;  /* [ntask] each task's saved LWP state */
    int *on;               /* [ncpu] task running there, -1 idle */
    struct bpred *bp;      /* [ncpu] each core's branch predictor */
    struct core_obs obs;   /* the LWP unit, watching retirement */
    const struct lwpl_cfg *cfg;
    struct lwpl lib;
    int opened;
    struct err err; /* the first failure, reported after the run step */
    int failed;
    struct lwpr *rep;
    uint64_t interrupts, drains;
};

static void fail(struct os *os, const struct err *e)
{
    if (!os->failed) {
        os->failed = 1;
        os->err = *e;
    }
}

static void drain(struct os *os, int flush)
{
    struct err e;
    if (os->opened && !os->failed && lwpl_drain(&os->lib, flush, lwpr_add, os->rep, &e) < 0)
        fail(os, &e);
    os->drains++;
}

/* The threshold interrupt of cpu goes to the thread that owns the ring:
 * its handler drains it (the hardware flushed the head, 5.5.3). */
static void deliver(struct os *os, unsigned cpu)
{
    if (lwp_take_irq(&os->x->lwp, cpu)) {
        os->interrupts++;
        if (os->on[cpu] == (int)os->prof)
            drain(os, 0);
    }
}

/* The context switch (sched's hook): the outgoing thread's interrupt is
 * delivered and its LWP state saved; the incoming one's restored, its
 * association loaded as usual, and the profiled task, the first time it
 * runs, opens its profile (LLWPCB from ring 3). */
static void on_switch(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct os *os = ctx;
    struct lwp *u = &os->x->lwp;
    int old = os->on[cpu];
    if (old >= 0) {
        deliver(os, cpu);
        struct vmem_fault f;
        lwp_take_pf(u, cpu, &f); /* the ring is mapped: nothing to page in */
        lwp_save(u, cpu, &os->xs[old]);
    }
    sched_switch_default(NULL, s, cpu, task);
    os->on[cpu] = task;
    static const struct lwp_xsave off;
    if (task < 0) {
        lwp_restore(u, cpu, NULL, &off);
        return;
    }
    lwp_restore(u, cpu, &os->proc[task].vm, &os->xs[task]);
    lwp_ring3(u, cpu);
    s->task[task].ct.obs = &os->obs;
    s->task[task].ct.bp = &os->bp[cpu];
    os->proc[task].cpu = cpu;
    if ((unsigned)task == os->prof && !os->opened && !os->failed) {
        struct lwp_procif r;
        struct err e;
        lwp_proc_if(&os->proc[task], &r);
        if (lwpl_open(&os->lib, &r, os->cfg, &e))
            fail(os, &e);
        else
            os->opened = 1;
    }
}

/* The OS at boot: every LWP feature the CPU offers is enabled (LWPMSR0
 * bit n for EventId n, Enabled and Interrupt; docs/registers.md 3). */
static int boot(struct os *os, struct err *e)
{
    uint32_t r[4];
    x86_cpuid(os->x, 0, LWP_CPUID_LEAF, 0, r);
    uint64_t m = HW_FSET(0, LWPMSR0, Enabled, HW_FGET(r[3], LWP_EDX, Enabled));
    m = HW_FSET(m, LWPMSR0, IRE, HW_FGET(r[3], LWP_EDX, IRE));
    m = HW_FSET(m, LWPMSR0, BRE, HW_FGET(r[3], LWP_EDX, BRE));
    m = HW_FSET(m, LWPMSR0, DME, HW_FGET(r[3], LWP_EDX, DME));
    m = HW_FSET(m, LWPMSR0, Interrupt, HW_FGET(r[3], LWP_EDX, Interrupt));
    for (unsigned c = 0; c < os->run->m.ncpu; c++)
        if (x86_wrmsr(os->x, c, LWP_MSR0, m) != HW_OK)
            return err_set(e, -QOSIM_EIO, "wrmsr LWPMSR0 0x%llx on CPU %u: #GP",
                           (unsigned long long)m, c);
    return 0;
}

static int all_ended(const struct run *r)
{
    for (unsigned i = 0; i < r->s->ntask; i++)
        if (!r->task[i].ended)
            return 0;
    return 1;
}

/* Runs until the scenario's end or every task's end; the simulated OS
 * looks for the interrupt every 10 us, or polls the ring every 100 us. */
static int simulate(struct os *os, int polled, double end, struct err *e)
{
    struct run *run = os->run;
    struct sched *s = &run->sch;
    const double tick = run->m.ticks_per_sec;
    const double step = polled ? 100e-6 : 10e-6;
    double t = 0;
    int rc = sched_run(s, 0, e); /* dispatch: the profiled task opens its profile */
    while (!rc && !os->failed && t < end && !all_ended(run)) {
        t = t + step < end ? t + step : end;
        rc = sched_run(s, (uint64_t)(t * tick + 0.5), e);
        unsigned cpu = run->task[os->prof].cpu;
        if (rc || os->failed)
            break;
        if (!polled)
            deliver(os, cpu);
        else /* a running thread flushes with SLWPCB; a switched-out one's head is saved */
            drain(os, os->on[cpu] == (int)os->prof);
    }
    if (rc)
        return rc;
    if (!os->failed && os->opened) {
        unsigned cpu = run->task[os->prof].cpu;
        struct err e2;
        if (os->on[cpu] == (int)os->prof) {
            deliver(os, cpu);
            if (lwpl_close(&os->lib, lwpr_add, os->rep, &e2))
                fail(os, &e2);
        } else {
            drain(os, 0);
        }
    }
    if (os->failed)
        return err_set(e, os->err.code ? os->err.code : -QOSIM_EIO, "LWP: %s", os->err.msg);
    if (!os->opened)
        return err_set(e, -QOSIM_EINVAL, "the profiled task never ran");
    return 0;
}

/* ---- the workload ---- */

/* A trace as a one-task scenario on CPU 0, run to its end. */
static int trace_scen(struct scen *s, const struct opts *o, struct err *e)
{
    memset(s, 0, sizeof *s);
    int rc = plat_load(&s->plat, o->platform ? o->platform : "amd-lwp", e);
    if (rc)
        return rc;
    s->task = calloc(1, sizeof *s->task);
    if (!s->task)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    s->ntask = 1;
    snprintf(s->file, sizeof s->file, "%s", o->trace);
    s->seed = 1;
    s->duration = 1e9; /* until the trace ends */
    s->interval = 1e-3;
    s->slice = 1e-3;
    s->quantum = 1000;
    struct scen_task *t = &s->task[0];
    snprintf(t->name, sizeof t->name, "trace");
    t->node = -1;
    t->is_trace = 1;
    snprintf(t->trace, sizeof t->trace, "%s", o->trace);
    t->fmt = trace_find(o->format ? o->format : trace_guess(o->trace));
    return 0;
}

/* No output may name the other or a file the run reads; both are opened
 * before the run, so one that cannot be written fails at once. */
static int open_outputs(const struct opts *o, const struct scen *s, struct ofile *raw,
                        struct ofile *jo)
{
    struct ofile_name out[] = {{"--raw", o->raw}, {"--json", o->json}};
    struct ofile_name *in = calloc(s->ntask + 4, sizeof *in);
    if (!in)
        return bad("out of memory");
    size_t nin = 0;
    in[nin++] = (struct ofile_name){"the trace", o->trace};
    in[nin++] = (struct ofile_name){"the scenario", o->scenario};
    if (s->plat.file[0])
        in[nin++] = (struct ofile_name){"the platform profile", s->plat.file};
    for (unsigned i = 0; o->scenario && i < s->ntask; i++)
        if (s->task[i].is_trace)
            in[nin++] = (struct ofile_name){"the trace", s->task[i].trace};
    struct err e;
    int rc = ofile_distinct(out, 2, in, nin, &e);
    free(in);
    if (rc)
        return bad("%s", e.msg);
    ofile_trap_signals(NULL);
    if ((o->raw && ofile_open(raw, o->raw, &e)) || (o->json && ofile_open(jo, o->json, &e))) {
        cli_error("lwp", "%s", e.msg);
        ofile_abort(raw);
        return 1;
    }
    return 0;
}

int cli_lwp(int argc, char **argv)
{
    struct opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    static struct scen s;
    struct err e;
    rc = o.scenario ? scen_load(&s, o.scenario, &qos_scen, &e) : trace_scen(&s, &o, &e);
    if (rc) {
        cli_error("lwp", "%s", e.msg);
        scen_free(&s);
        return 2;
    }
    unsigned prof = 0;
    while (o.task && prof < s.ntask && strcmp(s.task[prof].name, o.task))
        prof++;
    if (prof == s.ntask) {
        cli_error("lwp", "%s: no task called '%s'", o.scenario, o.task);
        scen_free(&s);
        return 2;
    }
    int settings = s.qos.present;
    for (unsigned i = 0; i < s.nphase; i++)
        settings |= s.phase[i].nset != 0;
    if (settings) {
        cli_error("lwp",
                  "%s: qosim lwp runs the tasks as they start and applies no qos section "
                  "or phase settings (qosim run does)",
                  o.scenario);
        scen_free(&s);
        return 2;
    }
    if (!s.plat.lwp.present) {
        cli_error("lwp", "%s has no LWP (its profile has no qos.lwp section; try amd-lwp)",
                  s.plat.name);
        scen_free(&s);
        return 2;
    }
    static struct ofile raw, jo;
    if ((rc = open_outputs(&o, &s, &raw, &jo))) {
        scen_free(&s);
        return rc;
    }
    static struct run run;
    static struct x86 x;
    static struct lwpr rep;
    static struct os os;
    memset(&rep, 0, sizeof rep);
    memset(&os, 0, sizeof os);
    int status = 1, have_run = 0, have_x = 0;
    if ((rc = run_init(&run, &s, &e)))
        goto out;
    have_run = 1;
    if ((rc = x86_init(&x, &run.m, &e)))
        goto out;
    have_x = 1;
    os = (struct os){.run = &run, .x = &x, .prof = prof, .cfg = &o.cfg, .rep = &rep};
    os.proc = calloc(s.ntask, sizeof *os.proc);
    os.xs = calloc(s.ntask, sizeof *os.xs);
    os.on = malloc(run.m.ncpu * sizeof *os.on);
    os.bp = malloc(run.m.ncpu * sizeof *os.bp);
    if (!os.proc || !os.xs || !os.on || !os.bp) {
        rc = err_set(&e, -QOSIM_ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < s.ntask; i++)
        lwp_proc_init(&os.proc[i], &x, s.task[i].cpu);
    for (unsigned c = 0; c < run.m.ncpu; c++) {
        os.on[c] = -1;
        bpred_init(&os.bp[c]);
    }
    os.obs = (struct core_obs){lwp_observe, lwp_observe_sync, &x.lwp};
    run.sch.on_switch = on_switch;
    run.sch.ctx = &os;
    if ((rc = boot(&os, &e)))
        goto out;
    rep.raw = o.raw ? raw.f : NULL;
    rc = simulate(&os, !o.have_threshold, s.duration, &e);
    if (!rc && rep.oom)
        rc = err_set(&e, -QOSIM_ENOMEM, "out of memory for the profile");
out:
    if (rc) {
        cli_error("lwp", "%s", e.msg);
    } else {
        struct lwpr_head h = {.workload = o.scenario ? o.scenario : o.trace,
                              .platform = s.plat.name,
                              .task = s.task[prof].name,
                              .buffer = os.lib.size,
                              .threshold = o.cfg.threshold,
                              .instructions = run.m.ts[prof].instr,
                              .drained = os.lib.drained,
                              .interrupts = os.interrupts,
                              .drains = os.drains};
        snprintf(h.events, sizeof h.events, "%s", o.events);
        struct err e2;
        lwpl_missed(&os.lib, &h.missed, &e2);
        if (o.json)
            lwpr_json(jo.f, &rep, &h, (unsigned)o.top);
        /* An output on standard output takes the place of the text profile. */
        int text = !ofile_is_stdout(&raw) && !ofile_is_stdout(&jo);
        struct ofile *const all[] = {&raw, &jo};
        status = ofile_commit_all(all, 2, &e2) != 0;
        if (status)
            cli_error("lwp", "%s", e2.msg);
        if (!status && text)
            lwpr_print(stdout, &rep, &h, (unsigned)o.top);
    }
    if (status) {
        ofile_abort(&raw);
        ofile_abort(&jo);
    }
    for (unsigned i = 0; os.proc && i < s.ntask; i++)
        lwp_proc_free(&os.proc[i]);
    free(os.proc);
    free(os.xs);
    free(os.on);
    free(os.bp);
    lwpr_free(&rep);
    if (have_x)
        x86_free(&x);
    if (have_run)
        run_free(&run);
    scen_free(&s);
    return status;
}
