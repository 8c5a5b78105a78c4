#include "cli_lwp.h"

#include "hw/lwp.h"
#include "util/json.h"

#include <stdlib.h>
#include <string.h>

static int push(void **v, size_t *n, size_t *cap, size_t size, const void *x)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        void *p = realloc(*v, c * size);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    memcpy((char *)*v + *n * size, x, size);
    (*n)++;
    return 0;
}

/* The latency bucket: LWP reports latencies rounded down to 16 cycles
 * (4.3.1), so each step of 16 has its own, and the last takes the rest. */
static unsigned bucket(uint32_t lat)
{
    return lat / 16 < LWPR_LAT_BUCKETS - 1 ? lat / 16 : LWPR_LAT_BUCKETS - 1;
}

void lwpr_add(void *ctx, const uint8_t rec[32])
{
    struct lwpr *r = ctx;
    uint32_t dw0, data;
    uint64_t ip, addr;
    memcpy(&dw0, rec, 4);
    memcpy(&data, rec + 4, 4);
    memcpy(&ip, rec + 8, 8);
    memcpy(&addr, rec + 16, 8);
    if (r->raw && fwrite(rec, 32, 1, r->raw) != 1)
        r->oom = 1; /* the commit reports the write error */
    unsigned id = (unsigned)HW_FGET(dw0, LWP_REC, EventId);
    r->nrec[id < 4 ? id : 0]++;
    if (id == LWP_EV_INSTR) {
        r->oom |= push((void **)&r->ir, &r->nir, &r->capir, sizeof ip, &ip);
    } else if (id == LWP_EV_BRANCH) {
        struct lwpr_br b = {ip, (uint8_t)(dw0 >> 24)};
        r->oom |= push((void **)&r->br, &r->nbr, &r->capbr, sizeof b, &b);
    } else if (id == LWP_EV_DCMISS) {
        r->lat[bucket(data)]++;
        r->src[HW_FGET(dw0, LWP_REC_DC, Source)]++;
        uint64_t line = HW_FGET(dw0, LWP_REC_DC, AddrValid) ? addr >> 6 : UINT64_MAX;
        r->noaddr += line == UINT64_MAX;
        /* dline and dip grow together: one count and capacity serve both. */
        size_t n = r->nd, cap = r->capd;
        r->oom |= push((void **)&r->dline, &n, &cap, sizeof line, &line);
        r->oom |= push((void **)&r->dip, &r->nd, &r->capd, sizeof ip, &ip);
    }
}

void lwpr_free(struct lwpr *r)
{
    free(r->ir);
    free(r->br);
    free(r->dline);
    free(r->dip);
    memset(r, 0, sizeof *r);
}

/* ---- counting: sort, then runs ---- */

