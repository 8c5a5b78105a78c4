#include "x86_console.h"

#include "lwp.h"

#include <string.h>

static int cpu_arg(const struct x86_console *c, const char *s, uint64_t *cpu, char *err)
{
    unsigned ncpu = c->x->m->ncpu;
    if (!console_num(s, UINT32_MAX, cpu) && *cpu < ncpu)
        return 0;
    snprintf(err, CONSOLE_ERR_SIZE, "CPU '%s': expected a CPU number 0..%u", s, ncpu - 1);
    return -1;
}

/* LLWPCB and SLWPCB as the current process executes them (ring 3), on the
 * given CPU, which then runs that process (5.3). */
static void lwp_cmd(struct x86_console *c, char **w, int n, char *err, FILE *out)
{
    int load = !strcmp(w[0], "llwpcb");
    uint64_t cpu, addr = 0;
    if (n != (load ? 3 : 2)) {
        snprintf(err, CONSOLE_ERR_SIZE, "usage: %s", load ? "llwpcb CPU ADDR" : "slwpcb CPU");
        return;
    }
    if (cpu_arg(c, w[1], &cpu, err))
        return;
    if (load && console_num(w[2], UINT64_MAX, &addr)) {
        snprintf(err, CONSOLE_ERR_SIZE, "address '%s': expected a 64-bit number", w[2]);
        return;
    }
    struct lwp *u = &c->x->lwp;
    c->proc->cpu = (unsigned)cpu;
    enum hw_fault f = load ? lwp_llwpcb(u, (unsigned)cpu, &c->proc->vm, addr, 3, NULL)
                           : lwp_slwpcb(u, (unsigned)cpu, &c->proc->vm, 3, &addr);
    if (f != HW_OK)
        fprintf(out, "%s\n", hw_fault_name(f));
    else if (load)
        fputs("ok\n", out);
    else
        fprintf(out, "0x%016llx\n", (unsigned long long)addr);
}

/* The current process's memory, as the process (CPL 3) reaches it. */
static void mem_cmd(struct x86_console *c, char **w, int n, char *err, FILE *out)
{
    struct vmem *vm = &c->proc->vm;
    uint64_t a = 0, v = 0;
    const char *op = n > 1 ? w[1] : "";
    if (!strcmp(op, "map")) {
        unsigned perm = VMEM_U | VMEM_W;
        for (int k = 4; k < n; k++)
            if (!strcmp(w[k], "kernel"))
                perm &= ~(unsigned)VMEM_U;
            else if (!strcmp(w[k], "ro"))
                perm &= ~(unsigned)VMEM_W;
            else if (strcmp(w[k], "user") && strcmp(w[k], "rw"))
                n = 0; /* malformed */
        if (n < 4 || n > 6 || console_num(w[2], UINT64_MAX, &a) ||
            console_num(w[3], 1ull << 36, &v) || !v)
            snprintf(err, CONSOLE_ERR_SIZE,
                     "usage: mem map ADDR LEN [user|kernel] [rw|ro] (LEN 1 to 64 GiB)");
        else if (vmem_map(vm, a, v, perm))
            snprintf(err, CONSOLE_ERR_SIZE, "cannot map 0x%llx bytes at 0x%llx",
                     (unsigned long long)v, (unsigned long long)a);
        else
            fputs("ok\n", out);
        return;
    }
    int wr = !strncmp(op, "write", 5), rd = !strncmp(op, "read", 4);
    const char *bits = wr ? op + 5 : rd ? op + 4 : "";
    unsigned size = !strcmp(bits, "32") ? 4 : !strcmp(bits, "64") ? 8 : 0;
    if (!size || n != (wr ? 4 : 3)) {
        snprintf(err, CONSOLE_ERR_SIZE,
                 "usage: mem read32|read64 ADDR, mem write32|write64 ADDR VALUE, or mem map");
        return;
    }
    if (console_num(w[2], UINT64_MAX, &a)) {
        snprintf(err, CONSOLE_ERR_SIZE, "address '%s': expected a 64-bit number", w[2]);
        return;
    }
    if (wr && console_num(w[3], size == 4 ? UINT32_MAX : UINT64_MAX, &v)) {
        snprintf(err, CONSOLE_ERR_SIZE, "value '%s': expected a %u-bit number", w[3], size * 8);
        return;
    }
    struct vmem_fault f;
    int rc = wr ? vmem_write_u(vm, a, size, v, VMEM_ACC_USER, &f)
                : vmem_read_u(vm, a, size, &v, VMEM_ACC_USER, &f);
    if (rc)
        fputs("#PF\n", out);
    else if (wr)
        fputs("ok\n", out);
    else
        fprintf(out, size == 4 ? "0x%08llx\n" : "0x%016llx\n", (unsigned long long)v);
}

