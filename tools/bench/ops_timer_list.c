/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/ops_timer_list.c - the kernel's timer API of
 * <twheel/compat/timer_list.h> as a table of operations (bench.h), on a
 * plain wheel bound to the thread: what keeping kernel-style code costs
 * against calling the wheel (ops_wheel.c). An expiry tick e is the jiffy
 * INITIAL_JIFFIES + (e - the wheel's time at create). One structure at a
 * time (a thread binds one wheel).
 */
#include <errno.h>
#include <twheel/compat/timer_list.h>

#include "bench.h"

static uint64_t base;

static unsigned long to_jiffies(uint64_t e)
{
	return INITIAL_JIFFIES + (unsigned long)(e - base);
}

static void *tl_create(uint64_t now, size_t cap)
{
	struct twheel *w = twheel_create(now);

	(void)cap;
	if (w && twheel_compat_bind_wheel(w) < 0) {
		twheel_destroy(w);
		return NULL;
	}
	base = now;
	return w;
}

/* A timer the drain hands back is off the wheel but still the thread's
 * (its compat mark): timer_delete() clears that, as for any timer. */
static void drop(struct tw_timer *t, void *arg)
{
	(void)arg;
	timer_delete(tw_container_of(t, struct timer_list, _ct.tw));
}

static void tl_destroy(void *w)
{
	twheel_drain(w, drop, NULL);
	twheel_compat_unbind();
	twheel_destroy(w);
}

static void fired(struct timer_list *t)
{
	bench_fired(base + (t->expires - INITIAL_JIFFIES));
}

static void tl_timer_init(void *w, void *t)
{
	(void)w;
	timer_setup(t, fired, 0);
}

static int tl_add(void *w, void *t, uint64_t e)
{
	struct timer_list *tl = t;

	(void)w;
	if (timer_pending(tl))
		return -EBUSY;
	tl->expires = to_jiffies(e);
	add_timer(tl);
	return 0;
}

static int tl_mod(void *w, void *t, uint64_t e) { (void)w; return mod_timer(t, to_jiffies(e)); }
static int tl_del(void *w, void *t) { (void)w; return timer_delete((struct timer_list *)t); }
static long tl_advance(void *w, uint64_t now) { return twheel_advance(w, now); }

static long tl_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)
{
	struct timer_list *t = (struct timer_list *)(void *)tm;
	long bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad |= tl_add(w, &t[i], exp[i]);
	return bad;
}

static long tl_mod_many(void *w, void *const *t, uint32_t n, uint64_t e)
{
	unsigned long j = to_jiffies(e);
	long sum = 0;
	(void)w;
	for (uint32_t i = 0; i < n; i++)
		sum += mod_timer(t[i], j);
	return sum;
}

static long tl_del_many(void *w, char *tm, const uint32_t *idx, uint32_t n)
{
	struct timer_list *t = (struct timer_list *)(void *)tm;
	long sum = 0;
	(void)w;
	for (uint32_t i = 0; i < n; i++)
		sum += timer_delete(&t[idx[i]]);
	return sum;
}

static uint64_t tl_next_expiry(void *w) { return twheel_next_expiry(w); }
static size_t tl_count(void *w) { return twheel_count(w); }
static int tl_check(void *w) { return twheel_check(w, NULL, 0); }

static uint64_t tl_cascaded(void *w)
{
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	return st.cascaded;
}

static uint64_t tl_mods_fast(void *w)
{
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	return st.mods_fast;
}

const struct bench_ops ops_timer_list = {
	.name = "timer_list",
	.timer_size = sizeof(struct timer_list),
	.per_timer_extra = 0,
	.create = tl_create,
	.destroy = tl_destroy,
	.timer_init = tl_timer_init,
	.add = tl_add,
	.mod = tl_mod,
	.del = tl_del,
	.advance = tl_advance,
	.add_many = tl_add_many,
	.mod_many = tl_mod_many,
	.del_many = tl_del_many,
	.next_expiry = tl_next_expiry,
	.count = tl_count,
	.check = tl_check,
	.cascaded = tl_cascaded,
	.mods_fast = tl_mods_fast,
};
