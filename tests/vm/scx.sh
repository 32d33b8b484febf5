#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel lab's real sched_ext scheduler, built on the host: the kernel
# tree's own tools/sched_ext/scx_sdt (Debian's linux-source-7.3, from
# kernel-patches/fetch-source.sh) with our bug applied (tests/scx/*.patch:
# writes through a stale arena pointer, counted by the scheduler, and a
# stream watcher of its own), and the tree's bpftool, both linked with the
# tree's libbpf. The BPF side is compiled against the BTF of the lab's
# 7.x kernel (scripts/extract-vmlinux of its vmlinuz): the scheduler runs
# in that kernel's guests (tests/vm/guest/scx.sh).
#
# Usage: scx.sh          build unless built; prints the directory with
#                        scx_sdt, bpftool, scx_sdt.bpf.c (the patched
#                        source), kernel (its uname -r) and done
#        scx.sh --dir [KVER]
#                        prints the directory for kernel KVER (default:
#                        the lab's newest 7.x) and builds nothing, fetches
#                        nothing (guests run it): exit 0 when it is
#                        complete, else 1 and why on stderr (the last
#                        build's failure: the guest test's skip reason)
# The directory is $BPFSTDERR_LAB_CACHE/scx-build/KEY (default cache
# /var/cache/bpfstderr-lab), KEY a hash of the patches and the kernel: a
# second run builds nothing. Exit 0: built; 2: the Debian archive cannot
# be reached; 1: other failures (the build's log: KEY.log beside it).
# Needs (make deps): clang-19, llvm-19, gcc, make, libelf-dev, zlib1g-dev,
# zstd (Debian's vmlinuz is zstd-compressed), binutils, patch.
set -u
cd "$(dirname "$0")/../.." || exit 1

CACHE=${BPFSTDERR_LAB_CACHE:-/var/cache/bpfstderr-lab}
OUT=$CACHE/scx-build
CLANG=${CLANG:-clang-19}
LLVM_STRIP=${LLVM_STRIP:-llvm-strip-19}
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-19}
WORK=""

fail() {	# CODE MESSAGE: say why, keep it for --dir, exit CODE
	mkdir -p "$OUT" 2>/dev/null && echo "$2" >"$OUT/last-error"
	echo "scx: $2" >&2
	exit "$1"
}
cleanup() { [ -n "$WORK" ] && rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

key_of() { { cat tests/scx/*.patch; echo "$1"; } | sha256sum | cut -c1-16; }

if [ "${1:-}" = --dir ]; then
	kver=${2:-$(basename "$(ls -d "$CACHE"/kernels/7.*/ 2>/dev/null | sort -V | tail -n 1)")}
	dir=$OUT/$(key_of "$kver")
	echo "$dir"
	[ -e "$dir/done" ] && exit 0
	if [ -r "$OUT/last-error" ]; then
		cat "$OUT/last-error" >&2
	elif ls "$OUT"/*/done >/dev/null 2>&1; then
		echo "built for $(cat "$OUT"/*/kernel | sort -u | tr '\n' ' ')only, not for $kver" >&2
	else
		echo "not built: tests/vm/scx.sh has not run on the host" >&2
	fi
	exit 1
fi

# the lab's 7.x kernel: fetch.sh's, or the one it cached before
kdir=$(BPFSTDERR_LAB_KERNELS=7 bash tests/vm/fetch.sh 2>/dev/null | awk 'NR == 1 { print $3 }')
[ -n "$kdir" ] || kdir=$(ls -d "$CACHE"/kernels/7.*/ 2>/dev/null | sort -V | tail -n 1)
kdir=${kdir%/}
[ -n "$kdir" ] && [ -r "$kdir/vmlinuz" ] ||
	fail 2 "no 7.x lab kernel (tests/vm/fetch.sh: the Debian archive cannot be reached?)"
kver=$(basename "$kdir")
dir=$OUT/$(key_of "$kver")
[ -e "$dir/done" ] && { echo "$dir"; exit 0; }

mkdir -p "$OUT" || fail 1 "cannot create $OUT"
exec 8>"$OUT/lock" && flock 8 || fail 1 "cannot lock $OUT/lock"
[ -e "$dir/done" ] && { echo "$dir"; exit 0; }
for t in "$CLANG" "$LLVM_STRIP" gcc make patch; do
	command -v "$t" >/dev/null || fail 1 "$t not installed (make deps)"
done

src=$(bash kernel-patches/fetch-source.sh 2>"$OUT/fetch-source.err")
rc=$?
[ "$rc" -eq 0 ] ||
	fail "$rc" "no kernel tree: kernel-patches/fetch-source.sh: $(tail -n 1 "$OUT/fetch-source.err")"

log=$dir.log
: >"$log"
WORK=$(mktemp -d "$OUT/work.XXXXXX") || fail 1 "mktemp in $OUT"
# a tree of hard links (the build only adds files; a copy on another file
# system); the files the patch changes get inodes of their own first
cp -al "$src" "$WORK/src" 2>/dev/null || { rm -rf "$WORK/src"; cp -a "$src" "$WORK/src"; } ||
	fail 1 "cannot copy $src into $WORK"
for f in $(sed -n 's|^+++ b/||p' tests/scx/*.patch | sort -u); do
	cp --remove-destination "$src/$f" "$WORK/src/$f" || fail 1 "cannot copy $f"
done
for p in tests/scx/*.patch; do
	patch -s -p1 -d "$WORK/src" <"$p" >>"$log" 2>&1 ||
		fail 1 "$p does not apply to $src (log: $log)"
done
"$WORK/src/scripts/extract-vmlinux" "$kdir/vmlinuz" >"$WORK/vmlinux" 2>>"$log" &&
	[ -s "$WORK/vmlinux" ] ||
	fail 1 "scripts/extract-vmlinux cannot unpack $kdir/vmlinuz (log: $log)"
mkdir -p "$WORK/out" || fail 1 "mkdir $WORK/out"
echo "scx: building scx_sdt and bpftool for $kver (log: $log)" >&2
# HOSTCC: the tree's bpftool and libbpf; CC: scx_sdt's userspace part
make -C "$WORK/src/tools/sched_ext" O="$WORK/out" -j"$(nproc)" \
	CLANG="$CLANG" LLVM_STRIP="$LLVM_STRIP" LLVM_CONFIG="$LLVM_CONFIG" \
	HOSTCC=gcc CC=gcc VMLINUX_BTF="$WORK/vmlinux" scx_sdt >>"$log" 2>&1 ||
	fail 1 "the build of tools/sched_ext's scx_sdt failed (log: $log)"
mkdir -p "$WORK/result" &&
	cp "$WORK/out/build/bin/scx_sdt" "$WORK/out/build/sbin/bpftool" \
		"$WORK/src/tools/sched_ext/scx_sdt.bpf.c" "$WORK/result/" &&
	echo "$kver" >"$WORK/result/kernel" &&
	basename "$(cat "$src/.done")" >"$WORK/result/source" &&
	rm -rf "$dir" && mv "$WORK/result" "$dir" && : >"$dir/done" ||
	fail 1 "cannot store the build in $dir"
rm -f "$OUT/last-error"
echo "$dir"
