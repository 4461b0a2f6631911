/** @file falloc1.c
 * Frame allocator test: exhausts physical memory and frees it in various orders.
 *
 * Every pass allocates frames until frame_alloc() fails (all memory), with either a
 * fixed count of 1 or mixed counts 1..64, and frees them in allocation order, in
 * reverse order or interleaved (odd blocks first, then even ones). The list of
 * allocated blocks lives inside the blocks themselves (through the direct map), so
 * the test needs no other memory. Each block gets a header with a sequence number
 * and a check word, and (up to a cap, to bound the run time on big machines) every
 * further frame of a block gets one pattern word; everything is verified before the
 * block is freed, so overlapping blocks are detected. After every pass the frame
 * counters must be back at their baseline exactly.
 *
 * The test assumes nothing else allocates frames while it runs (and other code
 * trying to allocate during the test sees exhaustion).
 */

#include <test.h>
#include <mm/frame.h>
#include <arch/mm.h>
#include <print.h>
#include <typedefs.h>

/** Frames other than block heads that get a pattern word, per pass. */
#define FALLOC1_PATTERN_CAP 262144

#define FALLOC1_MAGIC 0x46616c6c6f633121UL

/** Header written at the start of every allocated block. */
typedef struct {
	/** Physical address of the next/previous block (0: none). */
	uintptr_t next;
	uintptr_t prev;
	/** Count passed to frame_alloc(). */
	size_t count;
	/** Allocation sequence number of the block in this pass. */
	size_t seq;
	/** Whether the frames after the head carry pattern words. */
	size_t patterned;
	/** Check word, see block_check_word(). */
	uint64_t check;
} falloc1_block_t;

/** The blocks of one pass, linked through their headers. */
typedef struct {
	uintptr_t head;
	uintptr_t tail;
	size_t blocks;
	size_t frames;
} falloc1_list_t;

typedef enum {
	FREE_FORWARD,
	FREE_REVERSE,
	FREE_INTERLEAVED,
} falloc1_order_t;

static const char *order_names[] = { "forward", "reverse", "interleaved" };

static falloc1_block_t *blk(uintptr_t pa)
{
	return (falloc1_block_t *) PA2KA(pa);
}

static uint64_t block_check_word(uintptr_t pa, size_t seq, size_t count)
{
	return (pa * 0x9E3779B97F4A7C15UL) ^ FALLOC1_MAGIC ^ (seq << 20) ^ count;
}

static uint64_t frame_pattern(uintptr_t pa, unsigned pass)
{
	return (pa * 0xC2B2AE3D27D4EB4FUL) ^ ((uint64_t) pass << 56) ^ 0x5a5a5a5aUL;
}

static size_t pow2_roundup(size_t c)
{
	size_t r = 1;

	while (r < c)
		r <<= 1;
	return r;
}

/** Count for the i-th allocation of a mixed pass: 1..64, irregular. */
static size_t mixed_count(size_t i)
{
	return 1 + ((i * 37 + i / 7) % 64);
}

/**
 * Allocates until exhaustion, appending every block to @a l.
 * @return NULL or a failure reason.
 */
static const char *alloc_all(unsigned pass, bool mixed, falloc1_list_t *l)
{
	size_t patterned = 0;
	/* Largest count still worth trying (lowered as big blocks run out). */
	size_t limit = 64;

	l->head = 0;
	l->tail = 0;
	l->blocks = 0;
	l->frames = 0;

	for (size_t i = 0;; i++) {
		size_t count = mixed ? mixed_count(i) : 1;
		if (count > limit)
			count = limit;

		uintptr_t pa = frame_alloc(count, FRAME_NONE);
		while (pa == 0 && count > 1) {
			/* No block of this size left: try the next smaller one. */
			limit = pow2_roundup(count) / 2;
			count = limit;
			pa = frame_alloc(count, FRAME_NONE);
		}
		if (pa == 0)
			break;

		size_t rounded = pow2_roundup(count);
		if (pa % (rounded * FRAME_SIZE) != 0) {
			printf("falloc1: block %#lx of %zu frames misaligned\n", pa, count);
			return "block not naturally aligned";
		}

		falloc1_block_t *b = blk(pa);
		b->next = 0;
		b->prev = l->tail;
		b->count = count;
		b->seq = l->blocks;
		b->patterned = (patterned + rounded - 1 <= FALLOC1_PATTERN_CAP);
		b->check = block_check_word(pa, b->seq, count);
		if (b->patterned) {
			for (size_t j = 1; j < rounded; j++) {
				uintptr_t fpa = pa + j * FRAME_SIZE;
				*(uint64_t *) PA2KA(fpa) = frame_pattern(fpa, pass);
			}
			patterned += rounded - 1;
		}

		if (l->tail != 0)
			blk(l->tail)->next = pa;
		else
			l->head = pa;
		l->tail = pa;
		l->blocks++;
		l->frames += rounded;
	}
	return NULL;
}

