// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the selftest prog_tests/stream_consume.c of the rfc-drain series
 * (included below, unchanged) outside test_progs, as ../../vmtest/runner.c
 * does for stream_drop: with the few test_progs.h pieces it uses
 * (../../vmtest/test_progs.h), linked against the tree's own libbpf.
 *
 * Usage: runner            run the subtests; "N passed, N failed" at the end,
 *                          exit 0 only when all passed
 *        runner --hold N   load the program, write N messages "msg I\n"
 *                          to its stderr, print its id, then wait until
 *                          stdin closes (for a reader such as bpfstderr)
 */
#include "prog_tests/stream_consume.c"

int env_pass, env_fail;
const char *env_subtest = "stream_consume";

bool test__start_subtest(const char *name)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "stream_consume/%s", name);
	env_subtest = buf;
	printf("# subtest %s\n", buf);
	return true;
}

static int hold(int nr)
{
	struct stream_consume *skel;
	int prog_fd;
	__u32 id;
	char c;

	skel = stream_consume__open_and_load();
	if (!skel) {
		fprintf(stderr, "runner: cannot load stream_consume: %s\n", strerror(errno));
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.stream_write);
	id = prog_id(prog_fd);
	if (!id || write_msgs(skel, ERR, 0, nr, false)) {
		stream_consume__destroy(skel);
		return 1;
	}
	printf("held prog id %u name stream_write: %d writes, %d ok\n", id, nr, skel->bss->nr_ok);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	stream_consume__destroy(skel);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--hold"))
		return hold(atoi(argv[2]));
	if (argc != 1) {
		fprintf(stderr, "usage: runner [--hold N]\n");
		return 2;
	}
	test_stream_consume();
	printf("%d passed, %d failed\n", env_pass, env_fail);
	return env_fail ? 1 : !env_pass;
}
