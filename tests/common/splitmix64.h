/* SPDX-License-Identifier: MIT */
/*
 * splitmix64.h - the tests' seeded random numbers: SplitMix64 (Steele, Lea
 * and Flood, "Fast splittable pseudorandom number generators", 2014; the
 * generator of Java's SplittableRandom). Header-only, C11 and C++17;
 * shared by the model-based and the randomised tests (tests/core,
 * tests/loop, tests/common/byte_src.h).
 *
 *   splitmix64(&state)  adds the golden-ratio increment to @state and
 *                       returns its 64-bit mix: the next number of the
 *                       sequence @state was seeded with. Every seed is
 *                       valid (0 too); one call, a handful of
 *                       instructions; @state is the caller's (one a
 *                       thread, or atomic).
 *
 * The same seed gives the same sequence on every machine and build, so a
 * test's failure is reproduced by its seed.
 */
#ifndef TWHEEL_TESTS_SPLITMIX64_H
#define TWHEEL_TESTS_SPLITMIX64_H

#include <stdint.h>

static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#endif
