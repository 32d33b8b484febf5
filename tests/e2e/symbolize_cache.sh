# The build-id cache of kernel frames (tool/symcache.c), on a fake kernel
# built here: a warm report answers as the cold one without the DWARF;
# the cache is keyed by build-id, survives concurrent writers, is bounded,
# and a file that is not whole, not ours or not this build-id's is
# ignored. Correctness only: the timing is bench/symbolize.sh's.
. tests/lib.sh

out=$(mktmp)
d=$out/k
tests/fakekernel/build.sh gcc "$d" > /dev/null 2>&1 || { fail "build the fake kernel"; finish; }
python3 tests/e2e/symbolize_check_frames.py "$d"
id=$(readelf -n "$d/vmlinux" | awk '/Build ID/ { print $3 }')

# report CACHE_DIR [VMLINUX] [REPORT]: the JSON frames, one per line
report() {
	BPFSTDERR_CACHE_DIR=$1 "$BPFSTDERR" report --json --vmlinux "${2:-$d/vmlinux}" \
		"${3:-$d/report.txt}" 2> "$out/err" |
		jq -c '.programs[0].groups[0].example.frames[]'
}
# tamper FILE: every line + 1000, checksum made right again: a file that
# looks whole, to tell whether the cache (not DWARF) answered
tamper() {
	python3 - "$1" <<'EOF'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")[:-2]
out = [lines[0]]
for l in lines[1:]:
    f = l.split("\t")
    n = int(f[9 + int(f[8], 16)], 16)
    base = 10 + int(f[8], 16)
    for i in range(n):
        f[base + 4 * i + 2] = "%x" % (int(f[base + 4 * i + 2], 16) + 1000)
    out.append("\t".join(f))
body = "\n".join(out) + "\n"
h = 0xcbf29ce484222325
for b in body.encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
open(p, "w").write(body + "end\t%x\t%x\n" % (len(out) - 1, h))
EOF
}
lines_of() { jq -r '(.sites // [])[] | .line' "$@" | sort -n | tail -n 1; }

fresh=$(report off)
check "cache off: frames symbolized" test "$(grep -c '"sites"' <<<"$fresh")" -gt 100
check "cache off (BPFSTDERR_CACHE_DIR not absolute): nothing written" test ! -e off

c=$out/cache
check_eq "cold: same frames as without the cache" "$(report "$c")" "$fresh"
check_eq "cold: nothing said" "$(cat "$out/err")" ""
f=$c/$id.ksym
check "cold: one file, named by the vmlinux's build-id" test -f "$f"
check_eq "cold: directory 0700, file 0600" "$(stat -c %a "$c") $(stat -c %a "$f")" "700 600"
check_eq "warm: same frames" "$(report "$c")" "$fresh"
if command -v strace > /dev/null && strace -f -o /dev/null true 2> /dev/null; then
	opens() {	# opens CACHE_DIR: how often the vmlinux is opened
		BPFSTDERR_CACHE_DIR=$1 strace -f -e trace=openat -o "$out/trace" "$BPFSTDERR" report \
			--json --vmlinux "$d/vmlinux" "$d/report.txt" > /dev/null 2>&1
		grep -c "\"$d/vmlinux\"" "$out/trace"
	}
	# the cold run opens it for its build-id (twice: found, then keyed)
	# and once more for libdw; the warm one only for its build-id
	check_eq "warm: the vmlinux is not opened for DWARF" "$(opens "$c")" $(( $(opens off) - 1 ))
else
	skip "warm: the vmlinux is not opened for DWARF" "no strace here"
fi
cp "$f" "$out/good"
tamper "$f"
check "warm: answered by the cache (a tampered but whole file is used)" \
	test "$(report "$c" | lines_of)" -gt 1000

# never across a build-id change: the same kernel linked with another id
BUILD_ID=0x0123456789abcdef0123456789abcdef01234567 tests/fakekernel/build.sh gcc "$out/k2" > /dev/null 2>&1
cp "$d/report.txt" "$out/k2/"
check_eq "another build-id: not answered by the first one's file" \
	"$(report "$c" "$out/k2/vmlinux" | lines_of)" "$(report off | lines_of)"
