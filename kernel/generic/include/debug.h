/** @file debug.h
 * Assertions. Active in debug builds (CONFIG_DEBUG), compiled out in release.
 */
#ifndef KERN_DEBUG_H_
#define KERN_DEBUG_H_

#include <panic.h>

#ifdef CONFIG_DEBUG
#define assert(expr) \
	do { \
		if (unlikely(!(expr))) \
			panic_assert(__FILE__, __LINE__, __func__, #expr); \
	} while (0)
#define assert_verbose(expr, msg) \
	do { \
		if (unlikely(!(expr))) \
			panic_assert(__FILE__, __LINE__, __func__, msg); \
	} while (0)
#else
#define assert(expr) do { (void) sizeof(expr); } while (0)
#define assert_verbose(expr, msg) do { (void) sizeof(expr); } while (0)
#endif

#endif
