# Inside a lab guest (tests/vm/lab.sh), where stream writes work: what
# bpfstderr calls losing reports is what the kernel refused, nothing else.
# - top's header is the snapshot its rows show: its faults, messages and
#   losing counts are the sums of its rows, and on a kernel that refuses
#   nothing (the demo, a fault a second) no program is losing reports.
# - a stream that a burst of faults filled (no reader running) is found
#   full by the drain that empties it: report says so (text and JSON, with
#   the time), from the journal too, after the bytes were read; so does a
#   follow that drained it (and a report after it, through the journal),
#   and record's metrics.
# Oracles: the pinned capacity iterator (bpftool), the kernel's own report
# size and refusals (a burst read back by a raw BPF_PROG_STREAM_READ_BY_FD
# reader: what full means on the kernel the test runs on).
. tests/lib.sh

echo "# kernel $(uname -r)"
out=$(mktmp)

# --- top: header and rows, one snapshot ----------------------------------
timeout 120 "$BPFSTDERR" top --demo -b -n 4 -d 1 --no-journal > "$out/top.txt" 2> "$out/top.err"
check_eq "top --demo -b exits 0" "$?" 0
# Each snapshot: a header line, the column names, rows, a blank line.
# Columns: ID TYPE NAME OWNER OUT ERR FAULTS ... SATURATION (last).
awk '
/^[0-9]+ programs, / { split($0, h, /[ ,;]+/); hf = h[3]; hm = h[5]; hl = h[7]; n++; next }
/^ *ID / { sf = 0; sm = 0; sl = 0; next }
/^$/ { if (n) printf "%d %d %d %d %d %d %d\n", n, hf, sf, hm, sm, hl, sl; next }
{ sm += $5 + $6; sf += $7; if ($0 ~ /(leaked [0-9]+B|full|dropped [0-9]+|refused [0-9]+) *$/) sl++ }
' "$out/top.txt" > "$out/snaps"
check "top -b: four snapshots" test "$(wc -l < "$out/snaps")" -eq 4
while read -r n hf sf hm sm hl sl; do
	check_eq "snapshot $n: header's faults are its rows' ($hf, rows $sf)" "$hf" "$sf"
	check_eq "snapshot $n: header's messages are its rows' ($hm, rows $sm)" "$hm" "$sm"
	check_eq "snapshot $n: header's losing reports are its rows' ($hl, rows $sl)" "$hl" "$sl"
	check_eq "snapshot $n: nothing refused, no program losing reports" "$hl" 0
done < "$out/snaps"

# --- a full stream: reports refused, found at the drain --------------------
start_holder H demo || { fail "holdprog demo"; finish; exit; }
id=$(prog_id H demo_deadlock)
if [ -z "$id" ]; then
	skip "full stream" "no demo_deadlock here ($H_REFUSED)"
	finish
	exit
