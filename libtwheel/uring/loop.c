/* SPDX-License-Identifier: MIT */
/*
 * twheel-uring - a tickless io_uring event loop that drives libtwheel.
 *
 * Design
 * ======
 * One loop is one io_uring, two wheels and one inbox, driven by one thread:
 *
 *	other threads ──push──▶ inbox (intrusive Vyukov MPSC queue)
 *	                             │ ≤ cfg.batch items per iteration
 *	                             ▼
 *	io_uring CQEs ──▶ loop thread ──▶ wheel   (normal timers: decide the wait)
 *	                             └──▶ dwheel  (deferrable timers: never do)
 *
 * Time. The loop clock gives nanoseconds (CLOCK_MONOTONIC by default).
 * A deadline d becomes the wheel expiry ceil(d / tick); the wheel is
 * advanced to floor(now / tick). Because floor(now / tick) >= ceil(d / tick)
 * implies now >= d, nothing fires early; because the loop sleeps until the
 * tick boundary ceil(d / tick) * tick < d + tick, a timer is at most one
 * tick plus wake-up latency late.
 *
 * One iteration (twheel_loop_run_once):
 *   1. compute the wait: 0 if anything is due or queued, else until the
 *      tick twheel_next_expiry(wheel) returns (a cascade tick or the first
 *      expiry: at most TWHEEL_LEVELS + 1 wake-ups for a lone far timer), or
 *      forever when the normal wheel is empty;
 *   2. submit SQEs and sleep in io_uring_enter(); the timeout is an
 *      argument of the wait (IORING_FEAT_EXT_ARG), so it costs no SQE;
 *   3. read the clock, run up to CQE_BATCH I/O handlers, handle up to
 *      cfg.batch inbox items, advance both wheels to the current tick.
 *      Both batches are bounded so that due timers are looked at every
 *      few hundred completions: a loop that is behind (a CPU-starved
 *      process with thousands of completions waiting) interleaves its
 *      timers with its I/O instead of running them after all of it.
 *      What is left over is run by the next iteration, which then does
 *      not sleep.
 *
 * Waking a sleeping loop. Producers push onto the inbox with one atomic
 * exchange, then write the loop's eventfd only if the loop announced that
 * it may sleep and nobody else has written since it last woke:
 *
 *	producer                          loop
 *	xchg(q_head, n)       [seq_cst]   store(sleeping, 1)       [seq_cst]
 *	if load(sleeping)     [seq_cst]   if inbox looks non-empty [seq_cst]
 *	  && !xchg(wake_pending, 1)           don't sleep
 *	    write(eventfd)                else sleep (an eventfd read is armed)
 *
 * Sequential consistency of the four marked accesses means at least one
 * side sees the other (Dekker), so no wake-up is lost; wake_pending keeps
 * the number of eventfd writes to one per sleep however many producers.
 *
 * Timer ownership across threads. Every loop timer carries an atomic state
 * (in its inbox node); transitions are single compare-and-swaps so that a
 * cancel from another thread and the loop firing the timer have exactly one
 * winner:
 *
 *	IDLE/DONE ──schedule──▶ CLAIMED ──fields written──▶ QUEUED ──loop pops──▶ ARMED
 *	IDLE/DONE ──loop add───▶ CLAIMED ──fields written, linked──────────────▶ ARMED
 *	ARMED ──fires (one-shot)──▶ DONE                 (callback owns the timer)
 *	ARMED ──fires (executor)──▶ RUNNING ──tw_loop_timer_call()──▶ DONE
 *	ARMED ──fires (periodic)──▶ RUNNING ──run ends──▶ ARMED (re-linked first)
 *	ARMED ──fires (periodic, executor)──▶ RUNNING ──run ends──▶ RETURNED (pushed)
 *	                                  ──loop pops──▶ ARMED (re-linked first)
 *	QUEUED/RETURNED ──cancel──▶ CANCELLED (already in the inbox) ─┐ loop pops:
 *	ARMED  ──cancel──▶ CANCELLED + pushed onto the inbox ─────────┴▶ unlink, IDLE
 *	RUNNING ──cancel──▶ RUNNING|CANCEL_REQ ──run ends──▶ unlink, IDLE
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
 * so one link per timer suffices and nothing is allocated.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "twheel/loop.h"

#define CACHELINE 64

#define TW__NODE_TIMER 1u
#define TW__NODE_WORK 2u

/* Timer states (struct tw_loop_node._state). */
#define TW__T_IDLE 0u
#define TW__T_QUEUED 1u
#define TW__T_ARMED 2u
#define TW__T_DONE 3u
#define TW__T_CANCELLED 4u
#define TW__T_RUNNING 5u
#define TW__T_CLAIMED 6u
#define TW__T_RETURNED 7u
#define TW__T_CANCEL_REQ 0x100u /* or-ed into RUNNING */

/* Internal: in timer.flags, so that firing reads only the first cache line. */
#define TW__LOOP_PERIODIC (1u << 31)

#define TIMER_FLAGS (TW_LOOP_DEFERRABLE | TW_LOOP_EXECUTOR)
#define PERIODIC_FLAGS (TIMER_FLAGS | TW_LOOP_FIXED_DELAY | TW_LOOP_MISFIRE_MASK)

