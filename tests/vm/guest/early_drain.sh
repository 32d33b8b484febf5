# Inside a lab guest (tests/vm/lab.sh), where stream writes work: a stream
# that passes FILL_MARK bytes accounted (bpf/fill.h) is read at once, not
# at the next interval: the kernel's push wakes the rescue thread (the
# fill wake: fexit on the stream functions, which Debian's kernels allow),
# which reads it into memory; and what it read reaches the journal, in
# order, at the last drain, also for a program unloaded meanwhile.
# Oracles: the pinned capacity iterator (bpftool), read while record runs
# with a 3600 s interval (no periodic drain while a step runs, however
# slow the guest: SIGTERM's last drain collects everything), and the
# journal read with Python's sqlite3 (every
# 'x' written). Without the fill wake (BPFSTDERR_NO_FILL_WAKE=1), a record
# whose last drain read bytes asks the watch every 10 ms (tick), and one
# idle so far does not (off): it leaves the bytes where they are, so the
# wake, or the tick, is what read them. Last, record and follow share a
# journal through a storm of numbered messages: the journal has them in
# the kernel's order (read rights, journal.h). The kernel's
# /proc/PID/status says record runs without transparent huge pages.
. tests/lib.sh

lab_start
mark=$(awk '$1 == "#define" && $2 == "FILL_MARK" { print $3 }' bpf/fill.h)

check_eq "doctor --json: early drain by the fill wake" \
	"$("$BPFSTDERR" doctor --json | jq -r .early_drain.by)" fill_wake
check_eq "doctor --json: BPFSTDERR_NO_FILL_WAKE=1: by the watch's tick" \
	"$(BPFSTDERR_NO_FILL_WAKE=1 "$BPFSTDERR" doctor --json | jq -c '.early_drain | [.by, .no_fill_wake_set]')" \
	'["watch_tick",true]'

start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
journal_bytes() {	# journal_bytes J ID: stderr bytes kept, and whether all are 'x'
	python3 -c "
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = 'select {} from {} t join progs p on p.row = t.prog where p.id = ? and t.stream = 2'
b = b''.join(r[0] for r in c.execute(q.format('text', 'events') + ' order by seq', (int(sys.argv[2]),)))
b += b''.join(r[0] for r in c.execute(q.format('bytes', 'pending'), (int(sys.argv[2]),)))
print(len(b), set(b) == {ord('x')})" "$1" "$2"
}
# emptied ID [stdout]: the capacity of program ID's stderr (or stdout)
# once it is 0, or after 120 s (an emulated guest is slow; the interval it
# must beat is 3600 s)
emptied() {
	local i c
	for i in $(seq 1200); do
		c=$(capacity "$1" "${2:-}")
		[ "$c" = 0 ] && break
		sleep 0.1
	done
	echo "$c"
}
# fill_attached: up to 120 s until a record's first wait attached the fill
# wake (bpftool lists its programs)
fill_attached() {
	local i
	for i in $(seq 1200); do
		bpftool prog show name fill_commit > /dev/null 2>&1 && return
		sleep 0.1
	done
}
writes() { holder_cmd W "write 2 $1 500" | tr ' ' '\n' | grep -c '^0$'; }
thp_enabled() { awk '$1 == "THP_enabled:" { print $2 }' /proc/"$1"/status; }
# thp_wait PID: up to 60 s until its rescue thread, just started, turned them off
thp_wait() {
	for _ in $(seq 600); do [ "$(thp_enabled "$1")" = 0 ] && return; sleep 0.1; done
}
# the write that reaches the mark is the last of each burst: with writes
# after it, a drain the wake brought may come before them, and what they
# add (below the mark) waits for the 3600 s interval
below=$((mark / 500 - 10)) over=10
for mode in wake tick off; do
	J=$out/$mode.db
	if [ $mode = wake ]; then
		"$BPFSTDERR" record -d 3600 --journal "$J" 2> "$out/$mode.err" & rpid=$!
	else
		# tick: busy from record's first drain, which reads this message
		pre=0
		[ $mode = tick ] && holder_cmd W "write 2 1 37" > /dev/null && pre=37
		BPFSTDERR_NO_FILL_WAKE=1 "$BPFSTDERR" record -d 3600 --journal "$J" 2> "$out/$mode.err" & rpid=$!
	fi
	# record's first cycle is behind it (it waits in ppoll): off's was
	# idle, tick's read the message, and wake's first wait attaches the
	# fill wake (bpftool sees the programs)
	check "$mode: record's first cycle done" wait_asleep "$rpid"
	if [ $mode = wake ]; then
		fill_attached
		# the kernel's view (a khugepaged collapse stalled the thread's
		# reads 0.26 s), where this kernel has them: this shell does
		thp_wait "$rpid"
		if [ "$(thp_enabled $$)" = 1 ]; then
			check_eq "wake: record runs without transparent huge pages" \
				"$(thp_enabled "$rpid")" 0
		else
			skip "wake: record runs without transparent huge pages" \
				"this kernel has none (THP_enabled: $(thp_enabled $$) for this shell)"
		fi
	fi
	[ $mode = tick ] && emptied "$wid" > /dev/null
	check_eq "$mode: $below writes of 500 bytes succeed" "$(writes $below)" "$below"
	sleep 2
	check_eq "$mode: $((below * 500)) bytes, under the $mark-byte mark: left for the interval" \
		"$(capacity "$wid")" "$((below * 500))"
	check_eq "$mode: $over more writes succeed" "$(writes $over)" "$over"
	if [ $mode != off ]; then
		check_eq "$mode: past the mark: drained at once (capacity 0)" "$(emptied "$wid")" 0
	else
		sleep 3
		check_eq "off: past the mark: still there, for the 3600 s interval" \
			"$(capacity "$wid")" "$(((below + over) * 500))"
	fi
	kill -TERM "$rpid"; wait "$rpid"
	check_eq "$mode: record ends 0" "$?" 0
	# what was read ahead reached the journal at the last drain: every
	# 'x' written, in messages or the held tail (Python's sqlite3)
	check_eq "$mode: the journal has every byte written, as written" \
		"$(journal_bytes "$J" "$wid")" "$(((below + over) * 500 + ${pre:-0})) True"
