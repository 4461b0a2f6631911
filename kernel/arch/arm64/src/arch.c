/** @file arch.c
 * arm64 side of the architecture boundary (arch.h) on QEMU's virt board:
 * the device tree (memory, CPUs, PSCI conduit), the GICv2 (SGIs for IPIs),
 * the EL1 virtual timer, the PL011 UART, PSCI CPU_ON and SYSTEM_OFF,
 * exception dispatch, page-table loads.
 */
#include <arch.h>
#include <arch/asm.h>
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
#include <errno.h>
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

/* MMIO: Device memory through the direct map's first GiB. */

static inline uint32_t mmio_read32(uintptr_t pa)
{
	return __atomic_load_n((volatile uint32_t *) PA2KA(pa), __ATOMIC_RELAXED);
}

static inline void mmio_write32(uintptr_t pa, uint32_t v)
{
	__atomic_store_n((volatile uint32_t *) PA2KA(pa), v, __ATOMIC_RELAXED);
}

/* The device tree (flattened, big-endian): memory, CPUs, PSCI method. */

#define FDT_MAGIC      0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) |
	    ((uint32_t) b[2] << 8) | b[3];
}

static uint64_t be64(const void *p)
{
	return ((uint64_t) be32(p) << 32) | be32((const uint8_t *) p + 4);
}

/** What the device tree told; BSP, boot only. */
static uint64_t dt_mem_base, dt_mem_size;
static uint64_t dt_cpu_mpidr[CONFIG_MAX_CPUS];
static unsigned dt_cpus;
/** PSCI conduit: true for HVC, false for SMC (the DT's /psci method). */
static bool psci_hvc = true;

static void fdt_parse(uintptr_t dtb_phys)
{
	const uint8_t *fdt = PA2KA(dtb_phys);
	if (be32(fdt) != FDT_MAGIC)
		panic("No device tree at %#lx", dtb_phys);
	const uint8_t *st = fdt + be32(fdt + 8);
	const char *strs = (const char *) fdt + be32(fdt + 12);
	int depth = 0;
	/* Node kinds on the path: 1 memory, 2 cpus, 3 cpu, 4 psci. */
	int kind[16] = { 0 };
	for (;;) {
		uint32_t tok = be32(st);
		st += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = (const char *) st;
			size_t len = strlen(name);
			st += ALIGN_UP(len + 1, 4);
			depth++;
			int k = 0;
			if (depth == 2 && strncmp(name, "memory", 6) == 0)
				k = 1;
			else if (depth == 2 && strcmp(name, "cpus") == 0)
				k = 2;
			else if (depth == 3 && kind[2] == 2 &&
			    strncmp(name, "cpu@", 4) == 0) {
				k = 3;
				if (dt_cpus < CONFIG_MAX_CPUS)
					dt_cpus++;
			} else if (depth == 2 && strncmp(name, "psci", 4) == 0)
				k = 4;
			if (depth < 16)
				kind[depth] = k;
		} else if (tok == FDT_END_NODE) {
			depth--;
		} else if (tok == FDT_PROP) {
			uint32_t len = be32(st);
			const char *pname = strs + be32(st + 4);
			const uint8_t *val = st + 8;
			st += 8 + ALIGN_UP(len, 4);
			int k = depth < 16 ? kind[depth] : 0;
			if (k == 1 && strcmp(pname, "reg") == 0 && len >= 16 &&
			    !dt_mem_size) {
				/* #address-cells = #size-cells = 2 on virt. */
				dt_mem_base = be64(val);
				dt_mem_size = be64(val + 8);
			} else if (k == 3 && strcmp(pname, "reg") == 0 &&
			    dt_cpus <= CONFIG_MAX_CPUS) {
				dt_cpu_mpidr[dt_cpus - 1] = len >= 8 ? be64(val) :
				    be32(val);
			} else if (k == 4 && strcmp(pname, "method") == 0) {
				psci_hvc = strcmp((const char *) val, "smc") != 0;
			}
		} else if (tok == FDT_NOP) {
			continue;
		} else {
			break;
		}
	}
}

