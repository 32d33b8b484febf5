# SPDX-License-Identifier: GPL-2.0
# Sourced by every end-to-end test. Each test prints "ok - ..." or
# "not ok - ..." per check and ends with "N passed, N failed".
set -u

BPFSTDERR=${BPFSTDERR:-build/bpfstderr}
HELPERS=${HELPERS:-build/tests}
PASSED=0
FAILED=0
SKIPPED=0
HOLDER_PIDS=()
# Every temporary file of the test lives under TEST_ROOT, removed on exit
# (mktmp runs in command substitutions: it cannot record what it made).
TEST_ROOT=$(mktemp -d /tmp/bpfstderr-test.XXXXXX)
# Each test file has a journal of its own, never the system's.
export BPFSTDERR_JOURNAL=$TEST_ROOT/journal.db
# ... and a symbolization cache of its own, never /var/cache/bpfstderr.
export BPFSTDERR_CACHE_DIR=$TEST_ROOT/cache
# ... and a tmux server of its own: a pane takes its environment from the
# server, so a shared one would run top on another test's journal.
export TMUX_TMPDIR=$TEST_ROOT

pass() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "not ok - $1${2:+: $2}"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip - $1: $2"; }

# host_refuses SOURCE: true when the independent probe (probe_host.py, raw
# bpf(2) calls) finds that this host refuses SOURCE (arena, may_goto); the
# reason is then in $REFUSAL, for skip.
host_refuses() {
	local r rc
	r=$(python3 tests/e2e/probe_host.py "$1"); rc=$?
	[ "$rc" -eq 1 ] || return 1
	REFUSAL="this host refuses $1: $r (tests/e2e/probe_host.py)"
	return 0
}

# check_refusals VAR: every demo source the holder VAR could not load must
# be one the independent probe finds refused (a skip); anything else is a
# failure. Prints nothing when every source loaded.
check_refusals() {
	local refused=${1}_REFUSED src err step
	while read -r src err step; do
		[ -n "$src" ] || continue
		if host_refuses "$src"; then
			skip "demo source $src" "$REFUSAL"
		else
			fail "demo source $src loads" "holdprog: errno $err $step, yet probe_host.py does not refuse it"
		fi
	done <<<"${!refused}"
}

check() {	# check DESC CMD...: passes when CMD succeeds
	local desc=$1; shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

check_eq() {	# check_eq DESC GOT WANT
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# Waits are for an event, never for a time: a test polls the condition it
# needs, and the bound only says how long a real failure takes to report.
# Bounds are generous: the kernel lab runs 5-20 times slower than a host
# (qemu's TCG), and a loaded CI machine is slower still.
wait_until() {	# wait_until SECS CMD...: until CMD succeeds, at most SECS (by the clock: CMD may be slow)
	local end=$((SECONDS + $1))
	until "${@:2}"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
	return 0
}

mktmp() {
	mktemp -d "$TEST_ROOT/tmp.XXXXXX"
}

# start_holder VAR ARGS...: run holdprog ARGS as a coprocess; VAR_PID,
# VAR_IN, VAR_OUT are set, "prog ID NAME" lines land in VAR_PROGS and
# "SOURCE ERRNO STEP" of each demo source the host refused in VAR_REFUSED.
# Programs are unloaded when the holder exits; cleanup kills it.
start_holder() {
	local var=$1 line progs="" refused="" in out pid; shift
	coproc HOLD { exec "$HELPERS/holdprog" "$@" 2>&1; }
	pid=$HOLD_PID; out=${HOLD[0]}; in=${HOLD[1]}
	exec {out}<&"${HOLD[0]}" {in}>&"${HOLD[1]}"
	HOLDER_PIDS+=("$pid")
	while IFS= read -r -t 120 -u "$out" line; do
		case $line in
		prog\ *) progs+="${line#prog }"$'\n' ;;
		refused\ *) refused+="${line#refused }"$'\n' ;;
		idle\ *) ;;
		ready) break ;;
		*) echo "holdprog: $line" >&2; return 1 ;;
		esac
	done
	printf -v "${var}_PID" %s "$pid"
	printf -v "${var}_IN" %s "$in"
	printf -v "${var}_OUT" %s "$out"
	printf -v "${var}_PROGS" %s "$progs"
	printf -v "${var}_REFUSED" %s "$refused"
}

