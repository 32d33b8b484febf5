#!/usr/bin/env bash
# What the journal costs, measured in one run, each against a baseline:
#  1. events committed per second, by events per transaction, against
#     appending the same bytes to a file with one fdatasync per batch;
#  2. its share of an idle drain cycle over N programs (drain_cycle);
#  3. its share of the CPU `follow --all` spends on a stream of messages
#     and fault reports, against `follow --all --no-journal` on the same
#     stream (injected by the test shim for one real program).
# Needs root. usage: bench/journal.sh [N] [REPEATS]
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh	# hold_idle
n=${1:-1000} reps=${2:-200}
make -s bench tests-build
dir=$(mktemp -d /var/tmp/bpfstderr-bench.XXXXXX)	# a disk, not tmpfs: fsync is real
cleanup() { kill "${holder:-}" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT

echo "== 1. commits ($(df --output=source,fstype "$dir" | tail -n 1))"
build/bench/journal_commit "$dir" 20000

echo "== 2. idle drain cycle"
build/bench/drain_cycle "$n" 20 "$dir"

echo "== 3. follow --all over an injected stream"
hold_idle 0	# bytes accounted on stderr, so it is read
for i in $(seq "$reps"); do
	cat tests/fixtures/upstream-6.18.txt
	seq -f "message %g between the reports" 500
done > "$dir/fixture"
events=$(( $(grep -c '^ERROR: ' "$dir/fixture") + reps * 500 ))
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
run() {	# run LABEL ARGS...: CPU of one follow that reads the whole fixture
	local label=$1 pid t; shift
	cp "$dir/fixture" "$dir/$id.2"; rm -f "$dir/$id.2.off" "$dir/journal.db"*
	LD_PRELOAD=build/tests/libstreamshim.so BPFSTDERR_SHIM_DIR=$dir \
		BPFSTDERR_JOURNAL=$dir/journal.db build/bpfstderr follow --all --json "$@" \
		> "$dir/events" 2> /dev/null &
	pid=$!
	while [ "$(cat "$dir/$id.2.off" 2>/dev/null)" != "$(stat -c %s "$dir/$id.2")" ]; do sleep 0.2; done
	sleep 3	# the held end goes stale and comes out
	t=$(ticks "$pid")
	kill -INT "$pid"; wait "$pid" || true
	printf '%-28s %6.2f s CPU for %d events (%d printed)\n' "$label" "$(awk -v t="$t" -v hz="$hz" 'BEGIN { print t / hz }')" \
		"$events" "$(wc -l < "$dir/events")" >&2
	echo "$t"
}
with=$(run "follow --all" )
without=$(run "follow --all --no-journal" --no-journal)
awk -v a="$with" -v b="$without" 'BEGIN {
	printf "journal/no journal = %.2fx; the journal'"'"'s share of the CPU: %.0f%%\n", a / b, 100 * (a - b) / a }'
