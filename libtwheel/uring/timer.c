/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the loop-timer state machine of twheel-uring: arming and
 * disarming on the loop thread, scheduling and cancelling from any thread,
 * and firing, one-shot and periodic: every state change, callback,
 * executor hand-off and wheel link of a loop timer is made here. What a
 * periodic timer's run should be (a misfire? the next deadline?) is
 * periodic.c's policy, which this file asks.
 *
 * Every loop timer carries an atomic state (in its inbox node); transitions
 * are single compare-and-swaps so that a cancel from another thread and the
 * loop firing the timer have exactly one winner:
 *
 *	IDLE/DONE ──schedule──▶ CLAIMED ──fields written──▶ QUEUED ──loop pops──▶ ARMED
 *	                                 (or QUEUED_DELAY, see below)
 *	IDLE/DONE ──loop add───▶ CLAIMED ──fields written, linked──────────────▶ ARMED
 *	ARMED ──fires (one-shot)──▶ DONE                 (callback owns the timer)
 *	ARMED ──fires (executor)──▶ RUNNING ──tw_loop_timer_call()──▶ DONE
 *	ARMED ──fires (periodic)──▶ RUNNING ──run ends──▶ ARMED (re-linked first)
 *	ARMED ──fires (periodic, executor)──▶ RUNNING ──tw_loop_timer_call()──▶
 *	        RUNNING|CALLED ──run ends──▶ RETURNED (pushed) ──loop pops──▶ ARMED
 *	        (re-linked first)
 *	QUEUED(_DELAY)/RETURNED ──cancel──▶ CANCELLED (in the inbox) ─┐ loop pops:
 *	ARMED  ──cancel──▶ CANCELLED + pushed onto the inbox ─────────┴▶ unlink, IDLE
 *	RUNNING ──cancel──▶ RUNNING|CANCEL_REQ ──run ends──▶ unlink, IDLE
 *
 * A schedule with a delay does not read the clock: it queues the timer as
 * QUEUED_DELAY with the delay in t->deadline, and the loop makes it a
 * deadline from a clock reading it takes after popping the timer (one per
 * chunk of popped items, wait.c). That reading is no earlier than the
 * schedule call, so the timer still never fires before call + delay. A
 * schedule_at() queues QUEUED with its deadline as given. Until the loop
 * arms it (or drain hands it back), nothing reads t->deadline of a queued
 * timer; a timer cancelled before that keeps the delay there.
 *
 * An arm by delay on the loop thread (twheel_loop_add(), _mod(), delay > 0)
 * reads no clock either: the timer is parked on its wheel (twheel_park())
 * and placed, with every other parked timer, from one reading taken after
 * them all (twl_timers_place(), through twheel__place_deadlines(), which
 * usually only stores the new expiry of a timer re-armed far ahead): before the loop
 * decides its wait and at the end of each iteration (wait.c), at the
 * PARK_BATCH-th park since the last placement, before a del of a parked
 * timer and before a drain. That reading is later than every call it
 * places, so a timer still never fires before call + delay; it is late by
 * at most the time from the call to the placement (the rest of the
 * iteration, or PARK_BATCH arms). A parked timer is ARMED like any other
 * (pending, counted; del, mod, a cancel from another thread and drain go
 * through the wheel's API, which knows parked timers) but cannot fire: the
 * wheel does not know its expiry. Its t->deadline holds twheel_loop_now()
 * + the delay until the placement writes the deadline it gets; a del
 * places first, so that the deadline of a deleted timer is the one it had
 * (the C++ layer re-arms a moved timer by it).
 *
 * CALLED (or-ed into RUNNING, CANCEL_REQ or not) makes the start of a
 * periodic executor run a compare-and-swap as well, so that a hand-off is
 * run and handed back once however many times it is called.
 *
 * A periodic timer is RUNNING during its callback on the loop thread and is
 * re-linked before it is published ARMED again; the callback may delete or
 * re-arm it (l->cur, l->cur_gone), and then the loop leaves it alone. On
 * the executor, the run ends when tw_loop_timer_call() hands the timer back
 * through the inbox (RETURNED), and the next deadline is computed then: a
 * run never overlaps the next one, and nothing writes the fields the
 * callback reads while it runs. A misfire the policy skips runs nothing:
 * the timer stays ARMED and is re-linked at the next deadline.
 *
 * The rule that keeps other threads' memory safe: a state that lets another
 * thread reuse the timer (IDLE, DONE) or that announces fields (QUEUED,
 * ARMED: the owning loop, the deadline) is published only after the work it
 * announces is finished, and the loop does not touch the timer after
 * publishing IDLE or DONE (it reads what it needs first). CLAIMED is the
 * private "being filled in" state of a schedule or add: to other threads it
 * is not yet scheduled (tw_loop_timer_busy() is false, cancel says -ENOENT).
 *
 * Only the loop thread touches the wheels and a timer's wheel links, so the
 * core wheel needs no locks. A timer is on the inbox at most once at a time
 * (a cancelled timer cannot be scheduled again before the loop released it),
 * so one link per timer suffices and nothing is allocated. A timer records
 * the loop that owns it (t->_loop, stored before the state that announces
 * it), so that a call naming another loop is refused (-EXDEV) in O(1).
 */
#include "loop_impl.h"

/* The loop whose wheels this thread is advancing, set by the iteration
 * (wait.c) around the advance: timer_fire() reads it instead of t->_loop,
 * which sits on the timer's second cache line. */
_Thread_local struct twheel_loop *twl_firing_loop __attribute__((tls_model("initial-exec")));

static void timer_fire(struct tw_timer *tt);

int tw_loop_timer_init(struct tw_loop_timer *t, void (*func)(struct tw_loop_timer *t),
		       unsigned flags)
{
	if (!t || !func || (flags & ~TIMER_FLAGS))
		return -EINVAL;
	tw_timer_init(&t->timer, timer_fire);
	t->timer.flags = flags;
	t->func = func;
	t->deadline = 0;
	t->period = 0;
	t->missed = 0;
	t->_backlog = 0;
	t->_node._next = NULL;
	t->_node._kind = TW__NODE_TIMER;
	t->_node._state = TW__T_IDLE;
	t->_loop = NULL;
	return 0;
}

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

bool tw_loop_timer_busy(const struct tw_loop_timer *t)
{
	return t && state_owned(state_load(&t->_node));
}

/* Checks shared by add and schedule. */
static int timer_check(const struct twheel_loop *l, const struct tw_loop_timer *t)
{
	if (!l || !t || !t->func || t->_node._kind != TW__NODE_TIMER)
		return -EINVAL;
	if ((t->timer.flags & TW_LOOP_EXECUTOR) && !l->executor)
		return -EINVAL;
	if (t->period && t->period < l->rt.tick_ns)
		return -EINVAL;
	if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	return 0;
}

/*
 * Take an idle timer for @l: IDLE/DONE -> CLAIMED, counted against
 * max_pending. The caller fills in the fields and then publishes the
 * state that announces them. The swap comes first: of two threads that
 * arm @t at once, the loser is not counted even for a moment (it would
 * refuse a third thread's timer that fits). A claim refused -ENOSPC puts
 * back the state it took; meanwhile @t was CLAIMED, which other threads
 * see as not yet scheduled (busy false, cancel -ENOENT) and an arm of
 * theirs as -EBUSY.
 */
static int timer_claim(struct twheel_loop *l, struct tw_loop_timer *t)
{
	uint32_t s = state_load(&t->_node);

	if (s != TW__T_IDLE && s != TW__T_DONE)
		return -EBUSY;
	if (!state_cas(&t->_node, s, TW__T_CLAIMED))
		return -EBUSY;
	if (!pending_inc(l, t)) {
		state_store(&t->_node, s);
		return -ENOSPC;
	}
	__atomic_store_n(&t->_loop, l, __ATOMIC_RELAXED);
	t->_backlog = 0;
	return 0;
}

/*
 * Link @t on its wheel for @deadline, @ref being a clock reading taken
 * after the request (loop thread): a deadline at or before @ref has come.
 * A deadline ahead goes on its tick (<twheel/rt.h>), or after l->tick if
 * the clock stepped back behind that: during an iteration l->tick is the
 * tick both wheels are being advanced to, from the I/O handlers on (they
 * run before the advance), so a timer armed by any callback of the
 * iteration cannot fire in it.
 */
static tw_tick_t timer_expiry(const struct twheel_loop *l, uint64_t deadline, uint64_t ref)
{
	tw_tick_t e = twheel_rt_expiry(&l->rt, NULL, deadline, ref);

	if (deadline > ref && e <= l->tick)
		e = l->tick < TW_TICK_MAX ? l->tick + 1 : TW_TICK_MAX;
	return e;
}

static void timer_place(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline,
			uint64_t ref)
{
	t->deadline = deadline;
	twheel_mod(timer_wheel(l, t), &t->timer, timer_expiry(l, deadline, ref));
}

/* timer_place() with @ref possibly older than the request (the iteration's
 * reading): a deadline at or before it has come, unless the clock stepped
 * back since and a fresh reading finds it ahead. */
static void timer_link(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline,
		       uint64_t ref)
{
	uint64_t fresh;

	if (deadline <= ref && deadline > (fresh = loop_clock(l)))
		ref = fresh;
	timer_place(l, t, deadline, ref);
}

/* The PARK_BATCH-th park since the last placement: park @t, then place
 * every parked timer from a fresh reading. Out of line: it is rare, and
 * the other parks stay a leaf's work. */
static __attribute__((noinline)) int timer_park_place(struct twheel_loop *l,
						      struct tw_loop_timer *t)
{
	int rc = twheel_park(timer_wheel(l, t), &t->timer, (uintptr_t)&t->deadline);

	twl_timers_place(l, loop_clock(l));
	return rc;
}

/*
 * Park @t by @delay (> 0) until the next placement (see the top). The
 * wheel keeps the address of t->deadline as its value, and t->deadline
 * the delay as twheel_loop_now() + @delay: l->now does not change before the placement
 * (an iteration places what is parked before it reads the clock). The
 * park is counted before it is made, so that the call is the last thing
 * done (a tail call). Returns twheel_park()'s result: 1 for @t ARMED
 * (pending on its wheel), 0 for one not pending.
 */
static inline int timer_park(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay)
{
	t->deadline = add_sat(l->now, delay);
	if (++l->nparked < PARK_BATCH)
		return twheel_park(timer_wheel(l, t), &t->timer, (uintptr_t)&t->deadline);
	return timer_park_place(l, t);
}

/*
 * Place every parked timer from @ref, a reading taken after every park
 * (loop thread, callbacks included): the delay counts from @ref. Each
 * parked timer's value is the address of its deadline, l->now + the
 * delay: the wheel re-counts it from @ref (a saturated one stays
 * saturated: later, never earlier, than @ref plus the delay), writes it
 * back and places the timer at timer_expiry()'s tick for it, the rule
 * inlined (twheel__place_deadlines()). Outside an iteration, on the
 * default clock, the loop's tick moves on to @ref's first, as an
 * iteration's does, and the wheels catch up to it.
 */
void twl_timers_place(struct twheel_loop *l, uint64_t ref)
{
	twl_catch_up_reading(l, ref); /* outside an iteration */
	l->nparked = 0;
	twheel__place_deadlines(l->wheel, l->now, ref, l->rt.tick_ns, l->tick);
	twheel__place_deadlines(l->dwheel, l->now, ref, l->rt.tick_ns, l->tick);
}

/* The loop lets go of a cancelled timer: unlinked, IDLE, then the hook.
 * Nothing here reads @t after the IDLE store but the hook's argument. */
void twl_timer_release(struct twheel_loop *l, struct tw_loop_timer *t)
{
	void (*release)(struct tw_loop_timer *, void *) = l->release;
	void *arg = l->release_arg;

	twheel_del(timer_wheel(l, t), &t->timer);
	pending_dec(l, t);
	state_store(&t->_node, TW__T_IDLE);
	if (release)
		release(t, arg);
}

/* Publish @t armed after it was linked; @from is the state it leaves. A
 * cancel that came in meanwhile wins: the timer is released instead. */
static void timer_publish_armed(struct twheel_loop *l, struct tw_loop_timer *t, uint32_t from)
{
	if (!state_cas(&t->_node, from, TW__T_ARMED))
		twl_timer_release(l, t);
}

/* What periodic.c's policy sees of periodic @t, judged against @now. */
static struct twl_period timer_period(const struct twheel_loop *l,
				      const struct tw_loop_timer *t, uint64_t now)
{
	struct twl_period s = {
		.deadline = t->deadline,
		.period = t->period,
		.now = now,
		.flags = t->timer.flags,
		.missed = t->missed,
		.backlog = t->_backlog,
	};

	if (__builtin_mul_overflow(l->tick, l->rt.tick_ns, &s.edge))
		s.edge = UINT64_MAX;
	return s;
}

/*
 * A periodic timer whose next deadline lies past UINT64_MAX ns: armed with
 * the deadline UINT64_MAX on the first tick no 64-bit reading reaches, so
 * that it never runs again (not even at the clock's last reading, where a
 * deadline of UINT64_MAX has come), as a one-shot timer on such a tick.
 */
static void periodic_beyond(struct twheel_loop *l, struct tw_loop_timer *t)
{
	t->deadline = UINT64_MAX;
	twheel_mod(timer_wheel(l, t), &t->timer, UINT64_MAX / l->rt.tick_ns + 1);
}

/* Link periodic @t at the deadline after the run that served t->deadline
 * (on the loop thread or handed back by the executor: the run is over);
 * @s is what the policy saw of it at the loop's time. */
static void periodic_relink(struct twheel_loop *l, struct tw_loop_timer *t,
			    struct twl_period *s)
{
	bool beyond;
	uint64_t next = twl_periodic_next(s, &beyond);

	if (beyond)
		periodic_beyond(l, t);
	else
		timer_link(l, t, next, s->now);
}

/* periodic_relink() for a deadline that counts from @ref, a reading taken
 * after the run (a fixed delay): also the reading to judge the deadline by,
 * since the loop's time is ahead of it if the clock stepped back during the
 * run. Any value is a reading, 0 included (a clock may read 0). */
static void periodic_relink_fresh(struct twheel_loop *l, struct tw_loop_timer *t,
				  struct twl_period *s, uint64_t ref)
{
	bool beyond;
	uint64_t next;

	s->now = ref;
	next = twl_periodic_next(s, &beyond);
	if (beyond)
		periodic_beyond(l, t);
	else
		timer_place(l, t, next, s->now);
}

/* Periodic @t is due: the policy judges the misfire, then it runs here,
 * is handed to the executor, or (a skipped misfire) waits for the next
 * deadline. Not inlined: its frame would slow down every one-shot fire. */
static __attribute__((noinline)) void timer_fire_periodic(struct twheel_loop *l,
							  struct tw_loop_timer *t)
{
	struct twl_period s;
	struct twl_due due;

	if (state_load(&t->_node) != TW__T_ARMED)
		return; /* cancelled by another thread: the inbox releases it */
	s = timer_period(l, t, l->now);
	due = twl_periodic_due(&s);
	if (due.misfire)
		l->st.misfires++;
	t->_backlog = s.backlog = due.backlog;
	t->missed = s.missed = due.missed;
	if (!due.run) { /* skipped: on to the next deadline, no run, no reading */
		periodic_relink(l, t, &s);
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
	/* the schedule as the run left it */
	s.deadline = t->deadline;
	s.period = t->period;
	s.missed = t->missed;
	s.backlog = t->_backlog;
	if (due.fresh)
		periodic_relink_fresh(l, t, &s, loop_clock(l));
	else
		periodic_relink(l, t, &s);
	if (!state_cas(&t->_node, TW__T_RUNNING, TW__T_ARMED))
		twl_timer_release(l, t); /* cancelled from another thread during the run */
}

/* The core wheel's callback for every loop timer. */
static void timer_fire(struct tw_timer *tt)
{
	struct tw_loop_timer *t = tw_container_of(tt, struct tw_loop_timer, timer);
	struct twheel_loop *l = twl_firing_loop;
	void (*func)(struct tw_loop_timer *) = t->func;
	unsigned flags = tt->flags;

	if (flags & TW__LOOP_PERIODIC) {
		timer_fire_periodic(l, t);
		return;
	}
	if (flags & TW_LOOP_EXECUTOR) {
		/* stays owned (RUNNING) until tw_loop_timer_call() starts it */
		if (state_cas(&t->_node, TW__T_ARMED, TW__T_RUNNING)) {
			l->st.timers_fired++;
			l->executor(t, l->executor_arg);
		}
		return;
	}
	pending_dec(l, t); /* before DONE: whoever reuses @t may count on it */
	if (!state_cas(&t->_node, TW__T_ARMED, TW__T_DONE)) {
		pending_undo(l, t);
		return; /* cancelled by another thread: the inbox releases it */
	}
	/* DONE is published: @t belongs to its callback now, not to us */
	l->st.timers_fired++;
	func(t);
}

int tw_loop_timer_call(struct tw_loop_timer *t)
{
	void (*func)(struct tw_loop_timer *);
	struct twheel_loop *l;
	uint32_t s;

	if (!t || !(t->timer.flags & TW_LOOP_EXECUTOR))
		return -EINVAL;
	func = t->func;
	l = timer_owner(t);
	s = state_load(&t->_node);
	if (!(t->timer.flags & TW__LOOP_PERIODIC)) {
		/* the one call the hand-off allows: RUNNING -> DONE, once */
		if (s != TW__T_RUNNING)
			return -EINVAL;
		callers_enter(l);
		pending_dec(l, t); /* before DONE, as in timer_fire() */
		if (!state_cas(&t->_node, s, TW__T_DONE)) {
			pending_undo(l, t);
			callers_leave(l);
			return -EINVAL;
		}
		callers_leave(l);
		func(t); /* DONE is published: the callback owns @t */
		return 0;
	}
	/* the one call the hand-off allows: RUNNING -> RUNNING|CALLED, once
	 * (a cancel may or CANCEL_REQ in at any time). Counted from before
	 * the run: the callback may stop the loop (or post the work that
	 * does), and the hand-back after it still reaches the loop. */
	if ((s & ~TW__T_CANCEL_REQ) != TW__T_RUNNING)
		return -EINVAL;
	callers_enter(l);
	while (!state_cas(&t->_node, s, s | TW__T_CALLED)) {
		s = state_load(&t->_node);
		if ((s & ~TW__T_CANCEL_REQ) != TW__T_RUNNING) {
			callers_leave(l);
			return -EINVAL;
		}
	}
	func(t);
	/* Hand it back to the loop, which re-arms it (or releases it if it
	 * was cancelled during the run); then never touch it again. */
	if (!state_cas(&t->_node, TW__T_RUNNING | TW__T_CALLED, TW__T_RETURNED))
		state_store(&t->_node, TW__T_CANCELLED);
	twl_inbox_push(l, &t->_node);
	twl_wake(l);
	callers_leave(l);
	return 0;
}

/* The deadline of the run after the one periodic @t, handed back by the
 * executor (RETURNED), has served: what the loop re-arms it for when it
 * takes it from the inbox (below), and what drain hands it back with; @ref
 * is a reading taken after its pop, which a fixed delay counts from. */
uint64_t twl_timer_returned_next(const struct twheel_loop *l, const struct tw_loop_timer *t,
				 uint64_t ref)
{
	struct twl_period p = timer_period(l, t, l->now);
	bool beyond;

	if (twl_periodic_fresh(&p))
		p.now = ref;
	return twl_periodic_next(&p, &beyond);
}

/* The loop took @t from the inbox: arm what was queued or handed back by
 * the executor, release what was cancelled. @ref is a clock reading taken
 * after @t was popped (one per chunk of items, wait.c), so after the
 * request: a queued delay and a fixed delay after an executor run count
 * from it, and a deadline at or before it has come. */
void twl_timer_from_inbox(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t ref)
{
	uint32_t s = state_load(&t->_node);

	if (s == TW__T_QUEUED_DELAY) {
		timer_place(l, t, add_sat(ref, t->deadline), ref);
		timer_publish_armed(l, t, s);
	} else if (s == TW__T_QUEUED) {
		timer_place(l, t, t->deadline, ref);
		timer_publish_armed(l, t, s);
	} else if (s == TW__T_RETURNED) {
		/* a periodic executor run ended; misfires are judged when the
		 * next deadline is due */
		struct twl_period p = timer_period(l, t, l->now);

		if (twl_periodic_fresh(&p))
			periodic_relink_fresh(l, t, &p, ref);
		else
			periodic_relink(l, t, &p);
		timer_publish_armed(l, t, s);
	} else if (s == TW__T_CANCELLED) {
		twl_timer_release(l, t);
	}
}

/* ---- On the loop thread ------------------------------------------------- */

/*
 * The reading an arm by deadline on the loop thread counts from: the
 * iteration's, l->now, in a callback. Outside an iteration the loop's
 * wheels stay at the last iteration's tick while it idles, and a timer
 * placed from there 256 ticks or more ahead goes to a slot above the
 * first level, whose cascade tick may fall between the next iteration's
 * reading and the timer's own: an iteration that sleeps until then and
 * runs nothing. So, on the default clock, the first such arm after an
 * iteration takes a reading and catches the wheels up to it
 * (twl_catch_up_reading()), and the arms after it until the next
 * iteration count from that reading: one reading per gap between
 * iterations, none for an arm from a callback.
 */
static __attribute__((noinline)) uint64_t outside_read(struct twheel_loop *l)
{
	l->out_fresh = true;
	if (l->cq_marked || !loop_steady(l))
		return l->out_ref = l->now;
	l->out_ref = loop_clock(l);
	twl_catch_up_reading(l, l->out_ref);
	return l->out_ref;
}

static inline uint64_t arm_ref(struct twheel_loop *l)
{
	if (l->in_callback)
		return l->now;
	return l->out_fresh ? l->out_ref : outside_read(l);
}

/* Link @t for an arm at the deadline @v, or (@delay) for a delay of 0. */
static void arm_link(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t v, bool delay)
{
	uint64_t now;

	if (!delay) {
		timer_link(l, t, v, arm_ref(l));
	} else { /* a delay of 0 has come: exact, from a reading */
		now = loop_clock(l);
		timer_place(l, t, now, now);
	}
}

/* Arm @t: at the deadline @v, or (@delay) @v after the call. A delay > 0
 * is parked here, inline: the common arm stays a few stores and a call. */
static inline void arm(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t v, bool delay)
{
	if (delay && v)
		timer_park(l, t, v);
	else
		arm_link(l, t, v, delay);
}

static inline __attribute__((always_inline)) int loop_add(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t v, bool delay,
		    bool mod)
{
	uint32_t s;
	int ret = timer_check(l, t);

	if (ret)
		return ret;
	s = state_load(&t->_node);
	if (state_owned(s) && timer_owner(t) != l)
		return -EXDEV;
	if (s == TW__T_ARMED && mod) {
		/* re-armed by delay: parked by a tail call (it says 1: pending) */
		if (delay && v)
			return timer_park(l, t, v);
		arm_link(l, t, v, delay);
		return 1;
	}
	if ((s & ~TW__T_CANCEL_REQ) == TW__T_RUNNING && t == l->cur && !l->cur_gone) {
		/* A periodic timer re-armed by its own callback. */
		uint64_t served = t->deadline;

		if (s != TW__T_RUNNING)
			return -EBUSY; /* cancelled from another thread */
		arm(l, t, v, delay);
		if (!state_cas(&t->_node, TW__T_RUNNING, TW__T_ARMED)) {
			/* A cancel came in meanwhile: as if it came first, the
			 * timer as it was. The callback still runs, so the
			 * timer is released when it returns, not here: a thread
			 * that polls tw_loop_timer_busy() (or the release hook)
			 * may free it. */
			twheel_del(timer_wheel(l, t), &t->timer);
			t->deadline = served;
			return -EBUSY;
		}
		t->_backlog = 0;
		l->cur_gone = true;
		return 0;
	}
	ret = timer_claim(l, t);
	if (ret)
		return ret;
	arm(l, t, v, delay);
	state_store(&t->_node, TW__T_ARMED);
	return 0;
}

int twheel_loop_add_at(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline_ns)
{
	return loop_add(l, t, deadline_ns, false, false);
}

int twheel_loop_add(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay_ns)
{
	return loop_add(l, t, delay_ns, true, false);
}

int twheel_loop_mod_at(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline_ns)
{
	return loop_add(l, t, deadline_ns, false, true);
}

int twheel_loop_mod(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay_ns)
{
	return loop_add(l, t, delay_ns, true, true);
}

int twheel_loop_del(struct twheel_loop *l, struct tw_loop_timer *t)
{
	uint32_t s;

	if (!l || !t)
		return -EINVAL;
again:
	s = state_load(&t->_node);
	if (state_owned(s) && timer_owner(t) != l)
		return -EXDEV;
	switch (s) {
	case TW__T_ARMED:
		/* if it is parked, its deadline first (see the top): a parked
		 * timer's expires holds its value, the address of t->deadline;
		 * a placed one's holds a tick, which is all but never that (and
		 * if it is, the placement is only wasted) */
		if (t->timer.expires == (uintptr_t)&t->deadline)
			twl_timers_place_now(l);
		/* unlink first: IDLE lets other threads reuse the memory */
		twheel_del(timer_wheel(l, t), &t->timer);
		pending_dec(l, t);
		if (!state_cas(&t->_node, TW__T_ARMED, TW__T_IDLE)) {
			pending_undo(l, t);
			return 0; /* a cancel from another thread won; it releases */
		}
		return 1;
	case TW__T_QUEUED:
	case TW__T_QUEUED_DELAY:
	case TW__T_RETURNED:
		/* Still on the inbox: the loop releases it when it gets there. */
		return state_cas(&t->_node, s, TW__T_CANCELLED) ? 1 : 0;
	case TW__T_RUNNING:
	case TW__T_RUNNING | TW__T_CANCEL_REQ:
	case TW__T_RUNNING | TW__T_CALLED:
	case TW__T_RUNNING | TW__T_CALLED | TW__T_CANCEL_REQ:
		if (!(t->timer.flags & TW__LOOP_PERIODIC))
			return 0; /* a one-shot on the executor: it has fired */
		if (t != l->cur) { /* periodic, on the executor: released when it returns */
			if (s & TW__T_CANCEL_REQ)
				return 0;
			if (state_cas(&t->_node, s, s | TW__T_CANCEL_REQ))
				return 1;
			goto again; /* its run started or ended meanwhile */
		}
		if (l->cur_gone)
			return 0;
		/* its own callback is running on this thread: the loop will not
		 * touch it after the callback returns */
		l->cur_gone = true;
		pending_dec(l, t);
		state_store(&t->_node, TW__T_IDLE);
		return 1;
	default:
		return 0;
	}
}

bool twheel_loop_pending(const struct twheel_loop *l, const struct tw_loop_timer *t)
{
	return l && t && tw_timer_pending(&t->timer) && timer_owner(t) == l;
}

/*
 * Only an ARMED timer is on a wheel. @src stays ARMED, so busy to other
 * threads, while the move reads it; the compare-and-swap that makes it
 * IDLE then settles a race with a cancel from another thread: if the
 * cancel won, the link goes back to @src, which the loop releases as for
 * any winning cancel. @dst is published ARMED only after that.
 */
int twheel_loop_move(struct twheel_loop *l, struct tw_loop_timer *dst, struct tw_loop_timer *src)
{
	struct twheel *w;
	uint32_t s;

	if (!dst || !src || dst->_node._kind != TW__NODE_TIMER ||
	    src->_node._kind != TW__NODE_TIMER)
		return -EINVAL;
	s = state_load(&src->_node);
	if (state_owned(s)) {
		if (!l)
			return -EINVAL;
		if (timer_owner(src) != l)
			return -EXDEV;
		if (s != TW__T_ARMED)
			return -EBUSY;
	}
	if (dst == src)
		return s == TW__T_ARMED;
	if (state_owned(state_load(&dst->_node)))
		return -EBUSY;
	/* armed by delay and not yet placed: its expires points at its own
	 * deadline (see the top); placed first, as a del does */
	if (s == TW__T_ARMED && src->timer.expires == (uintptr_t)&src->deadline)
		twl_timers_place_now(l);
	dst->func = src->func;
	dst->deadline = src->deadline;
	dst->period = src->period;
	dst->missed = src->missed;
	dst->_backlog = src->_backlog;
	dst->_node._next = NULL;
	if (s != TW__T_ARMED) {
		twheel_move(NULL, &dst->timer, &src->timer);
		return 0;
	}
	w = timer_wheel(l, src);
	twheel_move(w, &dst->timer, &src->timer);
	if (!state_cas(&src->_node, TW__T_ARMED, TW__T_IDLE)) {
		twheel_move(w, &src->timer, &dst->timer); /* a cancel won */
		return -EBUSY;
	}
	__atomic_store_n(&dst->_loop, l, __ATOMIC_RELAXED);
	state_store(&dst->_node, TW__T_ARMED);
	return 1;
}

/* ---- From any thread ---------------------------------------------------- */

/* Queue @t for @l in @state (QUEUED or QUEUED_DELAY) with @v in t->deadline. */
static int timer_queue(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t v,
		       uint32_t state)
{
	int ret = timer_check(l, t);

	if (ret)
		return ret;
	callers_enter(l);
	ret = timer_claim(l, t);
	if (!ret) {
		t->deadline = v;
		state_store(&t->_node, state);
		twl_inbox_push(l, &t->_node);
		twl_wake(l);
	}
	callers_leave(l);
	return ret;
}

int twheel_loop_schedule_at(struct twheel_loop *l, struct tw_loop_timer *t,
			    uint64_t deadline_ns)
{
	return timer_queue(l, t, deadline_ns, TW__T_QUEUED);
}

/* The delay counts from a clock reading the loop takes when it pops @t. */
int twheel_loop_schedule(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay_ns)
{
	return timer_queue(l, t, delay_ns, TW__T_QUEUED_DELAY);
}

static int cancel(struct twheel_loop *l, struct tw_loop_timer *t)
{
	for (;;) {
		uint32_t s = state_load(&t->_node);

		if (state_owned(s) && timer_owner(t) != l)
			return -EXDEV;
		switch (s) {
		case TW__T_IDLE:
		case TW__T_CLAIMED: /* a schedule not yet done: not scheduled yet */
			return -ENOENT;
		case TW__T_DONE:
			return 0;
		case TW__T_CANCELLED:
		case TW__T_RUNNING | TW__T_CANCEL_REQ:
		case TW__T_RUNNING | TW__T_CALLED | TW__T_CANCEL_REQ:
			return -EALREADY;
		case TW__T_QUEUED:
		case TW__T_QUEUED_DELAY:
		case TW__T_RETURNED:
			if (state_cas(&t->_node, s, TW__T_CANCELLED))
				return 1; /* the loop releases it when it pops it */
			break;
		case TW__T_ARMED:
			if (state_cas(&t->_node, s, TW__T_CANCELLED)) {
				/* Ask the owning loop to unlink and release it: the
				 * owner, read again, because between the check above
				 * and the swap @t may have fired on @l and been armed
				 * on another loop, which the swap then cancelled.
				 * That loop acts on the push (releases @t, perhaps
				 * stops and is destroyed), so the push and the
				 * wake-up are counted on it too: it has not acted
				 * on this cancel before the push. */
				struct twheel_loop *owner = timer_owner(t);

				if (owner != l)
					callers_enter(owner);
				twl_inbox_push(owner, &t->_node);
				twl_wake(owner);
				if (owner != l)
					callers_leave(owner);
				return 1;
			}
			break;
		case TW__T_RUNNING:
		case TW__T_RUNNING | TW__T_CALLED:
			if (!(t->timer.flags & TW__LOOP_PERIODIC))
				return 0; /* a one-shot handed to the executor: fired */
			if (state_cas(&t->_node, s, s | TW__T_CANCEL_REQ))
				return 0;
			break;
		default:
			return -EINVAL;
		}
	}
}

/* Counted on @l (and on the owner the swap found, if another). */
int twheel_loop_cancel(struct twheel_loop *l, struct tw_loop_timer *t)
{
	int ret;

	if (!l || !t)
		return -EINVAL;
	callers_enter(l);
	ret = cancel(l, t);
	callers_leave(l);
	return ret;
}
