/** @file pagefault.c
 * amd64 page fault (#PF, vector 14): decodes CR2, the error code and SMAP's
 * RFLAGS.AC into a page_fault_t for the generic policy (mm/page_fault.h:
 * as_page_fault(), the uaccess fix-up, task_user_fault() or a panic).
 */
#include <arch.h>
#include <arch/asm.h>
#include <arch/interrupt.h>
#include <arch/uaccess.h>
#include <arch/userspace.h>
#include <arch/mm.h>
#include <mm/as.h>
#include <mm/page_fault.h>

/* Page fault error code bits. */
#define PF_PRESENT (1 << 0)
#define PF_WRITE   (1 << 1)
#define PF_USER    (1 << 2)
#define PF_RSVD    (1 << 3)
#define PF_FETCH   (1 << 4)

static const page_fault_arch_t pf_arch = {
	.name = "Exception #14 (#PF Page fault)",
	.code_name = "error code",
	.protection = "SMAP",
};

/** The access kind of error code @a err. */
static pf_access_t pf_access(uint64_t err)
{
	if (err & PF_FETCH)
		return PF_ACCESS_EXEC;
	return (err & PF_WRITE) ? PF_ACCESS_WRITE : PF_ACCESS_READ;
}

/**
 * What stops the fault of @a istate (error code @a err) before a mapping is
 * tried. Whose fault it is follows from the saved CS, not from the error
 * code's U bit: an instruction executed in ring 3 can fault with U=0 on its
 * implicit supervisor-mode accesses (descriptor table reads, and in QEMU the
 * stack pops of a far return or iretq), and such a fault must kill the task,
 * never take the kernel path.
 */
static pf_refusal_t pf_refusal(const istate_t *istate, uint64_t err, bool user)
{
	if (user) {
		/*
		 * A present page refused to an implicit supervisor access
		 * (SMAP with U=0) cannot be resolved: the minor-fault path
		 * would return EOK and the instruction would fault forever. A
		 * missing page is mapped as for any access; a retry that then
		 * hits SMAP ends here.
		 */
		if (!(err & PF_USER) && (err & PF_PRESENT))
			return PF_PROTECTED;
		return (err & PF_RSVD) ? PF_TABLE_ERROR : PF_MAPPABLE;
	}
	if (err & PF_RSVD)
		return PF_TABLE_ERROR;
	/*
	 * SMAP: a present user page touched in kernel mode with RFLAGS.AC
	 * clear, outside the uaccess instructions. A kernel thread inside a
	 * user address space may do that (page_fault_handle() lets it: it ran
	 * before the scheduler hook set AC for it); anything else has no
	 * resolution (it would fault forever).
	 */
	if ((err & PF_PRESENT) && userspace_smap_enabled() &&
	    !(istate->rflags & RFLAGS_AC_BIT) && !uaccess_fixup_is_access(istate))
		return PF_PROTECTED;
	return PF_MAPPABLE;
}

static void page_fault_handler(unsigned vector, istate_t *istate)
{
	uint64_t err = istate->error_code;
	bool user = istate_from_user(istate);
	page_fault_t pf = {
		.addr = read_cr2(),
		.access = pf_access(err),
		.user = user,
		.enable_irq = false,
		.refusal = pf_refusal(istate, err, user),
		.user_kind = UFAULT_PAGE_NO_AREA,
		.code = err,
		.arch = &pf_arch,
	};
	/* SMAP refused a kernel thread: retry with RFLAGS.AC set. */
	if (page_fault_handle(istate, &pf))
		istate->rflags |= RFLAGS_AC_BIT;
}

void page_fault_init(void)
{
	interrupt_register(14, "page fault", page_fault_handler);
}
