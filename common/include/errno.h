/** @file errno.h
 * Kernel error codes. Functions return EOK or one of these (negative) values.
 */
#ifndef KERN_ERRNO_H_
#define KERN_ERRNO_H_

#define EOK        0
#define ENOENT    (-1)   /**< No such entry (e.g. unknown or offline CPU). */
#define ENOMEM    (-2)   /**< Not enough memory. */
#define EINVAL    (-3)   /**< Invalid argument. */
#define EBUSY     (-4)   /**< Resource busy. */
#define ETIMEOUT  (-5)   /**< Operation timed out. */
#define EEXIST    (-6)   /**< Entry exists already. */
#define ENOTSUP   (-7)   /**< Operation not supported. */
#define EOVERFLOW (-8)   /**< Value out of range. */
#define EINTR     (-9)   /**< Interrupted (e.g. woken up prematurely). */
#define ELIMIT    (-10)  /**< A configured limit was reached. */
#define EFAULT    (-11)  /**< Bad address (an access to user memory faulted). */
#define EAGAIN    (-12)  /**< Try again (e.g. a futex word did not hold the expected value). */

/** Returns a short static string describing the error code @a rc. */
const char *str_error(int rc);

#endif
