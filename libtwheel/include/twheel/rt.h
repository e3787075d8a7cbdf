/* SPDX-License-Identifier: MIT */
/*
 * twheel/rt.h - drive a libtwheel wheel from real time, inside any event
 * loop. Part of the core library (libc only).
 *
 * The wheel counts abstract ticks; a loop has a nanosecond clock and a wait
 * that takes a timeout. This header holds the rules that connect the two,
 * so that every loop (the io_uring loop, the libuv/libev/libevent/epoll
 * adapters through <twheel/host.h>, your own) uses one implementation.
 *
 * What a loop needs, in this order (eight functions of this header):
 *
 *   1. twheel_rt_init()       tick length and clock, once;
 *   2. twheel_create(twheel_rt_floor(&rt, twheel_rt_now(&rt)))
 *                             a wheel at the clock's tick;
 *   3. twheel_rt_expiry()     the tick to arm a timer on, for a deadline
 *                             (a delay: twheel_rt_now_upper() + delay;
 *                             a delay of 0: twheel_rt_now(); or, with no
 *                             clock reading per arm, twheel_park() and
 *                             twheel_rt_place() once per iteration);
 *   4. twheel_rt_timeout_ms() (or _ns) how long the loop may sleep;
 *   5. twheel_rt_advance()    after the wait, run what is due.
 *
 *     struct twheel_rt rt;
 *     twheel_rt_init(&rt, 0, NULL, NULL);        // 1 ms ticks, CLOCK_MONOTONIC
 *     struct twheel *w = twheel_create(twheel_rt_floor(&rt, twheel_rt_now(&rt)));
 *     uint64_t now = twheel_rt_now(&rt);
 *     twheel_add(w, &conn->idle, twheel_rt_expiry(&rt, w, now + 30000000000u, now));
 *     for (;;) {
 *             int n = epoll_wait(ep, evs, 64, twheel_rt_timeout_ms(&rt, w, twheel_rt_now(&rt)));
 *             ...handle the n events (they may arm timers the same way)...
 *             twheel_rt_advance(&rt, w, twheel_rt_now(&rt));
 *     }
 *
 * The rules:
 *
 *   deadline -> expiry   a deadline d (clock ns) becomes the tick
 *                        ceil(d / tick); a deadline at or before the
 *                        caller's "now" becomes a tick that is already due
 *                        (it fires in the next advance, not a tick later).
 *   advance target       the wheel is advanced to floor(now / tick), and
 *                        never backwards: if the clock steps back, the
 *                        target stays at the wheel's time.
 *   wait                 the loop may sleep until the clock reaches
 *                        next_expiry * tick: 0 when something is due,
 *                        "forever" when nothing is pending.
 *
 * Why nothing fires early: floor(now / tick) >= ceil(d / tick) implies
 * now >= d. Why nothing fires much late: the wait ends at the tick boundary
 * ceil(d / tick) * tick < d + tick, so a timer is at most one tick (plus the
 * loop's wake-up latency and, for millisecond waits, the rounding up to the
 * next millisecond) late. Why the loop does not spin: the wait is rounded up
 * to the unit the loop takes, so a wake-up never comes before the tick
 * boundary it waited for.
 *
 * Every conversion saturates: huge ticks, deadlines and delays give
 * TW_TICK_MAX or TWHEEL_RT_FOREVER, never a wrapped value. So a delay
 * counted from a reading of UINT64_MAX ns, the end of a 64-bit clock, is
 * a deadline of UINT64_MAX, which has come: due at once. A timer whose
 * expiry tick lies beyond floor(UINT64_MAX / tick) can never be reached by a
 * 64-bit nanosecond clock (that is more than 584 years of uptime); the wait
 * for it is "forever".
 *
 * State: struct twheel_rt is three words of configuration (tick length and
 * clock) that the caller embeds; nothing here allocates, and the wheel's own
 * time (twheel_now(), twheel_target()) is the only state the rules need.
 *
 * Threads: the functions are pure or read the clock; those that take a wheel
 * must be called by the thread that owns that wheel (see twheel.h).
 *
 * Older names: libtwheel 1.0 declared five more functions, the clock type
 * twheel_rt_clock_fn and struct twheel_rt_stats here; they stay exported
 * and declared (deprecated) at the end of this header until 2.0 (the
 * struct is <twheel/host.h>'s struct twheel_host_stats, which this header
 * includes for it).
 */
