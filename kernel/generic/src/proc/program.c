/** @file program.c
 * Programs from the boot image (boot modules) and the ELF64 loader.
 *
 * The loader checks the header (ELF64, little endian, the architecture's
 * ELF_MACHINE, ET_EXEC),
 * every program header against the image size and every PT_LOAD segment
 * against the user area range [USER_AREA_START, USER_AREA_END) and its
 * memory size against AREA_SIZE_MAX (a larger one is refused with a message
 * and ELIMIT; the task's area limits apply to segments too); each
 * segment becomes an area with its permissions (R/W/X; segments must not
 * share pages) whose file bytes are copied into freshly mapped frames
 * (as_page_fill()); the rest (bss) is zero filled on first touch.
 */
#include <proc/program.h>
#include <proc/task.h>
#include <mm/as.h>
#include <mm/malloc.h>
#include <arch/mm.h>
#include <abi/syscall.h>
#include <lib/str.h>
#include <errno.h>
#include <print.h>

/** Registered at boot (BSP, before other CPUs run); read-only afterwards. */
static program_t programs[PROGRAMS_MAX];
static size_t programs_n;

void program_register_module(uintptr_t start, uintptr_t end,
    const char *cmdline)
{
	if (programs_n >= PROGRAMS_MAX || end <= start) {
		printf("boot module at %#lx ignored\n", start);
		return;
	}
	program_t *p = &programs[programs_n++];
	/* Name: last path component of the first word. */
	const char *w = cmdline ? cmdline : "";
	while (*w == ' ')
		w++;
	const char *base = w;
	size_t len = 0;
	for (const char *c = w; *c && *c != ' '; c++) {
		if (*c == '/') {
			base = c + 1;
			len = 0;
		} else {
			len++;
		}
	}
	if (len == 0) {
		snprintf(p->name, sizeof(p->name), "module%zu", programs_n - 1);
	} else {
		if (len >= sizeof(p->name))
			len = sizeof(p->name) - 1;
		memcpy(p->name, base, len);
		p->name[len] = 0;
	}
	p->phys = start;
	p->size = end - start;
}

size_t program_count(void)
{
	return programs_n;
}

const program_t *program_get(size_t i)
{
	return i < programs_n ? &programs[i] : NULL;
}

const program_t *program_find(const char *name)
{
	for (size_t i = 0; i < programs_n; i++) {
		if (strcmp(programs[i].name, name) == 0)
			return &programs[i];
	}
	return NULL;
}

/* ELF64 */

typedef struct {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} PACKED elf64_ehdr_t;

typedef struct {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
} PACKED elf64_phdr_t;

#define PT_LOAD 1
#define PF_X 1
#define PF_W 2
#define ET_EXEC 2

static int load_segment(as_t *as, const uint8_t *img, const elf64_phdr_t *ph)
{
	uintptr_t start = ALIGN_DOWN(ph->vaddr, PAGE_SIZE);
	uintptr_t end = ALIGN_UP(ph->vaddr + ph->memsz, PAGE_SIZE);
	unsigned flags = AS_AREA_READ;
	if (ph->flags & PF_W)
		flags |= AS_AREA_WRITE;
	if (ph->flags & PF_X)
		flags |= AS_AREA_EXEC;
	int rc = as_area_create(as, start, end - start, flags);
	if (rc != EOK)
		return rc == EEXIST ? EINVAL : rc;
	/* Copy the file bytes page by page. */
	uintptr_t va = ph->vaddr;
	uint64_t left = ph->filesz;
	const uint8_t *src = img + ph->offset;
	while (left) {
		uintptr_t page = ALIGN_DOWN(va, PAGE_SIZE);
		size_t off = va - page;
		size_t n = MIN(left, PAGE_SIZE - off);
		rc = as_page_fill(as, page, src, off, n);
		if (rc != EOK)
			return rc;
		va += n;
		src += n;
		left -= n;
	}
	return EOK;
}

