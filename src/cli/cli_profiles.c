/* qosim profiles [show NAME | check FILE]: the platform profiles. */
#include "cli.h"

#include "sim/scen/plat.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: qosim profiles               list the shipped platform profiles\n"
    "       qosim profiles show NAME     print a shipped profile's YAML\n"
    "       qosim profiles check FILE    validate a profile (a name or a path)\n";

int cli_profiles(int argc, char **argv)
{
    struct plat p;
    struct err e;
    if (argc == 1) {
        int w = 0; /* the longest name sets the column */
        for (unsigned i = 0; plat_builtin_name(i); i++)
            if ((int)strlen(plat_builtin_name(i)) > w)
                w = (int)strlen(plat_builtin_name(i));
        for (unsigned i = 0; plat_builtin_name(i); i++) {
            if (plat_load(&p, plat_builtin_name(i), &e)) {
                cli_error("profiles", "%s", e.msg);
                return 1;
            }
            printf("%-*s %-6s sockets %u, NUMA nodes %u, L3 domains %u, cores %u, CPUs %u\n", w,
                   p.name, plat_vendor_name[p.vendor], p.topo.sockets, p.nnodes,
                   p.cache[PLAT_L3].present ? p.ndomains : 0, p.ncores, p.ncpus);
        }
        return 0;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "show")) {
        const char *t = plat_builtin_text(argv[2]);
        if (!t) {
            cli_error("profiles", "no shipped profile called '%s' ('qosim profiles' lists them)",
                      argv[2]);
            return 1;
        }
        fputs(t, stdout);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "check")) {
        if (plat_load(&p, argv[2], &e)) {
            cli_error("profiles", "%s", e.msg);
            return 2;
        }
        printf("%s: %s is a valid profile (%u CPUs)\n", argv[2], p.name, p.ncpus);
        return 0;
    }
    /* Say what is wrong: the command alone, an argument too many, or an
     * unknown command; the usage follows. */
    int show = !strcmp(argv[1], "show"), check = !strcmp(argv[1], "check");
    const char *what = show ? "NAME" : "FILE";
    char names[256];
    if ((show || check) && argc == 2)
        cli_error("profiles", "%s needs a %s (%s%s)", argv[1], what,
                  show ? "shipped: " : "a profile's path or a shipped name",
                  show ? plat_builtin_list(names, sizeof names) : "");
    else if (show || check)
        cli_error("profiles", "%s takes one %s; unexpected '%s'", argv[1], what, argv[3]);
    else
        cli_error("profiles", "unknown command '%s' (show NAME, check FILE)", argv[1]);
    fputs(usage, stderr);
    return 2;
}
