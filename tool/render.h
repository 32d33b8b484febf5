/* SPDX-License-Identifier: GPL-2.0 */
/* Events and fault reports as text and as JSON: twins, one per concern. */
#ifndef BPFSTDERR_RENDER_H
#define BPFSTDERR_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "reasm.h"
#include "pipeline.h"

#define EVENT_SCHEMA_VERSION 1

struct json_object;

/* Colours (ANSI) only when out is a terminal, NO_COLOR is unset and the
 * user did not pass --no-color.
 */
bool want_color(FILE *out, bool no_color_opt);

void format_time(const struct timespec *ts, char *buf, size_t len, bool date);

struct symbolizer;

/* One serializer per object, the same keys in every command's JSON. */

/* A program's identity: "id", "name", "tag", "type" (null when not known:
 * a program read from a saved dump has no id and maybe no tag).
 */
void prog_ident_json(struct json_object *o, const struct prog_ident *id, bool has_type);
/* {"stdout": N, "stderr": N} */
struct json_object *per_stream_json(const unsigned long long v[STREAM_CNT]);
/* The processes holding a program: [{"pid": N, "comm": "..."}, ...] */
struct json_object *owners_json(const struct prog_owner *owners, int cnt);
/* Each stream's accounting: capacity (bytes charged), limit, full, and,
 * when this command drained the stream (read != NULL), read_bytes and
 * lost_bytes (charged and still there after the drain: never readable);
 * else those two are null; dropped_messages and dropped_bytes from the
 * kernel's drop counters (dropped != NULL), else null. NULL when the
 * kernel keeps no accounting.
 */
struct stream_drops {
	const long long *msgs, *bytes;	/* STREAM_CNT each */
};
/* What a drain saw lost (struct tracked): leaked bytes (lost_bytes) and
 * when a drain last found the stream full (full_at_drain, full_at);
 * NULL: lost_bytes and those null. refused_reports is the kernel's
 * dropped count where it keeps one, else null.
 */
struct stream_loss {
	const int *leaked;		/* STREAM_CNT each */
	const long long *full_ns;
	/* pushes refused that a fill wake counted (jprog.refused; -1: none
	 * counted), or NULL
	 */
	const long long *refused;
};
struct json_object *streams_json(bool has_streams, const int capacity[STREAM_CNT],
				 const unsigned long long *read, const struct stream_loss *loss,
				 const struct stream_drops *dropped);
/* A program unloaded since, as a journal knows it: what every drainer
 * read (read), found full and refused (loss, refused not NULL); its
 * capacity, full, lost_bytes and dropped counts are null.
 */
struct json_object *streams_gone_json(const unsigned long long *read, const struct stream_loss *loss);
/* {"KIND": N} for the kinds seen */
struct json_object *faults_json(const unsigned long long faults[FAULT_KIND_CNT]);
/* RFC kernels: {"count", "max", "hidden"}; NULL elsewhere. */
struct json_object *error_count_json(bool has_error_count, long long count);

/* sym may be NULL: frames as the kernel printed them. owner: the program
 * whose stream carried f (its BPF frames are looked up there first);
 * NULL or id 0 when not known.
 */
struct json_object *fault_json(struct symbolizer *sym, const struct prog_ident *owner,
			       const struct fault *f);
struct json_object *event_json(struct symbolizer *sym, const struct pipe_event *pe);
/* A CLOCK_REALTIME time in ns as ISO 8601 UTC; NULL (JSON null) for 0. */
struct json_object *ns_time_json(long long ns);

/* "message", "fault", "stack": an event's "kind" in JSON. */
const char *event_kind_name(enum ev_kind k);
/* One line: "arena_write at 0x... (CPU 1, PID 42 comm)"; for a stack
 * dump print_stack_summary()'s.
 */
void print_fault_summary(FILE *out, const struct fault *f);
/* "stack dump (CPU 1, UID 0, PID 42 comm)" */
void print_stack_summary(FILE *out, const struct fault *f);
struct addr_set;
/* The same for a group whose first report is f: with more than one
 * distinct address, "arena_write at N addresses 0xMIN-0xMAX, first 0x..."
 * (">64" when there were more than the set holds).
 */
void print_group_summary(FILE *out, const struct fault *f, const struct addr_set *a);
/* {"distinct", "distinct_truncated", "first", "min", "max"}; NULL when the
 * group has no addresses (not an arena fault).
 */
struct json_object *addr_set_json(const struct addr_set *a);
/* The frames from index first, one per line, indented. max: 0 for all,
 * else about max frames: a BPF frame is never cut, only the frames past
 * the outermost one (test run, syscall, attach point), as "... N more".
 */
void print_frames(FILE *out, struct symbolizer *sym, const struct prog_ident *owner,
		  const struct fault *f, const char *indent, int first, int max);
/* Where the interesting part of a trace starts: the frame that called into
 * the reporting machinery, just above the innermost BPF frame.
 */
int fault_first_frame(const struct fault *f);

#endif
