/* L3 slices: which slice of a sliced cache a line lives in.
 *
 * A sliced cache is one cache whose sets are slices x sets-per-slice; a
 * line's set within its slice comes from the address bits above the line
 * offset as in an unsliced cache, and its slice from a hash of the address.
 * The hashes (names as profiles spell them, slice_hash_name):
 *   maurice  Intel's complex addressing for 2, 4 or 8 slices as Maurice et
 *            al. reverse-engineered it ("Reverse Engineering Intel
 *            Last-Level Cache Complex Addressing Using Performance
 *            Counters", RAID 2015, table 2): slice bit i is the parity of
 *            the physical address bits in mask o_i;
 *   mix      project choice for every other count (the real hashes of
 *            parts with 2^n > 8 or non-power-of-two slices, such as
 *            Skylake-SP's 18 or 28, are not published as functions): the
 *            line number through the SplitMix64 finaliser (Steele, Lea and
 *            Flood, "Fast Splittable Pseudorandom Number Generators",
 *            OOPSLA 2014), whose top 32 bits, scaled by the slice count,
 *            pick the slice. It behaves as a random function of the line:
 *            every address bit above the line offset reaches the result,
 *            slices fill evenly, and the lines of a buffer that share a set
 *            index spread over the slices binomially, not in the lockstep
 *            of a linear (XOR) hash, whose 2^n slices take exactly equal
 *            shares of any aligned buffer. */
#ifndef QOSIM_SIM_SLICE_H
#define QOSIM_SIM_SLICE_H

#include <stdint.h>

enum slice_hash { SLICE_MAURICE, SLICE_MIX, SLICE_NHASH };
extern const char *const slice_hash_name[SLICE_NHASH];

#define SLICE_MAX 256 /* slices of one cache */

/* Maurice et al.'s o0, o1, o2 as masks of physical address bits 6..37
 * (o0: bits 6, 10, 12, 14, 16-18, 20, 22, 24-28, 30, 32, 33, 35, 36; o1:
 * 7, 11, 13, 15, 17, 19-24, 26, 28, 29, 31, 33-35, 37; o2: 8, 12, 13, 16,
 * 19, 22, 23, 26, 27, 30, 31, 34-37). */
#define SLICE_O0 0x1b5f575440ull
#define SLICE_O1 0x2eb5faa880ull
#define SLICE_O2 0x3cccc93100ull

/* The slice of line `block` (physical address >> line_bits) among n (n >
 * 1; a power of two at most 8 for maurice). */
static inline uint32_t slice_of(unsigned hash, uint32_t n, uint64_t block, unsigned line_bits)
{
    if (hash == SLICE_MAURICE) {
        uint64_t addr = block << line_bits;
        uint32_t s = (uint32_t)__builtin_parityll(addr & SLICE_O0);
        if (n > 2)
            s |= (uint32_t)__builtin_parityll(addr & SLICE_O1) << 1;
        if (n > 4)
            s |= (uint32_t)__builtin_parityll(addr & SLICE_O2) << 2;
        return s;
    }
    uint64_t h = block;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    return (uint32_t)(((h >> 32) * n) >> 32);
}

/* NULL if hash can split a cache into n slices, else why not. */
const char *slice_check(unsigned hash, uint32_t n);

#endif
