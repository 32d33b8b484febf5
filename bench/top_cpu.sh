#!/usr/bin/env bash
# CPU used by the interactive `bpfstderr top -d 1` from second 4 on, over
# SECONDS (default 30), as a share of
# one core: with N idle programs (default 1000), then with an injected
# fault stream (100 reports a second appended to a fixture that the test
# shim serves for one real program). Needs root and tmux. Seconds in which
# programs were loaded or unloaded (by anyone: other tests on a shared
# machine) make top walk every program; its CPU in the quiet seconds and
# in those is shown apart too.
# usage: bench/top_cpu.sh [N] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000} secs=${2:-30}
make -s tests-build build/bench/drain_cycle
dir=$(mktemp -d)
sess=bench-top-$$	# others may run this bench, or their own bpfstderr
cleanup() { tmux kill-session -t "$sess" 2>/dev/null || true; kill "${holder:-}" "${feeder:-}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

. bench/lib.sh
hold_idle "$n"

measure() {	# measure LABEL: CPU share of top over $secs
	local pid t0 t1 i t
	tmux new-session -d -s "$sess" -x 160 -y 40 \
		"BPFSTDERR_JOURNAL=$dir/journal.db LD_PRELOAD=build/tests/libstreamshim.so BPFSTDERR_SHIM_DIR=$dir exec build/bpfstderr top -d 1"
	sleep 4
	pid=$(tmux display-message -p -t "$sess" '#{pane_pid}')	# this top, not another
	# Programs others load or unload make top walk every program: top's
	# CPU second by second, beside whether programs came or went in it.
	coproc CHURN { exec build/bench/drain_cycle churn "$secs"; }
	t0=$(ticks "$pid"); t=$t0
	: > "$dir/seconds"
	for ((i = 0; i < secs; i++)); do
		read -r busy <&"${CHURN[0]}" || busy=-
		t1=$(ticks "$pid")
		echo "$busy $((t1 - t))" >> "$dir/seconds"
		t=$t1
	done
	tmux kill-session -t "$sess"
	pct=$(awk -v d=$((t1 - t0)) -v s="$secs" 'BEGIN { printf "%.3f", d / 1e6 / s * 100 }')
	printf '%-44s %6.3f%% of one core (%d ms in %d s)\n' "$1" "$pct" $(((t1 - t0) / 1000)) "$secs"
	# quiet: no program came or went in the second or the one before it
	# (top's tick and the second need not line up)
	awk 'NR > 1 && $1 == 0 && prev == 0 { q++; qt += $2 } NR > 1 && ($1 == 1 || prev == 1) { b++; bt += $2 }
	     { prev = $1 }
	     END { printf "%-44s %s%% of one core in %d quiet seconds, %s%% in %d with programs loaded or unloaded\n", "",
		   q ? sprintf("%.3f", qt / q / 1e4) : "-", q, b ? sprintf("%.3f", bt / b / 1e4) : "-", b }' "$dir/seconds"
	quiet=$(awk 'NR > 1 && $1 == 0 && prev == 0 { q++; qt += $2 } { prev = $1 }
		     END { printf "%.3f", q ? qt / q / 1e4 : 0 }' "$dir/seconds")
}

: > "$dir/$id.2"
measure "top -d 1, $((n + 1)) programs, idle"
ours=$pct
# the alternative: a naive reader (every program opened, both streams
# read) once a second, over the same programs and as long
naive=$(build/bench/drain_cycle naive-1hz "$secs")
awk -v n="$naive" -v o="$ours" -v q="$quiet" -v p=$((n + 1)) 'BEGIN { printf "%-44s %6.3f%% of one core; naive/top = %.1fx, naive/top in quiet seconds = %.1fx\n", "naive open+read at 1 Hz, " p " programs", n, (o > 0 ? n / o : 0), (q > 0 ? n / q : 0) }'
# Reports appended every second: top drains and parses them as they come.
( while :; do for i in $(seq 100); do cat tests/fixtures/upstream-6.18.txt; done >> "$dir/$id.2"; sleep 1; done ) &
feeder=$!
measure "top -d 1, $((n + 1)) programs, ~600 reports/s"
# so that the number above is of reports read, not of reports offered
echo "served to top: $(( $(cat "$dir/$id.2.off" 2>/dev/null || echo 0) / $(stat -c %s tests/fixtures/upstream-6.18.txt) * 6 )) reports"
