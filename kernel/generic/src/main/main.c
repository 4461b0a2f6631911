/** @file main.c
 * Kernel initialization: BSP and AP entry, memory map, CPU bring-up.
 */
#include <main/main.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <arch/apic.h>
#include <arch/interrupt.h>
#include <arch/cpu_arch.h>
#include <arch/smp_arch.h>
#include <genarch/acpi.h>
#include <console/console.h>
#include <console/kconsole.h>
#include <mm/frame.h>
#include <mm/malloc.h>
#include <time/delay.h>
#include <lib/str.h>
#include <print.h>
#include <panic.h>
#include <cpu.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <adt/cht.h>
#include <mm/as.h>
#include <proc/task.h>
#include <proc/program.h>

#include <smp/smp_call.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <time/timeout.h>

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

boot_info_t boot_info;

#define MAX_MODULES 32
/** Boot modules (programs) kept out of the frame allocator; BSP, boot only. */
static struct {
	uint64_t start, end;
} modules[MAX_MODULES];
static size_t modules_count;


extern char kernel_end_phys[];
extern uint64_t boot_pdpt_low[512];
extern uint64_t boot_pd[4 * 512];

#define MAX_REGIONS 64
/** Usable RAM collected from the memory map; BSP only, during boot. */
static phys_region_t regions[MAX_REGIONS];
static size_t regions_count;

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
	if (end <= base || regions_count >= MAX_REGIONS)
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

/** The clock: runs on every CPU HZ times a second. */
static void timer_handler(unsigned vector, istate_t *istate)
{
	cpu_t *c = CPU;
	lapic_eoi();
	__atomic_store_n(&c->ticks, c->ticks + 1, __ATOMIC_RELAXED);
	timeout_process();
	scheduler_tick();
}

static void kconsole_thread(void *arg)
{
	kconsole_run();
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

void main_bsp(uint32_t mb_magic, uint32_t mb_info)
{
	cpu_t *bsp = &cpus[0];

	/* CPU (%gs:0) must work before the first printf. */
	bsp->self = bsp;
	bsp->id = 0;
	write_msr(MSR_GS_BASE, (uint64_t) bsp);
	extern char boot_stack_top[];
	bsp->stack_top = (uintptr_t) boot_stack_top;

	console_init();
	printf("\nBooting HelenOS-style SMP kernel %s (%s build, rev %s)\n",
	    KERNEL_VERSION, CONFIG_BUILD, KERNEL_GIT_REV);

	multiboot_parse(mb_magic, mb_info);
	direct_map_extend();

	idt_init();
	cpu_arch_init(bsp);
	interrupt_register(VECTOR_TIMER, "timer", timer_handler);
#ifdef CONFIG_TEST
	interrupt_register(VECTOR_IPI_TEST, "ipi-test", ipi_test_handler);
#endif
	interrupt_register(VECTOR_HALT, "halt", halt_ipi_handler);
	interrupt_register(VECTOR_WAKEUP, "wakeup", wakeup_ipi_handler);

	frame_init(regions, regions_count);
	heap_init();
	scheduler_init();
	smp_call_init();
	thread_init();
	scheduler_init_cpu();

	lapic_init_bsp();
	bsp->apic_id = lapic_id();
	cpu_count = 1;
	boot_info.cpu_source = platform_enumerate(bsp->apic_id);
	ioapic_init();

	lapic_calibrate();
	bsp->lapic_hz = lapic_timer_hz();
	for (unsigned i = 1; i < cpu_count; i++)
		cpus[i].lapic_hz = bsp->lapic_hz;
	printf("Memory: %lu MiB usable in %zu regions; CPUs: %u (%s); "
	    "LAPIC timer %lu Hz, TSC %lu MHz\n", boot_info.mem_total >> 20,
	    regions_count, cpu_count, boot_info.cpu_source, bsp->lapic_hz,
	    tsc_hz() / 1000000);

	lapic_timer_start();
	atomic_inc(&cpu_active_count);
	__atomic_store_n(&bsp->state, CPU_ONLINE, __ATOMIC_RELEASE);
	console_enable_input_irq();
	interrupts_enable();

	unsigned online = smp_start_aps();
	smp_boot_finish();
	printf("SMP: %u of %u CPUs online\n", online, cpu_count);

	kconsole_init();
	rcu_init();
	rcu_start_threads();
	workq_global_init();
	as_init();
	task_init();
	thread_t *kcon = thread_create(kconsole_thread, NULL, "kconsole",
	    THREAD_FLAG_NONE);
	if (!kcon)
		panic("Cannot create the kconsole thread");
	thread_start(kcon);
	scheduler_idle_loop();
}

void main_ap(void)
{
	scheduler_init_cpu();
	scheduler_idle_loop();
}
