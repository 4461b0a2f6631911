/** @file program.h
 * Programs in the boot image (boot modules) and the ELF64 loader.
 */
#ifndef KERN_PROGRAM_H_
#define KERN_PROGRAM_H_

#include <typedefs.h>
#include <abi/syscall.h>

struct task;

#define PROGRAM_NAME_MAX 32
#define PROGRAMS_MAX 32
/** Most argument words and bytes (strings and pointers) given to a program. */
#define PROGRAM_ARGS_MAX 16
#define PROGRAM_ARG_BYTES 2048

/** Main thread stack: the area [USTACK_TOP - USTACK_SIZE, USTACK_TOP). */
#define USTACK_TOP  USER_STACK_TOP
#define USTACK_SIZE USER_STACK_SIZE
_Static_assert((USTACK_TOP & (USTACK_SIZE - 1)) == 0,
    "lib/c finds the thread control block by aligning the stack pointer down");

typedef struct {
	char name[PROGRAM_NAME_MAX];
	uintptr_t phys;   /**< physical address of the image */
	size_t size;      /**< bytes */
} program_t;

/**
 * Records the boot module [@a start, @a end) (physical; amd64: a multiboot
 * module, arm64: a program linked into the image) with command line
 * @a cmdline (its first word's last path component names the program).
 * BSP, boot, before the frame allocator; the range must be kept out of it.
 */
void program_register_module(uintptr_t start, uintptr_t end,
    const char *cmdline);

/** Number of programs and the i-th one (NULL when out of range). */
size_t program_count(void);
const program_t *program_get(size_t i);
/** Finds a program by name. @return it or NULL. */
const program_t *program_find(const char *name);

/**
 * Creates a task running @a prog with @a argc words @a argv (argv[0] is the
 * program name): loads its ELF64 segments into areas, builds the stack with
 * the arguments and starts the main thread (argc and argv in its first two
 * argument registers).
 * @return EOK (*out holds the creator's reference), EINVAL (not a valid
 * ELF64 executable for this architecture (ELF_MACHINE), or arguments too
 * long), ENOMEM, ELIMIT (a
 * segment larger than AREA_SIZE_MAX, with a message on the console, or the
 * task's area limits). Thread context.
 */
int program_spawn(const program_t *prog, int argc, const char *const *argv,
    bool background, struct task **out);

#endif
