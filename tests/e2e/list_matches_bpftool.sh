# Programs loaded by the test, as `bpfstderr list --json` shows them,
# against `bpftool prog show -j` and the kernel's /proc/PID/fdinfo.
. tests/lib.sh

start_holder H writer names anon || { fail "load test programs"; finish; }
long=$(prog_id H a_program_name_)
anon=$(prog_id H -)
writer=$(prog_id H writer)
out=$(mktmp)
"$BPFSTDERR" list --json > "$out/list.json"
check "list --json is one valid JSON value" jq -e . "$out/list.json" >/dev/null

for id in "$long" "$anon" "$writer"; do
	bpftool prog show id "$id" -j > "$out/bpftool.json"
	jq ".programs[] | select(.id == $id)" "$out/list.json" > "$out/ours.json"
	# bpftool leaves out a name or btf_id that is empty.
	for f in type name tag uid btf_id bytes_jited bytes_xlated; do
		def=0; [ "$f" = name ] && def='""'
		check_eq "prog $id: $f" "$(jq -c ".$f" "$out/ours.json")" \
			"$(jq -c ".$f // $def" "$out/bpftool.json")"
	done
	# Both convert the boot-time load stamp to wall-clock seconds at
	# different instants; they may straddle a second.
	d=$(( $(jq .loaded_at "$out/ours.json") - $(jq .loaded_at "$out/bpftool.json") ))
	check "prog $id: loaded_at within 1 s of bpftool's" [ "${d#-}" -le 1 ]
	# Owners: every process with an fd whose fdinfo says prog_id: $id.
	want=$(grep -lx "prog_id:[[:space:]]*$id" /proc/[0-9]*/fdinfo/* 2>/dev/null |
		cut -d/ -f3 | sort -un | paste -sd,)
	check_eq "prog $id: owning pids as in fdinfo" \
		"$(jq -r '[.pids[].pid] | sort | map(tostring) | join(",")' "$out/ours.json")" "$want"
done
check_eq "long name shown in full" "$(jq -r ".programs[] | select(.id == $long) | .name" "$out/list.json")" \
	a_program_name_longer_than_fifteen
check_eq "unnamed program listed with an empty name" \
	"$(jq -r ".programs[] | select(.id == $anon) | .name" "$out/list.json")" ""
check_eq "owner comm" "$(jq -r ".programs[] | select(.id == $writer) | .pids[0].comm" "$out/list.json")" holdprog

# Every program bpftool sees (but ours, loaded in between) is listed.
bpftool prog show -j | jq '[.[].id] | sort' > "$out/all_bpftool.json"
missing=$(jq -n --slurpfile a "$out/all_bpftool.json" --slurpfile b <("$BPFSTDERR" list --json) \
	'$a[0] - [$b[0].programs[].id] | length')
check_eq "no program bpftool lists is missing" "$missing" 0

# The drop counters (kernel-patches/stream-drops) are read where the
# kernel's BTF has them, null elsewhere; the iterator loads either way.
if bpftool btf dump file /sys/kernel/btf/vmlinux |
	awk "/STRUCT 'bpf_stream' /{on=1; next} on && /^\\[/{exit} on" | grep -q "'dropped_msgs'"; then
	want=number
else
	want=null
fi
check_eq "drop counters: $want, as the kernel's BTF has them or not" \
	"$("$BPFSTDERR" list --json | jq -r '[.programs[] | select(.streams) | .streams[].dropped_messages | type] | unique | join(",")')" "$want"

# In a pid namespace (a container without the host's pids), owners are
# the namespace's pids: those its /proc shows holding the program (the
# kernel numbers a process once per namespace level).
ns=$(mktmp)
if ! unshare --pid --fork --mount-proc true 2> "$ns/probe"; then
	skip "pid namespace owners" "this host refuses a pid namespace ($(head -n 1 "$ns/probe"))"
	stop_holder H
	finish
fi
timeout 60 unshare --pid --fork --mount-proc sh -c '
	sleep 30 | "$1" writer > "$2/holder.out" 2>&1 &
	for i in $(seq 100); do grep -q "^ready" "$2/holder.out" && break; sleep 0.1; done
	echo "$!" > "$2/pid"
	"$3" list --json > "$2/list.json" 2> "$2/list.err"
	cat /proc/$!/fdinfo/* 2>/dev/null | awk "/^prog_id:/ { print \$2 }" | sort -nu > "$2/fdinfo"
	kill $!' sh "$HELPERS/holdprog" "$ns" "$BPFSTDERR"
nsid=$(awk '/^prog/ { print $2; exit }' "$ns/holder.out")
check "pid namespace: the holder's program was loaded there" test -n "$nsid"
check_eq "pid namespace: its owner is the namespace's pid of the holder" \
	"$(jq -c --argjson id "${nsid:-0}" '[.programs[] | select(.id == $id) | .pids[].pid]' "$ns/list.json")" \
	"[$(cat "$ns/pid")]"
check_eq "pid namespace: the programs it owns are those its fds hold (/proc there)" \
	"$(jq -c --argjson p "$(cat "$ns/pid")" '[.programs[] | select(any(.pids[]; .pid == $p)) | .id]' "$ns/list.json")" \
	"$(jq -sc . "$ns/fdinfo")"
check_eq "pid namespace: this test's holder, outside it, owns nothing seen there" \
	"$(jq -c --argjson p "$H_PID" '[.programs[] | select(any(.pids[]; .pid == $p))] | length' "$ns/list.json")" 0
stop_holder H
finish
