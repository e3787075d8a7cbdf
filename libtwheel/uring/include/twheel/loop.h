/* SPDX-License-Identifier: MIT */
/*
 * twheel/loop.h - twheel-uring: a tickless io_uring event loop that drives
 * a libtwheel wheel, runs I/O completions and takes timers from any thread.
 *
 * One loop = one io_uring + two wheels (normal and deferrable timers, as in
 * the kernel's timer bases) + one lock-free MPSC inbox, all driven by one
 * thread: the "loop thread", the first thread that calls twheel_loop_run()
 * or twheel_loop_run_once(). Each iteration waits in the kernel until the
 * next wheel expiry or an I/O completion, whichever comes first; nothing
 * ticks while nothing is due. Where io_uring is refused, the same loop runs
 * its timer half on epoll (see twheel_loop_create()).
 *
 * Time is the loop clock in nanoseconds (CLOCK_MONOTONIC unless replaced),
 * mapped onto wheel ticks of a configurable length (1 us .. 1 s, default
 * 1 ms). Deadlines are rounded *up* to a tick: a timer never fires before
 * its deadline and, when the loop is not busy, at most one tick plus
 * scheduling noise after it.
 *
 * Threads. "Loop thread" below means: the loop thread while the loop runs,
 * or any single thread that owns the loop before the first run and after
 * it has returned (creation, setup, drain, destroy). "Any thread" functions
 * are lock-free and may race with the loop and with each other.
 *
 * Processes. A loop belongs to the process that created it: a child made
 * by fork() shares its ring, eventfd and epoll instance with the parent.
 * The one call the child may make on a loop created before the fork is
 * twheel_loop_destroy(), which drains the child's copy of the timers and
 * work and closes its descriptors without submitting anything or reading
 * a completion, so the parent's I/O and timers carry on. Any other call
 * there may reach the parent's ring (take its completions, queue SQEs in
 * it) or fail where the kernel bound the ring to the parent (-EEXIST).
 * The child's destroy hands its copy of each queued work item to
 * @work_fn, or runs it (NULL @work_fn), as any drain: what the parent
 * runs too, so pass a @work_fn that drops it unless running it twice is
 * meant. A child forked from one of the loop's callbacks finds the loop
 * in use: destroy does nothing there; the child must not return into
 * the loop, and the loop's descriptors, close-on-exec, go at its exec()
 * or exit. So does a child forked by another thread while the loop
 * thread ran the loop: its copy may be caught half-way through a change
 * of the wheels, which its destroy would walk. Create loops after fork()
 * (a daemon: once it has daemonised); a child that needs a loop creates
 * its own.
 *
 * Errors: 0 (or a count, or 0/1) on success, a negative errno on failure.
 * A callback never runs for a request whose function returned an error.
 *
 * This header compiles as plain C11 (cc -std=c11 -pedantic, no feature
 * macros) and as C++ (no _Atomic in the public structs; the library uses
 * the GCC/Clang __atomic builtins on the fields marked "atomic"). It does
 * not include <liburing.h>: its API only passes pointers to liburing's
 * struct io_uring, io_uring_sqe and io_uring_cqe, declared below. A
 * program that prepares SQEs or reads CQEs includes <liburing.h> itself,
 * which needs POSIX declarations: compile that file with -D_GNU_SOURCE (or
 * -std=gnu11, or _POSIX_C_SOURCE >= 200809L), as liburing requires.
 */
#ifndef TWHEEL_LOOP_H
#define TWHEEL_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <twheel/rt.h>

/* liburing's types, used here only through pointers (see above). */
struct io_uring;
struct io_uring_sqe;
struct io_uring_cqe;

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TWHEEL_LOOP_BUILDING) && defined(__GNUC__)
#define TWHEEL_LOOP_API __attribute__((visibility("default")))
#else
#define TWHEEL_LOOP_API
#endif

struct twheel_loop;

/* ---- Intrusive nodes -------------------------------------------------- */

/*
 * The link of the cross-thread inbox (an intrusive Vyukov MPSC queue).
 * Embedded in struct tw_loop_timer and struct tw_loop_work; private.
 */
struct tw_loop_node {
	struct tw_loop_node *_next; /* atomic */
	uint32_t _kind;             /* TW__NODE_TIMER or TW__NODE_WORK */
	uint32_t _state;            /* atomic; private */
};

/* ---- Timers ----------------------------------------------------------- */

/* Flags for tw_loop_timer_init() / tw_loop_timer_init_periodic(). */
enum {
	/*
	 * Housekeeping timer: never wakes an idle loop by itself; it runs at
	 * the first wake-up that happens for another reason (an I/O
	 * completion, a normal timer, a cross-thread request) at or after its
	 * deadline. Like the kernel's TIMER_DEFERRABLE.
	 */
	TW_LOOP_DEFERRABLE = 1u << 0,
	/*
	 * Hand the due timer to the loop's executor (twheel_loop_config
	 * .executor) instead of calling it on the loop thread, so that slow
	 * work cannot delay other timers. The executor calls
	 * tw_loop_timer_call() for each timer it gets; until then the timer
	 * stays busy. Arming such a timer on a loop without an executor
	 * fails with -EINVAL.
	 */
	TW_LOOP_EXECUTOR = 1u << 1,
	/* Periodic: next deadline = previous deadline + period (default). */
	TW_LOOP_FIXED_RATE = 0,
	/* Periodic: next deadline = end of the previous run + period. */
	TW_LOOP_FIXED_DELAY = 1u << 2,
	/*
	 * Misfire policy of a periodic timer, applied when the loop fell
	 * behind by a period or more: one or more further deadlines of the
	 * schedule are due in the iteration that finds the timer due (their
	 * tick reached; the rounding of a deadline up to its tick, up to a
	 * tick late by design, never counts, even with a period of one tick):
	 *   SKIP: drop the overdue runs, do not run now, resume on the next
	 *         deadline of the schedule that lies in the future (default);
	 *   ONCE: run once now for all of them, then resume as for SKIP;
	 *   ALL:  run every missed one, back to back (one per loop iteration
	 *         so that other timers and I/O interleave: each owed run is
	 *         due in the iteration after the previous one), then resume.
	 *         A fixed-rate run serves its own deadline of the schedule;
	 *         an owed fixed-delay run's deadline is the loop's time of the
	 *         iteration that found it owed.
	 * @missed tells the callback how many deadlines were overdue.
	 */
	TW_LOOP_MISFIRE_SKIP = 0,
	TW_LOOP_MISFIRE_ONCE = 1u << 3,
	TW_LOOP_MISFIRE_ALL = 2u << 3,
	TW_LOOP_MISFIRE_MASK = 3u << 3,
};

