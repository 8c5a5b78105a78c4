/* The machine: a platform profile made real. Per-core L1s, L2 per core or
 * module, L3 per domain, NUMA memory, bandwidth limiters; and the
 * vendor-neutral QoS mechanisms the register models program:
 *
 *   - allocation way masks per (cache instance, class, access type);
 *   - capacity-unit limits per (cache instance, class, access type): how
 *     many lines a class may hold there (CBQRI 1.0 cc_cunits);
 *   - association: the class and monitoring tag each logical CPU requests with;
 *   - occupancy per (cache instance, tag): exact, and a set-sampling estimate;
 *   - byte counters per (L3 domain, tag) where the LLC meets memory;
 *   - bandwidth limiters per (domain or controller, class).
 *
 * On a platform with CBQRI controllers the machine also keeps apart what
 * those tell apart (spec 2.2, 5.2.2): every request carries an access type
 * (AT 0 data, AT 1 code) and a C bit (set when the running task's TEE
 * region holds the address). A request with C set uses the confidential
 * classes (class + the level's class count), which the secure register
 * windows program; tags are split into sub-tags per (C, AT) so each
 * controller can count occupancy and bytes per MCID, AT and C; and each
 * (C, class, AT) maps to a bandwidth limiter class of its own choosing
 * (useShared). Elsewhere there is one world and one sub-tag per tag.
 *
 * Time is in ticks, MACH_TICK per core cycle. Addresses are physical: a
 * task's virtual space is placed at mach_phys_base(node, task), so the NUMA
 * node of every line is known from its address. */
#ifndef QOSIM_SIM_MACH_H
#define QOSIM_SIM_MACH_H

#include "sim/mem/bw.h"
#include "sim/cache/cache.h"
#include "sim/mem/mem.h"
#include "sim/scen/plat.h"

#include <stdint.h>

#define MACH_TICK       64 /* ticks per cycle */
#define MACH_MAX_TASKS  2048
#define MACH_VA_BITS    47 /* virtual addresses a task may use */
#define MACH_NODE_SHIFT 58

enum mach_type { MACH_DATA, MACH_CODE }; /* access types masks distinguish (CDP) */
/* How a core's threads share a delay throttle (Intel MBA): each its own
 * class's (per-thread controls, MBA 3.0), or the largest delay of the
 * core's threads' classes for all of them (MBA 1.0 and 2.0; Linux's
 * thread_throttle_mode "max"), or, with IA32_MBA_CFG.MIN_DELAY, the
 * smallest. */
enum mach_thr { MACH_THR_CORE_MAX, MACH_THR_CORE_MIN, MACH_THR_THREAD };
enum mach_ctr { MACH_CTR_TOTAL, MACH_CTR_LOCAL, MACH_CTR_WB, MACH_NCTR };
/* What crosses between an L3 domain and memory, by kind and destination:
 * one class per bit of an AMD BMEC event configuration (Linux
 * arch/x86/kernel/cpu/resctrl/internal.h, READS_TO_LOCAL_MEM ...
 * DIRTY_VICTIMS_TO_ALL_MEM; resctrl.rst, "mbm_total_bytes_config"), so that
 * bit i of a configuration selects class i. The classes are disjoint: a
 * read of slow memory is not a DRAM read. */
enum mach_traffic {
    MACH_TR_RD_LOCAL,    /* reads from DRAM of the requester's node */
    MACH_TR_RD_REMOTE,   /* reads from another node's DRAM */
    MACH_TR_NT_LOCAL,    /* non-temporal writes to local memory */
    MACH_TR_NT_REMOTE,   /* non-temporal writes to remote memory */
    MACH_TR_SLOW_LOCAL,  /* reads from slow memory local to the requester */
    MACH_TR_SLOW_REMOTE, /* reads from slow memory elsewhere */
    MACH_TR_VICTIM,      /* dirty victims written back to any memory */
    MACH_NTRAFFIC
};
#define MACH_TR_ALL ((1u << MACH_NTRAFFIC) - 1)
/* The classes mach_bytes's counters are: total, the reads and
 * non-temporal writes (what a request sends out; victims are counted on
 * their own, MACH_CTR_WB); local, the part of it to local memory. These
 * are BMEC's classes for resctrl's default local configuration (0x15) and
 * its total one less victims. */
