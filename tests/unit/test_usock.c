/* util/usock and util/tmpdir: what qosim makes for itself stays its
 * owner's (docs/security.md). A console socket is 0600 under any umask, an
 * existing path is never replaced, a folder another user could write to
 * (and that is not sticky) is refused, and the peer's uid is the kernel's
 * record of who connected, another user's included; a temporary folder is
 * made under $TMPDIR, 0700, and its files 0600. Tests that need a second
 * user run as root (setuid to nobody, 65534) and are skipped otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testlib.h"
#include "util/tmpdir.h"
#include "util/usock.h"

#include <errno.h>
#include <signal.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

static char dir[PATH_MAX];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/qosim-usock-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *at(const char *name)
{
    static char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_mode & 07777;
}

/* Under a umask of 000 (containers, CI images) and of 077 alike. */
static void test_socket_mode_any_umask(void **state)
{
    (void)state;
    static const mode_t masks[] = {0, 077, 022};
    for (size_t i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%zu", i);
        mode_t old = umask(masks[i]);
        struct err e;
        int fd = usock_listen(at(name), &e);
        umask(old);
        assert_true(fd >= 0);
        assert_int_equal(mode_of(at(name)), 0600);
        /* ... and the umask is the caller's again. */
        assert_int_equal(umask(old), old);
        close(fd);
    }
}

