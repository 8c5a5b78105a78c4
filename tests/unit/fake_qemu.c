/* A stand-in for qemu-x86_64 that loads the real qosim plugin and drives it
 * through the plugin API from a script, so that the plugin's logic and
 * live.c's ring can be tested without QEMU (tests/unit/test_live.c): what
 * the plugin writes for a known stream of instructions and accesses, a
 * full ring, a second thread, a crash, an exit status.
 *
 *   fake_qemu -seed N -plugin PATH,ARGS -0 NAME PROGRAM [ARGS...]
 *
 * as live.c starts QEMU; the script is the file $FAKE_QEMU_SCRIPT, one
 * command a line:
 *   tb ADDR HEX|HEX|...  translate a block at ADDR: instructions' bytes
 *   x ADDR               execute the instruction at ADDR (translated)
 *   l ADDR SIZE          the current instruction loads SIZE bytes at ADDR
 *   s ADDR SIZE          ... stores
 *   loop N ... end       the lines between, N times (one level)
 *   vcpu                 a second guest thread starts
 *   sys                  a system call
 *   kill SIG             the process dies by SIG
 *   exit N               the program exits with status N
 * Addresses in the loop body may be written A+I*K: A plus K times the
 * iteration. */
#include "qemu-plugin.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct qemu_plugin_insn {
    uint64_t addr;
    uint8_t bytes[16];
    size_t len;
    qemu_plugin_vcpu_udata_cb_t exec;
    void *exec_ud;
    qemu_plugin_vcpu_mem_cb_t mem;
    void *mem_ud;
};

struct qemu_plugin_tb {
    uint64_t addr;
    struct qemu_plugin_insn insn[64];
    size_t n;
};

static qemu_plugin_vcpu_tb_trans_cb_t tb_trans;
static qemu_plugin_vcpu_simple_cb_t vcpu_init;
static qemu_plugin_vcpu_syscall_cb_t syscall_cb;
static qemu_plugin_udata_cb_t at_exit;
static void *at_exit_ud;
static qemu_plugin_id_t self_id;

static struct qemu_plugin_tb tbs[64];
static size_t ntb;
static struct qemu_plugin_insn *cur;

/* The API the plugin calls, exported from this executable (-rdynamic). */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb)
{
    (void)id;
    tb_trans = cb;
}

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb)
{
    (void)id;
    vcpu_init = cb;
}

void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb)
{
    (void)id;
    syscall_cb = cb;
}

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata)
{
    (void)id;
    at_exit = cb;
    at_exit_ud = userdata;
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb)
{
    return tb->n;
}

struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx)
{
    return (struct qemu_plugin_insn *)&tb->insn[idx];
}

uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn)
{
    return insn->addr;
}

size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn)
{
    return insn->len;
}

const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn)
{
    return insn->bytes;
}

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata)
{
    (void)flags;
    insn->exec = cb;
    insn->exec_ud = userdata;
}

void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                      void *userdata)
{
    (void)flags, (void)rw;
    insn->mem = cb;
    insn->mem_ud = userdata;
}

/* meminfo: the size's log2 in bits 0-3, a store in bit 4. */
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info)
{
    return info & 15;
}

bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info)
{
    return info & 16;
}

static void die(const char *what, const char *line)
{
    fprintf(stderr, "fake_qemu: %s: %s\n", what, line);
    exit(125);
}

static uint64_t addr_of(const char *s, unsigned long it)
{
    char *end;
    uint64_t a = strtoull(s, &end, 16);
    if (*end == '+') { /* A+I*K */
        unsigned long k = strtoul(end + 3, NULL, 16);
        a += it * k;
    }
    return a;
}