/*
 * A loop timer. Embed it in your own struct and get back to that struct in
 * the callback with tw_container_of(t, struct mine, member).
 *
 * Public fields (read-only; the loop writes them while it owns the timer):
 *   timer     the core wheel node (timer.flags holds the TW_LOOP_* flags,
 *             timer.func is the loop's; do not change either).
 *   func      the callback, run on the loop thread (or by the executor).
 *   deadline  the deadline in loop-clock nanoseconds it is (or was last)
 *             armed for; inside the callback: the deadline being served.
 *             Armed by delay and not yet placed: twheel_loop_now() + the
 *             delay (see twheel_loop_add()).
 *             A twheel_loop_schedule() stores its delay here, which the
 *             loop turns into the deadline when it arms the timer or hands
 *             it back from twheel_loop_drain() (a timer cancelled before
 *             that keeps the delay).
 *   period    nanoseconds between runs, 0 for a one-shot timer.
 *   missed    inside a periodic callback: how many further deadlines had
 *             also passed (0 when the loop kept up).
 * Fields starting with an underscore are private.
 *
 * A timer never passed to tw_loop_timer_init() but all zero is idle and
 * not a loop timer: every arm and twheel_loop_move() refuse it with
 * -EINVAL, twheel_loop_del() says 0, twheel_loop_cancel() -ENOENT,
 * tw_loop_timer_busy() and twheel_loop_pending() false; nothing changes.
 *
 * Size: 96 bytes on LP64 (the core node is 40 of them). Layout: what firing
 * a one-shot timer reads (the core node, func, the state) fills the first
 * 64 bytes, one cache line when the struct is 64-byte aligned.
 */
struct tw_loop_timer {
	struct tw_timer timer;
	void (*func)(struct tw_loop_timer *t);
	struct tw_loop_node _node;
	uint64_t deadline;
	uint64_t period;
	uint32_t missed;
	uint32_t _backlog;  /* fixed-delay MISFIRE_ALL runs still owed */
	struct twheel_loop *_loop;
};

/*
 * Initialise @t as a one-shot timer with callback @func and @flags
 * (TW_LOOP_DEFERRABLE, TW_LOOP_EXECUTOR). Leaves it idle.
 * Returns 0, or -EINVAL (@t or @func NULL, unknown or periodic-only flags).
 * Must not be called while the timer is owned by a loop (armed, queued,
 * running periodically, or cancelled but not yet released).
 * O(1); any thread that owns @t.
 */
TWHEEL_LOOP_API int tw_loop_timer_init(struct tw_loop_timer *t,
				       void (*func)(struct tw_loop_timer *t),
				       unsigned flags);

/*
 * Initialise @t as a periodic timer: the first run is at the deadline given
 * when it is armed, then every @period_ns, at a fixed rate or with a fixed
 * delay, with a misfire policy (see the flags above; TW_LOOP_DEFERRABLE and
 * TW_LOOP_EXECUTOR are allowed too: an executor's run ends when
 * tw_loop_timer_call() returns, and the next run is armed only then).
 * A schedule whose next deadline lies past UINT64_MAX ns (it overflows 64
 * bits) ends there: the timer stays armed, t->deadline UINT64_MAX, and
 * never runs again, even at the clock's last reading (cancel or drain it).
 * Returns 0, or -EINVAL (@t or @func NULL, @period_ns 0, bad flags).
 * Arming it on a loop whose tick is longer than @period_ns fails with
 * -EINVAL. Same thread rules as tw_loop_timer_init(). O(1).
 */
TWHEEL_LOOP_API int tw_loop_timer_init_periodic(struct tw_loop_timer *t,
						void (*func)(struct tw_loop_timer *t),
						uint64_t period_ns, unsigned flags);

/*
 * Returns true while a loop owns @t: queued by twheel_loop_schedule(),
 * armed, handed to the executor, between runs of a periodic timer, or
 * cancelled but not yet released by the loop. When it returns false (an
 * acquire load), the loop will not touch @t again and its memory may be
 * freed, re-initialised or reused; a one-shot timer stops being busy just
 * before its callback starts, and the callback then owns it. False for
 * NULL. O(1); any thread.
 */
TWHEEL_LOOP_API bool tw_loop_timer_busy(const struct tw_loop_timer *t);

/* ---- Posted work ------------------------------------------------------ */

/*
 * A function call to run on the loop thread, posted from any thread with
 * twheel_loop_post(). Embed it like a timer. @func is set by the caller
 * before posting; the item may be posted again once @func has started.
 */
struct tw_loop_work {
	struct tw_loop_node _node;
	void (*func)(struct tw_loop_work *w);
};

/* Initialise @w with @func (or zero-initialise it and set func). O(1). */
static inline void tw_loop_work_init(struct tw_loop_work *w, void (*func)(struct tw_loop_work *w))
{
	w->_node._next = TWHEEL__NULL;
	w->_node._kind = 0;
	w->_node._state = 0;
	w->func = func;
}

/* ---- I/O -------------------------------------------------------------- */

/*
 * A completion handler, embedded by the user in the object that owns an
 * I/O request. twheel_loop_get_sqe() ties an SQE to it; the loop calls
 * @func with every CQE of that request, on the loop thread. A multishot
 * request (poll, accept, recv... multishot) keeps its handler: @func is
 * called for each CQE and the request is finished when a CQE arrives
 * without IORING_CQE_F_MORE in cqe->flags (that CQE may still carry a
 * result, and the kernel may end the request at any CQE: re-arm there,
 * see twheel_loop_submit()). The handler must stay valid until then; it
 * may be freed from inside that last call.
 */
struct tw_loop_io {
	void (*func)(struct tw_loop_io *io, const struct io_uring_cqe *cqe);
};

