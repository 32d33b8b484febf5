# A stream read is destructive: bpfstderr must never read what it cannot
# keep. A corrupt journal (made here: one 4 KiB page overwritten, header
# intact) is refused by every command before any read; a full file system
# (a small tmpfs mounted here) stops the reads until there is room, and
# record and follow carry on; the journal path is never followed through a
# symbolic link, never made beside a device, and kept 0600. Oracles: the
# shim's own record of what it served (nothing, while the journal cannot
# keep it), the fixture bytes (reconstruct.py, journal_check.py with
# Python's sqlite3), SQLite's PRAGMA quick_check through Python, stat(1).
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
MNT=""
on_exit() {
	[ -n "$MNT" ] && umount -l "$MNT" 2>/dev/null
	[ -n "${IMMUTABLE:-}" ] && chattr -i "$IMMUTABLE" 2>/dev/null
	cleanup
}
trap on_exit EXIT

shim() {	# DIR CMD...: exec bpfstderr CMD with the shim serving DIR; run it
		# in a subshell, or with & (then $! is bpfstderr's pid)
	local dir=$1; shift
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$dir BPFSTDERR_SHIM_CHUNK=${CHUNK:-4096} \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 exec ${TIMEOUT:+timeout "$TIMEOUT"} "$BPFSTDERR" "$@"
}

make_fixtures() {	# DIR ID TAG: ~900 B of stdout, ~46 KB of stderr reports
	{ printf "$3 out %d\n" $(seq 1 100); } > "$1/$2.1"
	{
		for i in $(seq 1 8); do
			printf '%s before report %d\n' "$3" "$i"
			cat tests/fixtures/upstream-6.18.txt tests/fixtures/rfc-seed001.txt
		done
	} > "$1/$2.2"
	fixture_added H
}

served() {	# DIR ID: has the shim served both fixtures entirely (an empty one: nothing to serve)?
	[ "$(offsets "$1" "$2")" = "$(stat -c %s "$1/$2.1") $(stat -c %s "$1/$2.2")" ]
}

offsets() {	# DIR ID: what the shim served, "0 0" when nothing
	echo "$(cat "$1/$2.1.off" 2>/dev/null || echo 0) $(cat "$1/$2.2.off" 2>/dev/null || echo 0)"
}

same_stream() {	# DB ID STREAM FIXTURE: the journal has the fixture's bytes
	python3 tests/e2e/journal_check.py stream "$1" "$2" "$3" | cmp -s - "$4"
}

start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)

