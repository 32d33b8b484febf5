# `top -b`: every row aligned under its header, whatever the names. The
# names program's BTF name has 34 characters (the kernel keeps 15), longer
# than NAME's narrowest width (24): the column grows to it, rows stay put.
. tests/lib.sh

out=$(mktmp)
start_holder H names || { fail "load test programs"; finish; }
long=$(prog_id H a_program_name_)
"$BPFSTDERR" top -b -n 1 --no-journal > "$out/top.txt" 2> "$out/top.err"; rc=$?
check_eq "top -b -n 1: exit 0" "$rc" 0
sed -n '2,/^$/p' "$out/top.txt" | sed '/^$/d' > "$out/table.txt"
header=$(head -n 1 "$out/table.txt")
row=$(awk -v id="$long" '$1 == id' "$out/table.txt")
check "the long name shown in full" grep -qw a_program_name_longer_than_fifteen <<<"$row"
check_eq "every row as long as the header" \
	"$(awk '{ print length($0) }' "$out/table.txt" | sort -u)" "${#header}"
# The long-named row's cells where their headers are: OWNER and
# SATURATION start where theirs start, OUT (right-aligned) ends where its
# header ends (0-based offsets).
col_at() { awk -v h=" $1" 'NR == 1 { print index($0, h) }' "$out/table.txt"; }
cell_starts() { [ "${row:$1-1:1}" = " " ] && [ "${row:$1:1}" != " " ]; }
cell_ends() { [ "${row:$1-1:1}" != " " ] && [ "${row:$1:1}" = " " ]; }
check "long-named row: OWNER under its header" cell_starts "$(col_at OWNER)"
check "long-named row: SATURATION under its header" cell_starts "$(col_at SATURATION)"
check "long-named row: OUT under its header" cell_ends "$(($(col_at OUT) + 3))"

# A bpf_stream_print_stack() dump is neither a message nor a fault: top
# counts it apart. INJECTED CONTENT: tests/fixtures/print-stack-7.3.txt
# (its dumps by their "Call trace:" lines, its messages the other lines
# before a dump) served by tests/shim as the writer's stderr.
start_holder W writer || { fail "load writer"; finish; }
wid=$(prog_id W writer)
d=$(mktmp)
cp tests/fixtures/print-stack-7.3.txt "$d/$wid.2"
dumps=$(grep -c '^Call trace:' tests/fixtures/print-stack-7.3.txt)
LD_PRELOAD=$HELPERS/libstreamshim.so BPFSTDERR_SHIM_DIR=$d ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" top -b --json -n 3 -d 0.3 --no-journal > "$out/stack.json" 2> /dev/null
check_eq "top: the fixture's $dumps stack dumps counted as dumps, not as faults" \
	"$(tail -n 1 "$out/stack.json" | jq -c --argjson i "$wid" '.programs[] | select(.id == $i) | [.stack_dumps, .fault_count]')" \
	"[$dumps,0]"
check_eq "top: stderr messages as report --input counts the dump's (the lines around the dumps)" \
	"$(tail -n 1 "$out/stack.json" | jq --argjson i "$wid" '.programs[] | select(.id == $i) | .messages.stderr')" \
	"$("$BPFSTDERR" report --input tests/fixtures/print-stack-7.3.txt --json 2>/dev/null | jq '[.programs[].messages.stderr] | add')"
finish
