#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make -C kernel-patches vmtest-rfc-drain: the rfc-drain series compiled,
# booted and tested, against Debian's stock 7.3.4 in the same lab (as
# ../vmtest.sh does for stream-drops).
#
#   1. a pristine 7.3.4 tree (../fetch-source.sh: Debian's linux-source-7.3);
#   2. the series applied to a hard-linked copy of it ($KP_CACHE/src-rfc-drain),
#      redone when the kernel patches (0001, 0002) change;
#   3. a kernel built from it (../build-kernel.sh into $KP_CACHE/build-rfc-drain;
#      again only when the kernel patches changed), timed;
#   4. the selftest's own source (patch 0003, extracted anew each run)
#      built with vmtest/runner.c against the tree's libbpf and a vmlinux.h
#      of the patched kernel's BTF;
#   5. both kernels booted in the lab (tests/vm/run.sh), vmtest/guest.sh in
#      each: the kfuncs in the kernel's BTF, the selftest, bpfstderr doctor,
#      and bpfstderr reading a held program's stderr with each backend.
#
#   6. the lab's guest tests that read real streams (RFC_GUEST_TESTS,
#      default "live stacks saturation top_live"; empty: none; early_drain
#      tests the rescue thread, which reads ahead with the read command only)
#      on the patched kernel once per backend (RFC_GUEST_BACKENDS, default
#      "rfc upstream"), every command forced by BPFSTDERR_BACKEND; each
#      test's own checks are its oracle, counted per backend.
#
# Passes when the patched kernel has the kfuncs, the selftest passes there
# and bpfstderr reads the same messages through either backend, and every
# guest test passes with each; and stock 7.3.4 has none of the kfuncs, so
# the selftest cannot load.
# Prints "N passed, N failed, N skipped"; the log goes to
# rfc-drain/vmtest.log (VMTEST_LOG overrides). Never run by make check.
# BPFSTDERR_BUILD: bpfstderr's build directory (default ../../build; built
# when missing). KP_CACHE: default /var/cache/bpfstderr-kp.
set -u
here=$(cd "$(dirname "$0")" && pwd)
kp=$(cd "$here/.." && pwd)
root=$(cd "$kp/.." && pwd)
CACHE=${KP_CACHE:-/var/cache/bpfstderr-kp}
BUILD=${BPFSTDERR_BUILD:-$root/build}
LOG=${VMTEST_LOG:-$here/vmtest.log}
TIMEOUT=${BPFSTDERR_LAB_TIMEOUT:-900}
HOLD_MSGS=${HOLD_MSGS:-200}
. "$kp/vmtest-lib.sh"
kp_start vmtest-rfc-drain "$LOG"

echo "== vmtest rfc-drain $(date -u +%FT%TZ) on $(uname -r), $(nproc) CPUs"
# --- 1. the pristine tree
kp_tree

