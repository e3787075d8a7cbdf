/* SPDX-License-Identifier: MIT */
/*
 * host.c - one wheel driven by one host-loop timer; <twheel/host.h> says
 * when the host timer is touched. While the host timer is armed (_on),
 * _armed is the tick it waits for: an arm earlier than it re-arms the host
 * timer, later ones do not. (_on is a flag of its own: TW_TICK_MAX is a
 * tick a timer may wait for, not a "stopped" mark.)
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "twheel/host.h"
#include "place_rule.h"

/*
 * A fresh clock reading, remembered as the latest one. Outside a run, the
 * wheel's time is brought up to its tick where that runs nothing (no timer
 * due by then, no cascade: twheel__catch_up()). The wheel's time otherwise
 * stands still while the host timer sleeps (an idle wheel's stays at its
 * last run), and a timer placed by an expiry 256 ticks or more past it
 * would go to a level above the first: the host timer would wake at that
 * slot's cascade tick, before the timer's own, for a run that fires
 * nothing. So every arm and placement from a fresh reading counts from
 * the wheel at the reading's tick.
 */
static uint64_t host_clock(struct twheel_host *h)
{
	h->_seen = twheel_rt_now(&h->_rt);
	if (!h->_in_run && h->_w)
		twheel__catch_up(h->_w, twheel_rt_floor(&h->_rt, h->_seen));
	return h->_seen;
}

/*
 * A batch of parked timers is placed when it reaches this many arms, not
 * only at the iteration's end: a long run of arms (a loop's set-up, say)
 * then holds none of its timers back by more than the time of 64 arms,
 * for one clock reading per 64.
 */
#define HOST_PARK_BATCH 64

/*
 * The host's own arms on its wheel: a debug build refuses those that come
 * through the wheel's API from elsewhere (twheel__hosted()), which would
 * leave the host timer unarmed for them.
 */
#if TWHEEL_DEBUG_CHECKS
#define WHEEL_ARM(h, call)                                                                      \
	__extension__({                                                                         \
		twheel__hosted((h)->_w, 2);                                                     \
		int wheel_arm_rc_ = (call);                                                     \
		twheel__hosted((h)->_w, 1);                                                     \
		wheel_arm_rc_;                                                                  \
	})
#else
#define WHEEL_ARM(h, call) (call)
#endif

/* The bits of twheel_host::_flags. */
#define HOST_DEFER 0x1u /* twheel_host_defer() is on */
#define HOST_EXT 0x2u   /* _ops is a struct twheel_host_ops_ext */
#define HOST_LOST 0x4u  /* the host timer is gone (twheel_host_lost()) */

/* Stop the armed host timer. */
static void host_stop(struct twheel_host *h)
{
	h->_ops->stop(h);
	h->_st.host_stops++;
	h->_on = false;
}

/*
 * Arm the host timer for the wheel's next tick with work, or stop it. The
 * tick it waits for follows from the wake time (one question to the
 * wheel): the boundary of that tick, or, for a timer due now, any tick
 * (nothing armed later can be earlier than "now": 0).
 */
static void host_rearm(struct twheel_host *h, uint64_t now)
{
	uint64_t timeout = twheel_rt_timeout_ns(&h->_rt, h->_w, now);

	if (timeout == TWHEEL_RT_FOREVER) {
		/* empty, or beyond any 64-bit clock reading */
		if (h->_on)
			host_stop(h);
		return;
	}
	if (h->_flags & HOST_LOST)
		return; /* no host timer to arm: the caller reports it */
	h->_armed = timeout ? (now + timeout) / h->_rt.tick_ns : 0;
	h->_on = true;
	h->_ops->arm(h, now + timeout, now);
	h->_st.host_arms++;
}

/*
 * host_rearm() for an arm at tick @e, earlier than _armed, while arms by
 * delay may wait parked: the wheel reports a parked timer as due at once,
 * so asking it would set the host timer to fire at once, for a run that
 * fires nothing. Every placed timer waits for _armed or later (an earlier
 * arm re-arms), and the placement re-arms if it brings one earlier: @e is
 * the tick to wait for. Its boundary does not overflow: _armed's did not.
 */
