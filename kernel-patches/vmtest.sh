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
kp=$here
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
. "$kp/vmtest-lib.sh"
kp_start vmtest "$LOG"

echo "== vmtest $(date -u +%FT%TZ) on $(uname -r), $(nproc) CPUs"
# --- 1. the pristine tree
kp_tree

# --- 2. the patched tree, redone when the series changes
mapfile -t patches < <(find "$here/stream-drops" -maxdepth 1 -name '0*.patch' ! -name '0000-*' | sort)
ptree=$CACHE/src-patched
kp_patch_tree "the series" "$ptree" "$CACHE/build" "${patches[@]}"

# --- 3. the kernel
if [ $STOCK_ONLY = 1 ]; then
	echo "== --stock-only: no patched kernel"
else
	kp_build_kernel "$ptree" "$CACHE/build" "$CACHE/build.log" 10
fi
kp_build_summary "$CACHE/build.log"
kpatched=$CACHE/kernels/7.3.4-stream-drops
[ $STOCK_ONLY = 0 ] && kp_install_kernel "$CACHE/build" "$kpatched"
kp_stock_kernel

# --- 4. the selftest runner, from the patched tree
echo "== building the selftest runner"
vt=$CACHE/vt
sel=$ptree/tools/testing/selftests/bpf
kp_libbpf "$ptree" "$vt"
# The patched kernel's types (--stock-only: this host's, with the two
# fields patch 2 adds), then the kfuncs the selftest calls.
if [ $STOCK_ONLY = 1 ]; then
	bpftool btf dump file /sys/kernel/btf/vmlinux format c |
		awk '/^struct bpf_stream \{/ { s = 1 }
		     s && /^\};/ { print "\tatomic64_t dropped_msgs;\n\tatomic64_t dropped_bytes;"; s = 0 }
		     { print }' >"$vt/gen/vmlinux.h"
	kp_vmlinux_kfuncs "$vt" "$here/vmtest/kfuncs.h"
else
	kp_vmlinux_h "$vt" "$CACHE/build/vmlinux" "$here/vmtest/kfuncs.h"
fi
kp_runner "$ptree" "$vt" "$sel" stream_drop "$here/vmtest/runner.c" \
	"struct bpf_stream's dropped_msgs" 'atomic64_t dropped_msgs;'

# --- 5. both kernels in the lab
cmd="bash kernel-patches/vmtest/guest.sh $vt/runner $BUILD/bpfstderr"
guest stock "$kstock" "$cmd"
[ $STOCK_ONLY = 0 ] && guest patched "$kpatched" "$cmd"

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
