/** @file cht_mix.h
 * The CHT's 64-bit hash mixer, in a header of its own: it depends on nothing
 * but <stdint.h>, so the kernel, the userspace library and the C++ adapters of
 * the userspace peer benchmark (bench/userspace) all include this one copy.
 */
#ifndef KERN_CHT_MIX_H_
#define KERN_CHT_MIX_H_

#include <stdint.h>

/**
 * Mixes a user hash into a well-distributed 64-bit value: the MurmurHash3
 * 64-bit finalizer (Appleby, public domain), a bijection in which every input
 * bit affects every output bit with probability close to 1/2 (full avalanche).
 */
static inline uint64_t cht_mix_hash(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

#endif
