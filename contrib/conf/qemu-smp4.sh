#!/bin/sh
# Boot build/kernel.elf on 4 vCPUs (multi-threaded TCG, -cpu max:
# SMEP and SMAP on).
# The serial line (kconsole) is this terminal; Ctrl-C quits QEMU.
# Extra arguments are passed to QEMU; QEMU=... overrides the binary.
top=$(cd "$(dirname "$0")/../.." && pwd)
# The user programs as multiboot modules (comma-separated -initrd list).
programs=$(ls "$top"/build/programs/* 2>/dev/null | paste -sd, -)
exec ${QEMU:-qemu-system-x86_64} -accel tcg,thread=multi -cpu max -smp 4 -m 512M \
    -display none -serial stdio -monitor none -no-reboot \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
    -kernel "$top/build/kernel.elf" ${programs:+-initrd "$programs"} "$@"
