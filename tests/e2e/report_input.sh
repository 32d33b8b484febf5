# report over saved dumps: kinds, grouping rule, exit codes, and JSON that
# jq accepts whatever the input bytes.
. tests/lib.sh

out=$(mktmp)
up=tests/fixtures/upstream-6.18.txt
rfc=tests/fixtures/rfc-seed001.txt

"$BPFSTDERR" report --json "$up" "$rfc" > "$out/r.json"; rc=$?
check_eq "faults found: exit 1" "$rc" 1
check "one valid JSON value" jq -e . "$out/r.json" > /dev/null
check_eq "source" "$(jq -r .source "$out/r.json")" input
check_eq "10 faults in total" "$(jq .summary.faults "$out/r.json")" 10
check_eq "RFC dump: kinds" "$(jq -c '.programs[] | select(.tag == "986cfd896eb75e8c") | .faults' "$out/r.json")" \
	'{"arena_read":1,"arena_write":1,"may_goto_timeout":1,"lock_deadlock":1}'
check_eq "RFC dump: named after its outermost BPF frame" \
	"$(jq -r '.programs[] | select(.tag == "986cfd896eb75e8c") | .name' "$out/r.json")" stream_bpftool_dump_prog_stream
check_eq "RFC dump: the file it came from" \
	"$(jq -r '.programs[] | select(.tag == "986cfd896eb75e8c") | .input' "$out/r.json")" "$rfc"
check_eq "unknown kind kept with its header" \
	"$(jq -r '.programs[].groups[].example | select(.kind == "unknown") | .header' "$out/r.json")" \
	"Stack overflow detected for bpf_future_thing"
check_eq "lock fields" \
	"$(jq -c '.programs[].groups[].example | select(.kind == "lock_timeout") | .lock' "$out/r.json")" \
	'{"func":"bpf_res_spin_lock_irqsave","attempted":"0xff11000104a87600","held_count":2,"held":["0xff11000104a875e0","0xff11000104a875f0"]}'

