/* SPDX-License-Identifier: MIT */
/* libtwheel under the workloads of wl.h. */
#include <twheel/twheel.h>

typedef struct tw_timer T;
typedef struct twheel W;
#define WL(name) wheel_##name

static inline W *a_create(uint64_t now, size_t cap) { (void)cap; return twheel_create(now); }
static void drop(struct tw_timer *t, void *arg) { (void)t; (void)arg; }
/* Drain first: destroying a wheel with pending timers is misuse in -Ddebug_checks builds. */
static inline void a_destroy(W *w) { twheel_drain(w, drop, NULL); twheel_destroy(w); }
static inline void a_tinit(T *t, void (*cb)(T *)) { tw_timer_init(t, cb); }
static inline int a_add(W *w, T *t, uint64_t e) { return twheel_add(w, t, e); }
static inline int a_mod(W *w, T *t, uint64_t e) { return twheel_mod(w, t, e); }
static inline int a_del(W *w, T *t) { return twheel_del(w, t); }
static inline long a_advance(W *w, uint64_t now) { return twheel_advance(w, now); }
static inline uint64_t a_next(W *w) { return twheel_next_expiry(w); }
static inline size_t a_count(W *w) { return twheel_count(w); }
static inline uint64_t a_expires(T *t) { return tw_timer_expires(t); }
static inline int a_check(W *w) { return twheel_check(w, NULL, 0); }

static inline uint64_t a_cascaded(W *w)
{
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	return st.cascaded;
}

static inline uint64_t a_mods_fast(W *w)
{
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	return st.mods_fast;
}

#include "wl.h"

const struct impl impl_wheel = {
	.name = "twheel",
	.node_size = sizeof(struct tw_timer),
	.per_timer_extra = 0,
	.add_expire = wheel_add_expire,
	.add_cancel = wheel_add_cancel,
	.rearm = wheel_rearm,
	.long_range = wheel_long_range,
	.advance_spike = wheel_advance_spike,
	.idle_skip = wheel_idle_skip,
};
