#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The package the way a user has it: in a clean Debian 12 root made with
# debootstrap from Debian's archive, `apt-get install ./bpfstderr_*.deb`,
# then bpfstderr --version, doctor, man, bash completion, the unit
# (installed, not enabled), and `apt-get purge` leaves nothing behind.
#
# Usage: tests/deb/debtest.sh [DIR]   (DIR holds the .deb: make deb's build-deb)
# As root. The debootstrap'd base root is kept as a tarball in DEBTEST_CACHE
# (default /var/cache/bpfstderr-debtest; rebuilt when older than
# DEBTEST_MAX_AGE days, default 30), so only the first run is slow.
# Prints "ok - ..." / "not ok - ..." / "skip - ..." per check and ends with
# "N passed, N failed, N skipped". Then piuparts, when installed.
set -u

DIR=${1:-build-deb}
CACHE=${DEBTEST_CACHE:-/var/cache/bpfstderr-debtest}
MAX_AGE=${DEBTEST_MAX_AGE:-30}
MIRROR=${DEBTEST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# What a user's host has besides the base: man-db to read the page,
# bash-completion to complete, systemd for the unit.
INCLUDE=man-db,bash-completion,systemd
BASE=$CACHE/$SUITE-base.tar

[ "$(id -u)" -eq 0 ] || { echo "skip - debtest: needs root (chroot, mounts)"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }

# All mounts are made in a mount namespace of our own: were the cleanup
# below ever skipped (SIGKILL), they would go with the namespace, never
# stay on the host.
if [ -z "${DEBTEST_IN_NS:-}" ]; then
	exec unshare --mount --propagation private env DEBTEST_IN_NS=1 "$0" "$@"
fi

PASSED=0
FAILED=0
SKIPPED=0
pass() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "not ok - $1${2:+: $2}"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip - $1: $2"; }
check_eq() {	# check_eq DESC GOT WANT
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}
finish() {
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
	exit
}

ROOT=""
WORK=""
MOUNTS=()	# in the order mounted; unmounted in reverse

# umount_all: every mount under ROOT, the deepest first (ours, and any a
# failed debootstrap left); true when none is left.
umount_all() {
	local i m
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}"
	done
	MOUNTS=()
	[ -n "$ROOT" ] || return 0
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done < <(findmnt -rn -o TARGET | awk -v r="$ROOT/" 'index($0, r) == 1' | sort -r)
	! findmnt -rn -o TARGET | awk -v r="$ROOT/" 'index($0, r) == 1 { f = 1 } END { exit !f }'
}

cleanup() {
	if ! umount_all; then
		echo "# mounts left under $ROOT: not removing it" >&2
		return
	fi
	if [ -n "${DEBTEST_KEEP:-}" ] && [ -n "$WORK" ]; then
		echo "# kept $WORK"
	elif [ -n "$WORK" ]; then
		# --one-file-system: never into anything still mounted
		rm -rf --one-file-system "$WORK"
	fi
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bind() {	# bind SRC: SRC at the same path in ROOT
	mkdir -p "$ROOT$1" &&
		mount --bind "$1" "$ROOT$1" &&
		MOUNTS+=("$ROOT$1")
}

in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
	LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }

# snapshot FILE: every path of the root (its own file system only) with
# its type, mode and owner; apt's and dpkg's own logs and caches left out
# (they grow with every apt-get: policy lets them).
snapshot() {
	(cd "$ROOT" && find . -xdev -printf '%y %m %u:%g %p\n') |
		grep -Ev ' \./(var/log/(apt/|dpkg\.log|alternatives\.log)|var/cache/apt/|var/lib/apt/(lists/|extended_states)|var/lib/dpkg/[a-z-]+-old$|var/cache/debconf/[a-z.]+-old$|var/cache/man/)' |
		sort -k4 > "$1"
}

DEB=$(ls "$DIR"/bpfstderr_*.deb 2>/dev/null | grep -v dbgsym | tail -n 1)
[ -n "$DEB" ] || { fail "a package in $DIR" "none: run make deb first"; finish; }
DEB=$(realpath "$DEB")

# ---- the clean root -------------------------------------------------------
mkdir -p "$CACHE"
WORK=$(mktemp -d "$CACHE/run.XXXXXX")
ROOT=$WORK/root
if [ -f "$BASE" ] && [ -z "$(find "$BASE" -mtime +"$MAX_AGE")" ]; then
	pass "base root of $SUITE cached ($BASE)"
else
	echo "# debootstrap $SUITE from $MIRROR into the cache (once; a few minutes)"
	if debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOT" "$MIRROR" \
		> "$WORK/debootstrap.log" 2>&1 && umount_all &&
		tar -C "$ROOT" --numeric-owner -cf "$BASE.tmp" . && mv "$BASE.tmp" "$BASE"; then
		pass "base root of $SUITE made with debootstrap ($BASE)"
	else
		tail -n 20 "$WORK/debootstrap.log" | sed 's/^/# /'
		rm -f "$BASE.tmp"
		fail "debootstrap $SUITE" "see above"
		finish
	fi
	umount_all && rm -rf --one-file-system "$ROOT"
