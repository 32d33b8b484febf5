#!/usr/bin/env python3
"""Readers that share a stream without a journal: check each one against
the bytes the shim served to it (its log, written under the fixture's
lock, in read order) and the fixture itself.

usage: served_check.py FIXTURE SHIM_LOG PROG_ID STREAM_ID PID=EVENTS...

- Every byte of the fixture was served once, to one of the PIDs.
- Each reader's events on that stream (Python's strict json parser),
  each text plus, for a message not marked partial, '\\n', are exactly
  the bytes it was served, in order: nothing lost, nothing twice, and a piece of a line is
  never shown as a whole line, at the end of a read or when flushed.

Prints one line per problem; exit 0 when there is none.
"""
import base64
import json
import sys

STREAMS = {1: "stdout", 2: "stderr"}


def served(log, prog_id, stream, size):
    """{pid: bytes ranges in read order}, and problems with the coverage."""
    ranges, owner, bad = {}, [None] * size, []
    with open(log) as f:
        for line in f:
            pid, pid_prog, sid, off, n, _ns = map(int, line.split())
            if pid_prog != prog_id or sid != stream:
                continue
            ranges.setdefault(pid, []).append((off, n))
            for i in range(off, min(off + n, size)):
                if owner[i] is not None:
                    bad.append(f"byte {i} served twice")
                    break
                owner[i] = pid
    missing = sum(1 for o in owner if o is None)
    if missing:
        bad.append(f"{missing} of {size} bytes never served")
    return ranges, bad


def printed(path, stream_name):
    got, bad = b"", []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            try:
                ev = json.loads(line.decode("utf-8"), strict=True)
            except (ValueError, UnicodeDecodeError) as e:
                bad.append(f"{path}:{n}: not valid JSON: {e}")
                continue
            if ev["stream"] != stream_name:
                continue
            if "text_base64" in ev:
                got += base64.b64decode(ev["text_base64"])
            else:
                got += ev["text"].encode("utf-8")
            if ev["kind"] == "message" and not ev["partial"]:
                got += b"\n"
    return got, bad


def main():
    fixture, log, prog_id, stream = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    readers = dict(a.split("=", 1) for a in sys.argv[5:])
    with open(fixture, "rb") as f:
        data = f.read()
    ranges, bad = served(log, prog_id, stream, len(data))
    for pid, path in readers.items():
        want = b"".join(data[o:o + n] for o, n in ranges.get(int(pid), []))
        got, problems = printed(path, STREAMS[stream])
        bad += problems
        if got != want:
            i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                     min(len(got), len(want)))
            bad.append(f"{path}: printed {len(got)} bytes, was served {len(want)}; "
                       f"first difference at {i}: {got[i:i + 12]!r} vs {want[i:i + 12]!r}")
    for b in bad:
        print(b)
    sys.exit(1 if bad else 0)


main()
