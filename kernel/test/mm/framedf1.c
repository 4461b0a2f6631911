/** @file framedf1.c
 * Test `framedf1` (unsafe: it ends in a panic): a single frame freed twice
 * while its first free still sits in the CPU's frame cache (mm/frame.c).
 *
 * The second free cannot be refused at once: a cached frame is still
 * FRAME_BUSY in its zone. It is caught when the cache is flushed to the zone,
 * which then finds the frame already free. The test frees the frame, then more
 * frames than a debug build searches (FRAME_PCP_DEBUG_SCAN), then the frame
 * again, then enough frames to flush both copies out of the cache, all with
 * preemption disabled so that every free goes to one CPU's cache. Any build
 * must panic naming the double free; a verdict means it went unnoticed.
 */
#include <test.h>
#include <tests.h>
#include <mm/frame.h>
#include <synch/spinlock.h>
#include <print.h>

/** Frames freed after each free of the victim (above the cache's capacity). */
#define FRAMEDF1_SPACER 100
#define FRAMEDF1_FLUSH  1100

const char *test_framedf1(void)
{
	static uintptr_t spare[FRAMEDF1_SPACER + FRAMEDF1_FLUSH];
	uintptr_t victim = frame_alloc(1, FRAME_NONE);
	if (!victim)
		return "frame_alloc failed";
	for (size_t i = 0; i < ARRAY_SIZE(spare); i++) {
		spare[i] = frame_alloc(1, FRAME_NONE);
		if (!spare[i])
			return "frame_alloc failed (the frames are not given back)";
	}
	printf("framedf1: frame %#lx freed twice through the frame cache; the "
	    "flush must panic\n", victim);
	preemption_disable();
	frame_free(victim, 1);
	for (size_t i = 0; i < FRAMEDF1_SPACER; i++)
		frame_free(spare[i], 1);
	frame_free(victim, 1);
	for (size_t i = FRAMEDF1_SPACER; i < ARRAY_SIZE(spare); i++)
		frame_free(spare[i], 1);
	preemption_enable();
	return "a frame freed twice was not caught";
}
