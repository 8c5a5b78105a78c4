/* The architecture-neutral half of a scenario's qos section: the groups'
 * identifiers, the hooks the run calls, and the bookkeeping both drivers
 * share. Everything that touches registers goes through q->ops
 * (qos_rdt.c, qos_cbqri.c), so this file calls neither driver. */
#include "qos.h"

#include <stdlib.h>
#include <string.h>

/* A driver refusal, placed at the scenario line that asked for it. */
static int at_line(const struct qos *q, unsigned line, int rc, struct err *e)
{
    return err_set(e, rc, "%s:%u: qos: %s", q->run->s->file, line, e->msg); /* formatted aside */
}

int qos_apply(struct qos *q, const struct scen_qos_set *x, struct err *e)
{
    int rc = q->ops->apply(q, x, e);
    return rc ? at_line(q, x->line, rc, e) : 0;
}

unsigned qos_grp_cls(const struct qos *q, unsigned grp)
{
    return grp < q->run->s->qos.ngrp ? q->cos[grp] : 0;
}

static void switch_hook(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct qos *q = ctx;
    const struct sched_task *t = task >= 0 ? &s->task[task] : NULL;
    struct err e;
    unsigned cls = t ? t->cls : 0, mon = t ? t->tag : 0;
    int rc = q->ops->sw(q, cpu, cls, mon, &e);
    if (rc && !q->failed) {
        q->failed = 1;
        q->fail = e;
    }
}

static int phase_hook(void *ctx, struct run *r, const struct scen_phase *ph, struct err *e)
{
    struct qos *q = ctx;
    const struct scen_qos *sq = &r->s->qos;
    for (unsigned i = 0; i < ph->nset; i++) {
        const struct scen_set *x = &ph->set[i];
        if (x->kind == SCEN_QOS) {
            int rc = qos_apply(q, &x->q, e);
            if (rc)
                return rc;
        } else if (x->kind == SCEN_QOS_MOVE) {
            /* Moving a task re-associates it at once if it is running, as
             * resctrl's IPI to the task's CPU does. */
            struct sched_task *t = &r->task[x->task];
            t->cls = qos_grp_cls(q, x->q.grp);
            if (sq->monitor == SCEN_MON_GROUP)
                t->tag = q->rmid[x->q.grp < sq->ngrp ? x->q.grp : sq->ngrp];
            sched_reload(&r->sch, x->task);
        } else if (x->kind == SCEN_PF && q->ops->prefetch) {
            /* The machine has it already (run_apply); the register learns
             * it as software writes it, so both agree. */
            int rc = q->ops->prefetch(q, r->s->task[x->task].cpu, x->pf_on, e);
            if (rc)
                return rc;
        }
    }
    return q->failed ? err_set(e, q->fail.code, "context switch: %s", q->fail.msg) : 0;
}

/* A U reading (-QOSIM_EIO: no data now) is counted, not an error. */
int qos_unavailable(struct qos *q, unsigned task, int rc)
{
    if (rc != -QOSIM_EIO)
        return rc;
    q->unavail[task]++;
    return 0;
}

static int mon_hook(void *ctx, struct run *r, unsigned task, struct run_mon_val *v, struct err *e)
{
    (void)r;
    struct qos *q = ctx;
    int rc = q->ops->mon(q, task, v, e);
    if (!rc && q->failed)
        rc = err_set(e, q->fail.code, "context switch: %s", q->fail.msg);
    return rc;
}

/* The arrays both drivers keep per group and per task. */
int qos_alloc(struct qos *q, unsigned ngrp, unsigned ntask, struct err *e)
{
    q->cos = calloc(ngrp + 1, sizeof *q->cos);
    q->rmid = calloc(ngrp + 1, sizeof *q->rmid);
    q->unavail = calloc(ntask, sizeof *q->unavail);
    q->v = calloc(ntask, sizeof *q->v);
    if (!q->cos || !q->rmid || !q->unavail || !q->v)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    return 0;
}

/* The scheduler's context switch, the phases' settings and, with mon, the
 * monitoring reads go through the driver from now on. */
void qos_hooks(struct qos *q, int mon, double wrap)
{
    double poll = wrap / 2 < q->run->s->interval ? wrap / 2 : 0;
    struct run *run = q->run;
    run->sch.on_switch = switch_hook;
    run->sch.ctx = q;
    run->hooks = (struct run_hooks){.ctx = q, .phase = phase_hook};
    if (mon) {
        run->hooks.mon = mon_hook;
        run->hooks.poll = poll;
    }
}

int qos_assign(struct qos *q, int mon, qos_next_id_fn next, struct err *e)
{
    const struct scen *s = q->run->s;
    const struct scen_qos *sq = &s->qos;
    int rc = 0;
    for (unsigned g = 0; mon && sq->monitor == SCEN_MON_GROUP && g < sq->ngrp && !rc; g++)
        rc = next(q, "group", sq->grp[g], q->cos[g], &q->rmid[g], e);
    for (unsigned i = 0; i < s->ntask && !rc; i++) {
        int g = sq->task_grp[i];
        struct sched_task *t = &q->run->task[i];
        t->cls = g < 0 ? 0 : q->cos[g];
        t->tag = sq->monitor == SCEN_MON_GROUP && g >= 0 ? q->rmid[g] : 0;
        if (mon && sq->monitor == SCEN_MON_TASK)
            rc = next(q, "task", s->task[i].name, t->cls, &t->tag, e);
    }
    return rc;
}

void qos_free(struct qos *q)
{
    if (q->ops)
        q->ops->free(q);
    free(q->cos);
    free(q->rmid);
    free(q->unavail);
    free(q->v);
    memset(q, 0, sizeof *q);
}