#define MACH_TR_TOTAL  (MACH_TR_ALL & ~(1u << MACH_TR_VICTIM))
#define MACH_TR_LOCALS (1u << MACH_TR_RD_LOCAL | 1u << MACH_TR_NT_LOCAL | 1u << MACH_TR_SLOW_LOCAL)

struct mach_cunits; /* capacity-unit limits of one cache instance and their counts (mach.c) */

struct mach_cache {
    struct cache c;
    enum plat_level level;
    unsigned inst;
    uint64_t lat;          /* ticks */
    unsigned nclass;       /* classes with their own masks (>= 1), per world */
    uint64_t *mask;        /* [nconf * nclass * 2]: ways class k of world c may fill for data
                              [2(c * nclass + k)] and code [... + 1] */
    uint64_t ways_per_bit; /* capacity bitmask bit -> ways */
    int acct;              /* occupancy is kept here (monitored, or the last level) */
    uint64_t *occ_tag, *occ_samp, *occ_task; /* lines: exact per sub-tag, sampled sets per
                                                sub-tag, per task (ground truth) */
    uint64_t *occ_low, *samp_low; /* CBQRI machines: low-water marks of occ_tag and occ_samp
                                     per tag, [sub-tags..., both types of each world...] */
    uint32_t samp_period;         /* set s is sampled when s % samp_period == 0 */
    uint32_t nsampled;
    struct mach_cache **above; /* caches an inclusive eviction here must invalidate */
    unsigned nabove;
    struct mach_cunits *cu;     /* NULL while no capacity-unit limit is set here: then fills and
                                   evictions keep no per-class counts and pay one test */
    struct mach_cache **dom_up; /* L3: the L1s and L2s of the cores it serves, whose copies a
                                   DMA write makes stale */
    unsigned ndom_up;
    unsigned victim; /* L3: 0, or a victim cache of the L2s: PLAT_VICTIM_KEEP or _MOVE */
};

/* Per-task ground truth. */
enum { MACH_NLVL = PLAT_NLEVEL };
/* What served a CPU's last access: a cache level (enum plat_level) or the
 * memory of its own node or another. Retirement observers read it (the LWP
 * unit reports a DCache miss's data source, LWP proposal 4.3). */
enum mach_src { MACH_SRC_MEM_LOCAL = PLAT_NLEVEL, MACH_SRC_MEM_REMOTE, MACH_NSRC };

struct mach_tstat {
    uint64_t instr, ticks;
    uint64_t ref[MACH_NLVL], miss[MACH_NLVL];
    uint64_t rd_bytes, wr_bytes;     /* memory reads it caused; writebacks of its lines and
                                        its non-temporal lines */
    uint64_t traffic[MACH_NTRAFFIC]; /* bytes by class, as the domain's counters see them */
    /* Hardware prefetches on its behalf (sim/cache/pf.h): requests that found their line
       absent where they fill, prefetched lines a demand access then used (each once), the
       memory bytes the requests read (also in rd_bytes), and the requests not issued
       because their queue (fill buffers, L2 queue) was full. */
    uint64_t pf_req, pf_useful, pf_bytes, pf_drop;
    /* Loads that missed L1D, by what served them (enum mach_src): what a
       PMU's data-source events count (hw/x86_pmu.h). */
    uint64_t ld_src[MACH_NSRC];
};

struct mach_cpu {
    uint64_t now;  /* ticks */
    uint64_t held; /* ticks its requests waited at limiters whose class setting limits them */
    uint8_t src;   /* enum mach_src of the last access, set by mach_access/mach_miss */
    uint8_t rd_tr[PLAT_MAX_MEM_NODES]; /* enum mach_traffic of its reads of each node */
    uint64_t wc; /* line its write-combining buffer holds (mach_ntstore), UINT64_MAX: none */
    struct mach_cache *l1i, *l1d, *l2, *l3;
    unsigned id, node, domain, port;
    unsigned cls, tag;             /* association */
    int task;                      /* running task, -1 when idle */
    uint16_t own[2][2];            /* owner its lines carry, per [C][MACH_DATA/CODE] */
    const uint64_t *m2[2], *m3[2]; /* L2 and L3 masks of its class per C: [data, code] */
    struct pf *pf;                 /* its hardware prefetchers; NULL when the part has none */
    unsigned pf_on;                /* enabled prefetchers (1 << enum pf_kind); 0 without */
    uint64_t ip;                   /* the running instruction's address (trains l1_ip_stride) */
    uint64_t pf_blk;               /* the line the L1 prefetchers last saw */
    uint64_t conf_lo, conf_len;    /* the running task's TEE region, physical */
    struct mach_tstat *ts;         /* the running task's counters */
    /* Victim L3: an L2 eviction waits here while the miss that caused it
     * looks the L3 up (the request goes down before its fill's victim). */
    struct cache_victim pend;
    int defer;
};

