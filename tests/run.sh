#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the whole suite once per build directory given (the plain build, then
# the ASan+UBSan one), then the Debian package test and the kernel lab
# with the first build (BPFSTDERR_DEB=0, BPFSTDERR_LAB=0 leave them out),
# and close with one "N passed, N failed, N skipped" line, after every
# skipped check with its reason and, last, every failed one again with
# its "# " lines (the end of a long log is the part that gets read).
set -u
cd "$(dirname "$0")/.."

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
total_pass=0
total_fail=0
total_skip=0
skips=""
fails=""

# failed_lines LABEL: each "not ok" (or FAIL) line of a test's output, as
# LABEL: ..., with the "# " lines right after it (its diagnosis, up to 20)
failed_lines() {
	awk -v label="$1" '
		/^ *(not ok|FAIL)/ { sub(/^ */, ""); print "    " label ": " $0; n = 20; next }
		n > 0 && /^ *# / { sub(/^ */, ""); print "      " $0; n--; next }
		{ n = 0 }'
}

run_one() {	# run_one LABEL CMD...: at most RUN_TIMEOUT seconds (600)
	local label=$1 out last p f k=0 f_skip nok; shift
	out=$(timeout "${RUN_TIMEOUT:-600}" "$@" 2>&1)
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' <<<"$out" | tail -n 1)
	if [ -z "$last" ]; then
		p=0; f=1
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
		echo "not ok - $label: no summary (crashed or timed out)"
		fails+="    $label: no summary (crashed or timed out)"$'\n'
	else
		p=${last%% *}; f=$(awk '{print $3 + 0}' <<<"$last"); k=$(awk '{print $5 + 0}' <<<"$last")
		if [ "$k" -gt 0 ]; then
			skips+=$(grep -E '^skip - ' <<<"$out" | sed "s|^skip - |    $label: |")$'\n'
		fi
		grep -E '^ *(not ok|FAIL)' <<<"$out" | sed 's/^ */    /'
		grep -E -A30 '^(==[0-9]+==|.*runtime error:)' <<<"$out" | head -40 | sed 's/^/    /'
		if grep -qE '^==[0-9]+==ERROR|runtime error:' <<<"$out"; then
			f=$((f + 1))
			fails+="    $label: $(grep -m 1 -E '^==[0-9]+==ERROR|runtime error:' <<<"$out")"$'\n'
		fi
		if [ "$f" -gt 0 ]; then
			nok=$(failed_lines "$label" <<<"$out")
			fails+="${nok:-    $label: $f failed (no \"not ok\" line)}"$'\n'
		fi
	fi
	[ "$k" -gt 0 ] && f_skip=", $k skipped" || f_skip=""
	printf '%-44s %4d passed, %d failed%s\n' "$label" "$p" "$f" "$f_skip"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	total_skip=$((total_skip + k))
}

for build in "$@"; do
	echo "== suite with $build/bpfstderr"
	export BPFSTDERR=$build/bpfstderr HELPERS=$build/tests
	for t in "$build"/tests/test_*; do
		[ -x "$t" ] && run_one "$build: c/$(basename "$t")" "$t"
	done
	for t in tests/e2e/*.sh; do
		run_one "$build: e2e/$(basename "$t" .sh)" bash "$t"
	done
done
if [ -x build-fuzz/fuzz/fuzz_parse ]; then
	echo "== parser fuzzing"
	run_one "fuzz/fuzz_parse" tests/fuzz/run.sh build-fuzz/fuzz/fuzz_parse "${FUZZ_SECONDS:-30}"
fi
# The Debian package as a user meets it: built, lintian-clean, installed,
# used and purged in a clean root (tests/deb/debtest.sh).
deb_suite() {
	local log

	if ! log=$(make --no-print-directory deb 2>&1); then
		printf '%s\n' "$log" | tail -n 20
		echo "not ok - make deb: the package builds and lintian finds no error or warning"
		echo "0 passed, 1 failed"
		return 1
	fi
	echo "ok - make deb: $(ls build-deb/*.deb)"
	tests/deb/debtest.sh build-deb
}
if [ -n "${BPFSTDERR_DEB:-1}" ] && [ "${BPFSTDERR_DEB:-1}" != 0 ]; then
	echo "== the Debian package"
	export -f deb_suite
	RUN_TIMEOUT=1200 run_one "deb: make deb, debtest" bash -c deb_suite
fi
# The kernel lab: Debian's own kernels in qemu, where stream writes work
# (tests/vm/lab.sh; one skip line when no kernel can boot here).
if [ -n "${BPFSTDERR_LAB:-1}" ] && [ "${BPFSTDERR_LAB:-1}" != 0 ]; then
	echo "== kernel lab with $1/bpfstderr"
	RUN_TIMEOUT=3600 run_one "lab" tests/vm/lab.sh "$1"
fi
if [ -n "$skips" ]; then
	echo "== skipped, with the reasons"
	printf '%s' "$skips"
fi
if [ -n "$fails" ]; then
	echo "== failed"
	printf '%s' "$fails" | grep -v '^$'
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