size_t arch_boot_memory(uintptr_t arg0, uintptr_t arg1, phys_region_t *regions,
    size_t max)
{
	(void) arg1;
	/* QEMU puts a bare-metal image's device tree at the start of RAM. */
	fdt_parse(arg0 ? arg0 : VIRT_RAM_PHYS);
	str_cpy(boot_info.loader, sizeof(boot_info.loader),
	    "QEMU -kernel (device tree)");
	uintptr_t kend;
	/* An absolute symbol out of adrp's reach: a literal. */
	asm ("ldr %0, =kernel_end_phys" : "=r" (kend));
	uint64_t base = ALIGN_UP((uint64_t) kend, PAGE_SIZE);
	uint64_t end = ALIGN_DOWN(dt_mem_base + dt_mem_size, PAGE_SIZE);
	if (end > PHYS_MAP_MAX)
		end = PHYS_MAP_MAX;
	if (end <= base || max == 0)
		panic("No usable memory in the device tree");
	regions[0].base = base;
	regions[0].size = end - base;
	/* The user programs linked into the image (Makefile: progimage.S). */
	extern const uintptr_t arm64_programs[];
	for (const uintptr_t *p = arm64_programs; p[0]; p += 3)
		program_register_module(KA2PA((const void *) p[0]),
		    KA2PA((const void *) p[1]), (const char *) p[2]);
	/* The DTB and the image below base are kept. */
	boot_info.mem_total = end - base;
	return 1;
}

/* GICv2 */

#define GICD_CTLR       0x000
#define GICD_ISENABLER  0x100
#define GICD_IPRIORITYR 0x400
#define GICD_ITARGETSR  0x800
#define GICD_SGIR       0xf00
#define GICC_CTLR       0x000
#define GICC_PMR        0x004
#define GICC_IAR        0x00c
#define GICC_EOIR       0x010

static void gic_enable(unsigned intid)
{
	mmio_write32(VIRT_GICD_PHYS + GICD_ISENABLER + 4 * (intid / 32),
	    1U << (intid % 32));
}

/** This CPU's interface, its SGIs and the timer PPI (banked per CPU). */
static void gic_init_cpu(void)
{
	for (unsigned i = 0; i < 32; i += 4)
		mmio_write32(VIRT_GICD_PHYS + GICD_IPRIORITYR + i, 0x80808080);
	mmio_write32(VIRT_GICD_PHYS + GICD_ISENABLER, 0xffff |
	    (1U << INTID_VTIMER));
	mmio_write32(VIRT_GICC_PHYS + GICC_PMR, 0xff);
	mmio_write32(VIRT_GICC_PHYS + GICC_CTLR, 1);
}

/* Interrupt dispatch */

static iroutine_t handlers[IVT_ITEMS];
static const char *handler_names[IVT_ITEMS];
/** Per-CPU counts; each CPU writes its own row (relaxed), others sum. */
static uint64_t interrupt_counts[CONFIG_MAX_CPUS][IVT_ITEMS] ALIGNED(64);

void interrupt_register(unsigned vector, const char *name, iroutine_t handler)
{
	handlers[vector] = handler;
	handler_names[vector] = name;
}

uint64_t interrupt_count(unsigned vector)
{
	uint64_t sum = 0;
	if (vector >= IVT_ITEMS)
		return 0;
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++)
		sum += __atomic_load_n(&interrupt_counts[i][vector],
		    __ATOMIC_RELAXED);
	return sum;
}

void istate_print(const istate_t *is)
{
	printf("PC=%016lx ", is->elr);
	symtab_print_addr(is->elr);
	printf("\nSP=%016lx SPSR=%08lx ESR=%08lx FAR=%016lx\n", is->sp,
	    is->spsr, is->esr, is->far);
	for (int i = 0; i < 31; i++)
		printf("x%-2d=%016lx%s", i, is->x[i], (i % 4 == 3) ? "\n" : " ");
	printf("\n");
}

