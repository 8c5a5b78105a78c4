#include "path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int path_which(const char *name, char *out, size_t cap)
{
    if (strchr(name, '/')) {
        if (access(name, X_OK))
            return -1;
        snprintf(out, cap, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        struct stat st;
        if (n && n + strlen(name) + 2 < cap) {
            snprintf(out, cap, "%.*s/%s", (int)n, p, name);
            if (!access(out, X_OK) && !stat(out, &st) && S_ISREG(st.st_mode))
                return 0;
        }
        p += n + (c != NULL);
    }
    return -1;
}

int path_beside_exe(const char *rel, char *out, size_t cap)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    int w = snprintf(out, cap, "%s/%s", slash ? exe : ".", rel);
    return w < 0 || (size_t)w >= cap ? -1 : 0;
}
