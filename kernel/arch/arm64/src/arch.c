/** @file arch.c
 * arm64 side of the architecture boundary (arch.h) on QEMU's virt board:
 * per-CPU registers, the device tree's memory, the console on the PL011,
 * page-table loads. The rest: interrupt.c (IRQ dispatch), exception.c
 * (synchronous exceptions), cpu.c (timer, PSCI, CPU control), smp.c (IPIs,
 * secondary CPUs); the devices are genarch's (fdt.c, gicv2.c, pl011.c).
 */
#include <mm/tlb_stats.h>
#include <mm/as.h>
#include <arch/asid.h>
#include <arch.h>
#include <arch/asm.h>
#include <arch/boot.h>
#include <arch/mm.h>
#include <arch/interrupt.h>
#include <arch/cpu_arch.h>
#include <arch/smp_arch.h>
#include <arch/userspace.h>
#include <arch/paging.h>
#include <arch/uaccess.h>
#include <main/main.h>
#include <mm/frame.h>
#include <mm/as.h>
#include <mm/page_fault.h>
#include <syscall/syscall.h>
#include <proc/program.h>
#include <proc/scheduler.h>
#include <proc/thread.h>
#include <proc/task.h>
#include <synch/lockdep.h>
#include <time/delay.h>
#include <debug/symtab.h>
#include <lib/str.h>
#include <print.h>
#include <panic.h>
#include <arch/virt.h>
#include <genarch/gicv2.h>
#include <genarch/pl011.h>


#include <cpu.h>

const char arch_name[] = "arm64";

/**
 * What EL0 may reach besides its memory, set on every CPU: the reset values
 * of these registers are UNKNOWN on hardware (QEMU's are 0, which is what
 * is set here). FP/SIMD without a trap (CPACR_EL1.FPEN 0b11: V0-V31, FPCR
 * and FPSR are per thread, uctx.c), SVE and SME trapped (ZEN, SMEN 0: EC
 * 0x19 and 0x1d, `invalid instruction`); TPIDRRO_EL0 0 (the kernel does
 * not use it: nothing to read through it);
 * no counter or timer register (CNTKCTL_EL1 0: the kernel's tick is the EL0
 * virtual timer, CNTV_*_EL0, which EL0VTEN would hand to user tasks); no
 * PMU register (PMUSERENR_EL0 0, where the CPU has a PMUv3). Each is
 * refused to `attack` (sve, mrs-cntvct, msr-cntv-ctl, mrs-pmccntr; see
 * tests/test_arm64_programs.py).
 */
#define CPACR_FPEN_NOTRAP (3UL << 20)
static void el0_access_init(void)
{
	WRITE_SYSREG(cpacr_el1, CPACR_FPEN_NOTRAP);
	WRITE_SYSREG(tpidrro_el0, 0);
	WRITE_SYSREG(cntkctl_el1, 0);
	uint64_t pmuver = (READ_SYSREG(id_aa64dfr0_el1) >> 8) & 0xf;
	if (pmuver != 0 && pmuver != 0xf)
		WRITE_SYSREG(pmuserenr_el0, 0);
	isb();
}

void arch_percpu_init(cpu_t *cpu)
{
	asm volatile ("msr tpidr_el1, %0" :: "r" (cpu) : "memory");
	el0_access_init();
	userspace_pan_init_cpu();
}

/* The device tree (genarch/src/fdt.c): memory, CPUs, PSCI method. */

fdt_info_t virt_dt;

