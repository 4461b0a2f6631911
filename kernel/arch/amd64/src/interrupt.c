/** @file interrupt.c
 * IDT, exception reports and interrupt dispatch.
 */
#include <arch/interrupt.h>
#include <arch/entry.h>
#include <arch/asm.h>
#include <arch/apic.h>
#include <arch/cpu_arch.h>
#include <panic.h>
#include <print.h>
#include <cpu.h>
#include <proc/scheduler.h>
#include <debug/symtab.h>
#include <arch/userspace.h>
#include <proc/task.h>
#include <synch/lockdep.h>

typedef struct {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t zero;
} PACKED idt_entry_t;

typedef struct {
	uint16_t limit;
	uint64_t base;
} PACKED idtr_t;

/** The IDT; written by the BSP before other CPUs start, read-only afterwards. */
static idt_entry_t idt[IVT_ITEMS] ALIGNED(16);
/** Handlers; written during initialization only. */
static iroutine_t handlers[IVT_ITEMS];
static const char *handler_names[IVT_ITEMS];
/**
 * Interrupt counts per CPU and vector: row i is written only by CPU i (and by
 * the BSP before its CPU structure is set, as row 0), with relaxed atomic adds
 * (an NMI may nest in a handler); interrupt_count() sums the rows with relaxed
 * loads. A row is 2 KiB and the array 64-byte aligned, so no two CPUs write a
 * common cache line: one array shared by all CPUs put a line written by every
 * CPU on every timer tick into every benchmark (docs/SHARING.md).
 */
static uint64_t interrupt_counts[CONFIG_MAX_CPUS][IVT_ITEMS] ALIGNED(64);

extern const uint64_t isr_table[IVT_ITEMS];

static const char *exception_names[32] = {
	"#DE Divide error", "#DB Debug", "NMI", "#BP Breakpoint", "#OF Overflow",
	"#BR Bound range", "#UD Invalid opcode", "#NM Device not available",
	"#DF Double fault", "Coprocessor segment overrun", "#TS Invalid TSS",
	"#NP Segment not present", "#SS Stack fault", "#GP General protection",
	"#PF Page fault", "Reserved 15", "#MF x87 floating point", "#AC Alignment check",
	"#MC Machine check", "#XM SIMD floating point", "#VE Virtualization",
	"#CP Control protection", "Reserved 22", "Reserved 23", "Reserved 24",
	"Reserved 25", "Reserved 26", "Reserved 27", "#HV Hypervisor injection",
	"#VC VMM communication", "#SX Security", "Reserved 31"
};

/**
 * The generic class of user-mode exception @a vector (the report line,
 * task_user_fault()). #GP also comes from a non-canonical address, a bad
 * selector or `int N` without a DPL 3 gate: all protection faults; #SS is a
 * stack-segment protection fault (a non-canonical stack address).
 */
static ufault_t user_fault_kind(unsigned vector)
{
	switch (vector) {
	case 0:
		return UFAULT_DIVIDE;
	case 1:
		return UFAULT_DEBUG;
	case 3:
		return UFAULT_BREAKPOINT;
	case 6:
		return UFAULT_INVALID_INSN;
	case 10:
	case 11:
	case 12:
	case 13:
		return UFAULT_PROTECTION;
	case 14:
		return UFAULT_PAGE_NO_AREA;
	case 4:
	case 16:
	case 19:
		return UFAULT_ARITHMETIC;
	case 17:
		return UFAULT_ALIGNMENT;
	default:
		return UFAULT_OTHER;
	}
}

/** Every exception without a specific handler is fatal: report and panic. */
static void exception_fatal(unsigned vector, istate_t *istate)
{
	/* In user mode it is fatal to the task only. */
	if (istate_from_user(istate) && vector != 2 && vector != 8 &&
	    vector != 18) {
		task_user_fault(istate, user_fault_kind(vector),
		    vector == 14 ? read_cr2() : istate->rip);
		return;
	}
	if (vector == 14) {
		panic_istate(istate, "Exception #%u (%s) at %p, fault address %p, "
		    "error code %#lx", vector, exception_names[vector],
		    (void *) istate->rip, (void *) read_cr2(), istate->error_code);
	}
	panic_istate(istate, "Exception #%u (%s) at %p, error code %#lx", vector,
	    exception_names[vector], (void *) istate->rip, istate->error_code);
}

static void nmi_handler(unsigned vector, istate_t *istate)
{
	/* Another CPU panicked (or halted) and asks us to stop. */
	if (panic_in_progress() || cpu_arch_halt_requested())
		cpu_arch_stop_self();
	exception_fatal(vector, istate);
}

