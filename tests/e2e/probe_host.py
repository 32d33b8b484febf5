#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent probe of what this host lets a BPF user do, with raw bpf(2)
calls through ctypes (no libbpf, no bpfstderr code): the oracle that a
test's skip must agree with.

    probe_host.py arena      create an arena map
    probe_host.py may_goto   load a program with a may_goto instruction
    probe_host.py bpf_events open a perf event for program loads and unloads
                             (PERF_RECORD_BPF_EVENT) on every possible CPU

Exit 0 and "allowed"; exit 1 and "refused ERRNO_NAME" for EPERM or EACCES
(what a host's policy says); exit 3 and "error ERRNO_NAME" for anything
else, which is no refusal and no reason to skip.
"""
import ctypes
import errno
import os
import struct
import sys

SYS_BPF = 321  # x86_64
BPF_MAP_CREATE, BPF_PROG_LOAD = 0, 5
ARENA_MAP_TYPE, BPF_F_MMAPABLE = 33, 1 << 10
SOCKET_FILTER = 1

libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    fd = libc.syscall(SYS_BPF, cmd, buf, len(attr))
    return fd, ctypes.get_errno()


def arena():
    attr = bytearray(128)
    struct.pack_into("IIIII", attr, 0, ARENA_MAP_TYPE, 0, 0, 1, BPF_F_MMAPABLE)
    struct.pack_into("Q", attr, 64, 0x7F0000000000)  # map_extra
    return bpf(BPF_MAP_CREATE, attr)


def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", code, dst | (src << 4), off, imm)


def may_goto():
    # r0 = 0; may_goto +0; exit
    prog = insn(0xB7) + insn(0xE5) + insn(0x95)
    text = ctypes.create_string_buffer(prog)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = bytearray(128)
    struct.pack_into("IIQQ", attr, 0, SOCKET_FILTER, 3,
                     ctypes.addressof(text), ctypes.addressof(lic))
    return bpf(BPF_PROG_LOAD, attr)


SYS_PERF_EVENT_OPEN = 298  # x86_64
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY = 1, 9
ATTR_BPF_EVENT = 1 << 30  # the bit after ksymbol in perf_event_attr's flags


def possible_cpus():
    with open("/sys/devices/system/cpu/possible") as f:
        last = f.read().strip().split(",")[-1]
    return int(last.split("-")[-1]) + 1


def bpf_events():
    attr = bytearray(128)
    struct.pack_into("IIQ", attr, 0, PERF_TYPE_SOFTWARE, len(attr), PERF_COUNT_SW_DUMMY)
    struct.pack_into("Q", attr, 40, ATTR_BPF_EVENT)
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    fds = []
    for cpu in range(possible_cpus()):
        fd = libc.syscall(SYS_PERF_EVENT_OPEN, buf, -1, cpu, -1, 0)
        if fd < 0:
            err = ctypes.get_errno()
            for f in fds:
                os.close(f)
            return fd, err
        fds.append(fd)
    for f in fds[1:]:
        os.close(f)
    return fds[0], 0


def main():
    probes = {"arena": arena, "may_goto": may_goto, "bpf_events": bpf_events}
    if len(sys.argv) != 2 or sys.argv[1] not in probes:
        print("usage: probe_host.py {%s}" % "|".join(probes), file=sys.stderr)
        return 2
    fd, err = probes[sys.argv[1]]()
    if fd < 0:
        name = errno.errorcode.get(err, str(err))
        if err in (errno.EPERM, errno.EACCES):
            print("refused", name)
            return 1
        print("error", name)
        return 3
    os.close(fd)
    print("allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
