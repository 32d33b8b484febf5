# top's history graphs in the detail pane, through tmux at 80 and 200
# columns (braille) and at 80 without UTF-8 (ASCII). INJECTED CONTENT:
# the writer's fault reports and messages come from tests/shim fixtures,
# not from the kernel (stream writes fail here); tests/e2e/shim_feed.py
# refills them each time top has read them all, so that every drain cycle
# reads the same number. Oracles: the shim's own log of what it served and
# when (reports and lines counted in the bytes served), tmux capture-pane
# for what is drawn, bpftool for the runs.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
S=bpfstderr-graphs-$$
out=$(mktmp)
FEED_PID=
trap '[ -n "$FEED_PID" ] && kill $FEED_PID 2>/dev/null; tmux kill-server 2>/dev/null; cleanup' EXIT
K=3	# fault reports a cycle
M=2	# messages a cycle

start_holder H writer names || { fail "load test programs"; finish; }
id=$(prog_id H writer)
quiet=$(prog_id H a_program_name_)
awk 'BEGIN { RS = ""; ORS = "\n\n" } /^ERROR: Arena READ/ { print; exit }' \
	tests/fixtures/upstream-6.18.txt > "$out/report"
printf 'tick from the writer\n' > "$out/message"
mkdir "$out/shim"

run_top() {	# run_top COLS LOCALE
	tmux kill-session -t "$S" 2>/dev/null
	tmux new-session -d -s "$S" -x "$1" -y 40 "LC_ALL=$2 LD_PRELOAD=$SHIM \
		BPFSTDERR_SHIM_DIR=$out/shim BPFSTDERR_SHIM_LOG=$out/shim.log \
		ASAN_OPTIONS=\${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
		$BPFSTDERR top -d 0.5 -s id 2> $out/top.err; echo rc=\$?; sleep 60"
	wait_for " writer " && keys / "holdprog($H_PID)" Enter
}
# shot COLS UNIT VAR...: the fields graph_check.py gives for UNIT's graph
# on screen, into the VARs; checks that the screen is whole
shot() {
	local cols=$1 unit=$2 res; shift 2
	screen > "$out/screen"
	if res=$(python3 tests/e2e/graph_check.py "$cols" "$out/screen" "$unit"); then
		pass "$cols columns, $unit: every line fits, the graph whole under its title"
	else
		fail "$cols columns, $unit: every line fits, the graph whole under its title" "$res"
		res="- - - 0 0 -"
	fi
	read -r "$@" <<<"$res"
}
# select_row ID: from the table (top -s id, filtered to the holder's two
# programs), the row of program ID, then Enter
select_row() {
	keys g
	[ "$1" = "$(printf '%s\n' "$id" "$quiet" | sort -n | tail -n 1)" ] && keys j
	keys Enter
	wait_for "detail of program $1 "
}
# served ID STREAM REGEX: "MIN MEDIAN MAX N", the rates per second at which
# the shim served REGEX units of ID's STREAM to top's drain cycles (reads
# within 100 ms of each other are one cycle; each rate is a cycle's units
# over the time since the cycle before)
served() {
	python3 - "$out/shim.log" "$out/shim/$1.$2" "$1" "$2" "$3" <<'EOF'
import re, statistics, sys
log, fixture, pid, stream, unit = sys.argv[1:]
with open(fixture, "rb") as f:
    data = f.read()
cycles = []     # [first read ns, units, last read ns]
for line in open(log):
    _, i, s, off, n, ns = line.split()
    if i != pid or s != stream:
        continue
    units = len(re.findall(unit.encode(), data[int(off):int(off) + int(n)], re.M))
    ns = int(ns)
    if cycles and ns - cycles[-1][2] < 100e6:
        cycles[-1][1] += units
        cycles[-1][2] = ns
    else:
        cycles.append([ns, units, ns])
rates = [c[1] / ((c[0] - p[0]) / 1e9) for p, c in zip(cycles, cycles[1:])]
print("%g %g %g %d" % (min(rates), statistics.median(rates), max(rates), len(rates)) if rates else "0 0 0 0")
EOF
}
# within MAX MIN MEDIAN HIGHEST: the label is no higher than the highest
# rate served and no lower than the usual one (5% for where each clock was
# read: top's at the end of its tick, the shim's at the read)
within() {
	python3 -c 'import sys; m, lo, med, hi = map(float, sys.argv[1:]); sys.exit(not (0.95 * med <= m <= 1.05 * hi and m > 0))' "$@"
}

python3 tests/e2e/shim_feed.py "$out/shim" "$id" 2 "$out/report" $K "$id" 1 "$out/message" $M &
FEED_PID=$!
# top's first read must find the fixtures' first units: a stream found
# empty, with no kernel write to move its accounting (the shim serves in
# the kernel's place), is not read again for 30 s
wait_until 60 test -s "$out/shim/$id.1" -a -s "$out/shim/$id.2"

