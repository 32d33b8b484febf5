/* SPDX-License-Identifier: GPL-2.0 */
/* The journal: an SQLite database (WAL) that every drained event goes into
 * before any view shows it. Reads of BPF streams are destructive; the
 * journal is what lets several bpfstderr processes each see every event,
 * and what keeps the faults of unloaded programs.
 *
 * Writers hold the database's write lock (BEGIN IMMEDIATE) from before
 * their destructive reads until the commit, so drainers are serialized and
 * events are numbered (seq) in the order the kernel gave out their bytes.
 * The bytes of a stream that are not an event yet (a line without its
 * '\n', a report without its end) are kept in the journal too, so the next
 * drainer, whichever process it is, carries on from them.
 *
 * A view keeps a cursor (the last seq it showed) and reads what follows.
 */
#ifndef BPFSTDERR_JOURNAL_H
#define BPFSTDERR_JOURNAL_H

#include <limits.h>
#include <stdbool.h>
#include <time.h>
#include <linux/types.h>

#include "reasm.h"
#include "progs.h"
#include "readers.h"
#include "symbolize.h"

#define JOURNAL_SCHEMA_VERSION	5
#define JOURNAL_DEFAULT_PATH	"/var/lib/bpfstderr/journal.db"
#define JOURNAL_DEFAULT_MAX_AGE	(7LL * 24 * 3600)	/* seconds */
#define JOURNAL_DEFAULT_MAX_SIZE (128LL << 20)		/* bytes */
#define JOURNAL_MIN_MAX_SIZE	(1LL << 20)
/* A tail no drainer added to for this long is emitted as it is: a message
 * without its '\n', or a report cut short.
 */
#define JOURNAL_STALE_NS	(2LL * 1000000000)

/* A program as the journal knows it. */
struct jprog {
	long long row;
	struct prog_ident ident;
	char kname[PROG_KNAME_MAX];	/* the kernel's, cut at 15 bytes */
	unsigned long long read_bytes[STREAM_CNT];	/* by every drainer */
	long long first_ns;		/* when the journal first had it */
	/* CLOCK_REALTIME ns of the last drain, by any drainer, that found
	 * the stream full (reports may have been refused); 0: none
	 */
	long long full_ns[STREAM_CNT];
	/* pushes the kernel refused as full (its stream out of room), as
	 * the keeper's fill wake counted them (pipeline.c); -1: none counted
	 */
	long long refused[STREAM_CNT];
};

struct jevent {
	long long seq;
	const struct jprog *prog;
	struct timespec ts;		/* CLOCK_REALTIME when drained */
	struct event ev;		/* text valid during the callback */
	bool incomplete;		/* a report: parse with terminated = false */
	/* another process read it, and it was mirrored (readers.h); NULL:
	 * a bpfstderr read it
	 */
	const struct reader_id *reader;
	struct reader_id who;		/* what reader points to */
};

struct retention {
	long long max_age;		/* seconds; 0: no limit */
	long long max_size;		/* bytes; 0: no limit */
};

struct journal;

/* SQLite's quick_check runs at every open, for at most this long. */
#define JOURNAL_CHECK_MS	3000

/* Opens (creating, mode 0600, and its directory, 0700, as needed), checks
 * (quick_check) and migrates. Refuses a symbolic link, anything but a
 * regular file, and a file of another user (-ELOOP, -EINVAL, -EPERM); a
 * journal (or -wal, -shm) readable by others is made 0600, and
 * journal__notice() says so. -EPROTO: written by a newer bpfstderr;
 * -EBADMSG: not a journal, or corrupt; other -errno from the file
 * system. journal__error() says what went wrong.
 */
int journal__open(struct journal **out, const char *path);
/* How journals opened after journal__wait_locks() meet a write lock that
 * another process holds (a sqlite3 shell in a transaction): waited for,
 * w->locked() told once a wait passed the busy timeout (holder: as
 * journal__lock_holder() says, NULL when unknown), until w->stop() says to give up (-EINTR).
 * By default (and after journal__wait_locks_end(), for j too): the busy
 * timeout, then -EBUSY. journal__wait_locks_end(): true when j waited.
 */
/* Who holds the journal's write lock: "pid N, comm", "" when unknown. */
#define JOURNAL_HOLDER_MAX	(TASK_COMM_LEN + 32)
void journal__lock_holder(const struct journal *j, char *buf, size_t len);
struct journal_lock_wait {
	void (*locked)(const char *path, const char *holder);
	bool (*stop)(void);
};
void journal__wait_locks(const struct journal_lock_wait *w);
bool journal__wait_locks_end(struct journal *j);
void journal__close(struct journal *j);
const char *journal__path(const struct journal *j);
/* The last failure, or NULL. */
const char *journal__error(const struct journal *j);
/* What opening changed (a mode made 0600), or NULL. */
const char *journal__notice(const struct journal *j);

