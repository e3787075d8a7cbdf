/* SPDX-License-Identifier: MIT */
/*
 * test_place_rule - the placement rule's division by the tick through a
 * reciprocal (libtwheel/place_rule.h, private), against the divide
 * instruction: random dividends and ticks, and the edges (tick 1, 2, a
 * power of two, UINT64_MAX; dividends 0, multiples and their neighbours,
 * UINT64_MAX), floor and ceiling, and the deadline rule built on it; and
 * the parking hint's quotient without the correction step (the floor or
 * one less).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "place_rule.h"

#include "../common/xorshift64.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
	return xorshift64(&rng);
}

static void check(uint64_t x, uint64_t tick)
{
	uint64_t inv = twheel__recip(tick), q = x / tick, up = q + (x % tick != 0);

	if (twheel__div_tick(x, tick, inv, false) != q || twheel__div_tick(x, tick, inv, true) != up ||
	    twheel__div_tick(x, tick, 0, false) != q || twheel__div_tick(x, tick, 0, true) != up)
		fail_msg("%llu / %llu: floor %llu, ceiling %llu; by the reciprocal %llu and %llu",
			 (unsigned long long)x, (unsigned long long)tick, (unsigned long long)q,
			 (unsigned long long)up,
			 (unsigned long long)twheel__div_tick(x, tick, inv, false),
			 (unsigned long long)twheel__div_tick(x, tick, inv, true));
	/* the parking hint's quotient: the floor or one less, never above */
	uint64_t low = twheel__div_tick_low(x, UINT64_MAX / tick);
	if (low != q && low + 1 != q)
		fail_msg("%llu / %llu: floor %llu, the hint's quotient %llu", (unsigned long long)x,
			 (unsigned long long)tick, (unsigned long long)q, (unsigned long long)low);
}

static void division_by_the_reciprocal_is_exact(void **state)
{
	static const uint64_t ticks[] = { 1, 2, 3, 7, 1000, 1024, 1000000, 999999937, 1000000000,
					  UINT64_C(1) << 32, (UINT64_C(1) << 63) - 1, UINT64_C(1) << 63,
					  UINT64_MAX - 1, UINT64_MAX };
	(void)state;
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		uint64_t d = ticks[i];

		for (uint64_t k = 0; k < 4; k++) {
			uint64_t m = UINT64_MAX / d - k;

			check(m * d, d);
			check(m * d - 1, d);
			if (m * d < UINT64_MAX)
				check(m * d + 1, d);
		}
		check(0, d), check(1, d), check(d - 1, d), check(d, d), check(UINT64_MAX, d);
		for (int j = 0; j < 20000; j++)
			check(next() >> (next() % 64), d);
	}
	for (int j = 0; j < 1000000; j++) {
		uint64_t d = next() >> (next() % 64), x = next() >> (next() % 64);

		check(x, d ? d : 1);
	}
}

/* The deadline rule with a reciprocal gives what it gives by division. */
static void deadline_rule_is_the_same_either_way(void **state)
{
	(void)state;
	for (int j = 0; j < 1000000; j++) {
		uint64_t tick = 1 + (next() >> (next() % 64 | 1)), d = next() >> (next() % 64),
			 now = j & 1 ? d - (next() >> (next() % 64)) : next() >> (next() % 64);

		assert_int_equal(twheel__deadline_tick_ns(tick, twheel__recip(tick), d, now),
				 twheel__deadline_tick_ns(tick, 0, d, now));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(division_by_the_reciprocal_is_exact),
		cmocka_unit_test(deadline_rule_is_the_same_either_way),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
