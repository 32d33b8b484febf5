#!/usr/bin/env python3
"""Rebuild each stream's bytes from bpfstderr's NDJSON events (Python's own
json parser, strict) and compare them with the injected fixture bytes.

usage: reconstruct.py EVENTS PROG_ID STDOUT_FIXTURE STDERR_FIXTURE
Prints one line per problem; exit 0 when every byte came back once, in order.
"""
import base64
import json
import sys


def event_bytes(ev):
    if "text_base64" in ev:
        data = base64.b64decode(ev["text_base64"])
    else:
        data = ev["text"].encode("utf-8")
    if ev["kind"] == "message" and not ev["partial"]:
        data += b"\n"
    return data


def main():
    events, prog_id, fixtures = sys.argv[1], int(sys.argv[2]), sys.argv[3:5]
    got = {"stdout": b"", "stderr": b""}
    bad = 0
    with open(events, "rb") as f:
        for n, line in enumerate(f, 1):
            try:
                ev = json.loads(line.decode("utf-8"), strict=True)
            except (ValueError, UnicodeDecodeError) as e:
                print(f"line {n}: not valid JSON: {e}")
                bad += 1
                continue
            if ev.get("schema_version") != 1 or ev["prog"]["id"] != prog_id:
                print(f"line {n}: unexpected schema or program")
                bad += 1
            if ev["kind"] == "stream_full":  # a notice: no bytes of the stream
                continue
            if "text" not in ev and "text_base64" not in ev:
                print(f"line {n}: a {ev['kind']} event without text")
                bad += 1
                continue
            got[ev["stream"]] += event_bytes(ev)
    for name, path in zip(("stdout", "stderr"), fixtures):
        with open(path, "rb") as f:
            want = f.read()
        if got[name] != want:
            i = next((i for i, (a, b) in enumerate(zip(got[name], want)) if a != b),
                     min(len(got[name]), len(want)))
            print(f"{name}: {len(got[name])} bytes back of {len(want)}, first difference at {i}")
            bad += 1
    sys.exit(1 if bad else 0)


main()
