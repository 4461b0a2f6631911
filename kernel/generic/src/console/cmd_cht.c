/** @file cmd_cht.c
 * `chtstat`: every live concurrent hash table (the registry of
 * adt/cht_env.c) with its items, buckets, load, dummies and resizes, from
 * cht_get_stats() (cht_print_tables() of adt/cht.c, which the userspace
 * library shares).
 */
#include <console/kconsole.h>
#include <console/cmds.h>
#include <adt/cht.h>

static int cmd_chtstat(const cmd_call_t *call)
{
	cht_print_tables();
	return 0;
}

static cmd_info_t chtstat_cmd = {
	.name = "chtstat",
	.description = "Live concurrent hash tables: items, buckets, load, resizes",
	.func = cmd_chtstat,
};

void cmd_cht_init(void)
{
	(void) cmd_register(&chtstat_cmd);
}
