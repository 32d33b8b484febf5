# bpfstderr record killed with SIGKILL in the middle of its reads, again
# and again, while a program's stderr keeps growing. Afterwards the journal
# holds every byte of every read whose batch was committed, exactly once
# and in order; what is lost is, per kill, the reads of one batch: those
# between the destructive read and the commit that never came. The oracle
# is the shim's own log of what it served to which process, and Python's
# sqlite3 reading the journal.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
KILLS=12
d=$(mktmp)
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
: > "$d/$id.2"

# The program "writes": numbered lines, appended as record runs.
( for i in $(seq 0 999); do
	seq -f "event %07g of the kill test" $((i * 60)) $((i * 60 + 59)) >> "$d/$id.2"
	sleep 0.02
  done ) &
gen=$!

record() {
	BPFSTDERR_SHIM_LOG=$d/log LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_CHUNK=64 \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" record -d 0.2 "$@" 2>> "$d/record.err" &
	rpid=$!
}

killed=()
for k in $(seq "$KILLS"); do
	record
	sleep "0.$((RANDOM % 6 + 2))"
	# kill right after one of its reads: in the middle of a batch
	size=$(stat -c %s "$d/log" 2>/dev/null || echo 0)
	for i in $(seq 2000); do
		[ "$(stat -c %s "$d/log" 2>/dev/null || echo 0)" != "$size" ] && break
		sleep 0.002
	done
	kill -KILL "$rpid"
	wait "$rpid" 2>/dev/null
	killed+=("$rpid")
done
wait "$gen"

# A clean recorder drains the rest; unloading flushes the held end.
record
for i in $(seq 300); do
	[ "$(cat "$d/$id.2.off" 2>/dev/null)" = "$(stat -c %s "$d/$id.2")" ] && break
	sleep 0.1
done
stop_holder H
sleep 1
kill -TERM "$rpid"
wait "$rpid"; rc=$?
check_eq "the last record ends 0 on SIGTERM" "$rc" 0
check_eq "record said nothing on stderr" "$(cat "$d/record.err")" ""

res=$(python3 tests/e2e/journal_check.py kills "$BPFSTDERR_JOURNAL" "$id" 2 "$d/$id.2" "$d/log" "${killed[@]}")
echo "# $(tail -n 1 <<<"$res")"
check "every read is in the journal once and in order, or lost to a kill" \
	test "$(wc -l <<<"$res")" -eq 1
[ "$(wc -l <<<"$res")" -eq 1 ] || head -n 10 <<<"$res"
windows=$(grep -o 'lost_windows [0-9]*' <<<"$res" | cut -d' ' -f2)
check "the kills landed mid-batch and lost something ($windows of $KILLS)" \
	test "${windows:-0}" -ge 1 -a "${windows:-0}" -le "$KILLS"
pause=$(grep -o 'largest_pause_in_window_ms [0-9.]*' <<<"$res" | cut -d' ' -f2)
# A batch's reads come back to back; batches are 200 ms of sleep apart. So
# lost reads with no pause of 200 ms between them are one batch.
check "each kill lost one batch at most (longest pause inside a lost window ${pause} ms < 200 ms)" \
	python3 -c "import sys; sys.exit(not float('${pause:-999}') < 200)"
check_eq "the journal's events are numbered lines, each once, in order" \
	"$(python3 tests/e2e/journal_check.py stream "$BPFSTDERR_JOURNAL" "$id" 2 |
	   grep -ao 'event [0-9]*' | awk '{ if ($2 <= last && NR > 1) bad++; last = $2 } END { print bad + 0 }')" 0
finish
