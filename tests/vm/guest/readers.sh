# Inside a lab guest (tests/vm/lab.sh): a process that reads a program's
# stream itself, as a sched_ext scheduler's stream watcher reads its own
# stderr once a second (here every 2 s), gets every byte as if bpfstderr were not there:
# record leaves that stream to it and says so once, naming it, and keeps
# what it read (mirrored), marked with its name, a message its reads
# split kept whole; follow shows them so. With --steal, record reads too,
# each byte reaches exactly one of them, and the journal has them all.
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
# J [WHO]: program wid's stderr bytes the journal keeps, events (each with
# its newline) and held tail; WHO: only events mirrored from that pid's
# reads, "ours": only events bpfstderr read (and the tail)
journal_bytes() {
	python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
who = sys.argv[3]
q = 'select {} from {} t join progs p on p.row = t.prog where p.id = ? and t.stream = 2'
e = q.format('text, flags', 'events')
if who == 'ours':
    e += ' and t.reader_pid is null'
elif who:
    e += ' and t.reader_pid = ' + str(int(who))
b = b''.join(r[0] + (b'' if r[1] & 1 else b'\\n') for r in c.execute(e, (int(sys.argv[2]),)))
if who in ('', 'ours'):
    b += b''.join(r[0] for r in c.execute(q.format('bytes', 'pending'), (int(sys.argv[2]),)))
print(len(b))" "$1" "$wid" "${2:-}" 2>/dev/null || echo 0
}
jq_count() { python3 -c "
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$@" 2>/dev/null || echo -1; }
writes() { holder_cmd W "write 2 $1 100" | tr ' ' '\n' | grep -c '^0$'; }
lines() { holder_cmd W "lines 2 $1 100" | tr ' ' '\n' | grep -c '^0$'; }
got_bytes() { stat -c %s "$out/got" 2>/dev/null || echo 0; }
rounds() { cat "$out/rounds" 2>/dev/null || echo 0; }
rounds_past() { [ "$(rounds)" -gt "$1" ]; }

# -- left to it, and mirrored ----------------------------------------------------
J=$out/left.db
MP=19477
# first: a follow of stdout only, which takes the journal's mirror right
# and keeps what others read of every stream, its own view or not
"$BPFSTDERR" follow -p "$wid" --stdout --json --journal "$J" > "$out/holder.json" 2> "$out/holder.err" & hpid=$!
check "left: the stdout follow's first cycle done (the mirror right is its)" wait_asleep "$hpid"
"$BPFSTDERR" record -d 0.2 --journal "$J" --metrics-address "127.0.0.1:$MP" 2> "$out/left.err" & rpid=$!
check "left: record's first cycle done (its reader tracing attached)" wait_asleep "$rpid"
"$BPFSTDERR" follow -p "$wid" --json --journal "$J" > "$out/left.json" 2> "$out/follow.err" & fpid=$!
check "left: follow's first cycle done" wait_asleep "$fpid"
python3 tests/vm/reader_loop.py "$wid" 2 2 "$out/got" "$out/rounds" "$out/stop" & opid=$!
# a read of the other's after record started: an empty one is a read too
check "left: the other reader read twice" wait_until 120 rounds_past 1
# right after one of its rounds: the bytes wait 2 s for its next, while
# record's cycles (0.2 s) see them
r0=$(rounds)
check "left: the other reader's next round" wait_until 120 rounds_past "$r0"
# 5000 bytes: its 4096-byte reads split the 41st message
check_eq "left: 50 writes of a 100-byte line succeed" "$(lines 50)" 50
got_all() { [ "$(got_bytes)" -ge "$1" ]; }
check "left: the other reader got them" wait_until 120 got_all 5000
check_eq "left: ... every byte, once" "$(got_bytes)" 5000
said() { grep -q "read by python3($opid) too: left to it" "$out/left.err"; }
check "left: record said it left stderr to python3($opid)" wait_until 60 said
check_eq "left: ... once" "$(grep -c 'left to it' "$out/left.err")" 1
mirrored() { [ "$(journal_bytes "$J" "$opid")" -ge "$1" ]; }
check "left: the journal has what it read, mirrored (marked with its pid)" wait_until 60 mirrored 5000
check_eq "left: ... all 5000 bytes, once" "$(journal_bytes "$J" "$opid")" 5000
check_eq "left: ... as 50 whole lines of python3's, the one its reads split among them" \
	"$(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.stream = 2 and e.reader_pid = $opid and e.reader_comm = 'python3' and length(e.text) = 99 and e.flags = 0")" 50
