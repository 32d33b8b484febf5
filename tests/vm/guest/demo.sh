# Inside a lab guest (tests/vm/lab.sh), where stream writes work: the
# bundled demo programs load on this kernel (whichever print kfunc it
# has), every fault kind the kernel reports happens for real, and top
# --demo shows each one; doctor agrees, against the kernel's own BTF.
. tests/lib.sh

echo "# kernel $(uname -r)"
out=$(mktmp)
bpftool btf dump file /sys/kernel/btf/vmlinux > "$out/btf.txt"
reports() { grep -q "FUNC '$1'" "$out/btf.txt"; }

"$BPFSTDERR" doctor > "$out/doctor.txt" 2>&1
check "doctor: stream writes work" grep -qE '^stream writes +works' "$out/doctor.txt"
check "doctor: bpfstderr can work here" grep -qE '^verdict +bpfstderr can work here' "$out/doctor.txt"
for kind in arena:bpf_prog_report_arena_violation may_goto:bpf_prog_report_may_goto_violation \
	    res_spin_lock:bpf_prog_report_rqspinlock_violation; do
	if reports "${kind#*:}"; then
		check "doctor: ${kind%%:*} faults can happen here" \
			grep -qE "^fault reports .*${kind%%:*} yes" "$out/doctor.txt"
	else
		skip "doctor: ${kind%%:*}" "this kernel has no ${kind#*:}"
	fi
done

# Four snapshots a second apart: the demo triggers its programs each second.
timeout 120 "$BPFSTDERR" top --demo -b -j -n 4 -d 1 --no-journal > "$out/top.json" 2> "$out/top.err"
check_eq "top --demo -b -j exits 0" "$?" 0
last=$(tail -n 1 "$out/top.json")
check_eq "top: stream writes work" "$(jq -r .stream_writes <<<"$last")" works
faults() {	# faults PROG KIND: how many KIND faults top counts for PROG
	jq -r --arg p "$1" --arg k "$2" \
		'[.programs[] | select(.name == $p) | .faults[$k] // 0] | first // "absent"' <<<"$last"
}
for pk in demo_arena_read:arena_read:bpf_prog_report_arena_violation \
	  demo_arena_write:arena_write:bpf_prog_report_arena_violation \
	  demo_may_goto:may_goto_timeout:bpf_prog_report_may_goto_violation \
	  demo_deadlock:lock_deadlock:bpf_prog_report_rqspinlock_violation; do
	IFS=: read -r prog kind func <<<"$pk"
	if ! reports "$func"; then
		skip "top: $prog" "this kernel has no $func"
		continue
	fi
	n=$(faults "$prog" "$kind")
	check "top: $prog faults for real ($kind: $n)" test "$n" != absent -a "$n" -ge 1 2>/dev/null
done
msgs=$(jq -r '[.programs[] | select(.name == "demo_print") | "\(.messages.stdout) \(.messages.stderr)"] | first // "absent"' <<<"$last")
check "top: demo_print's messages reach stdout and stderr ($msgs)" \
	awk '$1 >= 1 && $2 >= 1 { ok = 1 } END { exit !ok }' <<<"$msgs"

# What a person reads in batch mode: each kind's abbreviation and count.
timeout 120 "$BPFSTDERR" top --demo -b -n 3 -d 1 --no-journal > "$out/top.txt" 2>/dev/null
for pk in demo_arena_read:AR:bpf_prog_report_arena_violation \
	  demo_arena_write:AW:bpf_prog_report_arena_violation \
	  demo_may_goto:MG:bpf_prog_report_may_goto_violation \
	  demo_deadlock:DL:bpf_prog_report_rqspinlock_violation; do
	IFS=: read -r prog abbrev func <<<"$pk"
	reports "$func" || continue	# skipped above
	check "top -b: $prog shows $abbrev:N" grep -qE " $prog .* $abbrev:[1-9]" "$out/top.txt"
done
check "top -b: the header says stream writes work" grep -q 'stream writes works' "$out/top.txt"
finish
