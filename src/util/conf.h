/* Configuration files (platform profiles, scenarios): YAML read through
 * libyaml into a small tree that remembers every node's line, then typed
 * getters that validate one value each and name FILE:LINE: key.path on error.
 *
 * Use: conf_load_*, read what you need with the getters (each marks the key
 * as used), then conf_check_unused() so that a misspelt key is an error
 * rather than silently ignored. Anchors, aliases and multiple documents are
 * refused: a profile is read by people, and every value has one place. */
#ifndef QOSIM_UTIL_CONF_H
#define QOSIM_UTIL_CONF_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum conf_type { CONF_SCALAR, CONF_MAP, CONF_SEQ };

struct conf_node {
    enum conf_type type;
    unsigned line;            /* 1-based line of the node's value */
    const char *key;          /* its key in the parent map; NULL in a sequence or at the root */
    unsigned index;           /* its index in the parent sequence */
    const char *val;          /* scalar text ("" for an empty value) */
    int plain;                /* scalar was unquoted */
    int used;                 /* a getter read it */
    struct conf_node *parent; /* NULL at the root */
    struct conf_node *kids;   /* map entries (in file order) or sequence items */
    unsigned nkids;
    const char *const *keys; /* a map's declared keys, NULL-terminated (conf_keys); or NULL */
    const char *undeclared;  /* the first key a getter asked a declared map for that it lacks */
};

struct conf {
    char file[256]; /* the name messages use */
    struct conf_node *root;
    void *arena_; /* private: storage of nodes and strings */
};

int conf_load_file(struct conf *c, const char *path, struct err *e);
/* name is what messages call the document (for example "profiles/intel-xeon.yaml"). */
int conf_load_mem(struct conf *c, const char *name, const char *buf, size_t len, struct err *e);
void conf_free(struct conf *c);

/* "a.b[2].c": the node's path from the root, for messages. */
void conf_path(const struct conf_node *n, char *buf, size_t cap);
/* Sets e to "FILE:LINE: PATH: MESSAGE" for node n and returns -QOSIM_EPARSE. */
int conf_error(const struct conf *c, const struct conf_node *n, struct err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The entry key of map (marked used), or NULL if absent. An error if map is
 * not a map (conf_expect below). */
struct conf_node *conf_get(struct conf_node *map, const char *key);
/* Checks n's type; on mismatch sets e ("expected a mapping") and returns it. */
int conf_expect(const struct conf *c, const struct conf_node *n, enum conf_type t, struct err *e);

/* Typed getters. Each reads key from map; when the key is absent it returns
 * 0 and leaves *out as it was (the caller sets the default first), unless
 * CONF_REQ is given, which makes absence an error naming the map's line.
 * Bounds are inclusive. Values:
 *   u64    decimal or 0x-hex integer
 *   f64    decimal number
 *   size   bytes: integer with optional K, M, G (also KiB, MiB, GiB; powers of 1024)
 *   time   seconds (as a double) from a number with unit: ns, us, ms, s; or cycles
 *          are not accepted here (use u64 for cycles)
 *   freq   Hz from a number with unit Hz, kHz, MHz, GHz
 *   rate   bytes per second from a number with unit B/s, KB/s, MB/s, GB/s (powers of 1000,
 *          as memory bandwidth is quoted)
 *   pct    a number with a % sign, or a plain number, in [0, 100]
 *   bool   true/false, yes/no, on/off
 *   str    any scalar
 *   enum   one of names[0..n); *out is the index; the message lists them */
enum { CONF_OPT = 0, CONF_REQ = 1 };
int conf_u64(const struct conf *c, struct conf_node *map, const char *key, int req, uint64_t min,
             uint64_t max, uint64_t *out, struct err *e);
int conf_f64(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
             double max, double *out, struct err *e);
int conf_size(const struct conf *c, struct conf_node *map, const char *key, int req, uint64_t min,
              uint64_t max, uint64_t *out, struct err *e);
int conf_time(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
              double max, double *out, struct err *e);
int conf_freq(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
              double max, double *out, struct err *e);
int conf_rate(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
              double max, double *out, struct err *e);
int conf_pct(const struct conf *c, struct conf_node *map, const char *key, int req, double *out,
             struct err *e);
int conf_bool(const struct conf *c, struct conf_node *map, const char *key, int req, int *out,
              struct err *e);
int conf_str(const struct conf *c, struct conf_node *map, const char *key, int req,
             const char **out, struct err *e);
int conf_enum(const struct conf *c, struct conf_node *map, const char *key, int req,
              const char *const *names, unsigned n, unsigned *out, struct err *e);

/* A whole string as a u64 getter reads it (decimal or 0x-hex, no sign), for
 * other places numbers are typed: 0, -1 when it is not one, -2 on overflow. */
int conf_parse_u64(const char *s, uint64_t *out);
/* A size as files write them ("64K", "1MiB", "4096"): the same returns. */
int conf_parse_size(const char *s, uint64_t *out);

/* The same parsers on a scalar node (for sequence items); n must be a scalar. */
int conf_node_u64(const struct conf *c, struct conf_node *n, uint64_t min, uint64_t max,
                  uint64_t *out, struct err *e);
int conf_node_f64(const struct conf *c, struct conf_node *n, double min, double max, double *out,
                  struct err *e);

/* Declares every key map may hold (a NULL-terminated list of strings that
 * outlive c) and reports the first other one, in file order, as
 * "FILE:LINE: PATH: unknown key (did you mean 'k'?)", suggesting the
 * declared key closest to it when one is close. Call it before reading the
 * map, so that a misspelt key is named rather than the required key it
 * was meant to be. A map's reader that asks later for a key it did not
 * declare is a bug conf_check_unused reports. Returns 0 for a node that is
 * not a map (its reader reports the type). */
int conf_keys(struct conf *c, struct conf_node *map, struct err *e, ...) __attribute__((sentinel));

/* Reports the first key, in file order anywhere under n, that no getter read:
 * "FILE:LINE: PATH: unknown key" (with a suggestion as conf_keys makes when
 * the map declared its keys and this one is not among them). Sequence items
 * count as read when their sequence was. Returns 0 if there is none. */
int conf_check_unused(const struct conf *c, const struct conf_node *n, struct err *e);

/* The name in names (NULL-terminated) a misspelt name most likely meant,
 * or NULL (as conf_keys suggests keys). */
const char *conf_closest(const char *const *names, const char *name);

/* Writes the tree under n as a YAML document (block style, or one flow
 * line when flow is set), scalars quoted as they were read. 0, or
 * -QOSIM_EIO. */
int conf_write(FILE *f, const struct conf_node *n, int flow);

#endif
