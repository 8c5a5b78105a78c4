#include "cli_qos.h"

#include <string.h>

int cli_qos_model(struct cli_qos *h, struct mach *m, struct err *e)
{
    memset(h, 0, sizeof *h);
    h->riscv = m->p.vendor == PLAT_RISCV;
    int rc = h->riscv ? cbqri_init(&h->cb, m, e) : x86_init(&h->x, m, e);
    h->model = !rc;
    return rc;
}

int cli_qos_init(struct cli_qos *h, struct run *run, struct err *e)
{
    int rc = cli_qos_model(h, &run->m, e);
    if (!rc && run->s->qos.present) {
        if (h->riscv) {
            struct cbqri_regif ri;
            cbqri_regif(&h->cb, &ri);
            rc = qos_cbqri_init(&h->q, &ri, run, e);
        } else {
            struct hw_x86_if ri;
            x86_regif(&h->x, &ri);
            rc = qos_rdt_init(&h->q, &ri, run, e);
        }
        h->driver = !rc;
    }
    if (rc)
        cli_qos_free(h);
    return rc;
}

void cli_qos_free(struct cli_qos *h)
{
    if (h->driver)
        qos_free(&h->q);
    if (h->model && h->riscv)
        cbqri_free(&h->cb);
    else if (h->model)
        x86_free(&h->x);
    h->model = h->driver = 0;
}
