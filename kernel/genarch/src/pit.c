/** @file pit.c
 * i8254 PIT channel 2 one-shot, gated through port 0x61 (no interrupt needed).
 */
#include <genarch/pit.h>
#include <arch/asm.h>

#define PIT_CH2   0x42
#define PIT_CMD   0x43
#define PORT_B    0x61

void pit_oneshot_start(uint32_t us)
{
	uint32_t count = (uint32_t) ((uint64_t) PIT_HZ * us / 1000000);
	if (count > 0xffff)
		count = 0xffff;
	/* Gate low while programming, speaker off. */
	uint8_t b = inb(PORT_B);
	outb(PORT_B, (b & ~0x03));
	/* Channel 2, lobyte/hibyte, mode 0 (interrupt on terminal count), binary. */
	outb(PIT_CMD, 0xb0);
	outb(PIT_CH2, count & 0xff);
	outb(PIT_CH2, count >> 8);
	/* Raise the gate: counting starts. */
	outb(PORT_B, (b & ~0x02) | 0x01);
}

bool pit_oneshot_expired(void)
{
	return (inb(PORT_B) & 0x20) != 0;
}
