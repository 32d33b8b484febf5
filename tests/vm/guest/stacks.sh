# Inside a lab guest (tests/vm/lab.sh), where stream writes work: two
# shapes of kernel output that the host suite knows only from fixtures
# written by hand (tests/fixtures/README.md), here made by the kernel:
# - a bpf_stream_print_stack() dump (7.x): one stack event per call, not a
#   run of messages, its BPF frame at the call;
# - a bpf_timer callback's arena fault, the callback run from the timer's
#   interrupt wherever it lands (often inside the program that started
#   it): one group, at the callback's faulting statement.
# Oracles: the runs of stacks_print, the callback's own count of its runs
# (its .bss), the statements' lines in
# tests/bpf/stacks.bpf.c found by their text, and the kernel's BTF for
# whether it has the kfunc at all. A kernel without an arena fault
# reporter (6.17: doctor probes its BTF) runs the callbacks, and the
# checks of their reports skip, with doctor's word for it.
. tests/lib.sh

lab_start
src=tests/bpf/stacks.bpf.c
start_holder S stacks || { fail "holdprog stacks loads (arena maps, bpf_timer)"; finish; }
pid_print=$(prog_id S stacks_print)
pid_timer=$(prog_id S stacks_timer)
line_of() { grep -nF -- "$1" "$src" | head -n 1 | cut -d: -f1; }

J=$out/journal.db
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/record.err" & rpid=$!
wait_until 120 test -s "$J"	# made by record, before the followers open it
"$BPFSTDERR" follow -p "$pid_print" -p "$pid_timer" --json --journal "$J" \
	> "$out/follow.json" 2> "$out/follow.err" & fpid=$!
# and as a person reads them: text, errors only (-e: faults, and stack
# dumps written to stderr)
"$BPFSTDERR" follow -p "$pid_print" -p "$pid_timer" -e --journal "$J" \
	> "$out/follow.txt" 2> "$out/follow_e.err" & epid=$!
check "the followers started" wait_asleep "$fpid"
wait_asleep "$epid"

# -- bpf_stream_print_stack(): 3 calls, 3 dumps -----------------------------
dumps=3
if [ "$(bpftool btf dump file /sys/kernel/btf/vmlinux | grep -c "FUNC 'bpf_stream_print_stack'")" = 0 ]; then
	skip "stack dumps" "this kernel has no bpf_stream_print_stack (7.x has it)"
	dumps=0
else
	for i in $(seq $dumps); do
		check_eq "stacks_print run $i: the kfunc returns 0" "$(holder_cmd S "run $pid_print")" "ran 0"
	done
fi

# -- a timer callback faults, interrupting whatever runs ---------------------
# at once, the program spinning: the interrupt lands inside it
rets=""
for i in $(seq 6); do rets+="$(holder_cmd S "run $pid_timer") "; done
# 20 ms ahead, no spin: it lands wherever the CPU is then
check_eq "the next runs start the timer 20 ms ahead" "$(holder_cmd S "timer 20000000 0")" "timer 20000000 0"
for i in $(seq 6); do rets+="$(holder_cmd S "run $pid_timer") "; sleep 0.1; done
check_eq "stacks_timer: 12 runs, each started its timer" "$rets" "$(printf 'ran 0 %.0s' $(seq 12))"
# the last callback has run when its own count stands still for a second
# (the last timer was due 20 ms after the last run; an emulated guest's
# timers come late); 120 s bound
cbs=$(holder_cmd S callbacks | awk '{ print $2 }')
callbacks_settled() {
	local was=$cbs
	sleep 1
	cbs=$(holder_cmd S callbacks | awk '{ print $2 }')
	[ "$cbs" = "$was" ]
}
wait_until 120 callbacks_settled
check "the timer's callback ran (${cbs:-?} times, by its own count)" test "${cbs:-0}" -ge 1
# the faults to find: every callback run's, or none when the kernel
# writes no arena fault report (asked of doctor, not of the version)
faults=$cbs
arena=$("$BPFSTDERR" doctor --json 2> /dev/null | jq -r '.fault_reports.arena.kernel_reports')
if [ "$arena" != true ]; then
	skip "the timer callback's arena faults" \
		"this kernel writes no arena fault report (doctor --json: fault_reports.arena.kernel_reports $arena)"
	faults=0
fi

