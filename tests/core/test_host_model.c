/* SPDX-License-Identifier: MIT */
/*
 * test_host_model - the host driver against its model (host_model.c) on a
 * clock that jumps forward, stands still and steps back, from callbacks
 * too: many seeds, each a sequence of random operations, at six tick
 * lengths (1 ns to 1 s). TWHEEL_MODEL_OPS scales the run (default 12,000,000: here
 * half of it in bytes); TWHEEL_MODEL_SEED, if set, is added to every seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "host_model.h"

static uint64_t total_bytes(void)
{
	const char *s = getenv("TWHEEL_MODEL_OPS");

	return (s ? strtoull(s, NULL, 10) : UINT64_C(12000000)) / 2;
}

/* TWHEEL_MODEL_SEED: added to every seed (default 0, the suite's seeds), to
 * run the same test over other sequences. */
static uint64_t seed_base(void)
{
	const char *s = getenv("TWHEEL_MODEL_SEED");

	return s ? strtoull(s, NULL, 10) : 0;
}

static void run_seeds(uint64_t first, unsigned nseeds, size_t nbytes)
{
	struct hm_result sum = { 0 };

	first += seed_base();

	for (unsigned i = 0; i < nseeds; i++) {
		struct byte_src src;
		struct hm_result res;

		byte_src_prng(&src, first + i, nbytes);
		if (hm_run(&src, &res))
			fail_msg("seed %llu, %zu bytes, after %llu ops: %s",
				 (unsigned long long)(first + i), nbytes,
				 (unsigned long long)res.ops, res.failure);
		sum.ops += res.ops;
		sum.runs += res.runs;
		sum.fires += res.fires;
		sum.backs += res.backs;
		sum.held += res.held;
		sum.parked += res.parked;
		sum.moves += res.moves;
	}
	print_message("%u seeds of %zu bytes: %llu ops, %llu runs, %llu fires, %llu steps "
		      "back, %llu fires held by a step back, %llu of timers parked, %llu moves\n",
		      nseeds, nbytes, (unsigned long long)sum.ops, (unsigned long long)sum.runs,
		      (unsigned long long)sum.fires, (unsigned long long)sum.backs,
		      (unsigned long long)sum.held, (unsigned long long)sum.parked,
		      (unsigned long long)sum.moves);
	assert_true(sum.fires > 0 && sum.backs > 0 && sum.held > 0 && sum.parked > 0 &&
		    sum.moves > 0);
}

/* Short sequences: many starts, ticks and shutdowns with timers pending. */
static void host_model_short(void **state)
{
	(void)state;
	run_seeds(1, (unsigned)(total_bytes() / 2 / 512) + 1, 512);
}

/* Long sequences: deep wheels, long held stretches. */
static void host_model_long(void **state)
{
	(void)state;
	run_seeds(100000, 16, (size_t)(total_bytes() / 2 / 16) + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_model_short),
		cmocka_unit_test(host_model_long),
	};
	return cmocka_run_group_tests_name("host_model", tests, NULL, NULL);
}
