/** @file userspace.c
 * arm64 user mode: not implemented yet (issue 32, stage 3).
 */
#include <arch/userspace.h>
#include <panic.h>

void userspace_set_kstack(uintptr_t top)
{
	/* Entries from EL0 would use SP_EL1, which is the thread's own stack. */
	(void) top;
}

void userspace_enter(uintptr_t pc, uintptr_t sp, uint64_t arg0, uint64_t arg1)
{
	panic("arm64: user mode (EL0) is not implemented (pc %#lx, sp %#lx, "
	    "%#lx, %#lx)", pc, sp, arg0, arg1);
}

void userspace_set_direct_access(bool allow)
{
	(void) allow;
}
