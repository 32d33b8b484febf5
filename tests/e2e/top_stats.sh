# top's runtime statistics against the kernel's, read by bpftool: a
# program run N times with BPF_PROG_TEST_RUN while top --stats runs.
. tests/lib.sh

out=$(mktmp)
sysctl=/proc/sys/kernel/bpf_stats_enabled
before=$(cat $sysctl)
trap 'echo "$before" > $sysctl; cleanup' EXIT
N=50

start_holder H writer || { fail "load the writer"; finish; }
id=$(prog_id H writer)

"$BPFSTDERR" top -b --json -n 1 > "$out/off.json"
check_eq "without --stats: runs and rates null" \
	"$(jq -c ".programs[] | select(.id == $id) | [.runs, .run_time_ns, .runs_per_sec, .ns_per_run, .cpu_percent]" "$out/off.json")" \
	"[null,null,null,null,null]"

if [ "$before" = 1 ]; then
	skip "stats held only while top runs" "kernel.bpf_stats_enabled is already 1 on this host"
fi
# top's snapshots go on until SIGTERM (its last, exit 0): the test runs
# the program, reads bpftool, then takes the second snapshot top began
# after that read (the first may have begun before it), however slow
# the runs were
"$BPFSTDERR" top -b --stats --json -d 0.5 -n 100000 > "$out/on.json" & top_pid=$!
wait_until 60 test -s "$out/on.json"	# stats on: the first snapshot
for i in $(seq $N); do holder_cmd H "write 1 0 0" > /dev/null; done
oracle=$(bpftool prog show id "$id" -j | jq -c '[.run_cnt, .run_time_ns]')
k=$(wc -l < "$out/on.json")
after_oracle() { [ "$(wc -l < "$out/on.json")" -ge $((k + 2)) ]; }
wait_until 60 after_oracle
kill -TERM "$top_pid"; wait "$top_pid"; rc=$?
check_eq "top -b --stats: SIGTERM, exit 0" "$rc" 0
snaps=$(wc -l < "$out/on.json")
last=$(sed -n "$((k + 2))p" "$out/on.json" | jq -c ".programs[] | select(.id == $id) | [.runs, .run_time_ns]")
first=$(head -n 1 "$out/on.json" | jq ".programs[] | select(.id == $id) | .runs")
check_eq "runs and run_time_ns as bpftool shows them" "$last" "$oracle"
check_eq "runs grew by the $N test runs" "$(( $(jq '.[0]' <<<"$last") - first ))" "$N"
check "run_time_ns grew" [ "$(jq '.[1]' <<<"$last")" -gt 0 ]
check_eq "rates from the second snapshot on (none in the first, one in each of the $((snaps - 1)) others)" \
	"$(jq -s "[.[] | .programs[] | select(.id == $id) | .runs_per_sec != null]" "$out/on.json" | jq -c '[.[0], (.[1:] | map(select(.)) | length)]')" \
	"[false,$((snaps - 1))]"
check "rates: cpu_percent and ns_per_run where it ran" \
	bash -c "jq -e -s '[.[].programs[] | select(.id == $id) | select(.runs_per_sec > 0) | .cpu_percent > 0 and .ns_per_run > 0] | length > 0 and all' '$out/on.json' > /dev/null"
check "the snapshot says how stats were turned on" \
	bash -c "jq -e -r .stats '$out/on.json' | head -n 1 | grep -q 'BPF_ENABLE_STATS\|already 1'"

# Held only while top runs: once it has ended, runs are not counted
# (kernel.bpf_stats_enabled reads back only its own setting, not holders).
if [ "$before" = 0 ]; then
	for i in $(seq 5); do holder_cmd H "write 1 0 0" > /dev/null; done
	check_eq "stats off once top has ended: bpftool's run_cnt unchanged" \
		"$(bpftool prog show id "$id" -j | jq -c '[.run_cnt, .run_time_ns]')" "$oracle"
fi

echo 1 > $sysctl
"$BPFSTDERR" top -b --stats --json -n 1 > "$out/already.json"
check "already 1: used, and said so" bash -c "jq -r .stats '$out/already.json' | grep -q 'already 1'"
check_eq "already 1: left as it was" "$(cat $sysctl)" 1
echo "$before" > $sysctl

stop_holder H
finish
