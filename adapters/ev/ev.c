/* SPDX-License-Identifier: MIT */
/*
 * adapters/ev/ev.c - one ev_timer drives a wheel (see <twheel/ev.h>).
 *
 * libev starts a timer at its cached monotonic time plus the delay and
 * fires it once that time is passed. Reading our clock first and then
 * ev_now_update() makes the cached time >= our reading, so the ev_timer
 * fires no earlier than our reading plus the remaining time. The delay is
 * rounded up to the microsecond so that double rounding cannot pull it
 * below the wake-up time.
 *
 * Arms by delay are parked (twheel_host_defer()) and placed by an
 * ev_prepare, which libev runs just before it computes its wait: one clock
 * reading per iteration instead of one per arm. The prepare has the lowest
 * priority, so that it runs after the prepare watchers of higher ones
 * (whose arms it places too), and does not keep the loop alive
 * (ev_unref()). libev runs the watchers of one priority newest first, so a
 * prepare watcher of the lowest priority started before the adapter's runs
 * after it: the host tells the adapter of the first arm it parks after a
 * placement (twheel_host_init_ext()), and one parked after the prepare ran
 * in this iteration (ev_iteration() has not moved on: libev has not polled
 * since) feeds the prepare again, which libev then invokes before it waits.
 *
 * A loop destroyed before the adapter (ev_loop_destroy()) runs the
 * adapter's ev_cleanup first (it keeps no reference on the loop): that
 * stops the watchers, forgets the loop and calls twheel_host_lost(), so
 * that every later arm is refused and twheel_ev_destroy() hands back the
 * pending timers without touching the freed loop.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "adapter.h"
#include "twheel/ev.h"

struct twheel_ev {
	struct twheel_host h; /* first: a host pointer is an adapter pointer */
	ev_timer timer;
	ev_prepare prepare; /* places the iteration's arms by delay */
	ev_cleanup cleanup; /* the loop is being destroyed */
	struct ev_loop *loop; /* NULL once it was destroyed */
	unsigned int placed_in; /* ev_iteration() when the prepare last ran */
};

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	twheel_host_run(w->data);
}

static void on_prepare(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct twheel_ev *e = w->data;

	(void)revents;
	e->placed_in = ev_iteration(loop);
	twheel_host_place(&e->h);
}

/* ev_loop_destroy(): stop using the loop; the host is lost */
static void on_cleanup(struct ev_loop *loop, ev_cleanup *w, int revents)
{
	struct twheel_ev *e = w->data;

	(void)revents;
	ev_timer_stop(loop, &e->timer);
	ev_ref(loop);
	ev_prepare_stop(loop, &e->prepare);
	ev_cleanup_stop(loop, &e->cleanup);
	e->loop = NULL;
	twheel_host_lost(&e->h); /* -EBUSY from a wheel callback: the ops see it */
}

static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	struct twheel_ev *e = (struct twheel_ev *)h;
	uint64_t us = (wake - now) / 1000 + ((wake - now) % 1000 != 0);

	if (!e->loop) {
		twheel_host_lost(h);
		return;
	}
	ev_timer_stop(e->loop, &e->timer);
	ev_now_update(e->loop);
	ev_timer_set(&e->timer, (ev_tstamp)us * 1e-6, 0.);
	ev_timer_start(e->loop, &e->timer);
}

static void host_stop(struct twheel_host *h)
{
	struct twheel_ev *e = (struct twheel_ev *)h;

	if (e->loop)
		ev_timer_stop(e->loop, &e->timer);
	else
		twheel_host_lost(h);
}

/*
 * The first arm by delay parked after a placement: if the prepare already
 * ran in this iteration, run it again before libev waits (a watcher fed
 * from a callback of the prepare phase is invoked in that phase).
 */
static int host_parked(struct twheel_host *h)
{
	struct twheel_ev *e = (struct twheel_ev *)h;

	if (!e->loop) {
		twheel_host_lost(h);
		return 1;
	}
	if (ev_iteration(e->loop) == e->placed_in)
		ev_feed_event(e->loop, &e->prepare, EV_PREPARE);
	return 0;
}

static const struct twheel_host_ops_ext ev_ops = { { host_arm, host_stop }, host_parked };

struct twheel_host *twheel_ev_create(struct ev_loop *loop, const struct twheel_rt *rt)
{
	struct twheel_ev *e;

	/* a loop ev_loop_destroy() destroyed has no backend (only the default
	 * loop's memory outlives it): nothing would ever run the timer */
	if (!loop || !ev_backend(loop)) {
		errno = EINVAL;
		return NULL;
	}
	e = (struct twheel_ev *)twheel__adapter_new_ext(sizeof(*e), rt, NULL, &ev_ops);
	if (!e)
		return NULL;
	ev_timer_init(&e->timer, on_timer, 0., 0.);
	e->timer.data = &e->h;
	e->loop = loop;
	ev_prepare_init(&e->prepare, on_prepare);
	ev_set_priority(&e->prepare, EV_MINPRI);
	e->prepare.data = e;
	e->placed_in = ev_iteration(loop) - 1; /* not run yet */
	ev_prepare_start(loop, &e->prepare);
	ev_unref(loop);
	ev_cleanup_init(&e->cleanup, on_cleanup);
	e->cleanup.data = e;
	ev_cleanup_start(loop, &e->cleanup); /* takes no reference */
	twheel_host_defer(&e->h, true);
	return &e->h;
}

int twheel_ev_destroy(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg), void *arg)
{
	struct twheel_ev *e = (struct twheel_ev *)h;
	int rc;

	rc = twheel__adapter_fini(h, &ev_ops.ops, fn, arg);
	if (rc)
		return rc;
	if (e->loop) { /* else on_cleanup() stopped them with the loop */
		ev_timer_stop(e->loop, &e->timer);
		ev_ref(e->loop);
		ev_prepare_stop(e->loop, &e->prepare);
		ev_cleanup_stop(e->loop, &e->cleanup);
	}
	free(e);
	return 0;
}
