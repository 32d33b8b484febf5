# Refusals a fill wake counted (issue 34 item 8) are shown with their
# count by every view: follow (text and --json, once each time the count
# grows, before the events that come with it), top -b (the saturation cell
# and --json's streams) and report --json for a program unloaded since
# (its streams from the journal). Our hosts refuse the fill wake's fexit,
# so the count here is the journal's own (progs.refused_err, what the
# keeper's wake adds, written here as a keeper would), read back from the
# journal for every comparison. INJECTED CONTENT: the writer's stderr
# messages come from tests/shim.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)
d=$(mktmp)
J=$d/journal.db
start_holder W writer || { fail "load writer"; finish; }
wid=$(prog_id W writer)

shimmed() {	# shimmed ARGS... &: bpfstderr in the background, $! its pid
	LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		exec "$BPFSTDERR" "$@"
}
sq() { sql1 "$J" "$1"; }
# what a keeper adds to the journal (journal__add_refused): N more
add_refused() {
	python3 -c "import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=60)
c.execute('update progs set refused_err = coalesce(refused_err, 0) + ? where id = ?', (int(sys.argv[2]), int(sys.argv[3])))
c.commit()" "$J" "$1" "$wid"
}
refused_err() { sq "select refused_err from progs where id = $wid order by row desc limit 1"; }
say() {	# say TEXT: one more stderr message, read at the next walk
	printf '%s\n' "$1" >> "$d/$wid.2"
	fixture_added W
}

: > "$d/$wid.2"
shimmed follow -p "$wid" --json --journal "$J" > "$out/f.json" 2> "$out/f.err" & fj=$!
check "follow --json: first cycle done (the journal made)" wait_asleep "$fj"
shimmed follow -p "$wid" --journal "$J" > "$out/f.txt" 2> "$out/f.txt.err" & ft=$!
shimmed top -b --json -d 0.5 -n 100000 --journal "$J" > "$out/top.json" 2> "$out/top.err" & tj=$!
shimmed top -b -d 0.5 -n 100000 --journal "$J" > "$out/top.txt" 2> "$out/top.txt.err" & tp=$!
for p in "$ft" "$tj" "$tp"; do check "follow, top: first cycle done" wait_asleep "$p"; done
shown() { grep -q "\"text\":\"$1\"" "$out/f.json" && grep -qw "$1" "$out/f.txt"; }
say one
check "follow shows the first message" wait_until 120 shown one
add_refused 7
R1=$(refused_err)
say two
check "follow shows the second message" wait_until 120 shown two
add_refused 12
R2=$(refused_err)
check "the journal's count grew ($R1, then $R2)" test "${R2:-0}" -gt "${R1:-0}" -a "${R1:-0}" -gt 0
say three
check "follow shows the third message" wait_until 120 shown three
say four	# the count unchanged: nothing more to say
check "follow shows the fourth message" wait_until 120 shown four

top_at() {	# the last snapshot of each top has the journal's count
	tail -n 1 "$out/top.json" | jq -e --argjson i "$wid" --argjson n "$R2" \
		'.programs[] | select(.id == $i) | .streams.stderr.refused_reports == $n' > /dev/null &&
	awk -v id="$wid" '$1 == id { l = $0 } END { print l }' "$out/top.txt" | grep -q "refused $R2 *\$"
}
check "top -b: the saturation cell and --json say refused $R2" wait_until 120 top_at
for p in "$fj" "$ft" "$tj" "$tp"; do kill -INT "$p"; done
for p in "$fj" "$ft" "$tj" "$tp"; do wait "$p"; check_eq "follow and top end 0 at SIGINT" "$?" 0; done

check_eq "follow --json: each count said once, before the event that came with it" \
	"$(jq -r '.kind + ":" + (.text // (.stream + "=" + (.refused_reports | tostring)))' "$out/f.json" | paste -sd' ')" \
	"message:one stream_full:stderr=$R1 message:two stream_full:stderr=$R2 message:three message:four"
check_eq "follow: each count said once, in text" \
	"$(grep -c "stderr: FULL: $R1 fault reports and messages refused for lack of room so far" "$out/f.txt") $(grep -c "stderr: FULL: $R2 fault reports and messages refused for lack of room so far" "$out/f.txt")" \
	"1 1"
check "follow: no 'how many unknown' where a count exists" test "$(grep -c 'how many unknown' "$out/f.txt")" = 0

# report --json: loaded, then unloaded since (its streams from the journal)
rep() { "$BPFSTDERR" report --json --journal "$J" 2> /dev/null | jq -c --argjson i "$wid" "$1"; }
check_eq "report --json, loaded: stderr's refused_reports and the summary's" \
	"$(rep '[(.programs[] | select(.id == $i) | .streams.stderr.refused_reports), .summary.refused_reports]')" \
	"[$R2,$R2]"
stop_holder W
read_err=$(sq "select read_err from progs where id = $wid order by row desc limit 1")
check_eq "report --json, unloaded: streams from the journal (refused, read; no capacity)" \
	"$(rep '.programs[] | select(.id == $i) | [.unloaded, .streams.stderr.refused_reports, .streams.stderr.read_bytes, .streams.stderr.capacity, .streams.stdout.refused_reports, .reports_lost]')" \
	"[true,$R2,$read_err,null,null,true]"
check_eq "report --json, unloaded: the summary is the programs' sum" \
	"$(rep '[.summary.refused_reports, ([.programs[].streams | select(. != null) | .[].refused_reports // 0] | add)]')" \
	"[$R2,$R2]"
check "report text, unloaded: the count" \
	grep -q "stderr: $R2 fault reports and messages refused for lack of room" \
	<<<"$("$BPFSTDERR" report --journal "$J" 2> /dev/null)"
finish