done

# -- read ahead, then unloaded: what was read is the program's last --------
start_holder G writer || { fail "holdprog writer loads (gone)"; finish; }
gid=$(prog_id G writer)
J=$out/gone.db
"$BPFSTDERR" record -d 3600 --journal "$J" 2> "$out/gone.err" & rpid=$!
check "gone: record's first cycle done" wait_asleep "$rpid"
fill_attached
check_eq "gone: $((below + over)) writes succeed" "$(holder_cmd G "write 2 $((below + over)) 500" | tr ' ' '\n' | grep -c '^0$')" "$((below + over))"
check_eq "gone: read ahead (capacity 0)" "$(emptied "$gid")" 0
stop_holder G
sleep 1
kill -TERM "$rpid"; wait "$rpid"
check_eq "gone: record ends 0" "$?" 0
check_eq "gone: the unloaded program's bytes are in the journal" "$(journal_bytes "$J" "$gid")" \
	"$(((below + over) * 500)) True"
# -- refused anyway: a burst faster than any reader is said to be lost ------
# One run of the writer pushes 256 x 500 bytes: more than the stream holds,
# in less time than a wake takes. Oracle: the writes' own return values
# (-28, ENOSPC: refused as full); whatever the rescue managed to read in
# between, record's journal says the stream was found full exactly when
# the kernel refused any (the fill wake counts refusals: drains do not
# see a full stream once the rescue reads ahead).
J=$out/refused.db
"$BPFSTDERR" record -d 3600 --journal "$J" 2> "$out/refused.err" & rpid=$!
check "refused: record's first cycle done" wait_asleep "$rpid"
fill_attached
rets=$(holder_cmd W "write 2 256 500")
refused=$(tr ' ' '\n' <<<"$rets" | grep -c '^-28$')
echo "# refused: $refused of 256 writes (-ENOSPC)"
sleep 3
kill -TERM "$rpid"; wait "$rpid"
check_eq "refused: record ends 0" "$?" 0
check_eq "refused: the journal keeps every byte the kernel took" "$(journal_bytes "$J" "$wid")" \
	"$(((256 - refused) * 500)) True"
if [ "$refused" -gt 0 ]; then
	check_eq "refused: report --json: stderr found full ($refused writes refused)" \
		"$("$BPFSTDERR" report --json --journal "$J" 2>/dev/null |
		   jq --argjson i "$wid" '[.programs[] | select(.id == $i) | .streams.stderr.full_at_drain] | .[0]')" \
		true
else	# a stream near its limit counts as found full too: nothing to assert
	skip "refused: report says the stream was found full" "the rescue kept up: no write refused"