#define NO_TIMEOUT UINT64_MAX
#define DEFAULT_TICK 1000000ull
#define DEFAULT_ENTRIES 256u
#define DEFAULT_BATCH 4096u
/* I/O handlers run per iteration before the wheels are advanced. */
#define CQE_BATCH 256u

/* Returned by inbox_pop() when a producer is half-way through a push. */
static struct tw_loop_node inbox_retry;

/* The loop whose wheels this thread is advancing (read by loop_fire()
 * instead of t->_loop, which sits on the timer's second cache line). */
static _Thread_local struct twheel_loop *firing_loop;

struct twheel_loop {
	/* Written by producers: the push end of the inbox, on its own line. */
	_Alignas(CACHELINE) struct tw_loop_node *q_head;

	/* Wake-up handshake and stop flag: read by producers on every push. */
	_Alignas(CACHELINE) uint32_t sleeping;
	uint32_t wake_pending;
	uint32_t stop;
	size_t npending; /* owned timers, counted only with max_pending */

	/* Everything below belongs to the loop thread. */
	_Alignas(CACHELINE) struct tw_loop_node *q_tail;
	struct tw_loop_node stub;
	bool inbox_more;   /* batch exhausted or a push in flight: don't sleep */
	bool cq_more;      /* CQE_BATCH used up with CQEs left: don't sleep */

	struct twheel *wheel;  /* normal timers */
	struct twheel *dwheel; /* deferrable timers */
	uint64_t tick;
	uint64_t now;          /* clock at the start of this iteration */

	twheel_clock_fn clock;
	void *clock_arg;
	twheel_executor_fn executor;
	void *executor_arg;
	void (*release)(struct tw_loop_timer *t, void *arg);
	void *release_arg;
	size_t max_pending;
	unsigned batch;
	unsigned features;

	bool started;
	bool r_disabled;
	bool in_callback;
	bool taskrun_flag; /* IORING_SETUP_TASKRUN_FLAG: sq flags say when to enter */

	/* The periodic timer whose callback runs now, and whether the
	 * callback re-armed or deleted it (then the loop leaves it alone). */
	struct tw_loop_timer *cur;
	bool cur_gone;

	int efd;
	bool efd_armed;    /* a read of efd is queued or in flight */
	uint64_t efd_buf;
	struct tw_loop_io efd_io;

	struct twheel_loop_stats st;
	struct io_uring ring;
};

/* ---- Small helpers ---------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t loop_clock(const struct twheel_loop *l)
{
	return l->clock ? l->clock(l->clock_arg) : mono_ns();
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * The wheel expiry for deadline @d, given a clock reading @ref taken no
 * earlier than the arming call: a deadline still ahead goes to the first
 * tick whose start is at or after it (never early); one at or before @ref
 * is due, and goes to @ref's own tick, which the next advance reaches
 * (rounding it up would make it wait for the next tick boundary).
 */
static inline tw_tick_t deadline_tick(const struct twheel_loop *l, uint64_t d, uint64_t ref)
{
	if (d <= ref)
		return ref / l->tick;
	return d / l->tick + (d % l->tick != 0);
}

static inline uint32_t state_load(const struct tw_loop_node *n)
{
	return __atomic_load_n(&n->_state, __ATOMIC_ACQUIRE);
}

