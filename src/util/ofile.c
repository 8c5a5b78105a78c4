#include "ofile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OFILE_MAXPEND  16 /* outputs open at once; a command has at most three */
#define OFILE_MAXLINKS 40 /* the kernel's own limit on links in one lookup */

/* Temporaries a signal must remove: ofiles of kind OFILE_RENAME that are
 * open. Changed with the trapped signals blocked, so the handler never
 * sees a half-made entry. */
static struct ofile *volatile ofile_pend[OFILE_MAXPEND];
static void (*volatile ofile_hook)(int);
static const int ofile_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define OFILE_NSIGS (sizeof ofile_sigs / sizeof ofile_sigs[0])

static void ofile_block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    for (size_t i = 0; i < OFILE_NSIGS; i++)
        sigaddset(&s, ofile_sigs[i]);
    sigprocmask(SIG_BLOCK, &s, old);
}

/* Adds o to the pending list (add) or removes it; -1 when the list is full. */
static int ofile_pending(struct ofile *o, int add)
{
    sigset_t old;
    int rc = add ? -1 : 0;
    ofile_block(&old);
    for (int i = 0; i < OFILE_MAXPEND; i++) {
        if (add && !ofile_pend[i]) {
            ofile_pend[i] = o;
            rc = 0;
            break;
        }
        if (!add && ofile_pend[i] == o)
            ofile_pend[i] = NULL;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void ofile_unlink_pending(void)
{
    for (int i = 0; i < OFILE_MAXPEND; i++) {
        struct ofile *o = ofile_pend[i];
        if (o)
            unlink(o->tmp);
    }
}

/* The stream's writes go through here so the first error's errno is kept:
 * by the time a buffered FILE reports an error, errno has moved on. */
static ssize_t ofile_cwrite(void *c, const char *p, size_t n)
{
    struct ofile *o = c;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(o->fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!o->werr)
                o->werr = w < 0 ? errno : EIO;
            return 0; /* fopencookie: 0 is an error */
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

static int ofile_cclose(void *c)
{
    struct ofile *o = c;
    if (o->kind == OFILE_STDFD) /* the process's own; others may still write to it */
        return 0;
    if (close(o->fd) && !o->werr) {
        o->werr = errno;
        return -1;
    }
    return 0;
}

static void ofile_drop(struct ofile *o)
{
    if (o->f) {
        __fpurge(o->f); /* what was not written yet is not wanted any more */
        fclose(o->f);
        o->f = NULL;
    } else if (o->fd >= 0 && o->kind != OFILE_STDFD) {
        close(o->fd);
    }
    o->fd = -1;
    if (o->kind == OFILE_RENAME && o->tmp[0]) {
        unlink(o->tmp);
        ofile_pending(o, 0);
        o->tmp[0] = '\0';
    }
}

static int ofile_stream(struct ofile *o, struct err *e)
{
    cookie_io_functions_t io = {.write = ofile_cwrite, .close = ofile_cclose};
    o->f = fopencookie(o, "w", io);
    if (o->f)
        return 0;
    int en = errno;
    ofile_drop(o);
    return err_set(e, -QOSIM_EIO, "%s: cannot open: %s", o->path, strerror(en));
}

/* Follows the chain of symbolic links from path into out (PATH_MAX bytes);
 * the last name need not exist. A relative link is relative to the
 * directory that holds it. */
static int ofile_follow(const char *path, char *out, struct err *e)
{
    char cur[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) || !S_ISLNK(st.st_mode))
            break;
        if (hops == OFILE_MAXLINKS)
            return err_set(e, -QOSIM_EIO, "%s: too many levels of symbolic links", path);
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return err_set(e, -QOSIM_EIO, "%s: cannot read the link %s: %s", path, cur,
                           strerror(errno));
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        int dir = link[0] == '/' || !slash ? 0 : (int)(slash - cur + 1);
        if (snprintf(next, sizeof next, "%.*s%s", dir, cur, link) >= (int)sizeof next)
            return err_set(e, -QOSIM_EINVAL, "%s: the link's target is too long", path);
        memcpy(cur, next, sizeof cur);
    }
    memcpy(out, cur, PATH_MAX);
    return 0;
}

/* A temporary beside the target; st: the file it replaces, or NULL. */
static int ofile_temp(struct ofile *o, const struct stat *st, struct err *e)
{
    o->kind = OFILE_RENAME;
    if (snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", o->target) >= (int)sizeof o->tmp)
        return err_set(e, -QOSIM_EINVAL, "%s: path too long", o->path);
    sigset_t old;
    ofile_block(&old); /* created and listed as one step, for the signal handler */
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    int en = errno, full = o->fd >= 0 && ofile_pending(o, 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (o->fd < 0 || full) {
        if (full)
            unlink(o->tmp);
        o->tmp[0] = '\0';
        return err_set(e, -QOSIM_EIO, "%s: cannot create: %s", o->path,
                       full ? "too many output files" : strerror(en));
    }
    /* mkstemp makes it private; the result gets what the replaced file had,
     * or the usual permissions. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(o->fd, st ? st->st_mode & 07777 : 0666 & ~mask);
    if (st && (st->st_uid != geteuid() || st->st_gid != getegid()))
        if (fchown(o->fd, st->st_uid, st->st_gid)) {
            /* Only root may give a file away; anyone else replaces a file
             * in their own directory and keeps it. */
        }
    return ofile_stream(o, e);
}

static int ofile_direct(struct ofile *o, struct err *e)
{
    o->kind = OFILE_DIRECT;
    o->fd = open(o->target, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (o->fd < 0)
        return err_set(e, -QOSIM_EIO, "%s: cannot open: %s", o->path, strerror(errno));
    return ofile_stream(o, e);
}

/* Standard output or error, already open: written through that descriptor
 * (at its offset, after what the process wrote there), never closed. */
static int ofile_std(struct ofile *o, int fd, struct err *e)
{
    o->kind = OFILE_STDFD;
    o->fd = fd;
    return ofile_stream(o, e);
}

/* 1 or 2 when st is the file standard output or error is open on: the name
 * reached it through /dev/stdout, /proc/self/fd/N or the like, or named the
 * file the shell redirected there. */
static int ofile_stdfd(const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat fs;
        if (!fstat(fd, &fs) && fs.st_dev == st->st_dev && fs.st_ino == st->st_ino)
            return fd;
    }
    return 0;
}

int ofile_open(struct ofile *o, const char *path, struct err *e)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!*path)
        return err_set(e, -QOSIM_EINVAL, "an empty output file name");
    if (strlen(path) >= sizeof o->path)
        return err_set(e, -QOSIM_EINVAL, "%.64s...: path too long", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->target, sizeof o->target, "%s", path);
    if (!strcmp(path, "-"))
        return ofile_std(o, 1, e);
    /* The kernel's lookup first: it alone follows /proc's links to open
     * files (/dev/stdout) correctly. */
    struct stat st;
    if (stat(path, &st)) {
        if (errno != ENOENT)
            return err_set(e, -QOSIM_EIO, "%s: cannot write: %s", path, strerror(errno));
        /* A new file, or a dangling link: the file is made where it points. */
        int rc = ofile_follow(path, o->target, e);
        return rc ? rc : ofile_temp(o, NULL, e);
    }
    if (S_ISDIR(st.st_mode))
        return err_set(e, -QOSIM_EIO, "%s: is a directory", path);
    /* Writing over a disk is never what an output option means. */
    if (S_ISBLK(st.st_mode))
        return err_set(e, -QOSIM_EIO,
                       "%s: is a block device (an output is a file, a FIFO or a character device)",
                       path);
    int fd = ofile_stdfd(&st);
    if (fd)
        return ofile_std(o, fd, e);
    if (!S_ISREG(st.st_mode))
        return ofile_direct(o, e);
    /* The temporary must be made beside the file itself, the last link's
     * target, and renamed onto it. */
    struct stat ts;
    int rc = ofile_follow(path, o->target, e);
    if (rc)
        return rc;
    if (stat(o->target, &ts) || ts.st_dev != st.st_dev || ts.st_ino != st.st_ino)
        return err_set(e, -QOSIM_EIO, "%s: cannot tell which file it names", path);
    /* The shell's '>' would fail here; a rename would not, and must not
     * replace what the user may not write. */
    if (access(o->target, W_OK))
        return err_set(e, -QOSIM_EIO, "%s: cannot write: %s", path, strerror(errno));
    return ofile_temp(o, &st, e);
}

