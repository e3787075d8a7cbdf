/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/probe_rearm.c - what bounds a re-arm: random re-arms among
 * N = 10^6 pending timers, M = 10^7 per repetition, 5 repetitions, ns per
 * operation, in three forms:
 *   floor   read and write the random node only (its cache miss);
 *   inline  the same plus the fast path's test of the node's slot index;
 *   mod     twheel_mod() to the same expiry (the fast path every time).
 * usage: probe_rearm floor|inline|mod   (pin it with taskset)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/twheel.h>

#include "common.h"

static void cb(struct tw_timer *t)
{
	(void)t;
}

int main(int argc, char **argv)
{
	enum { N = 1000000, M = 10000000, REPS = 5 };
	int mode = argc > 1 ? (!strcmp(argv[1], "floor") ? 1 : !strcmp(argv[1], "inline") ? 2 :
			       !strcmp(argv[1], "mod") ? 0 : -1) : -1;
	struct tw_timer *a = calloc(N, sizeof(*a));
	struct twheel *w = twheel_create(0);
	uint64_t x = 42;

	if (mode < 0 || !a || !w) {
		fprintf(stderr, "usage: probe_rearm floor|inline|mod\n");
		return 2;
	}
	for (size_t i = 0; i < N; i++) {
		tw_timer_init(&a[i], cb);
		twheel_add(w, &a[i], 30000 + i % 1000);
	}
	for (int rep = 0; rep < REPS; rep++) {
		uint64_t t0 = clock_ns();

		for (size_t i = 0; i < M; i++) {
			struct tw_timer *p;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			p = &a[x % N];
			if (mode == 0)
				twheel_mod(w, p, p->expires);
			else if (mode == 1 || p->_idx < 896) /* 896: the wheel's slots */
				p->expires += i & 1;
			else
				twheel_mod(w, p, p->expires);
		}
		printf("%s %.1f ns/op\n", argv[1], (double)(clock_ns() - t0) / M);
	}
	twheel_destroy(w);
	free(a);
	return 0;
}
