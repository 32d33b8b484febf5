#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make -C kernel-patches vmtest: the stream-drops series compiled, booted
# and tested, against Debian's stock 7.3.4 in the same lab.
#
#   1. a pristine 7.3.4 tree (fetch-source.sh: Debian's linux-source-7.3);
#   2. the series applied to a hard-linked copy of it ($KP_CACHE/src-patched);
#   3. a kernel built from it (build-kernel.sh, $KP_CACHE/build; again only
#      when the series changed), timed;
#   4. the selftest's own source (progs/ + prog_tests/stream_drop.c from the
#      patched tree) built with vmtest/runner.c against the patched tree's
#      libbpf and a vmlinux.h of the patched kernel's BTF;
#   5. both kernels booted in the lab (tests/vm/run.sh: Debian's 7.3.4 from
#      tests/vm/fetch.sh, and the patched bzImage), vmtest/guest.sh run in
#      each: the selftest, then bpfstderr report --json and top -b on a
#      program that wrote three "%2000d" messages to its stderr.
#
# Passes when, on the patched kernel, the selftest passes and bpfstderr
# reads 3 dropped messages, 6000 dropped bytes, capacity 0; and on stock
# 7.3.4 the selftest fails, 6000 bytes of capacity stay charged, and
# bpfstderr's counters are null. Prints "N passed, N failed, N skipped";
# the whole log goes to stream-drops/vmtest.log (VMTEST_LOG overrides).
# --stock-only: no kernel build; only the stock 7.3.4 half, with a runner
# whose vmlinux.h is this host's BTF plus the two fields patch 2 adds (CO-RE
# relocates by name, so the test is the same); log: stream-drops/vmtest-stock.log.
# BPFSTDERR_BUILD: bpfstderr's build directory (default ../build; built
# when missing). KP_CACHE: default /var/cache/bpfstderr-kp.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
CACHE=${KP_CACHE:-/var/cache/bpfstderr-kp}
BUILD=${BPFSTDERR_BUILD:-$root/build}
STOCK_ONLY=0
[ "${1:-}" = --stock-only ] && STOCK_ONLY=1
if [ $STOCK_ONLY = 1 ]; then
	LOG=${VMTEST_LOG:-$here/stream-drops/vmtest-stock.log}
else
	LOG=${VMTEST_LOG:-$here/stream-drops/vmtest.log}
fi
TIMEOUT=${BPFSTDERR_LAB_TIMEOUT:-900}
PASSED=0 FAILED=0 SKIPPED=0
TMP=""

cleanup() { [ -n "$TMP" ] && rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kp-vmtest.XXXXXX") || exit 1

exec > >(tee "$LOG") 2>&1
pass() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "not ok - $1${2:+: $2}"; }
finish() {
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ] && [ "$SKIPPED" -eq 0 ]
	exit
}
skip_all() { SKIPPED=$((SKIPPED + 1)); echo "skip - vmtest: $*"; finish; }
check() { local d=$1; shift; "$@" && pass "$d" || fail "$d"; }
check_eq() { [ "$2" = "$3" ] && pass "$1" || fail "$1" "got '$2', want '$3'"; }
secs() { local t=$(($(date +%s) - $1)); echo "$((t / 60)) min $((t % 60)) s"; }

echo "== vmtest $(date -u +%FT%TZ) on $(uname -r), $(nproc) CPUs"
# --- 1. the pristine tree
src=$("$here/fetch-source.sh") || skip_all "no kernel tree (fetch-source.sh failed)"
echo "tree: $src ($(make -s -C "$src" kernelversion))"

# --- 2. the patched tree, redone when the series changes
mapfile -t patches < <(find "$here/stream-drops" -maxdepth 1 -name '0*.patch' ! -name '0000-*' | sort)
stamp=$(cat "${patches[@]}" | sha256sum | cut -c1-16)
ptree=$CACHE/src-patched
if [ "$(cat "$ptree/.series" 2>/dev/null)" != "$stamp" ]; then
	echo "== applying the series ($stamp) to a hard-linked copy: $ptree"
	rm -rf "$ptree" "$CACHE/build"
	cp -al "$src" "$ptree" || skip_all "cp -al $src $ptree failed"
	for p in "${patches[@]}"; do
		patch -s -p1 -d "$ptree" <"$p" || { fail "$(basename "$p") applies"; finish; }
	done
	echo "$stamp" >"$ptree/.series"
fi

# --- 3. the kernel
bz=$CACHE/build/arch/x86/boot/bzImage
if [ $STOCK_ONLY = 1 ]; then
	echo "== --stock-only: no patched kernel"
elif pgrep -f "O=$CACHE/build " >/dev/null; then
	skip_all "a kernel build in $CACHE/build is still running (see $CACHE/build.log); run again when it is done"
elif [ ! -s "$bz" ] || [ "$ptree/.series" -nt "$bz" ]; then
	echo "== building the kernel (log: $CACHE/build.log)"
	t0=$(date +%s)
	if ! "$here/build-kernel.sh" "$ptree" "$CACHE/build" >"$CACHE/build.log" 2>&1; then
		tail -30 "$CACHE/build.log"
		fail "the patched kernel builds" "see $CACHE/build.log"
		finish
	fi
	echo "kernel built in $(secs "$t0")"
fi
grep -E '^build-kernel: make bzImage exit' "$CACHE/build.log" 2>/dev/null | tail -n 1
kpatched=$CACHE/kernels/7.3.4-stream-drops
if [ $STOCK_ONLY = 0 ]; then
	mkdir -p "$kpatched/modules"
	cmp -s "$bz" "$kpatched/vmlinuz" || cp "$bz" "$kpatched/vmlinuz"
fi

