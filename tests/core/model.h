/*
 * model.h - differential check of libtwheel against a plain reference model
 * (a binary heap with lazy deletion), driven by a stream of random numbers.
 * Used by test_model (PRNG stream) and fuzz_model (libFuzzer input stream).
 */
#ifndef TWHEEL_TEST_MODEL_H
#define TWHEEL_TEST_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* A source of 64-bit values: returns 0 forever once exhausted. */
struct model_src {
	uint64_t (*next)(struct model_src *s);
	/* PRNG state */
	uint64_t state;
	/* byte stream */
	const uint8_t *data;
	size_t len, pos;
};

void model_src_prng(struct model_src *s, uint64_t seed);
void model_src_bytes(struct model_src *s, const uint8_t *data, size_t len);

struct model_result {
	uint64_t ops;      /* operations performed (incl. inside callbacks) */
	uint64_t fires;    /* callbacks run */
	uint64_t advances; /* successful advances */
	uint64_t cascaded; /* timers moved by cascades (from twheel_get_stats) */
	char failure[512]; /* empty when every check passed */
};

/*
 * Run up to @ops operations with a pool of @ntimers timers (<= 65536);
 * returns 0 if every check passed, -1 with res->failure describing the first
 * mismatch. Stops early when a byte-stream source is exhausted.
 */
int model_run(struct model_src *src, uint64_t ops, unsigned ntimers, struct model_result *res);

#endif