# 1. 80 columns, braille: the writer at K reports and M messages a cycle.
run_top 80 C.UTF-8 || fail "top starts"
sleep 8
check "80 columns: the writer's detail opens" select_row "$id"
sleep 1
shot 80 faults/s mx span point points top bottom
read -r lo med hi n < <(served "$id" 2 '^ERROR:')
check "80 columns: faults/s max $mx within what the shim served ($lo..$hi a second, usually $med, $n cycles)" \
	within "$mx" "$lo" "$med" "$hi"
check_eq "80 columns: the graph spans its label (points x seconds a point)" \
	"$(python3 -c "print('%g' % ($points * $point))")" "$span"
check_eq "80 columns: the window is 5 minutes at -d 0.5, a point 2 s" "$span $point" "300 2"
check "80 columns: braille, the rate reaches the top row ($top cells)" [ "$top" -gt 0 ]
shot 80 messages/s mmx mspan mpoint mpoints mtop mbottom
read -r lo med hi n < <(served "$id" 1 '^tick')
check "80 columns: messages/s max $mmx within what the shim served ($lo..$hi, usually $med)" \
	within "$mmx" "$lo" "$med" "$hi"
check "80 columns: no runtime graphs without statistics, and how to get them" \
	bash -c "tmux capture-pane -p -t $S | grep -q '^(runs/s and ns/run: S turns' && ! tmux capture-pane -p -t $S | grep -q '^runs/s  max'"

# 2. The same top at 200 columns: a point per slot, the same rates.
tmux resize-window -t "$S" -x 200 -y 40; sleep 1.5
shot 200 faults/s mx span point points top bottom
read -r lo med hi n < <(served "$id" 2 '^ERROR:')
check "200 columns: faults/s max $mx within what the shim served ($lo..$hi, usually $med)" \
	within "$mx" "$lo" "$med" "$hi"
check_eq "200 columns: one point a second, all 300 of them" "$point $points $span" "1 300 300"
check "200 columns: the rate reaches the top row" [ "$top" -gt 0 ]

# 3. A quiet program: 0, drawn as a flat line at the bottom.
keys q
check "the quiet program's detail opens" select_row "$quiet"
sleep 0.5
flat() {	# flat MAX TOP BOTTOM: max 0, the top row empty, the bottom row the lowest dots
	python3 -c 'import sys; m, t, b = sys.argv[1:]; sys.exit(not (m == "0" and t == "0" and set(b) <= set("\u2840\u2880\u28c0") and "\u28c0" in b))' "$@"
}
shot 200 faults/s qmx qspan qpoint qpoints qtop qbottom
check "quiet: faults/s max $qmx, a flat line ($qtop cells above it, '$qbottom' at the bottom)" \
	flat "$qmx" "$qtop" "$qbottom"
shot 200 messages/s qmx qspan qpoint qpoints qtop qbottom
check "quiet: messages/s max $qmx, a flat line" flat "$qmx" "$qtop" "$qbottom"

# 4. S: runs/s and ns/run graphs from the kernel's statistics.
keys q
select_row "$id" > /dev/null
runs0=$(bpftool prog show id "$id" -j | jq '.run_cnt // 0')
keys S
# runs count between two samples with statistics on: wait for them first
wait_for "runs/s  max" && sleep 1.2
for i in $(seq 20); do holder_cmd H "write 1 0 0" > /dev/null; sleep 0.1; done
runs=$(( $(bpftool prog show id "$id" -j | jq '.run_cnt // 0') - runs0 ))
for i in $(seq 20); do	# a loaded machine may take a few refreshes
	sleep 0.5
	screen > "$out/screen"
	rmx=$(python3 tests/e2e/graph_check.py 200 "$out/screen" runs/s 2> /dev/null | cut -d' ' -f1)
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0)' "$rmx" 2> /dev/null && break
done
shot 200 runs/s rmx rspan rpoint rpoints rtop rbottom
check "S: a runs/s graph, max $rmx > 0 ($runs runs by bpftool)" \
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0 or int(sys.argv[2]) < 20)' "$rmx" "$runs"
shot 200 ns/run nmx rest
check "S: an ns/run graph, max $nmx > 0" \
	python3 -c 'import sys; sys.exit(not float(sys.argv[1].rstrip("kMG")) > 0)' "$nmx"
keys S

# 5. Without UTF-8: ASCII at 80 columns.
run_top 80 C || fail "top starts without UTF-8"
sleep 4
select_row "$id" > /dev/null
sleep 0.5
shot 80 faults/s mx span point points top bottom
check "ASCII: '|' and '.' only, reaching the top row ($top cells, '$bottom')" \
	bash -c "[ '$top' -gt 0 ] && grep -qxE '[.|]+' <<<'$bottom'"
check_eq "ASCII: 75 points of 4 s, 5 minutes" "$points $point $span" "75 4 300"
read -r lo med hi n < <(served "$id" 2 '^ERROR:')
check "ASCII: faults/s max $mx within what the shim served ($lo..$hi, usually $med)" \
	within "$mx" "$lo" "$med" "$hi"

keys q q
check "q, q: top ends, exit 0" wait_for "rc=0"
check_eq "nothing on stderr" "$(cat "$out/top.err")" ""
stop_holder H
finish
