# Faults outlive their program: record drains a report whose BPF frames
# name a real program with subprograms; the programs are unloaded; report
# and top still list the fault groups, marked unloaded, with the source
# lines those frames had: the kernel's rule applied to the line info the
# test read itself while the program was loaded. --since/--until cut by
# drain time. Python's sqlite3 reads the journal for the counts.
# INJECTED CONTENT: the reports come from tests/shim.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)
start_holder H subprogs writer || { fail "load test programs"; finish; }
wid=$(prog_id H writer)
echo linfo >&"$H_IN"
: > "$out/linfo"
while IFS= read -r -t 120 -u "$H_OUT" line && [ "$line" != end ]; do echo "$line" >> "$out/linfo"; done

# Three frames, innermost first: the middle byte of each function, named
# as kallsyms names it; the expected line by the kernel's rule.
python3 - "$out" <<'PY'
import sys
d = sys.argv[1]
fns = [l.split() for l in open(f"{d}/linfo") if l.startswith("fn ")]
li = [(int(a, 16), int(line), f.strip()) for _, a, line, f in
      (l.split(maxsplit=3) for l in open(f"{d}/linfo") if l.startswith("li "))]
ksyms = {int(l.split()[0], 16): l.split()[2] for l in open("/proc/kallsyms")}
with open(f"{d}/frames", "w") as fr, open(f"{d}/want", "w") as want:
    for _, addr, n in sorted(fns, key=lambda f: ksyms[int(f[1], 16)].endswith("main")):
        lo, n = int(addr, 16), int(n)
        off = n // 2
        fr.write(f"{ksyms[lo]}+{off:#x}/{n:#x}\n")
        below = [e for e in li if lo <= e[0] < lo + n and e[0] < lo + off]
        want.write(f"{ksyms[lo].split('_', 3)[3]} {below[-1][2]}:{below[-1][1]}\n")
PY
report_of() {	# KIND: a report with the three frames
	printf 'ERROR: %s\nCPU: 0 UID: 0 PID: 1 Comm: t\nCall trace:\n' "$1"
	printf 'bpf_stream_stage_dump_stack+0xb0/0x280\n'
	cat "$out/frames"
	printf 'bpf_prog_test_run_syscall+0x10f/0x1f0\n\n'
}
report_of "Arena READ access at unmapped address 0x10" > "$out/$wid.2"

LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$out ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" record -d 0.2 2> "$out/record.err" &
rpid=$!
served() { [ "$(cat "$out/$wid.2.off" 2>/dev/null)" = "$(stat -c %s "$out/$wid.2")" ]; }
wait_until 60 served
sleep 0.5	# drained and committed
t1=$(( $(date +%s) + 1 ))
sleep 2.2
{ report_of "Timeout detected for may_goto instruction"
  report_of "Timeout detected for may_goto instruction"; } >> "$out/$wid.2"
fixture_added H	# record reads them now, not at its next full walk (30 s)
wait_until 60 served
sleep 0.5
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$out ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" report --json -p "$wid" > "$out/live.json" 2> /dev/null
stop_holder H
sleep 1
kill -TERM "$rpid"; wait "$rpid"; rc=$?
check_eq "record: SIGTERM, exit 0, nothing said" "$rc:$(cat "$out/record.err")" "0:"

"$BPFSTDERR" report --json > "$out/r.json" 2> "$out/r.err"; rc=$?
check_eq "report after unload: exit 1 (faults in the journal)" "$rc" 1
prog=".programs[] | select(.id == $wid)"
check_eq "report after unload: the program is there, marked unloaded" \
	"$(jq -r "$prog | .unloaded" "$out/r.json")" true
check_eq "report after unload: its faults" \
	"$(jq -r "$prog | .faults | to_entries | map(\"\(.key)=\(.value)\") | join(\" \")" "$out/r.json")" \
	"arena_read=1 may_goto_timeout=2"
check_eq "report after unload: source lines of the BPF frames, as the kernel's rule gives" \
	"$(jq -r "$prog | .groups[] | select(.kind == \"arena_read\") | .example.frames[] | select(.kind == \"bpf\") | \"\(.func) \(.file):\(.line)\"" "$out/r.json")" \
	"$(cat "$out/want")"
