/** @file regs_arch.h
 * The architecture side of `regs` (regs_amd64.c, regs_arm64.c): a snapshot of
 * every user-writable register that is not a general-purpose one, written
 * from a pattern and read back.
 */
#ifndef REGS_ARCH_H_
#define REGS_ARCH_H_

#include <stdint.h>

#ifdef __aarch64__
typedef struct {
	uint8_t v[32][16];
	uint64_t fpcr, fpsr;
	uint64_t tpidr;
	uint64_t dit, ssbs;       /* with regs_pstate only */
} regs_t;
#else
typedef struct {
	uint16_t fcw, fsw, ftw;
	uint32_t mxcsr;
	uint8_t st[8][10];
	uint8_t xmm[16][16];
	uint8_t ymmh[16][16];
	uint16_t sel[4];          /* DS, ES, FS, GS */
} regs_t;
#endif

/**
 * arm64 `-p`: also PSTATE.DIT and PSTATE.SSBS (FEAT_DIT, FEAT_SSBS: -cpu max;
 * on a CPU without them the instructions are UNDEFINED). Set by main().
 */
extern int regs_pstate;

/** The 64-bit pattern number @a i of @a seed (splitmix64). */
uint64_t regs_pattern(uint64_t seed, unsigned i);
/** Writes every covered register from the pattern of @a seed. */
void regs_write(uint64_t seed, int legacy);
/** Reads every covered register into @a r (zeroed first, so memcmp works). */
void regs_read(regs_t *r, int legacy);
#ifdef __aarch64__
/** `regs x18 N` (regs_arm64.c): rounds in which x18 came back changed. */
int regs_x18(long rounds);
#endif
/**
 * Prints every register of @a r that is not in the defined initial state,
 * prefixed by @a where (NULL: prints nothing). @return how many differ.
 */
int regs_diff_initial(const regs_t *r, int legacy, const char *where);
/**
 * Prints every register where @a now differs from @a want (nothing if
 * @a where is NULL). @return how many.
 */
int regs_diff(const regs_t *now, const regs_t *want, int legacy,
    const char *where);
/**
 * One register of regs_diff(): prints `regs: WHERE: NAME = NOW, expected
 * WANT` when they differ (nothing if @a where is NULL). @return 1 if they
 * differ, else 0.
 */
int regs_diff_word(const char *where, const char *name, uint64_t now,
    uint64_t want);
/** How many registers regs_diff() compares. */
int regs_count(int legacy);
/** The register groups covered, for the report lines. */
const char *regs_groups(int legacy);

#endif
