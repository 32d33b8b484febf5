#!/usr/bin/env python3
"""Write a fault report whose trace holds every byte offset of every text
symbol of a fake kernel (each also once right after an exception entry, so
looked up as the trapping instruction), and every third of its module's.
usage: symbolize_check_frames.py DIR  -> DIR/frames.txt, DIR/report.txt
"""
import subprocess
import sys

d = sys.argv[1]


def sized(elf):
    out = subprocess.run(["nm", "-n", elf], capture_output=True, text=True, check=True).stdout
    syms = [(int(p[0], 16), p[2]) for p in (l.split() for l in out.splitlines())
            if len(p) == 3 and p[1] in "tTW"]
    res = []
    for i, (addr, name) in enumerate(syms):
        nxt = next((a for a, _ in syms[i + 1:] if a > addr), None)
        if nxt:
            res.append((name, nxt - addr))
    return res


lines = []
for name, size in sized(f"{d}/vmlinux"):
    lines += [f"{name}+{off:#x}/{size:#x}" for off in range(1, size)]
    lines += ["asm_exc_page_fault+0x1/0x10", f"{name}+{size // 2:#x}/{size:#x}"]
for name, size in sized(f"{d}/fake_mod.ko"):
    lines += [f"{name}+{off:#x}/{size:#x} [fake_mod]" for off in range(1, size, 3)]
with open(f"{d}/frames.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
with open(f"{d}/report.txt", "w") as f:
    f.write("ERROR: Timeout detected for may_goto instruction\n"
            "CPU: 0 UID: 0 PID: 1 Comm: fake\nCall trace:\n" + "\n".join(lines) + "\n\n")
