/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_event.c - libevent 2.1 (a binary min-heap) as tables of
 * operations (rt.h): "libevent", timer events re-armed with event_add() on
 * a pending event; "libevent-common", rearm with libevent's "common
 * timeout" queues (one FIFO per duration), what a libevent user would pick
 * for many equal idle timeouts. And the libevent adapter
 * (<twheel/event.h>): "twheel-event", "twheel-event-at". No cross-thread
 * table: the base is made without locks, as a one-thread program's is.
 */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>

#include <twheel/event.h>

#include "rt_host.h"

struct evs {
	struct event_base *base;
	char *mem; /* n events of sz bytes */
	size_t sz;
	bool common;
	struct timeval common_tv; /* its duration, and the tag libevent gave it */
	const struct timeval *common_tag;
};

static struct evs *cur; /* the one base that exists */

static struct event *ev_at(size_t i)
{
	return (struct event *)(void *)(cur->mem + i * cur->sz);
}

static void cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what;
	rt_fired((size_t)(uintptr_t)arg);
}

static void *event_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct event_config *cfg = event_config_new();
	struct evs *e = rt_calloc(1, sizeof(*e));
	(void)p;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
	e->base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (!e->base) {
		snprintf(err, errlen, "event_base_new failed");
		free(e);
		return NULL;
	}
	e->sz = (event_get_struct_event_size() + 15) & ~(size_t)15;
	e->mem = rt_calloc(n, e->sz);
	cur = e;
	for (size_t i = 0; i < n; i++)
		event_assign(ev_at(i), e->base, -1, 0, cb, (void *)(uintptr_t)i);
	return e;
}

static void *event_common_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct evs *e = event_create(p, n, err, errlen);
	if (e)
		e->common = true;
	return e;
}

static void event_destroy(void *p)
{
	event_base_free(cur->base); /* pending events are removed with it */
	free(cur->mem);
	free(p);
	cur = NULL;
}

/* The timeval of @d; with a common table, the common timeout's tag for it. */
static const struct timeval *tv_of(uint64_t d, struct timeval *tv)
{
	tv->tv_sec = (time_t)(d / 1000000000u);
	tv->tv_usec = (suseconds_t)(d % 1000000000u / 1000u);
	if (!cur->common)
		return tv;
	if (!cur->common_tag || cur->common_tv.tv_sec != tv->tv_sec || cur->common_tv.tv_usec != tv->tv_usec) {
		cur->common_tv = *tv;
		cur->common_tag = event_base_init_common_timeout(cur->base, tv);
	}
	return cur->common_tag;
}

static int event_add_tv(void *p, size_t i, uint64_t d, uint64_t due)
{
	struct timeval tv;
	(void)p, (void)due;
	return event_add(ev_at(i), tv_of(d, &tv));
}

static int event_mod(void *p, size_t i, uint64_t d, uint64_t due)
{
	int was = event_pending(ev_at(i), EV_TIMEOUT, NULL) != 0;
	int r = event_add_tv(p, i, d, due);
	return r < 0 ? r : was;
}

static int event_del_one(void *p, size_t i)
{
	int was = event_pending(ev_at(i), EV_TIMEOUT, NULL) != 0;
	(void)p;
	event_del(ev_at(i));
	return was;
}

static bool event_is_pending(void *p, size_t i) { (void)p; return event_pending(ev_at(i), EV_TIMEOUT, NULL); }
static void event_poll(void *p) { (void)p; event_base_loop(cur->base, EVLOOP_NONBLOCK); }
static void event_run(void *p) { (void)p; event_base_loop(cur->base, 0); }
static void event_stop(void *p) { (void)p; event_base_loopbreak(cur->base); }

const struct rt_ops rt_libevent = {
	.name = "libevent",
	.note = { [RT_REARM] = "event_add(30 s) on a pending timer (heap adjust), event_base_loop(NONBLOCK) "
			       "every 1,000 re-arms (real clock, none fires); wall ns per re-arm",
		  [RT_ADD_CANCEL] = "event_add (ms offsets), then event_del in random order; wall ns per pair",
		  [RT_ADD_EXPIRE] = "event_add, then the loop until all fired; 1 tick = 1 us of real time "
				    "(span 65.5 ms); checked: each timer fired exactly once; wall ns per timer",
		  [RT_IDLE] = "a base without locks: no stop from another thread",
		  [RT_XTHREAD] = "a base without locks: no add from another thread" },
	.res_ns = 1000,
	.create = event_create, .destroy = event_destroy, .add = event_add_tv, .mod = event_mod,
	.del = event_del_one, .pending = event_is_pending, .poll = event_poll, .run = event_run,
	.stop = event_stop,
};

const struct rt_ops rt_libevent_common = {
	.name = "libevent-common",
	.note = { [RT_REARM] = "event_add with a 30 s common timeout (event_base_init_common_timeout: a "
			       "FIFO per duration, not the heap), event_base_loop(NONBLOCK) every 1,000 "
			       "re-arms; wall ns per re-arm" },
	.only = 1u << RT_REARM,
	.res_ns = 1000,
	.create = event_common_create, .destroy = event_destroy, .add = event_add_tv, .mod = event_mod,
	.del = event_del_one, .pending = event_is_pending, .poll = event_poll,
};

/* ---- the adapter ---- */

static struct event_base *base;
static struct twheel_host *host; /* run through twheel_event_loop(): it places */

/* A program that runs its base through twheel_event_loop() from the start: run it once. */
static struct twheel_host *host_open(void)
{
	base = event_base_new();
	host = twheel_event_create(base, NULL);
	if (host)
		twheel_event_loop(host, EVLOOP_NONBLOCK);
	return host;
}

static void host_pump(void)
{
	twheel_event_loop(host, EVLOOP_NONBLOCK);
}

static void host_run(void) { twheel_event_loop(host, 0); }
static void host_stop(void) { event_base_loopbreak(base); }

static void host_close(struct twheel_host *h)
{
	twheel_event_destroy(h, NULL, NULL);
	event_base_free(base);
}

RT_HOST_TABLES(rt_twheel_event, "twheel-event");