/* Runs one command: writes its one output line to out, or leaves in err
 * why it is malformed. */
static void command(void *self, char **w, int n, char *err, FILE *out)
{
    struct x86_console *c = self;
    uint64_t a = 0, b = 0, v = 0;
    unsigned ncpu = c->x->m->ncpu;
    if (!strcmp(w[0], "cpuid")) {
        uint64_t cpu = 0;
        int k = n;
        if (n >= 3 && !strcmp(w[n - 2], "cpu")) {
            k = n - 2;
            if (console_num(w[n - 1], UINT32_MAX, &cpu) || cpu >= ncpu)
                snprintf(err, CONSOLE_ERR_SIZE, "cpu '%s': expected a CPU number 0..%u", w[n - 1],
                         ncpu - 1);
        }
        if (!*err && (k < 2 || k > 3))
            snprintf(err, CONSOLE_ERR_SIZE, "usage: cpuid LEAF [SUBLEAF] [cpu N]");
        else if (!*err && (console_num(w[1], UINT32_MAX, &a) ||
                           (k == 3 && console_num(w[2], UINT32_MAX, &b))))
            snprintf(err, CONSOLE_ERR_SIZE, "leaf and subleaf are 32-bit numbers");
        if (!*err) {
            uint32_t r[4];
            x86_cpuid(c->x, (unsigned)cpu, (uint32_t)a, (uint32_t)b, r);
            fprintf(out, "eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n", r[0], r[1], r[2], r[3]);
        }
    } else if (!strcmp(w[0], "rdmsr") || !strcmp(w[0], "wrmsr")) {
        int wr = w[0][0] == 'w';
        if (n != (wr ? 4 : 3))
            snprintf(err, CONSOLE_ERR_SIZE, "usage: %s",
                     wr ? "wrmsr CPU MSR VALUE" : "rdmsr CPU MSR");
        else if (cpu_arg(c, w[1], &a, err))
            ; /* err says why */
        else if (console_num(w[2], UINT32_MAX, &b))
            snprintf(err, CONSOLE_ERR_SIZE, "MSR '%s': expected a 32-bit number", w[2]);
        else if (wr && console_num(w[3], UINT64_MAX, &v))
            snprintf(err, CONSOLE_ERR_SIZE, "value '%s': expected a 64-bit number", w[3]);
        if (!*err) {
            enum hw_fault f = wr ? x86_wrmsr(c->x, (unsigned)a, (uint32_t)b, v)
                                 : x86_rdmsr(c->x, (unsigned)a, (uint32_t)b, &v);
            if (f != HW_OK)
                fprintf(out, "%s\n", hw_fault_name(f));
            else if (wr)
                fputs("ok\n", out);
            else
                fprintf(out, "0x%016llx\n", (unsigned long long)v);
        }
    } else if (!strcmp(w[0], "llwpcb") || !strcmp(w[0], "slwpcb")) {
        lwp_cmd(c, w, n, err, out);
    } else if (!strcmp(w[0], "mem")) {
        mem_cmd(c, w, n, err, out);
    } else if (!strcmp(w[0], "run")) {
        console_run(&c->k, w, n, err, out);
    } else {
        snprintf(err, CONSOLE_ERR_SIZE,
                 "unknown command '%s' (cpuid, rdmsr, wrmsr, llwpcb, slwpcb, mem, run)", w[0]);
    }
}

void x86_console_line(struct x86_console *c, char *text, FILE *out)
{
    console_line(&c->k, text, out, command, c);
}

int x86_console_sets(const char *text)
{
    text += strspn(text, " \t\r\n");
    return !strncmp(text, "wrmsr", 5) && (text[5] == ' ' || text[5] == '\t');
}
