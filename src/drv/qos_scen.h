/* A scenario's `qos:` section and its phase entries, read and validated
 * against the profile before the run, as resctrl refuses a bad schemata
 * line before committing it; the driver (qos.h) then applies them. */
#ifndef QOSIM_DRV_QOS_SCEN_H
#define QOSIM_DRV_QOS_SCEN_H

#include "sim/scen/scen.h"

/* The section parser scen_load takes for scenarios with a qos section. */
extern const struct scen_sect qos_scen;

/* Largest class count every allocation and bandwidth resource of p offers
 * with the given CDP settings. */
unsigned qos_scen_classes(const struct plat *p, const int cdp[PLAT_NLEVEL]);

#endif