fi
pin_capacity "$out/pin" || fail "pin the capacity iterator"
# What full is on this kernel, from its own bytes (the raw reader): a
# report is charged whole, so a burst fills the stream until the room
# left is no more than a report, and how long a report is differs by
# kernel (6.18: ~573 B each; 6.17: 615 B growing to ~1.6 KB with its
# held-lock table). 200 cannot all fit in 100000 B.
check_eq "holdprog: 200 deadlocks" "$(holder_cmd H "fault deadlock 200")" "ran 200"
cap=$(capacity "$id")
python3 tests/vm/raw_read.py "$id" 2 > "$out/raw.bin"
kept=$(grep -c '^ERROR: AA or ABBA deadlock' "$out/raw.bin")
longest=$(LC_ALL=C awk '/^ERROR: / { if (n > m) m = n; n = 0 } { n += length($0) + 1 }
	END { if (n > m) m = n; print m + 0 }' "$out/raw.bin")
check_eq "raw read: every byte accounted ($cap B)" "$(wc -c < "$out/raw.bin")" "${cap:-0}"
check "raw read: the kernel refused reports (200 deadlocks, $kept reports kept)" test "$kept" -lt 200
check "... the room left ($((100000 - ${cap:-0})) B) is no more than its longest report ($longest B)" \
	test $((100000 - ${cap:-0})) -le "$longest"
[ "$longest" -gt 0 ] || longest=1	# nothing read: failed above
full=$((100000 - longest))
check_eq "holdprog: 200 deadlocks again" "$(holder_cmd H "fault deadlock 200")" "ran 200"
cap=$(capacity "$id")
check "the iterator: demo_deadlock's stderr is full again ($cap B, at least $full)" test "${cap:-0}" -ge "$full"
j=$out/journal.db
before=$(date +%s)
"$BPFSTDERR" report --json --journal "$j" > "$out/report.json" 2> "$out/report.err"
check "report --json: exit 1 (faults)" test "$?" -eq 1
check "the drain emptied it (iterator: $(capacity "$id") B)" test "$(capacity "$id")" -lt 1024
prog() { jq --arg n demo_deadlock '.programs[] | select(.name == $n)' "$1"; }
check_eq "report --json: its stderr was full at the drain" \
	"$(prog "$out/report.json" | jq -r '.streams.stderr.full_at_drain')" true
at=$(prog "$out/report.json" | jq -r '.streams.stderr.full_at // empty')
check "report --json: when it was found full ($at)" test -n "$at"
sec=$(date -d "$at" +%s 2>/dev/null)
check "... a time from this run ($at)" test -n "$sec" -a "${sec:-0}" -ge "$before" -a "${sec:-0}" -le "$(date +%s)"
check_eq "report --json: it is losing reports" "$(prog "$out/report.json" | jq -r .reports_lost)" true
check "report --json: the summary counts it" \
	test "$(jq -r .summary.programs_losing_reports "$out/report.json")" -ge 1
check_eq "report --json: full streams in the summary" \
	"$(jq -r .summary.streams_full_at_drain "$out/report.json")" 1
n=$(prog "$out/report.json" | jq -r '.faults_total // empty')
"$BPFSTDERR" report --journal "$j" > "$out/report.txt" 2>&1
check "report (text, from the journal): stderr FULL when drained" \
	grep -qE 'stderr: .*full when drained at [0-9]' "$out/report.txt"
"$BPFSTDERR" report --json --journal "$j" > "$out/again.json" 2>/dev/null
check_eq "report --json again (nothing new to drain): still full at the drain" \
	"$(prog "$out/again.json" | jq -r '.streams.stderr.full_at_drain')" true
check_eq "... still losing reports" "$(prog "$out/again.json" | jq -r .reports_lost)" true

# follow running all along (polling every 30 s: its last drain, at
# SIGINT, is the one that finds the stream full), then report from the
# same journal: nothing left to drain, the journal says it was full.
check_eq "holdprog: 200 deadlocks more" "$(holder_cmd H "fault deadlock 200")" "ran 200"
cap=$(capacity "$id")
j2=$out/follow.db
"$BPFSTDERR" follow -p "$id" --json -d 30 --journal "$j2" > "$out/follow.json" 2> "$out/follow.err" &
fpid=$!
for i in $(seq 100); do [ -e "$j2-wal" ] && break; sleep 0.1; done
sleep 1
kill -INT "$fpid"; wait "$fpid"
check_eq "follow: exit 0 at SIGINT" "$?" 0
check_eq "follow --json: one stream_full event, stderr" \
	"$(jq -r 'select(.kind == "stream_full") | .stream' "$out/follow.json" | paste -sd' ')" stderr
# as many as the bytes held, none longer than this kernel's longest
n=$(jq -r 'select(.kind == "fault") | .fault.kind' "$out/follow.json" | grep -c lock_deadlock)
check "follow --json: the reports it read follow it ($n, $cap B held: at least $((cap / longest)))" \
	test "$n" -ge $((cap / longest)) -a "$n" -gt 0
check "follow --json: valid NDJSON" jq -e . "$out/follow.json" > /dev/null
"$BPFSTDERR" report --json --journal "$j2" > "$out/after-follow.json" 2>/dev/null
check_eq "report after follow drained it: full at the drain" \
	"$(prog "$out/after-follow.json" | jq -r '.streams.stderr.full_at_drain')" true
check_eq "report after follow drained it: losing reports" \
	"$(prog "$out/after-follow.json" | jq -r .reports_lost)" true

# record's metrics: its first drain finds the stream full.
check_eq "holdprog: 200 deadlocks more" "$(holder_cmd H "fault deadlock 200")" "ran 200"
port=9417
"$BPFSTDERR" record -d 30 --journal "$out/rec.db" --metrics-address "127.0.0.1:$port" \
	> /dev/null 2> "$out/rec.err" &
rpid=$!
# the scrape that has it (or the last one, after 120 s: an emulated
# guest is slow to start record)
found_full() {
	curl -sf "http://127.0.0.1:$port/metrics" > "$out/metrics.txt" 2>/dev/null &&
		grep -q "^bpfstderr_stream_full_at_drain_timestamp_seconds{.*prog_id=\"$id\".*stream=\"stderr\"} [1-9]" \
			"$out/metrics.txt"
}
wait_until 120 found_full
kill -INT "$rpid"; wait "$rpid"
grep -q '^bpfstderr_programs ' "$out/metrics.txt" 2>/dev/null ||
	sed 's/^/# record: /' "$out/rec.err"
check "metrics: demo_deadlock's stderr found full, with the time" \
	grep -q "^bpfstderr_stream_full_at_drain_timestamp_seconds{.*prog_id=\"$id\".*stream=\"stderr\"} [1-9]" \
	"$out/metrics.txt"
check "metrics: a program losing reports" grep -qE '^bpfstderr_programs_losing_reports [1-9]' "$out/metrics.txt"
check_eq "metrics: it lost no bytes a read to the end left (it was read whole)" \
	"$(grep "^bpfstderr_stream_lost_bytes{.*prog_id=\"$id\".*stream=\"stderr\"}" "$out/metrics.txt" | awk '{ print $2 }')" 0

rm -f "$CAPACITY_PIN"; umount "$out/pin"
stop_holder H

# unloaded since: the journal still says its stderr was found full
"$BPFSTDERR" report --json --journal "$j2" > "$out/unloaded.json" 2>/dev/null
check_eq "report, program unloaded since: marked unloaded" "$(prog "$out/unloaded.json" | jq -r .unloaded)" true
check_eq "report, program unloaded since: still losing reports (found full)" \
	"$(prog "$out/unloaded.json" | jq -r .reports_lost)" true
"$BPFSTDERR" report --journal "$j2" > "$out/unloaded.txt" 2>&1
check "report (text), program unloaded since: stderr full when drained" \
	grep -qE 'stderr: full when drained at [0-9]' "$out/unloaded.txt"
# an unloaded program's streams are null in JSON (capacity unknown): its
# found-full streams are the text's lines
check_eq "report, program unloaded since: the JSON summary counts the streams the programs were found full in" \
	"$(jq '.summary.streams_full_at_drain' "$out/unloaded.json")" \
	"$(grep -cE ': full when drained at [0-9]' "$out/unloaded.txt")"
finish
