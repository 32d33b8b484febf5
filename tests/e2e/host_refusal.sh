# Hosts differ: some refuse arena maps with EPERM although every BPF
# capability is held. doctor must say so per fault kind, top --demo must
# load the rest, and every error must tell a refusal despite capabilities
# from a missing capability.
# INJECTED REFUSALS: tests/shim/refuse_shim.c makes chosen bpf() calls
# fail with EPERM, as such a host does; without it, doctor is checked
# against the independent probe (probe_host.py) on this host as it is.
. tests/lib.sh

REFUSE=$(realpath "$HELPERS/librefuseshim.so")
S=bpfstderr-refusal-$$
out=$(mktmp)
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
refusing() {	# refusing ENV=VAL... CMD...: CMD with the shim refusing
	env LD_PRELOAD="$REFUSE" ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 "$@"
}

# -- this host as it is: doctor agrees with the independent probe
"$BPFSTDERR" doctor --json > "$out/d.json"
for src in arena may_goto; do
	if python3 tests/e2e/probe_host.py "$src" > /dev/null; then want=true; else want=false; fi
	check_eq "doctor: $src available as probe_host.py finds it" \
		"$(jq ".fault_reports.$src.available" "$out/d.json")" "$want"
done

# -- a host that refuses arena maps
refusing BPFSTDERR_REFUSE_MAP_TYPE=33 "$BPFSTDERR" doctor --json > "$out/r.json"
check_eq "refused arena: the independent probe agrees it is refused" \
	"$(refusing BPFSTDERR_REFUSE_MAP_TYPE=33 python3 tests/e2e/probe_host.py arena)" "refused EPERM"
check_eq "refused arena: doctor --json says not available, EPERM, at the map" \
	"$(jq -c '.fault_reports.arena | [.available, .errno, .refused]' "$out/r.json")" \
	'[false,"EPERM","creating an arena map"]'
check_eq "refused arena: may_goto and res_spin_lock still available" \
	"$(jq -c '[.fault_reports.may_goto.available, .fault_reports.res_spin_lock.available]' "$out/r.json")" \
	'[true,true]'
check "refused arena: the cause says the capability is held" \
	grep -q 'although CAP_SYS_ADMIN is held' <<<"$(jq -r .fault_reports.arena.cause "$out/r.json")"
refusing BPFSTDERR_REFUSE_MAP_TYPE=33 "$BPFSTDERR" doctor > "$out/r.txt"; rc=$?
check_eq "refused arena: doctor still says bpfstderr can work (exit 0)" "$rc" 0
check "refused arena: doctor text names the refusal" \
	grep -q '^fault reports .*arena REFUSED' "$out/r.txt"
check "refused arena: doctor text says what was refused and the errno" \
	grep -q 'arena: creating an arena map failed: Operation not permitted (EPERM)' "$out/r.txt"

# The holder's demo, as the live tests load it, agrees.
start_holder_refusing() {
	LD_PRELOAD=$REFUSE BPFSTDERR_REFUSE_MAP_TYPE=33 \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 start_holder "$@"
}
start_holder_refusing H demo || { fail "holder loads the other sources"; finish; }
check_eq "holder: arena refused with EPERM" "$(awk 'NF { print $1, $2 }' <<<"$H_REFUSED")" "arena 1"
check "holder: may_goto and deadlock programs loaded" \
	[ -n "$(prog_id H demo_may_goto)" -a -n "$(prog_id H demo_deadlock)" ]
check_eq "holder: no arena program loaded" "$(prog_id H demo_arena_read)$(prog_id H demo_arena_write)" ""
stop_holder H

# top --demo shows what loaded and one line naming the refusal; q quits.
tmux new-session -d -s "$S" -x 160 -y 32 "bash -c 'LD_PRELOAD=$REFUSE BPFSTDERR_REFUSE_MAP_TYPE=33 \
	ASAN_OPTIONS=\${ASAN_OPTIONS:-}:verify_asan_link_order=0 $BPFSTDERR top --demo 2> $out/top.err; \
	echo EXITED rc=\$?; sleep 60'"
check "top --demo: a notice names the arena refusal" wait_for "demo: this host refuses arena"
# Only this top's own programs: others on the machine may run demos too.
top_pid=$(descendants "$(tmux display -p -t "$S" '#{pane_pid}')" bpfstderr)
# ... and only they on the screen: a busy machine's programs would push them off
keys / "bpfstderr($top_pid)" Enter
own() { screen | awk -v o="bpfstderr($top_pid)" '$4 == o'; }
faults_of() {	# NAME: its FAULTS cell
	screen | awk -v n="$1" -v o="bpfstderr($top_pid)" '
		$1 == "ID" { for (i = 1; i <= NF; i++) if ($i ~ /^FAULTS/) c = i }
		$3 == n && $4 == o && c { print $c }'
}
untraced() { screen | grep -q 'without a trace'; }	# the banner: design.md section 4
for i in $(seq 50); do own | grep ' demo_deadlock ' | grep -qE 'leaked|full' && break; untraced && break; sleep 0.2; done
check_eq "top --demo: its programs are may_goto, deadlock and print, no arena" \
	"$(own | awk '{ print $3 }' | sort | tr '\n' ' ')" "demo_deadlock demo_may_goto demo_print "
