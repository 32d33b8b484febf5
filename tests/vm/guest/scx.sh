# Inside a lab guest (tests/vm/lab.sh): a real sched_ext scheduler, the
# kernel tree's own tools/sched_ext/scx_sdt with a bug of ours
# (tests/scx/*.patch, built on the host by tests/vm/scx.sh for the lab's
# 7.x kernel), schedules the guest while bpfstderr watches it. Its
# sdt_enqueue writes through a stale arena pointer -f N times, each a
# fault the kernel reports on that program's stderr; -r makes it read its
# own programs' streams (as sched-ext/scx's stream watcher does) and -a
# abort on a line starting with "ERROR: ".
#   alone:   record the only reader: every fault in the journal, one group
#            at the faulting line, kept after the scheduler exits
#   bpftool: the tree's bpftool empties the same stderr in a loop: every
#            report drained or mirrored, bpftool named, no piece a message
#   abort:   the scheduler aborts on its first report with record, follow
#            and top running; bpfstderr shows that report, mirrored
#   storm:   over 1,000 faults a second, the scheduler reading its stderr:
#            each report reaches one reader, bpfstderr shows them all
# Oracles: the scheduler's own counts (its faulting writes, the reports
# and bytes it read), bpftool's output, the patched source's line.
. tests/lib.sh

lab_start
D=$(bash tests/vm/scx.sh --dir "$(uname -r)" 2> "$out/scx.err") || {
	skip "scx_sdt" "no scheduler for this kernel: $(tail -n 1 "$out/scx.err")"
	finish
}
[ -e /sys/kernel/sched_ext/state ] || {
	skip "scx_sdt" "this kernel has no sched_ext (/sys/kernel/sched_ext)"
	finish
}
[ "$(cat /sys/kernel/sched_ext/state)" = disabled ] || {
	skip "scx_sdt" "another sched_ext scheduler is loaded"
	finish
}
seen=$("$BPFSTDERR" doctor --json | jq -r .other_readers.seen)
if [ "$seen" != true ]; then
	skip "scx_sdt" "this kernel refuses tracing the read command ($("$BPFSTDERR" doctor --json | jq -r .other_readers.errno))"
	finish
fi
# the faulting statement, in the source the scheduler was built from
LINE=$(grep -n 'stale->enqueue = __sync_fetch_and_add(&stale_writes, 1);' "$D/scx_sdt.bpf.c" | cut -d: -f1)
echo "# scx_sdt from $D (faulting line scx_sdt.bpf.c:$LINE)"
spid=""
LAB_CLEANUP='[ -n "$spid" ] && kill -INT "$spid" 2> /dev/null; wait'

# sched NAME ARGS...: the scheduler in the background (spid), its output
# in $out/NAME.out; up to 120 s until it schedules the guest
sched() {
	local name=$1
	shift
	"$D/scx_sdt" "$@" > "$out/$name.out" 2> "$out/$name.err" & spid=$!
	enabled() { [ "$(cat /sys/kernel/sched_ext/state)" = enabled ]; }
	check "$name: scx_sdt $* schedules the guest" wait_until 120 enabled
}
# writes NAME: the faulting writes the scheduler last said it made
writes() { sed -n 's/^bpfstderr-lab: .*stale_writes=\([0-9]*\) .*/\1/p' "$out/$1.out" | tail -n 1; }
writes_at() { [ "$(writes "$1")" = "$2" ]; }
# ended NAME FIELD: FIELD of the scheduler's last line
ended() { sed -n "s/^bpfstderr-lab: end .*$2=\([0-9]*\).*/\1/p" "$out/$1.out"; }
enqueue_id() { "$D/bpftool" -j prog show 2> /dev/null | jq '[.[] | select(.name == "sdt_enqueue")][0].id // empty'; }
# enq J JQ: JQ on report --json's sdt_enqueue (the journal J's only one)
enq() {
	"$BPFSTDERR" report --json --journal "$1" 2> /dev/null |
		jq -c "[.programs[] | select(.name == \"sdt_enqueue\")][0] | $2"
}
faults_at() { [ "$(enq "$1" .fault_count)" = "$2" ]; }
# at_line J: "kind count line file" per group
at_line() {
	enq "$1" '[.groups[] | "\(.kind) \(.count) \(.example.frames[] | select(.kind == "bpf") | "\(.line) \(.file | split("/") | last)")"]'
}
sched_stop() {	# NAME: SIGINT, then its exit status is 0
	kill -INT "$spid"
	wait "$spid"
	check_eq "$1: scx_sdt ends 0" "$?" 0
	spid=""
}
stop() { kill -TERM "$1"; wait "$1"; check_eq "$2 ends 0" "$?" 0; }