fi
mkdir "$ROOT" && tar -C "$ROOT" --numeric-owner -xf "$BASE" ||
	{ fail "unpack $BASE"; finish; }

# The host's name resolution, for apt in the root.
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
if ! in_root apt-get update -qq > "$WORK/update.log" 2>&1; then
	sed 's/^/# /' "$WORK/update.log"
	fail "apt-get update in the root" "see above"
	finish
fi
snapshot "$WORK/before"
in_root dpkg-query -W -f='${Package}\n' | sort > "$WORK/pkgs.before"

# ---- install ---------------------------------------------------------------
cp "$DEB" "$ROOT/tmp/"
DEBNAME=$(basename "$DEB")
if in_root apt-get install -y -q "./tmp/$DEBNAME" > "$WORK/install.log" 2>&1 \
	</dev/null; then
	pass "apt-get install ./$DEBNAME (dependencies from Debian's archive)"
else
	tail -n 20 "$WORK/install.log" | sed 's/^/# /'
	fail "apt-get install ./$DEBNAME" "see above"
	finish
fi
rm -f "$ROOT/tmp/$DEBNAME"
st=$(in_root dpkg-query -W -f='${Status} ${Version}' bpfstderr)
want=$(dpkg-deb -f "$DEB" Version)
check_eq "dpkg: bpfstderr installed" "$st" "install ok installed $want"

# ---- use it ----------------------------------------------------------------
got=$(in_root bpfstderr --version 2>&1)
check_eq "bpfstderr --version" "$got" "bpfstderr ${want%-*}"

# doctor reads the host's kernel: /proc, /sys and the bpffs, as on a host.
for m in /proc /sys /sys/fs/bpf /dev; do
	if [ "$m" = /sys/fs/bpf ] && ! mountpoint -q /sys/fs/bpf; then continue; fi
	bind "$m" || { fail "bind-mount $m into the root"; finish; }
done
out=$(in_root timeout 120 bpfstderr doctor 2>&1); rc=$?
umount_all || { fail "unmount the root's /proc, /sys, /dev"; finish; }
printf '%s\n' "$out" | sed 's/^/# doctor: /'
case $rc in
[0-6])	# man/bpfstderr.8, EXIT STATUS
	if grep -q '^verdict ' <<<"$out"; then
		pass "bpfstderr doctor runs as root in the root (exit $rc, documented)"
	else
		fail "bpfstderr doctor" "exit $rc but no verdict line"
	fi ;;
*)	fail "bpfstderr doctor" "exit $rc: not an exit status bpfstderr(8) documents" ;;
esac

out=$(in_root sh -c 'MANPAGER=cat MANWIDTH=80 man bpfstderr' 2>&1)
if grep -q '^NAME' <<<"$out" && grep -q 'bpfstderr' <<<"$out" &&
	grep -q '^EXIT STATUS' <<<"$out"; then
	pass "man bpfstderr ($(wc -l <<<"$out") lines)"
else
	fail "man bpfstderr" "$(head -n 3 <<<"$out")"
fi

