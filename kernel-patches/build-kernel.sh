#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh SRC OUT: configure and build a bzImage for the kernel lab
# (tests/vm/run.sh) from the kernel tree SRC into the object directory OUT.
# Small config: defconfig + kvm_guest.config + BPF, BTF and everything the
# lab's /init needs built in (9p over virtio, overlayfs, devtmpfs), so the
# kernel boots with no modules (MODULES off); hardware the qemu lab does not
# have (DRM, sound, USB, wireless, NICs: it runs with -nic none) is left
# out to save build time. Needs flex, bison, bc, dwarves (pahole),
# libelf-dev, libssl-dev. Prints the time the build took.
# JOBS (default 2) and NICE (default 10) tune make; TARGETS (default
# bzImage) builds other targets instead, e.g. kernel/bpf/stream.o.
set -u
[ $# -eq 2 ] || { echo "usage: $0 SRC OUT" >&2; exit 2; }
src=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
jobs=${JOBS:-2}
start=$(date +%s)
echo "build-kernel: $src -> $out, started $(date -u +%FT%TZ)"
mk() { make -C "$src" O="$out" "$@"; }
mk -s defconfig || exit 1
mk -s kvm_guest.config || exit 1
"$src/scripts/config" --file "$out/.config" \
	-e BPF -e BPF_SYSCALL -e BPF_JIT -e BPF_EVENTS -e FTRACE -e KPROBES \
	-e DEBUG_INFO -d DEBUG_INFO_NONE -e DEBUG_INFO_DWARF5 -e DEBUG_INFO_BTF \
	-e NET_9P -e NET_9P_VIRTIO -e 9P_FS -e 9P_FS_POSIX_ACL -e NETFS_SUPPORT \
	-e OVERLAY_FS -e VIRTIO -e VIRTIO_PCI -e VIRTIO_CONSOLE \
	-e DEVTMPFS -e DEVTMPFS_MOUNT -e BLK_DEV_INITRD -e TMPFS -e CGROUPS \
	-e DEBUG_FS -e BPF_JIT_ALWAYS_ON -d MODULE_SIG \
	-d MODULES \
	-d DRM -d SOUND -d USB_SUPPORT -d WLAN -d CFG80211 -d MAC80211 -d WIRELESS \
	-d NETFILTER -d ETHERNET -d INPUT_JOYSTICK -d INPUT_TABLET -d INPUT_TOUCHSCREEN \
	-d HID -d AGP -d FB -d SCSI_LOWLEVEL -d ATA -d MD -d NET_VENDOR_INTEL \
	-d PCCARD -d IPV6 -d NETLABEL -d SECURITY_SELINUX -d AUDIT -d HIBERNATION \
	-d MICROCODE -d ACPI_VIDEO -d DRM_I915 -d EFI -d KVM -d XEN -d HYPERV \
	-d NFS_FS -d ROOT_NFS -d EXT4_FS -d ISO9660_FS -d BT \
	-d SCSI -d NETDEVICES -d VIRTIO_NET -d VIRTIO_BLK -d VIRTIO_BALLOON -d VIRTIO_INPUT \
	-d NET_SCHED -d XFRM -d NET_KEY -d IP_MULTICAST -d IP_ADVANCED_ROUTER -d IP_PNP \
	-d VT -d INPUT_KEYBOARD -d INPUT_MOUSE -d PPS -d PTP_1588_CLOCK -d HWMON -d THERMAL \
	-d WATCHDOG -d I2C -d CPU_FREQ -d RFKILL -d DNS_RESOLVER \
	-d SECURITY -d KEYS -d SUSPEND -d X86_MCE -d PERF_EVENTS_INTEL_UNCORE \
	-d PERF_EVENTS_INTEL_RAPL -d PERF_EVENTS_INTEL_CSTATE -d PERF_EVENTS_AMD_POWER \
	-d CPU_SUP_HYGON -d CPU_SUP_CENTAUR -d CPU_SUP_ZHAOXIN -d X86_EXTENDED_PLATFORM \
	-d LOGO -d MACINTOSH_DRIVERS -d BLK_DEV_LOOP -d BLK_DEV_DM -d AUTOFS_FS \
	-d QUOTA -d FANOTIFY -d VFAT_FS -d MSDOS_FS -d PROC_KCORE -d KEXEC -d CRASH_DUMP || exit 1
mk -s olddefconfig || exit 1
for o in BPF_SYSCALL DEBUG_INFO_BTF NET_9P_VIRTIO 9P_FS OVERLAY_FS VIRTIO_PCI DEVTMPFS; do
	grep -q "^CONFIG_$o=y" "$out/.config" || { echo "build-kernel: CONFIG_$o is not =y after olddefconfig" >&2; exit 1; }
done
targets=${TARGETS:-bzImage}
# shellcheck disable=SC2086 # a list of targets
nice -n "${NICE:-10}" make -C "$src" O="$out" -j"$jobs" $targets
rc=$?
end=$(date +%s)
echo "build-kernel: make $targets exit $rc after $(( (end - start) / 60 )) min $(( (end - start) % 60 )) s ($(date -u +%FT%TZ))"
[ $rc -eq 0 ] && [ "$targets" = bzImage ] && ls -l "$out/arch/x86/boot/bzImage"
exit $rc
