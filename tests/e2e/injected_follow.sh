# INJECTED CONTENT: stream bytes here come from tests/shim (fixtures served
# at the syscall boundary for a real program loaded by this test), not from
# the kernel, whose stream writes fail on our machines.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)

make_fixtures() {	# DIR
	{
		printf 'plain message\n'
		printf '%1023s\n' '' | tr ' ' 'm'
		printf '\033[31mred\033[0m \033]0;title\007 \x9b2J bell\a\n'
		printf 'bad utf8 \xff\xfe \xc3( end\n'
		printf 'nul\0inside\n'
		printf 'caf\xc3\xa9 \xe2\x82\xac ok\n'
		printf 'del \x7f nel \xc2\x85 csi \xc2\x9b2J rlo \xe2\x80\xae end\n'
		printf 'last line without newline'
	} > "$1/$id.1"
	{
		printf 'stderr message before\n'
		cat tests/fixtures/upstream-6.18.txt
		printf 'between reports\n'
		cat tests/fixtures/rfc-seed001.txt
		printf 'ERROR: Arena READ access at unmapped address 0x1\nCPU: 0 UID: 0 PID: 1 Comm: cut\nCall trace:\n'
	} > "$1/$id.2"
}

# Every fixture set is a new stream for the journal: each gets a journal of
# its own (the program stays the same, and the journal would carry the held
# end of one set into the next).
# follow until the shim has served everything and the held ends (a line
# without its newline, a cut report) have gone stale and come out, then
# SIGINT: a last drain, exit 0. Both are waited for (bounds: 120 s, then
# 60 s), not timed: a byte a read under ASan is slow.
served_all() {	# DIR ARGS...: the streams the arguments read (--stdout: not stderr)
	local dir=$1; shift
	[ "$(cat "$dir/$id.1.off" 2>/dev/null)" = "$(stat -c %s "$dir/$id.1")" ] &&
	{ [[ " $* " == *" --stdout "* ]] ||
	  [ "$(cat "$dir/$id.2.off" 2>/dev/null)" = "$(stat -c %s "$dir/$id.2")" ]; }
}
tails_out() {	# OUTFILE ARGS...: the held ends the arguments show are out
	local outf=$1; shift
	{ [[ " $* " == *" --errors-only "* ]] || grep -q 'last line without newline' "$outf"; } &&
	{ [[ " $* " == *" --stdout "* ]] || grep -qE 'unmapped address 0x1|FAULT arena_read at 0x1 ' "$outf"; }
}
follow_all() {	# DIR CHUNK OUTFILE [ARGS...]
	local dir=$1 chunk=$2 outf=$3 pid; shift 3
	BPFSTDERR_JOURNAL=$dir/journal.db LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$dir BPFSTDERR_SHIM_CHUNK=$chunk \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" follow -p "$id" "$@" > "$outf" 2> "$outf.err" &
	pid=$!
	wait_until 120 served_all "$dir" "$@"
	wait_until 60 tails_out "$outf" "$@"
	kill -INT "$pid"
	wait "$pid"
}

for chunk in 1 7 512 4096; do
	d=$(mktmp)
	make_fixtures "$d"
	follow_all "$d" "$chunk" "$out/ev.$chunk" --json; rc=$?
	check_eq "chunk $chunk: SIGINT ends follow with 0" "$rc" 0
	check_eq "chunk $chunk: nothing on stderr but the one debuginfo notice" \
		"$(grep -v 'no vmlinux with DWARF found' "$out/ev.$chunk.err")" ""
	res=$(python3 tests/e2e/reconstruct.py "$out/ev.$chunk" "$id" "$d/$id.1" "$d/$id.2")
	check_eq "chunk $chunk: every byte back exactly once, in order" "$res" ""
	check_eq "chunk $chunk: no raw DEL or C1 (U+0080..U+009F) in the JSON" \
		"$(python3 -c 'import sys; b = open(sys.argv[1], "rb").read()
print(b.count(b"\x7f") + sum(b.count(bytes([0xc2, c])) for c in range(0x80, 0xa0)))' "$out/ev.$chunk")" 0
	check_eq "chunk $chunk: 11 fault reports" \
		"$(jq -s '[.[] | select(.kind == "fault")] | length' "$out/ev.$chunk")" 11
	check_eq "chunk $chunk: 1 incomplete (cut) report" \
		"$(jq -s '[.[] | select(.kind == "fault" and .fault.incomplete)] | length' "$out/ev.$chunk")" 1
done

