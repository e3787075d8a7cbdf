/*
 * test_model - the differential test: long random sequences of
 * add/mod/del/advance/next_expiry (and callbacks that act) checked against a
 * reference model, over several seeds and pool sizes. The normal run does
 * TWHEEL_MODEL_OPS operations in all (default 12 million; -Dlong_tests=true
 * sets 120 million), divided by TWHEEL_MODEL_OPS_DIVISOR if set (the
 * sanitizer builds: see tests/core/meson.build). TWHEEL_MODEL_SEED, if set,
 * is added to every seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "model.h"

static uint64_t total_ops(void)
{
	const char *s = getenv("TWHEEL_MODEL_OPS"), *d = getenv("TWHEEL_MODEL_OPS_DIVISOR");
	uint64_t ops = s ? strtoull(s, NULL, 10) : UINT64_C(12000000);
	uint64_t div = d ? strtoull(d, NULL, 10) : 1;

	return ops / (div ? div : 1);
}

/* TWHEEL_MODEL_SEED: added to every seed (default 0, the suite's seeds), to
 * run the same test over other sequences. */
static uint64_t seed_base(void)
{
	const char *s = getenv("TWHEEL_MODEL_SEED");

	return s ? strtoull(s, NULL, 10) : 0;
}

static void run_seeds(unsigned ntimers, uint64_t first_seed, unsigned nseeds, uint64_t ops)
{
	uint64_t fires = 0, advances = 0, cascaded = 0, done = 0;

	first_seed += seed_base();
	for (unsigned i = 0; i < nseeds; i++) {
		struct model_src src;
		struct model_result res;
		model_src_prng(&src, first_seed + i);
		int rc = model_run(&src, ops / nseeds, ntimers, &res);
		if (rc)
			fail_msg("seed %llu, %u timers, after %llu ops: %s",
				 (unsigned long long)(first_seed + i), ntimers,
				 (unsigned long long)res.ops, res.failure);
		done += res.ops;
		fires += res.fires;
		advances += res.advances;
		cascaded += res.cascaded;
	}
	print_message("%u timers, %u seeds: %llu ops, %llu fires, %llu advances, %llu cascaded\n",
		      ntimers, nseeds, (unsigned long long)done, (unsigned long long)fires,
		      (unsigned long long)advances, (unsigned long long)cascaded);
	assert_true(fires > 0 && advances > 0);
}

/* A few timers: lots of self-interaction in callbacks, many empty wheels. */
static void model_small_pool(void **state)
{
	(void)state;
	run_seeds(8, 1000, 4, total_ops() / 8);
}

static void model_medium_pool(void **state)
{
	(void)state;
	run_seeds(64, 2000, 4, total_ops() / 4);
}

static void model_large_pool(void **state)
{
	(void)state;
	run_seeds(1024, 3000, 4, total_ops() * 3 / 8);
}

static void model_huge_pool(void **state)
{
	(void)state;
	run_seeds(16384, 4000, 2, total_ops() / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_small_pool),
		cmocka_unit_test(model_medium_pool),
		cmocka_unit_test(model_large_pool),
		cmocka_unit_test(model_huge_pool),
	};
	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
