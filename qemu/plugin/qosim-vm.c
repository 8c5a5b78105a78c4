/* qosim-vm: the TCG plugin behind `qosim vm`. It holds the whole model in
 * QEMU's process: the profile's machine (caches, memory, limiters) and its
 * x86 QoS registers. Through the hooks qemu/patches/ add to QEMU, every
 * vCPU's CPUID and QoS MSRs are answered by the model (hw/x86.c), so the
 * guest's kernel programs the same registers qosim's own driver and
 * console do; and every instruction fetch and data access of every vCPU
 * runs through that vCPU's simulated core, tagged with the class and RMID
 * its PQR_ASSOC holds at that moment.
 *
 * vCPU i is the profile's logical CPU i (the same APIC ID, x86_apic_id).
 * Guest-physical addresses are the machine's, on the model's node 0; with
 * slow=SIZE the guest's second NUMA node, the last SIZE bytes of its RAM,
 * is the model's first slow node, the one attached to node 0 (docs/vm.md,
 * "Slow memory"). Accesses to MMIO are not memory traffic and skip the
 * caches. QEMU runs the vCPUs on one thread (-accel tcg,thread=single), so
 * the model is never entered twice at once.
 *
 * Arguments: profile=NAME|PATH (required), report=FILE (JSON at exit: per
 * vCPU and per RMID ground truth), pace=K (host nanoseconds the guest is
 * held back per simulated nanosecond its requests waited at a bandwidth
 * limiter; 0, the default, never holds it back), console=PATH (a Unix
 * socket where `qosim regs --attach PATH` drives this same model while the
 * guest runs), slow=SIZE (bytes: the guest's NUMA node 1, which `qosim vm
 * --slow-memory` gives it, is the profile's first slow node),
 * from=user|boot|mark (where simulation starts: the guest's first
 * user-space instruction, the default, QEMU's first, or the guest's own
 * QOSIM_SIM_CTL write; "Fast-forward" below), lead=NS (simulated
 * nanoseconds a running vCPU's clock may be ahead of the slowest running
 * one's before it gives way; "Lead" below; default VM_LEAD_NS). */
#include <qemu-plugin.h>
#include <qosim-hooks.h>

#include "hw/x86.h"
#include "hw/x86_console.h"
#include "hw/x86_pf.h"
#include "hw/x86_pmu.h"
#include "sim/cpu/bpred.h"
#include "sim/cpu/core.h"
#include "sim/trace/x86br.h"
#include "sim/mach.h"
#include "sim/wl/wl.h"
#include "util/err.h"
#include "util/usock.h"

#include "simctl.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Records a vCPU collects before its core runs through them: one more
 * instruction (at most a few accesses) must always fit. */
#define VM_BATCH 4096
#define VM_SLACK 64
/* Lead: how far, in simulated time, a vCPU may run ahead of the others
 * (project choice: a fiftieth of the time the channel timeline remembers,
 * MEM_BUCKETS buckets of MEM_SLOTS lines, about 0.5 ms on intel-xeon; and
 * several batches, so a vCPU gives way once in tens of thousands of
 * instructions). */
#define VM_LEAD_NS 10000
/* RAM blocks the guest can have: one per NUMA node, of which it has two. */
#define VM_RAM_BLOCKS 2

struct vcpu {
    struct core_task t;
    struct wl *wl;
    size_t n;
    uint64_t instr;     /* guest instructions, for the report (those at CPL > 0 are
                           truth[0][X86_EV_INSTR]) */
    uint64_t instr_run; /* ... of which the core has run (vcpu_run) */
    /* Performance monitoring ("The PMU" below): the privilege level of the
     * batch (1: CPL 0), the events counted outside the core since the last
     * batch ran, the core's ticks not yet a whole cycle, the branch the
     * last instruction was (its flags, address and fall-through) and the
     * core's branch predictor. */
    int os;
    uint64_t ev[X86_PMU_NEV];
    uint64_t truth[2][X86_PMU_NEV]; /* [os]: every event counted, QOSIM_EVENT_n */
    uint64_t tick_rem;
    unsigned br;
    uint64_t br_pa, br_next;
    struct bpred bp;
    struct trace_rec rec[VM_BATCH];
};

static struct {
    struct plat p;
    struct mach m;
    struct x86 x;
    struct vcpu *v;
    unsigned nv;
    unsigned nq; /* QEMU's vCPUs: 1 + the highest index on_vcpu_init saw */
    /* Guest RAM in QEMU's address space: a block per NUMA node, each from
     * host address `host` at guest-physical `gpa` (qemu_plugin_qosim_ram_block). */
    struct {
        uint8_t *host;
        uint64_t gpa, size;
    } ram[VM_RAM_BLOCKS];
    unsigned nram;
    /* The guest's slow node: guest-physical [slow_gpa, slow_gpa + slow_size)
     * is the model's node slow_node from its start (slow_size 0: none, until
     * find_ram has found the block of the size slow= asked for). */
    uint64_t slow_want, slow_gpa, slow_size, slow_base;
    unsigned slow_node;
    char report[4096], console[4096];
    double pace;
    uint64_t lead;                    /* lead=, in ticks */
    uint64_t *rmid_ticks, *rmid_held; /* [ntags] for the report: the simulated time vCPUs ran
                                         with that RMID in PQR_ASSOC, and what their requests
                                         waited at limiters in it */
    uint64_t *rmid_instr;             /* [ntags]: the instructions they ran in that time */
    uint64_t *rmid_instr_user;        /* [ntags]: ... of them at CPL > 0 */
    uint64_t pace_sim;                /* ticks requests waited at limiters since the last check */
    double pace_debt_ns;              /* host time the guest still owes */
    int from;                         /* enum from */
    int sim_want;                     /* QOSIM_SIM_CTL.SIM as last set */
    int sim_on;                       /* blocks are translated with the callbacks */
    int sim_started;                  /* simulation has run, for the report */
    int fine;                         /* a general-purpose counter counts: loads, stores and
                                         branches are counted ("The PMU") */
    qemu_plugin_id_t id;
} vm;

