# Inside a lab guest (tests/vm/lab.sh), where stream writes work: a stream
# that passes FILL_MARK bytes accounted (bpf/fill.h) is drained at once,
# not at the next interval, because the kernel's push woke the reader (the
# fill wake: fexit on the stream functions, which Debian's kernels allow).
# Oracle: the pinned capacity iterator (bpftool), read while record runs
# with a 30 s interval. Without the fill wake (BPFSTDERR_NO_FILL_WAKE=1),
# a record whose last drain read bytes asks the watch every 10 ms (tick),
# and one idle so far does not (off): it leaves the bytes where they are,
# so the wake, or the tick, is what drained them.
. tests/lib.sh

echo "# kernel $(uname -r)"
out=$(mktmp)
mnt=$out/bpffs
trap 'kill $(jobs -p) 2>/dev/null; rm -f "$mnt/cap"; mountpoint -q "$mnt" && umount "$mnt"; cleanup' EXIT
pin_capacity "$mnt" || { fail "mount bpffs, pin the capacity iterator"; finish; }
mark=$(awk '$1 == "#define" && $2 == "FILL_MARK" { print $3 }' bpf/fill.h)

check_eq "doctor --json: early drain by the fill wake" \
	"$("$BPFSTDERR" doctor --json | jq -r .early_drain.by)" fill_wake
check_eq "doctor --json: BPFSTDERR_NO_FILL_WAKE=1: by the watch's tick" \
	"$(BPFSTDERR_NO_FILL_WAKE=1 "$BPFSTDERR" doctor --json | jq -c '.early_drain | [.by, .no_fill_wake_set]')" \
	'["watch_tick",true]'

start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
writes() { holder_cmd W "write 2 $1 500" | tr ' ' '\n' | grep -c '^0$'; }
below=$((mark / 500 - 10)) over=20
for mode in wake tick off; do
	J=$out/$mode.db
	if [ $mode = wake ]; then
		"$BPFSTDERR" record -d 30 --journal "$J" 2> "$out/$mode.err" & rpid=$!
	else
		# tick: busy from record's first drain, which reads this message
		[ $mode = tick ] && holder_cmd W "write 2 1 37" > /dev/null
		BPFSTDERR_NO_FILL_WAKE=1 "$BPFSTDERR" record -d 30 --journal "$J" 2> "$out/$mode.err" & rpid=$!
	fi
	for i in $(seq 100); do [ -s "$J" ] && break; sleep 0.1; done
	sleep 2		# record's first cycle is behind it
	check_eq "$mode: $below writes of 500 bytes succeed" "$(writes $below)" "$below"
	sleep 2
	check_eq "$mode: $((below * 500)) bytes, under the $mark-byte mark: left for the interval" \
		"$(capacity "$wid")" "$((below * 500))"
	check_eq "$mode: $over more writes succeed" "$(writes $over)" "$over"
	sleep 3
	if [ $mode != off ]; then
		check_eq "$mode: past the mark: drained at once (capacity 0)" "$(capacity "$wid")" 0
	else
		check_eq "off: past the mark: still there, for the 30 s interval" \
			"$(capacity "$wid")" "$(((below + over) * 500))"
	fi
	kill -TERM "$rpid"; wait "$rpid"
	check_eq "$mode: record ends 0" "$?" 0
done
stop_holder W
finish
