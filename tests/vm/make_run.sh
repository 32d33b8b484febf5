#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make run`'s lab path as a person meets it, in tmux: where this host's
# writes fail, make run says which probe failed (the write's return value,
# as the test's own program measures it) and boots Debian's kernel in qemu
# on the terminal; elsewhere `make demo-vm` does. Then: top's notice names
# Debian's kernel under QEMU, the terminal's size reached the guest, the
# demo rows' fault counts rise about once a second, q exits 0 and the
# terminal comes back as it was (stty -g, the pane's alternate screen and
# cursor); keys reach top in the guest. Run by tests/vm/lab.sh (make
# vmtest) after the guest tests.
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

top_pane "$S" "$COLS" "$ROWS" "make -s $target BUILD=$BUILD"
if [ "$target" = run ]; then
	check "make run names the failed probe: the write returned $ret" \
		wait_until 60 bash -c "tmux capture-pane -p -J -t $S | grep -qE \
			'^make run: stream writes fail here \\(bpf_stream_vprintk[a-z_]* returned $ret\\): running the demo in Debian.s kernel under qemu'"
fi
# The guest boots (TCG: a minute or two; the kernel may be downloaded first).
check "top runs in the guest: its notice names Debian's kernel under QEMU" \
	wait_until 900 bash -c "tmux capture-pane -p -t $S | grep -q '^demo on Debian [0-9.]* under QEMU: '"
check "... where stream writes work" \
	wait_until 60 bash -c "tmux capture-pane -p -t $S | grep -q '^stream writes work'"
screen > "$out/s.txt"
check_eq "the terminal's size reached the guest: top's footer on line $ROWS" \
	"$(awk '/^Enter detail/ { print NR }' "$out/s.txt")" "$ROWS"
check "... and its status line is cut at $COLS columns" \
	bash -c "[ \$(head -n 1 '$out/s.txt' | wc -c) -eq $((COLS + 1)) ]"

# Fault counts rise with the demo's runs: at most one fault per program
# and second (the demo runs each once a second), and most seconds one.
faults() { col demo_may_goto FAULTS; }
counted() { [ "$(faults)" -gt 0 ] 2>/dev/null; }
check "demo_may_goto's faults are counted" wait_until 120 counted
f0=$(faults) t0=$(date +%s.%N) rises=0 prev=$f0
for i in $(seq 10); do
	sleep 1
	f=$(faults)
	[ "${f:-0}" -gt "${prev:-0}" ] 2>/dev/null && rises=$((rises + 1))
	prev=$f
done
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a + 0.999 }')
check "fault counts rise: $f0 -> $prev in $secs s, rising in $rises of 10 one-second samples" \
	bash -c "[ $rises -ge 5 ] && [ $((prev - f0)) -le $((secs + 2)) ] && [ $((prev - f0)) -ge 5 ]"

# Keys reach top in the guest: Down and Enter open the second row's detail.
tmux send-keys -t "$S" Down Enter
check "keys reach the guest: Down, Enter open a detail" \
	wait_until 60 bash -c "tmux capture-pane -p -t $S | grep -q '^detail of program [0-9]* demo_'"
tmux send-keys -t "$S" q
check "q goes back to the table" \
	wait_until 60 bash -c "tmux capture-pane -p -t $S | grep -q ' ID TYPE '"
tmux send-keys -t "$S" q
check "q ends top and the guest: exit 0, terminal settings as before" \
	wait_until 120 bash -c "tmux capture-pane -p -t $S | grep -q 'terminal same rc=0'"
check_eq "the pane left the alternate screen, cursor shown" \
	"$(tmux display -p -t "$S" '#{alternate_on} #{cursor_flag}')" "0 1"
check_eq "no qemu left behind" "$(descendants "$(tmux display -p -t "$S" '#{pane_pid}')" qemu-system-x86)" ""
finish
