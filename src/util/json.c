#include "json.h"

void json_init(struct json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

static void json_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Separator, indentation and key before a member. */
static void json_member(struct json *j, const char *key)
{
    if (j->count[j->depth]++)
        fputc(',', j->f);
    if (j->depth)
        fprintf(j->f, "\n%*s", 2 * j->depth, "");
    if (key) {
        json_quoted(j->f, key);
        fputs(": ", j->f);
    }
}

static void json_open(struct json *j, const char *key, char c)
{
    json_member(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->count[++j->depth] = 0;
}

static void json_close(struct json *j, char c)
{
    int had = j->count[j->depth];
    if (j->depth)
        j->depth--;
    if (had)
        fprintf(j->f, "\n%*s", 2 * j->depth, "");
    fputc(c, j->f);
    if (!j->depth)
        fputc('\n', j->f);
}

void json_obj_begin(struct json *j, const char *key)
{
    json_open(j, key, '{');
}

void json_obj_end(struct json *j)
{
    json_close(j, '}');
}

void json_arr_begin(struct json *j, const char *key)
{
    json_open(j, key, '[');
}

void json_arr_end(struct json *j)
{
    json_close(j, ']');
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
    json_member(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_f64(struct json *j, const char *key, double v)
{
    json_member(j, key);
    fprintf(j->f, "%.6g", v);
}

void json_str(struct json *j, const char *key, const char *s)
{
    json_member(j, key);
    json_quoted(j->f, s);
}

void json_null(struct json *j, const char *key)
{
    json_member(j, key);
    fputs("null", j->f);
}

void json_u64_or_null(struct json *j, const char *key, int known, uint64_t v)
{
    if (known)
        json_u64(j, key, v);
    else
        json_null(j, key);
}

void json_f64_or_null(struct json *j, const char *key, int known, double v)
{
    if (known)
        json_f64(j, key, v);
    else
        json_null(j, key);
}
