/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/ops_wheel.c - libtwheel as a table of operations (bench.h):
 * "twheel", an array of struct tw_timer, and "twheel-padded", the same
 * calls on nodes padded to the 48 bytes of a C++ tw::Hook (the C node and
 * one pointer): beside "twheel-cpp-hook", it tells what the hook's size
 * costs from what its calls cost.
 */
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

/* The node padded to a hook's size: the C node, then one pointer. */
struct padded {
	struct tw_timer t;
	void *pad;
};

/* Timer i of an array of nodes @size bytes apart. */
#define NODE(tm, i, size) ((struct tw_timer *)(void *)((tm) + (size_t)(i) * (size)))

static inline long add_many(void *w, char *tm, const uint64_t *exp, uint32_t n, size_t size)
{
	long bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad |= twheel_add(w, NODE(tm, i, size), exp[i]);
	return bad;
}
static long wheel_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)
{
	return add_many(w, tm, exp, n, sizeof(struct tw_timer));
}
static long padded_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)
{
	return add_many(w, tm, exp, n, sizeof(struct padded));
}

static long wheel_mod_many(void *w, void *const *t, uint32_t n, uint64_t e)
{
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += twheel_mod(w, t[i], e);
	return sum;
}

static inline long del_many(void *w, char *tm, const uint32_t *idx, uint32_t n, size_t size)
{
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += twheel_del(w, NODE(tm, idx[i], size));
	return sum;
}
static long wheel_del_many(void *w, char *tm, const uint32_t *idx, uint32_t n)
{
	return del_many(w, tm, idx, n, sizeof(struct tw_timer));
}
static long padded_del_many(void *w, char *tm, const uint32_t *idx, uint32_t n)
{
	return del_many(w, tm, idx, n, sizeof(struct padded));
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

const struct bench_ops ops_wheel_padded = {
	.name = "twheel-padded",
	.timer_size = sizeof(struct padded),
	.per_timer_extra = 0,
	.create = wheel_create,
	.destroy = wheel_destroy,
	.timer_init = wheel_timer_init,
	.add = wheel_add,
	.mod = wheel_mod,
	.del = wheel_del,
	.advance = wheel_advance,
	.add_many = padded_add_many,
	.mod_many = wheel_mod_many,
	.del_many = padded_del_many,
	.next_expiry = wheel_next_expiry,
	.count = wheel_count,
	.check = wheel_check,
	.cascaded = wheel_cascaded,
	.mods_fast = wheel_mods_fast,
};
