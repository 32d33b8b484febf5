/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The main() both selftest runners share (vmtest/runner.c for stream_drop,
 * rfc-drain/vmtest/runner.c for stream_consume). The runner defines
 * RUNNER_TEST (the selftest's name: prog_tests/RUNNER_TEST.c, whose
 * test_RUNNER_TEST() runs its subtests), includes that file, then this
 * one, then defines hold().
 *
 * Usage: runner            run the subtests; "N passed, N failed" at the end,
 *                          exit 0 only when all passed
 *        runner --hold N   load the program, write N messages to its
 *                          stderr (hold() says which), print its id, then
 *                          wait until stdin closes (for a reader such as
 *                          bpfstderr)
 */
#ifndef VMTEST_RUNNER_H
#define VMTEST_RUNNER_H

#define RUNNER_STR_(x) #x
#define RUNNER_STR(x) RUNNER_STR_(x)
#define RUNNER_CAT_(a, b) a##b
#define RUNNER_CAT(a, b) RUNNER_CAT_(a, b)

int env_pass, env_fail;
const char *env_subtest = RUNNER_STR(RUNNER_TEST);

bool test__start_subtest(const char *name)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s/%s", RUNNER_STR(RUNNER_TEST), name);
	env_subtest = buf;
	printf("# subtest %s\n", buf);
	return true;
}

/* hold() ends once stdin closes. */
static void wait_stdin(void)
{
	char c;

	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
}

static int hold(int nr);

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--hold"))
		return hold(atoi(argv[2]));
	if (argc != 1) {
		fprintf(stderr, "usage: runner [--hold N]\n");
		return 2;
	}
	RUNNER_CAT(test_, RUNNER_TEST)();
	printf("%d passed, %d failed\n", env_pass, env_fail);
	return env_fail ? 1 : !env_pass;
}

#endif
