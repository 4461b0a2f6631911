/** @file acpi.c
 * ACPI MADT and MP table parsing for CPU and IOAPIC enumeration.
 *
 * Tables are read through the direct map (all of the low 4 GiB is mapped).
 */
#include <genarch/acpi.h>
#include <arch/mm.h>
#include <arch/apic.h>
#include <arch/asm.h>
#include <cpu.h>
#include <lib/str.h>
#include <print.h>

typedef struct {
	char signature[8];
	uint8_t checksum;
	char oem[6];
	uint8_t revision;
	uint32_t rsdt;
	uint32_t length;
	uint64_t xsdt;
	uint8_t xchecksum;
	uint8_t reserved[3];
} PACKED rsdp_t;

typedef struct {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem[6];
	char oem_table[8];
	uint32_t oem_rev;
	uint32_t creator;
	uint32_t creator_rev;
} PACKED sdt_header_t;

typedef struct {
	sdt_header_t h;
	uint32_t lapic_addr;
	uint32_t flags;
} PACKED madt_t;

#define MADT_LAPIC     0
#define MADT_IOAPIC    1
#define MADT_OVERRIDE  2
#define MADT_X2APIC    9

/** FADT fields we need; the rest is skipped. */
typedef struct {
	sdt_header_t h;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved;
	uint8_t pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable;
	uint8_t acpi_disable;
	uint8_t s4bios_req;
	uint8_t pstate_cnt;
	uint32_t pm1a_evt_blk;
	uint32_t pm1b_evt_blk;
	uint32_t pm1a_cnt_blk;
	uint32_t pm1b_cnt_blk;
} PACKED fadt_t;

/** Written once during boot by the BSP; read-only afterwards. */
static uint16_t pm1a_cnt;
static uint16_t pm1b_cnt;
static uint16_t slp_typa;
static uint16_t slp_typb;
static bool s5_found;

static bool checksum_ok(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += b[i];
	return sum == 0;
}

static const rsdp_t *rsdp_scan(uintptr_t start, size_t len)
{
	for (uintptr_t a = start; a + sizeof(rsdp_t) <= start + len; a += 16) {
		const rsdp_t *r = PA2KA(a);
		if (memcmp(r->signature, "RSD PTR ", 8) == 0 && checksum_ok(r, 20))
			return r;
	}
	return NULL;
}

static const rsdp_t *rsdp_find(void)
{
	/* EBDA segment at 0x40e, then the BIOS area 0xe0000-0xfffff. */
	uintptr_t ebda = (uintptr_t) *(uint16_t *) PA2KA(0x40e) << 4;
	const rsdp_t *r = NULL;
	if (ebda >= 0x80000 && ebda < 0xa0000)
		r = rsdp_scan(ebda, 1024);
	if (!r)
		r = rsdp_scan(0xe0000, 0x20000);
	return r;
}

static const sdt_header_t *sdt_map(uint64_t phys)
{
	if (phys == 0 || phys >= GiB(4))
		return NULL;
	const sdt_header_t *h = PA2KA(phys);
	if (h->length < sizeof(sdt_header_t) || h->length > MiB(1))
		return NULL;
	if (!checksum_ok(h, h->length))
		return NULL;
	return h;
}

static const sdt_header_t *acpi_find_table(const rsdp_t *rsdp, const char *sig)
{
	const sdt_header_t *root;
	size_t entry_size;
	if (rsdp->revision >= 2 && rsdp->xsdt) {
		root = sdt_map(rsdp->xsdt);
		entry_size = 8;
	} else {
		root = NULL;
		entry_size = 4;
	}
	if (!root) {
		root = sdt_map(rsdp->rsdt);
		entry_size = 4;
	}
	if (!root)
		return NULL;
	size_t n = (root->length - sizeof(sdt_header_t)) / entry_size;
	const uint8_t *entries = (const uint8_t *) (root + 1);
	for (size_t i = 0; i < n; i++) {
		uint64_t addr;
		if (entry_size == 8)
			memcpy(&addr, entries + i * 8, 8);
		else {
			uint32_t a32;
			memcpy(&a32, entries + i * 4, 4);
			addr = a32;
		}
		const sdt_header_t *h = sdt_map(addr);
		if (h && memcmp(h->signature, sig, 4) == 0)
			return h;
	}
	return NULL;
}