fi
stop_holder W

# journal_runs J ID: program ID's "run N" stdout messages in journal J
# (Python's sqlite3): how many, whether N only grows in seq order, and
# how many stdout events there are in all
journal_runs() {
	python3 -c "
import re, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = 'select text from events e join progs p on p.row = e.prog where p.id = ? and e.stream = 1 order by seq'
rows = [bytes(t) for (t,) in c.execute(q, (int(sys.argv[2]),))]
n = [int(m.group(1)) for t in rows for m in [re.search(rb'run (\\d+)', t)] if m]
print(len(n), len(n) > 0 and all(a < b for a, b in zip(n, n[1:])), len(rows))" "$1" "$2"
}
# -- two drainers, one journal: read rights ----------------------------------
# record and follow --journal share one journal, each with a rescue thread
# reading ahead, outside its transactions too. Only the process holding a
# stream's read right (journal.h) reads it, so the journal keeps the
# kernel's order. demo_print writes "run N" on stdout, N counting its runs:
# 6000 runs push ~200 KB, twice what a stream holds, read while they come.
# Oracle: the journal's stdout messages in seq order (Python's sqlite3) are
# runs 1, 2, 3, ... none twice, none out of order, and all of them when
# the stream was never found full.
start_holder D demo || { fail "holdprog demo loads"; finish; }
did=$(prog_id D demo_print)
J=$out/shared.db
"$BPFSTDERR" record -d 3600 --journal "$J" 2> "$out/shared.err" & rpid=$!
# follow starts on the journal record made (two processes creating one at
# once: see live.sh)
check "shared: record's first cycle done" wait_asleep "$rpid"
"$BPFSTDERR" follow -p "$did" --json --journal "$J" > "$out/shared.json" 2> "$out/shared.ferr" & fpid=$!
# follow shows what comes after its cursor, taken in its set-up: both
# past their first wait (in ppoll), their fill wakes attached, before
# the first run
check "shared: follow's first cycle done" wait_asleep "$fpid"
check_eq "shared: demo_print ran 6000 times" "$(holder_cmd D "fault print 6000")" "ran 6000"
check_eq "shared: stdout read while it came (capacity 0)" "$(emptied "$did" stdout)" 0
# record's last drain and commit first: follow's last look at the journal
# comes after it
kill -TERM "$rpid"; wait "$rpid"; rr=$?
kill -TERM "$fpid"; wait "$fpid"; rf=$?
check_eq "shared: record and follow end 0" "$rr $rf" "0 0"
runs=$(journal_runs "$J" "$did")
read -r nruns ordered nstdout <<< "$runs"
check_eq "shared: the journal has the runs once each, in the kernel's order" "$ordered" True
full=$("$BPFSTDERR" report --json --journal "$J" 2>/dev/null |
       jq --argjson i "$did" '[.programs[] | select(.id == $i) | .streams.stdout.full_at_drain] | .[0]')
if [ "$full" = true ]; then
	skip "shared: every run is in the journal" "stdout was found full: the kernel refused some"
else
	check_eq "shared: every run is in the journal" "$nruns" 6000