#ifndef TWHEEL_RT_H
#define TWHEEL_RT_H

#include <stdint.h>
#include <time.h>

#include <twheel/twheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A wait of this many ns means "no timer pending: sleep until other work". */
#define TWHEEL_RT_FOREVER UINT64_MAX

/* The default tick: one millisecond. */
#define TWHEEL_RT_DEFAULT_TICK_NS UINT64_C(1000000)

/*
 * A clock: monotonic nanoseconds since an arbitrary origin, called with the
 * argument it was registered with. It must never go backwards in normal
 * operation (if it does, the rules above hold the wheel still until it
 * catches up, and timers armed with twheel_rt_expiry() meanwhile are late,
 * never early). The one clock type of libtwheel: the host driver and the
 * io_uring loop take the same.
 */
typedef uint64_t (*twheel_clock_fn)(void *arg);

/*
 * The configuration of real-time driving. Set it with twheel_rt_init() and
 * do not change it while a wheel is driven by it; no function here writes
 * it. A zeroed struct behaves as the defaults (1 ms, CLOCK_MONOTONIC).
 */
struct twheel_rt {
	uint64_t tick_ns;      /* length of one wheel tick; 0 = the default */
	twheel_clock_fn clock; /* NULL = twheel_rt_clock_monotonic */
	void *clock_arg;
};

/* CLOCK_MONOTONIC in nanoseconds (@arg is ignored). O(1); any thread. */
TWHEEL_API uint64_t twheel_rt_clock_monotonic(void *arg);

/*
 * Configure @rt: ticks of @tick_ns nanoseconds (0 means the default,
 * TWHEEL_RT_DEFAULT_TICK_NS), time read from @clock(@clock_arg) (NULL means
 * twheel_rt_clock_monotonic). Returns 0, or -EINVAL if @rt is NULL.
 * O(1); any thread.
 */
TWHEEL_API int twheel_rt_init(struct twheel_rt *rt, uint64_t tick_ns, twheel_clock_fn clock,
			      void *clock_arg);

/* Read @rt's clock (ns). Returns 0 if @rt is NULL. O(1); any thread. */
TWHEEL_API uint64_t twheel_rt_now(const struct twheel_rt *rt);

/*
 * A time at or after what @rt's clock reads now, at most 1/16 of a tick
 * after it: the time to count a delay from when arming by delay (a
 * deadline of this plus the delay is never early, and at most 1/16 of a
 * tick later than from twheel_rt_now()). Never use it to advance a wheel,
 * nor for a delay of 0: as twheel_rt_expiry()'s @now_ns it may lie in the
 * next tick, and a timer due now would wait for that tick (the host and
 * the loop read the clock for a delay of 0).
 * It costs less than a clock reading where it can: with the default clock,
 * on x86-64, when the kernel's clocksource is the TSC, a reading this
 * function took on this thread less than 1/64 of a tick ago (measured with
 * the time-stamp counter, which unlike the clock's ordered read does not
 * make the CPU wait for the loads before it) is reused, plus 1/16 of a
 * tick; otherwise, and with any other clock, it reads the clock (ticks
 * under 32 us always do). 0 if @rt is NULL. O(1); any thread (the reading
 * it reuses is the calling thread's).
 */
TWHEEL_API uint64_t twheel_rt_now_upper(const struct twheel_rt *rt);

/*
 * The tick of clock time @now_ns: floor(@now_ns / tick), the time to
 * create a wheel at (twheel_create()) so that its first advance has no
 * ticks to catch up. Returns 0 if @rt is NULL. O(1); any thread.
 */
