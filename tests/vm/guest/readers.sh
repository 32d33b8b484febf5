# Inside a lab guest (tests/vm/lab.sh): a process that reads a program's
# stream itself, as a sched_ext scheduler's stream watcher reads its own
# stderr once a second (here every 2 s), gets every byte as if bpfstderr were not there:
# record leaves that stream to it and says so once, naming it. With
# --steal, record reads too, and each byte reaches exactly one of them.
# Once the other reader is gone, record reads the stream again.
# Oracles: the other reader's own bytes (tests/vm/reader_loop.py, raw
# bpf(2)), the writes' return values, and the journal read with Python's
# sqlite3.
. tests/lib.sh

lab_start
seen=$("$BPFSTDERR" doctor --json | jq -r .other_readers.seen)
if [ "$seen" != true ]; then
	skip "other readers" "this kernel refuses tracing the read command ($("$BPFSTDERR" doctor --json | jq -r .other_readers.errno))"
	finish
fi
start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
journal_bytes() {	# J: program wid's stderr bytes the journal keeps, events and held tail
	python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = 'select {} from {} t join progs p on p.row = t.prog where p.id = ? and t.stream = 2'
b = b''.join(r[0] for r in c.execute(q.format('text', 'events'), (int(sys.argv[2]),)))
b += b''.join(r[0] for r in c.execute(q.format('bytes', 'pending'), (int(sys.argv[2]),)))
print(len(b))" "$1" "$wid" 2>/dev/null || echo 0
}
writes() { holder_cmd W "write 2 $1 100" | tr ' ' '\n' | grep -c '^0$'; }
got_bytes() { stat -c %s "$out/got" 2>/dev/null || echo 0; }
rounds() { cat "$out/rounds" 2>/dev/null || echo 0; }
rounds_past() { [ "$(rounds)" -gt "$1" ]; }

# -- left to it -------------------------------------------------------------
J=$out/left.db
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/left.err" & rpid=$!
check "left: record's first cycle done (its reader tracing attached)" wait_asleep "$rpid"
python3 tests/vm/reader_loop.py "$wid" 2 2 "$out/got" "$out/rounds" "$out/stop" & opid=$!
# a read of the other's after record started: an empty one is a read too
check "left: the other reader read twice" wait_until 120 rounds_past 1
# right after one of its rounds: the bytes wait 2 s for its next, while
# record's cycles (0.2 s) see them
r0=$(rounds)
check "left: the other reader's next round" wait_until 120 rounds_past "$r0"
check_eq "left: 20 writes of 100 bytes succeed" "$(writes 20)" 20
got_all() { [ "$(got_bytes)" -ge "$1" ]; }
check "left: the other reader got them" wait_until 120 got_all 2000
check_eq "left: ... every byte, once" "$(got_bytes)" 2000
said() { grep -q "read by python3($opid) too: left to it" "$out/left.err"; }
check "left: record said it left stderr to python3($opid)" wait_until 60 said
check_eq "left: ... once" "$(grep -c 'left to it' "$out/left.err")" 1
check_eq "left: the journal has none of it" "$(journal_bytes "$J")" 0

# -- --steal: both read, each byte reaches one of them ------------------------
kill -TERM "$rpid"; wait "$rpid"
check_eq "left: record ends 0" "$?" 0
J=$out/steal.db
"$BPFSTDERR" record -d 0.2 --steal --journal "$J" 2> "$out/steal.err" & rpid=$!
check "steal: record's first cycle done" wait_asleep "$rpid"
r0=$(rounds)
check "steal: the other reader read since" wait_until 120 rounds_past "$((r0 + 1))"
before=$(got_bytes)
check_eq "steal: 50 writes of 100 bytes succeed" "$(writes 50)" 50
# both readers done: the stream is empty (the capacity iterator)
emptied() { [ "$(capacity "$wid")" = 0 ]; }
check "steal: the stream was read to its end (capacity 0)" wait_until 120 emptied
r1=$(rounds)
check "steal: the other reader read once more after" wait_until 120 rounds_past "$((r1 + 1))"
kill -TERM "$rpid"; wait "$rpid"
check_eq "steal: record ends 0" "$?" 0
stolen=$(journal_bytes "$J")
echo "# steal: record read $stolen bytes, the other reader $(($(got_bytes) - before))"
check_eq "steal: every byte reached one reader: record's and the other's add up to 5000" \
	"$((stolen + $(got_bytes) - before))" 5000
check_eq "steal: record said nothing" "$(cat "$out/steal.err")" ""

# -- the other reader gone: record reads again ---------------------------------
J=$out/gone.db
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/gone.err" & rpid=$!
check "gone: record's first cycle done" wait_asleep "$rpid"
r0=$(rounds)
check "gone: the other reader read since" wait_until 120 rounds_past "$((r0 + 1))"
touch "$out/stop"; wait "$opid"
before=$(got_bytes)
check_eq "gone: 20 writes of 100 bytes succeed" "$(writes 20)" 20
kept() { [ "$(journal_bytes "$J")" = 2000 ]; }
check "gone: record read them (the journal has 2000 bytes)" wait_until 120 kept
kill -TERM "$rpid"; wait "$rpid"
check_eq "gone: record ends 0" "$?" 0
check_eq "gone: the other reader, stopped, got none" "$(got_bytes)" "$before"
stop_holder W
finish
