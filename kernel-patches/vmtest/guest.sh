#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Inside a lab guest (kernel-patches/vmtest.sh): the stream_drop selftest
# (RUNNER), then three "%2000d" writes to a held program's stderr as
# bpfstderr sees them (report --json, top -b). Prints what it measured as
# "result KEY VALUE" lines for vmtest.sh to compare; never judges itself.
# Usage: guest.sh RUNNER BPFSTDERR
set -u
RUNNER=$1
BPFSTDERR=$2
T=$(mktemp -d) || exit 1
HPID=""
cleanup() {
	exec 7>&- 2>/dev/null
	[ -n "$HPID" ] && kill "$HPID" 2>/dev/null && wait "$HPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

echo "result kernel $(uname -r)"
echo "== selftest stream_drop (runner)"
"$RUNNER"
echo "result runner_exit $?"

echo "== held program: 3 writes of \"%2000d\" to stderr, then bpfstderr"
mkfifo "$T/in"
"$RUNNER" --hold 3 <"$T/in" >"$T/hold.out" 2>&1 &
HPID=$!
exec 7>"$T/in"
for _ in $(seq 100); do
	grep -q '^held' "$T/hold.out" && break
	kill -0 "$HPID" 2>/dev/null || break
	sleep 0.2
done
cat "$T/hold.out"
id=$(sed -n 's/^held prog id \([0-9]*\) .*/\1/p' "$T/hold.out")
echo "result held_id ${id:-none}"
echo "result held_line $(grep '^held' "$T/hold.out")"
[ -n "$id" ] || exit 0

"$BPFSTDERR" report --json >"$T/report.json" 2>"$T/report.err"
echo "result report_exit $?"
head -c 600 "$T/report.err"
jq -c --argjson id "$id" '.programs[] | select(.id == $id) | .streams.stderr' \
	"$T/report.json" >"$T/stderr.json" 2>&1
echo "report --json, program $id, stderr: $(cat "$T/stderr.json")"
echo "result report_capacity $(jq -r '.capacity' "$T/stderr.json" 2>/dev/null)"
echo "result report_dropped_messages $(jq -r '.dropped_messages' "$T/stderr.json" 2>/dev/null)"
echo "result report_dropped_bytes $(jq -r '.dropped_bytes' "$T/stderr.json" 2>/dev/null)"

COLUMNS=200 "$BPFSTDERR" top -b -n 1 >"$T/top.txt" 2>&1
echo "result top_exit $?"
echo "top -b -n 1 (header and program $id):"
head -n 3 "$T/top.txt"
awk -v id="$id" '$1 == id' "$T/top.txt"
line=$(awk -v id="$id" '$1 == id' "$T/top.txt")
echo "result top_dropped $(grep -o 'dropped [0-9]*' <<<"$line" | awk '{print $2}')"
exit 0
