/* SPDX-License-Identifier: MIT */
/*
 * rt.c - real-time driving of a wheel: the rules of <twheel/rt.h> (read its
 * design comment first). Each function is a line or two of saturating
 * integer arithmetic; the proofs are in the header.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "twheel/rt.h"
#include "place_rule.h"

/* The tick length; a caller that zeroed the field gets the default, not SIGFPE. */
static inline uint64_t rt_tick(const struct twheel_rt *rt)
{
	return rt->tick_ns ? rt->tick_ns : TWHEEL_RT_DEFAULT_TICK_NS;
}

uint64_t twheel_rt_clock_monotonic(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

int twheel_rt_init(struct twheel_rt *rt, uint64_t tick_ns, twheel_clock_fn clock,
		   void *clock_arg)
{
	if (!rt)
		return -EINVAL;
	rt->tick_ns = tick_ns ? tick_ns : TWHEEL_RT_DEFAULT_TICK_NS;
	rt->clock = clock ? clock : twheel_rt_clock_monotonic;
	rt->clock_arg = clock_arg;
	return 0;
}

uint64_t twheel_rt_now(const struct twheel_rt *rt)
{
	if (!rt)
		return 0;
	return rt->clock ? rt->clock(rt->clock_arg) : twheel_rt_clock_monotonic(NULL);
}

/* ---- An upper bound of the clock without reading it ----------------------
 *
 * CLOCK_MONOTONIC's vDSO read orders the time-stamp counter after every
 * load before it (rdtsc_ordered), so a timer armed by delay right after
 * touching another timer pays that timer's cache miss in full. Where the
 * kernel's clocksource is the TSC (it then keeps the counters of all CPUs
 * in step and the rate constant), a plain rdtsc, which orders nothing,
 * tells how long ago this thread last read the clock; when that is less
 * than a quarter of the slack, the last reading plus the slack bounds the
 * time from above with room to spare for errors in the rate, which is
 * measured against the clock itself over 1 ms to 1 s, and for an rdtsc
 * executed early, ahead of the loads before it (by far less than that).
 * A suspend stops CLOCK_MONOTONIC while the TSC may run on: a rate
 * measured across one would be too high, and a reading reused for far
 * longer than it may be. CLOCK_BOOTTIME counts the suspend, so a change in
 * its distance to CLOCK_MONOTONIC discards such a measurement.
 */
#if defined(__x86_64__)
struct tsc_clock {
	uint64_t ns, tsc;   /* the thread's last clock reading and the TSC before it */
	uint64_t ns0, tsc0; /* the start of the rate's measurement */
	uint64_t off0;      /* CLOCK_BOOTTIME - CLOCK_MONOTONIC then */
	uint64_t rate;      /* TSC cycles per ns, times 2^16; 0: not measured yet */
};

static _Thread_local struct tsc_clock tsc_last __attribute__((tls_model("initial-exec")));
static int tsc_state; /* 0 unknown, 1 the clocksource is the TSC, -1 not */

/* Whether the kernel keeps CLOCK_MONOTONIC with the TSC (asked again each
 * second: it gives the TSC up when it finds it unstable). */
static bool tsc_is_clocksource(void)
{
	int st = __atomic_load_n(&tsc_state, __ATOMIC_RELAXED);
	if (!st) {
		char buf[16] = "";
		FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				"re");
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
		}
		st = strcmp(buf, "tsc\n") ? -1 : 1;
		__atomic_store_n(&tsc_state, st, __ATOMIC_RELAXED);
	}
	return st > 0;
}

/*
 * A fresh reading. It is remembered, with the TSC read just before it (so
 * that the TSC tells at least how long ago the reading was), only if the
 * TSC after it shows no preemption in between; the rate is kept up to date
 * from such pairs.
 */
static uint64_t tsc_read(struct tsc_clock *c)
{
	uint64_t tsc = __rdtsc(), ns = twheel_rt_clock_monotonic(NULL), off;
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	if (__rdtsc() - tsc > 50000) /* a few us at most when not preempted */
		return ns;
	off = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec - ns;
	/* no suspend of 1/8 of the time since the start (off only grows by one;
	 * it is a few us smaller when the reads came closer together) */
	if (c->ns0 && ns > c->ns0 && tsc > c->tsc0 && tsc - c->tsc0 < (UINT64_C(1) << 46) &&
	    (off <= c->off0 || off - c->off0 < (ns - c->ns0) / 8)) {
		if (ns - c->ns0 >= 1000000)
			c->rate = ((tsc - c->tsc0) << 16) / (ns - c->ns0);
		if (ns - c->ns0 >= UINT64_C(1000000000)) {
			c->ns0 = ns; /* a fresh start each second: no overflow */
			c->tsc0 = tsc;
			c->off0 = off;
			__atomic_store_n(&tsc_state, 0, __ATOMIC_RELAXED);
		}
	} else {
		c->ns0 = ns;
		c->tsc0 = tsc;
		c->off0 = off;
	}
	c->ns = ns;
	c->tsc = tsc;
	return ns;
}

static uint64_t monotonic_upper(uint64_t slack)
{
	struct tsc_clock *c = &tsc_last;

	if (c->rate && slack >= 2000 && tsc_is_clocksource()) {
		/* a TSC behind the last one (another CPU) wraps: read afresh */
		uint64_t since = __rdtsc() - c->tsc, within = ((slack / 4) * c->rate) >> 16;
		if (since < within)
			return c->ns + slack;
	}
	return tsc_is_clocksource() ? tsc_read(c) : twheel_rt_clock_monotonic(NULL);
}
#else
static uint64_t monotonic_upper(uint64_t slack)
{
	(void)slack;
	return twheel_rt_clock_monotonic(NULL);
}
#endif

