/* The one table of bandwidth limiter kinds, indexed by enum bw_kind: adding
 * a kind is a new bw_*.c file, an enum value in bw.h and a line here. */
#include "bw_impl.h"

#include <stdlib.h>
#include <string.h>

const char *const bw_kind_name[BW_NKIND] = {"none", "delay", "rate", "share"};

static int none_init(struct bw *b, struct err *e)
{
    (void)b;
    (void)e;
    return 0;
}

static void none_free(struct bw *b)
{
    (void)b;
}

static uint64_t none_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    (void)b;
    (void)cls;
    (void)port;
    (void)bytes;
    return now;
}

/* No limiter: every transfer proceeds when asked. */
static const struct bw_ops bw_none_ops = {
    .kind = BW_NONE,
    .init = none_init,
    .free = none_free,
    .admit = none_admit,
};

static const struct bw_ops *const bw_table[BW_NKIND] = {
    [BW_NONE] = &bw_none_ops,
    [BW_DELAY] = &bw_delay_ops,
    [BW_RATE] = &bw_rate_ops,
    [BW_SHARE] = &bw_share_ops,
};

void bw_class_reset(enum bw_kind kind, struct bw_class_set *s)
{
    /* The same for every kind, so a class reset under one kind is also
     * unlimited if the limiter is rebuilt as another. */
    (void)kind;
    *s = (struct bw_class_set){.delay_pct = 0, .rate = 0, .rbwb = 0, .weight = 1, .hard = 0};
}

int bw_init(struct bw *b, const struct bw_cfg *cfg, struct err *e)
{
    memset(b, 0, sizeof *b);
    if ((unsigned)cfg->kind >= BW_NKIND)
        return err_set(e, -QOSIM_EINVAL, "bandwidth limiter: unknown kind %d", (int)cfg->kind);
    const char *kn = bw_kind_name[cfg->kind];
    if (cfg->nclass < 1)
        return err_set(e, -QOSIM_EINVAL, "bandwidth limiter (%s): nclass must be at least 1", kn);
    b->cfg = *cfg;
    b->set = calloc(cfg->nclass, sizeof *b->set);
    b->stat = calloc(cfg->nclass, sizeof *b->stat);
    if (!b->set || !b->stat) {
        bw_free(b);
        return err_set(e, -QOSIM_ENOMEM, "bandwidth limiter (%s): cannot allocate %u classes", kn,
                       cfg->nclass);
    }
    for (unsigned c = 0; c < cfg->nclass; c++)
        bw_class_reset(cfg->kind, &b->set[c]);
    b->ops = bw_table[cfg->kind];
    int rc = b->ops->init(b, e);
    if (rc) {
        bw_free(b);
        return rc;
    }
    return 0;
}

void bw_free(struct bw *b)
{
    if (b->ops)
        b->ops->free(b);
    free(b->set);
    free(b->stat);
    b->ops = NULL;
    b->set = NULL;
    b->stat = NULL;
    b->state = NULL;
}

void bw_set(struct bw *b, unsigned cls, const struct bw_class_set *s)
{
    if (!b->ops || cls >= b->cfg.nclass)
        return;
    struct bw_class_set v = *s, old = b->set[cls];
    /* Out-of-range values are clamped to the nearest meaningful one: a delay
     * of 100% would stop the link, a negative or NaN rate means no cap. */
    if (v.delay_pct > 99)
        v.delay_pct = 99;
    if (!bw_positive(v.rate))
        v.rate = 0; /* <= 0, NaN or infinite: unlimited */
    if (b->cfg.kind == BW_SHARE && v.rbwb > b->cfg.nblks)
        v.rbwb = b->cfg.nblks;
    if (v.weight > 255)
        v.weight = 255;
    v.hard = v.hard != 0;
    b->set[cls] = v;
    if (b->ops->set)
        b->ops->set(b, cls, &old);
}

uint64_t bw_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes)
{
    /* A class the limiter does not have is not limited (and not counted). */
    b->resv = 0;
    if (!b->ops || cls >= b->cfg.nclass)
        return now;
    uint64_t t = b->ops->admit(b, cls, port, now, bytes);
    if (t < now)
        t = now;
    struct bw_class_stat *st = &b->stat[cls];
    st->bytes += bytes;
    st->reqs++;
    st->delayed += t - now;
    if (b->resv)
        st->resv += bytes;
    return t;
}
