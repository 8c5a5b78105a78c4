/* The qosim command's subcommands. Each returns the process exit status:
 * 0 success, 1 bad input data or a failed run, 2 bad usage. */
#ifndef QOSIM_CLI_H
#define QOSIM_CLI_H

int cli_cachesim(int argc, char **argv);
int cli_trace(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_profiles(int argc, char **argv);
int cli_regs(int argc, char **argv);
int cli_lwp(int argc, char **argv);
int cli_vm(int argc, char **argv);
int cli_sweep(int argc, char **argv);

/* "qosim SUB: " + message on stderr. */
void cli_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Value of "--name=VALUE" or "--name VALUE" at argv[*i]; NULL if argv[*i] is
 * not that option, or if its value is absent: then *missing is set to 1
 * (never reset: one flag serves a chain of calls). An empty value, or a next
 * argument that is itself an option ("--json --csv f"), is absent. */
const char *cli_optval(int argc, char **argv, int *i, const char *name, int *missing);

#endif
