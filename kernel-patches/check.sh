#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KSRC [--series DIR] [--build] [--keep]
#
# Checks a kernel patch series of this directory (DIR: default stream-drops,
# also rfc-drain; a name here or a path) against a kernel source
# tree KSRC (a git clone or an unpacked tarball such as Debian's
# linux-source-7.3, ideally at the base named in the series' cover letter):
#
#   1. the series applies, patch by patch, in order (git am on a scratch
#      copy of the files it touches);
#   2. KSRC's own scripts/checkpatch.pl --strict, run from KSRC, reports no
#      error, warning or check for any patch. Findings only a tree with the
#      upstream history can clear are named as such and not counted:
#      UNKNOWN_COMMIT_ID (a Fixes: id cannot be looked up without history)
#      and FILE_PATH_CHANGES ("does MAINTAINERS need updating?" for new
#      selftest files; tools/testing/selftests/bpf/ is in the BPF entry);
#   3. only with --build (or CHECK_BUILD=1): a kernel is built with the
#      series applied (kernel-patches/build-kernel.sh: defconfig plus BPF,
#      BTF, 9p/virtio and overlay built in), and the time it took printed.
#      That takes 30-60 min on two cores: never part of `make check`.
#
# KSRC is never modified. Steps 1 and 2 only read it. Step 3 builds in a
# temporary tree: a hard-linked copy of KSRC (cp -al; patch(1) replaces the
# files it changes, so KSRC's own files are never written) with its object
# directory in BUILD_OUT (kept: bzImage and vmlinux) or a temporary one.
#
# Environment: TMPDIR (scratch trees), CHECK_BUILD=1 (same as --build),
# BUILD_OUT (object directory of step 3), JOBS (make -j, default 2),
# BUILD_KERNEL (the build script of step 3, default ./build-kernel.sh),
# CHECKPATCH_IGNORE (more checkpatch types to ignore, comma-separated).
#
# Exit codes: 0 all steps passed (a skipped build is reported, still 0),
# 1 the series does not apply, 2 usage or KSRC problem,
# 3 checkpatch reported problems, 4 the build failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
series="$here/stream-drops"
build=${CHECK_BUILD:-0}
keep=0
ksrc=
# checkpatch types that only a tree with the upstream history can clear.
HISTORY_ONLY="UNKNOWN_COMMIT_ID FILE_PATH_CHANGES"

usage() {
	echo "usage: $0 KSRC [--series DIR] [--build] [--keep]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--series) [ $# -ge 2 ] || usage; series=$2; shift 2 ;;
	--build) build=1; shift ;;
	--no-build) build=0; shift ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '3,36p' "$0"; exit 0 ;;
	-*) usage ;;
	*) [ -z "$ksrc" ] || usage; ksrc=$1; shift ;;
	esac
done
[ -n "$ksrc" ] || usage

die() { echo "check.sh: $*" >&2; exit 2; }

# A series named relative to here (rfc-drain) or to the caller's directory.
[ -d "$series" ] || [ ! -d "$here/$series" ] || series=$here/$series
[ -d "$series" ] || die "no series directory '$series'"
series=$(cd "$series" && pwd)

[ -d "$ksrc" ] || die "KSRC '$ksrc' is not a directory"
ksrc=$(cd "$ksrc" && pwd)
[ -f "$ksrc/kernel/bpf/stream.c" ] ||
	die "$ksrc/kernel/bpf/stream.c not found: not a kernel tree with BPF streams (6.17+)"
[ -f "$ksrc/scripts/checkpatch.pl" ] || die "$ksrc/scripts/checkpatch.pl not found"
command -v git >/dev/null || die "git is needed"
command -v perl >/dev/null || die "perl is needed (checkpatch.pl)"

