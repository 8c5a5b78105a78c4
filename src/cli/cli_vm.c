/* qosim vm: boots a Linux guest in QEMU's x86 system emulator whose CPUID,
 * QoS MSRs, caches and memory are a profile's model (docs/vm.md). This is
 * the launcher: it checks what it is given, builds QEMU's command line from
 * the profile's topology, hands QEMU the terminal, and ends with the
 * guest's exit status. The model itself runs inside QEMU, in the qosim-vm
 * plugin (qemu/plugin/qosim-vm.c). */
#include "cli.h"

#include "hw/x86.h"
#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "util/conf.h"
#include "util/path.h"
#include "util/tmpdir.h"
#include "util/usock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
    "usage: qosim vm [--platform NAME|FILE] [--cpus N] [--memory SIZE] [--slow-memory SIZE]\n"
    "                [--kernel FILE] [--initrd FILE] [--append 'KERNEL ARGS'] [--cmd 'SHELL "
    "COMMAND']\n"
    "                [--report FILE] [--console SOCKET] [--pace K] [--verbose] [--print-cmd]\n"
    "                [--from-boot|--from-mark] [--no-model]\n"
    "  Boots Linux in QEMU on a simulated platform (default intel-xeon): the guest's\n"
    "  CPUID, QoS MSRs, caches and memory are qosim's model of it.\n"
    "  --cpus N       vCPUs: the profile's first N logical CPUs (default: those of\n"
    "                 its first L3 domain, at most 4)\n"
    "  --memory SIZE  guest RAM (default 1G, at most 2G)\n"
    "  --slow-memory SIZE\n"
    "                 on a profile with slow memory: the guest's second NUMA node, CPU-less,\n"
    "                 is the profile's first slow node (default 256M; 0: none; --memory\n"
    "                 and this together at most 2G)\n"
    "  --kernel FILE  the kernel to boot (default: Debian's, from 'make vm')\n"
    "  --initrd FILE  the initramfs (default: qosim's, from 'make vm')\n"
    "  --append ARGS  more kernel command-line arguments\n"
    "  --cmd CMD      run CMD in the guest's shell, then power off; the exit status is\n"
    "                 the command's (without: an interactive shell; Ctrl-A x quits QEMU)\n"
    "  --report FILE  at the end, the model's ground truth as JSON: per vCPU, per RMID\n"
    "  --console SOCK a Unix socket where 'qosim regs --attach SOCK' drives this guest's\n"
    "                 model while it runs (removed at the end)\n"
    "  --pace K       hold the guest back K host ns per simulated ns its requests wait\n"
    "                 at a bandwidth limit, so the guest's clock sees it (default 10)\n"
    "  --from-boot    simulate the firmware and the kernel's boot too (default: the\n"
    "                 caches and memory start at the guest's first user-space\n"
    "                 instruction; CPUID and the QoS MSRs are the model's throughout)\n"
    "  --from-mark    simulate from where the guest says: its caches and memory start\n"
    "                 at its first 'qosim-guest sim on' (QOSIM_SIM_CTL); 'sim off'\n"
    "                 skips again, in any mode\n"
    "  --verbose      show the firmware and kernel messages with --cmd\n"
    "  --print-cmd    print QEMU's command line and exit\n"
    "  --no-model     QEMU alone, without the model (stock CPUID, no caches): for\n"
    "                 comparisons\n";

#define VM_MAX_MEM (2ull << 30) /* guest RAM stays below the PCI hole */
/* The slow node's default size: room for a few streams of tens of MiB
 * besides what Linux keeps there for the node's own page structures
 * (project choice). */
#define VM_SLOW_MEM (256ull << 20)
/* Default pacing: a limiter's wait shows in the guest's clock ten times
 * over, about what the model's unthrottled speed makes it look like to the
 * guest (docs/vm.md, "Time"). */
#define VM_PACE "10"
/* Kernel arguments after the console's: three things a TCG boot spends
 * most of its instructions on, none of which the model is for: the crypto
 * API's self-tests, the W+X page-table walks of rodata (twice over with
 * page-table isolation), and the speculation mitigations' entry paths,
 * which also flush QEMU's software TLB on every kernel entry. Off, a boot
 * on the model takes about 40% less (docs/vm.md, "The kernel's command
 * line"); --append comes after them and turns any back on, since the
 * kernel takes the last of two settings. */
#define VM_KERNEL_ARGS "cryptomgr.notests rodata=off mitigations=off"

