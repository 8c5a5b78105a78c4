#include "sched.h"

#include <stdlib.h>
#include <string.h>

void sched_switch_default(void *ctx, struct sched *s, unsigned cpu, int task)
{
    (void)ctx;
    const struct sched_task *t = task >= 0 ? &s->task[task] : NULL;
    mach_set_assoc(s->m, cpu, task, t ? t->cls : 0, t ? t->tag : 0);
}

void sched_task_init(struct sched_task *t, struct wl *wl, uint64_t base, unsigned cpu, unsigned cls,
                     unsigned tag)
{
    memset(t, 0, sizeof *t);
    core_task_init(&t->ct, wl, base);
    t->cpu = cpu;
    t->cls = cls;
    t->tag = tag;
}

static void switch_to(struct sched *s, unsigned cpu, int task)
{
    s->cpu[cpu].running = task;
    if (task >= 0) /* its fetch line may be gone since it last ran */
        s->task[task].ct.last_iblock = UINT64_MAX;
    mach_set_task(s->m, cpu, task);
    s->on_switch(s->ctx, s, cpu, task);
    s->switches++;
}

int sched_init(struct sched *s, struct mach *m, struct sched_task *tasks, unsigned ntask,
               uint64_t quantum, uint64_t slice, struct err *e)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->task = tasks;
    s->ntask = ntask;
    s->quantum = quantum ? quantum : 1;
    s->slice = slice ? slice : 1;
    s->on_switch = sched_switch_default;
    s->cpu = calloc(m->ncpu, sizeof *s->cpu);
    if (!s->cpu)
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate run queues");
    for (unsigned c = 0; c < m->ncpu; c++) {
        s->cpu[c].running = -1;
        s->cpu[c].queue = malloc((ntask ? ntask : 1) * sizeof *s->cpu[c].queue);
        if (!s->cpu[c].queue) {
            sched_free(s);
            return err_set(e, -QOSIM_ENOMEM, "cannot allocate run queues");
        }
    }
    for (unsigned i = 0; i < ntask; i++) {
        if (tasks[i].cpu >= m->ncpu) {
            sched_free(s);
            return err_set(e, -QOSIM_EINVAL, "task %u: CPU %u does not exist", i, tasks[i].cpu);
        }
        struct sched_cpu *c = &s->cpu[tasks[i].cpu];
        c->queue[c->n++] = i;
    }
    return 0;
}

void sched_free(struct sched *s)
{
    for (unsigned c = 0; s->cpu && c < s->m->ncpu; c++)
        free(s->cpu[c].queue);
    free(s->cpu);
    s->cpu = NULL;
}

void sched_reload(struct sched *s, unsigned task)
{
    unsigned c = s->task[task].cpu;
    if (s->cpu[c].running == (int)task)
        s->on_switch(s->ctx, s, c, (int)task);
}

/* The next task on cpu c that has not ended, after the current one; -1 if none. */
static int next_task(struct sched *s, struct sched_cpu *c)
{
    for (unsigned k = 1; k <= c->n; k++) {
        unsigned i = (c->cur + k) % c->n;
        if (!s->task[c->queue[i]].ended) {
            c->cur = i;
            return (int)c->queue[i];
        }
    }
    return -1;
}

/* Where a CPU's or agent's turn that starts at now ends at the latest: a
 * quantum later. It depends on nothing but its start, never on when the
 * run is paused to be looked at. Project choice: a grid shared by every CPU
 * (turns ending at multiples of the quantum) would serve as well, but it
 * lines the threads of a core up on the same stretch of time one after the
 * other, and the second one then finds the core's link to the interconnect
 * booked to the end of the stretch (sim/mem/bw_delay.c: timelines never
 * move back): in tests/e2e/test_qos.sh's MBA per-thread case the unthrottled
 * thread lost 16% of its bandwidth that way, against 7% with turns that
 * start where the CPU is. */
static inline uint64_t turn_end(uint64_t now, uint64_t quantum)
{
    return now + quantum;
}

/* Runs, furthest behind first, until every running CPU and agent has
 * reached at, cutting turns at hard (at <= hard). The choice of what runs
 * next and for how long depends only on the machine's state and on hard:
 * returning at `at` and coming back changes nothing. */
static int advance(struct sched *s, uint64_t at, uint64_t hard, struct err *e)
{
    struct mach *m = s->m;
    for (unsigned c = 0; c < m->ncpu; c++) {
        struct sched_cpu *q = &s->cpu[c];
        if (q->running < 0 && q->n) {
            q->cur = q->n - 1;
            int t = next_task(s, q);
            if (t >= 0) {
                q->slice_end = m->cpu[c].now + s->slice;
                switch_to(s, c, t);
            }
        }
    }
    for (;;) {
        /* The CPU furthest behind goes next. */
        struct mach_cpu *p = NULL;
        for (unsigned c = 0; c < m->ncpu; c++)
            if (s->cpu[c].running >= 0 && m->cpu[c].now < hard && (!p || m->cpu[c].now < p->now))
                p = &m->cpu[c];
        /* An agent further behind than every CPU runs first, for a turn
         * as a CPU would (a tie goes to the CPU). */
        uint64_t t_a = 0;
        int a = s->ext.next ? s->ext.next(s->ext.ctx, &t_a) : -1;
        if (a >= 0 && t_a < hard && (!p || t_a < p->now)) {
            if (t_a >= at)
                break; /* everything has reached at */
            uint64_t stop = turn_end(t_a, s->quantum);
            s->ext.run(s->ext.ctx, (unsigned)a, stop < hard ? stop : hard);
            continue;
        }
        if (!p || p->now >= at)
            break;
        struct sched_cpu *q = &s->cpu[p->id];
        uint64_t stop = turn_end(p->now, s->quantum);
        if (stop > hard)
            stop = hard;
        if (q->n > 1 && stop > q->slice_end)
            stop = q->slice_end;
        struct sched_task *t = &s->task[q->running];
        int rc = core_run(m, p, &t->ct, stop, e);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            t->ended = 1;
            t->end_at = p->now;
        }
        if (rc == 1 || (q->n > 1 && p->now >= q->slice_end)) {
            int nt = next_task(s, q);
            q->slice_end = p->now + s->slice;
            if (nt < 0)
                switch_to(s, p->id, -1);
            else if (nt != q->running || t->ended)
                switch_to(s, p->id, nt);
        }
    }
    /* Idle CPUs keep pace with the clock. Only the scheduler's dispatch and
     * the CBQRI model's timing of an MMIO access issued from such a CPU
     * read an idle CPU's clock; neither changes what the CPUs do. */
    for (unsigned c = 0; c < m->ncpu; c++)
        if (s->cpu[c].running < 0 && m->cpu[c].now < at)
            m->cpu[c].now = at;
    return 0;
}

int sched_run(struct sched *s, uint64_t until, struct err *e)
{
    return advance(s, until, until, e);
}

int sched_pause(struct sched *s, uint64_t at, uint64_t hard, struct err *e)
{
    return advance(s, at, at < hard ? hard : at, e);
}
