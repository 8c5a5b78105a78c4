#include "console.h"

#include "util/conf.h"

#include <string.h>

int console_num(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v;
    if (!s || conf_parse_u64(s, &v) || v > max)
        return -1;
    *out = v;
    return 0;
}

void console_run(struct console *k, char **w, int n, char *err, FILE *out)
{
    uint64_t ns;
    struct err e;
    if (n != 2 || console_num(w[1], 1000000000000ull, &ns))
        snprintf(err, CONSOLE_ERR_SIZE, "usage: run NS (nanoseconds, up to 1000 s)");
    else if (k->run && k->run(k->ctx, ns, &e))
        snprintf(err, CONSOLE_ERR_SIZE, "the run failed: %s", e.msg);
    else
        fputs("ok\n", out);
}

void console_line(struct console *k, char *text, FILE *out, console_cmd_fn cmd, void *self)
{
    k->line++;
    char *hash = strchr(text, '#');
    if (hash)
        *hash = '\0';
    char *w[CONSOLE_MAX_WORDS], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(text, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == CONSOLE_MAX_WORDS) {
            fprintf(out, "error: line %u: too many words\n", k->line);
            k->errors++;
            return;
        }
        w[n++] = t;
    }
    if (!n)
        return;
    char err[CONSOLE_ERR_SIZE] = "";
    cmd(self, w, n, err, out);
    if (*err) {
        fprintf(out, "error: line %u: %s\n", k->line, err);
        k->errors++;
    }
}
