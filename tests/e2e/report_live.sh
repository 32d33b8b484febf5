# report on real faulting programs. On this kernel every fault report is
# dropped but charges its bytes to the program's stderr capacity: report
# must show the reports as lost, in bytes equal to what an independent
# iterator (pinned by bpftool, read with cat) reads.
. tests/lib.sh

out=$(mktmp)
mnt=$out/bpffs
mkdir -p "$mnt"
mount -t bpf bpf "$mnt" || { fail "mount bpffs"; finish; }
trap 'rm -f "$mnt/cap"; umount "$mnt"; cleanup' EXIT
bpftool iter pin "$(dirname "$BPFSTDERR")/bpf/capacity_iter.bpf.o" "$mnt/cap" ||
	{ fail "pin the oracle iterator"; finish; }
oracle() { awk -v id="$1" '$1 == id { print $3 }' "$mnt/cap"; }

start_holder H demo || { fail "load demo programs"; finish; }
arena=$(prog_id H demo_arena_read)
lock=$(prog_id H demo_deadlock)
goto=$(prog_id H demo_may_goto)

report_prog() {	# report_prog ID -> that program's JSON entry
	"$BPFSTDERR" report --json -p "$1" | jq -c ".programs[] | select(.id == $1)"
}

total=0
prev=0
for n in 3 7; do
	holder_cmd H "fault arena_read $n" > /dev/null
	total=$((total + n))
	p=$(report_prog "$arena")
	lost=$(jq .streams.stderr.lost_bytes <<<"$p")
	check_eq "after $total arena faults: lost bytes = iterator's capacity" "$lost" "$(oracle "$arena")"
	if [ "$(jq .fault_count <<<"$p")" = "$total" ]; then
		pass "after $total arena faults: all $total reports readable (writes work here)"
	else
		check "after $total arena faults: reports lost, growing ($prev -> $lost bytes)" [ "$lost" -gt "$prev" ]
		check_eq "after $total arena faults: marked as losing reports" "$(jq .reports_lost <<<"$p")" true
	fi
	prev=$lost
done
check_eq "lost bytes grow in proportion to faults (3 then 10)" \
	"$(( prev * 3 ))" "$(( $(awk -v id="$arena" '$1 == id { print $3 }' "$mnt/cap") * 3 ))"

holder_cmd H "fault deadlock 2" > /dev/null
holder_cmd H "fault may_goto 1" > /dev/null
"$BPFSTDERR" report --json > "$out/all.json"; rc=$?
check_eq "reports lost or faults found: exit 1" "$rc" 1
for id in "$lock" "$goto"; do
	check_eq "program $id: lost bytes = iterator's capacity" \
		"$(jq ".programs[] | select(.id == $id) | .streams.stderr.lost_bytes" "$out/all.json")" "$(oracle "$id")"
done
check "the programs losing reports are counted" \
	[ "$(jq .summary.programs_losing_reports "$out/all.json")" -ge 3 ]
"$BPFSTDERR" report -p "$arena" > "$out/text"
check "text: says bytes were never readable" grep -q 'never readable' "$out/text"
"$BPFSTDERR" report -p 4000000000 > /dev/null 2>&1; rc=$?
check_eq "nonexistent program: exit 6" "$rc" 6
stop_holder H
finish
