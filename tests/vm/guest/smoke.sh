# The lab's first test, inside a guest (tests/vm/lab.sh): this kernel's
# streams carry real bytes. doctor says writes work, and what a BPF program
# writes is what an independent raw reader (tests/vm/raw_read.py: bpf(2)
# through ctypes) drains, byte for byte.
. tests/lib.sh

echo "# kernel $(uname -r)"
out=$(mktmp)
"$BPFSTDERR" doctor > "$out/doctor.txt" 2>&1; rc=$?
check_eq "doctor exits 0" "$rc" 0
grep -E '^(stream writes|verdict)' "$out/doctor.txt" | sed 's/^/# /'
check "doctor: stream writes work" grep -qE '^stream writes +works' "$out/doctor.txt"
check "doctor: bpfstderr can work here" grep -qE '^verdict +bpfstderr can work here' "$out/doctor.txt"

start_holder H writer || { fail "holdprog writer loads"; finish; }
id=$(prog_id H writer)
check "the writer is loaded" test -n "$id"
for stream in 1 2; do
	ret=$(holder_cmd H "write $stream 3 37")
	check_eq "stream $stream: three writes of 37 bytes succeed" "$ret" "rets 0 0 0"
	python3 tests/vm/raw_read.py "$id" "$stream" > "$out/raw$stream"
	printf 'x%.0s' $(seq 111) > "$out/want$stream"
	check "stream $stream: the raw reader drains exactly the 111 bytes written" \
		cmp "$out/raw$stream" "$out/want$stream"
done
stop_holder H
finish
