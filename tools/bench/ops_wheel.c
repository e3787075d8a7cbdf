/* SPDX-License-Identifier: MIT */
/* tools/bench/ops_wheel.c - libtwheel as a table of operations (bench.h). */
#include <twheel/twheel.h>

#include "bench.h"

static void *wheel_create(uint64_t now, size_t cap)
{
	(void)cap;
	return twheel_create(now);
}

static void drop(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

/* Drain first: destroying a wheel with pending timers is misuse in -Ddebug_checks builds. */
static void wheel_destroy(void *w)
{
	twheel_drain(w, drop, NULL);
	twheel_destroy(w);
}

static void fired(struct tw_timer *t)
{
	bench_fired(tw_timer_expires(t));
}

static void wheel_timer_init(void *w, void *t)
{
	(void)w;
	tw_timer_init(t, fired);
}
static int wheel_add(void *w, void *t, uint64_t e) { return twheel_add(w, t, e); }
static int wheel_mod(void *w, void *t, uint64_t e) { return twheel_mod(w, t, e); }
static int wheel_del(void *w, void *t) { return twheel_del(w, t); }
static long wheel_advance(void *w, uint64_t now) { return twheel_advance(w, now); }

static long wheel_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)
{
	struct tw_timer *t = (struct tw_timer *)(void *)tm;
	long bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad |= twheel_add(w, &t[i], exp[i]);
	return bad;
}

static long wheel_mod_many(void *w, void *const *t, uint32_t n, uint64_t e)
{
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += twheel_mod(w, t[i], e);
	return sum;
}

static long wheel_del_many(void *w, char *tm, const uint32_t *idx, uint32_t n)
{
	struct tw_timer *t = (struct tw_timer *)(void *)tm;
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += twheel_del(w, &t[idx[i]]);
	return sum;
}
static uint64_t wheel_next_expiry(void *w) { return twheel_next_expiry(w); }
static size_t wheel_count(void *w) { return twheel_count(w); }
static int wheel_check(void *w) { return twheel_check(w, NULL, 0); }

static uint64_t wheel_cascaded(void *w)
{
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	return st.cascaded;
}

static uint64_t wheel_mods_fast(void *w)
{
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	return st.mods_fast;
}

const struct bench_ops ops_wheel = {
	.name = "twheel",
	.timer_size = sizeof(struct tw_timer),
	.per_timer_extra = 0,
	.create = wheel_create,
	.destroy = wheel_destroy,
	.timer_init = wheel_timer_init,
	.add = wheel_add,
	.mod = wheel_mod,
	.del = wheel_del,
	.advance = wheel_advance,
	.add_many = wheel_add_many,
	.mod_many = wheel_mod_many,
	.del_many = wheel_del_many,
	.next_expiry = wheel_next_expiry,
	.count = wheel_count,
	.check = wheel_check,
	.cascaded = wheel_cascaded,
	.mods_fast = wheel_mods_fast,
};
