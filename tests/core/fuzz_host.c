/* SPDX-License-Identifier: MIT */
/*
 * fuzz_host - libFuzzer target: the host driver's model check of
 * test_host_model, driven by the fuzzer's bytes: arms by deadline and by
 * delay (parked from callbacks and under twheel_host_defer(), placed by
 * runs and twheel_host_place()), cancels, moves, runs, and a clock that
 * jumps, stands still and steps back. Any mismatch aborts.
 *
 * Build with -Dfuzz=true (clang); run e.g.
 *   build/tests/core/fuzz_host -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct byte_src src;
	struct hm_result res;

	byte_src_bytes(&src, data, size);
	if (hm_run(&src, &res)) {
		fprintf(stderr, "host model mismatch after %llu ops: %s\n",
			(unsigned long long)res.ops, res.failure);
		abort();
	}
	return 0;
}
