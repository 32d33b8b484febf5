# follow --no-journal whose output stops (a pager held, then a signal; or
# its reader gone, EPIPE) in the middle of a read's events: the events of
# that read not shown, and the bytes reassembly holds, go to a spill file
# named on stderr, and follow ends 0. Before, they were dropped: the event
# whose write failed and every later one of the read. Oracle: the shim's
# served offset; what reached the pipe (read back by the test) and the
# spill file together are the stream's served bytes, each once, in order.
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
start_holder H writer || { fail "load writer"; finish; }
id=$(prog_id H writer)

in_write() { [ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = 1 ]; }	# write(2), x86_64
[ "$(uname -m)" = x86_64 ] || { skip "unshown bytes spilled" "write(2)'s number is x86_64's here"; finish; }

# shown + spilled == served: DIR OUT (the pipe's bytes) ERR
kept_all() {
	python3 - "$1/$id.2" "$2" "$3" <<'PY'
import re, sys
fix, out, err = sys.argv[1:]
data = open(fix, "rb").read()
served = int(open(fix + ".off").read())
shown = b"".join(m.group(1) + b"\n" for m in re.finditer(rb" stderr: (line [0-9]+ of the spill test)\n", open(out, "rb").read()))
m = re.search(r"the (\d+) bytes read and not shown are in (\S+)", open(err).read())
spilled = b""
if m:
    b = open(m.group(2), "rb").read()
    h = re.match(rb"bpfstderr spill: prog \d+ .* stream stderr bytes (\d+)\n", b)
    spilled = b[h.end():h.end() + int(h.group(1))] if h else b"?"
    assert int(m.group(1)) == len(spilled), "the count said is the file's"
ok = shown + spilled == data[:served]
print(f"served {served} shown {len(shown)} spilled {len(spilled)} {'ok' if ok else 'MISMATCH'}")
PY
}

read_pipe() {	# FD OUT: what the pipe holds, without waiting for more
	python3 -c 'import os, sys
fd = int(sys.argv[1]); os.set_blocking(fd, False)
with open(sys.argv[2], "wb") as out:
	while True:
		try:
			b = os.read(fd, 65536)
		except BlockingIOError:
			break
		out.write(b)' "$@"
}

for how in TERM EPIPE; do
	d=$(mktmp)
	seq -f 'line %.0f of the spill test' 1 40000 > "$d/$id.2"
	mkfifo "$d/pipe"
	exec {pager}<> "$d/pipe"
	TMPDIR=$d LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_CHUNK=4096 \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" follow --no-journal -p "$id" > "$d/pipe" 2> "$d/err" {pager}<&- &
	fpid=$!
	check "$how: follow fills the pipe and waits in write(2)" wait_until 120 in_write "$fpid"
	if [ "$how" = TERM ]; then
		kill -TERM "$fpid"
		wait "$fpid"; rc=$?
		read_pipe "$pager" "$d/out"
		exec {pager}<&-
	else
		# stopped in write(2): the pipe's bytes read back, every read
		# end closed, then its write fails with EPIPE
		kill -STOP "$fpid"
		read_pipe "$pager" "$d/out"
		exec {pager}<&-
		kill -CONT "$fpid"
		wait "$fpid"; rc=$?
	fi
	check_eq "$how: follow ends 0" "$rc" 0
	check "$how: the bytes not shown are in a spill file, named on stderr" \
		grep -q "bytes read and not shown are in $d/bpfstderr-spill-" "$d/err"
	res=$(kept_all "$d" "$d/out" "$d/err")
	echo "# $how: $res"
	check "$how: shown and spilled, every byte served is there once, in order" grep -q ' ok$' <<<"$res"
	check_eq "$how: nothing else on stderr" \
		"$(grep -v 'no journal: reads are destructive\|bytes read and not shown are in' "$d/err")" ""
done
finish