# --- 2. the patched tree, redone when the kernel patches change
mapfile -t kpatches < <(find "$here" -maxdepth 1 -name '000[1-9]-bpf-*.patch' | sort)
selftest=$(find "$here" -maxdepth 1 -name '0*-selftests-bpf-*.patch')
[ ${#kpatches[@]} -gt 0 ] && [ -n "$selftest" ] || skip_all "no series in $here"
ptree=$CACHE/src-rfc-drain
out=$CACHE/build-rfc-drain
kp_patch_tree "the kernel patches" "$ptree" "$out" "${kpatches[@]}"

# --- 3. the kernel
kp_build_kernel "$ptree" "$out" "$CACHE/build-rfc-drain.log" 19
kp_build_summary "$CACHE/build-rfc-drain.log"
kpatched=$CACHE/kernels/7.3.4-rfc-drain
kp_install_kernel "$out" "$kpatched"
kp_stock_kernel

# --- 4. the selftest runner
echo "== building the selftest runner"
vt=$CACHE/vt-rfc-drain
rm -rf "$vt/sel"
mkdir -p "$vt/sel"
patch -s -p1 -d "$vt/sel" <"$selftest" || { fail "$(basename "$selftest") applies"; finish; }
vsel=$vt/sel/tools/testing/selftests/bpf
kp_libbpf "$ptree" "$vt"
kp_vmlinux_h "$vt" "$out/vmlinux" "$here/vmtest/kfuncs.h"
kp_runner "$ptree" "$vt" "$vsel" stream_consume "$here/vmtest/runner.c" \
	"struct bpf_stream_elem's mem_slice" 'struct bpf_mem_slice mem_slice;'

# --- 5. both kernels in the lab
cmd="bash kernel-patches/rfc-drain/vmtest/guest.sh $vt/runner $BUILD/bpfstderr $HOLD_MSGS"
guest stock "$kstock" "$cmd"
guest patched "$kpatched" "$cmd"

echo "== verdict"
check_eq "stock: boots $(res stock kernel)" "$(res stock kernel | cut -d+ -f1)" "7.3.4"
check_eq "stock: none of the kfuncs in its BTF (6 names; bpf_stream_free_elem is a static function there)" \
	"$(res stock btf_kfuncs)" 0
check_eq "stock: the selftest cannot load there" "$(res stock runner_exit)" 1
check_eq "stock: doctor's backend" "$(res stock doctor_backend)" upstream
check_eq "stock: --backend rfc is refused" "$(res stock rfc_forced_exit)" 4
check_eq "patched: boots the built kernel" "$(res patched kernel | cut -d' ' -f1 | cut -d- -f1)" "7.3.4"
check_eq "patched: the kfuncs in its BTF (6 names)" "$(res patched btf_kfuncs)" 6
check_eq "patched: the selftest passes" "$(res patched runner_exit)" 0
echo "#   stock runner: $(runner_summary stock); patched runner: $(runner_summary patched)"
check_eq "patched: doctor's backend" "$(res patched doctor_backend)" upstream
check_eq "patched: doctor sees the rfc kfuncs" "$(res patched doctor_rfc)" yes
for b in upstream rfc; do
	check_eq "patched: follow --backend $b reads the $HOLD_MSGS messages" \
		"$(res patched "follow_${b}_messages")" "$HOLD_MSGS"
done
check_eq "patched: both backends give the same events, one for one" \
	"$(res patched backends_differ)" 0
check_eq "patched: report --backend rfc leaves its own drain program out" "$(res patched rfc_drain_listed)" 0
check_eq "patched: --backend upstream runs no drain program" "$(res patched drain_prog_runs_upstream)" 0
runs=$(res patched drain_prog_runs_rfc)
[ "${runs:-0}" -gt 0 ] 2>/dev/null && pass "patched: --backend rfc drained with rfc_drain ($runs runs)" ||
	fail "patched: --backend rfc drained with rfc_drain" "runs '$runs'"

# --- 6. the lab's guest tests, per backend
kp_bpfstderr tests-build tests/holdprog "bpfstderr's test helpers build"
for t in ${RFC_GUEST_TESTS-live stacks saturation top_live}; do
	for b in ${RFC_GUEST_BACKENDS:-rfc upstream}; do
		t0=$(date +%s)
		# a guest that panicked in early boot, before the test printed
		# anything (qemu's TCG, as in tests/vm/lab.sh), is booted again
		for try in 1 2; do
			(cd "$root" && bash tests/vm/run.sh -t "$TIMEOUT" "$kpatched" \
				"BPFSTDERR_BACKEND=$b BPFSTDERR=$BUILD/bpfstderr HELPERS=$BUILD/tests bash tests/vm/guest/$t.sh") \
				>"$TMP/g-$t-$b.out" 2>&1
			rc=$?
			[ $rc -eq 125 ] && grep -q 'Kernel panic' "$TMP/g-$t-$b.out" &&
				! grep -qE '^(not )?ok - ' "$TMP/g-$t-$b.out" && [ $try = 1 ] || break
			echo "#   guest $t, $b: the guest kernel panicked before the test ran; booted again:"
			grep -m 2 -E 'RIP:|Kernel panic' "$TMP/g-$t-$b.out" | sed 's/^/#     /'
		done
		sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$TMP/g-$t-$b.out" | tail -n 1)
		grep -E '^(not ok|skip) ' "$TMP/g-$t-$b.out" | sed 's/^/#     /'
		echo "#   guest $t, BPFSTDERR_BACKEND=$b: ${sum:-no summary} (exit $rc, $(secs "$t0"))"
		f=$(awk '{ print $3 + 0 }' <<<"${sum:-0 passed, 1 failed}")
		[ -n "$sum" ] && [ "$f" -eq 0 ] && [ $rc -eq 0 ] && pass "patched: guest $t with --backend $b ($sum)" ||
			{ tail -n 15 "$TMP/g-$t-$b.out"; fail "patched: guest $t with --backend $b" "${sum:-exit $rc}"; }
	done
done
finish
