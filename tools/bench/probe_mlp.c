/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/probe_mlp.c - what bounds the wheel's rearm and add_cancel in
 * tools/bench, measured: how many independent cache misses a loop keeps in
 * flight depends on how many instructions each iteration holds in the
 * core's window, and a doubly-linked unlink writes two more random lines.
 *
 * Same sizes, PRNG and access patterns as the bench workloads (common.h):
 *
 *   rearm MODE [K]  N = 10^6 timers (40-byte struct tw_timer) pending at
 *                   now + DELTA, M = 10^7 re-arms of random timers, picks
 *                   made a block of 1,000 at a time (as rearm and
 *                   floor_rearm make them), one tick advanced per block:
 *       floor       read the picked node's expiry and write the new one
 *                   (floor_rearm over the wheel's own timers);
 *       pad K       floor plus K independent one-cycle ALU instructions
 *                   per pick (no memory access): the same misses, a longer
 *                   iteration;
 *       mod         twheel_mod() on each pick (the rearm workload).
 *   cancel MODE     N = 10^6 timers added with add_cancel's expiries
 *                   (uniform in [now+1, now+SPAN]), then cancelled in
 *                   add_cancel's random order; the cancels alone are timed:
 *       touch       read and write the timer only (one random line);
 *       unlink      unlink the timer from its slot's list by hand
 *                   (tw_list_del: the timer and both neighbours);
 *       del         twheel_del() (the add_cancel workload's cancels).
 *
 * Prints one line per repetition (5), ns per operation. Pin it with taskset.
 * x86-64 only (the pad is inline assembly).
 * usage: probe_mlp rearm floor|mod | rearm pad K | cancel touch|unlink|del
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/list.h>
#include <twheel/twheel.h>

#include "common.h"

enum { REPS = 5 };

static void cb(struct tw_timer *t)
{
	(void)t;
}

/* Four one-cycle adds on four scratch registers. */
#define ADD4 "add $1, %%r8\n\tadd $1, %%r9\n\tadd $1, %%r10\n\tadd $1, %%r11\n\t"
/* Zero them first: a zero idiom breaks the dependency on the previous pick. */
#define ZERO4 "xor %%r8d, %%r8d\n\txor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d\n\t"
#define PAD(body) __asm__ volatile(body ::: "r8", "r9", "r10", "r11")

/*
 * The node loop of floor_rearm (workload.c), with @pad after each node's
 * read and write: one loop per pad, so that no mode test or indirect jump
 * is added to any of them.
 */
#define FLOOR_LOOP(name, pad)                                                  \
	static long name(struct tw_timer *const *pick, uint64_t e)            \
	{                                                                      \
		long sum = 0;                                                  \
		for (uint32_t i = 0; i < BENCH_REARM_BLOCK; i++) {             \
			struct tw_timer *t = pick[i];                          \
			sum += (long)t->expires;                               \
			t->expires = e;                                        \
			pad;                                                   \
		}                                                              \
		return sum;                                                    \
	}
FLOOR_LOOP(pad0, (void)0)
FLOOR_LOOP(pad8, PAD(ZERO4 ADD4))
FLOOR_LOOP(pad12, PAD(ZERO4 ADD4 ADD4))
FLOOR_LOOP(pad16, PAD(ZERO4 ADD4 ADD4 ADD4))
FLOOR_LOOP(pad20, PAD(ZERO4 ADD4 ADD4 ADD4 ADD4))
FLOOR_LOOP(pad24, PAD(ZERO4 ADD4 ADD4 ADD4 ADD4 ADD4))

/* The node loop of rearm (ops_wheel.c's mod_many). */
static long mod_loop(struct twheel *w, struct tw_timer *const *pick, uint64_t e)
{
	long sum = 0;
	for (uint32_t i = 0; i < BENCH_REARM_BLOCK; i++)
		sum += twheel_mod(w, pick[i], e);
	return sum;
}

/* One rearm repetition; @loop NULL: twheel_mod(). Returns ns per re-arm. */
static double rearm_rep(struct twheel *w, struct tw_timer *a, uint64_t *now, struct rng *r,
			long (*loop)(struct tw_timer *const *, uint64_t), long *check)
{
	const uint32_t n = BENCH_N, blocks = BENCH_M / BENCH_REARM_BLOCK;
	struct tw_timer *pick[BENCH_REARM_BLOCK];
	long sum = 0;
	uint64_t t0 = clock_ns();

	for (uint32_t b = 0; b < blocks; b++) {
		uint64_t e = *now + BENCH_REARM_DELTA;

		for (uint32_t i = 0; i < BENCH_REARM_BLOCK; i++)
			pick[i] = &a[rng_below(r, n)];
		if (loop) {
			sum += loop(pick, e) > 0;
		} else {
			sum += mod_loop(w, pick, e) == BENCH_REARM_BLOCK;
			sum -= twheel_advance(w, *now + 1); /* fires nothing */
		}
		(*now)++;
	}
	*check += sum;
	return (double)(clock_ns() - t0) / (double)(blocks * BENCH_REARM_BLOCK);
}

static int rearm(long (*loop)(struct tw_timer *const *, uint64_t))
{
	struct tw_timer *a = aligned_alloc(64, BENCH_N * sizeof(*a));
	uint64_t now = BENCH_START;
	struct twheel *w = twheel_create(now);
	struct rng r = rng_seed(3);
	long check = 0;

	if (!a || !w)
		return 1;
	for (uint32_t i = 0; i < BENCH_N; i++) {
		tw_timer_init(&a[i], cb);
		twheel_add(w, &a[i], now + BENCH_REARM_DELTA);
	}
	for (int rep = 0; rep < REPS; rep++)
		printf("%.2f\n", rearm_rep(w, a, &now, &r, loop, &check));
	/* every block's re-arms found their timers pending (mod) or read
	 * expiries (the floors); nothing fired */
	if (check != (long)REPS * (BENCH_M / BENCH_REARM_BLOCK) || twheel_count(w) != BENCH_N) {
		fprintf(stderr, "probe_mlp: check failed (%ld)\n", check);
		return 1;
	}
	twheel_destroy(w);
	free(a);
	return 0;
}

/* One cancel repetition; mode 0 touch, 1 unlink, 2 del. Returns ns per cancel. */
static double cancel_rep(int mode, long *check)
{
	struct tw_timer *a = aligned_alloc(64, BENCH_N * sizeof(*a));
	uint32_t *perm = malloc(BENCH_N * sizeof(*perm));
	uint64_t now = BENCH_START;
	struct twheel *w = twheel_create(now);
	struct rng r = rng_seed(1);
	long sum = 0;
	uint64_t t0;
	double ns;

	if (!a || !perm || !w)
		exit(1);
	rng_permutation(perm, BENCH_N, 2);
	for (uint32_t i = 0; i < BENCH_N; i++) {
		tw_timer_init(&a[i], cb);
		twheel_add(w, &a[i], now + 1 + rng_below(&r, BENCH_SPAN));
	}
	t0 = clock_ns();
	if (mode == 0) {
		for (uint32_t i = 0; i < BENCH_N; i++) {
			struct tw_timer *t = &a[perm[i]];

			sum += t->flags;
			t->flags = 1;
		}
	} else if (mode == 1) {
		for (uint32_t i = 0; i < BENCH_N; i++) {
			struct tw_timer *t = &a[perm[i]];

			tw_list_del(&t->entry);
			t->entry.next = t->entry.prev = NULL;
			sum++;
		}
	} else {
		for (uint32_t i = 0; i < BENCH_N; i++)
			sum += twheel_del(w, &a[perm[i]]);
	}
	ns = (double)(clock_ns() - t0) / BENCH_N;
	*check += sum;
	/* touch left every timer linked: take them off; unlink left the
	 * wheel's count and bitmaps stale: its lists are empty, so
	 * twheel_destroy() (a release build) only frees it */
	if (mode == 0)
		for (uint32_t i = 0; i < BENCH_N; i++)
			twheel_del(w, &a[i]);
	twheel_destroy(w);
	free(perm);
	free(a);
	return ns;
}

static int cancel(int mode)
{
	long check = 0;

	for (int rep = 0; rep < REPS; rep++)
		printf("%.2f\n", cancel_rep(mode, &check));
	if (check != (mode == 0 ? 0 : (long)REPS * BENCH_N)) {
		fprintf(stderr, "probe_mlp: check failed (%ld)\n", check);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		long (*loop)(struct tw_timer *const *, uint64_t);
	} pads[] = { { "0", pad0 }, { "8", pad8 }, { "12", pad12 }, { "16", pad16 },
		     { "20", pad20 }, { "24", pad24 } };
	const char *wl = argc > 1 ? argv[1] : "", *m = argc > 2 ? argv[2] : "";

	if (!strcmp(wl, "rearm") && !strcmp(m, "floor"))
		return rearm(pad0);
	if (!strcmp(wl, "rearm") && !strcmp(m, "pad") && argc > 3)
		for (size_t i = 0; i < sizeof(pads) / sizeof(pads[0]); i++)
			if (!strcmp(argv[3], pads[i].name))
				return rearm(pads[i].loop);
	if (!strcmp(wl, "rearm") && !strcmp(m, "mod"))
		return rearm(NULL);
	if (!strcmp(wl, "cancel") && !strcmp(m, "touch"))
		return cancel(0);
	if (!strcmp(wl, "cancel") && !strcmp(m, "unlink"))
		return cancel(1);
	if (!strcmp(wl, "cancel") && !strcmp(m, "del"))
		return cancel(2);
	fprintf(stderr, "usage: probe_mlp rearm floor|mod | rearm pad 0|8|12|16|20|24 | "
			"cancel touch|unlink|del\n");
	return 2;
}