# -- 1. a corrupt journal is refused before any read ----------------------
t=$(mktmp); d1=$(mktmp); d2=$(mktmp)
J=$t/corrupt.db
make_fixtures "$d1" "$id" first
(shim "$d1" report --journal "$J" > /dev/null 2>&1)
check "a first report filled the journal (both fixtures served)" served "$d1" "$id"
check "the journal is more than 4 pages ($(stat -c %s "$J") bytes)" test "$(stat -c %s "$J")" -gt 16384
head -c 100 "$J" > "$t/header"
dd if=/dev/urandom of="$J" bs=4096 seek=3 count=1 conv=notrunc status=none
check "the header is intact" cmp -s "$t/header" <(head -c 100 "$J")
qc=$(python3 -c "
import sqlite3, sys
try:
    print(sqlite3.connect(sys.argv[1]).execute('pragma quick_check').fetchone()[0].replace('\n', ' '))
except sqlite3.DatabaseError as e:
    print('error', e)" "$J")
check "SQLite's quick_check (Python) finds it corrupt: $qc" test "$qc" != ok
make_fixtures "$d2" "$id" second
for cmd in "report" "report --json" "follow -p $id --json" "top -b -n 1" "record -d 0.2"; do
	# shellcheck disable=SC2086
	err=$(TIMEOUT=20 shim "$d2" $cmd --journal "$J" 2>&1 >/dev/null); rc=$?
	check_eq "corrupt journal, $cmd: exit 5" "$rc" 5
	check_eq "corrupt journal, $cmd: one line" "$(wc -l <<<"$err")" 1
	check "corrupt journal, $cmd: says it is corrupt ($err)" grep -q "corrupt (SQLite quick_check" <<<"$err"
	check_eq "corrupt journal, $cmd: nothing was read" "$(offsets "$d2" "$id")" "0 0"
done
"$BPFSTDERR" doctor --journal "$J" > "$t/doc" 2>&1
check "doctor: the corrupt journal is REFUSED" grep -q "REFUSED: .*corrupt (SQLite quick_check" "$t/doc"
check "doctor: no negative count" bash -c "! grep -q -- '(-1' '$t/doc'"
check_eq "doctor --json: the error says corrupt" \
	"$("$BPFSTDERR" doctor --json --journal "$J" | jq -r '.journal.error | test("corrupt")')" true
# What the refusals left in the kernel is all there for a healthy journal.
J2=$t/healthy.db
shim "$d2" record -d 0.2 --journal "$J2" 2> "$t/rec.err" & rpid=$!
for i in $(seq 200); do served "$d2" "$id" && break; sleep 0.1; done
sleep 0.5
kill -TERM "$rpid"; wait "$rpid"; rc=$?
check_eq "a healthy journal's record ends 0" "$rc" 0
check "the healthy journal has all of stdout, byte for byte" same_stream "$J2" "$id" 1 "$d2/$id.1"
check "the healthy journal has all of stderr, byte for byte" same_stream "$J2" "$id" 2 "$d2/$id.2"
check_eq "doctor: a healthy journal passes quick_check" \
	"$("$BPFSTDERR" doctor --json --journal "$J2" | jq -r .journal.quick_check)" ok

# -- 2. a full file system stops the reads, and they resume ----------------
MNT=$(mktmp)
if mount -t tmpfs -o size=1M,mode=0700 bpfstderr-test "$MNT"; then
	J=$MNT/j.db; d3=$(mktmp)
	shim "$d3" record -d 0.2 --journal "$J" 2> "$t/full-rec.err" & rpid=$!
	# both past their set-up (asleep after a first cycle) before the
	# file system fills: opening a journal needs room
	check "full: record started" wait_asleep "$rpid"
	shim "$d3" follow -p "$id" --json --journal "$J" > "$t/full-follow" 2> "$t/full-follow.err" & fpid=$!
	check "full: follow started" wait_asleep "$fpid"
	# fill it, leaving 48 KiB: less than one read needs
	dd if=/dev/zero of="$MNT/filler" bs=4k status=none 2>/dev/null
	truncate -s -48K "$MNT/filler"
	free=$(df -B1 --output=avail "$MNT" | tail -n 1)
	make_fixtures "$d3" "$id" full
	sleep 3		# a window for reads that must not come
	# record's notice comes at its next cycle: counted once it is there
	wait_until 60 grep -q 'no room on its file system' "$t/full-rec.err"
	check_eq "full: nothing was read while the journal had no room ($free bytes free)" \
		"$(offsets "$d3" "$id")" "0 0"
	check "full: record is still running" kill -0 "$rpid"
	check "full: follow is still running" kill -0 "$fpid"
	check_eq "full: record said so once" "$(grep -c 'no room on its file system' "$t/full-rec.err")" 1
	check_eq "doctor --json: the journal is full" \
		"$("$BPFSTDERR" doctor --json --journal "$J" | jq -r .journal.full)" true
	# top too sees the fixtures' bytes accounted (the shim), as a kernel's
	(shim "$d3" top -b -n 2 -d 0.2 --journal "$J") > /dev/null 2> "$t/full-top.err"; rc=$?
	check_eq "full: top -b ends 0" "$rc" 0
	check_eq "full: top -b says once that it stopped reading" \
		"$(grep -c 'no room on its file system' "$t/full-top.err")" 1
	S=bpfstderr-faults-$$
	tmux new-session -d -s "$S" -x 250 -y 30 "LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d3 \
		ASAN_OPTIONS=\${ASAN_OPTIONS:-}:verify_asan_link_order=0 $BPFSTDERR top --journal $J; sleep 60"
	wait_for "no room" > /dev/null
	check "full: top's status line says that it stopped reading (tmux)" \
		bash -c "tmux capture-pane -p -t '$S' | sed -n 2p | grep -q 'no room on its file system'"
	keys q
	tmux kill-session -t "$S" 2>/dev/null
	check_eq "full: still nothing read" "$(offsets "$d3" "$id")" "0 0"
	rm -f "$MNT/filler"
	for i in $(seq 200); do served "$d3" "$id" && break; sleep 0.1; done
	check "full: once there is room, everything is read" served "$d3" "$id"
	sleep 1
	stop_holder H	# follow ends when its program is gone
	wait "$fpid"; frc=$?
	sleep 0.5
	kill -TERM "$rpid"; wait "$rpid"; rc=$?
	check_eq "full: record and follow end 0" "$rc $frc" "0 0"
	check "full: record said when reads resumed" grep -q "room again: reading streams" "$t/full-rec.err"
	check_eq "full: nothing else on record's stderr" \
		"$(grep -v 'no room on its file system\|room again' "$t/full-rec.err")" ""
	check "full: the journal has all of stdout, byte for byte" same_stream "$J" "$id" 1 "$d3/$id.1"
	check "full: the journal has all of stderr, byte for byte" same_stream "$J" "$id" 2 "$d3/$id.2"
	res=$(python3 tests/e2e/reconstruct.py "$t/full-follow" "$id" "$d3/$id.1" "$d3/$id.2")
	check_eq "full: follow printed every byte once, in order" "$res" ""
	check_eq "full: the journal passes quick_check (Python)" \
		"$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('pragma quick_check').fetchone()[0])" "$J")" ok
	umount "$MNT" && MNT=""
