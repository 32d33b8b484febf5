# `bpfstderr top` and the terminal it borrows, through tmux: what the
# status line shows first at 120 columns, the terminal after every
# signal that ends top, and while top is stopped (Ctrl-Z, then fg; what
# it holds meanwhile is tests/vm/guest/stopped_viewer.sh's). Oracles: tmux capture-pane, the pane's own state
# (#{alternate_on}, #{cursor_flag}) and `stty -g` before and after.
. tests/lib.sh

S=bpfstderr-term-$$
out=$(mktmp)
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT

# top in a fresh pane; the shell around it says whether the terminal
# settings came back, and with which exit status top ended.
run_top() {	# run_top COLS
	tmux kill-session -t "$S" 2>/dev/null
	top_pane "$S" "$1" 30 "$BPFSTDERR top -d 0.5 2> $out/top.err"
	wait_for "bpfstderr top"
}
# The top process of this pane only: other tests may run their own.
top_pid() { pgrep -P "$(tmux display -p -t "$S" '#{pane_pid}')" -x bpfstderr; }

# 1. At 120 columns a paused, filtered top says so on its first line.
run_top 120 || fail "top starts"
keys r
keys / z z _ n o _ s u c h Enter
keys Space
line=$(screen | head -n 1)
check "120 cols: PAUSED on the status line" grep -q 'PAUSED' <<<"$line"
check "120 cols: the filter on the status line" grep -qF 'filter: zz_no_such' <<<"$line"
keys p
check "120 cols: PAUSED gone once resumed" bash -c "! tmux capture-pane -p -t $S | head -n 1 | grep -q PAUSED"
keys q

# 2. Every signal a user or a hangup ends top with: terminal restored.
for sig in HUP INT QUIT TERM USR1; do
	run_top 100 || { fail "SIG$sig: top starts"; continue; }
	pid=$(top_pid)
	check "SIG$sig: top is this pane's" test -n "$pid"
	check_eq "SIG$sig: in the alternate screen before" \
		"$(tmux display -p -t "$S" '#{alternate_on}')" 1
	kill -"$sig" $pid
	check "SIG$sig: stty settings restored, exit 0" wait_for "terminal same rc=0"
	check_eq "SIG$sig: out of the alternate screen, cursor shown" \
		"$(tmux display -p -t "$S" '#{alternate_on} #{cursor_flag}')" "0 1"
	check_eq "SIG$sig: nothing on stderr" "$(cat "$out/top.err")" ""
done

# 3. Stopped, by Ctrl-Z typed or by SIGTSTP, as a job of an interactive
# shell: the terminal is the shell's until fg, then top's screen again.
tmux kill-session -t "$S" 2>/dev/null
shell_pane "$S" 100 30
keys "$BPFSTDERR top -d 0.5 2> $out/top.err" Enter
check "Ctrl-Z: top starts as the shell's job" wait_for "bpfstderr top - "
pid=$(top_pid)
for how in "Ctrl-Z typed" "SIGTSTP"; do
	if [ "$how" = SIGTSTP ]; then kill -TSTP "$pid"; else keys C-z; fi
	check "$how: top stops" wait_until 60 stopped "$pid"
	check "$how: the shell says so" wait_until 60 said_stopped
	check_eq "$how: out of the alternate screen, cursor shown" \
		"$(tmux display -p -t "$S" '#{alternate_on} #{cursor_flag}')" "0 1"
	keys fg Enter
	check "$how, fg: top's screen again" wait_for "bpfstderr top - "
	check_eq "$how, fg: in the alternate screen" "$(tmux display -p -t "$S" '#{alternate_on}')" 1
done
keys q
keys 'echo "top rc=$?"' Enter
check "q after fg: top ends 0" wait_for "top rc=0"
check_eq "Ctrl-Z: nothing on stderr" "$(cat "$out/top.err")" ""
finish
