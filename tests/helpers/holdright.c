// SPDX-License-Identifier: GPL-2.0
/* Test helper: another process that holds a stream's read right in a
 * journal (journal.h), as a bpfstderr whose rescue keeps bytes past its
 * commit does, until stdin closes or a line comes.
 *
 *   holdright JOURNAL ID stdout|stderr
 * prints "held", "busy" (another process holds it) or "none" (the file
 * system has no such locks), then waits; exit 0, or 1 on bad use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"

int main(int argc, char **argv)
{
	struct journal *j = NULL;
	enum stream s;
	char line[16];
	int rc;

	if (argc != 4 || (strcmp(argv[3], "stdout") && strcmp(argv[3], "stderr"))) {
		fprintf(stderr, "usage: holdright JOURNAL ID stdout|stderr\n");
		return 1;
	}
	s = strcmp(argv[3], "stdout") ? STREAM_STDERR : STREAM_STDOUT;
	if (journal__open(&j, argv[1])) {
		fprintf(stderr, "holdright: %s\n", j ? journal__error(j) : "no memory");
		journal__close(j);
		return 1;
	}
	rc = journal__claim(j, strtoul(argv[2], NULL, 10), s);
	printf("%s\n", rc > 0 ? "held" : rc ? "busy" : "none");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin)) {
		/* stdin closed: let go */
	}
	journal__close(j);
	return 0;
}
