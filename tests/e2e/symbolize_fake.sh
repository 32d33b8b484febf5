# Kernel frames against llvm-addr2line-19 -i on fake kernels built here
# with gcc and with clang (which leaves out .debug_aranges): every byte
# offset of every function, return addresses and trapping instructions,
# inline chains, duplicate static names, assembly, a relocatable module.
. tests/lib.sh

out=$(mktmp)
# a cache of our own (tests/e2e/symbolize_cache.sh tests it): each kernel
# is checked cold, then warm from the cache
export BPFSTDERR_CACHE_DIR=$out/cache
for cc in gcc clang-19; do
	d=$out/$cc
	tests/fakekernel/build.sh "$cc" "$d" > /dev/null 2>&1 || { fail "$cc: build the fake kernel"; continue; }
	python3 tests/e2e/symbolize_check_frames.py "$d"
	"$BPFSTDERR" report --json --vmlinux "$d/vmlinux" "$d/report.txt" > "$d/out.json" 2> "$d/err"
	res=$(python3 tests/e2e/symbolize_check.py "$d" "$d/out.json" "$d/frames.txt"); rc=$?
	check_eq "$cc: no disagreement with llvm-addr2line-19 ($(tail -n 1 <<<"$res"))" "$rc" 0
	[ "$rc" = 0 ] || head -n 5 <<<"$res"
	check_eq "$cc: --vmlinux offline is trusted, nothing said" "$(cat "$d/err")" ""
	"$BPFSTDERR" report --json --vmlinux "$d/vmlinux" "$d/report.txt" > "$d/warm.json" 2> "$d/err"
	res=$(python3 tests/e2e/symbolize_check.py "$d" "$d/warm.json" "$d/frames.txt"); rc=$?
	check_eq "$cc: warm (from the build-id cache), no disagreement either" "$rc" 0
	check "$cc: warm: the same JSON as cold" cmp -s "$d/out.json" "$d/warm.json"
	# text: a frame the JSON says was inlined, alone in a report
	f=$(jq -r '.programs[0].groups[0].example.frames[] | select((.sites // []) | length >= 3) |
		"\(.symbol)+0x\(.offset | tostring)/0x\(.size | tostring)"' "$d/out.json" | head -n 1)
	f=$(python3 -c 'import sys; s, rest = sys.argv[1].split("+0x"); o, z = rest.split("/0x"); print(f"{s}+{int(o):#x}/{int(z):#x}")' "$f")
	printf 'ERROR: Timeout detected for may_goto instruction\nCPU: 0 UID: 0 PID: 1 Comm: t\nCall trace:\n%s\n\n' "$f" > "$d/one.txt"
	check "$cc: text shows the inline chain of $f, innermost first" \
		bash -c "'$BPFSTDERR' report --vmlinux '$d/vmlinux' '$d/one.txt' | grep -A2 -F '$f' | grep -qE '^ +leaf inlined in mid at .*core.c:[0-9]+$'"
done

# The same frames, but the live kernel: a vmlinux of another kernel is
# refused, once; without any vmlinux one notice says how to get one.
# INJECTED CONTENT: the report comes from tests/shim for a real program.
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
cp "$out/gcc/report.txt" "$out/$id.2"
cat "$out/gcc/report.txt" >> "$out/$id.2"
shim() { LD_PRELOAD=$HELPERS/libstreamshim.so BPFSTDERR_SHIM_DIR=$out \
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 "$@"; }
shim "$BPFSTDERR" report -p "$id" --vmlinux "$out/gcc/vmlinux" > "$out/live.txt" 2> "$out/live.err"
check_eq "live: another kernel's vmlinux refused, said once" "$(cat "$out/live.err")" \
	"bpfstderr: --vmlinux $out/gcc/vmlinux is not the running kernel's (build-id differs): not used"
check "live: frames stay symbol+off/size" grep -qE '^      [a-z_]+\+0x[0-9a-f]+/0x[0-9a-f]+$' "$out/live.txt"
rm -f "$out/$id.2.off"
shim "$BPFSTDERR" report -p "$id" > /dev/null 2> "$out/none.err"
if ls /usr/lib/debug/boot/vmlinux-"$(uname -r)" /boot/vmlinux-"$(uname -r)" > /dev/null 2>&1; then
	pass "a vmlinux for this kernel exists here: no notice expected"
else
	check_eq "live: no debuginfo, one notice" "$(wc -l < "$out/none.err")" 1
	check "live: the notice says how" grep -q 'install the kernel.s debug package or pass --vmlinux' "$out/none.err"
fi
# A vmlinux that is the running kernel's by build-id (a fake kernel linked
# with it) is used live: given with --vmlinux, and fetched from a
# debuginfod server (ours, on loopback) when none is on disk.
kid=$("$BPFSTDERR" doctor --json | jq -r .vmlinux.kernel_build_id)
BUILD_ID=0x$kid tests/fakekernel/build.sh gcc "$out/srv" > /dev/null 2>&1
rm -f "$out/srv/fake_mod.ko"
first=$(head -n 1 "$out/gcc/frames.txt")
want=$(llvm-addr2line-19 -e "$out/srv/vmlinux" \
	"$(printf '%#x' $(( 0x$(nm "$out/srv/vmlinux" | awk -v s="${first%%+*}" '$3 == s { print $1; exit }') \
	+ $(printf '%d' "$(cut -d+ -f2 <<<"$first" | cut -d/ -f1)") - 1 )))" | xargs basename)
live_first() {	# the first frame of the live report, symbolized or not
	rm -f "$out/$id.2.off"
	shim "$@" > "$out/l.json" 2> "$out/l.err"
	jq -r '.programs[0].groups[0].example.frames[0] | "\(.file // "-" | split("/") | last):\(.line // "-")"' "$out/l.json"
}
check_eq "live: the running kernel's vmlinux (by build-id) is used" \
	"$(live_first "$BPFSTDERR" report --json -p "$id" --vmlinux "$out/srv/vmlinux")" "$want"
check_eq "live: nothing said when it matches" "$(cat "$out/l.err")" ""
port=$((20000 + RANDOM % 20000))
debuginfod -F "$out/srv" -p "$port" -d "$out/dbgd.sqlite" > "$out/dbgd.log" 2>&1 &
dbgd=$!
dbgd_serves() {
	python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1])" \
		"http://127.0.0.1:$port/buildid/$kid/debuginfo" 2> /dev/null
}
wait_until 60 dbgd_serves
check_eq "debuginfod: fetched by build-id and used" \
	"$(DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$out/cache live_first \
		"$BPFSTDERR" report --json -p "$id")" "$want"
check "debuginfod: the client cached it" bash -c "ls '$out'/cache/$kid/debuginfo"
kill "$dbgd"; wait "$dbgd" 2> /dev/null
stop_holder H
finish
