/** @file apic.c
 * Local APIC (xAPIC, MMIO through the direct map) and IOAPIC.
 *
 * QEMU's TCG has no x2APIC, so the xAPIC MMIO interface is used on every CPU.
 */
#include <arch/apic.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <arch/interrupt.h>
#include <genarch/pit.h>
#include <time/delay.h>
#include <print.h>
#include <cpu.h>
#include <debug.h>

#define LAPIC_ID        0x020
#define LAPIC_TPR       0x080
#define LAPIC_EOI       0x0b0
#define LAPIC_LDR       0x0d0
#define LAPIC_DFR       0x0e0
#define LAPIC_SVR       0x0f0
#define LAPIC_ESR       0x280
#define LAPIC_ICR_LO    0x300
#define LAPIC_ICR_HI    0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR  0x390
#define LAPIC_TIMER_DIV  0x3e0

#define ICR_FIXED       (0 << 8)
#define ICR_NMI         (4 << 8)
#define ICR_INIT        (5 << 8)
#define ICR_STARTUP     (6 << 8)
#define ICR_PENDING     (1 << 12)
#define ICR_ASSERT      (1 << 14)
#define ICR_LEVEL       (1 << 15)
#define ICR_ALL_BUT_SELF (3 << 18)

#define LVT_MASKED      (1 << 16)
#define TIMER_PERIODIC  (1 << 17)

/** Virtual address of the local APIC registers; set once by the BSP. */
static uintptr_t lapic_base;
/** Calibrated LAPIC timer frequency (divide by 16); set once by the BSP. */
static uint64_t lapic_hz;

static inline uint32_t lapic_read(uint32_t reg)
{
	return __atomic_load_n((uint32_t *) (lapic_base + reg), __ATOMIC_RELAXED);
}

static inline void lapic_write(uint32_t reg, uint32_t v)
{
	__atomic_store_n((uint32_t *) (lapic_base + reg), v, __ATOMIC_RELAXED);
}

bool lapic_ready(void)
{
	return lapic_base != 0;
}

static void lapic_enable_local(void)
{
	/* Make sure the APIC is globally enabled in the MSR (xAPIC mode). */
	uint64_t msr = read_msr(MSR_APIC_BASE);
	write_msr(MSR_APIC_BASE, msr | (1UL << 11));

	lapic_write(LAPIC_TPR, 0);
	lapic_write(LAPIC_DFR, 0xffffffff);       /* flat model */
	lapic_write(LAPIC_LDR, 1u << 24);
	lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, LVT_MASKED);
	lapic_write(LAPIC_LVT_ERROR, LVT_MASKED);
	lapic_write(LAPIC_ESR, 0);
	lapic_write(LAPIC_ESR, 0);
	/* Software enable + spurious vector. */
	lapic_write(LAPIC_SVR, (1 << 8) | VECTOR_SPURIOUS);
	lapic_write(LAPIC_EOI, 0);
}

void lapic_init_bsp(void)
{
	uint64_t msr = read_msr(MSR_APIC_BASE);
	uintptr_t phys = msr & 0xfffff000UL;
	lapic_base = (uintptr_t) PA2KA(phys);
	lapic_enable_local();
}

void lapic_init_ap(void)
{
	lapic_enable_local();
}

uint32_t lapic_id(void)
{
	return lapic_read(LAPIC_ID) >> 24;
}

void lapic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

void lapic_calibrate(void)
{
	uint64_t best_lapic = 0;
	uint64_t best_tsc = 0;

	lapic_write(LAPIC_TIMER_DIV, 0x3);  /* divide by 16 */
	lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);

	/*
	 * Count LAPIC timer and TSC ticks over 10 ms windows of PIT channel 2.
	 * Under emulation a window may be stretched by host scheduling; such a
	 * window measures too many ticks, so the smallest of several is kept.
	 */
	for (int i = 0; i < 5; i++) {
		lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
		uint64_t tsc0 = rdtsc();
		pit_oneshot_start(10000);
		uint32_t c0 = lapic_read(LAPIC_TIMER_CUR);
		while (!pit_oneshot_expired())
			cpu_relax();
		uint32_t c1 = lapic_read(LAPIC_TIMER_CUR);
		uint64_t tsc1 = rdtsc();
		uint64_t dl = (uint64_t) (c0 - c1) * 100;
		uint64_t dt = (tsc1 - tsc0) * 100;
		if (best_lapic == 0 || dl < best_lapic)
			best_lapic = dl;
		if (best_tsc == 0 || dt < best_tsc)
			best_tsc = dt;
	}
	lapic_write(LAPIC_TIMER_INIT, 0);
	if (best_lapic == 0)
		best_lapic = 1000000000 / 16;
	lapic_hz = best_lapic;
	time_init(best_tsc);
}

uint64_t lapic_timer_hz(void)
{
	return lapic_hz;
}

void lapic_timer_start(void)
{
	lapic_write(LAPIC_TIMER_DIV, 0x3);
	lapic_write(LAPIC_LVT_TIMER, TIMER_PERIODIC | VECTOR_TIMER);
	uint64_t count = lapic_hz / HZ;
	if (count == 0)
		count = 1;
	lapic_write(LAPIC_TIMER_INIT, (uint32_t) count);
}

bool lapic_wait_icr_idle(void)
{
	/* Bounded wait: the ICR never stays busy for long on a working APIC. */
	for (uint64_t i = 0; i < 100000000UL; i++) {
		if (!(lapic_read(LAPIC_ICR_LO) & ICR_PENDING))
			return true;
		cpu_relax();
	}
	return false;
}

/*
 * The ICR is two registers; an interrupt between the two writes that sends an IPI
 * itself would corrupt the destination, so interrupts are disabled around them.
 * The release fence orders the caller's earlier stores before the IPI, as the
 * receivers rely on (MMIO writes on x86 are not reordered with earlier stores,
 * and the fence keeps the compiler from doing so).
 */