/* What a line remembers of the request that filled it. */
struct mach_owner {
    uint16_t task, tag;
    uint16_t sub; /* C * 2 + AT where the machine splits them, else 0 */
    uint16_t cls; /* class of the request, in its world */
};

/* The part of a line's owner the machine keeps per-tag counts by. */
static inline unsigned mach_sub(unsigned conf, unsigned type)
{
    return conf * 2 + type;
}

struct mach_tee {
    uint64_t lo, len; /* physical */
};

struct mach {
    struct plat p;
    unsigned ncpu, ntask, ntags;
    unsigned nconf, nsub; /* worlds (2 with a C bit, else 1); sub-tags per tag (4 or 1) */
    struct mach_cpu *cpu;
    struct mach_cache *cache[PLAT_NLEVEL]; /* instances of each level */
    unsigned ncache[PLAT_NLEVEL];
    enum plat_level llc;
    uint32_t line, line_bits;
    struct mem mem;
    struct bw *bw; /* limiters: per domain (delay, rate) or per node (share) */
    unsigned nbw;
    uint16_t *bw_map; /* [nconf][bw classes][2]: limiter class of (C, class, AT) */
    uint8_t *thr;     /* [ndomains] enum mach_thr of each domain's delay limiter */
    struct bw *sbw;   /* AMD SMBA: [ndomains] rate limiters on reads of slow memory */
    unsigned nsbw;
    uint64_t *bytes;      /* [ndomains][ntags * nsub][MACH_NTRAFFIC] raw byte counts, never
                             cleared */
    uint64_t *bytes_base; /* [ndomains][ntags][MACH_NCTR] raw count at the last mach_bytes_clear */
    uint64_t *cls_bytes;  /* [ndomains][ntcls][MACH_NTRAFFIC] the same per class of service */
    unsigned ntcls;       /* classes cls_bytes keeps (the most any resource has) */
    /* Memory nodes are the DRAM nodes, then the slow ones (plat_mem_nodes). */
    uint8_t *node_slow;   /* [memory nodes] 1: slow (CXL-like) memory */
    unsigned *node_home;  /* [memory nodes] the node a node's memory is local to (itself for
                             DRAM) */
    uint64_t *node_bytes; /* [memory nodes][ntags * nsub][2]: reads and writes (writebacks,
                             non-temporal lines) served by each node's memory, raw bytes,
                             never wrapped */
    uint64_t ctr_mask;
    struct mach_owner *owners;
    unsigned nowners;
    uint16_t *owner_hash;   /* open addressing over owners, 0xffff: empty */
    struct mach_tee *tee;   /* [ntask + 1] */
    struct mach_tstat *ts;  /* [ntask] */
    struct mach_tstat idle; /* where an idle CPU's counts would go */
    double ticks_per_sec;
    uint64_t cpi_ticks; /* per instruction */
    uint64_t mlp_mul;   /* overlapped stall = latency * mlp_mul >> 16, i.e. latency / mlp */
    uint64_t *io_ways;  /* [L3 instances] ways I/O agents' DMA writes may allocate into */
};

/* Low-water marks kept per tag: one per sub-tag, one per world's sum. */
static inline unsigned mach_nlow(const struct mach *m)
{
    return m->nsub + m->nconf;
}

int mach_init(struct mach *m, const struct plat *p, unsigned ntask, struct err *e);
void mach_free(struct mach *m);

static inline uint64_t mach_phys_base(unsigned node, unsigned task)
{
    return ((uint64_t)node << MACH_NODE_SHIFT) | ((uint64_t)task << MACH_VA_BITS);
}

/* ---- mechanism interface (what hw/ programs) ---- */

/* Ways class cls may fill in one cache instance for one access type; an
 * all-zero mask forbids allocation there. */
int mach_set_mask(struct mach *m, enum plat_level l, unsigned inst, unsigned cls, enum mach_type t,
                  uint64_t ways);
uint64_t mach_get_mask(const struct mach *m, enum plat_level l, unsigned inst, unsigned cls,
                       enum mach_type t);
