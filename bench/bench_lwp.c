/* Throughput of the core model with and without LWP watching retirement
 * (issue 5: "simulation with one event sampled every 10,000 instructions
 * keeps at least 80% of the throughput without LWP").
 *
 *   make bench                         # builds and runs it with the rest
 *   build/bench/bench_lwp [MINSTR] [RUNS] [WORKLOAD] [CONFIG]
 *
 * One task on CPU 0 of amd-lwp runs a synthetic workload in quanta of
 * 100,000 cycles for MINSTR million instructions (default 20), RUNS times
 * (default 5) per configuration; the best rate (the run the host
 * disturbed least) is printed as a Markdown table with each
 * configuration's share of the unwatched rate. WORKLOAD and
 * CONFIG (row numbers from 0) run one of each, next to the unwatched run. Nothing here
 * gates a build: the numbers depend on the host. */
#include "hw/lwp.h"
#include "hw/x86.h"
#include "sim/cpu/bpred.h"
#include "sim/cpu/core.h"
#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "sim/cpu/vmem.h"
#include "sim/wl/wl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CB           0x10000ull
#define BUF          0x100000ull
#define RING_RECORDS 4096u

enum cfg { NONE, HOOK_OFF, IR, BR, DCM, ALL3, NCFG };
static const char *const cfg_name[NCFG] = {
    "no observer",
    "observer, LWP off",
    "LWP: instructions retired, every 10000",
    "LWP: branches retired, every 10000",
    "LWP: DCache misses, every 10000",
    "LWP: all three, each every 10000",
};

static void die(const char *what, const struct err *e)
{
    fprintf(stderr, "bench_lwp: %s: %s\n", what, e ? e->msg : "failed");
    exit(1);
}

static void put32(struct vmem *vm, uint64_t a, uint32_t v)
{
    struct vmem_fault f;
    vmem_write_u(vm, a, 4, v, 0, &f);
}

/* Seconds to run ninstr instructions of workload wp under configuration c. */
static double run(const struct plat *p, const struct wl_params *wp, enum cfg c, uint64_t ninstr,
                  uint64_t *records)
{
    struct mach m;
    struct x86 x;
    struct vmem vm;
    struct err e = {0};
    if (mach_init(&m, p, 1, &e))
        die("mach_init", &e);
    if (x86_init(&x, &m, &e))
        die("x86_init", &e);
    mach_set_task(&m, 0, 0);
    vmem_init(&vm);
    if (vmem_map(&vm, CB, 4096, VMEM_U | VMEM_W) ||
        vmem_map(&vm, BUF, RING_RECORDS * LWP_EVENT_SIZE, VMEM_U | VMEM_W))
        die("vmem_map", NULL);
    if (c >= IR) {
        if (x86_wrmsr(&x, 0, LWP_MSR0, 0xF) != HW_OK)
            die("LWPMSR0", NULL);
        put32(&vm, CB + LWPCB_BUFFER_SIZE, RING_RECORDS * LWP_EVENT_SIZE);
        put32(&vm, CB + LWPCB_BUFFER_BASE, (uint32_t)BUF);
        /* EventIds 1, 2 and 3 (Table 1) in slots 0..2, or one in slot 0. */
        unsigned first = c == ALL3 ? 1 : (unsigned)(c - IR + 1), nev = c == ALL3 ? 3 : 1;
        for (unsigned i = 0; i < nev; i++) {
            put32(&vm, CB + LWPCB_EVENT(i), (first + i) << 26 | 10000);
            put32(&vm, CB + LWPCB_COUNTER(i), 10000);
        }
        if (lwp_llwpcb(&x.lwp, 0, &vm, CB, 3, NULL) != HW_OK)
            die("LLWPCB", NULL);
    }
    struct wl *w;
    if (wl_synth_new(wp, 1, &w, &e))
        die("wl_synth_new", &e);
    static struct core_task t;
    core_task_init(&t, w, mach_phys_base(0, 0));
    struct bpred bp;
    bpred_init(&bp);
    const struct core_obs obs = {lwp_observe, lwp_observe_sync, &x.lwp};
    if (c != NONE) {
        t.obs = &obs;
        t.bp = &bp;
    }
    struct mach_cpu *cpu = &m.cpu[0];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    while (m.ts[0].instr < ninstr) {
        if (core_run(&m, cpu, &t, cpu->now + 100000 * MACH_TICK, &e) < 0)
            die("core_run", &e);
        /* A polling profiler keeps the ring from filling. */
        if (c >= IR)
            put32(&vm, CB + LWPCB_BUFFER_TAIL_OFFSET, x.lwp.cpu[0].head);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    *records = c >= IR ? x.lwp.cpu[0].nstored + x.lwp.cpu[0].nmissed : 0;
    wl_free(w);
    vmem_free(&vm);
    x86_free(&x);
    mach_free(&m);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    uint64_t ninstr = (argc > 1 ? strtoull(argv[1], NULL, 10) : 20) * 1000000ull;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    int only_wl = argc > 3 ? atoi(argv[3]) : -1, only_cfg = argc > 4 ? atoi(argv[4]) : -1;
    if (!ninstr || runs < 1 || runs > 99) {
        fprintf(stderr, "usage: bench_lwp [MINSTR] [RUNS]\n");
        return 2;
    }
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, "amd-lwp", &e))
        die("plat_load", &e);
    struct wl_params wl[2];
    const char *wl_name[2] = {"seq 1 MiB (default)", "random 64 MiB"};
    wl_params_default(&wl[0]);
    wl_params_default(&wl[1]);
    wl[1].pattern = WL_RANDOM;
    wl[1].wss = 64ull << 20;
    printf("| workload | configuration | Minstr/s | vs no observer | records |\n");
    printf("|---|---|---|---|---|\n");
    for (int k = 0; k < 2; k++) {
        if (only_wl >= 0 && k != only_wl)
            continue;
        /* Configurations take turns within each round, so that a change in
         * the host's load hits them all alike. */
        double t[NCFG][99];
        uint64_t rec[NCFG] = {0};
        for (int r = 0; r < runs; r++)
            for (int c = 0; c < NCFG; c++)
                if (only_cfg < 0 || c == only_cfg || c == NONE)
                    t[c][r] = run(&p, &wl[k], (enum cfg)c, ninstr, &rec[c]);
        double base = 0;
        for (int c = 0; c < NCFG; c++) {
            if (only_cfg >= 0 && c != only_cfg && c != NONE)
                continue;
            qsort(t[c], (size_t)runs, sizeof t[c][0], cmp);
            double rate = (double)ninstr / t[c][0] / 1e6;
            if (c == NONE)
                base = rate;
            printf("| %s | %s | %.1f | %.1f%% | %llu |\n", wl_name[k], cfg_name[c], rate,
                   100 * rate / base, (unsigned long long)rec[c]);
        }
        fflush(stdout);
    }
    return 0;
}
