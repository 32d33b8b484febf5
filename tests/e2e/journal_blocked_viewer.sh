# A viewer whose output blocks (`follow | less`, the pager held) never
# holds the journal's read snapshot while it waits: record, sharing the
# journal, goes on committing, and its checkpoints bring the WAL back to
# its limit. Before journal__read handed out whole batches, the view's
# open statement pinned the WAL, which grew with everything record kept
# (to a full disk, in a long stall): here 60,000 lines committed while
# the viewer waits. Nor does the viewer wait in write(2): it goes on
# cycling (its output waits for room, its events in the journal), so the
# read rights and read-ahead it holds never keep streams from record; with
# record gone, it drains and keeps new lines itself. Before, it sat in
# write(2), and the journal had none of them. Once the viewer reads again,
# follow prints every event. Oracles: the fixture's bytes (reconstruct.py),
# the WAL's size on disk (stat), the pipe full (FIONREAD), follow's
# syscall (/proc).
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)
d=$(mktmp)
J=$BPFSTDERR_JOURNAL

shimmed() {	# CMD...: with the shim serving $d (exec: CMD & gives CMD's pid)
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_CHUNK=65536 \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 exec "$@"
}

start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
mkfifo "$out/pipe"
# the pager: holds the pipe open and reads nothing until told
exec {pager}<> "$out/pipe"
shimmed "$BPFSTDERR" follow -p "$id" --json > "$out/pipe" 2> "$out/follow.err" {pager}<&- & fpid=$!
shimmed "$BPFSTDERR" record -d 0.2 2> "$out/record.err" {pager}<&- & rpid=$!
check "follow started (asleep after its first cycle)" wait_asleep "$fpid"
check "record started (asleep after its first cycle)" wait_asleep "$rpid"
events() { python3 -c "
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute('select count(*) from events').fetchone()[0])" "$J"; }
kept() { [ "$(events)" = "$1" ]; }
served() { [ "$(cat "$d/$id.1.off" 2>/dev/null)" = "$(stat -c %s "$d/$id.1")" ]; }
no_room() {	# the pipe takes no more: no POLLOUT on our own (read-write) end of it
	python3 -c 'import select, sys
p = select.poll(); p.register(int(sys.argv[1]), select.POLLOUT)
sys.exit(1 if p.poll(0) else 0)' "$pager"
}
blocked() {	# the pipe is full
	no_room
}
not_in_write() {	# follow's main thread is not stuck in write(2)
	[ "$(cut -d' ' -f1 "/proc/$fpid/syscall" 2>/dev/null)" != 1 ]
}
# 10,000 lines on stdout, nothing on stderr: more events than the pipe
# (64 KiB) takes
seq -f 'line %.0f' 1 10000 > "$d/$id.1"
: > "$d/$id.2"
fixture_added H
check "the journal has the first 10000 lines (Python's sqlite3)" wait_until 300 kept 10000
check "follow filled the pipe nobody reads" wait_until 60 blocked
check "... and waits between cycles (ppoll), not in write(2)" wait_asleep "$fpid"
# then 60,000 lines (0.7 MB) more, which record commits while follow
# waits
seq -f 'line %.0f' 10001 70000 >> "$d/$id.1"
fixture_added H
check "the shim served every line" wait_until 300 served
check "record kept all 70000 lines meanwhile" wait_until 300 kept 70000
wal=$(stat -c %s "$J-wal" 2>/dev/null || echo 0)
echo "# the WAL: $wal bytes; the journal: $(stat -c %s "$J") bytes"
check "the WAL was brought back while the viewer was blocked (at most 2 MiB: $wal bytes)" \
	test "$wal" -le $((2 << 20))
check "the pipe still full then" blocked
check "... follow not in write(2)" not_in_write
# record gone: follow, its reader still not reading, drains itself
kill -TERM "$rpid"; wait "$rpid"; rr=$?
seq -f 'line %.0f' 70001 75000 >> "$d/$id.1"
fixture_added H
check "follow, its output blocked, drained and kept 5000 more lines itself" wait_until 300 kept 75000
check "the pipe still full then" blocked
# the pager reads again: follow prints every event
# (a read end of ours for cat before ours goes: with no reader at all for
# a moment, follow's write would fail with EPIPE, and follow end as with
# `| head`)
exec {rd}< "$out/pipe"
cat <&"$rd" > "$out/follow.json" {pager}<&- {rd}<&- & cpid=$!
exec {pager}<&- {rd}<&-
shown() { [ "$(wc -l < "$out/follow.json")" -ge 75000 ]; }
all_shown() {	# else where follow is, for the log
	wait_until 300 shown && return 0
	echo "# follow: $(wc -l < "$out/follow.json") lines out; syscall $(cut -d' ' -f1 "/proc/$fpid/syscall" 2>/dev/null)," \
		"wchan $(cat "/proc/$fpid/wchan" 2>/dev/null), threads $(ls "/proc/$fpid/task" 2>/dev/null | wc -l)"
	return 1
}
check "once read again, follow printed all 75000 lines" all_shown
kill -TERM "$fpid"
wait "$fpid"; rf=$?
wait "$cpid"
check_eq "record and follow end 0" "$rr $rf" "0 0"
check_eq "follow printed every event exactly once, in order" \
	"$(python3 tests/e2e/reconstruct.py "$out/follow.json" "$id" "$d/$id.1" "$d/$id.2" 2>&1)" ""
check_eq "follow said nothing on stderr" "$(cat "$out/follow.err")" ""
stop_holder H
finish
