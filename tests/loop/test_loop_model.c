/* SPDX-License-Identifier: MIT */
/*
 * test_loop_model - the body of fuzz_loop over fixed PRNG seeds, so that
 * builds without clang (and the ASan build) check the loop against the
 * model of loop_model.c too. TWHEEL_LOOP_MODEL_RUNS sets the number of
 * seeds (default 3000); TWHEEL_MODEL_SEED, if set, is added to each. To
 * replay one failure with a trace of every operation:
 * TWHEEL_LOOP_MODEL_SEED=<seed> TWHEEL_LOOP_MODEL_BYTES=<bytes>
 * TWHEEL_LOOP_MODEL_TRACE=1 (the seed as the failure printed it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common.h"
#include "loop_model.h"

static unsigned runs(void)
{
	const char *s = getenv("TWHEEL_LOOP_MODEL_RUNS");

	return s ? (unsigned)strtoul(s, NULL, 10) : 3000u;
}

/* @nbytes per seed: short runs see many configurations, long ones deep
 * states (cascades, misfires, full inboxes). */
static void run_seeds(uint64_t first, unsigned n, size_t nbytes)
{
	uint64_t ops = 0, fires = 0, iters = 0, rel = 0, drained = 0, back = 0, held = 0;
	uint64_t placed = 0, late_placed = 0, batches = 0, moved = 0;
	const char *one = getenv("TWHEEL_LOOP_MODEL_SEED"), *base = getenv("TWHEEL_MODEL_SEED");

	if (base)
		first += strtoull(base, NULL, 10);
	if (one) {
		const char *b = getenv("TWHEEL_LOOP_MODEL_BYTES");

		first = strtoull(one, NULL, 10);
		n = 1;
		nbytes = b ? strtoull(b, NULL, 10) : nbytes;
	}

	for (unsigned i = 0; i < n; i++) {
		struct byte_src src;
		struct lm_result res;

		byte_src_prng(&src, first + i, nbytes);
		if (lm_run(&src, &res) < 0)
			fail_msg("seed %llu, %zu bytes: %s", (unsigned long long)(first + i),
				 nbytes, res.failure);
		ops += res.ops;
		fires += res.fires;
		iters += res.iterations;
		rel += res.releases;
		drained += res.drained;
		back += res.steps_back;
		held += res.held;
		placed += res.placed;
		late_placed += res.late_placed;
		batches += res.batches;
		moved += res.moved;
	}
	print_message("%u seeds x %zu bytes: %llu ops, %llu iterations, %llu fires, "
		      "%llu releases, %llu drained, %llu steps back of the clock, "
		      "%llu timers held after the wheels' tick; %llu placed after parking, "
		      "%llu of them from a later reading than their arm's, %llu placements at "
		      "the 64th park, %llu armed timers moved\n", n, nbytes,
		      (unsigned long long)ops, (unsigned long long)iters,
		      (unsigned long long)fires, (unsigned long long)rel,
		      (unsigned long long)drained, (unsigned long long)back,
		      (unsigned long long)held, (unsigned long long)placed,
		      (unsigned long long)late_placed, (unsigned long long)batches,
		      (unsigned long long)moved);
	assert_true(fires > 0 && iters > 0 && drained > 0);
	if (!one)
		assert_true(back > 0 && held > 0 && late_placed > 0 && batches > 0 && moved > 0);
}

static void model_short_runs(void **state)
{
	(void)state;
	run_seeds(1, runs(), 256);
}

static void model_long_runs(void **state)
{
	(void)state;
	run_seeds(100000, runs() / 20 + 1, 8192);
}

/*
 * Inputs fuzz_loop once failed on, replayed in every build.
 *
 * clock_reads_zero: a fixed-delay periodic timer handed back by the executor
 * while the clock reads 0 (it stepped back), with posted work in the same
 * inbox chunk that moves the clock on. Its next deadline must count from the
 * chunk's reading, 0; the loop took 0 for "no reading" and read the clock
 * again after the work had run, a period plus 12140 ns instead.
 */
static const uint8_t clock_reads_zero[] = {
	0x46, 0x4f, 0x35, 0x35, 0x62, 0x03, 0x01, 0xff, 0x00, 0x00, 0x00, 0x4e,
	0x43, 0x5b, 0x32, 0x6b, 0x2f, 0x61, 0x69, 0x6e, 0x2f, 0x6c, 0x75, 0x72,
	0x69, 0x6e, 0x67, 0xff, 0x32, 0x32, 0x4e, 0x43, 0x5b,
};

static void model_found_inputs(void **state)
{
	static const struct {
		const char *name;
		const uint8_t *data;
		size_t size;
	} found[] = {
		{ "clock_reads_zero", clock_reads_zero, sizeof(clock_reads_zero) },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); i++) {
		struct byte_src src;
		struct lm_result res;

		byte_src_bytes(&src, found[i].data, found[i].size);
		if (lm_run(&src, &res) < 0)
			fail_msg("%s: %s", found[i].name, res.failure);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(model_found_inputs),
		cmocka_unit_test(model_short_runs),
		cmocka_unit_test(model_long_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
