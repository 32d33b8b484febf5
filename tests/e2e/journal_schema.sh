# The journal file: created 0600 in a 0700 directory, WAL, a schema
# version; a journal from a newer bpfstderr, a corrupt file, another
# program's SQLite database and an unwritable place are refused with one
# clear line and exit 5, and left as they were; --no-journal carries on
# without. Python's sqlite3 is the oracle for what is in the file.
. tests/lib.sh

d=$(mktmp)
pyq() { sql1 "$@"; }

db=$d/new/dir/journal.db
mkdir -p "$d/new"
"$BPFSTDERR" report --journal "$db" > /dev/null 2>&1; rc=$?
check "report creates the journal (exit $rc)" test -f "$db" -a "$rc" -le 1
check_eq "its directory is 0700, the file 0600" "$(stat -c %a "$d/new/dir") $(stat -c %a "$db")" "700 600"
check_eq "schema version 5, bpfstderr's application id, WAL" \
	"$(pyq "$db" 'pragma user_version') $(pyq "$db" 'pragma application_id') $(pyq "$db" 'pragma journal_mode')" \
	"5 1112557125 wal"
check_eq "its tables" "$(pyq "$db" "select group_concat(name, ' ') from (select name from sqlite_master where type = 'table' and name not like 'sqlite%' order by name)")" \
	"events meta mirrored pending progs sinks sites totals"
"$BPFSTDERR" report --journal "$db" > /dev/null 2>&1
check_eq "opened again: still version 5" "$(pyq "$db" 'pragma user_version')" 5

(umask 022; exec "$BPFSTDERR" follow --all --journal "$d/live.db" > /dev/null 2>&1) &
fpid=$!
wait_until 60 test -e "$d/live.db-wal" -a -e "$d/live.db-shm"
check_eq "while in use, its -wal and -shm files are 0600 too (umask 022)" \
	"$(stat -c %a "$d/live.db-wal" "$d/live.db-shm" 2>&1 | paste -sd' ')" "600 600"
# SQLite's own locks stay held while the journal is open: closing any
# descriptor of a file drops every POSIX lock the process has on it, and
# another process would then take itself for the only user and reset the
# WAL. The kernel's lock table is the oracle.
ino=$(stat -c %i "$d/live.db-shm")
check "while in use, SQLite's lock on the -shm file is held (/proc/locks)" \
	grep -qE "POSIX +ADVISORY +[A-Z]+ +$fpid +[0-9a-f]+:[0-9a-f]+:$ino " /proc/locks
kill -INT "$fpid"; wait "$fpid"

: > "$d/empty.db"
"$BPFSTDERR" report --journal "$d/empty.db" > /dev/null 2>&1
check_eq "an empty file (version 0) is brought to version 5" "$(pyq "$d/empty.db" 'pragma user_version')" 5

# A version 1 journal (this one, taken back: no sinks, no totals, no
# journal id, no full_out/full_err, no readers) is brought to version 5, its events kept and counted in the
# totals, with an id of its own.
cp "$db" "$d/v1.db"
python3 -c "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.executescript(\"alter table progs drop column refused_out; alter table progs drop column refused_err; drop table mirrored; alter table events drop column reader_pid; alter table events drop column reader_comm; drop table sinks; drop table totals; alter table progs drop column full_out; alter table progs drop column full_err; delete from meta where key = 'journal_id'; insert into progs (id, tag, load_time, type, name, kname, first_ns) values (7, 'aa', 1, 1, 'x', 'x', 1); insert into events (prog, ts, stream, kind, flags, text) values (last_insert_rowid(), %d, 1, 0, 0, 'kept'); pragma user_version = 1\" % time.time_ns())" "$d/v1.db"
"$BPFSTDERR" report --journal "$d/v1.db" --since @0 > /dev/null 2>&1
check_eq "version 1 migrated: version 5, its event kept, a sinks table, a journal id" \
	"$(pyq "$d/v1.db" 'pragma user_version') $(pyq "$d/v1.db" 'select text from events') $(pyq "$d/v1.db" "select count(*) from sqlite_master where name = 'sinks'") $(pyq "$d/v1.db" "select value > 0 from meta where key = 'journal_id'")" \
	"5 kept 1 1"
check_eq "... its event counted in the totals (program 7, stdout, a message: 1)" \
	"$(pyq "$d/v1.db" "select t.stream || ' ' || quote(t.fault_kind) || ' ' || t.n from totals t join progs p on p.row = t.prog where p.id = 7")" \
	"1 '' 1"
check "another journal has another id" test "$(pyq "$d/v1.db" "select value from meta where key = 'journal_id'")" != \
	"$(pyq "$db" "select value from meta where key = 'journal_id'")"

