/** @file regs_amd64.c
 * `regs` on amd64: x87 (and so MMX), MXCSR, XMM0-15, the upper halves of
 * YMM0-15 (when CPUID says AVX and OSXSAVE and XCR0 enables it), and the data
 * segment selectors DS, ES, FS, GS. The full set goes through FXRSTOR/FXSAVE
 * (CR4.OSFXSR); `-l` uses FRSTOR/FNSAVE and the selectors only, which a
 * kernel without SSE support let ring 3 run.
 */
#ifndef __aarch64__
#include <stdio.h>
#include <string.h>
#include "regs_arch.h"

/**
 * Selectors ring 3 can load into DS/ES/FS/GS and keep: null and the user
 * data selector with any RPL. A null selector with RPL 1-3 (1, 2, 3) loads
 * too, but is not the thread's to keep: an iretq to ring 3 (after any
 * interrupt) replaces it with 0 (the SDM's IRET pseudo-code; QEMU does the
 * same), so it is left out.
 */
static const uint16_t sel_values[5] = { 0, 0x20, 0x21, 0x22, 0x23 };
static const char *const sel_names[4] = { "DS", "ES", "FS", "GS" };

static int avx_usable(void)
{
	uint32_t a = 1, b, c = 0, d;
	__asm__ volatile ("cpuid" : "+a" (a), "=b" (b), "+c" (c), "=d" (d));
	if (!(c & (1U << 28)) || !(c & (1U << 27)))
		return 0;
	uint32_t lo, hi;
	__asm__ volatile ("xgetbv" : "=a" (lo), "=d" (hi) : "c" (0));
	return (lo & 6) == 6;
}

const char *regs_groups(int legacy)
{
	if (legacy)
		return "x87/MMX, DS/ES/FS/GS";
	return avx_usable() ? "x87/MMX, MXCSR, XMM0-15, YMM0-15, DS/ES/FS/GS" :
	    "x87/MMX, MXCSR, XMM0-15, DS/ES/FS/GS";
}

#define YLD(n) "vmovdqu " #n "*32(%0), %%ymm" #n "\n\t"
#define YST(n) "vextractf128 $1, %%ymm" #n ", " #n "*16(%0)\n\t"

static void sel_write(const uint16_t s[4])
{
	__asm__ volatile ("movw %0, %%ds" :: "r" (s[0]));
	__asm__ volatile ("movw %0, %%es" :: "r" (s[1]));
	__asm__ volatile ("movw %0, %%fs" :: "r" (s[2]));
	__asm__ volatile ("movw %0, %%gs" :: "r" (s[3]));
}

static void sel_read(uint16_t s[4])
{
	__asm__ volatile ("movw %%ds, %0" : "=r" (s[0]));
	__asm__ volatile ("movw %%es, %0" : "=r" (s[1]));
	__asm__ volatile ("movw %%fs, %0" : "=r" (s[2]));
	__asm__ volatile ("movw %%gs, %0" : "=r" (s[3]));
}

void regs_write(uint64_t seed, int legacy)
{
	uint64_t p = regs_pattern(seed, 0);
	/* Exceptions masked; precision and rounding from the pattern. */
	uint16_t fcw = (uint16_t) (0x007f | ((p & 0xf) << 8));
	/* Status word: only the condition codes C0-C3 (no exception pending). */
	uint16_t fsw = (uint16_t) ((((p >> 30) & 7) << 8) | (((p >> 33) & 1) << 14));
	uint16_t sel[4];
	for (int i = 0; i < 4; i++)
		sel[i] = sel_values[((p >> (8 + 3 * i)) & 7) % 5];
	if (legacy) {
		uint8_t img[108] __attribute__((aligned(16)));
		memset(img, 0, sizeof(img));
		memcpy(img, &fcw, 2);
		memcpy(img + 4, &fsw, 2);
		/* FTW 0 (all eight valid), registers from the pattern. */
		for (int i = 0; i < 8; i++) {
			uint64_t m = regs_pattern(seed, 1 + 2 * i);
			uint16_t e = (uint16_t) regs_pattern(seed, 2 + 2 * i);
			memcpy(img + 28 + 10 * i, &m, 8);
			memcpy(img + 36 + 10 * i, &e, 2);
		}
		__asm__ volatile ("frstor %0" :: "m" (img) : "memory");
		sel_write(sel);
		return;
	}
	uint8_t img[512] __attribute__((aligned(16)));
	memset(img, 0, sizeof(img));
	memcpy(img, &fcw, 2);
	memcpy(img + 2, &fsw, 2);
	img[4] = 0xff;   /* abridged tag word: all eight valid */
	/* Every exception masked, rounding and the sticky flags from the pattern. */
	uint32_t mxcsr = 0x1f80 | (uint32_t) ((p >> 20) & 0x3f) |
	    (uint32_t) (((p >> 26) & 3) << 13);
	memcpy(img + 24, &mxcsr, 4);
	for (int i = 0; i < 8; i++) {
		uint64_t m = regs_pattern(seed, 1 + 2 * i);
		uint16_t e = (uint16_t) regs_pattern(seed, 2 + 2 * i);
		memcpy(img + 32 + 16 * i, &m, 8);
		memcpy(img + 40 + 16 * i, &e, 2);
	}
	for (int i = 0; i < 32; i++) {
		uint64_t v = regs_pattern(seed, 20 + i);
		memcpy(img + 160 + 8 * i, &v, 8);
	}
	__asm__ volatile ("fxrstor %0" :: "m" (img) : "memory");
	if (avx_usable()) {
		uint8_t y[16 * 32] __attribute__((aligned(32)));
		for (int i = 0; i < 16; i++) {
			memcpy(y + 32 * i, img + 160 + 16 * i, 16);
			for (int j = 0; j < 2; j++) {
				uint64_t v = regs_pattern(seed, 60 + 2 * i + j);
				memcpy(y + 32 * i + 16 + 8 * j, &v, 8);
			}
		}
		__asm__ volatile (YLD(0) YLD(1) YLD(2) YLD(3) YLD(4) YLD(5)
		    YLD(6) YLD(7) YLD(8) YLD(9) YLD(10) YLD(11) YLD(12) YLD(13)
		    YLD(14) YLD(15) :: "r" (y) : "memory");
	}
	sel_write(sel);
}

