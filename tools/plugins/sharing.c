/*
 * sharing.c: a QEMU TCG plugin that counts the cache lines a guest window
 * shares between CPUs (docs/SHARING.md).
 *
 * Built against the plugin header of the QEMU that Debian installs (7.2,
 * plugin API version 1), taken from Debian's qemu source package by
 * tools/ensure-deps.sh plugin; `make plugin` builds build/plugins/sharing.so.
 *
 *   qemu-system-x86_64 ... -plugin build/plugins/sharing.so,out=FILE[,top=N]
 *
 * What it counts. Every load and store of every vCPU, by 64-byte physical
 * line (qemu_plugin_hwaddr_phys_addr; MMIO accesses are skipped), but only
 * while the window is open. Under QEMU's user-mode emulator (qemu-x86_64
 * -plugin ...: one Linux process, every guest thread a vCPU of its own, the
 * vCPU index QEMU's cpu_index of that thread) there are no physical
 * addresses and all threads share one address space: lines are keyed by
 * guest virtual address there, and the report says "mode": "user" and gives
 * each top line's "va" instead of "pa". QEMU numbers a new thread from the
 * indices of the live ones, so an exited thread's index can be given again:
 * a window must not see threads exit and others start (their counts would
 * merge). Accesses of vCPUs with an index of MAX_VCPUS or more are not
 * counted, in either mode.
 *
 * The guest opens and closes the window and tells
 * the operation count with marker instructions, recognised here at
 * translation time: `nopl 0x5348000K(%rax)` (bytes 0f 1f 80 0K 00 48 53), a
 * 7-byte NOP on real hardware (no memory access), with K:
 *   1 open   (the tables are cleared, counting starts)
 *   2 close  (counting stops)
 *   3 bit 0, 4 bit 1  (the operation count, most significant bit first:
 *             the plugin API of QEMU 7.2 cannot read registers)
 *   5 report (the count is complete: one JSON line is written to FILE)
 * (common/include/sharing.h emits them.)
 *
 * The report: for every line and every vCPU c,
 *   min(stores by c, accesses by the others) + min(loads by c, stores by the others)
 * summed over lines and vCPUs and divided by the operations. This bounds the
 * coherence transfers of any interleaving of the same accesses: a store by c
 * can move the line to c at most once per access of another CPU that took it
 * away, a load by c can miss at most once per store of another CPU. It does not
 * depend on how QEMU interleaved the vCPUs, only on what each one accessed.
 * The line's `bound` is that sum for the line alone; `top` lists the N lines
 * with the largest bound (per vCPU loads and stores, and the guest PC and the
 * offset in the line of the last load and the last store of each vCPU, for
 * naming the variable, and heap lines by the code that touches them).
 *
 * Concurrency (MTTCG: one host thread per vCPU). Each vCPU counts into its own
 * table, written only by that vCPU's thread while the window is open. The
 * open marker clears every table while the window is closed (nobody writes)
 * and then opens it with a release store; the memory callbacks read the window
 * with acquire, so a vCPU's first update after the open sees its cleared table.
 * After each update a vCPU publishes its table with a release store of its
 * own sequence number; the report (run by the vCPU that executes the report
 * marker, after the close) reads each sequence number with acquire before the
 * table. A callback that read the window open just before the close could
 * still be updating during the report; the guest's report marker comes after
 * thread joins, milliseconds after the close, so the plugin does not wait.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define LINE_SHIFT 6
#define MARKER_MAGIC 0x53480000u

enum marker { M_OPEN = 1, M_CLOSE = 2, M_BIT0 = 3, M_BIT1 = 4, M_REPORT = 5 };

/* One line in one vCPU's table; key is the line address | 1 (0: empty). */
typedef struct {
	uint64_t key;
	uint64_t loads;
	uint64_t stores;
	uint64_t load_pc;
	uint64_t store_pc;
	uint8_t load_off;   /* offset in the line of the last load */
	uint8_t store_off;  /* ... and of the last store */
} entry_t;