# A version 2 journal (no full_out/full_err: when a drain found a stream
# full) is brought to version 5, its programs and events kept, the new
# columns empty (never found full).
cp "$db" "$d/v2.db"
python3 -c "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.executescript(\"alter table progs drop column refused_out; alter table progs drop column refused_err; drop table mirrored; alter table events drop column reader_pid; alter table events drop column reader_comm; alter table progs drop column full_out; alter table progs drop column full_err; insert into progs (id, tag, load_time, type, name, kname, first_ns) values (8, 'bb', 1, 1, 'y', 'y', 1); insert into events (prog, ts, stream, kind, flags, text) values (last_insert_rowid(), %d, 2, 0, 0, 'kept2'); pragma user_version = 2\" % time.time_ns())" "$d/v2.db"
check_eq "the version 2 journal lacks the columns" "$(pyq "$d/v2.db" "select count(*) from pragma_table_info('progs') where name like 'full_%'")" 0
"$BPFSTDERR" report --journal "$d/v2.db" --since @0 > /dev/null 2>&1
check_eq "version 2 migrated: version 5, its event kept, full_out and full_err empty" \
	"$(pyq "$d/v2.db" 'pragma user_version') $(pyq "$d/v2.db" "select text from events where text = 'kept2'") $(pyq "$d/v2.db" "select quote(full_out) || quote(full_err) from progs where id = 8")" \
	"5 kept2 NULLNULL"

# A version 3 journal (no reader columns in events, no mirrored totals:
# who read what was mirrored) is brought to version 5, its events kept as read by bpfstderr
# (no reader).
cp "$db" "$d/v3.db"
python3 -c "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.executescript(\"alter table progs drop column refused_out; alter table progs drop column refused_err; drop table mirrored; alter table events drop column reader_pid; alter table events drop column reader_comm; insert into progs (id, tag, load_time, type, name, kname, first_ns) values (9, 'cc', 1, 1, 'z', 'z', 1); insert into events (prog, ts, stream, kind, flags, text) values (last_insert_rowid(), %d, 2, 0, 0, 'kept3'); pragma user_version = 3\" % time.time_ns())" "$d/v3.db"
check_eq "the version 3 journal lacks the reader columns" "$(pyq "$d/v3.db" "select count(*) from pragma_table_info('events') where name like 'reader_%'")" 0
"$BPFSTDERR" report --journal "$d/v3.db" --since @0 > /dev/null 2>&1
check_eq "version 3 migrated: version 5, its event kept with no reader, a mirrored table" \
	"$(pyq "$d/v3.db" 'pragma user_version') $(pyq "$d/v3.db" "select text || ' ' || quote(reader_pid) || quote(reader_comm) from events where text = 'kept3'") $(pyq "$d/v3.db" "select count(*) from sqlite_master where name = 'mirrored'")" \
	"5 kept3 NULLNULL 1"

# A version 4 journal (no refused_out/refused_err: the pushes the fill
# wake counted refused) is brought to version 5, its programs kept, the
# new columns empty (none counted).
cp "$db" "$d/v4.db"
python3 -c "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.executescript(\"alter table progs drop column refused_out; alter table progs drop column refused_err; insert into progs (id, tag, load_time, type, name, kname, first_ns) values (10, 'dd', 1, 1, 'w', 'w', 1); insert into events (prog, ts, stream, kind, flags, text) values (last_insert_rowid(), %d, 2, 0, 0, 'kept4'); pragma user_version = 4\" % time.time_ns())" "$d/v4.db"
check_eq "the version 4 journal lacks the columns" "$(pyq "$d/v4.db" "select count(*) from pragma_table_info('progs') where name like 'refused_%'")" 0
"$BPFSTDERR" report --journal "$d/v4.db" --since @0 > /dev/null 2>&1
check_eq "version 4 migrated: version 5, its event kept, refused_out and refused_err empty" \
	"$(pyq "$d/v4.db" 'pragma user_version') $(pyq "$d/v4.db" "select text from events where text = 'kept4'") $(pyq "$d/v4.db" "select quote(refused_out) || quote(refused_err) from progs where id = 10")" \
	"5 kept4 NULLNULL"

BPFSTDERR_JOURNAL=$d/env.db "$BPFSTDERR" report > /dev/null 2>&1
check "BPFSTDERR_JOURNAL chooses the file" test -f "$d/env.db"
BPFSTDERR_JOURNAL=$d/env2.db "$BPFSTDERR" report --journal "$d/opt.db" > /dev/null 2>&1
check "--journal wins over BPFSTDERR_JOURNAL" test -f "$d/opt.db" -a ! -e "$d/env2.db"

refused() {	# DESC WANT-IN-MESSAGE CMD...: exit 5 and one line on stderr
	local desc=$1 want=$2 err rc; shift 2
	err=$("$@" 2>&1 >/dev/null); rc=$?
	check_eq "$desc: exit 5" "$rc" 5
	check_eq "$desc: one line" "$(wc -l <<<"$err")" 1
	check "$desc: says '$want'" grep -qF -- "$want" <<<"$err"
}

cp "$db" "$d/newer.db"
python3 -c "import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); c.execute('pragma user_version = 99'); c.commit()" "$d/newer.db"
sum=$(md5sum < "$d/newer.db")
refused "a newer journal" "has journal schema version 99; this bpfstderr knows up to 5" \
	"$BPFSTDERR" report --journal "$d/newer.db"