void regs_read(regs_t *r, int legacy)
{
	memset(r, 0, sizeof(*r));
	sel_read(r->sel);
	if (legacy) {
		uint8_t img[108] __attribute__((aligned(16)));
		/* fnsave re-initializes the FPU: put the state straight back. */
		__asm__ volatile ("fnsave %0\n\tfrstor %0" : "+m" (img) :: "memory");
		memcpy(&r->fcw, img, 2);
		memcpy(&r->fsw, img + 4, 2);
		memcpy(&r->ftw, img + 8, 2);
		for (int i = 0; i < 8; i++)
			memcpy(r->st[i], img + 28 + 10 * i, 10);
		return;
	}
	uint8_t img[512] __attribute__((aligned(16)));
	__asm__ volatile ("fxsave %0" : "=m" (img) :: "memory");
	memcpy(&r->fcw, img, 2);
	memcpy(&r->fsw, img + 2, 2);
	r->ftw = img[4];
	memcpy(&r->mxcsr, img + 24, 4);
	for (int i = 0; i < 8; i++)
		memcpy(r->st[i], img + 32 + 16 * i, 10);
	memcpy(r->xmm, img + 160, 256);
	if (avx_usable()) {
		__asm__ volatile (YST(0) YST(1) YST(2) YST(3) YST(4) YST(5)
		    YST(6) YST(7) YST(8) YST(9) YST(10) YST(11) YST(12) YST(13)
		    YST(14) YST(15) :: "r" (r->ymmh) : "memory");
	}
}

static int diff_bytes(const char *where, const char *name, int i,
    const uint8_t *now, const uint8_t *want, size_t n)
{
	if (memcmp(now, want, n) == 0)
		return 0;
	uint64_t a[2] = { 0, 0 }, b[2] = { 0, 0 };
	memcpy(a, now, n);
	memcpy(b, want, n);
	if (where)
		printf("regs: %s: %s%d = %#lx:%016lx, expected %#lx:%016lx\n",
		    where, name, i, a[1], a[0], b[1], b[0]);
	return 1;
}

int regs_count(int legacy)
{
	/* FCW FSW FTW ST0-7 DS ES FS GS; MXCSR XMM0-15 YMM_HI0-15. */
	if (legacy)
		return 15;
	return 16 + 16 + (avx_usable() ? 16 : 0);
}

int regs_diff(const regs_t *now, const regs_t *want, int legacy,
    const char *where)
{
	int n = 0;
	n += regs_diff_word(where, "FCW", now->fcw, want->fcw);
	n += regs_diff_word(where, "FSW", now->fsw, want->fsw);
	n += regs_diff_word(where, "FTW", now->ftw, want->ftw);
	for (int i = 0; i < 8; i++)
		n += diff_bytes(where, "ST", i, now->st[i], want->st[i], 10);
	for (int i = 0; i < 4; i++)
		n += regs_diff_word(where, sel_names[i], now->sel[i],
		    want->sel[i]);
	if (legacy)
		return n;
	n += regs_diff_word(where, "MXCSR", now->mxcsr, want->mxcsr);
	for (int i = 0; i < 16; i++)
		n += diff_bytes(where, "XMM", i, now->xmm[i], want->xmm[i], 16);
	for (int i = 0; i < 16; i++)
		n += diff_bytes(where, "YMM_HI", i, now->ymmh[i], want->ymmh[i], 16);
	return n;
}

int regs_diff_initial(const regs_t *r, int legacy, const char *where)
{
	regs_t init;
	memset(&init, 0, sizeof(init));
	init.fcw = 0x37f;
	/* Every register empty: FNSAVE's full tag word 0xffff, FXSAVE's 0. */
	init.ftw = legacy ? 0xffff : 0;
	init.mxcsr = legacy ? 0 : 0x1f80;
	return regs_diff(r, &init, legacy, where);
}
#endif