TWHEEL_API tw_tick_t twheel_rt_floor(const struct twheel_rt *rt, uint64_t now_ns);

/*
 * The expiry tick to arm on @w (twheel_add(), twheel_mod()) for the clock
 * deadline @deadline_ns, at clock time @now_ns (a reading taken no earlier
 * than the request; for a delay, @deadline_ns = @now_ns + delay):
 *   - a deadline ahead of @now_ns: ceil(@deadline_ns / tick), which an
 *     advance reaches only when the clock has reached @deadline_ns; if the
 *     clock stepped back behind the wheel, so that the wheel has already
 *     reached that tick (or, from one of @w's callbacks, the running
 *     advance will: twheel_target()), the first tick after it instead:
 *     late (until the clock is back there), never early;
 *   - a deadline at or before @now_ns (it has come): a tick at or before
 *     floor(@now_ns / tick), so the timer is due in the next advance;
 *     earlier deadlines map to earlier or equal ticks, so due timers still
 *     fire in deadline order.
 * @w NULL: the rules without the wheel (ceil, or the tick of @now_ns).
 * Never wraps. The one limit: a wheel at TW_TICK_MAX (1 ns ticks and a
 * clock that read UINT64_MAX) has no later tick, so after a step back a
 * deadline ahead goes on TW_TICK_MAX, due at once. Returns 0 if @rt is NULL. O(1); the wheel's thread.
 */
TWHEEL_API tw_tick_t twheel_rt_expiry(const struct twheel_rt *rt, const struct twheel *w,
				      uint64_t deadline_ns, uint64_t now_ns);

/*
 * Arm by delay for the cost of the wheel operation alone: park @t on @w
 * with its delay (twheel_park(@w, @t, @delay_ns)) during the loop's
 * iteration, and place every parked timer once, before the loop waits,
 * from one fresh reading: twheel_rt_place(@rt, @w, twheel_rt_now(@rt)).
 * Each parked timer is armed (twheel_place(): one parked in place usually
 * only stores its expiry) at twheel_rt_expiry(@rt, @w, @now_ns + its
 * delay, @now_ns), saturating (from @now_ns UINT64_MAX every delay has
 * come: due at once). @now_ns must be a reading
 * taken after every park it places: then a delay counts from a time at or
 * after the call, never early, and late by at most the time from the call
 * to that reading (the rest of the iteration); a delay of 0 is due in the
 * next advance. If the clock stepped back meanwhile, the delay counts from
 * @now_ns all the same: late in real time, never early. twheel_rt_advance()
 * places first, from its own @now_ns. Returns the number of timers placed,
 * or -EINVAL (@rt or @w NULL). O(1) per timer placed; @w's thread,
 * callbacks included. (TWHEEL_1.2)
 */
TWHEEL_API long twheel_rt_place(const struct twheel_rt *rt, struct twheel *w, uint64_t now_ns);

/*
 * Place @w's parked timers from @now_ns (twheel_rt_place()), then advance
 * @w to floor(@now_ns / tick), or leave it at its time if that is
 * later (the clock stepped back), running every timer due by then.
 * Returns the number of callbacks run, or
 *   -EINVAL  @rt or @w is NULL;
 *   -EBUSY   called from one of @w's callbacks (the parked timers are
 *            placed all the same, as twheel_rt_place() from a callback
 *            places them).
 * Cost: that of twheel_advance(). @w's thread.
 */
TWHEEL_API long twheel_rt_advance(const struct twheel_rt *rt, struct twheel *w, uint64_t now_ns);

