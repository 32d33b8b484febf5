/* SPDX-License-Identifier: GPL-2.0 */
/* What every command shares: exit codes, error reporting, the command table. */
#ifndef BPFSTDERR_MAIN_H
#define BPFSTDERR_MAIN_H

#include <stdbool.h>
#include <linux/types.h>

/* Exit codes, documented in --help and bpfstderr(8). */
enum {
	EXIT_OK		= 0,	/* success; report: no faults */
	EXIT_FAULTS	= 1,	/* report: faults found */
	EXIT_USAGE	= 2,	/* unknown command or option, bad argument */
	EXIT_NOPERM	= 3,	/* a needed capability is missing */
	EXIT_NOSUPPORT	= 4,	/* this kernel has no BPF streams */
	EXIT_ERROR	= 5,	/* any other run-time error */
	EXIT_NOPROG	= 6,	/* a program named on the command line does not exist */
};

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *summary;
};

extern const char *bin_name;

/* One line on stderr, prefixed "bpfstderr: ". */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Maps a failed BPF call (bpf(2) through libbpf) to the right exit code
 * and one line; a refusal says whether a capability is missing.
 */
int exit_for_errno(int err, const char *what);

enum stream_backend;
/* What every command that reads streams checks first: CAP_SYS_ADMIN and a
 * kernel with streams. EXIT_OK, or the exit code after one line on stderr.
 */
int require_streams(const char *what, enum stream_backend *backend);
/* A program id as given on the command line; -EINVAL if it is not one. */
int parse_prog_id(const char *s, __u32 *out);

/* Every poll or refresh interval (follow, record, top -d) has one range:
 * below it a command spins, above it it looks hung.
 */
#define INTERVAL_MIN	0.01
#define INTERVAL_MAX	3600.0
#define INTERVAL_RANGE	"seconds, 0.01 to 3600"
/* An interval in seconds within that range; -EINVAL if it is not a plain
 * decimal number (NaN and infinities are not), -ERANGE if out of range.
 */
int parse_interval(const char *s, double *secs);

int do_list(int argc, char **argv);
int do_doctor(int argc, char **argv);
int do_follow(int argc, char **argv);
int do_report(int argc, char **argv);
int do_top(int argc, char **argv);
int do_record(int argc, char **argv);

#endif
