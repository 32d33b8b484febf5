/* SPDX-License-Identifier: GPL-2.0 */
/* --journal PATH, --no-journal and BPFSTDERR_JOURNAL, for every command
 * that drains: one argp child and one way to open the journal.
 */
#ifndef BPFSTDERR_JOURNAL_CLI_H
#define BPFSTDERR_JOURNAL_CLI_H

#include <argp.h>
#include <stdbool.h>

#include "journal.h"

/* For a command's argp: .children = journal_children; for commands that
 * drain, drain_children: the journal's, --steal (readers.h) and --backend
 * (stream.h); doctor_children: the journal's and --backend.
 */
extern const struct argp_child journal_children[];
extern const struct argp_child drain_children[];
extern const struct argp_child doctor_children[];
/* --steal: read streams other processes read too. */
bool journal_cli__steal(void);

/* The journal the user chose, or NULL under --no-journal. */
const char *journal_cli__path(void);
/* Why that choice is no path (an empty BPFSTDERR_JOURNAL), or NULL. */
const char *journal_cli__path_error(void);
enum stream_backend;
/* What every command that drains checks and opens first (session.c):
 * require_streams(), then the journal the user chose; *out is NULL under
 * --no-journal (said once on stderr). required: --no-journal is a usage
 * error (record). EXIT_OK, or the exit code after one line.
 */
int journal_cli__require(const char *what, bool required, enum stream_backend *backend,
			 struct journal **out);
/* A command failed with err: the journal's own message when it was the
 * journal's failure, else exit_for_errno(). Returns the exit code.
 */
int journal_cli__failed(struct journal *j, int err, const char *what);
/* The longest duration taken (100000 days): any more overflows in ns. */
#define DURATION_MAX_S	(100000LL * 86400)
/* Parses "7d", "12h", "30m", "45s" or plain seconds; -EINVAL, or -ERANGE
 * beyond DURATION_MAX_S.
 */
int parse_duration(const char *s, long long *secs);
/* Parses "64M", "1G", "512K" or plain bytes; -EINVAL. */
int parse_size(const char *s, long long *bytes);
/* --since/--until: "2026-12-03 05:00[:SS]", "2026-12-03T05:00:00",
 * "@EPOCH", or a duration ago ("10m"); ns since the epoch. -EINVAL, or
 * -ERANGE for a time before 1970 or after 2262 (beyond ns in 64 bits).
 */
int parse_time_arg(const char *s, long long *ns);

#endif
