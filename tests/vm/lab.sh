#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel lab (make vmtest): every guest test tests/vm/guest/*.sh, once
# per Debian kernel that fetch.sh chose, each in a fresh qemu guest against
# the tree already built in BUILD (default build). Prints
# "LABEL N passed, N failed" per test and kernel and closes with
# "N passed, N failed, N skipped", like tests/run.sh. When qemu cannot run
# or the archive cannot be reached, one "skip - ..." line says why and
# counts a skip: never a silent pass.
#
# Usage: lab.sh [BUILD] [TEST...]   (TEST: a name in tests/vm/guest/, or
# make_run: tests/vm/make_run.sh, make run's lab path in tmux, run once
# after the guest tests when no TEST is named)
# BPFSTDERR_LAB_TIMEOUT bounds one guest (default 900 s);
# BPFSTDERR_LAB_KERNELS picks the kernel lines (default "6.17 6.18 7", see fetch.sh);
# on 6.17 only BPFSTDERR_LAB_617_TESTS run unless tests are named (default
# "smoke kfunc live saturation stacks"; empty: every test).
set -u
cd "$(dirname "$0")/../.." || exit 1

BUILD=${1:-build}
[ $# -gt 0 ] && shift
TIMEOUT=${BPFSTDERR_LAB_TIMEOUT:-900}
total_pass=0
total_fail=0
total_skip=0
skips=""

lab_skip() {
	echo "skip - lab: $*"
	skips+="    lab: $*"$'\n'
	total_skip=$((total_skip + 1))
}

finish() {
	if [ -n "$skips" ]; then
		echo "== skipped, with the reasons"
		printf '%s' "$skips"
	fi
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
	[ "$total_fail" -eq 0 ]
	exit
}

# told: a test's failed checks, each with the "# " lines after it (its
# diagnosis), and the "# " lines before its first check (what it runs
# on), indented; never a "# " line after a passed one, which a reader, or
# tests/run.sh's recap, would take for a failure's
told() {
	awk '/^(not ok|FAIL)/ { k = 1; print "    " $0; next }
		/^(ok|skip) - / { k = 0; s = 1; next }
		/^# / && (k || !s) { print "    " $0 }'
}

# run_guest LABEL KDIR TEST: one guest test in one fresh guest; its
# checks count as they say (ok / not ok / skip), a guest that hung or
# died counts one failure.
# A guest kernel that panicked before the test printed anything (qemu's
# TCG with two vCPUs, seen once in 10 to 40 boots, in early boot:
# sched_clock_cpu's int3, see tests/vm/run.sh) is booted again, up to
# twice, and the log says so: the test never ran. One that panicked
# during the test (seen once in eight runs of scx: 7.3.4's update_rq_clock
# from a kthread worker, with the tree's scx_sdt scheduling the guest) is
# booted once more too, the panic's lines kept in the log: the kernel's
# fault, but a second one fails the test.
run_guest() {
	local label=$1 kdir=$2 test=$3 out rc last p f k=0 t0 secs f_skip try during=""
	t0=$(date +%s)
	for try in 1 2 3; do
		out=$(bash tests/vm/run.sh -t "$TIMEOUT" "$kdir" \
			"BPFSTDERR=$BUILD/bpfstderr HELPERS=$BUILD/tests bash $test" 2>&1)
		rc=$?
		[ "$rc" -eq 125 ] && grep -q 'Kernel panic' <<<"$out" && [ $try -lt 3 ] || break
		if grep -qE '^(not )?ok - ' <<<"$out"; then
			[ -z "$during" ] || break
			during=1
			echo "    # $label: the guest kernel panicked during the test; run again:"
		else
			echo "    # $label: the guest kernel panicked before the test ran; booted again:"
		fi
		grep -m 3 -E 'RIP:|Kernel panic' <<<"$out" | sed 's/^/    #   /'
	done
	secs=$(($(date +%s) - t0))
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' <<<"$out" | tail -n 1)
	if [ -z "$last" ]; then
		p=0; f=1
		if [ "$rc" -eq 124 ]; then
			echo "not ok - $label: guest hung, killed after ${TIMEOUT}s"
		else
			echo "not ok - $label: no summary (guest exit $rc)"
		fi
		printf '%s\n' "$out" | tail -n 25 | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b.//g; s/\r//g; s/^/    # /'
	else
		p=${last%% *}; f=$(awk '{print $3 + 0}' <<<"$last"); k=$(awk '{print $5 + 0}' <<<"$last")
		if [ "$k" -gt 0 ]; then
			skips+=$(grep -E '^skip - ' <<<"$out" | sed "s|^skip - |    $label: |")$'\n'
		fi
		told <<<"$out"
		[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && { f=1; echo "not ok - $label: exit $rc"; }
	fi
	[ "$k" -gt 0 ] && f_skip=", $k skipped" || f_skip=""
	printf '%-44s %4d passed, %d failed%s (%ds)\n' "$label" "$p" "$f" "$f_skip" "$secs"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + k))
}

