# Inside a lab guest (tests/vm/lab.sh), where stream writes work and the
# fill wake and rescue thread run: a follow, then a top, suspended with
# Ctrl-Z (SIGTSTP) keeps no stream from record. Its rescue reads a busy stream under the
# stream's read right, which no other process may take while it is held
# (journal.h); a process stopped holding it kept it for as long as it
# stayed stopped, and record, sharing the journal, left that stream to it:
# the stream filled and the kernel refused the program's writes. On
# SIGTSTP follow now lets go (rescue stopped, what it holds committed,
# rights released), then stops; on SIGCONT it carries on.
# top (ncurses, in tmux under an interactive shell, as a person runs it)
# holds a stream's right for the length of its drain; its screen library
# stopped it where the signal found it, mid-drain: with that right and
# the journal's write lock, so record could read nothing at all. Now it
# lets go as follow does, the terminal given back, and on fg draws its
# screen again; Ctrl-Z typed and kill -TSTP alike.
# Oracles: the writes' own return values (0: the kernel took it), the
# stream's capacity (the pinned iterator), the journal (Python's sqlite3),
# the process state (/proc), the locks (/proc/locks), tmux for the pane.
. tests/lib.sh

S=bpfstderr-lab-stopped-$$
LAB_CLEANUP='tmux kill-session -t "$S" 2>/dev/null'
lab_start
J=$out/j.db
start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
sq() { sql1 "$J" "$1"; }
kept() { [ "$(sq "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.stream = 1")" = "$1" ]; }
lines() { holder_lines W "$1"; }
drained() { [ "$(capacity "$wid" stdout)" = 0 ]; }
# the stream's read right: an OFD lock on byte 2^40 + 2 * id of the journal
right_held() {
	local ino start
	ino=$(stat -c %i "$J") start=$(( (1 << 40) + 2 * wid ))
	grep -q "OFDLCK .*:$ino $start $start\$" /proc/locks
}

no_right() { ! right_held; }
# freeze WHO PID: a storm past the fill mark, which WHO reads under the
# stream's right; WHO frozen (SIGSTOP) at a moment it holds the right,
# then let run and at once told to stop (SIGTSTP): Ctrl-Z in a storm.
# (SIGCONT would discard a SIGTSTP sent before it.) $taken: the lines
# the kernel took, all told. Fails when WHO kept the right: what record
# is then checked for could only time out.
freeze() {
	local tries=0 spid
	rm -f "$out/calm"
	storm() { while [ ! -e "$out/calm" ]; do lines 64 >> "$out/taken"; done; }
	storm & spid=$!
	while [ "$tries" -lt 100 ]; do
		tries=$((tries + 1))
		kill -STOP "$2"
		right_held && break
		kill -CONT "$2"
		sleep 0.1
	done
	touch "$out/calm"; wait "$spid"
	taken=$(awk '{ n += $1 } END { print n + 0 }' "$out/taken")
	echo "# $1 frozen at try $tries; $taken lines taken"
	# the case under test: without it, nothing below tells the fix apart
	check "$1 held the stream's read right when frozen" right_held
	kill -CONT "$2"; kill -TSTP "$2"
	check "$1 stops on SIGTSTP" wait_until 60 stopped "$2"
	check "$1 kept what it read before it stopped" wait_until 60 kept "$taken"
	check "... and holds no read right while stopped" no_right
	no_right
}
# drained_by_record WHO RUNS: RUNS runs of 128 lines (64 KB each; the
# stream holds 100,000 bytes) while WHO is stopped, each drained by the
# record running ($rpid) before the next; $n: the lines taken
drained_by_record() {
	local i runs=0
	n=0
	for i in $(seq "$2"); do
		n=$((n + $(lines 128)))
		wait_until 20 drained && runs=$((runs + 1))
	done
	check_eq "the kernel took every line while $1 was stopped" "$n" $(($2 * 128))
	check_eq "record drained each run while $1 was stopped" "$runs" "$2"
	check "the journal kept them" wait_until 60 kept "$((taken + n))"
}

# a process group of its own, as a shell's job: SIGTSTP to a process of
# an orphaned group (this script's, in the guest) is discarded
set -m
"$BPFSTDERR" follow -p "$wid" --json --journal "$J" > /dev/null 2> "$out/follow.err" & fpid=$!
set +m
check "follow's first cycle done" wait_asleep "$fpid"
# follow's rescue reads the storm under the right, kept 1 s past its
# last wake
freeze follow "$fpid" || finish
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/record.err" & rpid=$!
check "record's first cycle done, sharing the journal" wait_asleep "$rpid"
drained_by_record follow 5
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

# -- top, in a pane's interactive shell: its job, as a person's ------------
taken=$((taken + n + n2))
echo "$taken" > "$out/taken"
tmux new-session -d -s "$S" -x 160 -y 40 "bash --norc --noprofile -i"
keys "$BPFSTDERR top -d 0.01 --journal $J 2> $out/top.err" Enter
check "top shows its screen" wait_for "bpfstderr top - "
tpid=$(descendants "$(tmux display -p -t "$S" '#{pane_pid}')" bpfstderr)
check "top is the pane's shell's job" test -n "$tpid"
# top drains the storm each tick, holding the right the while. The shell
# sees SIGSTOP and takes the terminal back: SIGTSTP finds top a job in
# the background, which giving the terminal back stops (SIGTTOU) after it
# let go; fg continues it, not to be stopped once more
freeze top "$tpid" || finish
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/record.err" & rpid=$!
check "record's first cycle done, sharing the journal" wait_asleep "$rpid"
drained_by_record top 3
taken=$((taken + n))
keys fg Enter
check "fg: top draws its screen again" wait_for "bpfstderr top - "
check_eq "... in the alternate screen" "$(tmux display -p -t "$S" '#{alternate_on}')" 1
# Ctrl-Z typed (top reads keys in cbreak mode: the terminal sends SIGTSTP)
keys C-z
check "Ctrl-Z typed stops top" wait_until 60 stopped "$tpid"
check "... holding no read right" no_right
check "... the shell says so, its terminal back" wait_until 60 said_stopped
check_eq "... out of the alternate screen, cursor shown" \
	"$(tmux display -p -t "$S" '#{alternate_on} #{cursor_flag}')" "0 1"
drained_by_record top 2
taken=$((taken + n))
keys fg Enter
check "fg: top runs again" wait_for "bpfstderr top - "
kill -TERM "$rpid"; wait "$rpid"; rr=$?
n2=$(lines 128)
check "... and drains what comes after into the journal" wait_until 60 kept "$((taken + n2))"
keys q
keys 'echo "top rc=$?"' Enter
check "q: top ends 0" wait_for "top rc=0"
check_eq "record ends 0" "$rr" 0
check_eq "the journal has each line once" "$(sq "select count(*) from events")" "$((taken + n2))"
check_eq "top said nothing on stderr" "$(cat "$out/top.err")" ""
stop_holder W
finish
