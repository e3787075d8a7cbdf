/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/probe_clock.c - what a clock read does to a random
 * re-arm: a read-modify-write of a random one of 10^6 40-byte nodes,
 * 10^7 per repetition, 5 repetitions, ns per operation:
 *   node    the node only;
 *   clock   a clock_gettime(CLOCK_MONOTONIC) per operation, one hot node;
 *   both    the clock read and the random node (what an adapter's
 *           twheel_host_mod() with a delay did before 1.1);
 *   upper   twheel_rt_now_upper() per operation, one hot node;
 *   upper+node  twheel_rt_now_upper() and the random node (what it does
 *           since: an rdtsc, and a clock read when the reading is stale).
 * usage: probe_clock node|clock|both|upper|upper+node   (pin it with taskset)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/rt.h>

#include "common.h"

struct node {
	uint64_t e, pad[4];
};

int main(int argc, char **argv)
{
	enum { N = 1000000, M = 10000000, REPS = 5 };
	const char *m = argc > 1 ? argv[1] : "";
	int upper = !strcmp(m, "upper") || !strcmp(m, "upper+node");
	int clk = upper || !strcmp(m, "clock") || !strcmp(m, "both");
	int random = !strcmp(m, "node") || !strcmp(m, "both") || !strcmp(m, "upper+node");
	struct twheel_rt rt;
	struct node *a = calloc(N, sizeof(*a));
	uint64_t x = 42;

	if ((!clk && !random) || !a) {
		fprintf(stderr, "usage: probe_clock node|clock|both|upper|upper+node\n");
		return 2;
	}
	twheel_rt_init(&rt, 0, NULL, NULL); /* 1 ms ticks, CLOCK_MONOTONIC */
	for (int rep = 0; rep < REPS; rep++) {
		uint64_t t0 = clock_ns();

		for (size_t i = 0; i < M; i++) {
			struct node *p;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			p = &a[random ? x % N : 0];
			uint64_t t = !clk ? i : upper ? twheel_rt_now_upper(&rt) : clock_ns();
			p->e = t + 30000000000u + (p->e & 1);
		}
		printf("%s %.1f ns/op\n", m, (double)(clock_ns() - t0) / M);
	}
	free(a);
	return 0;
}