static void host_rearm_parked(struct twheel_host *h, tw_tick_t e, uint64_t now)
{
	bool due = e <= twheel_rt_floor(&h->_rt, now) || e <= twheel_now(h->_w);

	h->_armed = due ? 0 : e;
	h->_ops->arm(h, due ? now : e * h->_rt.tick_ns, now);
	h->_st.host_arms++;
}

int twheel_host_init(struct twheel_host *h, const struct twheel_rt *rt,
		     const struct twheel_host_ops *ops)
{
	if (!h || !ops || !ops->arm || !ops->stop)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	if (rt)
		h->_rt = *rt;
	twheel_rt_init(&h->_rt, h->_rt.tick_ns, h->_rt.clock, h->_rt.clock_arg);
	h->_ops = ops;
	h->_w = twheel_create(twheel_rt_floor(&h->_rt, host_clock(h)));
	if (!h->_w)
		return -ENOMEM;
	twheel__set_tick(h->_w, h->_rt.tick_ns); /* what twheel__park_delay() counts in */
#if TWHEEL_DEBUG_CHECKS
	twheel__hosted(h->_w, 1);
#endif
	return 0;
}

int twheel_host_init_ext(struct twheel_host *h, const struct twheel_rt *rt,
			 const struct twheel_host_ops_ext *ops)
{
	int rc;

	if (!ops || !ops->parked)
		return -EINVAL;
	rc = twheel_host_init(h, rt, &ops->ops);
	if (rc == 0)
		h->_flags |= HOST_EXT;
	return rc;
}

static void drop(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

int twheel_host_fini(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg), void *arg)
{
	if (!h || !h->_w)
		return -EINVAL;
	if (h->_in_run)
		return -EBUSY;
	h->_in_run = true; /* @fn may arm timers again: no host timer for them */
	h->_parked = 0;
	/* a parked timer is handed back with the tick twheel_host_expires()
	 * gave it (placed from the latest reading), not its delay */
	twheel_rt_place(&h->_rt, h->_w, h->_seen);
	twheel_drain(h->_w, fn ? fn : drop, arg);
	while (twheel_count(h->_w)) {
		twheel_rt_place(&h->_rt, h->_w, h->_seen);
		twheel_drain(h->_w, drop, NULL);
	}
	h->_in_run = false;
	if (h->_on) {
		h->_ops->stop(h);
		h->_on = false;
	}
	twheel_destroy(h->_w);
	h->_w = NULL;
	return 0;
}

/*
 * Arm @t at @ns: a delay, or a deadline (@deadline); with twheel_add() or
 * twheel_mod() (@mod). Wake the host timer earlier, from a fresh reading,
 * if @t became the earliest timer.
 *
 * A delay is parked (twheel_park()) when a placement from a later reading
 * is sure to come before anything waits: inside twheel_host_run() (it
 * places after the callbacks, from the reading it re-arms from) and, with
 * twheel_host_defer() on, while the host timer is armed (the adapter calls
 * twheel_host_place() before its loop waits, from a hook or, with
 * twheel_host_init_ext(), scheduled by the parked op that the first park
 * after a placement calls: placed at once if it refuses; the armed host timer
 * keeps the loop iterating: a host loop with nothing else to do may not
 * even reach its prepare hook). A parked timer keeps the wheel non-empty,
 * so the host timer stays armed until the placement. One not pending is
 * parked with the tick of its delay from _seen as a hint
 * (twheel_park_hint()): it goes into that tick's slot at once, and the
 * placement, whose reading is not earlier unless the clock stepped back,
 * then usually stores its expiry alone. An arm not parked counts
 * from twheel_rt_now_upper()
 * (at or after the clock's time, usually without reading it; a delay of 0
 * from a fresh reading, so that it is due in the next run).
 *
 * A deadline after the latest reading, _seen, needs no clock reading: it
 * is placed at the tick boundary at or after it (twheel_rt_expiry(): after
 * the tick the wheel is at or going to if the clock stepped back), which
 * cannot be early whatever the clock reads now (if it passed since _seen,
 * it fires at that boundary: within one tick). A deadline at or before
 * _seen looks passed, but the clock may have stepped back since: a fresh
 * reading decides, so that it is due in the next run only if the clock
 * has reached it. The clock is otherwise read only when the host timer
 * must be re-armed.
 */
