/** @file bench_keys.h
 * The keys and random streams of the userspace benchmark (harness.c and
 * big.c): present and absent 8-byte keys, xorshift, YCSB's scrambled
 * zipfian. Header-only, static functions: include once per program file.
 */
#ifndef BENCH_KEYS_H_
#define BENCH_KEYS_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "prng.h"

/**
 * The keys: a full-avalanche bijection (MurmurHash3's fmix64) of 2i + 2 and
 * 2i + 3, so that they look random to every table. Not bench_mix(): that is
 * the tables' own multiplicative hash, and keys k * phi hashed again by it
 * (k * phi^2) put 64K present keys into 4582 of 64K buckets of the CHT
 * (chains of 15 seen by a hit) and no absent key into any of them, which
 * made CHT hits 2.7 times slower and misses 2.2 times faster than cds_lfht's
 * at 64K keys; with these keys a hit sees chains of 2.0, as random keys at
 * load 1 should. A bijection keeps the sets disjoint; 0 and ~0 (reserved by
 * some tables) are not among the keys of any size the harness runs (checked
 * for every input up to 2^21 + 8).
 */
static inline uint64_t key_gen(uint64_t k)
{
	return prng_fmix64(k);
}

static inline uint64_t key_present(size_t i)
{
	return key_gen(2 * (uint64_t) i + 2);
}

static inline uint64_t key_absent(size_t i)
{
	return key_gen(2 * (uint64_t) i + 3);
}

static inline uint64_t rnd(uint64_t *s)
{
	return prng_xorshift64s(s);
}

static inline double rnd01(uint64_t *s)
{
	return (double) (rnd(s) >> 11) * 0x1.0p-53;
}

/* --- YCSB's scrambled zipfian generator (Gray et al., SIGMOD 1994) ------------- */

typedef struct {
	size_t n;
	double theta, alpha, zetan, eta, half_pow;
} zipf_t;

static inline void zipf_init(zipf_t *z, size_t n, double theta)
{
	double zetan = 0, zeta2 = 1 + pow(0.5, theta);
	for (size_t i = 1; i <= n; i++)
		zetan += 1.0 / pow((double) i, theta);
	z->n = n;
	z->theta = theta;
	z->alpha = 1.0 / (1.0 - theta);
	z->zetan = zetan;
	z->eta = (1 - pow(2.0 / (double) n, 1 - theta)) / (1 - zeta2 / zetan);
	z->half_pow = 1 + pow(0.5, theta);
}

static inline size_t zipf_next(const zipf_t *z, uint64_t *s)
{
	double u = rnd01(s), uz = u * z->zetan;
	size_t rank;
	if (uz < 1)
		rank = 0;
	else if (uz < z->half_pow)
		rank = 1;
	else
		rank = (size_t) ((double) z->n * pow(z->eta * u - z->eta + 1, z->alpha));
	if (rank >= z->n)
		rank = z->n - 1;
	/* Scrambled (YCSB): FNV-1a of the rank spreads the hot items. */
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < 8; i++) {
		h ^= (rank >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return (size_t) (h % z->n);
}

#endif