size_t arch_boot_memory(uintptr_t arg0, uintptr_t arg1, phys_region_t *regions,
    size_t max)
{
	(void) arg1;
	/* QEMU puts a bare-metal image's device tree at the start of RAM. */
	uintptr_t dtb = arg0 ? arg0 : VIRT_RAM_PHYS;
	if (!fdt_parse(PA2KA(dtb), &virt_dt))
		panic("No device tree at %#lx", dtb);
	str_cpy(boot_info.loader, sizeof(boot_info.loader),
	    "QEMU -kernel (device tree)");
	uintptr_t kend;
	/* An absolute symbol out of adrp's reach: a literal. */
	asm ("ldr %0, =kernel_end_phys" : "=r" (kend));
	uint64_t base = ALIGN_UP((uint64_t) kend, PAGE_SIZE);
	uint64_t end = ALIGN_DOWN(virt_dt.mem_base + virt_dt.mem_size, PAGE_SIZE);
	if (end > PHYS_MAP_MAX)
		end = PHYS_MAP_MAX;
	if (end <= base || max == 0)
		panic("No usable memory in the device tree");
	regions[0].base = base;
	regions[0].size = end - base;
	/* The user programs linked into the image (Makefile: progimage.S). */
	for (const uintptr_t *p = arm64_programs; p[0]; p += 3)
		program_register_module(KA2PA((const void *) p[0]),
		    KA2PA((const void *) p[1]), (const char *) p[2]);
	/* The DTB and the image below base are kept. */
	boot_info.mem_total = end - base;
	return 1;
}

/* The console: the PL011 (genarch/src/pl011.c). */

void console_hw_init(void)
{
	/* QEMU's PL011 needs no baud rate set up; receive interrupts off. */
	pl011_init(VIRT_UART_PHYS);
}

void console_hw_putc(char c)
{
	pl011_putc(c);
}

int console_hw_getc_nowait(void)
{
	return pl011_getc_nowait();
}

void console_hw_set_rx_irq(bool on)
{
	pl011_set_rx_irq(on);
}

/** The generic receive handler; set once at boot before the IRQ is enabled. */
static void (*console_irq_handler)(void);

static void uart_handler(unsigned vector, istate_t *istate)
{
	console_irq_handler();
	pl011_irq_clear();
}

bool console_hw_irq_enable(void (*handler)(void))
{
	console_irq_handler = handler;
	interrupt_register(VIRT_UART_INTID, "pl011", uart_handler);
	gicv2_spi_enable(VIRT_UART_INTID);
	return true;
}

/* Address spaces */

void arch_as_load(as_t *as)
{
	/*
	 * With ASIDs (arch/arm64/include/arch/asid.h): no TLB invalidation
	 * here but the one asid_switch() does once after a rollover. The kernel alone (as
	 * NULL) gets the empty root under the ASID the CPU already has, as
	 * Linux's reserved TTBR0 keeps it: nothing is walked through the
	 * empty root, the ASID stays the active one (kept for its owner by
	 * a rollover), and TCG, which drops its whole TLB whenever the ASID
	 * field of TTBR0 changes, then sees an ASID reused without
	 * invalidation as real hardware would (test asid1). The entries of
	 * that owner stay in this CPU's TLB meanwhile, reachable only by an
	 * EL1 access to a user address with no address space entered: the
	 * uaccess functions refuse one (EFAULT, uaccess.c), and plain kernel
	 * code touches user addresses only inside an address space.
	 * The DSB ISH before the MSR is the full barrier arch.h promises: it
	 * completes every earlier load and store, the table stores and the
	 * cpus_running update (as.c's seq_cst RMW, an LDAXR/STLXR loop that
	 * is no full barrier by itself) included, and asid_switch()'s TLBI,
	 * before the new tables are walked or any later access is performed;
	 * the ISB makes the next instructions use the new translation.
	 */
	uint64_t ttbr;
	if (as) {
		uint64_t ctx = asid_switch(as);
		ttbr = as->root_phys | ((ctx & ASID_MASK) << 48);
	} else {
		uint64_t cur;
		asm volatile ("mrs %0, ttbr0_el1" : "=r" (cur));
		ttbr = paging_kernel_root_phys() | (cur & (0xffffUL << 48));
	}
	asm volatile ("dsb ish\n\t"
	    "msr ttbr0_el1, %0\n\t"
	    "isb" :: "r" (ttbr) : "memory");
	tlb_count(TLB_AS_LOADS, 1);
}

bool arch_as_release_tlb(as_t *as)
{
	asid_release(as);
	return true;
}

void userspace_print_features(void)
{
	printf("User space: svc at EL0, PXN on user pages, PAN %s\n",
	    userspace_pan_enabled() ? "on" : "off (not supported by the CPU)");
}
