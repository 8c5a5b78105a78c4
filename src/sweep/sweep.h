/* Sweeps: one scenario run over the product (or zip) of axes, each point a
 * complete scenario file that `qosim run` runs alone (docs/sweeps.md).
 *
 * A planned sweep is a folder, and everything about it is in files there,
 * so that any executor (the local pool, SLURM array tasks on other hosts
 * sharing the folder) and any later command sees the same state:
 *
 *   DIR/sweep.yaml              the sweep file as planned (provenance)
 *   DIR/manifest.tsv            "point" then one column per axis (tab-separated,
 *                               a header line, then a line per point in order)
 *   DIR/points/NNNN/            one folder per point (NNNN: its index, zero-
 *                               padded to at least 4 digits)
 *       scenario.yaml           the resolved scenario (paths made absolute)
 *       inputs                  the files it reads, one absolute path a line
 *       result.json             `qosim run --json` (written whole or not at all)
 *       stderr                  the run's standard error
 *       record.json             written last, whole: key, status ("ok" or
 *                               "failed"), exit code or signal, stderr tail,
 *                               provenance (version, commit, input hashes,
 *                               host, wall time, SLURM job and array task)
 *
 * A point is done when record.json says "ok" and its key is the point's key
 * now; failed when it says "failed" with that key; otherwise pending
 * (never run, interrupted, or an input changed since). */
#ifndef QOSIM_SWEEP_SWEEP_H
#define QOSIM_SWEEP_SWEEP_H

#include "util/err.h"

#include <stddef.h>

struct json_object;

#define SWEEP_KEY_HEX 65 /* SHA-256 in hex, and its NUL */

/* A planned sweep as its folder holds it (the manifest). */
struct sweep {
    char dir[4096];
    unsigned naxis;
    char **axis; /* [naxis] names */
    size_t npoint;
    char ***val;    /* [npoint][naxis] the point's axis values, as written */
    unsigned width; /* digits of a point's folder name */
};

enum sweep_state { SWEEP_PENDING, SWEEP_DONE, SWEEP_FAILED };

/* Reads DIR's manifest. */
int sweep_open(struct sweep *sw, const char *dir, struct err *e);
void sweep_close(struct sweep *sw);

/* DIR/points/NNNN[/file] into out; file may be NULL (the folder). */
int sweep_point_path(const struct sweep *sw, size_t i, const char *file, char *out, size_t cap);

/* The point's key now: SHA-256 of qosim's version and commit, the
 * scenario's bytes, and each input's path and contents, in hex. */
int sweep_key(const struct sweep *sw, size_t i, char key[SWEEP_KEY_HEX], struct err *e);

/* SHA-256 of a file's contents, in hex. */
int sweep_hash_file(const char *path, char out[SWEEP_KEY_HEX], struct err *e);
/* qosim's version and the commit it was built from, as keys and records
 * name them. */
const char *sweep_version(void);
/* The commit alone ("unknown" outside a git checkout). */
const char *sweep_commit(void);

/* What record.json says for the current key. */
enum sweep_state sweep_state(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX]);
/* Point i's state now: its key, then what its record says. A point whose
 * key cannot be computed (its scenario or an input is gone) is pending:
 * nothing it recorded can be shown to be current. */
enum sweep_state sweep_state_now(const struct sweep *sw, size_t i);

/* A whole file, NUL-terminated (*len bytes before the NUL); NULL with e. */
char *sweep_read_file(const char *path, size_t *len, struct err *e);
/* One JSON value, strictly (nothing but white space after it), from path;
 * NULL with e naming the file, the place and json-c's reason. The caller
 * puts it (json_object_put). */
struct json_object *sweep_json_read(const char *path, struct err *e);

#endif