/* Fast-forward: the firmware and the kernel's boot run at QEMU's own speed,
 * with CPUID and the QoS MSRs answered by the model from the first
 * instruction, but no access fed to the caches; simulation starts when the
 * guest first runs user-space code (its init), as a simulator's
 * fast-forward skips to the region of interest (project choice: nothing
 * the model is for happens before a program runs, and a boot simulated
 * whole took ten times as long; docs/vm.md, "Fast-forward"). User space is
 * recognised by its addresses: x86-64 Linux maps its kernel in the upper
 * half of the address space and user space in the lower, and the only code
 * it runs in the lower half is where virtual equals physical (the firmware,
 * the kernel's start before paging moves it up, the secondary CPUs'
 * start-up trampoline). So the first block whose lower-half address is not
 * its RAM's physical one is a user-space program's.
 *
 * The guest can also mark its region of interest itself, as simulators'
 * guests do with magic instructions: QOSIM_SIM_CTL (simctl.h) switches
 * simulation off and on again at any time, and with from=mark it is off
 * until the guest first switches it on. Either switch takes effect once
 * QEMU has dropped the blocks translated the other way (qemu_plugin_reset,
 * which runs its callback with every vCPU stopped). */
enum from {
    FROM_USER, /* the first user-space block switches simulation on */
    FROM_BOOT, /* on from QEMU's first instruction */
    FROM_MARK, /* off until the guest writes QOSIM_SIM_CTL */
};
#define FF_LOWER_END (1ull << 47) /* the lower half of a 48-bit address space */

static void die(const char *what, const struct err *e)
{
    fprintf(stderr, "qosim-vm: %s: %s\n", what, e->msg);
    exit(2);
}

/* ---- the PMU ----
 *
 * The model's core PMU (hw/x86_pmu.c) counts what each batch caused: a
 * batch holds one privilege level's instructions (on_insn runs the batch
 * when the level changes), so its instructions, the core's cycles and the
 * cache events of its task's ground truth (the vCPU is task cpu) belong
 * to that level. Loads, stores and branches are counted as they are
 * collected; a branch retires when the next instruction of the same level
 * shows where it went (an interrupt between them leaves it unpredicted).
 * Loads, stores and branches cost the guest time to count, and only a
 * general-purpose counter can count them: they are counted while one of
 * some vCPU counts (vm.fine; project choice), QOSIM_EVENT_n's among them.
 * Counters count simulated execution only: with simulation off nothing
 * is collected, and they stand still. An overflow that asks for a PMI is
 * delivered through the vCPU's local APIC at the batch's end. */
_Static_assert(QOSIM_EVENTS == X86_PMU_NEV, "simctl.h lists the PMU's events");

static void pmu_count(struct vcpu *v, unsigned cpu, const struct mach_tstat *s0)
{
    uint64_t ev[X86_PMU_NEV];
    x86_pmu_events(s0, &vm.m.ts[cpu], &v->tick_rem, ev);
    /* With what the plugin counted as it collected: loads, stores, branches. */
    for (unsigned k = 0; k < X86_PMU_NEV; k++) {
        v->ev[k] += ev[k];
        v->truth[v->os][k] += v->ev[k];
    }
    unsigned pmi = vm.x.pmu.ngp ? x86_pmu_count(&vm.x, cpu, v->os, v->ev) : 0;
    memset(v->ev, 0, sizeof v->ev);
    unsigned first = cpu / vm.x.pmu.threads * vm.x.pmu.threads;
    for (unsigned t = 0; pmi; t++, pmi >>= 1)
        if ((pmi & 1) && first + t < vm.nq)
            qemu_plugin_qosim_pmi(first + t);
}

/* Runs a vCPU's core through what it collected. */
static void vcpu_run(struct vcpu *v, unsigned cpu)
{
    if (!v->n)
        return;
    struct err e = {0};
    struct mach_cpu *p = &vm.m.cpu[cpu];
    uint64_t h0 = p->held, t0 = p->now;
    struct mach_tstat s0 = vm.m.ts[cpu];
    /* One RMID for the whole batch: every QoS MSR access runs the
     * batches first (model_takes). */
    unsigned tag = p->tag;
    wl_feed(v->wl, v->rec, v->n);
    v->n = 0;
    v->t.ended = 0; /* the stretch before ended the fed workload */
    if (core_run(&vm.m, p, &v->t, UINT64_MAX, &e) < 0)
        die("simulated core", &e);
    vm.pace_sim += p->held - h0;
    uint64_t n = v->instr - v->instr_run;
    if (tag < vm.m.ntags) {
        vm.rmid_ticks[tag] += p->now - t0;
        vm.rmid_held[tag] += p->held - h0;
        vm.rmid_instr[tag] += n;
        vm.rmid_instr_user[tag] += v->os ? 0 : n;
    }
    pmu_count(v, cpu, &s0);
    v->instr_run = v->instr;
}

/* Every vCPU's pending accesses, before software looks at or changes the
 * registers that count and tag them. */
static void run_all(void)
{
    for (unsigned i = 0; i < vm.nv; i++)
        vcpu_run(&vm.v[i], i);
}

/* The earliest clock of the vCPUs other than cpu that are not halted;
 * UINT64_MAX when none runs. */
static uint64_t earliest_running(unsigned cpu)
{
    uint64_t min = UINT64_MAX;
    for (unsigned i = 0; i < vm.nq; i++)
        if (i != cpu && vm.m.cpu[i].now < min && !qemu_plugin_qosim_vcpu_halted(i))
            min = vm.m.cpu[i].now;
    return min;
}