/* ---- Configuration and lifetime --------------------------------------- */

/*
 * The loop clock: monotonic nanoseconds. Must be callable from any thread.
 * If it steps back, the loop's wheel waits at its time until the clock
 * catches up; timers armed meanwhile (by delay or deadline, callbacks
 * included, even while the clock steps back inside the iteration that is
 * firing), fire late (once the clock is back past the tick the loop had
 * reached), never before the clock reads their deadline. A deadline at or
 * before twheel_loop_now() is checked against a fresh reading: it has come
 * only if the clock has reached it.
 * (twheel_clock_fn is the one clock type of libtwheel, in <twheel/rt.h>.)
 */

/* Executor: run t->func(t) (tw_loop_timer_call()) on some other thread. */
typedef void (*twheel_executor_fn)(struct tw_loop_timer *t, void *arg);

/* Config flags. */
enum {
	/* Do not ask for IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN. */
	TW_LOOP_NO_DEFER_TASKRUN = 1u << 1,
	/* Do not use io_uring: fallback mode from the start (see
	 * twheel_loop_create()). */
	TW_LOOP_NO_URING = 1u << 2,
	/* Fail instead of falling back (to fallback mode) when io_uring is
	 * refused or too old. */
	TW_LOOP_URING_ONLY = 1u << 3,
	/* Serve I/O deadlines (twheel_loop_io_deadline()) with the loop's
	 * own timer even where the kernel has linked timeouts. */
	TW_LOOP_NO_LINK_TIMEOUT = 1u << 4,
};

struct twheel_loop_config {
	uint64_t tick_ns;        /* wheel tick, 1,000 .. 1,000,000,000; 0 = 1 ms */
	unsigned entries;        /* SQ entries; 0 = 256; CQ 2 * entries, at least 1024 */
	unsigned flags;          /* TW_LOOP_NO_DEFER_TASKRUN, TW_LOOP_NO_URING, TW_LOOP_URING_ONLY,
				  * TW_LOOP_NO_LINK_TIMEOUT */
	unsigned batch;          /* inbox items moved per iteration; 0 = 4096 */
	size_t max_pending;      /* limit on owned timers (-ENOSPC); 0 = none; the two
				  * of twheel_loop_compat_bind() and an I/O deadline's
				  * retry (twheel_loop_io_deadline()) do not count; one
				  * more may be owned for an iteration after a race
				  * (docs/loop.md, "Cancelling from another thread") */
	twheel_clock_fn clock;   /* NULL = CLOCK_MONOTONIC */
	void *clock_arg;
	twheel_executor_fn executor; /* for TW_LOOP_EXECUTOR timers; may be NULL */
	void *executor_arg;
	/*
	 * Called on the loop thread when a timer cancelled with
	 * twheel_loop_cancel() (or deleted by twheel_loop_del() while queued
	 * or running on the executor) has been let go: tw_loop_timer_busy() is false from then on
	 * and the hook may free it. NULL = no notification. Free a timer from
	 * the hook or after polling tw_loop_timer_busy(), not both.
	 */
	void (*release)(struct tw_loop_timer *t, void *arg);
	void *release_arg;
};

/* Fill @cfg with the defaults (all zero, tick 1 ms); NULL @cfg: nothing.
 * O(1); any thread. */
TWHEEL_LOOP_API void twheel_loop_config_init(struct twheel_loop_config *cfg);

/*
 * Create a loop (@cfg NULL = defaults) and store it in *@loopp.
 * Modes, chosen at run time:
 *   - io_uring mode needs Linux 5.11 or later: every wait passes its
 *     timeout as an argument of io_uring_enter() (IORING_FEAT_EXT_ARG).
 *     IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN (6.1) is asked for unless
 *     TW_LOOP_NO_DEFER_TASKRUN; a kernel that refuses it gets a plain ring
 *     (completions are then posted from interrupt context: same behaviour,
 *     a little more overhead).
 *   - fallback mode (TW_LOOP_FEAT_FALLBACK) runs the timer half without
 *     io_uring, waiting on an epoll set of its own: one-shot, periodic and deferrable timers, executor
 *     hand-off, posted work, cross-thread schedule/cancel, stop and drain
 *     behave as in io_uring mode (the wait is epoll_pwait2(), or
 *     epoll_wait() rounded up to the millisecond where that is missing);
 *     twheel_loop_get_sqe() returns NULL, twheel_loop_submit() -EOPNOTSUPP
 *     and twheel_loop_ring() NULL. It is used with TW_LOOP_NO_URING, and
 *     automatically when io_uring is refused (-EPERM: a container's
 *     seccomp profile, kernel.io_uring_disabled), absent (-ENOSYS) or
 *     older than 5.11 (-EOPNOTSUPP), unless TW_LOOP_URING_ONLY asks for
 *     that error instead. @msg then says why io_uring is not used.
 *   twheel_loop_features() tells which mode and features are in use.
 * Returns 0, or
 *   -EINVAL  bad tick or flags (unknown, or NO_URING with URING_ONLY),
 *            @loopp NULL, or (io_uring mode) the kernel refused the ring's
 *            size (cfg.entries too large);
 * and with TW_LOOP_URING_ONLY:
 *   -ENOSYS  the kernel has no io_uring (or a filter claims so);
 *   -EPERM   io_uring refused: seccomp profile, kernel.io_uring_disabled;
 *   -EOPNOTSUPP  the kernel is older than 5.11 (no IORING_FEAT_EXT_ARG),
 *                also where RLIMIT_MEMLOCK refused the ring itself;
 * in every mode:
 *   -ENOMEM, -EMFILE, -ENFILE  out of memory (RLIMIT_MEMLOCK) or fds.
 * On failure a one-line message naming the cause is written to @msg (up to
 * @len bytes, NUL-terminated) when @msg is not NULL.
 * Allocates the loop, its two wheels (twheel_create()) and the rings.
 * Any thread.
 */
TWHEEL_LOOP_API int twheel_loop_create(struct twheel_loop **loopp,
				       const struct twheel_loop_config *cfg,
				       char *msg, size_t len);