static void irq_dispatch(istate_t *istate)
{
	cpu_t *cpu = CPU;
	uint32_t iar = mmio_read32(VIRT_GICC_PHYS + GICC_IAR);
	unsigned intid = iar & 0x3ff;
	if (intid >= 1020)
		return;  /* spurious */
	if (intid < IVT_ITEMS)
		__atomic_fetch_add(&interrupt_counts[cpu->id][intid], 1,
		    __ATOMIC_RELAXED);
	/*
	 * As amd64's interrupt_dispatch(): an idle CPU is no longer idle (the
	 * grace-period detector takes an idle CPU as quiescent without asking
	 * it, and this handler may enter a reader section). On amd64 the
	 * seq_cst store is an xchg, a full barrier; on arm64 it is an STLR,
	 * which later loads may pass: the fence keeps the handler's reader
	 * loads after the store (no store-load reordering), the detector's
	 * side being its seq_cst load of the flag after it started the GP.
	 */
	if (__atomic_load_n(&cpu->idle, __ATOMIC_RELAXED)) {
		__atomic_store_n(&cpu->idle, false, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	cpu->irq_nesting++;
	lockdep_hardirq_enter(intid);
	/*
	 * End of interrupt before the handler: it may not return (halt), and
	 * a cross-call may send IPIs. An SGI of the same id sent meanwhile
	 * stays pending (IRQs are masked until the exception returns).
	 */
	mmio_write32(VIRT_GICC_PHYS + GICC_EOIR, iar);
	if (intid < IVT_ITEMS && handlers[intid])
		handlers[intid](intid, istate);
	lockdep_hardirq_exit(intid);
	cpu->irq_nesting--;
	if (cpu->need_resched && !(istate->spsr & DAIF_I))
		scheduler_preempt_check();
	if (istate_from_user(istate))
		task_user_return();
}

/* Exception classes (ESR_EL1.EC). */
#define EC_UNKNOWN    0x00
#define EC_WFX        0x01
#define EC_FP_ACCESS  0x07
#define EC_SVE        0x19
#define EC_SME        0x1d
#define EC_ILLEGAL    0x0e
#define EC_SVC64      0x15
#define EC_SYSREG     0x18
#define EC_IABT_LOWER 0x20
#define EC_IABT_SAME  0x21
#define EC_PC_ALIGN   0x22
#define EC_DABT_LOWER 0x24
#define EC_DABT_SAME  0x25
#define EC_SP_ALIGN   0x26
#define EC_FP_EXC     0x2c
#define EC_BKPT_LOWER 0x30
#define EC_STEP_LOWER 0x32
#define EC_WATCH_LOWER 0x34
#define EC_BRK64      0x3c
/** DFSC/IFSC of an alignment fault. */
#define FSC_ALIGNMENT 0x21

/**
 * The `brk` immediate of a checked integer division by zero: the code
 * Clang's -fsanitize=integer-divide-by-zero -fsanitize-trap emits on
 * AArch64 (0x5500 | its DivremOverflow handler, 3; Linux decodes the same
 * 0x55xx range as UBSan traps). AArch64's UDIV and SDIV do not trap on a
 * zero divisor (the result is 0), unlike x86's DIV (#DE): a program that
 * wants the trap checks the divisor and executes this `brk`
 * (uspace/app/fault does), and the kernel reports it as amd64 reports #DE.
 * GCC's -fsanitize=integer-divide-by-zero -fsanitize-undefined-trap-on-error
 * traps with `brk #1000` instead, its __builtin_trap() for every reason:
 * that one stays a breakpoint.
 */
#define BRK_IMM_DIVIDE 0x5503

/**
 * The generic class (task_user_fault()) of a synchronous exception from EL0
 * that is not a system call or an abort. EC 0 (unknown reason) is what an
 * UNDEFINED instruction gives: `udf`, and at EL0 also MSR/MRS of EL1
 * registers, `eret`, `hvc` and `smc`; EC 0x18 is an EL0 access to a system
 * register or instruction that SCTLR_EL1 (UMA, DZE, UCT, UCI), CNTKCTL_EL1
 * or PMUSERENR_EL0 trap; EC 1 is WFI with SCTLR_EL1.nTWI clear (a
 * privileged wait, like x86's `hlt`; WFE is allowed, nTWE set).
 */
static ufault_t user_sync_kind(uint32_t ec, uint64_t esr)
{
	switch (ec) {
	case EC_UNKNOWN:
	case EC_ILLEGAL:
	case EC_FP_ACCESS:   /* FP/SIMD trapped: never (CPACR_EL1.FPEN 0b11) */
	case EC_SVE:         /* SVE (CPACR_EL1.ZEN 0) */
	case EC_SME:         /* SME (CPACR_EL1.SMEN 0) */
		return UFAULT_INVALID_INSN;
	case EC_WFX:
	case EC_SYSREG:
		return UFAULT_PROTECTION;
	case EC_PC_ALIGN:
	case EC_SP_ALIGN:
		return UFAULT_ALIGNMENT;
	case EC_FP_EXC:
		return UFAULT_ARITHMETIC;
	case EC_BKPT_LOWER:
	case EC_STEP_LOWER:
	case EC_WATCH_LOWER:
		return UFAULT_DEBUG;
	case EC_BRK64:
		return (esr & 0xffff) == BRK_IMM_DIVIDE ? UFAULT_DIVIDE :
		    UFAULT_BREAKPOINT;
	default:
		return UFAULT_OTHER;
	}
}

static const page_fault_arch_t abort_arch = {
	.name = "Data/instruction abort",
	.code_name = "ESR",
	.protection = "PAN",
};

/**
 * What stops an abort of class @a ec (DFSC/IFSC @a fsc) before a mapping is
 * tried, and from user mode its class (@a kind).
 */
static pf_refusal_t abort_refusal(const istate_t *istate, uint32_t ec,
    uint32_t fsc, ufault_t *kind)
{
	*kind = UFAULT_PAGE_NO_AREA;
	/*
	 * PAN: a permission fault (0b0011xx) of an EL1 data access to a user
	 * page with PSTATE.PAN set (SPSR_EL1.PAN) is a kernel access to a user
	 * page outside uaccess (whose accesses run with PAN clear). A kernel
	 * thread inside a user address space may touch its pages
	 * (page_fault_handle() lets it: it ran before the scheduler hook
	 * cleared PAN for it); anything else cannot be resolved: the
	 * minor-fault path would return EOK and the access fault forever.
	 */
	if (ec == EC_DABT_SAME && (fsc & 0x3c) == 0x0c &&
	    (istate->spsr & SPSR_PAN) && userspace_pan_enabled())
		return PF_PROTECTED;
	/* An alignment fault or a synchronous external abort (0b0100xx). */
	if (fsc == FSC_ALIGNMENT) {
		*kind = UFAULT_ALIGNMENT;
		return PF_UNMAPPABLE;
	}
	return (fsc & 0x3c) == 0x10 ? PF_UNMAPPABLE : PF_MAPPABLE;
}

/** A data or instruction abort (EC @a ec) to the generic fault policy. */
static void abort_dispatch(istate_t *istate, uint32_t ec)
{
	bool insn = ec == EC_IABT_SAME || ec == EC_IABT_LOWER;
	/* DFSC/IFSC: translation (0b0001xx) or access flag / permission. */
	uint32_t fsc = istate->esr & 0x3f;
	bool write = !insn && (istate->esr & (1 << 6));
	page_fault_t pf = {
		.addr = istate->far,
		.access = insn ? PF_ACCESS_EXEC :
		    (write ? PF_ACCESS_WRITE : PF_ACCESS_READ),
		.user = istate_from_user(istate),
		/* The fault handler may sleep: interrupts as they were. */
		.enable_irq = !(istate->spsr & DAIF_I),
		.code = istate->esr,
		.arch = &abort_arch,
	};
	pf.refusal = abort_refusal(istate, ec, fsc, &pf.user_kind);
	/* PAN refused a kernel thread: retry with PAN clear. */
	if (page_fault_handle(istate, &pf))
		istate->spsr &= ~SPSR_PAN;
}

static void sync_dispatch(istate_t *istate)
{
	uint32_t ec = (istate->esr >> 26) & 0x3f;
	if (ec == EC_DABT_SAME || ec == EC_DABT_LOWER || ec == EC_IABT_SAME ||
	    ec == EC_IABT_LOWER) {
		abort_dispatch(istate, ec);
		return;
	}
	if (istate_from_user(istate)) {
		/*
		 * FAR_EL1 holds the address of a PC alignment fault (and of a
		 * watchpoint hit); for the others the instruction's address.
		 */
		task_user_fault(istate, user_sync_kind(ec, istate->esr),
		    ec == EC_PC_ALIGN || ec == EC_WATCH_LOWER ? istate->far :
		    istate->elr);
		return;
	}
	panic_istate(istate, "Exception class %#x at %p, ESR %#lx, FAR %p", ec,
	    (void *) istate->elr, istate->esr, (void *) istate->far);
}

/** Called by vectors.S with the saved state and the vector's kind. */
void arm64_exception(istate_t *istate, unsigned kind);
void arm64_exception(istate_t *istate, unsigned kind)
{
	/* From EL0 SP_EL0 held the user's stack: make it THREAD again. */
	if (kind >= 4 && kind < 8)
		arch_thread_current_set(CPU->thread);
	switch (kind) {
	case 1:
	case 5:
		irq_dispatch(istate);
		return;
	case 4:
		if (((istate->esr >> 26) & 0x3f) == EC_SVC64) {
			/* Returns with interrupts disabled, task_user_return() done. */
			interrupts_enable();
			syscall_dispatch(istate);
			return;
		}
		sync_dispatch(istate);
		/* A thread of a killed task exits instead of returning. */
		task_user_return();
		return;
	case 0:
		sync_dispatch(istate);
		return;
	default:
		panic_istate(istate, "Unexpected exception (vector kind %#x)",
		    kind);
	}
}

/* The timer: the EL1 virtual timer, HZ interrupts a second per CPU. */

static uint64_t timer_freq;

static void timer_handler(unsigned vector, istate_t *istate)
{
	WRITE_SYSREG(cntv_tval_el0, timer_freq / HZ);
	clock_tick();
}

void arch_timer_start(void)
{
	WRITE_SYSREG(cntv_tval_el0, timer_freq / HZ);
	WRITE_SYSREG(cntv_ctl_el0, 1);
	isb();
}

/* IPIs: SGIs through GICD_SGIR. */

static void smp_call_handler(unsigned vector, istate_t *istate)
{
	smp_call_ipi_receive();
}

#ifdef CONFIG_TEST
/* The ipi1 test counts these (kernel/test/smp/ipi1.c). */
static void ipi_test_handler(unsigned vector, istate_t *istate)
{
	atomic_inc(&CPU->ipi_test_count);
}
#endif

static void halt_ipi_handler(unsigned vector, istate_t *istate)
{
	cpu_arch_stop_self();
}

static void wakeup_ipi_handler(unsigned vector, istate_t *istate)
{
}

static unsigned intr_id(intr_kind_t kind)
{
	switch (kind) {
	case INTR_TIMER:
		return INTID_VTIMER;
	case INTR_SMP_CALL:
		return INTID_SMP_CALL;
	case INTR_WAKEUP:
		return INTID_WAKEUP;
	case INTR_IPI_TEST:
		return INTID_IPI_TEST;
	case INTR_HALT:
		return INTID_HALT;
	}
	return 0;
}

/**
 * Writes GICD_SGIR. The DSB before it keeps the SGI from overtaking the
 * caller's earlier stores to Normal memory (a queued cross-call, a run
 * queue): the Device write to the distributor is not ordered after them by
 * anything else, and the target's handler must see them.
 */
static void sgi_write(uint32_t v)
{
	asm volatile ("dsb ish" ::: "memory");
	mmio_write32(VIRT_GICD_PHYS + GICD_SGIR, v);
}

void arch_ipi_send(const cpu_t *c, intr_kind_t kind)
{
	/* QEMU virt: GIC CPU interface number = cpus[] index. */
	sgi_write((1U << (16 + c->id)) | intr_id(kind));
}

void arch_ipi_broadcast(intr_kind_t kind)
{
	/* TargetListFilter 1: every CPU but the sender. */
	sgi_write((1U << 24) | intr_id(kind));
}

uint64_t arch_intr_count(intr_kind_t kind)
{
	return interrupt_count(intr_id(kind));
}

void arch_interrupts_init(cpu_t *bsp)
{
	(void) bsp;
	interrupt_register(INTID_VTIMER, "timer", timer_handler);
	interrupt_register(INTID_SMP_CALL, "smp-call", smp_call_handler);
#ifdef CONFIG_TEST
	interrupt_register(INTID_IPI_TEST, "ipi-test", ipi_test_handler);
#endif
	interrupt_register(INTID_HALT, "halt", halt_ipi_handler);
	interrupt_register(INTID_WAKEUP, "wakeup", wakeup_ipi_handler);
}

void arch_cpus_init(cpu_t *bsp, uint64_t mem_total, size_t regions_count)
{
	mmio_write32(VIRT_GICD_PHYS + GICD_CTLR, 1);
	gic_init_cpu();
	bsp->arch_id = READ_SYSREG(mpidr_el1) & 0xffffff;
	cpu_count = dt_cpus ? dt_cpus : 1;
	if (cpu_count > 8)
		cpu_count = 8;  /* GICv2 addresses 8 CPU interfaces */
	for (unsigned i = 1; i < cpu_count; i++) {
		cpus[i].id = i;
		cpus[i].self = &cpus[i];
		cpus[i].arch_id = dt_cpu_mpidr[i] & 0xffffff;
	}
	boot_info.cpu_source = "device tree";
	timer_freq = READ_SYSREG(cntfrq_el0);
	time_init(timer_freq);
	for (unsigned i = 0; i < cpu_count; i++)
		cpus[i].timer_hz = timer_freq;
	printf("Memory: %lu MiB usable in %zu regions; CPUs: %u (%s); "
	    "generic timer %lu Hz, GICv2, PSCI by %s\n", mem_total >> 20,
	    regions_count, cpu_count, boot_info.cpu_source, timer_freq,
	    psci_hvc ? "HVC" : "SMC");
}

/* PSCI */

#define PSCI_CPU_ON     0xc4000003UL
#define PSCI_SYSTEM_OFF 0x84000008UL

static int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 asm("x0") = fn;
	register uint64_t x1 asm("x1") = a1;
	register uint64_t x2 asm("x2") = a2;
	register uint64_t x3 asm("x3") = a3;
	if (psci_hvc)
		asm volatile ("hvc #0" : "+r" (x0) : "r" (x1), "r" (x2), "r" (x3)
		    : "memory");
	else
		asm volatile ("smc #0" : "+r" (x0) : "r" (x1), "r" (x2), "r" (x3)
		    : "memory");
	return (int64_t) x0;
}

void arch_poweroff(void)
{
	psci_call(PSCI_SYSTEM_OFF, 0, 0, 0);
}

/* Secondary CPUs */

/**
 * The stack a starting secondary loads (start.S); one start at a time.
 * (Declared here for the assembly file.)
 */
extern uint64_t ap_boot_sp;
uint64_t ap_boot_sp;

/** Physical address of ap_start (start.S; linked there, out of adrp's reach). */
static uintptr_t ap_start_phys(void)
{
	uintptr_t a;
	asm ("ldr %0, =ap_start" : "=r" (a));
	return a;
}

#define AP_START_TIMEOUT_US 5000000UL

unsigned smp_start_aps(void)
{
	for (unsigned i = 1; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		uintptr_t stack = frame_alloc(KERNEL_STACK_SIZE / PAGE_SIZE,
		    FRAME_ZERO);
		if (!stack) {
			c->state = CPU_FAILED;
			continue;
		}
		c->stack_top = (uintptr_t) PA2KA(stack) + KERNEL_STACK_SIZE;
		ap_boot_sp = c->stack_top;
		/* Release: the secondary's acquire of its state sees the above. */
		__atomic_store_n(&c->state, CPU_STARTING, __ATOMIC_RELEASE);
		/* The entry runs with the MMU off: ap_start's physical address. */
		int64_t rc = psci_call(PSCI_CPU_ON, dt_cpu_mpidr[i],
		    ap_start_phys(), i);
		uint64_t start = uptime_us();
		while (rc == 0 && __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) !=
		    CPU_ONLINE && uptime_us() - start < AP_START_TIMEOUT_US)
			cpu_relax();
		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CPU_ONLINE) {
			printf("smp: CPU %u (MPIDR %#lx) did not start (PSCI %ld)\n",
			    i, dt_cpu_mpidr[i], rc);
			__atomic_store_n(&c->state, CPU_FAILED, __ATOMIC_RELEASE);
		}
	}
	return (unsigned) atomic_get(&cpu_active_count);
}

