/* SPDX-License-Identifier: GPL-2.0 */
/* Prometheus metrics for `record --metrics-address`: the faults and
 * messages the journal holds, counted per program, and what the kernel
 * accounts to each stream, served at GET /metrics by libmicrohttpd in the
 * text format 0.0.4, or OpenMetrics 1.0.0 when the scraper asks for it.
 *
 * Record's thread does all the work: it reads the journal and builds the
 * view a scrape renders; the server's thread only renders that view,
 * under a mutex, so a scrape never touches SQLite nor waits for a drain.
 */
#ifndef BPFSTDERR_METRICS_H
#define BPFSTDERR_METRICS_H

#include <stdbool.h>
#include <time.h>

#include "journal.h"
#include "pipeline.h"
#include "progs.h"

/* How long an unloaded program's series stay (seconds), by default. */
#define METRICS_DEFAULT_KEEP	600
/* The server's limits: connections at once, from one address, and how
 * long one may stay idle (seconds).
 */
#define METRICS_CONNECTIONS		64
#define METRICS_PER_IP_CONNECTIONS	4
#define METRICS_IDLE_SECS		10

struct metrics_addr {
	char host[256];		/* a name or an address; brackets stripped */
	char port[6];
};

/* "HOST:PORT" or "[IPV6]:PORT", port 1 to 65535; -EINVAL otherwise. */
int metrics_addr_parse(const char *s, struct metrics_addr *out);

/* Whether an Accept header prefers OpenMetrics 1.0.0 to the text format
 * 0.0.4: media ranges, case-insensitive, with their q; a version other
 * than those is not accepted as them. NULL: no.
 */
bool metrics_wants_openmetrics(const char *accept);

struct metrics_opts {
	struct metrics_addr addr;
	long long keep;		/* seconds */
};

struct metrics;

/* Listens on the address (before any stream is read: a bad address loses
 * nothing) and counts every event the journal ever took; serves from the
 * first metrics__update on. 0, or -errno after one line on stderr.
 */
int metrics__open(struct metrics **out, const struct metrics_opts *o, struct journal *j);
/* After each drain cycle: now is the snapshot the cycle drained, pl the
 * pipeline that drained it (what it read), started when the cycle began
 * (CLOCK_MONOTONIC). Counts the events the journal committed since the
 * last call, whoever drained them. 0 or -errno.
 */
int metrics__update(struct metrics *m, struct journal *j, const struct prog_list *now,
		    struct pipeline *pl, const struct timespec *started);
void metrics__close(struct metrics *m);

#endif
