#include "slice.h"

const char *const slice_hash_name[SLICE_NHASH] = {"maurice", "mix"};

const char *slice_check(unsigned hash, uint32_t n)
{
    if (n < 1 || n > SLICE_MAX)
        return "slices must be 1 to 256";
    if (hash == SLICE_MAURICE && n > 1 && n != 2 && n != 4 && n != 8)
        return "the maurice hash is published for 2, 4 and 8 slices (use slice_hash: mix)";
    return 0;
}