/* Masks of the confidential classes (requests with C set): class cls of
 * world 1; mach_set_mask is world 0. Only where nconf is 2. */
int mach_set_mask_conf(struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                       unsigned cls, enum mach_type t, uint64_t ways);
uint64_t mach_get_mask_conf(const struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                            unsigned cls, enum mach_type t);
/* Turns a capacity bitmask of the level into ways (each bit is ways_per_bit ways). */
uint64_t mach_cbm_ways(const struct mach *m, enum plat_level l, uint64_t cbm);
/* What a CPU's association register holds: the class and tag of its requests.
 * Also records which task runs there (-1: idle), for ground truth. */
void mach_set_assoc(struct mach *m, unsigned cpu, int task, unsigned cls, unsigned tag);
/* A context switch as the machine sees it: task (-1: idle) runs on cpu from
 * now, and ground truth follows it; the class and tag stay what the
 * association register holds until software writes it, as on hardware. */
void mach_set_task(struct mach *m, unsigned cpu, int task);
/* A task's TEE region (physical [lo, lo + len)): its requests there carry
 * the C bit (CBQRI 5.2.2). len 0: none. From the next association on. */
void mach_set_tee(struct mach *m, unsigned task, uint64_t lo, uint64_t len);
/* Occupancy in lines of a tag in one cache instance: exact, and estimated
 * from the sampled sets; non-confidential requests of both types. */
uint64_t mach_occupancy(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag);
uint64_t mach_occupancy_est(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag);
#define MACH_ANY (-1) /* either access type */
/* The same for requests of world conf and access type at (MACH_ANY: both);
 * est: the sampled estimate. */
uint64_t mach_occupancy_sel(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag,
                            int at, unsigned conf, int est);
/* The lowest the same selection has been since mach_occupancy_low_reset
 * of it (exactly: every eviction is seen), and that reset. Kept on machines
 * with CBQRI controllers, whose capacity counters saturate at 0 (CBQRI 1.0
 * CC_MCTR: a counter is occupancy less this mark); 0 elsewhere. */
uint64_t mach_occupancy_low(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag,
                            int at, unsigned conf, int est);
void mach_occupancy_low_reset(struct mach *m, enum plat_level l, unsigned inst, unsigned tag,
                              int at, unsigned conf);
/* Lines of a task in every instance of a level (ground truth). */
uint64_t mach_task_lines(const struct mach *m, enum plat_level l, unsigned task);
/* A byte counter of (L3 domain, tag), wrapped to the profile's width. */
uint64_t mach_bytes(const struct mach *m, unsigned domain, unsigned tag, enum mach_ctr c);
/* Zeroes the byte counters of (L3 domain, tag). */
void mach_bytes_clear(struct mach *m, unsigned domain, unsigned tag);
/* Raw bytes (never cleared, never wrapped) of the traffic classes in
 * `classes` (bit i: enum mach_traffic i) that requests tagged `tag`, or of
 * class of service `cls`, moved between L3 domain `domain` and memory. A
 * victim counts against the tag and class of the request that filled it. */
uint64_t mach_traffic(const struct mach *m, unsigned domain, unsigned tag, uint32_t classes);
uint64_t mach_traffic_cls(const struct mach *m, unsigned domain, unsigned cls, uint32_t classes);
/* Counts one transfer of class t: against (domain, sub-tag stag, class
 * cls) and, as ground truth, task `task` (m->ntask: idle). */
void mach_count(struct mach *m, unsigned domain, unsigned stag, unsigned cls, unsigned task,
                enum mach_traffic t, uint64_t bytes);
/* Whether memory of node `node` is local to a CPU of node cpu_node: its own
 * node, or slow memory attached there. */
static inline int mach_node_local(const struct mach *m, unsigned cpu_node, unsigned node)
{
    return node == cpu_node || m->node_home[node] == cpu_node;
}
/* Bytes of a tag's requests of world conf and type at (MACH_ANY: both)
 * that node's memory served: reads, or (write) writebacks. Raw, unwrapped. */
uint64_t mach_node_bytes(const struct mach *m, unsigned node, unsigned tag, int at, unsigned conf,
                         int write);
/* Bandwidth limiter setting of limiter class cls at limiter ctl (a domain
 * or a node). Without a C bit the limiter classes are the classes; with
 * one there are nconf * classes * 2, mach_bw_class's. */
