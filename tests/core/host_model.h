/* SPDX-License-Identifier: MIT */
/*
 * host_model.h - the host driver (<twheel/host.h>) on an injected clock that
 * jumps forward, stands still and steps back at random, from inside
 * callbacks too, checked against what host.h promises. Driven by a stream
 * of bytes: libFuzzer's input (fuzz_host) or a PRNG (test_host_model).
 */
#ifndef TWHEEL_TESTS_HOST_MODEL_H
#define TWHEEL_TESTS_HOST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "../common/byte_src.h"


struct hm_result {
	uint64_t ops;       /* operations performed */
	uint64_t runs;      /* twheel_host_run() calls */
	uint64_t fires;     /* timer callbacks run */
	uint64_t backs;     /* steps back of the clock */
	uint64_t held;      /* fires of timers armed while the clock stood behind
			     * the wheel (held until it was back) */
	uint64_t parked;    /* fires of timers that were parked, then placed */
	uint64_t moves;     /* twheel_move() of a pending timer */
	char failure[512];  /* empty when every check passed */
};

/*
 * Initialise a host on a fake clock and fake host timer, run the operations
 * the source picks until it is exhausted, then shut the host down; check
 * every return value and every callback against the model. Returns 0, or
 * -1 with res->failure set.
 */
int hm_run(struct byte_src *src, struct hm_result *res);

#endif
