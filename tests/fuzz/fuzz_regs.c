/* libFuzzer harness for the x86 register model (src/hw/x86.c) driven
 * through the register console's interpreter (src/hw/x86_console.c), as a
 * user's script would drive it.
 *
 * The first byte picks the platform (intel-xeon, intel-atom, amd-epyc,
 * amd-lwp, and tests/data/amd-bmec.yaml, whose BMEC, ABMC and SDCIAE
 * registers the others lack); the rest is a console script. `run NS` makes random accesses from
 * every CPU under its current association, so monitoring has something to count. After every line:
 * mask registers stay within CBM_LEN bits, the machine's masks within the cache's ways, and each
 * CPU's class and tag are its PQR_ASSOC's COS and RMID, and AMD's later registers hold only what
 * they can: configurations within BwType's bits, a domain's modes within the features, no counter
 * both enabled and in error, and the Intel PMU (hw/x86_pmu.c), which `run` feeds random events at
 * a random privilege level on every CPU, holds counters within their width and registers within
 * their defined bits. After the script: the occupancy counters of every tag sum to the lines a
 * last-level cache holds. */
#include "fuzz_check.h"
#include "hw/x86_console.h"
#include "util/bits.h"
#include "util/rng.h"

#include <string.h>

/* The last is a path, found from this file's (the fuzzers run from the top). */
static const char *const plats[] = {"intel-xeon", "intel-atom", "amd-epyc", "amd-lwp", NULL};
#define NPLAT 5

static const char *plat_name(unsigned k)
{
    static char path[600];
    if (plats[k])
        return plats[k];
    snprintf(path, sizeof path, "%s", __FILE__);
    char *slash = strrchr(path, '/');
    if (slash)
        snprintf(slash, sizeof path - (size_t)(slash - path), "/../data/amd-bmec.yaml");
    else
        snprintf(path, sizeof path, "../data/amd-bmec.yaml");
    return path;
}
static struct mach machines[NPLAT];
static struct x86 regs[NPLAT];
static FILE *devnull;
static struct rng rng_s; /* seeded from each input */

static int run_ns(void *ctx, uint64_t ns, struct err *e)
{
    (void)e;
    struct x86 *x = ctx;
    struct mach *m = x->m;
    uint64_t n = ns / 16 > 4000 ? 4000 : ns / 16;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rng_next(&rng_s);
        unsigned cpu = (unsigned)(r >> 33) % m->ncpu;
        uint64_t a = mach_phys_base(m->cpu[cpu].node, cpu % 16) | ((r >> 20) & 0xffffc0);
        mach_access(m, &m->cpu[cpu], (r >> 13) & 1 ? HIER_LOAD : HIER_STORE, a);
    }
    /* Events for the PMU: sometimes huge, so counters wrap and overflow. */
    for (unsigned c = 0; c < m->ncpu; c++) {
        uint64_t ev[X86_PMU_NEV], r = rng_next(&rng_s);
        for (unsigned k = 0; k < X86_PMU_NEV; k++)
            ev[k] = (r >> k) & 1 ? rng_next(&rng_s) >> (r >> 60) : n;
        x86_pmu_count(x, c, (int)(r >> 59) & 1, ev);
    }
    return 0;
}

