/* SPDX-License-Identifier: MIT */
/*
 * tools/loopbench/ops_ev.c - libev (its default backend, epoll here) as a
 * table of operations. Timers are ev_timer with timeouts in seconds
 * (double); ev_now_update() before every add so the cached loop time does
 * not lag the request. Cross-thread scheduling uses the idiomatic ev_async +
 * mutex-protected queue.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ev.h>

#include "loopbench.h"

struct eitem {
	ev_timer w;
	struct lb_qent q; /* xthread: delay in ns */
};

struct evl {
	struct ev_loop *loop;
	struct eitem *it;
	ev_async stop_async, q_async;
	struct lb_queue queue;
};

static struct evl *cur; /* the one loop that exists */

static void fire_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	lb_fired((size_t)((struct eitem *)w - cur->it));
}

static void stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* Start every timer the producers queued. */
static void q_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	struct lb_qent *e = lb_queue_take(&cur->queue);

	ev_now_update(loop);
	for (; e; e = e->next) {
		struct eitem *it = (struct eitem *)((char *)e - offsetof(struct eitem, q));

		ev_timer_set(&it->w, (double)e->delay / 1e9, 0.);
		ev_timer_start(loop, &it->w);
	}
}

static void *lbev_create(const struct lb_params *p, size_t n, char *err, size_t errlen)
{
	struct evl *l = lb_calloc(1, sizeof(*l));

	(void)p;
	l->it = lb_calloc(n, sizeof(*l->it));
	l->loop = ev_loop_new(EVFLAG_AUTO);
	if (!l->loop) {
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
	lb_queue_init(&l->queue);
	cur = l;
	return l;
}

static void lbev_add(void *p, size_t i, uint64_t delay_ns, uint64_t due_ns)
{
	struct evl *l = p;
	(void)due_ns; /* ev_timer_start() takes a delay from the loop's time */

	ev_now_update(l->loop);
	ev_timer_set(&l->it[i].w, (double)delay_ns / 1e9, 0.);
	ev_timer_start(l->loop, &l->it[i].w);
}

static int lbev_schedule(void *p, size_t i, uint64_t delay_ns)
{
	struct evl *l = p;

	l->it[i].q.delay = delay_ns;
	lb_queue_push(&l->queue, &l->it[i].q);
	ev_async_send(l->loop, &l->q_async);
	return 0;
}

static void lbev_run(void *p) { ev_run(((struct evl *)p)->loop, 0); }
static void lbev_stop(void *p) { ev_break(((struct evl *)p)->loop, EVBREAK_ALL); }

static void lbev_wake_stop(void *p)
{
	struct evl *l = p;

	ev_async_send(l->loop, &l->stop_async);
}

static void lbev_destroy(void *p)
{
	struct evl *l = p;

	ev_async_stop(l->loop, &l->q_async);
	ev_async_stop(l->loop, &l->stop_async);
	ev_loop_destroy(l->loop);
	free(l->it);
	free(l);
	cur = NULL;
}

const struct lb_ops lb_libev = {
	.name = "libev",
	.create = lbev_create,
	.add = lbev_add,
	.schedule = lbev_schedule,
	.run = lbev_run,
	.stop = lbev_stop,
	.wake_stop = lbev_wake_stop,
	.destroy = lbev_destroy,
	.never_early = false,
};
