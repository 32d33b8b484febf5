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
	"$(jq -c '.programs[0].groups[0] | [.count, (.pids | sort), (.cpus | sort)]' "$out/g.json")" "[2,[999,4242],[0,1]]"
check_eq "another source line: its own group" \
	"$(jq -r '.programs[0].groups[1].example.frames[] | select(.kind == "bpf") | .line' "$out/g.json")" 42

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
finish
