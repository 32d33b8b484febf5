# Inside a lab guest (tests/vm/lab.sh), where stream writes work and the
# fill wake and rescue thread run: a follow whose reader does not read
# (`follow | less`, the pager held) keeps no stream from record. Its
# output waits for room, not its main thread in write(2), so it goes on
# cycling: what its rescue thread reads ahead is committed and its read
# rights go as in any cycle. Before, it sat in write(2) while its rescue
# read on into memory under the stream's right: those lines reached no
# journal, nor any other process, until its reader read again ("follow
# kept them" failed on 7.3.4).
# Oracles: the writes' own return values, the journal (Python's sqlite3),
# the pipe full (FIONREAD), and every line out once the pager reads.
. tests/lib.sh

lab_start
J=$out/j.db
start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
sq() { sql1 "$J" "$1"; }
kept() { [ "$(sq "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.stream = 1")" = "$1" ]; }
lines() { holder_lines W "$1"; }
no_room() {	# the pipe takes no more: no POLLOUT on our own (read-write) end of it
	python3 -c 'import select, sys
p = select.poll(); p.register(int(sys.argv[1]), select.POLLOUT)
sys.exit(1 if p.poll(0) else 0)' "${1:-$pager}"
}
full() { no_room; }

mkfifo "$out/pipe"
exec {pager}<> "$out/pipe"	# the pager: holds the pipe, reads nothing until told
"$BPFSTDERR" follow -p "$wid" --json --journal "$J" > "$out/pipe" 2> "$out/follow.err" {pager}<&- & fpid=$!
check "follow's first cycle done" wait_asleep "$fpid"
# 512 lines of 500 bytes, 128 a run: past the fill mark (follow's rescue
# reads them under the stream's right), and more JSON than the pipe takes
burst() { echo $(( $(lines 128) + $(lines 128) + $(lines 128) + $(lines 128) )); }
n1=$(burst)
echo "# $n1 of 512 writes taken"
check "follow kept them" wait_until 120 kept "$n1"
filled() {	# else what is in the pipe, for the log
	wait_until 120 full && return 0
	echo "# the pipe had room; follow's syscall $(cut -d' ' -f1 "/proc/$fpid/syscall" 2>/dev/null)"
	return 1
}
check "... and filled the pipe nobody reads" filled
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/record.err" {pager}<&- & rpid=$!
check "record's first cycle done, sharing the journal" wait_asleep "$rpid"
n2=$(burst)
n=$((n1 + n2))
echo "# $n2 of 512 more writes taken"
check "the journal keeps them while follow's reader does not read" wait_until 120 kept "$n"
check "the pipe still full then" full

exec {rd}< "$out/pipe"
cat <&"$rd" > "$out/follow.json" {pager}<&- {rd}<&- & cpid=$!
exec {pager}<&- {rd}<&-
messages() {	# follow's stdout events of 499 x's, and its other lines
	jq -s --argjson i "$wid" '[.[] | select(.prog.id == $i and .stream == "stdout" and .text == ("x" * 499))] | length' "$out/follow.json"
}
shown() { [ "$(messages)" -ge "$n" ]; }
check "once read again, follow printed all $n lines" wait_until 120 shown
kill -TERM "$fpid" "$rpid"
wait "$fpid"; rf=$?
wait "$rpid"; rr=$?
wait "$cpid"
check_eq "follow and record end 0" "$rf $rr" "0 0"
check_eq "follow printed each line once, nothing else but the stream found full" \
	"$(messages) $(jq -s '[.[] | select(.kind != "message" and .kind != "stream_full")] | length' "$out/follow.json")" \
	"$n 0"
check_eq "the journal has each once" "$(sq "select count(*) from events")" "$n"
check_eq "follow said nothing on stderr" "$(cat "$out/follow.err")" ""

# -- the reader gone (| head) while follow holds bytes it read ahead --------
# What follow's rescue read under the stream's right is in no journal
# and no other process: the reader going must not lose it. The lines its
# rescue took off the stream (capacity 0) after the pipe filled reach the
# journal once follow has ended, with exit 0 (issue 34 item 1: the run
# used to break on EPIPE and free them).
J=$out/gone.db
mkfifo "$out/pipe2"
exec {p2}<> "$out/pipe2"
"$BPFSTDERR" follow -p "$wid" --json --journal "$J" > "$out/pipe2" 2> "$out/gone.err" {p2}<&- & fpid=$!
check "gone: follow's first cycle done" wait_asleep "$fpid"
n1=$(burst)
check "gone: follow kept the first lines" wait_until 120 kept "$n1"
full2() { no_room "$p2"; }
check "gone: ... and filled the pipe" wait_until 120 full2
n2=$(burst)
taken() { [ "$(capacity "$wid" stdout)" = 0 ]; }
check "gone: follow's rescue took the next lines off the stream" wait_until 120 taken
exec {p2}<&-	# the reader goes: follow's next write fails (EPIPE)
ended() { [ ! -e "/proc/$fpid" ] || [ "$(awk '{ print $3 }' "/proc/$fpid/stat" 2>/dev/null)" = Z ]; }
check "gone: follow ends" wait_until 120 ended
kill -KILL "$fpid" 2>/dev/null
wait "$fpid"
check_eq "gone: ... with exit 0" "$?" 0
check "gone: the journal has every line taken" kept "$((n1 + n2))"
echo "# gone: $(sq "select count(*) from events") of $((n1 + n2)) lines in the journal"
stop_holder W
finish
