# kernel-patches/: each series (stream-drops, rfc-drain) applies to a real
# kernel tree and checkpatch --strict (that tree's own) finds nothing but
# what only a tree with the upstream history can clear; check.sh says so,
# and says
# otherwise for a series that does not apply or that checkpatch rejects.
# The fast part only (no kernel build: that is make -C kernel-patches
# vmtest). The tree: BPFSTDERR_KSRC, else the one kernel-patches/
# fetch-source.sh caches in /var/cache/bpfstderr-kp/linux-source-7.3,
# fetched here the first time (167 MB, ~1.8 GB unpacked, under a minute
# on our machines); a skip line says why only when Debian's archive
# cannot be reached.
. tests/lib.sh

KSRC=${BPFSTDERR_KSRC:-}
if [ -z "$KSRC" ]; then
	KSRC=$(bash kernel-patches/fetch-source.sh 2> "$TEST_ROOT/fetch-source.err"); rc=$?
	if [ "$rc" = 2 ]; then
		skip "kernel-patches/check.sh" "Debian's archive cannot be reached for linux-source-7.3\
 (kernel-patches/fetch-source.sh: $(tail -n 1 "$TEST_ROOT/fetch-source.err"); or set BPFSTDERR_KSRC)"
		finish
	fi
	if [ "$rc" != 0 ]; then
		fail "fetch-source.sh: the tree is there" "exit $rc: $(tail -n 3 "$TEST_ROOT/fetch-source.err")"
		finish
	fi
fi
if [ ! -f "$KSRC/kernel/bpf/stream.c" ] || [ ! -f "$KSRC/scripts/checkpatch.pl" ]; then
	fail "a kernel tree at $KSRC" "no kernel/bpf/stream.c or scripts/checkpatch.pl there"
	finish
fi
out=$(mktmp)

for series in stream-drops rfc-drain; do
	bash kernel-patches/check.sh "$KSRC" --series "kernel-patches/$series" \
		>"$out/check-$series.txt" 2>&1; rc=$?
	sed 's/^/# /' "$out/check-$series.txt"
	check_eq "$series: check.sh passes on $KSRC" "$rc" 0
	check_eq "$series: every patch applies" \
		"$(grep -c '^   ok: 000[1-3]-' "$out/check-$series.txt")" 3
	check_eq "$series: checkpatch ran on every patch" \
		"$(grep -c ': total: 0 errors' "$out/check-$series.txt")" 3
	check_eq "$series: no counted checkpatch finding" \
		"$(grep -c '^      counted:' "$out/check-$series.txt")" 0
	check "$series: the build is skipped unless asked" \
		grep -q 'skipped (pass --build' "$out/check-$series.txt"
done
# The series' own checkpatch result, as its cover letter says.
check_eq "rfc-drain: patches 1 and 2 without a finding" \
	"$(grep -c ': total: 0 errors, 0 warnings, 0 checks' "$out/check-rfc-drain.txt")" 2

# A series whose context no longer matches the tree: exit 1, named.
mkdir -p "$out/bad-apply"
cp kernel-patches/stream-drops/0001-*.patch "$out/bad-apply/"
sed -i "s/^-\treturn ret ?: __bpf_stream_push_str(/-\treturn ret ?: __bpf_stream_push_string(/" "$out/bad-apply/"0001-*.patch
bash kernel-patches/check.sh "$KSRC" --series "$out/bad-apply" >"$out/bad1.txt" 2>&1; rc=$?
check_eq "a patch that does not apply: exit 1" "$rc" 1
check "...and it is named" grep -q '^FAIL: 0001-.* does not apply' "$out/bad1.txt"

# A patch checkpatch rejects (a line with trailing whitespace): exit 3.
mkdir -p "$out/bad-style"
cp kernel-patches/stream-drops/0001-*.patch "$out/bad-style/"
sed -i 's|^+	/\* Nothing was queued, so no read will ever give the charge back. \*/$|&  |' \
	"$out/bad-style/"0001-*.patch
bash kernel-patches/check.sh "$KSRC" --series "$out/bad-style" >"$out/bad3.txt" 2>&1; rc=$?
check_eq "a patch checkpatch rejects: exit 3" "$rc" 3
check "...and the finding is counted" grep -q '^      counted: ERROR:TRAILING_WHITESPACE' "$out/bad3.txt"
finish
