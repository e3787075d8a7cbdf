/* SPDX-License-Identifier: MIT */
/*
 * byte_src.h - the stream of bytes the model-based tests are driven by: a
 * buffer (libFuzzer's input; 0 once exhausted) or a PRNG (splitmix64) that
 * hands out a given number of bytes. Header-only; shared by the host
 * driver's model (tests/core) and the loop's (tests/loop).
 */
#ifndef TWHEEL_TESTS_BYTE_SRC_H
#define TWHEEL_TESTS_BYTE_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "splitmix64.h"

struct byte_src {
	const uint8_t *data;
	size_t len, pos;
	uint64_t state; /* PRNG when data is NULL */
	size_t limit;   /* PRNG: bytes to hand out */
};

static inline void byte_src_bytes(struct byte_src *s, const uint8_t *data, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->data = data;
	s->len = len;
}

static inline void byte_src_prng(struct byte_src *s, uint64_t seed, size_t nbytes)
{
	memset(s, 0, sizeof(*s));
	s->state = seed;
	s->limit = nbytes;
}

/* Bytes left? */
static inline bool src_more(const struct byte_src *s)
{
	return s->data ? s->pos < s->len : s->pos < s->limit;
}

static inline uint8_t u8(struct byte_src *s)
{
	if (s->data)
		return s->pos < s->len ? s->data[s->pos++] : 0;
	if (s->pos >= s->limit)
		return 0;
	s->pos++;
	return (uint8_t)(splitmix64(&s->state) >> 24);
}

/* @nbytes bytes, big-endian. */
static inline uint64_t u64(struct byte_src *s, unsigned nbytes)
{
	uint64_t v = 0;

	while (nbytes--)
		v = v << 8 | u8(s);
	return v;
}

#endif