struct vm_opts {
    const char *plat, *kernel, *initrd, *append, *cmd, *report, *pace, *console, *slow_arg;
    const char *from; /* the plugin's from=: "boot", "mark", or NULL (user) */
    uint64_t cpus, mem, slow;
    int verbose, print, nomodel;
};

/* Where `make vm` put QEMU, the plugin, the kernel and the initramfs:
 * $QOSIM_VM_DIR, or vm/ beside the qosim binary or one folder up (the
 * sanitizer build's binary is in build/san/). */
static int vm_dir(char *out, size_t cap)
{
    const char *env = getenv("QOSIM_VM_DIR");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return 0;
    }
    static const char *const rel[] = {"vm", "../vm"};
    for (size_t i = 0; i < 2; i++) {
        char q[4200];
        if (path_beside_exe(rel[i], out, cap))
            return -1;
        snprintf(q, sizeof q, "%s/qemu-system-x86_64", out);
        if (!access(q, X_OK))
            return 0;
    }
    return -1;
}

/* A file the guest needs: given, or the default in the vm folder. */
static int need(const char *given, const char *dir, const char *name, int exec, char *out,
                size_t cap)
{
    if (given)
        snprintf(out, cap, "%s", given);
    else
        snprintf(out, cap, "%s/%s", dir, name);
    struct stat st;
    if (stat(out, &st) || !S_ISREG(st.st_mode) || access(out, exec ? X_OK : R_OK)) {
        if (given)
            cli_error("vm", "%s: %s", given, errno ? strerror(errno) : "not a regular file");
        else
            cli_error("vm", "%s is missing: run 'make vm' first (docs/vm.md)", out);
        return -1;
    }
    return 0;
}

/* Where the plugin writes --report, at the end, through a temporary
 * beside it and a rename: an existing file's real path, so that a link
 * stays a link; its folder must be there and writable now, not found
 * missing after the guest has run. */
