# Inside a lab guest (tests/vm/lab.sh), where stream writes work: the
# live path end to end on real stream content. Oracles by construction:
# the writer's own bytes (37 'x' per write, no newline) and demo_print's
# format string, the number of runs of each faulting program (one report
# per run), the source line of each faulting statement (found in
# bpf/demo.bpf.c by its text, never typed in as a number), the kernel's
# own "  line @ file:num" under the BPF frame, and the independent
# capacity iterator (bpftool iter pin) for what a read never returns.
. tests/lib.sh

lab_start
bpftool btf dump file /sys/kernel/btf/vmlinux > "$out/btf.txt"
reports() { grep -q "FUNC '$1'" "$out/btf.txt"; }

start_holder W writer || { fail "holdprog writer loads"; finish; }
start_holder D demo || { fail "holdprog demo loads"; finish; }
check_refusals D
wid=$(prog_id W writer)

# -- record keeps the journal; a follow of every program reads beside it ----
J=$out/journal.db
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/record.err" & rpid=$!
# the follow starts once record made the journal (two processes creating one
# at once: seen to end the follow with exit 5 once; noted for a later look)
wait_until 120 test -s "$J"
"$BPFSTDERR" follow --all --json --journal "$J" > "$out/follow.json" 2> "$out/follow.err" & fpid=$!
# follow shows what comes after its cursor, taken in its set-up: both
# past their first cycle (asleep in ppoll) before anything is written
check "record's first cycle done" wait_asleep "$rpid"
check "follow's first cycle done" wait_asleep "$fpid"

# -- messages: the writer's bytes, as written ------------------------------
for s in 1 2; do
	check_eq "writer: 3 writes of 37 bytes to stream $s succeed" \
		"$(holder_cmd W "write $s 3 37")" "rets 0 0 0"
done
check_eq "demo_print runs twice" "$(holder_cmd D "fault print 2")" "ran 2"

# -- faults: every kind this kernel reports, a known number of runs ---------
declare -A runs=([arena_read]=3 [arena_write]=2 [may_goto]=2 [deadlock]=2)
declare -A func=([arena_read]=bpf_prog_report_arena_violation
		 [arena_write]=bpf_prog_report_arena_violation
		 [may_goto]=bpf_prog_report_may_goto_violation
		 [deadlock]=bpf_prog_report_rqspinlock_violation)
declare -A jkind=([arena_read]=arena_read [arena_write]=arena_write
		  [may_goto]=may_goto_timeout [deadlock]=lock_deadlock)
# the faulting statement of each program, as bpf/demo.bpf.c spells it
declare -A stmt=([arena_read]='return *(volatile __u64 __arena *)arena_addr;'
		 [arena_write]='*(volatile __u64 __arena *)(arena_addr + 8) = 1;'
		 [may_goto]='while (can_loop)'
		 [deadlock]='deadlock_ret = bpf_res_spin_lock(&v2->lock);')
kinds=""
for k in arena_read arena_write may_goto deadlock; do
	if [ -z "$(prog_id D "demo_$k")" ]; then
		continue	# refused here: check_refusals said why
	elif ! reports "${func[$k]}"; then
		skip "$k faults" "this kernel has no ${func[$k]}"
		continue
	fi
	check_eq "demo_$k runs ${runs[$k]} times" "$(holder_cmd D "fault $k ${runs[$k]}")" "ran ${runs[$k]}"
	kinds+="$k "
done

# -- what record kept: report over the journal ------------------------------
prog_of() { jq -c --argjson i "$1" '[.programs[] | select(.id == $i)] | .[0] // {}' "$out/report.json"; }
# record's drains come when they come (an emulated guest is slow): the
# report once it has every run's fault and the writer's lines (no
# newline: held until 2 s after their last byte), or the last one
# tried; a count that never comes right fails below
all_recorded() {
	local k
	"$BPFSTDERR" report --json --journal "$J" > "$out/report.json" 2> /dev/null
	[ "$(prog_of "$wid")" != "{}" ] || return 1
	for k in $kinds; do
		[ "$(jq -c '.fault_count' <<<"$(prog_of "$(prog_id D "demo_$k")")")" = "${runs[$k]}" ] || return 1
	done
}
wait_until 120 all_recorded
for k in $kinds; do
	id=$(prog_id D "demo_$k")
	p=$(prog_of "$id")
	check_eq "report: demo_$k has exactly its ${runs[$k]} ${jkind[$k]} faults" \
		"$(jq -c '.faults' <<<"$p")" "{\"${jkind[$k]}\":${runs[$k]}}"
	line=$(grep -nF -- "${stmt[$k]}" bpf/demo.bpf.c | head -n 1 | cut -d: -f1)
	check_eq "report: demo_$k's one group is at its faulting statement (demo.bpf.c:$line)" \
		"$(jq -r '[.groups[].signature | capture("@(?<f>[^:@ ]+):(?<l>[0-9]+)") | "\(.f):\(.l)"] | unique | join(" ")' <<<"$p")" \
		"demo.bpf.c:$line"
	# the kernel's own line under the BPF frame, in the report's example
	kline=$(jq -r '[.groups[0].example.frames[] | select(.kind == "bpf") | .line // empty] | .[0] // "none"' <<<"$p")
	check_eq "report: demo_$k's BPF frame agrees with the kernel's line" "$kline" "$line"
	check_eq "report: demo_$k loses nothing (lost bytes 0, the iterator's capacity $(capacity "$id"))" \
		"$(jq -c '[.streams.stderr.lost_bytes, .reports_lost]' <<<"$p")" "[0,false]"
