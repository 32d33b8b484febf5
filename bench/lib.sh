# SPDX-License-Identifier: GPL-2.0
# Shared by the benches that measure a long-running bpfstderr over idle
# programs (top_cpu.sh, record_metrics.sh). Sourced after `dir` is set.

# hold_idle N: holdprog with one writer and N idle programs, its commands
# on fd 3; sets holder (its pid) and id (the writer's program id), and
# writes once to the writer's stderr so that it has bytes accounted and
# drainers read it.
hold_idle() {
	mkfifo "$dir/in"
	build/tests/holdprog writer idle "$1" < "$dir/in" > "$dir/out" &
	holder=$!
	exec 3> "$dir/in"
	while ! grep -q '^ready' "$dir/out"; do sleep 0.2; done
	id=$(awk '/^prog/ { print $2; exit }' "$dir/out")
	echo "write 2 1 4" >&3
}

# ticks PID: us on a CPU, every thread: finer than the 10 ms ticks of
# /proc/PID/stat
ticks() { cat /proc/"$1"/task/*/schedstat | awk '{ ns += $1 } END { printf "%d", ns / 1000 }'; }