# Debian's stock 7.3.4, as the lab fetches it.
kstock=$(BPFSTDERR_LAB_KERNELS=7 bash "$root/tests/vm/fetch.sh" | awk '$1 == "7.x" { print $3 }')
[ -n "$kstock" ] || skip_all "Debian's 7.x kernel could not be fetched (tests/vm/fetch.sh)"
case $kstock in *7.3.4*) ;; *) echo "note: the stock 7.x kernel is $kstock, not 7.3.4" ;; esac

# --- 4. the selftest runner, from the patched tree
echo "== building the selftest runner"
vt=$CACHE/vt
sel=$ptree/tools/testing/selftests/bpf
mkdir -p "$vt/gen"
if [ ! -s "$vt/libbpf-root/usr/lib64/libbpf.a" ]; then
	make -s -C "$ptree/tools/lib/bpf" OUTPUT="$vt/libbpf/" BUILD_STATIC_ONLY=1 \
		DESTDIR="$vt/libbpf-root" prefix=/usr install >"$TMP/libbpf.log" 2>&1 ||
		{ tail "$TMP/libbpf.log"; fail "libbpf builds"; finish; }
fi
# The patched kernel's types, then the kfuncs the selftest calls (the
# tree's own bpftool would add those; Debian 12's bpftool 7.1 does not).
if [ $STOCK_ONLY = 1 ]; then
	bpftool btf dump file /sys/kernel/btf/vmlinux format c |
		awk '/^struct bpf_stream \{/ { s = 1 }
		     s && /^\};/ { print "\tatomic64_t dropped_msgs;\n\tatomic64_t dropped_bytes;"; s = 0 }
		     { print }' >"$vt/gen/vmlinux.h"
else
	bpftool btf dump file "$CACHE/build/vmlinux" format c >"$vt/gen/vmlinux.h"
fi
[ -s "$vt/gen/vmlinux.h" ] && cat "$here/vmtest/kfuncs.h" >>"$vt/gen/vmlinux.h" ||
	{ fail "vmlinux.h"; finish; }
check_eq "vmlinux.h has struct bpf_stream's dropped_msgs" \
	"$(grep -c 'atomic64_t dropped_msgs;' "$vt/gen/vmlinux.h")" 1
clang-19 -g -O2 -target bpf -D__TARGET_ARCH_x86 -I "$vt/gen" -I "$vt/libbpf-root/usr/include" \
	-I "$sel" -I "$sel/progs" -I "$sel/libarena/include" \
	-c "$sel/progs/stream_drop.c" -o "$vt/gen/stream_drop.bpf.o" &&
	bpftool gen skeleton "$vt/gen/stream_drop.bpf.o" name stream_drop >"$vt/gen/stream_drop.skel.h" &&
	gcc -O1 -g -Wall -I "$vt/gen" -I "$here/vmtest" -I "$sel" -I "$vt/libbpf-root/usr/include" \
		-I "$ptree/tools/include/uapi" -o "$vt/runner" "$here/vmtest/runner.c" \
		"$vt/libbpf-root/usr/lib64/libbpf.a" -lelf -lz ||
	{ fail "the selftest runner builds"; finish; }
[ -x "$BUILD/bpfstderr" ] || make -C "$root" BUILD="$BUILD" all >"$TMP/make.log" 2>&1 ||
	{ tail "$TMP/make.log"; fail "bpfstderr builds"; finish; }

# --- 5. both kernels in the lab
# guest LABEL KDIR: guest.sh in a fresh guest; its "result" lines in $TMP/LABEL.res
guest() {
	local t0=$(date +%s)
	echo "== $1: $(basename "$2")"
	(cd "$root" && bash tests/vm/run.sh -t "$TIMEOUT" "$2" \
		"bash kernel-patches/vmtest/guest.sh $vt/runner $BUILD/bpfstderr") >"$TMP/$1.out" 2>&1
	echo "guest exit $? after $(secs "$t0")"
	cat "$TMP/$1.out"
	sed -n 's/^result //p' "$TMP/$1.out" >"$TMP/$1.res"
}
res() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$TMP/$1.res"; }
runner_summary() { grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TMP/$1.out" | tail -n 1; }

guest stock "$kstock"
[ $STOCK_ONLY = 0 ] && guest patched "$kpatched"

echo "== verdict"
check_eq "stock: boots $(res stock kernel)" "$(res stock kernel | cut -d+ -f1)" "7.3.4"
check_eq "stock: the selftest fails there (the leak)" "$(res stock runner_exit)" 1
check "stock: 6000 bytes of capacity stay charged after three refused writes" \
	grep -q 'not ok - stream_drop/oversized: capacity after read: .* = 6000,' "$TMP/stock.out"
check_eq "stock: report --json stderr capacity (leaked)" "$(res stock report_capacity)" 6000
check_eq "stock: report --json dropped_messages" "$(res stock report_dropped_messages)" null
check_eq "stock: report --json dropped_bytes" "$(res stock report_dropped_bytes)" null
[ $STOCK_ONLY = 1 ] && finish
check_eq "patched: boots the built kernel" "$(res patched kernel | cut -d' ' -f1 | cut -d- -f1)" "7.3.4"
check_eq "patched: the selftest passes" "$(res patched runner_exit)" 0
echo "#   stock runner: $(runner_summary stock); patched runner: $(runner_summary patched)"
check_eq "patched: report --json stderr capacity" "$(res patched report_capacity)" 0
check_eq "patched: report --json dropped_messages" "$(res patched report_dropped_messages)" 3
check_eq "patched: report --json dropped_bytes" "$(res patched report_dropped_bytes)" 6000
check_eq "patched: top -b shows dropped 3" "$(res patched top_dropped)" 3
finish
