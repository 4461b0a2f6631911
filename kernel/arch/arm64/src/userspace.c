/** @file userspace.c
 * arm64 user mode: EL0 entry is userspace_enter (vectors.S); system calls
 * (svc #0) and aborts from EL0 come through exception.c's arm64_exception().
 *
 * PAN (Privileged Access Never, ARMv8.1; QEMU `-cpu max`), the counterpart
 * of amd64's SMAP: with PSTATE.PAN set, an EL1 load or store to a page EL0
 * may access takes a permission fault. Enabled when ID_AA64MMFR1_EL1.PAN
 * says the CPU has it (the Cortex-A72, ARMv8.0, has not: everything then
 * runs as before). SCTLR_EL1.SPAN = 0 makes every exception taken to EL1 set
 * PAN (as amd64's entry from ring 3 clears RFLAGS.AC), and ERET restores the
 * interrupted context's PAN from SPSR_EL1. PAN is cleared only inside the
 * uaccess functions (uaccess_asm.S) and, per thread, for kernel threads
 * inside a user address space (userspace_set_direct_access(), the scheduler
 * hook). An EL1 permission fault on a user address with PAN set is reported
 * as a kernel access to a user page outside uaccess (exception.c,
 * mm/page_fault.h).
 */
#include <arch.h>
#include <arch/userspace.h>
#include <arch/asm.h>
#include <panic.h>

/** SCTLR_EL1.SPAN: 0 = PSTATE.PAN is set on an exception taken to EL1. */
#define SCTLR_SPAN (1UL << 23)

/**
 * 1 when PAN is enabled (every CPU: the same ID register); read by
 * uaccess_asm.S to decide whether to execute `msr pan` (UNDEFINED on a CPU
 * without PAN). Written by each CPU at boot (arch_percpu_init()) before it
 * runs anything else; the same value every time.
 */
extern uint8_t uaccess_pan;
uint8_t uaccess_pan;

void userspace_pan_init_cpu(void)
{
	uint64_t mmfr1 = READ_SYSREG(id_aa64mmfr1_el1);
	if (((mmfr1 >> 20) & 0xf) == 0)
		return;
	WRITE_SYSREG(sctlr_el1, READ_SYSREG(sctlr_el1) & ~SCTLR_SPAN);
	isb();
	pan_set(true);
	__atomic_store_n(&uaccess_pan, 1, __ATOMIC_RELAXED);
}

bool userspace_pan_enabled(void)
{
	return __atomic_load_n(&uaccess_pan, __ATOMIC_RELAXED) != 0;
}

const char *userspace_access_guard(void)
{
	return userspace_pan_enabled() ? "PAN" : NULL;
}

void userspace_set_kstack(uintptr_t top)
{
	/* Entries from EL0 would use SP_EL1, which is the thread's own stack. */
	(void) top;
}

void userspace_set_direct_access(bool allow)
{
	if (!userspace_pan_enabled())
		return;
	pan_set(!allow);
}
