# A reader bpfstderr cannot see (the kernel refuses tracing its reads, as
# on this host): follow infers it from the accounting (bytes that left the
# stream beyond its own reads), says so once with the exact count, leaves
# the stream to it while it reads, and reads again once it stopped. The
# test plays the program (it appends to the fixture) and the other reader
# (the shim's foreign read, which comes between follow's look at the
# accounting and its read; or a read under the shim's lock), and waits for
# follow's walks of the program list (the shim's walk log) between steps.
# Oracles: the fixture's bytes and the shim's log of what follow was served.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)

if "$BPFSTDERR" doctor --json 2> /dev/null | jq -e '.other_readers.seen == true' > /dev/null; then
	skip "unseen reader" "this kernel lets bpfstderr trace reads: other readers are seen (lab readers.sh)"
	finish
fi
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)
d=$(mktmp)
f=$d/$id.1
: > "$f"

follow_bg() {	# OUTFILE ARGS...: pid in $fpid
	local outf=$1; shift
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_LOG=$d/log BPFSTDERR_SHIM_WALKS=$d/walks \
		BPFSTDERR_FULL_WALK=1 ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" follow -p "$id" --no-journal --stdout -d 0.2 "$@" > "$outf" 2> "$outf.err" &
	fpid=$!
}
lines() {	# N: N 100-byte lines (99 digits and a newline), written by the program
	local i
	flock "$f" sh -c 'for i in $(seq "$2"); do printf "%099d\n" "$i"; done >> "$1"' sh "$f" "$1"
	fixture_added H
}
served() { awk -v p="$fpid" '$1 == p { n += $5 } END { print n + 0 }' "$d/log" 2> /dev/null; }
served_is() { [ "$(served)" = "$1" ]; }
walks() { grep -c "^$fpid\$" "$d/walks" 2> /dev/null || echo 0; }
walked_past() { [ "$(walks)" -ge "$1" ]; }
wait_walks() {	# N: follow walked the list N more times (looked at the accounting)
	local w; w=$(walks)
	wait_until 60 walked_past "$((w + $1))"
}
other_reads() {	# the other reader takes every byte not read yet, under the shim's lock
	flock "$f" sh -c 'cat "$1" > /dev/null; stat -c %s "$1" > "$1.off"' sh "$f"
}

follow_bg "$out/f"
check "follow's first cycle done" wait_asleep "$fpid"
lines 10
check "follow read 10 lines (1000 bytes): nobody else reads" wait_until 60 served_is 1000
# the other reader takes 500 bytes between follow's look and its read
echo 500 > "$f.foreign"
lines 10
check "follow read the 500 bytes the other left" wait_until 60 served_is 1500
said() { grep -q "program $id (writer) stdout: 500 bytes left it without a read of bpfstderr's" "$out/f.err"; }
check "follow said another process read 500 bytes of stdout, left to it" wait_until 60 said
check_eq "... the other took those 500 bytes" "$(stat -c %s "$f.taken")" 500
# left to it: written, looked at twice, then read by the other
for round in 1 2 3; do
	lines 10
	check "round $round: follow looked twice since the write" wait_walks 2
	other_reads
	check "round $round: ... and once since the other read" wait_walks 1
done
check_eq "follow read none of what the other read (1500 bytes served, still)" "$(served)" 1500
check_eq "... and said it once" "$(grep -c 'left it without a read' "$out/f.err")" 1
check_eq "follow printed the 15 lines it read, whole" \
	"$(grep -c '[0-9]\{99\}$' "$out/f")" 15
# the other gone: what comes is read again (after 10 s without a take)
lines 10
check "the other stopped: follow reads again" wait_until 60 served_is 2500
check "... and said so" grep -q "program $id (writer) stdout: nothing left it unread for 10 s: read again" "$out/f.err"
kill -TERM "$fpid"; wait "$fpid"
check_eq "follow ends 0" "$?" 0
check_eq "follow printed 25 lines" "$(grep -c '[0-9]\{99\}$' "$out/f")" 25

# --steal: the same race, nothing left
: > "$d/log"
echo 300 > "$f.foreign"
follow_bg "$out/s" --steal
check "steal: follow's first cycle done" wait_asleep "$fpid"
lines 10
check "steal: follow read all but the other's 300 bytes" wait_until 60 served_is 700
lines 10
check "steal: ... and the next 1000 too" wait_until 60 served_is 1700
kill -TERM "$fpid"; wait "$fpid"
check_eq "steal: follow ends 0" "$?" 0
check_eq "steal: said nothing of another reader" "$(grep -c 'left it\|read again' "$out/s.err")" 0

# record, with a journal: bytes every bpfstderr sharing it read are ours;
# its first look at a program only starts the count
: > "$d/log"
J=$out/j.db
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_LOG=$d/log BPFSTDERR_FULL_WALK=1 \
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/r.err" & fpid=$!
check "record: first cycle done" wait_asleep "$fpid"
lines 10
check "record: read 1000 bytes" wait_until 60 served_is 1000
echo 200 > "$f.foreign"
lines 10
check "record: read all but the other's 200 bytes" wait_until 60 served_is 1800
rsaid() { grep -q "program $id (writer) stdout: 200 bytes left it without a read of bpfstderr's" "$out/r.err"; }
check "record: said another process read 200 bytes" wait_until 60 rsaid
kill -TERM "$fpid"; wait "$fpid"
check_eq "record: ends 0" "$?" 0
stop_holder H
finish
