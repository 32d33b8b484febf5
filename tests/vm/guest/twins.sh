# Inside a lab guest, where faults write real reports: two programs with
# the same code and the same name in two objects (tests/bpf/spin_a.bpf.c,
# spin_b.bpf.c: twin_spin, one tag per bpftool) each time out in may_goto
# for real (issue 27 item 1). Each report's BPF frame must be its own
# program's file:line, and agree with the line the kernel printed under it
# (line_from "line_info"): only the stream a report came from tells the
# two apart. Then spin_a is unloaded and report, from the journal, must
# say the same.
. tests/lib.sh

echo "# kernel $(uname -r)"
out=$(mktmp)
if ! bpftool btf dump file /sys/kernel/btf/vmlinux | grep -q "FUNC 'bpf_prog_report_may_goto_violation'"; then
	skip "twins" "this kernel reports no may_goto timeouts"
	finish
fi
start_holder A spin_a || { fail "load spin_a"; finish; }
start_holder B spin_b || { fail "load spin_b"; finish; }
a=$(prog_id A twin_spin)
b=$(prog_id B twin_spin)
check_eq "bpftool: one tag for both" \
	"$(bpftool prog show -j | jq -r "[.[] | select(.id == $a or .id == $b) | .tag] | unique | length")" 1
for id in "$a" "$b"; do
	echo "run $id" >&"$A_IN"
	IFS= read -r -t 60 -u "$A_OUT" line
	check "program $id ran ($line)" grep -q '^ran ' <<<"$line"
done
"$BPFSTDERR" report --json > "$out/live.json" 2> /dev/null

frames() {	# JSON ID: "file:line line_from kernel_file:kernel_line" of its BPF frames
	jq -r ".programs[] | select(.id == $2) | .groups[].example.frames[] | select(.kind == \"bpf\") |
	       \"\(.file | split(\"/\") | last):\(.line) \(.line_from)\"" "$1" | sort -u
}
kernel_line() {	# ID: the file:line the kernel printed under its frame
	jq -r ".programs[] | select(.id == $1) | .groups[].signature" "$out/live.json" |
		grep -oE 'spin_[ab]\.bpf\.c:[0-9]+' | sort -u
}
ka=$(kernel_line "$a")
kb=$(kernel_line "$b")
check "the kernel printed spin_a.bpf.c under spin_a's frame ($ka)" grep -q '^spin_a\.bpf\.c:' <<<"$ka"
check "the kernel printed spin_b.bpf.c under spin_b's frame ($kb)" grep -q '^spin_b\.bpf\.c:' <<<"$kb"
check_eq "live: spin_a's frame is its own, as the kernel says" "$(frames "$out/live.json" "$a")" "$ka line_info"
check_eq "live: spin_b's frame is its own, as the kernel says" "$(frames "$out/live.json" "$b")" "$kb line_info"
stop_holder A
"$BPFSTDERR" report --json > "$out/gone.json" 2> /dev/null
check_eq "spin_a unloaded: its frame still its own" "$(frames "$out/gone.json" "$a")" "$ka line_info"
check_eq "spin_a unloaded: spin_b's still its own" "$(frames "$out/gone.json" "$b")" "$kb line_info"
stop_holder B
finish
