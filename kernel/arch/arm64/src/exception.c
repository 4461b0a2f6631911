/** @file exception.c
 * arm64 synchronous exceptions: the vectors' C entry, system calls, the
 * decoding of data and instruction aborts for the generic fault policy
 * (mm/page_fault.h), the user fault classes of the other exception classes.
 */
#include <arch.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <arch/interrupt.h>
#include <arch/entry.h>
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
	 * (page_fault_finish() lets it: it ran before the scheduler hook
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

/** The access kind of an abort of class @a ec with syndrome @a esr. */
static inline pf_access_t abort_access(uint32_t ec, uint64_t esr)
{
	if (ec == EC_IABT_SAME || ec == EC_IABT_LOWER)
		return PF_ACCESS_EXEC;
	return (esr & (1 << 6)) ? PF_ACCESS_WRITE : PF_ACCESS_READ;
}

/**
 * An abort page_fault_map() did not resolve (@a rc): decodes the whole
 * page_fault_t again from the saved ESR and FAR (out of line, so that the
 * resolved faults do not carry it across as_page_fault()) and ends it by
 * page_fault_finish().
 */
static __attribute__((noinline)) void abort_finish(istate_t *istate,
    uint32_t ec, int rc)
{
	page_fault_t pf = {
		.addr = istate->far,
		.access = abort_access(ec, istate->esr),
		.user = istate_from_user(istate),
		/* The fault handler may sleep: interrupts as they were. */
		.enable_irq = !(istate->spsr & DAIF_I),
		.code = istate->esr,
		.arch = &abort_arch,
	};
	pf.refusal = abort_refusal(istate, ec, istate->esr & 0x3f,
	    &pf.user_kind);
	/* PAN refused a kernel thread: retry with PAN clear. */
	if (page_fault_finish(istate, &pf, rc))
		istate->spsr &= ~SPSR_PAN;
}

/**
 * A data or instruction abort (EC @a ec) to the generic fault policy: the
 * hot half (page_fault_map()) with only the address, the access kind and
 * the interrupt flag; the rest in abort_finish().
 */
static void abort_dispatch(istate_t *istate, uint32_t ec)
{
	ufault_t kind;
	int rc = ENOENT;

	/* DFSC/IFSC: translation (0b0001xx) or access flag / permission. */
	if (abort_refusal(istate, ec, istate->esr & 0x3f, &kind) ==
	    PF_MAPPABLE) {
		/* The fault handler may sleep: interrupts as they were. */
		rc = page_fault_map(istate->far, abort_access(ec, istate->esr),
		    !(istate->spsr & DAIF_I));
		if (rc == EOK)
			return;
	}
	abort_finish(istate, ec, rc);
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
