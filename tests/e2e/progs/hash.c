/* A string hash table: 1200 keys made by a fixed generator, inserted with
 * FNV-1a into an open-addressing table, then looked up (hits and misses)
 * with strcmp. Byte loads, short strings, irregular probes; static storage,
 * no input, clock or randomness, so every run is the same. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KEYS  1200
#define SLOTS 4096 /* a power of two, at least twice KEYS */

static char keys[KEYS][16];
static int slot[SLOTS]; /* key index + 1; 0 = empty */

static uint32_t fnv(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

static void make_key(char *k, uint32_t n)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    char *p = k;
    *p++ = 'k';
    n = n * 2654435761u;
    do {
        *p++ = digits[n % 36];
        n /= 36;
    } while (n);
    *p = 0;
}

static int find(const char *k)
{
    for (uint32_t h = fnv(k) & (SLOTS - 1);; h = (h + 1) & (SLOTS - 1)) {
        if (!slot[h])
            return -(int)h - 1;
        if (!strcmp(keys[slot[h] - 1], k))
            return slot[h] - 1;
    }
}

int main(void)
{
    for (uint32_t i = 0; i < KEYS; i++) {
        make_key(keys[i], i);
        int f = find(keys[i]);
        if (f < 0)
            slot[-f - 1] = (int)i + 1;
    }
    long hits = 0, misses = 0;
    char k[16];
    for (uint32_t i = 0; i < 2 * KEYS; i++) {
        make_key(k, i);
        if (find(k) >= 0)
            hits++;
        else
            misses++;
    }
    printf("%ld %ld\n", hits, misses);
    return 0;
}