void smp_boot_finish(void)
{
	/* The identity map in TTBR0 goes at the first arch_as_load(). */
}

/** C entry of a secondary (start.S), MMU on, on ap_boot_sp. */
void ap_entry_index(unsigned idx);
void ap_entry_index(unsigned idx)
{
	cpu_t *cpu = &cpus[idx];
	arch_percpu_init(cpu);
	ap_entry(cpu);
}

void ap_entry(cpu_t *cpu)
{
	gic_init_cpu();
	arch_timer_start();
	arch_as_load(0);
	atomic_inc(&cpu_active_count);
	/* Acknowledge: the BSP goes on with the next CPU. */
	__atomic_store_n(&cpu->state, CPU_ONLINE, __ATOMIC_RELEASE);
	main_ap();
}

/* CPU control */

/** Set once by cpu_arch_stop_others(). Atomics. */
static bool halt_requested;

void cpu_arch_stop_self(void)
{
	(void) interrupts_disable();
	cpu_t *cpu = CPU;
	if (cpu)
		__atomic_store_n(&cpu->state, CPU_HALTED, __ATOMIC_RELEASE);
	for (;;)
		cpu_halt();
}

void cpu_arch_stop_others(void)
{
	__atomic_store_n(&halt_requested, true, __ATOMIC_SEQ_CST);
	arch_ipi_broadcast(INTR_HALT);
}

