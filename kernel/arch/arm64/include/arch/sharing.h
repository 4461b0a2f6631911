/** @file sharing.h
 * The sharing counter's markers (docs/SHARING.md) are amd64-only: the TCG
 * plugin recognizes an x86 no-op encoding. On arm64 they do nothing.
 */
#ifndef KERN_ARCH_SHARING_H_
#define KERN_ARCH_SHARING_H_

#include <typedefs.h>

static inline void sharing_window_open(void)
{
}

static inline void sharing_window_close(void)
{
}

static inline void sharing_window_report(uint64_t ops)
{
	(void) ops;
}

#endif
