#include "tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tmpdir_make(const char *name, char *out, size_t n, struct err *e)
{
    const char *top = getenv("TMPDIR");
    if (!top || !*top)
        top = "/tmp";
    if (snprintf(out, n, "%s/%s.XXXXXX", top, name) >= (int)n)
        return err_set(e, -QOSIM_EINVAL, "TMPDIR=%s: path too long", top);
    if (!mkdtemp(out))
        return err_set(e, -QOSIM_EIO, "cannot make a temporary folder in %s%s: %s", top,
                       top == getenv("TMPDIR") ? " ($TMPDIR)" : "", strerror(errno));
    /* mkdtemp asks for 0700 but the umask may take the owner's bits away. */
    if (chmod(out, 0700)) {
        int er = errno;
        rmdir(out);
        return err_set(e, -QOSIM_EIO, "%s: %s", out, strerror(er));
    }
    return 0;
}

FILE *tmpdir_file(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int er = errno;
        close(fd);
        unlink(path);
        errno = er;
    }
    return f;
}