/* ---- writing: one transaction per drain cycle --------------------------- */

/* Takes the write lock: -EBUSY if another writer kept it past the busy
 * timeout (nothing was read: try next cycle).
 */
int journal__begin(struct journal *j);
/* Commits, then applies retention when it is due. */
int journal__commit(struct journal *j);
void journal__rollback(struct journal *j);
/* Appends to the last failure's message (what became of the bytes read). */
void journal__add_error(struct journal *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Gives the WAL's disk space back (checkpoint, truncate); best effort. */
void journal__checkpoint(struct journal *j);

/* ---- read rights ---------------------------------------------------------- */

/* A stream's bytes reach the journal in the kernel's order only if one
 * process at a time reads it, from a read until the commit of what it
 * read. A transaction gives that while it lasts. A read right gives it
 * past a commit, to bytes a process keeps in memory (the rescue's,
 * rescue.h): a writer claims the right of each stream before it reads
 * it, inside its transaction, and may keep it after; no other process
 * reads that stream until it is released. A right is an open file
 * description lock (F_OFD_SETLK) on one byte of the journal file, beyond
 * SQLite's own lock bytes: byte 2^40 + 2 * id, + 1 for stderr (every
 * bpfstderr sharing a journal must agree). The kernel releases a
 * process's rights when it exits, however it exits.
 *
 * 1: claimed (or held already); 0: the file system has no such locks,
 * and the stream may be read inside this transaction only; -EBUSY:
 * another process holds it.
 */
int journal__claim(struct journal *j, __u32 prog_id, enum stream s);
void journal__release(struct journal *j, __u32 prog_id, enum stream s);
/* The mirror right: every bpfstderr sees every read of other processes
 * (readers.h), and one process per journal keeps them, the holder of
 * this right (a byte just below the streams'), until it exits. Returns as
 * journal__claim(); with 0 (no locks) each process keeps what it sees.
 */
int journal__claim_mirror(struct journal *j);
/* The refusal right: every bpfstderr's fill wake counts every push the
 * kernel refuses as full (fill.h), and one process per journal adds its
 * counts to the journal, the holder of this right (the byte below the
 * mirror right's), until it exits. Returns as journal__claim(); with 0
 * (no locks) each process adds what it counts.
 */
int journal__claim_refusals(struct journal *j);
/* -errno once a claim found that the journal's file system has no read
 * rights to give (EINVAL: no OFD locks; ENOLCK: none to be had, as on NFS
 * without its lock daemon): every claim then returns 0. 0: it has them.
 */
int journal__no_rights(const struct journal *j);

/* The row of this program, created on first use; p->row is set. */
int journal__prog(struct journal *j, struct jprog *p);
int journal__add_read(struct journal *j, long long row, enum stream s, unsigned long long bytes);
/* Bytes every drainer read of stream s of the program at row, so far. */
int journal__reads(struct journal *j, long long row, enum stream s, unsigned long long *bytes);
/* A drain found stream s full at ns (CLOCK_REALTIME) before its read. */
int journal__set_full(struct journal *j, long long row, enum stream s, long long ns);
/* n more pushes to stream s refused as full, counted by a fill wake. */
int journal__add_refused(struct journal *j, long long row, enum stream s, unsigned long long n);
int journal__set_unloaded(struct journal *j, long long row, const struct timespec *ts);
/* who: the other process that read it (mirrored), NULL: a bpfstderr. */
int journal__add_event(struct journal *j, long long row, const struct timespec *ts,
		       const struct event *ev, const struct reader_id *who);
/* Written by this process already: a storm's frames are looked up once. */
bool journal__site_written(const struct journal *j, long long row, const char *tag,
			   unsigned long long off);
/* Where a BPF frame of this program's faults is: recorded while it is loaded. */
int journal__add_site(struct journal *j, long long row, const char *tag, unsigned long long off,
		      const struct sym_loc *loc);

/* A stream's held bytes. get: *buf malloc'd (NULL when none). put with
 * len 0 drops them; since is when they last grew.
 */
int journal__pending_get(struct journal *j, long long row, enum stream s, void **buf, size_t *len);
int journal__pending_put(struct journal *j, long long row, enum stream s, const void *buf, size_t len,
			 const struct timespec *since);

/* Programs not marked unloaded, and streams with held bytes. */
typedef int (*jprog_fn)(const struct jprog *p, void *ctx);
int journal__live_progs(struct journal *j, jprog_fn fn, void *ctx);
typedef int (*jpending_fn)(const struct jprog *p, enum stream s, long long since_ns, void *ctx);
int journal__pending_list(struct journal *j, jpending_fn fn, void *ctx);

/* ---- reading ------------------------------------------------------------ */

struct jread {
	long long after;		/* the cursor: events with seq > after */
	long long since_ns, until_ns;	/* event time window; 0: open */
};

typedef int (*jevent_fn)(const struct jevent *e, void *ctx);
/* A jevent_fn's "not now": the read stops before this event, which the
 * next read hands out again.
 */
#define JOURNAL_LATER	1
/* Events in seq order; r->after advances past each one read. Returns 0,
 * JOURNAL_LATER, or fn's or the journal's -errno.
 */
int journal__read(struct journal *j, struct jread *r, jevent_fn fn, void *ctx);
long long journal__last_seq(struct journal *j);
/* A number that moves whenever the journal's files may have been
 * written since the last call, by this process or any other (inotify on
 * their directory; where that is refused, every call moves it). The
 * first call starts the watch and moves it. A commit's write is told
 * before the commit shows to readers (its fsync, then the WAL index, in
 * shared memory that inotify does not see): a reader trusts "nothing new"
 * only a while after the last move (pipeline.c: JOURNAL_SETTLE_SEC).
 */
unsigned long long journal__generation(struct journal *j);

/* Every event a program's row ever took, whatever retention pruned since. */
struct jtotal {
	const struct jprog *prog;
	long long unloaded_ns;		/* CLOCK_REALTIME; 0 while loaded */
	enum stream stream;
	const char *fault_kind;		/* fault_kind_name(); "" for messages */
	unsigned long long n;
	/* NULL: events by kind; else of those, the ones another process
	 * with this name read (mirrored), all kinds
	 */
	const char *reader;
};
typedef int (*jtotal_fn)(const struct jtotal *t, void *ctx);
/* Each program's totals, and the last seq they count: one snapshot. */
int journal__totals(struct journal *j, jtotal_fn fn, void *ctx, long long *last_seq);
/* A cursor before the first event drained at or after since_ns (by the
 * time index): every such event has a higher seq.
 */
long long journal__cursor_at(struct journal *j, long long since_ns);
/* Every recorded BPF frame location of one program. */
typedef int (*jsite_fn)(const char *tag, unsigned long long off, const struct sym_loc *loc,
			void *ctx);
int journal__sites(struct journal *j, long long row, jsite_fn fn, void *ctx);

/* ---- sinks: forwarders of the events (record --journald) --------------------- */

/* This journal's id (random, made with its schema): with a seq, it names
 * one event among every journal's.
 */
long long journal__id(struct journal *j);
/* The last seq the sink name has delivered: -ENOENT when it never ran. */
int journal__sink_get(struct journal *j, const char *name, long long *seq);
/* In a transaction of its own (never inside a drain's). */
int journal__sink_set(struct journal *j, const char *name, long long seq);

/* ---- retention ------------------------------------------------------------ */

/* Stored in the journal, so every writer applies the recorder's limits. */
int journal__set_retention(struct journal *j, const struct retention *r);
/* Removes events past the limits, then the unloaded programs left without
 * any; a transaction of its own only when a limit is (nearly) reached or
 * the age check is due (every 10 s). Commits do this too.
 */
int journal__prune(struct journal *j);

/* ---- room ----------------------------------------------------------------- */

/* A drainer reads only when the journal's file system has room for what
 * it reads: the WAL takes the bytes with the pages and index entries they
 * touch, the database takes them again at the checkpoint. Without room the
 * bytes stay in the kernel (up to the stream's capacity).
 */
#define JOURNAL_ROOM_SLACK	(128LL << 10)
#define JOURNAL_ROOM(bytes)	(2 * (long long)(bytes) + JOURNAL_ROOM_SLACK)

/* Free bytes (for unprivileged writers: root's reserve is not counted) on
 * the file system that holds path, or -errno.
 */
long long journal__fs_free(const char *path);
/* The size of the journal's WAL file: at most what a checkpoint needs to
 * grow the database by, before it gives the WAL's space back.
 */
long long journal__wal_bytes(struct journal *j);

/* ---- inspecting (doctor): read-only, never creates ------------------------- */

struct journal_info {
	bool exists;
	int err;			/* as journal__open's */
	char error[PATH_MAX + 256];
	unsigned int mode;		/* of the file; & 077: opening makes it 0600 */
	char check[64];			/* quick_check: "ok", or why not */
	long long fs_free;		/* journal__fs_free(), or -errno */
	long long version;
	long long events, faults, programs, unloaded;
	long long oldest_ns, newest_ns;	/* 0 when empty */
	long long used_bytes, file_bytes, wal_bytes;
	struct retention ret;
};

int journal__inspect(const char *path, struct journal_info *info);

#endif
