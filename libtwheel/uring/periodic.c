/* SPDX-License-Identifier: MIT */
/*
 * periodic.c - the policy of periodic loop timers: how many deadlines a
 * run comes late for, whether it runs, what it still owes, and when the
 * next one is due. Pure functions of plain values (struct twl_period in, a
 * decision out): they change no loop state and call nothing in the other
 * files; timer.c fires the timer and asks them.
 *
 * A periodic timer keeps its schedule in t->deadline (the deadline being
 * served, or next to serve) and t->period. When it is found due, the
 * deadlines d + k * period that are due in the same iteration too (their
 * tick reached: overdue()) are counted (t->missed) and the misfire policy
 * decides: SKIP drops them and does not run, ONCE runs once, ALL runs once
 * now and owes the rest (twl_periodic_due()). The next deadline is then
 * (twl_periodic_next()), for a fixed rate, the next one of the schedule
 * (ALL: d + period, perhaps already due, so the owed runs come one per
 * iteration; SKIP/ONCE after a misfire: the first that lies ahead of the
 * clock); for a fixed delay, a period after the run ended, counted from a
 * fresh reading the caller takes after the run (twl_periodic_fresh()), or
 * "due now" while runs are owed (t->_backlog).
 *
 * Misfires are judged on the tick grid: a deadline is overdue when the
 * tick the iteration goes to has reached it (struct twl_period.edge, the
 * start of the tick after it), not when the clock has. Rounding a deadline
 * up to its tick makes every timer up to a tick late; that is not a
 * misfire.
 */
#include "loop_impl.h"

static inline uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* @a + @b, or UINT64_MAX and *@beyond set if that does not fit. */
static inline uint64_t add_beyond(uint64_t a, uint64_t b, bool *beyond)
{
	uint64_t r;

	if (__builtin_add_overflow(a, b, &r)) {
		*beyond = true;
		return UINT64_MAX;
	}
	return r;
}

/* The next deadline of a fixed-rate schedule served at @d, skipping @skip
 * further deadlines (*@beyond if it lies past UINT64_MAX). */
static inline uint64_t rate_next(uint64_t d, uint64_t p, uint64_t skip, bool *beyond)
{
	uint64_t step;

	if (__builtin_mul_overflow(skip + 1, p, &step)) {
		*beyond = true;
		return UINT64_MAX;
	}
	return add_beyond(d, step, beyond);
}

/*
 * How many deadlines of a schedule after @d, every @p ns, are due in this
 * iteration too: d + k * p, k >= 1, whose tick ceil((d + k * p) / tick) the
 * iteration's tick T has reached, that is d + k * p <= @edge = T * tick.
 * The loop is then a period or more behind. Counted by the clock instead
 * (d + k * p <= now), the rounding up to the tick, which makes every timer
 * up to a tick late, would count: with a period of one tick and deadlines
 * just after tick boundaries, every run was a misfire.
 */
static uint64_t overdue(uint64_t edge, uint64_t d, uint64_t p)
{
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
 * A periodic timer is found due at s->deadline, the iteration's tick having
 * reached s->edge: count the further deadlines due too, and decide by the
 * misfire policy whether it runs, what it owes, and whether its next
 * deadline will count from a fresh reading. O(1).
 */
struct twl_due twl_periodic_due(const struct twl_period *s)
{
	uint64_t missed = overdue(s->edge, s->deadline, s->period);
	unsigned policy = s->flags & TW_LOOP_MISFIRE_MASK;
	bool rate = !(s->flags & TW_LOOP_FIXED_DELAY);
	struct twl_due due = { .run = true, .backlog = s->backlog };

	if (s->backlog) {
		/* fixed delay, MISFIRE_ALL: paying back missed runs */
		due.backlog--;
		missed = due.backlog;
	} else if (missed) {
		due.misfire = true;
		if (policy == TW_LOOP_MISFIRE_SKIP)
			due.run = false;
		else if (policy == TW_LOOP_MISFIRE_ALL && !rate)
			due.backlog = clamp32(missed);
	}
	/* a SKIP: twl_periodic_next() finds the first deadline of the
	 * schedule that lies in the future (or a period after now) */
	due.missed = clamp32(missed);
	due.fresh = !rate && !due.backlog;
	return due;
}

/* Whether the deadline after a run counts from a clock reading taken after
 * the run (a fixed delay owing nothing), rather than from the loop's time. */
bool twl_periodic_fresh(const struct twl_period *s)
{
	return (s->flags & TW_LOOP_FIXED_DELAY) && !s->backlog;
}

/*
 * The deadline after a run (or a skip) that served s->deadline, with
 * s->missed and s->backlog as twl_periodic_due() left them, judged against
 * s->now: the loop's time, or the fresh reading twl_periodic_fresh() asks
 * for. A deadline past UINT64_MAX ns, which no 64-bit clock reaches, is
 * given as UINT64_MAX with *@beyond set (else *@beyond is false): not a
 * deadline that has come at the clock's last reading. O(1).
 */
uint64_t twl_periodic_next(const struct twl_period *s, bool *beyond)
{
	unsigned policy = s->flags & TW_LOOP_MISFIRE_MASK;

	*beyond = false;
	if (!(s->flags & TW_LOOP_FIXED_DELAY)) { /* ALL: the next one, maybe due */
		uint64_t skip = policy == TW_LOOP_MISFIRE_ALL ? 0 : s->missed;

		/* missed saturates at UINT32_MAX: count the overdue deadlines
		 * again */
		if (skip == UINT32_MAX)
			skip = overdue(s->edge, s->deadline, s->period);
		return rate_next(s->deadline, s->period,
				 skip_ahead(s->deadline, s->period, skip, s->now), beyond);
	}
	if (s->backlog)
		return s->now; /* owed: due again in the next iteration */
	return add_beyond(s->now, s->period, beyond); /* s->now: the fresh reading */
}