# The same drained with every cycle walking the whole program list (the
# fallback where the watch is refused): the same events, in the same order.
for chunk in 7 4096; do
	d=$(mktmp)
	make_fixtures "$d"
	(export BPFSTDERR_FULL_WALK=1; follow_all "$d" "$chunk" "$out/walk.$chunk" --json); rc=$?
	check_eq "chunk $chunk, full walk: SIGINT ends follow with 0" "$rc" 0
	res=$(python3 tests/e2e/reconstruct.py "$out/walk.$chunk" "$id" "$d/$id.1" "$d/$id.2")
	check_eq "chunk $chunk, full walk: every byte back exactly once, in order" "$res" ""
	check_eq "chunk $chunk: the same events with the watch and with the full walk" \
		"$(jq -c '[.stream, .kind, .text, .fault.kind]' "$out/walk.$chunk" | md5sum)" \
		"$(jq -c '[.stream, .kind, .text, .fault.kind]' "$out/ev.$chunk" | md5sum)"
done

ev=$out/ev.4096
check_eq "fault kinds in order" \
	"$(jq -r 'select(.kind == "fault") | .fault.kind' "$ev" | paste -sd' ')" \
	"arena_read arena_write may_goto_timeout lock_deadlock lock_timeout unknown lock_deadlock arena_read arena_write may_goto_timeout arena_read"
check_eq "RFC reports recognised as such" \
	"$(jq -r 'select(.kind == "fault") | .fault.format' "$ev" | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd' ')" \
	"rfc=4 upstream=7"
check_eq "1023-byte message intact" "$(jq -r 'select(.stream == "stdout") | .text | length' "$ev" | sed -n 2p)" 1023
check_eq "fault fields: arena address" "$(jq -r 'select(.kind == "fault") | .fault.addr' "$ev" | head -n 1)" 0xdeadbeef
check_eq "fault fields: BPF frame line" \
	"$(jq -r 'select(.kind == "fault") | .fault.frames[] | select(.kind == "bpf") | "\(.func):\(.line)"' "$ev" | head -n 1)" \
	"arena_fault:41"
check_eq "invalid UTF-8 carried exactly in text_base64" \
	"$(jq -r 'select(.text | startswith("bad utf8")) | .text_base64' "$ev" | base64 -d | od -An -tx1 | tr -d ' \n')" \
	"$(printf 'bad utf8 \xff\xfe \xc3( end' | od -An -tx1 | tr -d ' \n')"

# Text mode: escaped, never raw.
d=$(mktmp)
make_fixtures "$d"
follow_all "$d" 4096 "$out/text" --stdout
check_eq "text: no ESC, BEL or C1 byte reaches the output" \
	"$(LC_ALL=C grep -c $'[\x1b\x07]\|\xc2\x9b' "$out/text")" 0
check "text: escape sequence shown escaped" grep -qF '\x1b[31mred\x1b[0m' "$out/text"
check "text: invalid UTF-8 shown escaped" grep -qF 'bad utf8 \xff\xfe \xc3( end' "$out/text"
check "text: label with id, name and stream" grep -qE "^[0-9:.]+ $id:writer stdout: plain message$" "$out/text"
check "text: --stdout shows no stderr" bash -c "! grep -q ' stderr: ' '$out/text'"
check "text: partial last line flushed and marked" grep -qF 'last line without newline [no newline]' "$out/text"

# On a terminal: colours by stream and fault kind, none with NO_COLOR.
for nc in "" 1; do
	d=$(mktmp)
	make_fixtures "$d"
	tmux new-session -d -s "bpfstderr-color-$$" -x 200 -y 50 \
		"BPFSTDERR_JOURNAL=$d/journal.db NO_COLOR=$nc LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		 $BPFSTDERR follow -p $id --errors-only; sleep 60"
	# the pane once each kind of fault is on it (or after 60 s)
	colored() {
		tmux capture-pane -e -p -t "bpfstderr-color-$$" > "$out/color$nc"
		sed 's/\x1b\[[0-9;]*m//g' "$out/color$nc" > "$out/plain"
		grep -q 'FAULT lock_deadlock' "$out/plain" && grep -q 'FAULT may_goto_timeout' "$out/plain" &&
			grep -q 'FAULT arena_read' "$out/plain"
	}
	wait_until 60 colored
	tmux kill-session -t "bpfstderr-color-$$"
	# (tmux keeps bold and colour as two sequences)
	if [ -z "$nc" ]; then
		check "tty: lock faults in magenta" grep -q $'\033\\[1m\033\\[35mFAULT lock_deadlock' "$out/color"
		check "tty: may_goto timeouts in yellow" grep -q $'\033\\[1m\033\\[33mFAULT may_goto_timeout' "$out/color"
		check "tty: arena faults in red" grep -q $'\033\\[1m\033\\[31mFAULT arena_read' "$out/color"
	else
		check "tty with NO_COLOR: no colour" bash -c "! grep -q \$'\\033\\[1;3' '$out/color1'"
		check "tty with NO_COLOR: the faults all the same" grep -q 'FAULT lock_deadlock' "$out/color1"
	fi
