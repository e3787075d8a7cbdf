/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_uring.c - the twheel-uring loop as two tables of
 * operations (rt.h): "twheel" arms by delay (twheel_loop_add(), never early
 * from the call: parked, placed from one reading after a batch of arms,
 * before the loop next waits), "twheel-at" by deadline, the
 * harness's own request-time reading plus the delay (twheel_loop_add_at():
 * no clock reading from a callback; here, outside the iterations, one per
 * gap between two). Cross-thread schedules are the same in both.
 */
#include <stdio.h>
#include <stdlib.h>

#include <twheel/loop.h>

#include "rt.h"

struct tw {
	struct twheel_loop *loop;
	struct tw_loop_timer *t;
};

static struct tw *cur; /* the one loop that exists */

static void fire_cb(struct tw_loop_timer *t)
{
	rt_fired((size_t)(t - cur->t));
}

static void *tw_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct twheel_loop_config cfg;
	struct tw *l = rt_calloc(1, sizeof(*l));
	l->t = rt_calloc(n, sizeof(*l->t));
	for (size_t i = 0; i < n; i++)
		tw_loop_timer_init(&l->t[i], fire_cb, 0);
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = p->tick_ns;
	cfg.flags = TW_LOOP_URING_ONLY; /* measure the io_uring loop, nothing else */
	if (twheel_loop_create(&l->loop, &cfg, err, errlen)) {
		free(l->t);
		free(l);
		return NULL;
	}
	return cur = l;
}

static void tw_destroy(void *l)
{
	twheel_loop_destroy(cur->loop, NULL, NULL, NULL);
	free(cur->t);
	free(l);
	cur = NULL;
}

static int tw_add(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)l, (void)due;
	return twheel_loop_add(cur->loop, &cur->t[i], d);
}
static int tw_mod(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)l, (void)due;
	return twheel_loop_mod(cur->loop, &cur->t[i], d);
}
static int tw_add_at(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)l, (void)d;
	return twheel_loop_add_at(cur->loop, &cur->t[i], due);
}
static int tw_mod_at(void *l, size_t i, uint64_t d, uint64_t due)
{
	(void)l, (void)d;
	return twheel_loop_mod_at(cur->loop, &cur->t[i], due);
}
static int tw_del(void *l, size_t i) { (void)l; return twheel_loop_del(cur->loop, &cur->t[i]); }
static bool tw_pending(void *l, size_t i) { (void)l; return twheel_loop_pending(cur->loop, &cur->t[i]); }
static void tw_poll(void *l) { (void)l; twheel_loop_run_once(cur->loop, TW_LOOP_NOWAIT); }
static void tw_run(void *l) { (void)l; twheel_loop_run(cur->loop); }
static void tw_stop(void *l) { (void)l; twheel_loop_stop(cur->loop); }
static int tw_schedule(void *l, size_t i, uint64_t d)
{
	(void)l;
	return twheel_loop_schedule(cur->loop, &cur->t[i], d);
}

#define TW_NOTE_AE "the loop's 1 ms tick: the 65,536-tick span would be 65 s of real waiting"

const struct rt_ops rt_twheel = {
	.name = "twheel",
	.note = { [RT_REARM] = "twheel_loop_mod(30 s) on a pending timer, twheel_loop_run_once(NOWAIT) "
			       "every 1,000 re-arms (none fires); wall ns per re-arm",
		  [RT_ADD_CANCEL] = "twheel_loop_add (ms offsets), then twheel_loop_del in random order; "
				    "wall ns per pair",
		  [RT_ADD_EXPIRE] = TW_NOTE_AE },
	.res_ns = NS_PER_MS, .never_early = true,
	.create = tw_create, .destroy = tw_destroy, .add = tw_add, .mod = tw_mod, .del = tw_del,
	.pending = tw_pending, .poll = tw_poll, .run = tw_run, .stop = tw_stop,
	.wake_stop = tw_stop, /* twheel_loop_stop() may be called from any thread */
	.schedule = tw_schedule,
};

const struct rt_ops rt_twheel_at = {
	.name = "twheel-at",
	.note = { [RT_REARM] = "twheel_loop_mod_at(the iteration's reading + 30 s) on a pending timer, "
			       "twheel_loop_run_once(NOWAIT) every 1,000 re-arms; wall ns per re-arm",
		  [RT_ADD_CANCEL] = "twheel_loop_add_at (one reading + ms offsets), then twheel_loop_del "
				    "in random order; wall ns per pair",
		  [RT_ADD_EXPIRE] = TW_NOTE_AE },
	.res_ns = NS_PER_MS, .never_early = true,
	.create = tw_create, .destroy = tw_destroy, .add = tw_add_at, .mod = tw_mod_at, .del = tw_del,
	.pending = tw_pending, .poll = tw_poll, .run = tw_run, .stop = tw_stop, .wake_stop = tw_stop,
	.schedule = tw_schedule,
};
