/* util/ofile: output files never destroy what they name. Each test works in
 * a fresh directory under /tmp: a regular file is replaced whole through a
 * temporary, or not at all; "-" and the files standard output is open on
 * are written through that descriptor; a FIFO or a device is written
 * through, never replaced; a link is followed and stays a link; two outputs
 * naming one file, or an output naming an input, are refused; a signal
 * leaves no temporary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testlib.h"
#include "util/ofile.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];
static char pathbuf[4][PATH_MAX];

/* dir/NAME, in one of four rotating buffers. */
static const char *at(const char *name)
{
    static int k;
    k = (k + 1) % 4;
    snprintf(pathbuf[k], sizeof pathbuf[k], "%s/%s", dir, name);
    return pathbuf[k];
}

/* Entries of dir/sub ("" for dir itself), temporaries included. */
static int entries(const char *sub)
{
    return testlib_entries(*sub ? at(sub) : dir);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/qosim-ofile-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_one(const char *path, const char *text)
{
    struct ofile o;
    struct err e;
    assert_int_equal(ofile_open(&o, path, &e), 0);
    fputs(text, o.f);
    assert_int_equal(ofile_commit(&o, &e), 0);
}

static void test_new_file_appears_whole(void **state)
{
    (void)state;
    struct ofile o;
    struct err e;
    assert_int_equal(ofile_open(&o, at("a.json"), &e), 0);
    assert_int_equal(o.kind, OFILE_RENAME);
    fputs("{}\n", o.f);
    /* Until the commit, only the temporary exists, beside the file. */
    assert_int_equal(access(at("a.json"), F_OK), -1);
    assert_int_equal(entries(""), 1);
    assert_int_equal(strncmp(o.tmp, at("a.json.tmp."), strlen(at("a.json.tmp."))), 0);
    assert_int_equal(ofile_commit(&o, &e), 0);
    assert_string_equal(testlib_slurp(at("a.json")), "{}\n");
    assert_int_equal(entries(""), 1);
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(stat(at("a.json"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0666 & ~mask);
}

static void test_replaces_whole_keeps_mode(void **state)
{
    (void)state;
    testlib_put(at("f.csv"), "a much longer old content than the new one\n");
    chmod(at("f.csv"), 0640);
    write_one(at("f.csv"), "new\n");
    assert_string_equal(testlib_slurp(at("f.csv")), "new\n");
    struct stat st;
    assert_int_equal(stat(at("f.csv"), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(entries(""), 1);
}

static void test_abort_leaves_the_old_file(void **state)
{
    (void)state;
    testlib_put(at("f.csv"), "old\n");
    struct ofile o;
    struct err e;
    assert_int_equal(ofile_open(&o, at("f.csv"), &e), 0);
    fputs("new\n", o.f);
    ofile_abort(&o);
    ofile_abort(&o); /* twice is harmless */
    assert_string_equal(testlib_slurp(at("f.csv")), "old\n");
    assert_int_equal(entries(""), 1);
    struct ofile never = {0};
    ofile_abort(&never);
}

static void test_links_are_followed(void **state)
{
    (void)state;
    struct stat st;
    mkdir(at("sub"), 0755);
    testlib_put(at("sub/t.json"), "old\n");
    /* out.json -> mid -> sub/t.json, both relative to where the link is. */
    assert_int_equal(symlink("sub/t.json", at("mid")), 0);
    assert_int_equal(symlink("mid", at("out.json")), 0);
    write_one(at("out.json"), "new\n");
    assert_string_equal(testlib_slurp(at("sub/t.json")), "new\n");
    assert_int_equal(lstat(at("out.json"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(at("mid"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(entries("sub"), 1);
    /* A dangling link: its target is created, as the shell's '>' does. */
    assert_int_equal(symlink("sub/new.json", at("dangling")), 0);
    write_one(at("dangling"), "made\n");
    assert_string_equal(testlib_slurp(at("sub/new.json")), "made\n");
    assert_int_equal(lstat(at("dangling"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(entries("sub"), 2);
}

static void test_link_loop(void **state)
{
    (void)state;
    struct ofile o;
    struct err e;
    assert_int_equal(symlink("b", at("a")), 0);
    assert_int_equal(symlink("a", at("b")), 0);
    assert_int_equal(ofile_open(&o, at("a"), &e), -QOSIM_EIO);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s: cannot write: Too many levels of symbolic links", at("a"));
    assert_string_equal(e.msg, want);
    assert_int_equal(entries(""), 2);
}

static void test_fifo_written_through(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(at("p"), 0600), 0);
    int rd = open(at("p"), O_RDONLY | O_NONBLOCK); /* a reader, so opening to write does not wait */
    assert_true(rd >= 0);
    struct ofile o;
    struct err e;
    assert_int_equal(ofile_open(&o, at("p"), &e), 0);
    assert_int_equal(o.kind, OFILE_DIRECT);
    fputs("through\n", o.f);
    assert_int_equal(ofile_commit(&o, &e), 0);
    char buf[32] = {0};
    assert_int_equal(read(rd, buf, sizeof buf - 1), 8);
    assert_string_equal(buf, "through\n");
    close(rd);
    struct stat st;
    assert_int_equal(lstat(at("p"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(entries(""), 1);
}

/* Devices of the test's own, the same as /dev/null and /dev/full (made in
 * main, as root), so that an ofile that replaced what it names could not
 * take the machine's. */
static char devdir[64], devnull[96], devfull[96];
static int have_dev;

static void make_devices(void)
{
    snprintf(devdir, sizeof devdir, "/tmp/qosim-dev-XXXXXX");
    if (!mkdtemp(devdir))
        return;
    snprintf(devnull, sizeof devnull, "%s/null", devdir);
    snprintf(devfull, sizeof devfull, "%s/full", devdir);
    have_dev = !mknod(devnull, S_IFCHR | 0666, makedev(1, 3)) &&
               !mknod(devfull, S_IFCHR | 0666, makedev(1, 7));
}

static void drop_devices(void)
{
    unlink(devnull);
    unlink(devfull);
    rmdir(devdir);
}

static void test_devices(void **state)
{
    (void)state;
    struct ofile o;
    struct err e;
    struct stat st;
    if (!have_dev)
        skip(); /* mknod needs root */
    write_one(devnull, "gone\n");
    assert_int_equal(stat(devnull, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* More than the stream's buffer, so the error happens inside a write
     * and must still be reported with its reason at the commit. */
    assert_int_equal(ofile_open(&o, devfull, &e), 0);
    assert_int_equal(o.kind, OFILE_DIRECT);
    for (int i = 0; i < 10000; i++)
        fputs("0123456789", o.f);
    assert_int_equal(ofile_commit(&o, &e), -QOSIM_EIO);
    char want[160];
    snprintf(want, sizeof want, "%s: cannot write: No space left on device", devfull);
    assert_string_equal(e.msg, want);
    assert_null(o.f);
    assert_int_equal(stat(devfull, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_refused(void **state)
{
    (void)state;
    struct ofile o;
    struct err e;
    char want[PATH_MAX + 64];
    mkdir(at("d"), 0755);
    assert_int_equal(ofile_open(&o, at("d"), &e), -QOSIM_EIO);
    snprintf(want, sizeof want, "%s: is a directory", at("d"));
    assert_string_equal(e.msg, want);
    assert_int_equal(ofile_open(&o, at("none/x.json"), &e), -QOSIM_EIO);
    snprintf(want, sizeof want, "%s: cannot create: No such file or directory", at("none/x.json"));
    assert_string_equal(e.msg, want);
    assert_int_equal(ofile_open(&o, "", &e), -QOSIM_EINVAL);
    assert_string_equal(e.msg, "an empty output file name");
    assert_int_equal(entries(""), 1);
    /* Writing over a disk is never meant: a block device of our own. */
    if (mknod(at("blk"), S_IFBLK | 0600, makedev(7, 0)) == 0) {
        assert_int_equal(ofile_open(&o, at("blk"), &e), -QOSIM_EIO);
        assert_substr(e.msg, ": is a block device (an output is a file, a FIFO or a character "
                             "device)");
    }
}

/* Runs fn with standard output on dir/NAME, and gives it back. */
static void with_stdout(const char *name, void (*fn)(void))
{
    fflush(stdout);
    int saved = dup(1), fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 1);
    close(fd);
    fn();
    dup2(saved, 1);
    close(saved);
}

static int std_kinds[3], std_rc;

static void write_std(void)
{
    static const char *const names[3] = {"-", "/proc/self/fd/1", NULL};
    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/so", dir);
    symlink("/proc/self/fd/1", link); /* what /dev/stdout is on Linux */
    for (int i = 0; i < 3; i++) {
        struct ofile o;
        struct err e;
        std_rc |= ofile_open(&o, names[i] ? names[i] : link, &e);
        std_kinds[i] = o.kind * 10 + o.fd + ofile_is_stdout(&o) * 100;
        fprintf(o.f, "%d\n", i);
        std_rc |= ofile_commit(&o, &e);
    }
}

static void test_standard_output(void **state)
{
    (void)state;
    testlib_put(at("out"), "");
    with_stdout("out", write_std);
    assert_int_equal(std_rc, 0);
    /* Written through descriptor 1 every time, one after the other. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(std_kinds[i], 100 + OFILE_STDFD * 10 + 1);
    assert_string_equal(testlib_slurp(at("out")), "0\n1\n2\n");
    struct stat st;
    assert_int_equal(lstat(at("so"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(entries(""), 2);
}

static void test_commit_all_or_none(void **state)
{
    (void)state;
    struct ofile a, b, c = {0};
    struct err e;
    if (!have_dev)
        skip(); /* mknod needs root */
    testlib_put(at("a.json"), "old\n");
    assert_int_equal(ofile_open(&a, at("a.json"), &e), 0);
    assert_int_equal(ofile_open(&b, devfull, &e), 0);
    fputs("new\n", a.f);
    fputs("lost\n", b.f);
    struct ofile *const v[] = {&a, &c, &b};
    assert_int_equal(ofile_commit_all(v, 3, &e), -QOSIM_EIO);
    char want[160];
    snprintf(want, sizeof want, "%s: cannot write: No space left on device", devfull);
    assert_string_equal(e.msg, want);
    assert_string_equal(testlib_slurp(at("a.json")), "old\n");
    assert_int_equal(entries(""), 1);
    assert_null(a.f);
    assert_null(b.f);
    /* All well: all renamed. */
    assert_int_equal(ofile_open(&a, at("a.json"), &e), 0);
    assert_int_equal(ofile_open(&b, at("b.json"), &e), 0);
    fputs("A\n", a.f);
    fputs("B\n", b.f);
    assert_int_equal(ofile_commit_all(v, 3, &e), 0);
    assert_string_equal(testlib_slurp(at("a.json")), "A\n");
    assert_string_equal(testlib_slurp(at("b.json")), "B\n");
    assert_int_equal(entries(""), 2);
}

static void test_distinct(void **state)
{
    (void)state;
    struct err e;
    char want[3 * PATH_MAX];
    testlib_put(at("in.yaml"), "x\n");
    assert_int_equal(symlink("in.yaml", at("link")), 0);
    const char *rel = at("./new.json"), *plain = at("new.json");
    /* The same new file under two spellings. */
    struct ofile_name o1[] = {{"--json", plain}, {"--csv", NULL}, {"--plot", rel}};
    assert_int_equal(ofile_distinct(o1, 3, NULL, 0, &e), -QOSIM_EINVAL);
    snprintf(want, sizeof want, "--json %s and --plot %s name the same file", plain, rel);
    assert_string_equal(e.msg, want);
    /* Standard output twice, by name or as "-". */
    struct ofile_name o2[] = {{"--json", "-"}, {"--csv", "-"}};
    assert_int_equal(ofile_distinct(o2, 2, NULL, 0, &e), -QOSIM_EINVAL);
    assert_string_equal(e.msg, "--json - and --csv - both write to standard output");
    struct ofile_name o3[] = {{"--json", "-"}, {"--csv", "/proc/self/fd/1"}};
    assert_int_equal(ofile_distinct(o3, 2, NULL, 0, &e), -QOSIM_EINVAL);
    assert_string_equal(e.msg, "--json - and --csv /proc/self/fd/1 name the same file");
    /* An input, reached through a link. */
    const char *link = at("link"), *in = at("in.yaml");
    struct ofile_name o4[] = {{"--raw", plain}, {"--json", link}};
    struct ofile_name i4[] = {{"the trace", NULL}, {"the scenario", in}};
    assert_int_equal(ofile_distinct(o4, 2, i4, 2, &e), -QOSIM_EINVAL);
    snprintf(want, sizeof want, "--json %s would overwrite the scenario %s", link, in);
    assert_string_equal(e.msg, want);
    /* Different files; a device twice as input and output is no clash. */
    struct ofile_name o5[] = {{"--json", plain}, {"--csv", at("other.csv")}, {"-o", "/dev/null"}};
    struct ofile_name i5[] = {{"the scenario", in}, {"the trace", "/dev/null"}};
    assert_int_equal(ofile_distinct(o5, 3, i5, 2, &e), 0);
}

static void test_unlink_pending(void **state)
{
    (void)state;
    struct ofile a, b;
    struct err e;
    assert_int_equal(ofile_open(&a, at("a"), &e), 0);
    assert_int_equal(ofile_open(&b, at("b"), &e), 0);
    assert_int_equal(entries(""), 2);
    ofile_unlink_pending();
    assert_int_equal(entries(""), 0);
    ofile_abort(&a);
    ofile_abort(&b);
}

static void hook(int sig)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/hook-%d", dir, sig);
    close(open(p, O_WRONLY | O_CREAT, 0644));
}

/* A child that opens an output, traps signals and is sent sig; its status. */
static int signalled(int sig, int ignore)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct ofile o;
        struct err e;
        /* As a program started from a terminal: a test runner's background
         * job starts with SIGINT ignored, which ofile keeps (nohup). */
        signal(sig, ignore ? SIG_IGN : SIG_DFL);
        ofile_trap_signals(hook);
        if (ofile_open(&o, at("x.json"), &e))
            _exit(3);
        fputs("partial", o.f);
        raise(sig);
        _exit(7); /* the signal was ignored */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void test_signals_leave_nothing(void **state)
{
    (void)state;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (int i = 0; i < 4; i++) {
        int st = signalled(sigs[i], 0);
        assert_true(WIFSIGNALED(st));
        assert_int_equal(WTERMSIG(st), sigs[i]);
        /* Only the hook's mark: no temporary, no output. */
        assert_int_equal(entries(""), 1);
        char name[32];
        snprintf(name, sizeof name, "hook-%d", sigs[i]);
        assert_int_equal(access(at(name), F_OK), 0);
        unlink(at(name));
    }
    /* Ignored at start (nohup): stays ignored, the process goes on. */
    int st = signalled(SIGHUP, 1);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_file_appears_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaces_whole_keeps_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_leaves_the_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_are_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_written_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_standard_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_all_or_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_distinct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unlink_pending, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signals_leave_nothing, setup, teardown),
    };
    make_devices();
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    drop_devices();
    return failed;
}