/** Verifies block @a pa (expected sequence number @a seq) and frees it. */
static const char *check_and_free(uintptr_t pa, size_t seq, unsigned pass)
{
	falloc1_block_t *b = blk(pa);

	if (b->seq != seq) {
		printf("falloc1: block %#lx has seq %zu, expected %zu\n", pa, b->seq, seq);
		return "block header overwritten or list corrupted (overlapping blocks?)";
	}
	if (b->count == 0 || b->count > 64 ||
	    b->check != block_check_word(pa, b->seq, b->count)) {
		printf("falloc1: block %#lx header corrupted\n", pa);
		return "block header corrupted (overlapping blocks?)";
	}

	size_t rounded = pow2_roundup(b->count);
	if (b->patterned) {
		for (size_t j = 1; j < rounded; j++) {
			uintptr_t fpa = pa + j * FRAME_SIZE;
			if (*(uint64_t *) PA2KA(fpa) != frame_pattern(fpa, pass)) {
				printf("falloc1: frame %#lx (block %#lx) pattern lost\n",
				    fpa, pa);
				return "frame pattern overwritten (overlapping blocks?)";
			}
		}
	}

	/* Scribble over the header so a stale list entry cannot verify again. */
	b->check = 0;
	frame_free(pa, b->count);
	return NULL;
}

/** Frees every block of @a l in @a order, verifying each one first. */
static const char *free_all(unsigned pass, falloc1_list_t *l, falloc1_order_t order)
{
	const char *err;
	size_t n = 0;

	switch (order) {
	case FREE_FORWARD:
		for (uintptr_t pa = l->head; pa != 0; n++) {
			if (n >= l->blocks)
				return "block list longer than allocated (corrupted)";
			uintptr_t next = blk(pa)->next;
			if ((err = check_and_free(pa, n, pass)) != NULL)
				return err;
			pa = next;
		}
		break;
	case FREE_REVERSE:
		for (uintptr_t pa = l->tail; pa != 0; n++) {
			if (n >= l->blocks)
				return "block list longer than allocated (corrupted)";
			uintptr_t prev = blk(pa)->prev;
			if ((err = check_and_free(pa, l->blocks - 1 - n, pass)) != NULL)
				return err;
			pa = prev;
		}
		break;
	case FREE_INTERLEAVED: {
		/* Free blocks 0, 2, 4, ..., relinking the survivors 1, 3, 5, ... */
		uintptr_t surv_head = 0;
		uintptr_t surv_tail = 0;
		for (uintptr_t pa = l->head; pa != 0; n++) {
			if (n >= l->blocks)
				return "block list longer than allocated (corrupted)";
			uintptr_t next = blk(pa)->next;
			if (n % 2 == 0) {
				if ((err = check_and_free(pa, n, pass)) != NULL)
					return err;
			} else {
				blk(pa)->next = 0;
				blk(pa)->prev = surv_tail;
				if (surv_tail != 0)
					blk(surv_tail)->next = pa;
				else
					surv_head = pa;
				surv_tail = pa;
			}
			pa = next;
		}
		if (n != l->blocks)
			return "block list shorter than allocated (corrupted)";
		n = 0;
		for (uintptr_t pa = surv_head; pa != 0; n++) {
			if (n >= l->blocks / 2)
				return "survivor list too long (corrupted)";
			uintptr_t next = blk(pa)->next;
			if ((err = check_and_free(pa, 2 * n + 1, pass)) != NULL)
				return err;
			pa = next;
		}
		if (n != l->blocks / 2)
			return "survivor list length wrong (corrupted)";
		n = l->blocks;
		break;
	}
	}

	if (n != l->blocks)
		return "block list shorter than allocated (corrupted)";
	return NULL;
}

static bool stats_equal(const frame_stats_t *a, const frame_stats_t *b)
{
	return a->total == b->total && a->free == b->free && a->busy == b->busy;
}