check_eq "left: ... and no other event (no piece of a line as a message)" \
	"$(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid")" 50
check_eq "left: record read none of it itself" "$(journal_bytes "$J" ours)" 0
shown() { [ "$(jq -s "[.[] | select(.reader.pid == $opid and .reader.comm == \"python3\")] | length" "$out/left.json")" -ge "$1" ]; }
check "left: follow showed them, each naming python3($opid)" wait_until 60 shown 50
check_eq "left: ... 50 events, all so marked" "$(jq -s 'length' "$out/left.json")" 50
check_eq "left: follow said it left stderr too" "$(grep -c "read by python3($opid) too: left to it" "$out/follow.err")" 1
top_says() {	# top's snapshot of wid's stderr: mirrored events, and by whom
	"$BPFSTDERR" top -b -j -n 1 --journal "$J" 2> /dev/null |
		jq -r ".programs[] | select(.id == $wid) | .mirrored.stderr | \"\\(.events) \\(.comm) \\(.pid)\""
}
check_eq "left: top (from the journal) counts them as python3's, mirrored" "$(top_says)" "50 python3 $opid"
check_eq "left: report --json names python3 as their reader: 50 messages, 5000 bytes" \
	"$("$BPFSTDERR" report --json --journal "$J" -p "$wid" 2> /dev/null |
		jq -c "[.programs[] | select(.id == $wid) | .read_by[] | [.stream, .comm, .pid, .faults, .messages, .bytes]]")" \
	"[[\"stderr\",\"python3\",$opid,0,50,5000]]"
check "left: ... and its text says so" grep -q "stderr read by python3($opid) too: 0 fault reports, 50 messages, 5000 bytes, mirrored" \
	<("$BPFSTDERR" report --journal "$J" -p "$wid" 2> /dev/null)
mirrored_metric() {	# the counter record exports for python3's reads of wid's stderr
	curl -sf "http://127.0.0.1:$MP/metrics" |
		sed -n "s/^bpfstderr_mirrored_total{prog_id=\"$wid\",.*stream=\"stderr\",reader=\"python3\"} //p"
}
metric_at() { [ "$(mirrored_metric)" = "$1" ]; }
check "left: record's metrics count python3's 50 lines (bpfstderr_mirrored_total)" wait_until 60 metric_at 50
check_eq "left: the stdout follow showed none of them" "$(jq -s length "$out/holder.json")" 0
# the stdout follow kept them (it was first); gone, record or follow
# keeps what comes next
kill -TERM "$hpid"; wait "$hpid"
check_eq "left: the stdout follow ends 0" "$?" 0
check_eq "left, the keeper gone: 50 more lines" "$(lines 50)" 50
check "left, the keeper gone: the other reader got them" wait_until 120 got_all 10000
check "left, the keeper gone: another mirrored them (follow showed them)" wait_until 60 shown 100
check "left, the keeper gone: record's metric says 100" wait_until 60 metric_at 100
check_eq "left, the keeper gone: the journal has all 100 lines of python3's, once" \
	"$(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.reader_pid = $opid and length(e.text) = 99 and e.flags = 0") $(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid")" \
	"100 100"
kill -TERM "$rpid"; wait "$rpid"
check_eq "left: record ends 0" "$?" 0
kill -TERM "$fpid"; wait "$fpid"
check_eq "left: follow ends 0" "$?" 0
check_eq "left: follow showed 100 events, all mirrored" \
	"$(jq -s "[.[] | select(.reader.pid == $opid)] | length" "$out/left.json") $(jq -s length "$out/left.json")" "100 100"

# -- --steal: all read, each byte reaches one of them ------------------------
# A second reader reads every 20 ms, racing record's drains (0.2 s): lines
# split between reads of different readers; the journal has every byte,
# read or mirrored, once (its events may be pieces: see NOTES in the man
# page, --steal)
J=$out/steal.db
"$BPFSTDERR" record -d 0.2 --steal --journal "$J" 2> "$out/steal.err" & rpid=$!
check "steal: record's first cycle done" wait_asleep "$rpid"
python3 tests/vm/reader_loop.py "$wid" 2 0.02 "$out/fgot" "$out/frounds" "$out/fstop" & fast=$!
frounds_past() { [ "$(cat "$out/frounds" 2>/dev/null || echo 0)" -gt "$1" ]; }
check "steal: the fast reader read twice" wait_until 120 frounds_past 1
before=$(got_bytes)
for b in 1 2 3 4 5; do
	check_eq "steal: 10 writes of a 100-byte line succeed ($b)" "$(lines 10)" 10
done
# all readers done: the stream is empty (the capacity iterator)
emptied() { [ "$(capacity "$wid")" = 0 ]; }
check "steal: the stream was read to its end (capacity 0)" wait_until 120 emptied
r1=$(rounds)
check "steal: the slow reader read once more after" wait_until 120 rounds_past "$((r1 + 1))"
touch "$out/fstop"; wait "$fast"
fgot=$(stat -c %s "$out/fgot" 2>/dev/null || echo 0)
theirs=$(($(got_bytes) - before + fgot))
all_kept() { [ "$(journal_bytes "$J")" -ge 5000 ]; }
check "steal: the journal has every byte, read or mirrored" wait_until 60 all_kept
kill -TERM "$rpid"; wait "$rpid"
check_eq "steal: record ends 0" "$?" 0
# what record itself read: the kernel's return values, summed by record
# (progs.read_err counts reads, never mirrored bytes)
stolen=$(jq_count "$J" "select read_err from progs where id = $wid")
echo "# steal: record read $stolen bytes, the other readers $theirs ($fgot the fast one);" \
	"$(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.reader_pid is not null") events marked mirrored," \
	"$(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and length(e.text) != 99") not one whole line"
check_eq "steal: every byte reached one reader: record's and the others' add up to 5000" \
	"$((stolen + theirs))" 5000
check_eq "steal: ... and the journal has each once" "$(journal_bytes "$J")" 5000
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
# -- read by another, then unloaded before bpfstderr's next cycle ------------
# As a scheduler that reads its last report and exits: record, stopped
# meanwhile, never saw the program loaded, and still keeps what the other
# process read of it, under the program's own identity (the mirror's
# records carry it). Oracles: the other reader's bytes, and bpftool's tag
# and name for the program while it was loaded.
J=$out/unloaded.db
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/unloaded.err" & rpid=$!
check "unloaded: record's first cycle done" wait_asleep "$rpid"
kill -STOP "$rpid"
start_holder U writer || fail "unloaded: holdprog writer loads"
uid=$(prog_id U writer)
uident=$(bpftool prog show id "$uid" --json | jq -r '"\(.tag) \(.name)"')
check_eq "unloaded: 20 writes of a 100-byte line succeed" \
	"$(holder_cmd U "lines 2 20 100" | tr ' ' '\n' | grep -c '^0$')" 20
python3 tests/vm/raw_read.py "$uid" 2 > "$out/unloaded.got" & rr=$!
wait "$rr"
check_eq "unloaded: the other reader got 2000 bytes" "$(stat -c %s "$out/unloaded.got")" 2000
stop_holder U
check_eq "unloaded: the program is gone before record's next cycle" \
	"$(bpftool prog show id "$uid" > /dev/null 2>&1 && echo loaded || echo gone)" gone
kill -CONT "$rpid"
unloaded_kept() { [ "$(jq_count "$J" "select count(*) from events e join progs p on p.row = e.prog where p.id = $uid")" -ge 20 ]; }
check "unloaded: the journal has its lines, mirrored" wait_until 60 unloaded_kept
check_eq "unloaded: ... 20 whole lines of python3's, 2000 bytes, as the reader got" \
	"$(jq_count "$J" "select count(*) || ' ' || sum(length(e.text) + 1) from events e join progs p on p.row = e.prog where p.id = $uid and e.reader_pid = $rr and e.reader_comm = 'python3' and e.flags = 0")" \
	"20 2000"
check_eq "unloaded: ... under the program's tag and name (bpftool's)" \
	"$(jq_count "$J" "select tag || ' ' || cast(name as text) from progs where id = $uid")" "$uident"
check_eq "unloaded: report names python3 as their reader" \
	"$("$BPFSTDERR" report --json --journal "$J" 2> /dev/null |
		jq -c "[.programs[] | select(.id == $uid) | .read_by[] | [.stream, .comm, .pid, .messages, .bytes]]")" \
	"[[\"stderr\",\"python3\",$rr,20,2000]]"
kill -TERM "$rpid"; wait "$rpid"
check_eq "unloaded: record ends 0" "$?" 0

stop_holder W
finish
