#!/usr/bin/env python3
"""Check that build/kernel.elf is loadable through the multiboot address fields.

QEMU's -kernel and GRUB load a multiboot kernel with the "address fields" flag as a
flat image: the bytes from the multiboot header's file offset on are copied to
load_addr.. load_end_addr. That is only right if every loadable segment's file offset
minus its physical address is the same constant. This script verifies it, and that
the header is within the first 8 KiB as the specification requires.
"""
import struct
import sys

MB_MAGIC = 0x1BADB002


def main(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("check_image: %s is not an ELF64 file" % path)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    deltas = set()
    for i in range(phnum):
        p_type, _flags, p_offset, _vaddr, p_paddr, p_filesz, _memsz, _align = \
            struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_filesz > 0:
            deltas.add(p_offset - p_paddr)
    if len(deltas) != 1:
        sys.exit("check_image: loadable segments are not contiguous in the file: %r"
                 % sorted(deltas))
    for off in range(0, min(len(data), 8192) - 12, 4):
        magic, flags, csum = struct.unpack_from("<III", data, off)
        if magic == MB_MAGIC and (magic + flags + csum) & 0xFFFFFFFF == 0:
            header_addr, = struct.unpack_from("<I", data, off + 12)
            if off - header_addr != deltas.pop():
                sys.exit("check_image: multiboot header offset does not match")
            return 0
    sys.exit("check_image: no multiboot header in the first 8 KiB")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
