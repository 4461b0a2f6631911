/** @file fdt.c
 * The flattened device tree reader (fdt.h): one pass over the structure
 * block, tracking the kind of each node on the path.
 */
#include <genarch/fdt.h>
#include <lib/str.h>

#define FDT_MAGIC      0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) |
	    ((uint32_t) b[2] << 8) | b[3];
}

static uint64_t be64(const void *p)
{
	return ((uint64_t) be32(p) << 32) | be32((const uint8_t *) p + 4);
}

/** Node kinds on the path. */
enum { NODE_OTHER, NODE_MEMORY, NODE_CPUS, NODE_CPU, NODE_PSCI };

/** The kind of node @a name at @a depth under a node of kind @a parent. */
static int node_kind(const char *name, int depth, int parent, fdt_info_t *info)
{
	if (depth == 2 && strncmp(name, "memory", 6) == 0)
		return NODE_MEMORY;
	if (depth == 2 && strcmp(name, "cpus") == 0)
		return NODE_CPUS;
	if (depth == 3 && parent == NODE_CPUS && strncmp(name, "cpu@", 4) == 0) {
		if (info->cpus < CONFIG_MAX_CPUS)
			info->cpus++;
		return NODE_CPU;
	}
	if (depth == 2 && strncmp(name, "psci", 4) == 0)
		return NODE_PSCI;
	return NODE_OTHER;
}

/** Property @a pname (@a len bytes at @a val) of a node of kind @a k. */
static void node_prop(int k, const char *pname, const uint8_t *val,
    uint32_t len, fdt_info_t *info)
{
	if (k == NODE_MEMORY && strcmp(pname, "reg") == 0 && len >= 16 &&
	    !info->mem_size) {
		/* #address-cells = #size-cells = 2 on virt. */
		info->mem_base = be64(val);
		info->mem_size = be64(val + 8);
	} else if (k == NODE_CPU && strcmp(pname, "reg") == 0 &&
	    info->cpus <= CONFIG_MAX_CPUS) {
		info->cpu_id[info->cpus - 1] = len >= 8 ? be64(val) : be32(val);
	} else if (k == NODE_PSCI && strcmp(pname, "method") == 0) {
		info->psci_hvc = strcmp((const char *) val, "smc") != 0;
	}
}

bool fdt_parse(const void *fdt_va, fdt_info_t *info)
{
	const uint8_t *fdt = fdt_va;
	if (be32(fdt) != FDT_MAGIC)
		return false;
	info->mem_base = info->mem_size = 0;
	info->cpus = 0;
	info->psci_hvc = true;
	const uint8_t *st = fdt + be32(fdt + 8);
	const char *strs = (const char *) fdt + be32(fdt + 12);
	int depth = 0;
	int kind[16] = { 0 };
	for (;;) {
		uint32_t tok = be32(st);
		st += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = (const char *) st;
			size_t len = strlen(name);
			st += ALIGN_UP(len + 1, 4);
			depth++;
			int k = node_kind(name, depth, kind[2], info);
			if (depth < 16)
				kind[depth] = k;
		} else if (tok == FDT_END_NODE) {
			depth--;
		} else if (tok == FDT_PROP) {
			uint32_t len = be32(st);
			const char *pname = strs + be32(st + 4);
			const uint8_t *val = st + 8;
			st += 8 + ALIGN_UP(len, 4);
			node_prop(depth < 16 ? kind[depth] : NODE_OTHER, pname, val,
			    len, info);
		} else if (tok != FDT_NOP) {
			break;
		}
	}
	return true;
}
