/* A streaming JSON writer: output goes straight to the FILE, so per-interval
 * statistics of long runs never build up in memory. */
#ifndef QOSIM_UTIL_JSON_H
#define QOSIM_UTIL_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH]; /* members written at each depth, for commas */
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j, const char *key); /* key NULL at top level / in arrays */
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_f64(struct json *j, const char *key, double v);
void json_str(struct json *j, const char *key, const char *s);
void json_null(struct json *j, const char *key); /* a value that is not known */
/* v when known, else null. */
void json_u64_or_null(struct json *j, const char *key, int known, uint64_t v);
void json_f64_or_null(struct json *j, const char *key, int known, double v);

#endif
