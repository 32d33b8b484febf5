#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run, make demo-vm: `bpfstderr top --demo` where it shows something.
#
# Usage: demo.sh [--host|--lab] [BUILD]
#   (neither)  decide by measuring: where doctor's probes say this host can
#              show stream content (BTF, BPF streams, CAP_SYS_ADMIN, and a
#              probe write that reads back), run the demo here; otherwise
#              say in one line which probe failed and run it in the lab
#   --host     here, whatever the probes say (make run HOST=1)
#   --lab      in the kernel lab, whatever the probes say (make demo-vm)
# The lab: Debian's newest 7.x kernel (tests/vm/fetch.sh, cached) in qemu
# (tests/vm/run.sh: KVM when usable, TCG otherwise) over this host's root,
# its serial console on this terminal: the real top, its size and TERM
# passed in; q ends top and the guest. Exit status: top's, or 1 with one
# "make run: ..." line when the lab cannot start.
set -u
cd "$(dirname "$0")/../.." || exit 1

mode=auto
case ${1:-} in
--host | --lab) mode=${1#--}; shift ;;
esac
BUILD=${1:-build}
BIN=$BUILD/bpfstderr
QEMU=${QEMU:-qemu-system-x86_64}

die() { echo "make run: $*" >&2; exit 1; }

[ -x "$BIN" ] || die "$BIN not built (make)"

# The probe that failed, as one phrase; nothing where content can show.
# (Its detail: bpfstderr doctor.)
failed_probe() {
	local j rc
	j=$("$BIN" doctor --json --no-journal 2>/dev/null)
	rc=$?
	if ! jq -e . >/dev/null 2>&1 <<<"$j"; then
		echo "bpfstderr doctor failed (exit $rc)"
		return
	fi
	jq -r '
		if .problem then .problem
		elif .shows_content == true then empty
		elif .shows_content == false then
			"stream writes fail here (\(.stream_writes.kfunc) returned \(.stream_writes.write_ret))"
		else "the stream-write probe could not run"
		end' <<<"$j"
}

run_lab() {
	local kernels label ver kdir rows cols t0
	command -v "$QEMU" >/dev/null || die "$QEMU not installed (make deps)"
	[ -t 0 ] && [ -t 1 ] || die "the lab's demo needs a terminal"
	t0=$(date +%s)
	kernels=$(BPFSTDERR_LAB_KERNELS=7 BPFSTDERR_LAB_PROGRESS=1 bash tests/vm/fetch.sh) ||
		die "cannot fetch Debian's kernel (tests/vm/fetch.sh failed)"
	read -r label ver kdir <<<"$kernels"
	[ -n "$kdir" ] || die "no $label kernel in Debian's archive"
	read -r rows cols < <(stty size)
	echo "make run: booting Debian's $ver under qemu ($(($(date +%s) - t0)) s to get it); q ends top and the guest"
	# The command runs in the guest as root, on its serial console: a
	# session of its own with the console as controlling terminal (keys,
	# ^C), the host terminal's size and TERM.
	BPFSTDERR_LAB_TTY=1 bash tests/vm/run.sh "$kdir" \
		"stty -F /dev/ttyS0 rows ${rows:-24} cols ${cols:-80} && " \
		"TERM=$(printf %q "${TERM:-xterm}") setsid -c -w $(printf %q "$BIN") top --demo --journal /run/bpfstderr-demo.db" \
		"</dev/ttyS0 >/dev/ttyS0 2>&1"
}

case $mode in
host) exec "$BIN" top --demo ;;
lab) run_lab ;;
auto)
	why=$(failed_probe)
	[ -z "$why" ] && exec "$BIN" top --demo
	echo "make run: $why: running the demo in Debian's kernel under qemu (HOST=1: here)"
	run_lab
	;;
esac
