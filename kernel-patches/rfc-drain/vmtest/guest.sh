#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Inside a lab guest (kernel-patches/rfc-drain/vmtest.sh): which of the
# series' kfuncs the kernel's BTF has, the stream_consume selftest (RUNNER),
# bpfstderr doctor, then two held programs that each wrote N messages to
# stderr, one followed with --backend upstream and the other with --backend
# rfc, and the two event lists compared. Prints what it measured as
# "result KEY VALUE" lines for vmtest.sh to compare; never judges itself.
# Usage: guest.sh RUNNER BPFSTDERR N
set -u
RUNNER=$1
BPFSTDERR=$2
N=$3
T=$(mktemp -d) || exit 1
PIDS=()
cleanup() {
	local p

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

echo "result kernel $(uname -r)"
# bpf_stream_free_elem is not counted: stock 7.3.4 has a static function of
# that name, which pahole may give a FUNC entry too.
KFUNCS='bpf_prog_stream_get|bpf_prog_stream_put|bpf_stream_next_elem_batch|bpf_stream_next_elem|bpf_stream_free_elem_batch|bpf_dynptr_from_mem_slice'
bpftool btf dump file /sys/kernel/btf/vmlinux >"$T/btf.txt" 2>&1
echo "kfuncs in BTF: $(grep -oE "FUNC '($KFUNCS)'" "$T/btf.txt" | sort -u | tr '\n' ' ')"
echo "result btf_kfuncs $(grep -oE "FUNC '($KFUNCS)'" "$T/btf.txt" | sort -u | wc -l)"

echo "== selftest stream_consume (runner)"
"$RUNNER"
echo "result runner_exit $?"

echo "== bpfstderr doctor"
"$BPFSTDERR" doctor >"$T/doctor.txt" 2>&1
grep -E '^(kernel|stream read command|RFC drain kfuncs|stream backend|verdict) ' "$T/doctor.txt"
echo "result doctor_backend $(awk '/^stream backend / { print $3 }' "$T/doctor.txt")"
echo "result doctor_rfc $(awk '/^RFC drain kfuncs / { print $4 }' "$T/doctor.txt")"
"$BPFSTDERR" doctor --backend rfc >"$T/doctor-rfc.txt" 2>&1
echo "result rfc_forced_exit $?"
grep -E '^(stream backend|verdict) ' "$T/doctor-rfc.txt"

# hold LABEL: a program that wrote N messages to stderr, held until its
# stdin closes; its id in $T/LABEL.id.
hold() {
	local i

	mkfifo "$T/$1.in"
	"$RUNNER" --hold "$N" <"$T/$1.in" >"$T/$1.hold" 2>&1 &
	PIDS+=($!)
	# the write end stays open (fd $i) until the guest ends: the holder waits
	# for EOF on its stdin
	exec {i}>"$T/$1.in"
	echo "holder $1 stdin on fd $i"
	for _ in $(seq 150); do
		grep -q '^held' "$T/$1.hold" && break
		kill -0 "${PIDS[-1]}" 2>/dev/null || break
		sleep 0.2
	done
	cat "$T/$1.hold"
	sed -n 's/^held prog id \([0-9]*\) .*/\1/p' "$T/$1.hold" >"$T/$1.id"
}

# follow_all BACKEND ID: follow --json until N events came, then SIGINT
# (one last drain, exit 0).
follow_all() {
	local pid n=0 t0=$(date +%s%N)

	"$BPFSTDERR" follow --json --no-journal --backend "$1" -p "$2" \
		>"$T/$1.json" 2>"$T/$1.err" &
	pid=$!
	for _ in $(seq 300); do
		n=$(grep -c '"kind":"message"' "$T/$1.json")
		[ "$n" -ge "$N" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	# which drain program ran: the kernel's own count of its runs
	echo "result drain_prog_runs_$1 $(bpftool --json prog show 2>/dev/null |
		jq '[.[] | select(.name == "rfc_drain") | .run_cnt // 0] | add // 0')"
	kill -INT $pid 2>/dev/null
	wait $pid
	echo "result follow_${1}_exit $?"
	echo "follow --backend $1 -p $2: $(wc -l <"$T/$1.json") events in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	head -c 400 "$T/$1.err"
	echo "result follow_${1}_messages $(grep -c '"kind":"message"' "$T/$1.json")"
	jq -c '{stream, kind, text, partial}' "$T/$1.json" >"$T/$1.events"
}

if [ -x "$BPFSTDERR" ]; then
	sysctl -qw kernel.bpf_stats_enabled=1
	echo "== two held programs, $N messages each to stderr; one followed per backend"
	hold a
	hold b
	if [ -s "$T/a.id" ] && [ -s "$T/b.id" ]; then
		follow_all upstream "$(cat "$T/a.id")"
		follow_all rfc "$(cat "$T/b.id")"
		echo "first events: $(head -n 2 "$T/rfc.events" | tr '\n' ' ')"
		# the drain program is bpfstderr's own: listings leave it out
		"$BPFSTDERR" report --backend rfc --no-journal --json >"$T/report.json" 2>/dev/null
		echo "result rfc_drain_listed $(jq '[.programs[] | select(.name == "rfc_drain")] | length' \
			"$T/report.json")"
		if cmp -s "$T/upstream.events" "$T/rfc.events"; then
			echo "result backends_differ 0"
		else
			diff "$T/upstream.events" "$T/rfc.events" | head -n 10
			echo "result backends_differ $(diff "$T/upstream.events" "$T/rfc.events" | grep -c '^[<>]')"
		fi
	fi
fi
exit 0