QEMU=${QEMU:-qemu-system-x86_64}
export QEMU
if ! command -v "$QEMU" >/dev/null; then
	lab_skip "$QEMU not installed (make deps): no kernel booted"
	finish
fi
if ! "$QEMU" --version >/dev/null 2>&1; then
	lab_skip "$QEMU does not run ($("$QEMU" --version 2>&1 | head -n 1)): no kernel booted"
	finish
fi
if [ ! -x "$BUILD/bpfstderr" ]; then
	lab_skip "$BUILD/bpfstderr not built (make tests-build)"
	finish
fi

t0=$(date +%s)
errs=$(mktemp "${TMPDIR:-/tmp}/bpfstderr-lab-fetch.XXXXXX") || exit 1
trap 'rm -f "$errs"' EXIT
kernels=$(bash tests/vm/fetch.sh 2>"$errs")
rc=$?
grep -v '^bpfstderr-lab: cannot reach' "$errs" | sed 's/^/    /'
echo "== kernels fetched in $(($(date +%s) - t0))s"
if [ -z "$kernels" ]; then
	if [ "$rc" -eq 2 ]; then
		lab_skip "no kernel to boot: $(grep -m1 '^bpfstderr-lab: cannot reach' "$errs" |
			sed 's/^bpfstderr-lab: //')"
	else
		lab_skip "no kernel to boot: tests/vm/fetch.sh failed (exit $rc): $(tail -n 1 "$errs")"
	fi
	finish
fi
# Some line has no kernel in the archive: the others run, this one shows.
while read -r line; do
	lab_skip "${line#bpfstderr-lab: }"
done < <(grep '^bpfstderr-lab: no .* kernel in the archive' "$errs")
[ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && lab_skip "tests/vm/fetch.sh failed (exit $rc): $(tail -n 1 "$errs")"

# make_run: make run's lab path from this host's terminal (tmux), once,
# in the newest 7.x kernel (tests/vm/make_run.sh).
run_make_run() {
	local out last p f k t0=$(date +%s)
	echo "== make run's lab path (tests/vm/make_run.sh)"
	out=$(timeout "$TIMEOUT" bash tests/vm/make_run.sh "$BUILD" 2>&1)
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
	told <<<"$out"
	if [ -z "$last" ]; then
		echo "    not ok - lab: make run: no summary (killed after ${TIMEOUT}s, or crashed)"
		printf '%s\n' "$out" | grep -v '^# ' | tail -n 15 | sed 's/^/    # /'
		last="0 passed, 1 failed, 0 skipped"
	fi
	p=${last%% *}; f=$(awk '{print $3 + 0}' <<<"$last"); k=$(awk '{print $5 + 0}' <<<"$last")
	printf '%-44s %4d passed, %d failed (%ds)\n' "lab: make run" "$p" "$f" "$(($(date +%s) - t0))"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + k))
}

tests=()
make_run=1
if [ $# -gt 0 ]; then
	make_run=""
	for t in "$@"; do
		[ "${t%.sh}" = make_run ] && { make_run=1; continue; }
		tests+=("tests/vm/guest/${t%.sh}.sh")
	done
else
	tests=(tests/vm/guest/*.sh)
fi
# tests/vm/guest/scx.sh runs a real sched_ext scheduler, built here on the
# host (tests/vm/scx.sh, cached): when it cannot be, that test skips and
# says why
if [[ " ${tests[*]} " == *" tests/vm/guest/scx.sh "* ]]; then
	t0=$(date +%s)
	bash tests/vm/scx.sh > /dev/null 2> "$errs" ||
		echo "    # scx_sdt not built: $(tail -n 1 "$errs")"
	echo "== scx_sdt ready in $(($(date +%s) - t0))s"
fi
# 6.17, by default, runs the guest tests where it differs from the later
# kernels (its report sizes, no arena reports, its 5-argument printk):
# every test on a third kernel takes make check past an hour on 2 cores
subset_617=${BPFSTDERR_LAB_617_TESTS-smoke kfunc live saturation stacks}
while read -r klabel kver kdir; do
	[ ${#tests[@]} -gt 0 ] || break
	echo "== kernel $klabel: $kver"
	ktests=("${tests[@]}")
	if [ $# -eq 0 ] && [ "$klabel" = 6.17 ] && [ -n "$subset_617" ]; then
		ktests=()
		for t in $subset_617; do ktests+=("tests/vm/guest/$t.sh"); done
	fi
	for t in "${ktests[@]}"; do
		run_guest "lab $kver: $(basename "$t" .sh)" "$kdir" "$t"
	done
done <<<"$kernels"
[ -n "$make_run" ] && run_make_run
finish