int ofile_is_stdout(const struct ofile *o)
{
    return o->f && o->kind == OFILE_STDFD && o->fd == 1;
}

/* Pushes everything out; on failure the output is dropped. */
static int ofile_flush(struct ofile *o, struct err *e)
{
    if (!fflush(o->f) && !ferror(o->f) && !o->werr)
        return 0;
    int en = o->werr ? o->werr : EIO;
    ofile_drop(o);
    return err_set(e, -QOSIM_EIO, "%s: cannot write: %s", o->path, strerror(en));
}

int ofile_commit(struct ofile *o, struct err *e)
{
    int rc = ofile_flush(o, e);
    if (rc)
        return rc;
    int bad = fclose(o->f);
    o->f = NULL;
    o->fd = -1;
    if (!bad && (o->kind != OFILE_RENAME || !rename(o->tmp, o->target))) {
        if (o->kind == OFILE_RENAME)
            ofile_pending(o, 0);
        return 0;
    }
    int en = o->werr ? o->werr : errno;
    ofile_drop(o);
    return err_set(e, -QOSIM_EIO, "%s: cannot write: %s", o->path, strerror(en));
}

int ofile_commit_all(struct ofile *const *v, size_t n, struct err *e)
{
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (v[i] && v[i]->f)
            rc = ofile_flush(v[i], e);
    for (size_t i = 0; i < n; i++) {
        if (!v[i] || !v[i]->f)
            continue;
        if (rc)
            ofile_abort(v[i]);
        else
            rc = ofile_commit(v[i], e);
    }
    return rc;
}

