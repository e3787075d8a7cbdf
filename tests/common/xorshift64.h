/* SPDX-License-Identifier: MIT */
/*
 * xorshift64.h - the tests' cheapest seeded random numbers: Marsaglia's
 * xorshift64 ("Xorshift RNGs", 2003; shifts 13, 7, 17). Header-only, C11
 * and C++17; shared by the tests that draw delays and choices from it
 * (tests/core, tests/loop, tests/adapters, tests/demo).
 *
 *   xorshift64(&state)  steps @state and returns its new value: the next
 *                       number of the sequence @state was seeded with.
 *                       The seed must not be 0 (the sequence would stay
 *                       0); one call, six instructions; @state is the
 *                       caller's (one a thread).
 *
 * The same seed gives the same sequence on every machine and build, so a
 * test's failure is reproduced by its seed. tests/common/splitmix64.h
 * mixes better, for the model-based tests.
 */
#ifndef TWHEEL_TESTS_XORSHIFT64_H
#define TWHEEL_TESTS_XORSHIFT64_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif
