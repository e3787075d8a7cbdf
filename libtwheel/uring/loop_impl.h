/* SPDX-License-Identifier: MIT */
/*
 * loop_impl.h - what the files of twheel-uring share, private to them: the
 * loop struct, the timer states, the small helpers, and the functions one
 * concern offers the others (prefix twl_; hidden, like everything but the
 * public API). Each .c file opens with the design of its own concern:
 *
 *	inbox.c     the cross-thread inbox (MPSC queue), waking the loop, posting work
 *	timer.c     the loop-timer state machine: add/mod/del, schedule/cancel, and
 *	            firing one-shot and periodic timers
 *	periodic.c  the periodic policy (misfires, the next deadline): pure functions
 *	wait.c      one iteration: the kernel wait, I/O completions, handing out
 *	            the inbox's items, advancing the wheels
 *	multishot.c which requests in flight are multishot, to count their ends
 *	create.c    creation, kernel probing and its error messages, destroy, inspection
 *	drain.c     handing back everything the loop owns
 *	deadline.c  a deadline on an I/O request: a linked timeout or a loop timer
 *
 * Time. The loop clock gives nanoseconds (CLOCK_MONOTONIC by default),
 * mapped onto wheel ticks of l->tick ns. The wheels are advanced to
 * floor(now / tick). A deadline d still ahead of the reference reading r
 * (a clock reading taken no earlier than the arming call) becomes the
 * expiry ceil(d / tick): since floor(now / tick) >= ceil(d / tick) implies
 * now >= d, nothing fires early, and since the loop sleeps until the tick
 * boundary ceil(d / tick) * tick < d + tick, nothing is more than a tick
 * plus wake-up latency late. A deadline d <= r has come already: it gets a
 * tick no later than r's own, floor(r / tick), which the next advance
 * reaches, so it runs in the next iteration. These rules are the core's
 * (<twheel/rt.h>), shared with every other loop that drives a wheel.
 */
#ifndef TWHEEL_LOOP_IMPL_H
#define TWHEEL_LOOP_IMPL_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include <twheel/rt.h>

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
#define TW__T_QUEUED_DELAY 8u /* QUEUED, t->deadline holding a delay (timer.c) */
#define TW__T_CANCEL_REQ 0x100u /* or-ed into RUNNING */
#define TW__T_CALLED 0x200u     /* or-ed into RUNNING: tw_loop_timer_call() runs it */

/* Internal: in timer.flags, so that firing reads only the first cache line. */
#define TW__LOOP_PERIODIC (1u << 31)
/* Internal: a loop timer of the loop's own that cfg.max_pending does not
 * count (a bound legacy host's: nothing could report its -ENOSPC). */
#define TW__LOOP_UNCOUNTED (1u << 30)

#define TIMER_FLAGS (TW_LOOP_DEFERRABLE | TW_LOOP_EXECUTOR)
#define CONFIG_FLAGS \
	(TW_LOOP_NO_DEFER_TASKRUN | TW_LOOP_NO_URING | TW_LOOP_URING_ONLY | TW_LOOP_NO_LINK_TIMEOUT)
#define PERIODIC_FLAGS (TIMER_FLAGS | TW_LOOP_FIXED_DELAY | TW_LOOP_MISFIRE_MASK)

#define NO_TIMEOUT UINT64_MAX
#define DEFAULT_TICK 1000000ull
#define DEFAULT_ENTRIES 256u
#define DEFAULT_BATCH 4096u
/* Inbox items popped before one clock reading (wait.c). */
#define INBOX_CHUNK 64u
/* Arms by delay parked since the last placement that make the loop place
 * them at once (timer.c). */
#define PARK_BATCH 64u
/* I/O handlers run per iteration at most (wait.c). */
#define CQE_BATCH 256u
/* Slots of the count of other threads' calls under way (callers_enter()). */
#define CALLER_SLOTS 16u
/* The least CQ ring size asked for (create.c): a few iterations' CQEs. */
#define CQ_MIN_ENTRIES (4 * CQE_BATCH)

struct twheel_loop {
	/* Written by producers: the push end of the inbox, on its own line. */
	_Alignas(CACHELINE) struct tw_loop_node *q_head;

