// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journal_cli.h"
#include "main.h"
#include "stream.h"

enum {
	OPT_JOURNAL = 0x200,
	OPT_NO_JOURNAL,
	OPT_STEAL,
	OPT_BACKEND,
};

static struct {
	const char *path;
	bool none;
	bool steal;
} jenv;

static const struct argp_option journal_opts[] = {
	{ NULL, 0, NULL, 0, "Journal:", 50 },
	{ "journal", OPT_JOURNAL, "PATH", 0,
	  "Journal database, a regular file (not a link), kept 0600 (default: "
	  "$BPFSTDERR_JOURNAL, else " JOURNAL_DEFAULT_PATH ")", 50 },
	{ "no-journal", OPT_NO_JOURNAL, NULL, 0,
	  "No journal: reads are destructive, other bpfstderr processes miss what this one reads", 50 },
	{},
};

static error_t parse_journal_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_JOURNAL:
		if (!*arg)
			argp_error(state, "--journal needs a path");
		jenv.path = arg;
		break;
	case OPT_NO_JOURNAL:
		jenv.none = true;
		break;
	case ARGP_KEY_END:
		if (jenv.none && jenv.path)
			argp_error(state, "--journal and --no-journal do not go together");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp journal_argp = { .options = journal_opts, .parser = parse_journal_arg };

const struct argp_child journal_children[] = { { &journal_argp, 0, NULL, 0 }, {} };

static const struct argp_option steal_opts[] = {
	{ "steal", OPT_STEAL, NULL, 0,
	  "Read streams that another process reads too (a scheduler that reads its own stderr): "
	  "that process then misses what bpfstderr reads (default: left to it, said once, what it "
	  "reads shown, mirrored, where the kernel allows tracing; else only counted)", 50 },
	{},
};

static error_t parse_steal_arg(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	if (key != OPT_STEAL)
		return ARGP_ERR_UNKNOWN;
	jenv.steal = true;
	return 0;
}

static const struct argp steal_argp = { .options = steal_opts, .parser = parse_steal_arg };

static const struct argp_option backend_opts[] = {
	{ NULL, 0, NULL, 0, "Reading streams:", 51 },
	{ "backend", OPT_BACKEND, "upstream|rfc", 0,
	  "Read streams with the read command (upstream, Linux 6.17+) or with the RFC's drain "
	  "program (rfc: a kernel with kernel-patches/rfc-drain/), and nothing else (default: "
	  "the read command where the kernel has it, else the drain program)", 51 },
	{},
};

static error_t parse_backend_arg(int key, char *arg, struct argp_state *state)
{
	enum stream_backend b;

	if (key != OPT_BACKEND)
		return ARGP_ERR_UNKNOWN;
	if (stream_backend_from_name(arg, &b))
		argp_error(state, "--backend: '%s' is neither upstream nor rfc", arg);
	stream_backend_force(b);
	return 0;
}

static const struct argp backend_argp = { .options = backend_opts, .parser = parse_backend_arg };

const struct argp_child drain_children[] = {
	{ &journal_argp, 0, NULL, 0 }, { &steal_argp, 0, NULL, 0 },
	{ &backend_argp, 0, NULL, 0 }, {}
};

const struct argp_child doctor_children[] = {
	{ &journal_argp, 0, NULL, 0 }, { &backend_argp, 0, NULL, 0 }, {}
};

bool journal_cli__steal(void)
{
	return jenv.steal;
}

static int open_error(struct journal *j, int err)
{
	const char *why = journal__error(j) ?: strerror(-err);

	switch (err) {
	case -EPROTO:
		p_err("%s", why);
		break;
	case -EBADMSG:
		p_err("%s; move it away, or run with --no-journal", why);
		break;
	case -ENOSPC:
		p_err("journal %s: %s: make room there, choose another with --journal, or run with "
		      "--no-journal", journal__path(j), why);
		break;
	default:
		p_err("journal %s: %s; choose another with --journal, or run with --no-journal",
		      journal__path(j), why);
	}
	return EXIT_ERROR;
}

int journal_cli__failed(struct journal *j, int err, const char *what)
{
	const char *why = j ? journal__error(j) : NULL;

	if (why)
		p_err("%s: %s (journal %s)", what, why, journal__path(j));
	else
		return exit_for_errno(err, what);
	return EXIT_ERROR;
}

const char *journal_cli__path(void)
{
	const char *path = jenv.path ?: getenv("BPFSTDERR_JOURNAL");

	if (jenv.none)
		return NULL;
	return path ?: JOURNAL_DEFAULT_PATH;
}

