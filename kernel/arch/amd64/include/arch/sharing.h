/** @file sharing.h
 * Window markers for the sharing counter (tools/plugins/sharing.c,
 * docs/SHARING.md): 7-byte NOPs, `nopl 0x5348000K(%rax)` (0f 1f 80 0K 00 48
 * 53), that the QEMU plugin recognises when it translates them. On real
 * hardware (and under QEMU without the plugin) they do nothing: a NOP with a
 * memory operand does not access memory. Callable in any context; they touch
 * no memory and no register. The "memory" clobber keeps the compiler from
 * moving memory accesses across a marker (the window's edges).
 */
#ifndef KERN_ARCH_SHARING_H_
#define KERN_ARCH_SHARING_H_

#include <typedefs.h>

#define SHARING_MARKER(k) \
	asm volatile (".byte 0x0f, 0x1f, 0x80, " #k ", 0x00, 0x48, 0x53" ::: "memory")

/** Opens the counting window (the plugin clears its counts). */
static inline void sharing_window_open(void)
{
	SHARING_MARKER(1);
}

/** Closes the counting window. */
static inline void sharing_window_close(void)
{
	SHARING_MARKER(2);
}

/**
 * Tells the plugin the operations done in the last window (@a ops, any 64-bit
 * value: 64 markers, most significant bit first, since the plugin API of
 * QEMU 7.2 cannot read registers) and asks it to write its report. Call after
 * sharing_window_close(), from one thread at a time.
 */
static inline void sharing_window_report(uint64_t ops)
{
	for (int i = 63; i >= 0; i--) {
		if ((ops >> i) & 1)
			SHARING_MARKER(4);
		else
			SHARING_MARKER(3);
	}
	SHARING_MARKER(5);
}

#endif
