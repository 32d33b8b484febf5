#!/usr/bin/env bash
# report --input throughput on a generated corpus against grep -c '^ERROR:'
# on the same file, in the same run. Also checks both count the same
# number of reports, so the comparison is of equal work found.
# usage: bench/report_input.sh [MB]   (default 100)
set -eu
cd "$(dirname "$0")/.."
mb=${1:-100}
make -s build/bpfstderr
cache=${BENCH_CACHE:-/tmp/bpfstderr-bench}
mkdir -p "$cache"
corpus=$cache/corpus-${mb}M.txt
if [ ! -s "$corpus" ]; then
	# Both report formats, messages in between, varying tasks and CPUs.
	python3 - "$corpus" "$mb" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
up = open("tests/fixtures/upstream-6.18.txt").read()
rfc = open("tests/fixtures/rfc-seed001.txt").read()
with open(path, "w") as f:
    i = 0
    while f.tell() < mb * 1024 * 1024:
        f.write(up.replace("PID: 4242", f"PID: {1000 + i % 500}").replace("CPU: 1 ", f"CPU: {i % 8} "))
        f.write(f"sched: picked task {i} on cpu {i % 8}\n" * 20)
        f.write(rfc)
        i += 1
PY
fi
size=$(stat -c %s "$corpus")
t() { local s e; s=$(date +%s.%N); "$@" > "$cache/out" 2>&1 || true; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }'; }
cat "$corpus" > /dev/null	# same page cache for both
tg=$(t grep -c '^ERROR:' "$corpus")
ng=$(cat "$cache/out")
tr=$(t build/bpfstderr report --json --input "$corpus")
nr=$(jq .summary.faults "$cache/out")
[ "$ng" = "$nr" ] || { echo "count mismatch: grep $ng, report $nr" >&2; exit 1; }
awk -v s="$size" -v tg="$tg" -v tr="$tr" -v n="$nr" 'BEGIN {
	printf "corpus %.0f MB, %d reports\n", s / 1048576, n
	printf "grep -c ^ERROR:   %7.2f s  %8.1f MB/s\n", tg, s / 1048576 / tg
	printf "bpfstderr report  %7.2f s  %8.1f MB/s  (parse + group + JSON)\n", tr, s / 1048576 / tr
	printf "report/grep time = %.1fx\n", tr / tg
}'