int mach_set_bw(struct mach *m, unsigned ctl, unsigned cls, const struct bw_class_set *s);
/* AMD SMBA's limiter class cls of L3 domain `domain` (a rate): caps what
 * requests of that class read from all slow memory together, after the
 * L3BE limiter; reset unlimited. -QOSIM_EINVAL without qos.slow_bandwidth,
 * or for a domain or class it does not have. */
int mach_set_slow_bw(struct mach *m, unsigned domain, unsigned cls, const struct bw_class_set *s);
/* How the threads of each core of L3 domain `domain` share the delay
 * throttle (enum mach_thr); the profile's per_thread sets the reset mode. */
int mach_set_throttle_mode(struct mach *m, unsigned domain, enum mach_thr mode);
/* The limiter class of requests of (world conf, class cls, type at); and
 * which limiter class those requests use (useShared points one AT at
 * another's). Reset: every (conf, cls, at) uses limiter class cls. */
unsigned mach_bw_class(const struct mach *m, unsigned conf, unsigned cls, unsigned at);
int mach_set_bw_map(struct mach *m, unsigned conf, unsigned cls, unsigned at, unsigned bwcls);
/* Capacity-unit limit (CBQRI 1.0 cc_cunits): class cls of world conf may
 * hold at most `lines` lines in one L2 or L3 instance (the levels whose
 * fills honour a class's allocation); 0 removes the limit. at is MACH_DATA
 * or MACH_CODE for a limit on the lines that type's requests filled, or
 * MACH_ANY for one limit on both together (a controller without per-AT
 * allocation); a class may have all three. A request of a class at (>=) a
 * limit that applies to it may fill only by replacing, in that set, among
 * the ways its mask allows, a line of the class's own (of its type, for a
 * per-type limit), as the replacement policy picks; holding none there, it
 * does not allocate at that level (as with an all-zero mask), and where the
 * level is inclusive the copies it just made above go too. Lowering a limit
 * below what the class holds evicts nothing: the class only cannot grow.
 * Where the machine does not tell types apart (nsub 1: no CBQRI
 * controllers) every line counts as data and every limit, per-type or
 * not, is on all the class's lines, the smallest one applying. A class the
 * instance does not have counts, and is limited, as its class 0, whose
 * masks it uses. Returns 0, -QOSIM_EINVAL for a bad level, instance,
 * world, class or type, or -QOSIM_ENOMEM. */
int mach_set_units(struct mach *m, enum plat_level l, unsigned inst, unsigned conf, unsigned cls,
                   int at, uint64_t lines);
/* The lines of one cache instance that requests of (world conf, class cls,
 * type at; MACH_ANY: both) filled, exactly. Kept as counts while a limit is
 * set in the instance; else a scan of its lines. */
uint64_t mach_class_lines(const struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                          unsigned cls, int at);
/* Writes back and invalidates, in one cache instance, the lines filled by
 * class cls of world conf with access type at (MACH_ANY: both), as
 * CBO.FLUSH would (CBQRI 3.5 FLUSH_RCID). Returns the lines flushed. */
uint64_t mach_flush_class(struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                          unsigned cls, int at);
/* The valid lines of one cache instance (for invariants). */
uint64_t mach_valid_lines(const struct mach *m, enum plat_level l, unsigned inst);

/* ---- I/O agents: devices that DMA into memory through an L3 ---- */

/* The L3 ways that DMA writes of I/O agents attached to L3 instance
 * l3inst may allocate into, as a fill mask (mach_set_mask's ways): Intel
 * DDIO's IIO_LLC_WAYS, or the mask AMD SDCIAE confines SDCI fills to. 0:
 * DMA writes do not allocate there; they go to memory and invalidate the
 * domain's copies. Reset: the profile's caches.L3.io_ways. Returns
 * -QOSIM_EINVAL without an L3, for a bad instance or ways that do not exist. */
int mach_set_io_ways(struct mach *m, unsigned l3inst, uint64_t ways);
uint64_t mach_get_io_ways(const struct mach *m, unsigned l3inst);
/* Fills *port, the point where an I/O agent attaches: the L3 of domain
 * `domain`, its node, and the owner its lines carry (task: a machine task
 * index < ntask, whose mach_tstat is the agent's ground truth; class and
 * tag from the scenario). The agent sets port->now before each access.
 * Returns -QOSIM_EINVAL without an L3 or for a bad domain or task. */
