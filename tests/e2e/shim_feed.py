#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""TEST ONLY. Keeps stream_shim fixtures fed at a known rate per read cycle:
each time a reader has taken everything a fixture held (the shim's .off
file has reached its size), append COUNT copies of UNIT, under the
fixture's lock (the shim reads under it), so that every drain cycle of
the reader finds exactly COUNT units.

    shim_feed.py DIR ID STREAM UNIT COUNT [ID STREAM UNIT COUNT]...

Runs until killed. The fixtures start with COUNT units each.
"""
import fcntl
import os
import sys
import time


def served(path):
    try:
        with open(path + ".off") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def append(path, data):
    with open(path, "ab") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(data)
        f.flush()
        fcntl.flock(f, fcntl.LOCK_UN)


def main():
    d, specs = sys.argv[1], sys.argv[2:]
    feeds = []
    for i in range(0, len(specs), 4):
        pid, stream, unit, count = specs[i:i + 4]
        with open(unit, "rb") as f:
            data = f.read() * int(count)
        path = os.path.join(d, "%s.%s" % (pid, stream))
        append(path, data)
        feeds.append((path, data))
    while True:
        for path, data in feeds:
            if served(path) >= os.path.getsize(path):
                append(path, data)
        time.sleep(0.02)


if __name__ == "__main__":
    main()
