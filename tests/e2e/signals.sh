# Every ending signal ends record and follow the same way: one last drain,
# then exit 0; even with a long interval (-d 3600), a signal that comes
# while they sleep or drain ends them at once, not after the interval.
# The last drain is checked against the bytes the stream served.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)

events() {	# DB: the messages the journal holds for the writer, one a line
	python3 - "$1" "$id" <<'PY'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for (t,) in con.execute("SELECT e.text FROM events e JOIN progs p ON p.row = e.prog "
                        "WHERE p.id = ? ORDER BY e.seq", (int(sys.argv[2]),)):
    print(t.decode() if isinstance(t, bytes) else t)
PY
}

monotonic_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

# ends PID: waits up to 60 s (the interval is an hour) for it to end; its
# exit status in $rc, or "running" (then it is killed)
ends() {
	local i w
	for i in $(seq 600); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$1" 2>/dev/null; then
		rc=running
		kill -KILL "$1"
	fi
	wait "$1"
	w=$?
	[ "$rc" = running ] || rc=$w
}

for cmd in record follow; do
	for sig in TERM INT HUP QUIT; do
		d=$(mktmp)
		: > "$d/$id.1"
		args=(record --journal "$d/j.db" -d 3600)
		[ "$cmd" = follow ] && args=(follow --journal "$d/j.db" -p "$id" -d 3600)
		LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_LOG=$d/log \
			ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
			"$BPFSTDERR" "${args[@]}" > "$d/out" 2> "$d/err" &
		pid=$!
		# asleep in ppoll: its first cycle (which found nothing) is
		# done, so the bytes below can only be read after the signal
		check "$cmd, SIG$sig: asleep after its first cycle" wait_asleep "$pid"
		printf 'written while it sleeps (%s)\n' "$sig" > "$d/$id.1"
		fixture_added H
		sent=$(monotonic_ns)
		kill -"$sig" "$pid"
		rc=; ends "$pid"
		check_eq "$cmd -d 3600, SIG$sig: ends at once with exit 0" "$rc" 0
		check_eq "$cmd, SIG$sig: the last drain kept what was written" \
			"$(events "$d/j.db")" "written while it sleeps ($sig)"
		# the shim's log: the bytes were read after the signal was sent
		check "$cmd, SIG$sig: ... read by the drain after the signal" \
			awk -v t="$sent" '$5 > 0 && $6 > t { found = 1 } END { exit !found }' "$d/log"
		check_eq "$cmd, SIG$sig: nothing on stderr" "$(cat "$d/err")" ""
	done
done
# A reader that does not read: follow's output fills the pipe and waits
# (in memory, follow cycling on), and an ending signal still ends it (the
# bytes it read are in the journal).
d=$(mktmp)
python3 -c 'import sys; sys.stdout.write("".join("blocked line %06d\n" % i for i in range(100000)))' \
	> "$d/$id.1"
mkfifo "$d/fifo"
exec {hold}<>"$d/fifo"	# open for reading, never read
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_LOG=$d/log \
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" follow --journal "$d/j.db" -p "$id" > "$d/fifo" 2> "$d/err" &
pid=$!
no_room() {	# the pipe takes no more: no POLLOUT on our own (read-write) end of it
	python3 -c 'import select, sys
p = select.poll(); p.register(int(sys.argv[1]), select.POLLOUT)
sys.exit(1 if p.poll(0) else 0)' "$hold"
}
pipe_full() { no_room; }
check "follow into a full pipe: the pipe full" wait_until 60 pipe_full
kill -TERM "$pid"
rc=; ends "$pid"
exec {hold}>&-
check_eq "follow into a full pipe, SIGTERM: ends at once with exit 0" "$rc" 0
check_eq "... and says nothing" "$(cat "$d/err")" ""
stop_holder H
finish
