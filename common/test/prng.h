/** @file prng.h
 * The pseudo-random numbers and the key scrambler of the tests and the
 * benchmarks, one copy for the kernel tests (kernel/test), libcht's tests
 * (uspace/tests) and the userspace peer benchmark (bench/userspace). Header
 * only, and it needs nothing but <stdint.h>: each side includes it as
 * "prng.h" from common/test. Not for production code: neither function is
 * meant to resist an adversary.
 */
#ifndef KERN_TEST_PRNG_H_
#define KERN_TEST_PRNG_H_

#include <stdint.h>

/**
 * xorshift64*: advances the state and returns the next number (Vigna, "An
 * experimental exploration of Marsaglia's xorshift generators, scrambled",
 * ACM TOMS 42(4), 2016). The state is private to its caller (one per
 * thread) and must not be 0; it never becomes 0.
 */
static inline uint64_t prng_xorshift64s(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/**
 * MurmurHash3's 64-bit finalizer (fmix64; Appleby, public domain): a
 * bijection of the 64-bit integers in which every input bit reaches every
 * output bit (full avalanche). fmix64(0) is 0.
 */
static inline uint64_t prng_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

#endif