/*
 * How long a loop that last read @now_ns may sleep before it must advance
 * @w, in nanoseconds:
 *   0                   a timer is due (its expiry is at or before the
 *                       tick twheel_rt_advance() would go to): do not sleep;
 *   TWHEEL_RT_FOREVER   nothing is pending (or @w is NULL), or the next
 *                       tick with work begins beyond any 64-bit clock
 *                       reading (its boundary does not fit in 64 bits);
 *   otherwise           twheel_next_expiry(@w) * tick - @now_ns, the exact
 *                       time until the next tick with work (a timer on
 *                       TW_TICK_MAX is pending like any other; a wait of
 *                       UINT64_MAX ns is given as UINT64_MAX - 1).
 * Pass a fresh @now_ns: a stale one makes the loop oversleep by its age.
 * Returns 0 if @rt is NULL (so that a broken caller polls, never hangs).
 * O(levels); @w's thread.
 */
TWHEEL_API uint64_t twheel_rt_timeout_ns(const struct twheel_rt *rt, const struct twheel *w,
					 uint64_t now_ns);

/*
 * twheel_rt_timeout_ns() in milliseconds for epoll_wait(), poll() and the
 * like: -1 for TWHEEL_RT_FOREVER, otherwise the timeout rounded up to a
 * whole millisecond (so the loop never wakes before the tick boundary and
 * spins) and clamped to INT_MAX (a loop that wakes after 24.8 days simply
 * asks again). Same NULL handling as twheel_rt_timeout_ns().
 * O(levels); @w's thread.
 */
TWHEEL_API int twheel_rt_timeout_ms(const struct twheel_rt *rt, const struct twheel *w,
				    uint64_t now_ns);

/* ---- Deprecated: the names of libtwheel 1.0, exported until 2.0 -------- */

#if defined(__GNUC__) && !defined(TWHEEL_NO_DEPRECATED_WARNINGS)
#define TWHEEL__DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define TWHEEL__DEPRECATED(use)
#endif

/* The clock type's old name. */
typedef twheel_clock_fn twheel_rt_clock_fn;

/* twheel_rt_expiry(@rt, NULL, @deadline_ns, @now_ns). */
TWHEEL_API tw_tick_t twheel_rt_deadline_tick(const struct twheel_rt *rt, uint64_t deadline_ns,
					     uint64_t now_ns)
	TWHEEL__DEPRECATED("twheel_rt_expiry(rt, NULL, deadline, now)");

/* twheel_rt_expiry(@rt, NULL, @now_ns + @delay_ns (saturating), @now_ns). */
TWHEEL_API tw_tick_t twheel_rt_delay_tick(const struct twheel_rt *rt, uint64_t delay_ns,
					  uint64_t now_ns)
	TWHEEL__DEPRECATED("twheel_rt_expiry(rt, NULL, now + delay, now)");

/* The tick twheel_rt_advance() goes to: floor(@now_ns / tick), or
 * twheel_now(@w) if later; the floor alone if @w is NULL. */
TWHEEL_API tw_tick_t twheel_rt_target(const struct twheel_rt *rt, const struct twheel *w,
				      uint64_t now_ns)
	TWHEEL__DEPRECATED("twheel_rt_advance() or twheel_rt_floor()");

/* @tick * tick in ns, or TWHEEL_RT_FOREVER for TW_TICK_MAX or a product
 * beyond 64 bits. */
TWHEEL_API uint64_t twheel_rt_tick_ns(const struct twheel_rt *rt, tw_tick_t tick)
	TWHEEL__DEPRECATED("tick * rt->tick_ns");

/* twheel_rt_timeout_ns() as a timespec in *@ts (returned), or NULL for
 * TWHEEL_RT_FOREVER or a NULL @ts. */
TWHEEL_API struct timespec *twheel_rt_timeout_ts(const struct twheel_rt *rt,
						 const struct twheel *w, uint64_t now_ns,
						 struct timespec *ts)
	TWHEEL__DEPRECATED("twheel_rt_timeout_ns()");

#ifdef __cplusplus
}
#endif

/* struct twheel_rt_stats of 1.0: now struct twheel_host_stats (a macro
 * keeps the old name), declared with the host. Until 2.0. */
#include <twheel/host.h>

#endif /* TWHEEL_RT_H */