static int load_elf(as_t *as, const program_t *prog, uintptr_t *entry)
{
	const uint8_t *img = PA2KA(prog->phys);
	if (prog->size < sizeof(elf64_ehdr_t))
		return EINVAL;
	const elf64_ehdr_t *eh = (const elf64_ehdr_t *) img;
	if (eh->ident[0] != 0x7f || eh->ident[1] != 'E' || eh->ident[2] != 'L' ||
	    eh->ident[3] != 'F' || eh->ident[4] != 2 /* 64-bit */ ||
	    eh->ident[5] != 1 /* little endian */ || eh->type != ET_EXEC ||
	    eh->machine != ELF_MACHINE || eh->phentsize != sizeof(elf64_phdr_t))
		return EINVAL;
	if (eh->phoff > prog->size ||
	    (uint64_t) eh->phnum * sizeof(elf64_phdr_t) > prog->size - eh->phoff)
		return EINVAL;
	if (eh->entry < USER_AREA_START || eh->entry >= USER_AREA_END)
		return EINVAL;
	size_t loaded = 0;
	for (unsigned i = 0; i < eh->phnum; i++) {
		const elf64_phdr_t *ph = (const elf64_phdr_t *)
		    (img + eh->phoff + i * sizeof(elf64_phdr_t));
		if (ph->type != PT_LOAD || ph->memsz == 0)
			continue;
		if (ph->filesz > ph->memsz || ph->offset > prog->size ||
		    ph->filesz > prog->size - ph->offset ||
		    ph->vaddr < USER_AREA_START || ph->vaddr >= USER_AREA_END ||
		    ph->memsz > USER_AREA_END - ph->vaddr ||
		    ph->vaddr + ph->memsz > USTACK_TOP - USTACK_SIZE)
			return EINVAL;
		if (ph->memsz > AREA_SIZE_MAX) {
			/* A segment is an area: the limit of SYS_AREA_CREATE. */
			printf("program %s: segment %u (memory size %#lx bytes) "
			    "exceeds the limit of %lu bytes\n", prog->name, i,
			    ph->memsz, AREA_SIZE_MAX);
			return ELIMIT;
		}
		int rc = load_segment(as, img, ph);
		if (rc != EOK)
			return rc;
		loaded++;
	}
	if (!loaded)
		return EINVAL;
	*entry = eh->entry;
	return EOK;
}

/**
 * Builds the top page of the main stack: the argument strings at the top,
 * the argv array (NULL terminated) below them; *sp: 16-byte aligned below.
 */
static int build_stack(as_t *as, int argc, const char *const *argv,
    uintptr_t *sp, uintptr_t *uargv)
{
	uint8_t *page = calloc(1, PAGE_SIZE);
	if (!page)
		return ENOMEM;
	uintptr_t page_va = USTACK_TOP - PAGE_SIZE;
	size_t top = PAGE_SIZE;
	uint64_t ptrs[PROGRAM_ARGS_MAX + 1];
	for (int i = argc - 1; i >= 0; i--) {
		size_t len = strlen(argv[i]) + 1;
		if (len > top - (PAGE_SIZE - PROGRAM_ARG_BYTES)) {
			free(page);
			return EINVAL;
		}
		top -= len;
		memcpy(page + top, argv[i], len);
		ptrs[i] = page_va + top;
	}
	ptrs[argc] = 0;
	top = ALIGN_DOWN(top, 16);
	size_t vec = (size_t) (argc + 1) * sizeof(uint64_t);
	top = ALIGN_DOWN(top - vec, 16);
	memcpy(page + top, ptrs, vec);
	*uargv = page_va + top;
	*sp = page_va + top;
	int rc = as_page_fill(as, page_va, page, 0, PAGE_SIZE);
	free(page);
	return rc;
}

int program_spawn(const program_t *prog, int argc, const char *const *argv,
    bool background, task_t **out)
{
	if (argc < 1 || argc > PROGRAM_ARGS_MAX)
		return EINVAL;
	task_t *task = task_create(prog->name);
	if (!task)
		return ENOMEM;
	task->background = background;
	uintptr_t entry, sp, uargv;
	int rc = load_elf(task->as, prog, &entry);
	if (rc == EOK)
		rc = as_area_create(task->as, USTACK_TOP - USTACK_SIZE, USTACK_SIZE,
		    AS_AREA_READ | AS_AREA_WRITE);
	if (rc == EOK)
		rc = build_stack(task->as, argc, argv, &sp, &uargv);
	uint64_t tid;
	if (rc == EOK)
		rc = task_thread_create(task, entry, sp, (uint64_t) argc, uargv,
		    &tid);
	if (rc != EOK) {
		task_release(task);
		return rc;
	}
	*out = task;
	return EOK;
}