/* An empty BPFSTDERR_JOURNAL is a mistake in a unit file or a script, not
 * a wish for the system journal.
 */
const char *journal_cli__path_error(void)
{
	const char *path = journal_cli__path();

	if (path && !*path)
		return "BPFSTDERR_JOURNAL is empty: set it to a path, or unset it for "
		       JOURNAL_DEFAULT_PATH;
	return NULL;
}

static int journal_cli__open(struct journal **out, bool required)
{
	const char *path = journal_cli__path();
	struct journal *j = NULL;
	int err;

	*out = NULL;
	if (jenv.none) {
		if (required) {
			p_err("--no-journal: this command writes the journal");
			return EXIT_USAGE;
		}
		p_err("no journal: reads are destructive; other bpfstderr processes will not see "
		      "what this one reads");
		return EXIT_OK;
	}
	if (journal_cli__path_error()) {
		p_err("%s", journal_cli__path_error());
		return EXIT_USAGE;
	}
	err = journal__open(&j, path);
	if (j && journal__notice(j))	/* even when refused: the mode was changed */
		p_err("journal: %s", journal__notice(j));
	if (err == -ENOMEM) {
		p_err("journal %s: out of memory", path);
		journal__close(j);
		return EXIT_ERROR;
	}
	if (err == -EINTR) {	/* stopped while waiting for a lock (record): said */
		journal__close(j);
		return EXIT_ERROR;
	}
	if (err) {
		err = open_error(j, err);
		journal__close(j);
		return err;
	}
	*out = j;
	return EXIT_OK;
}

int journal_cli__require(const char *what, bool required, enum stream_backend *backend,
			 struct journal **out)
{
	*out = NULL;
	return require_streams(what, backend) ?: journal_cli__open(out, required);
}

/* A plain decimal number with an optional unit: strtod alone would also
 * take "nan", "inf", hex and leading blanks. NaN fails !(v >= 0); a value
 * that is not 0 but rounds to 0 would silently mean "no limit".
 */
static int parse_scaled(const char *s, long long *out, const char *units, const long long *mult,
			double max)
{
	const char *u;
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -EINVAL;
	if (*end) {
		u = end[1] ? NULL : strchr(units, *end);
		if (!u)
			return -EINVAL;
		v *= mult[u - units];
	}
	if (!(v <= max) || (v > 0 && v < 1))
		return -ERANGE;
	*out = (long long)v;
	return 0;
}

int parse_duration(const char *s, long long *secs)
{
	static const long long mult[] = { 1, 60, 3600, 86400, 7 * 86400 };

	/* every duration is used in nanoseconds somewhere: keep it in range */
	return parse_scaled(s, secs, "smhdw", mult, DURATION_MAX_S);
}

int parse_size(const char *s, long long *bytes)
{
	static const long long mult[] = { 1, 1LL << 10, 1LL << 20, 1LL << 30, 1LL << 40 };

	return parse_scaled(s, bytes, "BKMGT", mult, 9.2e18);
}

/* Seconds since the epoch that still fit in nanoseconds (until 2262). */
#define TIME_MAX_S	(LLONG_MAX / 1000000000LL)

static int parse_date(const char *s, long long *ns)
{
	static const char *const fmts[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M",
		"%Y-%m-%d",
	};
	struct tm tm;
	const char *end;
	size_t i;
	time_t t;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, fmts[i], &tm);
		if (!end || *end)
			continue;
		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1)
			return -EINVAL;
		if (t < 0 || t > TIME_MAX_S)
			return -ERANGE;
		*ns = t * 1000000000LL;
		return 0;
	}
	return -EINVAL;
}

int parse_time_arg(const char *s, long long *ns)
{
	/* one "now" for every age on the command line: --since 2h --until 2h is empty */
	static struct timespec now;
	long long v;
	char *end;
	int err;

	if (s[0] == '@') {
		if (!isdigit((unsigned char)s[1]))
			return -EINVAL;
		errno = 0;
		v = strtoll(s + 1, &end, 10);
		if (*end)
			return -EINVAL;
		if (errno || v > TIME_MAX_S)
			return -ERANGE;
		*ns = v * 1000000000LL;
		return 0;
	}
	err = parse_date(s, ns);
	if (err != -EINVAL)
		return err;
	err = parse_duration(s, &v);
	if (err)
		return err;
	if (!now.tv_sec)
		clock_gettime(CLOCK_REALTIME, &now);
	if (v > now.tv_sec)
		return -ERANGE;		/* before the epoch */
	*ns = (now.tv_sec - v) * 1000000000LL + now.tv_nsec;
	return 0;
}
