#include "x86_console.h"

#include "util/conf.h"

#include <stdlib.h>
#include <string.h>

/* A number as configuration files write them: decimal or 0x-hex, no sign. */
static int num(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v;
    if (!s || conf_parse_u64(s, &v) || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Runs one command; writes its one output line to out. */
static void command(struct x86_console *c, char **w, int n, FILE *out)
{
    char err[600] = "";
    uint64_t a = 0, b = 0, v = 0;
    unsigned ncpu = c->x->m->ncpu;
    if (!strcmp(w[0], "cpuid")) {
        uint64_t cpu = 0;
        int k = n;
        if (n >= 3 && !strcmp(w[n - 2], "cpu")) {
            k = n - 2;
            if (num(w[n - 1], UINT32_MAX, &cpu) || cpu >= ncpu)
                snprintf(err, sizeof err, "cpu '%s': expected a CPU number 0..%u", w[n - 1],
                         ncpu - 1);
        }
        if (!*err && (k < 2 || k > 3))
            snprintf(err, sizeof err, "usage: cpuid LEAF [SUBLEAF] [cpu N]");
        else if (!*err && (num(w[1], UINT32_MAX, &a) || (k == 3 && num(w[2], UINT32_MAX, &b))))
            snprintf(err, sizeof err, "leaf and subleaf are 32-bit numbers");
        if (!*err) {
            uint32_t r[4];
            x86_cpuid(c->x, (unsigned)cpu, (uint32_t)a, (uint32_t)b, r);
            fprintf(out, "eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x\n", r[0], r[1], r[2], r[3]);
            return;
        }
    } else if (!strcmp(w[0], "rdmsr") || !strcmp(w[0], "wrmsr")) {
        int wr = w[0][0] == 'w';
        if (n != (wr ? 4 : 3))
            snprintf(err, sizeof err, "usage: %s", wr ? "wrmsr CPU MSR VALUE" : "rdmsr CPU MSR");
        else if (num(w[1], UINT32_MAX, &a) || a >= ncpu)
            snprintf(err, sizeof err, "CPU '%s': expected a CPU number 0..%u", w[1], ncpu - 1);
        else if (num(w[2], UINT32_MAX, &b))
            snprintf(err, sizeof err, "MSR '%s': expected a 32-bit number", w[2]);
        else if (wr && num(w[3], UINT64_MAX, &v))
            snprintf(err, sizeof err, "value '%s': expected a 64-bit number", w[3]);
        if (!*err) {
            enum hw_fault f = wr ? x86_wrmsr(c->x, (unsigned)a, (uint32_t)b, v)
                                 : x86_rdmsr(c->x, (unsigned)a, (uint32_t)b, &v);
            if (f != HW_OK)
                fprintf(out, "%s\n", hw_fault_name(f));
            else if (wr)
                fputs("ok\n", out);
            else
                fprintf(out, "0x%016llx\n", (unsigned long long)v);
            return;
        }
    } else if (!strcmp(w[0], "run")) {
        if (n != 2 || num(w[1], 1000000000000ull, &a))
            snprintf(err, sizeof err, "usage: run NS (nanoseconds, up to 1000 s)");
        else {
            struct err e;
            if (c->run && c->run(c->ctx, a, &e)) {
                snprintf(err, sizeof err, "the run failed: %s", e.msg);
            } else {
                fputs("ok\n", out);
                return;
            }
        }
    } else {
        snprintf(err, sizeof err, "unknown command '%s' (cpuid, rdmsr, wrmsr, run)", w[0]);
    }
    fprintf(out, "error: line %u: %s\n", c->line, err);
    c->errors++;
}

void x86_console_line(struct x86_console *c, char *text, FILE *out)
{
    c->line++;
    char *hash = strchr(text, '#');
    if (hash)
        *hash = '\0';
    char *w[8], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(text, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == 8) {
            fprintf(out, "error: line %u: too many words\n", c->line);
            c->errors++;
            return;
        }
        w[n++] = t;
    }
    if (n)
        command(c, w, n, out);
}
