#!/bin/sh
# What the qemu-*.sh command lines share: boot build/kernel.elf (amd64) with
# -cpu max (SMEP and SMAP on) and the user programs as multiboot modules.
#   qemu-boot.sh THREAD SMP [QEMU ARGS...]
# THREAD: TCG's threading, multi (a host thread per vCPU) or single (one host
# thread round-robins the vCPUs); SMP: the vCPUs.
# The serial line (kconsole) is this terminal; Ctrl-C quits QEMU.
# Extra arguments are passed to QEMU; QEMU=... overrides the binary.
thread=$1 smp=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
# The user programs as multiboot modules (comma-separated -initrd list).
programs=$(ls "$top"/build/programs/* 2>/dev/null | paste -sd, -)
exec ${QEMU:-qemu-system-x86_64} -accel tcg,thread="$thread" -cpu max \
    -smp "$smp" -m 512M \
    -display none -serial stdio -monitor none -no-reboot \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
    -kernel "$top/build/kernel.elf" ${programs:+-initrd "$programs"} "$@"
