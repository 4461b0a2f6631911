/** @file sharing.h
 * Window markers of the sharing counter (tools/plugins/sharing.c,
 * docs/SHARING.md), for the kernel (chtbench) and user programs (lib/c):
 * 7-byte NOPs, `nopl 0x5348000K(%rax)` (bytes 0f 1f 80 0K 00 48 53). The
 * plugin recognises them by their bytes when it translates them, at any
 * address and privilege level. Without the plugin (or on real hardware) they
 * do nothing: a NOP with a memory operand accesses no memory. Callable in any
 * context; they touch no memory and no register; the "memory" clobber keeps
 * the compiler from moving memory accesses across a marker (the window's
 * edges). x86-64 only.
 *
 * The operation count is sent one bit per marker to the vCPU that executes
 * them (the plugin API of QEMU 7.2 cannot read registers): call
 * sharing_window_report() from one thread at a time, wired to one CPU (in
 * user space sys_thread_wire()), or a migration in the middle garbles the
 * count.
 */
#ifndef COMMON_SHARING_H_
#define COMMON_SHARING_H_

#include <stdint.h>

#ifdef __aarch64__
/* No markers on arm64 (the plugin knows x86 encodings only). */
#define SHARING_MARKER(k) __asm__ volatile ("" ::: "memory")
#else
#define SHARING_MARKER(k) \
	__asm__ volatile (".byte 0x0f, 0x1f, 0x80, " #k ", 0x00, 0x48, 0x53" \
	    ::: "memory")
#endif

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
