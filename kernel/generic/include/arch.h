/** @file arch.h
 * The architecture boundary: what each architecture (kernel/arch/NAME)
 * provides to generic code, and the generic entry points the architecture
 * calls back. Generic code (kernel/generic) reaches the machine only through
 * these names and through the arch headers listed in docs/ARCHITECTURE.md
 * (arch/asm.h: interrupt flag, cpu_relax, cycle counter; arch/interrupt.h:
 * istate_t and its accessors; arch/percpu.h: the per-CPU base register;
 * arch/context.h: the switched context; arch/paging.h and arch/mm.h: page
 * tables and the memory layout); tests/test_tree.py rejects machine names
 * (registers, instructions, interrupt controllers) in generic code.
 *
 * Like HelenOS's kernel/generic/include/arch.h (arch_pre_mm_init() and its
 * siblings), the boot sequence stays in generic code (main/main.c) and calls
 * the architecture at fixed points.
 */
#ifndef KERN_ARCH_IFACE_H_
#define KERN_ARCH_IFACE_H_

#include <typedefs.h>
#include <arch/asm.h>
#include <arch/interrupt.h>

struct cpu;

/** Timer frequency (ticks per second) of every CPU. */
#define HZ 100

#include <mm/frame.h>

/* Boot (called by main_bsp() in this order; BSP, interrupts disabled). */

/**
 * Points the per-CPU base register of the calling CPU at @a cpu (amd64: the
 * GS base; arm64: TPIDR_EL1), so that CPU and THREAD work. Before the first
 * printf; once per CPU.
 */
void arch_percpu_init(struct cpu *cpu);

/**
 * Collects usable RAM from what the boot loader passed (@a arg0, @a arg1:
 * amd64 the multiboot magic and information address; arm64 the device tree's
 * physical address), registers the boot modules (program_register_module())
 * and fills boot_info. Stores up to @a max regions in @a regions; @return
 * their number (panics when there is none). BSP, once, before frame_init().
 */
size_t arch_boot_memory(uintptr_t arg0, uintptr_t arg1, phys_region_t *regions,
    size_t max);

/**
 * Sets up exception and interrupt delivery on the BSP (each architecture's
 * tables: docs/ARCHITECTURE.md) and the handlers of the timer and of the IPIs (they call
 * clock_tick() and smp_call_ipi_receive()). BSP, once, before frame_init().
 */
void arch_interrupts_init(struct cpu *bsp);

/**
 * Brings up the interrupt controllers, enumerates the CPUs into cpus[] and
 * cpu_count (from the platform's tables: ACPI or the device tree),
 * calibrates the timer and the cycle counter (time_init())
 * and prints the boot summary line ("Memory: ... CPUs: ..."). @a mem_total
 * and @a regions_count are for that line. BSP, once, after the scheduler
 * is initialized, interrupts disabled.
 */
void arch_cpus_init(struct cpu *bsp, uint64_t mem_total, size_t regions_count);

/** Starts the periodic timer (HZ per second) on the calling CPU. */
void arch_timer_start(void);

/**
 * Starts every enumerated secondary CPU, one at a time, and waits (with a
 * timeout) for each to go online; each runs main_ap(). BSP only, interrupts
 * enabled. @return the number of CPUs online.
 */
unsigned smp_start_aps(void);

/** Ends the boot-time mappings once all CPUs are up (BSP, once). */
void smp_boot_finish(void);

/* Interrupts and IPIs */

/** Interrupt kinds generic code sends or counts. */
typedef enum {
	INTR_TIMER,      /**< The periodic clock (counted only). */
	INTR_SMP_CALL,   /**< smp_call cross-call IPI. */
	INTR_WAKEUP,     /**< Wakes a CPU halted in its idle loop. */
	INTR_IPI_TEST,   /**< Counted by the ipi1 test (cpu_t.ipi_test_count). */
	INTR_HALT,       /**< Stops the receiving CPU for good. */
} intr_kind_t;

/**
 * Sends the IPI @a kind (not INTR_TIMER) to CPU @a c (the caller too).
 * Asynchronous: the target runs its handler some time later. Any context.
 */
void arch_ipi_send(const struct cpu *c, intr_kind_t kind);

/**
 * Sends the IPI @a kind to every online CPU but the caller. Any context.
 */
void arch_ipi_broadcast(intr_kind_t kind);

/**
 * Interrupts of @a kind taken by all CPUs since boot (a statistic: the sum
 * of per-CPU counts, which may be a few interrupts old). Any context.
 */
