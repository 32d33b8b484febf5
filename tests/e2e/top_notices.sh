# top's notices (the lines under its status line) fit the terminal: at
# 80 and 60 columns each is whole or ends in "[n: more]", nothing spills
# onto the next line, and n shows every one in full, wrapped at the width.
# Oracles: tmux capture-pane (what a person sees), doctor's measured
# meaning of the stream writes, /proc/version and DMI for where it runs.
. tests/lib.sh

S=bpfstderr-notices-$$
out=$(mktmp)
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT

"$BPFSTDERR" doctor --json > "$out/d.json" || { fail "doctor"; finish; }
meaning=$(jq -r .stream_writes.meaning "$out/d.json")
verdict=$(jq -r .stream_writes.verdict "$out/d.json")
# where: the distribution's own kernel version, else the release
where=$(sed -n 's/.* Debian \([0-9.]*[0-9]\).*/Debian \1/p' /proc/version)
where=${where:-Linux $(uname -r)}
grep -q QEMU /sys/class/dmi/id/sys_vendor 2>/dev/null && where+=" under QEMU"

# widths by awk: the ellipsis (U+2026, 3 bytes) counted as one column
# notices: the screen's lines from the second to the table's header
notices() { screen | awk 'NR > 1 && $1 == "ID" { exit } NR > 1'; }
for cols in 80 60; do
	tmux kill-session -t "$S" 2>/dev/null
	top_pane "$S" "$cols" 30 "$BPFSTDERR top --demo --journal $out/j.db 2> $out/top.err"
	check "$cols cols: top --demo draws its table" wait_for "demo_"
	notices > "$out/n.txt"
	check "$cols cols: the demo's notice names where it runs ($where)" \
		grep -qF "demo on $where" "$out/n.txt"
	check "$cols cols: 2 or 3 notices (writes, demo, refusals)" \
		bash -c '[ $(wc -l < "$1") -ge 2 ] && [ $(wc -l < "$1") -le 3 ]' _ "$out/n.txt"
	bad=$(awk -v c="$cols" '{ gsub(/\342\200\246/, ".") } length($0) > c' "$out/n.txt")
	check_eq "$cols cols: no notice passes the width" "$bad" ""
	if [ "$verdict" != works ]; then
		check "$cols cols: the write notice is shortened and says so" \
			grep -q '^stream writes .*\[n: more\]$' "$out/n.txt"
	fi
	keys n
	screen > "$out/page.txt"
	check "$cols cols: n opens the notices in full" grep -q '^bpfstderr top - notices in full' "$out/page.txt"
	check_eq "$cols cols: no line of the page passes the width" \
		"$(awk -v c="$cols" '{ gsub(/\342\200\246/, ".") } length($0) > c' "$out/page.txt")" ""
	# the page's text, its wrapped lines joined again
	joined=$(awk '/^bpfstderr top - notices in full/ { on = 1; next } on' "$out/page.txt" | tr '\n' ' ' | tr -s ' ')
	if [ "$verdict" = works ]; then
		check "$cols cols: the page says stream writes work, as doctor does" \
			grep -qF -- "stream writes work: messages and fault reports are readable" <<<"$joined"
	else
		check "$cols cols: the page holds doctor's meaning of the writes ($verdict) in full" \
			grep -qF -- "$meaning" <<<"$joined"
	fi
	check "$cols cols: the page holds where the demo runs" grep -qF "demo on $where: demo_* programs fault once a second" <<<"$joined"
	# a notice not marked shortened is the whole of one the page holds
	while read -r line; do
		check "$cols cols: '${line:0:30}...' is whole or marked [n: more]" \
			grep -qF -- "$line" <<<"$joined"
	done < <(grep -v '\[n: more\]$' "$out/n.txt")
	keys q
	check "$cols cols: q goes back to the table" wait_for " ID "
	keys q
	check "$cols cols: q quits, terminal restored, exit 0" wait_for "terminal same rc=0"
	check_eq "$cols cols: nothing on stderr" "$(cat "$out/top.err")" ""
done

# Wide enough, a notice is shown whole.
tmux kill-session -t "$S" 2>/dev/null
top_pane "$S" 250 30 "$BPFSTDERR top --demo --journal $out/j.db 2> $out/top.err"
check "250 cols: top --demo draws its table" wait_for "demo_"
check "250 cols: the demo's notice is whole" bash -c "notices() { tmux capture-pane -p -t $S; }; \
	notices | grep -q '^demo on $where: demo_\* programs fault once a second'"
keys q
check "250 cols: q quits, exit 0" wait_for "terminal same rc=0"
finish
