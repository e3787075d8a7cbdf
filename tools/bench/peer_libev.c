/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/peer_libev.c - Debian's libev (4-ary heap) on the workloads it
 * can run: rearm (ev_timer_again), add_cancel (ev_timer_start/stop),
 * add_expire (ev_timer_start, then ev_run until all fired, time compressed).
 */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>

#include "peer.h"

#define IMPL "libev"

static uint64_t fired;

static void cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	w->data = (void *)((uintptr_t)w->data + 1); /* fire count of this timer */
	fired++;
}

static struct ev_loop *new_loop(void)
{
	struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (!loop)
		loop = ev_loop_new(EVFLAG_AUTO);
	if (!loop) {
		printf("FAIL all " IMPL " ev_loop_new failed\n");
		exit(1);
	}
	return loop;
}

/* C timers at 30 s; M re-arms with ev_timer_again; ev_run(NOWAIT) every 1,000. */
static int rearm(const struct peer_input *in, double *ns)
{
	uint32_t c = in->n, m = in->m;
	struct ev_loop *loop = new_loop();
	ev_timer *t = calloc(c, sizeof(*t));
	if (!t)
		return -1;
	fired = 0;
	for (uint32_t i = 0; i < c; i++) {
		ev_timer_init(&t[i], cb, 0., BENCH_REARM_DELTA / 1000.0);
		t[i].data = NULL;
		ev_timer_again(loop, &t[i]);
	}
	struct rng r = rng_seed(3);
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			ev_timer_again(loop, &t[rng_below(&r, c)]);
		ev_run(loop, EVRUN_NOWAIT);
	}
	uint64_t t1 = clock_ns();
	int rc = 0;
	for (uint32_t i = 0; i < c; i++)
		if (!ev_is_active(&t[i]))
			rc = -1;
	if (fired)
		rc = -1;
	for (uint32_t i = 0; i < c; i++)
		ev_timer_stop(loop, &t[i]);
	ev_loop_destroy(loop);
	free(t);
	*ns = (double)(t1 - t0) / ((double)blocks * BENCH_REARM_BLOCK);
	return rc;
}

static int add_cancel(const struct peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off, *perm = in->perm;
	struct ev_loop *loop = new_loop();
	ev_timer *t = calloc(n, sizeof(*t));
	if (!t)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		ev_timer_init(&t[i], cb, 0., 0.);
	fired = 0;
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < n; i++) {
		ev_timer_set(&t[i], off[i] / 1000.0, 0.);
		ev_timer_start(loop, &t[i]);
	}
	for (uint32_t i = 0; i < n; i++)
		ev_timer_stop(loop, &t[perm[i]]);
	uint64_t t1 = clock_ns();
	int rc = fired ? -1 : 0;
	for (uint32_t i = 0; i < n; i++)
		if (ev_is_active(&t[i]))
			rc = -1;
	ev_loop_destroy(loop);
	free(t);
	*ns = (double)(t1 - t0) / n;
	return rc;
}

/* 1 tick = 100 ns of real time: the whole span is 6.6 ms, far less than the work. */
static int add_expire(const struct peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off;
	struct ev_loop *loop = new_loop();
	ev_timer *t = calloc(n, sizeof(*t));
	if (!t)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		ev_timer_init(&t[i], cb, 0., 0.);
		t[i].data = NULL;
	}
	fired = 0;
	ev_now_update(loop);
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < n; i++) {
		ev_timer_set(&t[i], off[i] * 1e-7, 0.);
		ev_timer_start(loop, &t[i]);
	}
	ev_run(loop, 0); /* returns when no watcher is active: all fired */
	uint64_t t1 = clock_ns();
	int rc = fired == n ? 0 : -1;
	for (uint32_t i = 0; i < n; i++)
		if ((uintptr_t)t[i].data != 1)
			rc = -1;
	ev_loop_destroy(loop);
	free(t);
	*ns = (double)(t1 - t0) / n;
	return rc;
}

static const struct peer_ops libev = {
	.name = IMPL,
	.rearm = { rearm, "ev_timer_again on an epoll ev_loop, ev_run(EVRUN_NOWAIT) every 1,000 re-arms "
			  "(real clock, timers at 30 s: none fires); wall ns per re-arm",
		   "a timer fired or was not active" },
	.add_cancel = { add_cancel, "ev_timer_set+ev_timer_start, then ev_timer_stop in random order; "
				    "wall ns per pair",
			"a timer fired or stayed active" },
	.add_expire = { add_expire, "ev_timer_start, then ev_run until all fired; 1 tick = 100 ns of real "
				    "time (span 6.6 ms, so the loop is never idle long); checked: each timer "
				    "fired exactly once; wall ns per timer",
			"not every timer fired exactly once" },
};

int main(int argc, char **argv)
{
	const struct peer_ops *ops[] = { &libev };
	return peer_main(argc, argv, ops, 1);
}
