/* x86 platform QoS to the register: CPUID and the QoS MSRs of Intel RDT
 * (SDM vol. 3B 17.16-17.19, the L2 CDP paper) and AMD64 PQoS (pub. 56375),
 * over the simulated machine. Register layouts are docs/registers.md section 1.
 * AMD's Lightweight Profiling unit (lwp.h) answers its own CPUID bits and
 * MSRs through the same entry points.
 *
 * The interface is the one a driver has on real hardware: cpuid, rdmsr and
 * wrmsr per logical CPU, each ending in a value or a fault. Writes become
 * the machine's mechanism settings; counter reads come from its counters. */
#ifndef QOSIM_HW_X86_H
#define QOSIM_HW_X86_H

#include "hw.h"
#include "lwp.h"
#include "x86_pmu.h"
#include "sim/mach.h"

#include <stdint.h>

/* MSR addresses (docs/registers.md 1, "MSRs"). */
enum {
    X86_L3_QOS_CFG = 0xC81,        /* IA32_L3_QOS_CFG: L3 CDP enable */
    X86_L2_QOS_CFG = 0xC82,        /* IA32_L2_QOS_CFG: L2 CDP enable (L2 CDP paper) */
    X86_MBA_CFG = 0xC84,           /* IA32_MBA_CFG: MBA 2.0 thread throttling mode */
    X86_QM_EVTSEL = 0xC8D,         /* IA32_QM_EVTSEL (SDM 17.16.7) */
    X86_QM_CTR = 0xC8E,            /* IA32_QM_CTR (SDM 17.16.7), read-only */
    X86_PQR_ASSOC = 0xC8F,         /* IA32_PQR_ASSOC (SDM 17.16.6) */
    X86_L3_MASK_0 = 0xC90,         /* IA32_L3_QOS_MASK_n */
    X86_L2_MASK_0 = 0xD10,         /* IA32_L2_QOS_MASK_n */
    X86_MBA_THRTL_0 = 0xD50,       /* IA32_L2_QoS_Ext_BW_Thrtl_n (Intel MBA) */
    X86_AMD_BW_CTL_0 = 0xC0000200, /* L3QOS_BW_CONTROL_n (AMD 56375, L3BE) */
    /* AMD's later PQoS (APM vol. 2, 24593, ch. 19; docs/registers.md 1.6) */
    X86_AMD_SMBW_CTL_0 = 0xC0000280, /* L3QOS_SMBW_CONTROL_n, SMBA (19.4.6) */
    X86_AMD_ABMC_CFG = 0xC00003FD,   /* L3_QOS_ABMC_CFG, ABMC (19.3.3.3) */
    X86_AMD_ABMC_DSC = 0xC00003FE,   /* L3_QOS_ABMC_DSC, read-only */
    X86_AMD_EXT_CFG = 0xC00003FF,    /* L3_QOS_EXT_CFG: ABMC and SDCIAE enables */
    X86_AMD_EVT_CFG_0 = 0xC0000400,  /* QOS_EVT_CFG_n, BMEC (19.3.3.2) */
};

/* Fields, declared once. */
HW_FIELD(PQR_ASSOC, RMID, 0, 10);
HW_FIELD(PQR_ASSOC, COS, 32, 32);
HW_FIELD(QM_EVTSEL, EVTID, 0, 8);
HW_FIELD(QM_EVTSEL, RMID, 32, 10);
HW_FIELD(QM_CTR, U, 62, 1); /* Unavailable: no data for this RMID now */
HW_FIELD(QM_CTR, E, 63, 1); /* Error: unsupported event or RMID out of range */
HW_FIELD(QOS_CFG, CDP, 0, 1);
HW_FIELD(MBA_THRTL, DELAY, 0, 16);
HW_FIELD(MBA_CFG, MIN_DELAY, 0, 1); /* a core takes the smallest of its threads' delays */
HW_FIELD(MBA_CFG, LEGACY, 1, 1);    /* MBA 2.0 legacy mode */

/* AMD's later PQoS fields, named as APM vol. 2 (24593) ch. 19 spells them. */
HW_FIELD(QM_EVTSEL, ExtEvtID, 31, 1);     /* Figure 19-2: MBZ unless ABMC_En */
HW_FIELD(QOS_EVT_CFG, BwType, 0, 7);      /* Figure 19-4; [63:7] MBZ */
HW_FIELD(L3_QOS_ABMC_CFG, BwType, 0, 32); /* Figure 19-5 */
HW_FIELD(L3_QOS_ABMC_CFG, BwSrc, 32, 12); /* an RMID, or a COS with IsCOS */
HW_FIELD(L3_QOS_ABMC_CFG, IsCOS, 47, 1);
HW_FIELD(L3_QOS_ABMC_CFG, CtrID, 48, 5);
HW_FIELD(L3_QOS_ABMC_CFG, CtrEn, 62, 1);
HW_FIELD(L3_QOS_ABMC_CFG, CfgEn, 63, 1);  /* configure CtrID on this write */
HW_FIELD(L3_QOS_ABMC_DSC, CfgErr, 63, 1); /* Figure 19-6; other fields as ABMC_CFG */
HW_FIELD(L3_QOS_EXT_CFG, ABMC_En, 0, 1);  /* Figure 19-7; [63:2] RAZ */
HW_FIELD(L3_QOS_EXT_CFG, SDCIAE_En, 1, 1);

