/* The simulated OS's QoS side for a scenario's `qos:` section, as resctrl
 * is for Linux: each group gets a class and, when monitored, monitoring
 * IDs; its masks and bandwidth settings are written through the platform's
 * driver; the scheduler's context switch loads the incoming task's IDs
 * through the driver; monitoring reads the counters, accumulating
 * bandwidth counts across wraps. One behaviour (qos.c), one ops table per
 * architecture:
 *   - x86 (qos_rdt.c): rdt.h, through struct hw_x86_if -- COS and RMID in
 *     PQR_ASSOC (SDM 17.19.2 usage flow);
 *   - RISC-V (qos_cbqri.c): cbq.h, through struct cbqri_regif -- RCID and
 *     MCID in sqoscfg (CBQRI 2.1.1), the group's confidential settings
 *     through the secure windows, as a TSM would (5.2).
 * qos.c calls an architecture only through its ops; the architectures call
 * qos.c's shared helpers; so no two files call each other. The section
 * itself is read by qos_scen.c. */
#ifndef QOSIM_DRV_QOS_H
#define QOSIM_DRV_QOS_H

#include "cbq.h"
#include "rdt.h"
#include "sim/scen/run.h"

struct qos;

/* What one architecture's driver does for the section. */
struct qos_ops {
    /* One group's settings in every domain or controller; a refusal's
     * rc and message, which qos_apply places at the scenario line. */
    int (*apply)(struct qos *q, const struct scen_qos_set *x, struct err *e);
    /* The context switch: cpu's association register gets (cls, mon). */
    int (*sw)(struct qos *q, unsigned cpu, unsigned cls, unsigned mon, struct err *e);
    /* A task's counters, read through the driver, into v (and q->v[task]). */
    int (*mon)(struct qos *q, unsigned task, struct run_mon_val *v, struct err *e);
    void (*free)(struct qos *q); /* the architecture's own state */
    /* A phase's prefetch setting through the registers (NULL: the
     * architecture has no prefetcher control; the machine's is set directly). */
    int (*prefetch)(struct qos *q, unsigned cpu, unsigned on, struct err *e);
};

struct qos {
    const struct qos_ops *ops; /* the platform's driver */
    struct rdt d;              /* x86 */
    struct cbq c, cs;          /* CBQRI: the OS's driver (normal windows), the TSM's (secure) */
    struct run *run;
    unsigned *cos;         /* [ngrp + 1] class (COS or RCID) of each group; [ngrp]: default */
    unsigned *rmid;        /* [ngrp + 1] monitoring ID (RMID or MCID) of each group */
    struct rdt_mbm *mbm;   /* x86: [L3 domains * RMIDs * 2]: total and local running counts */
    int *cntr;             /* x86 ABMC: [RMIDs * 2] the counter of (RMID, total / local) in
                              every domain; -1: none (unassigned) */
    struct rdt_mbm *cmbm;  /* x86 ABMC: [L3 domains * counters] running counts */
    struct cbq_mbm *bmbm;  /* CBQRI: [bandwidth controllers * MCIDs] running read counts */
    unsigned *resv;        /* CBQRI: [2][ngrp] blocks each group reserves, normal and secure */
    int *ctl_level;        /* CBQRI: [controllers] cache level of each (-1: memory) */
    unsigned *ctl_inst;    /* CBQRI: [controllers] cache instance or node of each */
    uint32_t *sq;          /* CBQRI: [harts] last sqoscfg written (skip-if-unchanged) */
    unsigned nmon;         /* CBQRI: MCIDs handed out so far, 0 the default's */
    unsigned *nlow;        /* CBQRI, RCID-prefixed: [RCIDs] low MCIDs handed out per RCID */
    unsigned *unavail;     /* [ntask] U / INVALID readings so far */
    struct run_mon_val *v; /* [ntask] the last good readings */
    int failed;            /* the context-switch hook hit a fault (fail) */
    struct err fail;
};

/* x86: enumerates through r, turns CDP on where asked, allocates a class
 * per group and RMIDs as the section says, programs the groups' settings in
 * every domain, and installs the context-switch, phase and monitoring
 * hooks in run. Errors name the scenario line of the setting refused. */
int qos_rdt_init(struct qos *q, const struct hw_x86_if *r, struct run *run, struct err *e);
/* RISC-V: the same through the CBQRI driver, over the controllers the
 * platform describes (the firmware's tables). */
int qos_cbqri_init(struct qos *q, const struct cbqri_regif *r, struct run *run, struct err *e);
void qos_free(struct qos *q);

/* Shared by the two drivers (qos.c). */
/* A group's settings through q->ops; a refusal names the scenario line. */
int qos_apply(struct qos *q, const struct scen_qos_set *x, struct err *e);
unsigned qos_grp_cls(const struct qos *q, unsigned grp);
int qos_unavailable(struct qos *q, unsigned task, int rc);
int qos_alloc(struct qos *q, unsigned ngrp, unsigned ntask, struct err *e);
/* Hands out the next free monitoring ID for a group or task of class cls
 * (what, name: for the message when none is left). */
typedef int (*qos_next_id_fn)(struct qos *q, const char *what, const char *name, unsigned cls,
                              unsigned *out, struct err *e);
/* Every task's class (its group's; 0 in the default group) and, with mon,
 * monitoring IDs as the section says: one per group or per task, ID 0
 * staying with the default group. */
int qos_assign(struct qos *q, int mon, qos_next_id_fn next, struct err *e);
/* Installs the run's hooks; with mon, monitoring reads come at every
 * interval and, when a counter can wrap sooner (wrap: seconds at peak
 * bandwidth), twice per wrap, as Linux's MBM overflow worker does. */
void qos_hooks(struct qos *q, int mon, double wrap);
#endif
