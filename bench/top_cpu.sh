#!/usr/bin/env bash
# CPU used by the interactive `bpfstderr top -d 1` over 30 s, as a share of
# one core: with N idle programs (default 1000), then with an injected
# fault stream (100 reports a second appended to a fixture that the test
# shim serves for one real program). Needs root and tmux.
# usage: bench/top_cpu.sh [N] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000} secs=${2:-30}
make -s tests-build
dir=$(mktemp -d)
cleanup() { tmux kill-session -t bench-top 2>/dev/null || true; kill "${holder:-}" "${feeder:-}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

mkfifo "$dir/in"
build/tests/holdprog writer idle "$n" < "$dir/in" > "$dir/out" &
holder=$!
exec 3> "$dir/in"
while ! grep -q '^ready' "$dir/out"; do sleep 0.2; done
id=$(awk '/^prog/ { print $2; exit }' "$dir/out")
echo "write 2 1 4" >&3	# bytes accounted on stderr, so top reads it

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
measure() {	# measure LABEL: CPU share of top over $secs
	local pid t0 t1 hz
	tmux new-session -d -s bench-top -x 160 -y 40 \
		"BPFSTDERR_JOURNAL=$dir/journal.db LD_PRELOAD=build/tests/libstreamshim.so BPFSTDERR_SHIM_DIR=$dir build/bpfstderr top -d 1"
	sleep 3
	pid=$(pgrep -x bpfstderr | head -n 1)
	hz=$(getconf CLK_TCK)
	t0=$(ticks "$pid"); sleep "$secs"; t1=$(ticks "$pid")
	tmux kill-session -t bench-top
	awk -v l="$1" -v d=$((t1 - t0)) -v hz="$hz" -v s="$secs" \
		'BEGIN { printf "%-44s %6.2f%% of one core (%d ticks in %d s)\n", l, d / hz / s * 100, d, s }'
}

: > "$dir/$id.2"
measure "top -d 1, $((n + 1)) programs, idle"
# Reports appended every second: top drains and parses them as they come.
( while :; do for i in $(seq 100); do cat tests/fixtures/upstream-6.18.txt; done >> "$dir/$id.2"; sleep 1; done ) &
feeder=$!
measure "top -d 1, $((n + 1)) programs, ~600 reports/s"
# so that the number above is of reports read, not of reports offered
echo "served to top: $(( $(cat "$dir/$id.2.off" 2>/dev/null || echo 0) / $(stat -c %s tests/fixtures/upstream-6.18.txt) * 6 )) reports"