/*
 * Hand back every timer the loop still owns (armed in either wheel, queued
 * by another thread, or between runs) to @timer_fn, exactly once each, left
 * idle so that @timer_fn may free or re-arm it, with its deadline in
 * t->deadline (for a twheel_loop_schedule() delay not yet armed: counted
 * from a clock reading taken now; for a periodic timer between runs, the
 * executor's included: the deadline of its next run); hand every posted
 * work item not yet run to @work_fn (or, if @work_fn is NULL, run it: a
 * post promises a call). Timers cancelled but not yet released are
 * released (the release hook is called), also those cancelled by what
 * drain calls. @timer_fn NULL: timers are just dropped (left idle).
 * Call it after the loop stopped, with no other thread still using it
 * (the executor included: every timer it was handed has been passed to
 * tw_loop_timer_call(), which has returned). What drain calls (@timer_fn,
 * @work_fn, work items, the release hook) counts as one of the loop's
 * callbacks: destroy does nothing there, drain returns 0, run_once
 * -EBUSY. Returns the number of timers handed back (0 for NULL @loop).
 * O(owned timers + queued items); the loop thread, not from a callback
 * (then it returns 0).
 */
TWHEEL_LOOP_API size_t twheel_loop_drain(struct twheel_loop *loop,
					 void (*timer_fn)(struct tw_loop_timer *t, void *arg),
					 void (*work_fn)(struct tw_loop_work *w, void *arg),
					 void *arg);

/*
 * Stop the loop (so that what @timer_fn or a work item arms is refused
 * with -ESHUTDOWN), wait until no call of another thread that the loop
 * may already have acted on is still under way (twheel_loop_post(),
 * _schedule(), _schedule_at(), _cancel(), _stop() and
 * tw_loop_timer_call(): the loop may have run the work, fired the timer
 * or seen the stop while that thread was still waking it; for a periodic
 * timer the call is waited for from the start of its callback, which may
 * stop the loop, to its hand-back, so that callback must not wait for
 * the loop thread; in a child made by fork() there is no such call to
 * wait for), then
 * twheel_loop_drain() with the same arguments, then free the loop, its
 * wheels, its ring and its eventfd. NULL @loop is a no-op. In-flight I/O
 * is cancelled by closing the ring (handlers are not called). So a thread
 * may stop the loop, or post the work that ends it, and the loop thread
 * destroy it as soon as twheel_loop_run() returns; but no call may start
 * once destroy has begun. Called from one of the loop's own callbacks it
 * does nothing (the loop is in use; stop it and destroy it after
 * twheel_loop_run() returned). O(owned timers + ring size), plus the wait
 * for those calls; the loop thread.
 */
TWHEEL_LOOP_API void twheel_loop_destroy(struct twheel_loop *loop,
					 void (*timer_fn)(struct tw_loop_timer *t, void *arg),
					 void (*work_fn)(struct tw_loop_work *w, void *arg),
					 void *arg);

/* ---- Running ---------------------------------------------------------- */

/* twheel_loop_run_once() flags. */
enum {
	TW_LOOP_NOWAIT = 1u << 0, /* do not sleep: poll and run what is due */
};

/*
 * Run one iteration: submit pending SQEs; unless TW_LOOP_NOWAIT, sleep
 * in the kernel until the next normal timer's tick, an I/O completion or a
 * cross-thread request (not at all when something is already due); then
 * run up to 256 I/O handlers, up to cfg.batch inbox items (schedules,
 * cancels, posted work) and every timer due at the loop clock's time,
 * unless completions that were in the CQ at that time have not all run
 * yet: then the timers wait for a later iteration (at most one CQ ring of
 * handlers later), so that a timer never fires while the completion it
 * times out already waits (an idle timer, say, and the data that makes it
 * moot). Completions the kernel held back from a full ring at that time
 * (its overflow list, or task work with DEFER_TASKRUN) are flushed into
 * the ring and waited for as well, up to one more CQ ring of them: a due
 * timer waits for two CQ rings of handlers at most.
 * Returns the number of callbacks run: timer callbacks run or handed to the
 * executor (a skipped misfire or a cancelled timer runs none), I/O
 * handlers and work items, the loop's own (of I/O deadlines and bound
 * legacy hosts) included, as in twheel_loop_get_stats(); or
 *   -EINVAL     @loop NULL, or @flags holds a flag other than
 *               TW_LOOP_NOWAIT (nothing was run);
 *   -ESHUTDOWN  the loop was stopped (nothing was run);
 *   -EBUSY      called from inside one of the loop's callbacks;
 *   another negative errno from io_uring_enter() (not -EINTR/-ETIME).
 * The first call makes the calling thread the loop thread (the ring is
 * enabled there; with SINGLE_ISSUER it may not move afterwards).
 * Cost: O(levels) per wheel plus O(1) per item handled.
 */
TWHEEL_LOOP_API int twheel_loop_run_once(struct twheel_loop *loop, unsigned flags);

/*
 * Iterate until twheel_loop_stop(). Returns 0 when stopped, or the first
 * error of twheel_loop_run_once() other than -ESHUTDOWN (-EINVAL: @loop
 * NULL). The loop thread.
 */
TWHEEL_LOOP_API int twheel_loop_run(struct twheel_loop *loop);

/*
 * Ask the loop to stop: twheel_loop_run() returns after the current
 * iteration, later twheel_loop_run_once() calls return -ESHUTDOWN, and
 * every arming call (add, mod, schedule, post) fails with -ESHUTDOWN;
 * del and cancel still work. Final:
 * a stopped loop cannot be restarted; drain or destroy it. Items already
 * queued stay owned and are handed back by twheel_loop_drain().
 * Returns 0 (or -EINVAL for NULL). Wakes the loop if it may be asleep.
 * O(1), lock-free; any thread, callbacks included.
 */
TWHEEL_LOOP_API int twheel_loop_stop(struct twheel_loop *loop);

/* Returns true once twheel_loop_stop() was called (false for NULL). O(1);
 * any thread. */
TWHEEL_LOOP_API bool twheel_loop_stopped(const struct twheel_loop *loop);

/* ---- Time ------------------------------------------------------------- */

/*
 * Returns the loop clock's time (ns) read at the start of the current (or
 * last) iteration; not updated while callbacks run. 0 if @loop is NULL.
 * O(1); the loop thread.
 */
