/** @file userspace.c
 * arm64 user mode: EL0 entry is userspace_enter (vectors.S); system calls
 * (svc #0) and aborts from EL0 come through arch.c's arm64_exception().
 */
#include <arch/userspace.h>
#include <panic.h>

void userspace_set_kstack(uintptr_t top)
{
	/* Entries from EL0 would use SP_EL1, which is the thread's own stack. */
	(void) top;
}

void userspace_set_direct_access(bool allow)
{
	(void) allow;
}