/*
 * Place the parked timers from a fresh reading; outside a run, re-arm the
 * host timer if one of them is now earlier than what it waits for (one
 * question to the wheel for the whole batch). Returns how many it placed.
 */
static long host_place(struct twheel_host *h)
{
	long n = twheel_rt_place(&h->_rt, h->_w, host_clock(h));

	h->_parked = 0;
	if (n > 0 && !h->_in_run && (!h->_on || twheel_next_expiry(h->_w) < h->_armed))
		host_rearm(h, h->_seen);
	return n;
}

/*
 * The adapter found its host timer gone (twheel_host_lost()) while this
 * arm of @t, which returned @rc, re-armed it: @t is refused, and left as
 * it was: not pending if it was not (so that the caller may free it);
 * one that was pending stays so (fini hands it back), at its new tick.
 */
static __attribute__((noinline)) int host_arm_lost(struct twheel_host *h, struct tw_timer *t,
						   int rc)
{
	if (rc == 0)
		twheel_del(h->_w, t);
	return -ESHUTDOWN;
}

/*
 * The arm placed at once: by deadline, or by delay when it may not be
 * parked. When it re-arms the host timer, the fresh reading for that is
 * taken before the timer is placed, so that it goes where the wheel
 * caught up to that reading puts it (host_clock()): an expiry at or
 * before the reading's tick has passed and is due in the next run.
 */
static inline int host_arm_now(struct twheel_host *h, struct tw_timer *t, uint64_t ns,
			       bool deadline, bool mod)
{
	uint64_t now, fresh = 0;
	tw_tick_t e;
	bool rearm;
	int rc;

	if (deadline) {
		now = h->_seen;
		if (ns <= now) { /* looks passed: unless the clock stepped back */
			uint64_t fresh = host_clock(h);

			if (ns > fresh)
				now = fresh;
		}
	} else {
		/* a delay of 0 has come: due in the next run, from a reading */
		now = ns ? twheel_rt_now_upper(&h->_rt) : host_clock(h);
		ns = twheel__add_sat(now, ns);
	}
	e = twheel_rt_expiry(&h->_rt, h->_w, ns, now);
	rearm = h->_w && (!h->_on || e < h->_armed) && !h->_in_run;
	if (rearm) {
		/* a lost host's timer is off: every arm comes here */
		if (h->_flags & HOST_LOST)
			return -ESHUTDOWN;
		fresh = host_clock(h);
	}
	rc = WHEEL_ARM(h, mod ? twheel_mod(h->_w, t, e) : twheel_add(h->_w, t, e));
	if (rc >= 0 && rearm) {
		if (h->_parked && h->_on)
			host_rearm_parked(h, e, fresh);
		else
			host_rearm(h, fresh);
		if (h->_flags & HOST_LOST)
			return host_arm_lost(h, t, rc);
	}
	return rc;
}

/* An arm by delay that is not parked: out of line, so that parking is a leaf's work. */
static __attribute__((noinline)) int host_delay_now(struct twheel_host *h, struct tw_timer *t,
						    uint64_t ns, bool mod)
{
	return host_arm_now(h, t, ns, false, mod);
}

/*
 * The HOST_PARK_BATCH-th park since the last placement: it places them all
 * (the count starts again even if this one failed). Or the first park
 * outside a run of a host made with twheel_host_init_ext(): its parked op
 * schedules a placement; if it cannot, the host places at once (a first
 * park that fails is not counted: the next one asks).
 */
