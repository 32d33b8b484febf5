// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <linux/fs.h>
#include <sqlite3.h>

#include "journal.h"

#define APPLICATION_ID		0x42504645	/* "BPFE": a bpfstderr journal */
#define BUSY_TIMEOUT_MS		5000
#define LOCK_POLL_MS		100		/* journal__wait_locks(): a try each */
#define WAL_WRITE_LOCK_BYTE	120		/* SQLite's in the -shm file */
#define DB_LOCK_BYTES		0x40000000LL	/* its PENDING and RESERVED bytes: 2 */
#define JOURNAL_PAGE_SIZE	16384		/* a new journal's pages */
#define WAL_SIZE_LIMIT		(1 << 20)	/* checkpoint past it; journal_size_limit */
#define CHECKPOINT_WAIT_MS	200
#define AGE_CHECK_NS		(10LL * 1000000000)
#define READ_BATCH		512
#define READ_BATCH_BYTES	(4 << 20)

/* Schema steps: step i takes a journal from version i to i + 1. A journal
 * at version v runs steps v..JOURNAL_SCHEMA_VERSION-1, each with the
 * version bump in the same transaction.
 */
static const char *const schema_steps[JOURNAL_SCHEMA_VERSION] = {
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
	"CREATE TABLE progs ("
	"  row INTEGER PRIMARY KEY,"
	"  id INTEGER NOT NULL, tag TEXT NOT NULL, load_time INTEGER NOT NULL,"
	"  type INTEGER NOT NULL, name BLOB NOT NULL, kname BLOB NOT NULL,"
	"  first_ns INTEGER NOT NULL, unloaded_ns INTEGER,"
	"  read_out INTEGER NOT NULL DEFAULT 0, read_err INTEGER NOT NULL DEFAULT 0,"
	"  UNIQUE (id, tag, load_time));"
	"CREATE TABLE events ("
	"  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  prog INTEGER NOT NULL REFERENCES progs(row),"
	"  ts INTEGER NOT NULL, stream INTEGER NOT NULL,"
	"  kind INTEGER NOT NULL,"		/* enum ev_kind: 0 message, 1 fault, 2 stack dump */
	"  fault_kind TEXT,"			/* fault_kind_name() */
	"  flags INTEGER NOT NULL,"		/* 1 partial, 2 incomplete */
	"  text BLOB NOT NULL);"
	"CREATE INDEX events_ts ON events (ts);"
	"CREATE INDEX events_prog ON events (prog);"
	"CREATE TABLE pending ("
	"  prog INTEGER NOT NULL REFERENCES progs(row), stream INTEGER NOT NULL,"
	"  since INTEGER NOT NULL, bytes BLOB NOT NULL,"
	"  PRIMARY KEY (prog, stream));"
	"CREATE TABLE sites ("
	"  prog INTEGER NOT NULL REFERENCES progs(row), tag TEXT NOT NULL, off INTEGER NOT NULL,"
	"  func BLOB, file BLOB, line INTEGER NOT NULL, col INTEGER NOT NULL, src BLOB,"
	"  PRIMARY KEY (prog, tag, off));",
	/* 2: where each forwarder (record --journald) is in the events, and
	 * an id that tells this journal's seqs from another's
	 */
	"CREATE TABLE sinks (name TEXT PRIMARY KEY, seq INTEGER NOT NULL);"
	"INSERT OR IGNORE INTO meta (key, value) VALUES ('journal_id', random() & 0x7fffffffffffffff);"
	/* every event a program's row ever had, by stream and fault kind
	 * ('' for messages): retention prunes events, never these, so that
	 * counters (record --metrics-address) never go down; they go with
	 * the program's row
	 */
	"CREATE TABLE totals ("
	"  prog INTEGER NOT NULL REFERENCES progs(row), stream INTEGER NOT NULL,"
	"  fault_kind TEXT NOT NULL, n INTEGER NOT NULL,"
	"  PRIMARY KEY (prog, stream, fault_kind));"
	"INSERT INTO totals SELECT prog, stream, coalesce(fault_kind, ''), count(*) FROM events "
	"  GROUP BY 1, 2, 3;",
	/* 3: when a drain last found each stream full (stream_full() before
	 * its read): reports may have been refused then, and what the read
	 * takes off never says so
	 */
	("ALTER TABLE progs ADD COLUMN full_out INTEGER;"
	 "ALTER TABLE progs ADD COLUMN full_err INTEGER;"),
	/* 4: events another process read, mirrored (readers.h): who read
	 * them (NULL: a bpfstderr), and how many each program's streams
	 * ever had by reader's name (a subset of totals, as never lowered)
	 */
	("ALTER TABLE events ADD COLUMN reader_pid INTEGER;"
	 "ALTER TABLE events ADD COLUMN reader_comm TEXT;"
	 "CREATE TABLE mirrored ("
	 "  prog INTEGER NOT NULL REFERENCES progs(row), stream INTEGER NOT NULL,"
	 "  reader TEXT NOT NULL, n INTEGER NOT NULL,"
	 "  PRIMARY KEY (prog, stream, reader));"),
	/* 5: pushes to each stream the kernel refused as full, as the
	 * keeper's fill wake counted them (NULL: none counted)
	 */
	("ALTER TABLE progs ADD COLUMN refused_out INTEGER;"
	 "ALTER TABLE progs ADD COLUMN refused_err INTEGER;"),
};

/* An event's columns, bound in this order (queue_bind()). */
#define EVENT_INSERT	"INSERT INTO events (prog, ts, stream, kind, fault_kind, flags, text, " \
			"reader_pid, reader_comm) VALUES "
#define EVENT_VALUES	"(?, ?, ?, ?, ?, ?, ?, ?, ?)"
#define EVENT_NCOLS	9

#define PROG_COLS "p.row, p.id, p.type, p.load_time, p.tag, p.name, p.kname, " \
		  "p.read_out, p.read_err, p.first_ns, p.full_out, p.full_err, " \
		  "p.refused_out, p.refused_err"
#define PROG_NCOLS 14

enum stmt {
	S_PROG_FIND, S_PROG_ADD, S_ADD_READ, S_UNLOADED, S_EVENT, S_EVENTS, S_SITE,
	S_SET_FULL, S_ADD_REFUSED, S_PEND_GET, S_PEND_PUT, S_PEND_DEL, S_LIVE, S_PEND_LIST, S_READ, S_LAST,
	S_READS, S_SITES, S_META_GET, S_META_SET, S_SINCE, S_SINK_GET, S_SINK_SET, S_TOTAL_ADD, S_MIRRORED_ADD, S_TOTALS,
	S_BEGIN, S_COMMIT, S_PRUNE_AGE, S_FILE_BYTES,
	S_CNT,
};