/* The latest clock of all (the vCPUs QEMU lacks have never run: 0). */
static uint64_t latest_clock(void)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < vm.nv; i++)
        t = vm.m.cpu[i].now > t ? vm.m.cpu[i].now : t;
    return t;
}

/* Lead: QEMU runs the vCPUs in turns on one thread, each until an
 * interrupt, a halt or its turn's end (a tenth of a host second), and each
 * vCPU's core has a clock of its own; left alone, one clock moves
 * milliseconds ahead of another, and the caches and memory channels see
 * accesses that are simultaneous on the model's clock long apart. A vCPU
 * whose clock is more than vm.lead ahead of the slowest other vCPU that is
 * not halted gives way: its turn ends at its next block and the next vCPU
 * runs (as parallel simulators bound the slack between their cores). The
 * slowest never gives way, so the guest always moves on; a halted vCPU's
 * clock stands still and holds nobody back (on_resume moves it on when it
 * wakes). */
static void give_way(unsigned cpu)
{
    uint64_t min = earliest_running(cpu);
    if (min != UINT64_MAX && vm.m.cpu[cpu].now > min + vm.lead)
        qemu_plugin_qosim_vcpu_yield();
}

/* Pacing: the guest's clocks are the host's, so a bandwidth limit that
 * slows the simulated core would not show in what the guest measures. With
 * pace K the plugin holds the guest back K host nanoseconds for each
 * simulated nanosecond its requests waited at a bandwidth limiter (summed
 * over vCPUs: they share one host thread), on top of the time QEMU and the
 * model take anyway. Work no limiter delays runs at full speed. */
static void pace(void)
{
    vm.pace_debt_ns += vm.pace * (double)vm.pace_sim / vm.m.ticks_per_sec * 1e9;
    vm.pace_sim = 0;
    if (vm.pace_debt_ns >= 1e6) {
        struct timespec ts = {(time_t)(vm.pace_debt_ns / 1e9),
                              (long)((uint64_t)vm.pace_debt_ns % 1000000000ull)};
        nanosleep(&ts, NULL);
        vm.pace_debt_ns = 0;
    }
}

/* ---- the console: qosim regs --attach, on the running model ----
 *
 * A thread of its own accepts clients and reads their lines; each line is
 * interpreted on QEMU's vCPU thread, the only one that enters the model,
 * the next time that thread passes by (con_serve: at every batch of a
 * vCPU, at every QoS MSR access, when a vCPU wakes). A reply is the
 * console's output for the line (none for a blank or comment line), then
 * an empty line. Only the user who started QEMU is served (usock_accept):
 * the socket is 0600, but root passes any mode. */
