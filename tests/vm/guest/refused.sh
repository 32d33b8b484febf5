# Inside a lab guest (tests/vm/lab.sh), where stream writes work: pushes
# the kernel refuses because a stream is full are counted exactly, once
# per journal although every bpfstderr's fill wake counts them (the
# holder of the refusal right adds them, journal.h), and shown: report
# text and JSON, record's metric bpfstderr_refused_total. Once the program
# is unloaded, its counts leave the fill wake's map ("refused"). The
# oracle: the writes' own return values (-28, ENOSPC), read while another
# process holds the stream's read right (holdright), so nobody drains it;
# bpftool's dump of the maps.
. tests/lib.sh

lab_start
MP=19478
J=$out/j.db
start_holder W writer || { fail "holdprog writer loads"; finish; }
wid=$(prog_id W writer)
fills() { bpftool prog show name fill_commit -j 2>/dev/null | jq length; }
sq() { python3 -c "import sqlite3, sys; r = sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print(r[0] if r else '')" "$J" "$1"; }
refused_err() { sq "select quote(refused_err) from progs where id = $wid order by row desc limit 1"; }

"$BPFSTDERR" record -d 0.5 --journal "$J" --metrics-address "127.0.0.1:$MP" 2> "$out/rec.err" & rpid=$!
check "record's first cycle done" wait_asleep "$rpid"
"$BPFSTDERR" follow --all --journal "$J" > /dev/null 2> "$out/follow.err" & fpid=$!
check "follow's first cycle done" wait_asleep "$fpid"
two_fills() { [ "$(fills)" = 2 ]; }
check "two fill wakes attached (record's and follow's)" wait_until 120 two_fills

mkfifo "$out/rin"
"$HELPERS/holdright" "$J" "$wid" stderr < "$out/rin" > "$out/rout" & hp=$!
exec {rw}> "$out/rin"
wait_until 60 test -s "$out/rout"
check_eq "another process holds stderr's read right" "$(cat "$out/rout")" held
rets="$(holder_cmd W "lines 2 256 500") $(holder_cmd W "lines 2 64 500")"
R=$(tr ' ' '\n' <<<"$rets" | grep -c '^-28$')
took=$(tr ' ' '\n' <<<"$rets" | grep -c '^0$')
echo "# $took writes taken, $R refused (-ENOSPC) of 320"
check "nobody drains: the kernel refused some writes" test "$R" -gt 0
at_r() { [ "$(refused_err)" = "$R" ]; }
check "the journal counts the $R refused" wait_until 120 at_r

echo go >&"$rw"; exec {rw}>&-
wait "$hp"
kept() { [ "$(sq "select count(*) from events e join progs p on p.row = e.prog where p.id = $wid and e.stream = 2")" = "$took" ]; }
check "the right let go: the journal has the $took messages taken" wait_until 120 kept
metric() {
	curl -sf "http://127.0.0.1:$MP/metrics" |
		sed -n "s/^bpfstderr_refused_total{prog_id=\"$wid\",.*stream=\"stderr\"} //p"
}
metric_at() { [ "$(metric)" = "$R" ]; }
check "record's metric bpfstderr_refused_total says $R" wait_until 60 metric_at

rep=$("$BPFSTDERR" report --json --journal "$J" 2>/dev/null)
check_eq "report --json: stderr's refused_reports, the summary's, reports_lost" \
	"$(jq -c --argjson i "$wid" '[(.programs[] | select(.id == $i) | .streams.stderr.refused_reports, .reports_lost), .summary.refused_reports]' <<<"$rep")" \
	"[$R,true,$R]"
check "report's text says how many were refused" \
	grep -q "stderr: $R fault reports and messages refused for lack of room (counted" \
	<<<"$("$BPFSTDERR" report --journal "$J" 2>/dev/null)"

# the map of each fill wake: the writer's entry, until it is unloaded
has_entry() {	# has_entry: some map "refused" has the writer's id as a key
	local m
	for m in $(bpftool map show name refused -j 2>/dev/null | jq '.[].id'); do
		bpftool map dump id "$m" -j 2>/dev/null |
			jq -e --argjson i "$wid" 'any(.[]; (.formatted.key // .key) == $i)' > /dev/null && return 0
	done
	return 1
}
check "the fill wakes' maps count the writer's refusals" has_entry
stop_holder W
no_entry() { ! has_entry; }
check "unloaded: the writer's counts leave the maps" wait_until 120 no_entry

kill -TERM "$fpid"; wait "$fpid"
check_eq "follow ends 0" "$?" 0
kill -TERM "$rpid"; wait "$rpid"
check_eq "record ends 0" "$?" 0
check_eq "the journal counts them once, though two processes counted" "$(refused_err)" "$R"
finish
