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

/*
 * A division by the tick without a divide instruction (tens of cycles on
 * common x86 cores, once per timer in a placement): @inv is
 * twheel__recip(tick), made once; the quotient by the reciprocal is the
 * true one or one less, and one correction step makes it exact.
 */
static inline uint64_t twheel__recip(uint64_t tick)
{
	return tick > 1 ? UINT64_MAX / tick : 0;
}

/* @x / @tick rounded down (@up false) or up, by @inv = twheel__recip(@tick)
 * (0: by a divide instruction). */
static inline uint64_t twheel__div_tick(uint64_t x, uint64_t tick, uint64_t inv, bool up)
{
	__extension__ typedef unsigned __int128 u128;
	uint64_t q, r;

	if (!inv) /* tick 1, or no reciprocal made */
		return tick == 1 ? x : x / tick + (up && x % tick != 0);
	q = (uint64_t)(((u128)x * inv) >> 64);
	r = x - q * tick;
	if (r >= tick)
		q++, r -= tick;
	return q + (up && r != 0); /* cannot wrap: q < UINT64_MAX for tick > 1 */
}

/*
 * @x / @tick rounded down, or one less: the product by @inv = UINT64_MAX /
 * @tick (any @tick, 1 too) without twheel__div_tick()'s correction step.
 * For a guess that must not be above the quotient (a parking hint).
 */
static inline uint64_t twheel__div_tick_low(uint64_t x, uint64_t inv)
{
	__extension__ typedef unsigned __int128 u128;

	return (uint64_t)(((u128)x * inv) >> 64);
}

/* @a + @b, UINT64_MAX if that does not fit: a deadline beyond 2^64 ns. */
static inline uint64_t twheel__add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* What the rule reads, once per placement. */
struct twheel__place_from {
	uint64_t tick;   /* ns per tick, never 0 */
	uint64_t inv;    /* twheel__recip(tick) */
	uint64_t now_ns; /* the placement's reading */
	tw_tick_t wt;    /* twheel_target(): placing does not change it */
};

/* The deadline rule without the wheel (twheel_rt_expiry(), @w NULL), for
 * ticks of @tick ns, @inv its twheel__recip(). */
static inline tw_tick_t twheel__deadline_tick_ns(uint64_t tick, uint64_t inv, uint64_t deadline_ns,
						 uint64_t now_ns)
{
	tw_tick_t up, floor_now;

	up = twheel__div_tick(deadline_ns, tick, inv, true);
	if (deadline_ns > now_ns)
		return up;
	/* Passed: due in the next advance, even inside now's own tick. */
	floor_now = twheel__div_tick(now_ns, tick, inv, false);
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
	tw_tick_t e = twheel__deadline_tick_ns(p->tick, p->inv, d, p->now_ns);

	return d <= p->now_ns ? e : twheel__after_target(e, p->wt);
}

/* twheel_rt_expiry(rt, w, now_ns + delay, now_ns) for a parked timer's @delay. */
static inline tw_tick_t twheel__place_expiry(uint64_t delay, const struct twheel__place_from *p)
{
	return twheel__place_deadline(twheel__add_sat(p->now_ns, delay), p);
}

/*
 * twheel_park_hint(@w, @t, @delay, hint) for a host's arm by delay, hinted
 * at the tick of @from_ns + @delay rounded down (or the tick before), in
 * ticks of twheel__set_tick()'s length: the wheel keeps the tick's
 * reciprocal, so that an arm divides nothing. Without a tick set, no hint.
 */
__attribute__((visibility("hidden"))) int twheel__park_delay(struct twheel *w, struct tw_timer *t,
							     uint64_t delay, uint64_t from_ns);

/* The tick length, in ns (never 0), that twheel__park_delay() counts in. */
__attribute__((visibility("hidden"))) void twheel__set_tick(struct twheel *w, uint64_t tick);

/*
 * A debug build's mark of a host's wheel (host.c): 1 once a host owns @w,
 * 2 while the host itself arms on it, 0 never hosted. An arm through the
 * wheel's own API on a wheel marked 1, outside an advance, is reported as
 * misuse (twheel_set_misuse_handler()) and refused with -EINVAL.
 */
__attribute__((visibility("hidden"))) void twheel__hosted(struct twheel *w, uint8_t state);

/* twheel_place(@w, the rule above, @p), the rule inlined (twheel.c). */
/* Whether @t is parked (twheel_park(), twheel_park_hint()), not placed yet. */
__attribute__((visibility("hidden"))) bool twheel__parked(const struct tw_timer *t);

__attribute__((visibility("hidden"))) long twheel__rt_place(struct twheel *w,
							   const struct twheel__place_from *p);

/* twheel__catch_up() is declared in <twheel/twheel.h> (not API: exported
 * for twheel-uring). */

#endif /* TWHEEL_PLACE_RULE_H */