# As in a user's interactive bash: bash-completion loads ours on first use.
got=$(in_root bash -c '. /usr/share/bash-completion/bash_completion
	_completion_loader bpfstderr
	complete -p bpfstderr
	COMP_WORDS=(bpfstderr do); COMP_CWORD=1; _bpfstderr; echo "${COMPREPLY[*]}"
	COMP_WORDS=(bpfstderr top --so); COMP_CWORD=2; _bpfstderr; echo "${COMPREPLY[*]}"' 2>&1)
check_eq "bash completion: loaded on demand, completes commands and options" "$got" \
	"complete -F _bpfstderr bpfstderr
doctor
--sort"

unit=/lib/systemd/system/bpfstderr-record.service
if [ -f "$ROOT$unit" ] && grep -q '^ExecStart=/usr/sbin/bpfstderr record ' "$ROOT$unit"; then
	pass "unit installed: $unit, ExecStart=/usr/sbin/bpfstderr"
else
	fail "unit installed" "$unit missing or its ExecStart is not /usr/sbin/bpfstderr"
fi
got=$(in_root systemctl is-enabled bpfstderr-record.service 2>&1)
check_eq "unit not enabled (systemctl is-enabled)" "$got" "disabled"
links=$(find "$ROOT/etc/systemd" -name 'bpfstderr*' 2>/dev/null)
check_eq "unit not enabled: no link in /etc/systemd" "$links" ""

got=$(stat -c '%F %a %U:%G' "$ROOT/var/lib/bpfstderr" 2>&1)
check_eq "journal directory /var/lib/bpfstderr" "$got" "directory 700 root:root"
for f in prometheus/bpfstderr-rules.yml grafana/bpfstderr-dashboard.json; do
	if [ -s "$ROOT/usr/share/bpfstderr/$f" ]; then
		pass "/usr/share/bpfstderr/$f"
	else
		fail "/usr/share/bpfstderr/$f" "missing or empty"
	fi
done

# ---- purge -----------------------------------------------------------------
# State as the recorder and a root user leave it: a journal and a cache.
: > "$ROOT/var/lib/bpfstderr/journal.db"
mkdir -p "$ROOT/var/cache/bpfstderr" && : > "$ROOT/var/cache/bpfstderr/0.ksym"
in_root dpkg -L bpfstderr > "$WORK/owned"
# remove keeps state (the journal), purge removes it.
if in_root apt-get remove -y -q bpfstderr > "$WORK/remove.log" 2>&1 </dev/null &&
	[ ! -e "$ROOT/usr/sbin/bpfstderr" ] && [ -f "$ROOT/var/lib/bpfstderr/journal.db" ]; then
	pass "apt-get remove bpfstderr: the binary gone, the journal kept"
else
	tail -n 20 "$WORK/remove.log" | sed 's/^/# /'
	fail "apt-get remove bpfstderr" "binary still there or journal gone"
fi
if in_root apt-get purge -y -q bpfstderr > "$WORK/purge.log" 2>&1 </dev/null; then
	pass "apt-get purge bpfstderr"
else
	tail -n 20 "$WORK/purge.log" | sed 's/^/# /'
	fail "apt-get purge bpfstderr" "see above"
	finish
fi
st=$(in_root dpkg-query -W -f='${db:Status-Abbrev}' bpfstderr 2>&1)
check_eq "dpkg: bpfstderr not installed, nothing left (not even config-files)" \
	"$st" "dpkg-query: no packages found matching bpfstderr"
# What the package had, what it made, what was made for it: all gone
# (directories shared with other packages, like /usr/share/man, stay).
left=$(while read -r f; do
		[ -d "$ROOT$f" ] && continue	# a directory (or /lib, a link to one)
		[ -e "$ROOT$f" ] || [ -L "$ROOT$f" ] && echo "$f"
	done < "$WORK/owned"
	for f in /var/lib/bpfstderr /var/cache/bpfstderr /usr/share/bpfstderr \
		/usr/share/doc/bpfstderr; do
		[ -e "$ROOT$f" ] && echo "$f"
	done
	(cd "$ROOT" && find ./etc ./var/lib/systemd ./var/lib/dpkg/info \
		-name '*bpfstderr*' 2>/dev/null | cut -c2-))
check_eq "purge: none of the package's files, its journal, cache, unit state" "$left" ""

# Then its dependencies: apt-get autoremove, and what autoremove keeps
# because a package of the base recommends or suggests it (apt recommends
# ca-certificates): the root must be as it was before the install.
in_root dpkg-query -W -f='${Package}\n' | sort > "$WORK/pkgs.after"
if in_root apt-get autoremove --purge -y -q > "$WORK/autoremove.log" 2>&1 </dev/null; then
	in_root dpkg-query -W -f='${Package}\n' | sort > "$WORK/pkgs.now"
	kept=$(comm -13 "$WORK/pkgs.before" "$WORK/pkgs.now")
	[ -z "$kept" ] || echo "# autoremove kept, recommended by the base:" $kept
	if [ -z "$kept" ] || in_root apt-get purge -y -q $kept > "$WORK/purge2.log" 2>&1 </dev/null; then
		pass "dependencies removed: $(comm -13 "$WORK/pkgs.before" "$WORK/pkgs.after" | grep -cv '^bpfstderr$') packages"
	else
		tail -n 20 "$WORK/purge2.log" | sed 's/^/# /'
		fail "apt-get purge" $kept
	fi
else
	tail -n 20 "$WORK/autoremove.log" | sed 's/^/# /'
	fail "apt-get autoremove --purge" "see above"
fi
snapshot "$WORK/after"
if diff "$WORK/before" "$WORK/after" > "$WORK/leftovers"; then
	pass "the root's files are those before the install ($(wc -l < "$WORK/before") paths)"
else
	head -n 40 "$WORK/leftovers" | sed 's/^/# /'
	[ "$(wc -l < "$WORK/leftovers")" -le 40 ] || echo "# ... $(wc -l < "$WORK/leftovers") lines"
	fail "the root's files are those before the install" "see the difference above"
fi

# piuparts: Debian's own install/purge test, in a root of its own (its
# base tarball is kept in the cache too).
PIU_BASE=$CACHE/piuparts-$SUITE.tgz
if ! command -v piuparts > /dev/null; then
	skip "piuparts" "not installed (make deps installs it)"
else
	if [ -f "$PIU_BASE" ] && [ -z "$(find "$PIU_BASE" -mtime +"$MAX_AGE")" ]; then
		base=(-b "$PIU_BASE")
	else
		rm -f "$PIU_BASE"
		base=(-s "$PIU_BASE")
	fi
	if timeout 900 piuparts -d "$SUITE" -m "$MIRROR" "${base[@]}" "$DEB" \
		> "$WORK/piuparts.log" 2>&1; then
		pass "piuparts: $(grep -o 'PASS: .*' "$WORK/piuparts.log" | tail -n 1)"
	else
		grep -E 'FAIL|ERROR' "$WORK/piuparts.log" | head -n 20 | sed 's/^/# /'
		fail "piuparts" "see above"
	fi
fi

finish
