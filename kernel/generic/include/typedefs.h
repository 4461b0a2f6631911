/** @file typedefs.h
 * Kernel-wide basic types.
 */
#ifndef KERN_TYPEDEFS_H_
#define KERN_TYPEDEFS_H_

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <compiler.h>

/** Error code: EOK (0) on success, a negative E* constant from errno.h otherwise. */
typedef int errno_t;

/** Saved interrupt state (the RFLAGS value), see interrupts_disable(). */
typedef uint64_t ipl_t;

#define ALIGN_UP(x, a)    (((x) + ((a) - 1)) & ~((__typeof__(x)) (a) - 1))
#define ALIGN_DOWN(x, a)  ((x) & ~((__typeof__(x)) (a) - 1))
#define IS_ALIGNED(x, a)  (((x) & ((a) - 1)) == 0)
#define ARRAY_SIZE(a)     (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)         ((a) < (b) ? (a) : (b))
#define MAX(a, b)         ((a) > (b) ? (a) : (b))

#define KiB(x) ((size_t) (x) << 10)
#define MiB(x) ((size_t) (x) << 20)
#define GiB(x) ((uint64_t) (x) << 30)

#define container_of(ptr, type, member) \
	((type *) ((char *) (ptr) - offsetof(type, member)))

#define NO_RETURN __attribute__((noreturn))
#define PACKED    __attribute__((packed))
#define ALIGNED(n) __attribute__((aligned(n)))
#define UNUSED    __attribute__((unused))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