uint64_t twheel_rt_now_upper(const struct twheel_rt *rt)
{
	if (!rt)
		return 0;
	if (rt->clock && rt->clock != twheel_rt_clock_monotonic)
		return rt->clock(rt->clock_arg);
	return monotonic_upper(rt_tick(rt) / 16);
}

tw_tick_t twheel_rt_floor(const struct twheel_rt *rt, uint64_t now_ns)
{
	return rt ? now_ns / rt_tick(rt) : 0;
}

static inline tw_tick_t deadline_tick(const struct twheel_rt *rt, uint64_t deadline_ns,
				      uint64_t now_ns)
{
	return twheel__deadline_tick_ns(rt_tick(rt), 0, deadline_ns, now_ns);
}

tw_tick_t twheel_rt_expiry(const struct twheel_rt *rt, const struct twheel *w,
			   uint64_t deadline_ns, uint64_t now_ns)
{
	tw_tick_t e;

	if (!rt)
		return 0;
	e = deadline_tick(rt, deadline_ns, now_ns);
	if (!w || deadline_ns <= now_ns)
		return e;
	return twheel__after_target(e, twheel_target(w));
}

/* The tick an advance at @now_ns goes to: never behind the wheel's time. */
static tw_tick_t target(const struct twheel_rt *rt, const struct twheel *w, uint64_t now_ns)
{
	tw_tick_t t = now_ns / rt_tick(rt), wt = twheel_now(w);

	return t < wt ? wt : t;
}

/*
 * Place the parked timers: each counts its delay from @now_ns, a reading
 * taken after it was parked (so never early), the whole batch for one
 * clock reading instead of one per arm (the rule: place_rule.h).
 */
long twheel_rt_place(const struct twheel_rt *rt, struct twheel *w, uint64_t now_ns)
{
	struct twheel__place_from p;

	if (!rt || !w)
		return -EINVAL;
	p.tick = rt_tick(rt);
	p.inv = 0; /* made by the placement, if it has timers to place */
	p.now_ns = now_ns;
	p.wt = twheel_target(w);
	return twheel__rt_place(w, &p);
}

long twheel_rt_advance(const struct twheel_rt *rt, struct twheel *w, uint64_t now_ns)
{
	if (!rt || !w)
		return -EINVAL;
	twheel_rt_place(rt, w, now_ns);
	return twheel_advance(w, target(rt, w, now_ns));
}

uint64_t twheel_rt_timeout_ns(const struct twheel_rt *rt, const struct twheel *w,
			      uint64_t now_ns)
{
	tw_tick_t next;
	uint64_t wake;

	if (!rt)
		return 0;
	/* Emptiness from the count: TW_TICK_MAX is also a timer's tick. */
	if (!w || !twheel_count(w))
		return TWHEEL_RT_FOREVER;
	next = twheel_next_expiry(w);
	if (next <= target(rt, w, now_ns))
		return 0;
	/* The boundary may be UINT64_MAX itself, a clock reading like any
	 * other: only a product beyond 64 bits is never reached. */
	if (__builtin_mul_overflow(next, rt_tick(rt), &wake))
		return TWHEEL_RT_FOREVER;
	/* next > floor(now / tick), so next * tick > now: no underflow. The
	 * difference is the sentinel only for now 0 and a boundary at
	 * UINT64_MAX: wait one ns less (the loop then asks again). */
	wake -= now_ns;
	return wake == TWHEEL_RT_FOREVER ? TWHEEL_RT_FOREVER - 1 : wake;
}

int twheel_rt_timeout_ms(const struct twheel_rt *rt, const struct twheel *w, uint64_t now_ns)
{
	uint64_t ns = twheel_rt_timeout_ns(rt, w, now_ns), ms;

	if (ns == TWHEEL_RT_FOREVER)
		return -1;
	ms = ns / 1000000 + (ns % 1000000 != 0);
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* ---- Deprecated names of 1.0 -------------------------------------------- */

tw_tick_t twheel_rt_deadline_tick(const struct twheel_rt *rt, uint64_t deadline_ns,
				  uint64_t now_ns)
{
	return rt ? deadline_tick(rt, deadline_ns, now_ns) : 0;
}

tw_tick_t twheel_rt_delay_tick(const struct twheel_rt *rt, uint64_t delay_ns, uint64_t now_ns)
{
	return rt ? deadline_tick(rt, twheel__add_sat(now_ns, delay_ns), now_ns) : 0;
}

tw_tick_t twheel_rt_target(const struct twheel_rt *rt, const struct twheel *w, uint64_t now_ns)
{
	if (!rt)
		return 0;
	return w ? target(rt, w, now_ns) : now_ns / rt_tick(rt);
}

uint64_t twheel_rt_tick_ns(const struct twheel_rt *rt, tw_tick_t tick)
{
	uint64_t ns;

	if (!rt)
		return 0;
	if (tick == TW_TICK_MAX || __builtin_mul_overflow(tick, rt_tick(rt), &ns))
		return TWHEEL_RT_FOREVER;
	return ns;
}

struct timespec *twheel_rt_timeout_ts(const struct twheel_rt *rt, const struct twheel *w,
				      uint64_t now_ns, struct timespec *ts)
{
	uint64_t ns;

	if (!ts)
		return NULL;
	ns = twheel_rt_timeout_ns(rt, w, now_ns);
	if (ns == TWHEEL_RT_FOREVER)
		return NULL;
	ts->tv_sec = (time_t)(ns / 1000000000);
	ts->tv_nsec = (long)(ns % 1000000000);
	return ts;
}
