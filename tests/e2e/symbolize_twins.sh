# Programs with equal instructions share a tag (issue 27 item 1): twin_a
# (twin_one in twin_a.bpf.c) and twin_b (twin_two and twin_one in
# twin_b.bpf.c), three programs, one tag (bpftool prog show -j says so).
# A frame is looked up in the report's own program first, then by tag and
# name; programs that still differ are all listed; the kernel's own line
# under a frame wins over ours. Expected lines: the kernel's rule applied
# to the jited line info the test reads itself (holdprog linfo), names
# from /proc/kallsyms. Then the programs are unloaded one by one and
# report, from the journal, must say the same.
# INJECTED CONTENT: the reports come from tests/shim.
. tests/lib.sh

SHIM=$HELPERS/libstreamshim.so
out=$(mktmp)
start_holder A twin_a || { fail "load twin_a"; finish; }
start_holder B twin_b || { fail "load twin_b"; finish; }
start_holder W writer || { fail "load the writer"; finish; }
a1=$(prog_id A twin_one)
b2=$(prog_id B twin_two)
b1=$(prog_id B twin_one)
wid=$(prog_id W writer)
tags=$(bpftool prog show -j | jq -r "[.[] | select(.id == $a1 or .id == $b1 or .id == $b2) | .tag] | unique | length")
check_eq "bpftool: the three programs have one tag" "$tags" 1

for id in "$a1" "$b2" "$b1"; do
	echo "linfo $id" >&"$A_IN"
	: > "$out/linfo.$id"
	while IFS= read -r -t 120 -u "$A_OUT" line && [ "$line" != end ]; do echo "$line" >> "$out/linfo.$id"; done
done
# Per program: "FRAME FILE LINE BASENAME" at the middle of the function
# (the same offset in each: the code is the same).
python3 - "$out" "$a1" "$b2" "$b1" <<'PY'
import os, sys
d = sys.argv[1]
ksyms = {int(l.split()[0], 16): l.split()[2] for l in open("/proc/kallsyms")}
for pid in sys.argv[2:]:
    lines = open(f"{d}/linfo.{pid}").read().splitlines()
    (_, addr, n), = [l.split() for l in lines if l.startswith("fn ")]
    li = [(int(a, 16), int(line), f.strip()) for _, a, line, f in
          (l.split(maxsplit=3) for l in lines if l.startswith("li "))]
    lo, n = int(addr, 16), int(n)
    off = n // 2
    below = [e for e in li if lo <= e[0] < lo + n and e[0] < lo + off]
    with open(f"{d}/want.{pid}", "w") as w:
        w.write(f"{ksyms[lo]}+{off:#x}/{n:#x} {below[-1][2]} {below[-1][1]} "
                f"{os.path.basename(below[-1][2])}\n")
PY
read -r fa filea linea basea < "$out/want.$a1"
read -r fb2 fileb2 lineb2 baseb2 < "$out/want.$b2"
read -r fb1 fileb1 lineb1 baseb1 < "$out/want.$b1"
check "the twins' lines differ (else this test shows nothing)" \
	test "$basea:$linea" != "$baseb1:$lineb1" -a "$lineb1" != "$lineb2"

report_of() {	# HEADER FRAME [KERNEL_LINE]: a report with one BPF frame
	printf 'ERROR: %s\nCPU: 0 UID: 0 PID: 1 Comm: t\nCall trace:\n' "$1"
	printf 'bpf_stream_stage_dump_stack+0xb0/0x280\n%s\n' "$2"
	[ -z "${3:-}" ] || printf '  \ta = a * 7 + 3; @ %s\n' "$3"
	printf 'bpf_prog_test_run_syscall+0x10f/0x1f0\n\n'
}
READ="Arena READ access at unmapped address 0x10"
WRITE="Arena WRITE access at unmapped address 0x10"
MAYGOTO="Timeout detected for may_goto instruction"
fixtures() {	# DIR
	report_of "$READ" "$fa" > "$1/$a1.2"
	{ report_of "$READ" "$fb2"
	  report_of "$WRITE" "$fb2" "$baseb2:$lineb2"		# the kernel agrees
	  report_of "$MAYGOTO" "$fb2" "$basea:$linea"; } > "$1/$b2.2"	# it does not
	report_of "$READ" "$fb1" > "$1/$b1.2"
	# Another program's stream: twin_one is in both objects, at other lines.
	{ report_of "$READ" "$fb1"
	  report_of "$MAYGOTO" "$fb1" "$baseb1:$lineb1"; } > "$1/$wid.2"
}
fixtures "$out"
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$out ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" report --json > "$out/live.json" 2> /dev/null
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$out ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" report > "$out/live.txt" 2> /dev/null