	/* How many calls of other threads are under way (callers_enter()):
	 * a slot, a line each, for each of the process's first CALLER_SLOTS
	 * threads to call, written by that thread alone; the threads after
	 * them share the last one. */
	struct {
		_Alignas(CACHELINE) uint32_t n;
	} callers[CALLER_SLOTS + 1];

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
	bool cq_marked;    /* a backlog of CQEs is being run (wait.c) */
	unsigned cq_mark;  /* the CQ tail when cq_mark_ns was read */
	uint64_t cq_mark_ns; /* the wheels wait for this reading until the
			      * CQEs before cq_mark have all run */
	unsigned cq_held;  /* CQEs the mark may still move on over: the kernel
			    * held completions back from the ring at its
			    * reading (wait.c); 0 if it did not */

	struct twheel *wheel;  /* normal timers */
	struct twheel *dwheel; /* deferrable timers */
	struct twheel_rt rt;   /* tick length and clock: the real-time rules */
	uint64_t now;          /* clock at the start of this iteration */
	unsigned nparked;      /* arms by delay parked since the last placement
				* (or fewer: some may have been re-armed) */
	tw_tick_t tick;        /* the wheels' tick, or the one this iteration
				* advances them to: timers armed meanwhile go
				* after it (timer_link(), timer.c) */
	uint64_t out_ref;      /* the reading arms by deadline outside an
				* iteration count from, if out_fresh (timer.c) */
	bool out_fresh;        /* out_ref was read since the last iteration */

	twheel_executor_fn executor;
	void *executor_arg;
	void (*release)(struct tw_loop_timer *t, void *arg);
	void *release_arg;
	size_t max_pending;
	unsigned batch;
	unsigned features;

	pid_t pid;         /* the process that created the loop (fork()) */
	bool started;
	bool r_disabled;
	bool in_callback;
	bool taskrun_flag; /* IORING_SETUP_TASKRUN_FLAG: sq flags say when to enter */
	unsigned held_flags; /* the SQ flags that say the kernel holds CQEs back
			      * from the ring: IORING_SQ_CQ_OVERFLOW, and
			      * IORING_SQ_TASKRUN with taskrun_flag (wait.c) */

	/* The periodic timer whose callback runs now, and whether the
	 * callback re-armed or deleted it (then the loop leaves it alone). */
	struct tw_loop_timer *cur;
	bool cur_gone;

	int efd;
	int epfd;          /* fallback mode (no io_uring): waits here; else -1 */
	bool no_pwait2;    /* fallback mode: epoll_pwait2() is missing or refused */
	bool efd_armed;    /* a read of efd is queued or in flight */
	uint64_t efd_buf;
	struct tw_loop_io efd_io;

	/* Multishot requests in flight, by user_data (multishot.c). */
	unsigned sq_seen;  /* SQEs before this SQ index were looked at */
	unsigned ms_bits;  /* the table has 2^ms_bits slots; 0: no table yet */
	size_t ms_len;     /* keys in the table */
	uint64_t *ms_tab;  /* 0: a free slot */

	/* The legacy hosts bound to the loop (compat.c), NULL if none. */
	struct loop_compat *compat;

	struct twheel_loop_stats st;
	struct io_uring ring;
};

/* ---- Small helpers ---------------------------------------------------- */

