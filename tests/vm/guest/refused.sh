# Inside a lab guest (tests/vm/lab.sh), where stream writes work: pushes
# the kernel refuses because a stream is full are counted exactly, once
# per journal although every bpfstderr's fill wake counts them (the
# holder of the refusal right adds them, journal.h), and shown: report
# text and JSON (also once unloaded), record's metric
# bpfstderr_refused_total, follow (text and JSON: once, as it grew once)
# and top -b --json. Once the program
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
sq() { sql1 "$J" "$1"; }
refused_err() { sq "select quote(refused_err) from progs where id = $wid order by row desc limit 1"; }

"$BPFSTDERR" record -d 0.5 --journal "$J" --metrics-address "127.0.0.1:$MP" 2> "$out/rec.err" & rpid=$!
check "record's first cycle done" wait_asleep "$rpid"
"$BPFSTDERR" follow --all --json --journal "$J" > "$out/follow.json" 2> "$out/follow.err" & fpid=$!
check "follow's first cycle done" wait_asleep "$fpid"
"$BPFSTDERR" follow -p "$wid" --journal "$J" > "$out/follow.txt" 2> "$out/follow.txt.err" & tpid=$!
"$BPFSTDERR" top -b --json -d 1 -n 100000 --journal "$J" > "$out/top.json" 2> "$out/top.err" & ppid=$!
check "follow (text) and top: first cycle done" wait_asleep "$tpid"
check "... top's" wait_asleep "$ppid"
three_fills() { [ "$(fills)" = 3 ]; }	# top runs none: it sleeps between drains
check "three fill wakes attached (record's, the follows')" wait_until 120 three_fills

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

# follow and top: the count, once (it grew once), before the messages
shown() { [ "$(jq -s --argjson i "$wid" '[.[] | select(.prog.id == $i and .kind == "message")] | length' "$out/follow.json")" = "$took" ]; }
check "follow --json shows the $took messages" wait_until 120 shown
check_eq "follow --json: stderr's count said once, before them" \
	"$(jq -r --argjson i "$wid" 'select(.prog.id == $i) | .kind + ":" + (.stream + "=" + (.refused_reports | tostring))' "$out/follow.json" | uniq -c | awk '{ print $1, $2 }' | paste -sd' ')" \
	"1 stream_full:stderr=$R $took message:stderr=null"
txt_shown() { [ "$(grep -c "$wid:writer stderr: " "$out/follow.txt")" -ge $((took + 1)) ]; }
check "follow (text) shows them" wait_until 120 txt_shown
check_eq "follow (text): the count once, no 'how many unknown'" \
	"$(grep -c "stderr: FULL: $R fault reports and messages refused for lack of room so far" "$out/follow.txt") $(grep -c 'how many unknown' "$out/follow.txt")" \
	"1 0"
top_at() {
	tail -n 1 "$out/top.json" | jq -e --argjson i "$wid" --argjson n "$R" \
		'.programs[] | select(.id == $i) | .streams.stderr.refused_reports == $n' > /dev/null
}
check "top -b --json: stderr's refused_reports is $R" wait_until 60 top_at

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

rep=$("$BPFSTDERR" report --json --journal "$J" 2>/dev/null)
check_eq "report --json, unloaded: stderr's refused_reports and the summary's" \
	"$(jq -c --argjson i "$wid" '[(.programs[] | select(.id == $i) | .unloaded, .streams.stderr.refused_reports), .summary.refused_reports]' <<<"$rep")" \
	"[true,$R,$R]"
kill -TERM "$fpid" "$tpid" "$ppid"
for p in "$fpid" "$tpid" "$ppid"; do wait "$p"; check_eq "follow and top end 0" "$?" 0; done
kill -TERM "$rpid"; wait "$rpid"
check_eq "record ends 0" "$?" 0
check_eq "the journal counts them once, though two processes counted" "$(refused_err)" "$R"
finish
