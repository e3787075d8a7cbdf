/* SPDX-License-Identifier: MIT */
/*
 * fuzz_loop - libFuzzer target: the loop's API on a fake clock against the
 * model of loop_model.c, driven by the fuzzer's bytes. Any mismatch aborts.
 *
 * Build with -Dfuzz=true (clang); run e.g.
 *   build/tests/loop/fuzz_loop -max_total_time=30 corpus/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "loop_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct byte_src src;
	struct lm_result res;

	byte_src_bytes(&src, data, size);
	if (lm_run(&src, &res) < 0) {
		fprintf(stderr, "loop model mismatch: %s\n", res.failure);
		abort();
	}
	return 0;
}
