#!/bin/sh
# Boot build/kernel.elf on 4 vCPUs under single-threaded TCG (one host thread
# round-robins the vCPUs: other interleavings than thread=multi), -cpu max
# (SMEP and SMAP on); see qemu-boot.sh.
exec "$(dirname "$0")/qemu-boot.sh" single 4 "$@"
