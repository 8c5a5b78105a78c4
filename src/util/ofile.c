#include "ofile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ofile_open(struct ofile *o, const char *path, struct err *e)
{
    memset(o, 0, sizeof *o);
    if (strlen(path) >= sizeof o->path)
        return err_set(e, -QOSIM_EINVAL, "%.64s...: path too long", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0)
        return err_set(e, -QOSIM_EIO, "%s: cannot create: %s", path, strerror(errno));
    /* mkstemp makes it private; the result gets the usual permissions. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        return err_set(e, -QOSIM_EIO, "%s: cannot create: %s", path, strerror(errno));
    }
    return 0;
}

int ofile_commit(struct ofile *o, struct err *e)
{
    int bad = ferror(o->f) | fflush(o->f);
    int saved = errno;
    bad |= fclose(o->f);
    o->f = NULL;
    if (bad || rename(o->tmp, o->path)) {
        int en = bad ? saved : errno;
        unlink(o->tmp);
        return err_set(e, -QOSIM_EIO, "%s: cannot write: %s", o->path, strerror(en));
    }
    return 0;
}

void ofile_abort(struct ofile *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
        unlink(o->tmp);
    }
}