static int vm_report_path(const char *given, char *out, size_t cap)
{
    struct stat st;
    if (!strcmp(given, "-") || (!stat(given, &st) && !S_ISREG(st.st_mode))) {
        cli_error("vm", "--report %s: not a regular file (the plugin writes it when QEMU ends)",
                  given);
        return -1;
    }
    if (!realpath(given, out)) {
        snprintf(out, cap, "%s", given);
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", given);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        if (access(slash ? dir : ".", W_OK)) {
            cli_error("vm", "--report %s: cannot write in %s: %s", given, slash ? dir : ".",
                      strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The newc cpio entry of one file or directory, 4-byte aligned. */
static int cpio_entry(FILE *f, const char *name, unsigned mode, const char *data, size_t len)
{
    size_t nl = strlen(name) + 1;
    static unsigned ino = 1;
    fprintf(f, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08zX%08X", ino++, mode, 0, 0, 1,
            0, (unsigned)len, 0, 0, 0, 0, nl, 0);
    fwrite(name, 1, nl, f);
    for (size_t k = (110 + nl) % 4; k && k < 4; k++)
        fputc(0, f);
    fwrite(data, 1, len, f);
    for (size_t k = len % 4; k && k < 4; k++)
        fputc(0, f);
    return ferror(f) ? -1 : 0;
}

/* The initramfs with the command appended: the kernel unpacks archives
 * one after another, the base one (compressed) then a plain cpio holding
 * /qosim/cmd, which the init runs. The kernel looks for an archive's
 * header on a 4-byte boundary and skips the zeros before it. */
static int with_cmd(const char *base, const char *cmd, const char *out)
{
    FILE *in = fopen(base, "rb"), *f = in ? tmpdir_file(out) : NULL;
    int rc = in && f ? 0 : -1;
    char buf[65536];
    size_t n, total = 0;
    while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        rc = fwrite(buf, 1, n, f) == n ? 0 : -1;
        total += n;
    }
    if (!rc && ferror(in))
        rc = -1;
    for (; !rc && total % 4; total++)
        fputc(0, f);
    if (!rc)
        rc = cpio_entry(f, "qosim", 040755, "", 0) ||
             cpio_entry(f, "qosim/cmd", 0100644, cmd, strlen(cmd)) ||
             cpio_entry(f, "TRAILER!!!", 0, "", 0);
    if (in)
        fclose(in);
    if (f && fclose(f))
        rc = -1;
    return rc;
}

static volatile sig_atomic_t got_sig;
static void on_sig(int s)
{
    got_sig = s;
}

/* Waits for QEMU to end, keeping the last n - 1 bytes the guest wrote on
 * ttyS1 (its status line comes last) in said and throwing the rest away as
 * it comes: a guest that writes there without end fills neither a disk nor
 * this process. A signal to this process is passed on to QEMU. QEMU's wait
 * status, or -1. */
static int wait_qemu(pid_t pid, int sfd, char *said, size_t n)
{
    size_t got = 0;
    int ws = -1, ended = 0, passed = 0;
    for (;;) {
        char buf[4096];
        ssize_t r;
        while ((r = read(sfd, buf, sizeof buf)) > 0) {
            size_t k = (size_t)r < n - 1 ? (size_t)r : n - 1,
                   drop = got + k > n - 1 ? got + k - (n - 1) : 0;
            memmove(said, said + drop, got - drop);
            memcpy(said + got - drop, buf + (size_t)r - k, k);
            got += k - drop;
        }
        if (ended)
            break; /* drained after QEMU ended */
        pid_t w = waitpid(pid, &ws, WNOHANG);
        if (w < 0 && errno != EINTR) {
            ws = -1;
            break;
        }
        if (w == pid) {
            ended = 1; /* one more read, for what QEMU wrote last */
            continue;
        }
        if (got_sig && !passed++) /* QEMU got it too, from the terminal, or not: make sure */
            kill(pid, SIGTERM);
        struct pollfd p = {.fd = sfd, .events = POLLIN};
        poll(&p, 1, 100);
    }
    for (size_t i = 0; i < got; i++) /* one string, whatever the guest wrote */
        said[i] = said[i] ? said[i] : ' ';
    said[got] = '\0';
    return ws;
}

/* Removes the run's temporary folder. */
static void cleanup(const char *tmp)
{
    static const char *const files[] = {"initrd", "status"};
    char p[4200];
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/%s", tmp, files[i]);
        unlink(p);
    }
    rmdir(tmp);
}

static int parse(int argc, char **argv, struct vm_opts *o)
{
    const char *cpus = NULL, *mem = NULL;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 1;
        } else if (!strcmp(argv[i], "--verbose"))
            o->verbose = 1;
        else if (!strcmp(argv[i], "--print-cmd"))
            o->print = 1;
        else if (!strcmp(argv[i], "--no-model"))
            o->nomodel = 1;
        else if (!strcmp(argv[i], "--from-boot") || !strcmp(argv[i], "--from-mark")) {
            const char *w = argv[i] + 7;
            if (o->from && strcmp(o->from, w)) {
                cli_error("vm", "--from-boot and --from-mark: simulation starts at one of them");
                return 2;
            }
            o->from = w;
        } else if ((v = cli_optval(argc, argv, &i, "--platform", &missing)))
            o->plat = v;
        else if ((v = cli_optval(argc, argv, &i, "--kernel", &missing)))
            o->kernel = v;
        else if ((v = cli_optval(argc, argv, &i, "--initrd", &missing)))
            o->initrd = v;
        else if ((v = cli_optval(argc, argv, &i, "--append", &missing)))
            o->append = v;
        else if ((v = cli_optval(argc, argv, &i, "--cmd", &missing)))
            o->cmd = v;
        else if ((v = cli_optval(argc, argv, &i, "--report", &missing)))
            o->report = v;
        else if ((v = cli_optval(argc, argv, &i, "--console", &missing)))
            o->console = v;
        else if ((v = cli_optval(argc, argv, &i, "--pace", &missing)))
            o->pace = v;
        else if ((v = cli_optval(argc, argv, &i, "--cpus", &missing)))
            cpus = v;
        else if ((v = cli_optval(argc, argv, &i, "--memory", &missing)))
            mem = v;
        else if ((v = cli_optval(argc, argv, &i, "--slow-memory", &missing)))
            o->slow_arg = v;
        else if (missing) {
            cli_error("vm", "%.*s needs a value", (int)strcspn(argv[i], "="), argv[i]);
            return 2;
        } else {
            cli_error("vm", "unknown argument '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    if (o->nomodel && (o->report || o->pace || o->console || o->from)) {
        cli_error("vm", "--no-model runs no model: --report, --pace, --console, --from-boot and "
                        "--from-mark need one");
        return 2;
    }
    if (cpus && (conf_parse_u64(cpus, &o->cpus) || !o->cpus)) {
        cli_error("vm", "--cpus %s: not a whole number >= 1", cpus);
        return 2;
    }
    o->mem = 1ull << 30;
    if (mem && (conf_parse_size(mem, &o->mem) || o->mem < (64ull << 20) || o->mem > VM_MAX_MEM)) {
        cli_error("vm",
                  "--memory %s: a size from 64M to 2G (the guest's RAM must stay below "
                  "the PCI hole)",
                  mem);
        return 2;
    }
    /* Whole MiB, which QEMU's -m is given in; 0 or at least --memory's
     * least. */
    if (o->slow_arg && (conf_parse_size(o->slow_arg, &o->slow) || o->slow % (1ull << 20) ||
                        (o->slow && o->slow < (64ull << 20)) || o->slow > VM_MAX_MEM - o->mem)) {
        cli_error("vm",
                  "--slow-memory %s: 0, or whole MiB from 64M; with --memory at most 2G "
                  "together (the guest's RAM must stay below the PCI hole)",
                  o->slow_arg);
        return 2;
    }
    if (o->pace) {
        char *end;
        double k = strtod(o->pace, &end);
        if (*end || !(k >= 0) || k > 1e6) {
            cli_error("vm", "--pace %s: a number from 0 to 1000000", o->pace);
            return 2;
        }
    }
    return 0;
}

/* The profile's topology as QEMU's -smp: an L3 domain is a die, the
 * cores of a domain are a die's cores (x86_apic_id uses the same layout). */
static int smp_arg(const struct plat *p, unsigned cpus, char *out, size_t cap)
{
    const struct plat_topo *t = &p->topo;
    return snprintf(out, cap, "cpus=%u,maxcpus=%u,sockets=%u,dies=%u,cores=%u,threads=%u", cpus,
                    p->ncpus, t->sockets, t->nodes * t->domains, t->modules * t->cores,
                    t->threads) >= (int)cap;
}

int cli_vm(int argc, char **argv)
{
    struct vm_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    struct err e = {0};
    static struct plat p;
    if (plat_load(&p, o.plat ? o.plat : "intel-xeon", &e)) {
        cli_error("vm", "%s", e.msg);
        return 2;
    }
    /* QEMU splits a plugin's arguments at commas. */
    const char *paths[] = {o.plat, o.report, o.console};
    for (size_t i = 0; i < 3; i++)
        if (paths[i] && strchr(paths[i], ',')) {
            cli_error("vm", "%s: QEMU cannot pass a path with a comma to its plugin", paths[i]);
            return 2;
        }
    struct stat cst;
    if (o.console && !lstat(o.console, &cst)) {
        cli_error("vm",
                  "--console %s: it exists; the console's socket is made there, and "
                  "nothing is replaced",
                  o.console);
        return 2;
    }
    /* The console's socket is the model's to make (mode 0600, whatever the
     * umask) and to remove: a folder where another user could swap it for
     * theirs is refused before the boot, rather than by the plugin after
     * QEMU has started. */
    if (o.console && usock_folder_safe(o.console, &e)) {
        cli_error("vm", "--console %s", e.msg);
        return 2;
    }
    if (p.vendor == PLAT_RISCV) {
        cli_error("vm", "%s is a RISC-V platform: qosim vm boots x86 guests", p.name);
        return 2;
    }
    if (p.topo.cores > 1 && (p.topo.cores & (p.topo.cores - 1))) {
        cli_error("vm",
                  "%s: %u cores per module: the guest's CPUID can describe a shared L2 "
                  "only for a power of two",
                  p.name, p.topo.cores);
        return 2;
    }
    /* Slow memory: the guest's node 1, as a CXL memory expander is, when
     * the profile has some (docs/vm.md, "Slow memory"). */
    if (o.slow_arg && !p.nslow) {
        cli_error("vm", "--slow-memory: %s has no slow memory (memory.slow in its profile)",
                  p.name);
        return 2;
    }
    if (!o.slow_arg && p.nslow)
        o.slow = o.mem + VM_SLOW_MEM <= VM_MAX_MEM ? VM_SLOW_MEM : VM_MAX_MEM - o.mem;
    unsigned per_domain = p.ncpus / p.ndomains;
    if (!o.cpus)
        o.cpus = per_domain < 4 ? per_domain : 4;
    if (o.cpus > p.ncpus) {
        cli_error("vm", "--cpus %llu: %s has %u logical CPUs", (unsigned long long)o.cpus, p.name,
                  p.ncpus);
        return 2;
    }
    /* The guest's limits (CPUID leaves 0 and 80000000h) are the model's,
     * so QEMU must not cap the leaves below them. */
    struct mach m;
    struct x86 x;
    uint32_t l0[4], l8[4];
    if (mach_init(&m, &p, 0, &e) || x86_init(&x, &m, &e)) {
        cli_error("vm", "%s", e.msg);
        return 2;
    }
    x86_cpuid(&x, 0, 0, 0, l0);
    x86_cpuid(&x, 0, 0x80000000, 0, l8);
    int amd = x.amd;
    x86_free(&x);
    mach_free(&m);

    char dir[4096], qemu[4200], plugin[4200], kernel[4200], initrd[4200];
    if (vm_dir(dir, sizeof dir)) {
        cli_error("vm", "QEMU with qosim's hooks is not built: run 'make vm' (docs/vm.md)");
        return 2;
    }
    if (need(NULL, dir, "qemu-system-x86_64", 1, qemu, sizeof qemu) ||
        need(getenv("QOSIM_VM_PLUGIN"), dir, "qosim-vm.so", 0, plugin, sizeof plugin) ||
        need(o.kernel, dir, "kernel/vmlinux", 0, kernel, sizeof kernel) ||
        need(o.initrd, dir, "initramfs.cpio.gz", 0, initrd, sizeof initrd))
        return 2;
    static char report[4096];
    if (o.report && vm_report_path(o.report, report, sizeof report))
        return 2;
    if (o.report)
        o.report = report;

    /* The run's own files: the initramfs with --cmd's command, and ttyS1's
     * status, a FIFO this process drains (wait_qemu). */
    char tmp[4096] = "";
    if (!o.print && tmpdir_make("qosim-vm", tmp, sizeof tmp, &e)) {
        cli_error("vm", "%s", e.msg);
        return 2;
    }
    char cpio[4200], status[4200];
    snprintf(cpio, sizeof cpio, "%s/initrd", tmp);
    snprintf(status, sizeof status, "%s/status", tmp);
    int sfd = -1;
    if (!o.print && (mkfifo(status, 0600) || chmod(status, 0600) ||
                     (sfd = open(status, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)) {
        cli_error("vm", "cannot make %s: %s", status, strerror(errno));
        cleanup(tmp);
        return 2;
    }
    if (o.cmd && !o.print && with_cmd(initrd, o.cmd, cpio)) {
        cli_error("vm", "cannot write %s: %s", cpio, strerror(errno));
        cleanup(tmp);
        return 2;
    }

    char cpu[256], smp[256], memarg[64], append[4096], plug[8400], serial2[4300];
    char ram0[128], ram1[128], numa0[128], numa1[128], slowarg[64] = "";
    /* QEMU's own idea of the CPU agrees with what the model answers, for
     * the few places QEMU acts on the vendor or family itself. */
    snprintf(cpu, sizeof cpu,
             "max,vendor=%s,family=%u,model=%u,stepping=%u,level=%u,xlevel=0x%x,model-id=qosim %s",
             amd ? "AuthenticAMD" : "GenuineIntel", p.core.family, p.core.model, p.core.stepping,
             l0[0], l8[0], p.name);
    if (smp_arg(&p, (unsigned)o.cpus, smp, sizeof smp)) {
        cli_error("vm", "topology too large");
        return 2;
    }
    snprintf(memarg, sizeof memarg, "%lluM", (unsigned long long)((o.mem + o.slow) >> 20));
    /* Two NUMA nodes, each on a RAM backend of its own: QEMU lays them out
     * one after the other from guest-physical 0, node 0's first
     * (hw/core/numa.c, numa_init_memdev_container), and its ACPI SRAT
     * tells the guest so. Node 0 has every CPU, node 1 none. */
    snprintf(ram0, sizeof ram0, "memory-backend-ram,id=qosim-ram0,size=%lluM",
             (unsigned long long)(o.mem >> 20));
    snprintf(ram1, sizeof ram1, "memory-backend-ram,id=qosim-ram1,size=%lluM",
             (unsigned long long)(o.slow >> 20));
    snprintf(numa0, sizeof numa0, "node,nodeid=0,cpus=0-%u,memdev=qosim-ram0", p.ncpus - 1);
    snprintf(numa1, sizeof numa1, "node,nodeid=1,memdev=qosim-ram1");
    if (o.slow)
        snprintf(slowarg, sizeof slowarg, ",slow=%llu", (unsigned long long)o.slow);
    snprintf(append, sizeof append, "console=ttyS0 panic=-1%s %s%s%s",
             o.cmd && !o.verbose ? " quiet" : "", VM_KERNEL_ARGS, o.append ? " " : "",
             o.append ? o.append : "");
    snprintf(plug, sizeof plug, "%s,profile=%s,pace=%s,from=%s%s%s%s%s%s", plugin,
             o.plat ? o.plat : "intel-xeon", o.pace ? o.pace : VM_PACE, o.from ? o.from : "user",
             o.report ? ",report=" : "", o.report ? o.report : "", o.console ? ",console=" : "",
             o.console ? o.console : "", slowarg);
    snprintf(serial2, sizeof serial2, "file:%s", status);
    const char *args[64];
    int n = 0;
#define A(s) (args[n++] = (s))
    A(qemu);
    A("-M");
    A("pc");
    A("-accel");
    A("tcg,thread=single"); /* one thread enters the model */
    A("-cpu");
    A(cpu);
    A("-smp");
    A(smp);
    A("-m");
    A(memarg);
    if (o.slow) {
        A("-object");
        A(ram0);
        A("-object");
        A(ram1);
        A("-numa");
        A(numa0);
        A("-numa");
        A(numa1);
    }
    A("-bios");
    A("qboot.rom"); /* QEMU's minimal firmware: boots -kernel at once, prints nothing */
    A("-L");
    A("/usr/share/qemu");
    A("-display");
    A("none");
    A("-vga");
    A("none");
    A("-nic");
    A("none");
    A("-no-reboot");
    A("-serial");
    A(o.cmd ? "stdio" : "mon:stdio");
    A("-serial"); /* ttyS1: the guest writes its exit status here */
    A(serial2);
    if (o.cmd) {
        A("-monitor");
        A("none");
    }
    A("-kernel");
    A(kernel);
    A("-initrd");
    A(o.cmd ? cpio : initrd);
    A("-append");
    A(append);
    if (!o.nomodel) {
        A("-plugin");
        A(plug);
    }
    A(NULL);
#undef A
    if (o.print) {
        for (int i = 0; args[i]; i++)
            printf("%s%s", i ? " " : "", args[i]);
        printf("\n");
        return 0;
    }

    struct sigaction sa = {0};
    sa.sa_handler = on_sig;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        /* QEMU ends with its launcher, even one killed with SIGKILL, so no
         * model outlives the command that owns its console and its files. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execv(qemu, (char *const *)args);
        fprintf(stderr, "qosim vm: cannot run %s: %s\n", qemu, strerror(errno));
        _exit(127);
    }
    if (pid < 0) {
        cli_error("vm", "cannot start QEMU: %s", strerror(errno));
        cleanup(tmp);
        return 2;
    }
    char said[256];
    int ws = wait_qemu(pid, sfd, said, sizeof said);
    close(sfd);
    /* The status the guest's init wrote to ttyS1. */
    int gs = -1;
    const char *last = NULL;
    for (const char *s = said; (s = strstr(s, "qosim-status ")); s++)
        last = s;
    if (!last || sscanf(last, "qosim-status %d", &gs) != 1)
        gs = -1;
    cleanup(tmp);
    /* The plugin removes its socket when QEMU ends; after a crash or a
     * SIGKILL of QEMU it is still there. Only a socket of ours goes: the
     * folder is one no other user can write to (usock_folder_safe). */
    if (o.console && !lstat(o.console, &cst) && S_ISSOCK(cst.st_mode) && cst.st_uid == geteuid())
        unlink(o.console);
    if (got_sig) {
        cli_error("vm", "stopped by signal %d", (int)got_sig);
        return 128 + got_sig;
    }
    if (ws == -1 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        if (WIFSIGNALED(ws))
            cli_error("vm", "QEMU was killed by signal %d", WTERMSIG(ws));
        else
            cli_error("vm", "QEMU failed (exit status %d)", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
        return 2;
    }
    if (gs < 0) {
        if (o.cmd || o.initrd == NULL)
            cli_error("vm", "the guest stopped without an exit status (a kernel panic? run "
                            "again with --verbose)");
        return o.cmd ? 125 : 0;
    }
    return gs;
}
