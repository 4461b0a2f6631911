/** @file errno.c
 * Descriptions of the kernel error codes.
 */

#include <errno.h>

/**
 * Returns a short static string describing an error code.
 *
 * @param rc EOK or one of the E* codes from errno.h.
 * @return Description of @a rc, or "unknown error" for any other value.
 */
const char *str_error(int rc)
{
	switch (rc) {
	case EOK:
		return "no error";
	case ENOENT:
		return "no such entry";
	case ENOMEM:
		return "not enough memory";
	case EINVAL:
		return "invalid argument";
	case EBUSY:
		return "resource busy";
	case ETIMEOUT:
		return "operation timed out";
	case EEXIST:
		return "entry already exists";
	case ENOTSUP:
		return "operation not supported";
	case EOVERFLOW:
		return "value out of range";
	case EINTR:
		return "interrupted";
	case ELIMIT:
		return "limit reached";
	case EFAULT:
		return "bad address";
	case EAGAIN:
		return "try again";
	default:
		return "unknown error";
	}
}