done

# On a terminal, with no vmlinux to be found: the notice is one line of
# its own, before the first report; the report machinery's frames are one
# line, as in report and top, unless --all-frames.
d=$(mktmp)
make_fixtures "$d"
tmux new-session -d -s "bpfstderr-notice-$$" -x 200 -y 50 \
	"BPFSTDERR_JOURNAL=$d/journal.db NO_COLOR=1 LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	 $BPFSTDERR follow -p $id --errors-only -k $d/no-such-vmlinux; sleep 60"
notice_shown() { tmux capture-pane -p -S - -t "bpfstderr-notice-$$" | grep -q 'FAULT lock_timeout'; }
wait_until 60 notice_shown
tmux capture-pane -p -S - -t "bpfstderr-notice-$$" > "$out/notice"
tmux kill-session -t "bpfstderr-notice-$$"
check_eq "tty: the debuginfo notice is said once, on a line of its own" \
	"$(grep -c 'no vmlinux with DWARF' "$out/notice"):$(grep -c '^bpfstderr: no vmlinux with DWARF' "$out/notice")" "1:1"
check "tty: ... before the first report" \
	test "$(grep -n 'no vmlinux with DWARF' "$out/notice" | cut -d: -f1)" -lt "$(grep -n 'FAULT ' "$out/notice" | head -n 1 | cut -d: -f1)"
check "the report machinery is one line" grep -q '^    ([0-9]* frames of the report machinery)$' "$out/notice"
# the fixture's first report: 6 machinery frames above the exception entry
check_eq "... right below the fault's line, in place of its frames" \
	"$(grep -A2 'FAULT arena_read at 0xdeadbeef' "$out/notice" | sed -n '2,3p' | tr '\n' '|')" \
	"    (6 frames of the report machinery)|    asm_exc_page_fault+0x26/0x30|"
d=$(mktmp)
make_fixtures "$d"
follow_all "$d" 4096 "$out/all-frames" --errors-only --all-frames
check "--all-frames: the machinery's frames are shown" grep -q '^    bpf_stream_stage_dump_stack+0xb0/0x280' "$out/all-frames"

# | head: SIGPIPE ends follow quietly. More output than a pipe buffers, so
# that follow is still writing when head has gone.
d=$(mktmp)
make_fixtures "$d"
seq -f 'line %06g of many' 20000 >> "$d/$id.1"
set -o pipefail
BPFSTDERR_JOURNAL=$d/journal.db LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	timeout 20 "$BPFSTDERR" follow -p "$id" 2> "$out/pipe.err" | head -n 1 > /dev/null; rc=$?
set +o pipefail
check_eq "| head: follow exits 0" "$rc" 0
check_eq "| head: nothing on stderr" "$(cat "$out/pipe.err")" ""

# --name follows programs loaded after follow started.
d=$(mktmp)
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" follow --name writer --json > "$out/later" 2> /dev/null &
fpid=$!
# started (asleep after its first cycle) before the program is loaded
check "--name: follow started" wait_asleep "$fpid"
start_holder H2 writer || fail "load a second writer"
id2=$(prog_id H2 writer)
printf 'from a program loaded later\n' > "$d/$id2.1"
fixture_added H2
wait_until 60 test -s "$d/$id2.1.off"
sleep 0.3
kill -INT "$fpid"; wait "$fpid"
check_eq "--name: a program loaded later is followed" \
	"$(jq -r "select(.prog.id == $id2) | .text" "$out/later")" "from a program loaded later"
stop_holder H2

# --errors-only, and the program going away while followed.
d=$(mktmp)
make_fixtures "$d"
BPFSTDERR_JOURNAL=$d/journal.db LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" follow -p "$id" --errors-only --json > "$out/err" 2> "$out/err.stderr" &
fpid=$!
# follow has the program (it showed a fault) before the program goes
shown_fault() { [ "$(jq -r .kind "$out/err" 2>/dev/null | head -n 1)" = fault ]; }
check "--errors-only: a fault shown before the unload" wait_until 60 shown_fault
stop_holder H
exited() { ! kill -0 "$fpid" 2>/dev/null; }
wait_until 60 exited
kill -0 "$fpid" 2>/dev/null && kill -KILL "$fpid"
wait "$fpid"; rc=$?
check_eq "unloaded program: follow exits 0 by itself" "$rc" 0
check_eq "unloaded program: said on stderr" "$(grep -v 'no vmlinux with DWARF' "$out/err.stderr")" \
	"bpfstderr: program $id (writer) unloaded"
check_eq "--errors-only: only faults" "$(jq -r .kind "$out/err" | sort -u)" fault
finish