int mach_io_port(struct mach *m, struct mach_cpu *port, unsigned domain, unsigned task,
                 unsigned cls, unsigned tag);
/* What one DMA access of a line did: hit the L3 (a write updated the line
 * in place), allocated into the io ways, or went to memory. */
enum mach_dma { MACH_DMA_HIT, MACH_DMA_FILL, MACH_DMA_MEM };
/* A device writes the whole line at physical address addr. Copies in the
 * domain's L1s and L2 go (stale, and not written back: the device replaced
 * every byte). A line in the L3 is updated in place and marked dirty;
 * else, with io ways, it is filled dirty among them (its victim leaves as
 * any eviction does); with none, the L3's copy goes too and the line is
 * written to memory, a victim of the agent's tag and class. */
enum mach_dma mach_dma_write(struct mach *m, struct mach_cpu *port, uint64_t addr);
/* A device reads the line at addr: from the L3 if it is there, else from
 * memory (a read of the agent's tag and class), allocating nowhere. */
enum mach_dma mach_dma_read(struct mach *m, struct mach_cpu *port, uint64_t addr);

/* ---- the access path ---- */

/* Everything after an L1 miss of a request of world conf; returns the
 * latency in ticks. */
uint64_t mach_miss(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t block,
                   unsigned conf);
/* Handles a line that left cache x (evicted or invalidated). */
void mach_left(struct mach *m, struct mach_cpu *p, struct mach_cache *x,
               const struct cache_victim *v);

/* A non-temporal store by CPU p to addr: written around the caches, one
 * write-combined full line per line the stream enters (mach.c says how);
 * returns the ticks it waited for its memory channel. */
uint64_t mach_ntstore(struct mach *m, struct mach_cpu *p, uint64_t addr);

/* ---- hardware prefetchers (sim/cache/pf.h; mach.c, "prefetch requests") ---- */

/* Which prefetchers of CPU cpu run: bit k enables enum pf_kind k, where the
 * part has it (others are ignored). Reset: all the part has. The machine
 * keeps it per logical CPU; register models write every thread of a core
 * where the control is per core. -QOSIM_EINVAL for a bad CPU. */
int mach_set_prefetch(struct mach *m, unsigned cpu, unsigned on);
unsigned mach_get_prefetch(const struct mach *m, unsigned cpu);
/* The L1D side of the prefetchers, for mach_access: trains them on a data
 * access (hit or miss) that enters a line other than the last one they saw
 * (project choice: accesses within one line tell a next-line or stride
 * prefetcher nothing it acts on, and skipping them keeps the hit path
 * cheap), and issues what they ask; on a hit of a prefetched line, counts
 * it useful and returns what the core still waits for it. */
uint64_t mach_pf_l1(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t addr, int hit);

/* One access by CPU p (kind: HIER_IFETCH/LOAD/STORE/MODIFY); returns its
 * latency in ticks beyond an L1 hit. */
static inline __attribute__((always_inline)) uint64_t
mach_access(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t addr)
{
    int code = kind == HIER_IFETCH;
    struct mach_cache *x = code ? p->l1i : p->l1d;
    unsigned lvl = code ? PLAT_L1I : PLAT_L1D;
    uint64_t b = addr >> m->line_bits;
    unsigned dirty = (kind == HIER_STORE || kind == HIER_MODIFY) ? CACHE_F_DIRTY : 0;
    unsigned conf = addr - p->conf_lo < p->conf_len; /* the C bit */
    struct cache_victim v;
    p->ts->ref[lvl]++;
    p->src = (uint8_t)lvl; /* mach_miss overwrites it with the level that served a miss */
    if (cache_ref(&x->c, b, dirty, p->own[conf][code], ~0ull, &v)) {
        if (__builtin_expect(p->pf_on & PF_L1_ANY, 0) && !code && b != p->pf_blk)
            return mach_pf_l1(m, p, kind, addr, 1); /* L1 prefetchers: a line entered */
        return 0;
    }
    p->ts->miss[lvl]++;
    if (v.valid)
        mach_left(m, p, x, &v);
    uint64_t lat = mach_miss(m, p, kind, b, conf);
    p->ts->ld_src[p->src] += kind == HIER_LOAD;
    if (__builtin_expect(p->pf_on & PF_L1_ANY, 0) && !code) /* L1 prefetchers */
        mach_pf_l1(m, p, kind, addr, 0);
    return lat;
}

#endif
