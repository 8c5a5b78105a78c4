#include "cbqri_console.h"

#include <stdlib.h>
#include <string.h>

int cbqri_console_init(struct cbqri_console *c, struct cbqri *q, struct err *e)
{
    memset(c, 0, sizeof *c);
    c->q = q;
    if (!(c->mode = malloc(q->m->ncpu * sizeof *c->mode)))
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate the console's harts");
    for (unsigned h = 0; h < q->m->ncpu; h++)
        c->mode[h] = CBQRI_M;
    return 0;
}

void cbqri_console_free(struct cbqri_console *c)
{
    free(c->mode);
    c->mode = NULL;
}

/* The outcome of an access as the console prints it. */
static const char *fault_word(enum hw_fault f)
{
    switch (f) {
    case HW_ACCESS_FAULT:
        return "fault";
    case HW_ILLEGAL:
        return "illegal";
    case HW_VIRTUAL:
        return "virtual";
    default:
        return hw_fault_name(f);
    }
}

static int hart_num(struct cbqri_console *c, const char *s, uint64_t *h, char *err)
{
    unsigned n = c->q->m->ncpu;
    if (!console_num(s, UINT32_MAX, h) && *h < n)
        return 0;
    snprintf(err, CONSOLE_ERR_SIZE, "hart '%s': expected a hart number 0..%u", s, n - 1);
    return -1;
}

/* mmio read32|read64 ADDR [hart N], mmio write32|write64 ADDR VALUE [hart N] */
static void mmio(struct cbqri_console *c, char **w, int n, char *err, FILE *out)
{
    static const char usage[] = "usage: mmio read32|read64 ADDR [hart N] or "
                                "mmio write32|write64 ADDR VALUE [hart N]";
    uint64_t hart = 0, addr, v = 0;
    int k = n;
    if (n >= 4 && !strcmp(w[n - 2], "hart")) {
        k = n - 2;
        if (hart_num(c, w[n - 1], &hart, err))
            return;
    }
    int rd = k >= 2 && (!strcmp(w[1], "read32") || !strcmp(w[1], "read64"));
    int wr = k >= 2 && (!strcmp(w[1], "write32") || !strcmp(w[1], "write64"));
    unsigned size = k >= 2 && strstr(w[1], "64") ? 8 : 4;
    if ((!rd && !wr) || k != (wr ? 4 : 3))
        snprintf(err, CONSOLE_ERR_SIZE, "%s", usage);
    else if (console_num(w[2], UINT64_MAX, &addr))
        snprintf(err, CONSOLE_ERR_SIZE, "address '%s': expected a 64-bit number", w[2]);
    else if (wr && console_num(w[3], size == 8 ? UINT64_MAX : UINT32_MAX, &v))
        snprintf(err, CONSOLE_ERR_SIZE, "value '%s': expected a %u-bit number", w[3], size * 8);
    if (*err)
        return;
    enum cbqri_mode md = c->mode[hart];
    enum hw_fault f = wr ? cbqri_mmio_write(c->q, (unsigned)hart, md, addr, size, v)
                         : cbqri_mmio_read(c->q, (unsigned)hart, md, addr, size, &v);
    if (f != HW_OK)
        fprintf(out, "%s\n", fault_word(f));
    else if (wr)
        fputs("ok\n", out);
    else if (size == 8)
        fprintf(out, "0x%016llx\n", (unsigned long long)v);
    else
        fprintf(out, "0x%08x\n", (unsigned)v);
}

/* The CSRs the console names: the draft's sqoscfg has no number and goes
 * by name (docs/registers.md 2); 1.0's go by name or number. */
static const struct {
    const char *name;
    unsigned csr;
} csr_names[] = {
    {"sqoscfg", CBQRI_CSR_SQOSCFG},
    {"srmcfg", CBQRI_CSR_SRMCFG},
    {"mstateen0", CBQRI_CSR_MSTATEEN0},
    {"mstateen0h", CBQRI_CSR_MSTATEEN0H},
};

