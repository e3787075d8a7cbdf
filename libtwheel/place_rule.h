/* SPDX-License-Identifier: MIT */
/*
 * place_rule.h - private to libtwheel (not installed): the rule by which
 * twheel_rt_place() places parked timers (each counts its delay from one
 * clock reading), shared by rt.c, which defines it, and twheel.c, whose
 * placement loop inlines it for twheel__rt_place() and, for the io_uring
 * loop, twheel__place_deadlines(): no call per timer.
 */
#ifndef TWHEEL_PLACE_RULE_H
#define TWHEEL_PLACE_RULE_H

#include "twheel/twheel.h"

/* What the rule reads, once per placement. */
struct twheel__place_from {
	uint64_t tick;   /* ns per tick, never 0 */
	uint64_t now_ns; /* the placement's reading */
	tw_tick_t wt;    /* twheel_target(): placing does not change it */
};

/* The deadline rule without the wheel (twheel_rt_expiry(), @w NULL), for
 * ticks of @tick ns. */
static inline tw_tick_t twheel__deadline_tick_ns(uint64_t tick, uint64_t deadline_ns,
						 uint64_t now_ns)
{
	tw_tick_t up, floor_now;

	/* Cannot wrap: with tick 1 the remainder is 0. */
	up = deadline_ns / tick + (deadline_ns % tick != 0);
	if (deadline_ns > now_ns)
		return up;
	/* Passed: due in the next advance, even inside now's own tick. */
	floor_now = now_ns / tick;
	return up < floor_now ? up : floor_now;
}

/*
 * A deadline's tick @e, ahead of the clock but a tick the wheel has
 * reached, or that the advance now running (from a callback) will reach
 * (@wt, twheel_target()): the clock stepped back. The wheel is held there
 * until the clock catches up, so the first tick after it is the earliest
 * that is not early.
 */
static inline tw_tick_t twheel__after_target(tw_tick_t e, tw_tick_t wt)
{
	if (e <= wt)
		e = wt < TW_TICK_MAX ? wt + 1 : TW_TICK_MAX;
	return e;
}

/* twheel_rt_expiry(rt, w, @d, now_ns) for @d, a parked timer's deadline
 * counted from the reading: at or before it (a delay of 0), it is due. */
static inline tw_tick_t twheel__place_deadline(uint64_t d, const struct twheel__place_from *p)
{
	tw_tick_t e = twheel__deadline_tick_ns(p->tick, d, p->now_ns);

	return d <= p->now_ns ? e : twheel__after_target(e, p->wt);
}

/* twheel_rt_expiry(rt, w, now_ns + delay, now_ns) for a parked timer's @delay. */
static inline tw_tick_t twheel__place_expiry(uint64_t delay, const struct twheel__place_from *p)
{
	uint64_t d = delay > UINT64_MAX - p->now_ns ? UINT64_MAX : p->now_ns + delay;

	return twheel__place_deadline(d, p);
}

/* twheel_place(@w, the rule above, @p), the rule inlined (twheel.c). */
/* Whether @t is parked (twheel_park(), twheel_park_hint()), not placed yet. */
__attribute__((visibility("hidden"))) bool twheel__parked(const struct tw_timer *t);

__attribute__((visibility("hidden"))) long twheel__rt_place(struct twheel *w,
							   const struct twheel__place_from *p);

#endif /* TWHEEL_PLACE_RULE_H */
