/** @file page_fault.c
 * The fatal ends of the page fault policy (mm/page_fault.h): the user fault
 * class of a fault's result, and the kernel's panic.
 */
#include <mm/page_fault.h>
#include <panic.h>

/** The user fault class of a fault that as_page_fault() left with @a rc. */
static ufault_t page_fault_user_kind(const page_fault_t *pf, int rc)
{
	switch (pf->refusal) {
	case PF_PROTECTED:
		return UFAULT_PAGE_SUPERVISOR;
	case PF_UNMAPPABLE:
	case PF_TABLE_ERROR:
		return pf->user_kind;
	case PF_MAPPABLE:
		break;
	}
	if (rc == ENOMEM)
		return UFAULT_PAGE_NOMEM;
	if (rc == ELIMIT)
		return UFAULT_PAGE_LIMIT;
	return rc == EINVAL ? UFAULT_PAGE_DENIED : UFAULT_PAGE_NO_AREA;
}

/** The panic's reason for a fault that left @a rc in address space @a as. */
static const char *page_fault_reason(const as_t *as, int rc)
{
	if (!as)
		return " (kernel address space)";
	if (rc == ENOMEM)
		return ": out of memory";
	if (rc == ELIMIT)
		return ": memory limit of the task reached";
	if (rc == EINVAL)
		return ": access not permitted by the area";
	return ": no area at that address";
}

void page_fault_fatal(istate_t *istate, const page_fault_t *pf,
    const as_t *as, int rc)
{
	if (pf->user) {
		task_user_fault(istate, page_fault_user_kind(pf, rc), pf->addr);
		return;
	}
	const page_fault_arch_t *a = pf->arch;
	void *pc = (void *) istate_get_pc(istate);
	if (pf->refusal == PF_PROTECTED && as && pf->addr < USER_SPACE_END)
		panic_istate(istate, "%s at %p, fault address %p, %s %#lx: "
		    "kernel access to a user page outside uaccess (%s)",
		    a->name, pc, (void *) pf->addr, a->code_name, pf->code,
		    a->protection);
	panic_istate(istate, "%s at %p, fault address %p, %s %#lx%s", a->name,
	    pc, (void *) pf->addr, a->code_name, pf->code,
	    page_fault_reason(as, rc));
}

bool page_fault_finish(istate_t *istate, const page_fault_t *pf, int rc)
{
	thread_t *t = THREAD;
	as_t *as = t ? t->as : NULL;
	bool user_page = as && pf->addr < USER_SPACE_END;

	if (pf->refusal == PF_PROTECTED && !pf->user && user_page) {
		if (!t->subsys[THREAD_SUBSYS_TASK])
			return true;
		page_fault_fatal(istate, pf, as, rc);
		return false;
	}
	/* A fault-tolerant user access (uaccess_*) returns EFAULT. */
	if (!pf->user && user_page && pf->refusal != PF_TABLE_ERROR &&
	    uaccess_fixup(istate))
		return false;
	page_fault_fatal(istate, pf, as, rc);
	return false;
}
