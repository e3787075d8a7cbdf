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

static int rearm(const struct peer_input *in, double *ns)
{
	uint32_t c = in->n, m = in->m;
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

static int add_cancel(const struct peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off, *perm = in->perm;
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

static const struct peer_ops libuv = {
	.name = IMPL,
	.rearm = { rearm, "uv_timer_start(30000 ms) on an active timer, uv_run(UV_RUN_NOWAIT) every "
			  "1,000 re-arms (real clock, none fires); wall ns per re-arm",
		   "a timer fired or was not active" },
	.add_cancel = { add_cancel, "uv_timer_start (ms), then uv_timer_stop in random order; wall ns per pair",
			"a timer fired or stayed active" },
	.add_expire = { NULL, "libuv timeouts are whole milliseconds: the 65,536 ms span would be 65 s of "
			      "real waiting per rep", NULL },
};

int main(int argc, char **argv)
{
	const struct peer_ops *ops[] = { &libuv };
	return peer_main(argc, argv, ops, 1);
}
