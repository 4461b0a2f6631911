/** @file uaccess_fixup.c
 * The fixup lookup of the fault-tolerant user accesses (uaccess.S).
 */
#include <arch/uaccess.h>
#include <arch/entry.h>
#include <mm/as.h>
#include <errno.h>

static bool user_range_ok(uintptr_t a, size_t n)
{
	return a < USER_SPACE_END && n <= USER_SPACE_END - a;
}

int copy_to_user(void __user *udst, const void *ksrc, size_t n)
{
	if (n == 0)
		return EOK;
	if (!user_range_ok((uintptr_t) udst, n))
		return EFAULT;
	return uaccess_copy_bytes((void __force *) udst, ksrc, n);
}

int copy_from_user(void *kdst, const void __user *usrc, size_t n)
{
	if (n == 0)
		return EOK;
	if (!user_range_ok((uintptr_t) usrc, n))
		return EFAULT;
	return uaccess_copy_bytes(kdst, (const void __force *) usrc, n);
}

/** Pairs (faulting instruction, fixup) defined in uaccess.S; read-only. */
extern const uintptr_t uaccess_fixup_table[];
extern const uint64_t uaccess_fixup_count;

bool uaccess_fixup_is_access(const istate_t *istate)
{
	for (uint64_t i = 0; i < uaccess_fixup_count; i++) {
		if (istate->rip == uaccess_fixup_table[2 * i])
			return true;
	}
	return false;
}

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
