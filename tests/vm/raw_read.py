#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent reader of a BPF program's stream, with raw bpf(2) calls
through ctypes (no libbpf, no bpfstderr code): the lab's oracle for the
bytes a program wrote.

    raw_read.py PROG_ID STREAM   (STREAM: 1 stdout, 2 stderr)

Drains the stream (reads are destructive) and writes its bytes, unchanged,
to standard output. Exit 1 with "raw_read: ERRNO_NAME" on a failed call.
"""
import ctypes
import errno
import os
import struct
import sys

SYS_BPF = 321  # x86_64
BPF_PROG_GET_FD_BY_ID = 13
BPF_PROG_STREAM_READ_BY_FD = 37

libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    ret = libc.syscall(SYS_BPF, cmd, buf, len(attr))
    if ret < 0:
        err = ctypes.get_errno()
        sys.exit("raw_read: %s" % errno.errorcode.get(err, str(err)))
    return ret


def main():
    prog_id, stream = int(sys.argv[1]), int(sys.argv[2])
    attr = bytearray(128)  # zeroed: stray bytes give EINVAL
    struct.pack_into("I", attr, 0, prog_id)
    fd = bpf(BPF_PROG_GET_FD_BY_ID, attr)
    buf = ctypes.create_string_buffer(4096)
    out = b""
    while True:
        attr = bytearray(128)
        struct.pack_into("QIII", attr, 0, ctypes.addressof(buf), len(buf), stream, fd)
        n = bpf(BPF_PROG_STREAM_READ_BY_FD, attr)
        if n == 0:
            break
        out += buf.raw[:n]
    os.close(fd)
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main()
