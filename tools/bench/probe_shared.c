/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/probe_shared.c - the kernel's timer API of
 * <twheel/compat/timer_list.h> through the shared library, as a program of
 * a distribution's package links it (the bench's tables link the static
 * one, where thread-locals and calls inside the library cost less):
 * 2^20 timer_list timers pending, M = 10^7 mod_timer() of a random one to
 * a later jiffy per repetition, 5 repetitions; ns per call, median
 * (min-max). usage: probe_shared   (pin it with taskset)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <twheel/compat/timer_list.h>

#include "common.h"
#include "report.h"

static void fired(struct timer_list *t)
{
	(void)t;
}

int main(void)
{
	enum { N = 1 << 20, M = 10000000, REPS = 5 };
	struct twheel *w = twheel_create(0);
	struct timer_list *t = calloc(N, sizeof(*t));
	double ns[REPS];
	uint64_t x = 42;
	long sum = 0;

	if (!w || !t || twheel_compat_bind_wheel(w) < 0) {
		fprintf(stderr, "probe_shared: set-up failed\n");
		return 1;
	}
	for (size_t i = 0; i < N; i++) {
		timer_setup(&t[i], fired, 0);
		t[i].expires = INITIAL_JIFFIES + 1000 + i % 60000;
		add_timer(&t[i]);
	}
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = clock_ns();

		for (size_t i = 0; i < M; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			sum += mod_timer(&t[x & (N - 1)], INITIAL_JIFFIES + 70000 + r * 1000 + (i >> 20));
		}
		ns[r] = (double)(clock_ns() - t0) / M;
	}
	double med = report_median(ns, REPS); /* sorts ns */

	printf("mod_timer through the shared library: %.2f ns (%.2f-%.2f), N = %d, M = %d, reps %d%s\n",
	       med, ns[0], ns[REPS - 1], N, M, REPS, sum == (long)M * REPS ? "" : " (a call failed)");
	return sum == (long)M * REPS ? 0 : 1;
}
