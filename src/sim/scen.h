/* Scenarios: a platform, tasks with workloads and CPUs, a duration, a
 * sampling interval, and timed phases whose settings (allocation masks,
 * bandwidth limits, task identifiers) apply from their start. Loaded,
 * checked against the platform completely, then run (run.h). */
#ifndef QOSIM_SIM_SCEN_H
#define QOSIM_SIM_SCEN_H

#include "plat.h"
#include "wl.h"

struct scen_task {
    char name[64];
    unsigned cpu;
    unsigned cls, tag;
    int node; /* NUMA node of its memory; -1: its CPU's */
    int is_trace;
    struct wl_params wp;
    char trace[512];
    const struct trace_ops *fmt;
    int loop;
};

enum scen_set_kind { SCEN_MASK, SCEN_BW, SCEN_ASSOC };

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
    /* SCEN_ASSOC */
    unsigned task, new_cls, new_tag;
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
};

int scen_load(struct scen *s, const char *path, struct err *e);
/* From a loaded document; base is the directory platform paths are relative to. */
int scen_from_conf(struct scen *s, struct conf *c, const char *base, struct err *e);
void scen_free(struct scen *s);
/* Keeps only the tasks named in a comma-separated list; error on an unknown name. */
int scen_only(struct scen *s, const char *names, struct err *e);

#endif