check "another build-id: a file of its own" test -f "$c/0123456789abcdef0123456789abcdef01234567.ksym"
cp "$f" "$c/0123456789abcdef0123456789abcdef01234567.ksym"
check "a file whose header names another build-id is ignored" \
	test "$(report "$c" "$out/k2/vmlinux" | lines_of)" -lt 1000

# not whole: ignored, then rewritten whole
for how in truncate flip garbage empty; do
	cp "$out/good" "$f"
	tamper "$f"
	case $how in
	truncate) truncate -s $(( $(stat -c %s "$f") / 2 )) "$f" ;;
	flip) sed -i '3s/\t[0-9a-f]*$/\tfff1/' "$f" ;;	# a column changed, checksum not
	garbage) head -c 4096 /dev/urandom > "$f" ;;
	empty) : > "$f" ;;
	esac
	chmod 600 "$f"
	check_eq "corrupt ($how): ignored, same frames" "$(report "$c")" "$fresh"
	check_eq "corrupt ($how): nothing said" "$(cat "$out/err")" ""
	check_eq "corrupt ($how): rewritten whole, and used" "$(report "$c")" "$fresh"
	check "corrupt ($how): rewritten with a header" grep -q "^bpfstderr-ksym-cache	1	.*	$id\$" "$f"
done

# not ours: a planted file (tampered, whole) is not trusted
cp "$out/good" "$f"
tamper "$f"
chmod 644 "$f"
check "a file others can read or write (0644) is ignored" test "$(report "$c" | lines_of)" -lt 1000
rm -f "$f"
cp "$out/good" "$out/planted"
tamper "$out/planted"
chmod 600 "$out/planted"
ln -s "$out/planted" "$f"
check "a symlink is not followed" test "$(report "$c" | lines_of)" -lt 1000
rm -f "$f"
if [ "$(id -u)" = 0 ]; then
	cp "$out/planted" "$f"
	chown nobody "$f"
	check "a file owned by another user is ignored" test "$(report "$c" | lines_of)" -lt 1000
	rm -f "$f"
else
	skip "a file owned by another user" "not root"
fi
cp "$out/planted" "$f"
chmod 755 "$c"
check "a directory others can enter (0755) is not used" test "$(report "$c" | lines_of)" -lt 1000
check "… nor written" cmp -s "$f" "$out/planted"
chmod 700 "$c"
rm -f "$f"

# concurrent writers: each process a slice of the frames; the file stays whole
head -n 3 "$d/report.txt" > "$out/head"
total=$(grep -c '+0x' "$d/report.txt")
pids=()
for i in 0 1 2 3 4 5 6 7; do
	{ cat "$out/head"; grep '+0x' "$d/report.txt" | awk -v i=$i 'NR % 8 == i'; echo; } > "$out/slice$i"
	BPFSTDERR_CACHE_DIR=$c "$BPFSTDERR" report --json --vmlinux "$d/vmlinux" "$out/slice$i" \
		> /dev/null 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
check_eq "concurrent writers: no temporary file left" "$(ls -A "$c" | grep -c '^\.')" 0
n=$(printf "%d" "0x$(awk -F"\t" "\$1 == \"end\" { print \$2 }" "$f")")
check "concurrent writers: the file is whole ($n of $total frames)" test "${n:-0}" -gt 0
check_eq "concurrent writers: then the same frames" "$(report "$c")" "$fresh"

# bounded: entries a file, files a directory
rm -f "$f"
BPFSTDERR_CACHE_MAX=50 report "$c" > "$out/bounded"
check_eq "bounded: BPFSTDERR_CACHE_MAX=50 entries" \
	"$(printf "%d" "0x$(awk -F"\t" "\$1 == \"end\" { print \$2 }" "$f")")" 50
check_eq "bounded: still the same frames" "$(cat "$out/bounded")" "$fresh"
for i in $(seq 40); do
	printf 'x' > "$c/$(printf '%040x' "$i").ksym"
	chmod 600 "$c/$(printf '%040x' "$i").ksym"
	touch -d '2020-01-01' "$c/$(printf '%040x' "$i").ksym"
done
report "$c" > /dev/null
check_eq "bounded: at most 32 objects' files, the newest kept" \
	"$(ls "$c" | grep -c '\.ksym$') $(test -f "$f" && echo ours)" "32 ours"
finish
