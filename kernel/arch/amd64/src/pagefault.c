/** @file pagefault.c
 * amd64 page fault (#PF, vector 14): decodes CR2 and the error code, SMAP's
 * RFLAGS.AC, and calls the generic as_page_fault() with the faulting access
 * kind; a fatal fault from user mode goes to task_user_fault(), from kernel
 * mode to a uaccess fix-up or a panic.
 */
#include <arch.h>
#include <arch/asm.h>
#include <arch/interrupt.h>
#include <arch/uaccess.h>
#include <arch/userspace.h>
#include <arch/mm.h>
#include <mm/as.h>
#include <proc/thread.h>
#include <proc/task.h>
#include <panic.h>
#include <errno.h>
#include <cpu.h>

/* Page fault error code bits. */
#define PF_PRESENT (1 << 0)
#define PF_WRITE   (1 << 1)
#define PF_USER    (1 << 2)
#define PF_RSVD    (1 << 3)
#define PF_FETCH   (1 << 4)
/** Internal result of the fault handler: an SMAP violation (see below). */
#define EPERM_SMAP (-1000)

static const char *const pf_names = "#PF Page fault";

/** The access kind of error code @a err. */
static pf_access_t pf_access(uint64_t err)
{
	if (err & PF_FETCH)
		return PF_ACCESS_EXEC;
	return (err & PF_WRITE) ? PF_ACCESS_WRITE : PF_ACCESS_READ;
}

static void page_fault_handler(unsigned vector, istate_t *istate)
{
	uintptr_t addr = read_cr2();
	thread_t *t = THREAD;
	as_t *as = t ? t->as : NULL;
	int rc = ENOENT;
	/*
	 * Whose fault it is follows from the saved CS, not from the error
	 * code's U bit: an instruction executed in ring 3 can fault with U=0
	 * on its implicit supervisor-mode accesses (descriptor table reads,
	 * and in QEMU the stack pops of a far return or iretq), and such a
	 * fault must kill the task, never take the kernel path below.
	 */
	if (istate_from_user(istate)) {
		/* From user mode: resolve it or kill the task, never panic. */
		uint64_t err = istate->error_code;
		/*
		 * A present page refused to an implicit supervisor access (SMAP
		 * with U=0) cannot be resolved: the minor-fault path would
		 * return EOK and the instruction would fault forever. A
		 * missing page is mapped as for any access; a retry that then
		 * hits SMAP ends here.
		 */
		bool implicit_refused = !(err & PF_USER) && (err & PF_PRESENT);
		if (as && addr < USER_SPACE_END && !(err & PF_RSVD) &&
		    !implicit_refused) {
			rc = as_page_fault(as, addr, pf_access(err));
			if (rc == EOK)
				return;
		}
		task_user_fault(istate, implicit_refused ? UFAULT_PAGE_SUPERVISOR :
		    (rc == ENOMEM ? UFAULT_PAGE_NOMEM :
		    (rc == ELIMIT ? UFAULT_PAGE_LIMIT :
		    (rc == EINVAL ? UFAULT_PAGE_DENIED : UFAULT_PAGE_NO_AREA))),
		    addr);
		return;
	}
	if (as && addr < USER_SPACE_END && !(istate->error_code & PF_RSVD)) {
		/*
		 * SMAP: a present user page touched in kernel mode with
		 * RFLAGS.AC clear. A kernel thread inside a user address space
		 * (not a user thread) may do that; it ran before the scheduler
		 * hook set AC for it (as_enter() came after its switch): allow
		 * and retry. Anything else is a kernel access to user memory
		 * outside uaccess: no resolution (it would fault forever).
		 */
		bool smap_violation = (istate->error_code & PF_PRESENT) &&
		    userspace_smap_enabled() &&
		    !(istate->rflags & RFLAGS_AC_BIT) &&
		    !uaccess_fixup_is_access(istate);
		if (smap_violation && !t->subsys[THREAD_SUBSYS_TASK]) {
			istate->rflags |= RFLAGS_AC_BIT;
			return;
		}
		rc = smap_violation ? EPERM_SMAP :
		    as_page_fault(as, addr, pf_access(istate->error_code));
		if (rc == EOK)
			return;
		/* A fault-tolerant user access (uaccess_*) returns EFAULT. */
		if (uaccess_fixup(istate))
			return;
	}
	panic_istate(istate, "Exception #%u (%s) at %p, fault address %p, "
	    "error code %#lx%s%s", vector, pf_names, (void *) istate->rip,
	    (void *) addr, istate->error_code,
	    as ? (rc == ENOMEM ? ": out of memory" :
	    rc == EPERM_SMAP ? ": kernel access to a user page outside uaccess (SMAP)" :
	    (rc == EINVAL ? ": access not permitted by the area" :
	    ": no area at that address")) : "",
	    as ? "" : " (kernel address space)");
}

void page_fault_init(void)
{
	interrupt_register(14, "page fault", page_fault_handler);
}
