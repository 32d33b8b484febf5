# report on real faulting programs. On this kernel every fault report is
# dropped but charges its bytes to the program's stderr capacity: report
# must show the reports as lost, in bytes equal to what an independent
# iterator (pinned by bpftool, read with cat) reads. Each demo fault source
# the host refuses (tests/e2e/probe_host.py confirms it) is skipped, and
# the checks run on the sources that load.
. tests/lib.sh

out=$(mktmp)
mnt=$out/bpffs
trap 'rm -f "$mnt/cap"; mountpoint -q "$mnt" && umount "$mnt"; cleanup' EXIT
pin_capacity "$mnt" || { fail "mount bpffs and pin the oracle iterator"; finish; }

start_holder H demo || { fail "load demo programs"; finish; }
check_refusals H
faulting=$(faulting_progs H)
[ -n "$faulting" ] || { fail "some demo fault source loads"; finish; }
read -r kind first <<<"$faulting"

report_prog() {	# report_prog ID -> that program's JSON entry
	"$BPFSTDERR" report --json -p "$1" | jq -c ".programs[] | select(.id == $1)"
}

total=0
prev=0
for n in 3 7; do
	holder_cmd H "fault $kind $n" > /dev/null
	total=$((total + n))
	p=$(report_prog "$first")
	lost=$(jq .streams.stderr.lost_bytes <<<"$p")
	check_eq "after $total $kind faults: lost bytes = iterator's capacity" "$lost" "$(capacity "$first")"
	if [ "$(jq .fault_count <<<"$p")" = "$total" ]; then
		pass "after $total $kind faults: all $total reports readable (writes work here)"
	else
		check "after $total $kind faults: reports lost, growing ($prev -> $lost bytes)" [ "$lost" -gt "$prev" ]
		check_eq "after $total $kind faults: marked as losing reports" "$(jq .reports_lost <<<"$p")" true
	fi
	[ "$total" = 3 ] && lost3=$lost
	prev=$lost
done
if [ "$(jq .fault_count <<<"$p")" != "$total" ]; then
	check_eq "lost bytes grow in proportion to faults (3 then 10: $lost3 then $prev)" \
		"$(( lost3 * 10 ))" "$(( prev * 3 ))"
fi

while read -r kind id; do
	[ -n "$id" ] && holder_cmd H "fault $kind 1" > /dev/null
done <<<"$faulting"
"$BPFSTDERR" report --json > "$out/all.json"; rc=$?
check_eq "reports lost or faults found: exit 1" "$rc" 1
while read -r kind id; do
	[ -n "$id" ] || continue
	check_eq "program $id ($kind): lost bytes = iterator's capacity" \
		"$(jq ".programs[] | select(.id == $id) | .streams.stderr.lost_bytes" "$out/all.json")" "$(capacity "$id")"
done <<<"$faulting"
check "the programs losing reports are counted" \
	[ "$(jq .summary.programs_losing_reports "$out/all.json")" -ge "$(grep -c . <<<"$faulting")" ]
"$BPFSTDERR" report -p "$first" > "$out/text"
check "text: says bytes were never readable" grep -q 'never readable' "$out/text"
"$BPFSTDERR" report -p 4000000000 > /dev/null 2>&1; rc=$?
check_eq "nonexistent program: exit 6" "$rc" 6
stop_holder H
finish
