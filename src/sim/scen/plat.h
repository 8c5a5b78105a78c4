/* Platform profiles: what a machine is made of (topology, clocks, caches,
 * memory) and which QoS capabilities its hardware has, read from a YAML
 * file and validated completely before anything is built from it.
 *
 * Profiles shipped with qosim (profiles/ *.yaml) are compiled in and found by
 * name; any other profile is a path. The topology nests socket > NUMA node >
 * L3 domain > L2 module > core > SMT thread; logical CPUs are numbered in
 * that order, threads of a core adjacent. */
#ifndef QOSIM_SIM_PLAT_H
#define QOSIM_SIM_PLAT_H

#include "sim/mem/bw.h"
#include "sim/cache/cache.h"
#include "sim/cache/hier.h"
#include "sim/cache/pf.h"
#include "util/conf.h"

#include <stdint.h>

enum plat_level { PLAT_L1I, PLAT_L1D, PLAT_L2, PLAT_L3, PLAT_NLEVEL };
extern const char *const plat_level_name[PLAT_NLEVEL];
/* Who shares one instance of a cache. */
enum plat_scope { PLAT_SCOPE_CORE, PLAT_SCOPE_MODULE, PLAT_SCOPE_DOMAIN, PLAT_NSCOPE };
extern const char *const plat_scope_name[PLAT_NSCOPE];
enum plat_vendor { PLAT_INTEL, PLAT_AMD, PLAT_RISCV, PLAT_NVENDOR };
extern const char *const plat_vendor_name[PLAT_NVENDOR];

#define PLAT_MAX_CPUS    1024
#define PLAT_MAX_CLASSES 4096 /* CBQRI RCIDs are 12 bits */
#define PLAT_MAX_TAGS    4096 /* RMIDs (10 bits) and MCIDs (12 bits) */
#define PLAT_MAX_CTLS    8    /* CBQRI controllers of one kind */

struct plat_topo {
    unsigned sockets, nodes, domains, modules, cores, threads; /* each per parent */
};

/* Cache allocation (CAT, PQE, a CBQRI capacity controller) on one level. */
struct plat_alloc {
    unsigned classes;   /* 0: the level has no allocation control */
    unsigned cbm_len;   /* capacity bitmask bits (CBQRI: NCBLKS); each bit is ways/cbm_len ways */
    int cdp;            /* code and data masks separately */
    uint64_t shareable; /* bits other agents also use (CPUID.10H EBX) */
    int sparse;         /* non-contiguous masks allowed */
    int io;             /* L3, AMD: SDCIAE, I/O allocation confined to the highest COS's mask
                           (caches.L3.allocation.io) */
};

enum { PLAT_VICTIM_KEEP = 1, PLAT_VICTIM_MOVE = 2 };

struct plat_cache {
    int present;
    struct cache_geom geom;
    unsigned latency; /* cycles, load-to-use from this level */
    enum plat_scope scope;
    enum hier_incl incl; /* nine or inclusive (of the levels above) */
    /* L3 only: a victim cache of the L2s (plat.c, load_l3_layout): 0 not;
     * PLAT_VICTIM_KEEP: an L3 hit leaves the line there too; PLAT_VICTIM_MOVE:
     * an L3 hit moves it to the L2. */
    unsigned victim;
    const struct repl_ops *repl;
    struct plat_alloc alloc;
    int monitored; /* occupancy monitoring at this level */
    /* L3 only: the capacity bitmask (bits of cbm_len, each ways / cbm_len
     * ways) of the ways I/O agents' DMA writes may allocate into: Intel
     * DDIO's ways (IIO_LLC_WAYS, MSR 0xC8B), what AMD SDCIAE confines SDCI
     * fills to. The machine's reset value of mach_set_io_ways; 0: DMA
     * writes do not allocate. */
    uint64_t io_ways;
};

struct plat_core {
    double freq; /* Hz */
    double cpi;  /* cycles per instruction when nothing misses */
    double mlp;  /* independent misses overlapping: a miss stalls latency / mlp */
    double link; /* bytes per cycle from L2 to the interconnect */
    /* x86 CPU signature (CPUID 1 EAX): the family, model and stepping as
     * software displays them, before the SDM's encoding splits them into
     * base and extended fields; 0 on RISC-V. */
    unsigned family, model, stepping;
    /* RISC-V harts: SXLEN (32 or 64; srmcfg is SXLEN bits wide, Ssqosid
     * ch. 2) and whether Smstateen is implemented (mstateen0 bit 55 then
     * gates srmcfg below M-mode). 64 and no on x86. */
    unsigned xlen;
    int smstateen;
    /* Hardware prefetchers the part has and their parameters (core.prefetch;
       none unless the profile names them). */
    struct pf_cfg pf;
};