fi
# every run the journal has, follow showed (by its number); an event
# follow showed that the journal has not is printed, not failed: seen
# once in four runs on 6.18 (5846 shown, 5845 kept), also before this
# change, and not understood yet
shown=$(jq -r 'select(.stream == "stdout") | .text' "$out/shared.json" | grep -oE 'run [0-9]+' | sort -u)
kept=$(python3 -c "
import re, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = 'select text from events e join progs p on p.row = e.prog where p.id = ? and e.stream = 1'
for (t,) in c.execute(q, (int(sys.argv[2]),)):
    for m in re.finditer(rb'run \\d+', bytes(t)):
        print(m.group(0).decode())" "$J" "$did" | sort -u)
check_eq "shared: follow showed every run the journal has" "$(comm -13 <(echo "$shown") <(echo "$kept") | wc -l)" 0
n_shown=$(jq -s '[.[] | select(.stream == "stdout")] | length' "$out/shared.json")
[ "$n_shown" = "$nstdout" ] || echo "# shared: follow showed $n_shown stdout events, the journal has $nstdout"

# -- a follow that ends mid-storm keeps what it read ahead -------------------
# A program faults 5000 times a second for 5 s (bench/storm.c gen) while
# record keeps a journal and follow --all | head -c 3000 shares it: head
# goes after a few events, and follow's next write fails (EPIPE) while its
# rescue thread holds reports read under its read right, which no other
# process could read: they go to the journal on the way out
# (session__end()). Oracle: the generator's own count of runs, one report
# each, less the reports the kernel refused (the stream full), against the
# journal's fault count (report --json). The refusals are counted apart,
# by a fill wake that reads nothing of the storm (a follow of the idle
# demo_print): its map "refused" (bpf/fill.bpf.c), read with bpftool
# while the storm's program is loaded. So a report follow read and lost
# fails the test, even in a storm that filled the stream.
J=$out/head.db
COUNTER=$BPFSTDERR
"$COUNTER" follow -p "$did" --no-journal > /dev/null 2> "$out/counter.err" & cpid=$!
check "head: the refusal counter's first cycle done (its fill wake attached)" wait_asleep "$cpid"
# refused_err ID: the most stderr refusals of program ID any map "refused"
# counted (the counter's, attached before the storm, counted them all)
refused_err() {
	local m n max=0
	for m in $(bpftool map show name refused -j 2>/dev/null | jq '.[].id'); do
		n=$(bpftool map dump id "$m" -j 2>/dev/null |
			jq --argjson i "$1" '[.[] | .formatted | select(.key == $i) | .value.n[1]] | .[0] // 0')
		[ "${n:-0}" -gt "$max" ] && max=$n
	done
	echo "$max"
}
# record at its default interval: it learns of the storm's program, loaded
# after it started, at its next cycle (wakes come only for programs it
# tracks), and reads it once follow is gone
"$BPFSTDERR" record --journal "$J" 2> "$out/head.err" & rpid=$!
check "head: record's first cycle done" wait_asleep "$rpid"
mkfifo "$out/gen.in"
"$HELPERS/../bench/storm" gen res_spin_lock demo_deadlock 5000 5 < "$out/gen.in" > "$out/gen" & gpid=$!
exec 5> "$out/gen.in"
gen_ready() { grep -qE '^(prog|refused)' "$out/gen"; }
wait_until 120 gen_ready
sid=$(awk '/^prog/ { print $2 }' "$out/gen")
if [ -z "$sid" ]; then
	skip "head: a storm of deadlock reports" "$(cat "$out/gen")"
else
	{ "$BPFSTDERR" follow --all --json --journal "$J" 2> "$out/head.ferr"; echo "$?" > "$out/head.rc"; } |
		head -c 3000 > /dev/null & hpid=$!
	follow_pid() { pgrep -f -n -- "follow --all --json --journal $J"; }
	follow_up() { follow_pid > /dev/null; }
	check "head: follow started" wait_until 60 follow_up
	check "head: follow's first cycle done" wait_asleep "$(follow_pid)"
	echo go >&5
	gen_done() { grep -q '^runs' "$out/gen"; }
	check "head: the storm ran" wait_until 600 gen_done
	wait "$hpid"
	check_eq "head: follow ended 0 once head went (EPIPE)" "$(cat "$out/head.rc")" 0
	# (but that this guest has no kernel debuginfo for its frames)
	check_eq "head: follow said nothing else" "$(grep -v 'no vmlinux with DWARF found' "$out/head.ferr")" ""
	check_eq "head: the storm's stderr read while it came (capacity 0)" "$(emptied "$sid")" 0
	refused=$(refused_err "$sid")
fi
# record's last drain while the storm's program is still loaded (the
# generator holds it until its input closes): an unloaded program's
# bytes are gone with it
kill -TERM "$rpid"; wait "$rpid"
check_eq "head: record ends 0" "$?" 0
kill -TERM "$cpid"; wait "$cpid"
check_eq "head: the counter ends 0" "$?" 0
exec 5>&-; wait "$gpid"
if [ -n "$sid" ]; then
	runs=$(awk '/^runs/ { print $2 }' "$out/gen")
	echo "# head: $(cat "$out/gen" | tr '\n' ' ')"
	rep=$("$BPFSTDERR" report --json --journal "$J" 2>/dev/null)
	faults=$(jq --argjson i "$sid" '[.programs[] | select(.id == $i) | .faults[]] | add // 0' <<< "$rep")
	echo "# head: the kernel refused $refused of $runs reports"
	check_eq "head: every report the kernel took is in the journal, the ones follow read ahead too" \
		"$faults" "$((runs - refused))"
fi
stop_holder D
finish
