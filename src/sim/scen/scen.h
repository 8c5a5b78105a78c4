/* Scenarios: a platform, tasks with workloads and CPUs, a duration, a
 * sampling interval, and timed phases whose settings (allocation masks,
 * bandwidth limits, task identifiers) apply from their start. Loaded,
 * checked against the platform completely, then run (run.h). */
#ifndef QOSIM_SIM_SCEN_H
#define QOSIM_SIM_SCEN_H

#include "plat.h"
#include "sim/io/io.h"
#include "sim/wl/wl.h"

struct scen_task {
    char name[64];
    unsigned cpu;
    unsigned cls, tag;
    int node;                 /* NUMA node of its memory; -1: its CPU's */
    uint64_t tee_va, tee_len; /* TEE region (virtual): requests there carry C; len 0: none */
    int is_trace;
    /* A live program (wl/live.h): its arguments, NULL-terminated, the
     * program first; its standard input and output ("": /dev/null); it
     * runs in the scenario's directory. */
    int is_live;
    char **argv;
    char in[512], out[512], dir[512];
    unsigned line; /* the workload's line in the scenario, for messages */
    struct wl_params wp;
    char trace[512];
    const struct trace_ops *fmt;
    int loop;
};

enum scen_set_kind {
    SCEN_MASK, /* straight into the machine's mechanisms */
    SCEN_BW,
    SCEN_ASSOC,
    SCEN_QOS,      /* a qos group's settings, through the platform's driver */
    SCEN_QOS_MOVE, /* a task into a qos group, through the driver */
    SCEN_PF        /* the hardware prefetchers of a task's core, as its control MSR sets them */
};

/* Settings of one group of the `qos:` section (a class of service, as a
 * resctrl control group or a pqos COS), each applied only when given. */
struct scen_qos_set {
    unsigned grp;                   /* index into scen_qos.grp */
    unsigned has_mask[PLAT_NLEVEL]; /* bit MACH_DATA, bit MACH_CODE */
    uint64_t mask[PLAT_NLEVEL][2];  /* capacity bitmasks, [level][MACH_DATA / MACH_CODE] */
    int has_mba, has_limit, has_share;
    unsigned mba;          /* percent of bandwidth, as resctrl's MB and pqos: 100 unthrottled */
    double limit;          /* bytes per second; 0 unlimited */
    unsigned rbwb, weight; /* CBQRI: reserved bandwidth blocks (of NBWBLKS) and Mweight */
    unsigned has_units;    /* CBQRI 1.0: bit per level with a capacity-unit limit */
    uint64_t units[PLAT_NLEVEL]; /* its cc_cunits: lines the group may occupy per instance */
    int secure;                  /* CBQRI: for the group's confidential requests, through the
                                    secure register windows (spec 5.2) */
    unsigned line;               /* where it was written, for messages */
    /* AMD (drv/qos_scen.c): */
    int has_smba;     /* SMBA: a rate limit on the group's slow-memory reads */
    double smba;      /* bytes per second; 0 unlimited */
    unsigned has_evt; /* BMEC, a phase's: bit 0 total, bit 1 local, in every domain */
    uint32_t evt[2];  /* their transaction types (QOS_EVT_CFG_0, _1) */
    int no_counters;  /* ABMC: the group's monitoring IDs get no counters */
};

enum scen_mon { SCEN_MON_NONE, SCEN_MON_TASK, SCEN_MON_GROUP };

/* The `qos:` section: groups programmed through the platform's QoS driver
 * (drv/qos.h) as register writes; the driver allocates their identifiers. */
struct scen_qos {
    int present;
    int cdp[PLAT_NLEVEL];       /* code/data prioritization to turn on */
    enum scen_mon monitor;      /* an RMID per task, per group, or none */
    char (*grp)[64];            /* group names */
    struct scen_qos_set *init;  /* [ngrp] settings at the start */
    struct scen_qos_set *tinit; /* [ngrp] CBQRI: settings for confidential requests */
    unsigned *resv;             /* [2][ngrp] CBQRI: blocks reserved, normal and secure, as
                                   the phases read so far leave them (for sum checks) */
    unsigned ngrp;
    int *task_grp; /* [ntask] group of each task; -1: the default group (COS 0) */
    /* AMD (drv/qos_scen.c): */
    unsigned has_evt;     /* BMEC: bit 0 total, bit 1 local configured */
    uint32_t evt[2];      /* their transaction types */
    int mbm_event;        /* ABMC: resctrl's mbm_assign_mode "mbm_event" */
    unsigned assign_evts; /* ABMC: bit 0 total, bit 1 local: the events given counters */
    int has_io;           /* SDCIAE: I/O allocation confined to io_cbm (resctrl's io_alloc) */
    uint64_t io_cbm;
};

struct scen_set {
    enum scen_set_kind kind;
    /* SCEN_MASK */
    enum plat_level level;
    int inst;     /* cache instance; -1: every one */
    int type;     /* MACH_DATA, MACH_CODE; -1: both */
    uint64_t cbm; /* capacity bitmask of the level */
    /* SCEN_MASK, SCEN_BW */
    unsigned cls;
    /* SCEN_BW */
    int ctl; /* limiter (domain or node); -1: every one */
    unsigned delay_pct;
    double rate; /* bytes per second; 0 unlimited */
    unsigned rbwb, weight;
    /* SCEN_ASSOC, SCEN_QOS_MOVE */
    unsigned task, new_cls, new_tag;
    /* SCEN_PF (and task): the prefetchers left on, 1 << enum pf_kind */
    unsigned pf_on;
    /* SCEN_QOS (q.grp is also SCEN_QOS_MOVE's group) */
    struct scen_qos_set q;
};

struct scen_phase {
    char name[64];
    double at; /* seconds */
    struct scen_set *set;
    unsigned nset;
};

struct scen {
    char file[256];
    struct plat plat;
    uint64_t seed;
    double duration, interval, settle, slice; /* seconds */
    uint64_t quantum;                         /* cycles */
    struct scen_task *task;
    unsigned ntask;
    struct scen_phase *phase;
    unsigned nphase;
    struct scen_qos qos;
    struct io_params *io; /* the `io:` section's I/O agents */
    unsigned nio;
};

/* A section of a scenario that a layer above sim reads: the `qos:` section
 * and each phase's `qos:` list, which the QoS driver applies (drv/qos_scen.c).
 * sim knows the section's data (struct scen_qos) but not how a driver
 * validates it, so the loader is handed the parser; without one, a `qos`
 * key is an unknown key. */
struct scen_sect {
    int (*load)(struct scen *s, struct conf *c, struct err *e);
    /* How many settings a phase's list adds, so the phase's array is sized once. */
    unsigned (*phase_count)(const struct conf_node *list);
    int (*phase)(struct scen *s, struct conf *c, struct conf_node *list, struct scen_phase *ph,
                 struct err *e);
};

int scen_load(struct scen *s, const char *path, const struct scen_sect *qos, struct err *e);
/* From a loaded document; base is the directory platform paths are relative to. */
int scen_from_conf(struct scen *s, struct conf *c, const char *base, const struct scen_sect *qos,
                   struct err *e);
void scen_free(struct scen *s);
/* Keeps only the tasks and I/O agents named in a comma-separated list;
 * error on an unknown name, or a list without a task. */
int scen_only(struct scen *s, const char *names, struct err *e);

#endif
