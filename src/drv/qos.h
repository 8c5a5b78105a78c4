/* The simulated OS's QoS side for a scenario's `qos:` section, as resctrl
 * is for Linux: each group gets a class of service and, when monitored,
 * RMIDs; its masks and bandwidth settings are written through the x86
 * driver (rdt.h); the scheduler's context switch loads the incoming task's
 * class and RMID into PQR_ASSOC through the driver (SDM 17.19.2 usage
 * flow); monitoring reads QM_CTR per RMID, accumulating bandwidth counts
 * across wraps. Reaches the hardware only through struct hw_x86_if. */
#ifndef QOSIM_DRV_QOS_H
#define QOSIM_DRV_QOS_H

#include "rdt.h"
#include "sim/run.h"

struct qos {
    struct rdt d;
    struct run *run;
    unsigned *cos;         /* [ngrp + 1] class of each group; [ngrp]: the default group */
    unsigned *rmid;        /* [ngrp + 1] RMID of each group (monitor: group) */
    struct rdt_mbm *mbm;   /* [L3 domains * RMIDs * 2]: total and local running counts */
    unsigned *unavail;     /* [ntask] U readings so far */
    struct run_mon_val *v; /* [ntask] the last good readings */
    int failed;            /* the context-switch hook hit a fault (fail) */
    struct err fail;
};

/* Enumerates through r, turns CDP on where asked, allocates a class per
 * group and RMIDs as the section says, programs the groups' settings in
 * every domain, and installs the context-switch, phase and monitoring
 * hooks in run. Errors name the scenario line of the setting refused. */
int qos_init(struct qos *q, const struct hw_x86_if *r, struct run *run, struct err *e);
void qos_free(struct qos *q);

#endif
