/** @file uaccess.c
 * The fixup lookup of the fault-tolerant user accesses (uaccess.S).
 */
#include <arch/uaccess.h>

/** Pairs (faulting instruction, fixup) defined in uaccess.S; read-only. */
extern const uintptr_t uaccess_fixup_table[];
extern const uint64_t uaccess_fixup_count;

bool uaccess_fixup(istate_t *istate)
{
	for (uint64_t i = 0; i < uaccess_fixup_count; i++) {
		if (istate->rip == uaccess_fixup_table[2 * i]) {
			istate->rip = uaccess_fixup_table[2 * i + 1];
			return true;
		}
	}
	return false;
}
