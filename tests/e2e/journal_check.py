#!/usr/bin/env python3
"""Read a bpfstderr journal with Python's own sqlite3 module (not ours).

usage:
  journal_check.py stream DB PROG_ID STREAM
      the stream's bytes as the journal has them, in seq order, on stdout
      (a message is its text and '\\n' unless partial; a report is as is)
  journal_check.py kills DB PROG_ID STREAM FIXTURE SHIMLOG KILLED_PID...
      walks the shim's log of served reads in order: each read's bytes must
      come next in the journal's stream (kept), or the read was lost. Lost
      reads must all be by killed processes, each one's lost reads the last
      it made; their bytes, time span and the longest pause between two of
      them are printed. Exit 1 on a problem.
      A process killed inside the shim, between its log line and its
      offset update, never got its bytes: they are served again, and the
      log shows that offset twice, first for the killed process.
"""
import sqlite3
import sys


def stream_bytes(db, prog_id, stream):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT e.kind, e.flags, e.text FROM events e JOIN progs p ON p.row = e.prog "
        "WHERE p.id = ? AND e.stream = ? ORDER BY e.seq", (prog_id, stream))
    out = bytearray()
    for kind, flags, text in rows:
        out += bytes(text)
        if kind == 0 and not flags & 1:
            out += b"\n"
    con.close()
    return bytes(out)


def kills(db, prog_id, stream, fixture, log, killed):
    data = open(fixture, "rb").read()
    got = stream_bytes(db, prog_id, stream)
    reads, problems = [], []
    for line in open(log):
        pid, pid_prog, st, off, n, t = (int(x) for x in line.split())
        if pid_prog != prog_id or st != stream:
            continue
        if reads and reads[-1][0] == off:
            prev = reads.pop()
            if prev[2] not in killed or prev[2] == pid:
                problems.append(f"offset {off} served twice, not to a process killed in the shim")
        reads.append((off, n, pid, t))
    pos, expect = 0, 0
    lost = {}
    for off, n, pid, t in reads:
        if off != expect:
            problems.append(f"reads not contiguous at {off} (expected {expect})")
        expect = off + n
        if got[pos:pos + n] == data[off:off + n]:
            pos += n
            if pid in lost:
                problems.append(f"pid {pid}: a read kept after one lost")
        else:
            lost.setdefault(pid, []).append((off, n, t))
    if pos != len(got):
        problems.append(f"the journal has {len(got) - pos} bytes no read accounts for")
    if expect != len(data):
        problems.append(f"{len(data) - expect} fixture bytes never served")
    for pid, rs in lost.items():
        if pid not in killed:
            problems.append(f"pid {pid} was not killed but lost {len(rs)} reads")
    # (bytes, span in ms, largest pause between two of its reads in ms)
    windows = [(sum(n for _, n, _ in rs), (rs[-1][2] - rs[0][2]) / 1e6,
                max((b[2] - a[2] for a, b in zip(rs, rs[1:])), default=0) / 1e6)
               for rs in lost.values()]
    for p in problems:
        print(p)
    print(f"reads {len(reads)} served {expect} kept {pos} lost_windows {len(windows)} "
          f"lost_bytes {sum(w[0] for w in windows)} "
          f"largest_window_bytes {max((w[0] for w in windows), default=0)} "
          f"largest_window_ms {max((w[1] for w in windows), default=0):.1f} "
          f"largest_pause_in_window_ms {max((w[2] for w in windows), default=0):.1f}")
    return 1 if problems else 0


def main():
    cmd = sys.argv[1]
    if cmd == "stream":
        sys.stdout.buffer.write(stream_bytes(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        return 0
    if cmd == "kills":
        db, prog_id, stream, fixture, log = sys.argv[2:7]
        return kills(db, int(prog_id), int(stream), fixture, log, {int(p) for p in sys.argv[7:]})
    print(__doc__)
    return 2


sys.exit(main())