# -- alone: record the only reader -------------------------------------------
J=$out/alone.db
N=200
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/alone.rec" & rpid=$!
check "alone: record's first cycle done" wait_asleep "$rpid"
sched alone -f "$N"
check "alone: the scheduler made its $N faulting writes" wait_until 300 writes_at alone "$N"
check "alone: the journal has $N faults of sdt_enqueue" wait_until 120 faults_at "$J" "$N"
sched_stop alone
check_eq "alone: the scheduler says $N writes at its end" "$(ended alone stale_writes)" "$N"
stop "$rpid" "alone: record"
check_eq "alone, post-mortem: sdt_enqueue unloaded, $N faults, no message" \
	"$(enq "$J" '[.unloaded, .fault_count, .messages.stderr, (.read_by | length)]')" "[true,$N,0,0]"
check_eq "alone, post-mortem: one group of $N arena writes at scx_sdt.bpf.c:$LINE" \
	"$(at_line "$J")" "[\"arena_write $N $LINE scx_sdt.bpf.c\"]"
check "alone: report's text says so" grep -q "^  ${N}x arena_write at " \
	<("$BPFSTDERR" report --journal "$J" 2> /dev/null)

# -- bpftool: another reader of the same stderr, in a loop ------------------
J=$out/bpftool.db
N=200
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/bpftool.rec" & rpid=$!
check "bpftool: record's first cycle done" wait_asleep "$rpid"
sched bt -f "$N" -A "$out/bt.arm" -i 200
id=$(enqueue_id)
( r=0; while [ ! -e "$out/bt.stop" ]; do
	"$D/bpftool" prog tracelog stderr id "$id" > /dev/null 2>> "$out/bt.got"
	r=$((r + 1)); echo "$r" > "$out/bt.rounds"
	sleep 0.2
done ) & lpid=$!
bt_read() { [ -s "$out/bt.rounds" ]; }
check "bpftool: bpftool read once" wait_until 120 bt_read
# the faulting writes start now: bpftool is reading
touch "$out/bt.arm"
check "bpftool: the scheduler made its $N faulting writes" wait_until 300 writes_at bt "$N"
emptied() { [ "$(capacity "$id")" = 0 ]; }
check "bpftool: the stream was read to its end (capacity 0)" wait_until 120 emptied
check "bpftool: the journal has $N faults, drained or mirrored" wait_until 120 faults_at "$J" "$N"
touch "$out/bt.stop"; wait "$lpid"
sched_stop bt
stop "$rpid" "bpftool: record"
got=$(stat -c %s "$out/bt.got")
got_reports=$(grep -c '^ERROR: ' "$out/bt.got")
echo "# bpftool: $(cat "$out/bt.rounds") rounds read $got bytes, $got_reports reports;" \
	"read_by $(enq "$J" .read_by)"
check_eq "bpftool: $N faults, no message (no piece of a report), one group at scx_sdt.bpf.c:$LINE" \
	"$(enq "$J" '[.fault_count, .messages.stderr]') $(at_line "$J")" \
	"[$N,0] [\"arena_write $N $LINE scx_sdt.bpf.c\"]"
check_eq "bpftool: every reader named is bpftool" \
	"$(enq "$J" '[.read_by[] | [.stream, .comm]] | unique')" '[["stderr","bpftool"]]'
check_eq "bpftool: the bytes mirrored as bpftool's are the bytes bpftool printed" \
	"$(enq "$J" '[.read_by[].bytes] | add')" "$got"
check_eq "bpftool: the reports mirrored as bpftool's are those bpftool printed" \
	"$(enq "$J" '[.read_by[].faults] | add')" "$got_reports"
check "bpftool: ... some ($got_reports)" [ "$got_reports" -gt 0 ]
check "bpftool: report's text names bpftool" grep -q "stderr read by bpftool([0-9]*) too: " \
	<("$BPFSTDERR" report --journal "$J" 2> /dev/null)

# -- abort: a scheduler that reads its stderr and aborts on ERROR: -----------
J=$out/abort.db
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/abort.rec" & rpid=$!
check "abort: record's first cycle done" wait_asleep "$rpid"
"$BPFSTDERR" follow --name sdt_enqueue --json --journal "$J" > "$out/abort.json" 2> "$out/abort.follow" & fpid=$!
check "abort: follow's first cycle done" wait_asleep "$fpid"
"$BPFSTDERR" top -b -j -d 0.2 --journal "$J" > "$out/abort.top" 2> "$out/abort.toperr" & tpid=$!
check "abort: top's first cycle done" wait_asleep "$tpid"
"$D/scx_sdt" -f 1 -r -a -i 500 > "$out/ab.out" 2> "$out/ab.err" & spid=$!
apid=$spid
gone() { ! kill -0 "$apid" 2> /dev/null; }
check "abort: the scheduler exits" wait_until 300 gone
wait "$apid"
check_eq "abort: ... 1, aborting on its first report" \
	"$? $(grep -c '^FATAL: aborting on BPF error report$' "$out/ab.out")" "1 1"
spid=""
check_eq "abort: it made 1 faulting write and read 1 report" \
	"$(ended ab stale_writes) $(ended ab read_reports) $(ended ab aborted)" "1 1 1"
bytes=$(ended ab read_bytes)
check "abort: the journal has the fault" wait_until 120 faults_at "$J" 1
check_eq "abort: mirrored, read by scx_sdt($apid): 1 fault, 0 messages, $bytes bytes" \
	"$(enq "$J" '[.read_by[] | [.stream, .comm, .pid, .faults, .messages, .bytes]]')" \
	"[[\"stderr\",\"scx_sdt\",$apid,1,0,$bytes]]"