refused "a newer journal, follow" "schema version 99" "$BPFSTDERR" follow --all --journal "$d/newer.db"
check_eq "a newer journal is left as it was" "$(md5sum < "$d/newer.db")" "$sum"

head -c 8192 /dev/urandom > "$d/garbage.db"
sum=$(md5sum < "$d/garbage.db")
refused "a corrupt journal" "is not a bpfstderr journal" "$BPFSTDERR" report --journal "$d/garbage.db"
check_eq "a corrupt journal is left as it was" "$(md5sum < "$d/garbage.db")" "$sum"
refused "a corrupt journal, top" "is not a bpfstderr journal" "$BPFSTDERR" top -b -n 1 --journal "$d/garbage.db"
refused "a corrupt journal, record" "is not a bpfstderr journal" "$BPFSTDERR" record --journal "$d/garbage.db"

python3 -c "import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table t (x)'); c.commit()" "$d/other.db"
refused "another program's database" "is an SQLite database but not a bpfstderr journal" \
	"$BPFSTDERR" report --journal "$d/other.db"

refused "a place that cannot be written" "cannot create /proc/bpfstderr.db" \
	"$BPFSTDERR" report --journal /proc/bpfstderr.db
mkdir "$d/ro"
if mount -t tmpfs -o size=4m tmpfs "$d/ro"; then
	"$BPFSTDERR" report --journal "$d/ro/journal.db" > /dev/null 2>&1
	mount -o remount,ro "$d/ro"
	refused "a journal on a read-only file system" "Read-only file system" \
		"$BPFSTDERR" report --journal "$d/ro/journal.db"
	umount "$d/ro"
else
	fail "mount a tmpfs for the read-only case"
fi

# doctor looks, read only.
"$BPFSTDERR" doctor --journal "$d/none.db" > "$d/doc.txt" 2>&1
check "doctor: a journal not there yet is said so, and not created" \
	test ! -e "$d/none.db" -a -n "$(grep "^journal .*not created yet" "$d/doc.txt")"
"$BPFSTDERR" doctor --journal "$d/garbage.db" > "$d/doc.txt" 2>&1
check "doctor: a corrupt journal is REFUSED, loudly" grep -q "REFUSED: .*is not a bpfstderr journal" "$d/doc.txt"
check_eq "doctor --json: the journal's error" \
	"$("$BPFSTDERR" doctor --json --journal "$d/newer.db" | jq -r '.journal.error')" \
	"$d/newer.db has journal schema version 99; this bpfstderr knows up to 5: use a newer bpfstderr, or another --journal"

bad=$(printf '%s/bad\xff\x1bname.db' "$d"); cp "$d/garbage.db" "$bad"
check_eq "doctor --json: a path of any bytes keeps the JSON valid (Python's json) and exact" \
	"$("$BPFSTDERR" doctor --json --journal "$bad" | python3 -c 'import base64, json, sys
j = json.load(sys.stdin)["journal"]
print(base64.b64decode(j["error_base64"]).startswith(sys.argv[1].encode("utf-8", "surrogateescape")))' "$bad")" True

# Carrying on without a journal is the user's choice, said once.
BPFSTDERR_JOURNAL=$d/garbage.db "$BPFSTDERR" report --no-journal > /dev/null 2> "$d/nj.err"; rc=$?
check "--no-journal carries on past a corrupt journal (exit $rc)" test "$rc" -le 1
check_eq "--no-journal: said once" "$(cat "$d/nj.err")" \
	"bpfstderr: no journal: reads are destructive; other bpfstderr processes will not see what this one reads"
"$BPFSTDERR" report --no-journal --journal "$d/x.db" > /dev/null 2>&1
check_eq "--journal with --no-journal: exit 2" "$?" 2
"$BPFSTDERR" record --no-journal > /dev/null 2>&1
check_eq "record --no-journal: exit 2" "$?" 2
"$BPFSTDERR" report --no-journal --since 1h > /dev/null 2>&1
check_eq "--since with --no-journal: exit 2" "$?" 2
"$BPFSTDERR" record --journal "$d/r.db" --max-size 100K > /dev/null 2>&1
check_eq "record --max-size below 1M: exit 2" "$?" 2
# The systemd unit, installed, runs the installed binary.
make -s install DESTDIR="$d/inst" PREFIX=/usr > /dev/null 2>&1
unit=$d/inst/usr/lib/systemd/system/bpfstderr-record.service
check_eq "make install: the record unit runs the installed binary" \
	"$(grep '^ExecStart=' "$unit" 2>/dev/null | cut -d' ' -f1-2)" "ExecStart=/usr/sbin/bpfstderr record"
check "make install: that binary has record" "$d/inst/usr/sbin/bpfstderr" record --help
sed "s|/usr/sbin/bpfstderr|$d/inst/usr/sbin/bpfstderr|" "$unit" > "$d/bpfstderr-record.service"
check_eq "the unit passes systemd-analyze verify" \
	"$(systemd-analyze verify --man=no "$d/bpfstderr-record.service" 2>&1)" ""
finish
