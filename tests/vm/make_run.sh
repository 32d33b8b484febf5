#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`'s lab path as a person meets it, in tmux: where this host's
# writes fail, make run says which probe failed (the write's return value,
# as the test's own program measures it) and boots Debian's kernel in qemu
# on the terminal; elsewhere `make demo-vm` does. Then: top's notice names
# Debian's kernel under QEMU, the guest has one CPU under TCG (two under
# KVM), the terminal's size reached the guest, the demo rows' fault counts
# rise about once a second, q exits 0 and the terminal comes back as it
# was (stty -g, the pane's alternate screen and cursor); keys reach top in
# the guest; a guest whose kernel died in early boot is booted again. Run
# by tests/vm/lab.sh (make vmtest) after the guest tests. Every wait ends
# as soon as make run has ended in the pane: the check then fails with the
# pane's last line (more in the "# console:" and "# pane:" lines after
# it), never by waiting out its bound.
#
# Usage: make_run.sh [BUILD]
cd "$(dirname "$0")/../.." || exit 1
BUILD=${1:-build}
export BPFSTDERR=$BUILD/bpfstderr HELPERS=$BUILD/tests
. tests/lib.sh

S=bpfstderr-make-run-$$
out=$(mktmp)
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
COLS=100 ROWS=30

# The oracle of the path: the test's own write.
start_holder H writer || { fail "load writer"; finish; }
ret=$(holder_cmd H "write 2 1 20")
ret=${ret#rets }
stop_holder H
if [ "$ret" = 0 ]; then
	target=demo-vm
else
	target=run
fi
echo "# the test's own stream write returned $ret: make $target"

top_pane "$S" "$COLS" "$ROWS" "make -s $target BUILD=$BUILD" "$out/pane.log"

shows() { tmux capture-pane -p -J -t "$S" 2>/dev/null | grep -qE -- "$1"; }
# ended: make run's command is over in the pane (top_pane's last words),
# or the pane itself is gone
ended() { shows '^terminal (same|changed) rc=' || ! tmux has-session -t "$S" 2>/dev/null; }
# in_pane DESC SECS REGEX: a check that the pane shows REGEX within SECS;
# when the pane's command ends first it fails at once. A failure is
# followed by the kernel's words in all the guest wrote to the pane
# ("# console:", from the pane's log: a panic scrolls off the screen) and
# the pane's last lines ("# pane:"): tests/run.sh's recap shows them.
in_pane() {
	local end=$((SECONDS + $2)) last
	until shows "$3"; do
		if ended || [ "$SECONDS" -ge "$end" ]; then
			shows "$3" && break	# shown as it ended
			last=$(tmux capture-pane -p -J -t "$S" 2>/dev/null | grep -v '^$' |
				grep -v '^terminal .* rc=' | tail -n 1)
			ended && last="its command ended: ${last:-the pane is gone}" ||
				last="not within $2 s; the pane's last line: $last"
			fail "$1" "$last"
			sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b.//g; s/\r//g' "$out/pane.log" 2>/dev/null |
				grep -a -E 'Oops|BUG|Kernel panic|RIP:|^bpfstderr-lab:|^lab-init:' |
				head -n 8 | sed 's/^/# console: /'
			tmux capture-pane -p -J -t "$S" 2>/dev/null | grep -v '^$' | tail -n 10 |
				sed 's/^/# pane: /'
			return 1
		fi
		sleep 0.2
	done
	pass "$1"
}

if [ "$target" = run ]; then
	in_pane "make run names the failed probe: the write returned $ret" 60 \
		"^make run: stream writes fail here \(bpf_stream_vprintk[a-z_]* returned $ret\): running the demo in Debian.s kernel under qemu"
fi
# The guest boots (TCG: a minute or two; the kernel may be downloaded
# first). Without top in the guest nothing after can pass.
in_pane "top runs in the guest: its notice names Debian's kernel under QEMU" 900 \
	'^demo on Debian [0-9.]* under QEMU: ' || finish
in_pane "... where stream writes work" 60 '^stream writes work'
# Under TCG the terminal's guest has one CPU (tests/vm/run.sh: with two,
# qemu lets a vCPU run a breakpoint the kernel has patched away), under
# KVM the lab's two: qemu's own command line says which.
qargs=$(for p in $(descendants "$(tmux display -p -t "$S" '#{pane_pid}')" qemu-system-x86); do
	tr '\0' ' ' <"/proc/$p/cmdline"; done)
case $qargs in
'') want="a qemu" why="none found under the pane" ;;
*"-accel tcg"*) want=1 why=TCG ;;
*) want=2 why=KVM ;;
esac
[ -n "${BPFSTDERR_LAB_SMP:-}" ] && want=$BPFSTDERR_LAB_SMP why=BPFSTDERR_LAB_SMP
check_eq "the guest's CPUs: $want ($why)" "$(sed -n 's/.* -smp \([0-9]*\) .*/\1/p' <<<"$qargs")" "$want"
screen > "$out/s.txt"
check_eq "the terminal's size reached the guest: top's footer on line $ROWS" \
	"$(awk '/^Enter detail/ { print NR }' "$out/s.txt")" "$ROWS"