static struct {
    int fd;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending; /* a line waits for the vCPU thread */
    char line[CONSOLE_LINE], out[CONSOLE_REPLY];
    long r; /* console_read's result for line */
    struct x86_console xk;
    struct lwp_proc proc;
    dev_t dev; /* the socket file made, removed at exit if still there */
    ino_t ino;
} con = {.fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void run_all(void);

static void con_interp(void *self, char *line, FILE *out)
{
    x86_console_line(self, line, out);
}

/* A line that sets (x86_console_sets: a wrmsr) acts after everything the
 * guest did so far, so every vCPU's pending batch is simulated first, as
 * for the guest's own QoS MSR accesses (model_takes). Any other line only
 * looks, and is answered from the model as it stands, each vCPU simulated
 * up to its last full batch (at most VM_BATCH records behind): simulating
 * the partial batches now would send them to the shared caches and memory
 * in another order than the guest's own course does, so merely attaching a
 * console and reading would change what the guest's cores do. */
static void con_serve(void)
{
    if (!__atomic_load_n(&con.pending, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&con.mu);
    if (con.pending) {
        if (con.r > 0 && x86_console_sets(con.line))
            run_all();
        console_reply(&con.xk.k, con.r, con.line, con.out, sizeof con.out, con_interp, &con.xk);
        __atomic_store_n(&con.pending, 0, __ATOMIC_RELEASE);
        pthread_cond_signal(&con.cv);
    }
    pthread_mutex_unlock(&con.mu);
}

/* One client at a time, its lines numbered from 1 as its script's are;
 * each line, whatever bytes it holds, gets one reply (console_read,
 * console_reply). */
static void *con_main(void *arg)
{
    (void)arg;
    for (;;) {
        int c = usock_accept(con.fd, stderr);
        if (c < 0)
            return NULL;
        FILE *io = fdopen(c, "r+");
        if (!io) {
            close(c);
            continue;
        }
        pthread_mutex_lock(&con.mu);
        con.xk.k.line = con.xk.k.errors = 0;
        pthread_mutex_unlock(&con.mu);
        char buf[sizeof con.line];
        long r;
        while ((r = console_read(io, buf, sizeof buf)) != 0) {
            pthread_mutex_lock(&con.mu);
            memcpy(con.line, buf, sizeof buf);
            con.r = r;
            __atomic_store_n(&con.pending, 1, __ATOMIC_RELEASE);
            while (con.pending)
                pthread_cond_wait(&con.cv, &con.mu);
            fputs(con.out, io);
            pthread_mutex_unlock(&con.mu);
            if (fflush(io))
                break;
        }
        fclose(io);
    }
}

/* The socket is checked for when QEMU loads the plugin, and made when the
 * guest's first block is translated: QEMU installs its SIGTERM handler only
 * after its boards and displays, and a socket made before that would
 * outlive a QEMU stopped in between (the default action runs no exit
 * callback to remove it). */
static int con_check(const char *path)
{
    struct err e;
    struct stat st;
    if (usock_folder_safe(path, &e)) {
        fprintf(stderr, "qosim-vm: console=%s\n", e.msg);
        return -1;
    }
    if (!lstat(path, &st)) {
        fprintf(stderr, "qosim-vm: console=%s: it exists, and nothing is replaced\n", path);
        return -1;
    }
    return 0;
}

static void con_start(const char *path)
{
    struct err e;
    if ((con.fd = usock_listen(path, &e)) < 0) {
        fprintf(stderr, "qosim-vm: console=%s\n", e.msg);
        exit(2);
    }
    struct stat st;
    if (!lstat(path, &st)) {
        con.dev = st.st_dev;
        con.ino = st.st_ino;
    }
    lwp_proc_init(&con.proc, &vm.x, 0);
    con.xk.x = &vm.x;
    con.xk.proc = &con.proc;
    pthread_t t;
    if (pthread_create(&t, NULL, con_main, NULL)) {
        fprintf(stderr, "qosim-vm: console=%s: cannot start its thread\n", path);
        exit(2);
    }
    pthread_detach(t);
}

/* The model's address of a guest-physical one: node 0's are the same
 * (mach_phys_base(0, 0) is 0); the slow node's are placed at that node's
 * base, as a task's buffer on it is in qosim run (mach_phys_base). */
static inline uint64_t model_addr(uint64_t gpa)
{
    return gpa - vm.slow_gpa < vm.slow_size ? vm.slow_base + (gpa - vm.slow_gpa) : gpa;
}

static inline struct trace_rec *put(unsigned cpu)
{
    struct vcpu *v = &vm.v[cpu];
    if (v->n >= VM_BATCH - VM_SLACK) {
        vcpu_run(v, cpu);
        give_way(cpu);
        if (vm.pace > 0)
            pace();
        con_serve();
    }
    return &v->rec[v->n++];
}

/* What on_tb packs into an instruction's callback data: its address, the
 * model's (guest-physical, or for code outside RAM its 47-bit virtual one),
 * or for code on the slow node its guest-physical one, which on_insn makes
 * the model's (model_addr's node bits do not fit); its branch flags
 * (x86br.h); whether it runs at CPL 0; and its length. */
#define INSN_ADDR_SHIFT 17
#define INSN_BR_SHIFT   6
#define INSN_SLOW       (1u << 5)
#define INSN_OS         (1u << 4)

/* The last instruction was a branch, and pa is where the vCPU went next:
 * it is counted, and unless it is a direct jump (never mispredicted, as
 * in the core's observer, sim/cpu/core.c) the predictor predicts and
 * learns it, taken when pa is not its fall-through. */
static void branch_retire(struct vcpu *v, uint64_t pa, int os)
{
    v->ev[X86_EV_BRANCH]++;
    if (os == v->os && !(v->br & TREC_F_DIRECT) &&
        !bpred_branch(&v->bp, v->br_pa, pa != v->br_next))
        v->ev[X86_EV_BR_MISS]++;
    v->br = 0;
}

/* An instruction, described by its packed data (above). */
static void on_insn(unsigned cpu, void *ud)
{
    uint64_t d = (uintptr_t)ud;
    struct vcpu *v = &vm.v[cpu];
    uint64_t pa = d >> INSN_ADDR_SHIFT;
    if (__builtin_expect(d & INSN_SLOW, 0))
        pa = model_addr(pa);
    int os = (d & INSN_OS) != 0;
    unsigned len = (unsigned)(d & 15);
    if (__builtin_expect(vm.fine, 0)) { /* the last branch retires; this one may be one */
        if (v->br)
            branch_retire(v, pa, os);
        unsigned br = (unsigned)(d >> INSN_BR_SHIFT) & 0xff;
        if (br & TREC_F_BRANCH) {
            v->br = br;
            v->br_pa = pa;
            v->br_next = pa + len;
        }
    }
    if (os != v->os) { /* a batch holds one privilege level ("The PMU") */
        vcpu_run(v, cpu);
        v->os = os;
    }
    struct trace_rec *r = put(cpu);
    *r = (struct trace_rec){.addr = pa, .size = len, .kind = TREC_I};
    v->instr++;
}

static void on_mem(unsigned cpu, qemu_plugin_meminfo_t info, uint64_t va, void *ud)
{
    (void)ud;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, va);
    if (!hw || qemu_plugin_hwaddr_is_io(hw))
        return; /* a device register, not memory */
    struct trace_rec *r = put(cpu);
    int st = qemu_plugin_mem_is_store(info);
    *r = (struct trace_rec){.addr = model_addr(qemu_plugin_hwaddr_phys_addr(hw)),
                            .size = 1u << qemu_plugin_mem_size_shift(info),
                            .kind = st ? TREC_S : TREC_L};
    if (__builtin_expect(vm.fine, 0))
        vm.v[cpu].ev[st ? X86_EV_STORES : X86_EV_LOADS]++;
}

static void sim_switched(qemu_plugin_id_t id);

/* The guest-physical address of host address h if it is guest RAM. */
static int ram_pa(const uint8_t *h, uint64_t *pa)
{
    for (unsigned b = 0; h && b < vm.nram; b++)
        if (h >= vm.ram[b].host && (uint64_t)(h - vm.ram[b].host) < vm.ram[b].size) {
            *pa = vm.ram[b].gpa + (uint64_t)(h - vm.ram[b].host);
            return 1;
        }
    return 0;
}

/* Simulation on (1) or off (0) from the next block QEMU translates: what
 * the vCPUs collected so far is simulated first, then QEMU drops every
 * block translated so far and sim_switched applies the newest setting
 * (QEMU ignores a second reset while one is pending; the pending one's
 * callback then applies this setting too). */
static void sim_set(int on)
{
    if (on == vm.sim_want)
        return;
    run_all();
    vm.sim_want = on;
    qemu_plugin_reset(vm.id, sim_switched);
}

/* Whether tb is the first user-space block of a guest fast-forwarded to
 * it (from=user; "Fast-forward" above). */
static int first_user_block(struct qemu_plugin_tb *tb)
{
    uint64_t pa, va = qemu_plugin_tb_vaddr(tb);
    return vm.from == FROM_USER && !vm.sim_started && !vm.sim_want && va < FF_LOWER_END &&
           qemu_plugin_tb_n_insns(tb) &&
           ram_pa(qemu_plugin_insn_haddr(qemu_plugin_tb_get_insn(tb, 0)), &pa) && va != pa;
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    if (vm.console[0] && con.fd < 0)
        con_start(vm.console);
    if (!vm.sim_on) {
        if (first_user_block(tb))
            sim_set(1);
        return;
    }
    size_t n = qemu_plugin_tb_n_insns(tb);
    /* The CPL the block runs at (part of its flags): USR or OS for the
     * PMU's counters. */
    uint64_t os = qemu_plugin_qosim_cpl() == 0 ? INSN_OS : 0;
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
        const uint8_t *h = qemu_plugin_insn_haddr(in);
        /* Code outside RAM (the firmware's ROM) is fetched at its
         * virtual address, which is its physical one in the firmware's
         * flat mode. Guest-physical addresses take fewer than 47 bits
         * (the guest's RAM is below 128 TiB). */
        uint64_t pa = qemu_plugin_insn_vaddr(in) & ((1ull << MACH_VA_BITS) - 1), slow = 0;
        if (ram_pa(h, &pa) && model_addr(pa) != pa)
            slow = INSN_SLOW;
        size_t len = qemu_plugin_insn_size(in);
        uint64_t br = x86br_flags(qemu_plugin_insn_data(in), len);
        uintptr_t d =
            (uintptr_t)(pa << INSN_ADDR_SHIFT | br << INSN_BR_SHIFT | slow | os | (len & 15));
        qemu_plugin_register_vcpu_insn_exec_cb(in, on_insn, QEMU_PLUGIN_CB_NO_REGS, (void *)d);
        qemu_plugin_register_vcpu_mem_cb(in, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                         NULL);
    }
}