TWHEEL_LOOP_API uint64_t twheel_loop_now(const struct twheel_loop *loop);

/* Returns a fresh reading of the loop clock (ns); 0 if @loop is NULL. O(1);
 * any thread. */
TWHEEL_LOOP_API uint64_t twheel_loop_clock(const struct twheel_loop *loop);

/* Returns the tick length in ns; 0 if @loop is NULL. O(1); any thread. */
TWHEEL_LOOP_API uint64_t twheel_loop_tick(const struct twheel_loop *loop);

/* ---- Timers on the loop thread ----------------------------------------- */

/*
 * Arm @t @delay_ns after this call, or at the absolute loop-clock deadline
 * @deadline_ns (_at). An arm by delay reads no clock: the timer is parked
 * (pending and counted, but on no tick yet) and the loop places it, with
 * every other one parked, from one clock reading taken after them all:
 * before it next decides its wait (at the end of the iteration for an arm
 * made by one of its callbacks; at the start of the next
 * twheel_loop_run_once() for one made outside them), at the 64th arm by
 * delay since the last placement, and before a twheel_loop_del() of a
 * timer parked so or a drain. So it never fires earlier than @delay_ns after
 * this call, and it is late by at most the time from the call to that
 * reading: the rest of the iteration, or until the loop runs again. Until
 * it is placed, t->deadline holds twheel_loop_now() + @delay_ns (no later
 * than the deadline it gets unless the clock steps back). A delay of 0
 * reads the clock at the call instead (due in the next iteration). A deadline still ahead is rounded
 * up to the tick: the timer fires in the first iteration that starts at or
 * after the start of that tick. A deadline that has come (a delay of 0, or
 * an _at deadline at or before twheel_loop_now() that a fresh clock
 * reading confirms: see twheel_clock_fn for a clock that steps back) fires
 * in the next iteration, whatever the tick, in deadline order with the
 * others due, even if the clock steps back before that iteration (the
 * loop's wheel does not hold back a tick it has reached). Armed from a
 * callback, a timer never runs in the advance that is running; but a
 * deferrable timer armed from a normal timer's callback runs in the same
 * iteration if it is due: the deferrable wheel is advanced after the
 * normal one. A timer is placed from the wheels caught up (firing
 * nothing) to the iteration's tick, or, outside an iteration on the
 * default clock, to the loop's next reading (which moves the loop's tick
 * on to its own, as an iteration does; for an arm by deadline, the
 * reading the first such arm after an iteration takes, one per gap
 * between iterations): after the loop idled a short timer costs no
 * iteration at a cascade tick before its own (an arm by deadline 256
 * ticks or more after the first of its gap, counting from that one's
 * reading, may cost one, as on an injected clock). On an
 * injected clock an arm outside an iteration counts from the last
 * iteration's tick, so one 256 ticks or more after it may cost one
 * iteration that sleeps no time and runs nothing (docs/loop.md, "An idle
 * wheel catches up").
 * Returns 0, or
 *   -EINVAL     NULL argument; TW_LOOP_EXECUTOR without an executor; a
 *               periodic timer with a period shorter than the tick;
 *   -EBUSY      @t is owned by this loop already (use twheel_loop_mod());
 *   -EXDEV      @t is owned by another loop;
 *   -ENOSPC     cfg.max_pending timers are owned already;
 *   -ESHUTDOWN  the loop was stopped.
 * No system call and no SQE; by delay, one clock reading per placement (at
 * most one per 64 arms); by deadline, none from a callback, and outside
 * an iteration one for the first such arm after an iteration. O(1); the
 * loop thread (callbacks included; a
 * periodic timer's callback may re-arm its own timer).
 */
TWHEEL_LOOP_API int twheel_loop_add(struct twheel_loop *loop, struct tw_loop_timer *t,
				    uint64_t delay_ns);
TWHEEL_LOOP_API int twheel_loop_add_at(struct twheel_loop *loop, struct tw_loop_timer *t,
				       uint64_t deadline_ns);

/*
 * Re-arm @t whether or not it is armed (kernel mod_timer()). Returns 1 if
 * it was armed, 0 if it was idle, or the errors of twheel_loop_add(), with
 * -EBUSY meaning: queued by or cancelled from another thread and not yet
 * handled by the loop, or running on the executor; -EXDEV: armed on (or
 * owned by) another loop. A periodic timer re-armed from its own callback
 * is not armed while the callback runs: 0. O(1); the loop thread.
 */
TWHEEL_LOOP_API int twheel_loop_mod(struct twheel_loop *loop, struct tw_loop_timer *t,
				    uint64_t delay_ns);
TWHEEL_LOOP_API int twheel_loop_mod_at(struct twheel_loop *loop, struct tw_loop_timer *t,
				       uint64_t deadline_ns);

/*
 * Disarm @t. Returns 1 if it was armed or queued (its callback will not
 * run) or is a periodic timer whose callback is running now (it will not
 * run again), 0 if it was idle, already fired or already cancelled, or
 *   -EINVAL  NULL argument;
 *   -EXDEV   @t is owned by another loop (nothing is changed).
 * An armed timer, or a periodic one whose callback is running on this
 * thread, is idle when this returns: the loop does not touch it again and
 * it may be freed (from its own callback too). A timer still in the inbox
 * (queued by another thread) or running on the executor is released later,
 * when the loop gets it back (release hook; tw_loop_timer_busy() tells).
 * If @t is armed by delay and not yet placed, it and the other timers so
 * are placed first (one clock reading), so that t->deadline of a deleted
 * timer is the deadline it had; a del of any other timer places nothing.
 * O(1) plus O(1) per timer placed; the loop thread, callbacks included.
 */
TWHEEL_LOOP_API int twheel_loop_del(struct twheel_loop *loop, struct tw_loop_timer *t);

/* Returns true if @t is armed on @loop's wheels, false otherwise (NULL,
 * idle, queued, owned by another loop). A timer cancelled from another
 * thread stays linked, and counted, until the loop handles the cancel at
 * its next iteration. O(1); the loop thread. */
TWHEEL_LOOP_API bool twheel_loop_pending(const struct twheel_loop *loop,
					 const struct tw_loop_timer *t);

