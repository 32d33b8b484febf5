// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the selftest prog_tests/stream_consume.c of the rfc-drain series
 * (included below, unchanged) outside test_progs, as ../../vmtest/runner.c
 * does for stream_drop: with the few test_progs.h pieces it uses
 * (../../vmtest/test_progs.h), linked against the tree's own libbpf;
 * main() is ../../vmtest/runner.h's.
 *
 * runner --hold N writes N messages "msg I\n" to the program's stderr.
 */
#define RUNNER_TEST stream_consume
#include "prog_tests/stream_consume.c"
#include "runner.h"

static int hold(int nr)
{
	struct stream_consume *skel;
	int prog_fd;
	__u32 id;

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
	wait_stdin();
	stream_consume__destroy(skel);
	return 0;
}