done
wp=$(prog_of "$wid")
check_eq "report: the writer's messages, none lost" \
	"$(jq -c '[.streams.stdout.lost_bytes, .streams.stderr.lost_bytes, .fault_count]' <<<"$wp")" "[0,0,0]"

# -- what the follow beside it read: the same events, each once -------------
ev() {	# ev ID KIND: events of program ID of KIND (fault, message)
	jq -c --argjson i "$1" --arg k "$2" 'select(.prog.id == $i and .kind == $k)' "$out/follow.json" | wc -l
}
demo_pid=$(prog_id D demo_print)
# follow prints what it reads from the journal at its cycles: once every
# report and demo_print's two lines are there (or after 120 s), count
all_followed() {
	local k
	for k in $kinds; do
		[ "$(ev "$(prog_id D "demo_$k")" fault)" = "${runs[$k]}" ] || return 1
	done
	[ "$(jq -c --argjson i "$demo_pid" 'select(.prog.id == $i and .stream == "stdout")' "$out/follow.json" | wc -l)" = 2 ]
}
wait_until 120 all_followed
for k in $kinds; do
	check_eq "follow beside record: every demo_$k report, once" "$(ev "$(prog_id D "demo_$k")" fault)" "${runs[$k]}"
done
# the writer's 111 bytes per stream: no newline, so one line held, flushed
# later or at the end; what follow prints is exactly those bytes
wtext() {
	jq -r --argjson i "$wid" --arg s "$1" 'select(.prog.id == $i and .stream == $s) | .text' \
		"$out/follow.json" | tr -d '\n'
}
printf 'x%.0s' $(seq 111) > "$out/want"
check_eq "follow: demo_print's stdout lines, from its format string" \
	"$(jq -r --argjson i "$demo_pid" 'select(.prog.id == $i and .stream == "stdout") | .text' "$out/follow.json" | paste -sd'|')" \
	"demo: hello from stdout, run 1|demo: hello from stdout, run 2"

# -- unload: follow goes on, the programs stay in the journal ---------------
stop_holder D
sleep 1
check "record still runs after the demo programs are unloaded" kill -0 "$rpid"
"$BPFSTDERR" report --json --journal "$J" > "$out/after.json" 2> /dev/null
for k in $kinds; do
	id=$(prog_id D "demo_$k")
	check_eq "post-mortem: demo_$k's faults stay readable after its unload" \
		"$(jq --argjson i "$id" '[.programs[] | select(.id == $i) | .fault_count] | .[0] // 0' "$out/after.json")" "${runs[$k]}"
done
# the writer's held lines come out 2 s after their last byte, at some
# drainer's cycle, not at SIGINT (a journal keeps what is held): both
# there before the signal (or after 60 s: the check below fails)
written() { [ "$(wtext stdout)" = "$(cat "$out/want")" ] && [ "$(wtext stderr)" = "$(cat "$out/want")" ]; }
wait_until 60 written
kill -INT "$fpid"; wait "$fpid"; frc=$?
check_eq "follow --all: SIGINT, exit 0" "$frc" 0
for s in stdout stderr; do
	check_eq "follow: the writer's $s is its 111 bytes, as written" "$(wtext "$s")" "$(cat "$out/want")"
done

# -- a write without a newline: held, then shown 2 s after its read, at the
# next cycle (man page: between 2 s and 2 s plus -d)
# (on record's journal: a reader of another journal would race it for the
# bytes, and reads are destructive)
"$BPFSTDERR" follow -p "$wid" --json -d 0.2 --journal "$J" > "$out/partial.json" 2>&1 & ppid=$!
check "follow -p: its first cycle done, its cursor set" wait_asleep "$ppid"
t0=$(date +%s%N)
holder_cmd W "write 1 1 20" > /dev/null
end=$((SECONDS + 60))	# polled finely: the time it took is what is checked
until [ -s "$out/partial.json" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.05; done
dt=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -INT "$ppid"; wait "$ppid"
check_eq "a line without its newline: shown as it is, marked partial" \
	"$(jq -c '[.text, .partial]' "$out/partial.json" | head -n 1)" "[\"$(printf 'x%.0s' $(seq 20))\",true]"
# never before 2 s; the upper bound leaves an emulated guest's slow cycles
# room (2 s and a cycle of 0.2 s is ~2.4 s), while a tail that waited for
# anything else (a next write, the 30 s walk, the signal) comes later
check "... $dt ms after the write: 2 s after its read, at a cycle after that (2000-10000 ms)" \
	test "$dt" -ge 2000 -a "$dt" -le 10000

# -- loss the kernel never reports: a message longer than the print buffer -
if leak_oversized W "oversized messages' leaked capacity"; then
	cap=$LEAK_CAP
	# after the drains (record's, report's own): the report that says
	# the iterator's number, or the last one tried (60 s)
	lost_is_cap() {
		"$BPFSTDERR" report --json -p "$wid" --journal "$J" > "$out/lost.json" 2> /dev/null
		lost=$(jq --argjson i "$wid" '[.programs[] | select(.id == $i) | .streams.stderr.lost_bytes] | .[0] // 0' "$out/lost.json")
		[ "$lost" = "$cap" ]
	}
	wait_until 60 lost_is_cap
	check_eq "the kernel kept 6000 B charged for them (independent iterator)" "$cap" 6000
	check_eq "report: lost bytes = the iterator's 6000" "$lost" "$cap"
	check_eq "report: the writer is losing reports" \
		"$(jq --argjson i "$wid" '[.programs[] | select(.id == $i) | .reports_lost] | .[0]' "$out/lost.json")" true
fi
kill -TERM "$rpid"; wait "$rpid"; rc=$?
check_eq "record: SIGTERM, exit 0, nothing said" "$rc:$(cat "$out/record.err")" "0:"
stop_holder W
finish
