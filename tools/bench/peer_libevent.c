/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/peer_libevent.c - Debian's libevent 2.1 (binary min-heap) on
 * rearm (event_add on a pending timer), add_cancel (event_add/event_del) and
 * add_expire (time compressed: 1 tick = 1 us); plus rearm with libevent's
 * "common timeout" queues, what a libevent user would pick for many equal
 * idle timeouts.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

static uint64_t fired;

static void cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	uint8_t *once = arg;
	(*once)++;
	fired++;
}

/* A base and n timer events on it: every workload's untimed set-up and tear-down. */
struct evs {
	struct event_base *base;
	char *mem;
	size_t sz;
	uint8_t *count; /* fires per timer */
};

static struct event *ev_at(struct evs *e, uint32_t i)
{
	return (struct event *)(void *)(e->mem + (size_t)i * e->sz);
}

static struct event_base *new_base(void)
{
	struct event_config *cfg = event_config_new();
	event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
	struct event_base *b = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (!b) {
		printf("FAIL all libevent event_base_new failed\n");
		exit(1);
	}
	return b;
}

/* A new base and n timer events on it; -1 if out of memory. */
static int evs_new(struct evs *e, uint32_t n)
{
	struct event_base *base = new_base();

	e->base = base;
	e->sz = (event_get_struct_event_size() + 15) & ~(size_t)15;
	e->mem = calloc(n, e->sz);
	e->count = calloc(n, 1);
	if (!e->mem || !e->count)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (event_assign(ev_at(e, i), base, -1, 0, cb, &e->count[i]))
			return -1;
	return 0;
}

static void evs_free(struct evs *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		event_del(ev_at(e, i));
	free(e->mem);
	free(e->count);
	event_base_free(e->base);
}

static int rearm(const struct peer_input *in, int common, double *ns)
{
	uint32_t c = in->n, m = in->m;
	struct evs e;
	if (evs_new(&e, c))
		return -1;
	struct event_base *base = e.base;
	struct timeval tv30 = { BENCH_REARM_DELTA / 1000, 0 };
	const struct timeval *tv = common ? event_base_init_common_timeout(base, &tv30) : &tv30;
	fired = 0;
	for (uint32_t i = 0; i < c; i++)
		event_add(ev_at(&e, i), tv);
	struct rng r = rng_seed(3);
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			event_add(ev_at(&e, rng_below(&r, c)), tv);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	uint64_t t1 = clock_ns();
	int rc = fired ? -1 : 0;
	for (uint32_t i = 0; i < c; i++)
		if (!event_pending(ev_at(&e, i), EV_TIMEOUT, NULL))
			rc = -1;
	evs_free(&e, c);
	*ns = (double)(t1 - t0) / ((double)blocks * BENCH_REARM_BLOCK);
	return rc;
}

static int add_cancel(const struct peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off, *perm = in->perm;
	struct evs e;
	if (evs_new(&e, n))
		return -1;
	fired = 0;
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < n; i++) {
		struct timeval tv = { off[i] / 1000, (off[i] % 1000) * 1000 };
		event_add(ev_at(&e, i), &tv);
	}
	for (uint32_t i = 0; i < n; i++)
		event_del(ev_at(&e, perm[i]));
	uint64_t t1 = clock_ns();
	int rc = fired ? -1 : 0;
	for (uint32_t i = 0; i < n; i++)
		if (event_pending(ev_at(&e, i), EV_TIMEOUT, NULL))
			rc = -1;
	evs_free(&e, n);
	*ns = (double)(t1 - t0) / n;
	return rc;
}

static int add_expire(const struct peer_input *in, double *ns)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off;
	struct evs e;
	if (evs_new(&e, n))
		return -1;
	struct event_base *base = e.base;
	fired = 0;
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < n; i++) {
		struct timeval tv = { 0, (suseconds_t)off[i] }; /* 1 tick = 1 us */
		event_add(ev_at(&e, i), &tv);
	}
	event_base_dispatch(base); /* returns when no event is pending */
	uint64_t t1 = clock_ns();
	int rc = fired == n ? 0 : -1;
	for (uint32_t i = 0; i < n; i++)
		if (e.count[i] != 1)
			rc = -1;
	evs_free(&e, n);
	*ns = (double)(t1 - t0) / n;
	return rc;
}

static int rearm_heap(const struct peer_input *in, double *ns)
{
	return rearm(in, 0, ns);
}

static int rearm_common(const struct peer_input *in, double *ns)
{
	return rearm(in, 1, ns);
}

static const struct peer_ops libevent = {
	.name = "libevent",
	.rearm = { rearm_heap, "event_add(30 s) on a pending timer (heap adjust), event_base_loop(NONBLOCK) "
			       "every 1,000 re-arms (real clock, none fires); wall ns per re-arm",
		   "a timer fired or was not pending" },
	.add_cancel = { add_cancel, "event_add (ms offsets), then event_del in random order; wall ns per pair",
			"a timer fired or stayed pending" },
	.add_expire = { add_expire, "event_add, then event_base_dispatch until all fired; 1 tick = 1 us of "
				    "real time (span 65.5 ms); checked: each timer fired exactly once; wall "
				    "ns per timer",
			"not every timer fired exactly once" },
};

/* libevent's "common timeout" queues: only rearm, where equal timeouts are the point. */
static const struct peer_ops libevent_common = {
	.name = "libevent-common",
	.rearm = { rearm_common, "event_add with a 30 s common timeout (event_base_init_common_timeout: a "
				 "FIFO per duration, not the heap), event_base_loop(NONBLOCK) every 1,000 "
				 "re-arms; wall ns per re-arm",
		   "a timer fired or was not pending" },
};

int main(int argc, char **argv)
{
	const struct peer_ops *ops[] = { &libevent, &libevent_common };
	return peer_main(argc, argv, ops, 2);
}
