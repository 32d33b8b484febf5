# SPDX-License-Identifier: GPL-2.0
# The steps vmtest.sh (stream-drops) and rfc-drain/vmtest.sh share, sourced
# by both: TAP output, the pristine tree, the series applied to a
# hard-linked copy, the kernel built from it, the selftest runner built
# against the tree's libbpf, and a guest booted in the lab. Each driver
# keeps its own series' checks.
#
# The driver sets, before sourcing: kp (this directory), root (the
# repository), CACHE ($KP_CACHE), BUILD (bpfstderr's build directory),
# TIMEOUT (guest timeout, seconds).

PASSED=0 FAILED=0 SKIPPED=0
TMP=""

# kp_start NAME LOG: temporary directory (removed on exit), all output
# also to LOG; NAME prefixes skip lines and the temporary directory.
kp_start() {
	KP_NAME=$1
	trap kp_cleanup EXIT
	trap 'exit 130' INT TERM HUP
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/kp-$KP_NAME.XXXXXX") || exit 1
	exec > >(tee "$2") 2>&1
}
kp_cleanup() { [ -n "$TMP" ] && rm -rf "$TMP"; }

pass() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "not ok - $1${2:+: $2}"; }
finish() {
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ] && [ "$SKIPPED" -eq 0 ]
	exit
}
skip_all() { SKIPPED=$((SKIPPED + 1)); echo "skip - $KP_NAME: $*"; finish; }
check() { local d=$1; shift; "$@" && pass "$d" || fail "$d"; }
check_eq() { [ "$2" = "$3" ] && pass "$1" || fail "$1" "got '$2', want '$3'"; }
secs() { local t=$(($(date +%s) - $1)); echo "$((t / 60)) min $((t % 60)) s"; }

# kp_tree: the pristine 7.3.4 tree (fetch-source.sh) in $src.
kp_tree() {
	src=$("$kp/fetch-source.sh") || skip_all "no kernel tree (fetch-source.sh failed)"
	echo "tree: $src ($(make -s -C "$src" kernelversion))"
}

# kp_patch_tree WHAT PTREE OUT PATCH...: PATCHes applied to a hard-linked
# copy of $src in PTREE, stamped with their hash in PTREE/.series; redone
# (and the build in OUT dropped) only when they changed. WHAT names them.
kp_patch_tree() {
	local what=$1 ptree=$2 out=$3 stamp p
	shift 3
	stamp=$(cat "$@" | sha256sum | cut -c1-16)
	[ "$(cat "$ptree/.series" 2>/dev/null)" = "$stamp" ] && return
	echo "== applying $what ($stamp) to a hard-linked copy: $ptree"
	rm -rf "$ptree" "$out"
	cp -al "$src" "$ptree" || skip_all "cp -al $src $ptree failed"
	for p in "$@"; do
		patch -s -p1 -d "$ptree" <"$p" || { fail "$(basename "$p") applies"; finish; }
	done
	echo "$stamp" >"$ptree/.series"
}

# kp_build_kernel PTREE OUT BLOG NICE: build-kernel.sh PTREE OUT (log in
# BLOG; niceness $NICE, else NICE), timed, unless OUT's bzImage is newer
# than the series stamp.
kp_build_kernel() {
	local ptree=$1 out=$2 blog=$3 nice=${NICE:-$4} t0
	if pgrep -f "O=$out " >/dev/null; then
		skip_all "a kernel build in $out is still running (see $blog); run again when it is done"
	elif [ ! -s "$out/arch/x86/boot/bzImage" ] ||
	     [ "$ptree/.series" -nt "$out/arch/x86/boot/bzImage" ]; then
		echo "== building the kernel (log: $blog)"
		t0=$(date +%s)
		if ! NICE=$nice "$kp/build-kernel.sh" "$ptree" "$out" >"$blog" 2>&1; then
			tail -30 "$blog"
			fail "the patched kernel builds" "see $blog"
			finish
		fi
		echo "kernel built in $(secs "$t0")"
	fi
}

# kp_build_summary BLOG: build-kernel.sh's last bzImage line, if any.
kp_build_summary() {
	grep -E '^build-kernel: make bzImage exit' "$1" 2>/dev/null | tail -n 1
}

# kp_install_kernel OUT KDIR: OUT's bzImage as the lab kernel KDIR (no modules).
kp_install_kernel() {
	mkdir -p "$2/modules"
	cmp -s "$1/arch/x86/boot/bzImage" "$2/vmlinuz" || cp "$1/arch/x86/boot/bzImage" "$2/vmlinuz"
}

