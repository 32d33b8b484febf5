#!/usr/bin/env bash
# CPU of `bpfstderr record -d 1` with --metrics-address, scraped once a
# second, against record without metrics, in the same run: over N idle
# programs (default 1000) plus one writer, idle, then with ~600 injected
# fault reports a second for the writer (the test shim serves them, as in
# top_cpu.sh). Each measure is SECONDS (default 30) of CPU time of record's
# threads (schedstat), from second 3 on. Needs root.
# usage: bench/record_metrics.sh [N] [SECONDS]
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000} secs=${2:-30}
make -s tests-build
dir=$(mktemp -d)
cleanup() { kill "${holder:-}" "${feeder:-}" "${rec:-}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

. bench/lib.sh
hold_idle "$n"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

measure() {	# measure LABEL [RECORD OPTIONS]: CPU share of record over $secs
	local label=$1 t0 t1 i; shift
	BPFSTDERR_JOURNAL=$dir/journal-$RANDOM.db LD_PRELOAD=build/tests/libstreamshim.so \
		BPFSTDERR_SHIM_DIR=$dir build/bpfstderr record -d 1 "$@" &
	rec=$!
	sleep 3
	t0=$(ticks "$rec")
	for i in $(seq "$secs"); do
		[ $# -gt 0 ] && curl -sf "http://127.0.0.1:$port/metrics" > /dev/null
		sleep 1
	done
	t1=$(ticks "$rec")
	kill -TERM "$rec"; wait "$rec" || true
	pct=$(awk -v d=$((t1 - t0)) -v s="$secs" 'BEGIN { printf "%.3f", d / 1e6 / s * 100 }')
	printf '%-60s %6.3f%% of one core\n' "$label" "$pct"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "with metrics / without = %.2fx\n", (b > 0 ? a / b : 0) }'; }

: > "$dir/$id.2"
measure "record, $((n + 1)) programs, idle"
base=$pct
measure "record --metrics-address, scraped at 1 Hz, idle" --metrics-address "127.0.0.1:$port"
ratio "$pct" "$base"
( while :; do for i in $(seq 100); do cat tests/fixtures/upstream-6.18.txt; done >> "$dir/$id.2"; sleep 1; done ) &
feeder=$!
measure "record, ~600 reports/s" 
base=$pct
measure "record --metrics-address, scraped at 1 Hz, ~600 reports/s" --metrics-address "127.0.0.1:$port"
ratio "$pct" "$base"
