/* SPDX-License-Identifier: MIT */
/*
 * adapters/event/event.c - one libevent timer event drives a wheel (see
 * <twheel/event.h>).
 *
 * event_add() sets the deadline at libevent's time (the per-iteration
 * cache, or a fresh reading of the base's clock) plus the timeout, and the
 * event fires once the base's clock reaches it. The base's clock is read
 * (B) before the cache is refreshed (C >= B), and the timeout is
 * ceil(wake) - B in microseconds: the deadline C + ceil(wake) - B >= wake
 * on the base's clock, which never runs ahead of CLOCK_MONOTONIC (it is
 * either CLOCK_MONOTONIC or its _COARSE variant, same origin). With an
 * injected clock, @wake is first moved to the CLOCK_MONOTONIC time that
 * lies as far after a fresh reading (taken after the injected clock's
 * @now): counting the remaining time from the base's clock instead would
 * start from a coarse time up to a few ms old, and fire that much early.
 *
 * Arms by delay. libevent 2.1 has no hook that runs before the base waits
 * (its prepare watchers, evwatch_prepare_new(), came in 2.2), and the host
 * does not tell an adapter when it parks an arm, so no event can be made
 * active for exactly the iterations that parked something: an event kept
 * active would stop the base from ever blocking. So the adapter wraps the
 * loop instead: twheel_event_loop() runs event_base_loop() one iteration
 * at a time (EVLOOP_ONCE: wait for events, run every callback made
 * active, return) and places the parked delays (twheel_host_place())
 * before each, that is, before the base waits again: one clock reading
 * per iteration instead of one per arm. Its first call turns
 * twheel_host_defer() on; a program that runs the base itself keeps the
 * per-arm bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "adapter.h"
#include "twheel/event.h"

struct twheel_event {
	struct twheel_host h; /* first: a host pointer is an adapter pointer */
	struct event *ev;
	struct event_base *base;
	bool defer; /* twheel_event_loop() turned twheel_host_defer() on */
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
	uint64_t us = (wake - now) / 1000 + ((wake - now) % 1000 != 0);
	struct timeval tv, b;

	if (twheel_host_rt(h)->clock != twheel_rt_clock_monotonic) {
		/* another epoch: as far after a CLOCK_MONOTONIC reading */
		uint64_t mono = twheel_rt_clock_monotonic(NULL);

		wake = wake - now > UINT64_MAX - mono ? UINT64_MAX : mono + (wake - now);
	}
	if (event_gettime_monotonic(e->base, &b) == 0) {
		uint64_t wake_us = wake / 1000 + (wake % 1000 != 0);
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

int twheel_event_loop(struct twheel_host *h, int flags)
{
	struct twheel_event *e = (struct twheel_event *)h;
	long placed;
	int rc;

	if (twheel_host_get_ops(h) != &event_ops ||
	    (flags & ~(EVLOOP_ONCE | EVLOOP_NONBLOCK | EVLOOP_NO_EXIT_ON_EMPTY)))
		return -EINVAL;
	if (!e->defer) {
		rc = twheel_host_defer(h, true);
		if (rc)
			return rc;
		e->defer = true;
	}
	for (;;) {
		placed = twheel_host_place(h);
		if (placed < 0)
			return (int)placed;
		rc = event_base_loop(e->base, flags | EVLOOP_ONCE);
		if (rc != 0 || (flags & (EVLOOP_ONCE | EVLOOP_NONBLOCK)) ||
		    event_base_got_exit(e->base) || event_base_got_break(e->base))
			break;
	}
	/* what the last iteration's callbacks parked: the base may wait elsewhere */
	placed = twheel_host_place(h);
	if (placed < 0)
		return (int)placed;
	return rc;
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
