#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Storms: how many fault reports each reader keeps when one program faults
# at a set rate, in the kernel lab (only a kernel whose writes work can
# show it). Needs root, qemu and the lab's kernels (tests/vm/fetch.sh).
#
#   bench/storm.sh [KERNEL_DIR...]	 every lab kernel (default), one guest each
#   bench/storm.sh --guest		 inside a guest (or on a host whose
#					 stream writes work): the phases below
#
# One phase: a fresh program (bench/storm.c gen) faults RATE times a second
# for SECS seconds, one report per run, while one reader runs:
#   naive        BPF_PROG_STREAM_READ_BY_FD in a loop every 100 ms (storm naive)
#   interval     bpfstderr record as before the fill wake: a drain every
#                second only (BPFSTDERR_NO_FILL_WAKE=1 BPFSTDERR_FULL_WALK=1)
#   watch-tick   bpfstderr record without the fill wake (the watch's check
#                every 10 ms while busy: hosts that refuse fexit)
#   record       bpfstderr record, defaults
#   follow       bpfstderr follow -p ID --json --no-journal, defaults
# rate/s: asked (max: as fast as it can); ran/s: runs over the seconds the
# storm took. kept: reports the reader has (record: `report --json` over
# its journal; follow: its fault events; naive: report headers read).
# lost = runs - kept; loss = lost / runs. refused: the pushes of the
# program's reports the kernel refused as full (-ENOSPC; a stream holds at
# most 100000 bytes), by the kernel's own count: a kretprobe on
# bpf_stream_stage_commit, where every fault report is pushed, and a
# histogram of the generator's -ENOSPC returns ("-" where tracefs, kprobe
# events or histograms are not there, or the kretprobe missed calls).
# lost = refused: the reader lost nothing the kernel took. cpu_ms: the
# reader's CPU time (schedstat, every thread) from the storm's start to 3 s
# after its end (the readers' last drains).
#
# STORM_SOURCES (default "arena:demo_arena_read res_spin_lock:demo_deadlock"),
# STORM_RATES (default "100 1000 10000 0"; 0: as fast as it can),
# STORM_SECS (default 10), STORM_READERS (default: all five above).
set -u
cd "$(dirname "$0")/.." || exit 1

if [ "${1:-}" != --guest ]; then
	. bench/lib.sh
	in_lab storm "STORM_SOURCES STORM_RATES STORM_SECS STORM_READERS" -- "$@"
fi

SOURCES=${STORM_SOURCES:-arena:demo_arena_read res_spin_lock:demo_deadlock}
RATES=${STORM_RATES:-100 1000 10000 0}
SECS=${STORM_SECS:-10}
READERS=${STORM_READERS:-naive interval watch-tick record follow}
B=build/bpfstderr
dir=$(mktemp -d /tmp/storm.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; pushes_off; rm -rf "$dir"' EXIT
. bench/lib.sh

# The kernel's count of one process's fault report pushes it refused.
T=/sys/kernel/tracing
PUSH=$T/events/storm/storm_push
pushes_on() {
	{ mountpoint -q $T || mount -t tracefs nodev $T; } 2>/dev/null &&
		echo 'r:storm/storm_push bpf_stream_stage_commit ret=$retval:s32' >> $T/kprobe_events 2>/dev/null ||
		return 0
	[ -e "$PUSH/hist" ] || pushes_off	# no histograms in this kernel
}
pushes_off() {
	[ -d "$PUSH" ] || return 0
	# truncating drops the triggers: they keep the event enabled, and
	# an enabled event cannot be removed
	: > "$PUSH/trigger"
	echo '-:storm/storm_push' >> $T/kprobe_events
}
# pushes_missed: the kretprobe's misses (no instance free): then the
# count is short, and not printed
pushes_missed() { awk '$1 == "storm_push" { print $3 }' $T/kprobe_profile; }
# pushes_count PID: count PID's refused pushes from now on (a trigger
# keyed by pid, filtered on the kernel's -ENOSPC)
pushes_count() {
	[ -d "$PUSH" ] || return 0
	missed0=$(pushes_missed)
	echo "hist:keys=common_pid if common_pid == $1 && ret == -28" > "$PUSH/trigger"
}
# pushes_refused: how many since pushes_count, or "-"; stops counting
pushes_refused() {
	local n
	[ -d "$PUSH" ] || { echo -; return; }
	n=$(awk '{ for (i = 1; i < NF; i++) if ($i == "hitcount:") n += $(i + 1) } END { print n + 0 }' \
		"$PUSH/hist")
	: > "$PUSH/trigger"
	[ "$(pushes_missed)" = "$missed0" ] && echo "$n" || echo -
}

# start_reader NAME ID: the reader's pid in rpid
start_reader() {
	case $1 in
	naive)	build/bench/storm naive "$2" 100 > "$dir/kept" & ;;
	interval)
		BPFSTDERR_NO_FILL_WAKE=1 BPFSTDERR_FULL_WALK=1 \
			$B record --journal "$dir/j.db" 2> "$dir/err" & ;;
	watch-tick)
		BPFSTDERR_NO_FILL_WAKE=1 $B record --journal "$dir/j.db" 2> "$dir/err" & ;;
	record)	$B record --journal "$dir/j.db" 2> "$dir/err" & ;;
	follow)	$B follow -p "$2" --json --no-journal > "$dir/kept" 2> "$dir/err" & ;;
	esac
	rpid=$!
}

