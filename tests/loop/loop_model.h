/* SPDX-License-Identifier: MIT */
/*
 * loop_model.h - differential check of the io_uring loop's single-threaded
 * API against a plain model written from loop.h's documented semantics,
 * on a fake clock that moves forward, stands still and steps back, between
 * iterations and inside callbacks. Driven by a stream of bytes: libFuzzer's
 * input (fuzz_loop) or a PRNG (test_loop_model).
 */
#ifndef TWHEEL_TESTS_LOOP_MODEL_H
#define TWHEEL_TESTS_LOOP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/byte_src.h"


struct lm_result {
	uint64_t ops;        /* operations performed */
	uint64_t fires;      /* timer callbacks run */
	uint64_t iterations; /* twheel_loop_run_once() calls */
	uint64_t releases;   /* release hook calls */
	uint64_t drained;    /* timers handed back by the drain */
	uint64_t steps_back; /* moves of the clock backwards */
	uint64_t held;       /* timers linked a tick after the wheels' because
			      * the clock was behind them */
	uint64_t placed;     /* timers armed by delay, parked and placed later */
	uint64_t late_placed; /* ...from a reading later than their arm's */
	uint64_t batches;    /* placements made by the 64th park */
	uint64_t moved;      /* armed timers moved there and back */
	char failure[512];   /* empty when every check passed */
};

/*
 * Create a loop on a fake clock, run the operations the source picks until
 * it is exhausted, stop and drain it, checking every return value, every
 * callback and what it sees against the model. The source picks the mode
 * too (io_uring, or fallback mode: TW_LOOP_NO_URING). Returns 0, or -1 with
 * res->failure set.
 */
int lm_run(struct byte_src *src, struct lm_result *res);

#endif
