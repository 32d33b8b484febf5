#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Another reader of a program's stream, as a sched_ext scheduler's stream
watcher is: one process that reads the stream every INTERVAL seconds to
its end (raw bpf(2) calls, raw_read.py's), until the file STOP exists.

    reader_loop.py PROG_ID STREAM INTERVAL OUT ROUNDS STOP

Appends the bytes it read to OUT; after each round (empty reads
included) writes the number of rounds done to ROUNDS (replaced whole).
"""
import ctypes
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import raw_read  # noqa: E402


def main():
    prog_id, stream, interval = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    out, rounds, stop = sys.argv[4], sys.argv[5], sys.argv[6]
    attr = bytearray(128)
    struct.pack_into("I", attr, 0, prog_id)
    fd = raw_read.bpf(raw_read.BPF_PROG_GET_FD_BY_ID, attr)
    buf = ctypes.create_string_buffer(4096)
    n_rounds = 0
    with open(out, "ab") as f:
        while not os.path.exists(stop):
            while True:
                attr = bytearray(128)
                struct.pack_into("QIII", attr, 0, ctypes.addressof(buf), len(buf), stream, fd)
                n = raw_read.bpf(raw_read.BPF_PROG_STREAM_READ_BY_FD, attr)
                if n == 0:
                    break
                f.write(buf.raw[:n])
            f.flush()
            n_rounds += 1
            with open(rounds + ".tmp", "w") as r:
                print(n_rounds, file=r)
            os.rename(rounds + ".tmp", rounds)
            time.sleep(interval)
    os.close(fd)


if __name__ == "__main__":
    main()
