/* SPDX-License-Identifier: MIT */
/*
 * tools/loopbench/ops_uv.c - libuv as a table of operations. Timers are
 * uv_timer_t with millisecond timeouts; the loop time is refreshed
 * (uv_update_time) before every add so that the cached loop time does not
 * lag the request. Cross-thread scheduling uses the idiomatic uv_async_t +
 * mutex-protected queue.
 */
#include <stdio.h>
#include <stdlib.h>

#include <uv.h>

#include "loopbench.h"

struct uitem {
	uv_timer_t h;
	struct lb_qent q; /* xthread: delay in ms */
};

struct uvl {
	uv_loop_t loop;
	struct uitem *it;
	uv_async_t stop_async, q_async;
	struct lb_queue queue;
};

static struct uvl *cur; /* the one loop that exists */

static void fire_cb(uv_timer_t *h)
{
	lb_fired((size_t)((struct uitem *)h - cur->it));
}

static void stop_cb(uv_async_t *a)
{
	uv_stop(a->loop);
}

/* Start every timer the producers queued. */
static void q_cb(uv_async_t *a)
{
	struct lb_qent *e = lb_queue_take(&cur->queue);

	uv_update_time(a->loop);
	for (; e; e = e->next) {
		struct uitem *it = (struct uitem *)((char *)e - offsetof(struct uitem, q));

		uv_timer_start(&it->h, fire_cb, e->delay, 0);
	}
}

static void *lbuv_create(const struct lb_params *p, size_t n, char *err, size_t errlen)
{
	struct uvl *l = lb_calloc(1, sizeof(*l));
	int ret;

	(void)p;
	l->it = lb_calloc(n, sizeof(*l->it));
	ret = uv_loop_init(&l->loop);
	if (ret) {
		snprintf(err, errlen, "uv_loop_init: %s", uv_strerror(ret));
		free(l->it);
		free(l);
		return NULL;
	}
	uv_async_init(&l->loop, &l->stop_async, stop_cb);
	uv_async_init(&l->loop, &l->q_async, q_cb);
	for (size_t i = 0; i < n; i++)
		uv_timer_init(&l->loop, &l->it[i].h);
	lb_queue_init(&l->queue);
	cur = l;
	return l;
}

static void lbuv_add(void *p, size_t i, uint64_t delay_ns, uint64_t due_ns)
{
	struct uvl *l = p;
	(void)due_ns; /* uv_timer_start() takes a timeout from the loop's time */

	uv_update_time(&l->loop);
	uv_timer_start(&l->it[i].h, fire_cb, delay_ns / NS_PER_MS, 0);
}

static int lbuv_schedule(void *p, size_t i, uint64_t delay_ns)
{
	struct uvl *l = p;

	l->it[i].q.delay = delay_ns / NS_PER_MS;
	lb_queue_push(&l->queue, &l->it[i].q);
	uv_async_send(&l->q_async);
	return 0;
}

static void lbuv_run(void *p) { uv_run(&((struct uvl *)p)->loop, UV_RUN_DEFAULT); }
static void lbuv_stop(void *p) { uv_stop(&((struct uvl *)p)->loop); }
static void lbuv_wake_stop(void *p) { uv_async_send(&((struct uvl *)p)->stop_async); }

static void close_one(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* Close what is still open, let the loop run the close callbacks. */
static void lbuv_destroy(void *p)
{
	struct uvl *l = p;

	uv_walk(&l->loop, close_one, NULL);
	uv_run(&l->loop, UV_RUN_DEFAULT);
	uv_loop_close(&l->loop);
	free(l->it);
	free(l);
	cur = NULL;
}

const struct lb_ops lb_libuv = {
	.name = "libuv",
	.create = lbuv_create,
	.add = lbuv_add,
	.schedule = lbuv_schedule,
	.run = lbuv_run,
	.stop = lbuv_stop,
	.wake_stop = lbuv_wake_stop,
	.destroy = lbuv_destroy,
	.never_early = false,
};