static void cpu_add(uint32_t apic_id, uint32_t bsp_apic_id)
{
	if (cpu_count >= CONFIG_MAX_CPUS) {
		printf("acpi: more than %d CPUs, ignoring APIC id %u\n",
		    CONFIG_MAX_CPUS, apic_id);
		return;
	}
	/* The BSP is cpus[0], set up before enumeration. */
	if (apic_id == bsp_apic_id)
		return;
	for (unsigned i = 0; i < cpu_count; i++) {
		if (cpus[i].arch_id == apic_id)
			return;
	}
	cpus[cpu_count].id = cpu_count;
	cpus[cpu_count].arch_id = apic_id;
	cpus[cpu_count].state = CPU_ABSENT;
	cpu_count++;
}

static bool madt_parse(const madt_t *madt, uint32_t bsp_apic_id)
{
	const uint8_t *p = (const uint8_t *) (madt + 1);
	const uint8_t *end = (const uint8_t *) madt + madt->h.length;
	unsigned ncpus = 0;

	while (p + 2 <= end) {
		uint8_t type = p[0];
		uint8_t len = p[1];
		if (len < 2 || p + len > end)
			break;
		switch (type) {
		case MADT_LAPIC:
			if (len >= 8 && (p[4] & 1)) {
				cpu_add(p[3], bsp_apic_id);
				ncpus++;
			}
			break;
		case MADT_X2APIC:
			if (len >= 16) {
				uint32_t id, flags;
				memcpy(&id, p + 4, 4);
				memcpy(&flags, p + 8, 4);
				if ((flags & 1) && id < 255) {
					cpu_add(id, bsp_apic_id);
					ncpus++;
				}
			}
			break;
		case MADT_IOAPIC:
			if (len >= 12) {
				uint32_t addr, gsi;
				memcpy(&addr, p + 4, 4);
				memcpy(&gsi, p + 8, 4);
				ioapic_add(addr, gsi);
			}
			break;
		case MADT_OVERRIDE:
			if (len >= 10) {
				uint32_t gsi;
				uint16_t flags;
				memcpy(&gsi, p + 4, 4);
				memcpy(&flags, p + 8, 2);
				ioapic_add_override(p[3], gsi, flags);
			}
			break;
		default:
			break;
		}
		p += len;
	}
	return ncpus > 0;
}

/*
 * Finds \_S5 in the DSDT to learn the sleep type values for power off. The AML
 * encoding searched for is: NameOp "_S5_" PackageOp PkgLength NumElements then
 * the first two values (BytePrefix-encoded or a single-byte constant).
 */
static void dsdt_find_s5(uint32_t dsdt_phys)
{
	const sdt_header_t *dsdt = sdt_map(dsdt_phys);
	if (!dsdt)
		return;
	const uint8_t *p = (const uint8_t *) dsdt;
	for (uint32_t i = sizeof(sdt_header_t); i + 12 < dsdt->length; i++) {
		if (memcmp(p + i, "_S5_", 4) != 0 || p[i + 4] != 0x12)
			continue;
		const uint8_t *q = p + i + 5;
		q += ((*q & 0xc0) >> 6) + 1;  /* PkgLength */
		q++;                            /* NumElements */
		uint16_t vals[2];
		for (int k = 0; k < 2; k++) {
			if (*q == 0x0a) {
				vals[k] = q[1];
				q += 2;
			} else {
				vals[k] = (*q == 0x01) ? 1 : (*q <= 0x01 ? 0 : *q);
				q += 1;
			}
		}
		slp_typa = vals[0];
		slp_typb = vals[1];
		s5_found = true;
		return;
	}
}

