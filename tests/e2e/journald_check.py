#!/usr/bin/env python3
"""Check what a real systemd-journald holds (journalctl -o json, one entry
per line) against the fixtures a test served and bpfstderr's journal read
with Python's own sqlite3. Prints one line per problem; exit 1 on any.

usage:
  journald_check.py match JSON JID ID NAME TAG STREAM FIXTURE
      the entries of journal JID for program ID on STREAM (stdout|stderr),
      in BPFSTDERR_SEQ order, are the fixture's events, one each, in order:
      a message per line, a fault report per "ERROR: " through its blank
      line (the kernel's format), with their fields
  journald_check.py once JSON JID DB
      every event in the journal DB is in JSON exactly once (by
      BPFSTDERR_SEQ), and JSON has no other event entry of JID
"""
import json
import re
import sqlite3
import sys

MSGID_FAULT = "a77146d7d3a24473ad018bd478856d38"
MSGID_MESSAGE = "d55eb863806c4cc1a7c69153f01d212b"
BPF_FRAME = re.compile(rb"bpf_prog_[0-9a-f]{16}_\w*\+0x")


def entries(path, jid):
    out = []
    for line in open(path, encoding="utf-8"):
        e = json.loads(line)
        if e.get("BPFSTDERR_JOURNAL_ID") == jid and e.get("MESSAGE_ID") in (MSGID_FAULT, MSGID_MESSAGE):
            out.append(e)
    return out


def fixture_events(path):
    lines = open(path, "rb").read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    ev, i = [], 0
    while i < len(lines):
        if lines[i].startswith(b"ERROR: "):
            j = i
            while j < len(lines) and lines[j] != b"":
                j += 1
            ev.append(("fault", lines[i:j]))
            i = j + 1
        else:
            ev.append(("message", lines[i]))
            i += 1
    return ev


def site(report):
    """The innermost BPF frame's source line, as the report prints it."""
    for k, line in enumerate(report):
        if BPF_FRAME.search(line):
            m = re.search(rb": \[(.*)\]$", line)
            if m:
                return m.group(1).decode()
            if k + 1 < len(report):
                m = re.search(rb" @ (\S+:\d+)$", report[k + 1])
                if m:
                    return m.group(1).decode()
            return None
    return None


def safe(s):
    """A string journalctl could give as text, without control characters."""
    return isinstance(s, str) and not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in s)


def match(path, jid, prog_id, name, tag, stream, fixture):
    got = sorted((e for e in entries(path, jid) if e.get("BPF_PROG_ID") == prog_id
                  and e.get("BPF_STREAM") == stream), key=lambda e: int(e["BPFSTDERR_SEQ"]))
    want = fixture_events(fixture)
    problems = []
    if len(got) != len(want):
        problems.append(f"{stream}: {len(got)} entries, the fixture has {len(want)} events")
    prefix = f"{prog_id}:{name} {stream}: "
    for n, (e, (kind, body)) in enumerate(zip(got, want)):
        where = f"{stream} event {n} (seq {e.get('BPFSTDERR_SEQ')})"
        common = {"SYSLOG_IDENTIFIER": "bpfstderr", "BPF_PROG_NAME": name, "BPF_PROG_TAG": tag,
                  "PRIORITY": "3" if kind == "fault" else "6",
                  "MESSAGE_ID": MSGID_FAULT if kind == "fault" else MSGID_MESSAGE}
        for k, v in common.items():
            if e.get(k) != v:
                problems.append(f"{where}: {k} is {e.get(k)!r}, want {v!r}")
        msg = e.get("MESSAGE")
        if not safe(msg):
            problems.append(f"{where}: MESSAGE is not plain text: {msg!r}")
            continue
        if kind == "message":
            printable = all(0x20 <= b < 0x7f for b in body)
            if printable and msg != prefix + body.decode():
                problems.append(f"{where}: MESSAGE {msg!r}, want {prefix + body.decode()!r}")
            if not msg.startswith(prefix):
                problems.append(f"{where}: MESSAGE {msg!r} does not start {prefix!r}")
            continue
        if not msg.startswith(prefix + "FAULT "):
            problems.append(f"{where}: MESSAGE {msg!r}")
        if e.get("BPF_FAULT_REPORT") != b"\n".join(body).decode():
            problems.append(f"{where}: BPF_FAULT_REPORT {e.get('BPF_FAULT_REPORT')!r}")
        if e.get("BPF_FAULT_SITE") != site(body):
            problems.append(f"{where}: BPF_FAULT_SITE {e.get('BPF_FAULT_SITE')!r}, want {site(body)!r}")
    return problems


def once(path, jid, db):
    got = {}
    for e in entries(path, jid):
        got.setdefault(int(e["BPFSTDERR_SEQ"]), []).append(e)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT e.seq, e.kind, p.id FROM events e JOIN progs p ON p.row = e.prog ORDER BY e.seq")
    problems, seen = [], set()
    for seq, kind, prog_id in rows:
        seen.add(seq)
        es = got.get(seq, [])
        if len(es) != 1:
            problems.append(f"seq {seq}: {len(es)} entries")
            continue
        want = MSGID_FAULT if kind == 1 else MSGID_MESSAGE
        if es[0]["MESSAGE_ID"] != want or es[0]["BPF_PROG_ID"] != str(prog_id):
            problems.append(f"seq {seq}: entry of another event: {es[0]}")
    problems += [f"seq {s}: an entry, but no such event" for s in sorted(set(got) - seen)]
    return problems


def main():
    if sys.argv[1] == "match":
        problems = match(*sys.argv[2:9])
    else:
        problems = once(*sys.argv[2:5])
    for p in problems[:20]:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