/*
 * Move the timer at @src to the address @dst, for owners that relocate
 * their objects (an array of timers that grows, a C++ handle that is
 * moved). @dst takes @src's callback, flags, deadline, period and, if
 * @src is armed on @loop, its place: it stays armed for the same deadline
 * and fires once, as @dst (a timer armed by delay and not yet placed is
 * placed first, as by twheel_loop_del()). A stopped loop moves it too, and
 * then cancels it as it does every armed timer (twheel_loop_destroy()'s
 * drain). @src is left idle: the loop does not touch it again, its fields
 * are unchanged and it may be freed. To other threads @src stays busy
 * until this call no longer reads it, and @dst is not busy before it is
 * armed. @dst must have been initialised with
 * tw_loop_timer_init() (or _periodic()) and be idle; its previous
 * contents are overwritten. @loop may be NULL when @src is idle.
 * @dst == @src changes nothing.
 * Returns 1 if @src was armed, 0 if it was idle, or
 *   -EINVAL  @dst or @src NULL, either not a loop timer (never
 *            initialised: all zero, say; nothing changed), or @src owned
 *            by a loop and @loop NULL;
 *   -EBUSY   @dst is busy (tw_loop_timer_busy()), or @src is owned by
 *            @loop but not on its wheels: queued by another thread,
 *            cancelled from another thread (also while this call ran) and
 *            not yet released, running on the executor, or a periodic
 *            timer whose callback is running; @src is left as it was;
 *   -EXDEV   @src is owned by another loop.
 * O(1), plus O(1) per timer placed; the loop thread, callbacks included:
 * a timer moved while the iteration is firing its tick still fires in it,
 * as @dst. (TWHEEL_URING_1.3)
 */
TWHEEL_LOOP_API int twheel_loop_move(struct twheel_loop *loop, struct tw_loop_timer *dst,
				     struct tw_loop_timer *src);

/*
 * Run @t's callback: what an executor does, on its own thread, with each
 * timer the loop hands it (exactly once per hand-off). A one-shot timer
 * stops being busy just before its callback starts, and the callback owns
 * it. A periodic timer stays owned by the loop: when the callback returns,
 * it is handed back and re-armed for the next deadline of its schedule at
 * the loop's next iteration (so one run never overlaps the next, and the
 * callback may read @t->deadline and @t->missed without a race).
 * For a periodic timer, twheel_loop_destroy() waits for the call from the
 * start of the callback to the hand-back (the callback may stop the loop):
 * the callback must not wait for the loop thread.
 * Returns 0 once the callback has run, or -EINVAL (nothing is run): @t is
 * NULL, not a TW_LOOP_EXECUTOR timer, or not handed to the executor now
 * (never handed over, or already called for this hand-off).
 * O(1) plus the callback (one inbox push for a periodic timer); any thread.
 */
TWHEEL_LOOP_API int tw_loop_timer_call(struct tw_loop_timer *t);

/* ---- Any thread -------------------------------------------------------- */

/*
 * Schedule @t onto the loop from any thread: @delay_ns after a reading of
 * the loop clock that the loop takes when it takes @t from the inbox (after
 * this call, so the timer never fires before @delay_ns after it; the caller
 * does not read the clock), or at the absolute @deadline_ns (_at). The
 * timer is pushed onto the lock-free inbox (no allocation, one atomic
 * exchange) and armed by the loop at its next iteration; the loop is woken
 * (eventfd write) only if it may be asleep. Returns 0, or
 *   -EINVAL     NULL argument or bad timer (see twheel_loop_add());
 *   -EBUSY      @t is owned by a loop already, or another thread's arm of
 *               @t is under way (which may still fail with -ENOSPC);
 *   -ENOSPC     cfg.max_pending timers are owned already (an arm under
 *               way that loses the race for its timer takes no place);
 *   -ESHUTDOWN  the loop was stopped.
 * The loop arms it with the rules of twheel_loop_add_at(), the loop's time
 * being a reading it takes after taking it from the inbox (one per chunk
 * of up to 64 items; for a delay, the reading the delay counts from, so
 * that a delay of 0 fires in that iteration or the next).
 * From then on the loop owns @t until its callback runs, it is handed back
 * by twheel_loop_drain(), or it is cancelled and released.
 * O(1), lock-free; any thread, the loop thread included.
 */
TWHEEL_LOOP_API int twheel_loop_schedule(struct twheel_loop *loop, struct tw_loop_timer *t,
					 uint64_t delay_ns);
TWHEEL_LOOP_API int twheel_loop_schedule_at(struct twheel_loop *loop,
					    struct tw_loop_timer *t, uint64_t deadline_ns);

/*
 * Cancel @t from any thread, Netty Timeout.cancel() style. Returns
 *   1           won: the callback will not run (again, for a periodic
 *               timer); the loop releases the timer at its next iteration
 *               (release hook, tw_loop_timer_busy() turns false);
 *   0           lost: the callback has run or is running now (for a
 *               periodic timer: it will not run again after this run);
 *   -EALREADY   already cancelled;
 *   -ENOENT     @t is idle (never scheduled, or released; a schedule of
 *               @t still in progress on another thread counts as not
 *               yet done);
 *   -EXDEV      @t is owned by another loop (nothing is changed);
 *   -EINVAL     NULL argument.
 * O(1), lock-free (one compare-and-swap, plus one inbox push when the
 * timer was armed); any thread, the loop thread included.
 */
TWHEEL_LOOP_API int twheel_loop_cancel(struct twheel_loop *loop, struct tw_loop_timer *t);

/*
 * Run @w->func(@w) on the loop thread at its next iteration, in inbox
 * order with schedules and cancels. Returns 0, or -EINVAL (NULL argument
 * or NULL func), -EBUSY (@w is queued already), -ESHUTDOWN (stopped).
 * O(1), lock-free; any thread.
 */
TWHEEL_LOOP_API int twheel_loop_post(struct twheel_loop *loop, struct tw_loop_work *w);

/* ---- I/O on the loop thread -------------------------------------------- */