/** Checks the odd requests: count 0, absurd counts, FRAME_ZERO, FRAME_LOWMEM. */
static const char *test_special(void)
{
	if (frame_alloc(0, FRAME_NONE) != 0)
		return "frame_alloc(0) did not fail";
	if (frame_alloc((size_t) 1 << 30, FRAME_NONE) != 0)
		return "frame_alloc(1 << 30) did not fail";
	if (frame_alloc(SIZE_MAX, FRAME_NONE) != 0)
		return "frame_alloc(SIZE_MAX) did not fail";
	if (frame_alloc(((size_t) 1 << FRAME_MAX_ORDER) + 1, FRAME_NONE) != 0)
		return "frame_alloc(2^FRAME_MAX_ORDER + 1) did not fail";

	/* Dirty a few frames, free them, then ask for zeroed ones. */
	uintptr_t pa = frame_alloc(4, FRAME_NONE);
	if (pa == 0)
		return "frame_alloc(4) failed";
	for (size_t i = 0; i < 4 * FRAME_SIZE / sizeof(uint64_t); i++)
		((uint64_t *) PA2KA(pa))[i] = ~(uint64_t) 0;
	frame_free(pa, 4);

	pa = frame_alloc(3, FRAME_ZERO);
	if (pa == 0)
		return "frame_alloc(3, FRAME_ZERO) failed";
	if (pa % (4 * FRAME_SIZE) != 0)
		return "frame_alloc(3) not aligned to 4 frames";
	for (size_t i = 0; i < 4 * FRAME_SIZE / sizeof(uint64_t); i++) {
		if (((uint64_t *) PA2KA(pa))[i] != 0) {
			frame_free(pa, 3);
			return "FRAME_ZERO block not zeroed";
		}
	}
	frame_free(pa, 3);

	pa = frame_alloc(16, FRAME_LOWMEM);
	if (pa != 0) {
		bool low = pa + 16 * FRAME_SIZE <= GiB(4);
		frame_free(pa, 16);
		if (!low)
			return "FRAME_LOWMEM block above 4 GiB";
	}
	return NULL;
}

/**
 * Frame allocator exhaustion test, see the file comment.
 * @return NULL on success, or the reason of the failure.
 */
const char *test_falloc1(void)
{
	frame_stats_t base;
	frame_stats_t st;
	const char *err;
	unsigned pass = 0;

	frame_get_stats(&base);
	TPRINTF("falloc1: %zu zones, %zu frames total, %zu free, %zu busy\n",
	    zone_count(), base.total, base.free, base.busy);
	if (base.free + base.busy != base.total)
		return "frame stats inconsistent (free + busy != total)";

	if ((err = test_special()) != NULL)
		return err;
	frame_get_stats(&st);
	if (!stats_equal(&st, &base))
		return "frame stats differ from baseline after special requests";

	for (int mixed = 0; mixed <= 1; mixed++) {
		for (int order = FREE_FORWARD; order <= FREE_INTERLEAVED; order++) {
			falloc1_list_t l;

			pass++;
			if ((err = alloc_all(pass, mixed, &l)) != NULL)
				return err;

			frame_get_stats(&st);
			TPRINTF("falloc1: pass %u (%s counts, %s free): %zu blocks, "
			    "%zu frames allocated, %zu free left\n", pass,
			    mixed ? "mixed 1..64" : "single", order_names[order],
			    l.blocks, l.frames, st.free);

			if (st.free != 0) {
				free_all(pass, &l, FREE_FORWARD);
				return "frame_alloc(1) failed while frames were free";
			}
			if (l.frames != base.free) {
				free_all(pass, &l, FREE_FORWARD);
				return "allocated frames != free frames at baseline";
			}
			uintptr_t extra = frame_alloc(1, FRAME_NONE);
			if (extra != 0) {
				frame_free(extra, 1);
				free_all(pass, &l, FREE_FORWARD);
				return "frame_alloc(1) succeeded on exhausted memory";
			}
			if (frame_alloc((size_t) 1 << 30, FRAME_NONE) != 0) {
				free_all(pass, &l, FREE_FORWARD);
				return "frame_alloc(1 << 30) succeeded";
			}

			if ((err = free_all(pass, &l, order)) != NULL)
				return err;

			frame_get_stats(&st);
			if (!stats_equal(&st, &base)) {
				printf("falloc1: after pass %u: total %zu free %zu busy %zu, "
				    "baseline %zu %zu %zu\n", pass, st.total, st.free,
				    st.busy, base.total, base.free, base.busy);
				return "frame stats differ from baseline after a pass";
			}
		}
	}

	return NULL;
}
