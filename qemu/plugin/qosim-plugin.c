/* The qosim TCG plugin: every instruction a program executes under QEMU's
 * user-mode emulator, with its memory accesses, goes into the shared ring
 * of live_ring.h, where qosim's simulated core takes them in its own time.
 *
 *   qemu-x86_64 -plugin qosim-plugin.so,ring=FD PROGRAM ARGS...
 *
 * FD is an open descriptor of the ring's shared memory, which qosim made
 * and sized. At translation the plugin decodes each instruction's bytes
 * once (x86br.h: branch or not, and its kind) and hangs a descriptor on
 * it; at execution a callback writes the instruction's record and one
 * record per access the memory callback sees. A branch is taken when the
 * next instruction executed is not its fall-through, which the plugin
 * knows exactly when that instruction starts.
 *
 * One guest thread only: the ring is one instruction stream, as one core
 * runs it. A program that starts a second thread is refused (LIVE_FAIL,
 * then the process is killed). A child process (fork) runs on untraced:
 * the ring belongs to the process qosim started. */
#include "qemu-plugin.h"
#include "sim/trace/x86br.h"
#include "sim/wl/live_ring.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Records written between two publications; a smaller batch would make the
 * two processes share the head's cache line more often. */
#define PUB_BATCH 2048

/* What the plugin knows of one instruction, from its translation. */
struct insn {
    uint64_t addr;
    uint32_t len;
    uint8_t flags;
    uint8_t wide; /* its vector operand's bytes (16, 32), or 0: see mem_exec */
};

static struct live_ring *ring;
static struct trace_rec *rec;
static uint64_t mask;
static uint64_t w;      /* next record to write */
static uint64_t room;   /* w may grow up to this before the ring is full */
static uint64_t last;   /* the current instruction's record; published up to it */
static uint64_t pubd;   /* head as last published */
static uint64_t expect; /* the fall-through of the current instruction */
/* Instructions written: copied to ring->insns at the end only, since that
 * shares its cache line with the state, which a waiting consumer reads. */
static uint64_t insns;
static uint8_t last_branch;

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

static void wake(uint32_t *seq, uint32_t *waits)
{
    __atomic_add_fetch(seq, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(waits, __ATOMIC_SEQ_CST))
        futex(seq, FUTEX_WAKE, 1, NULL);
}

/* Everything before the current instruction goes to the consumer. */
static void publish(uint64_t upto)
{
    if (upto <= pubd) /* a system call may have published past the current instruction */
        return;
    pubd = upto;
    __atomic_store_n(&ring->head, upto, __ATOMIC_RELEASE);
    wake(&ring->head_seq, &ring->cons_waits);
}

/* The ring is full: publish, then sleep until the consumer frees room. */
static void wait_room(void)
{
    publish(last);
    ring->prod_need = w - ring->cap / 2;
    for (;;) {
        uint32_t seq = __atomic_load_n(&ring->tail_seq, __ATOMIC_SEQ_CST);
        __atomic_store_n(&ring->prod_waits, 1, __ATOMIC_SEQ_CST);
        uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_SEQ_CST);
        /* Half the ring free; or, when all that is published is consumed
         * and the current instruction alone fills more than half of it,
         * whatever room there is. */
        if (tail >= ring->prod_need || (tail == last && tail + ring->cap > w)) {
            __atomic_store_n(&ring->prod_waits, 0, __ATOMIC_RELAXED);
            room = tail + ring->cap;
            return;
        }
        if (last == tail && w - last >= ring->cap) {
            /* One instruction with more accesses than the ring holds: it
             * can never be published whole. */
            snprintf(ring->msg, sizeof ring->msg,
                     "instruction at 0x%llx made more than %llu memory accesses",
                     (unsigned long long)rec[last & mask].addr, (unsigned long long)ring->cap);
            __atomic_store_n(&ring->state, LIVE_FAIL, __ATOMIC_RELEASE);
            wake(&ring->head_seq, &ring->cons_waits);
            kill(getpid(), SIGKILL);
        }
        struct timespec ts = {0, LIVE_POLL_MS * 1000000L};
        futex(&ring->tail_seq, FUTEX_WAIT, seq, &ts);
        /* qosim gone (it kills its programs at exit, but a SIGKILL of
         * qosim leaves nobody to): stop rather than wait for ever. */
        if (getppid() == 1)
            _exit(128 + SIGKILL);
    }
}

static void insn_exec(unsigned int vcpu, void *udata)
{
    const struct insn *in = udata;
    (void)vcpu;
    if (!ring)
        return;
    struct trace_rec *prev = &rec[last & mask];
    if ((last_branch & TREC_F_BRANCH) && in->addr != expect)
        prev->flags |= TREC_F_TAKEN;
    if (w - pubd >= PUB_BATCH)
        publish(w);
    if (w == room)
        wait_room();
    last = w;
    struct trace_rec *r = &rec[w++ & mask];
    r->addr = in->addr;
    r->size = in->len;
    r->kind = TREC_I;
    r->flags = in->flags;
    r->pad = 0;
    expect = in->addr + in->len;
    last_branch = in->flags;
    insns++;
}

