/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_uv.c - libuv (a binary heap) as a table of operations
 * (rt.h), "libuv": uv_timer_t with millisecond timeouts, re-armed by
 * uv_timer_start() on an active timer; lateness and expire_cpu refresh the
 * loop time (uv_update_time) before every add so that the cached loop time
 * does not lag the request; cross-thread scheduling hands over through a
 * mutex-protected queue and a uv_async_t, the idiomatic way. And the
 * libuv adapter (<twheel/uv.h>) on the same loop: "twheel-uv", "twheel-uv-at".
 */
#include <stdio.h>
#include <stdlib.h>

#include <twheel/uv.h>
#include <uv.h>

#include "rt_host.h"

struct uitem {
	uv_timer_t h;
	struct rt_qent q; /* xthread: delay in ms */
};

struct uvl {
	uv_loop_t loop;
	struct uitem *it;
	uv_async_t stop_async, q_async;
	struct rt_queue *queue;
};

static struct uvl *cur; /* the one loop that exists */
#define TIMER(i) (&cur->it[i].h)

static void fire_cb(uv_timer_t *h)
{
	rt_fired((size_t)((struct uitem *)(void *)h - cur->it));
}

static void stop_cb(uv_async_t *a)
{
	uv_stop(a->loop);
}

/* Start every timer the producers queued. */
static void q_cb(uv_async_t *a)
{
	struct rt_qent *e = rt_queue_take(cur->queue);
	uv_update_time(a->loop);
	for (; e; e = e->next) {
		struct uitem *it = (struct uitem *)(void *)((char *)e - offsetof(struct uitem, q));
		uv_timer_start(&it->h, fire_cb, e->delay, 0);
	}
}

static void *uv_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct uvl *l = rt_calloc(1, sizeof(*l));
	(void)p;
	l->it = rt_calloc(n, sizeof(*l->it));
	int ret = uv_loop_init(&l->loop);
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
	l->queue = rt_queue_new();
	return cur = l;
}

static void close_one(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* Close what is still open, let the loop run the close callbacks. */
static void uv_destroy(void *p)
{
	uv_walk(&cur->loop, close_one, NULL);
	uv_run(&cur->loop, UV_RUN_DEFAULT);
	uv_loop_close(&cur->loop);
	rt_queue_free(cur->queue);
	free(cur->it);
	free(p);
	cur = NULL;
}

static void uv_sync(void *p) { uv_update_time(&((struct uvl *)p)->loop); }

static int uv_add(void *p, size_t i, uint64_t d, uint64_t due)
{
	(void)p, (void)due; /* uv_timer_start() takes a timeout from the loop's time */
	return uv_timer_start(TIMER(i), fire_cb, d / NS_PER_MS, 0);
}

static int uv_mod(void *p, size_t i, uint64_t d, uint64_t due)
{
	int was = uv_is_active((uv_handle_t *)TIMER(i)) != 0;
	int r = uv_add(p, i, d, due);
	return r < 0 ? r : was;
}

static int uv_del(void *p, size_t i)
{
	int was = uv_is_active((uv_handle_t *)TIMER(i)) != 0;
	(void)p;
	uv_timer_stop(TIMER(i));
	return was;
}

static bool uv_pending(void *p, size_t i) { (void)p; return uv_is_active((uv_handle_t *)TIMER(i)); }
static void uv_poll(void *p) { uv_run(&((struct uvl *)p)->loop, UV_RUN_NOWAIT); }
static void uv_run_all(void *p) { uv_run(&((struct uvl *)p)->loop, UV_RUN_DEFAULT); }
static void uv_stop_cb(void *p) { uv_stop(&((struct uvl *)p)->loop); }
static void uv_wake_stop(void *p) { uv_async_send(&((struct uvl *)p)->stop_async); }

static int uv_schedule(void *p, size_t i, uint64_t d)
{
	struct uvl *l = p;
	l->it[i].q.delay = d / NS_PER_MS;
	rt_queue_push(l->queue, &l->it[i].q);
	uv_async_send(&l->q_async);
	return 0;
}

const struct rt_ops rt_libuv = {
	.name = "libuv",
	.note = { [RT_REARM] = "uv_timer_start(30000 ms) on an active timer, uv_run(UV_RUN_NOWAIT) every "
			       "1,000 re-arms (real clock, none fires); wall ns per re-arm",
		  [RT_ADD_CANCEL] = "uv_timer_start (ms), then uv_timer_stop in random order; wall ns per pair",
		  [RT_ADD_EXPIRE] = "libuv timeouts are whole milliseconds: the 65,536 ms span would be 65 s "
				    "of real waiting per rep" },
	.res_ns = NS_PER_MS,
	.create = uv_create, .destroy = uv_destroy, .sync = uv_sync, .add = uv_add, .mod = uv_mod,
	.del = uv_del, .pending = uv_pending, .poll = uv_poll, .run = uv_run_all, .stop = uv_stop_cb,
	.wake_stop = uv_wake_stop, .schedule = uv_schedule,
};

/* ---- the adapter ---- */

static uv_loop_t uvl;

static struct twheel_host *host_open(void)
{
	uv_loop_init(&uvl);
	return twheel_uv_create(&uvl, NULL);
}

static void host_pump(void)
{
	uv_run(&uvl, UV_RUN_NOWAIT);
}

static void host_run(void) { uv_run(&uvl, UV_RUN_DEFAULT); }
static void host_stop(void) { uv_stop(&uvl); }

static void host_close(struct twheel_host *h)
{
	twheel_uv_destroy(h, NULL, NULL);
	uv_run(&uvl, UV_RUN_DEFAULT);
	uv_loop_close(&uvl);
}

RT_HOST_TABLES(rt_twheel_uv, "twheel-uv");