static void unexpected_interrupt(unsigned vector, istate_t *istate)
{
	printf("Unexpected interrupt %u on CPU %u at %p (ignored)\n", vector,
	    CPU->id, (void *) istate->rip);
	if (vector >= IVT_IRQBASE)
		lapic_eoi();
}

static void spurious_interrupt(unsigned vector, istate_t *istate)
{
	/* No EOI for the spurious vector. */
}

uint64_t interrupt_count(unsigned vector)
{
	uint64_t sum = 0;
	if (vector >= IVT_ITEMS)
		return 0;
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++)
		sum += __atomic_load_n(&interrupt_counts[i][vector], __ATOMIC_RELAXED);
	return sum;
}

void interrupt_register(unsigned vector, const char *name, iroutine_t handler)
{
	handlers[vector] = handler;
	handler_names[vector] = name;
}

void interrupt_dispatch(istate_t *istate)
{
	unsigned vector = istate->vector & 0xff;
	cpu_t *cpu = CPU;

	__atomic_fetch_add(&interrupt_counts[cpu ? cpu->id : 0][vector], 1,
	    __ATOMIC_RELAXED);
	/*
	 * An idle CPU taking an interrupt is no longer idle: its handler may enter
	 * an RCU reader section, and the grace period detector treats an idle CPU
	 * as quiescent without asking it. The seq_cst store orders the handler's
	 * accesses after it; the detector reads the flag with seq_cst after it
	 * started the grace period (see rcu.c).
	 */
	if (cpu && __atomic_load_n(&cpu->idle, __ATOMIC_RELAXED))
		__atomic_store_n(&cpu->idle, false, __ATOMIC_SEQ_CST);
	if (cpu)
		cpu->irq_nesting++;
	if (cpu)
		lockdep_hardirq_enter(vector);
	handlers[vector](vector, istate);
	if (cpu) {
		lockdep_hardirq_exit(vector);
		cpu->irq_nesting--;
		/*
		 * Preempt on the way out, but only if the interrupted code had
		 * interrupts enabled (an exception in an interrupts-off section must
		 * return to it unchanged).
		 */
		if (cpu->need_resched && (istate->rflags & RFLAGS_IF))
			scheduler_preempt_check();
		/* A thread of a killed task exits instead of returning. */
		if (istate_from_user(istate))
			task_user_return();
	}
}

static void idt_set(unsigned vector, uint64_t addr, uint8_t ist)
{
	idt[vector].offset_lo = addr & 0xffff;
	idt[vector].selector = GDT_SEL_KCODE;
	idt[vector].ist = ist;
	idt[vector].type_attr = 0x8e;  /* present, DPL 0, 64-bit interrupt gate */
	idt[vector].offset_mid = (addr >> 16) & 0xffff;
	idt[vector].offset_hi = addr >> 32;
	idt[vector].zero = 0;
}

void idt_init(void)
{
	for (unsigned i = 0; i < IVT_ITEMS; i++) {
		uint8_t ist = 0;
		if (i == 8)
			ist = IST_DOUBLE_FAULT;
		else if (i == 2)
			ist = IST_NMI;
		else if (i == 18)
			ist = IST_MCE;
		idt_set(i, isr_table[i], ist);
		if (i < 32)
			interrupt_register(i, exception_names[i], exception_fatal);
		else
			interrupt_register(i, "unexpected", unexpected_interrupt);
	}
	interrupt_register(2, "NMI", nmi_handler);
	interrupt_register(VECTOR_SPURIOUS, "spurious", spurious_interrupt);
}

void idt_load(void)
{
	idtr_t idtr = { .limit = sizeof(idt) - 1, .base = (uint64_t) idt };
	asm volatile ("lidt %0" :: "m" (idtr));
}

void istate_print(const istate_t *is)
{
	printf("RIP=%016lx ", is->rip);
	symtab_print_addr(is->rip);
	printf("\nRSP=%016lx RFLAGS=%016lx CS=%04lx SS=%04lx ERR=%lx\n",
	    is->rsp, is->rflags, is->cs, is->ss, is->error_code);
	printf("RAX=%016lx RBX=%016lx RCX=%016lx RDX=%016lx\n",
	    is->rax, is->rbx, is->rcx, is->rdx);
	printf("RSI=%016lx RDI=%016lx RBP=%016lx R8 =%016lx\n",
	    is->rsi, is->rdi, is->rbp, is->r8);
	printf("R9 =%016lx R10=%016lx R11=%016lx R12=%016lx\n",
	    is->r9, is->r10, is->r11, is->r12);
	printf("R13=%016lx R14=%016lx R15=%016lx CR2=%016lx CR3=%016lx\n",
	    is->r13, is->r14, is->r15, read_cr2(), read_cr3());
}