static void mem_exec(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    const struct insn *in = udata;
    (void)vcpu;
    if (!ring)
        return;
    uint32_t size = 1u << qemu_plugin_mem_size_shift(info);
    int store = qemu_plugin_mem_is_store(info);
    uint8_t kind = store ? TREC_S : TREC_L;
    struct trace_rec *p = &rec[(w - 1) & mask];
    if (w - 1 > last) {
        /* QEMU 7.2 moves a 16- or 32-byte SSE/AVX operand as 8-byte
         * pieces in ascending order: one access, as valgrind reports it
         * (and cachegrind counts it), and the cache sees one line or two
         * either way. */
        if (size == 8 && p->kind == kind && p->addr + p->size == vaddr && !(p->size & 7) &&
            p->size + 8 <= in->wide) {
            p->size += 8;
            return;
        }
        /* A load and a store of one address by one instruction is a
         * modify, as Valgrind reports it (and cachegrind counts it). */
        if (store && p->kind == TREC_L && p->addr == vaddr && p->size == size) {
            p->kind = TREC_M;
            return;
        }
    }
    if (w == room)
        wait_room();
    struct trace_rec *r = &rec[w++ & mask];
    r->addr = vaddr;
    r->size = size;
    r->kind = kind;
    r->flags = 0;
    r->pad = 0;
}

/* The width of an instruction's vector memory operand, for mem_exec to
 * join QEMU's 8-byte pieces of it: 16 for the 0F map (SSE, and also
 * CMPXCHG16B and the XSAVE family, whose 16-byte register images valgrind
 * reports whole too), 16 or 32 (VEX.L) for VEX; 0 for everything else,
 * whose accesses stay as QEMU makes them. */
static uint8_t vec_width(const uint8_t *b, size_t len)
{
    size_t i = 0;
    while (i < len && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
                       b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 ||
                       b[i] == 0x36 || b[i] == 0x64 || b[i] == 0x65 || (b[i] & 0xf0) == 0x40))
        i++;
    if (i >= len)
        return 0;
    if (b[i] == 0x0f)
        return 16;
    if (b[i] == 0xc5 && i + 1 < len) /* VEX2: R vvvv L pp */
        return b[i + 1] & 4 ? 32 : 16;
    if (b[i] == 0xc4 && i + 2 < len) /* VEX3: RXB mmmmm, W vvvv L pp */
        return b[i + 2] & 4 ? 32 : 16;
    return 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
        /* Kept for as long as the translation may run: QEMU gives no
         * notice when it drops one, so descriptors live to the end. */
        struct insn *in = malloc(sizeof *in);
        if (!in)
            abort();
        in->addr = qemu_plugin_insn_vaddr(qi);
        in->len = (uint32_t)qemu_plugin_insn_size(qi);
        in->flags = x86br_flags(qemu_plugin_insn_data(qi), in->len);
        in->wide = vec_width(qemu_plugin_insn_data(qi), in->len);
        qemu_plugin_register_vcpu_insn_exec_cb(qi, insn_exec, QEMU_PLUGIN_CB_NO_REGS, in);
        qemu_plugin_register_vcpu_mem_cb(qi, mem_exec, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                         in);
    }
}

/* A system call may block (a read from a pipe): what ran up to it is
 * published first, so the core is never kept waiting on a sleeping guest.
 * The system call instruction is complete already (it is no branch, so
 * nothing about it waits for the next instruction) and has no access. */
static void syscall_entry(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                          uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                          uint64_t a7, uint64_t a8)
{
    (void)id, (void)vcpu, (void)num, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6,
        (void)a7, (void)a8;
    if (ring)
        publish(w);
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
    (void)id;
    if (!ring || ++ring->vcpus == 1)
        return;
    snprintf(ring->msg, sizeof ring->msg,
             "the program started a second thread (guest CPU %u); qosim runs one thread per "
             "program",
             vcpu);
    publish(last);
    ring->insns = insns;
    __atomic_store_n(&ring->state, LIVE_FAIL, __ATOMIC_RELEASE);
    wake(&ring->head_seq, &ring->cons_waits);
    kill(getpid(), SIGKILL);
}

/* The program ends: the last instruction is complete (nothing follows it). */
static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id, (void)p;
    if (!ring)
        return;
    publish(w);
    ring->insns = insns;
    __atomic_store_n(&ring->state, LIVE_END, __ATOMIC_RELEASE);
    wake(&ring->head_seq, &ring->cons_waits);
}

static void forked_child(void)
{
    ring = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    int fd = -1;
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "ring=", 5))
            fd = atoi(argv[i] + 5);
        else {
            fprintf(stderr, "qosim-plugin: unknown argument '%s' (ring=FD)\n", argv[i]);
            return -1;
        }
    }
    if (strcmp(info->target_name, "x86_64")) {
        fprintf(stderr, "qosim-plugin: guest '%s': only x86_64 is decoded\n", info->target_name);
        return -1;
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < sizeof *ring) {
        fprintf(stderr, "qosim-plugin: ring=FD must name qosim's ring (run it through qosim)\n");
        return -1;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED || ((struct live_ring *)m)->magic != LIVE_MAGIC) {
        fprintf(stderr, "qosim-plugin: descriptor %d is not a qosim ring\n", fd);
        return -1;
    }
    ring = m;
    rec = ring->rec;
    mask = ring->cap - 1;
    room = ring->cap;
    pthread_atfork(NULL, NULL, forked_child);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_syscall_cb(id, syscall_entry);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
