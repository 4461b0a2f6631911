/** @file main.h
 * Kernel initialization entry points.
 */
#ifndef KERN_MAIN_H_
#define KERN_MAIN_H_

#include <typedefs.h>

/** BSP entry from the boot code: @a mb_magic and @a mb_info from the loader. */
NO_RETURN void main_bsp(uint32_t mb_magic, uint32_t mb_info);
/** AP entry after its architecture set-up; enters the idle loop. */
NO_RETURN void main_ap(void);

/** Memory and boot facts gathered at boot, for `version`, `zones`, etc. */
typedef struct {
	uint64_t mem_total;        /**< bytes of usable RAM in the memory map */
	const char *cpu_source;    /**< "ACPI MADT", "MP table", ... */
	char cmdline[128];         /**< loader command line */
	char loader[64];           /**< boot loader name */
} boot_info_t;

/** Written by the BSP during boot; read-only afterwards. */
extern boot_info_t boot_info;

#endif