static void lapic_icr_write(uint32_t hi, uint32_t lo)
{
	ipl_t ipl = interrupts_disable();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	lapic_wait_icr_idle();
	lapic_write(LAPIC_ICR_HI, hi);
	lapic_write(LAPIC_ICR_LO, lo);
	interrupts_restore(ipl);
}

void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
	lapic_icr_write(apic_id << 24, ICR_FIXED | ICR_ASSERT | vector);
}

void lapic_send_ipi_all_but_self(uint8_t vector)
{
	lapic_icr_write(0, ICR_ALL_BUT_SELF | ICR_FIXED | ICR_ASSERT | vector);
}

void lapic_send_nmi_all_but_self(void)
{
	lapic_icr_write(0, ICR_ALL_BUT_SELF | ICR_NMI | ICR_ASSERT);
}

void lapic_send_init(uint32_t apic_id)
{
	lapic_icr_write(apic_id << 24, ICR_INIT | ICR_ASSERT | ICR_LEVEL);
	lapic_wait_icr_idle();
	udelay(200);
	/* INIT de-assert (required by older APICs, harmless on newer ones). */
	lapic_icr_write(apic_id << 24, ICR_INIT | ICR_LEVEL);
	lapic_wait_icr_idle();
}

void lapic_send_startup(uint32_t apic_id, uint8_t page)
{
	lapic_icr_write(apic_id << 24, ICR_STARTUP | ICR_ASSERT | page);
	lapic_wait_icr_idle();
}

/* IOAPIC */

#define IOAPIC_MAX 8
#define IOREGSEL 0x00
#define IOWIN    0x10
#define IOAPIC_VER 0x01
#define IOAPIC_REDTBL 0x10

#define MP_POLARITY_MASK 0x3
#define MP_POLARITY_LOW  0x3
#define MP_TRIGGER_MASK  0xc
#define MP_TRIGGER_LEVEL 0xc

typedef struct {
	uintptr_t base;     /**< virtual address */
	uint32_t gsi_base;
	uint32_t entries;
} ioapic_t;

/**
 * IOAPICs and ISA overrides. Written and programmed by the BSP during boot (from
 * the MADT), before other CPUs run; read-only afterwards, so no lock is needed.
 */
static ioapic_t ioapics[IOAPIC_MAX];
static unsigned ioapics_count;

typedef struct {
	bool present;
	uint32_t gsi;
	uint16_t flags;
} irq_override_t;
static irq_override_t overrides[16];

void ioapic_add(uintptr_t phys, uint32_t gsi_base)
{
	if (ioapics_count >= IOAPIC_MAX)
		return;
	ioapics[ioapics_count].base = (uintptr_t) PA2KA(phys);
	ioapics[ioapics_count].gsi_base = gsi_base;
	ioapics_count++;
}

void ioapic_add_override(uint8_t irq, uint32_t gsi, uint16_t flags)
{
	if (irq >= 16)
		return;
	overrides[irq].present = true;
	overrides[irq].gsi = gsi;
	overrides[irq].flags = flags;
}

unsigned ioapic_count(void)
{
	return ioapics_count;
}

static uint32_t ioapic_read(ioapic_t *io, uint32_t reg)
{
	__atomic_store_n((uint32_t *) (io->base + IOREGSEL), reg, __ATOMIC_RELAXED);
	return __atomic_load_n((uint32_t *) (io->base + IOWIN), __ATOMIC_RELAXED);
}

static void ioapic_write(ioapic_t *io, uint32_t reg, uint32_t v)
{
	__atomic_store_n((uint32_t *) (io->base + IOREGSEL), reg, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *) (io->base + IOWIN), v, __ATOMIC_RELAXED);
}

void ioapic_init(void)
{
	/* Remap the legacy PICs away from the exception vectors and mask them. */
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, IVT_IRQBASE);
	outb(0xa1, IVT_IRQBASE + 8);
	outb(0x21, 4);
	outb(0xa1, 2);
	outb(0x21, 1);
	outb(0xa1, 1);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);

	for (unsigned i = 0; i < ioapics_count; i++) {
		ioapic_t *io = &ioapics[i];
		io->entries = ((ioapic_read(io, IOAPIC_VER) >> 16) & 0xff) + 1;
		for (uint32_t e = 0; e < io->entries; e++) {
			ioapic_write(io, IOAPIC_REDTBL + 2 * e, LVT_MASKED);
			ioapic_write(io, IOAPIC_REDTBL + 2 * e + 1, 0);
		}
	}
}

bool ioapic_route_irq(uint8_t irq, uint32_t apic_id)
{
	uint32_t gsi = irq;
	uint16_t flags = 0;
	if (irq < 16 && overrides[irq].present) {
		gsi = overrides[irq].gsi;
		flags = overrides[irq].flags;
	}
	for (unsigned i = 0; i < ioapics_count; i++) {
		ioapic_t *io = &ioapics[i];
		if (gsi < io->gsi_base || gsi >= io->gsi_base + io->entries)
			continue;
		uint32_t pin = gsi - io->gsi_base;
		uint32_t lo = IVT_IRQBASE + irq;
		if ((flags & MP_POLARITY_MASK) == MP_POLARITY_LOW)
			lo |= 1 << 13;
		if ((flags & MP_TRIGGER_MASK) == MP_TRIGGER_LEVEL)
			lo |= 1 << 15;
		ioapic_write(io, IOAPIC_REDTBL + 2 * pin + 1, apic_id << 24);
		ioapic_write(io, IOAPIC_REDTBL + 2 * pin, lo);
		return true;
	}
	return false;
}