# kp_stock_kernel: Debian's stock 7.3.4 as the lab fetches it, in $kstock.
kp_stock_kernel() {
	kstock=$(BPFSTDERR_LAB_KERNELS=7 bash "$root/tests/vm/fetch.sh" | awk '$1 == "7.x" { print $3 }')
	[ -n "$kstock" ] || skip_all "Debian's 7.x kernel could not be fetched (tests/vm/fetch.sh)"
	case $kstock in *7.3.4*) ;; *) echo "note: the stock 7.x kernel is $kstock, not 7.3.4" ;; esac
}

# kp_libbpf PTREE VT: PTREE's libbpf, static, installed in VT/libbpf-root.
kp_libbpf() {
	mkdir -p "$2/gen" "$2/libbpf"
	[ -s "$2/libbpf-root/usr/lib64/libbpf.a" ] && return
	make -s -C "$1/tools/lib/bpf" OUTPUT="$2/libbpf/" BUILD_STATIC_ONLY=1 \
		DESTDIR="$2/libbpf-root" prefix=/usr install >"$TMP/libbpf.log" 2>&1 ||
		{ tail "$TMP/libbpf.log"; fail "libbpf builds"; finish; }
}

# kp_vmlinux_h VT VMLINUX KFUNCS: VT/gen/vmlinux.h from VMLINUX's BTF, then
# the kfunc prototypes in KFUNCS (the tree's own bpftool would add those;
# Debian 12's bpftool 7.1 does not).
kp_vmlinux_h() {
	bpftool btf dump file "$2" format c >"$1/gen/vmlinux.h" ||
		{ fail "vmlinux.h"; finish; }
	kp_vmlinux_kfuncs "$1" "$3"
}

# kp_vmlinux_kfuncs VT KFUNCS: KFUNCS appended to VT/gen/vmlinux.h.
kp_vmlinux_kfuncs() {
	[ -s "$1/gen/vmlinux.h" ] && cat "$2" >>"$1/gen/vmlinux.h" ||
		{ fail "vmlinux.h"; finish; }
}

# kp_runner PTREE VT TESTSEL TEST RUNNER_C WHAT LINE: checks that
# VT/gen/vmlinux.h has LINE once (WHAT names it), then builds
# TESTSEL/progs/TEST.c (the selftest's BPF side, headers from PTREE's
# selftests) and its skeleton, RUNNER_C (which includes
# TESTSEL/prog_tests/TEST.c) into VT/runner, and bpfstderr.
kp_runner() {
	local ptree=$1 vt=$2 tsel=$3 test=$4 sel=$1/tools/testing/selftests/bpf
	check_eq "vmlinux.h has $6" "$(grep -cF "$7" "$vt/gen/vmlinux.h")" 1
	clang-19 -g -O2 -target bpf -D__TARGET_ARCH_x86 -I "$vt/gen" -I "$vt/libbpf-root/usr/include" \
		-I "$sel" -I "$sel/progs" -I "$sel/libarena/include" \
		-c "$tsel/progs/$test.c" -o "$vt/gen/$test.bpf.o" &&
		bpftool gen skeleton "$vt/gen/$test.bpf.o" name "$test" >"$vt/gen/$test.skel.h" &&
		gcc -O1 -g -Wall -I "$vt/gen" -I "$kp/vmtest" -I "$tsel" -I "$vt/libbpf-root/usr/include" \
			-I "$ptree/tools/include/uapi" -o "$vt/runner" "$5" \
			"$vt/libbpf-root/usr/lib64/libbpf.a" -lelf -lz ||
		{ fail "the selftest runner builds"; finish; }
	kp_bpfstderr
}

# kp_bpfstderr [TARGET FILE WHAT]: bpfstderr's make TARGET (default all)
# unless FILE (default bpfstderr) is in $BUILD; WHAT names the check that
# fails when it does not build.
kp_bpfstderr() {
	local target=${1:-all} file=${2:-bpfstderr} what=${3:-bpfstderr builds}
	[ -x "$BUILD/$file" ] || make -C "$root" BUILD="$BUILD" "$target" >"$TMP/make-$target.log" 2>&1 ||
		{ tail "$TMP/make-$target.log"; fail "$what"; finish; }
}

# guest LABEL KDIR CMD: CMD in a fresh guest of KDIR; its output in
# $TMP/LABEL.out, its "result" lines in $TMP/LABEL.res
guest() {
	local t0=$(date +%s)
	echo "== $1: $(basename "$2")"
	(cd "$root" && bash tests/vm/run.sh -t "$TIMEOUT" "$2" "$3") >"$TMP/$1.out" 2>&1
	echo "guest exit $? after $(secs "$t0")"
	cat "$TMP/$1.out"
	sed -n 's/^result //p' "$TMP/$1.out" >"$TMP/$1.res"
}
res() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$TMP/$1.res"; }
runner_summary() { grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TMP/$1.out" | tail -n 1; }
