/** @file boot.c
 * amd64 boot information: the multiboot memory map and modules, the direct
 * map above 4 GiB (arch_boot_memory(), called by main_bsp()).
 */
#include <arch.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <main/main.h>
#include <mm/frame.h>
#include <proc/program.h>
#include <lib/str.h>
#include <panic.h>

#define MB_BOOTLOADER_MAGIC 0x2badb002
#define MB_INFO_MEMORY   (1 << 0)
#define MB_INFO_CMDLINE  (1 << 2)
#define MB_INFO_MODS     (1 << 3)
#define MB_INFO_MMAP     (1 << 6)
#define MB_INFO_LOADER   (1 << 9)

typedef struct {
	uint32_t flags;
	uint32_t mem_lower;
	uint32_t mem_upper;
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count;
	uint32_t mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length;
	uint32_t mmap_addr;
	uint32_t drives_length;
	uint32_t drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
} PACKED multiboot_info_t;

typedef struct {
	uint32_t size;
	uint64_t addr;
	uint64_t len;
	uint32_t type;
} PACKED multiboot_mmap_t;

typedef struct {
	uint32_t start;
	uint32_t end;
	uint32_t cmdline;
	uint32_t reserved;
} PACKED multiboot_mod_t;

#define MAX_MODULES 32
/** Boot modules (programs) kept out of the frame allocator; BSP, boot only. */
static struct {
	uint64_t start, end;
} modules[MAX_MODULES];
static size_t modules_count;


extern char kernel_end_phys[];
extern uint64_t boot_pdpt_low[512];
extern uint64_t boot_pd[4 * 512];

/** Usable RAM collected from the memory map; BSP only, during boot. */
static phys_region_t *regions;
static size_t regions_count, regions_max;

/**
 * Page directories for the direct map above 4 GiB (PHYS_MAP_MAX / 1 GiB - 4 of
 * them); in .bss so they exist before the frame allocator. BSP, boot only.
 */
static uint64_t highmem_pd[(PHYS_MAP_MAX >> 30) - 4][512] ALIGNED(4096);

static void region_add_free(uint64_t base, uint64_t end);

/** Adds usable RAM [base, end) minus the boot modules. */
static void region_add(uint64_t base, uint64_t end)
{
	for (size_t i = 0; i < modules_count; i++) {
		uint64_t ms = ALIGN_DOWN(modules[i].start, PAGE_SIZE);
		uint64_t me = ALIGN_UP(modules[i].end, PAGE_SIZE);
		if (ms < end && base < me) {
			if (base < ms)
				region_add(base, ms);
			if (me < end)
				region_add(me, end);
			return;
		}
	}
	region_add_free(base, end);
}

static void region_add_free(uint64_t base, uint64_t end)
{
	uint64_t reserved_end = (uint64_t) (uintptr_t) kernel_end_phys;
	/* Keep the low 1 MiB (BIOS, trampoline) and the kernel image out. */
	if (base < reserved_end)
		base = reserved_end;
	base = ALIGN_UP(base, PAGE_SIZE);
	end = ALIGN_DOWN(end, PAGE_SIZE);
	if (end > PHYS_MAP_MAX)
		end = PHYS_MAP_MAX;
	if (end <= base || regions_count >= regions_max)
		return;
	regions[regions_count].base = base;
	regions[regions_count].size = end - base;
	regions_count++;
	boot_info.mem_total += end - base;
}

static void copy_cstr(char *dst, size_t size, uint32_t phys)
{
	if (phys == 0) {
		dst[0] = 0;
		return;
	}
	str_cpy(dst, size, PA2KA(phys));
}

/** Parses the multiboot information (it may live anywhere below 4 GiB). */
static void multiboot_parse(uint32_t magic, uint32_t info_phys)
{
	if (magic != MB_BOOTLOADER_MAGIC)
		panic("Not booted by a multiboot loader (magic %#x)", magic);
	const multiboot_info_t *mbi = PA2KA(info_phys);

	if (mbi->flags & MB_INFO_CMDLINE)
		copy_cstr(boot_info.cmdline, sizeof(boot_info.cmdline), mbi->cmdline);
	if (mbi->flags & MB_INFO_LOADER)
		copy_cstr(boot_info.loader, sizeof(boot_info.loader),
		    mbi->boot_loader_name);

	if (mbi->flags & MB_INFO_MODS) {
		const multiboot_mod_t *mods = PA2KA(mbi->mods_addr);
		for (uint32_t i = 0; i < mbi->mods_count && i < MAX_MODULES; i++) {
			char cmdline[128];
			copy_cstr(cmdline, sizeof(cmdline), mods[i].cmdline);
			modules[modules_count].start = mods[i].start;
			modules[modules_count].end = mods[i].end;
			modules_count++;
			program_register_module(mods[i].start, mods[i].end, cmdline);
		}
	}

	if (mbi->flags & MB_INFO_MMAP) {
		uintptr_t p = mbi->mmap_addr;
		uintptr_t end = p + mbi->mmap_length;
		while (p + sizeof(multiboot_mmap_t) <= end) {
			const multiboot_mmap_t *e = PA2KA(p);
			if (e->type == 1)
				region_add(e->addr, e->addr + e->len);
			p += e->size + 4;
		}
	} else if (mbi->flags & MB_INFO_MEMORY) {
		region_add(MiB(1), MiB(1) + (uint64_t) mbi->mem_upper * 1024);
	}
	if (regions_count == 0)
		panic("No usable memory in the multiboot memory map");
}

/** Extends the direct map (2 MiB pages) over RAM above 4 GiB. */
static void direct_map_extend(void)
{
	uint64_t top = 0;
	for (size_t i = 0; i < regions_count; i++)
		top = MAX(top, regions[i].base + regions[i].size);
	for (uint64_t gib = 4; gib < (top + GiB(1) - 1) >> 30; gib++) {
		uint64_t *pd = highmem_pd[gib - 4];
		for (unsigned e = 0; e < 512; e++)
			pd[e] = ((gib << 30) + ((uint64_t) e << 21)) | PTE_P | PTE_RW |
			    PTE_PS | PTE_NX;
		boot_pdpt_low[gib] = KA2PA(pd) | PTE_P | PTE_RW;
	}
	write_cr3(read_cr3());
}

size_t arch_boot_memory(uintptr_t arg0, uintptr_t arg1, phys_region_t *out,
    size_t max)
{
	regions = out;
	regions_max = max;
	multiboot_parse((uint32_t) arg0, (uint32_t) arg1);
	direct_map_extend();
	return regions_count;
}