/* Monitoring event IDs: CPUID.0FH.1 EDX bit + 1. */
enum { X86_EVT_OCCUPANCY = 1, X86_EVT_TOTAL = 2, X86_EVT_LOCAL = 3 };
/* With QM_EVTSEL.ExtEvtID: L3CacheABMC, one assignable counter (Table 19-6). */
enum { X86_EXT_EVT_ABMC = 1 };

/* One ABMC counter of an L3 domain: its configuration as L3_QOS_ABMC_DSC
 * reports it (CfgErr, CtrEn, IsCOS, BwSrc, BwType) and the raw bytes its
 * source had moved when it was last configured (counting starts there). */
struct x86_abmc {
    uint64_t dsc, base;
};

/* The APIC ID layout (docs/registers.md 1.1, "Topology"): what QEMU 7.2
 * assigns for -smp sockets=S,dies=D,cores=C,threads=T with S the profile's
 * sockets, D = nodes x domains (a die per L3 domain), C = modules x cores
 * (cores per die) and T = threads. An ID is socket, die, core and thread
 * from the top, each field ceil(log2(count)) bits wide (0 for a count of 1). */
struct x86_topo {
    unsigned sockets, dies, cores, threads; /* S; D per socket; C per die; T per core */
    unsigned thread_bits, core_bits, die_bits;
};

struct x86 {
    struct mach *m;
    const struct plat *p;
    int amd;
    unsigned ncos[PLAT_NLEVEL]; /* mask MSRs per level (COS_MAX + 1); 0: no CAT */
    unsigned cbm_len[PLAT_NLEVEL];
    unsigned bw_cos;             /* MBA or L3BE classes */
    unsigned bw_len;             /* AMD: BW_LEN */
    unsigned nrmid;              /* RMIDs (max RMID + 1) */
    uint64_t *assoc;             /* [ncpu] PQR_ASSOC */
    uint64_t *evtsel;            /* [ncpu] (Intel) or [ndomains] (AMD) */
    uint64_t *cfg[PLAT_NLEVEL];  /* L2/L3 QOS_CFG per cache instance */
    uint64_t *mask[PLAT_NLEVEL]; /* [instances * ncos] */
    uint64_t *bw;                /* [ndomains * bw_cos] MBA delay or AMD BW_CONTROL */
    unsigned sbw_cos, sbw_len;   /* AMD SMBA: classes and SMBW_LEN (0: no SMBA) */
    uint64_t *sbw;               /* [ndomains * sbw_cos] L3QOS_SMBW_CONTROL_n */
    uint64_t *tracked;           /* AMD: [ndomains * nrmid] seq of the RMID's last association
                                    in the domain; 0: its bandwidth is not tracked there */
    uint64_t seq;                /* AMD: PQR_ASSOC writes so far, to order them */
    uint64_t *mba_cfg;           /* [sockets] IA32_MBA_CFG */
    unsigned *l3_of, *l2_of;     /* [ncpu] topology, for x86_regif */
    struct x86_topo topo;
    /* AMD BMEC, ABMC, SDCIAE (APM vol. 2, 19.3.3.2, 19.3.3.3, 19.4.7) */
    uint64_t *evt_cfg;     /* [ndomains * 2] QOS_EVT_CFG_0, _1 */
    uint64_t *mbm_base;    /* [(ndomains * nrmid) * 2] raw bytes at the last clear, per event */
    uint8_t *mbm_unavail;  /* [same] the next QM_CTR read reports U (after a clear) */
    uint64_t *ext_cfg;     /* [ncpu] L3_QOS_EXT_CFG, each CPU's copy */
    uint64_t *ext_mode;    /* [ndomains] the domain's modes: the value its CPUs last wrote */
    uint64_t *abmc_cfg;    /* [ncpu] L3_QOS_ABMC_CFG, each CPU's copy */
    struct x86_abmc *abmc; /* [ndomains * p->mon.abmc] */
    struct lwp lwp;        /* the LWP unit (absent unless the profile has qos.lwp) */
    uint64_t *pf_ctl;      /* [cores] prefetcher control MSR of each core (x86_pf.c) */
    struct x86_pmu pmu;    /* Intel core PMU (x86_pmu.c); pmu.ngp 0: none */
};

int x86_init(struct x86 *x, struct mach *m, struct err *e);
/* The register interface over this model, for drivers. */
void x86_regif(struct x86 *x, struct hw_x86_if *out);
void x86_free(struct x86 *x);
/* Architectural reset of every register, applied to the machine. */
void x86_reset(struct x86 *x);

/* The APIC ID layout of a profile's CPUs. */
void x86_topo_of(const struct plat *p, struct x86_topo *out);
/* The initial APIC ID (x2APIC ID) of logical CPU cpu: socket, die, core and
 * thread fields as struct x86_topo lays them out, from where the machine
 * places the CPU (plat_place). */
uint32_t x86_apic_id(const struct x86 *x, unsigned cpu);

/* The register interface. out: eax, ebx, ecx, edx. */
enum hw_fault x86_cpuid(struct x86 *x, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4]);
enum hw_fault x86_rdmsr(struct x86 *x, unsigned cpu, uint32_t msr, uint64_t *val);
enum hw_fault x86_wrmsr(struct x86 *x, unsigned cpu, uint32_t msr, uint64_t val);

#endif