static void run_line(char *line, unsigned long it)
{
    char op[16] = "", a1[64] = "", a2[512] = "";
    if (sscanf(line, "%15s %63s %511s", op, a1, a2) < 1)
        return;
    if (!strcmp(op, "tb")) {
        struct qemu_plugin_tb *tb = &tbs[ntb++];
        tb->addr = addr_of(a1, it);
        uint64_t at = tb->addr;
        for (char *save = NULL, *h = strtok_r(a2, "|", &save); h; h = strtok_r(NULL, "|", &save)) {
            struct qemu_plugin_insn *in = &tb->insn[tb->n++];
            in->addr = at;
            for (size_t k = 0; h[2 * k] && h[2 * k + 1]; k++)
                in->bytes[in->len++] =
                    (uint8_t)strtoul((char[]){h[2 * k], h[2 * k + 1], 0}, NULL, 16);
            at += in->len;
        }
        tb_trans(self_id, tb);
    } else if (!strcmp(op, "x")) {
        uint64_t a = addr_of(a1, it);
        cur = NULL;
        for (size_t t = 0; t < ntb && !cur; t++)
            for (size_t i = 0; i < tbs[t].n && !cur; i++)
                if (tbs[t].insn[i].addr == a)
                    cur = &tbs[t].insn[i];
        if (!cur)
            die("no translated instruction at", a1);
        cur->exec(0, cur->exec_ud);
    } else if (!strcmp(op, "l") || !strcmp(op, "s")) {
        unsigned size = (unsigned)strtoul(a2, NULL, 10), shift = 0;
        while ((1u << shift) < size)
            shift++;
        cur->mem(0, shift | (op[0] == 's' ? 16 : 0), addr_of(a1, it), cur->mem_ud);
    } else if (!strcmp(op, "vcpu")) {
        vcpu_init(self_id, 1);
    } else if (!strcmp(op, "sys")) {
        syscall_cb(self_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    } else if (!strcmp(op, "kill")) {
        signal(atoi(a1), SIG_DFL);
        raise(atoi(a1));
    } else if (!strcmp(op, "exit")) {
        if (at_exit)
            at_exit(self_id, at_exit_ud);
        exit(atoi(a1));
    } else {
        die("unknown command", line);
    }
}

int main(int argc, char **argv)
{
    const char *plugin = NULL;
    for (int i = 1; i < argc - 1; i++)
        if (!strcmp(argv[i], "-plugin"))
            plugin = argv[i + 1];
    const char *path = getenv("FAKE_QEMU_SCRIPT");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!plugin || !f)
        die("usage", "-plugin PATH,ARGS and $FAKE_QEMU_SCRIPT");
    /* "PATH,ring=3": the plugin's path, then its arguments. */
    char so[4096], *args[8];
    int nargs = 0;
    snprintf(so, sizeof so, "%s", plugin);
    for (char *c = strchr(so, ','); c && nargs < 8; c = strchr(c + 1, ',')) {
        *c = '\0';
        args[nargs++] = c + 1;
    }
    void *h = dlopen(so, RTLD_NOW);
    if (!h)
        die("dlopen", dlerror());
    int (*install)(qemu_plugin_id_t, const qemu_info_t *, int, char **) =
        (int (*)(qemu_plugin_id_t, const qemu_info_t *, int, char **))dlsym(h,
                                                                            "qemu_plugin_install");
    qemu_info_t info;
    memset(&info, 0, sizeof info);
    info.target_name = "x86_64";
    if (!install || install(self_id, &info, nargs, args))
        die("install", so);
    if (vcpu_init)
        vcpu_init(self_id, 0);
    char lines[256][600];
    size_t n = 0;
    while (n < 256 && fgets(lines[n], sizeof lines[n], f))
        n++;
    fclose(f);
    for (size_t i = 0; i < n; i++) {
        unsigned long count;
        if (sscanf(lines[i], "loop %lu", &count) == 1) {
            size_t end = i + 1;
            while (end < n && strncmp(lines[end], "end", 3))
                end++;
            for (unsigned long it = 0; it < count; it++)
                for (size_t k = i + 1; k < end; k++)
                    run_line(lines[k], it);
            i = end;
            continue;
        }
        run_line(lines[i], 0);
    }
    if (at_exit)
        at_exit(self_id, at_exit_ud);
    return 0;
}