uint64_t arch_intr_count(intr_kind_t kind);

/* Generic functions the architecture's interrupt handlers call. */

/** The clock: called on every CPU HZ times a second, interrupts disabled. */
void clock_tick(void);

/**
 * Runs the cross-calls queued for this CPU (the INTR_SMP_CALL handler),
 * interrupts disabled. Defined in smp/smp_call.c.
 */
void smp_call_ipi_receive(void);

/* Console hardware (amd64: the 16550 on COM1; arm64: the PL011). */

/** Sets up the console UART for polled output. BSP, first thing at boot. */
void console_hw_init(void);
/** Writes one byte (waits while the transmitter is full). Any context. */
void console_hw_putc(char c);
/** Reads one byte if the receiver holds one; @return it or -1. Any context. */
int console_hw_getc_nowait(void);
/** Enables or disables the receive interrupt. Under console's input lock. */
void console_hw_set_rx_irq(bool on);
/**
 * Routes the receive interrupt to the calling CPU and installs @a handler
 * (which runs with interrupts disabled; the architecture acknowledges the
 * interrupt controller after it returns). @return false when the interrupt
 * cannot be routed (input then stays polled). BSP, once.
 */
bool console_hw_irq_enable(void (*handler)(void));

/* System */

/**
 * Powers the machine off (under QEMU: exits QEMU with status 33). Returns
 * only when that failed. Other CPUs stopped, interrupts disabled.
 */
void arch_poweroff(void);

/** Short name of the architecture ("amd64", "arm64"). */
extern const char arch_name[];

/* Address spaces and TLB */

struct as;

/**
 * Makes the page tables of @a as the user half of the calling CPU's
 * translation (NULL: none, the kernel's alone). Implies invalidating what
 * the TLB holds for the previous user tables unless they are tagged (arm64:
 * ASIDs, arch/arm64/include/arch/asid.h; amd64: loading the root drops
 * them).
 * Begins with a full memory barrier (each architecture's arch_as_load()
 * says which instruction): no earlier access of this CPU, the caller's
 * cpus_running RMW included, is reordered after the page walks and accesses
 * through the new tables (as.c's tlb_shootdown() and sys_membarrier() rely
 * on it).
 * Interrupts disabled.
 */
void arch_as_load(struct as *as);

/**
 * Called by as_release() before it unmaps the areas of @a as, which no CPU
 * runs any more (cpus_running is 0) and none can enter again: drops what
 * the TLBs may still hold of @a as if the architecture can do so at once
 * (arm64: its ASID, `tlbi aside1is`, and frees the ASID). @return true when
 * it did, and the unmaps then need no TLB invalidation of their own; false
 * (amd64) when they do theirs. Thread context.
 */
bool arch_as_release_tlb(struct as *as);

/*
 * TLB invalidation (arch/paging.h, inline): the shootdown after an unmap
 * (mm/as.c, tlb_shootdown()) is done the way the architecture's TLB
 * maintenance reaches other CPUs, which arch/paging.h states as
 * ARCH_TLB_BROADCAST:
 *   0 (amd64: its invalidations act on this CPU only):
 *     tlb_invalidate_pages_local(base, pages) invalidates this CPU's TLB
 *     entries of the user pages [base, base + pages * PAGE_SIZE),
 *     interrupts disabled or inside a cross-call;
 *     the generic code cross-calls (smp_call) each CPU in the address
 *     space's cpus_running mask to run it there.
 *   1 (arm64: `tlbi ...is`): tlb_invalidate_pages_broadcast(base, pages)
 *     invalidates them on every CPU and returns when that is complete
 *     everywhere, including every access other CPUs made through the old
 *     translations; the generic code calls it once and sends no cross-call
 *     (and reads no cpus_running mask: it reaches every CPU anyway).
 * Either way one call covers a page, a range, or (above a ceiling of the
 * architecture's, 32 pages on both) every user translation.
 */

/* Threads */

/**
 * Prints the architecture's user-mode facts at boot (the line "User
 * space: ..." that tests/test_tasks.py reads on amd64). BSP, once.
 */
void userspace_print_features(void);

/**
 * Name of the CPU feature that faults a kernel access to a user page outside
 * the uaccess functions (the architecture's name for it, as its fault report
 * says) when the kernel enabled it, NULL when the CPU lacks it. Any context.
 */
const char *userspace_access_guard(void);

#endif