static const char *const stmt_sql[S_CNT] = {
	[S_PROG_FIND] = "SELECT " PROG_COLS " FROM progs p WHERE id = ?1 AND tag = ?2 AND load_time = ?3",
	[S_PROG_ADD] = "INSERT INTO progs (id, tag, load_time, type, name, kname, first_ns) "
		       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[S_READS] = "SELECT read_out, read_err FROM progs WHERE row = ?1",
	[S_ADD_READ] = "UPDATE progs SET read_out = read_out + (?2 = 1) * ?3, "
		       "read_err = read_err + (?2 = 2) * ?3 WHERE row = ?1",
	[S_SET_FULL] = "UPDATE progs SET full_out = CASE WHEN ?2 = 1 THEN ?3 ELSE full_out END, "
		       "full_err = CASE WHEN ?2 = 2 THEN ?3 ELSE full_err END WHERE row = ?1",
	[S_ADD_REFUSED] = "UPDATE progs SET "
			  "refused_out = CASE WHEN ?2 = 1 THEN coalesce(refused_out, 0) + ?3 ELSE refused_out END, "
			  "refused_err = CASE WHEN ?2 = 2 THEN coalesce(refused_err, 0) + ?3 ELSE refused_err END "
			  "WHERE row = ?1",
	[S_UNLOADED] = "UPDATE progs SET unloaded_ns = ?2 WHERE row = ?1 AND unloaded_ns IS NULL",
	[S_EVENT] = EVENT_INSERT EVENT_VALUES,
	/* [S_EVENTS]: EVENT_BATCH rows, made by events_sql() */
	[S_SITE] = "INSERT OR IGNORE INTO sites (prog, tag, off, func, file, line, col, src) "
		   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[S_PEND_GET] = "SELECT bytes FROM pending WHERE prog = ?1 AND stream = ?2",
	[S_PEND_PUT] = "INSERT INTO pending (prog, stream, since, bytes) VALUES (?1, ?2, ?3, ?4) "
		       "ON CONFLICT (prog, stream) DO UPDATE SET since = ?3, bytes = ?4",
	[S_PEND_DEL] = "DELETE FROM pending WHERE prog = ?1 AND stream = ?2",
	[S_LIVE] = "SELECT " PROG_COLS " FROM progs p WHERE p.unloaded_ns IS NULL",
	[S_PEND_LIST] = "SELECT " PROG_COLS ", q.stream, q.since FROM pending q "
			"JOIN progs p ON p.row = q.prog",
	[S_READ] = "SELECT " PROG_COLS ", e.seq, e.ts, e.stream, e.kind, e.flags, e.text, "
		   "e.reader_pid, e.reader_comm FROM events e JOIN progs p ON p.row = e.prog WHERE e.seq > ?1 "
		   "AND (?2 = 0 OR e.ts >= ?2) AND (?3 = 0 OR e.ts < ?3) ORDER BY e.seq LIMIT ?4",
	[S_LAST] = "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
	[S_SITES] = "SELECT tag, off, func, file, line, col, src FROM sites WHERE prog = ?1",
	[S_META_GET] = "SELECT value FROM meta WHERE key = ?1",
	[S_SINCE] = "SELECT min(seq) FROM events WHERE ts >= ?1",
	[S_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2) "
		       "ON CONFLICT (key) DO UPDATE SET value = ?2",
	[S_SINK_GET] = "SELECT seq FROM sinks WHERE name = ?1",
	[S_SINK_SET] = "INSERT INTO sinks (name, seq) VALUES (?1, ?2) "
		       "ON CONFLICT (name) DO UPDATE SET seq = ?2",
	[S_TOTAL_ADD] = "INSERT INTO totals (prog, stream, fault_kind, n) VALUES (?1, ?2, ?3, ?4) "
			"ON CONFLICT (prog, stream, fault_kind) DO UPDATE SET n = n + ?4",
	[S_MIRRORED_ADD] = "INSERT INTO mirrored (prog, stream, reader, n) VALUES (?1, ?2, ?3, ?4) "
			   "ON CONFLICT (prog, stream, reader) DO UPDATE SET n = n + ?4",
	[S_TOTALS] = "SELECT " PROG_COLS ", p.unloaded_ns, t.stream, t.fault_kind, t.n, NULL "
		     "FROM totals t JOIN progs p ON p.row = t.prog UNION ALL "
		     "SELECT " PROG_COLS ", p.unloaded_ns, m.stream, '', m.n, m.reader "
		     "FROM mirrored m JOIN progs p ON p.row = m.prog",
	/* every cycle that writes: parsed once */
	[S_BEGIN] = "BEGIN IMMEDIATE",
	[S_COMMIT] = "COMMIT",
	[S_PRUNE_AGE] = "DELETE FROM events WHERE ts < ?1",
	[S_FILE_BYTES] = "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
};

#define TX_TOTALS_MAX	64
/* Events an insert statement takes at once: a statement's own cost (its
 * step, reset and halt, AUTOINCREMENT's read and write of sqlite_sequence)
 * is paid once for them, and its rows go into each b-tree without a seek
 * each: a third of record's instructions a report (bench/record_cost.sh,
 * callgrind). 576 parameters: under the 999 of SQLite before 3.32.
 */
#define EVENT_BATCH	64
#define SITES_SLOTS	8192	/* a power of two, at most half of them used */