check_eq "report after unload: the same frames as while it was loaded" \
	"$(jq -c "$prog | .groups" "$out/r.json")" "$(jq -c "$prog | .groups" "$out/live.json")"
check_eq "report while loaded: not marked unloaded" "$(jq -r "$prog | .unloaded" "$out/live.json")" false
check_eq "report -p of an unloaded program in the journal" \
	"$("$BPFSTDERR" report --json -p "$wid" 2>/dev/null | jq -r '.programs | map(.id) | join(" ")')" "$wid"
"$BPFSTDERR" report > "$out/r.txt" 2>/dev/null
check "report text: marked (unloaded)" grep -q "^program $wid writer tag [0-9a-f]* .*(unloaded)$" "$out/r.txt"
check "report text: says what span of the journal it covers" \
	grep -qx "events drained [0-9-]* [0-9:]* to [0-9-]* [0-9:]*, from the journal $BPFSTDERR_JOURNAL" "$out/r.txt"

# --since/--until, by drain time: the arena report was drained before t1,
# the two may_goto timeouts after.
kinds() { jq -r "[.programs[] | select(.id == $wid) | .faults | to_entries[] | \"\(.key)=\(.value)\"] | join(\" \")"; }
check_eq "--since @t1: only what was drained after" \
	"$("$BPFSTDERR" report --json --since "@$t1" 2>/dev/null | kinds)" "may_goto_timeout=2"
check_eq "report --json: the window, in UTC" \
	"$("$BPFSTDERR" report --json --since "@$t1" 2>/dev/null | jq -r '"\(.since) \(.until)"')" \
	"$(date -u -d "@$t1" +%Y-%m-%dT%H:%M:%S.000000Z) null"
check_eq "--until @t1: only what was drained before" \
	"$("$BPFSTDERR" report --json --until "@$t1" 2>/dev/null | kinds)" "arena_read=1"
check_eq "--since as an age (1h): all of it" \
	"$("$BPFSTDERR" report --json --since 1h 2>/dev/null | kinds)" "arena_read=1 may_goto_timeout=2"
check_eq "--since as a date" \
	"$("$BPFSTDERR" report --json --since "$(date -d "@$t1" '+%Y-%m-%d %H:%M:%S')" 2>/dev/null | kinds)" \
	"may_goto_timeout=2"
"$BPFSTDERR" report --since yesterdayish > /dev/null 2> "$out/bad.err"; rc=$?
check_eq "--since garbage: exit 2, said first" "$rc:$(head -n 1 "$out/bad.err")" \
	"2:bpfstderr report: invalid time 'yesterdayish' (e.g. \"2026-12-03 05:00\", @1764738000, 2h)"
check_eq "journal (Python's sqlite3): the 3 reports, once each" \
	"$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select group_concat(fault_kind, \" \") from (select fault_kind from events e join progs p on p.row = e.prog where p.id = ? and kind = 1 order by seq)', ($wid,)).fetchone()[0])" "$BPFSTDERR_JOURNAL" "$wid")" \
	"arena_read may_goto_timeout may_goto_timeout"

check_eq "doctor --json: the journal's counts, as Python's sqlite3 counts them" \
	"$("$BPFSTDERR" doctor --json | jq -r '.journal | "\(.events) \(.faults) \(.unloaded_programs)"')" \
	"$(python3 -c "import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); print(*(c.execute(q).fetchone()[0] for q in ('select count(*) from events', 'select count(*) from events where kind = 1', 'select count(*) from progs where unloaded_ns is not null')))" "$BPFSTDERR_JOURNAL")"

# top shows the unloaded program with its faults, from the journal.
"$BPFSTDERR" top -b -n 1 --json > "$out/top.json" 2>/dev/null
check_eq "top -b: the unloaded program, marked, with its 3 faults" \
	"$(jq -r ".programs[] | select(.id == $wid) | \"\(.unloaded) \(.fault_count)\"" "$out/top.json")" "true 3"
finish
