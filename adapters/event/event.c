/* SPDX-License-Identifier: MIT */
/*
 * adapters/event/event.c - one libevent timer event drives a wheel (see
 * <twheel/event.h>).
 *
 * event_add() sets the deadline at libevent's time (the per-iteration
 * cache, or a fresh reading of the base's clock) plus the timeout, and the
 * event fires once the base's clock reaches it. With the default clock,
 * the base's clock is read (B) before the cache is refreshed (C >= B), and
 * the timeout is ceil(wake) - B in microseconds: the deadline
 * C + ceil(wake) - B >= wake on the base's clock, which never runs ahead
 * of CLOCK_MONOTONIC (it is either CLOCK_MONOTONIC or its _COARSE variant,
 * same origin). With an injected clock, the cache is refreshed and the
 * remaining time rounded up to a microsecond.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "adapter.h"
#include "twheel/event.h"

struct twheel_event {
	struct twheel_host h; /* first: a host pointer is an adapter pointer */
	struct event *ev;
	struct event_base *base;
};

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	twheel_host_run(arg);
}

static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	struct twheel_event *e = (struct twheel_event *)h;
	uint64_t us = (wake - now + 999) / 1000;
	struct timeval tv, b;

	if (twheel_host_rt(h)->clock == twheel_rt_clock_monotonic &&
	    event_gettime_monotonic(e->base, &b) == 0) {
		uint64_t wake_us = (wake + 999) / 1000;
		uint64_t base_us = (uint64_t)b.tv_sec * 1000000u + (uint64_t)b.tv_usec;

		us = wake_us > base_us ? wake_us - base_us : 0;
	}
	event_base_update_cache_time(e->base);
	tv.tv_sec = (time_t)(us / 1000000u);
	tv.tv_usec = (suseconds_t)(us % 1000000u);
	event_add(e->ev, &tv);
}

static void host_stop(struct twheel_host *h)
{
	event_del(((struct twheel_event *)h)->ev);
}

static const struct twheel_host_ops event_ops = { host_arm, host_stop };

struct twheel_host *twheel_event_create(struct event_base *base, const struct twheel_rt *rt)
{
	struct twheel_event *e;

	if (!base) {
		errno = EINVAL;
		return NULL;
	}
	e = (struct twheel_event *)twheel__adapter_new(sizeof(*e), rt, &event_ops);
	if (!e)
		return NULL;
	e->ev = evtimer_new(base, on_timer, &e->h);
	if (!e->ev)
		return twheel__adapter_abort(&e->h, ENOMEM);
	e->base = base;
	return &e->h;
}

int twheel_event_destroy(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg),
			 void *arg)
{
	struct twheel_event *e = (struct twheel_event *)h;
	int rc;

	rc = twheel__adapter_fini(h, &event_ops, fn, arg);
	if (rc)
		return rc;
	event_free(e->ev);
	free(e);
	return 0;
}
