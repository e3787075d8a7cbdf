/* SPDX-License-Identifier: MIT */
/*
 * periodic.c - periodic loop timers and their misfire policies.
 *
 * A periodic timer keeps its schedule in t->deadline (the deadline being
 * served, or next to serve) and t->period. When it is found due, the
 * deadlines d + k * period that are due in the same iteration (their tick
 * reached: overdue()) are counted (t->missed) and the misfire policy
 * decides: SKIP drops them and
 * does not run, ONCE runs once, ALL runs once now and owes the rest. The
 * next deadline is then, for a fixed rate, the next one of the schedule
 * (ALL: d + period, perhaps already due, so the owed runs come one per
 * iteration; SKIP/ONCE: the first that lies ahead); for a fixed delay, a
 * period after the run ended, or "due now" while runs are owed
 * (t->_backlog).
 *
 * On the loop thread the timer is RUNNING during its callback and is
 * re-linked before it is published ARMED again; the callback may delete or
 * re-arm it (l->cur, l->cur_gone), and then the loop leaves it alone. On
 * the executor, the run ends when tw_loop_timer_call() hands the timer back
 * through the inbox (RETURNED), and the next deadline is computed then: a
 * run never overlaps the next one, and nothing writes the fields the
 * callback reads while it runs.
 */
#include "loop_impl.h"

int tw_loop_timer_init_periodic(struct tw_loop_timer *t,
				void (*func)(struct tw_loop_timer *t),
				uint64_t period_ns, unsigned flags)
{
	if (!t || !func || !period_ns || (flags & ~PERIODIC_FLAGS) ||
	    (flags & TW_LOOP_MISFIRE_MASK) == TW_LOOP_MISFIRE_MASK)
		return -EINVAL;
	tw_loop_timer_init(t, func, 0);
	t->timer.flags = flags | TW__LOOP_PERIODIC;
	t->period = period_ns;
	return 0;
}

static inline uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The next deadline of a fixed-rate schedule served at @d, skipping @skip
 * further deadlines. */
static inline uint64_t rate_next(uint64_t d, uint64_t p, uint64_t skip)
{
	uint64_t step;

	if (__builtin_mul_overflow(skip + 1, p, &step))
		return UINT64_MAX;
	return add_sat(d, step);
}

/*
 * How many deadlines of a schedule after @d, every @p ns, are due in this
 * iteration too: d + k * p, k >= 1, whose tick ceil((d + k * p) / tick) the
 * iteration's tick l->tick has reached, that is d + k * p <= l->tick * tick.
 * The loop is then a period or more behind. Counted by the clock instead
 * (d + k * p <= now), the rounding up to the tick, which makes every timer
 * up to a tick late, would count: with a period of one tick and deadlines
 * just after tick boundaries, every run was a misfire.
 */
static uint64_t overdue(const struct twheel_loop *l, uint64_t d, uint64_t p)
{
	uint64_t edge;

	if (__builtin_mul_overflow(l->tick, l->rt.tick_ns, &edge))
		edge = UINT64_MAX;
	return edge > d ? (edge - d) / p : 0;
}

/*
 * After a misfire (@missed overdue deadlines), how many deadlines after @d
 * to skip so that the next one lies ahead of the clock's @now as well (the
 * tick may lag a reading by up to a tick). Without a misfire nothing is
 * skipped: a fixed rate catches up on a deadline the rounding made pass.
 */
static uint64_t skip_ahead(uint64_t d, uint64_t p, uint64_t missed, uint64_t now)
{
	uint64_t passed = now > d ? (now - d) / p : 0;

	return missed && passed > missed ? passed : missed;
}

/*
 * The deadline after a run of periodic @t served at t->deadline, with
 * t->missed and t->_backlog as the firing left them. *@ref is the loop's
 * time on entry; a fixed delay counts from a fresh reading, which replaces
 * it (the reading the deadline must be judged against: if the clock stepped
 * back during the run, the loop's time is ahead of it).
 */
uint64_t twl_periodic_next(struct twheel_loop *l, const struct tw_loop_timer *t,
			      uint64_t *ref)
{
	unsigned policy = t->timer.flags & TW_LOOP_MISFIRE_MASK;
	uint64_t now = *ref;

	if (!(t->timer.flags & TW_LOOP_FIXED_DELAY)) { /* ALL: the next one, maybe due */
		uint64_t skip = policy == TW_LOOP_MISFIRE_ALL ? 0 : t->missed;

		/* t->missed saturates at UINT32_MAX: count the overdue
		 * deadlines again */
		if (skip == UINT32_MAX)
			skip = overdue(l, t->deadline, t->period);
		return rate_next(t->deadline, t->period,
				 skip_ahead(t->deadline, t->period, skip, now));
	}
	if (t->_backlog)
		return now; /* owed: due again in the next iteration */
	*ref = loop_clock(l);
	return add_sat(*ref, t->period);
}

void twl_fire_periodic(struct twheel_loop *l, struct tw_loop_timer *t)
{
	uint64_t now = l->now, d = t->deadline, p = t->period, next, missed;
	unsigned policy = t->timer.flags & TW_LOOP_MISFIRE_MASK;
	bool rate = !(t->timer.flags & TW_LOOP_FIXED_DELAY), run = true;

	if (state_load(&t->_node) != TW__T_ARMED)
		return; /* cancelled by another thread: the inbox releases it */

	missed = overdue(l, d, p);
	if (t->_backlog) {
		/* fixed delay, MISFIRE_ALL: paying back missed runs */
		t->_backlog--;
		missed = t->_backlog;
	} else if (missed) {
		l->st.misfires++;
		if (policy == TW_LOOP_MISFIRE_SKIP)
			run = false;
		else if (policy == TW_LOOP_MISFIRE_ALL && !rate)
			t->_backlog = clamp32(missed);
	}
	t->missed = clamp32(missed);

	if (!run) {
		/* the first deadline of the schedule that lies in the future */
		next = rate ? rate_next(d, p, skip_ahead(d, p, missed, now)) : add_sat(now, p);
		twl_timer_link(l, t, next, now);
		return; /* still ARMED; a cancel meanwhile is handled by the inbox */
	}
	if (!state_cas(&t->_node, TW__T_ARMED, TW__T_RUNNING))
		return;
	l->st.timers_fired++;
	if (t->timer.flags & TW_LOOP_EXECUTOR) {
		/* tw_loop_timer_call() hands it back when the run ends */
		l->executor(t, l->executor_arg);
		return;
	}
	l->cur = t;
	l->cur_gone = false;
	t->func(t);
	l->cur = NULL;
	if (l->cur_gone)
		return; /* deleted or re-armed by its callback: not ours to touch */

	next = twl_periodic_next(l, t, &now);
	twl_timer_link(l, t, next, now);
	if (!state_cas(&t->_node, TW__T_RUNNING, TW__T_ARMED))
		twl_timer_release(l, t); /* cancelled from another thread during the run */
}