check "... and its status line is cut at $COLS columns" \
	bash -c "[ \$(head -n 1 '$out/s.txt' | wc -c) -eq $((COLS + 1)) ]"

# Fault counts rise with the demo's runs, each program once a second:
# the count rises five times, seen on the screen as it changes (the
# event), and never faster than the clock allows (at most a fault per
# second and program, two seconds of slack for the screen's tick).
faults() { col demo_may_goto FAULTS; }
counted() { [ "$(faults)" -gt 0 ] 2>/dev/null; }
check "demo_may_goto's faults are counted" wait_until 120 counted
f0=$(faults) t0=$(date +%s.%N) rises=0 prev=$f0
risen() {	# true after the fifth rise seen; counts each one seen
	local f
	f=$(faults)
	[ "${f:-0}" -gt "${prev:-0}" ] 2>/dev/null && { rises=$((rises + 1)); prev=$f; }
	[ "$rises" -ge 5 ]
}
wait_until 120 risen
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a + 0.999 }')
check "fault counts rise: $f0 -> $prev, seen rising $rises times in $secs s" \
	bash -c "[ $rises -ge 5 ] && [ $((prev - f0)) -le $((secs + 2)) ]"

# Keys reach top in the guest: Down and Enter open the second row's detail.
tmux send-keys -t "$S" Down Enter
in_pane "keys reach the guest: Down, Enter open a detail" 60 '^detail of program [0-9]* demo_'
tmux send-keys -t "$S" q
in_pane "q goes back to the table" 60 ' ID TYPE '
tmux send-keys -t "$S" q
in_pane "q ends top and the guest: exit 0, terminal settings as before" 120 'terminal same rc=0'
check_eq "the pane left the alternate screen, cursor shown" \
	"$(tmux display -p -t "$S" '#{alternate_on} #{cursor_flag}')" "0 1"
check_eq "no qemu left behind" "$(descendants "$(tmux display -p -t "$S" '#{pane_pid}')" qemu-system-x86)" ""

# A guest whose kernel dies in early boot (under TCG, once in a few dozen
# boots) is booted again, saying so: here the first boot is made to stop
# before its command, at the qemu boundary (a wrapper that exits at once),
# the second is qemu's own, on the terminal as make run's.
tmux kill-session -t "$S"
{
	echo '#!/bin/sh'
	echo 'case " $* " in'
	echo '*" -kernel "*) [ -e "$0.booted" ] || { : > "$0.booted"; exit 1; } ;;'
	echo 'esac'
	printf "exec '%s' \"\$@\"\n" "$(command -v "${QEMU:-qemu-system-x86_64}")"
} > "$out/qemu"
chmod +x "$out/qemu"
kdir=$(BPFSTDERR_LAB_KERNELS=7 bash tests/vm/fetch.sh 2>/dev/null | awk '{ print $3; exit }')
top_pane "$S" "$COLS" "$ROWS" "BPFSTDERR_LAB_TTY=1 QEMU=$out/qemu bash tests/vm/run.sh $kdir \"exit 7\"" \
	"$out/pane.log"
in_pane "a guest stopped before its command is booted again, and says so" 60 \
	'^bpfstderr-lab: the guest.s kernel .* stopped before the command started; booting it again'
in_pane "... the second boot runs the command: its exit code (7)" 300 'terminal same rc=7'
finish
