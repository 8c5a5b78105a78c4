/* The hardware model and QoS driver behind a scenario's `qos:` section,
 * for `qosim run` and `qosim regs`: the platform's register model over the
 * run's machine (x86 MSRs or CBQRI MMIO), and the driver on it (drv/qos.h). */
#ifndef QOSIM_CLI_QOS_H
#define QOSIM_CLI_QOS_H

#include "drv/qos.h"
#include "hw/cbqri.h"
#include "hw/x86.h"

struct cli_qos {
    int riscv;
    struct x86 x;
    struct cbqri cb;
    struct qos q;
    int model, driver; /* what is set up */
};

/* The register model of m's platform, alone. */
int cli_qos_model(struct cli_qos *h, struct mach *m, struct err *e);
/* The model for run's machine, and the driver when the scenario has a qos
 * section (it then takes the scheduler's context switch). */
int cli_qos_init(struct cli_qos *h, struct run *run, struct err *e);
void cli_qos_free(struct cli_qos *h);

#endif