static __attribute__((noinline)) int host_park_slow(struct twheel_host *h, struct tw_timer *t,
						    uint64_t ns, bool hinted)
{
	int rc = hinted ? twheel__park_delay(h->_w, t, ns, h->_seen)
			: WHEEL_ARM(h, twheel_park(h->_w, t, ns));

	if (h->_parked == HOST_PARK_BATCH)
		host_place(h);
	else if (rc < 0)
		h->_parked = 0;
	else if (((const struct twheel_host_ops_ext *)h->_ops)->parked(h) &&
		 !(h->_flags & HOST_LOST))
		host_place(h); /* no placement could be scheduled */
	/* the adapter found its host timer gone: @t was not pending when
	 * hinted (host_park_new()), else it was and stays so */
	if (rc >= 0 && (h->_flags & HOST_LOST))
		return host_arm_lost(h, t, hinted ? 0 : 1);
	return rc;
}

/*
 * Park @t, not pending, hinted where it will likely go: the delay from the
 * latest reading, rounded down or a tick before (the placement's reading
 * is not earlier unless the clock stepped back); the wheel computes the
 * hint (twheel__park_delay()). Out of line: the hint stays off a re-arm's
 * path.
 */
static __attribute__((noinline)) int host_park_new(struct twheel_host *h, struct tw_timer *t,
						   uint64_t ns)
{
	if (++h->_parked < HOST_PARK_BATCH && (h->_parked != 1 || !(h->_flags & HOST_EXT) || h->_in_run))
		return twheel__park_delay(h->_w, t, ns, h->_seen);
	return host_park_slow(h, t, ns, true);
}

/*
 * An arm by delay: parked when it may be (see above), else placed at once.
 * The park is counted before it is made, so that the call is the last
 * thing done (a tail call, no frame); one that fails is counted too, which
 * only brings the next placement nearer.
 */
static inline int host_arm_delay(struct twheel_host *h, struct tw_timer *t, uint64_t ns, bool mod)
{
	if (!h)
		return -EINVAL;
	if (h->_in_run || ((h->_flags & HOST_DEFER) && h->_on)) {
		if (t && t->_idx == TW__IDX_NONE)
			return host_park_new(h, t, ns);
		if (!mod)
			return WHEEL_ARM(h, twheel_add(h->_w, t, 0)); /* pending: its error */
		if (++h->_parked < HOST_PARK_BATCH &&
		    (h->_parked != 1 || !(h->_flags & HOST_EXT) || h->_in_run))
			return WHEEL_ARM(h, twheel_park(h->_w, t, ns));
		return host_park_slow(h, t, ns, false);
	}
	return host_delay_now(h, t, ns, mod);
}

int twheel_host_add(struct twheel_host *h, struct tw_timer *t, uint64_t delay_ns)
{
	return host_arm_delay(h, t, delay_ns, false);
}

int twheel_host_mod(struct twheel_host *h, struct tw_timer *t, uint64_t delay_ns)
{
	return host_arm_delay(h, t, delay_ns, true);
}

int twheel_host_add_at(struct twheel_host *h, struct tw_timer *t, uint64_t deadline_ns)
{
	return h ? host_arm_now(h, t, deadline_ns, true, false) : -EINVAL;
}

int twheel_host_mod_at(struct twheel_host *h, struct tw_timer *t, uint64_t deadline_ns)
{
	return h ? host_arm_now(h, t, deadline_ns, true, true) : -EINVAL;
}

/* The cancel of @t parked: it keeps the tick twheel_host_expires() gave
 * it, not its delay. Out of line: a cancel of a placed timer keeps no
 * frame for it. */
static __attribute__((noinline)) int host_del_parked(struct twheel_host *h, struct tw_timer *t)
{
	tw_tick_t e = twheel_host_expires(h, t);
	int rc = twheel_del(h->_w, t);

	if (rc == 1)
		t->expires = e;
	return rc;
}

