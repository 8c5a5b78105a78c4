/* Streaming: memset, memcpy (aligned and misaligned) and memmove over
 * 64 KiB buffers, then a strided read-modify-write. glibc's vector routines
 * make wide accesses that straddle cache lines; the loops make long
 * sequential and strided runs. Static buffers, fixed sizes: every run is the
 * same. */
#include <stdio.h>
#include <string.h>

#define SZ (64 * 1024)

static unsigned char src[SZ], dst[SZ + 64];

int main(void)
{
    unsigned long sum = 0;
    for (int pass = 0; pass < 2; pass++) {
        memset(src, 'a' + pass, SZ);
        memcpy(dst, src, SZ);
        memcpy(dst + 3, src + 1, SZ - 7);
        memmove(dst + 17, dst, SZ / 2);
        for (int i = 0; i < SZ; i += 72)
            dst[i] = (unsigned char)(dst[i] + src[SZ - 1 - i]);
        for (int i = 0; i < SZ; i += 4096)
            sum += dst[i] + dst[i + 63];
    }
    printf("%lu\n", sum);
    return 0;
}