# kept NAME ID: the reports the reader kept
kept() {
	case $1 in
	naive)	awk '/^reports/ { print $2 }' "$dir/kept" ;;
	follow)	jq -s '[.[] | select(.kind == "fault")] | length' "$dir/kept" ;;
	*)	$B report --json --journal "$dir/j.db" 2>/dev/null |
			jq --argjson i "$2" '[.programs[] | select(.id == $i) | .faults[]] | add // 0' ;;
	esac
}

# phase SOURCE PROG RATE READER: one line of the table
phase() {
	local src=$1 prog=$2 rate=$3 reader=$4 id runs secs k c0 cpu line refused
	rm -f "$dir"/j.db* "$dir/kept" "$dir/in"
	mkfifo "$dir/in"
	build/bench/storm gen "$src" "$prog" "$rate" "$SECS" < "$dir/in" > "$dir/gen" &
	local gpid=$!
	exec 4> "$dir/in"
	for _ in $(seq 100); do grep -qE '^(prog|refused)' "$dir/gen" && break; sleep 0.1; done
	id=$(awk '/^prog/ { print $2 }' "$dir/gen")
	if [ -z "$id" ]; then
		echo "# $src: $(cat "$dir/gen")"
		exec 4>&-; wait "$gpid"
		return 1
	fi
	start_reader "$reader" "$id"
	sleep 2
	c0=$(ticks "$rpid")
	pushes_count "$gpid"
	echo go >&4
	for _ in $(seq $((SECS * 20 + 600))); do grep -q '^runs' "$dir/gen" && break; sleep 0.1; done
	sleep 3		# the readers' next drains
	cpu=$(( ($(ticks "$rpid") - c0) / 1000 ))
	refused=$(pushes_refused)
	kill -TERM "$rpid"; wait "$rpid"
	exec 4>&-; wait "$gpid"
	line=$(grep '^runs' "$dir/gen")
	runs=$(awk '{ print $2 }' <<<"$line"); secs=$(awk '{ print $4 }' <<<"$line")
	k=$(kept "$reader" "$id")
	printf '%-14s %8s %8.0f %-10s %7d %7d %7d %6.3f %7s %7d\n' "$src" \
		"$([ "$rate" = 0 ] && echo max || echo "$rate")" "$(bc -l <<<"$runs / $secs")" \
		"$reader" "$runs" "$k" "$((runs - k))" "$(bc -l <<<"($runs - $k) / $runs")" \
		"$refused" "$cpu"
}

echo "# storm: kernel $(uname -r), $(nproc) CPUs, $SECS s per phase"
"$B" doctor | grep -E '^(stream writes|early drain)'
pushes_on
printf '%-14s %8s %8s %-10s %7s %7s %7s %6s %7s %7s\n' source rate/s ran/s reader runs kept lost loss \
	refused cpu_ms
for sp in $SOURCES; do
	for rate in $RATES; do
		for reader in $READERS; do
			phase "${sp%%:*}" "${sp#*:}" "$rate" "$reader" || break 2
		done
	done
done
