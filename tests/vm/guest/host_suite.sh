# Inside a lab guest (tests/vm/lab.sh): host tests that must hold on a
# kernel whose stream writes work too, run as they are: the capacity model
# (every write charged, the limit refusing with -ENOSPC), reports of real
# faults all read, followers racing for real bytes, record's journald
# entries and metrics for a real leak. Their checks add up
# into one summary. BPFSTDERR_IN_LAB tells them CPU time here is an
# emulator's (TCG), not a host's.
. tests/lib.sh

echo "# kernel $(uname -r)"
export BPFSTDERR HELPERS BPFSTDERR_IN_LAB=1
# SUITE CMD...: its own "ok/not ok/skip" lines pass through, counted here
suite() {
	local name=$1 out last p f k t0; shift
	t0=$(date +%s)
	out=$(timeout 600 "$@" 2>&1)
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' <<<"$out" | tail -n 1)
	grep -E '^(not ok|FAIL|skip)' <<<"$out" | sed "s|^\(not ok\|skip\) - |&$name: |"
	if [ -z "$last" ]; then
		fail "$name" "no summary (crashed or timed out)"
		printf '%s\n' "$out" | tail -n 10 | sed 's/^/# /'
		return
	fi
	p=${last%% *}; f=$(awk '{ print $3 + 0 }' <<<"$last"); k=$(awk '{ print $5 + 0 }' <<<"$last")
	PASSED=$((PASSED + p)); FAILED=$((FAILED + f)); SKIPPED=$((SKIPPED + k))
	echo "# $name: $last ($(($(date +%s) - t0))s)"
}
suite test_live_progs "$HELPERS/test_live_progs"
suite report_live bash tests/e2e/report_live.sh
suite follow_live bash tests/e2e/follow_live.sh
# record's journald entries and Prometheus metrics, where a real leak
# (oversized messages) is there to warn about
suite fleet_journald bash tests/e2e/fleet_journald.sh
suite fleet_metrics bash tests/e2e/fleet_metrics.sh
finish
