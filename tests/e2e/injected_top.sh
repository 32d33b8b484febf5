# `bpfstderr top` driven through tmux: keys sent, the screen read back with
# capture-pane. INJECTED CONTENT: the writer program's stream bytes come
# from tests/shim fixtures, not from the kernel (stream writes fail here).
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
S=bpfstderr-top-$$
out=$(mktmp)
trap 'for s in "$S" "$S-term" "$S-demo"; do tmux kill-session -t "$s" 2>/dev/null; done; [ -n "${mnt:-}" ] && mountpoint -q "$mnt" && { rm -f "$mnt/cap"; umount "$mnt"; }; cleanup' EXIT

start_holder H writer names || { fail "load test programs"; finish; }
start_holder G writer || { fail "load a program to unload"; finish; }
gone=$(prog_id G writer)
id=$(prog_id H writer)
long=$(prog_id H a_program_name_)
# The kernel's answer to a real write says whether this host's stream
# writes work (rets 0) or fail (ENOMEM on our machines).
wret=$(holder_cmd H "write 1 1 4")
holder_cmd H "write 2 1 4" > /dev/null
printf 'hello from stdout\n\033[31mred\033[0m\n' > "$out/$id.1"
cp tests/fixtures/upstream-6.18.txt "$out/$id.2"
# the fixture's arena write again, at another address: one group, two addresses
awk 'BEGIN { RS = ""; ORS = "\n\n" } /^ERROR: Arena WRITE/ { sub(/0x100000000cafe/, "0x100000000d008"); print; exit }' \
	tests/fixtures/upstream-6.18.txt >> "$out/$id.2"
faults=$(grep -c '^ERROR:' "$out/$id.2")
# KINDS as the fixture's headers count them, unknown kinds last
kinds=$(awk '/^ERROR: / {
		if (/Arena READ/) k = "AR"; else if (/Arena WRITE/) k = "AW"; else if (/may_goto/) k = "MG"
		else if (/deadlock/) k = "DL"; else if (/Timeout detected for bpf_res_spin_lock/) k = "LT"; else k = "?"
		n[k]++ }
	END { split("AR AW MG DL LT ?", o, " "); for (i = 1; i <= 6; i++) if (n[o[i]]) s = s (s ? " " : "") o[i] ":" n[o[i]]; print s }' "$out/$id.2")
aw=$(grep -o '^ERROR: Arena WRITE access at unmapped address 0x[0-9a-f]*' "$out/$id.2" | awk '{ print $NF }' |
	python3 -c 'import sys; a = [int(x, 16) for x in sys.stdin]; print("%dx arena_write at %d addresses %s-%s, first %s" % (len(a), len(set(a)), hex(min(a)), hex(max(a)), hex(a[0])))')

row() { screen "$S" | awk -v id="$1" '$1 == id'; }

run_top() {	# run_top SESSION ARGS: top in a fresh tmux, reporting how it ended
	top_pane "$1" 160 32 "LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$out \
		ASAN_OPTIONS=\${ASAN_OPTIONS:-}:verify_asan_link_order=0 $BPFSTDERR top $2 2> $out/top.err"
}

run_top "$S" "-d 0.5"
check "top shows the writer" wait_for " writer " "$S"
# the row once its drains have counted the whole fixture (or after 60 s)
counted() { [ "$(col "$id" FAULTS)" = "$faults" ] && [ "$(col "$id" OUT)" = 2 ]; }
wait_until 60 counted
check_eq "writer row: faults as many as the fixture's reports" "$(col "$id" FAULTS)" "$faults"
check_eq "writer row: 2 stdout messages" "$(col "$id" OUT)" 2
check_eq "writer row: owner is the holder" "$(col "$id" OWNER)" "holdprog($H_PID)"
check_eq "writer row: type as bpftool says" "$(col "$id" TYPE)" \
	"$(bpftool prog show id "$id" -j | jq -r .type)"
check "long name shown in full" bash -c "tmux capture-pane -p -t $S | grep -q ' a_program_name_longer_than_fifteen '"
check "status line names the stream-write verdict" bash -c "tmux capture-pane -p -t $S | sed -n 2p | grep -q '^stream writes '"
check "the faulting program sorts first" bash -c "tmux capture-pane -p -t $S | sed -n 4p | grep -q ' writer '"
# Columns size to their content: at 170 columns KINDS is whole, not cut
# mid-entry; a cell that does not fit says so with a mark.
# (each resize: the screen once it is redrawn at the new size, or 30 s)
kinds_whole() { [ -n "$kinds" ] && grep -qF " $kinds " <<<"$(row "$id")"; }
tmux resize-window -t "$S" -x 170 -y 32
check "170 columns: KINDS whole ($kinds)" wait_until 30 kinds_whole
tmux resize-window -t "$S" -x 60 -y 32
name_cut() {
	cut=$(col "$long" NAME)
	base=${cut%…}; [ "$base" != "$cut" ] || base=${cut%>}	# the mark: an ellipsis, '>' without UTF-8
	[ "$base" != "$cut" ] && [ -n "$base" ] && [[ a_program_name_longer_than_fifteen == "$base"?* ]]
}
wait_until 30 name_cut
check "60 columns: the long name cut and marked as cut ($cut)" name_cut
tmux resize-window -t "$S" -x 160 -y 32
wait_for ' a_program_name_longer_than_fifteen ' > /dev/null