struct journal {
	sqlite3 *db;
	sqlite3_stmt *st[S_CNT];
	char *path;
	char err[PATH_MAX + 256];
	char notice[2 * PATH_MAX + 256];
	char check[64];		/* quick_check's verdict */
	struct retention ret;
	long long last_age_check;
	bool in_tx;
	/* journal__wait_locks(): when the open wait began, whether it was
	 * said, and whether stop() ended it
	 */
	long long busy_since;
	bool said_locked, lock_stopped;
	/* journal__generation(): inotify on the journal's directory (-1:
	 * none yet; -2: refused, every call moves gen)
	 */
	int ino_fd;
	unsigned long long gen;
	/* read rights: the journal file opened once more, for its locks;
	 * none: the file system has none, and why (-errno)
	 */
	int rights_fd;
	bool rights_none;
	int rights_why;
	/* counts of the open transaction's events, written at its commit
	 * (tx_totals_flush()): a storm of one fault adds thousands to one row
	 */
	struct tx_total {
		long long row;
		int stream;
		const char *kind;	/* fault_kind_name(), "" for messages */
		char reader[TASK_COMM_LEN];	/* mirrored: the reader's name; "": totals */
		long long n;
	} tx_totals[TX_TOTALS_MAX];
	int tx_ntotals;
	/* events added and not yet inserted (queue_flush()): at most
	 * EVENT_BATCH, their text in qtext
	 */
	struct queued_event {
		long long row, ts;
		const char *fault_kind;
		int stream, kind, flags;
		size_t text, len;	/* in qtext */
		bool reader;
		struct reader_id who;
	} queue[EVENT_BATCH];
	int nqueued;
	int queue_err;		/* a failed flush's, until the rollback */
	char *qtext;
	size_t qtext_len, qtext_size;
	/* sites this process wrote (site_key(), open addressing, 0: free),
	 * so that a storm's repeated frames are written once; tx_sites: the
	 * slots the open transaction filled, freed again at a rollback
	 */
	unsigned long long sites[SITES_SLOTS];
	int nsites;
	int tx_sites[SITES_SLOTS / 2];
	int ntx_sites;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* SQLite's result codes, as the -errno the rest of bpfstderr speaks. */
static int sql_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

/* No room on the journal's file system: SQLite says "disk I/O error" for
 * a -shm file it could not grow, "database or disk is full" for pages.
 * Said in j->err as what it is.
 */
static bool no_room(struct journal *j, int rc)
{
	int e = j->db ? sqlite3_system_errno(j->db) : 0;

	if ((rc & 0xff) != SQLITE_FULL &&
	    ((rc & 0xff) != SQLITE_IOERR || (e != ENOSPC && e != EDQUOT)))
		return false;
	snprintf(j->err, sizeof(j->err), "%s (%lld bytes free): the journal's pages, its "
		 "write-ahead log (-wal) and its shared memory (-shm) need room on its file system",
		 strerror(e == EDQUOT ? EDQUOT : ENOSPC), journal__fs_free(j->path));
	return true;
}

static int fail(struct journal *j, int rc, const char *what)
{
	if (no_room(j, rc))
		return -ENOSPC;
	snprintf(j->err, sizeof(j->err), "%s: %s", what, j->db ? sqlite3_errmsg(j->db) : sqlite3_errstr(rc));
	if (j->lock_stopped)
		return -EINTR;
	return sql_errno(rc) ?: -EIO;
}

static int exec(struct journal *j, const char *sql)
{
	int rc = sqlite3_exec(j->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(j, rc, "cannot update the journal");
}

/* A statement ready to bind: reset from its last use. */
static sqlite3_stmt *stmt(struct journal *j, enum stmt s)
{
	sqlite3_reset(j->st[s]);
	sqlite3_clear_bindings(j->st[s]);
	return j->st[s];
}

/* exec() for one of ours that takes no parameters. */
static int update(struct journal *j, enum stmt s)
{
	int rc = sqlite3_step(stmt(j, s));

	sqlite3_reset(j->st[s]);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(j, rc, "cannot update the journal");
}

/* Step a statement that returns no rows we want. */
static int done(struct journal *j, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : fail(j, rc, "cannot write to the journal");
}

static long long single_int(struct journal *j, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(j->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- opening ---------------------------------------------------------------- */

/* The directory of the journal, made 0700 if it is not there. */
static int make_dir(const char *path)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (!mkdir(dir, 0700) || errno == EEXIST)
		return 0;
	return -errno;
}

/* What open(2) refused, in words a user can act on. */
static void say_open_error(struct journal *j, bool create, int fd_err)
{
	unsigned int flags = 0;
	int fd;

	if (fd_err == ELOOP) {
		snprintf(j->err, sizeof(j->err), "%s is a symbolic link: bpfstderr does not follow "
			 "links for its journal; give the real path", j->path);
		return;
	}
	fd = fd_err == EPERM ? open(j->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd >= 0 && !ioctl(fd, FS_IOC_GETFLAGS, &flags) && (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
		snprintf(j->err, sizeof(j->err), "cannot open %s for writing: the file is %s (chattr -%c)",
			 j->path, flags & FS_IMMUTABLE_FL ? "immutable" : "append-only",
			 flags & FS_IMMUTABLE_FL ? 'i' : 'a');
	else if (create)
		snprintf(j->err, sizeof(j->err), "cannot create %s: %s", j->path, strerror(fd_err));
	else
		snprintf(j->err, sizeof(j->err), "cannot open %s for writing: %s", j->path, strerror(fd_err));
	if (fd >= 0)
		close(fd);
}

/* A journal holds what programs wrote: only its owner may read it. */
static int check_owner(struct journal *j, const struct stat *st, const char *name)
{
	if (st->st_uid == geteuid())
		return 0;
	snprintf(j->err, sizeof(j->err), "%s belongs to uid %u, not to this user (uid %u)",
		 name, (unsigned int)st->st_uid, (unsigned int)geteuid());
	return -EPERM;
}

/* Only a regular file, never through a symbolic link: SQLite would write
 * through the link, and beside a device it would create its own files
 * (/dev/null-journal). Created 0600, since SQLite would create it 0644.
 */
static int open_regular(struct journal *j, const char *path, bool create)
{
	int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (create ? O_CREAT : 0);
	struct stat st;
	int fd, err;

	fd = open(path, flags, 0600);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT && !create)
			return 0;
		say_open_error(j, create && lstat(path, &st), err);
		if (path != j->path && err == ELOOP)
			snprintf(j->err, sizeof(j->err), "%s is a symbolic link: refusing the journal beside it", path);
		return -err;
	}
	err = fstat(fd, &st) ? -errno : 0;
	if (!err && !S_ISREG(st.st_mode)) {
		snprintf(j->err, sizeof(j->err), "%s is not a regular file: a journal must be one", path);
		err = -EINVAL;
	}
	err = err ?: check_owner(j, &st, path);
	close(fd);
	return err;
}

static const char *const journal_sides[] = { "-wal", "-shm" };

/* lstat first: opening a FIFO or a device to find out is not harmless. */
static int check_path(struct journal *j)
{
	char side[PATH_MAX + 8];
	struct stat st;
	size_t i;
	int err;

	if (!lstat(j->path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		snprintf(j->err, sizeof(j->err), "%s is not a regular file: a journal must be one", j->path);
		return -EINVAL;
	}
	err = open_regular(j, j->path, true);
	for (i = 0; !err && i < sizeof(journal_sides) / sizeof(journal_sides[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", j->path, journal_sides[i]);
		if (!lstat(side, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			snprintf(j->err, sizeof(j->err), "%s is not a regular file", side);
			return -EINVAL;
		}
		err = open_regular(j, side, false);
	}
	return err;
}

static int fix_mode(struct journal *j, const char *name)
{
	unsigned int mode;
	struct stat st;
	size_t n;

	if (lstat(name, &st) || !S_ISREG(st.st_mode) || !(st.st_mode & 077))
		return 0;
	mode = st.st_mode & 07777;
	if (fchmodat(AT_FDCWD, name, mode & 0700, AT_SYMLINK_NOFOLLOW)) {
		snprintf(j->err, sizeof(j->err), "%s is readable by others (mode %04o) and cannot "
			 "be made 0600: %s", name, mode, strerror(errno));
		return -errno;
	}
	n = strlen(j->notice);
	snprintf(j->notice + n, sizeof(j->notice) - n, "%s%s was readable by others (mode %04o): made it %04o",
		 n ? "; " : "", name, mode, mode & 0700);
	return 0;
}

/* Once the journal is accepted (a refused file is left as it is), its
 * -wal and -shm files take the database's mode. By path, never opening
 * them: closing any descriptor of a file drops every POSIX lock this
 * process holds on it, SQLite's among them, and another process would
 * then take itself for the only one and reset the WAL under us.
 */
static int fix_modes(struct journal *j)
{
	char side[PATH_MAX + 8];
	size_t i;
	int err;

	err = fix_mode(j, j->path);
	for (i = 0; !err && i < sizeof(journal_sides) / sizeof(journal_sides[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", j->path, journal_sides[i]);
		err = fix_mode(j, side);
	}
	return err;
}

static int check_version(struct journal *j, long long *version)
{
	long long app = single_int(j, "PRAGMA application_id");
	long long tables;

	*version = single_int(j, "PRAGMA user_version");
	tables = single_int(j, "SELECT count(*) FROM sqlite_master");
	if (app < 0 || *version < 0 || tables < 0) {
		snprintf(j->err, sizeof(j->err), "%s is not a bpfstderr journal (%s)", j->path,
			 sqlite3_errmsg(j->db));
		return -EBADMSG;
	}
	if (app != APPLICATION_ID && tables) {
		snprintf(j->err, sizeof(j->err), "%s is an SQLite database but not a bpfstderr journal",
			 j->path);
		return -EBADMSG;
	}
	if (*version > JOURNAL_SCHEMA_VERSION) {
		snprintf(j->err, sizeof(j->err),
			 "%s has journal schema version %lld; this bpfstderr knows up to %d: "
			 "use a newer bpfstderr, or another --journal", j->path, *version,
			 JOURNAL_SCHEMA_VERSION);
		return -EPROTO;
	}
	return 0;
}

struct deadline {
	long long end_ns;
	bool hit;
};

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

static int past_deadline(void *ctx)
{
	struct deadline *d = ctx;

	d->hit = mono_ns() > d->end_ns;
	return d->hit;
}

/* SQLite's own quick_check, stopped after JOURNAL_CHECK_MS: a corrupt page
 * found before any read costs nothing; found at a commit, it would cost
 * the reads of that cycle (which then go to a spill file).
 */
static int quick_check(struct journal *j, char *verdict, size_t len)
{
	struct deadline dl = { .end_ns = mono_ns() + JOURNAL_CHECK_MS * 1000000LL };
	char first[512] = "";
	sqlite3_stmt *st;
	int rc;

	sqlite3_progress_handler(j->db, 1000, past_deadline, &dl);
	rc = sqlite3_prepare_v2(j->db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			snprintf(first, sizeof(first), "%s", (const char *)sqlite3_column_text(st, 0) ?: "");
		else
			snprintf(first, sizeof(first), "%s", sqlite3_errmsg(j->db));
		sqlite3_finalize(st);
	} else {
		snprintf(first, sizeof(first), "%s", sqlite3_errmsg(j->db));
	}
	sqlite3_progress_handler(j->db, 0, NULL, NULL);
	for (char *c = first; (c = strchr(c, '\n')); )
		*c = ' ';	/* one line */
	if (dl.hit) {
		snprintf(verdict, len, "not finished within %d ms", JOURNAL_CHECK_MS);
		return 0;
	}
	if (rc == SQLITE_ROW && !strcmp(first, "ok")) {
		snprintf(verdict, len, "ok");
		return 0;
	}
	if (rc != SQLITE_ROW && no_room(j, rc))
		return -ENOSPC;
	if (rc != SQLITE_ROW && sql_errno(rc) != -EBADMSG) {
		snprintf(j->err, sizeof(j->err), "cannot check %s: %s", j->path, first);
		return sql_errno(rc) ?: -EIO;
	}
	if ((rc & 0xff) == SQLITE_NOTADB)
		snprintf(j->err, sizeof(j->err), "%s is not a bpfstderr journal (%s)", j->path, first);
	else
		snprintf(j->err, sizeof(j->err), "%s is corrupt (SQLite quick_check: %s)", j->path, first);
	snprintf(verdict, len, "corrupt");
	return -EBADMSG;
}

/* Brings the schema up to date under the write lock, so that two processes
 * opening a new journal at once create it once.
 */
static int migrate(struct journal *j)
{
	char sql[64];
	long long v;
	int err;

	err = check_version(j, &v);
	if (err || v == JOURNAL_SCHEMA_VERSION)
		return err;
	if (!v) {
		/* both must precede the first table. A page of 16 KiB holds
		 * about 30 fault reports (500 B of text each): a storm's
		 * transaction writes a quarter of the pages a 4 KiB journal
		 * writes, each once in the WAL and once at the checkpoint
		 * (bench/record_cost.sh); a one-event commit writes more
		 * bytes, which only slow drains make. Older journals keep
		 * their page size. Retention shrinks the file (auto_vacuum).
		 */
		snprintf(sql, sizeof(sql), "PRAGMA page_size = %d", JOURNAL_PAGE_SIZE);
		err = exec(j, sql) ?: exec(j, "PRAGMA auto_vacuum = INCREMENTAL");
		if (err)
			return err;
	}
	err = exec(j, "BEGIN IMMEDIATE");
	if (err)
		return err;
	err = check_version(j, &v);
	for (; !err && v < JOURNAL_SCHEMA_VERSION; v++) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld", v + 1);
		err = exec(j, schema_steps[v]) ?: exec(j, sql);
	}
	if (!err) {
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", APPLICATION_ID);
		err = exec(j, sql) ?: exec(j, "COMMIT");
	}
	if (err)
		sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

/* S_EVENTS: EVENT_VALUES EVENT_BATCH times. */
static const char *events_sql(void)
{
	static char sql[sizeof(EVENT_INSERT) + EVENT_BATCH * sizeof(EVENT_VALUES ",")];
	size_t n = 0;
	int i;

	if (sql[0])
		return sql;
	n += snprintf(sql, sizeof(sql), "%s", EVENT_INSERT);
	for (i = 0; i < EVENT_BATCH; i++)
		n += snprintf(sql + n, sizeof(sql) - n, "%s" EVENT_VALUES, i ? "," : "");
	return sql;
}

static int prepare_all(struct journal *j)
{
	const char *sql;
	int i, rc;

	for (i = 0; i < S_CNT; i++) {
		sql = i == S_EVENTS ? events_sql() : stmt_sql[i];
		rc = sqlite3_prepare_v3(j->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &j->st[i], NULL);
		if (rc != SQLITE_OK)
			return fail(j, rc, "cannot read the journal");
	}
	return 0;
}

static long long meta_get(struct journal *j, const char *key, long long dflt)
{
	sqlite3_stmt *st = stmt(j, S_META_GET);
	long long v = dflt;

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

static void load_retention(struct journal *j)
{
	j->ret.max_age = meta_get(j, "max_age", JOURNAL_DEFAULT_MAX_AGE);
	j->ret.max_size = meta_get(j, "max_size", JOURNAL_DEFAULT_MAX_SIZE);
}

/* The file once more, for read rights (journal__claim()): the one SQLite
 * just opened, which check_path() vetted.
 */
static int open_rights(struct journal *j)
{
	int err;

	j->rights_fd = open(j->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (j->rights_fd >= 0)
		return 0;
	err = -errno;
	snprintf(j->err, sizeof(j->err), "cannot open %s for its read rights: %s", j->path,
		 strerror(-err));
	return err;
}

static const struct journal_lock_wait *lock_wait;

void journal__wait_locks(const struct journal_lock_wait *w)
{
	lock_wait = w;
}

bool journal__wait_locks_end(struct journal *j)
{
	lock_wait = NULL;
	if (j && j->db)
		sqlite3_busy_timeout(j->db, BUSY_TIMEOUT_MS);
	return j && j->said_locked;
}

static bool proc_lock_holds(const char *line, const struct stat *st, long long at, pid_t *pid)
{
	char type[16], mode[16], end[24];
	unsigned int maj, min;
	unsigned long ino;
	long long start;
	int p;

	if (sscanf(line, "%*d: %15s %*s %15s %d %x:%x:%lu %lld %23s", type, mode, &p, &maj, &min,
		   &ino, &start, end) != 8 || !strcmp(type, "->") || strcmp(mode, "WRITE"))
		return false;
	if (ino != st->st_ino || maj != major(st->st_dev) || min != minor(st->st_dev))
		return false;
	if (start > at || (strcmp(end, "EOF") && atoll(end) < at) || p <= 0 || p == getpid())
		return false;
	*pid = p;
	return true;
}

/* SQLite's WAL write lock in the -shm file, else the database file's
 * RESERVED byte, as /proc/locks has them: asking fcntl(F_GETLK) takes a
 * descriptor of the file, and closing it would drop SQLite's own locks.
 * Unknown: an OFD lock names no process, nor does a lock already gone.
 */
void journal__lock_holder(const struct journal *j, char *buf, size_t len)
{
	char shm[PATH_MAX + 8], line[256], comm[TASK_COMM_LEN + 1] = "";
	struct stat st_shm, st_db;
	bool has_shm, has_db;
	pid_t pid = 0;
	FILE *f;

	buf[0] = '\0';
	snprintf(shm, sizeof(shm), "%s-shm", j->path);
	has_shm = !stat(shm, &st_shm);
	has_db = !stat(j->path, &st_db);
	f = fopen("/proc/locks", "re");
	while (f && !pid && fgets(line, sizeof(line), f)) {
		if (has_shm && proc_lock_holds(line, &st_shm, WAL_WRITE_LOCK_BYTE, &pid))
			break;
		if (has_db && proc_lock_holds(line, &st_db, DB_LOCK_BYTES + 1, &pid))
			break;
	}
	if (f)
		fclose(f);
	if (!pid)
		return;
	snprintf(line, sizeof(line), "/proc/%d/comm", (int)pid);
	f = fopen(line, "re");
	if (f && fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	if (f)
		fclose(f);
	snprintf(buf, len, comm[0] ? "pid %d, %s" : "pid %d", (int)pid, comm);
}

/* SQLite's busy handler while journal__wait_locks() is on: a try every
 * LOCK_POLL_MS for as long as the lock is held, said once past the busy
 * timeout, until stop().
 */
static int wait_for_lock(void *ctx, int count)
{
	struct journal *j = ctx;
	long long now = mono_ns();
	char who[JOURNAL_HOLDER_MAX];

	if (!count)
		j->busy_since = now;
	else if (!j->said_locked && now - j->busy_since >= BUSY_TIMEOUT_MS * 1000000LL) {
		journal__lock_holder(j, who, sizeof(who));
		lock_wait->locked(j->path, who[0] ? who : NULL);
		j->said_locked = true;
	}
	if (!lock_wait->stop())
		sqlite3_sleep(LOCK_POLL_MS);	/* an ending signal cuts it short */
	j->lock_stopped = lock_wait->stop();
	return !j->lock_stopped;
}

static int setup(struct journal *j)
{
	long long page;
	char sql[64];
	int rc, err;

	/* no allocation statistics: they take a global mutex per malloc
	 * (a few a row); refused once SQLite is initialized, which is fine
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = sqlite3_open_v2(j->path, &j->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK)
		return fail(j, rc, "cannot open the journal");
	if (lock_wait)
		sqlite3_busy_handler(j->db, wait_for_lock, j);
	else
		sqlite3_busy_timeout(j->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(j->db, 0);
	if (sqlite3_db_readonly(j->db, "main") == 1) {
		snprintf(j->err, sizeof(j->err), "%s cannot be written", j->path);
		return -EROFS;
	}
	/* before anything is written to it, and before any stream is read */
	err = quick_check(j, j->check, sizeof(j->check));
	if (err)
		return err;
	err = migrate(j);
	if (err)
		return err;
	/* FULL: a drained event is on disk before any view shows it; the
	 * kernel has no second copy
	 */
	page = single_int(j, "PRAGMA page_size");
	snprintf(sql, sizeof(sql), "PRAGMA wal_autocheckpoint = %lld",
		 WAL_SIZE_LIMIT / (page > 0 ? page : 4096));
	err = exec(j, "PRAGMA journal_mode = WAL") ?: exec(j, "PRAGMA synchronous = FULL") ?:
	      exec(j, sql) ?: exec(j, "PRAGMA journal_size_limit = 1048576");	/* WAL_SIZE_LIMIT */
	if (!err)
		err = prepare_all(j);
	if (!err)
		load_retention(j);
	return err ?: open_rights(j);
}

int journal__open(struct journal **out, const char *path)
{
	struct journal *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return -ENOMEM;
	*out = j;
	j->ino_fd = -1;
	j->rights_fd = -1;
	j->path = strdup(path);
	if (!j->path)
		return -ENOMEM;
	err = make_dir(path);
	if (err) {
		snprintf(j->err, sizeof(j->err), "cannot create the directory of %s: %s", path,
			 strerror(-err));
		return err;
	}
	err = check_path(j) ?: setup(j) ?: fix_modes(j);
	return err && j->lock_stopped ? -EINTR : err;
}

void journal__close(struct journal *j)
{
	int i;

	if (!j)
		return;
	if (j->in_tx)
		journal__rollback(j);
	for (i = 0; i < S_CNT; i++)
		sqlite3_finalize(j->st[i]);
	sqlite3_close(j->db);
	free(j->qtext);
	/* only now: closing any descriptor of the file drops every POSIX
	 * lock this process has on it, SQLite's included
	 */
	if (j->rights_fd >= 0)
		close(j->rights_fd);
	if (j->ino_fd >= 0)
		close(j->ino_fd);
	free(j->path);
	free(j);
}

/* ---- read rights ---------------------------------------------------------- */

/* Above SQLite's lock bytes (at 1 GiB) and far from them: a program's
 * two streams are two bytes from here.
 */
#define RIGHTS_BASE	(1LL << 40)

/* The mirror right's byte: just below them; the refusal right's below. */
#define MIRROR_RIGHT	(RIGHTS_BASE - 1)
#define REFUSAL_RIGHT	(RIGHTS_BASE - 2)

static int lock_byte(struct journal *j, off_t at, short type)
{
	struct flock fl = {
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = at,
		.l_len = 1,
	};

	if (j->rights_none)
		return 0;
	if (!fcntl(j->rights_fd, F_OFD_SETLK, &fl))
		return 1;
	/* no OFD locks on this file system or kernel (EINVAL), or none to
	 * be had (ENOLCK: NFS without its lock daemon): nobody has rights,
	 * reads are ordered by transactions alone. Taken as held elsewhere,
	 * ENOLCK would leave every stream unread for ever.
	 */
	if (errno == EINVAL || errno == ENOLCK) {
		j->rights_none = true;
		j->rights_why = -errno;
		return 0;
	}
	return -EBUSY;	/* held elsewhere */
}

static off_t right_of(__u32 id, enum stream s)
{
	return RIGHTS_BASE + 2LL * id + (s == STREAM_STDERR);
}

int journal__claim(struct journal *j, __u32 prog_id, enum stream s)
{
	return lock_byte(j, right_of(prog_id, s), F_WRLCK);
}

void journal__release(struct journal *j, __u32 prog_id, enum stream s)
{
	lock_byte(j, right_of(prog_id, s), F_UNLCK);
}

int journal__claim_mirror(struct journal *j)
{
	return lock_byte(j, MIRROR_RIGHT, F_WRLCK);
}

int journal__claim_refusals(struct journal *j)
{
	return lock_byte(j, REFUSAL_RIGHT, F_WRLCK);
}

int journal__no_rights(const struct journal *j)
{
	return j->rights_none ? j->rights_why : 0;
}

/* ---- generation: has anyone written since? -------------------------------- */

/* Changes to the journal's files are writes to them (the WAL's frames, a
 * checkpoint into the database, a truncation), and a watch on their
 * directory is told of each in the writer's own write(2): one watch, and
 * the files may come and go.
 */
static int watch_files(struct journal *j)
{
	char dir[PATH_MAX], *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", j->path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (inotify_add_watch(fd, slash ? dir : ".", IN_MODIFY | IN_CREATE | IN_DELETE |
			      IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR) < 0) {
		close(fd);
		return -errno;
	}
	j->ino_fd = fd;
	return 0;
}

/* One of ours: the database or its -wal, -shm or -journal. */
static bool journal_file(const struct journal *j, const char *name)
{
	const char *base = strrchr(j->path, '/');
	size_t len;

	base = base ? base + 1 : j->path;
	len = strlen(base);
	return !strncmp(name, base, len) && (!name[len] || name[len] == '-');
}

/* The events queued since the last call: does one tell of our files? A
 * watch that went (the directory did) or failed tells nothing more: every
 * call after it says written.
 */
static bool files_written(struct journal *j)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	bool written = false, lost = false;
	ssize_t n;
	char *p;

	while ((n = read(j->ino_fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW)
				written = true;
			else if (ev->mask & IN_IGNORED)
				lost = true;
			else if (ev->len && journal_file(j, ev->name))
				written = true;
		}
	}
	if (lost || (n < 0 && errno != EAGAIN)) {
		close(j->ino_fd);
		j->ino_fd = -2;
		return true;
	}
	return written;
}

unsigned long long journal__generation(struct journal *j)
{
	if (j->ino_fd == -1) {
		if (watch_files(j))
			j->ino_fd = -2;
		j->gen++;
	}
	if (j->ino_fd < 0 || files_written(j))
		j->gen++;
	return j->gen;
}

const char *journal__path(const struct journal *j)
{
	return j->path;
}

const char *journal__error(const struct journal *j)
{
	return j->err[0] ? j->err : NULL;
}

const char *journal__notice(const struct journal *j)
{
	return j->notice[0] ? j->notice : NULL;
}

/* ---- writing ------------------------------------------------------------------ */

int journal__begin(struct journal *j)
{
	int err;

	j->err[0] = '\0';
	err = update(j, S_BEGIN);

	j->in_tx = !err;
	return err;
}

/* ---- what a transaction adds up ------------------------------------------------ */

/* The transaction's counts into totals and mirrored, a statement each. */
static int tx_totals_flush(struct journal *j)
{
	struct tx_total *t;
	sqlite3_stmt *st;
	int i, rc = 0;

	for (i = 0; i < j->tx_ntotals && !rc; i++) {
		t = &j->tx_totals[i];
		st = stmt(j, t->reader[0] ? S_MIRRORED_ADD : S_TOTAL_ADD);
		sqlite3_bind_int64(st, 1, t->row);
		sqlite3_bind_int(st, 2, t->stream);
		sqlite3_bind_text(st, 3, t->reader[0] ? t->reader : t->kind, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, t->n);
		rc = done(j, st);
	}
	j->tx_ntotals = 0;
	return rc;
}

static int tx_total_add(struct journal *j, long long row, int stream, const char *kind,
			const char *reader)
{
	struct tx_total *t;
	int i, rc;

	for (i = 0; i < j->tx_ntotals; i++) {
		t = &j->tx_totals[i];
		if (t->row == row && t->stream == stream && t->kind == kind &&
		    !strcmp(t->reader, reader ?: "")) {
			t->n++;
			return 0;
		}
	}
	if (j->tx_ntotals == TX_TOTALS_MAX) {
		rc = tx_totals_flush(j);
		if (rc)
			return rc;
	}
	t = &j->tx_totals[j->tx_ntotals++];
	t->row = row;
	t->stream = stream;
	t->kind = kind;
	snprintf(t->reader, sizeof(t->reader), "%s", reader ?: "");
	t->n = 1;
	return 0;
}

static unsigned long long site_key(long long row, const char *tag, unsigned long long off)
{
	unsigned long long h = 0xcbf29ce484222325ULL ^ (unsigned long long)row;

	for (; *tag; tag++)
		h = (h ^ (unsigned char)*tag) * 0x100000001b3ULL;
	return (h ^ off) * 0x9e3779b97f4a7c15ULL;
}

/* key's slot, else the free one where it goes. */
static unsigned int site_slot(const struct journal *j, unsigned long long key)
{
	unsigned int i = key & (SITES_SLOTS - 1);

	while (j->sites[i] && j->sites[i] != key)
		i = (i + 1) & (SITES_SLOTS - 1);
	return i;
}

/* Written by this process already (in this transaction or a committed one);
 * if not, it is from now on.
 */
static bool site_seen(struct journal *j, unsigned long long key)
{
	unsigned int i = site_slot(j, key | 1);

	if (j->sites[i])
		return true;
	if (j->nsites < SITES_SLOTS / 2) {
		j->sites[i] = key | 1;
		j->nsites++;
		j->tx_sites[j->ntx_sites++] = i;
	}
	return false;
}

bool journal__site_written(const struct journal *j, long long row, const char *tag,
			   unsigned long long off)
{
	return j->sites[site_slot(j, site_key(row, tag, off) | 1)];
}

/* Slots filled after the others go first, so the others' probes stay whole. */
static void sites_forget(struct journal *j, bool all)
{
	if (all) {
		memset(j->sites, 0, sizeof(j->sites));
		j->nsites = 0;
	}
	while (!all && j->ntx_sites) {
		j->sites[j->tx_sites[--j->ntx_sites]] = 0;
		j->nsites--;
	}
	j->ntx_sites = 0;
}

void journal__rollback(struct journal *j)
{
	sqlite3_exec(j->db, "ROLLBACK", NULL, NULL, NULL);
	j->in_tx = false;
	j->tx_ntotals = 0;
	j->nqueued = 0;
	j->qtext_len = 0;
	j->queue_err = 0;
	sites_forget(j, false);
}

/* The drainer says where the bytes of a failed transaction went. */
void journal__add_error(struct journal *j, const char *fmt, ...)
{
	size_t n = strlen(j->err);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->err + n, sizeof(j->err) - n, fmt, ap);
	va_end(ap);
}

/* Gives the WAL's space back: checkpoints every frame and truncates the
 * file, waiting briefly for readers. Best effort.
 */
void journal__checkpoint(struct journal *j)
{
	sqlite3_busy_timeout(j->db, CHECKPOINT_WAIT_MS);
	sqlite3_wal_checkpoint_v2(j->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_busy_timeout(j->db, BUSY_TIMEOUT_MS);
}

static long long wal_size(const char *path);
static int prune(struct journal *j);
static int queue_flush(struct journal *j);

int journal__commit(struct journal *j)
{
	int err = j->queue_err ?: queue_flush(j) ?: tx_totals_flush(j) ?: prune(j);

	err = err ?: update(j, S_COMMIT);
	if (err)
		journal__rollback(j);
	j->in_tx = false;
	j->ntx_sites = 0;
	/* one large drain grows the WAL past its limit until the next
	 * commit: give the space back now
	 */
	if (!err && wal_size(j->path) > WAL_SIZE_LIMIT)
		journal__checkpoint(j);
	return err;
}

static void read_prog(sqlite3_stmt *st, int c, struct jprog *p)
{
	memset(p, 0, sizeof(*p));
	p->row = sqlite3_column_int64(st, c);
	p->ident.id = sqlite3_column_int64(st, c + 1);
	p->ident.type = sqlite3_column_int64(st, c + 2);
	p->ident.load_time_ns = sqlite3_column_int64(st, c + 3);
	snprintf(p->ident.tag, sizeof(p->ident.tag), "%s", (const char *)sqlite3_column_text(st, c + 4) ?: "");
	snprintf(p->ident.name, sizeof(p->ident.name), "%.*s", sqlite3_column_bytes(st, c + 5),
		 (const char *)sqlite3_column_blob(st, c + 5) ?: "");
	snprintf(p->kname, sizeof(p->kname), "%.*s", sqlite3_column_bytes(st, c + 6),
		 (const char *)sqlite3_column_blob(st, c + 6) ?: "");
	p->read_bytes[stream_idx(STREAM_STDOUT)] = sqlite3_column_int64(st, c + 7);
	p->read_bytes[stream_idx(STREAM_STDERR)] = sqlite3_column_int64(st, c + 8);
	p->first_ns = sqlite3_column_int64(st, c + 9);
	p->full_ns[stream_idx(STREAM_STDOUT)] = sqlite3_column_int64(st, c + 10);
	p->full_ns[stream_idx(STREAM_STDERR)] = sqlite3_column_int64(st, c + 11);
	p->refused[stream_idx(STREAM_STDOUT)] = sqlite3_column_type(st, c + 12) == SQLITE_NULL ? -1 :
						sqlite3_column_int64(st, c + 12);
	p->refused[stream_idx(STREAM_STDERR)] = sqlite3_column_type(st, c + 13) == SQLITE_NULL ? -1 :
						sqlite3_column_int64(st, c + 13);
}

static void bind_ident(sqlite3_stmt *st, const struct jprog *p)
{
	sqlite3_bind_int64(st, 1, p->ident.id);
	sqlite3_bind_text(st, 2, p->ident.tag, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (long long)p->ident.load_time_ns);
}

int journal__prog(struct journal *j, struct jprog *p)
{
	sqlite3_stmt *st = stmt(j, S_PROG_FIND);
	int rc;

	bind_ident(st, p);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		p->row = sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
		return 0;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return fail(j, rc, "cannot read the journal");
	st = stmt(j, S_PROG_ADD);
	bind_ident(st, p);
	sqlite3_bind_int64(st, 4, p->ident.type);
	sqlite3_bind_blob(st, 5, p->ident.name, strlen(p->ident.name), SQLITE_STATIC);
	sqlite3_bind_blob(st, 6, p->kname, strlen(p->kname), SQLITE_STATIC);
	p->first_ns = now_ns();
	sqlite3_bind_int64(st, 7, p->first_ns);
	rc = done(j, st);
	if (!rc)
		p->row = sqlite3_last_insert_rowid(j->db);
	return rc;
}

int journal__add_read(struct journal *j, long long row, enum stream s, unsigned long long bytes)
{
	sqlite3_stmt *st = stmt(j, S_ADD_READ);

	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_int(st, 2, s);
	sqlite3_bind_int64(st, 3, (long long)bytes);
	return done(j, st);
}

int journal__reads(struct journal *j, long long row, enum stream s, unsigned long long *bytes)
{
	sqlite3_stmt *st = stmt(j, S_READS);
	int rc;

	sqlite3_bind_int64(st, 1, row);
	rc = sqlite3_step(st);
	*bytes = rc == SQLITE_ROW ? sqlite3_column_int64(st, stream_idx(s)) : 0;
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(j, rc, "cannot read the journal");
}

int journal__set_full(struct journal *j, long long row, enum stream s, long long ns)
{
	sqlite3_stmt *st = stmt(j, S_SET_FULL);

	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_int(st, 2, s);
	sqlite3_bind_int64(st, 3, ns);
	return done(j, st);
}

int journal__add_refused(struct journal *j, long long row, enum stream s, unsigned long long n)
{
	sqlite3_stmt *st = stmt(j, S_ADD_REFUSED);

	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_int(st, 2, s);
	sqlite3_bind_int64(st, 3, n);
	return done(j, st);
}

int journal__set_unloaded(struct journal *j, long long row, const struct timespec *ts)
{
	sqlite3_stmt *st = stmt(j, S_UNLOADED);

	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_int64(st, 2, ts_ns(ts));
	return done(j, st);
}

/* Binds a queued event as row i of st. */
static void queue_bind(struct journal *j, sqlite3_stmt *st, int i, const struct queued_event *q)
{
	int c = i * EVENT_NCOLS;

	sqlite3_bind_int64(st, c + 1, q->row);
	sqlite3_bind_int64(st, c + 2, q->ts);
	sqlite3_bind_int(st, c + 3, q->stream);
	sqlite3_bind_int(st, c + 4, q->kind);
	if (q->fault_kind)
		sqlite3_bind_text(st, c + 5, q->fault_kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, c + 6, q->flags);
	sqlite3_bind_blob(st, c + 7, q->len ? j->qtext + q->text : "", q->len, SQLITE_STATIC);
	if (q->reader) {
		sqlite3_bind_int64(st, c + 8, q->who.pid);
		sqlite3_bind_text(st, c + 9, q->who.comm, -1, SQLITE_STATIC);
	}
}

/* The queued events into the table, in the order they came: a statement
 * for a full batch, else one per event.
 */
static int queue_flush(struct journal *j)
{
	sqlite3_stmt *st;
	int i, rc = 0;

	if (j->nqueued == EVENT_BATCH) {
		st = stmt(j, S_EVENTS);
		for (i = 0; i < EVENT_BATCH; i++)
			queue_bind(j, st, i, &j->queue[i]);
		rc = done(j, st);
	}
	for (i = 0; i < j->nqueued && j->nqueued < EVENT_BATCH && !rc; i++) {
		st = stmt(j, S_EVENT);
		queue_bind(j, st, 0, &j->queue[i]);
		rc = done(j, st);
	}
	j->nqueued = 0;
	j->qtext_len = 0;
	if (rc)
		j->queue_err = rc;	/* the commit fails too */
	return rc;
}

/* Before a read of events inside the transaction: it sees them all. */
static void queue_flush_for_read(struct journal *j)
{
	if (j->nqueued)
		queue_flush(j);
}

/* A copy of the event's text, kept until queue_flush(). */
static int queue_text(struct journal *j, const char *text, size_t len, size_t *at)
{
	size_t size = j->qtext_size ?: 64 * 1024;
	char *p;

	while (size - j->qtext_len < len)
		size *= 2;
	if (size != j->qtext_size) {
		p = realloc(j->qtext, size);
		if (!p)
			return -ENOMEM;
		j->qtext = p;
		j->qtext_size = size;
	}
	memcpy(j->qtext + j->qtext_len, text, len);
	*at = j->qtext_len;
	j->qtext_len += len;
	return 0;
}

/* Queued: written by the next full batch or at the commit, or before the
 * transaction reads events (journal__read() and the like).
 */
int journal__add_event(struct journal *j, long long row, const struct timespec *ts,
		       const struct event *ev, const struct reader_id *who)
{
	struct queued_event *q = &j->queue[j->nqueued];
	bool fault = ev->kind == EV_FAULT;
	int rc;

	rc = queue_text(j, ev->text, ev->len, &q->text);
	if (rc)
		return rc;
	q->row = row;
	q->ts = ts_ns(ts);
	q->stream = ev->stream;
	q->kind = ev->kind;
	q->fault_kind = fault ? fault_kind_name(ev->fault->kind) : NULL;
	q->flags = (ev->partial ? 1 : 0) | (ev->fault && ev->fault->incomplete ? 2 : 0);
	q->len = ev->len;
	q->reader = who;
	if (who)
		q->who = *who;
	if (++j->nqueued == EVENT_BATCH)
		rc = queue_flush(j);
	if (rc)
		return rc;
	rc = tx_total_add(j, row, ev->stream, fault ? fault_kind_name(ev->fault->kind) : "", NULL);
	return rc || !who ? rc : tx_total_add(j, row, ev->stream, "", who->comm);
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_blob(st, i, s, strlen(s), SQLITE_STATIC);
}

int journal__add_site(struct journal *j, long long row, const char *tag, unsigned long long off,
		      const struct sym_loc *loc)
{
	sqlite3_stmt *st = stmt(j, S_SITE);

	if (site_seen(j, site_key(row, tag, off)))
		return 0;
	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_text(st, 2, tag, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (long long)off);
	bind_str(st, 4, loc->sites[0].func);
	bind_str(st, 5, loc->sites[0].file);
	sqlite3_bind_int(st, 6, loc->sites[0].line);
	sqlite3_bind_int(st, 7, loc->sites[0].col);
	bind_str(st, 8, loc->src_text);
	return done(j, st);
}

int journal__pending_get(struct journal *j, long long row, enum stream stream, void **buf, size_t *len)
{
	sqlite3_stmt *st = stmt(j, S_PEND_GET);
	int rc, n;

	*buf = NULL;
	*len = 0;
	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_int(st, 2, stream);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && (n = sqlite3_column_bytes(st, 0)) > 0) {
		*buf = malloc(n);
		if (*buf) {
			memcpy(*buf, sqlite3_column_blob(st, 0), n);
			*len = n;
		}
		rc = *buf ? SQLITE_DONE : SQLITE_NOMEM;
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(j, rc, "cannot read the journal");
}

int journal__pending_put(struct journal *j, long long row, enum stream stream, const void *buf, size_t len,
			 const struct timespec *since)
{
	sqlite3_stmt *st = stmt(j, len ? S_PEND_PUT : S_PEND_DEL);

	sqlite3_bind_int64(st, 1, row);
	sqlite3_bind_int(st, 2, stream);
	if (len) {
		sqlite3_bind_int64(st, 3, ts_ns(since));
		sqlite3_bind_blob(st, 4, buf, len, SQLITE_STATIC);
	}
	return done(j, st);
}

int journal__live_progs(struct journal *j, jprog_fn fn, void *ctx)
{
	sqlite3_stmt *st = stmt(j, S_LIVE);
	struct jprog p;
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_prog(st, 0, &p);
		err = fn(&p, ctx);
	}
	sqlite3_reset(st);
	if (!err && rc != SQLITE_DONE)
		err = fail(j, rc, "cannot read the journal");
	return err;
}

/* A stream id the journal holds indexes arrays: only ours are taken. */
static bool valid_stream(int s)
{
	return s == STREAM_STDOUT || s == STREAM_STDERR;
}

static int bad_stream(struct journal *j, int s)
{
	snprintf(j->err, sizeof(j->err), "the journal holds bytes of stream %d, which no "
		 "bpfstderr writes: it is corrupt", s);
	return -EBADMSG;
}

int journal__pending_list(struct journal *j, jpending_fn fn, void *ctx)
{
	sqlite3_stmt *st = stmt(j, S_PEND_LIST);
	struct jprog p;
	int rc, err = 0;

	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int s = sqlite3_column_int(st, PROG_NCOLS);

		read_prog(st, 0, &p);
		err = valid_stream(s) ? fn(&p, s, sqlite3_column_int64(st, PROG_NCOLS + 1), ctx) :
					bad_stream(j, s);
	}
	sqlite3_reset(st);
	if (!err && rc != SQLITE_DONE)
		err = fail(j, rc, "cannot read the journal");
	return err;
}

/* ---- reading -------------------------------------------------------------------- */

static void read_event(sqlite3_stmt *st, struct jevent *e)
{
	int c = PROG_NCOLS, flags;
	long long ts;

	e->seq = sqlite3_column_int64(st, c);
	ts = sqlite3_column_int64(st, c + 1);
	e->ts.tv_sec = ts / 1000000000LL;
	e->ts.tv_nsec = ts % 1000000000LL;
	e->ev.stream = sqlite3_column_int(st, c + 2);
	switch (sqlite3_column_int(st, c + 3)) {
	case EV_MESSAGE:
		e->ev.kind = EV_MESSAGE;
		break;
	case EV_STACK:
		e->ev.kind = EV_STACK;
		break;
	default:	/* 1, and kinds of a newer version */
		e->ev.kind = EV_FAULT;
		break;
	}
	flags = sqlite3_column_int(st, c + 4);
	e->ev.partial = flags & 1;
	e->incomplete = flags & 2;
	e->ev.text = sqlite3_column_blob(st, c + 5) ?: "";
	e->ev.len = sqlite3_column_bytes(st, c + 5);
	e->ev.fault = NULL;
	e->reader = NULL;
	if (sqlite3_column_type(st, c + 7) != SQLITE_NULL) {
		const unsigned char *comm = sqlite3_column_text(st, c + 7);
		size_t i;

		e->who.pid = sqlite3_column_int64(st, c + 6);
		/* written by us, printable; a journal edited by hand may not be */
		for (i = 0; comm && comm[i] && i < sizeof(e->who.comm) - 1; i++)
			e->who.comm[i] = comm[i] >= 0x20 && comm[i] < 0x7f ? comm[i] : '?';
		e->who.comm[i] = '\0';
		e->reader = &e->who;
	}
}

/* One batch of events, read whole before any is handed out. */
struct jbatch {
	struct jevent *e;
	struct jprog *p;
	size_t n, bytes;
};

static void jbatch_free(struct jbatch *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free((void *)b->e[i].ev.text);
	free(b->e);
	free(b->p);
	b->e = NULL;
	b->p = NULL;
}

static int jbatch_add(struct jbatch *b, sqlite3_stmt *st)
{
	struct jevent *e = &b->e[b->n];
	char *text;

	read_prog(st, 0, &b->p[b->n]);
	read_event(st, e);
	text = malloc(e->ev.len ? e->ev.len : 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, e->ev.text, e->ev.len);
	e->ev.text = text;
	b->bytes += e->ev.len;
	b->n++;
	return 0;
}

/* Up to READ_BATCH events, or READ_BATCH_BYTES of their text, after
 * r->after: the statement is reset before anything is handed out.
 */
static int jbatch_read(struct journal *j, const struct jread *r, struct jbatch *b)
{
	sqlite3_stmt *st = stmt(j, S_READ);
	int rc = SQLITE_DONE, err = 0;

	memset(b, 0, sizeof(*b));
	b->e = calloc(READ_BATCH, sizeof(*b->e));
	b->p = calloc(READ_BATCH, sizeof(*b->p));
	if (!b->e || !b->p) {
		jbatch_free(b);
		return -ENOMEM;
	}
	sqlite3_bind_int64(st, 1, r->after);
	sqlite3_bind_int64(st, 2, r->since_ns);
	sqlite3_bind_int64(st, 3, r->until_ns);
	sqlite3_bind_int(st, 4, READ_BATCH);
	while (!err && b->n < READ_BATCH && b->bytes < READ_BATCH_BYTES &&
	       (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = jbatch_add(b, st);
	sqlite3_reset(st);
	if (!err && rc != SQLITE_DONE && rc != SQLITE_ROW)
		err = fail(j, rc, "cannot read the journal");
	return err;
}

/* In batches, each read whole before any callback: a view whose output
 * blocks (a pager held) holds no read snapshot meanwhile, which would
 * keep checkpoints from bringing the WAL back while writers go on.
 */
int journal__read(struct journal *j, struct jread *r, jevent_fn fn, void *ctx)
{
	long long before;
	struct jbatch b;
	size_t i;
	int err;

	queue_flush_for_read(j);
	do {
		before = r->after;
		err = jbatch_read(j, r, &b);
		for (i = 0; i < b.n && !err; i++) {
			struct jevent *e = &b.e[i];

			e->prog = &b.p[i];
			if (e->reader)
				e->reader = &e->who;
			r->after = e->seq;
			err = valid_stream(e->ev.stream) ? fn(e, ctx) : bad_stream(j, e->ev.stream);
			if (err == JOURNAL_LATER)
				r->after = i ? b.e[i - 1].seq : before;
		}
		jbatch_free(&b);
	} while (!err && (b.n == READ_BATCH || b.bytes >= READ_BATCH_BYTES));
	return err;
}

/* One read snapshot: the totals and the last seq they include. */
int journal__totals(struct journal *j, jtotal_fn fn, void *ctx, long long *last_seq)
{
	struct jtotal t = {};
	struct jprog p;
	sqlite3_stmt *st = stmt(j, S_TOTALS);
	int rc, err;

	t.prog = &p;
	err = exec(j, "BEGIN");
	if (err)
		return err;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		read_prog(st, 0, &p);
		t.unloaded_ns = sqlite3_column_type(st, PROG_NCOLS) == SQLITE_NULL ? 0 :
				sqlite3_column_int64(st, PROG_NCOLS);
		t.stream = sqlite3_column_int(st, PROG_NCOLS + 1);
		t.fault_kind = (const char *)sqlite3_column_text(st, PROG_NCOLS + 2) ?: "";
		t.n = sqlite3_column_int64(st, PROG_NCOLS + 3);
		t.reader = (const char *)sqlite3_column_text(st, PROG_NCOLS + 4);
		err = valid_stream(t.stream) ? fn(&t, ctx) : bad_stream(j, t.stream);
	}
	sqlite3_reset(st);
	if (!err && rc != SQLITE_DONE)
		err = fail(j, rc, "cannot read the journal");
	if (!err)
		*last_seq = journal__last_seq(j);
	sqlite3_exec(j->db, err ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
	return err;
}

long long journal__last_seq(struct journal *j)
{
	sqlite3_stmt *st = stmt(j, S_LAST);
	long long v = 0;

	queue_flush_for_read(j);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

long long journal__cursor_at(struct journal *j, long long since_ns)
{
	sqlite3_stmt *st = stmt(j, S_SINCE);
	long long v = -1;

	queue_flush_for_read(j);
	sqlite3_bind_int64(st, 1, since_ns);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0) - 1;
	sqlite3_reset(st);
	return v >= 0 ? v : journal__last_seq(j);
}

static const char *column_str(sqlite3_stmt *st, int c, char *buf, size_t len)
{
	if (sqlite3_column_type(st, c) == SQLITE_NULL)
		return NULL;
	snprintf(buf, len, "%.*s", sqlite3_column_bytes(st, c), (const char *)sqlite3_column_blob(st, c) ?: "");
	return buf;
}

int journal__sites(struct journal *j, long long row, jsite_fn fn, void *ctx)
{
	sqlite3_stmt *st = stmt(j, S_SITES);
	char func[256], file[PATH_MAX], src[1024];
	struct sym_loc loc;
	int rc, err = 0;

	sqlite3_bind_int64(st, 1, row);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&loc, 0, sizeof(loc));
		loc.found = true;
		loc.site_cnt = 1;
		loc.sites[0].func = column_str(st, 2, func, sizeof(func));
		loc.sites[0].file = column_str(st, 3, file, sizeof(file));
		loc.sites[0].line = sqlite3_column_int(st, 4);
		loc.sites[0].col = sqlite3_column_int(st, 5);
		loc.src_text = column_str(st, 6, src, sizeof(src));
		err = fn((const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1), &loc, ctx);
	}
	sqlite3_reset(st);
	if (!err && rc != SQLITE_DONE)
		err = fail(j, rc, "cannot read the journal");
	return err;
}

/* ---- sinks ---------------------------------------------------------------------- */

long long journal__id(struct journal *j)
{
	return meta_get(j, "journal_id", 0);
}

int journal__sink_get(struct journal *j, const char *name, long long *seq)
{
	sqlite3_stmt *st = stmt(j, S_SINK_GET);
	int rc;

	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*seq = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (rc == SQLITE_DONE)
		return -ENOENT;
	return rc == SQLITE_ROW ? 0 : fail(j, rc, "cannot read the journal");
}

int journal__sink_set(struct journal *j, const char *name, long long seq)
{
	sqlite3_stmt *st;
	int err = journal__begin(j);

	if (err)
		return err;
	st = stmt(j, S_SINK_SET);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, seq);
	err = done(j, st);
	if (err) {
		journal__rollback(j);
		return err;
	}
	return journal__commit(j);
}

/* ---- retention -------------------------------------------------------------------- */

static int meta_set(struct journal *j, const char *key, long long value)
{
	sqlite3_stmt *st = stmt(j, S_META_SET);

	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, value);
	return done(j, st);
}

int journal__set_retention(struct journal *j, const struct retention *r)
{
	int err = meta_set(j, "max_age", r->max_age) ?: meta_set(j, "max_size", r->max_size);

	if (!err)
		j->ret = *r;
	return err;
}

/* Bytes in the pages in use. */
static long long used_bytes(struct journal *j)
{
	return single_int(j, "SELECT (page_count - freelist_count) * page_size "
			     "FROM pragma_page_count, pragma_freelist_count, pragma_page_size");
}

/* Bytes the file has once checkpointed. */
static long long file_bytes(struct journal *j)
{
	static const char sql[] = "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size";
	sqlite3_stmt *st;
	long long v = -1;

	if (!j->st[S_FILE_BYTES])	/* journal__inspect(): not prepared */
		return single_int(j, sql);
	st = stmt(j, S_FILE_BYTES);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

/* Oldest events first, a tenth at a time, until the pages in use are down
 * to three quarters of the limit: the file then has room to grow again
 * before the next prune.
 */
static bool size_prune_due(struct journal *j)
{
	return j->ret.max_size && file_bytes(j) > j->ret.max_size / 10 * 9;
}

static int prune_size(struct journal *j)
{
	long long limit = j->ret.max_size, cnt;
	char sql[160];
	int err = 0;

	if (!size_prune_due(j))
		return 0;
	while (!err && used_bytes(j) > limit / 4 * 3) {
		cnt = single_int(j, "SELECT count(*) FROM events");
		if (cnt <= 0)
			break;
		snprintf(sql, sizeof(sql),
			 "DELETE FROM events WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT %lld)",
			 cnt / 10 ?: 1);
		err = exec(j, sql);
	}
	return err;
}

/* Every 10 s, or a quarter of a shorter max age (at least every second). */
static bool age_check_due(struct journal *j)
{
	long long every = AGE_CHECK_NS, quarter = j->ret.max_age * 1000000000LL / 4;

	if (j->ret.max_age && quarter < every)
		every = quarter > 1000000000LL ? quarter : 1000000000LL;
	return now_ns() - j->last_age_check >= every;
}

/* Also rereads the limits: the recorder may have set new ones. */
static int prune_age(struct journal *j)
{
	long long now = now_ns();
	sqlite3_stmt *st;

	if (!age_check_due(j))
		return 0;
	j->last_age_check = now;
	load_retention(j);
	if (!j->ret.max_age)
		return 0;
	st = stmt(j, S_PRUNE_AGE);
	sqlite3_bind_int64(st, 1, now - j->ret.max_age * 1000000000LL);
	return done(j, st);
}

/* Unloaded programs with nothing left to show go, with what hangs off
 * them. Their rows are free for reuse: what this process remembers of
 * sites (site_seen()) goes too.
 */
static int prune_progs(struct journal *j)
{
	sites_forget(j, true);
	return exec(j, "CREATE TEMP TABLE IF NOT EXISTS gone (row INTEGER PRIMARY KEY);"
		       "DELETE FROM temp.gone;"
		       "INSERT INTO temp.gone SELECT row FROM progs p WHERE unloaded_ns IS NOT NULL "
		       "  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.prog = p.row)"
		       "  AND NOT EXISTS (SELECT 1 FROM pending q WHERE q.prog = p.row);"
		       "DELETE FROM sites WHERE prog IN temp.gone;"
		       "DELETE FROM totals WHERE prog IN temp.gone;"
		       "DELETE FROM mirrored WHERE prog IN temp.gone;"
		       "DELETE FROM progs WHERE row IN temp.gone;");
}

/* Inside a transaction. */
static int prune(struct journal *j)
{
	long long before = sqlite3_total_changes64(j->db);
	int err;

	err = prune_age(j) ?: prune_size(j);
	if (!err && sqlite3_total_changes64(j->db) != before)
		err = prune_progs(j) ?: exec(j, "PRAGMA incremental_vacuum");
	return err;
}

int journal__prune(struct journal *j)
{
	int err;

	if (j->in_tx)
		return prune(j);
	if (!age_check_due(j) && !size_prune_due(j))
		return 0;
	err = journal__begin(j);
	return err ?: journal__commit(j);
}

/* ---- room ------------------------------------------------------------------------- */

long long journal__fs_free(const char *path)
{
	char dir[PATH_MAX], *slash;
	struct statvfs sv;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (statvfs(dir, &sv))
		return -errno;
	return (long long)sv.f_bavail * sv.f_frsize;
}

/* ---- inspecting --------------------------------------------------------------------- */

static long long wal_size(const char *path)
{
	char wal[PATH_MAX + 8];
	struct stat st;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	return stat(wal, &st) ? 0 : st.st_size;
}

long long journal__wal_bytes(struct journal *j)
{
	return wal_size(j->path);
}

/* A count that cannot be read is a journal that cannot be read: say why,
 * rather than show -1.
 */
static int inspect_counts(struct journal *j, struct journal_info *info)
{
	info->events = single_int(j, "SELECT count(*) FROM events");
	info->faults = single_int(j, "SELECT count(*) FROM events WHERE kind = 1");
	info->programs = single_int(j, "SELECT count(*) FROM progs");
	info->unloaded = single_int(j, "SELECT count(*) FROM progs WHERE unloaded_ns IS NOT NULL");
	info->oldest_ns = single_int(j, "SELECT coalesce(min(ts), 0) FROM events");
	info->newest_ns = single_int(j, "SELECT coalesce(max(ts), 0) FROM events");
	info->used_bytes = used_bytes(j);
	info->file_bytes = file_bytes(j);
	info->wal_bytes = wal_size(j->path);
	if (info->events < 0 || info->faults < 0 || info->programs < 0 || info->unloaded < 0 ||
	    info->used_bytes < 0 || info->file_bytes < 0) {
		snprintf(j->err, sizeof(j->err), "cannot read %s: %s", j->path, sqlite3_errmsg(j->db));
		return -EBADMSG;
	}
	if (prepare_all(j))
		return 0;
	load_retention(j);
	info->ret = j->ret;
	return 0;
}

/* What would make journal__open refuse the path, or fix its mode. */
static int inspect_path(const char *path, struct journal_info *info)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	info->exists = true;
	info->mode = st.st_mode & 07777;
	if (S_ISLNK(st.st_mode))
		snprintf(info->error, sizeof(info->error), "%s is a symbolic link: bpfstderr does not "
			 "follow links for its journal; give the real path", path);
	else if (!S_ISREG(st.st_mode))
		snprintf(info->error, sizeof(info->error), "%s is not a regular file: a journal must be one",
			 path);
	else if (st.st_uid != geteuid())
		snprintf(info->error, sizeof(info->error), "%s belongs to uid %u, not to this user (uid %u)",
			 path, (unsigned int)st.st_uid, (unsigned int)geteuid());
	else
		return 0;
	return -EINVAL;
}

int journal__inspect(const char *path, struct journal_info *info)
{
	struct journal j = { .path = (char *)path };
	int rc, err;

	memset(info, 0, sizeof(*info));
	info->fs_free = journal__fs_free(path);
	err = inspect_path(path, info);
	if (err || !info->exists)
		return info->err = err;
	rc = sqlite3_open_v2(path, &j.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
			     NULL);
	err = rc == SQLITE_OK ? quick_check(&j, info->check, sizeof(info->check)) :
				fail(&j, rc, "cannot open");
	err = err ?: check_version(&j, &info->version);
	if (!err && info->version == JOURNAL_SCHEMA_VERSION)
		err = inspect_counts(&j, info);
	info->err = err;
	snprintf(info->error, sizeof(info->error), "%s", j.err);
	for (rc = 0; rc < S_CNT; rc++)
		sqlite3_finalize(j.st[rc]);
	sqlite3_close(j.db);
	return err;
}
