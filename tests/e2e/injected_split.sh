# A line split between two readers of one stream, without a journal,
# step by step: the test plays the program (it appends to the fixture)
# and the other reader (it takes bytes under the shim's lock, as a read
# does), so every interleaving here is one the test chose, none left to
# timing. The oracle is the fixture's bytes and the shim's log of who was
# served what (served_check.py, Python's strict JSON parser).
# INJECTED CONTENT: stream bytes come from tests/shim for a real program.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)

load_writer() {	# a writer with bytes accounted on stdout (so bpfstderr
		# reads it), a new $d with an empty stdout fixture $f; $id
	start_holder H writer || { fail "load writer"; finish; }
	id=$(prog_id H writer)
	d=$(mktmp)
	f=$d/$id.1
	: > "$f"
}

follow_bg() {	# OUTFILE ARGS...: pid in $fpid
	local outf=$1; shift
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d BPFSTDERR_SHIM_LOG=$d/log \
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		"$BPFSTDERR" follow -p "$id" --no-journal "$@" > "$outf" 2> "$outf.err" &
	fpid=$!
}

writes() {	# BYTES (printf %b): the program writes them
	flock "$f" sh -c 'printf "%b" "$2" >> "$1"' sh "$f" "$1"
	fixture_added H
}

# The program writes BYTES and another reader takes every byte not read
# yet, in one read, before the follower can: all under the lock the shim
# takes for each read, logged as the shim logs (pid 0).
steals() {	# BYTES (printf %b)
	flock "$f" sh -c '
		printf "%b" "$4" >> "$1"
		off=$(cat "$1.off" 2>/dev/null || echo 0); size=$(stat -c %s "$1")
		echo "0 $2 1 $off $((size - off)) 0" >> "$3"
		echo "$size" > "$1.off"' sh "$f" "$id" "$d/log" "$1"
}

read_all() {	# the follower has been served every byte written so far
	local i
	for i in $(seq 300); do
		[ "$(cat "$f.off" 2>/dev/null)" = "$(stat -c %s "$f")" ] && return 0
		sleep 0.1
	done
	return 1
}

served_check() {	# OUTFILE: printed exactly what it was served
	python3 tests/e2e/served_check.py "$f" "$d/log" "$id" 1 "$fpid=$1"
}

# -- unload, JSON ----------------------------------------------------------
# It reads "out 1\nout 1" and holds the piece "out 1" of line "out 12";
# the other reader takes "2\nout 3\nout 4"; it reads "\nout 5" (the end of
# line "out 4" and a piece of a last line) and the program unloads.
load_writer
follow_bg "$out/u" --json; pu=$fpid
writes 'out 1\nout 1'
check "unload: the follower read the first bytes" read_all
steals '2\nout 3\nout 4'
writes '\nout 5'
check "unload: the follower read the last bytes" read_all
stop_holder H
wait "$pu"
check_eq "unload: the follow ends 0 when the program unloads" "$?" 0
check_eq "unload: it printed exactly the bytes it was served, pieces marked partial" \
	"$(served_check "$out/u")" ""
check_eq "unload: the piece held when the program went is flushed, marked partial" \
	"$(tail -n 1 "$out/u" | jq -c '[.text, .partial]')" '["out 5",true]'
# Without a journal nothing tells a reader that bytes were taken between
# two of its reads: "out 1" + "\n" is shown as a line although its two
# ends were written for different lines. What each piece held is, and
# what was stolen never appears.
check_eq "unload: nothing the other reader took is printed" \
	"$(jq -r .text "$out/u" | grep -c 'out [34]')" 0

# -- SIGINT, text ----------------------------------------------------------
load_writer
follow_bg "$out/s" --no-color
ps=$fpid
writes 'a line\nhalf a li'
check "SIGINT: the follower read the bytes" read_all
kill -INT "$ps"
wait "$ps"
check_eq "SIGINT: the follow ends 0" "$?" 0
check_eq "SIGINT: the whole line, then the piece it held marked [no newline]" \
	"$(sed -E "s/^[0-9:.]+ $id:writer stdout: //" "$out/s")" \
	"$(printf 'a line\nhalf a li [no newline]')"
stop_holder H

# -- SIGINT, JSON, with a line the other reader finished -------------------
load_writer
follow_bg "$out/j" --json; pj=$fpid
writes 'one\ntw'
check "SIGINT JSON: the follower read the first bytes" read_all
steals 'o\nthr'
kill -INT "$pj"
wait "$pj"
check_eq "SIGINT JSON: the follow ends 0" "$?" 0
check_eq "SIGINT JSON: it printed exactly the bytes it was served, pieces marked partial" \
	"$(served_check "$out/j")" ""
check_eq "SIGINT JSON: the piece of a line it held is marked partial" \
	"$(jq -c '[.text, .partial]' "$out/j" | paste -sd' ')" '["one",false] ["tw",true]'
stop_holder H
finish
