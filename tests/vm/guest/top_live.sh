# Inside a lab guest (tests/vm/lab.sh), where stream writes work: the
# interactive top (ncurses, in tmux) on real faults, as a person uses it:
# the rows, a program's fault groups (Enter), its follow view (f), the
# terminal given back (q). Oracles: the runs of each demo program (one
# report per run), the faulting statements' lines in bpf/demo.bpf.c found
# by their text, tmux capture-pane for what is drawn, stty -g before and
# after.
. tests/lib.sh

S=bpfstderr-lab-top-$$
LAB_CLEANUP='tmux kill-session -t "$S" 2>/dev/null'
lab_start
bpftool btf dump file /sys/kernel/btf/vmlinux > "$out/btf.txt"
start_holder D demo || { fail "holdprog demo loads"; finish; }
check_refusals D

# -- faults before top starts: they wait in the streams --------------------
declare -A runs=([arena_read]=3 [may_goto]=2 [deadlock]=4)
declare -A func=([arena_read]=bpf_prog_report_arena_violation
		 [may_goto]=bpf_prog_report_may_goto_violation
		 [deadlock]=bpf_prog_report_rqspinlock_violation)
declare -A stmt=([arena_read]='return *(volatile __u64 __arena *)arena_addr;'
		 [may_goto]='while (can_loop)'
		 [deadlock]='deadlock_ret = bpf_res_spin_lock(&v2->lock);')
kinds=""
while read -r k id; do
	if ! grep -q "FUNC '${func[$k]}'" "$out/btf.txt"; then
		skip "top: $k" "this kernel has no ${func[$k]}"
		continue
	fi
	check_eq "demo_$k runs ${runs[$k]} times" "$(holder_cmd D "fault $k ${runs[$k]}")" "ran ${runs[$k]}"
	kinds+="$k "
done <<<"$(faulting_progs D)"
[ -n "$kinds" ] || { fail "a fault source this kernel reports" "none loaded"; finish; }

top_pane "$S" 160 40 "$BPFSTDERR top -d 0.5 2> $out/top.err"
check "top shows the demo programs" wait_for " demo_" "$S"
faults_now() { [ "$(col "$1" FAULTS)" = "$2" ]; }	# ID N
faults_are() {	# ID N: top's FAULTS cell of program ID is N, within 60 s
	wait_until 60 faults_now "$1" "$2"
}
for k in $kinds; do
	id=$(prog_id D "demo_$k")
	check "top: demo_$k's row counts its ${runs[$k]} faults ($(col "$id" FAULTS))" faults_are "$id" "${runs[$k]}"
done

# -- Enter: the fault groups of one program, at its faulting statement -----
k=${kinds%% *}
line=$(grep -nF -- "${stmt[$k]}" bpf/demo.bpf.c | head -n 1 | cut -d: -f1)
# top takes keys in order, each acted on at once (the filter's view is
# rebuilt on each key); what Enter opens is drawn at top's pace: the
# screen once it has the groups and their frame (or after 60 s: the
# checks below fail on what is there)
keys / "demo_$k" Enter
keys g Enter
wait_for "FAULT GROUPS" && wait_for "demo.bpf.c:$line "
screen > "$out/detail.txt"
check "Enter on demo_$k: its fault groups" grep -q '^FAULT GROUPS' "$out/detail.txt"
check "the header names the filter" grep -q "^bpfstderr top - filter: demo_$k - " "$out/detail.txt"
check_eq "detail: one group, of its ${runs[$k]} faults" \
	"$(grep -oE '^ *[0-9]+x ' "$out/detail.txt" | tr -d ' ' | paste -sd' ')" "${runs[$k]}x"
check "detail: the BPF frame at the faulting statement (demo.bpf.c:$line)" \
	grep -qE "_demo_$k\+0x[0-9a-f]+/0x[0-9a-f]+ (/[^ ]*/)?demo\.bpf\.c:$line " "$out/detail.txt"

# -- f: the follow view, with a fault made now ------------------------------
keys q f
check "f: follow view of demo_$k" wait_for "following program $(prog_id D "demo_$k") demo_$k"
sleep 1.1	# the faults above are all of an earlier second
t0=$(date +%H:%M:%S)
holder_cmd D "fault $k 1" > /dev/null
fault_since() {	# a FAULT line stamped t0 or later on the follow view
	screen | awk -v t="$t0" '/ FAULT / && substr($1, 1, 8) >= t { f = 1 } END { exit !f }'
}
check "follow view: the fault made at $t0 shows up" wait_until 60 fault_since
keys q
check_eq "back in the table: demo_$k counts $((${runs[$k]} + 1))" "$(faults_are "$(prog_id D "demo_$k")" $((${runs[$k]} + 1)) && echo yes)" yes

# -- q: quits, the terminal as it was --------------------------------------
keys q
check "q: quits, terminal restored, exit 0" wait_for "terminal same rc=0"
check_eq "top said nothing on stderr" "$(cat "$out/top.err")" ""
stop_holder D
finish