# The grouping rule: the same fault from another CPU, task and caller below
# the BPF entry (other kernel offsets, other machinery offsets) is the same
# group; the same kind at another source line is another group.
first=$(awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1' "$up")
{
	printf '%s\n\n' "$first"
	printf '%s\n\n' "$first" | sed -e 's/^CPU: 1 UID: 0 PID: 4242 Comm: fault_demo/CPU: 0 UID: 0 PID: 999 Comm: other_task/' \
		-e 's/^ex_handler_bpf+0x4e/ex_handler_bpf+0x50/' \
		-e 's/^__sys_bpf+0xc7d/__sys_bpf+0x111/' -e 's/^bpf_prog_test_run_syscall.*/bpf_prog_run_pin_on_cpu+0x33\/0x80/'
	printf '%s\n\n' "$first" | sed -e 's/arena_fault+0x4f/arena_fault+0x57/' -e 's/@ demo.bpf.c:41/@ demo.bpf.c:42/'
} > "$out/groups.txt"
"$BPFSTDERR" report --json "$out/groups.txt" > "$out/g.json"
check_eq "3 faults, 2 groups" "$(jq -c '[.summary.faults, .summary.groups]' "$out/g.json")" "[3,2]"
check_eq "same place from two tasks and CPUs: one group of 2" \
	"$(jq -c '.programs[0].groups[0] | [.count, (.task_pids | sort), (.cpus | sort)]' "$out/g.json")" "[2,[999,4242],[0,1]]"
check_eq "another source line: its own group" \
	"$(jq -r '.programs[0].groups[1].example.frames[] | select(.kind == "bpf") | .line' "$out/g.json")" 42

# A group of faults at several addresses is headed by how many distinct
# addresses and their range, never by one address for all of them; one
# address for all is still named alone. The oracle is the dump itself.
for a in 0x100e1b000 0x100e17000 0x100e1d000 0x100e17000; do
	printf '%s\n\n' "$first" | sed -e "s/^ERROR: Arena READ access at unmapped address .*/ERROR: Arena WRITE access at unmapped address $a/"
done > "$out/addrs.txt"
printf '%s\n\n%s\n\n' "$first" "$first" >> "$out/addrs.txt"
want=$(python3 -c '
import re, sys
a = [int(x, 16) for x in re.findall(r"^ERROR: Arena WRITE access at unmapped address (0x[0-9a-f]+)$", open(sys.argv[1]).read(), re.M)]
print("  %dx arena_write at %d addresses %s-%s, first %s" % (len(a), len(set(a)), hex(min(a)), hex(max(a)), hex(a[0])))
' "$out/addrs.txt")
"$BPFSTDERR" report "$out/addrs.txt" > "$out/addrs.out" 2> /dev/null
check_eq "group at several addresses: their count and range in the heading" \
	"$(grep -o '^  [0-9]*x arena_write at [^(]*[^ (]' "$out/addrs.out")" "$want"
check_eq "group at one address: that address alone" \
	"$(grep -o '^  [0-9]*x arena_read at [^(]*[^ (]' "$out/addrs.out")" "  2x arena_read at 0xdeadbeef"
"$BPFSTDERR" report --json "$out/addrs.txt" > "$out/addrs.json" 2> /dev/null
check_eq "JSON: the group's addresses" \
	"$(jq -c '.programs[].groups[] | select(.kind == "arena_write") | .addresses' "$out/addrs.json")" \
	"$(python3 -c '
import json, re, sys
a = [int(x, 16) for x in re.findall(r"^ERROR: Arena WRITE access at unmapped address (0x[0-9a-f]+)$", open(sys.argv[1]).read(), re.M)]
print(json.dumps({"distinct": len(set(a)), "distinct_truncated": False, "first": hex(a[0]), "min": hex(min(a)), "max": hex(max(a))}, separators=(",", ":")))
' "$out/addrs.txt")"
check_eq "JSON: no addresses for a group that is not an arena fault" \
	"$("$BPFSTDERR" report --json "$up" 2> /dev/null | jq -c '[.programs[].groups[] | select(.kind == "may_goto_timeout") | .addresses] | unique')" "[null]"

# Exit codes and errors.
printf 'just a message\nanother\n' > "$out/msgs.txt"
"$BPFSTDERR" report "$out/msgs.txt" > "$out/m.txt"; rc=$?
check_eq "no faults: exit 0" "$rc" 0
check "no faults: said so" grep -q '^0 faults in 0 groups, 2 messages' "$out/m.txt"
"$BPFSTDERR" report --input "$out/nope" > "$out/o" 2> "$out/e"; rc=$?
check_eq "missing file: exit 5" "$rc" 5
check_eq "missing file: one line" "$(cat "$out/e")" "bpfstderr: cannot open '$out/nope': No such file or directory"
check "missing file: no partial output" test ! -s "$out/o"
"$BPFSTDERR" report -p 1 --input "$up" > /dev/null 2>&1; rc=$?
check_eq "-p with --input: usage error" "$rc" 2
check_eq "stdin as -" "$(cat "$up" | "$BPFSTDERR" report --json - | jq .summary.faults)" 6

# Any bytes at all: valid JSON, no raw escapes in text.
head -c 2000000 /dev/urandom > "$out/garbage"
{ printf 'ERROR: Arena READ access at unmapped address 0x1\xff\nCPU: 1 UID: 0 PID: 2 Comm: \x1b]0;x\x07\xc3\n'
  printf 'Call trace:\n\x9b\xfe+0x1/0x2 [\xff]\n  \x1b[2J @ f\xc3.c:1\n\n'; cat "$out/garbage"; } > "$out/bad"
"$BPFSTDERR" report --json "$out/bad" "$out/garbage" > "$out/bad.json"; rc=$?
check "binary garbage: exit 0 or 1" [ "$rc" -le 1 ]
check "binary garbage: jq accepts the JSON" jq -e . "$out/bad.json" > /dev/null
check "binary garbage: python's strict parser too" python3 -c 'import json,sys; json.load(open(sys.argv[1]), strict=True)' "$out/bad.json"
"$BPFSTDERR" report "$out/bad" > "$out/bad.txt"
check_eq "binary garbage: no ESC/BEL/CSI byte in text" "$(LC_ALL=C grep -c $'[\x1b\x07]\|\xc2\x9b\|\x9b' "$out/bad.txt")" 0

# Bytes as they come: the fault count is grep's count of report starts,
# and the JSON is valid for jq and Python, whatever the line ends.
edge_case() {	# NAME FILE: faults as grep counts them, valid JSON
	"$BPFSTDERR" report --json "$2" > "$out/$1.json" 2> "$out/$1.err"
	check_eq "$1: faults as grep counts them" "$(jq .summary.faults "$out/$1.json")" \
		"$(LC_ALL=C grep -ac '^ERROR: ' "$2")"
	check "$1: python's strict parser accepts the JSON" \
		python3 -c 'import json,sys; json.load(open(sys.argv[1]), strict=True)' "$out/$1.json"
}
python3 - "$up" "$rfc" "$out" <<'PY'
import sys
up, rfc, out = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
both = up + rfc
open(out + "/crlf.txt", "wb").write(both.replace(b"\n", b"\r\n"))
open(out + "/nul.txt", "wb").write(b"a\0b\n" + up.replace(b"Comm: fault_demo", b"Comm: fa\0lt") + b"\0\n" + rfc)
open(out + "/no_newline.txt", "wb").write(both.rstrip(b"\n"))
# one line longer than a read (256 KiB) and than a message (64 KiB)
open(out + "/long.txt", "wb").write(b"x" * 300000 + b"\n" + up)
# reports across the 256 KiB reads at many offsets: messages of odd lengths
with open(out + "/straddle.txt", "wb") as f:
    k = 0
    while f.tell() < 3 * 262144:
        f.write(b"m" * (k * 37 % 1000) + b"\n" + (up if k % 2 else rfc))
        k += 1
PY
for c in crlf nul no_newline long straddle; do
	edge_case "$c" "$out/$c.txt"
done
check_eq "no trailing newline: the last report kept, incomplete" \
	"$(jq '[.programs[].groups[].example | select(.header == "Timeout detected for may_goto instruction")] | length' "$out/no_newline.json")" 2
check_eq "a line of 300000 bytes: 5 messages of at most 64 KiB" \
	"$(jq .summary.messages "$out/long.json")" 5
# Chunking changes nothing: the same groups (examples, kinds) as the two
# fixtures read alone; only the counts grow.
"$BPFSTDERR" report --json "$rfc" "$up" > "$out/alone.json"
check_eq "reports across reads: the same groups as the fixtures alone" \
	"$(jq -c '[.programs[].groups[] | [.signature, .example]] | sort' "$out/straddle.json")" \
	"$(jq -c '[.programs[].groups[] | [.signature, .example]] | sort' "$out/alone.json")"
# Source lines: the kernel prints the line info's text after two spaces,
# tabs and all ("  %s @ %s:%d"). Text shows it trimmed with its tabs
# expanded, never a literal \t; JSON keeps the tab.
printf '%s\n\n' "$first" | sed -e $'s|^  val = .*@ demo.bpf.c:41$|  \tval = *ptr;\t/* load */ @ demo.bpf.c:41|' > "$out/tab.txt"
"$BPFSTDERR" report "$out/tab.txt" > "$out/tab.out" 2> /dev/null
check "source line with tabs: shown as the kernel shows it" \
	grep -qF 'demo.bpf.c:41  val = *ptr;     /* load */' "$out/tab.out"
check_eq "source line with tabs: no literal \\t in text" "$(grep -c '\\t' "$out/tab.out")" 0
check_eq "source line with tabs: JSON keeps the tab" \
	"$("$BPFSTDERR" report --json "$out/tab.txt" 2> /dev/null | jq -r '.programs[].groups[].example.frames[] | select(.kind == "bpf") | .source')" \
	$'val = *ptr;\t/* load */'
# A bpf_timer callback's fault, once on an idle CPU and once interrupting
# the same program: the same place, one group keyed on the callback alone.
tmr=tests/fixtures/timer-interrupt.txt
"$BPFSTDERR" report --json "$tmr" > "$out/tmr.json" 2> /dev/null
check_eq "timer callback, interrupted code differs: 2 faults, 1 group" \
	"$(jq -c '[.summary.faults, .summary.groups]' "$out/tmr.json")" "[2,1]"
check_eq "timer callback: the group's place is the callback" \
	"$(jq -r '.programs[0].groups[0].signature' "$out/tmr.json")" "arena_write: 3c4d5e6f70819293:timer_cb@st.bpf.c:90"
# The text report's example stack is about 8 frames, but never cuts a BPF
# frame: the second report's caller (start_timer) comes 12 frames below
# the machinery; only the syscall tail after it is cut.
awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 2' "$tmr" > "$out/tmr2.txt"
"$BPFSTDERR" report "$out/tmr2.txt" > "$out/tmr2.out" 2> /dev/null
check_eq "example stack: every BPF frame shown" \
	"$(grep -c 'bpf_prog_3c4d5e6f70819293_' "$out/tmr2.out")" \
	"$(grep -c '^bpf_prog_3c4d5e6f70819293_' "$out/tmr2.txt")"
check_eq "example stack: the tail after the outermost BPF frame cut" \
	"$(grep -A1 'start_timer+0x64' "$out/tmr2.out" | tail -n 1 | tr -s ' ')" \
	" ... $(awk '/start_timer\+0x64/ { on = 1; next } on && /^[a-z_]/ { n++ } END { print n }' "$out/tmr2.txt") more"
# Which stream a dump is: --stream, else "stdout" in the file's name, else
# stderr. A "bpftool prog tracelog stdout" capture counts as stdout.
printf 'hello from stdout\nline two\n' > "$out/capture.txt"
cp "$out/capture.txt" "$out/prog-stdout.txt"
msgs() { "$BPFSTDERR" report --json "$@" 2> /dev/null | jq -c '[.programs[].messages] | .[0]'; }
check_eq "--stream stdout: a stdout dump's messages are stdout's" \
	"$(msgs --stream stdout "$out/capture.txt")" '{"stdout":2,"stderr":0}'
check_eq "no --stream: stderr" "$(msgs "$out/capture.txt")" '{"stdout":0,"stderr":2}'
check_eq "--stream stderr: stderr" "$(msgs --stream stderr --input "$out/capture.txt")" '{"stdout":0,"stderr":2}'
check_eq "\"stdout\" in the file name: stdout" "$(msgs "$out/prog-stdout.txt")" '{"stdout":2,"stderr":0}'
check_eq "--stream over the file name's hint" \
	"$(msgs --stream stderr "$out/prog-stdout.txt")" '{"stdout":0,"stderr":2}'
"$BPFSTDERR" report --stream stdout "$out/capture.txt" > "$out/so.txt" 2> /dev/null
check "text: the stdout messages counted as stdout" grep -q 'messages: stdout 2, stderr 0' "$out/so.txt"
"$BPFSTDERR" report --stream stdin "$out/capture.txt" > /dev/null 2>&1; rc=$?
check_eq "--stream stdin: usage error" "$rc" 2
"$BPFSTDERR" report --no-journal --stream stdout > /dev/null 2>&1; rc=$?
check_eq "--stream without --input: usage error" "$rc" 2
# A bpf_stream_print_stack() dump (7.x): one stack dump, not a fault (exit
# 0) nor a dozen messages; its BPF frame and source line as printed.
stk=tests/fixtures/print-stack-7.3.txt
"$BPFSTDERR" report --json "$stk" > "$out/stk.json" 2> /dev/null; rc=$?
check_eq "stack dump: not a fault, exit 0" "$rc" 0
check_eq "stack dump: 0 faults, 1 stack dump, the 3 lines around it messages" \
	"$(jq -c '[.summary.faults, .summary.stack_dumps, .summary.messages]' "$out/stk.json")" "[0,1,3]"
check_eq "stack dump: its BPF frame" \
	"$(jq -c '.programs[0].stack_dump_example.frames[] | select(.kind == "bpf") | [.func, .file, .line]' "$out/stk.json")" \
	'["print_stack","st.bpf.c",120]'
"$BPFSTDERR" report "$stk" > "$out/stk.txt" 2> /dev/null
check "stack dump: one block in text" grep -q '^  1x stack dump (CPU 1, UID 0, PID 4310 st_print)$' "$out/stk.txt"
finish
