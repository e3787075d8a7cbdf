/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stream.h - what the demo's two stream targets share (fuzz_http.c,
 * fuzz_line.c: a parser of demo_server.c fed the fuzzer's bytes as a
 * connection's byte stream, in reads): the servers' read size, the abort
 * with a message, the reads' heap blocks and the cuts drawn from the
 * input's own bytes. Define FUZZ_NAME (the target's name, a string)
 * before including it.
 */
#ifndef FUZZ_STREAM_H
#define FUZZ_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_common.h"
#include "demo_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define READ_MAX 512 /* the servers' read: CONN_BUF (idle_server.c), conn_buf (idle_server.cpp) */

#define FAIL(...)                                                                                            \
	do {                                                                                                  \
		fprintf(stderr, FUZZ_NAME ": " __VA_ARGS__);                                                  \
		fputc('\n', stderr);                                                                          \
		abort();                                                                                      \
	} while (0)

/*
 * A heap block of exactly @n bytes (1 for 0) holding @p's: ASan reports
 * a byte read past either end. Give it back with fuzz_read_end(). The
 * blocks of up to READ_MAX bytes are kept, one a length, and reused
 * (the others are freed). A fresh block a read, freed after it, put each
 * read in ASan's quarantine, whose 256 MB count a chunk's own bytes (and
 * 8 for its pointer), not the 32 a one-byte chunk occupies: the targets'
 * one-byte reads (thousands an input) held about 1 GB resident. A parser
 * keeping a pointer into an earlier read would now go unreported; the
 * demo's parsers keep none (their state is a few integers and bytes).
 */
static inline char *fuzz_read(const uint8_t *p, size_t n)
{
	static char *kept[READ_MAX + 1];
	char *b = n <= READ_MAX ? kept[n] : NULL;
	if (!b) {
		b = malloc(n ? n : 1);
		if (!b)
			abort();
		if (n <= READ_MAX)
			kept[n] = b;
	}
	memcpy(b, p, n);
	return b;
}

/* The end of a read: @b must still hold @p's @n bytes (a parser writes nothing). */
static inline void fuzz_read_end(char *b, const uint8_t *p, size_t n)
{
	if (memcmp(b, p, n) != 0)
		FAIL("the read was written to");
	if (n > READ_MAX)
		free(b);
}

/*
 * Cut points for @d (@n bytes) drawn from its own bytes (a hash of them
 * seeds a generator whose low bits give each read's length: 1 to 8 bytes
 * or 1 to READ_MAX), ascending, inside (0, n), into @cuts (room for @n);
 * returns how many.
 */
static inline size_t fuzz_drawn_cuts(const uint8_t *d, size_t n, size_t *cuts)
{
	size_t nc = 0;
	uint32_t x = 2166136261u;
	for (size_t i = 0; i < n; i++)
		x = (x ^ d[i]) * 16777619u;
	for (size_t at = 0;;) {
		x = x * 1103515245u + 12345u;
		at += 1 + ((x >> 16) % ((x >> 8) & 1 ? 8 : READ_MAX));
		if (at >= n)
			break;
		cuts[nc++] = at;
	}
	return nc;
}

#endif
