# Reads are destructive; the journal is what lets several bpfstderr run at
# once: two follows of one program each print every event once. Without
# it (--no-journal) the two split the stream between them, and each says
# so once. A stream whose read right another process holds is not read
# until it lets go. The oracle is the fixture's bytes (reconstruct.py, with
# Python's strict JSON parser).
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)

make_fixtures() {	# DIR ID
	{ printf 'out %d\n' $(seq 1 200); printf 'no newline at the end'; } > "$1/$2.1"
	{
		for i in 1 2 3; do
			printf 'before report %d\n' "$i"
			cat tests/fixtures/upstream-6.18.txt
			cat tests/fixtures/rfc-seed001.txt
		done
		printf 'ERROR: Arena READ access at unmapped address 0x1\nCPU: 0 UID: 0 PID: 1 Comm: cut\nCall trace:\n'
	} > "$1/$2.2"
}

follow_bg() {	# DIR CHUNK OUTFILE [ARGS...]: pid in $fpid
	local dir=$1 chunk=$2 outf=$3; shift 3
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$dir BPFSTDERR_SHIM_CHUNK=$chunk BPFSTDERR_SHIM_LOG=$dir/log \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" follow -p "$id" --json "$@" > "$outf" 2> "$outf.err" &
	fpid=$!
}

served() {	# DIR: has the shim served both fixtures entirely?
	[ "$(cat "$1/$id.1.off" 2>/dev/null)" = "$(stat -c %s "$1/$id.1")" ] &&
	[ "$(cat "$1/$id.2.off" 2>/dev/null)" = "$(stat -c %s "$1/$id.2")" ]
}

load_writer() {	# a writer with bytes accounted on both streams (so bpfstderr
		# reads them), and a new $d for its fixtures; $id
	start_holder H writer || { fail "load writer"; finish; }
	id=$(prog_id H writer)
	d=$(mktmp)
}

# The fixtures appear once every follow is running (a follow shows what is
# committed after its cursor, taken in its set-up), as if the program
# wrote them then: each asleep in ppoll after its first cycle.
serve_when_up() {	# PID...
	local p
	for p in "$@"; do
		wait_asleep "$p" || fail "follow $p started (asleep after its first cycle)"
	done
	make_fixtures "$d" "$id"
	fixture_added H
}

# -- with the journal ----------------------------------------------------
load_writer
follow_bg "$d" 7 "$out/a"; pa=$fpid
follow_bg "$d" 7 "$out/b"; pb=$fpid
follow_bg "$d" 7 "$out/o" --stdout; po=$fpid
serve_when_up "$pa" "$pb" "$po"
wait_until 120 served "$d"
stop_holder H	# the follows end by themselves: their program is gone
wait "$pa"; ra=$?
wait "$pb"; rb=$?
wait "$po"; ro=$?
check_eq "journal: the follows end 0 when the program unloads" "$ra $rb $ro" "0 0 0"
check_eq "journal: follow --stdout shows all of stdout and nothing of stderr, which others read" \
	"$(jq -r .stream "$out/o" | sort | uniq -c | awk '{ print $2 "=" $1 }')" "stdout=201"
for f in a b; do
	res=$(python3 tests/e2e/reconstruct.py "$out/$f" "$id" "$d/$id.1" "$d/$id.2")
	check_eq "journal: follow $f printed every event exactly once, in order" "$res" ""
	check_eq "journal: follow $f printed every fault report" \
		"$(jq -s '[.[] | select(.kind == "fault")] | length' "$out/$f")" "$(grep -c '^ERROR: ' "$d/$id.2")"
done
check "journal: the two printed the same events" cmp -s "$out/a" "$out/b"
check_eq "journal: the journal has each event once (Python's sqlite3)" \
	"$(python3 tests/e2e/journal_check.py stream "$BPFSTDERR_JOURNAL" "$id" 2 | cmp - "$d/$id.2" && echo same)" same
