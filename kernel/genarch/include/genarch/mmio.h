/** @file mmio.h
 * 32-bit device register accesses through the kernel's direct map (PA2KA):
 * Device memory, relaxed single-copy-atomic loads and stores; the drivers
 * order them against Normal memory where they must (see gicv2.c).
 */
#ifndef KERN_GENARCH_MMIO_H_
#define KERN_GENARCH_MMIO_H_

#include <typedefs.h>
#include <arch/mm.h>

/** Reads the 32-bit register at physical address @a pa. */
static inline uint32_t mmio_read32(uintptr_t pa)
{
	return __atomic_load_n((volatile uint32_t *) PA2KA(pa), __ATOMIC_RELAXED);
}

/** Writes @a v to the 32-bit register at physical address @a pa. */
static inline void mmio_write32(uintptr_t pa, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *) PA2KA(pa), v, __ATOMIC_RELAXED);
}

#endif
