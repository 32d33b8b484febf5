# bpfstderr doctor against independent probes: the test's own program and
# its own reading of the write's return value, the kernel's BTF as bpftool
# dumps it, uname, /proc, and readelf on an ELF with a known build-id.
. tests/lib.sh

out=$(mktmp)
"$BPFSTDERR" doctor --json > "$out/d.json"; rc=$?
check "doctor --json is one valid JSON value" jq -e . "$out/d.json" >/dev/null
check_eq "doctor exit status says bpfstderr can work here" "$rc" 0

start_holder H writer || { fail "load writer"; finish; }
ret=$(holder_cmd H "write 2 1 20")
ret=${ret#rets }
check_eq "doctor's write return agrees with the test's own write" \
	"$(jq .stream_writes.write_ret "$out/d.json")" "$ret"
case $ret in
0) want=works ;; -12) want=enomem ;; -28) want=enospc ;; *) want=fails ;;
esac
check_eq "verdict matches the return value ($ret)" "$(jq -r .stream_writes.verdict "$out/d.json")" "$want"
stop_holder H
# What the user will see, said from the same write: where it fails, the
# verdict says nothing will show and why (the return value, its errno).
"$BPFSTDERR" doctor > "$out/verdict.txt"
if [ "$ret" -lt 0 ]; then
	ename=$(python3 -c "import errno, sys; print(errno.errorcode[-int(sys.argv[1])])" "$ret")
	check_eq "write returned $ret: doctor says no content will show" \
		"$(jq -c '[.usable, .shows_content]' "$out/d.json")" '[true,false]'
	check "write returned $ret: the verdict says nothing will show, with $ret ($ename)" \
		grep -qE "^verdict +bpfstderr runs here, but nothing will show: every stream write fails \(the probe's bpf_stream_vprintk[a-z_]* returned $ret, $ename\)" "$out/verdict.txt"
	check_eq "write returned $ret: JSON names the same reason" \
		"$(jq -r .nothing_shows "$out/d.json")" "$(sed -n 's/^verdict  *bpfstderr runs here, but nothing will show: //p' "$out/verdict.txt")"
	check "write returned $ret: the verdict never says it can work" \
		bash -c '! grep -q "can work here" "$1"' _ "$out/verdict.txt"
else
	check_eq "write returned $ret: content shows" "$(jq -c '[.shows_content, .nothing_shows]' "$out/d.json")" '[true,null]'
	check "write returned $ret: the verdict says bpfstderr can work here" \
		grep -qE "^verdict +bpfstderr can work here$" "$out/verdict.txt"
fi

bpftool btf dump file /sys/kernel/btf/vmlinux > "$out/btf.txt"
has() { grep -q "$1" "$out/btf.txt" && echo true || echo false; }
check_eq "arena: the kernel reports them" "$(jq .fault_reports.arena.kernel_reports "$out/d.json")" \
	"$(has "FUNC 'bpf_prog_report_arena_violation'")"
check_eq "may_goto: the kernel reports them" "$(jq .fault_reports.may_goto.kernel_reports "$out/d.json")" \
	"$(has "FUNC 'bpf_prog_report_may_goto_violation'")"
check_eq "res_spin_lock: the kernel reports them" "$(jq .fault_reports.res_spin_lock.kernel_reports "$out/d.json")" \
	"$(has "FUNC 'bpf_prog_report_rqspinlock_violation'")"
check_eq "stream read command" "$(jq .stream_read_command "$out/d.json")" \
	"$(has "'BPF_PROG_STREAM_READ_BY_FD' val=37")"
check_eq "RFC drain kfuncs" "$(jq .rfc_drain_kfuncs "$out/d.json")" \
	"$(has "FUNC 'bpf_stream_next_elem_batch'")"
check_eq "backend named" "$(jq -r .backend "$out/d.json")" \
	"$([ "$(has "'BPF_PROG_STREAM_READ_BY_FD'")" = true ] && echo upstream || echo rfc)"