check_eq "journal: the file is 0600" "$(stat -c %a "$BPFSTDERR_JOURNAL")" 600

# -- a stream's read right, held by another process ------------------------
# A process that keeps bytes of a stream past its commit (the rescue, in a
# storm) holds that stream's read right (journal.h); holdright is such a
# process. Nobody else may read the stream meanwhile, or the journal would
# get its later bytes first; the other stream is read as usual. Once the
# right is let go, every byte is read, in order.
load_writer
mkfifo "$out/rin"
"$HELPERS/holdright" "$BPFSTDERR_JOURNAL" "$id" stderr < "$out/rin" > "$out/rout" & hp=$!
exec {rw}> "$out/rin"
wait_until 60 test -s "$out/rout"
check_eq "rights: the helper holds stderr's right" "$(cat "$out/rout")" held
check_eq "rights: a second process cannot have it" \
	"$("$HELPERS/holdright" "$BPFSTDERR_JOURNAL" "$id" stderr < /dev/null)" busy
follow_bg "$d" 7 "$out/r"; pr=$fpid
serve_when_up "$pr"
stdout_served() { [ "$(cat "$d/$id.1.off" 2>/dev/null)" = "$(stat -c %s "$d/$id.1")" ]; }
wait_until 60 stdout_served
fixture_added H; sleep 2	# cycles that would read stderr if they could
check_eq "rights: stdout was read meanwhile" "$(cat "$d/$id.1.off" 2>/dev/null)" "$(stat -c %s "$d/$id.1")"
check_eq "rights: stderr was not, while another process held its right" "$(cat "$d/$id.2.off" 2>/dev/null || echo 0)" 0
check_eq "rights: no stderr event meanwhile" "$(jq -s '[.[] | select(.stream == "stderr")] | length' "$out/r")" 0
# (a try may meet follow inside a drain of stdout, whose right it holds)
for i in 1 2 3; do
	got=$("$HELPERS/holdright" "$BPFSTDERR_JOURNAL" "$id" stdout < /dev/null)
	[ "$got" = held ] && break
	sleep 0.3
done
check_eq "rights: follow keeps no right past its commit (no rescue here)" "$got" held
echo go >&"$rw"; exec {rw}>&-	# let go (children hold the fifo too)
wait "$hp"
wait_until 120 served "$d"
stop_holder H
wait "$pr"
check_eq "rights: once let go, every event exactly once, in order" \
	"$(python3 tests/e2e/reconstruct.py "$out/r" "$id" "$d/$id.1" "$d/$id.2")" ""

# -- without -------------------------------------------------------------
load_writer
follow_bg "$d" 7 "$out/c" --no-journal; pc=$fpid
follow_bg "$d" 7 "$out/e" --no-journal; pe=$fpid
serve_when_up "$pc" "$pe"
wait_until 120 served "$d"
stop_holder H
wait "$pc"; wait "$pe"
for f in c e; do
	check_eq "--no-journal: follow $f says once that reads are destructive" \
		"$(grep -c 'no journal: reads are destructive' "$out/$f.err")" 1
done
# Every byte went to one of them, and each printed exactly the bytes it
# was served, a piece of a line marked partial when it was held at the
# end. Not "no whole line twice": a reader cannot know that the other took
# bytes between two of its reads, so a piece it holds and the end of
# another line it reads next make one line, which may read like a line the
# other printed (tests/e2e/injected_split.sh plays that step by step).
for s in 1 2; do
	check_eq "--no-journal: the two shared stream $s, each printed what it was served" \
		"$(python3 tests/e2e/served_check.py "$d/$id.$s" "$d/log" "$id" "$s" "$pc=$out/c" "$pe=$out/e")" ""
done
check "--no-journal: nothing written to the journal" \
	test "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from progs where id = ?', ($id,)).fetchone()[0])" "$BPFSTDERR_JOURNAL")" -eq 0
finish
