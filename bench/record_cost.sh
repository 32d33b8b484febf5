#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a fault report costs `record` (read, parse, group, journal commit),
# in CPU per report, on any host: the reports are injected at the syscall
# boundary by the test shim (tests/shim) for one real program, as a storm
# would leave them in its stream. Baseline, in the same run: `report
# --input` over the same bytes (parse and group, no journal, no reads).
# record's start (loading its BPF programs) is not counted: its CPU from
# its first cycle on.
# Goal (issue 38): at most 5 us per report, so that 10,000 faults a second
# cost record at most 5% of a core.
#
#   bench/record_cost.sh [REPORTS] [REPEATS]	(default 20000, 3)
#
# Needs root (a real BPF program holds the injected stream).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
. tests/lib.sh	# wait_asleep: until record's first cycle is done
n=${1:-20000} reps=${2:-3}
make -s all tests-build
dir=$(mktemp -d /var/tmp/bpfstderr-bench.XXXXXX)	# a disk, not tmpfs: fsync is real
cleanup() { kill "${holder:-}" 2>/dev/null || true; rm -rf "$dir" "$TEST_ROOT"; }
trap cleanup EXIT

hold_idle 0
# the reports of the fixture (as the kernel writes them), their BPF frames
# made the holder's program's own, as a storm of its faults would have it
tag=$(bpftool prog show id "$id" --json | jq -r .tag)
python3 - "$n" tests/fixtures/upstream-6.18.txt "$tag" > "$dir/fixture" <<'PY'
import re, sys
n, text, tag = int(sys.argv[1]), open(sys.argv[2]).read(), sys.argv[3]
text = re.sub(r"bpf_prog_[0-9a-f]{16}_\w*", "bpf_prog_%s_writer" % tag, text)
reports = ["ERROR: " + r for r in text.split("ERROR: ")[1:]]
sys.stdout.write("".join(reports[i % len(reports)] for i in range(n)))
PY
faults=$(grep -c '^ERROR: ' "$dir/fixture")
echo "# record_cost: $faults reports, $(stat -c %s "$dir/fixture") bytes, $(nproc) CPUs, $(df --output=fstype "$dir" | tail -n 1)"

# The interpreter itself, not a wrapper (pyenv's shim costs ~0.3 s of CPU
# a start): kept() polls five times a second beside the record measured.
py=$(python3 -c 'import sys; print(sys.executable)')
kept() {	# faults the journal has
	"$py" -c "
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute('select count(*) from events where kind = 1').fetchone()[0])" "$1" 2>/dev/null || echo 0
}
record_us() {	# CPU us of one record to keep every report, its start not counted
	local pid t0
	: > "$dir/$id.2"; rm -f "$dir/$id.2.off" "$dir"/j.db*
	LD_PRELOAD=build/tests/libstreamshim.so BPFSTDERR_SHIM_DIR=$dir \
		build/bpfstderr record -d 0.2 --journal "$dir/j.db" 2> "$dir/err" &
	pid=$!
	wait_asleep "$pid" || { echo "record_cost: record did not start: $(cat "$dir/err")" >&2; exit 1; }
	t0=$(ticks "$pid")
	cat "$dir/fixture" > "$dir/$id.2"
	echo blip >&3	# a program loaded and unloaded: record walks the list, the shim accounts the bytes
	until [ "$(kept "$dir/j.db")" -ge "$faults" ]; do
		kill -0 "$pid" 2>/dev/null || { echo "record_cost: record ended: $(cat "$dir/err")" >&2; exit 1; }
		sleep 0.2
	done
	echo $(( $(ticks "$pid") - t0 ))
	kill -TERM "$pid"; wait "$pid" || true
}
report_us() {	# CPU us of report --input over the same bytes
	# (the children's usage before counted out: an interpreter started by
	# a wrapper inherits what the wrapper's own children used)
	"$py" -c "
import resource, subprocess, sys
def us():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1e6
t0 = us()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(int(us() - t0))" build/bpfstderr report --json --input "$dir/fixture"
}
printf '%-8s %12s %12s\n' repeat record_us report_us
for i in $(seq "$reps"); do
	r=$(record_us); b=$(report_us)
	printf '%-8s %12s %12s\n' "$i" "$r" "$b" | tee -a "$dir/table"
done
python3 - "$dir/table" "$faults" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
r = statistics.median(float(x[1]) for x in rows)
b = statistics.median(float(x[2]) for x in rows)
print(f"# record_cost: record {r / n:.2f} us per report (goal 5); report --input {b / n:.2f} us; "
      f"record/report = {r / b:.2f}x; a 10,000/s storm costs record {r / n * 10000 / 1e4:.1f}% of a core")
PY