/*
 * Get an SQE of the loop's ring whose completions go to @io (its
 * user_data is set; prepare it with any io_uring_prep_*() that does not
 * overwrite user_data, and do not set user_data yourself). It is submitted
 * at the start of the next wait, or by twheel_loop_submit().
 * Returns NULL if the submission queue is still full after submitting it
 * (before the loop's first run, when the ring cannot submit yet: once it is
 * full, cfg.entries SQEs), if an argument or @io->func is NULL (nothing is
 * taken), in fallback mode (no ring), or once the loop is stopped
 * (twheel_loop_stop(): it submits nothing again, so the request could
 * never start; an SQE taken before the stop is dropped by destroy).
 * O(1); the loop thread.
 */
TWHEEL_LOOP_API struct io_uring_sqe *twheel_loop_get_sqe(struct twheel_loop *loop,
							 struct tw_loop_io *io);

/*
 * Submit prepared SQEs now. Returns the number submitted or -errno: -EINVAL
 * (NULL), -EBADFD (the loop never ran: the ring is not enabled yet),
 * -EOPNOTSUPP (fallback mode), -ESHUTDOWN (the loop is stopped: no
 * iteration would reap the completions; SQEs taken before the stop are
 * dropped by destroy, their handlers not called). The loop thread.
 *
 * A multishot request (accept, recv, poll... multishot) can end at any
 * CQE: the kernel ends it when the CQ ring is full, on an error, or on a
 * cancel. Its last CQE lacks IORING_CQE_F_MORE and may still carry a
 * result: a final accept CQE with cqe->res >= 0 is an accepted fd. The
 * handler must use that result, then re-arm (get an SQE, prepare the
 * request again) unless it meant to stop; otherwise the request stays
 * ended and nothing tells the program but the stats' multishot_ends.
 * Submit through the loop (this call or its wait, not io_uring_submit()
 * on twheel_loop_ring()) for multishot_ends to count every end.
 */
TWHEEL_LOOP_API int twheel_loop_submit(struct twheel_loop *loop);

/* The loop's ring, for registering files or buffers; NULL in fallback mode
 * (and for NULL @loop). The loop thread. */
TWHEEL_LOOP_API struct io_uring *twheel_loop_ring(struct twheel_loop *loop);

/* ---- I/O with a deadline ------------------------------------------------ */

/*
 * The deadline of one I/O request (twheel_loop_io_deadline()). Embed it in
 * the object that owns the request, next to its struct tw_loop_io, and
 * keep it valid until that request's handler has been called (or the loop
 * destroyed). Zero-initialise it once (or memset); all fields are private.
 * A deadline is 160 bytes on LP64 in a release build.
 */
struct tw_loop_deadline {
	struct tw_loop_io _req;      /* the request's CQE comes here */
	struct tw_loop_io _aux;      /* the linked timeout's or the cancel's CQE */
	struct tw_loop_io *_user;    /* the handler the SQE was taken for */
	struct twheel_loop *_loop;
	struct tw_loop_timer _timer; /* the loop's own timer (no linked timeout) */
	int64_t _ts[2];              /* the linked timeout's __kernel_timespec */
	int32_t _res;                /* the request's result, kept for delivery */
	uint32_t _cflags;            /* ...and its CQE flags */
	uint32_t _state;
	uint32_t _pad;
};

/*
 * Give the request just prepared in @sqe a deadline: if it has not
 * completed when the loop clock reaches @deadline_ns, the kernel cancels it
 * and its handler gets cqe->res == -ETIME. Call it after preparing @sqe
 * (got from twheel_loop_get_sqe() for the request's handler, the last SQE
 * taken, not yet submitted: an io_uring_prep_*() clears the SQE's flags)
 * and before taking another SQE.
 *
 * How: where the kernel has linked timeouts (TW_LOOP_FEAT_LINK_TIMEOUT,
 * probed at creation; the loop clock is CLOCK_MONOTONIC, the default; no
 * TW_LOOP_NO_LINK_TIMEOUT), an IORING_OP_LINK_TIMEOUT SQE at @deadline_ns
 * (absolute) is linked to @sqe; it costs one SQE and no system call of its
 * own. Otherwise, or when the SQ has no room left for it, the loop's own
 * timer in @dl is armed at @deadline_ns (twheel_loop_add_at()'s rules)
 * and, when it fires, an IORING_OP_ASYNC_CANCEL SQE cancels the request.
 * Either way the request is cancelled no earlier than @deadline_ns, and a
 * chain @sqe belongs to (IOSQE_IO_LINK or IOSQE_IO_HARDLINK set on it)
 * goes on after the request: the next SQE taken starts once it has ended
 * (a soft link cancels that SQE when the deadline cancelled the request).
 *
 * The handler (the struct tw_loop_io @sqe was taken for) is called once,
 * on the loop thread, when the request and the deadline's own SQE have
 * both completed, with a copy of the request's CQE whose user_data is the
 * handler's and whose res is:
 *   -ETIME      the deadline passed and cancelled the request (the kernel
 *               ended it with -ECANCELED, or -EINTR for a request it could
 *               only interrupt);
 *   otherwise the request's own result: a request that completed before
 *   the deadline (its timeout is then cancelled: a timer del or the
 *   kernel's, no CQE reaches the handler for it), or that completed while
 *   being cancelled (the result wins over the deadline).
 * While it is in flight the request's user_data is @dl (to cancel it
 * early: io_uring_prep_cancel64(sqe, (uintptr_t)dl, 0); it then ends with
 * -ECANCELED, or -ETIME if the deadline had passed meanwhile).
 * Returns 0, or
 *   -EINVAL      NULL argument; @sqe not the last SQE taken from this
 *                loop's ring and not yet submitted, or without a handler
 *                (user_data 0, or a handler whose func is NULL); a
 *                request given a deadline already;
 *                a multishot request (not supported); a request with
 *                IOSQE_CQE_SKIP_SUCCESS (its handler could not be called);
 *   -EBUSY       @dl serves a request still in flight;
 *   -EOPNOTSUPP  fallback mode (no I/O);
 *   -ESHUTDOWN   the loop is stopped (either way: it submits nothing again);
 * and in the timer case the errors of twheel_loop_add_at() (-ENOSPC). On error @sqe is left as it was (still to be submitted).
 * The timer of a request in flight counts in twheel_loop_count() and
 * cfg.max_pending, until it fires; if the SQ then stays full, it tries
 * again a tick later, counted in twheel_loop_count() alone (a full
 * max_pending cannot stop a cancel); twheel_loop_drain() and destroy drop it without
 * handing it to @timer_fn (in-flight I/O is dropped with the ring).
 * No allocation. O(1); the loop thread.
 */