# holder_cmd VAR CMD: send one command, print the one-line answer.
holder_cmd() {
	local in out line
	in=${1}_IN; out=${1}_OUT
	echo "$2" >&"${!in}"
	IFS= read -r -t 120 -u "${!out}" line && echo "$line"
}

stop_holder() {	# VAR: no-op for a holder that never started
	local pid=${1}_PID
	[ -n "${!pid:-}" ] || return 0
	kill "${!pid}" 2>/dev/null
	wait "${!pid}" 2>/dev/null
	return 0
}

prog_id() {	# prog_id VAR NAME: id of the holder's program NAME
	local progs=${1}_PROGS
	awk -v n="$2" '$2 == n { print $1; exit }' <<<"${!progs}"
}

# pin_capacity DIR: mount a bpffs at DIR and pin there the independent
# iterator (bpftool iter pin) that prints each program's stream capacity;
# then capacity ID [stdout] prints a program's stderr (or stdout)
# capacity. The caller unpins (rm DIR/cap) and unmounts.
pin_capacity() {
	CAPACITY_PIN=$1/cap
	mkdir -p "$1" && mount -t bpf bpf "$1" &&
		bpftool iter pin "$(dirname "$BPFSTDERR")/bpf/capacity_iter.bpf.o" "$CAPACITY_PIN"
}
capacity() { awk -v id="$1" -v f=$([ "${2:-}" = stdout ] && echo 2 || echo 3) '$1 == id { print $f }' "$CAPACITY_PIN"; }

# leak_oversized VAR DESC: where writes work, the leak there is: the
# holder VAR's writer writes 3 messages longer than the kernel's print
# buffer to stderr, charged, then refused (-ENOMEM); LEAK_ID is the writer,
# LEAK_CAP its capacity after (the pinned iterator). Returns 1 where
# nothing leaks: DESC skipped where the kernel gives the bytes back,
# failed where the writes did not go as the kernel's rule says.
leak_oversized() {
	local rets
	LEAK_ID=$(prog_id "$1" writer)
	rets=$(holder_cmd "$1" "oversize 2 3")
	if [ "$rets" != "rets -12 -12 -12" ]; then
		fail "$2: 3 oversized messages refused (-ENOMEM)" "got '$rets'"
		return 1
	fi
	LEAK_CAP=$(capacity "$LEAK_ID")
	[ "${LEAK_CAP:-0}" != 0 ] && return 0
	skip "$2" "this kernel gives back what it refused (capacity 0 after 3 oversized messages): nothing leaks"
	return 1
}

# lab_start: a kernel-lab guest test's start: its kernel named, a scratch
# directory in $out, the capacity iterator pinned at $out/bpffs ($mnt), and
# all of it undone at exit (LAB_CLEANUP, a command the test sets, run
# first; background jobs killed, unpinned, unmounted).
lab_start() {
	echo "# kernel $(uname -r)"
	out=$(mktmp)
	mnt=$out/bpffs
	trap 'eval "${LAB_CLEANUP:-}"; kill $(jobs -p) 2>/dev/null; rm -f "$mnt/cap"; mountpoint -q "$mnt" && umount "$mnt"; cleanup' EXIT
	pin_capacity "$mnt" || { fail "mount bpffs, pin the capacity iterator"; finish; }
}

# faulting_progs VAR: "KIND ID" per demo fault source the holder VAR
# loaded (KIND as holdprog's fault command names it).
faulting_progs() {
	local kind id
	for kind in arena_read may_goto deadlock; do
		id=$(prog_id "$1" "demo_$kind")
		[ -n "$id" ] && echo "$kind $id"
	done
	return 0
}

# reported_progs VAR: faulting_progs VAR's, those whose kind this kernel
# writes reports for (doctor --json asks its BTF: 6.17 writes none for
# arena faults); how a kernel treats reports is learnt from these.
reported_progs() {
	local reporting kind id src
	reporting=" $("$BPFSTDERR" doctor --json 2> /dev/null |
		jq -r '[.fault_reports | to_entries[] | select(.value.kernel_reports) | .key] | join(" ")') "
	faulting_progs "$1" | while read -r kind id; do
		case $kind in arena_*) src=arena ;; deadlock) src=res_spin_lock ;; *) src=$kind ;; esac
		[[ $reporting == *" $src "* ]] && echo "$kind $id"
	done
	return 0
}