if untraced; then
	check_eq "top --demo: reports dropped without a trace here: the deadlock program shows 0 faults" \
		"$(faults_of demo_deadlock)" 0
else
	check "top --demo: the deadlock program's reports show as saturation or faults" \
		bash -c "[ '$(faults_of demo_deadlock)' -gt 0 ] 2>/dev/null || grep -qE 'leaked|full' <<<'$(own | grep ' demo_deadlock ')'"
fi
tmux send-keys -t "$S" q
check "top --demo: q quits with exit 0" wait_for "EXITED rc=0"
check_eq "top --demo: nothing on stderr" "$(cat "$out/top.err")" ""

# Nothing at all loads: top --demo stops, saying why, exit 3.
refusing BPFSTDERR_REFUSE_PROG=demo_ "$BPFSTDERR" top -b -n 1 --demo > /dev/null 2> "$out/none.err"; rc=$?
check_eq "no demo source loads: exit 3" "$rc" 3
# the arena map comes first: a host that refuses it (probe_host.py) stops there
arena_step="loading its programs"
host_refuses arena && arena_step="creating an arena map"
check_eq "no demo source loads: one line naming every source, step and errno" "$(cat "$out/none.err")" \
	"bpfstderr: cannot load the demo programs: this host refuses arena ($arena_step: EPERM), may_goto (loading its programs: EPERM), res_spin_lock (loading its programs: EPERM), print (loading its programs: EPERM); \`bpfstderr doctor\` says why"

# The watch refused: doctor says every cycle walks and why; drainers walk.
refusing BPFSTDERR_REFUSE_PROG=watch_check "$BPFSTDERR" doctor --json > "$out/walk.json"
check_eq "watch refused: doctor says every cycle walks, with the errno" \
	"$(jq -r '.program_list | "\(.mode) \(.errno)"' "$out/walk.json")" "walk EPERM"
start_holder W writer || fail "load writer"
wid=$(prog_id W writer)
refusing BPFSTDERR_REFUSE_PROG=watch_check "$BPFSTDERR" top -b -n 2 -d 0.1 > "$out/walk.top" 2> "$out/walk.err"; rc=$?
check_eq "watch refused: top -b runs (exit 0)" "$rc" 0
check "watch refused: top lists a program loaded now" grep -qE "^ *$wid " "$out/walk.top"
stop_holder W

# Any refused call: EPERM with CAP_SYS_ADMIN held is not "needs CAP_SYS_ADMIN".
refusing BPFSTDERR_REFUSE_PROG=list_progs "$BPFSTDERR" list > /dev/null 2> "$out/list.err"; rc=$?
check_eq "list, iterator refused: exit 3" "$rc" 3
check "list, iterator refused: says the capability is held" \
	grep -q 'refused although CAP_SYS_ADMIN is held' "$out/list.err"
check "list, iterator refused: does not blame a missing capability" \
	bash -c "! grep -q 'needs CAP_SYS_ADMIN' '$out/list.err'"
# -- a host where the write probe cannot load: writes are untested, and
# doctor must not say that bpfstderr can work here.
refusing BPFSTDERR_REFUSE_PROG=stream_probe "$BPFSTDERR" doctor > "$out/w.txt"
refusing BPFSTDERR_REFUSE_PROG=stream_probe "$BPFSTDERR" doctor --json > "$out/w.json"
check "write probe refused: stream writes untested, with the errno" \
	grep -qE '^stream writes +untested \(probe: Operation not permitted' "$out/w.txt"
check "write probe refused: the verdict is not 'can work here'" \
	bash -c "! grep -q 'can work here' '$out/w.txt'"
check "write probe refused: the verdict says writes are untested" \
	grep -qE '^verdict +bpfstderr can read streams here, but stream writes are untested' "$out/w.txt"
check_eq "write probe refused: --json has the caveat, still usable" \
	"$(jq -c '[.usable, .stream_writes.verdict, (.caveat | test("untested"))]' "$out/w.json")" \
	'[true,"untested",true]'
if command -v capsh > /dev/null; then
	capsh --drop=cap_sys_admin -- -c "'$BPFSTDERR' list" > /dev/null 2> "$out/nocap.err"; rc=$?
	check_eq "list without CAP_SYS_ADMIN: exit 3" "$rc" 3
	check "list without CAP_SYS_ADMIN: names the missing capability" \
		grep -q 'needs CAP_SYS_ADMIN' "$out/nocap.err"
	capsh --drop=cap_sys_admin -- -c "'$BPFSTDERR' doctor --json" > "$out/nocap.json"
	bpftool btf dump file /sys/kernel/btf/vmlinux | grep -q "FUNC 'bpf_prog_report_arena_violation'" &&
		want=true || want=false
	check_eq "doctor without CAP_SYS_ADMIN: what the kernel reports is still from BTF" \
		"$(jq .fault_reports.arena.kernel_reports "$out/nocap.json")" "$want"
	check_eq "doctor without CAP_SYS_ADMIN: not probed, so available is null" \
		"$(jq .fault_reports.arena.available "$out/nocap.json")" "$([ $want = true ] && echo null || echo false)"
fi
finish
