/** @file gicv2.c
 * The GICv2 driver (gicv2.h): the distributor and the banked CPU interface
 * through MMIO.
 */
#include <genarch/gicv2.h>
#include <genarch/mmio.h>

#define GICD_CTLR       0x000
#define GICD_ISENABLER  0x100
#define GICD_IPRIORITYR 0x400
#define GICD_ITARGETSR  0x800
#define GICD_SGIR       0xf00
#define GICC_CTLR       0x000
#define GICC_PMR        0x004
#define GICC_IAR        0x00c
#define GICC_EOIR       0x010

/** Physical bases of the distributor and CPU interface; set once at boot. */
static uintptr_t gicd, gicc;

void gicv2_init(uintptr_t dist_phys, uintptr_t cpu_phys)
{
	gicd = dist_phys;
	gicc = cpu_phys;
	mmio_write32(gicd + GICD_CTLR, 1);
}

static void gic_enable(unsigned intid)
{
	mmio_write32(gicd + GICD_ISENABLER + 4 * (intid / 32),
	    1U << (intid % 32));
}

void gicv2_init_cpu(unsigned ppi)
{
	for (unsigned i = 0; i < 32; i += 4)
		mmio_write32(gicd + GICD_IPRIORITYR + i, 0x80808080);
	mmio_write32(gicd + GICD_ISENABLER, 0xffff | (1U << ppi));
	mmio_write32(gicc + GICC_PMR, 0xff);
	mmio_write32(gicc + GICC_CTLR, 1);
}

uint32_t gicv2_ack(void)
{
	return mmio_read32(gicc + GICC_IAR);
}

void gicv2_eoi(uint32_t iar)
{
	mmio_write32(gicc + GICC_EOIR, iar);
}

/*
 * The DSB before the write keeps the SGI from overtaking the caller's
 * earlier stores to Normal memory (a queued cross-call, a run queue): the
 * Device write to the distributor is not ordered after them by anything
 * else, and the target's handler must see them.
 */
void gicv2_send_sgi(uint32_t sgir)
{
	asm volatile ("dsb ish" ::: "memory");
	mmio_write32(gicd + GICD_SGIR, sgir);
}

void gicv2_spi_enable(unsigned intid)
{
	/* Priority, target CPU 0, enable (SPIs: the distributor's registers). */
	uint32_t shift = (intid % 4) * 8;
	uintptr_t pri = gicd + GICD_IPRIORITYR + (intid & ~3);
	mmio_write32(pri, (mmio_read32(pri) & ~(0xffU << shift)) | (0x80U << shift));
	uintptr_t tgt = gicd + GICD_ITARGETSR + (intid & ~3);
	mmio_write32(tgt, (mmio_read32(tgt) & ~(0xffU << shift)) | (1U << shift));
	gic_enable(intid);
}
