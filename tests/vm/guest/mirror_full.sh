# Inside a lab guest (tests/vm/lab.sh): the mirror ring full. Two other
# readers read a program's two streams, as a scheduler's watcher does;
# record holds a piece of a stderr line they read (mirrored, waiting for
# its newline), then is stopped (SIGSTOP) while the stdout reader reads
# 3 MB, more than the mirror ring (2 MiB) holds, and the stderr reader a
# few lines more, which the full ring loses whole. The readers still get
# every byte (the mirror never takes from them); once resumed, record says
# how many reads it could not mirror, the journal has what the ring held
# and no more, the held piece is kept cut where the reads were lost, and
# the reads after that are mirrored again, whole lines, not joined to it.
# Oracles: the other readers' own bytes (tests/vm/reader_loop.py, raw
# bpf(2)), the writes' return values, and the journal read with Python's
# sqlite3.
. tests/lib.sh

lab_start
seen=$("$BPFSTDERR" doctor --json | jq -r .other_readers.seen)
if [ "$seen" != true ]; then
	skip "mirror ring full" "this kernel refuses tracing the read command ($("$BPFSTDERR" doctor --json | jq -r .other_readers.errno))"
	finish
fi
start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
J=$out/j.db
LINES=250		# 25 KB a round (holdprog writes at most 256 a command)
ROUNDS=120		# 3 MB in all
RING=$((2 << 20))	# readers.h, MIRROR_RING

rets() { tr ' ' '\n' | grep -c '^0$'; }
lines() { holder_cmd W "lines $1 $2 100" | rets; }	# lines STREAM COUNT
got_bytes() { stat -c %s "$out/got$1" 2>/dev/null || echo 0; }
got_all() { [ "$(got_bytes "$1")" -ge "$2" ]; }	# got_all STREAM BYTES
rounds_past() { [ "$(cat "$out/rounds$1" 2>/dev/null || echo 0)" -gt "$2" ]; }
# q STREAM WHERE WHAT: of program wid's events of STREAM (WHERE: "and
# ..."); mine: only those mirrored from its reader
q() {
	sql1 "$J" "select $3 from events e join progs p on p.row = e.prog
		   where p.id = $wid and e.stream = $1 $2"
}
mine() { echo "and e.reader_pid = ${rpids[$1]}"; }
ev_bytes() { q "$1" "$2" "coalesce(sum(length(e.text) + 1 - (e.flags & 1)), 0)"; }
mirrored_bytes() { ev_bytes "$1" "$(mine "$1")"; }
mirrored_past() { [ "$(mirrored_bytes "$1")" -ge "$2" ]; }
whole() { q "$1" "$(mine "$1") and length(e.text) = 99 and e.flags & 1 = 0" "count(*)"; }
held() { sql1 "$J" "select coalesce(sum(length(t.bytes)), 0) from pending t join progs p
		     on p.row = t.prog where p.id = $wid and t.stream = 2"; }
held_is() { [ "$(held)" = "$1" ]; }
said_full() { grep -q 'reads of other processes were not mirrored (the mirror ring was full)' "$out/err"; }

"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/err" & rpid=$!
LAB_CLEANUP='kill -CONT $rpid 2>/dev/null'
check "record's first cycle done (its reader tracing attached)" wait_asleep "$rpid"
declare -A rpids
for s in 1 2; do
	python3 tests/vm/reader_loop.py "$wid" "$s" 0.02 "$out/got$s" "$out/rounds$s" "$out/stop" &
	rpids[$s]=$!
done
# record leaves the streams to them once it has seen one of their reads
# (an empty one is a read too), and mirrors what they read
check "the stdout reader read twice" wait_until 120 rounds_past 1 1
check "the stderr reader read twice" wait_until 120 rounds_past 2 1
check_eq "a 50-byte message without its newline, to stderr" "$(holder_cmd W "write 2 1 50" | rets)" 1
check "the stderr reader got it" wait_until 120 got_all 2 50
check "record holds it, mirrored (its newline to come)" wait_until 120 held_is 50

kill -STOP "$rpid"
ok=0
for r in $(seq "$ROUNDS"); do
	[ "$(lines 1 "$LINES")" = "$LINES" ] && ok=$((ok + 1))
	wait_until 120 got_all 1 $((r * LINES * 100)) || break
done
check_eq "$ROUNDS rounds of $LINES writes to stdout succeed, record stopped" "$ok" "$ROUNDS"
check_eq "the stdout reader got every byte" "$(got_bytes 1)" $((ROUNDS * LINES * 100))
# the ring has no room left for even a header: these reads are lost whole
check_eq "50 writes of a 100-byte line to stderr succeed" "$(lines 2 50)" 50
check "the stderr reader got them" wait_until 120 got_all 2 5050
kill -CONT "$rpid"

check "record, resumed, says the ring was full" wait_until 120 said_full
lost=$(sed -n 's/.*: \([0-9]*\) reads of other processes were not mirrored (the mirror ring was full).*/\1/p' "$out/err" | head -n 1)
kept=$(mirrored_bytes 1)
echo "# mirror_full: $lost reads not mirrored; $kept bytes of stdout mirrored"
check "... a count of reads above 0" test "${lost:-0}" -gt 0
check "the journal has what the ring held: over half of it" test "$kept" -gt $((RING / 2))
check "... and no more than the ring holds" test "$kept" -le "$RING"

# the ring taken, stderr's reads are mirrored again: whole lines, not
# joined to the piece held when reads were lost. (It ends there: the
# first piece after lost reads says so, readers.h "gap"; here, where the
# stop lasts longer than JOURNAL_STALE_NS, record's first cycle back
# emits it as a stale tail anyway.)
check_eq "50 more writes to stderr succeed" "$(lines 2 50)" 50
check "the stderr reader got them" wait_until 120 got_all 2 10050
check "record mirrored them" wait_until 120 mirrored_past 2 5000
kill -TERM "$rpid"; wait "$rpid"
check_eq "record ends 0" "$?" 0
check_eq "... as 50 whole lines" "$(whole 2)" 50
check_eq "... after the held piece, kept cut: 50 bytes, no newline" \
	"$(q 2 "and e.flags & 1 = 1" "group_concat(length(e.text))")" 50
check_eq "... and nothing else of stderr" "$(ev_bytes 2 "")" 5050
touch "$out/stop"; wait "${rpids[1]}" "${rpids[2]}"
finish
