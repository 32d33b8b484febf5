#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot one of the lab's kernels in qemu and run a shell command inside, in a
# chroot on a read-only view of this host's / (a tmpfs overlay on top).
#
# Usage: run.sh [-t SECONDS] KERNEL_DIR COMMAND...
#   KERNEL_DIR  a directory fetch.sh made (vmlinuz, modules/), or one with
#               a vmlinuz that has 9p and overlay built in (modules/ empty)
#   COMMAND     run by bash inside the guest, in the current directory
# BPFSTDERR_LAB_SMP sets the guest's CPUs (default 2; 1 for the terminal's
# guest under TCG, see below).
# BPFSTDERR_LAB_TTY=1: the guest's serial console is this terminal (raw,
# every key to the guest, no timeout): COMMAND may run a program on
# /dev/ttyS0 (tests/vm/demo.sh); the terminal's settings come back after.
# Prints the guest command's output and exits with its exit code; 124 when
# the guest did not finish within SECONDS (default 600: qemu is killed),
# 125 when it stopped without a result (console log shown).
set -u

LAB=$(cd "$(dirname "$0")" && pwd)
TIMEOUT=600
if [ "${1:-}" = -t ]; then
	TIMEOUT=$2
	shift 2
fi
if [ $# -lt 2 ]; then
	echo "usage: run.sh [-t SECONDS] KERNEL_DIR COMMAND..." >&2
	exit 2
fi
KDIR=$1
shift
QEMU=${QEMU:-qemu-system-x86_64}
BUSYBOX=${BUSYBOX:-/bin/busybox}

die() { echo "bpfstderr-lab: $*" >&2; exit 125; }

[ -r "$KDIR/vmlinuz" ] || die "$KDIR/vmlinuz missing: run tests/vm/fetch.sh"
command -v "$QEMU" >/dev/null || die "$QEMU not installed (apt-get install qemu-system-x86)"

# initramfs KDIR: busybox-static, /init and the kernel's own 9p and overlay
# modules, built once per kernel (again when init or busybox changes).
# Modules are decompressed here: busybox's insmod may not read .ko.xz.
initramfs() {
	local out=$KDIR/initramfs.cpio stage m tmp
	if [ -s "$out" ] && [ "$out" -nt "$LAB/init" ] && [ "$out" -nt "$BUSYBOX" ]; then
		echo "$out"
		return 0
	fi
	file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
		ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
		die "$BUSYBOX is not static (apt-get install busybox-static)"
	stage=$(mktemp -d "${TMPDIR:-/tmp}/bpfstderr-lab-initrd.XXXXXX") || die mktemp
	mkdir -p "$stage/bin" "$stage/modules" "$stage/dev" &&
		cp "$BUSYBOX" "$stage/bin/busybox" &&
		install -m 0755 "$LAB/init" "$stage/init" &&
		mknod "$stage/dev/console" c 5 1 || { rm -rf "$stage"; die "cannot stage the initramfs"; }
	for m in "$KDIR"/modules/*.ko*; do
		[ -e "$m" ] || continue	# none: 9p and overlay built in
		case $m in
		*.xz) xz -dc "$m" >"$stage/modules/$(basename "$m" .xz)" ;;
		*) cp "$m" "$stage/modules/" ;;
		esac || { rm -rf "$stage"; die "cannot decompress $m"; }
	done
	# A temporary name of its own: another lab may build the same image.
	tmp=$(mktemp "$out.XXXXXX") || { rm -rf "$stage"; die "mktemp in $KDIR"; }
	(cd "$stage" && find . | cpio -o -H newc --quiet) >"$tmp" &&
		mv "$tmp" "$out" || { rm -rf "$stage" "$tmp"; die "cpio failed"; }
	rm -rf "$stage"
	echo "$out"
}

# KVM when this host lets us use it, TCG (every CPU feature, 2 threads)
# otherwise: several times slower, but it runs anywhere. A writable
# /dev/kvm is not enough: in a nested VM, qemu 7.2 with -cpu host was seen
# to abort at once ("failed to set MSR 0x10a"), so a paused qemu with the
# same accelerator and CPU must start and quit first.
kvm_works() {
	echo quit | "$QEMU" -machine q35 -accel kvm -cpu host -S -m 64M -display none \
		-nodefaults -nic none -monitor stdio >/dev/null 2>&1
}
accel() {
	if [ -w /dev/kvm ] && [ -z "${BPFSTDERR_LAB_TCG:-}" ] && kvm_works; then
		echo "-accel kvm -cpu host"
	else
		[ -w /dev/kvm ] && [ -z "${BPFSTDERR_LAB_TCG:-}" ] &&
			echo "# /dev/kvm is there, but qemu cannot start with it: TCG" >&2
		echo "-accel tcg,thread=multi -cpu max"
	fi
}

RES=""
QPID=""
cleanup() {
	[ -n "$QPID" ] && kill -KILL "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	[ -n "$RES" ] && rm -rf "$RES"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

INITRD=$(initramfs) || exit 125
ACCEL=$(accel)
SMP=${BPFSTDERR_LAB_SMP:-2}
RES=$(mktemp -d "${TMPDIR:-/tmp}/bpfstderr-lab-res.XXXXXX") || die mktemp
# The command runs where the caller is: the guest sees the same paths.
{
	printf 'cd %q || exit 125\n' "$PWD"
	printf '%s\n' "$*"
} >"$RES/cmd.sh"

# The terminal's guest (make run's demo) has one CPU under TCG, unless
# BPFSTDERR_LAB_SMP says otherwise. With two, qemu's multi-threaded TCG
# lets one vCPU run a breakpoint the other has already patched away
# (text_poke's int3): the kernel dies with "Oops: int3", seen in early
# boot (sched_clock_cpu, as sched_clock marks itself stable) once in 10
# to 40 boots, and a guest that dies after its command started is not
# booted again (the person has used it). With one CPU no code runs while
# another CPU patches it. The lab's tests keep two (their concurrency);
# lab.sh boots them again after such a panic.
# A guest whose kernel stopped before COMMAND started all the same (no
# out file: init creates it as it starts COMMAND) is booted once more,
# saying so, so that the person at the terminal need not retry.
if [ -n "${BPFSTDERR_LAB_TTY:-}" ]; then
	saved=$(stty -g)
	[ -z "${BPFSTDERR_LAB_SMP:-}" ] && [ "${ACCEL#-accel tcg}" != "$ACCEL" ] && SMP=1
	for try in 1 2; do
		# shellcheck disable=SC2086
		"$QEMU" -machine q35 $ACCEL -smp "$SMP" -m 3G -no-reboot -nic none \
			-display none -vga none -monitor none -chardev stdio,id=con,signal=off -serial chardev:con \
			-kernel "$KDIR/vmlinuz" -initrd "$INITRD" \
			-append "console=ttyS0 panic=-1 rdinit=/init quiet loglevel=1 ${BPFSTDERR_LAB_APPEND:-}" \
			-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
			-virtfs "local,path=$RES,mount_tag=results,security_model=none"
		stty "$saved"
		[ -s "$RES/rc" ] && exit "$(cat "$RES/rc")"
		[ -e "$RES/out" ] || [ "$try" = 2 ] && break
		echo "bpfstderr-lab: the guest's kernel ($(basename "$KDIR")) stopped before" \
			"the command started; booting it again" >&2
	done
	die "guest ($(basename "$KDIR")) stopped without a result"
fi

# shellcheck disable=SC2086
"$QEMU" -machine q35 $ACCEL -smp "$SMP" -m 3G -nographic -no-reboot -nic none \
	-kernel "$KDIR/vmlinuz" -initrd "$INITRD" \
	-append "console=ttyS0 panic=-1 rdinit=/init quiet loglevel=4 ${BPFSTDERR_LAB_APPEND:-}" \
	-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$RES,mount_tag=results,security_model=none" \
	</dev/null >"$RES/console" 2>&1 &
QPID=$!

# Wait for qemu, never longer than TIMEOUT.
waited=0
while kill -0 "$QPID" 2>/dev/null; do
	if [ "$waited" -ge "$TIMEOUT" ]; then
		kill -KILL "$QPID" 2>/dev/null
		wait "$QPID" 2>/dev/null
		QPID=""
		[ -f "$RES/out" ] && cat "$RES/out"
		echo "bpfstderr-lab: guest ($(basename "$KDIR")) hung: killed after ${TIMEOUT}s;" \
			"console's last lines:" >&2
		tail -n 15 "$RES/console" | sed 's/^/    /' >&2
		exit 124
	fi
	sleep 1
	waited=$((waited + 1))
done
wait "$QPID" 2>/dev/null
QPID=""

[ -f "$RES/out" ] && cat "$RES/out"
if [ ! -s "$RES/rc" ]; then
	echo "bpfstderr-lab: guest ($(basename "$KDIR")) stopped without a result;" \
		"console's last lines:" >&2
	tail -n 25 "$RES/console" | sed 's/^/    /' >&2
	exit 125
fi
[ -n "${BPFSTDERR_LAB_CONSOLE:-}" ] && cat "$RES/console" >&2
exit "$(cat "$RES/rc")"