else
	fail "mount a 1 MiB tmpfs"
fi

# -- 2a. a full file system at the start: one line that says what it is
# (no space left on device, the journal, what needs the room), exit 5,
# nothing read. SQLite's own words were "disk I/O error" (an existing
# journal: its -shm file cannot grow) and "database or disk is full" (a
# new one) ----------------------------------------------------------------
# start_full NAME JOURNAL: record started on JOURNAL, the shim serving d4
start_full() {
	(shim "$d4" record -d 0.2 --journal "$2") 2> "$t/$1.err"
	check_eq "full at the start ($1): record exits 5" "$?" 5
	check "... saying so in one line: no space left on device, the journal, what needs room" \
		grep -q "^bpfstderr: journal $2: No space left on device ([0-9]* bytes free): the journal's pages, its write-ahead log (-wal) and its shared memory (-shm) need room on its file system" "$t/$1.err"
	check_eq "... and nothing else" "$(wc -l < "$t/$1.err")" 1
	check_eq "... having read nothing" "$(offsets "$d4" "$id")" "0 0"
}
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
MNT=$(mktmp)
if mount -t tmpfs -o size=1M,mode=0700 bpfstderr-test "$MNT"; then
	d4=$(mktmp)
	(shim "$d4" report --journal "$MNT/j.db" > /dev/null 2>&1)
	check "full at the start: a journal made while there was room" test -s "$MNT/j.db"
	dd if=/dev/zero of="$MNT/filler" bs=4k status=none 2>/dev/null
	make_fixtures "$d4" "$id" start
	start_full existing "$MNT/j.db"
	rm -f "$MNT"/j.db*
	dd if=/dev/zero of="$MNT/filler2" bs=4k status=none 2>/dev/null
	start_full new "$MNT/new.db"
	umount "$MNT" && MNT=""
else
	fail "mount a 1 MiB tmpfs"
fi
stop_holder H

