/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_host.h - the half of a host-loop adapter's tables that
 * every host shares: libtwheel driven through <twheel/host.h> by one host
 * timer, the way an application on that loop would use it. A host's file
 * (rt_uv.c, rt_ev.c, rt_event.c, rt_epoll.c, rt_asio_host.c) defines
 * host_open(), host_pump() (one iteration without blocking), host_run()
 * (until host_stop()), host_stop(), host_close() for its loop, includes this and
 * says RT_HOST_TABLES(var, "twheel-HOST"): two tables, "twheel-HOST"
 * arming by delay (twheel_host_add/mod: every adapter defers them, parked
 * and placed from one clock reading taken after them, before the loop
 * waits, so a timer never counts from an old time) and
 * "twheel-HOST-at" by deadline,
 * the harness's reading plus the delay (twheel_host_add_at/mod_at: one
 * reading per loop iteration, as the hosts' own timers count from their
 * cached time).
 */
#ifndef BENCH_RT_HOST_H
#define BENCH_RT_HOST_H

#include <stdio.h>
#include <stdlib.h>

#include <twheel/host.h>

#include "rt.h"

static struct twheel_host *host_open(void);
static void host_pump(void);
static void host_run(void);
static void host_stop(void);
static void host_close(struct twheel_host *h);

struct rt_adapter {
	struct twheel_host *h;
	struct tw_timer *t;
};

static void adapter_fire(struct tw_timer *t);
static struct rt_adapter *adapter_cur; /* the one that exists */

static void adapter_fire(struct tw_timer *t)
{
	rt_fired((size_t)(t - adapter_cur->t));
}

static void *adapter_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct rt_adapter *a = rt_calloc(1, sizeof(*a));
	(void)p;
	a->t = rt_calloc(n, sizeof(*a->t));
	for (size_t i = 0; i < n; i++)
		tw_timer_init(&a->t[i], adapter_fire);
	a->h = host_open();
	if (!a->h) {
		snprintf(err, errlen, "the host or its adapter could not be created");
		free(a->t);
		free(a);
		return NULL;
	}
	return adapter_cur = a;
}

static void adapter_destroy(void *l)
{
	struct rt_adapter *a = (struct rt_adapter *)l;
	host_close(a->h);
	free(a->t);
	free(a);
	adapter_cur = NULL;
}

#define ADAPTER(l) ((struct rt_adapter *)(l))
static int adapter_add(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)due;
	return twheel_host_add(ADAPTER(l)->h, &ADAPTER(l)->t[i], d);
}
static int adapter_mod(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)due;
	return twheel_host_mod(ADAPTER(l)->h, &ADAPTER(l)->t[i], d);
}
static int adapter_add_at(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)d;
	return twheel_host_add_at(ADAPTER(l)->h, &ADAPTER(l)->t[i], due);
}
static int adapter_mod_at(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)d;
	return twheel_host_mod_at(ADAPTER(l)->h, &ADAPTER(l)->t[i], due);
}
static int adapter_del(void *l, size_t i) { return twheel_host_del(ADAPTER(l)->h, &ADAPTER(l)->t[i]); }
static bool adapter_pending(void *l, size_t i) { return tw_timer_pending(&ADAPTER(l)->t[i]); }
static void adapter_poll(void *l)
{
	(void)l;
	host_pump();
}
static void adapter_run(void *l)
{
	(void)l;
	host_run();
}
static void adapter_stop(void *l)
{
	(void)l;
	host_stop();
}

#define RT_HOST_NOTE_REARM \
	"the host loop run once without blocking every 1,000 re-arms (none fires); wall ns per re-arm"
#define RT_HOST_NOTE_AE "real-time adapters: the wheel's 1 ms tick makes the span 65 s of waiting"

#define RT_HOST_TABLES(var, NAME)                                                              \
	const struct rt_ops var = {                                                            \
		.name = NAME,                                                                  \
		.note = { [RT_REARM] = "twheel_host_mod(30 s) (parked, placed from one reading "   \
				       "per iteration) on a pending timer, " RT_HOST_NOTE_REARM, \
			  [RT_ADD_CANCEL] = "twheel_host_add (ms offsets), then twheel_host_del " \
					    "in random order; wall ns per pair",               \
			  [RT_ADD_EXPIRE] = RT_HOST_NOTE_AE },                                 \
		.res_ns = NS_PER_MS, .create = adapter_create, .destroy = adapter_destroy,   \
		.add = adapter_add, .mod = adapter_mod, .del = adapter_del,                    \
		.pending = adapter_pending, .poll = adapter_poll, .run = adapter_run,          \
		.stop = adapter_stop, .never_early = true,                                     \
	};                                                                                     \
	const struct rt_ops var##_at = {                                                       \
		.name = NAME "-at",                                                            \
		.note = { [RT_REARM] = "twheel_host_mod_at(the iteration's clock reading + "   \
				       "30 s) on a pending timer: one reading per iteration, " \
				       "as the hosts' cached time; " RT_HOST_NOTE_REARM,       \
			  [RT_ADD_CANCEL] = "twheel_host_add_at (one clock reading + ms "      \
					    "offsets), then twheel_host_del in random order; " \
					    "wall ns per pair",                                \
			  [RT_ADD_EXPIRE] = RT_HOST_NOTE_AE },                                 \
		.res_ns = NS_PER_MS, .create = adapter_create, .destroy = adapter_destroy,   \
		.add = adapter_add_at, .mod = adapter_mod_at, .del = adapter_del,              \
		.pending = adapter_pending, .poll = adapter_poll, .run = adapter_run,          \
		.stop = adapter_stop, .never_early = true,                                     \
	}

#endif /* BENCH_RT_HOST_H */