check_eq "abort: at scx_sdt.bpf.c:$LINE" "$(at_line "$J")" "[\"arena_write 1 $LINE scx_sdt.bpf.c\"]"
shown() { [ "$(jq -s "[.[] | select(.reader.pid == $apid and .reader.comm == \"scx_sdt\" and .fault.kind == \"arena_write\")] | length" "$out/abort.json")" = 1 ]; }
check "abort: follow showed it, naming scx_sdt($apid)" wait_until 60 shown
top_shown() {
	jq -e "select(.programs) | .programs[] | select(.name == \"sdt_enqueue\" and .mirrored.stderr.comm == \"scx_sdt\" and .mirrored.stderr.pid == $apid)" \
		"$out/abort.top" > /dev/null 2>&1
}
check "abort: top showed it mirrored, naming scx_sdt($apid)" wait_until 60 top_shown
stop "$tpid" "abort: top"
stop "$fpid" "abort: follow"
stop "$rpid" "abort: record"

# -- storm: over 1,000 faults a second, the scheduler reading its stderr -------
# The kernel may drop reports in a storm (a stream full at 100,000 bytes,
# some 90 reports; an allocation refused in the fault handler): the
# equalities are against what the scheduler read, its drops said aside.
J=$out/storm.db
N=2000
"$BPFSTDERR" record -d 0.2 --journal "$J" 2> "$out/storm.rec" & rpid=$!
check "storm: record's first cycle done" wait_asleep "$rpid"
# 20 faults an enqueue, about 1 KB each; the scheduler wakes every 20 ms
# to read (itself enqueued 50 times a second)
sched storm -f "$N" -b 20 -r -i 20
storm_pid=$spid
sid=$(enqueue_id)
check "storm: the scheduler made its $N faulting writes" wait_until 300 writes_at storm "$N"
# what the scheduler has read, as its ticks say: mirrored, all of it
sched_read() { sed -n 's/^bpfstderr-lab: t_ms=.* read_reports=\([0-9]*\) .*/\1/p' "$out/storm.out" | tail -n 1; }
caught_up() {	# the same count read in two checks, and mirrored
	local r prev
	r=$(sched_read)
	prev=$(cat "$out/storm.prev" 2> /dev/null)
	echo "$r" > "$out/storm.prev"
	[ "$r" = "$prev" ] &&
		[ "$(enq "$J" '[.read_by[] | select(.comm == "scx_sdt") | .faults] | add // 0')" = "$r" ]
}
check "storm: the journal caught up with the scheduler's reads" wait_until 120 caught_up
left=$(capacity "$sid")
sched_stop storm
stop "$rpid" "storm: record"
# the rate: N writes between its last tick before the first and its
# first tick with all N (a lower bound)
rate=$(awk -v n="$N" '/^bpfstderr-lab: t_ms=/ {
		split($2, t, "="); split($3, w, "=")
		if (w[2] == 0) t0 = t[2]
		if (w[2] == n && !t1) t1 = t[2]
	} END { printf "%d\n", (t1 > t0 ? n * 1000 / (t1 - t0) : 0) }' "$out/storm.out")
theirs=$(ended storm read_reports)
echo "# storm: $rate faults/s; the scheduler read $theirs reports of its $N writes" \
	"($((N - theirs)) dropped by the kernel), $(ended storm read_bytes) bytes; capacity left $left;" \
	"journal: $(enq "$J" '{fault_count, messages, stack_dumps, read_by}')"
check "storm: over 1000 faults a second ($rate)" [ "$rate" -gt 1000 ]
check_eq "storm: every report the scheduler read is in the journal, mirrored as its, byte for byte" \
	"$(enq "$J" '[.read_by[] | [.stream, .comm, .pid, .faults, .messages, .bytes]]')" \
	"[[\"stderr\",\"scx_sdt\",$storm_pid,$theirs,0,$(ended storm read_bytes)]]"
# what the kernel dropped is not silent: refused as the stream was full
# (the fill wake counts each refused push; left to the scheduler, the
# stream is record's to count all the same)
check_eq "storm: the $((N - theirs)) reports the kernel dropped, report --json counts as refused" \
	"$("$BPFSTDERR" report --json --journal "$J" 2> /dev/null | jq .summary.refused_reports)" "$((N - theirs))"
check "storm: ... and its text says so, for the unloaded scheduler's stderr" \
	grep -q "stderr: $((N - theirs)) fault reports and messages refused for lack of room" \
	<("$BPFSTDERR" report --journal "$J" 2> /dev/null)
check_eq "storm: and nothing else: $theirs faults, no message, no stack dump, one group at scx_sdt.bpf.c:$LINE" \
	"$(enq "$J" '[.fault_count, .messages.stderr, .stack_dumps]') $(at_line "$J")" \
	"[$theirs,0,0] [\"arena_write $theirs $LINE scx_sdt.bpf.c\"]"
finish
