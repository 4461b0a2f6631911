/** @file arch.c
 * amd64 side of the architecture boundary (arch.h): boot steps, the timer
 * and IPI handlers, IPIs, the console UART, power-off, page-table loads and
 * local TLB invalidation.
 */
#include <mm/tlb_stats.h>
#include <mm/as.h>
#include <arch.h>
#include <arch/asm.h>
#include <arch/apic.h>
#include <arch/interrupt.h>
#include <arch/cpu_arch.h>
#include <arch/userspace.h>
#include <arch/paging.h>
#include <arch/mm.h>
#include <genarch/acpi.h>
#include <genarch/uart16550.h>
#include <main/main.h>
#include <time/delay.h>
#include <print.h>
#include <cpu.h>

const char arch_name[] = "amd64";

void arch_percpu_init(cpu_t *cpu)
{
	write_msr(MSR_GS_BASE, (uint64_t) cpu);
}

/* Interrupt handlers: acknowledge the LAPIC, then the generic work. */

static void timer_handler(unsigned vector, istate_t *istate)
{
	lapic_eoi();
	clock_tick();
}

static void smp_call_handler(unsigned vector, istate_t *istate)
{
	/* EOI first: a cross-call may itself send IPIs (see smp_call.c). */
	lapic_eoi();
	smp_call_ipi_receive();
}

#ifdef CONFIG_TEST
/* The ipi1 test counts these (kernel/test/smp/ipi1.c). */
static void ipi_test_handler(unsigned vector, istate_t *istate)
{
	atomic_inc(&CPU->ipi_test_count);
	lapic_eoi();
}
#endif

static void halt_ipi_handler(unsigned vector, istate_t *istate)
{
	lapic_eoi();
	cpu_arch_stop_self();
}

static void wakeup_ipi_handler(unsigned vector, istate_t *istate)
{
	lapic_eoi();
}



void arch_interrupts_init(cpu_t *bsp)
{
	idt_init();
	cpu_arch_init(bsp);
	interrupt_register(VECTOR_TIMER, "timer", timer_handler);
#ifdef CONFIG_TEST
	interrupt_register(VECTOR_IPI_TEST, "ipi-test", ipi_test_handler);
#endif
	interrupt_register(VECTOR_HALT, "halt", halt_ipi_handler);
	interrupt_register(VECTOR_WAKEUP, "wakeup", wakeup_ipi_handler);
	interrupt_register(VECTOR_SMP_CALL, "smp-call", smp_call_handler);
	page_fault_init();
}

void arch_cpus_init(cpu_t *bsp, uint64_t mem_total, size_t regions_count)
{
	lapic_init_bsp();
	bsp->arch_id = lapic_id();
	boot_info.cpu_source = platform_enumerate(bsp->arch_id);
	ioapic_init();

	lapic_calibrate();
	bsp->timer_hz = lapic_timer_hz();
	for (unsigned i = 1; i < cpu_count; i++)
		cpus[i].timer_hz = bsp->timer_hz;
	printf("Memory: %lu MiB usable in %zu regions; CPUs: %u (%s); "
	    "LAPIC timer %lu Hz, TSC %lu MHz\n", mem_total >> 20,
	    regions_count, cpu_count, boot_info.cpu_source, bsp->timer_hz,
	    cycle_hz() / 1000000);
}

void arch_timer_start(void)
{
	lapic_timer_start();
}

static uint8_t intr_vector(intr_kind_t kind)
{
	switch (kind) {
	case INTR_TIMER:
		return VECTOR_TIMER;
	case INTR_SMP_CALL:
		return VECTOR_SMP_CALL;
	case INTR_WAKEUP:
		return VECTOR_WAKEUP;
	case INTR_IPI_TEST:
		return VECTOR_IPI_TEST;
	case INTR_HALT:
		return VECTOR_HALT;
	}
	return VECTOR_SPURIOUS;
}

void arch_ipi_send(const cpu_t *c, intr_kind_t kind)
{
	lapic_send_ipi(c->arch_id, intr_vector(kind));
}

void arch_ipi_broadcast(intr_kind_t kind)
{
	lapic_send_ipi_all_but_self(intr_vector(kind));
}

uint64_t arch_intr_count(intr_kind_t kind)
{
	return interrupt_count(intr_vector(kind));
}

/* The console: the 16550 on COM1, its interrupt through the IOAPIC. */

void console_hw_init(void)
{
	uart_init();
}

void console_hw_putc(char c)
{
	uart_putc(c);
}

int console_hw_getc_nowait(void)
{
	return uart_getc_nowait();
}

void console_hw_set_rx_irq(bool on)
{
	uart_set_rx_irq(on);
}

/** The generic receive handler; set once at boot before the IRQ is routed. */
static void (*console_irq_handler)(void);

static void com1_handler(unsigned vector, istate_t *istate)
{
	console_irq_handler();
	lapic_eoi();
}

bool console_hw_irq_enable(void (*handler)(void))
{
	console_irq_handler = handler;
	interrupt_register(IVT_IRQBASE + IRQ_COM1, "com1", com1_handler);
	return ioapic_route_irq(IRQ_COM1, lapic_id());
}

void arch_poweroff(void)
{
	/* QEMU's isa-debug-exit (iobase 0xf4): exit status (0x10 << 1) | 1 = 33. */
	outb(0xf4, 0x10);
	acpi_poweroff();
}

/* Address spaces */

void arch_as_load(as_t *as)
{
	/*
	 * A write to CR3 is a serializing instruction: every earlier load and
	 * store completes (the store buffer drains) before the next
	 * instruction, the full barrier arch.h promises.
	 */
	write_cr3(as ? as->root_phys : paging_kernel_root_phys());
	/* Without PCIDs every CR3 load drops the non-global translations. */
	tlb_count(TLB_AS_LOADS, 1);
	tlb_count(TLB_LOAD_FLUSHES, 1);
}

bool arch_as_release_tlb(as_t *as)
{
	(void) as;
	return false;
}

void userspace_print_features(void)
{
	char fpu[64];
	fpu_describe(fpu, sizeof(fpu));
	printf("User space: syscall/sysretq, SMEP %s, SMAP %s, UMIP %s; FP state "
	    "per thread: %s\n",
	    userspace_smep_enabled() ? "on" : "off (not supported by the CPU)",
	    userspace_smap_enabled() ? "on" : "off (not supported by the CPU)",
	    userspace_umip_enabled() ? "on" : "off (not supported by the CPU)",
	    fpu);
}