static inline uint64_t loop_clock(const struct twheel_loop *l)
{
	return twheel_rt_now(&l->rt);
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* True when the loop clock is CLOCK_MONOTONIC, which never steps back. */
static inline bool loop_steady(const struct twheel_loop *l)
{
	return !l->rt.clock || l->rt.clock == twheel_rt_clock_monotonic;
}

/* True when the loop runs without io_uring (TW_LOOP_FEAT_FALLBACK). */
static inline bool loop_fallback(const struct twheel_loop *l)
{
	return l->epfd >= 0;
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

/* Whether owning @t counts against max_pending. */
static inline bool pending_counts(const struct twheel_loop *l, const struct tw_loop_timer *t)
{
	return l->max_pending && !(t->timer.flags & TW__LOOP_UNCOUNTED);
}

/* Account @t owned; false when max_pending is reached. A compare-and-swap
 * that never takes the count past the limit: an add-then-undo would count,
 * until its undo, a timer that never was owned, and refuse another thread
 * whose timer fits (-ENOSPC with fewer than max_pending owned). */
static inline bool pending_inc(struct twheel_loop *l, const struct tw_loop_timer *t)
{
	size_t n;

	if (!pending_counts(l, t))
		return true;
	n = __atomic_load_n(&l->npending, __ATOMIC_RELAXED);
	do {
		if (n >= l->max_pending)
			return false;
	} while (!__atomic_compare_exchange_n(&l->npending, &n, n + 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

static inline void pending_dec(struct twheel_loop *l, const struct tw_loop_timer *t)
{
	if (pending_counts(l, t))
		__atomic_fetch_sub(&l->npending, 1, __ATOMIC_RELAXED);
}

/* Take back a pending_dec() made before a compare-and-swap that then lost
 * (the count drops before the state that frees the timer is published, so
 * that a thread reusing it at once is not refused -ENOSPC). */
static inline void pending_undo(struct twheel_loop *l, const struct tw_loop_timer *t)
{
	if (pending_counts(l, t))
		__atomic_fetch_add(&l->npending, 1, __ATOMIC_RELAXED);
}

/*
 * Move both wheels' time on towards @tick without firing anything:
 * through the cascades on the way, to just before the first tick with a
 * timer's expiry (twheel__catch_up_cascades()). Called with l->tick at
 * the start of an iteration, before its I/O handlers and the inbox arm
 * anything (wait.c), and outside iterations with the tick of a fresh
 * reading of the default clock (twl_catch_up_reading()). A wheel's time
 * otherwise stays at the last advance while the loop idles, and a timer
 * placed 256 ticks or more past it goes to a level above the first, whose
 * cascade tick, before the timer's own or already past, costs an
 * iteration that runs nothing.
 */
static inline void twl_catch_up(struct twheel_loop *l, tw_tick_t tick)
{
	twheel__catch_up_cascades(l->wheel, tick);
	twheel__catch_up_cascades(l->dwheel, tick);
}

/*
 * A fresh reading @now taken outside an iteration (and outside a backlog
 * of CQEs being run: the I/O before timers rule) moves the loop's tick on
 * to its own, as an iteration does, and the wheels catch up to it; only
 * on the default clock: an injected clock may step back before the next
 * iteration, which would then run a timer in an iteration that read less
 * than its deadline.
 */
static inline void twl_catch_up_reading(struct twheel_loop *l, uint64_t now)
{
	tw_tick_t tick;

	if (l->in_callback || l->cq_marked || !loop_steady(l))
		return;
	tick = twheel_rt_floor(&l->rt, now);
	if (tick > l->tick)
		l->tick = tick;
	twl_catch_up(l, l->tick);
}

/* ---- What one concern offers the others --------------------------------- */

/*
 * The calling thread's slot of twheel_loop.callers, the same in every
 * loop, given out when it first calls (inbox.c): one of its own to each
 * of the process's first CALLER_SLOTS threads, the shared one,
 * CALLER_SLOTS, to the rest.
 */
extern _Thread_local unsigned twl_slot_plus1 __attribute__((tls_model("initial-exec")));
unsigned twl_caller_slot_new(void);

static inline unsigned twl_caller_slot(void)
{
	unsigned s = twl_slot_plus1;

	return s ? s - 1 : twl_caller_slot_new();
}

/*
 * The calls of other threads that the loop may act on before they return
 * (a post, a schedule, a cancel, a stop, an executor's hand-back: the loop
 * may run the work, see the stop and be destroyed while the caller is
 * still waking it) count themselves from before their first effect to
 * after their last access to the loop; twheel_loop_destroy() waits until
 * none is under way. The increment is ordered before the effect that the
 * loop (and whoever it tells) can see, which is a release (an exchange, a
 * compare-and-swap, a release store); the decrement releases the call's
 * last access.
 */
static inline void callers_enter(struct twheel_loop *l)
{
	unsigned s = twl_caller_slot();
	uint32_t *n = &l->callers[s].n;

	/* A slot of its own, written by this thread alone: no read-modify-
	 * write, no fence. The effect that follows (the inbox exchange, a
	 * state's compare-and-swap, the stop's store) releases it. */
	if (s < CALLER_SLOTS)
		__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(n, 1, __ATOMIC_SEQ_CST);
}

static inline void callers_leave(struct twheel_loop *l)
{
	unsigned s = twl_caller_slot();
	uint32_t *n = &l->callers[s].n;

	if (s < CALLER_SLOTS)
		__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) - 1, __ATOMIC_RELEASE);
	else
		__atomic_fetch_sub(n, 1, __ATOMIC_RELEASE);
}

/* inbox.c */
extern struct tw_loop_node twl_inbox_retry; /* from twl_inbox_pop(): a push is in flight */
void twl_inbox_push(struct twheel_loop *l, struct tw_loop_node *n);
struct tw_loop_node *twl_inbox_pop(struct twheel_loop *l);
bool twl_inbox_maybe_nonempty(struct twheel_loop *l);
void twl_wake(struct twheel_loop *l);
void twl_work_run(struct tw_loop_work *w);

/* timer.c */
void twl_timer_release(struct twheel_loop *l, struct tw_loop_timer *t);
void twl_timer_from_inbox(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t ref);
uint64_t twl_timer_returned_next(const struct twheel_loop *l, const struct tw_loop_timer *t,
				 uint64_t ref);
void twl_timers_place(struct twheel_loop *l, uint64_t ref);

/* Place the parked timers, if any, from a fresh reading (loop thread). */
static inline void twl_timers_place_now(struct twheel_loop *l)
{
	if (l->nparked)
		twl_timers_place(l, loop_clock(l));
}
/* Whose wheels this thread advances. Initial-exec: each fired timer reads
 * it, and the default model of a shared library would call
 * __tls_get_addr() each time; it takes 8 bytes of the static TLS that
 * glibc keeps for libraries loaded with dlopen(). */
extern _Thread_local struct twheel_loop *twl_firing_loop __attribute__((tls_model("initial-exec")));

/* periodic.c: the policy, pure functions of what they are passed */
struct twl_period {
	uint64_t deadline; /* the deadline served: t->deadline */
	uint64_t period;   /* t->period */
	uint64_t edge;     /* l->tick * tick_ns, saturated: how far the tick reached */
	uint64_t now;      /* the reading to judge by: the loop's time, or after a
			    * fixed-delay run one taken then (twl_periodic_fresh()) */
	unsigned flags;    /* t->timer.flags: TW_LOOP_FIXED_DELAY, TW_LOOP_MISFIRE_* */
	uint32_t missed;   /* t->missed, as the firing left it */
	uint32_t backlog;  /* t->_backlog: fixed-delay MISFIRE_ALL runs owed */
};

/* What the policy decides for a due periodic timer (12 bytes: it comes
 * back in registers). */
struct twl_due {
	uint32_t missed;   /* the new t->missed */
	uint32_t backlog;  /* the new t->_backlog */
	bool run;          /* run it; else skip to twl_periodic_next() of the new
			    * missed and backlog, judged against the same now */
	bool misfire;      /* a misfire (not a run owed): st.misfires counts it */
	bool fresh;        /* twl_periodic_fresh() after the run */
};

/* A periodic timer found due at s->deadline: how late, whether it runs. */
struct twl_due twl_periodic_due(const struct twl_period *s);
/* Whether the deadline after a run counts from a reading taken after it. */
bool twl_periodic_fresh(const struct twl_period *s);
/* The deadline after a run that served s->deadline, judged against s->now
 * (*@beyond: past UINT64_MAX, never reached). */
uint64_t twl_periodic_next(const struct twl_period *s, bool *beyond);

/* wait.c */
void twl_efd_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe);

/* multishot.c: scan before every submission; end only while ms_len > 0 */
void twl_multishot_scan(struct twheel_loop *l);
bool twl_multishot_end(struct twheel_loop *l, uint64_t user_data);
bool twl_sqe_multishot(const struct io_uring_sqe *sqe);

/* deadline.c: the loop timer of an I/O deadline fires here */
void twl_deadline_fire(struct tw_loop_timer *t);

/* compat.c: the loop timers that drive bound legacy hosts fire here */
void twl_compat_fire(struct tw_loop_timer *t);
/* compat.c: in an iteration whose timers reach @upto (ns), run the bound
 * legacy hosts whose deadline it has reached, which their loop timers,
 * on the loop's tick, may not have yet */
void twl_compat_poll(struct twheel_loop *l, uint64_t upto);
/* compat.c: the loop goes (destroy) while legacy hosts are still bound */
void twl_compat_detach(struct twheel_loop *l);

#endif /* TWHEEL_LOOP_IMPL_H */
