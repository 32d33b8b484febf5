# SPDX-License-Identifier: GPL-2.0
# Shared by the benches: those that measure a long-running bpfstderr over
# a held writer and idle programs (top_cpu.sh, record_metrics.sh,
# record_cost.sh, journal.sh; hold_idle after `dir` is set), and those that run in the kernel lab (storm.sh, cost.sh: in_lab).

# hold_idle N: holdprog with one writer and N idle programs (none: 0),
# its commands on fd 3; sets holder (its pid) and id (the writer's program
# id), and writes once to the writer's stderr so that it has bytes
# accounted and drainers read it.
hold_idle() {
	local idle=
	[ "$1" -gt 0 ] && idle="idle $1"
	mkfifo "$dir/in"
	# shellcheck disable=SC2086
	build/tests/holdprog writer $idle < "$dir/in" > "$dir/out" &
	holder=$!
	exec 3> "$dir/in"
	while ! grep -q '^ready' "$dir/out"; do sleep 0.2; done
	id=$(awk '/^prog/ { print $2; exit }' "$dir/out")
	echo "write 2 1 4" >&3
}

# ticks PID: us on a CPU, every thread: finer than the 10 ms ticks of
# /proc/PID/stat
ticks() { cat /proc/"$1"/task/*/schedstat | awk '{ ns += $1 } END { printf "%d", ns / 1000 }'; }

# in_lab NAME VARS -- [KERNEL_DIR...]: run bench/NAME.sh --guest in a
# guest of each lab kernel (default: every one tests/vm/fetch.sh has),
# the environment variables named in VARS passed in, and exit with the
# last failure. A guest kernel that panicked in early boot (TCG, as in
# lab.sh), before the bench printed its first "# NAME:" line, is booted
# once more.
in_lab() {
	local name=$1 names=$2 vars="" v k try out rc st=0
	shift 3
	[ "$(id -u)" = 0 ] || { echo "$name: needs root (qemu, and the guest's BPF)" >&2; exit 2; }
	make -s all tests-build >/dev/null || exit 1
	if [ $# -eq 0 ]; then
		for k in $(tests/vm/fetch.sh | awk '{ print $3 }'); do set -- "$@" "$k"; done
	fi
	[ $# -gt 0 ] || { echo "$name: no lab kernel (tests/vm/fetch.sh)" >&2; exit 2; }
	for v in $names; do
		[ -n "${!v:-}" ] && vars+="$v=$(printf '%q' "${!v}") "
	done
	for k in "$@"; do
		for try in 1 2; do
			out=$(tests/vm/run.sh -t 3600 "$k" "${vars}bash bench/$name.sh --guest" 2>&1)
			rc=$?
			[ "$rc" -eq 125 ] && grep -q 'Kernel panic' <<<"$out" &&
				! grep -q "^# $name:" <<<"$out" && [ $try = 1 ] || break
			echo "# $k: the guest kernel panicked in boot; booted again"
		done
		printf '%s\n' "$out"
		[ "$rc" -eq 0 ] || st=$rc
	done
	exit "$st"
}