/* The signature a profile's CPUs report when core: names none (profiles.md):
 * Intel family 6 model 0x6A stepping 6 (Ice Lake-SP), AMD family 0x19 model
 * 0x01 stepping 1 (Zen 3, Milan). Neither has a Linux resctrl quirk. */
#define PLAT_INTEL_FAMILY   0x06
#define PLAT_INTEL_MODEL    0x6A
#define PLAT_INTEL_STEPPING 6
#define PLAT_AMD_FAMILY     0x19
#define PLAT_AMD_MODEL      0x01
#define PLAT_AMD_STEPPING   1

struct plat_mem {
    unsigned channels; /* per NUMA node */
    double peak;       /* bytes per second per node */
    double latency;    /* seconds, base read latency after the LLC */
    double remote;     /* seconds added for another node's memory */
};

/* Slow memory (memory.slow): CPU-less NUMA nodes of CXL-attached memory,
 * `nodes` of them attached to each DRAM node, numbered after the DRAM
 * nodes: DRAM node d's k-th slow node is nnodes + d * nodes + k, local to
 * d (its home) and remote to every other node. */
struct plat_slow {
    unsigned nodes;    /* per DRAM node; 0: no slow memory */
    unsigned channels; /* per slow node */
    double peak;       /* bytes per second per slow node */
    double latency;    /* seconds, base read latency after the LLC, from its home node */
};

/* Monitoring: tags (RMIDs, MCIDs), occupancy and byte counters. */
struct plat_mon {
    unsigned tags; /* monitoring IDs (RMID 0..tags-1); 0: no monitoring */
    int occupancy, total, local;
    unsigned width; /* byte counter bits; counters wrap at 2^width */
    uint64_t scale; /* bytes per counter unit (CPUID.F.1 EBX upscaling factor) */
    double sample;  /* share of sets the occupancy estimator samples (0, 1] */
    /* Bandwidth tags each L3 domain's counters track at once (AMD 56375 may
     * track fewer than exist); tags: all of them. */
    unsigned tracked;
    /* AMD (APM vol. 2, 19.3.3.2-19.3.3.3): BMEC, the total and local events'
     * transaction types set by QOS_EVT_CFG_n; ABMC, this many assignable
     * counters per L3 domain (0: none), which may count a COS instead of an
     * RMID with abmc_by_class (CPUID 0x80000020.5 ECX[0]). */
    int bmec;
    unsigned abmc;
    int abmc_by_class;
};

/* How an Intel MBA throttle acts (qos.bandwidth.model; sim/mem/bw_delay.c). */
enum plat_mba_model { PLAT_MBA_LINK, PLAT_MBA_REQUEST, PLAT_MBA_SPACING };

/* Memory bandwidth control. */
struct plat_bw {
    enum bw_kind kind; /* BW_NONE, BW_DELAY (at L2 egress), BW_RATE (L3 to memory,
                          per L3 domain), BW_SHARE (at each node's memory controller) */
    unsigned classes;
    unsigned max;         /* delay: max throttle percent; rate: BW_LEN bits */
    unsigned granularity; /* delay: percent step */
    int linear;           /* delay: linear scale (CPUID.10H.3 ECX[2]) */
    int per_thread;       /* delay, Intel: MBA 3.0's per-thread controls (CPUID.10H.3
                             ECX[0]): each thread its own delay; else a core's threads
                             share one, the largest (or, with MIN_DELAY, smallest) */
    int min_max;          /* delay, Intel: IA32_MBA_CFG selects whether a core takes the
                             largest or smallest of its threads' delays */
    double window;        /* rate, share: accounting window, seconds */
    unsigned nblks;       /* share: NBWBLKS */
    unsigned mrbwb;       /* share: MRBWB, the most blocks that may be reserved */

    /* delay: how a throttle acts (qos.bandwidth.model, enum plat_mba_model): the link
       model (a throttled class's link rate falls with the delay), the request model (each
       request leaving L2 waits req_delay[delay_pct] cycles more) or the spacing model
       (a core's requests leaving L2 are req_spacing[delay_pct] cycles apart); bw_delay.c.
       Cycles per delay value 0..99 (0 when the profile has no such table). */
    int req_model;
    double req_delay[BW_DELAY_REQ_STEPS];
    double req_spacing[BW_DELAY_REQ_STEPS];
};

/* A CBQRI controller's place and size. */
#define PLAT_CBQRI_BUSY   64   /* default qos.cbqri.busy_cycles */
#define PLAT_CBQRI_ACCESS 16   /* default qos.cbqri.access_cycles */
#define PLAT_CBQRI_STRIDE 4096 /* default distance between a controller's instances */

