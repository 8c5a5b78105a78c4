/* I/O agents: devices (a NIC, a storage controller) attached to one L3
 * domain that DMA into ring buffers in memory at a steady rate: writes (a
 * NIC receiving) and reads of the same ring (transmitting). Each DMA line
 * goes through the machine's DMA path (mach_dma_write, mach_dma_read), so
 * it allocates into the L3 within the domain's io ways, as Intel DDIO and
 * AMD SDCI do, and its lines and memory traffic carry the agent's class
 * and tag. Agents advance in global time order with the CPUs (sched.h's
 * sched_ext), so a run with them stays deterministic. */
#ifndef QOSIM_SIM_IO_H
#define QOSIM_SIM_IO_H

#include "sim/mach.h"

/* One agent as a scenario describes it. */
struct io_params {
    char name[64];
    unsigned domain;    /* L3 domain (instance) it is attached to */
    unsigned node;      /* NUMA node of its buffers */
    unsigned cls, tag;  /* what its requests carry */
    double rate;        /* DMA bytes per second, writes and reads together */
    uint64_t buffer;    /* bytes of its ring, whole lines */
    double write_ratio; /* share of its lines that are writes */
    unsigned line;      /* its line in the scenario, for messages */
};

/* What an agent's DMA did, in lines (ground truth). */
struct io_stat {
    uint64_t wr, rd;          /* lines written, read */
    uint64_t wr_hit, wr_fill; /* writes that updated an L3 line, that allocated one */
    uint64_t wr_mem;          /* writes that went to memory (no io ways) */
    uint64_t rd_hit, rd_mem;  /* reads served by the L3, by memory */
};

struct io_agent {
    struct io_params p;
    struct mach_cpu port; /* where it enters the machine; port.now: its next line's time */
    unsigned task;        /* its machine task index: its lines' owner and mach_tstat */
    uint64_t base;        /* physical address of its ring */
    uint64_t nlines;      /* lines in the ring */
    uint64_t n;           /* lines issued so far */
    uint64_t wpos, rpos;  /* the ring's next line to write, to read */
    double ticks_per_line;
    struct io_stat st;
};

struct io {
    struct mach *m;
    struct io_agent *a;
    unsigned n;
};

/* n agents of m, as machine tasks first_task, first_task + 1, ... (which
 * must exist: mach_init's ntask counts them). Fails without an L3. */
int io_init(struct io *io, struct mach *m, const struct io_params *p, unsigned n,
            unsigned first_task, struct err *e);
void io_free(struct io *io);
/* The agent furthest behind (its next line earliest), its time in *now;
 * -1 when there are none. */
int io_next(const struct io *io, uint64_t *now);
/* Agent k issues every line due before `until` (ticks). */
void io_run(struct io *io, unsigned k, uint64_t until);

#endif
