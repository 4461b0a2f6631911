/** @file sharing.h
 * Window markers of the sharing counter for user programs
 * (tools/plugins/sharing.c, docs/SHARING.md): the same 7-byte NOPs as the
 * kernel's arch/sharing.h, `nopl 0x5348000K(%rax)` (bytes 0f 1f 80 0K 00 48
 * 53). The plugin recognises them by their bytes when it translates them, at
 * any address and privilege level, so they work in ring 3 as in the kernel.
 * Without the plugin (or on real hardware) they do nothing: a NOP with a
 * memory operand accesses no memory. They touch no register; the "memory"
 * clobber keeps the compiler from moving memory accesses across a marker.
 *
 * The operation count is sent one bit per marker to the vCPU that executes
 * them: call sharing_window_report() from a thread wired to one CPU
 * (sys_thread_wire()), or a migration in the middle garbles the count.
 */
#ifndef LIBC_SHARING_H_
#define LIBC_SHARING_H_

#include <stdint.h>

#define SHARING_MARKER(k) \
	__asm__ volatile (".byte 0x0f, 0x1f, 0x80, " #k ", 0x00, 0x48, 0x53" \
	    ::: "memory")

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
 * Tells the plugin the operations done in the last window (@a ops: 64
 * markers, most significant bit first) and asks for its report. Call after
 * sharing_window_close(), from one wired thread at a time.
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
