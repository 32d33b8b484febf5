#!/usr/bin/env python3
"""The measuring half of bench/symbolize.sh: VMLINUX FRAMES."""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

vmlinux, n = sys.argv[1], int(sys.argv[2])
random.seed(42)
nm = subprocess.run(["nm", "-n", vmlinux], capture_output=True, text=True, check=True).stdout
syms = [(int(p[0], 16), p[2]) for p in (l.split() for l in nm.splitlines())
        if len(p) == 3 and p[1] in "tT"]
sized = [(a, name, nxt - a) for (a, name), (nxt, _) in zip(syms, syms[1:]) if nxt - a > 1]
picks = random.sample(sized, n)
frames = [(a, name, random.randrange(1, size), size) for a, name, size in picks]
tmp = tempfile.mkdtemp()


def report(fr, path):
    with open(path, "w") as f:
        f.write("ERROR: Timeout detected for may_goto instruction\nCPU: 0 UID: 0 PID: 1 Comm: b\n"
                "Call trace:\n" + "".join(f"{name}+{off:#x}/{size:#x}\n" for _, name, off, size in fr)
                + "\n")


report(frames[:1], f"{tmp}/one.txt")
report(frames, f"{tmp}/all.txt")
addrs = [hex(a + off - 1) for a, _, off, _ in frames]


def run(cmd, stdin=None):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if stdin:
        p.stdin.write(stdin.encode())
        p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    return time.monotonic() - t0, ru.ru_maxrss / 1024, status


tools = {
    "bpfstderr": lambda fr, path: (["build/bpfstderr", "report", "--json", "--vmlinux", vmlinux, path], None),
    "llvm-addr2line-19 -i": lambda fr, path: (["llvm-addr2line-19", "-f", "-i", "-e", vmlinux], fr),
    "eu-addr2line -i": lambda fr, path: (["eu-addr2line", "-f", "-i", "-e", vmlinux], fr),
    "addr2line -i": lambda fr, path: (["addr2line", "-f", "-i", "-e", vmlinux], fr),
}
res = {}
for name, mk in tools.items():
    first = run(*mk(addrs[0] + "\n", f"{tmp}/one.txt"))
    total = run(*mk("\n".join(addrs) + "\n", f"{tmp}/all.txt"))
    res[name] = (first[0], total[0], max(first[1], total[1]))
# Agreement with llvm-addr2line-19 on the same frames (names told apart
# by /size only: ambiguous ones are listed, not compared here).
alias = {}
for a, name in syms:
    alias.setdefault(a, set()).add(name)
sizes = {}
for a, name, size in sized:
    sizes.setdefault(name, []).append(size)
out = json.loads(subprocess.run(["build/bpfstderr", "report", "--json", "--vmlinux", vmlinux,
                                 f"{tmp}/all.txt"], capture_output=True, text=True).stdout)
ours = out["programs"][0]["groups"][0]["example"]["frames"]
ll = [json.loads(l) for l in subprocess.run(
    ["llvm-addr2line-19", "-f", "-i", "--output-style=JSON", "-e", vmlinux],
    input="\n".join(addrs), capture_output=True, text=True).stdout.splitlines()]
agree = compared = 0
for (a, name, off, size), fr, l in zip(frames, ours, ll):
    if sizes[name].count(size) != 1:
        continue
    want = [(x["FunctionName"], os.path.basename(x["FileName"]), x["Line"]) for x in l["Symbol"]]
    want = [] if want == [("", "", 0)] else want
    got = [(x.get("function", ""), os.path.basename(x.get("file", "")), x.get("line", 0))
           for x in fr.get("sites", [])]
    compared += 1
    agree += len(got) == len(want) and all(g[1:] == w[1:] for g, w in zip(got, want)) and \
        all(g[0] == w[0] for g, w in zip(got[:-1], want[:-1])) and \
        (not got or got[-1][0] == want[-1][0] or {got[-1][0], want[-1][0]} <= alias.get(a, set()))
base = res["bpfstderr"]
print(f"{os.path.basename(vmlinux)} ({os.path.getsize(vmlinux) >> 20} MB), {n} random frames")
print(f"{'tool':24} {'first frame':>12} {'total':>9} {'peak RSS':>10}   ratios to bpfstderr")
for name, (f, t, m) in res.items():
    print(f"{name:24} {f:10.2f} s {t:7.2f} s {m:7.0f} MB   "
          f"{f / base[0]:5.2f}x {t / base[1]:5.2f}x {m / base[2]:5.2f}x")
print(f"bpfstderr agrees with llvm-addr2line-19 -i on {agree} of {compared} unambiguous frames "
      "(function, file, line and every inlined call)")
