/** @file slab_cmd.c
 * The `slabs` kconsole command: one line per slab cache (see slab_print_list()).
 */

#include <mm/slab.h>
#include <console/kconsole.h>
#include <errno.h>

static int cmd_slabs(cmd_arg_t *argv, size_t argc)
{
	slab_print_list();
	return 0;
}

/** Registry entry; must stay valid forever (the registry links it). */
static cmd_info_t slabs_info = {
	.name = "slabs",
	.description = "Slab caches: object size, slabs, objects in use, magazine hits",
	.func = cmd_slabs,
	.argv = NULL,
	.argc = 0,
};

/** Set once the command is registered; guards against double registration. */
static bool registered;

void slab_cmd_init(void)
{
	if (__atomic_exchange_n(&registered, true, __ATOMIC_ACQ_REL))
		return;
	(void) cmd_register(&slabs_info);
}
