/** @file main.h
 * Kernel initialization entry points.
 */
#ifndef KERN_MAIN_H_
#define KERN_MAIN_H_

#include <typedefs.h>

/**
 * BSP entry from the boot code: @a boot_arg0 and @a boot_arg1 are what the
 * loader passed, handed to arch_boot_memory() (amd64: the multiboot magic and
 * information address; arm64: the device tree's physical address and 0).
 */
NO_RETURN void main_bsp(uintptr_t boot_arg0, uintptr_t boot_arg1);
/** AP entry after its architecture set-up; enters the idle loop. */
NO_RETURN void main_ap(void);

/** Memory and boot facts gathered at boot, for `version`, `zones`, etc. */
typedef struct {
	uint64_t mem_total;        /**< bytes of usable RAM in the memory map */
	const char *cpu_source;    /**< "ACPI MADT", "MP table", "device tree" ... */
	char cmdline[128];         /**< loader command line */
	char loader[64];           /**< boot loader name */
} boot_info_t;

/** Written by the BSP during boot; read-only afterwards. */
extern boot_info_t boot_info;

#endif