# -- 2b. the file system fills up in the middle of a cycle's reads: the
# commit fails, the bytes are kept and committed when there is room; at
# exit without room they go to a spill file the error names ---------------
fill_mid_read() {	# DIR: fill $MNT as soon as record starts reading (within 60 s)
	local end=$((SECONDS + 60))
	until [ -s "$1/$id.2.off" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.01; done
	dd if=/dev/zero of="$MNT/filler" bs=4k status=none 2>/dev/null
}

tail_bytes() {	# DB ID STREAM: the journal's held tail of the stream
	python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
r = c.execute('select q.bytes from pending q join progs p on p.row = q.prog where p.id = ? and q.stream = ?',
              (int(sys.argv[2]), int(sys.argv[3]))).fetchone()
sys.stdout.buffer.write(bytes(r[0]) if r else b'')" "$@"
}

start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
for run in retry spill; do
	MNT=$(mktmp)
	mount -t tmpfs -o size=1M,mode=0700 bpfstderr-test "$MNT" || { fail "mount a 1 MiB tmpfs"; MNT=""; break; }
		J=$MNT/$run.db; d5=$(mktmp)
		: > "$d5/$id.1"
		TMPDIR=$t CHUNK=4 shim "$d5" record -d 0.2 --journal "$J" 2> "$t/$run.err" & rpid=$!
		wait_asleep "$rpid"	# past its set-up: the reads come after the fill
		seq -f "$run line %06g of a stream read 4 bytes at a time" 1 3000 > "$d5/$id.2"
		fixture_added H
		fill_mid_read "$d5"
		# the commit after the read fails; slow builds (ASan) take longer
		# than a cycle to come to it
		for i in $(seq 300); do grep -q "no room on its file system" "$t/$run.err" && break; sleep 0.1; done
		sleep 0.5
		off=$(offsets "$d5" "$id")
		have=$(python3 tests/e2e/journal_check.py stream "$J" "$id" 2 | wc -c)
		check "mid-read fill ($run): the commit failed, the journal lacks what was read ($have of ${off#* } bytes)" \
			test "${off#* }" -gt 0 -a "$have" -lt "${off#* }"
		check "mid-read fill ($run): record said it has no room" grep -q "no room on its file system" "$t/$run.err"
		check "mid-read fill ($run): record is still running" kill -0 "$rpid"
		if [ $run = retry ]; then
			rm -f "$MNT/filler"
			for i in $(seq 300); do served "$d5" "$id" && break; sleep 0.1; done
			sleep 0.5
			kill -TERM "$rpid"; wait "$rpid"; rc=$?
			check_eq "mid-read fill (retry): record ends 0" "$rc" 0
			check "mid-read fill (retry): the journal has every byte, in order" \
				same_stream "$J" "$id" 2 "$d5/$id.2"
		else
			kill -TERM "$rpid"; wait "$rpid"; rc=$?
			check_eq "mid-read fill (spill): record ends 5" "$rc" 5
			sp=$(grep -o "are in [^ ]*bpfstderr-spill-[0-9-]*" "$t/spill.err" | cut -d' ' -f3)
			check_eq "mid-read fill (spill): the spill file is in \$TMPDIR (the journal's file system is full)" \
				"$(dirname "${sp:-/x}")" "$t"
			check "mid-read fill (spill): the error names the spill file ($(tail -n 1 "$t/spill.err"))" \
				test -n "$sp" -a -f "${sp:-/}"
			rm -f "$MNT/filler"
			# what was served = the journal's events and tail, then the spill
			{ python3 tests/e2e/journal_check.py stream "$J" "$id" 2; tail_bytes "$J" "$id" 2
			  python3 -c "
import re, sys
data = open(sys.argv[1], 'rb').read()
m = re.match(rb'bpfstderr spill: prog [0-9]+ tag [0-9a-f]+ load_time_ns [0-9]+ stream stderr bytes ([0-9]+)\\n', data)
n = int(m.group(1))
sys.stdout.buffer.write(data[m.end():m.end() + n])" "${sp:-/dev/null}"; } > "$t/got"
			check "mid-read fill (spill): journal + spill file = what the shim served, byte for byte" \
				cmp -s "$t/got" <(head -c "${off#* }" "$d5/$id.2")
			check_eq "mid-read fill (spill): the spill file is 0600" "$(stat -c %a "${sp:-/dev/null}")" 600
		fi
	umount "$MNT" && MNT=""
done

# -- 2c. the same fill after commits made the journal's WAL large: its
# pages (16 KiB in a new journal) fill the small file system faster than
# the bytes read, and a checkpoint needs room to grow the database; a
# WAL let grow into the last of the room never checkpoints again and
# record never reads again (issue 38) -------------------------------------
journal_has() {	# DB ID STREAM FIXTURE: events and held tail = the fixture
	cmp -s <(python3 tests/e2e/journal_check.py stream "$1" "$2" "$3"; tail_bytes "$1" "$2" "$3") "$4"
}

MNT=$(mktmp)
if mount -t tmpfs -o size=1M,mode=0700 bpfstderr-test "$MNT"; then
	J=$MNT/wal.db; d6=$(mktmp)
	: > "$d6/$id.1"
	CHUNK=64 shim "$d6" record -d 0.2 --journal "$J" 2> "$t/wal.err" & rpid=$!
	wait_asleep "$rpid"
	seq -f "wal stdout %06g, committed first" 1 600 > "$d6/$id.1"
	fixture_added H
	for i in $(seq 600); do journal_has "$J" "$id" 1 "$d6/$id.1" && break; sleep 0.1; done
	check "WAL grown: stdout committed first" journal_has "$J" "$id" 1 "$d6/$id.1"
	seq -f "wal line %06g of a stream read 64 bytes at a time" 1 3000 > "$d6/$id.2"
	fixture_added H
	fill_mid_read "$d6"
	for i in $(seq 300); do grep -q "no room on its file system" "$t/wal.err" && break; sleep 0.1; done
	rm -f "$MNT/filler"
	for i in $(seq 600); do served "$d6" "$id" && break; sleep 0.1; done
	check "WAL grown: record read every byte once there was room ($(offsets "$d6" "$id"))" served "$d6" "$id"
	kill -TERM "$rpid"; wait "$rpid"; rc=$?
	check_eq "WAL grown: record ends 0" "$rc" 0
	check "WAL grown: the journal has every byte, in order" journal_has "$J" "$id" 2 "$d6/$id.2"
	umount "$MNT" && MNT=""
else
	fail "mount a 1 MiB tmpfs"; MNT=""
fi

# -- 3. the path: no links, no devices, 0600 ------------------------------
p=$(mktmp)
: > "$p/target"; chmod 644 "$p/target"; ln -s target "$p/link"
err=$("$BPFSTDERR" report --journal "$p/link" 2>&1 >/dev/null); rc=$?
check_eq "symlink: exit 5" "$rc" 5
check "symlink: says so ($err)" grep -q "is a symbolic link" <<<"$err"
check_eq "symlink: its target is untouched" "$(stat -c '%a %s' "$p/target")" "644 0"
ln -s nowhere "$p/dangling"
"$BPFSTDERR" report --journal "$p/dangling" > /dev/null 2>&1; rc=$?
check_eq "dangling symlink: exit 5" "$rc" 5
check "dangling symlink: no target created" test ! -e "$p/nowhere"
mknod "$p/nulldev" c 1 3
"$BPFSTDERR" report --journal "$p/nulldev" > /dev/null 2> "$p/err"; rc=$?
check_eq "a device: exit 5" "$rc" 5
check "a device: says it is not a regular file" grep -q "not a regular file" "$p/err"
check_eq "a device: nothing created beside it" "$(ls "$p" | grep -c nulldev)" 1
had=$(test -e /dev/null-journal && echo yes || echo no)
"$BPFSTDERR" report --journal /dev/null > /dev/null 2>&1; rc=$?
check_eq "/dev/null: exit 5" "$rc" 5
[ "$had" = no ] && check "/dev/null: no /dev/null-journal" test ! -e /dev/null-journal
"$BPFSTDERR" report --journal "$p/loose.db" > /dev/null 2>&1
check_eq "a new journal is 0600" "$(stat -c %a "$p/loose.db")" 600
chmod 644 "$p/loose.db"
check "doctor: a journal readable by others is shown" \
	grep -q "mode 0644: READABLE BY OTHERS" <("$BPFSTDERR" doctor --journal "$p/loose.db")
err=$("$BPFSTDERR" report --journal "$p/loose.db" 2>&1 >/dev/null)
check_eq "a 0644 journal is made 0600" "$(stat -c %a "$p/loose.db")" 600
check "... and bpfstderr says so ($err)" grep -q "readable by others (mode 0644): made it 0600" <<<"$err"
err=$(BPFSTDERR_JOURNAL= "$BPFSTDERR" report 2>&1 >/dev/null); rc=$?
check_eq "an empty BPFSTDERR_JOURNAL: exit 2" "$rc" 2
check "an empty BPFSTDERR_JOURNAL: says so" grep -q "BPFSTDERR_JOURNAL is empty" <<<"$err"
check "an empty BPFSTDERR_JOURNAL: doctor says so" \
	grep -q "REFUSED: BPFSTDERR_JOURNAL is empty" <(BPFSTDERR_JOURNAL= "$BPFSTDERR" doctor)
if chattr +i "$p/loose.db" 2>/dev/null; then
	IMMUTABLE=$p/loose.db
	err=$("$BPFSTDERR" report --journal "$p/loose.db" 2>&1 >/dev/null); rc=$?
	check_eq "an immutable journal: exit 5" "$rc" 5
	check "an immutable journal: says so ($err)" grep -q "the file is immutable (chattr -i)" <<<"$err"
	chattr -i "$p/loose.db"; IMMUTABLE=""
else
	echo "# chattr +i not supported under $p: immutable journal not tested"
fi

# -- 4. one large drain does not leave a large WAL --------------------------
stop_holder H
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
d4=$(mktmp); J=$t/big.db
seq -f "line %09g of a large drain, padded to make it longer than most" 1 150000 > "$d4/$id.2"
: > "$d4/$id.1"
CHUNK=65536 shim "$d4" record -d 0.5 --max-size 1M --journal "$J" 2> "$t/big.err" & rpid=$!
for i in $(seq 300); do served "$d4" "$id" && break; sleep 0.1; done
# served is when the reader had the bytes, not when record committed them
# (an ASan build commits 10 MB seconds later): the WAL grows past 1 MiB
# while the drain's transaction is written; wait (up to 60 s) until it has
# and has come back; a record that never truncates it keeps it until exit
big=0
for i in $(seq 600); do
	wal=$(stat -c %s "$J-wal" 2>/dev/null || echo 0)
	[ "$wal" -gt 1048576 ] && big=1
	[ "$big" = 1 ] && [ "$wal" -le 1048576 ] && break
	sleep 0.1
done
check "a $(stat -c %s "$d4/$id.2")-byte drain leaves a WAL of at most 1 MiB ($wal bytes)" \
	test "$wal" -le 1048576
kill -TERM "$rpid"; wait "$rpid"; rc=$?
check_eq "the large drain's record ends 0" "$rc" 0
stop_holder H
finish
