/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/peer_libuv.c - Debian's libuv (binary heap) on rearm
 * (uv_timer_start on an active timer) and add_cancel (uv_timer_start/stop).
 * add_expire is skipped: libuv timeouts are whole milliseconds, so the
 * 65,536-tick span cannot be compressed below 65 s of real waiting.
 */
#include <stdlib.h>
#include <uv.h>

#include "peer.h"

#define IMPL "libuv"

static uint64_t fired;

static void cb(uv_timer_t *t)
{
	(void)t;
	fired++;
}

static void close_all(uv_loop_t *loop, uv_timer_t *t, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		uv_close((uv_handle_t *)&t[i], NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
}

static int rearm(uint32_t c, uint32_t m, double *ns)
{
	uv_loop_t loop;
	uv_timer_t *t = calloc(c, sizeof(*t));
	if (!t || uv_loop_init(&loop))
		return -1;
	fired = 0;
	for (uint32_t i = 0; i < c; i++) {
		uv_timer_init(&loop, &t[i]);
		uv_timer_start(&t[i], cb, BENCH_REARM_DELTA, 0);
	}
	struct rng r = rng_seed(3);
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			uv_timer_start(&t[rng_below(&r, c)], cb, BENCH_REARM_DELTA, 0);
		uv_run(&loop, UV_RUN_NOWAIT);
	}
	uint64_t t1 = clock_ns();
	int rc = fired ? -1 : 0;
	for (uint32_t i = 0; i < c; i++)
		if (!uv_is_active((uv_handle_t *)&t[i]))
			rc = -1;
	close_all(&loop, t, c);
	free(t);
	*ns = (double)(t1 - t0) / ((double)blocks * BENCH_REARM_BLOCK);
	return rc;
}

static int add_cancel(uint32_t n, const uint32_t *off, const uint32_t *perm, double *ns)
{
	uv_loop_t loop;
	uv_timer_t *t = calloc(n, sizeof(*t));
	if (!t || uv_loop_init(&loop))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		uv_timer_init(&loop, &t[i]);
	fired = 0;
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < n; i++)
		uv_timer_start(&t[i], cb, off[i], 0);
	for (uint32_t i = 0; i < n; i++)
		uv_timer_stop(&t[perm[i]]);
	uint64_t t1 = clock_ns();
	int rc = fired ? -1 : 0;
	for (uint32_t i = 0; i < n; i++)
		if (uv_is_active((uv_handle_t *)&t[i]))
			rc = -1;
	close_all(&loop, t, n);
	free(t);
	*ns = (double)(t1 - t0) / n;
	return rc;
}

int main(int argc, char **argv)
{
	struct peer_args a;
	peer_parse(argc, argv, &a);
	double v[64];
	if (peer_want(&a, "rearm")) {
		int ok = 1;
		for (uint32_t i = 0; i < a.reps && ok; i++)
			ok = !rearm(a.n, a.m, &v[i]);
		if (ok) {
			peer_result("rearm", IMPL, a.n, "ns/op", v, (int)a.reps);
			peer_note("rearm", IMPL, "uv_timer_start(30000 ms) on an active timer, uv_run(UV_RUN_NOWAIT) "
						 "every 1,000 re-arms (real clock, none fires); wall ns per re-arm");
		} else {
			peer_fail("rearm", IMPL, "a timer fired or was not active");
		}
	}
	if (peer_want(&a, "add_cancel")) {
		uint32_t *off = peer_offsets(a.n), *perm = peer_perm(a.n);
		int ok = 1;
		for (uint32_t i = 0; i < a.reps && ok; i++)
			ok = !add_cancel(a.n, off, perm, &v[i]);
		if (ok) {
			peer_result("add_cancel", IMPL, a.n, "ns/op", v, (int)a.reps);
			peer_note("add_cancel", IMPL, "uv_timer_start (ms), then uv_timer_stop in random order; wall ns per pair");
		} else {
			peer_fail("add_cancel", IMPL, "a timer fired or stayed active");
		}
		free(off);
		free(perm);
	}
	if (peer_want(&a, "add_expire"))
		peer_skip("add_expire", IMPL, "libuv timeouts are whole milliseconds: the 65,536 ms span "
					      "would be 65 s of real waiting per rep");
	return 0;
}