TWHEEL_LOOP_API int twheel_loop_io_deadline(struct twheel_loop *loop, struct io_uring_sqe *sqe,
					    struct tw_loop_deadline *dl, uint64_t deadline_ns);

/* ---- Legacy timer APIs -------------------------------------------------- */

/*
 * Bind the calling thread's legacy timers (<twheel/compat/timer_list.h>,
 * <twheel/compat/callout.h>; see <twheel/compat.h>) to @loop: they run on
 * the loop thread, in its iterations, on two hosts of ticks of @tick_ns
 * (pass TWHEEL_COMPAT_TICK_NS) driven by two loop timers, the second one
 * TW_LOOP_DEFERRABLE for TIMER_DEFERRABLE timers; each iteration that
 * runs its timers also runs a host whose deadline its clock has reached,
 * so a legacy timer fires in the first iteration that sees its expiry,
 * not on the loop's tick (cfg.tick_ns, which need not divide 1/HZ s: HZ
 * 300 and the default 1 ms). Call it on the loop
 * thread (before the first run, or from a callback); twheel_compat_unbind()
 * undoes it (not from a legacy timer's callback: -EBUSY). A
 * twheel_loop_destroy() before it hands the legacy timers back, not fired
 * and not pending, as the unbind does, and leaves the thread's binding
 * harmless until the thread unbinds: jiffies and ticks stay at the
 * destroy's time, an arm returns -EINVAL, a delete 0. The two loop timers are the loop's own:
 * twheel_loop_drain() does not hand them to its @timer_fn, and the legacy
 * timers stay pending on their hosts until unbound; cfg.max_pending does
 * not count them (legacy timers never fail with -ENOSPC). Returns 0, or
 *   -EINVAL  @loop NULL, @tick_ns outside 1,000 .. 1,000,000,000;
 *   -EBUSY   the thread is bound already, or @loop is (on another thread);
 *   -ENOMEM  out of memory.
 * Allocates the two hosts' wheels (twice the allocation of twheel_create()). The loop thread.
 */
TWHEEL_LOOP_API int twheel_loop_compat_bind(struct twheel_loop *loop, uint64_t tick_ns);

/* ---- Inspection -------------------------------------------------------- */

/* Kernel features the loop found and uses. */
enum {
	TW_LOOP_FEAT_EXT_ARG = 1u << 0,       /* tickless waits with EXT_ARG */
	TW_LOOP_FEAT_DEFER_TASKRUN = 1u << 1, /* SINGLE_ISSUER|DEFER_TASKRUN */
	TW_LOOP_FEAT_FALLBACK = 1u << 2,      /* fallback mode: no io_uring, no I/O calls */
	/* IORING_OP_LINK_TIMEOUT: I/O deadlines are linked timeouts (unless
	 * TW_LOOP_NO_LINK_TIMEOUT; see twheel_loop_io_deadline()) */
	TW_LOOP_FEAT_LINK_TIMEOUT = 1u << 3,
	/* 1.0's name of TW_LOOP_FEAT_FALLBACK, until 2.0 ("epoll" names the
	 * <twheel/epoll.h> adapter, a different thing) */
	TW_LOOP_FEAT_EPOLL = TW_LOOP_FEAT_FALLBACK,
};

/* Returns the TW_LOOP_FEAT_* in use (0 if @loop is NULL). O(1); any thread. */
TWHEEL_LOOP_API unsigned twheel_loop_features(const struct twheel_loop *loop);

/*
 * The loop's counters. The struct only grows, at its end; each growth is a
 * new symbol version of twheel_loop_get_stats(), so that a program built
 * with an older header gets the struct it knows.
 */
struct twheel_loop_stats {
	uint64_t iterations;  /* twheel_loop_run_once() calls that ran */
	uint64_t waits;       /* iterations that slept in the kernel */
	uint64_t wakeups;     /* ...and returned from that sleep */
	/* The loop's own timers and handlers, of I/O deadlines and bound
	 * legacy hosts, count in the next two: a request with a deadline
	 * counts its timeout's or cancel's CQE too. */
	uint64_t timers_fired;    /* timer callbacks run or handed to the executor */
	uint64_t io_completions;  /* CQEs dispatched, but the loop's eventfd reads */
	uint64_t inbox_items;     /* cross-thread items handled */
	uint64_t eventfd_wakes;   /* wake-ups caused by another thread */
	uint64_t misfires;        /* periodic runs found a period or more late */
	/* Since TWHEEL_URING_1.1 (libtwheel-uring 1.1): */
	/*
	 * Multishot requests that ended: CQEs without IORING_CQE_F_MORE of
	 * requests submitted multishot (poll, accept, recv, recvmsg, read and
	 * timeout multishot, zero-copy receive), whatever the cause: the CQ
	 * ring was full, an error, a cancel. A handler that does not re-arm
	 * on such a CQE stops getting completions (see twheel_loop_submit()).
	 */
	uint64_t multishot_ends;
	/* Iterations that found the CQ ring overflowed: the kernel kept
	 * completions on its overflow list (IORING_SQ_CQ_OVERFLOW), which
	 * the loop flushes and runs before the timers then due (up to one
	 * more CQ ring of them); multishot requests end meanwhile. */
	uint64_t cq_overflows;
	/* Completions the kernel dropped (its CQ overflow counter): it could
	 * not even keep them, out of memory. Never expected. */
	uint64_t cq_dropped;
};

/* Copy the loop's counters. -EINVAL on NULL. O(1); the loop thread. */
TWHEEL_LOOP_API int twheel_loop_get_stats(const struct twheel_loop *loop,
					  struct twheel_loop_stats *st);

/* Number of timers linked on the loop's two wheels: armed, or cancelled from
 * another thread and not yet handled (see twheel_loop_pending()); those
 * still in the inbox are not counted. 0 if @loop is NULL. O(1); the loop
 * thread. */
TWHEEL_LOOP_API size_t twheel_loop_count(const struct twheel_loop *loop);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_LOOP_H */
