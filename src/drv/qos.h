/* The simulated OS's QoS side for a scenario's `qos:` section, as resctrl
 * is for Linux: each group gets a class and, when monitored, monitoring
 * IDs; its masks and bandwidth settings are written through the platform's
 * driver; the scheduler's context switch loads the incoming task's IDs
 * through the driver; monitoring reads the counters, accumulating
 * bandwidth counts across wraps. Two drivers, one behaviour:
 *   - x86 (qos.c): rdt.h, through struct hw_x86_if -- COS and RMID in
 *     PQR_ASSOC (SDM 17.19.2 usage flow);
 *   - RISC-V (qos_cbqri.c): cbq.h, through struct cbqri_regif -- RCID and
 *     MCID in sqoscfg (CBQRI 2.1.1), the group's confidential settings
 *     through the secure windows, as a TSM would (5.2). */
#ifndef QOSIM_DRV_QOS_H
#define QOSIM_DRV_QOS_H

#include "cbq.h"
#include "rdt.h"
#include "sim/run.h"

struct qos {
    int cbqri;        /* which driver: 0 rdt, 1 cbq */
    struct rdt d;     /* x86 */
    struct cbq c, cs; /* CBQRI: the OS's driver (normal windows), the TSM's (secure) */
    struct run *run;
    unsigned *cos;         /* [ngrp + 1] class (COS or RCID) of each group; [ngrp]: default */
    unsigned *rmid;        /* [ngrp + 1] monitoring ID (RMID or MCID) of each group */
    struct rdt_mbm *mbm;   /* x86: [L3 domains * RMIDs * 2]: total and local running counts */
    struct cbq_mbm *bmbm;  /* CBQRI: [bandwidth controllers * MCIDs] running read counts */
    unsigned *resv;        /* CBQRI: [2][ngrp] blocks each group reserves, normal and secure */
    int *ctl_level;        /* CBQRI: [controllers] cache level of each (-1: memory) */
    unsigned *ctl_inst;    /* CBQRI: [controllers] cache instance or node of each */
    uint32_t *sq;          /* CBQRI: [harts] last sqoscfg written (skip-if-unchanged) */
    unsigned nmon;         /* CBQRI: MCIDs handed out so far, 0 the default's */
    unsigned *unavail;     /* [ntask] U / INVALID readings so far */
    struct run_mon_val *v; /* [ntask] the last good readings */
    int failed;            /* the context-switch hook hit a fault (fail) */
    struct err fail;
};

/* x86: enumerates through r, turns CDP on where asked, allocates a class
 * per group and RMIDs as the section says, programs the groups' settings in
 * every domain, and installs the context-switch, phase and monitoring
 * hooks in run. Errors name the scenario line of the setting refused. */
int qos_init(struct qos *q, const struct hw_x86_if *r, struct run *run, struct err *e);
/* RISC-V: the same through the CBQRI driver, over the controllers the
 * platform describes (the firmware's tables). */
int qos_init_cbqri(struct qos *q, const struct cbqri_regif *r, struct run *run, struct err *e);
void qos_free(struct qos *q);

/* Shared by the two drivers (qos.c). */
int qos_at_line(const struct qos *q, unsigned line, int rc, struct err *e);
unsigned qos_grp_cls(const struct qos *q, unsigned grp);
int qos_unavailable(struct qos *q, unsigned task, int rc);
int qos_alloc(struct qos *q, unsigned ngrp, unsigned ntask, struct err *e);
/* Hands out the next free monitoring ID for a group or task (what, name:
 * for the message when none is left). */
typedef int (*qos_next_id_fn)(struct qos *q, const char *what, const char *name, unsigned *out,
                              struct err *e);
/* Every task's class (its group's; 0 in the default group) and, with mon,
 * monitoring IDs as the section says: one per group or per task, ID 0
 * staying with the default group. */
int qos_assign(struct qos *q, int mon, qos_next_id_fn next, struct err *e);
/* Installs the run's hooks; with mon, monitoring reads come at every
 * interval and, when a counter can wrap sooner (wrap: seconds at peak
 * bandwidth), twice per wrap, as Linux's MBM overflow worker does. */
void qos_hooks(struct qos *q, int mon, double wrap);
/* The CBQRI side of the hooks (qos_cbqri.c). */
int qos_cbqri_apply(struct qos *q, const struct scen_qos_set *x, struct err *e);
int qos_cbqri_switch(struct qos *q, unsigned cpu, unsigned cls, unsigned mon, struct err *e);
int qos_cbqri_mon(struct qos *q, unsigned task, struct run_mon_val *v, struct err *e);
void qos_cbqri_free(struct qos *q);

#endif