static int csr_named(struct cbqri_console *c, const char *s, unsigned *csr, char *err)
{
    uint64_t n;
    *csr = ~0u;
    for (size_t i = 0; i < sizeof csr_names / sizeof csr_names[0]; i++)
        if (!strcmp(s, csr_names[i].name))
            *csr = csr_names[i].csr;
    if (*csr == ~0u && !console_num(s, 0xfff, &n))
        *csr = (unsigned)n;
    if (*csr != ~0u && cbqri_csr_exists(c->q, *csr))
        return 0;
    const struct cbqri *q = c->q;
    snprintf(err, CONSOLE_ERR_SIZE, "CSR '%s': %s's harts have %s", s, q->p->name,
             !q->v10         ? "sqoscfg (the 2023 draft's, by name)"
             : !q->smstateen ? "srmcfg (0x181)"
             : q->xlen == 32 ? "srmcfg (0x181), mstateen0 (0x30c), mstateen0h (0x31c)"
                             : "srmcfg (0x181), mstateen0 (0x30c)");
    return -1;
}

/* csr read HART NAME, csr write HART NAME VALUE: sqoscfg on draft
 * platforms, srmcfg and mstateen0 on 1.0 ones. */
static void csr(struct cbqri_console *c, char **w, int n, char *err, FILE *out)
{
    uint64_t hart, v = 0;
    unsigned num = 0;
    int rd = n >= 2 && !strcmp(w[1], "read"), wr = n >= 2 && !strcmp(w[1], "write");
    unsigned bits = c->q->xlen; /* sqoscfg: 32 (the model's xlen for the draft) */
    if ((!rd && !wr) || n != (wr ? 5 : 4))
        snprintf(err, CONSOLE_ERR_SIZE,
                 "usage: csr read HART CSR or csr write HART CSR VALUE (CSR: %s)",
                 c->q->v10 ? "srmcfg, mstateen0" : "sqoscfg");
    else if (hart_num(c, w[2], &hart, err) || csr_named(c, w[3], &num, err))
        return;
    else if (wr && console_num(w[4], bits == 64 ? UINT64_MAX : UINT32_MAX, &v))
        snprintf(err, CONSOLE_ERR_SIZE, "value '%s': expected a %u-bit number", w[4], bits);
    if (*err)
        return;
    uint64_t r = 0;
    enum cbqri_mode md = c->mode[hart];
    enum hw_fault f = wr ? cbqri_csr_write(c->q, (unsigned)hart, md, num, v)
                         : cbqri_csr_read(c->q, (unsigned)hart, md, num, &r);
    if (f != HW_OK)
        fprintf(out, "%s\n", fault_word(f));
    else if (wr)
        fputs("ok\n", out);
    else if (bits == 64)
        fprintf(out, "0x%016llx\n", (unsigned long long)r);
    else
        fprintf(out, "0x%08x\n", (unsigned)r);
}

/* mode HART M|S|U|VS|VU|secure-M */
static void mode(struct cbqri_console *c, char **w, int n, char *err, FILE *out)
{
    uint64_t hart;
    if (n != 3) {
        snprintf(err, CONSOLE_ERR_SIZE, "usage: mode HART M|S|U|VS|VU|secure-M");
        return;
    }
    if (hart_num(c, w[1], &hart, err))
        return;
    for (int m = 0; m < CBQRI_NMODE; m++)
        if (!strcmp(w[2], cbqri_mode_name[m])) {
            c->mode[hart] = (enum cbqri_mode)m;
            fputs("ok\n", out);
            return;
        }
    snprintf(err, CONSOLE_ERR_SIZE, "mode '%s': expected M, S, U, VS, VU or secure-M", w[2]);
}

static void command(void *self, char **w, int n, char *err, FILE *out)
{
    struct cbqri_console *c = self;
    if (!strcmp(w[0], "mmio"))
        mmio(c, w, n, err, out);
    else if (!strcmp(w[0], "csr"))
        csr(c, w, n, err, out);
    else if (!strcmp(w[0], "mode"))
        mode(c, w, n, err, out);
    else if (!strcmp(w[0], "run"))
        console_run(&c->k, w, n, err, out);
    else
        snprintf(err, CONSOLE_ERR_SIZE, "unknown command '%s' (mmio, csr, mode, run)", w[0]);
}

void cbqri_console_line(struct cbqri_console *c, char *text, FILE *out)
{
    console_line(&c->k, text, out, command, c);
}
