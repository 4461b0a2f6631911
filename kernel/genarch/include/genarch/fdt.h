/** @file fdt.h
 * A flattened device tree (DTB, big-endian) reader: what the kernel needs
 * to boot, the memory, the CPUs and the PSCI conduit.
 */
#ifndef KERN_GENARCH_FDT_H_
#define KERN_GENARCH_FDT_H_

#include <typedefs.h>
#include <cpu.h>

/** What the device tree told (fdt_parse()). */
typedef struct fdt_info {
	/** The first range of the first /memory node (2 address, 2 size cells). */
	uint64_t mem_base;
	uint64_t mem_size;
	/** `reg` of each /cpus/cpu@ node (the MPIDR on arm64), in DT order. */
	uint64_t cpu_id[CONFIG_MAX_CPUS];
	/** The number of /cpus/cpu@ nodes, at most CONFIG_MAX_CPUS. */
	unsigned cpus;
	/** The /psci node's method: true for "hvc" (the default), false for "smc". */
	bool psci_hvc;
} fdt_info_t;

/**
 * Reads the device tree at @a fdt (a kernel virtual address) into @a info.
 * @return false if @a fdt holds no device tree (wrong magic). Boot, BSP.
 */
bool fdt_parse(const void *fdt, fdt_info_t *info);

#endif
