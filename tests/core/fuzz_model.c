/*
 * fuzz_model - libFuzzer target: the differential model check of test_model,
 * driven by the fuzzer's bytes instead of a PRNG. Any mismatch aborts.
 *
 * Build with -Dfuzz=true (clang); run e.g.
 *   build/tests/core/fuzz_model -max_total_time=60 corpus/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_src src;
	struct model_result res;
	if (size < 2)
		return 0;
	/* the first byte picks the pool size: from 1 to 256 timers */
	unsigned ntimers = 1u + data[0];
	model_src_bytes(&src, data + 1, size - 1);
	if (model_run(&src, UINT64_MAX, ntimers, &res)) {
		fprintf(stderr, "model mismatch after %llu ops: %s\n", (unsigned long long)res.ops,
			res.failure);
		abort();
	}
	return 0;
}