void ofile_abort(struct ofile *o)
{
    if (o->f)
        ofile_drop(o);
}

/* ---- which file a name means ---- */

struct ofile_id {
    int known; /* dev and ino are valid: the file exists */
    int reg;   /* a regular file */
    dev_t dev;
    ino_t ino;
    char path[PATH_MAX]; /* otherwise: its canonical name */
};

static void ofile_known(struct ofile_id *id, const struct stat *st)
{
    id->known = 1;
    id->reg = S_ISREG(st->st_mode);
    id->dev = st->st_dev;
    id->ino = st->st_ino;
}

/* What path names; fd: the descriptor "-" stands for. */
static void ofile_ident(const char *path, int fd, struct ofile_id *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    snprintf(id->path, sizeof id->path, "%s", path);
    if (!strcmp(path, "-")) {
        if (!fstat(fd, &st))
            ofile_known(id, &st);
        return;
    }
    if (!stat(path, &st)) {
        ofile_known(id, &st);
        return;
    }
    /* A new file: its directory's canonical name and its own. */
    struct err e;
    if (strlen(path) >= sizeof id->path || ofile_follow(path, id->path, &e))
        return;
    char dir[PATH_MAX], real[PATH_MAX], full[PATH_MAX];
    const char *slash = strrchr(id->path, '/'), *base = slash ? slash + 1 : id->path;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == id->path ? 1 : (int)(slash - id->path),
                 id->path);
    if (realpath(dir, real) && snprintf(full, sizeof full, "%s/%s", real, base) < (int)sizeof full)
        memcpy(id->path, full, sizeof full);
}

static int ofile_same(const struct ofile_id *a, const struct ofile_id *b)
{
    if (a->known && b->known)
        return a->dev == b->dev && a->ino == b->ino;
    return !a->known && !b->known && !strcmp(a->path, b->path);
}

int ofile_distinct(const struct ofile_name *out, size_t nout, const struct ofile_name *in,
                   size_t nin, struct err *e)
{
    static struct ofile_id a, b;
    for (size_t i = 0; i < nout; i++) {
        if (!out[i].path)
            continue;
        ofile_ident(out[i].path, 1, &a);
        for (size_t k = i + 1; k < nout; k++) {
            if (!out[k].path)
                continue;
            ofile_ident(out[k].path, 1, &b);
            if (!strcmp(out[i].path, "-") && !strcmp(out[k].path, "-"))
                return err_set(e, -QOSIM_EINVAL, "%s - and %s - both write to standard output",
                               out[i].what, out[k].what);
            if (ofile_same(&a, &b))
                return err_set(e, -QOSIM_EINVAL, "%s %s and %s %s name the same file", out[i].what,
                               out[i].path, out[k].what, out[k].path);
        }
        /* Only a regular file is destroyed by writing: a terminal that is
         * both standard input and output is not. */
        for (size_t k = 0; k < nin; k++) {
            if (!in[k].path)
                continue;
            ofile_ident(in[k].path, 0, &b);
            if (b.known && b.reg && ofile_same(&a, &b))
                return err_set(e, -QOSIM_EINVAL, "%s %s would overwrite %s %s", out[i].what,
                               out[i].path, in[k].what,
                               strcmp(in[k].path, "-") ? in[k].path : "(standard input)");
        }
    }
    return 0;
}

/* ---- signals ---- */

static void ofile_on_signal(int sig)
{
    void (*hook)(int) = ofile_hook;
    if (hook)
        hook(sig);
    ofile_unlink_pending();
    /* Ending by the signal itself tells a calling shell or script that the
     * run was interrupted (a loop of runs stops at Ctrl-C). */
    signal(sig, SIG_DFL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
    _exit(128 + sig);
}

void ofile_trap_signals(void (*hook)(int sig))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ofile_on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < OFILE_NSIGS; i++)
        sigaddset(&sa.sa_mask, ofile_sigs[i]);
    ofile_hook = hook;
    for (size_t i = 0; i < OFILE_NSIGS; i++) {
        struct sigaction old;
        if (!sigaction(ofile_sigs[i], NULL, &old) && old.sa_handler == SIG_IGN)
            continue;
        sigaction(ofile_sigs[i], &sa, NULL);
    }
}