mapfile -t patches < <(find "$series" -maxdepth 1 -name '0*.patch' ! -name '0000-*' | sort)
[ ${#patches[@]} -gt 0 ] || die "no patches in $series"

work=$(mktemp -d "${TMPDIR:-/tmp}/bpfstderr-check.XXXXXX") || die "mktemp failed"
cleanup() {
	if [ $keep -eq 0 ]; then
		rm -rf "$work"
	else
		echo "check.sh: kept $work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

echo "== KSRC: $ksrc"
[ -f "$ksrc/Makefile" ] && echo "   version: $(make -s -C "$ksrc" kernelversion 2>/dev/null)"
echo "   series: ${#patches[@]} patches in $series"

# --- 1. apply, in order, on a scratch copy of the touched files -----------
echo "== 1. apply"
files=$(sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "${patches[@]}" | sort -u)
scratch="$work/apply"
mkdir -p "$scratch"
for f in $files; do
	if [ -f "$ksrc/$f" ]; then
		mkdir -p "$scratch/$(dirname "$f")"
		cp "$ksrc/$f" "$scratch/$f"
	fi
done
gitc() { git -C "$scratch" -c user.name=check -c user.email=check@localhost "$@"; }
{ git init -q "$scratch" && gitc add -A && gitc commit -q --allow-empty -m base; } ||
	die "could not set up the scratch tree in $scratch"
for p in "${patches[@]}"; do
	if ! gitc am -q "$p" 2>"$work/am.err"; then
		echo "FAIL: $(basename "$p") does not apply to $ksrc:"
		sed 's/^/   /' "$work/am.err"
		exit 1
	fi
	echo "   ok: $(basename "$p")"
done

# --- 2. checkpatch --strict, KSRC's own, run from KSRC ---------------------
echo "== 2. checkpatch --strict"
cp_status=0
ignore=()
[ -n "${CHECKPATCH_IGNORE:-}" ] && ignore=(--ignore "$CHECKPATCH_IGNORE")
for p in "${patches[@]}"; do
	out=$(cd "$ksrc" && perl scripts/checkpatch.pl --strict --show-types "${ignore[@]}" "$p" 2>&1)
	total=$(printf '%s\n' "$out" | grep '^total:')
	if [ -z "$total" ]; then
		echo "FAIL: checkpatch.pl did not run on $(basename "$p"):"
		printf '%s\n' "$out" | tail -5 | sed 's/^/      /'
		cp_status=3
		continue
	fi
	echo "   $(basename "$p"): $total"
	# Every finding: "ERROR:TYPE: text", "WARNING:TYPE: text", "CHECK:TYPE: text".
	counted=0
	while IFS= read -r line; do
		type=$(printf '%s\n' "$line" | sed -E 's/^(ERROR|WARNING|CHECK):([A-Z0-9_]+):.*/\2/')
		case " $HISTORY_ONLY " in
		*" $type "*)
			echo "      history-only, not counted: $line" ;;
		*)
			echo "      counted: $line"
			counted=$((counted + 1)) ;;
		esac
	done < <(printf '%s\n' "$out" | grep -E '^(ERROR|WARNING|CHECK):')
	if [ $counted -gt 0 ]; then
		printf '%s\n' "$out" | grep -E '^(ERROR|WARNING|CHECK):' -A3 | sed 's/^/      /'
		cp_status=3
	fi
done

# --- 3. build a kernel with the series, only when asked ---------------------
build_status=0
echo "== 3. build"
if [ "$build" != 1 ]; then
	echo "   skipped (pass --build or CHECK_BUILD=1: 30-60 min on two cores)"
else
	tree="$work/tree"
	out=${BUILD_OUT:-$work/obj}
	echo "   hard-linked copy of $ksrc at $tree, objects in $out"
	cp -al "$ksrc" "$tree" 2>/dev/null || { rm -rf "$tree"; echo "   (not on one file system: a full copy)"; cp -a "$ksrc" "$tree"; } ||
		die "cannot copy $ksrc to $tree"
	for p in "${patches[@]}"; do
		patch -s -p1 -d "$tree" <"$p" ||
			{ echo "FAIL: $(basename "$p") does not apply in $tree"; exit 1; }
	done
	t0=$(date +%s)
	if "${BUILD_KERNEL:-$here/build-kernel.sh}" "$tree" "$out" >"$work/build.log" 2>&1; then
		echo "   ok: $out/arch/x86/boot/bzImage"
	else
		echo "FAIL: the kernel build failed; last lines of the log:"
		tail -30 "$work/build.log" | sed 's/^/   /'
		build_status=4
	fi
	grep -E '(^|: )(warning|error):' "$work/build.log" | head -20 | sed 's/^/      /'
	t=$(( $(date +%s) - t0 ))
	echo "   build took $((t / 60)) min $((t % 60)) s"
fi

if [ $build_status -ne 0 ]; then
	exit $build_status
fi
if [ $cp_status -ne 0 ]; then
	echo "== checkpatch reported problems"
	exit $cp_status
fi
echo "== all checks passed"
exit 0
