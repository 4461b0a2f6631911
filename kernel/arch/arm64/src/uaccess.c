/** @file uaccess.c
 * arm64 user accesses: the range is checked against USER_SPACE_END, then the
 * access runs in uaccess_asm.S, whose user-touching instructions are listed
 * in uaccess_table. A missing page is resolved by the generic fault path
 * (exception.c's abort handler, through mm/page_fault.h); a fault it cannot
 * resolve resumes at ua_fault (uaccess_fixup()), and the access returns
 * EFAULT. A thread in no address space gets EFAULT without an access: the
 * CPU then runs the empty root under the ASID of the address space it ran
 * last (arch.c, arch_as_load()), whose entries may still be in its TLB.
 */
#include <arch/uaccess.h>
#include <arch/entry.h>
#include <mm/as.h>
#include <proc/thread.h>
#include <errno.h>

extern const uintptr_t uaccess_table[], uaccess_table_end[];

static bool user_range_ok(const void __user *p, size_t n)
{
	uintptr_t a = (__force uintptr_t) p;
	thread_t *t = THREAD;
	return a + n >= a && a + n <= USER_SPACE_END && t && t->as;
}

int uaccess_store64(uint64_t __user *uaddr, uint64_t val)
{
	if (((__force uintptr_t) uaddr & 7) || !user_range_ok(uaddr, 8))
		return EFAULT;
	return ua_store64((__force uint64_t *) uaddr, val);
}

int uaccess_load64(const uint64_t __user *uaddr, uint64_t *out)
{
	if (((__force uintptr_t) uaddr & 7) || !user_range_ok(uaddr, 8))
		return EFAULT;
	return ua_load64((__force const uint64_t *) uaddr, out);
}

int copy_to_user(void __user *udst, const void *ksrc, size_t n)
{
	if (!user_range_ok(udst, n))
		return EFAULT;
	return ua_copy((__force void *) udst, ksrc, n);
}

int copy_from_user(void *kdst, const void __user *usrc, size_t n)
{
	if (!user_range_ok(usrc, n))
		return EFAULT;
	return ua_copy(kdst, (__force const void *) usrc, n);
}

bool uaccess_fixup(istate_t *istate)
{
	for (const uintptr_t *p = uaccess_table; p < uaccess_table_end; p++) {
		if (*p == istate->elr) {
			istate->elr = (uintptr_t) ua_fault;
			return true;
		}
	}
	return false;
}
