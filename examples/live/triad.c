/* STREAM's triad kernel, a[i] = b[i] + 3 c[i], over three 32 MiB arrays,
 * PASSES times (default 1000): the classic memory-bandwidth aggressor,
 * streaming 96 MiB per pass through the caches to memory. The checksum
 * printed at the end keeps the compiler from dropping the work. Built by
 * `make demo-live` (scripts/demo-live.sh) into build/demo/triad. */
#include <stdio.h>
#include <stdlib.h>

#define N (4u << 20) /* doubles per array */

int main(int argc, char **argv)
{
    unsigned passes = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    if (!a || !b || !c)
        return 1;
    for (unsigned i = 0; i < N; i++)
        a[i] = 0, b[i] = i, c[i] = 1;
    double sum = 0;
    for (unsigned p = 0; p < passes; p++) {
        for (unsigned i = 0; i < N; i++)
            a[i] = b[i] + 3.0 * c[i];
        sum += a[p % N];
    }
    printf("%g\n", sum);
    return 0;
}