keys s
check "s: sort by the next column (kinds)" bash -c "tmux capture-pane -p -t $S | grep -q 'KINDSv'"
keys '<'
check "<: back to faults" bash -c "tmux capture-pane -p -t $S | grep -q 'FAULTSv'"
keys r
check "r: reversed" bash -c "tmux capture-pane -p -t $S | grep -q 'FAULTS^'"
keys r

keys / n a m e Enter
check "filter: the long-named program stays" test -n "$(row "$long")"
check "filter: the writer is gone" test -z "$(row "$id")"
check "filter shown in the status line" bash -c "tmux capture-pane -p -t $S | head -n 1 | grep -q 'filter: name'"
keys / Escape
check "filter cleared" test -n "$(row "$id")"

keys g Enter
check "Enter: detail with fault groups" bash -c "tmux capture-pane -p -t $S | grep -q '^FAULT GROUPS'"
check "detail: the arena fault and its BPF source line" \
	bash -c "tmux capture-pane -p -t $S | grep -q 'arena_fault+0x4f/0x78 demo.bpf.c:41'"
check "detail: a group at two addresses is headed by both ($aw)" \
	bash -c "tmux capture-pane -p -t $S | grep -qF -- '$aw (CPU'"
keys q f
check "f: follow view" bash -c "tmux capture-pane -p -t $S | grep -q '^following program $id writer'"
keys g
check "follow: escape sequence shown escaped, not interpreted" \
	bash -c "tmux capture-pane -p -t $S | grep -qF 'stdout: \\x1b[31mred\\x1b[0m'"
keys h
check "h: help lists every key" bash -c "tmux capture-pane -p -t $S | grep -c -E '^  (Up, k|Down, j|Enter|f|/|s, >|<|r|Space, p|c|S|h, \\?|q, Esc|Q) ' | grep -qx 14"
keys G
check "h: help says what statistics cost" bash -c "tmux capture-pane -p -t $S | grep -q 'cost every run of every program'"
keys q q
keys Space
check "Space: paused" bash -c "tmux capture-pane -p -t $S | head -n 1 | grep -q PAUSED"
keys p
keys c
check_eq "c: counts cleared" "$(col "$id" FAULTS)" 0
check "no statistics columns until S" bash -c "! tmux capture-pane -p -t $S | grep -q 'RUN/S'"
keys S
check "S: statistics columns and how they were turned on" \
	bash -c "tmux capture-pane -p -t $S | grep -q 'RUN/S.*NS/RUN.*CPU%' && tmux capture-pane -p -t $S | head -n 1 | grep -q 'stats'"
keys S
check "S again: off" bash -c "! tmux capture-pane -p -t $S | grep -q 'RUN/S'"

tmux resize-window -t "$S" -x 40 -y 10
header_drawn() { screen "$S" | head -n 1 | grep -q '^bpfstderr top'; }
check "40x10: still drawn" wait_until 30 header_drawn
tmux resize-window -t "$S" -x 30 -y 8
check "30x8: a one-line notice" wait_for 'terminal too small'
tmux resize-window -t "$S" -x 160 -y 32
has_row() { [ -n "$(row "$1")" ]; }
check "back to 160x32: table again" wait_until 30 has_row "$id"

stop_holder G
# marked at the first refresh that finds it gone (or after 60 s)
unloaded_shown() { [ "$(col "$gone" OWNER)" = "(unloaded)" ]; }
wait_until 60 unloaded_shown
check_eq "an unloaded program stays, marked" "$(col "$gone" OWNER)" "(unloaded)"

keys q
check "q: quits, terminal restored, exit 0" wait_for "terminal same rc=0" "$S"
check_eq "nothing on stderr" "$(cat "$out/top.err")" ""

run_top "$S-term" ""
wait_for " writer " "$S-term" > /dev/null
# This top only: other bpfstderr on the machine (a recorder, another
# test) are not ours to signal.
kill -TERM $(descendants "$(tmux display -p -t "$S-term" '#{pane_pid}')" bpfstderr)
check "SIGTERM: terminal restored, exit 0" wait_for "terminal same rc=0" "$S-term"

