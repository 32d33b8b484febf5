// SPDX-License-Identifier: GPL-2.0
/* bpfstderr: what loaded BPF programs write to their stdout/stderr streams. */
#include <argp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "main.h"
#include "output.h"

#ifndef BPFSTDERR_VERSION
#define BPFSTDERR_VERSION "0.1"
#endif

const char *argp_program_version = "bpfstderr " BPFSTDERR_VERSION;
const char *argp_program_bug_address = NULL;

static const struct cmd cmds[] = {
	{ "top",	do_top,		"every program's stream activity, live (ncurses)" },
	{ "list",	do_list,	"list loaded programs and their stream accounting" },
	{ "follow",	do_follow,	"print what programs write, as they write it" },
	{ "report",	do_report,	"group the faults in the journal (or in saved dumps)" },
	{ "record",	do_record,	"drain every program into the journal, until stopped" },
	{ "doctor",	do_doctor,	"report what this kernel and host support" },
	{ NULL },
};

static void usage(FILE *f)
{
	const struct cmd *c;

	fprintf(f, "Usage: %s COMMAND [OPTIONS]\n"
		   "       %s { --help | --version }\n\n"
		   "Show what loaded BPF programs write to their stdout/stderr streams,\n"
		   "above all the faults the kernel reports there.\n\nCommands:\n",
		bin_name, bin_name);
	for (c = cmds; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n\n"
		   "Exit status:\n"
		   "  0  success (report: no faults, nothing lost)\n"
		   "  1  report: faults found, or bytes lost from a program's stderr\n"
		   "  2  unknown command or option, bad argument\n"
		   "  3  permission: a needed capability is missing (CAP_SYS_ADMIN), or the\n"
		   "     kernel refused a BPF call although it is held (the message says which)\n"
		   "  4  the kernel lacks BTF or BPF streams\n"
		   "  5  any other error, among them a journal refused or not writable, a\n"
		   "     metrics address that cannot be listened on, or standard output\n"
		   "     that cannot be written (| head is not one)\n"
		   "  6  a program given on the command line does not exist\n",
		bin_name);
}

/* Quiet unless asked: libbpf's warnings are for developers of BPF objects,
 * not for users of this tool; failures are reported by us, once.
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !getenv("BPFSTDERR_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Output that never arrived is a failure whatever the command thought
 * (list >/dev/full must not exit 0), said once with the real errno. At
 * exit, so that argp's --help, which exits by itself, is checked too.
 * EPIPE is a reader that went away (| head): not an error.
 */
static void close_stdout(void)
{
	int err = output_flush(stdout);

	if (!err && fclose(stdout))
		err = errno ? -errno : -EIO;
	if (!err || err == -EPIPE)
		return;
	/* not p_err(): it flushes stdout, which may be closed now */
	fprintf(stderr, "%s: cannot write to standard output: %s\n", bin_name, strerror(-err));
	_exit(EXIT_ERROR);
}

static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *c;

	for (c = cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	char prog_name[64];

	argp_err_exit_status = EXIT_USAGE;
	output_keep_stdout_errno();
	atexit(close_stdout);
	libbpf_set_print(libbpf_print);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("%s\n", argp_program_version);
		return EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		p_err("unknown command '%s'", argv[1]);
		fprintf(stderr, "Usage: %s COMMAND [OPTIONS]; see '%s --help'\n", bin_name, bin_name);
		return EXIT_USAGE;
	}
	/* argp names the command in its messages: "bpfstderr doctor: ..." */
	snprintf(prog_name, sizeof(prog_name), "%s %s", bin_name, c->name);
	argv[1] = prog_name;
	return c->func(argc - 1, argv + 1);
}
