#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh KSRC [--series DIR] [--no-build] [--keep]
#
# Checks the kernel patch series in this directory against a kernel source
# tree KSRC (a git clone or an unpacked tarball, ideally at the base named in
# the series' cover letter):
#
#   1. the series applies, patch by patch, in order (git am on a scratch
#      copy of the files it touches);
#   2. KSRC's own scripts/checkpatch.pl --strict, run from KSRC, reports no
#      error, warning or check for any patch;
#   3. if KSRC is configured (has .config) and --no-build is not given,
#      kernel/bpf/stream.o builds with the series applied.
#
# KSRC is never modified in place. Steps 1 and 2 only read it. Step 3 builds
# in a temporary tree: a detached `git worktree` of KSRC's HEAD when KSRC is
# a git clone (this registers a worktree in KSRC/.git until the script
# removes it; uncommitted changes in KSRC are not part of it), otherwise a
# full copy of KSRC (needs as much free space as KSRC takes).
#
# Environment: TMPDIR (where scratch trees go), MAKEFLAGS (e.g. -j8),
# CHECKPATCH_IGNORE (comma-separated checkpatch types to ignore, e.g.
# UNKNOWN_COMMIT_ID when KSRC is a git clone without the upstream history).
#
# Exit codes: 0 all steps passed (a skipped build is reported, still 0),
# 1 the series does not apply, 2 usage or KSRC problem,
# 3 checkpatch reported problems, 4 the build failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
series="$here/stream-drops"
build=1
keep=0
ksrc=

usage() {
	echo "usage: $0 KSRC [--series DIR] [--no-build] [--keep]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--series) [ $# -ge 2 ] || usage; series=$2; shift 2 ;;
	--no-build) build=0; shift ;;
	--keep) keep=1; shift ;;
	-h|--help) sed -n '3,31p' "$0"; exit 0 ;;
	-*) usage ;;
	*) [ -z "$ksrc" ] || usage; ksrc=$1; shift ;;
	esac
done
[ -n "$ksrc" ] || usage

die() { echo "check.sh: $*" >&2; exit 2; }

[ -d "$ksrc" ] || die "KSRC '$ksrc' is not a directory"
ksrc=$(cd "$ksrc" && pwd)
[ -f "$ksrc/kernel/bpf/stream.c" ] ||
	die "$ksrc/kernel/bpf/stream.c not found: not a kernel tree with BPF streams (6.17+)"
[ -x "$ksrc/scripts/checkpatch.pl" ] || [ -f "$ksrc/scripts/checkpatch.pl" ] ||
	die "$ksrc/scripts/checkpatch.pl not found"
command -v git >/dev/null || die "git is needed"
command -v perl >/dev/null || die "perl is needed (checkpatch.pl)"

mapfile -t patches < <(find "$series" -maxdepth 1 -name '0*.patch' ! -name '0000-*' | sort)
[ ${#patches[@]} -gt 0 ] || die "no patches in $series"

work=$(mktemp -d "${TMPDIR:-/tmp}/bpfstderr-check.XXXXXX") || die "mktemp failed"
wt=
is_git() { [ "$(git -C "$ksrc" rev-parse --show-toplevel 2>/dev/null)" = "$ksrc" ]; }
cleanup() {
	if [ -n "$wt" ] && is_git && [ $keep -eq 0 ]; then
		git -C "$ksrc" worktree remove --force "$wt" >/dev/null 2>&1
	fi
	if [ $keep -eq 0 ]; then
		rm -rf "$work"
	else
		echo "check.sh: kept $work"
	fi
}
trap cleanup EXIT

echo "== KSRC: $ksrc"
if is_git; then
	echo "   git: $(git -C "$ksrc" describe --tags --always 2>/dev/null)"
fi
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
(
	cd "$scratch" &&
	git init -q . &&
	git -c user.name=check -c user.email=check@localhost add -A &&
	git -c user.name=check -c user.email=check@localhost \
		commit -q --allow-empty -m base
) || die "could not set up the scratch tree in $scratch"
for p in "${patches[@]}"; do
	if ! git -C "$scratch" -c user.name=check -c user.email=check@localhost \
		am -q "$p" 2>"$work/am.err"; then
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
	out=$(cd "$ksrc" && perl scripts/checkpatch.pl --strict "${ignore[@]}" "$p" 2>&1)
	total=$(printf '%s\n' "$out" | grep '^total:')
	if [ -z "$total" ]; then
		echo "FAIL: checkpatch.pl did not run on $(basename "$p"):"
		printf '%s\n' "$out" | tail -5 | sed 's/^/      /'
		cp_status=3
		continue
	fi
	echo "   $(basename "$p"): $total"
	if ! printf '%s\n' "$total" | grep -q '^total: 0 errors, 0 warnings, 0 checks'; then
		printf '%s\n' "$out" | grep -E '^(ERROR|WARNING|CHECK):' -A3 | sed 's/^/      /'
		cp_status=3
	fi
done

# --- 3. build kernel/bpf/stream.o, if KSRC is configured --------------------
build_status=0
echo "== 3. build kernel/bpf/stream.o"
if [ $build -eq 0 ]; then
	echo "   skipped (--no-build)"
elif [ ! -f "$ksrc/.config" ]; then
	echo "   skipped: $ksrc has no .config (configure it, e.g. make defconfig with CONFIG_BPF_SYSCALL=y)"
else
	wt="$work/tree"
	if is_git; then
		echo "   temporary git worktree of $ksrc HEAD at $wt (removed afterwards)"
		git -C "$ksrc" worktree add -q --detach "$wt" HEAD ||
			die "git worktree add failed"
	else
		echo "   copying $ksrc to $wt (not a git clone)"
		cp -a "$ksrc" "$wt" || die "copy failed"
	fi
	cp "$ksrc/.config" "$wt/.config"
	for p in "${patches[@]}"; do
		git -C "$wt" apply "$p" || { echo "FAIL: $(basename "$p") does not apply in $wt"; exit 1; }
	done
	if make -C "$wt" -s olddefconfig >"$work/build.log" 2>&1 &&
	   make -C "$wt" kernel/bpf/stream.o >>"$work/build.log" 2>&1; then
		echo "   ok: kernel/bpf/stream.o built"
		grep -E 'warning:|error:' "$work/build.log" | sed 's/^/      /'
	else
		echo "FAIL: build of kernel/bpf/stream.o failed; last lines of the log:"
		tail -30 "$work/build.log" | sed 's/^/   /'
		build_status=4
	fi
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