/* A vCPU's table: written by its own thread only (see the top comment). */
typedef struct {
	entry_t *e;
	size_t cap;     /* power of two, or 0 before the first access */
	size_t used;
	uint64_t seq;   /* release-stored after every update */
	uint64_t ops;   /* the operation count being received (markers 3, 4) */
	bool alloc_failed;
} vtable_t;

static vtable_t vt[MAX_VCPUS];
/* 1 while the window is open; release stores, acquire loads. */
static int window_open;
/* Highest vCPU index seen + 1 (relaxed max; read by the report). */
static unsigned nvcpus;
static unsigned windows;
static unsigned top_n = 20;
static FILE *out;
/* Set once at install: lines by guest virtual address (user mode). */
static bool user_mode;

static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static entry_t *slot(entry_t *e, size_t cap, uint64_t key)
{
	size_t i = hash64(key) & (cap - 1);
	while (e[i].key && e[i].key != key)
		i = (i + 1) & (cap - 1);
	return &e[i];
}

static bool grow(vtable_t *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 4096;
	entry_t *ne = calloc(ncap, sizeof(*ne));
	if (!ne)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->e[i].key)
			*slot(ne, ncap, t->e[i].key) = t->e[i];
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
	return true;
}

static void count(vtable_t *t, uint64_t line, unsigned off, bool store,
    uint64_t pc)
{
	if (t->used * 2 >= t->cap && !grow(t)) {
		t->alloc_failed = true;
		return;
	}
	entry_t *s = slot(t->e, t->cap, line | 1);
	if (!s->key) {
		s->key = line | 1;
		t->used++;
	}
	if (store) {
		s->stores++;
		s->store_pc = pc;
		s->store_off = (uint8_t) off;
	} else {
		s->loads++;
		s->load_pc = pc;
		s->load_off = (uint8_t) off;
	}
}

