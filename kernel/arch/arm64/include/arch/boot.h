/** @file boot.h
 * What the arm64 image carries besides the kernel, declared once here.
 */
#ifndef KERN_ARCH_BOOT_H_
#define KERN_ARCH_BOOT_H_

#include <typedefs.h>

/**
 * The user programs linked into the image (the Makefile's progimage.S):
 * triples (start, end, name) of kernel virtual addresses, ended by a zero
 * start.
 */
extern const uintptr_t arm64_programs[];

#endif
