# Inside a lab guest (tests/vm/lab.sh), where stream writes work and the
# fill wake and rescue thread run: a follow suspended with Ctrl-Z (SIGTSTP)
# keeps no stream from record. Its rescue reads a busy stream under the
# stream's read right, which no other process may take while it is held
# (journal.h); a process stopped holding it kept it for as long as it
# stayed stopped, and record, sharing the journal, left that stream to it:
# the stream filled and the kernel refused the program's writes. On
# SIGTSTP follow now lets go (rescue stopped, what it holds committed,
# rights released), then stops; on SIGCONT it carries on.
# Oracles: the writes' own return values (0: the kernel took it), the
# stream's capacity (the pinned iterator), the journal (Python's sqlite3),
# the process state (/proc).
. tests/lib.sh

lab_start
J=$out/j.db
start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
sq() { sql1 "$J" "$1"; }
kept() { [ "$(sq "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.stream = 1")" = "$1" ]; }
lines() { holder_lines W "$1"; }
drained() { [ "$(capacity "$wid" stdout)" = 0 ]; }
stopped() { [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ]; }
# the stream's read right: an OFD lock on byte 2^40 + 2 * id of the journal
right_held() {
	local ino start
	ino=$(stat -c %i "$J") start=$(( (1 << 40) + 2 * wid ))
	grep -q "OFDLCK .*:$ino $start $start\$" /proc/locks
}

# a process group of its own, as a shell's job: SIGTSTP to a process of
# an orphaned group (this script's, in the guest) is discarded
set -m
"$BPFSTDERR" follow -p "$wid" --json --journal "$J" > /dev/null 2> "$out/follow.err" & fpid=$!
set +m
check "follow's first cycle done" wait_asleep "$fpid"
# a storm past the fill mark: follow's rescue reads it under the right,
# kept 1 s past its last wake. Frozen (SIGSTOP) at a moment it holds the
# right, then let run and at once told to stop (SIGTSTP): Ctrl-Z in a
# storm. (SIGCONT would discard a SIGTSTP sent before it.)
storm() { while [ ! -e "$out/calm" ]; do lines 64 >> "$out/taken"; done; }
storm & spid=$!
tries=0
while [ "$tries" -lt 100 ]; do
	tries=$((tries + 1))
	kill -STOP "$fpid"
	right_held && break
	kill -CONT "$fpid"
	sleep 0.1
done
touch "$out/calm"; wait "$spid"
taken=$(awk '{ n += $1 } END { print n + 0 }' "$out/taken")
echo "# frozen at try $tries; $taken lines taken"
# the case under test: without it, nothing below tells the fix apart
check "follow held the stream's read right when frozen" right_held
kill -CONT "$fpid"; kill -TSTP "$fpid"
check "follow stops on SIGTSTP" wait_until 60 stopped "$fpid"
check "follow kept what it read before it stopped" wait_until 60 kept "$taken"
no_right() { ! right_held; }
check "... and holds no read right while stopped" no_right
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/record.err" & rpid=$!
check "record's first cycle done, sharing the journal" wait_asleep "$rpid"
# 5 runs of 128 lines (64 KB each; the stream holds 100,000 bytes): each
# drained by record before the next
runs=0 n=0
for i in 1 2 3 4 5; do
	n=$((n + $(lines 128)))
	wait_until 20 drained && runs=$((runs + 1))
done
check_eq "the kernel took every line while follow was stopped" "$n" 640
check_eq "record drained each run while follow was stopped" "$runs" 5
check "the journal kept them" wait_until 60 kept "$((taken + n))"
kill -CONT "$fpid"
check "follow runs again on SIGCONT" wait_asleep "$fpid"
n2=$(( $(lines 128) + $(lines 128) ))
check "... and the journal keeps what comes after" wait_until 60 kept "$((taken + n + n2))"
kill -TERM "$fpid" "$rpid"
wait "$fpid"; rf=$?
wait "$rpid"; rr=$?
check_eq "follow and record end 0" "$rf $rr" "0 0"
check_eq "the journal has each line once" "$(sq "select count(*) from events")" "$((taken + n + n2))"
check_eq "follow said nothing on stderr" "$(cat "$out/follow.err")" ""
stop_holder W
finish
