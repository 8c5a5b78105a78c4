#include "usock.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int usock_folder_safe(const char *path, struct err *e)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return err_set(e, -QOSIM_EINVAL, "%s: path too long", path), -1;
    const char *dir = dirname(buf);
    struct stat st;
    if (stat(dir, &st))
        return err_set(e, -QOSIM_EINVAL, "%s: folder %s: %s", path, dir, strerror(errno)), -1;
    if (!S_ISDIR(st.st_mode))
        return err_set(e, -QOSIM_EINVAL, "%s: %s is not a folder", path, dir), -1;
    if (st.st_uid != geteuid() && st.st_uid != 0)
        return err_set(e, -QOSIM_EINVAL,
                       "%s: folder %s belongs to uid %u, who could replace the socket: use a "
                       "folder of your own",
                       path, dir, (unsigned)st.st_uid),
               -1;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return err_set(e, -QOSIM_EINVAL,
                       "%s: folder %s (mode %04o) can be written by other users, who could "
                       "replace the socket: use a folder only you can write",
                       path, dir, (unsigned)(st.st_mode & 07777)),
               -1;
    return 0;
}

/* A stream socket and path's address in a; the descriptor, or -1 with why
 * in e. */
static int usock_open(const char *path, struct sockaddr_un *a, struct err *e)
{
    *a = (struct sockaddr_un){.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a->sun_path)
        return err_set(e, -QOSIM_EINVAL, "%s: path too long for a socket (%zu bytes at most)", path,
                       sizeof a->sun_path - 1),
               -1;
    strcpy(a->sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(errno));
    return fd;
}

int usock_listen(const char *path, struct err *e)
{
    struct sockaddr_un a;
    int fd = usock_open(path, &a, e);
    if (fd < 0)
        return -1;
    /* bind() creates the file with 0777 less the umask, and no call can
     * set a socket file's mode before it exists: a umask that removes
     * everything but the owner's bits closes the window. The umask is the
     * process's: a file another thread makes in that instant gets a
     * narrower mode than it asked for, never a wider one. */
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    int bind_errno = errno;
    umask(old);
    if (rc || listen(fd, 4)) {
        err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(rc ? bind_errno : errno));
        if (!rc)
            unlink(path);
        close(fd);
        return -1;
    }
    return fd;
}

int usock_connect(const char *path, struct err *e)
{
    struct sockaddr_un a;
    int fd = usock_open(path, &a, e);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
        err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int usock_peer(int fd, uid_t *uid, pid_t *pid)
{
    struct ucred c;
    socklen_t n = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) || n != sizeof c)
        return -1;
    *uid = c.uid;
    *pid = c.pid;
    return 0;
}

int usock_accept(int fd, FILE *log)
{
    for (;;) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return -1;
        }
        uid_t uid = (uid_t)-1;
        pid_t pid = 0;
        if (!usock_peer(c, &uid, &pid) && uid == geteuid())
            return c;
        fprintf(log,
                "qosim: console: refused a connection from uid %ld (pid %ld): only uid %ld, "
                "who made the socket, may use it\n",
                (long)(int)uid, (long)pid, (long)geteuid());
        fflush(log);
        close(c);
    }
}
