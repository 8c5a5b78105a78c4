/* The one table of replacement policies: adding one is a new repl_*.c file
 * and a line here. The QLRU family is parameterised by its name and found
 * by repl_qlru_find (repl_qlru.c) after the fixed ones. */
#include "repl.h"

#include <string.h>

static const struct repl_ops *const repl_table[] = {&repl_lru, &repl_plru, &repl_srrip};

const struct repl_ops *repl_at(unsigned n)
{
    return n < sizeof repl_table / sizeof repl_table[0] ? repl_table[n] : NULL;
}

const struct repl_ops *repl_find(const char *name)
{
    for (unsigned i = 0; repl_at(i); i++)
        if (!strcmp(repl_at(i)->name, name))
            return repl_at(i);
    return repl_qlru_find(name);
}
