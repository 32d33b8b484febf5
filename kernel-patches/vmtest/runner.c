// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the selftest prog_tests/stream_drop.c (included below, unchanged)
 * outside test_progs: test_progs links every selftest of the tree and
 * needs the whole tools/testing/selftests/bpf build (bpftool, resolve_btfids,
 * hundreds of BPF objects, a clang as new as the tree wants), which takes
 * longer than this lab has on two shared cores. This runner gives the
 * test the few test_progs.h pieces it uses (./test_progs.h) and links
 * against the tree's own libbpf; main() is ./runner.h's.
 *
 * runner --hold N writes N messages of "%2000d" to the program's stderr.
 */
#define RUNNER_TEST stream_drop
#include "prog_tests/stream_drop.c"
#include "runner.h"

static int hold(int nr)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct stream_drop *skel;
	int prog_fd;
	char c;

	skel = stream_drop__open_and_load();
	if (!skel) {
		fprintf(stderr, "runner: cannot load stream_drop: %s\n", strerror(errno));
		return 1;
	}
	skel->bss->nr_writes = nr;
	skel->bss->stream_id = 2;	/* BPF_STDERR */
	prog_fd = bpf_program__fd(skel->progs.stream_oversized);
	if (bpf_prog_test_run_opts(prog_fd, &opts) ||
	    bpf_prog_get_info_by_fd(prog_fd, &info, &len)) {
		fprintf(stderr, "runner: test run failed: %s\n", strerror(errno));
		stream_drop__destroy(skel);
		return 1;
	}
	/* Drain "foo": what remains charged is what the kernel leaked. */
	bpf_prog_stream_read(prog_fd, 2, &c, 1, NULL);
	bpf_prog_stream_read(prog_fd, 2, &c, 1, NULL);
	bpf_prog_stream_read(prog_fd, 2, &c, 1, NULL);
	printf("held prog id %u name %s: %d writes, %d -ENOMEM, %d -ENOSPC, foo %d\n",
	       info.id, info.name, nr, skel->bss->nr_enomem, skel->bss->nr_enospc,
	       skel->bss->small_ret);
	wait_stdin();
	stream_drop__destroy(skel);
	return 0;
}
