#!/usr/bin/env bash
# Build the fake kernel and module with one compiler.
# usage: [BUILD_ID=0xHEX] build.sh CC OUTDIR     (CC: gcc or clang-19)
set -eu
cc=$1 out=$2 src=$(dirname "$0")
mkdir -p "$out"
flags="-O2 -g -mcmodel=kernel -fno-pic -fno-pie -Wl,-no-pie -ffreestanding -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer"
$cc $flags -nostdlib -static -Wl,-Ttext=0xffffffff81000000 -Wl,--build-id=${BUILD_ID:-sha1} \
	-Wl,-e,start "$src/core.c" "$src/other.c" "$src/entry.S" -o "$out/vmlinux"
$cc $flags -c "$src/fake_mod.c" -o "$out/fake_mod.ko"
