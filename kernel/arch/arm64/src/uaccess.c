/** @file uaccess.c
 * arm64 user accesses. The range is checked against USER_SPACE_END and the
 * access is done directly: a missing page is resolved by the generic fault
 * path (sync_dispatch() in arch.c). Not done yet (issue 32, stage 3): an
 * address no area covers panics instead of returning EFAULT (amd64 returns
 * EFAULT through its fix-up table, uaccess.S).
 */
#include <arch/uaccess.h>
#include <mm/as.h>
#include <lib/str.h>
#include <errno.h>

static bool user_range_ok(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t) p;
	return a + n >= a && a + n <= USER_SPACE_END;
}

int uaccess_store64(uint64_t *uaddr, uint64_t val)
{
	if (((uintptr_t) uaddr & 7) || !user_range_ok(uaddr, 8))
		return EFAULT;
	__atomic_store_n(uaddr, val, __ATOMIC_RELAXED);
	return EOK;
}

int uaccess_load64(const uint64_t *uaddr, uint64_t *out)
{
	if (((uintptr_t) uaddr & 7) || !user_range_ok(uaddr, 8))
		return EFAULT;
	*out = __atomic_load_n(uaddr, __ATOMIC_RELAXED);
	return EOK;
}

int copy_to_user(void *udst, const void *ksrc, size_t n)
{
	if (!user_range_ok(udst, n))
		return EFAULT;
	memcpy(udst, ksrc, n);
	return EOK;
}

int copy_from_user(void *kdst, const void *usrc, size_t n)
{
	if (!user_range_ok(usrc, n))
		return EFAULT;
	memcpy(kdst, usrc, n);
	return EOK;
}
