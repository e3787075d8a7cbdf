/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_ev.c - libev (a 4-ary heap; its default backend, epoll
 * here) as a table of operations (rt.h), "libev": ev_timer with timeouts
 * in seconds (double), re-armed with ev_timer_again (the repeat set to the
 * delay); lateness and expire_cpu call ev_now_update() before every add so
 * the cached loop time does not lag the request; cross-thread scheduling
 * hands over through a mutex-protected queue and an ev_async. And the
 * libev adapter (<twheel/ev.h>): "twheel-ev", "twheel-ev-at".
 */
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>

#include <twheel/ev.h>

#include "rt_host.h"

struct eitem {
	ev_timer w;
	struct rt_qent q; /* xthread: delay in ns */
};

struct evl {
	struct ev_loop *loop;
	struct eitem *it;
	ev_async stop_async, q_async;
	struct rt_queue *queue;
};

static struct evl *cur; /* the one loop that exists */
#define TIMER(i) (&cur->it[i].w)

static void fire_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	if (w->repeat) /* armed by ev_timer_again: one-shot all the same */
		ev_timer_stop(loop, w);
	rt_fired((size_t)((struct eitem *)(void *)w - cur->it));
}

static void stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w, (void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void start(struct ev_loop *loop, ev_timer *w, double s)
{
	ev_timer_set(w, s, 0.);
	ev_timer_start(loop, w);
}

/* Start every timer the producers queued. */
static void q_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct rt_qent *e = rt_queue_take(cur->queue);
	(void)w, (void)revents;
	ev_now_update(loop);
	for (; e; e = e->next) {
		struct eitem *it = (struct eitem *)(void *)((char *)e - offsetof(struct eitem, q));
		start(loop, &it->w, (double)e->delay / 1e9);
	}
}

static void *ev_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct evl *l = rt_calloc(1, sizeof(*l));
	(void)p;
	l->it = rt_calloc(n, sizeof(*l->it));
	l->loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (!l->loop && !(l->loop = ev_loop_new(EVFLAG_AUTO))) {
		snprintf(err, errlen, "ev_loop_new failed");
		free(l->it);
		free(l);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		ev_init(&l->it[i].w, fire_cb);
	ev_async_init(&l->stop_async, stop_cb);
	ev_async_start(l->loop, &l->stop_async);
	ev_async_init(&l->q_async, q_cb);
	ev_async_start(l->loop, &l->q_async);
	l->queue = rt_queue_new();
	return cur = l;
}

static void ev_destroy(void *p)
{
	ev_async_stop(cur->loop, &cur->q_async);
	ev_async_stop(cur->loop, &cur->stop_async);
	ev_loop_destroy(cur->loop);
	rt_queue_free(cur->queue);
	free(cur->it);
	free(p);
	cur = NULL;
}

static void ev_sync(void *p) { ev_now_update(((struct evl *)p)->loop); }

static int ev_add(void *p, size_t i, uint64_t d, uint64_t due)
{
	(void)due; /* ev_timer_start() takes a delay from the loop's time */
	start(((struct evl *)p)->loop, TIMER(i), (double)d / 1e9);
	return 0;
}

static int ev_mod(void *p, size_t i, uint64_t d, uint64_t due)
{
	int was = ev_is_active(TIMER(i)) != 0;
	(void)due;
	TIMER(i)->repeat = (double)d / 1e9;
	ev_timer_again(((struct evl *)p)->loop, TIMER(i));
	return was;
}

static int ev_del(void *p, size_t i)
{
	int was = ev_is_active(TIMER(i)) != 0;
	ev_timer_stop(((struct evl *)p)->loop, TIMER(i));
	return was;
}

static bool ev_pending(void *p, size_t i) { (void)p; return ev_is_active(TIMER(i)) != 0; }
static void ev_poll(void *p) { ev_run(((struct evl *)p)->loop, EVRUN_NOWAIT); }
static void ev_run_all(void *p) { ev_run(((struct evl *)p)->loop, 0); }
static void ev_stop(void *p) { ev_break(((struct evl *)p)->loop, EVBREAK_ALL); }
static void ev_wake_stop(void *p) { ev_async_send(((struct evl *)p)->loop, &((struct evl *)p)->stop_async); }

static int ev_schedule(void *p, size_t i, uint64_t d)
{
	struct evl *l = p;
	l->it[i].q.delay = d;
	rt_queue_push(l->queue, &l->it[i].q);
	ev_async_send(l->loop, &l->q_async);
	return 0;
}

const struct rt_ops rt_libev = {
	.name = "libev",
	.note = { [RT_REARM] = "ev_timer_again on an epoll ev_loop, ev_run(EVRUN_NOWAIT) every 1,000 "
			       "re-arms (real clock, timers at 30 s: none fires); wall ns per re-arm",
		  [RT_ADD_CANCEL] = "ev_timer_set+ev_timer_start, then ev_timer_stop in random order; "
				    "wall ns per pair",
		  [RT_ADD_EXPIRE] = "ev_timer_start, then ev_run until all fired; 1 tick = 100 ns of real "
				    "time (span 6.6 ms); checked: each timer fired exactly once; wall ns "
				    "per timer" },
	.res_ns = 1,
	.create = ev_create, .destroy = ev_destroy, .sync = ev_sync, .add = ev_add, .mod = ev_mod,
	.del = ev_del, .pending = ev_pending, .poll = ev_poll, .run = ev_run_all, .stop = ev_stop,
	.wake_stop = ev_wake_stop, .schedule = ev_schedule,
};

/* ---- the adapter ---- */

static struct ev_loop *evl;

static struct twheel_host *host_open(void)
{
	evl = ev_loop_new(EVFLAG_AUTO);
	return twheel_ev_create(evl, NULL);
}

static void host_pump(void)
{
	ev_run(evl, EVRUN_NOWAIT);
}

static void host_run(void) { ev_run(evl, 0); }
static void host_stop(void) { ev_break(evl, EVBREAK_ALL); }

static void host_close(struct twheel_host *h)
{
	twheel_ev_destroy(h, NULL, NULL);
	ev_loop_destroy(evl);
}

RT_HOST_TABLES(rt_twheel_ev, "twheel-ev");
