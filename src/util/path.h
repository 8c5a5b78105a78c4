/* Finding a program as the shell and execvp do: a name with a '/' is a
 * path; any other is looked up in each directory of PATH in turn (the
 * shell's default, /usr/local/bin:/usr/bin:/bin, when PATH is unset), the
 * first executable regular file winning. */
#ifndef QOSIM_UTIL_PATH_H
#define QOSIM_UTIL_PATH_H

#include <stddef.h>

/* 0 with the file's path in out, or -1 when there is none. */
int path_which(const char *name, char *out, size_t cap);

/* rel (a relative path) in the folder of the running program's binary,
 * where the build puts what the binary uses beside it (QEMU plugins, the
 * whole guest): 0 with the path in out, -1 when the binary cannot be
 * found or the path does not fit. */
int path_beside_exe(const char *rel, char *out, size_t cap);

#endif
