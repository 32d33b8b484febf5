# Inside a lab guest (tests/vm/lab.sh): one binary for every kernel with
# streams. The printing objects are built for both shapes of the print
# kfunc (bpf/stream_printk.h); the build this kernel takes loads and
# writes, and the other one, where this kernel's kfunc has another shape,
# is refused with that cause named (not "the verifier"). The kernel's own
# BTF, as bpftool dumps it, is the oracle for the shape.
. tests/lib.sh

echo "# kernel $(uname -r)"
out=$(mktmp)
bpftool btf dump file /sys/kernel/btf/vmlinux > "$out/btf.txt"
# args NAME: the argument count of the kernel function NAME, or none
args() {
	local proto
	proto=$(awk -v n="'$1'" '$2 == "FUNC" && $3 == n { sub("type_id=", "", $4); print $4; exit }' "$out/btf.txt")
	[ -n "$proto" ] || { echo none; return; }
	awk -v id="[$proto]" '$1 == id { for (i = 2; i <= NF; i++) if ($i ~ /^vlen=/) { sub("vlen=", "", $i); print $i } exit }' "$out/btf.txt"
}
vp=$(args bpf_stream_vprintk)
echo "# bpf_stream_vprintk: $vp args; bpf_stream_vprintk_impl: $(args bpf_stream_vprintk_impl) args"

start_holder H writer || { fail "the writer (the build this kernel takes) loads"; finish; }
pass "the writer (the build this kernel takes) loads"
check_eq "and its write succeeds" "$(holder_cmd H "write 1 1 10")" "rets 0"
other=$(holder_cmd H otherbuild)
case $vp in
4) want="refused -22 its kfunc bpf_stream_vprintk() takes 5 arguments, this kernel's takes 4, so libbpf refuses the whole object" ;;
5) want="refused -22 its kfunc bpf_stream_vprintk() takes 4 arguments, this kernel's takes 5, so libbpf refuses the whole object" ;;
*) want=loaded ;;	# the other build's extern is absent here: weak, resolved to nothing
esac
check_eq "the other build: ${want%% *}, the kfunc named" "$other" "$want"
stop_holder H

"$BPFSTDERR" doctor > "$out/doctor.txt" 2>&1
case $vp in 4) kf=bpf_stream_vprintk ;; *) kf=$( [ "$(args bpf_stream_vprintk_impl)" != none ] &&
	echo bpf_stream_vprintk_impl || echo bpf_stream_vprintk) ;;
esac
check "doctor's probe used $kf" grep -qE "^stream writes +works \\($kf returned 0\\)" "$out/doctor.txt"
finish