struct hot {
    uint64_t key, n;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_hot(const void *a, const void *b)
{
    const struct hot *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* The distinct values of v (sorted in place) with their counts, most
 * frequent first (ties by value); UINT64_MAX is left out. */
static struct hot *hottest(uint64_t *v, size_t n, size_t *nh)
{
    if (n) /* v is NULL when nothing was sampled */
        qsort(v, n, sizeof *v, cmp_u64);
    struct hot *h = malloc((n ? n : 1) * sizeof *h);
    size_t k = 0;
    for (size_t i = 0; h && i < n; i++) {
        if (v[i] == UINT64_MAX)
            continue;
        if (k && h[k - 1].key == v[i])
            h[k - 1].n++;
        else
            h[k++] = (struct hot){v[i], 1};
    }
    if (h)
        qsort(h, k, sizeof *h, cmp_hot);
    *nh = h ? k : 0;
    return h;
}

struct brs {
    uint64_t ip, n, taken, valid, ok;
};

static int cmp_br_ip(const void *a, const void *b)
{
    uint64_t x = ((const struct lwpr_br *)a)->ip, y = ((const struct lwpr_br *)b)->ip;
    return x < y ? -1 : x > y;
}

static int cmp_brs(const void *a, const void *b)
{
    const struct brs *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* Per branch address: samples, taken, prediction known, predicted right
 * (byte 3 of the record: bit 7 taken, 6 predicted, 5 prediction valid). */
static struct brs *branches(struct lwpr_br *v, size_t n, size_t *nb)
{
    if (n) /* v is NULL when nothing was sampled */
        qsort(v, n, sizeof *v, cmp_br_ip);
    struct brs *b = malloc((n ? n : 1) * sizeof *b);
    size_t k = 0;
    for (size_t i = 0; b && i < n; i++) {
        if (!k || b[k - 1].ip != v[i].ip)
            b[k++] = (struct brs){v[i].ip, 0, 0, 0, 0};
        struct brs *x = &b[k - 1];
        x->n++;
        x->taken += v[i].flags >> 7 & 1;
        x->valid += v[i].flags >> 5 & 1;
        x->ok += (v[i].flags >> 5 & 1) && (v[i].flags >> 6 & 1);
    }
    if (b)
        qsort(b, k, sizeof *b, cmp_brs);
    *nb = b ? k : 0;
    return b;
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

static const char *const src_name[8] = {
    "L2 (source 0)", "L3", "remote cache", "DRAM", "4", "5", "6", "other"};

/* The lowest latency of bucket b. */
static uint64_t bucket_lo(unsigned b)
{
    return 16ull * b;
}

/* ---- text ---- */

void lwpr_print(FILE *f, const struct lwpr *r0, const struct lwpr_head *h, unsigned top)
{
    struct lwpr r = *r0; /* the arrays are sorted in place */
    uint64_t total = r.nrec[1] + r.nrec[2] + r.nrec[3] + r.nrec[0];
    fprintf(f, "%s on %s, task %s: %llu instructions\n", h->workload, h->platform, h->task,
            (unsigned long long)h->instructions);
    fprintf(f, "events: %s; ring %u bytes, %s\n", h->events, h->buffer,
            h->threshold ? "drained on the threshold interrupt" : "drained by polling");
    fprintf(f, "records: %llu stored and drained, %llu missed (MissedEvents); %llu interrupts\n\n",
            (unsigned long long)total, (unsigned long long)h->missed,
            (unsigned long long)h->interrupts);
    size_t nh;
    if (r.nrec[LWP_EV_INSTR]) {
        struct hot *x = hottest(r.ir, r.nir, &nh);
        fprintf(f, "Hottest instructions (%llu samples of instructions retired)\n",
                (unsigned long long)r.nir);
        fprintf(f, "  %10s %7s  %s\n", "samples", "%", "address");
        for (size_t i = 0; x && i < nh && i < top; i++)
            fprintf(f, "  %10llu %7.2f  0x%llx\n", (unsigned long long)x[i].n, pct(x[i].n, r.nir),
                    (unsigned long long)x[i].key);
        free(x);
        fputc('\n', f);
    }
    if (r.nrec[LWP_EV_BRANCH]) {
        struct brs *b = branches(r.br, r.nbr, &nh);
        fprintf(f, "Branches (%llu samples of branches retired)\n", (unsigned long long)r.nbr);
        fprintf(f, "  %10s %7s %7s %13s  %s\n", "samples", "%", "taken%", "mispredicted%",
                "address");
        for (size_t i = 0; b && i < nh && i < top; i++) {
            char mis[16] = "-"; /* no prediction information */
            if (b[i].valid)
                snprintf(mis, sizeof mis, "%.2f", pct(b[i].valid - b[i].ok, b[i].valid));
            fprintf(f, "  %10llu %7.2f %7.2f %13s  0x%llx\n", (unsigned long long)b[i].n,
                    pct(b[i].n, r.nbr), pct(b[i].taken, b[i].n), mis, (unsigned long long)b[i].ip);
        }
        free(b);
        fputc('\n', f);
    }
    if (r.nrec[LWP_EV_DCMISS]) {
        fprintf(f, "DCache misses (%llu samples): latency, cycles\n", (unsigned long long)r.nd);
        for (unsigned b = 0; b < LWPR_LAT_BUCKETS; b++)
            if (r.lat[b] && b + 1 < LWPR_LAT_BUCKETS)
                fprintf(f, "  %6llu-%-6llu %10llu %7.2f%%\n", (unsigned long long)bucket_lo(b),
                        (unsigned long long)(bucket_lo(b + 1) - 1), (unsigned long long)r.lat[b],
                        pct(r.lat[b], r.nd));
            else if (r.lat[b])
                fprintf(f, "  %6llu+      %10llu %7.2f%%\n", (unsigned long long)bucket_lo(b),
                        (unsigned long long)r.lat[b], pct(r.lat[b], r.nd));
        fprintf(f, "  by source:");
        for (unsigned s = 0; s < 8; s++)
            if (r.src[s])
                fprintf(f, " %s %llu (%.2f%%)", src_name[s], (unsigned long long)r.src[s],
                        pct(r.src[s], r.nd));
        fprintf(f, "\nHottest data lines (64 bytes)%s\n",
                r.noaddr ? ", of the misses with a data address" : "");
        fprintf(f, "  %10s %7s  %s\n", "samples", "%", "line");
        struct hot *x = hottest(r.dline, r.nd, &nh);
        for (size_t i = 0; x && i < nh && i < top; i++)
            fprintf(f, "  %10llu %7.2f  0x%llx\n", (unsigned long long)x[i].n,
                    pct(x[i].n, r.nd - r.noaddr), (unsigned long long)(x[i].key << 6));
        free(x);
        fprintf(f, "Instructions missing most\n  %10s %7s  %s\n", "samples", "%", "address");
        x = hottest(r.dip, r.nd, &nh);
        for (size_t i = 0; x && i < nh && i < top; i++)
            fprintf(f, "  %10llu %7.2f  0x%llx\n", (unsigned long long)x[i].n, pct(x[i].n, r.nd),
                    (unsigned long long)x[i].key);
        free(x);
    }
}

/* ---- JSON ---- */

static void json_hot(struct json *j, const char *key, const char *what, uint64_t *v, size_t n,
                     unsigned top, unsigned shift)
{
    size_t nh;
    struct hot *x = hottest(v, n, &nh);
    json_arr_begin(j, key);
    for (size_t i = 0; x && i < nh && i < top; i++) {
        json_obj_begin(j, NULL);
        json_u64(j, what, x[i].key << shift);
        json_u64(j, "samples", x[i].n);
        json_obj_end(j);
    }
    json_arr_end(j);
    free(x);
}

void lwpr_json(FILE *f, const struct lwpr *r0, const struct lwpr_head *h, unsigned top)
{
    struct lwpr r = *r0;
    struct json j;
    json_init(&j, f);
    json_obj_begin(&j, NULL);
    json_str(&j, "workload", h->workload);
    json_str(&j, "platform", h->platform);
    json_str(&j, "task", h->task);
    json_str(&j, "events", h->events);
    json_u64(&j, "buffer", h->buffer);
    json_u64(&j, "threshold", h->threshold);
    json_u64(&j, "instructions", h->instructions);
    json_u64(&j, "records", r.nrec[0] + r.nrec[1] + r.nrec[2] + r.nrec[3]);
    json_u64(&j, "missed_events", h->missed);
    json_u64(&j, "interrupts", h->interrupts);
    json_obj_begin(&j, "instructions_retired");
    json_u64(&j, "samples", r.nir);
    json_hot(&j, "hottest", "ip", r.ir, r.nir, top, 0);
    json_obj_end(&j);
    json_obj_begin(&j, "branches_retired");
    json_u64(&j, "samples", r.nbr);
    size_t nb;
    struct brs *b = branches(r.br, r.nbr, &nb);
    json_arr_begin(&j, "hottest");
    for (size_t i = 0; b && i < nb && i < top; i++) {
        json_obj_begin(&j, NULL);
        json_u64(&j, "ip", b[i].ip);
        json_u64(&j, "samples", b[i].n);
        json_u64(&j, "taken", b[i].taken);
        json_u64(&j, "prediction_valid", b[i].valid);
        json_u64(&j, "mispredicted", b[i].valid - b[i].ok);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    free(b);
    json_obj_end(&j);
    json_obj_begin(&j, "dcache_misses");
    json_u64(&j, "samples", r.nd);
    json_arr_begin(&j, "latency");
    for (unsigned k = 0; k < LWPR_LAT_BUCKETS; k++)
        if (r.lat[k]) {
            json_obj_begin(&j, NULL);
            json_u64(&j, "from", bucket_lo(k));
            if (k + 1 < LWPR_LAT_BUCKETS)
                json_u64(&j, "to", bucket_lo(k + 1) - 1);
            json_u64(&j, "samples", r.lat[k]);
            json_obj_end(&j);
        }
    json_arr_end(&j);
    json_obj_begin(&j, "sources");
    static const char *const key[8] = {"none", "l3", "remote_cache", "dram", "4",
                                       "5",    "6",  "other"};
    for (unsigned s = 0; s < 8; s++)
        if (r.src[s])
            json_u64(&j, key[s], r.src[s]);
    json_obj_end(&j);
    json_hot(&j, "hottest_lines", "line", r.dline, r.nd, top, 6);
    json_hot(&j, "hottest_ips", "ip", r.dip, r.nd, top, 0);
    json_obj_end(&j);
    json_obj_end(&j);
    fputc('\n', f);
}