int twheel_host_del(struct twheel_host *h, struct tw_timer *t)
{
	int rc;

	if (!h)
		return -EINVAL;
	/* one in a slot, or not pending, is not parked (twheel.h's ABI: its
	 * _idx is below TW__NSLOTS, or TW__IDX_NONE): no call to ask */
	if (t && t->_idx - TW__NSLOTS < TW__IDX_NONE - TW__NSLOTS && twheel__parked(t))
		rc = host_del_parked(h, t);
	else
		rc = twheel_del(h->_w, t);
	if (rc == 1 && !h->_in_run && h->_on && !twheel_count(h->_w))
		host_stop(h);
	return rc;
}

long twheel_host_run(struct twheel_host *h)
{
	long n;

	if (!h || !h->_w)
		return -EINVAL;
	if (h->_in_run)
		return -EBUSY;
	if (h->_flags & HOST_LOST)
		return -ESHUTDOWN;
	h->_on = false; /* the one-shot host timer has fired */
	h->_in_run = true;
	/* places the timers parked before the run, from its reading */
	h->_parked = 0;
	n = twheel_rt_advance(&h->_rt, h->_w, host_clock(h));
	h->_in_run = false;
	h->_st.wakeups++;
	if (n > 0)
		h->_st.fired += (uint64_t)n;
	else
		h->_st.idle_wakeups++;
	/* a fresh reading: the callbacks took time, and a stale one oversleeps;
	 * the delays they armed count from it */
	host_clock(h);
	twheel_rt_place(&h->_rt, h->_w, h->_seen);
	h->_parked = 0;
	host_rearm(h, h->_seen);
	return n;
}

long twheel_host_place(struct twheel_host *h)
{
	long n;

	if (!h || !h->_w)
		return -EINVAL;
	if (h->_in_run)
		return -EBUSY;
	if (h->_flags & HOST_LOST)
		return -ESHUTDOWN;
	n = h->_parked ? host_place(h) : 0;
	return h->_flags & HOST_LOST ? -ESHUTDOWN : n;
}

int twheel_host_defer(struct twheel_host *h, bool on)
{
	long n;

	if (!h || !h->_w)
		return -EINVAL;
	if (h->_in_run)
		return -EBUSY;
	if (h->_flags & HOST_LOST)
		return -ESHUTDOWN;
	h->_flags = on ? h->_flags | HOST_DEFER : h->_flags & ~HOST_DEFER;
	n = on ? 0 : twheel_host_place(h);
	return n < 0 ? (int)n : 0;
}

int twheel_host_lost(struct twheel_host *h)
{
	if (!h || !h->_w)
		return -EINVAL;
	if (h->_in_run)
		return -EBUSY;
	h->_flags |= HOST_LOST;
	h->_on = false; /* nothing to stop any more */
	return 0;
}

uint64_t twheel_host_now(const struct twheel_host *h)
{
	return h ? twheel_rt_now(&h->_rt) : 0;
}

tw_tick_t twheel_host_expires(const struct twheel_host *h, const struct tw_timer *t)
{
	struct twheel__place_from p;

	if (!t)
		return 0;
	if (!h || !h->_w || !twheel__parked(t))
		return tw_timer_expires(t);
	/* a host parks an arm by delay with the delay as its value */
	p.tick = h->_rt.tick_ns;
	p.inv = 0;
	p.now_ns = h->_seen;
	p.wt = twheel_target(h->_w);
	return twheel__place_expiry(tw_timer_expires(t), &p);
}

struct twheel *twheel_host_wheel(const struct twheel_host *h)
{
	return h ? h->_w : NULL;
}

const struct twheel_rt *twheel_host_rt(const struct twheel_host *h)
{
	return h ? &h->_rt : NULL;
}

int twheel_host_get_stats(const struct twheel_host *h, struct twheel_host_stats *st)
{
	if (!h || !st)
		return -EINVAL;
	*st = h->_st;
	return 0;
}

const struct twheel_host_ops *twheel_host_get_ops(const struct twheel_host *h)
{
	return h ? h->_ops : NULL;
}
