#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What bpfstderr costs what it watches, in the kernel lab (a kernel whose
# writes work): a program that prints, and a process that reads that
# program's streams itself, as a sched_ext scheduler's watcher does,
# each timed with no bpfstderr and with `bpfstderr record` running (its
# fill wake's fexit programs run on every print, its readers program on
# every read of another process, copying what the read returned: the
# mirror). Needs root, qemu and the lab's kernels (tests/vm/fetch.sh).
#
#   bench/cost.sh [KERNEL_DIR...]	every lab kernel (default), one guest each
#   bench/cost.sh --guest		inside a guest (or a host whose writes work)
#
# One phase: `storm cost ROUNDS` (bench/storm.c): ROUNDS times, 20 runs
# of demo_print (two prints a run, BPF_PROG_TEST_RUN timed around each
# call: the syscall is in it) and reads of both its streams to the end
# in 4096-byte reads, each timed; the reader is the bench itself, so
# record leaves the streams to it and mirrors what it reads. Phases
# alternate, none, floor, record, COST_REPEATS times (default 5): floor
# attaches empty fexit programs where bpfstderr's are (storm cost ROUNDS
# floor), what any fexit observer there costs, the trampolines. The
# ratios are each phase's median over none's median, from the same guest.
# programs: record started, then stopped (SIGSTOP) while the bench runs:
# its fexit programs run, its process takes no CPU (the mirror ring, 2
# MiB, holds what 1000 rounds mirror; more and its copies stop early);
# record: all of it, its process competing for the guest's CPUs.
# COST_ROUNDS (default 2000).
set -u
cd "$(dirname "$0")/.." || exit 1

if [ "${1:-}" != --guest ]; then
	. bench/lib.sh
	in_lab cost "COST_ROUNDS COST_REPEATS" -- "$@"
fi

ROUNDS=${COST_ROUNDS:-2000}
REPEATS=${COST_REPEATS:-5}
B=build/bpfstderr
. tests/lib.sh	# wait_asleep: until record's first cycle is done
dir=$TEST_ROOT
# a record stopped for the programs phase takes SIGTERM only once resumed
trap 'kill -CONT $(jobs -p) 2>/dev/null; kill $(jobs -p) 2>/dev/null;
      sysctl -q kernel.bpf_stats_enabled=0; rm -rf "$dir"' EXIT

echo "# cost: $(uname -r), $(nproc) CPUs, $ROUNDS rounds a phase, $REPEATS phases each"
seen=$($B doctor --json 2>/dev/null | jq -r '.other_readers.seen')
echo "# cost: other readers seen (mirrored) under record: $seen"
printf '%-8s %10s %10s %10s %8s %10s %10s\n' phase run_ns read_ns empty_ns reads bytes mirrored
for i in $(seq "$REPEATS"); do
	for phase in none floor programs record; do
		rpid=
		if [ $phase = record ] || [ $phase = programs ]; then
			rm -f "$dir"/j.db*
			$B record -d 0.2 --journal "$dir/j.db" 2> "$dir/err" & rpid=$!
			wait_asleep "$rpid" || { echo "cost: record did not start: $(cat "$dir/err")"; exit 1; }
		fi
		[ $phase = programs ] && kill -STOP "$rpid"
		arg=; [ $phase = floor ] && arg=floor
		line=$(build/bench/storm cost "$ROUNDS" $arg 2> "$dir/storm.err") ||
			{ echo "cost: $line $(grep -v '^libbpf' "$dir/storm.err")"; exit 1; }
		mirrored=-
		if [ -n "$rpid" ]; then
			[ $phase = programs ] && kill -CONT "$rpid"
			kill -TERM "$rpid"; wait "$rpid"
			mirrored=$(python3 -c "
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute('select count(*) from events where reader_pid is not null').fetchone()[0])" "$dir/j.db")
		fi
		set -- $line
		printf '%-8s %10s %10s %10s %8s %10s %10s\n' "$phase" "$2" "$4" "$6" "$8" "${10}" "$mirrored" |
			tee -a "$dir/table"
	done
done
# Where record's part goes: one more record phase with the kernel's
# run-time statistics on (kernel.bpf_stats_enabled: two clock reads per
# run, so not among the phases above), each of record's fexit programs'
# own time per call, the trampoline around it not counted.
sysctl -q kernel.bpf_stats_enabled=1
rm -f "$dir"/j.db*
$B record -d 0.2 --journal "$dir/j.db" 2> "$dir/err" & rpid=$!
wait_asleep "$rpid" || { echo "cost: record did not start: $(cat "$dir/err")"; exit 1; }
build/bench/storm cost "$ROUNDS" > /dev/null 2>&1
bpftool prog show --json > "$dir/progs.json"
kill -TERM "$rpid"; wait "$rpid"
sysctl -q kernel.bpf_stats_enabled=0
jq -r '.[] | select(.name == "reader_read" or .name == "fill_printk" or .name == "fill_commit")
	| select(.run_cnt > 0)
	| "# cost: record program \(.name): \(.run_cnt) calls, \(.run_time_ns / .run_cnt | floor) ns a call (its own run time)"' \
	"$dir/progs.json"
python3 - "$dir/table" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
# medians, and the best phase of each: on a shared host a phase is only
# ever slowed by others, so the best is the least disturbed
for how, f in (("median", statistics.median), ("best", min)):
    for phase in ("none", "floor", "programs", "record"):
        r = [x for x in rows if x[0] == phase]
        med[phase] = [f(float(x[c]) for x in r) for c in (1, 2, 3)]
    for name, c in (("a run (two prints)", 0), ("a read with bytes", 1), ("an empty read", 2)):
        n, fl, p, w = (med[k][c] for k in ("none", "floor", "programs", "record"))
        print(f"# cost ({how}): {name}: {n:.0f} ns alone; beside empty fexits {fl:.0f} ns "
              f"({fl / n:.3f}x); record's programs, its process stopped {p:.0f} ns ({p / n:.3f}x); "
              f"record {w:.0f} ns ({w / n:.3f}x)")
PY
