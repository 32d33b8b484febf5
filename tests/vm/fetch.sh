#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetch Debian's own kernels for the kernel lab: the newest 6.17.x, 6.18.x
# and 7.x amd64 image the archive has, with a private apt configuration
# (its own sources list, lists and cache under the lab's cache directory;
# the system's /etc/apt is never read for sources nor written), and keep
# only what the lab boots: vmlinuz, System.map and config when present, and
# the netfs, 9pnet, 9pnet_virtio, 9p and overlay modules.
#
# Usage: fetch.sh            fetch (once) and print "LABEL VERSION DIR" per kernel
# BPFSTDERR_LAB_KERNELS: the lines to fetch (default "6.17 6.18 7"; a line
# the archive no longer has is said, and the others are fetched).
# BPFSTDERR_LAB_PROGRESS=1: say what is downloaded (size) and show apt's
# progress (on stderr; make run).
# A second run downloads nothing: each kernel's directory is complete once
# its "done" file exists, and the package lists are refreshed at most once
# a day (BPFSTDERR_LAB_REFRESH=1 forces it).
# Exit 0: kernels ready; 2: the archive cannot be reached (one line says so);
# 3: some line has no kernel (the others are printed); 1: other failures.
set -u

CACHE=${BPFSTDERR_LAB_CACHE:-/var/cache/bpfstderr-lab}
APT=$CACHE/apt
KERNELS=$CACHE/kernels
MIRROR=${BPFSTDERR_LAB_MIRROR:-http://deb.debian.org/debian}
# bookworm's debian-archive-keyring (2023.3+deb12u2) already holds the
# trixie keys that sign trixie, trixie-backports and (while trixie's
# automatic key is in use) sid, so verification stays on: signed-by names
# the keyring; BPFSTDERR_LAB_KEYRING overrides it.
KEYRING=${BPFSTDERR_LAB_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
MODULES="netfs 9pnet 9pnet_virtio 9p overlay"
PKGNAMES=""

die() { echo "bpfstderr-lab: $*" >&2; exit 1; }

apt_opts=(
	-o "Dir::Etc::sourcelist=$APT/sources.list"
	-o "Dir::Etc::sourceparts=-"
	-o "Dir::State=$APT/state"
	-o "Dir::State::Lists=$APT/lists"
	-o "Dir::State::status=$APT/state/status"
	-o "Dir::Cache=$APT/cache"
	-o "APT::Architecture=amd64"
	-o "APT::Architectures=amd64"
	-o "Debug::NoLocking=1"
	# The cache is root's: apt's _apt download user cannot write there.
	-o "APT::Sandbox::User=root"
	-o "Acquire::Languages=none"
	-o "APT::Get::List-Cleanup=0"
)

setup_apt() {
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/state" ||
		die "cannot create $APT"
	: >>"$APT/state/status"
	[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"
	cat >"$APT/sources.list" <<-EOF
	deb [arch=amd64 signed-by=$KEYRING] $MIRROR trixie-backports main
	deb [arch=amd64 signed-by=$KEYRING] $MIRROR trixie main
	deb [arch=amd64 signed-by=$KEYRING] $MIRROR sid main
	EOF
}

# The lists are refreshed when older than a day. A suite whose signature
# cannot be checked is left out (apt says so), never trusted blindly.
update_lists() {
	local stamp=$APT/updated out
	if [ -z "${BPFSTDERR_LAB_REFRESH:-}" ] && [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
		return 0
	fi
	[ -n "${BPFSTDERR_LAB_PROGRESS:-}" ] &&
		echo "bpfstderr-lab: reading the package lists of trixie-backports, trixie and sid (~45 MB, once a day)" >&2
	out=$(apt-get "${apt_opts[@]}" -q update 2>&1)
	if ! ls "$APT/lists/"*_Packages* >/dev/null 2>&1; then
		echo "bpfstderr-lab: cannot reach the Debian archive ($MIRROR):" \
			"$(grep -E '^(E|W):' <<<"$out" | head -n 1)" >&2
		exit 2
	fi
	grep -E '^(E|W):' <<<"$out" | sed 's/^/bpfstderr-lab: apt: /' >&2
	touch "$stamp"
}

# newest PATTERN: the newest package whose name matches the regex PATTERN
# and that the archive has a version of (pkgnames also lists names only
# referred to).
newest() {
	local p
	grep -E "^$1\$" <<<"$PKGNAMES" | sort -rV |
		while read -r p; do
			if apt-cache "${apt_opts[@]}" show --no-all-versions "$p" >/dev/null 2>&1; then
				echo "$p"
				break
			fi
		done
}

# unpack DEB DIR: only the files the lab needs (the images are ~170 MB).
unpack() {
	local want
	want=$(dpkg-deb --fsys-tarfile "$1" | tar -t |
		grep -E '/(vmlinuz[^/]*|System\.map-[^/]*|config-[^/]*|(netfs|9pnet|9pnet_virtio|9p|overlay)\.ko(\.xz)?)$')
	[ -n "$want" ] || return 0
	printf '%s\n' "$want" >"$2.list" || return 1
	dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" -T "$2.list"
	local rc=$?
	rm -f "$2.list"
	return "$rc"
}

# extract LABEL PKG...: unpack PKG... into a scratch directory and keep
# what the lab needs in $KERNELS/LABEL-VERSION.
extract() {
	local label=$1 ver=$2 dir tmp deb m f; shift 2
	dir=$KERNELS/$ver
	[ -e "$dir/done" ] && { echo "$label $ver $dir"; return 0; }
	tmp=$(mktemp -d "$CACHE/extract.XXXXXX") || die "mktemp in $CACHE"
	[ -n "${BPFSTDERR_LAB_PROGRESS:-}" ] && echo "bpfstderr-lab: downloading $* ($(
		apt-cache "${apt_opts[@]}" show --no-all-versions "$@" 2>/dev/null |
			awk '$1 == "Size:" { s += $2 } END { printf "%d MB", s / 1e6 }')), once;" \
		"the lab keeps only the kernel and 5 modules" >&2
	(
		set -e
		cd "$APT/cache/archives"
		for deb in "$@"; do
			if ! ls "${deb}_"*.deb >/dev/null 2>&1; then
				apt-get "${apt_opts[@]}" $([ -n "${BPFSTDERR_LAB_PROGRESS:-}" ] || echo -q) \
					download "$deb" >&2
			fi
		done
	) || { rm -rf "$tmp"; die "download of $* failed"; }
	for deb in "$@"; do
		echo "bpfstderr-lab: unpacking $deb" >&2
		unpack "$APT/cache/archives/${deb}_"*.deb "$tmp" ||
			{ rm -rf "$tmp"; die "cannot unpack $deb"; }
	done
	rm -rf "$dir" && mkdir -p "$dir/modules" || die "mkdir $dir"
	f=$(find "$tmp" -name "vmlinuz*" -type f | head -n 1)
	[ -n "$f" ] || { rm -rf "$tmp"; die "$*: no vmlinuz inside"; }
	cp "$f" "$dir/vmlinuz"
	f=$(find "$tmp" -name "System.map-*" | head -n 1); [ -n "$f" ] && cp "$f" "$dir/System.map"
	f=$(find "$tmp" -name "config-*" | head -n 1); [ -n "$f" ] && cp "$f" "$dir/config"
	for m in $MODULES; do
		f=$(find "$tmp" -name "$m.ko*" | head -n 1)
		[ -n "$f" ] || { rm -rf "$tmp"; die "$*: module $m not found"; }
		cp "$f" "$dir/modules/"
	done
	rm -rf "$tmp"
	touch "$dir/done"
	echo "$label $ver $dir"
}

# The .deb files are large (100-170 MB each) and no longer needed once
# extracted, except to skip a download: keep only the unpacked kernels.
prune_debs() {
	rm -f "$APT/cache/archives/"*.deb
}

# fetch_line LINE: the newest kernel of LINE (6.18: 6.18.x; 7: any 7.x),
# as linux-binary + linux-modules where Debian splits them (7.x), else as
# the one linux-image package (6.17, 6.18). Prints "LABEL VERSION DIR".
fetch_line() {
	local line=$1 re label pkg ver
	re="${line//./\\.}"
	case $line in
	*.*) label=$line; re="$re\\.[0-9]+" ;;
	*) label=$line.x; re="$re\\.[0-9]+\\.[0-9]+" ;;
	esac
	re="$re(\\+deb[0-9]+)?-amd64"
	pkg=$(newest "linux-binary-$re")
	if [ -n "$pkg" ]; then
		ver=${pkg#linux-binary-}
		extract "$label" "$ver" "$pkg" "linux-modules-$ver" && prune_line "$line" "$ver"
		return
	fi
	pkg=$(newest "linux-image-$re")
	if [ -z "$pkg" ]; then
		echo "bpfstderr-lab: no $label amd64 kernel in the archive" >&2
		return 3
	fi
	extract "$label" "${pkg#linux-image-}" "$pkg" && prune_line "$line" "${pkg#linux-image-}"
}

# prune_line LINE VERSION: older kernels of LINE go (other lines stay,
# for runs that ask for them).
prune_line() {
	local d
	for d in "$KERNELS/$1".*; do
		[ -d "$d" ] && [ "$d" != "$KERNELS/$2" ] && rm -rf "$d"
	done
	return 0
}

main() {
	local line rc=0 out
	mkdir -p "$CACHE" "$KERNELS" || die "cannot create $CACHE (BPFSTDERR_LAB_CACHE)"
	# One fetch at a time per cache: apt's own locks are off (Debug::NoLocking).
	exec 9>"$CACHE/lock" && flock 9 || die "cannot lock $CACHE/lock"
	setup_apt
	update_lists
	# Once: every apt-cache run parses all three suites' lists (seconds).
	PKGNAMES=$(apt-cache "${apt_opts[@]}" pkgnames 2>/dev/null)
	for line in ${BPFSTDERR_LAB_KERNELS:-6.17 6.18 7}; do
		out=$(fetch_line "$line") || rc=3
		[ -n "$out" ] || continue
		echo "$out"
	done
	prune_debs
	return "$rc"
}

main "$@"
