#include "io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int io_init(struct io *io, struct mach *m, const struct io_params *p, unsigned n,
            unsigned first_task, struct err *e)
{
    memset(io, 0, sizeof *io);
    io->m = m;
    if (!n)
        return 0;
    io->a = calloc(n, sizeof *io->a);
    if (!io->a)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    io->n = n;
    for (unsigned k = 0; k < n; k++) {
        struct io_agent *a = &io->a[k];
        a->p = p[k];
        a->task = first_task + k;
        if (mach_io_port(m, &a->port, p[k].domain, a->task, p[k].cls, p[k].tag)) {
            io_free(io);
            return err_set(e, -QOSIM_EINVAL, "I/O agent %s: no L3 in domain %u", p[k].name,
                           p[k].domain);
        }
        /* Its ring is memory of its own, on its node, as a task's space is. */
        a->base = mach_phys_base(p[k].node, a->task);
        a->nlines = p[k].buffer / m->line ? p[k].buffer / m->line : 1;
        a->ticks_per_line = m->ticks_per_sec * m->line / p[k].rate;
    }
    return 0;
}

void io_free(struct io *io)
{
    free(io->a);
    io->a = NULL;
    io->n = 0;
}

int io_next(const struct io *io, uint64_t *now)
{
    int best = -1;
    for (unsigned k = 0; k < io->n; k++)
        if (best < 0 || io->a[k].port.now < io->a[best].port.now)
            best = (int)k;
    if (best >= 0)
        *now = io->a[best].port.now;
    return best;
}

/* Line n is a write when the running count of writes, n x write_ratio
 * rounded down, steps at it: the shares are exact over any stretch and the
 * pattern is the same in every run. */
static int is_write(double ratio, uint64_t n)
{
    return floor((double)(n + 1) * ratio) > floor((double)n * ratio);
}

void io_run(struct io *io, unsigned k, uint64_t until)
{
    struct io_agent *a = &io->a[k];
    struct mach *m = io->m;
    while (a->port.now < until) {
        /* Writes and reads each walk the ring with their own cursor, the
         * reads behind the writes: a NIC transmitting what it received. */
        if (is_write(a->p.write_ratio, a->n)) {
            enum mach_dma r = mach_dma_write(m, &a->port, a->base + a->wpos * m->line);
            a->st.wr++;
            a->st.wr_hit += r == MACH_DMA_HIT;
            a->st.wr_fill += r == MACH_DMA_FILL;
            a->st.wr_mem += r == MACH_DMA_MEM;
            a->wpos = a->wpos + 1 < a->nlines ? a->wpos + 1 : 0;
        } else {
            enum mach_dma r = mach_dma_read(m, &a->port, a->base + a->rpos * m->line);
            a->st.rd++;
            a->st.rd_hit += r == MACH_DMA_HIT;
            a->st.rd_mem += r == MACH_DMA_MEM;
            a->rpos = a->rpos + 1 < a->nlines ? a->rpos + 1 : 0;
        }
        /* Paced from time 0 by the line count, so no rounding accumulates:
         * line n leaves at n x line / rate. */
        a->n++;
        a->port.now = (uint64_t)((double)a->n * a->ticks_per_line);
    }
}