/* ---- CPUID: which parts the model answers ---- */

/* Leaves the model answers whole: its vendor and limits, topology, caches
 * and QoS enumeration (docs/vm.md, "What the guest's CPU says"). */
static int model_leaf(uint32_t leaf)
{
    switch (leaf) {
    case 0x0:
    case 0x4:
    case 0xA:
    case 0xB:
    case 0xF:
    case 0x10:
    case 0x1F:
    case 0x80000005:
    case 0x80000006:
    case 0x8000001D:
    case 0x8000001E:
    case 0x80000020:
        return 1;
    }
    return 0;
}

static void on_cpuid(unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t regs[4])
{
    uint32_t m[4];
    if (cpu >= vm.nv || x86_cpuid(&vm.x, cpu, leaf, sub, m) != HW_OK)
        return;
    if (model_leaf(leaf)) {
        memcpy(regs, m, sizeof m);
        return;
    }
    switch (leaf) {
    case 0x1:
        /* Signature and topology from the model; the features are what
         * QEMU's CPU implements, with the model's HTT and CLFSH. */
        regs[0] = m[0];
        regs[1] = (m[1] & 0xffffff00u) | (regs[1] & 0xffu);
        regs[3] = (regs[3] & ~(1u << 28 | 1u << 19)) | (m[3] & (1u << 28 | 1u << 19));
        /* Performance monitoring is the model's (leaf 0AH, x86_pmu.h),
         * without the debug store (DS, DTES64, DS-CPL) or
         * IA32_PERF_CAPABILITIES (PDCM). */
        regs[2] &= ~(1u << 2 | 1u << 4 | 1u << 15);
        regs[3] &= ~(1u << 21);
        break;
    case 0x7:
        if (sub == 0) /* PQM (bit 12) and PQE (bit 15) */
            regs[1] = (regs[1] & ~(1u << 12 | 1u << 15)) | (m[1] & (1u << 12 | 1u << 15));
        break;
    case 0x80000000:
        regs[0] = m[0];
        if (vm.x.amd)
            memcpy(&regs[1], &m[1], 3 * sizeof *m);
        break;
    case 0x80000001:
        /* CmpLegacy and TopoExt from the model. LWP (bit 15) is not
         * offered: its instructions are not emulated in the guest. */
        regs[2] = (regs[2] & ~(1u << 1 | 1u << 22 | 1u << 15)) | (m[2] & (1u << 1 | 1u << 22));
        break;
    case 0x80000008:
        /* Address sizes stay QEMU's; L3BE (EBX 6) and the core count
         * and APIC ID size (ECX) are the model's. */
        regs[1] = (regs[1] & ~(1u << 6)) | (m[1] & (1u << 6));
        regs[2] = m[2];
        break;
    case 0x8000001C: /* LWP: not offered (above) */
        memset(regs, 0, 4 * sizeof *regs);
        break;
    }
}

/* ---- MSRs ---- */

