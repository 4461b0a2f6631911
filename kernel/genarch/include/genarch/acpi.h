/** @file acpi.h
 * ACPI table discovery: RSDP, RSDT/XSDT, MADT (CPUs, IOAPICs, overrides), FADT
 * (power off). The MP specification tables are the fallback for CPU enumeration.
 */
#ifndef KERN_GENARCH_ACPI_H_
#define KERN_GENARCH_ACPI_H_

#include <typedefs.h>

/**
 * Finds the ACPI tables and enumerates CPUs into cpus[] (BSP first) and IOAPICs.
 * Falls back to the MP tables, then to a single CPU. BSP, once, during boot.
 * @return name of the source used ("ACPI MADT", "MP table", "none").
 */
const char *platform_enumerate(uint32_t bsp_apic_id);

/** Powers off through ACPI (PM1 control, S5) if the FADT was found; returns on failure. */
void acpi_poweroff(void);

#endif