static void check_state(struct x86 *x)
{
    struct mach *m = x->m;
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++) {
        if (!x->ncos[l])
            continue;
        for (unsigned i = 0; i < m->ncache[l]; i++) {
            for (unsigned c = 0; c < x->ncos[l]; c++) {
                uint64_t r = x->mask[l][(size_t)i * x->ncos[l] + c];
                FZ_CHECK(!(r & ~bits_mask(x->cbm_len[l])), "L%d mask 0x%llx", l,
                         (unsigned long long)r);
                for (int t = MACH_DATA; t <= MACH_CODE; t++)
                    FZ_CHECK(!(mach_get_mask(m, l, i, c, t) & ~m->cache[l][i].c.all_ways),
                             "machine mask beyond the ways");
            }
        }
    }
    for (unsigned c = 0; c < m->ncpu; c++) {
        uint64_t v = x->assoc[c];
        FZ_CHECK(m->cpu[c].cls == HW_FGET(v, PQR_ASSOC, COS), "cpu %u class", c);
        FZ_CHECK(m->cpu[c].tag == (x->nrmid ? HW_FGET(v, PQR_ASSOC, RMID) : 0), "cpu %u tag", c);
    }
    const struct x86_pmu *u = &x->pmu;
    for (unsigned c = 0; u->ngp && c < m->ncpu; c++) {
        const struct x86_pmu_cpu *pc = &u->cpu[c];
        uint64_t ctrs = ((1ull << u->ngp) - 1) | 7ull << 32;
        for (unsigned i = 0; i < u->ngp; i++)
            FZ_CHECK(!(pc->pmc[i] >> 48) && !(pc->evtsel[i] >> 32), "cpu %u PMC%u", c, i);
        for (unsigned i = 0; i < X86_PMU_NFIXED; i++)
            FZ_CHECK(!(pc->fixed[i] >> 48), "cpu %u FIXED_CTR%u", c, i);
        FZ_CHECK(!(pc->global_ctrl & ~ctrs) && !(pc->fixed_ctrl >> 12), "cpu %u controls", c);
        FZ_CHECK(!(pc->global_status & ~(ctrs | 0xEC00000000000000ull)), "cpu %u status", c);
        FZ_CHECK(!(pc->offcore[0] & ~u->offcore_bits) && !(pc->offcore[1] & ~u->offcore_bits),
                 "cpu %u OFFCORE_RSP", c);
    }
    for (size_t i = 0; x->sbw && i < (size_t)x->p->ndomains * x->sbw_cos; i++)
        FZ_CHECK(!(x->sbw[i] & ~bits_mask(x->sbw_len + 1)), "SMBW_CONTROL 0x%llx",
                 (unsigned long long)x->sbw[i]);
    for (unsigned d = 0; x->evt_cfg && d < x->p->ndomains; d++)
        FZ_CHECK(x->evt_cfg[2 * d] <= 0x7F && x->evt_cfg[2 * d + 1] <= 0x7F, "QOS_EVT_CFG");
    for (unsigned d = 0; x->ext_mode && d < x->p->ndomains; d++)
        FZ_CHECK(x->ext_mode[d] <= 3, "domain %u modes 0x%llx", d,
                 (unsigned long long)x->ext_mode[d]);
    for (size_t i = 0; x->abmc && i < (size_t)x->p->ndomains * x->p->mon.abmc; i++)
        FZ_CHECK(!(HW_FGET(x->abmc[i].dsc, L3_QOS_ABMC_DSC, CfgErr) &&
                   HW_FGET(x->abmc[i].dsc, L3_QOS_ABMC_CFG, CtrEn)),
                 "ABMC counter %zu enabled with CfgErr", i);
}

/* One last-level instance per input, in turn: counting every line of all of
 * them (eight 32 MiB L3s on amd-epyc) would make each input take ~10 ms. */
static void check_occupancy(struct mach *m, unsigned which)
{
    enum plat_level l = m->llc;
    for (unsigned i = which % m->ncache[l], once = 0; !once; once = 1) {
        uint64_t sum = 0;
        for (unsigned t = 0; t < m->ntags; t++)
            sum += mach_occupancy(m, l, i, t);
        FZ_CHECK(sum == mach_valid_lines(m, l, i), "occupancy %llu", (unsigned long long)sum);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    unsigned k = data[0] % NPLAT;
    if (!machines[k].cpu) {
        struct plat p;
        struct err e;
        if (plat_load(&p, plat_name(k), &e) || mach_init(&machines[k], &p, 16, &e) ||
            x86_init(&regs[k], &machines[k], &e))
            abort();
        devnull = devnull ? devnull : fopen("/dev/null", "w");
    }
    struct x86 *x = &regs[k];
    x86_reset(x);
    rng_seed(&rng_s, size, 0);
    /* A fresh process for each input (x86_reset turned LWP off, so no unit
     * still points into the last one's memory). */
    static struct lwp_proc pr;
    lwp_proc_init(&pr, x, 0);
    struct x86_console c = {.x = x, .k = {.run = run_ns, .ctx = x}, .proc = &pr};
    char line[256];
    size_t i = 1;
    while (i < size) {
        size_t n = 0;
        while (i < size && data[i] != '\n' && n < sizeof line - 1)
            line[n++] = (char)data[i++];
        while (i < size && data[i] != '\n') /* the rest of an overlong line is dropped */
            i++;
        i++;
        line[n] = '\0';
        x86_console_line(&c, line, devnull);
        check_state(x);
    }
    check_occupancy(x->m, (unsigned)size);
    lwp_proc_free(&pr);
    return 0;
}