/* The QoS MSRs: Intel's architectural range from IA32_L3_QOS_CFG to the
 * last MBA throttle, and AMD's QoS range: the bandwidth limits (L3BE
 * 0xC0000200, SMBA 0xC0000280), ABMC and L3_QOS_EXT_CFG (0xC00003FD-FF) and
 * BMEC's event configurations, QOS_EVT_CFG_n at 0xC0000400 + n for every n
 * that EVT_NUM (CPUID 8000_0020h.3 EBX[7:0]) can enumerate, 256 (those the
 * profile lacks are #GP, as an MSR a part lacks is, where TCG would read
 * 0 and drop writes: a fuzzing guest found it); and the switches of
 * the model's prefetchers (Intel MSR_MISC_FEATURE_CONTROL 0x1A4, AMD
 * PrefetchControl 0xC0000108; hw/x86_pf.h), which are #GP on a profile
 * without prefetchers, as a part makes an MSR it lacks; and on a part with
 * Intel's core PMU (x86_pmu.h) its MSRs, as many as the part's counters
 * (the rest of each range is #GP), which TCG would read as 0. Everything
 * else stays QEMU's. */
static int pmu_msr(uint32_t msr)
{
    return vm.x.pmu.ngp &&
           (msr - X86_PMC_0 < X86_PMU_MAX_GP || msr - X86_PERFEVTSEL_0 < X86_PMU_MAX_GP ||
            msr - X86_FIXED_CTR_0 < X86_PMU_NFIXED ||
            (msr >= X86_FIXED_CTR_CTRL && msr <= X86_PERF_GLOBAL_INUSE) ||
            (vm.x.pmu.offcore_bits && msr - X86_OFFCORE_RSP_0 < 2));
}

static int model_msr(uint32_t msr)
{
    return (msr >= 0xC81 && msr <= 0xDFF) || (msr >= 0xC0000200 && msr <= 0xC00004FF) ||
           msr == X86_MISC_FEATURE_CONTROL || msr == X86_AMD_PREFETCH_CONTROL || pmu_msr(msr);
}

static int to_qemu(enum hw_fault f)
{
    return f == HW_OK ? QOSIM_MSR_DONE : QOSIM_MSR_GP;
}

/* Whether the model takes this access; if so, what came before it is
 * simulated first (and a waiting console line is served). */
static int model_takes(unsigned cpu, uint32_t msr)
{
    if (!model_msr(msr) || cpu >= vm.nv)
        return 0;
    run_all();
    con_serve();
    return 1;
}

static int on_rdmsr(unsigned cpu, uint32_t msr, uint64_t *val)
{
    if (msr == QOSIM_SIM_CTL) {
        *val = vm.sim_want ? QOSIM_SIM_CTL_SIM : 0;
        return QOSIM_MSR_DONE;
    }
    if (msr - QOSIM_EVENT_0 < 2 * QOSIM_EVENTS && cpu < vm.nv) {
        struct vcpu *v = &vm.v[cpu];
        vcpu_run(v, cpu); /* this RDMSR and what came before it */
        unsigned n = msr - QOSIM_EVENT_0;
        *val = v->truth[n & 1][n / 2];
        return QOSIM_MSR_DONE;
    }
    return model_takes(cpu, msr) ? to_qemu(x86_rdmsr(&vm.x, cpu, msr, val)) : QOSIM_MSR_QEMU;
}

static int on_wrmsr(unsigned cpu, uint32_t msr, uint64_t val)
{
    if (msr - QOSIM_EVENT_0 < 2 * QOSIM_EVENTS)
        return QOSIM_MSR_GP; /* read-only (simctl.h) */
    if (msr == QOSIM_SIM_CTL) {
        if (val & ~QOSIM_SIM_CTL_SIM)
            return QOSIM_MSR_GP; /* reserved bits (simctl.h) */
        sim_set(val & QOSIM_SIM_CTL_SIM ? 1 : 0);
        return QOSIM_MSR_DONE;
    }
    if (!model_takes(cpu, msr))
        return QOSIM_MSR_QEMU;
    int r = to_qemu(x86_wrmsr(&vm.x, cpu, msr, val));
    if (pmu_msr(msr)) {
        /* From here on loads, stores and branches are counted, or not;
         * a branch seen before does not retire into the counts. */
        int fine = x86_pmu_gp_counting(&vm.x);
        for (unsigned i = 0; fine && !vm.fine && i < vm.nv; i++)
            vm.v[i].br = 0;
        vm.fine = fine;
    }
    return r;
}

/* RDPMC (allowed by CR4.PCE or CPL 0, which QEMU checked): the model's
 * counter once the vCPU's collected instructions are counted, or #GP for
 * a counter it lacks; without a PMU QEMU's #UD. */
static int on_rdpmc(unsigned cpu, uint32_t ecx, uint64_t *val)
{
    if (!vm.x.pmu.ngp || cpu >= vm.nv)
        return QOSIM_MSR_QEMU;
    vcpu_run(&vm.v[cpu], cpu);
    return to_qemu(x86_pmu_rdpmc(&vm.x, cpu, ecx, val));
}

static const QosimHooks hooks = {on_cpuid, on_rdmsr, on_wrmsr, on_rdpmc};

/* ---- life cycle ---- */

/* The guest's RAM blocks, once the machine has them; with slow=SIZE, the
 * one that holds node 1 must be there, of that size, after node 0's. */
static void find_ram(void)
{
    void *h;
    uint64_t gpa, size;
    while (vm.nram < VM_RAM_BLOCKS && qemu_plugin_qosim_ram_block(vm.nram, &h, &gpa, &size) == 0) {
        vm.ram[vm.nram].host = h;
        vm.ram[vm.nram].gpa = gpa;
        vm.ram[vm.nram].size = size;
        vm.nram++;
    }
    if (!vm.slow_want)
        return;
    for (unsigned b = 0; b < vm.nram; b++)
        if (vm.ram[b].gpa && vm.ram[b].size == vm.slow_want) {
            vm.slow_gpa = vm.ram[b].gpa;
            vm.slow_size = vm.slow_want;
            return;
        }
    fprintf(stderr, "qosim-vm: slow=%" PRIu64 ": the guest has no NUMA node of that size\n",
            vm.slow_want);
    exit(2);
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned cpu)
{
    (void)id;
    if (!vm.nram)
        find_ram();
    if (cpu >= vm.nv) {
        fprintf(stderr, "qosim-vm: vCPU %u: the profile %s has %u logical CPUs\n", cpu, vm.p.name,
                vm.nv);
        exit(2);
    }
    if (cpu >= vm.nq)
        vm.nq = cpu + 1;
}

