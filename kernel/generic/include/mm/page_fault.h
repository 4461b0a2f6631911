/** @file page_fault.h
 * The user/kernel page fault policy, once for every architecture: an
 * architecture's fault handler decodes its registers into a page_fault_t
 * (address, access kind, mode, what its MMU refused before any mapping) and
 * calls page_fault_handle(), which resolves the fault through
 * as_page_fault(), or takes a uaccess fix-up, or reports the fault to the
 * task (task_user_fault()), or panics.
 *
 * The fault path is hot (chtbench 22): its resolving half, page_fault_map(),
 * is inline and takes only the address, the access kind and the interrupt
 * flag; the rest of the policy, page_fault_finish(), and the fatal ends are
 * out of line (page_fault.c). An architecture whose handler is large (arm64's
 * sync_dispatch) calls the two itself and decodes its page_fault_t only when
 * page_fault_map() failed: carried across as_page_fault(), the decoded fields
 * cost arm64's chtbench 22 about 24 instructions per fault (callee-saved
 * registers and stack stores). page_fault_handle() is the two for a decoded
 * page_fault_t.
 */
#ifndef KERN_MM_PAGE_FAULT_H_
#define KERN_MM_PAGE_FAULT_H_

#include <typedefs.h>
#include <arch/asm.h>
#include <arch/interrupt.h>
#include <arch/uaccess.h>
#include <mm/as.h>
#include <proc/thread.h>
#include <proc/task.h>
#include <errno.h>

/** What stops a fault before any mapping is tried (decoded by the arch). */
typedef enum {
	/** Nothing: as_page_fault() may resolve it. */
	PF_MAPPABLE,
	/**
	 * No mapping resolves it (a misaligned access, an external abort):
	 * from user mode the task gets page_fault_t.user_kind; from kernel
	 * mode a uaccess fix-up, else a panic.
	 */
	PF_UNMAPPABLE,
	/**
	 * A reserved bit set in a page-table entry (a reserved-bit error code):
	 * the tables are corrupt; from user mode as PF_UNMAPPABLE, from kernel
	 * mode a panic (no fix-up).
	 */
	PF_TABLE_ERROR,
	/**
	 * The architecture's user-page protection refused a present user
	 * page to a privileged access: from user mode (an implicit supervisor
	 * access of a user instruction) UFAULT_PAGE_SUPERVISOR; from kernel
	 * mode, at a user address of a user address space, a kernel thread
	 * may go on (the caller lifts the protection and retries), a user
	 * thread's kernel access outside uaccess panics; any other kernel
	 * fault so marked panics as one no mapping resolved.
	 */
	PF_PROTECTED,
} pf_refusal_t;

/** The architecture's fixed panic wording of its page faults. */
typedef struct page_fault_arch {
	/** The exception's name in the panic ("... at PC, fault address ..."). */
	const char *name;
	/** The name of page_fault_t.code in the panic (the syndrome register). */
	const char *code_name;
	/** The name of the architecture's user-page protection in the panic. */
	const char *protection;
} page_fault_arch_t;

/** What an architecture decoded of one page fault; on its stack. */
typedef struct page_fault {
	/** The faulting virtual address. */
	uintptr_t addr;
	/** The access kind (read, write, instruction fetch). */
	pf_access_t access;
	/** Taken in user mode (from the saved mode, not the access's privilege). */
	bool user;
	/**
	 * Enable interrupts around as_page_fault() (which may sleep) and
	 * disable them after: the entry masked them but the faulting context
	 * had them; false where the entry leaves them as they were.
	 */
	bool enable_irq;
	/** What stops the fault before any mapping is tried. */
	pf_refusal_t refusal;
	/** The user class of a PF_UNMAPPABLE or PF_TABLE_ERROR fault. */
	ufault_t user_kind;
	/** The syndrome the panic prints (the error code or syndrome register). */
	uint64_t code;
	/** The architecture's panic wording (static). */
	const page_fault_arch_t *arch;
} page_fault_t;

/**
 * The end of a fault no mapping resolved and no fix-up took (page_fault.c):
 * from user mode, reports it to the task (task_user_fault(), the class of
 * @a rc: ENOMEM out of memory, ELIMIT the task's memory limit, EINVAL
 * denied by the area, else no area; or
 * @a pf's refusal); from kernel mode, panics with the architecture's wording
 * and the reason. @a as the faulting address space (NULL: none). Exception
 * handler, interrupts disabled.
 */
void page_fault_fatal(istate_t *istate, const page_fault_t *pf,
    const as_t *as, int rc);

/**
 * The rest of the policy for a fault page_fault_map() did not resolve
 * (page_fault.c): a PF_PROTECTED kernel-mode fault of a kernel thread at a
 * user address of its address space goes on, a kernel-mode access at a user
 * address takes its uaccess fix-up (uaccess_fixup(): the access returns
 * EFAULT), anything else is page_fault_fatal(). @a rc what as_page_fault()
 * returned, ENOENT where it was not tried. @return true only for the
 * PF_PROTECTED kernel thread (see page_fault_handle()). Exception handler,
 * interrupts disabled.
 */
bool page_fault_finish(istate_t *istate, const page_fault_t *pf, int rc);

/**
 * The hot half of the policy: resolves a fault that nothing refused
 * (PF_MAPPABLE) at the user address @a addr through as_page_fault() in
 * THREAD's address space, with interrupts enabled around it when
 * @a enable_irq. Takes only what the resolution needs, so that an
 * architecture can decode the rest of its page_fault_t (for
 * page_fault_finish()) only when this fails, and the success path does not
 * carry it across the call. @return EOK resolved; else as_page_fault()'s
 * error, or ENOENT where it was not tried (no address space, or not a user
 * address). Exception handler, interrupts disabled.
 */
static inline int page_fault_map(uintptr_t addr, pf_access_t access,
    bool enable_irq)
{
	thread_t *t = THREAD;
	as_t *as = t ? t->as : NULL;

	if (!as || addr >= USER_SPACE_END)
		return ENOENT;
	if (enable_irq)
		interrupts_enable();
	int rc = as_page_fault(as, addr, access);
	if (enable_irq)
		interrupts_disable();
	return rc;
}

/**
 * Handles the page fault @a pf of the exception @a istate: resolves it in
 * THREAD's address space through as_page_fault() (page_fault_map()), or
 * takes the uaccess fix-up of a kernel-mode access (uaccess_fixup(): the
 * access returns EFAULT), or reports it (page_fault_fatal()); the last two
 * through page_fault_finish(). @return true only for a PF_PROTECTED fault
 * of a kernel thread in kernel mode: the caller lifts its user-page
 * protection for the interrupted context and returns (the access is
 * retried); false when the fault is done with. Exception handler,
 * interrupts disabled.
 */
static inline bool page_fault_handle(istate_t *istate, const page_fault_t *pf)
{
	int rc = ENOENT;

	if (pf->refusal == PF_MAPPABLE) {
		rc = page_fault_map(pf->addr, pf->access, pf->enable_irq);
		if (rc == EOK)
			return false;
	}
	return page_fault_finish(istate, pf, rc);
}

#endif