static void test_socket_never_replaces(void **state)
{
    (void)state;
    FILE *f = fopen(at("taken"), "w");
    assert_non_null(f);
    fputs("data", f);
    fclose(f);
    struct err e;
    assert_int_equal(usock_listen(at("taken"), &e), -1);
    assert_non_null(strstr(e.msg, "Address already in use"));
    struct stat st;
    assert_int_equal(stat(at("taken"), &st), 0);
    assert_int_equal(st.st_size, 4);
    char longp[200];
    memset(longp, 'x', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    assert_int_equal(usock_listen(longp, &e), -1);
    assert_non_null(strstr(e.msg, "path too long for a socket (107 bytes at most)"));
    assert_int_equal(usock_connect(longp, &e), -1);
    assert_int_equal(e.code, -QOSIM_EINVAL);
    assert_non_null(strstr(e.msg, "path too long for a socket (107 bytes at most)"));
    assert_int_equal(usock_connect(at("none"), &e), -1);
    assert_int_equal(e.code, -QOSIM_EIO);
    assert_non_null(strstr(e.msg, "/none: No such file or directory"));
}

static void test_folder_rules(void **state)
{
    (void)state;
    struct err e;
    assert_int_equal(mkdir(at("own"), 0700), 0);
    assert_int_equal(usock_folder_safe(at("own/s"), &e), 0);
    assert_int_equal(mkdir(at("open"), 0700), 0);
    assert_int_equal(chmod(at("open"), 0777), 0);
    assert_int_equal(usock_folder_safe(at("open/s"), &e), -1);
    assert_non_null(strstr(e.msg, "(mode 0777) can be written by other users"));
    assert_int_equal(chmod(at("open"), 01777), 0); /* as /tmp: sticky */
    assert_int_equal(usock_folder_safe(at("open/s"), &e), 0);
    assert_int_equal(chmod(at("open"), 0775), 0);
    assert_int_equal(usock_folder_safe(at("open/s"), &e), -1);
    assert_int_equal(usock_folder_safe(at("none/s"), &e), -1);
    assert_non_null(strstr(e.msg, "No such file or directory"));
    if (geteuid() != 0)
        return; /* a folder of another user's needs root to make */
    assert_int_equal(mkdir(at("theirs"), 0700), 0);
    assert_int_equal(chown(at("theirs"), NOBODY, NOBODY), 0);
    assert_int_equal(usock_folder_safe(at("theirs/s"), &e), -1);
    assert_non_null(strstr(e.msg, "belongs to uid 65534"));
}

/* The owner's own connection is accepted, and its peer is this process;
 * another user's is closed at once and named in the log, whatever the
 * socket's mode let through (root passes any mode, so the server runs as
 * nobody and root connects). */
static void test_peer_credentials(void **state)
{
    (void)state;
    struct err e;
    int l = usock_listen(at("me"), &e);
    assert_true(l >= 0);
    int c = usock_connect(at("me"), &e);
    assert_true(c >= 0);
    int s = usock_accept(l, stderr);
    assert_true(s >= 0);
    uid_t uid;
    pid_t pid;
    assert_int_equal(usock_peer(s, &uid, &pid), 0);
    assert_int_equal(uid, geteuid());
    assert_int_equal(pid, getpid());
    close(s), close(c), close(l);
    if (geteuid() != 0) {
        print_message("# skipped: another user's connection needs root to set up\n");
        return;
    }
    assert_int_equal(chmod(dir, 0711), 0); /* nobody may pass through */
    assert_int_equal(mkdir(at("nb"), 0700), 0);
    assert_int_equal(chown(at("nb"), NOBODY, NOBODY), 0);
    int ready[2], logp[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(logp), 0);
    pid_t child = fork();
    if (child == 0) {
        /* nobody's server, logging to the pipe; it accepts no one here. */
        close(ready[0]), close(logp[0]);
        if (setgid(NOBODY) || setuid(NOBODY))
            _exit(3);
        if (access(at("nb"), W_OK | X_OK)) /* a $TMPDIR nobody may not pass */
            _exit(write(ready[1], "n", 1) == 1 ? 0 : 4);
        int lf = usock_listen(at("nb/s"), &e);
        FILE *log = fdopen(logp[1], "w");
        if (lf < 0 || !log || write(ready[1], "r", 1) != 1)
            _exit(4);
        usock_accept(lf, log);
        _exit(5);
    }
    close(ready[1]), close(logp[1]);
    char buf[512] = "";
    assert_int_equal(read(ready[0], buf, 1), 1);
    close(ready[0]);
    if (buf[0] == 'n') {
        print_message("# skipped: uid 65534 cannot reach %s\n", dir);
        waitpid(child, NULL, 0);
        close(logp[0]);
        return;
    }
    assert_int_equal(mode_of(at("nb/s")), 0600);
    c = usock_connect(at("nb/s"), &e);
    assert_true(c >= 0);
    assert_int_equal(read(c, buf, 1), 0); /* closed without a word */
    close(c);
    ssize_t n = read(logp[0], buf, sizeof buf - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    char want[256];
    snprintf(want, sizeof want,
             "qosim: console: refused a connection from uid 0 (pid %ld): only uid 65534, who "
             "made the socket, may use it\n",
             (long)getpid());
    assert_string_equal(buf, want);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(logp[0]);
}

static void test_tmpdir_follows_tmpdir(void **state)
{
    (void)state;
    char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", dir, 1);
    mode_t um = umask(0777); /* even a umask that takes everything */
    char out[PATH_MAX];
    struct err e;
    assert_int_equal(tmpdir_make("qosim-t", out, sizeof out, &e), 0);
    umask(um);
    assert_int_equal(strncmp(out, dir, strlen(dir)), 0);
    assert_int_equal(strncmp(out + strlen(dir), "/qosim-t.", 9), 0);
    assert_int_equal(strlen(out), strlen(dir) + 15);
    assert_int_equal(mode_of(out), 0700);
    char f[PATH_MAX + 8];
    snprintf(f, sizeof f, "%s/f", out);
    um = umask(0);
    FILE *fp = tmpdir_file(f);
    umask(um);
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(mode_of(f), 0600);
    errno = 0;
    assert_null(tmpdir_file(f)); /* never an existing file */
    assert_int_equal(errno, EEXIST);
    setenv("TMPDIR", "/nonexistent-qosim", 1);
    assert_true(tmpdir_make("qosim-t", out, sizeof out, &e) < 0);
    assert_string_equal(e.msg, "cannot make a temporary folder in /nonexistent-qosim ($TMPDIR): "
                               "No such file or directory");
    unsetenv("TMPDIR");
    assert_int_equal(tmpdir_make("qosim-t", out, sizeof out, &e), 0);
    assert_int_equal(strncmp(out, "/tmp/qosim-t.", 13), 0);
    assert_int_equal(rmdir(out), 0);
    if (old)
        setenv("TMPDIR", old, 1);
    free(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_socket_mode_any_umask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_never_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folder_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_credentials, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tmpdir_follows_tmpdir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