frame() {	# JSON ID KIND FILTER: FILTER on the BPF frame of ID's KIND group
	jq -r ".programs[] | select(.id == $2) | .groups[] | select(.kind == \"$3\") |
	       .example.frames[] | select(.kind == \"bpf\") | $4" "$1"
}
at() { frame "$1" "$2" "$3" '"\(.file):\(.line)"'; }
attribution() {	# JSON WHEN: the checks every report must pass
	check_eq "$2: the report's own program first (twin_one of twin_a)" \
		"$(at "$1" "$a1" arena_read)" "$filea:$linea"
	check_eq "$2: the report's own program, not the first with the tag (twin_two)" \
		"$(at "$1" "$b2" arena_read)" "$fileb2:$lineb2"
	check_eq "$2: the own program's function of that name (twin_one of twin_b)" \
		"$(at "$1" "$b1" arena_read)" "$fileb1:$lineb1"
	check_eq "$2: the kernel's line agrees: ours, and says so" \
		"$(frame "$1" "$b2" arena_write '"\(.file):\(.line) \(.line_from)"')" \
		"$fileb2:$lineb2 line_info"
	check_eq "$2: the kernel's line disagrees: the kernel's, and what the line info says" \
		"$(frame "$1" "$b2" may_goto_timeout '"\(.file):\(.line) \(.line_from) \(.line_info_says.file):\(.line_info_says.line)"')" \
		"$basea:$linea kernel $fileb2:$lineb2"
	check_eq "$2: the kernel's line picks one of two candidates" \
		"$(at "$1" "$wid" may_goto_timeout)" "$fileb1:$lineb1"
}
attribution "$out/live.json" "live"
check_eq "live: another program's stream, two programs of that tag and name: both, none picked" \
	"$(frame "$out/live.json" "$wid" arena_read '[.ambiguous[] | "\(.file):\(.line)"] | sort | join(" ")')" \
	"$(printf '%s\n' "$filea:$linea" "$fileb1:$lineb1" | sort | paste -sd' ')"
check_eq "live: an ambiguous frame has no file of its own" \
	"$(frame "$out/live.json" "$wid" arena_read 'has("file")')" false
check "text: the ambiguous frame lists both" \
	grep -qE "_twin_one\+0x[0-9a-f]+/0x[0-9a-f]+ ambiguous, 2 candidates: .*$baseb1:$lineb1" "$out/live.txt"
check "text: the kernel's line, and what the line info says" \
	grep -qF "$basea:$linea  a = a * 7 + 3;  (the kernel's line; line info says $fileb2:$lineb2)" "$out/live.txt"

# follow, its own fixtures: the same attribution as each report arrives.
f=$(mktmp)
fixtures "$f"
LD_PRELOAD=$SHIM BPFSTDERR_SHIM_DIR=$f ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	timeout -s INT 4 "$BPFSTDERR" follow --json --no-journal -p "$b2" -p "$b1" > "$out/f.json" 2> /dev/null
fol() { jq -r "select(.prog.id == $1 and .fault.kind == \"$2\") | .fault.frames[] | select(.kind == \"bpf\") | \"\(.file):\(.line)\"" "$out/f.json"; }
check_eq "follow: twin_two's report, its own line" "$(fol "$b2" arena_read)" "$fileb2:$lineb2"
check_eq "follow: twin_one of twin_b, its own line" "$(fol "$b1" arena_read)" "$fileb1:$lineb1"
check_eq "follow: the kernel's line where it disagrees" "$(fol "$b2" may_goto_timeout)" "$basea:$linea"

# Post-mortem: the other object goes first, then the rest; the journal's
# lines must stay each program's own.
stop_holder A
"$BPFSTDERR" report --json > "$out/gone_a.json" 2> /dev/null
attribution "$out/gone_a.json" "twin_a unloaded"
stop_holder B
"$BPFSTDERR" report --json > "$out/gone.json" 2> /dev/null
attribution "$out/gone.json" "both unloaded"
check_eq "both unloaded: the ambiguous frame stays ambiguous" \
	"$(frame "$out/gone.json" "$wid" arena_read '[.ambiguous[] | "\(.file):\(.line)"] | sort | join(" ")')" \
	"$(printf '%s\n' "$filea:$linea" "$fileb1:$lineb1" | sort | paste -sd' ')"
check "every JSON parses (python's json)" python3 -c '
import json, sys
for p in sys.argv[1:]:
    for line in open(p):
        line.strip() and json.loads(line)
' "$out/f.json" && python3 -c 'import json, sys; [json.load(open(p)) for p in sys.argv[1:]]' \
	"$out/live.json" "$out/gone_a.json" "$out/gone.json"
stop_holder W
finish
