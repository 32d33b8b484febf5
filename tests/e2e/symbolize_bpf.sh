# BPF frames of a live program with subprograms: for every jited byte
# offset, bpfstderr's source line is the kernel's rule (the last line entry
# whose jited address is below the address) applied to the line info the
# test reads itself; names, tags and addresses are confirmed by
# /proc/kallsyms, and every line by llvm-objdump-19 -l of the object.
# INJECTED CONTENT: the report naming those frames comes from tests/shim.
. tests/lib.sh

out=$(mktmp)
start_holder H subprogs || { fail "load test programs"; finish; }
start_holder W writer || { fail "load the writer"; finish; }
id=$(prog_id H subprogs_main)
wid=$(prog_id W writer)
echo linfo >&"$H_IN"
: > "$out/linfo"
while IFS= read -r -t 120 -u "$H_OUT" line && [ "$line" != end ]; do echo "$line" >> "$out/linfo"; done
check "the test read the program's line info" grep -q '^li ' "$out/linfo"

# The frames, named as kallsyms names the functions.
python3 - "$out" <<'PY' > "$out/frames.txt"
import sys
d = sys.argv[1]
fns = [l.split() for l in open(f"{d}/linfo") if l.startswith("fn ")]
ksyms = {}
for l in open("/proc/kallsyms"):
    a, t, name = l.split()[:3]
    ksyms[int(a, 16)] = name
for _, addr, length in fns:
    name = ksyms[int(addr, 16)]
    for off in range(int(length)):
        print(f"{name}+{off:#x}/{int(length):#x}")
PY
check_eq "kallsyms names all 3 functions with their tags" \
	"$(cut -d+ -f1 "$out/frames.txt" | sed 's/bpf_prog_[0-9a-f]\{16\}_//' | sort -u | paste -sd' ')" \
	"sub_add sub_mix subprogs_main"

# Served as the stderr of another real program (the faulting program need
# not be the one whose stream carries the report).
{ printf 'ERROR: Arena READ access at unmapped address 0x10\nCPU: 0 UID: 0 PID: 1 Comm: t\nCall trace:\n'
  cat "$out/frames.txt"; printf '\n'; } > "$out/$wid.2"
LD_PRELOAD=$HELPERS/libstreamshim.so BPFSTDERR_SHIM_DIR=$out ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" report --json -p "$wid" > "$out/r.json" 2> /dev/null
llvm-objdump-19 -d -l "$(dirname "$BPFSTDERR")/bpf/subprogs.bpf.o" > "$out/objdump.txt"

res=$(python3 - "$out" <<'PY'
import json, re, sys
d = sys.argv[1]
fns = [(int(a, 16), int(n)) for _, a, n in (l.split() for l in open(f"{d}/linfo") if l.startswith("fn "))]
li = [(int(a, 16), int(line), f) for _, a, line, f in (l.split(maxsplit=3) for l in open(f"{d}/linfo") if l.startswith("li "))]
frames = json.load(open(f"{d}/r.json"))["programs"][0]["groups"][0]["example"]["frames"]
objdump_lines = {int(m.group(1)) for m in re.finditer(r"subprogs\.bpf\.c:(\d+)", open(f"{d}/objdump.txt").read())}
bad = checked = 0
i = 0
for lo, n in fns:
    for off in range(n):
        fr = frames[i]; i += 1
        ip = lo + off
        below = [e for e in li if lo <= e[0] < lo + n and e[0] < ip]
        want = (below[-1][1], below[-1][2].strip()) if below else None
        got = (fr["line"], fr["file"]) if "file" in fr else None
        checked += 1
        if got != want:
            bad += 1
            if bad < 5: print(f"{fr['symbol']}+{off:#x}: got {got}, want {want}")
        if got and got[0] not in objdump_lines:
            bad += 1
            print(f"{fr['symbol']}+{off:#x}: line {got[0]} not in llvm-objdump -l")
print(f"{checked} offsets checked, {bad} wrong")
PY
)
check "every jited offset: the kernel's rule, llvm-objdump's lines ($(tail -n 1 <<<"$res"))" grep -q ' 0 wrong$' <<<"$res"
[ -z "${res##* 0 wrong}" ] || head -n 5 <<<"$res"
check_eq "BPF frames carry the source text" \
	"$(jq -r '[.programs[0].groups[0].example.frames[] | select(.source)] | length > 0' "$out/r.json")" true

# A program gone when a report names it, then loaded again (the same code,
# so the same tags): in the same follow, its frames resolve once it is
# back (a tag looked for in vain is looked for again among the programs
# loaded since), as report resolved them above. Without the journal, which
# learned those frames' lines from report above.
k=$(jq '[.programs[0].groups[0].example.frames[] | has("file")] | index(true)' "$out/r.json")
frame=$(sed -n "$((k + 1))p" "$out/frames.txt")
want=$(jq -c ".programs[0].groups[0].example.frames[$k] | [.file, .line]" "$out/r.json")
stop_holder H
report_of() {	# ADDR FRAME: a report with that one BPF frame
	printf 'ERROR: Arena READ access at unmapped address %s\nCPU: 0 UID: 0 PID: 1 Comm: t\nCall trace:\n%s\n\n' "$1" "$2"
}
has_events() { [ "$(grep -c . "$out/f.json")" -ge "$1" ]; }
got_events() { wait_until 60 has_events "$1"; }	# N: follow printed N events
f=$(mktmp)	# a fixture of its own: the shim serves from where it left off
: > "$f/$wid.2"
LD_PRELOAD=$HELPERS/libstreamshim.so BPFSTDERR_SHIM_DIR=$f ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
	"$BPFSTDERR" follow --json --no-journal -p "$wid" > "$out/f.json" 2> "$out/f.err" & fpid=$!
sleep 1
report_of 0x20 "$frame" >> "$f/$wid.2"
fixture_added W
check "follow printed the report of the gone program" got_events 1
start_holder H subprogs || fail "load subprogs again"
report_of 0x30 "$frame" >> "$f/$wid.2"
fixture_added W
check "follow printed the report once it is loaded again" got_events 2
kill -TERM "$fpid"; wait "$fpid"
frame_at() { sed -n "$1p" "$out/f.json" | jq -c '.fault.frames[0] | [.file, .line]'; }
check_eq "gone: its frame has no source line" "$(frame_at 1)" '[null,null]'
check_eq "loaded again: the frame resolves as report resolved it" "$(frame_at 2)" "$want"
stop_holder H
stop_holder W
finish