/* Which CBQRI text the controllers and harts follow (qos.cbqri.spec). */
enum plat_cbqri_spec { PLAT_CBQRI_1_0, PLAT_CBQRI_DRAFT };
extern const char *const plat_cbqri_spec_name[2]; /* "1.0", "draft-2023" */

struct plat_cbqri_ctl {
    enum plat_level level; /* capacity: PLAT_L2 or PLAT_L3; bandwidth: PLAT_NLEVEL = memory */
    uint64_t base;         /* MMIO base of instance 0; instance i at base + i * stride */
    uint64_t stride;       /* 4 KiB multiples (draft ch. 1); 1.0: 8-byte multiples */
    unsigned rcids, mcids;
    unsigned blocks; /* NCBLKS or NBWBLKS */
    unsigned mrbwb;  /* bandwidth: MRBWB */
    int frcid;       /* capacity: FLUSH_RCID supported */
    int cunits;      /* capacity, 1.0: cc_cunits limits supported (CUNITS) */
};

struct plat_lwp {
    int present;
    unsigned max_events;   /* event counters in the LWPCB */
    unsigned latency_bits; /* DCache miss latency counter width (ECX[4:0]) */
    unsigned min_buffer;   /* smallest ring, in 32-record units (LwpMinBufferSize); 0: none */
    int data_address, cache_level, cache_latency, branch_prediction, ip_filter;
};

struct plat {
    char name[64];
    char file[256];
    enum plat_vendor vendor;
    struct plat_topo topo;
    struct plat_core core;
    struct plat_cache cache[PLAT_NLEVEL];
    struct plat_mem mem;
    struct plat_slow slow;
    struct plat_mon mon;
    struct plat_bw bw;
    /* AMD SMBA (qos.slow_bandwidth): a rate limiter per L3 domain on what
     * the domain reads from all slow memory together; kind BW_NONE without. */
    struct plat_bw sbw;
    struct plat_cbqri_ctl cbqri_cap[PLAT_MAX_CTLS], cbqri_bw[PLAT_MAX_CTLS];
    unsigned n_cbqri_cap, n_cbqri_bw;
    unsigned cbqri_busy, cbqri_access; /* cycles an operation keeps BUSY; an MMIO access costs */
    enum plat_cbqri_spec cbqri_spec;
    int cbqri_rpfx;   /* 1.0: every controller in RCID-prefixed mode (RPFX 1) */
    unsigned cbqri_p; /* its P: MCID bits kept under the RCID prefix (0..12) */
    struct plat_lwp lwp;
    /* Derived. nnodes counts the DRAM nodes (those with CPUs); nslow the
     * slow nodes after them (nnodes * slow.nodes). */
    unsigned ncpus, ncores, nmodules, ndomains, nnodes, nslow;
};

/* Physical addresses carry the node in their top 6 bits (sim/mach.h,
 * MACH_NODE_SHIFT): at most this many memory nodes, DRAM and slow. */
#define PLAT_MAX_MEM_NODES 64

/* Every memory node, DRAM and slow. */
static inline unsigned plat_mem_nodes(const struct plat *p)
{
    return p->nnodes + p->nslow;
}

/* The DRAM node a memory node is local to: itself, or a slow node's home. */
static inline unsigned plat_node_home(const struct plat *p, unsigned node)
{
    return node < p->nnodes ? node : (node - p->nnodes) / p->slow.nodes;
}

/* The profile called name (a shipped one) or at a path (plat_is_path). */
int plat_load(struct plat *p, const char *name_or_path, struct err *e);
/* Whether name is a file's path rather than a shipped profile's name: it
 * contains '/' or ends in .yaml or .yml. */
int plat_is_path(const char *name);
/* From an already loaded document (for tests and fuzzing); checks unknown keys. */
int plat_from_conf(struct plat *p, struct conf *c, struct err *e);

/* Shipped profiles, for listing: name and YAML text; NULL past the end. */
const char *plat_builtin_name(unsigned i);
const char *plat_builtin_text(const char *name);
/* "amd-epyc, amd-lwp, ...": the shipped names for messages, into buf. */
const char *plat_builtin_list(char *buf, size_t cap);

/* Where logical CPU cpu sits. */
struct plat_place {
    unsigned socket, node, domain, module, core, thread;
};
void plat_place(const struct plat *p, unsigned cpu, struct plat_place *out);
/* Instance of a cache level serving cpu. */
unsigned plat_cache_inst(const struct plat *p, enum plat_level l, unsigned cpu);
/* Instances of a cache level. */
unsigned plat_cache_count(const struct plat *p, enum plat_level l);
/* Whether p's hardware takes v as a capacity bitmask of level l (which has
 * allocation control); if not, *why (unless why is NULL) says what the level
 * takes, worded to follow "0xMASK: L3 of NAME ". */
int plat_mask_ok(const struct plat *p, enum plat_level l, uint64_t v, const char **why);

#endif