bool cpu_arch_halt_requested(void)
{
	return __atomic_load_n(&halt_requested, __ATOMIC_SEQ_CST);
}

void cpu_arch_print_model(void)
{
	uint64_t midr = READ_SYSREG(midr_el1);
	printf("MIDR_EL1 %#lx (implementer %#lx, part %#lx)", midr,
	    (midr >> 24) & 0xff, (midr >> 4) & 0xfff);
}

/* The console: the PL011. */

#define UART_DR   0x00
#define UART_FR   0x18
#define UART_IMSC 0x38
#define UART_ICR  0x44
#define FR_TXFF   (1 << 5)
#define FR_RXFE   (1 << 4)
#define INT_RX    ((1 << 4) | (1 << 6))  /* receive, receive timeout */

void console_hw_init(void)
{
	/* QEMU's PL011 needs no baud rate set up; receive interrupts off. */
	mmio_write32(VIRT_UART_PHYS + UART_IMSC, 0);
}

void console_hw_putc(char c)
{
	while (mmio_read32(VIRT_UART_PHYS + UART_FR) & FR_TXFF)
		cpu_relax();
	mmio_write32(VIRT_UART_PHYS + UART_DR, (uint8_t) c);
}

int console_hw_getc_nowait(void)
{
	if (mmio_read32(VIRT_UART_PHYS + UART_FR) & FR_RXFE)
		return -1;
	return mmio_read32(VIRT_UART_PHYS + UART_DR) & 0xff;
}

