#!/usr/bin/env bash
# Kernel-frame symbolization against the addr2line family, same run: the
# same random symbol+off frames from a large real vmlinux with DWARF (from
# Debian's linux-image-*-dbg, fetched here with apt-get download into a
# cache; never in CI), resolved by bpfstderr (cold, then warm from its
# build-id cache, kept in a directory of the run), llvm-addr2line-19 -i,
# eu-addr2line -i and addr2line -i. Prints first-frame latency, total time
# and peak memory of each, and llvm-addr2line's time over each one's from
# the same run, REPEATS times (default 3) as ranges. No vmlinux of the
# running kernel is needed: bpfstderr is given --vmlinux, and its stderr
# is never mixed with what is read.
# usage: [REPEATS=N] bench/symbolize.sh [FRAMES] [PACKAGE]
set -eu
cd "$(dirname "$0")/.."
frames=${1:-2000}
pkg=${2:-$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-dbg$' |
	awk '{ print $1 }' | sort -V | tail -n 1)}
cache=${BENCH_CACHE:-/tmp/bpfstderr-bench}/dbg
make -s build/bpfstderr
mkdir -p "$cache"
vmlinux=$(ls "$cache"/usr/lib/debug/boot/vmlinux-* 2>/dev/null | head -n 1 || true)
if [ -z "$vmlinux" ]; then
	(cd "$cache" && ls "$pkg"_*.deb > /dev/null 2>&1 || apt-get download "$pkg")
	dpkg-deb --fsys-tarfile "$cache/$pkg"_*.deb | tar -x -C "$cache" --wildcards './usr/lib/debug/boot/vmlinux-*'
	vmlinux=$(ls "$cache"/usr/lib/debug/boot/vmlinux-* | head -n 1)
fi
python3 bench/symbolize_run.py "$vmlinux" "$frames"
