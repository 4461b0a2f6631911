#!/bin/sh
# Boot build/kernel.elf on 8 vCPUs (multi-threaded TCG, -cpu max:
# SMEP and SMAP on); see qemu-boot.sh.
exec "$(dirname "$0")/qemu-boot.sh" multi 8 "$@"
