/* Helper of tests/e2e/test_x86br.sh, not a unit test: reads lines
 * "ADDR HEXBYTES" (one instruction each; the bytes as hex pairs, blanks
 * between them allowed) on standard input and prints "ADDR FLAGS" for each,
 * FLAGS being x86br_flags() of the bytes as two hex digits. A malformed
 * line is reported with its number, and the exit status is then 1. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace/x86br.h"

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    unsigned long n = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, stdin)) > 0) {
        n++;
        char *p = line, *addr = line;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t alen = (size_t)(p - addr);
        uint8_t insn[16];
        size_t len = 0;
        for (;;) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == '\n' || *p == '\0')
                break;
            int hi = hexval((unsigned char)p[0]), lo = hi < 0 ? -1 : hexval((unsigned char)p[1]);
            if (lo < 0 || len == sizeof insn) {
                fprintf(stderr, "x86br_objdump: line %lu: %s", n,
                        lo < 0 ? "not hex bytes\n" : "more than 16 bytes\n");
                free(line);
                return 1;
            }
            insn[len++] = (uint8_t)(hi << 4 | lo);
            p += 2;
        }
        if (!alen || !len) {
            fprintf(stderr, "x86br_objdump: line %lu: want \"ADDR HEXBYTES\"\n", n);
            free(line);
            return 1;
        }
        printf("%.*s %02x\n", (int)alen, addr, x86br_flags(insn, len));
    }
    free(line);
    return ferror(stdin) || fflush(stdout) ? 1 : 0;
}
