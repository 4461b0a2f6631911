/** @file framedf1.c
 * Unsafe tests of frame_free()'s diagnosis (mm/frame.c); each ends in a panic.
 *
 * `framedf1`: a single frame freed twice while its first free still sits in
 * the CPU's frame cache. The second free cannot be refused at once: a cached
 * frame is still FRAME_BUSY in its zone. It is caught when the cache is
 * flushed to the zone, which then finds the frame already free. The test makes
 * the hard case certain rather than likely: the victim is the upper half of a
 * buddy pair (an odd frame number) whose lower half is freed just before it,
 * so the first flush merges the victim into a larger free block and its own
 * metadata becomes FRAME_TAIL; the report must still say "double free", not
 * depend on what the buddy system did. The test frees the buddy and the victim,
 * then more frames than a debug build searches (FRAME_PCP_DEBUG_SCAN), then
 * the victim again, then enough frames to flush both copies out of the cache,
 * all with preemption disabled so that every free goes to one CPU's cache. Any
 * build must panic naming the double free; a verdict means it went unnoticed.
 *
 * `framewc1`: an interior frame of an allocated 4-frame block freed as a
 * single frame (a free with a wrong count): the panic must say the frame is
 * inside an allocated block, not call it a double free.
 */
#include <test.h>
#include <mm/frame.h>
#include <synch/spinlock.h>
#include <print.h>

/** Frames freed after each free of the victim (above the cache's capacity). */
#define FRAMEDF1_SPACER 100
#define FRAMEDF1_FLUSH  1100
#define FRAMEDF1_TOTAL  (FRAMEDF1_SPACER + FRAMEDF1_FLUSH)

/** Index in @a f[0..n) of a frame with an odd frame number whose lower buddy is
 *  also in @a f; the buddy's index goes to @a buddy. @return n if none. */
static size_t find_buddy_pair(const uintptr_t *f, size_t n, size_t *buddy)
{
	for (size_t i = 0; i < n; i++) {
		if (!((f[i] / FRAME_SIZE) & 1))
			continue;
		for (size_t j = 0; j < n; j++) {
			if (f[j] == f[i] - FRAME_SIZE) {
				*buddy = j;
				return i;
			}
		}
	}
	return n;
}

const char *test_framedf1(void)
{
	/* Two more than the frees need: the victim and its buddy come out. */
	static uintptr_t spare[FRAMEDF1_TOTAL + 2];
	for (size_t i = 0; i < ARRAY_SIZE(spare); i++) {
		spare[i] = frame_alloc(1, FRAME_NONE);
		if (!spare[i])
			return "frame_alloc failed (the frames are not given back)";
	}
	size_t b;
	size_t v = find_buddy_pair(spare, ARRAY_SIZE(spare), &b);
	if (v == ARRAY_SIZE(spare))
		return "no buddy pair among the allocated frames";
	uintptr_t victim = spare[v];
	uintptr_t buddy = spare[b];
	/* Take both out of the list, keeping the others' order. */
	size_t n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(spare); i++) {
		if (i != v && i != b)
			spare[n++] = spare[i];
	}
	printf("framedf1: frame %#lx (its buddy %#lx freed first) freed twice "
	    "through the frame cache; the flush must panic\n", victim, buddy);
	preemption_disable();
	frame_free(buddy, 1);
	frame_free(victim, 1);
	for (size_t i = 0; i < FRAMEDF1_SPACER; i++)
		frame_free(spare[i], 1);
	frame_free(victim, 1);
	for (size_t i = FRAMEDF1_SPACER; i < n; i++)
		frame_free(spare[i], 1);
	preemption_enable();
	return "a frame freed twice was not caught";
}

const char *test_framewc1(void)
{
	uintptr_t block = frame_alloc(4, FRAME_NONE);
	if (!block)
		return "frame_alloc failed";
	printf("framewc1: frame %#lx, the second of a 4-frame block at %#lx, freed "
	    "as a single frame; frame_free must panic\n", block + FRAME_SIZE,
	    block);
	frame_free(block + FRAME_SIZE, 1);
	return "a free of an interior frame was not caught";
}