typedef struct {
	char signature[4];
	uint32_t config;
	uint8_t length;
	uint8_t revision;
	uint8_t checksum;
	uint8_t features[5];
} PACKED mp_fps_t;

typedef struct {
	char signature[4];
	uint16_t base_length;
	uint8_t revision;
	uint8_t checksum;
	char oem[20];
	uint32_t oem_table;
	uint16_t oem_size;
	uint16_t entries;
	uint32_t lapic;
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} PACKED mp_config_t;

static const mp_fps_t *mp_scan(uintptr_t start, size_t len)
{
	for (uintptr_t a = start; a + 16 <= start + len; a += 16) {
		const mp_fps_t *f = PA2KA(a);
		if (memcmp(f->signature, "_MP_", 4) == 0 && checksum_ok(f, 16))
			return f;
	}
	return NULL;
}

/** MP specification 1.4 fallback: processor and IOAPIC entries. */
static bool mp_parse(uint32_t bsp_apic_id)
{
	uintptr_t ebda = (uintptr_t) *(uint16_t *) PA2KA(0x40e) << 4;
	const mp_fps_t *fps = NULL;
	if (ebda >= 0x80000 && ebda < 0xa0000)
		fps = mp_scan(ebda, 1024);
	if (!fps)
		fps = mp_scan(0x9fc00, 1024);
	if (!fps)
		fps = mp_scan(0xf0000, 0x10000);
	if (!fps || fps->config == 0)
		return false;
	const mp_config_t *cfg = PA2KA(fps->config);
	if (memcmp(cfg->signature, "PCMP", 4) != 0 ||
	    !checksum_ok(cfg, cfg->base_length))
		return false;
	const uint8_t *p = (const uint8_t *) (cfg + 1);
	const uint8_t *end = (const uint8_t *) cfg + cfg->base_length;
	unsigned ncpus = 0;
	for (unsigned i = 0; i < cfg->entries && p < end; i++) {
		switch (p[0]) {
		case 0:  /* processor */
			if (p[3] & 1) {
				cpu_add(p[1], bsp_apic_id);
				ncpus++;
			}
			p += 20;
			break;
		case 2:  /* IOAPIC */
			if (p[3] & 1) {
				uint32_t addr;
				memcpy(&addr, p + 4, 4);
				ioapic_add(addr, 0);
			}
			p += 8;
			break;
		default:
			p += 8;
			break;
		}
	}
	return ncpus > 0;
}

const char *platform_enumerate(uint32_t bsp_apic_id)
{
	const rsdp_t *rsdp = rsdp_find();
	const char *source = "none (single CPU)";
	bool madt_ok = false;

	if (rsdp) {
		const madt_t *madt = (const madt_t *) acpi_find_table(rsdp, "APIC");
		if (madt && madt_parse(madt, bsp_apic_id)) {
			source = "ACPI MADT";
			madt_ok = true;
		}
		const fadt_t *fadt = (const fadt_t *) acpi_find_table(rsdp, "FACP");
		if (fadt && fadt->h.length >= sizeof(fadt_t)) {
			pm1a_cnt = fadt->pm1a_cnt_blk;
			pm1b_cnt = fadt->pm1b_cnt_blk;
			dsdt_find_s5(fadt->dsdt);
		}
	}
	if (!madt_ok && mp_parse(bsp_apic_id))
		source = "MP table";
	if (ioapic_count() == 0)
		ioapic_add(0xfec00000, 0);
	return source;
}

void acpi_poweroff(void)
{
	if (!pm1a_cnt)
		return;
	uint16_t typa = s5_found ? slp_typa : 0;
	uint16_t typb = s5_found ? slp_typb : 0;
	outw(pm1a_cnt, (typa << 10) | (1 << 13));
	if (pm1b_cnt)
		outw(pm1b_cnt, (typb << 10) | (1 << 13));
}