prog_of() { jq -c --argjson i "$1" '[.programs[] | select(.id == $i)] | .[0] // {}' "$out/report.json"; }
# record's drains come when they come: the report once it has every
# dump and every callback's fault, or the last one tried (120 s)
all_recorded() {
	"$BPFSTDERR" report --json --journal "$J" > "$out/report.json" 2> /dev/null
	[ "$(jq -c '.stack_dumps // 0' <<<"$(prog_of "$pid_print")")" = "$dumps" ] &&
		[ "$(jq -c '.fault_count // 0' <<<"$(prog_of "$pid_timer")")" = "$faults" ]
}
wait_until 120 all_recorded
pp=$(prog_of "$pid_print")
pt=$(prog_of "$pid_timer")
if [ "$dumps" -gt 0 ]; then
	check_eq "report: stacks_print has $dumps stack dumps, no fault, no message" \
		"$(jq -c '[.stack_dumps, .fault_count, .messages.stderr // 0]' <<<"$pp")" "[$dumps,0,0]"
	want=$(line_of 'return bpf_stream_print_stack(')
	check_eq "report: the dump's BPF frame is the call (stacks.bpf.c:$want)" \
		"$(jq -c '[.stack_dump_example.frames[] | select(.kind == "bpf")][0] | [.func, (.file | split("/") | last), .line]' <<<"$pp")" \
		"[\"stacks_print\",\"stacks.bpf.c\",$want]"
fi
want=$(line_of 'seen += *(volatile __u64 __arena *)arena_addr;')
if [ "$faults" -gt 0 ]; then
	check_eq "report: every callback run is one arena fault ($cbs)" \
		"$(jq -c '[.fault_count, .faults.arena_read // 0]' <<<"$pt")" "[$cbs,$cbs]"
	check_eq "report: one group, at the callback's faulting statement (stacks.bpf.c:$want)" \
		"$(jq -r '[.groups[].signature | capture("(?<fn>[^:@ ]+)@(?<f>[^:@ ]+):(?<l>[0-9]+)$") | "\(.fn)@\(.f):\(.l)"] | join(" ")' <<<"$pt")" \
		"timer_fault@stacks.bpf.c:$want"
fi

ev() { jq -c --argjson i "$1" --arg k "$2" 'select(.prog.id == $i and .kind == $k)' "$out/follow.json"; }
# what the followers print comes at their cycles, from the journal: both
# have it all before SIGINT (or after 120 s: the checks below fail)
all_followed() {
	[ "$(ev "$pid_print" stack | wc -l)" = "$dumps" ] && [ "$(ev "$pid_timer" fault | wc -l)" = "$faults" ] &&
		[ "$(grep -c ' STACK stack dump (CPU ' "$out/follow.txt")" = "$dumps" ] &&
		[ "$(grep -c ' FAULT ' "$out/follow.txt")" = "$faults" ]
}
wait_until 120 all_followed
kill -INT "$fpid" "$epid"; wait "$fpid" "$epid"
check_eq "follow: one stack event per dump, no message" \
	"$(ev "$pid_print" stack | wc -l):$(ev "$pid_print" message | wc -l)" "$dumps:0"
check_eq "follow: every callback's fault, once ($faults)" "$(ev "$pid_timer" fault | wc -l)" "$faults"
check_eq "follow -e: one STACK block per dump, one FAULT per reported callback run" \
	"$(grep -c ' STACK stack dump (CPU ' "$out/follow.txt"):$(grep -c ' FAULT ' "$out/follow.txt")" "$dumps:$faults"
if [ "$dumps" -gt 0 ]; then
	check "follow -e: the dump's BPF frame at the call" \
		grep -q "stacks_print.*stacks.bpf.c:$(line_of 'return bpf_stream_print_stack(')" "$out/follow.txt"
fi
# what the interrupt interrupted, in the kernel's own text of each report:
# a frame of stacks_timer below the callback's, or none
if [ "$faults" -gt 0 ]; then
	inside=$(ev "$pid_timer" fault | jq -c 'select(.text | test("_stacks_timer\\+0x"))' | wc -l)
	check "the interrupt landed inside stacks_timer ($inside) and elsewhere ($((cbs - inside))): the frames differ, the group does not" \
		test "$inside" -gt 0 -a "$((cbs - inside))" -gt 0
fi
"$BPFSTDERR" report -p "$pid_print" -p "$pid_timer" --journal "$J" > "$out/report.txt" 2> /dev/null
[ "$dumps" -gt 0 ] && check "report text: the dumps as one block" grep -q "^  ${dumps}x stack dump " "$out/report.txt"
kill -TERM "$rpid"; wait "$rpid"; rc=$?
check_eq "record: SIGTERM, exit 0, nothing said" "$rc:$(cat "$out/record.err")" "0:"
stop_holder S
finish
