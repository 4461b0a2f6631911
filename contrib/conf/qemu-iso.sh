#!/bin/sh
# Boot build/image.iso (GRUB, -cdrom) on 2 vCPUs (multi-threaded TCG, -cpu max:
# SMEP and SMAP on).
# The serial line (kconsole) is this terminal; Ctrl-C quits QEMU.
# Extra arguments are passed to QEMU; QEMU=... overrides the binary.
top=$(cd "$(dirname "$0")/../.." && pwd)
exec ${QEMU:-qemu-system-x86_64} -accel tcg,thread=multi -cpu max -smp 2 -m 512M \
    -display none -serial stdio -monitor none -no-reboot \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
    -cdrom "$top/build/image.iso" "$@"