/* A vCPU that wakes from HLT rejoins the others' time: an idle core's
 * clock stands still in the model, which would make its next requests
 * arrive in the past of everything the busy ones did. It joins the
 * earliest of the vCPUs that run (the latest of all when none runs): its
 * wake is an event of the present, and the earliest running clock is the
 * present every running vCPU has reached. Joined later, it would book
 * what it shares with a vCPU that runs behind it (its core's link to the
 * interconnect, whose timeline never moves back, sim/mem/bw_delay.c)
 * ahead of that vCPU, which would then wait for it; and the guest's timer
 * wakes its idle vCPUs hundreds of times a host second, far more often in
 * simulated time. */
static void on_resume(qemu_plugin_id_t id, unsigned cpu)
{
    (void)id;
    if (cpu >= vm.nv)
        return;
    vcpu_run(&vm.v[cpu], cpu); /* what it ran before it halted */
    uint64_t t = earliest_running(cpu);
    if (t == UINT64_MAX)
        t = latest_clock();
    if (vm.m.cpu[cpu].now < t)
        vm.m.cpu[cpu].now = t;
    con_serve();
}

static void write_report(void)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", vm.report);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "qosim-vm: cannot write %s\n", tmp);
        return;
    }
    /* from: where simulation was to start; simulating: whether it had
     * (false: the guest never reached user space, or with from=mark never
     * switched simulation on, so nothing below counts). */
    fprintf(f,
            "{\n  \"platform\": \"%s\",\n  \"from\": \"%s\",\n  \"simulating\": %s,\n"
            "  \"vcpus\": [\n",
            vm.p.name, (const char *[]){"user", "boot", "mark"}[vm.from],
            vm.sim_started ? "true" : "false");
    for (unsigned i = 0; i < vm.nv; i++) {
        const struct mach_tstat *s = &vm.m.ts[i];
        fprintf(f,
                "    {\"cpu\": %u, \"instructions\": %" PRIu64 ", \"user_instructions\": %" PRIu64
                ", \"simulated_ns\": %.0f, "
                "\"l3_misses\": %" PRIu64 ", \"mem_read_bytes\": %" PRIu64
                ", \"mem_write_bytes\": %" PRIu64 "}%s\n",
                i, vm.v[i].instr, vm.v[i].truth[0][X86_EV_INSTR],
                (double)vm.m.cpu[i].now / vm.m.ticks_per_sec * 1e9, s->miss[PLAT_L3], s->rd_bytes,
                s->wr_bytes, i + 1 < vm.nv ? "," : "");
    }
    fprintf(f, "  ],\n  \"rmids\": [");
    int first = 1;
    for (unsigned t = 0; t < vm.m.ntags; t++) {
        uint64_t rd = 0, wb = 0, srd = 0;
        for (unsigned n = 0; n < plat_mem_nodes(&vm.p); n++) { /* slow nodes too */
            uint64_t b = mach_node_bytes(&vm.m, n, t, MACH_ANY, 0, 0);
            rd += b;
            srd += vm.m.node_slow[n] ? b : 0;
            wb += mach_node_bytes(&vm.m, n, t, MACH_ANY, 0, 1);
        }
        if (!rd && !wb && !vm.rmid_instr[t])
            continue;
        fprintf(f,
                "%s\n    {\"rmid\": %u, \"instructions\": %" PRIu64
                ", \"user_instructions\": %" PRIu64 ", \"read_bytes\": %" PRIu64
                ", \"writeback_bytes\": %" PRIu64 ", \"slow_read_bytes\": %" PRIu64
                ", \"simulated_ns\": %.0f, \"held_ns\": %.0f, \"traffic\": [",
                first ? "" : ",", t, vm.rmid_instr[t], vm.rmid_instr_user[t], rd, wb, srd,
                (double)vm.rmid_ticks[t] / vm.m.ticks_per_sec * 1e9,
                (double)vm.rmid_held[t] / vm.m.ticks_per_sec * 1e9);
        /* Bytes by traffic class, class i being bit i of an AMD BMEC
         * configuration (enum mach_traffic), all L3 domains together. */
        for (unsigned k = 0; k < MACH_NTRAFFIC; k++) {
            uint64_t b = 0;
            for (unsigned d = 0; d < vm.p.ndomains; d++)
                b += mach_traffic(&vm.m, d, t, 1u << k);
            fprintf(f, "%s%" PRIu64, k ? ", " : "", b);
        }
        fprintf(f, "]}");
        first = 0;
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) || rename(tmp, vm.report))
        fprintf(stderr, "qosim-vm: cannot write %s\n", vm.report);
}

static void on_exit_cb(qemu_plugin_id_t id, void *ud)
{
    (void)id;
    (void)ud;
    qemu_plugin_qosim_hooks(NULL);
    run_all();
    if (vm.report[0])
        write_report();
    /* Only the file this run made: a path reused since is left alone. */
    struct stat st;
    if (vm.console[0] && con.ino && !lstat(vm.console, &st) && st.st_dev == con.dev &&
        st.st_ino == con.ino)
        unlink(vm.console);
}

/* The plugin's callbacks; again after a reset, which drops them all. */
static void register_cbs(qemu_plugin_id_t id)
{
    qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    qemu_plugin_register_vcpu_resume_cb(id, on_resume);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
}

/* QEMU has flushed its translated blocks (all vCPUs stopped): from here on
 * every block is translated with the model's callbacks, or without. */