static inline bool state_cas(struct tw_loop_node *n, uint32_t old, uint32_t new)
{
	return __atomic_compare_exchange_n(&n->_state, &old, new, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static inline void state_store(struct tw_loop_node *n, uint32_t s)
{
	__atomic_store_n(&n->_state, s, __ATOMIC_RELEASE);
}

/* The loop that owns @t; only meaningful once an acquire load of its state
 * showed it owned (the owner is stored before that state is published). */
static inline struct twheel_loop *timer_owner(const struct tw_loop_timer *t)
{
	return __atomic_load_n(&t->_loop, __ATOMIC_RELAXED);
}

/* States in which a loop owns the timer (and t->_loop names it). */
static inline bool state_owned(uint32_t s)
{
	return s != TW__T_IDLE && s != TW__T_DONE && s != TW__T_CLAIMED;
}

static inline struct twheel *timer_wheel(const struct twheel_loop *l,
					 const struct tw_loop_timer *t)
{
	return (t->timer.flags & TW_LOOP_DEFERRABLE) ? l->dwheel : l->wheel;
}

/* Account one more owned timer; false when max_pending is reached. */
static inline bool pending_inc(struct twheel_loop *l)
{
	if (!l->max_pending)
		return true;
	if (__atomic_fetch_add(&l->npending, 1, __ATOMIC_RELAXED) >= l->max_pending) {
		__atomic_fetch_sub(&l->npending, 1, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

static inline void pending_dec(struct twheel_loop *l)
{
	if (l->max_pending)
		__atomic_fetch_sub(&l->npending, 1, __ATOMIC_RELAXED);
}

/* ---- The inbox: an intrusive Vyukov MPSC queue --------------------------
 *
 * Producers exchange the head and then link the previous head to the new
 * node: wait-free, one atomic RMW. The consumer follows the links from its
 * private tail. Between a producer's exchange and its link store the chain
 * is broken; the consumer then sees "retry" (never a lost node) and tries
 * again on its next iteration. The stub node keeps the queue non-empty so
 * that the last real node can be handed out.
 */
static inline void inbox_push(struct twheel_loop *l, struct tw_loop_node *n)
{
	struct tw_loop_node *prev;

	__atomic_store_n(&n->_next, NULL, __ATOMIC_RELAXED);
	prev = __atomic_exchange_n(&l->q_head, n, __ATOMIC_SEQ_CST);
	__atomic_store_n(&prev->_next, n, __ATOMIC_RELEASE);
}

/* Returns a node, NULL when empty, or &inbox_retry while a push is in flight. */
static struct tw_loop_node *inbox_pop(struct twheel_loop *l)
{
	struct tw_loop_node *tail = l->q_tail;
	struct tw_loop_node *next = __atomic_load_n(&tail->_next, __ATOMIC_ACQUIRE);

	if (tail == &l->stub) {
		if (!next) {
			if (__atomic_load_n(&l->q_head, __ATOMIC_ACQUIRE) == &l->stub)
				return NULL;
			return &inbox_retry;
		}
		l->q_tail = next;
		tail = next;
		next = __atomic_load_n(&next->_next, __ATOMIC_ACQUIRE);
	}
	if (next) {
		l->q_tail = next;
		return tail;
	}
	if (tail != __atomic_load_n(&l->q_head, __ATOMIC_ACQUIRE))
		return &inbox_retry;
	inbox_push(l, &l->stub);
	next = __atomic_load_n(&tail->_next, __ATOMIC_ACQUIRE);
	if (next) {
		l->q_tail = next;
		return tail;
	}
	return &inbox_retry;
}

/* Whether the inbox may hold something (the loop's half of Dekker). */
static inline bool inbox_maybe_nonempty(struct twheel_loop *l)
{
	return l->q_tail != &l->stub ||
	       __atomic_load_n(&l->q_head, __ATOMIC_SEQ_CST) != &l->stub;
}

/* Producer side of the wake-up handshake (see the design comment). */
static void loop_wake(struct twheel_loop *l)
{
	static const uint64_t one = 1;

	if (!__atomic_load_n(&l->sleeping, __ATOMIC_SEQ_CST))
		return;
	if (__atomic_exchange_n(&l->wake_pending, 1, __ATOMIC_ACQ_REL))
		return;
	while (write(l->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

/* ---- Timer lifetime --------------------------------------------------- */

static void loop_fire(struct tw_timer *tt);

int tw_loop_timer_init(struct tw_loop_timer *t, void (*func)(struct tw_loop_timer *t),
		       unsigned flags)
{
	if (!t || !func || (flags & ~TIMER_FLAGS))
		return -EINVAL;
	tw_timer_init(&t->timer, loop_fire);
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
	if (t->period && t->period < l->tick)
		return -EINVAL;
	if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	return 0;
}

/*
 * Take an idle timer for @l: IDLE/DONE -> CLAIMED, counted against
 * max_pending. The caller fills in the fields and then publishes the
 * state that announces them.
 */
static int timer_claim(struct twheel_loop *l, struct tw_loop_timer *t)
{
	uint32_t s = state_load(&t->_node);

	if (s != TW__T_IDLE && s != TW__T_DONE)
		return -EBUSY;
	if (!pending_inc(l))
		return -ENOSPC;
	if (!state_cas(&t->_node, s, TW__T_CLAIMED)) {
		pending_dec(l);
		return -EBUSY;
	}
	__atomic_store_n(&t->_loop, l, __ATOMIC_RELAXED);
	t->_backlog = 0;
	return 0;
}

/* Link @t on its wheel for @deadline, @ref being a clock reading taken no
 * earlier than the request (loop thread). */
static void timer_link(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline,
		       uint64_t ref)
{
	t->deadline = deadline;
	twheel_mod(timer_wheel(l, t), &t->timer, deadline_tick(l, deadline, ref));
}

/* The loop lets go of a cancelled timer: unlinked, IDLE, then the hook.
 * Nothing here reads @t after the IDLE store but the hook's argument. */
static void timer_release(struct twheel_loop *l, struct tw_loop_timer *t)
{
	void (*release)(struct tw_loop_timer *, void *) = l->release;
	void *arg = l->release_arg;

	twheel_del(timer_wheel(l, t), &t->timer);
	pending_dec(l);
	state_store(&t->_node, TW__T_IDLE);
	if (release)
		release(t, arg);
}

/* Publish @t armed after it was linked; @from is the state it leaves. A
 * cancel that came in meanwhile wins: the timer is released instead. */
static void timer_publish_armed(struct twheel_loop *l, struct tw_loop_timer *t, uint32_t from)
{
	if (!state_cas(&t->_node, from, TW__T_ARMED))
		timer_release(l, t);
}

/* ---- Firing ----------------------------------------------------------- */

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

/* The deadline after a run of periodic @t served at t->deadline, with
 * t->missed and t->_backlog as the firing left them; @now the loop's time. */
static uint64_t periodic_next(struct twheel_loop *l, const struct tw_loop_timer *t,
			      uint64_t now)
{
	unsigned policy = t->timer.flags & TW_LOOP_MISFIRE_MASK;

	if (!(t->timer.flags & TW_LOOP_FIXED_DELAY)) /* ALL: the next one, maybe due */
		return rate_next(t->deadline, t->period,
				 policy == TW_LOOP_MISFIRE_ALL ? 0 : t->missed);
	if (t->_backlog)
		return now; /* owed: due again in the next iteration */
	return add_sat(loop_clock(l), t->period);
}

static void fire_periodic(struct twheel_loop *l, struct tw_loop_timer *t)
{
	uint64_t now = l->now, d = t->deadline, p = t->period, next, missed;
	unsigned policy = t->timer.flags & TW_LOOP_MISFIRE_MASK;
	bool rate = !(t->timer.flags & TW_LOOP_FIXED_DELAY), run = true;

	if (state_load(&t->_node) != TW__T_ARMED)
		return; /* cancelled by another thread: the inbox releases it */

	missed = now > d ? (now - d) / p : 0;
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
		next = rate ? rate_next(d, p, missed) : add_sat(now, p);
		timer_link(l, t, next, now);
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

	timer_link(l, t, periodic_next(l, t, now), now);
	if (!state_cas(&t->_node, TW__T_RUNNING, TW__T_ARMED))
		timer_release(l, t); /* cancelled from another thread during the run */
}

/* The core wheel's callback for every loop timer. */
static void loop_fire(struct tw_timer *tt)
{
	struct tw_loop_timer *t = tw_container_of(tt, struct tw_loop_timer, timer);
	struct twheel_loop *l = firing_loop;
	void (*func)(struct tw_loop_timer *) = t->func;
	unsigned flags = tt->flags;

	if (flags & TW__LOOP_PERIODIC) {
		fire_periodic(l, t);
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
	if (!state_cas(&t->_node, TW__T_ARMED, TW__T_DONE))
		return; /* cancelled by another thread: the inbox releases it */
	/* DONE is published: @t belongs to its callback now, not to us */
	pending_dec(l);
	l->st.timers_fired++;
	func(t);
}

void tw_loop_timer_call(struct tw_loop_timer *t)
{
	void (*func)(struct tw_loop_timer *) = t->func;
	struct twheel_loop *l = timer_owner(t);

	if (!(t->timer.flags & TW__LOOP_PERIODIC)) {
		pending_dec(l);
		state_store(&t->_node, TW__T_DONE);
		func(t);
		return;
	}
	func(t);
	/* Hand it back to the loop, which re-arms it (or releases it if it
	 * was cancelled during the run); then never touch it again. */
	if (!state_cas(&t->_node, TW__T_RUNNING, TW__T_RETURNED))
		state_store(&t->_node, TW__T_CANCELLED);
	inbox_push(l, &t->_node);
	loop_wake(l);
}

/* ---- Loop-thread timer API ---------------------------------------------- */

static int loop_add(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline,
		    uint64_t ref, bool mod)
{
	uint32_t s;
	int ret = timer_check(l, t);

	if (ret)
		return ret;
	s = state_load(&t->_node);
	if (state_owned(s) && timer_owner(t) != l)
		return -EXDEV;
	if (s == TW__T_ARMED && mod) {
		timer_link(l, t, deadline, ref);
		return 1;
	}
	if ((s & ~TW__T_CANCEL_REQ) == TW__T_RUNNING && t == l->cur && !l->cur_gone) {
		/* A periodic timer re-armed by its own callback. */
		if (s != TW__T_RUNNING)
			return -EBUSY; /* cancelled from another thread */
		l->cur_gone = true;
		t->_backlog = 0;
		timer_link(l, t, deadline, ref);
		timer_publish_armed(l, t, TW__T_RUNNING);
		return 0;
	}
	ret = timer_claim(l, t);
	if (ret)
		return ret;
	timer_link(l, t, deadline, ref);
	state_store(&t->_node, TW__T_ARMED);
	return 0;
}

int twheel_loop_add_at(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline_ns)
{
	return loop_add(l, t, deadline_ns, l ? l->now : 0, false);
}

int twheel_loop_add(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay_ns)
{
	uint64_t now;

	if (!l)
		return -EINVAL;
	now = loop_clock(l);
	return loop_add(l, t, add_sat(now, delay_ns), now, false);
}

int twheel_loop_mod_at(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t deadline_ns)
{
	return loop_add(l, t, deadline_ns, l ? l->now : 0, true);
}

int twheel_loop_mod(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay_ns)
{
	uint64_t now;

	if (!l)
		return -EINVAL;
	now = loop_clock(l);
	return loop_add(l, t, add_sat(now, delay_ns), now, true);
}

int twheel_loop_del(struct twheel_loop *l, struct tw_loop_timer *t)
{
	uint32_t s;

	if (!l || !t)
		return -EINVAL;
	s = state_load(&t->_node);
	if (state_owned(s) && timer_owner(t) != l)
		return -EXDEV;
	switch (s) {
	case TW__T_ARMED:
		/* unlink first: IDLE lets other threads reuse the memory */
		twheel_del(timer_wheel(l, t), &t->timer);
		if (!state_cas(&t->_node, TW__T_ARMED, TW__T_IDLE))
			return 0; /* a cancel from another thread won; it releases */
		pending_dec(l);
		return 1;
	case TW__T_QUEUED:
	case TW__T_RETURNED:
		/* Still on the inbox: the loop releases it when it gets there. */
		return state_cas(&t->_node, s, TW__T_CANCELLED) ? 1 : 0;
	case TW__T_RUNNING:
	case TW__T_RUNNING | TW__T_CANCEL_REQ:
		if (!(t->timer.flags & TW__LOOP_PERIODIC))
			return 0; /* a one-shot on the executor: it has fired */
		if (t != l->cur) /* periodic, on the executor: released when it returns */
			return state_cas(&t->_node, TW__T_RUNNING,
					 TW__T_RUNNING | TW__T_CANCEL_REQ) ? 1 : 0;
		if (l->cur_gone)
			return 0;
		/* its own callback is running on this thread: the loop will not
		 * touch it after the callback returns */
		l->cur_gone = true;
		pending_dec(l);
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

/* ---- Any-thread API ----------------------------------------------------- */

int twheel_loop_schedule_at(struct twheel_loop *l, struct tw_loop_timer *t,
			    uint64_t deadline_ns)
{
	int ret = timer_check(l, t);

	if (!ret)
		ret = timer_claim(l, t);
	if (ret)
		return ret;
	t->deadline = deadline_ns;
	state_store(&t->_node, TW__T_QUEUED);
	inbox_push(l, &t->_node);
	loop_wake(l);
	return 0;
}

int twheel_loop_schedule(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay_ns)
{
	if (!l)
		return -EINVAL;
	return twheel_loop_schedule_at(l, t, add_sat(loop_clock(l), delay_ns));
}

int twheel_loop_cancel(struct twheel_loop *l, struct tw_loop_timer *t)
{
	if (!l || !t)
		return -EINVAL;
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
			return -EALREADY;
		case TW__T_QUEUED:
		case TW__T_RETURNED:
			if (state_cas(&t->_node, s, TW__T_CANCELLED))
				return 1; /* the loop releases it when it pops it */
			break;
		case TW__T_ARMED:
			if (state_cas(&t->_node, s, TW__T_CANCELLED)) {
				/* Ask the loop to unlink and release it. */
				inbox_push(l, &t->_node);
				loop_wake(l);
				return 1;
			}
			break;
		case TW__T_RUNNING:
			if (!(t->timer.flags & TW__LOOP_PERIODIC))
				return 0; /* a one-shot handed to the executor: fired */
			if (state_cas(&t->_node, s, TW__T_RUNNING | TW__T_CANCEL_REQ))
				return 0;
			break;
		default:
			return -EINVAL;
		}
	}
}

int twheel_loop_post(struct twheel_loop *l, struct tw_loop_work *w)
{
	if (!l || !w || !w->func)
		return -EINVAL;
	if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (!state_cas(&w->_node, 0, 1))
		return -EBUSY;
	w->_node._kind = TW__NODE_WORK;
	inbox_push(l, &w->_node);
	loop_wake(l);
	return 0;
}

int twheel_loop_stop(struct twheel_loop *l)
{
	if (!l)
		return -EINVAL;
	__atomic_store_n(&l->stop, 1, __ATOMIC_SEQ_CST);
	loop_wake(l);
	return 0;
}

bool twheel_loop_stopped(const struct twheel_loop *l)
{
	return l && __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
}

/* ---- The inbox, loop side ------------------------------------------------ */

/* Run a popped work item; it may be posted again once its func started. */
static void work_run(struct tw_loop_work *w)
{
	void (*func)(struct tw_loop_work *) = w->func;

	state_store(&w->_node, 0);
	func(w);
}

/* Handle one popped node; returns 1 if a user callback ran. */
static int inbox_handle(struct twheel_loop *l, struct tw_loop_node *n)
{
	struct tw_loop_timer *t;
	uint32_t s;

	if (n->_kind == TW__NODE_WORK) {
		work_run(tw_container_of(n, struct tw_loop_work, _node));
		return 1;
	}
	t = tw_container_of(n, struct tw_loop_timer, _node);
	s = state_load(n);
	if (s == TW__T_QUEUED) {
		timer_link(l, t, t->deadline, l->now);
		timer_publish_armed(l, t, s);
	} else if (s == TW__T_RETURNED) {
		/* a periodic executor run ended; misfires are judged when the
		 * next deadline is due */
		timer_link(l, t, periodic_next(l, t, l->now), l->now);
		timer_publish_armed(l, t, s);
	} else if (s == TW__T_CANCELLED) {
		timer_release(l, t);
	}
	return 0;
}

static int inbox_run(struct twheel_loop *l)
{
	int ran = 0;
	unsigned i;

	l->inbox_more = false;
	for (i = 0; i < l->batch; i++) {
		struct tw_loop_node *n = inbox_pop(l);

		if (!n)
			return ran;
		if (n == &inbox_retry) {
			/* A producer was preempted mid-push: let it finish. */
			l->inbox_more = true;
			sched_yield();
			return ran;
		}
		l->st.inbox_items++;
		ran += inbox_handle(l, n);
	}
	l->inbox_more = true; /* batch used up: more next iteration, no sleep */
	return ran;
}

/* ---- io_uring ------------------------------------------------------------ */

static struct io_uring_sqe *loop_sqe(struct twheel_loop *l, void *data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe && l->started) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (sqe)
		io_uring_sqe_set_data(sqe, data);
	return sqe;
}

struct io_uring_sqe *twheel_loop_get_sqe(struct twheel_loop *l, struct tw_loop_io *io)
{
	if (!l || !io)
		return NULL;
	return loop_sqe(l, io);
}

int twheel_loop_submit(struct twheel_loop *l)
{
	if (!l)
		return -EINVAL;
	if (!l->started)
		return -EBADFD;
	return io_uring_submit(&l->ring);
}

struct io_uring *twheel_loop_ring(struct twheel_loop *l)
{
	return l ? &l->ring : NULL;
}

/* Keep one read of the eventfd in flight: that is how producers wake us. */
static void efd_arm(struct twheel_loop *l)
{
	struct io_uring_sqe *sqe = loop_sqe(l, &l->efd_io);

	l->efd_armed = sqe != NULL;
	if (sqe)
		io_uring_prep_read(sqe, l->efd, &l->efd_buf, sizeof(l->efd_buf), 0);
	/* else: the SQ is full of the user's SQEs; loop_wait() retries */
}

static void efd_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct twheel_loop *l = tw_container_of(io, struct twheel_loop, efd_io);

	(void)cqe;
	l->st.eventfd_wakes++;
	l->efd_armed = false;
	__atomic_store_n(&l->wake_pending, 0, __ATOMIC_SEQ_CST);
	efd_arm(l);
}

/* Run the handlers of the CQEs available now; returns how many user ones. */
static int cqes_run(struct twheel_loop *l)
{
	unsigned budget = CQE_BATCH;
	struct io_uring_cqe *cqe;
	int ran = 0;

	l->cq_more = false;
	for (;;) {
		if (io_uring_peek_cqe(&l->ring, &cqe) != 0)
			break;
		if (!budget--) {
			l->cq_more = true; /* the rest next iteration, no sleep */
			break;
		}
		struct io_uring_cqe c = *cqe;
		struct tw_loop_io *io = io_uring_cqe_get_data(&c);

		io_uring_cqe_seen(&l->ring, cqe);
		if (!io)
			continue;
		if (io != &l->efd_io) {
			l->st.io_completions++;
			ran++;
		}
		io->func(io, &c);
	}
	return ran;
}

/*
 * Step 1 and 2 of an iteration: submit, and sleep unless @nowait or
 * something is due. Returns 0 or a negative errno from io_uring_enter().
 */
static int loop_wait(struct twheel_loop *l, bool nowait)
{
	uint64_t timeout = NO_TIMEOUT, now;
	int ret;

	if (!l->efd_armed)
		efd_arm(l); /* without it another thread could not wake us */
	if (nowait || !l->efd_armed || l->inbox_more || l->cq_more ||
	    __atomic_load_n(&l->stop, __ATOMIC_RELAXED)) {
		timeout = 0;
	} else {
		tw_tick_t next = twheel_next_expiry(l->wheel);

		if (next != TW_TICK_MAX && next <= UINT64_MAX / l->tick) {
			uint64_t dl = next * l->tick;

			now = loop_clock(l);
			timeout = dl > now ? dl - now : 0;
		}
	}

	if (timeout) {
		__atomic_store_n(&l->sleeping, 1, __ATOMIC_SEQ_CST);
		if (inbox_maybe_nonempty(l) || __atomic_load_n(&l->stop, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&l->sleeping, 0, __ATOMIC_RELAXED);
			timeout = 0;
		}
	}

	if (!timeout) {
		/* Poll: enter the kernel only to submit, or when completions
		 * wait as deferred task work (or we cannot tell). */
		bool enter = io_uring_sq_ready(&l->ring) ||
			     ((l->features & TW_LOOP_FEAT_DEFER_TASKRUN) &&
			      (!l->taskrun_flag ||
			       (IO_URING_READ_ONCE(*l->ring.sq.kflags) &
				(IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW))));

		ret = enter ? io_uring_submit_and_get_events(&l->ring) : 0;
		return ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY ? ret : 0;
	}

	l->st.waits++;
	if (timeout == NO_TIMEOUT) {
		ret = io_uring_submit_and_wait(&l->ring, 1);
	} else {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = {
			.tv_sec = (long long)(timeout / 1000000000ull),
			.tv_nsec = (long long)(timeout % 1000000000ull),
		};

		ret = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
	}
	__atomic_store_n(&l->sleeping, 0, __ATOMIC_RELAXED);
	l->st.wakeups++;
	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return ret;
	return 0;
}

static int loop_start(struct twheel_loop *l)
{
	if (l->r_disabled) {
		/* io_uring_enable_rings() is declared but not exported by
		 * liburing 2.3: issue the register opcode directly. */
		int ret = io_uring_register(l->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
					    NULL, 0);

		if (ret < 0)
			return ret;
		l->r_disabled = false;
	}
	l->started = true;
	efd_arm(l);
	return 0;
}

int twheel_loop_run_once(struct twheel_loop *l, unsigned flags)
{
	struct twheel_loop *prev;
	tw_tick_t tick;
	long fired;
	int ret, ran;

	if (!l || (flags & ~TW_LOOP_NOWAIT))
		return -EINVAL;
	if (l->in_callback)
		return -EBUSY;
	if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (!l->started) {
		ret = loop_start(l);
		if (ret)
			return ret;
	}
	l->st.iterations++;

	ret = loop_wait(l, flags & TW_LOOP_NOWAIT);
	if (ret)
		return ret;

	l->in_callback = true;
	l->now = loop_clock(l);
	ran = cqes_run(l);
	ran += inbox_run(l);

	/* A replaced clock might step back; the wheels never do. */
	tick = l->now / l->tick;
	if (tick < twheel_now(l->wheel))
		tick = twheel_now(l->wheel);
	prev = firing_loop; /* another loop may be running this one from a callback */
	firing_loop = l;
	fired = twheel_advance(l->wheel, tick);
	if (fired > 0)
		ran += (int)fired;
	fired = twheel_advance(l->dwheel, tick);
	if (fired > 0)
		ran += (int)fired;
	firing_loop = prev;
	l->in_callback = false;
	return ran;
}

int twheel_loop_run(struct twheel_loop *l)
{
	for (;;) {
		int ret = twheel_loop_run_once(l, 0);

		if (ret == -ESHUTDOWN)
			return 0;
		if (ret < 0)
			return ret;
	}
}

/* ---- Creation and teardown ----------------------------------------------- */

void twheel_loop_config_init(struct twheel_loop_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->tick_ns = DEFAULT_TICK;
}

/* Read a small integer from a /proc file; -1 if unreadable. */
static long read_proc_long(const char *path, const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtol(line, NULL, 10);
			break;
		}
		if (!strncmp(line, key, strlen(key))) {
			v = strtol(line + strlen(key), NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* One line naming why io_uring_setup() failed with @err. */
static void explain(char *msg, size_t len, int err)
{
	long dis, sec;

	if (!msg || !len)
		return;
	switch (-err) {
	case ENOSYS:
		snprintf(msg, len, "io_uring_setup: ENOSYS: this kernel has no io_uring "
			 "(CONFIG_IO_URING=n or older than 5.1), or a seccomp filter "
			 "hides it");
		return;
	case EPERM:
		dis = read_proc_long("/proc/sys/kernel/io_uring_disabled", NULL);
		sec = read_proc_long("/proc/self/status", "Seccomp:");
		if (dis == 2)
			snprintf(msg, len, "io_uring_setup: EPERM: io_uring is disabled "
				 "system-wide (sysctl kernel.io_uring_disabled=2)");
		else if (dis == 1)
			snprintf(msg, len, "io_uring_setup: EPERM: io_uring is restricted "
				 "to the group kernel.io_uring_group (sysctl "
				 "kernel.io_uring_disabled=1)");
		else if (sec == 2)
			snprintf(msg, len, "io_uring_setup: EPERM: refused by the seccomp "
				 "filter of this process (a container's default profile "
				 "blocks io_uring_setup; allow it or run unconfined)");
		else
			snprintf(msg, len, "io_uring_setup: EPERM: refused by the kernel "
				 "(an LSM policy?)");
		return;
	case ENOMEM:
		snprintf(msg, len, "io_uring_setup: ENOMEM: cannot allocate the rings "
			 "(RLIMIT_MEMLOCK on kernels before 5.12, or memory)");
		return;
	case EMFILE:
	case ENFILE:
		snprintf(msg, len, "io_uring_setup: %s: out of file descriptors",
			 err == -EMFILE ? "EMFILE" : "ENFILE");
		return;
	default:
		snprintf(msg, len, "io_uring_setup: %s", strerror(-err));
	}
}

int twheel_loop_create(struct twheel_loop **loopp, const struct twheel_loop_config *ucfg,
		       char *msg, size_t len)
{
	struct twheel_loop_config cfg;
	struct io_uring_params p;
	struct twheel_loop *l;
	tw_tick_t now;
	int ret;

	if (msg && len)
		msg[0] = '\0';
	if (!loopp)
		return -EINVAL;
	*loopp = NULL;
	if (ucfg)
		cfg = *ucfg;
	else
		twheel_loop_config_init(&cfg);
	if (!cfg.tick_ns)
		cfg.tick_ns = DEFAULT_TICK;
	if (cfg.tick_ns < 1000 || cfg.tick_ns > 1000000000ull ||
	    (cfg.flags & ~TW_LOOP_NO_DEFER_TASKRUN)) {
		if (msg && len)
			snprintf(msg, len, "twheel_loop_create: tick must be 1 us .. 1 s");
		return -EINVAL;
	}

	l = aligned_alloc(CACHELINE, (sizeof(*l) + CACHELINE - 1) & ~(size_t)(CACHELINE - 1));
	if (!l)
		return -ENOMEM;
	memset(l, 0, sizeof(*l));
	l->tick = cfg.tick_ns;
	l->clock = cfg.clock;
	l->clock_arg = cfg.clock_arg;
	l->executor = cfg.executor;
	l->executor_arg = cfg.executor_arg;
	l->release = cfg.release;
	l->release_arg = cfg.release_arg;
	l->max_pending = cfg.max_pending;
	l->batch = cfg.batch ? cfg.batch : DEFAULT_BATCH;
	l->q_head = &l->stub;
	l->q_tail = &l->stub;
	l->efd_io.func = efd_done;
	l->efd = -1;

	/*
	 * SINGLE_ISSUER|DEFER_TASKRUN (6.1+): completions are posted only when
	 * the loop thread asks, in its own context. R_DISABLED lets the thread
	 * that first runs the loop, not the creating one, become the issuer.
	 * Older kernels reject the flags with EINVAL: retry without.
	 */
	ret = -EINVAL;
	if (!(cfg.flags & TW_LOOP_NO_DEFER_TASKRUN)) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			  IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_R_DISABLED;
		ret = io_uring_queue_init_params(cfg.entries ? cfg.entries : DEFAULT_ENTRIES,
						 &l->ring, &p);
		if (ret == 0) {
			l->features |= TW_LOOP_FEAT_DEFER_TASKRUN;
			l->r_disabled = true;
			l->taskrun_flag = true;
		}
	}
	if (ret == -EINVAL) {
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(cfg.entries ? cfg.entries : DEFAULT_ENTRIES,
						 &l->ring, &p);
	}
	if (ret < 0) {
		explain(msg, len, ret);
		free(l);
		return ret;
	}

	/* Waits carry their timeout as an argument (IORING_FEAT_EXT_ARG, 5.11):
	 * the one feature the loop cannot do without. */
	if (!(p.features & IORING_FEAT_EXT_ARG)) {
		ret = -EOPNOTSUPP;
		if (msg && len)
			snprintf(msg, len, "io_uring: the kernel lacks IORING_FEAT_EXT_ARG "
				 "(timed waits): Linux 5.11 or later is needed");
		goto err_ring;
	}
	l->features |= TW_LOOP_FEAT_EXT_ARG;

	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0) {
		ret = -errno;
		if (msg && len)
			snprintf(msg, len, "eventfd: %s", strerror(-ret));
		goto err_ring;
	}

	l->now = loop_clock(l);
	now = l->now / l->tick;
	l->wheel = twheel_create(now);
	l->dwheel = twheel_create(now);
	if (!l->wheel || !l->dwheel) {
		ret = -ENOMEM;
		goto err_wheels;
	}
	*loopp = l;
	return 0;

err_wheels:
	twheel_destroy(l->wheel);
	twheel_destroy(l->dwheel);
	close(l->efd);
err_ring:
	io_uring_queue_exit(&l->ring);
	free(l);
	return ret;
}

struct drain_ctx {
	struct twheel_loop *l;
	void (*fn)(struct tw_loop_timer *t, void *arg);
	void *arg;
	size_t n;
};

static void drain_one(struct tw_timer *tt, void *arg)
{
	struct drain_ctx *c = arg;
	struct tw_loop_timer *t = tw_container_of(tt, struct tw_loop_timer, timer);

	if (state_cas(&t->_node, TW__T_ARMED, TW__T_IDLE)) {
		pending_dec(c->l);
		c->n++;
		if (c->fn)
			c->fn(t, c->arg);
	}
}

size_t twheel_loop_drain(struct twheel_loop *l,
			 void (*timer_fn)(struct tw_loop_timer *t, void *arg),
			 void (*work_fn)(struct tw_loop_work *w, void *arg), void *arg)
{
	struct drain_ctx c = { .l = l, .fn = timer_fn, .arg = arg, .n = 0 };
	struct tw_loop_node *n;

	if (!l || l->in_callback)
		return 0;
	/* The inbox first: cancels in it unlink timers from the wheels. */
	while ((n = inbox_pop(l))) {
		struct tw_loop_timer *t;
		uint32_t s;

		if (n == &inbox_retry) {
			sched_yield();
			continue;
		}
		if (n->_kind == TW__NODE_WORK) {
			struct tw_loop_work *w = tw_container_of(n, struct tw_loop_work, _node);

			if (work_fn) {
				state_store(n, 0);
				work_fn(w, arg);
			} else {
				work_run(w);
			}
			continue;
		}
		t = tw_container_of(n, struct tw_loop_timer, _node);
		s = state_load(n);
		if ((s == TW__T_QUEUED || s == TW__T_RETURNED) && state_cas(n, s, TW__T_IDLE)) {
			pending_dec(l);
			c.n++;
			if (timer_fn)
				timer_fn(t, arg);
		} else if (state_load(n) == TW__T_CANCELLED) {
			timer_release(l, t);
		}
	}
	twheel_drain(l->wheel, drain_one, &c);
	twheel_drain(l->dwheel, drain_one, &c);
	return c.n;
}

void twheel_loop_destroy(struct twheel_loop *l,
			 void (*timer_fn)(struct tw_loop_timer *t, void *arg),
			 void (*work_fn)(struct tw_loop_work *w, void *arg), void *arg)
{
	if (!l)
		return;
	twheel_loop_drain(l, timer_fn, work_fn, arg);
	io_uring_queue_exit(&l->ring);
	close(l->efd);
	twheel_destroy(l->wheel);
	twheel_destroy(l->dwheel);
	free(l);
}

/* ---- Inspection ------------------------------------------------------------ */

uint64_t twheel_loop_now(const struct twheel_loop *l)
{
	return l ? l->now : 0;
}

uint64_t twheel_loop_clock(const struct twheel_loop *l)
{
	return l ? loop_clock(l) : 0;
}

uint64_t twheel_loop_tick(const struct twheel_loop *l)
{
	return l ? l->tick : 0;
}

unsigned twheel_loop_features(const struct twheel_loop *l)
{
	return l ? l->features : 0;
}

int twheel_loop_get_stats(const struct twheel_loop *l, struct twheel_loop_stats *st)
{
	if (!l || !st)
		return -EINVAL;
	*st = l->st;
	return 0;
}

size_t twheel_loop_count(const struct twheel_loop *l)
{
	return l ? twheel_count(l->wheel) + twheel_count(l->dwheel) : 0;
}
