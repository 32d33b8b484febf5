#!/usr/bin/env python3
"""Compare bpfstderr's symbolized kernel frames with llvm-addr2line-19 -i
(and count eu-addr2line -i's opinion) for a fake kernel.

usage: symbolize_check.py DIR REPORT_JSON FRAMES_TXT
DIR holds vmlinux and fake_mod.ko; FRAMES_TXT is the trace that was fed to
bpfstderr (one frame a line). Prints one line per disagreement and a
summary line "checked N frames, M ambiguous, E eu-addr2line disagreements".
"""
import json
import os
import subprocess
import sys

d, report, frames_txt = sys.argv[1:4]


def text_symbols(elf):
    """name -> [(addr, kallsyms size)], with nm -n as the independent reader."""
    out = subprocess.run(["nm", "-n", elf], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTW":
            syms.append((int(parts[0], 16), parts[2]))
    table = {}
    for i, (addr, name) in enumerate(syms):
        nxt = next((a for a, _ in syms[i + 1:] if a > addr), None)
        table.setdefault(name, []).append((addr, (nxt - addr) if nxt else 0))
    return table


def llvm(elf, addrs):
    if not addrs:
        return []
    out = subprocess.run(["llvm-addr2line-19", "-f", "-i", "--output-style=JSON", "-e", elf],
                         input="\n".join(hex(a) for a in addrs), capture_output=True,
                         text=True, check=True).stdout
    res = []
    for line in out.splitlines():
        res.append([(s["FunctionName"], os.path.basename(s["FileName"]), s["Line"])
                    for s in json.loads(line)["Symbol"]])
    return res


def eu(elf, addr):
    out = subprocess.run(["eu-addr2line", "-f", "-i", "-e", elf, hex(addr)],
                         capture_output=True, text=True).stdout.split("\n")
    sites = []
    for i in range(0, len(out) - 1, 2):
        name = out[i].split(" inlined at")[0].strip()
        fl = out[i + 1].split(":")
        sites.append((name, os.path.basename(fl[0]),
                      int(fl[1]) if len(fl) > 1 and fl[1].isdigit() else 0))
    return sites


syms = {"vmlinux": text_symbols(f"{d}/vmlinux"), "fake_mod": text_symbols(f"{d}/fake_mod.ko")}
aliases = {}
for obj, table in syms.items():
    by_addr = {}
    for sym, lst in table.items():
        for a, _ in lst:
            by_addr.setdefault(a, set()).add(sym)
    aliases[obj] = by_addr


def fr_addr(fr, obj):
    """The address of the symbol a frame names (its first candidate)."""
    return syms[obj][fr["symbol"]][0][0]
ours = json.load(open(report))["programs"][0]["groups"][0]["example"]["frames"]
lines = [l.strip() for l in open(frames_txt) if l.strip()]
assert len(ours) == len(lines), (len(ours), len(lines))

wanted = {"vmlinux": [], "fake_mod": []}
plan = []
for i, (fr, line) in enumerate(zip(ours, lines)):
    obj = fr.get("module", "vmlinux")
    exact = i > 0 and lines[i - 1].startswith("asm_exc_")
    cands = [a for a, size in syms[obj][fr["symbol"]] if len(syms[obj][fr["symbol"]]) == 1
             or size == fr["size"]]
    addrs = [a + fr["offset"] - (0 if exact else 1) for a in cands]
    plan.append((fr, obj, addrs))
    wanted[obj] += addrs

answers = {obj: dict(zip(wanted[obj], llvm(f"{d}/{'vmlinux' if obj == 'vmlinux' else 'fake_mod.ko'}",
                                           wanted[obj]))) for obj in wanted}
bad = ambiguous = eu_bad = 0
for fr, obj, addrs in plan:
    name = f"{fr['symbol']}+{fr['offset']:#x}/{fr['size']:#x}"
    if len(addrs) != 1:
        ambiguous += 1
        got = sorted((os.path.basename(s.get("file", "")), s.get("line", 0)) for s in fr.get("ambiguous", []))
        want = sorted((a[0][1], a[0][2]) for a in (answers[obj][x] for x in addrs))
        if got != want:
            print(f"{name}: ambiguous candidates {got}, llvm-addr2line {want}")
            bad += 1
        continue
    got = [(s.get("function", ""), os.path.basename(s.get("file", "")), s.get("line", 0))
           for s in fr.get("sites", [])]
    want = answers[obj][addrs[0]]
    if want in ([("", "", 0)], [("", "??", 0)]):
        want = []	# no line information there (padding): nothing to say
    # aliases (several names at one address): llvm-addr2line names any
    if got[:-1] != want[:-1] or (got and want and got[-1][1:] != want[-1][1:]) or \
            (got and want and got[-1][0] != want[-1][0] and
             not {got[-1][0], want[-1][0]} <= aliases[obj].get(fr_addr(fr, obj), set())) or \
            bool(got) != bool(want):
        print(f"{name} at {addrs[0]:#x}: ours {got}, llvm-addr2line {want}")
        bad += 1
    if obj == "vmlinux" and want and eu(f"{d}/vmlinux", addrs[0]) != want:
        eu_bad += 1
        if eu_bad == 1:
            print(f"note: eu-addr2line differs at {addrs[0]:#x}: {eu(f'{d}/vmlinux', addrs[0])} vs {want}")
print(f"checked {len(plan)} frames, {ambiguous} ambiguous, {eu_bad} eu-addr2line disagreements")
sys.exit(1 if bad else 0)
