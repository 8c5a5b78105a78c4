/* Bit helpers for power-of-two geometry: caches index sets with masks. */
#ifndef QOSIM_UTIL_BITS_H
#define QOSIM_UTIL_BITS_H

#include <stdint.h>

static inline int bits_is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

/* log2 of a power of two. */
static inline unsigned bits_log2(uint64_t x)
{
    return (unsigned)__builtin_ctzll(x);
}

/* Mask of the low n bits, n in 0..64. */
static inline uint64_t bits_mask(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

#endif
