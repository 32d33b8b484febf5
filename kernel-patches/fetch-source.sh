#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Get a pristine kernel tree for check.sh and vmtest.sh: Debian's
# linux-source-7.3 (7.3.4 in trixie-backports), with a private apt
# configuration like tests/vm/fetch.sh's (its own sources list, lists and
# cache under $KP_CACHE/apt; the system's /etc/apt is neither read for
# sources nor written), unpacked into $KP_CACHE/linux-source-7.3.
#
# Usage: fetch-source.sh     prints the tree's directory; a second run
#                            downloads nothing (the tree's .done file)
# KP_CACHE (default /var/cache/bpfstderr-kp), KP_SOURCE_PKG (default
# linux-source-7.3), BPFSTDERR_LAB_MIRROR, BPFSTDERR_LAB_KEYRING as in
# tests/vm/fetch.sh. Exit 0: tree ready; 2: the archive cannot be reached;
# 1: other failures.
set -u

CACHE=${KP_CACHE:-/var/cache/bpfstderr-kp}
PKG=${KP_SOURCE_PKG:-linux-source-7.3}
APT=$CACHE/apt
MIRROR=${BPFSTDERR_LAB_MIRROR:-http://deb.debian.org/debian}
KEYRING=${BPFSTDERR_LAB_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
TREE=$CACHE/${PKG}
TMP=""

die() { echo "fetch-source: $*" >&2; exit 1; }
cleanup() { [ -n "$TMP" ] && rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

[ -e "$TREE/.done" ] && { echo "$TREE"; exit 0; }
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/state" ||
	die "cannot create $APT"
exec 9>"$CACHE/lock" && flock 9 || die "cannot lock $CACHE/lock"
[ -e "$TREE/.done" ] && { echo "$TREE"; exit 0; }
: >>"$APT/state/status"
[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"
cat >"$APT/sources.list" <<-EOS
deb [arch=amd64 signed-by=$KEYRING] $MIRROR trixie-backports main
deb [arch=amd64 signed-by=$KEYRING] $MIRROR trixie main
EOS
opts=(
	-o "Dir::Etc::sourcelist=$APT/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State=$APT/state" -o "Dir::State::Lists=$APT/lists"
	-o "Dir::State::status=$APT/state/status" -o "Dir::Cache=$APT/cache"
	-o "APT::Architecture=amd64" -o "APT::Architectures=amd64"
	-o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
	-o "Acquire::Languages=none" -o "APT::Get::List-Cleanup=0"
)
out=$(apt-get "${opts[@]}" -q update 2>&1)
# lists an earlier run left do not make the archive reachable now
if ! ls "$APT/lists/"*_Packages* >/dev/null 2>&1 || grep -qE '^(E:|W: Failed to fetch)' <<<"$out"; then
	echo "fetch-source: cannot reach the Debian archive ($MIRROR):" \
		"$(grep -E '^(E|W):' <<<"$out" | head -n 1)" >&2
	exit 2
fi
TMP=$(mktemp -d "$CACHE/fetch.XXXXXX") || die "mktemp in $CACHE"
(cd "$TMP" && apt-get "${opts[@]}" -q download "$PKG") >&2 || die "download of $PKG failed"
echo "fetch-source: $(basename "$TMP"/*.deb)" >&2
dpkg-deb -x "$TMP"/*.deb "$TMP/pkg" || die "cannot unpack the .deb"
tarball=$(find "$TMP/pkg" -name 'linux-source-*.tar.xz' | head -n 1)
[ -n "$tarball" ] || die "no linux-source-*.tar.xz in the package"
rm -rf "$TREE" "$TMP/src" && mkdir -p "$TMP/src" || die "mkdir"
tar -xJf "$tarball" -C "$TMP/src" || die "cannot unpack $tarball"
mv "$TMP/src/$(ls "$TMP/src" | head -n 1)" "$TREE" || die "mv to $TREE"
basename "$TMP"/*.deb >"$TREE/.done"
echo "$TREE"