static void vcpu_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
    uint64_t vaddr, void *udata)
{
	if (!__atomic_load_n(&window_open, __ATOMIC_ACQUIRE) || vcpu >= MAX_VCPUS)
		return;
	uint64_t pa = vaddr;
	if (!user_mode) {
		struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
		if (!hw || qemu_plugin_hwaddr_is_io(hw))
			return;
		pa = qemu_plugin_hwaddr_phys_addr(hw);
	}
	unsigned size = 1u << qemu_plugin_mem_size_shift(info);
	bool store = qemu_plugin_mem_is_store(info);
	vtable_t *t = &vt[vcpu];
	uint64_t first = pa >> LINE_SHIFT, last = (pa + size - 1) >> LINE_SHIFT;
	for (uint64_t l = first; l <= last; l++) {
		unsigned off = l == first ? (unsigned) (pa & ((1u << LINE_SHIFT) - 1)) : 0;
		count(t, l << LINE_SHIFT, off, store, (uint64_t) (uintptr_t) udata);
	}
	/* Publishes the update to the report (acquire there). */
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
	unsigned n = __atomic_load_n(&nvcpus, __ATOMIC_RELAXED);
	while (vcpu + 1 > n &&
	    !__atomic_compare_exchange_n(&nvcpus, &n, vcpu + 1, false,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Merged view of one line: per vCPU loads/stores and PCs. */
typedef struct {
	uint64_t line;
	double bound;
	/* The terms of every vCPU but the last not due to the last one's
	 * accesses (its stores for loads, its accesses for stores). */
	double rest;
	uint64_t *ls; /* [2 * nv]: loads, stores per vCPU */
	uint64_t *pc; /* [2 * nv]: load pc, store pc per vCPU */
	uint8_t *off; /* [2 * nv]: offsets of the last load, store per vCPU */
} merged_t;

static int cmp_bound(const void *a, const void *b)
{
	const merged_t *x = a, *y = b;
	if (x->bound != y->bound)
		return x->bound < y->bound ? 1 : -1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_rest(const void *a, const void *b)
{
	const merged_t *x = a, *y = b;
	if (x->rest != y->rest)
		return x->rest < y->rest ? 1 : -1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Writes one line of a top list as a JSON object (bound, rest, per-vCPU data). */
static void print_line(const merged_t *x, unsigned nv, bool comma)
{
	fprintf(out, "%s{\"%s\": \"0x%" PRIx64 "\", \"bound\": %.0f, "
	    "\"rest\": %.1f, \"loads\": [", comma ? ", " : "",
	    user_mode ? "va" : "pa", x->line, x->bound, x->rest);
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%" PRIu64, v ? ", " : "", x->ls[2 * v]);
	fprintf(out, "], \"stores\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%" PRIu64, v ? ", " : "", x->ls[2 * v + 1]);
	fprintf(out, "], \"load_pc\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s\"0x%" PRIx64 "\"", v ? ", " : "", x->pc[2 * v]);
	fprintf(out, "], \"store_pc\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s\"0x%" PRIx64 "\"", v ? ", " : "", x->pc[2 * v + 1]);
	fprintf(out, "], \"load_off\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%u", v ? ", " : "", x->off[2 * v]);
	fprintf(out, "], \"store_off\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%u", v ? ", " : "", x->off[2 * v + 1]);
	fprintf(out, "]}");
}

/** Writes `], "NAME": [[...], ...` for the first @a nv rows and columns of @a m. */
static void print_matrix(const char *name, double m[MAX_VCPUS][MAX_VCPUS],
    unsigned nv)
{
	fprintf(out, "], \"%s\": [", name);
	for (unsigned v = 0; v < nv; v++) {
		fprintf(out, "%s[", v ? ", " : "");
		for (unsigned d = 0; d < nv; d++)
			fprintf(out, "%s%.1f", d ? ", " : "", m[v][d]);
		fprintf(out, "]");
	}
}

static void report(uint64_t ops)
{
	unsigned nv = __atomic_load_n(&nvcpus, __ATOMIC_RELAXED);
	if (nv == 0)
		nv = 1;
	bool failed = false;
	for (unsigned v = 0; v < nv; v++) {
		(void) __atomic_load_n(&vt[v].seq, __ATOMIC_ACQUIRE);
		failed |= vt[v].alloc_failed;
	}
	/* Merge: one table of line -> index into an array of merged lines. */
	size_t total = 0;
	for (unsigned v = 0; v < nv; v++)
		total += vt[v].used;
	size_t cap = 1;
	while (cap < 2 * total + 2)
		cap <<= 1;
	uint64_t *keys = calloc(cap, sizeof(*keys));
	size_t *idx = calloc(cap, sizeof(*idx));
	merged_t *m = calloc(total + 1, sizeof(*m));
	uint64_t *ls = calloc((total + 1) * 2 * nv, sizeof(*ls));
	uint64_t *pc = calloc((total + 1) * 2 * nv, sizeof(*pc));
	uint8_t *off = calloc((total + 1) * 2 * nv, sizeof(*off));
	if (!keys || !idx || !m || !ls || !pc || !off) {
		fprintf(out, "{\"window\": %u, \"error\": \"out of memory\"}\n", windows);
		fflush(out);
		goto done;
	}
	size_t nm = 0;
	uint64_t loads[MAX_VCPUS] = { 0 }, stores[MAX_VCPUS] = { 0 };
	for (unsigned v = 0; v < nv; v++) {
		vtable_t *t = &vt[v];
		for (size_t i = 0; i < t->cap; i++) {
			entry_t *e = &t->e[i];
			if (!e->key)
				continue;
			loads[v] += e->loads;
			stores[v] += e->stores;
			size_t j = hash64(e->key) & (cap - 1);
			while (keys[j] && keys[j] != e->key)
				j = (j + 1) & (cap - 1);
			if (!keys[j]) {
				keys[j] = e->key;
				idx[j] = nm;
				m[nm].line = e->key & ~(uint64_t) 1;
				m[nm].ls = &ls[nm * 2 * nv];
				m[nm].pc = &pc[nm * 2 * nv];
				m[nm].off = &off[nm * 2 * nv];
				nm++;
			}
			merged_t *x = &m[idx[j]];
			x->ls[2 * v] = e->loads;
			x->ls[2 * v + 1] = e->stores;
			x->pc[2 * v] = e->load_pc;
			x->pc[2 * v + 1] = e->store_pc;
			x->off[2 * v] = e->load_off;
			x->off[2 * v + 1] = e->store_off;
		}
	}
	double bound = 0, bound_w = 0, bound_r = 0;
	double bound_v[MAX_VCPUS] = { 0 };
	/*
	 * Load terms by source: load_from[c][d] is the part of vCPU c's load
	 * term min(loads by c, stores by the others) that d's stores account
	 * for (the term shared in proportion to each other vCPU's stores on
	 * the line); load_max[c][d] = sum over lines of min(loads by c,
	 * stores by d), the most misses d's stores alone can force on c's
	 * loads. Store terms likewise: store_from[c][d] is the part of c's
	 * store term min(stores by c, accesses by the others) that d's
	 * accesses account for. The resize goal compares the readers' terms
	 * with the resizer's columns (docs/SHARING.md). Static: 96 KiB, used
	 * only here, by the one vCPU that runs the report marker.
	 */
	static double load_from[MAX_VCPUS][MAX_VCPUS], load_max[MAX_VCPUS][MAX_VCPUS];
	static double store_from[MAX_VCPUS][MAX_VCPUS];
	memset(store_from, 0, sizeof(store_from));
	memset(load_from, 0, sizeof(load_from));
	memset(load_max, 0, sizeof(load_max));
	size_t shared = 0, stored_lines[MAX_VCPUS] = { 0 };
	for (size_t i = 0; i < nm; i++) {
		merged_t *x = &m[i];
		uint64_t al = 0, as = 0;
		for (unsigned v = 0; v < nv; v++) {
			al += x->ls[2 * v];
			as += x->ls[2 * v + 1];
		}
		double b = 0;
		for (unsigned v = 0; v < nv; v++) {
			uint64_t l = x->ls[2 * v], s = x->ls[2 * v + 1];
			uint64_t ol = al - l, os = as - s;
			uint64_t w = min_u64(s, ol + os), r = min_u64(l, os);
			bound_w += (double) w;
			bound_r += (double) r;
			bound_v[v] += (double) (w + r);
			stored_lines[v] += s > 0;
			for (unsigned d = 0; d < nv && r > 0; d++) {
				uint64_t sd = x->ls[2 * d + 1];
				if (d == v || sd == 0)
					continue;
				load_from[v][d] += (double) r * (double) sd / (double) os;
				load_max[v][d] += (double) min_u64(l, sd);
			}
			for (unsigned d = 0; d < nv && w > 0; d++) {
				uint64_t ad = x->ls[2 * d] + x->ls[2 * d + 1];
				if (d != v && ad)
					store_from[v][d] += (double) w * (double) ad /
					    (double) (ol + os);
			}
			if (v != nv - 1) {
				unsigned z = nv - 1;
				uint64_t sz = x->ls[2 * z + 1], az = x->ls[2 * z] + sz;
				x->rest += (double) (w + r) -
				    (os ? (double) r * (double) sz / (double) os : 0.0) -
				    (ol + os ? (double) w * (double) az / (double) (ol + os) : 0.0);
			}
			b += (double) (w + r);
		}
		x->bound = b;
		bound += b;
		shared += b > 0;
	}
	qsort(m, nm, sizeof(*m), cmp_bound);
	fprintf(out, "{\"window\": %u, \"mode\": \"%s\", \"ops\": %" PRIu64
	    ", \"vcpus\": %u, \"lines\": %zu, \"shared_lines\": %zu, \"bound\": %.0f, "
	    "\"bound_store\": %.0f, \"bound_load\": %.0f, \"per_op\": %.6g, "
	    "\"incomplete\": %s, \"loads\": [", windows,
	    user_mode ? "user" : "system", ops, nv, nm, shared,
	    bound, bound_w, bound_r, ops ? bound / (double) ops : 0.0,
	    failed ? "true" : "false");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%" PRIu64, v ? ", " : "", loads[v]);
	fprintf(out, "], \"stores\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%" PRIu64, v ? ", " : "", stores[v]);
	fprintf(out, "], \"bound_vcpu\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%.0f", v ? ", " : "", bound_v[v]);
	fprintf(out, "], \"lines_stored\": [");
	for (unsigned v = 0; v < nv; v++)
		fprintf(out, "%s%zu", v ? ", " : "", stored_lines[v]);
	print_matrix("load_from", load_from, nv);
	print_matrix("store_from", store_from, nv);
	print_matrix("load_max", load_max, nv);
	fprintf(out, "], \"top\": [");
	for (size_t i = 0; i < nm && i < top_n && m[i].bound > 0; i++)
		print_line(&m[i], nv, i > 0);
	/*
	 * top_rest: the lines that most of the other vCPUs' terms fall on once
	 * the parts due to the last vCPU are taken out (with a resizer on the
	 * last CPU: what disturbs the readers besides the resize).
	 */
	qsort(m, nm, sizeof(*m), cmp_rest);
	fprintf(out, "], \"top_rest\": [");
	for (size_t i = 0; i < nm && i < top_n && m[i].rest >= 0.5; i++)
		print_line(&m[i], nv, i > 0);
	fprintf(out, "]}\n");
	fflush(out);
done:
	free(keys);
	free(idx);
	free(m);
	free(ls);
	free(pc);
	free(off);
	windows++;
}

static void clear_tables(void)
{
	for (unsigned v = 0; v < MAX_VCPUS; v++) {
		if (vt[v].e)
			memset(vt[v].e, 0, vt[v].cap * sizeof(*vt[v].e));
		vt[v].used = 0;
		vt[v].alloc_failed = false;
	}
}

static void vcpu_marker(unsigned int vcpu, void *udata)
{
	enum marker k = (enum marker) (uintptr_t) udata;
	vtable_t *t = &vt[vcpu < MAX_VCPUS ? vcpu : 0];
	switch (k) {
	case M_OPEN:
		/* The window is closed: no vCPU writes its table now. */
		clear_tables();
		t->ops = 0;
		__atomic_store_n(&window_open, 1, __ATOMIC_RELEASE);
		break;
	case M_CLOSE:
		__atomic_store_n(&window_open, 0, __ATOMIC_RELEASE);
		t->ops = 0;
		break;
	case M_BIT0:
	case M_BIT1:
		t->ops = (t->ops << 1) | (k == M_BIT1);
		break;
	case M_REPORT:
		if (!__atomic_load_n(&window_open, __ATOMIC_ACQUIRE))
			report(t->ops);
		t->ops = 0;
		break;
	}
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *d = qemu_plugin_insn_data(insn);
		size_t sz = qemu_plugin_insn_size(insn);
		if (sz == 7 && d[0] == 0x0f && d[1] == 0x1f && d[2] == 0x80) {
			uint32_t disp = (uint32_t) d[3] | (uint32_t) d[4] << 8 |
			    (uint32_t) d[5] << 16 | (uint32_t) d[6] << 24;
			uint32_t k = disp & 0xffff;
			if ((disp & 0xffff0000u) == MARKER_MAGIC && k >= M_OPEN &&
			    k <= M_REPORT) {
				qemu_plugin_register_vcpu_insn_exec_cb(insn, vcpu_marker,
				    QEMU_PLUGIN_CB_NO_REGS, (void *) (uintptr_t) k);
				continue;
			}
		}
		qemu_plugin_register_vcpu_mem_cb(insn, vcpu_mem,
		    QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
		    (void *) (uintptr_t) qemu_plugin_insn_vaddr(insn));
	}
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
	if (out && out != stderr)
		fclose(out);
	out = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
    const qemu_info_t *info, int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0) {
			path = argv[i] + 4;
		} else if (strncmp(argv[i], "top=", 4) == 0) {
			top_n = (unsigned) strtoul(argv[i] + 4, NULL, 10);
		} else {
			fprintf(stderr, "sharing: unknown argument %s (out=FILE, top=N)\n",
			    argv[i]);
			return -1;
		}
	}
	/* User mode: no physical addresses; one address space (see the top). */
	user_mode = !info->system_emulation;
	out = path ? fopen(path, "w") : stderr;
	if (!out) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
	qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
	return 0;
}