# --demo: its programs run, and are unloaded when top ends. On a host
# whose writes fail the reports show only as leaked bytes; where writes
# work, as faults. Only this top's own programs count (owner
# bpfstderr(PID)): others on the machine may run demos too.
tmux new-session -d -s "$S-demo" -x 160 -y 32 "$BPFSTDERR top --demo; sleep 60"
check "--demo: the demo programs are shown" wait_for "demo_deadlock" "$S-demo"
demo_pid=$(descendants "$(tmux display -p -t "$S-demo" '#{pane_pid}')" bpfstderr)
# ... and only they on the screen: a busy machine's programs would push them off
tmux send-keys -t "$S-demo" / "bpfstderr($demo_pid)" Enter; sleep 0.6
own_row() { screen "$S-demo" | awk -v n="$1" -v o="bpfstderr($demo_pid)" '$3 == n && $4 == o'; }
own_faults() {
	screen "$S-demo" | awk -v n="$1" -v o="bpfstderr($demo_pid)" '
		$1 == "ID" { for (i = 1; i <= NF; i++) { h = $i; sub(/[v^]$/, "", h); if (h == "FAULTS") c = i } }
		$3 == n && $4 == o && c { print $c; exit }'
}
own_faulting() { [ "$(own_faults demo_deadlock)" -gt 0 ] 2>/dev/null; }
if [ "$wret" = "rets 0" ]; then
	check "--demo: their reports show as faults (writes work here)" wait_until 60 own_faulting
else
	# Dropped reports show as saturation where the kernel still charges
	# them; where it charges nothing the row stays quiet and the banner says
	# so. Which: the kernel's accounting (the independent iterator) of a
	# deadlock fault a holder of ours made, its run over when it answers:
	# not of top's demo, whose runs come when they come.
	mnt=$(mktmp)/bpffs
	if pin_capacity "$mnt" && start_holder P demo; then
		pdl=$(prog_id P demo_deadlock)
		holder_cmd P "fault deadlock 1" > /dev/null
		cap=$(capacity "$pdl")
		stop_holder P
		leaked_shown() { own_row demo_deadlock | grep -q leaked; }
		if [ "${cap:-0}" -gt 0 ]; then
			check "--demo: their dropped reports show as saturation (writes fail here: $wret, $cap B charged)" \
				wait_until 60 leaked_shown
		else
			has_own_row() { [ -n "$(own_row demo_deadlock)" ]; }
			wait_until 60 has_own_row
			sleep 1.2	# a window for a fault count that must not come
			check_eq "--demo: dropped without a trace ($wret, capacity ${cap:-?}): the row stays at 0 faults, ok" \
				"$(own_row demo_deadlock | grep -c ' ok$') $(own_faults demo_deadlock)" "1 0"
			banner_untraced() { screen "$S-demo" | grep -q 'without a trace'; }
			check "--demo: the banner says the reports leave no trace" banner_untraced
		fi
		rm -f "$CAPACITY_PIN"; umount "$mnt"
	else
		fail "mount bpffs, pin the capacity iterator, load the demo programs"
	fi
fi
demo_ids=$(screen "$S-demo" | awk -v o="bpfstderr($demo_pid)" '$3 ~ /^demo_/ && $4 == o { print $1 }')
check "--demo: its own programs are listed" [ -n "$demo_ids" ]
tmux send-keys -t "$S-demo" q
# top has ended, and the kernel freed its programs (a workqueue): bpftool
# finds none of them, or after 60 s the count left
top_ended() { ! kill -0 "$demo_pid" 2>/dev/null; }
check "--demo: q ends top" wait_until 60 top_ended
demo_left() {
	local i
	left=0
	for i in $demo_ids; do bpftool prog show id "$i" > /dev/null 2>&1 && left=$((left + 1)); done
	[ "$left" = 0 ]
}
wait_until 60 demo_left
check_eq "--demo: its $(wc -w <<<"$demo_ids") programs are unloaded on exit" "$left" 0
tmux kill-session -t "$S-demo"

# Batch mode against bpftool.
"$BPFSTDERR" top -b -n 2 -d 0.2 --json > "$out/batch.json"
check_eq "batch: 2 snapshots" "$(wc -l < "$out/batch.json")" 2
check "batch: valid JSON" jq -e . "$out/batch.json" > /dev/null
for p in "$id" "$long"; do
	check_eq "batch: program $p as bpftool shows it" \
		"$(tail -n 1 "$out/batch.json" | jq -c ".programs[] | select(.id == $p) | [.id, .type, .name, .tag]")" \
		"$(bpftool prog show id "$p" -j | jq -c '[.id, .type, .name, .tag]')"
done
"$BPFSTDERR" top -b -n 1 > "$out/batch.txt"
check "batch plain: header and the writer" grep -qE "^ +$id +syscall +writer " "$out/batch.txt"
"$BPFSTDERR" top > /dev/null 2> "$out/notty"; rc=$?
check_eq "no terminal, no -b: usage error" "$rc" 2
stop_holder H
finish
