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
 * (its prepare watchers, evwatch_prepare_new(), came in 2.2), so the host
 * tells the adapter when it parks an arm (twheel_host_init_ext()): the
 * first arm parked after a placement makes a placement event active
 * (event_active(), default priority; it allocates nothing), whose callback
 * calls twheel_host_place(). An active event keeps the base from
 * blocking, so the placement comes before the base waits again: one clock
 * reading per iteration instead of one per arm, however the base is run.
 * Deferral is on from creation. twheel_event_loop() (event_base_loop() one
 * iteration at a time, placing before each) is kept: it places the same
 * way, and the placement event then finds nothing.
 *
 * The program may delete the timer event itself (event_del() of every
 * event of the base, through event_base_foreach_event()): libevent tells
 * the adapter nothing, and the pending timers would never fire (the base
 * even returns from its loop, with nothing added). The adapter keeps its
 * own mark of the event it added (@added) and checks it against
 * event_pending() where it runs anyway (each iteration of
 * twheel_event_loop(), the first arm parked after a placement, the
 * placement's callback): an event found deleted is made active, so that
 * the host runs at once and re-arms it for what is pending.
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
	struct event *place; /* made active to place the parked arms by delay */
	struct event_base *base;
	bool placing;        /* place is active */
	bool added;          /* ev was added (host_arm()) and has not fired */
	bool destroyed;      /* by a callback of twheel_event_loop(): it frees @e */
	unsigned looping;    /* twheel_event_loop() calls running */
};

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	((struct twheel_event *)arg)->added = false; /* the run re-arms it */
	twheel_host_run(arg);
}

/*
 * The timer event was added for pending timers but is no longer pending:
 * the program deleted it. Make it active: its run re-arms it.
 */
static void undeleted(struct twheel_event *e)
{
	if (e->added && !event_pending(e->ev, EV_TIMEOUT, NULL)) {
		e->added = false;
		event_active(e->ev, EV_TIMEOUT, 0);
	}
}

static void on_place(evutil_socket_t fd, short what, void *arg)
{
	struct twheel_event *e = arg;

	(void)fd;
	(void)what;
	e->placing = false;
	undeleted(e);
	twheel_host_place(&e->h);
}

static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	struct twheel_event *e = (struct twheel_event *)h;
	uint64_t us = (wake - now) / 1000 + ((wake - now) % 1000 != 0);
	struct timeval tv, b;

	if (wake > now && twheel_host_rt(h)->clock != twheel_rt_clock_monotonic) {
		/* another epoch: as far after a CLOCK_MONOTONIC reading */
		uint64_t mono = twheel_rt_clock_monotonic(NULL);

		wake = wake - now > UINT64_MAX - mono ? UINT64_MAX : mono + (wake - now);
	}
	/* wake == now: due at once, whatever the base's clock reads (a
	 * coarse one lags ours: waiting for it to pass @wake cost 4-8 ms) */
	if (wake > now && event_gettime_monotonic(e->base, &b) == 0) {
		uint64_t wake_us = wake / 1000 + (wake % 1000 != 0);
		uint64_t base_us = (uint64_t)b.tv_sec * 1000000u + (uint64_t)b.tv_usec;

		us = wake_us > base_us ? wake_us - base_us : 0;
	}
	event_base_update_cache_time(e->base);
	tv.tv_sec = (time_t)(us / 1000000u);
	tv.tv_usec = (suseconds_t)(us % 1000000u);
	e->added = event_add(e->ev, &tv) == 0;
}

static void host_stop(struct twheel_host *h)
{
	struct twheel_event *e = (struct twheel_event *)h;

	e->added = false;
	event_del(e->ev);
}

/*
 * The first arm by delay parked after a placement: schedule one, unless
 * one is (the placement event is active: the program may have deleted it,
 * which takes an active event off the base's queue too).
 */
static int host_parked(struct twheel_host *h)
{
	struct twheel_event *e = (struct twheel_event *)h;

	if (!e->placing || !event_pending(e->place, EV_TIMEOUT, NULL)) {
		e->placing = true;
		event_active(e->place, EV_TIMEOUT, 0);
		undeleted(e);
	}
	return 0;
}

static const struct twheel_host_ops_ext event_ops = { { host_arm, host_stop }, host_parked };

struct twheel_host *twheel_event_create(struct event_base *base, const struct twheel_rt *rt)
{
	struct twheel_event *e;

	if (!base) {
		errno = EINVAL;
		return NULL;
	}
	e = (struct twheel_event *)twheel__adapter_new_ext(sizeof(*e), rt, NULL, &event_ops);
	if (!e)
		return NULL;
	e->ev = evtimer_new(base, on_timer, &e->h);
	e->place = e->ev ? event_new(base, -1, 0, on_place, e) : NULL;
	if (!e->place) {
		if (e->ev)
			event_free(e->ev);
		return twheel__adapter_abort(&e->h, ENOMEM);
	}
	e->base = base;
	twheel_host_defer(&e->h, true);
	return &e->h;
}

int twheel_event_loop(struct twheel_host *h, int flags)
{
	struct twheel_event *e = (struct twheel_event *)h;
	long placed;
	int rc;

	if (twheel_host_get_ops(h) != &event_ops.ops ||
	    (flags & ~(EVLOOP_ONCE | EVLOOP_NONBLOCK | EVLOOP_NO_EXIT_ON_EMPTY)))
		return -EINVAL;
	placed = twheel_host_place(h);
	if (placed < 0)
		return (int)placed;
	/* a callback may destroy @h: it is then freed here, not there */
	e->looping++;
	for (;;) {
		undeleted(e);
		rc = event_base_loop(e->base, flags | EVLOOP_ONCE);
		if (rc != 0 || (flags & (EVLOOP_ONCE | EVLOOP_NONBLOCK)) ||
		    event_base_got_exit(e->base) || event_base_got_break(e->base))
			break;
		if (!e->destroyed)
			twheel_host_place(h); /* cannot fail: not in a callback, not shut down */
	}
	e->looping--;
	if (e->destroyed) {
		if (!e->looping)
			free(e);
		return rc;
	}
	/* what the last iteration's callbacks parked: the base may wait elsewhere */
	twheel_host_place(h);
	return rc;
}

int twheel_event_destroy(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg),
			 void *arg)
{
	struct twheel_event *e = (struct twheel_event *)h;
	int rc;

	rc = twheel__adapter_fini(h, &event_ops.ops, fn, arg);
	if (rc)
		return rc;
	event_free(e->place);
	event_free(e->ev);
	if (e->looping)
		e->destroyed = true; /* twheel_event_loop() frees it on return */
	else
		free(e);
	return 0;
}