# fixture_added VAR: bytes were added to a fixture while a reader runs.
# The shim accounts a fixture's unread bytes when the program list is
# walked (tests/shim/stream_shim.c); readers walk it again when the
# kernel's accounting moves or the list changes. A write moves the
# accounting only where writes work or a failed one is charged (design.md
# section 4: hosts differ), so the holder VAR loads and unloads a program:
# a list change, which every reader sees on any kernel.
fixture_added() { holder_cmd "$1" blip > /dev/null; }

# holder_lines VAR N: N lines of 500 bytes written to the stdout of the
# holder's writer; how many the kernel took (a write returned 0)
holder_lines() { holder_cmd "$1" "lines 1 $2 500" | tr ' ' '\n' | grep -c '^0$'; }

# sql1 DB SQL: the first column of SQL's first row in the SQLite file DB,
# by Python's sqlite3 (an oracle independent of bpfstderr; it waits up
# to 60 s for a writer's lock); empty: no row
sql1() {
	python3 -c "import sqlite3, sys; r = sqlite3.connect(sys.argv[1], timeout=60).execute(sys.argv[2]).fetchone(); print(r[0] if r else '')" "$1" "$2"
}

# tmux: the test's own server (TMUX_TMPDIR above); S names its session.
screen() { tmux capture-pane -p -t "${1:-$S}"; }	# screen [SESSION]
wait_for() {	# wait_for TEXT [SESSION]: up to 60 s for TEXT on the screen
	local i
	for i in $(seq 600); do screen "${2:-$S}" | grep -qF -- "$1" && return 0; sleep 0.1; done
	return 1
}
# top_pane SESSION COLS ROWS CMD [LOG]: CMD (a top command line, run by
# bash) in a fresh tmux pane; after it the pane says "terminal same rc=N"
# or "terminal changed rc=N" (stty -g before and after; neither line
# holds the other), then waits. LOG: all the pane is sent, from its first
# byte (pipe-pane in the same tmux command as the pane's start).
top_pane() {
	local pipe=()
	[ -n "${5:-}" ] && pipe=(\; pipe-pane -t "$1" "cat > $(printf %q "$5")")
	tmux new-session -d -s "$1" -x "$2" -y "$3" "bash -c 'saved=\$(stty -g); $4; rc=\$?; \
		[ \"\$(stty -g)\" = \"\$saved\" ] && echo terminal same rc=\$rc || echo terminal changed rc=\$rc; sleep 60'" \
		"${pipe[@]}"
}
# shell_pane SESSION COLS ROWS: an interactive bash in a fresh tmux pane,
# for commands typed (keys) as a person's jobs: Ctrl-Z stops one (its own
# process group; in top_pane's there is no job control), fg brings it back.
shell_pane() { tmux new-session -d -s "$1" -x "$2" -y "$3" "bash --norc --noprofile -i"; }
# said_stopped: the shell's last words, before its prompt, are that its
# job stopped (-J: a long command line wrapped is one line)
said_stopped() {
	tmux capture-pane -p -J -t "$S" | grep -v '^$' | tail -n 2 | head -n 1 | grep -q '^\[1\]+ *Stopped '
}
# col ID NAME [SESSION]: top's cell by its header (the columns up to
# FAULTS hold no blanks); ID may be a program name
col() {
	screen "${3:-$S}" | awk -v id="$1" -v name="$2" '
		$1 == "ID" { for (i = 1; i <= NF; i++) { h = $i; sub(/[v^]$/, "", h); if (h == name) c = i } }
		($1 == id || $3 == id) && c { print $c; exit }'
}
keys() { tmux send-keys -t "$S" "$@"; sleep 0.6; }	# keys KEY...: typed, then drawn

wait_asleep() {	# wait_asleep PID: up to 120 s until PID's main thread sleeps in ppoll(2), its wait between two cycles: started
	local i nr=271	# ppoll's number on x86_64, 73 on arm64
	[ "$(uname -m)" = aarch64 ] && nr=73
	for i in $(seq 1200); do
		[ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = "$nr" ] && return 0
		sleep 0.1
	done
	return 1
}
stopped() { [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ]; }	# stopped PID: by a stop signal
descendants() {	# PID NAME: the processes called NAME below PID (a tmux pane's)
	local c
	for c in $(pgrep -P "$1"); do
		[ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ] && echo "$c"
		descendants "$c" "$2"
	done
}

cleanup() {
	local p
	for p in "${HOLDER_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${HOLDER_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	if [ -n "${KEEP_TEST_ROOT:-}" ]; then echo "# kept $TEST_ROOT"; else rm -rf "$TEST_ROOT"; fi
}
trap cleanup EXIT

finish() {
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
	exit
}