static void sim_switched(qemu_plugin_id_t id)
{
    /* Simulation resumes with every vCPU's clock at the latest: what ran
     * unsimulated in between took no simulated time, and a clock left
     * behind would hold the others back (give_way) until it caught up. */
    if (vm.sim_want && !vm.sim_on) {
        uint64_t t = latest_clock();
        for (unsigned i = 0; i < vm.nv; i++)
            vm.m.cpu[i].now = t;
    }
    vm.sim_on = vm.sim_want;
    vm.sim_started |= vm.sim_on;
    register_cbs(id);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    struct err e = {0};
    const char *profile = NULL;
    uint64_t lead_ns = VM_LEAD_NS;
    if (info->system_emulation == false) {
        fprintf(stderr, "qosim-vm: this plugin is for qemu-system-x86_64\n");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "profile=", 8))
            profile = argv[i] + 8;
        else if (!strncmp(argv[i], "console=", 8))
            snprintf(vm.console, sizeof vm.console, "%s", argv[i] + 8);
        else if (!strncmp(argv[i], "report=", 7))
            snprintf(vm.report, sizeof vm.report, "%s", argv[i] + 7);
        else if (!strncmp(argv[i], "pace=", 5)) {
            char *end;
            vm.pace = strtod(argv[i] + 5, &end);
            if (*end || !(vm.pace >= 0)) {
                fprintf(stderr, "qosim-vm: pace=%s: not a number >= 0\n", argv[i] + 5);
                return -1;
            }
        } else if (!strncmp(argv[i], "from=", 5)) {
            const char *w = argv[i] + 5;
            if (strcmp(w, "user") && strcmp(w, "boot") && strcmp(w, "mark")) {
                fprintf(stderr, "qosim-vm: from=%s: user, boot or mark\n", w);
                return -1;
            }
            vm.from = !strcmp(w, "user") ? FROM_USER : !strcmp(w, "boot") ? FROM_BOOT : FROM_MARK;
            /* No block is translated yet: nothing to drop. */
            vm.sim_want = vm.sim_on = vm.sim_started = vm.from == FROM_BOOT;
        } else if (!strncmp(argv[i], "lead=", 5)) {
            char *end;
            errno = 0;
            lead_ns = strtoull(argv[i] + 5, &end, 0);
            if (errno || *end || argv[i][5] == '-' || !argv[i][5]) {
                fprintf(stderr, "qosim-vm: lead=%s: not a number of nanoseconds\n", argv[i] + 5);
                return -1;
            }
        } else if (!strncmp(argv[i], "slow=", 5)) {
            char *end;
            errno = 0;
            vm.slow_want = strtoull(argv[i] + 5, &end, 0);
            if (errno || *end || !vm.slow_want || argv[i][5] == '-') {
                fprintf(stderr, "qosim-vm: slow=%s: not a size in bytes\n", argv[i] + 5);
                return -1;
            }
        } else {
            fprintf(stderr, "qosim-vm: unknown argument '%s'\n", argv[i]);
            return -1;
        }
    }
    if (!profile) {
        fprintf(stderr, "qosim-vm: profile=NAME is required\n");
        return -1;
    }
    if (plat_load(&vm.p, profile, &e) || mach_init(&vm.m, &vm.p, vm.p.ncpus, &e) ||
        x86_init(&vm.x, &vm.m, &e)) {
        fprintf(stderr, "qosim-vm: %s\n", e.msg);
        return -1;
    }
    if (vm.slow_want) {
        if (!vm.p.nslow) {
            fprintf(stderr, "qosim-vm: slow=: the profile %s has no slow memory\n", vm.p.name);
            return -1;
        }
        /* DRAM node 0's first slow node (plat.h, struct plat_slow). */
        vm.slow_node = vm.p.nnodes;
        vm.slow_base = mach_phys_base(vm.slow_node, 0);
    }
    vm.nv = vm.m.ncpu;
    double lead = (double)lead_ns * vm.m.ticks_per_sec / 1e9;
    vm.lead = lead < 1e18 ? (uint64_t)lead : (uint64_t)1e18; /* 1e18 ticks: never */
    vm.v = calloc(vm.nv, sizeof *vm.v);
    vm.rmid_ticks = calloc(vm.m.ntags + 1, sizeof *vm.rmid_ticks);
    vm.rmid_held = calloc(vm.m.ntags + 1, sizeof *vm.rmid_held);
    vm.rmid_instr = calloc(vm.m.ntags + 1, sizeof *vm.rmid_instr);
    vm.rmid_instr_user = calloc(vm.m.ntags + 1, sizeof *vm.rmid_instr_user);
    if (!vm.v || !vm.rmid_ticks || !vm.rmid_held || !vm.rmid_instr || !vm.rmid_instr_user) {
        fprintf(stderr, "qosim-vm: out of memory\n");
        return -1;
    }
    for (unsigned i = 0; i < vm.nv; i++) {
        if (wl_feed_new(&vm.v[i].wl, &e)) {
            fprintf(stderr, "qosim-vm: %s\n", e.msg);
            return -1;
        }
        /* One physical space for all vCPUs: no per-task placement. */
        core_task_init(&vm.v[i].t, vm.v[i].wl, mach_phys_base(0, 0));
        /* Records carry the model's physical addresses, node bits and all
         * (model_addr). */
        vm.v[i].t.va_mask = UINT64_MAX;
        /* Each vCPU's ground truth is a task of its own. */
        mach_set_task(&vm.m, i, (int)i);
        bpred_init(&vm.v[i].bp);
    }
    if (vm.console[0] && con_check(vm.console))
        return -1;
    vm.id = id;
    register_cbs(id);
    qemu_plugin_qosim_hooks(&hooks);
    return 0;
}
