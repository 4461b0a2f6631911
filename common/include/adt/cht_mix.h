/** @file cht_mix.h
 * The CHT's 64-bit hash mixer, in a header of its own: it depends on nothing
 * but <stdint.h>, so the kernel, the userspace library and the C++ adapters of
 * the userspace peer benchmark (bench/userspace) all include this one copy.
 */
#ifndef KERN_CHT_MIX_H_
#define KERN_CHT_MIX_H_

#include <stdint.h>

/**
 * Mixes a user hash into the CHT's 64-bit hash: multiplicative (Fibonacci)
 * hashing, h * 2^64 / phi (Knuth, TAOCP vol. 3, section 6.4; Linux's
 * hash_64() uses the same scheme). The table takes a bucket's index from the
 * top bits of the result, and every input bit reaches the top bits; a
 * multiplication by an odd constant is a bijection, so distinct user hashes
 * stay distinct. Consecutive keys (page numbers, counters) spread evenly over
 * the buckets (the three-distance theorem), where a full-avalanche mixer
 * (MurmurHash3's fmix64, used before) gives a Poisson spread and costs 9 more
 * instructions on the lookup path. Like every fixed mixer it has structured
 * key sets that collide more than random keys would.
 */
static inline uint64_t cht_mix_hash(uint64_t h)
{
	return h * 0x9e3779b97f4a7c15ULL;
}

#endif