void console_hw_set_rx_irq(bool on)
{
	mmio_write32(VIRT_UART_PHYS + UART_IMSC, on ? INT_RX : 0);
}

/** The generic receive handler; set once at boot before the IRQ is enabled. */
static void (*console_irq_handler)(void);

static void uart_handler(unsigned vector, istate_t *istate)
{
	console_irq_handler();
	mmio_write32(VIRT_UART_PHYS + UART_ICR, INT_RX);
}

bool console_hw_irq_enable(void (*handler)(void))
{
	console_irq_handler = handler;
	interrupt_register(VIRT_UART_INTID, "pl011", uart_handler);
	/* Priority, target CPU 0, enable (SPIs: the distributor's registers). */
	uint32_t shift = (VIRT_UART_INTID % 4) * 8;
	uintptr_t pri = VIRT_GICD_PHYS + GICD_IPRIORITYR + (VIRT_UART_INTID & ~3);
	mmio_write32(pri, (mmio_read32(pri) & ~(0xffU << shift)) | (0x80U << shift));
	uintptr_t tgt = VIRT_GICD_PHYS + GICD_ITARGETSR + (VIRT_UART_INTID & ~3);
	mmio_write32(tgt, (mmio_read32(tgt) & ~(0xffU << shift)) | (1U << shift));
	gic_enable(VIRT_UART_INTID);
	return true;
}

/* Address spaces */

void arch_as_load(uintptr_t root_phys)
{
	/*
	 * No ASIDs: every switch invalidates this CPU's TLB. The DSB ISH
	 * before is the full barrier arch.h promises: it completes every
	 * earlier load and store, the table stores and the cpus_running
	 * update (as.c's seq_cst RMW, an LDAXR/STLXR loop that is no full
	 * barrier by itself) included, before the new tables are walked or
	 * any later access is performed; the one after
	 * waits for the invalidation, the ISB makes the next instructions use
	 * the new translation.
	 */
	uintptr_t root = root_phys ? root_phys : paging_kernel_root_phys();
	asm volatile ("dsb ish\n\t"
	    "msr ttbr0_el1, %0\n\t"
	    "isb\n\t"
	    "tlbi vmalle1\n\t"
	    "dsb nsh\n\t"
	    "isb" :: "r" (root) : "memory");
}

void userspace_print_features(void)
{
	printf("User space: svc at EL0, PXN on user pages, PAN %s\n",
	    userspace_pan_enabled() ? "on" : "off (not supported by the CPU)");
}