check_eq "kernel release" "$(jq -r .kernel "$out/d.json")" "$(uname -r)"
kallsyms=$(awk '$1 !~ /^0+$/ { print "true"; exit }' /proc/kallsyms)
check_eq "kallsyms readable" "$(jq .kallsyms_readable "$out/d.json")" "${kallsyms:-false}"
# Drainers walk every program only when told of a change, where perf
# tells of program loads and unloads (the probe opens that event itself).
case $(python3 tests/e2e/probe_host.py bpf_events) in
allowed) want=watch ;;
*) want=walk ;;
esac
check_eq "program list: $want (perf's program events: $(python3 tests/e2e/probe_host.py bpf_events))" \
	"$(jq -r .program_list.mode "$out/d.json")" "$want"
BPFSTDERR_FULL_WALK=1 "$BPFSTDERR" doctor --json > "$out/walk.json"
check_eq "BPFSTDERR_FULL_WALK=1: every cycle walks" \
	"$(jq -r '.program_list | "\(.mode) \(.full_walk_set) \(.errno)"' "$out/walk.json")" "walk true null"
# Early drain: the fill wake where the kernel lets fexit attach (the lab
# proves it drains: tests/vm/guest/early_drain.sh), else the watch's tick,
# else nothing. The mark is bpf/fill.h's.
by=$(jq -r .early_drain.by "$out/d.json")
case $by in
fill_wake) check_eq "early drain by the fill wake: no errno" "$(jq -r .early_drain.errno "$out/d.json")" null ;;
watch_tick) check "early drain by the watch's tick: the fill wake's refusal named ($(jq -r .early_drain.errno "$out/d.json"))" \
		test "$(jq -r .early_drain.errno "$out/d.json")" != null ;;
*) fail "early drain: '$by'" ;;
esac
check_eq "early drain: the mark is bpf/fill.h's" "$(jq .early_drain.mark_bytes "$out/d.json")" \
	"$(awk '$1 == "#define" && $2 == "FILL_MARK" { print $3 }' bpf/fill.h)"
check_eq "BPFSTDERR_NO_FILL_WAKE=1: the watch's tick, said so" \
	"$(BPFSTDERR_NO_FILL_WAKE=1 "$BPFSTDERR" doctor --json | jq -c '.early_drain | [.by, .no_fill_wake_set, .errno]')" \
	'["watch_tick",true,null]'
# walking every cycle there is no watch to tick: the wake or nothing
check_eq "BPFSTDERR_FULL_WALK=1: early drain $([ "$by" = fill_wake ] && echo "by the fill wake still" || echo "at the interval only")" \
	"$(jq -r .early_drain.by "$out/walk.json")" "$([ "$by" = fill_wake ] && echo fill_wake || echo interval)"
bpffs=$(findmnt -n -t bpf -o TARGET | head -n 1)
check_eq "bpffs" "$(jq -r '.bpffs // ""' "$out/d.json")" "$bpffs"

# --vmlinux: an ELF whose build-id readelf tells us.
printf 'int main(void) { return 0; }\n' > "$out/k.c"
gcc -g -Wl,--build-id=sha1 "$out/k.c" -o "$out/k"
want=$(readelf -n "$out/k" | awk '/Build ID:/ { print $3 }')
"$BPFSTDERR" doctor --json --vmlinux "$out/k" > "$out/v.json"
check_eq "--vmlinux build-id as readelf reads it" "$(jq -r .vmlinux.build_id "$out/v.json")" "$want"
check_eq "--vmlinux with DWARF" "$(jq .vmlinux.dwarf "$out/v.json")" \
	"$(readelf -S "$out/k" | grep -q '\.debug_info' && echo true || echo false)"
check_eq "a foreign vmlinux does not match the kernel" "$(jq .vmlinux.matches "$out/v.json")" false
"$BPFSTDERR" doctor > "$out/plain.txt"
check "plain doctor names the write verdict" grep -q "^stream writes" "$out/plain.txt"
check "plain doctor says how the program list is kept" grep -q "^program list  *\(watched\|walked\)" "$out/plain.txt"
declare -A early=([fill_wake]="woken by the kernel" [watch_tick]="by the watch's check")
check "plain doctor's early drain says what JSON does ($by)" grep -q "^early drain  *${early[$by]:-none}" "$out/plain.txt"
finish
