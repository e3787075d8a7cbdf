/* SPDX-License-Identifier: MIT */
/*
 * twheel/rt.h - drive a libtwheel wheel from real time, inside any event
 * loop. Part of the core library (libc only).
 *
 * The wheel counts abstract ticks; a loop has a nanosecond clock and a wait
 * that takes a timeout. This header holds the rules that connect the two,
 * so that every loop (the io_uring loop, the libuv/libev/libevent/epoll
 * adapters, your own) uses one implementation of them:
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
 * TW_TICK_MAX or TWHEEL_RT_FOREVER, never a wrapped value. A timer whose
 * expiry tick lies beyond floor(UINT64_MAX / tick) can never be reached by a
 * 64-bit nanosecond clock (that is more than 584 years of uptime); the wait
 * for it is "forever".
 *
 * State: struct twheel_rt is three words of configuration (tick length and
 * clock) that the caller embeds; nothing here allocates, and the wheel's own
 * time (twheel_now()) is the only state the rules need.
 *
 * Threads: the functions are pure or read the clock; those that take a wheel
 * must be called by the thread that owns that wheel (see twheel.h).
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
 * A clock: monotonic nanoseconds since an arbitrary origin. It must never go
 * backwards in normal operation (if it does, the rules above hold the wheel
 * still until it catches up, and timers armed with twheel_rt_expiry()
 * meanwhile are late, never early). Same signature as the io_uring loop's
 * clock.
 */
typedef uint64_t (*twheel_rt_clock_fn)(void *arg);

/*
 * The configuration of real-time driving. Set it with twheel_rt_init() and
 * do not change it while a wheel is driven by it; no function here writes
 * it. A zeroed struct behaves as the defaults (1 ms, CLOCK_MONOTONIC).
 */
struct twheel_rt {
	uint64_t tick_ns;         /* length of one wheel tick; 0 = the default */
	twheel_rt_clock_fn clock; /* NULL = twheel_rt_clock_monotonic */
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
TWHEEL_API int twheel_rt_init(struct twheel_rt *rt, uint64_t tick_ns, twheel_rt_clock_fn clock,
			      void *clock_arg);

/* Read @rt's clock (ns). Returns 0 if @rt is NULL. O(1); any thread. */
TWHEEL_API uint64_t twheel_rt_now(const struct twheel_rt *rt);

/*
 * The tick a wheel driven by @rt may be advanced to at clock time @now_ns,
 * ignoring the wheel: floor(@now_ns / tick). Returns 0 if @rt is NULL.
 * O(1); any thread.
 */
TWHEEL_API tw_tick_t twheel_rt_floor(const struct twheel_rt *rt, uint64_t now_ns);

/*
 * The expiry tick for clock deadline @deadline_ns, armed at clock time
 * @now_ns. If @deadline_ns > @now_ns: ceil(@deadline_ns / tick), which an
 * advance reaches only when the clock has reached @deadline_ns. Otherwise
 * (the deadline has passed): a tick <= floor(@now_ns / tick), so the timer
 * is due and fires in the next advance; earlier deadlines map to earlier or
 * equal ticks, so they still fire in deadline order. Never wraps. (Ignores
 * the wheel: if the clock has stepped back behind the wheel's time, see
 * twheel_rt_expiry().)
 * Returns 0 if @rt is NULL. O(1); any thread.
 */
TWHEEL_API tw_tick_t twheel_rt_deadline_tick(const struct twheel_rt *rt, uint64_t deadline_ns,
					     uint64_t now_ns);

/*
 * The expiry tick to arm on @w for clock deadline @deadline_ns at clock time
 * @now_ns: twheel_rt_deadline_tick(), except after the clock stepped back
 * behind the wheel's time. The wheel is then held at its time until the
 * clock catches up, so a deadline still ahead of @now_ns whose tick the
 * wheel has already reached (or, from a callback, the tick the running
 * advance goes to: twheel_target()) is placed on the first tick after it:
 * late (until the clock is back there), never early. Use it (or the
 * host driver, or the io_uring loop, which do) rather than
 * twheel_rt_deadline_tick() whenever the clock may step back. @w NULL:
 * twheel_rt_deadline_tick(). Returns 0 if @rt is NULL. O(1); the wheel's
 * thread.
 */
TWHEEL_API tw_tick_t twheel_rt_expiry(const struct twheel_rt *rt, const struct twheel *w,
				      uint64_t deadline_ns, uint64_t now_ns);

/*
 * The expiry tick for a timer @delay_ns after clock time @now_ns: the
 * deadline @now_ns + @delay_ns (saturating at UINT64_MAX) converted with
 * twheel_rt_deadline_tick(). A delay of 0 is due at once.
 * Returns 0 if @rt is NULL. O(1); any thread.
 */
TWHEEL_API tw_tick_t twheel_rt_delay_tick(const struct twheel_rt *rt, uint64_t delay_ns,
					  uint64_t now_ns);

/*
 * The tick to advance @w to at clock time @now_ns: floor(@now_ns / tick),
 * or the wheel's time if that is later (the clock stepped back), so the
 * result is always a legal argument of twheel_advance().
 * Returns 0 if @rt is NULL, and the floor alone if @w is NULL.
 * O(1); @w's thread.
 */
TWHEEL_API tw_tick_t twheel_rt_target(const struct twheel_rt *rt, const struct twheel *w,
				      uint64_t now_ns);

/*
 * Advance @w to twheel_rt_target(@rt, @w, @now_ns), running every timer due
 * by then. Returns the number of callbacks run, or
 *   -EINVAL  @rt or @w is NULL;
 *   -EBUSY   called from one of @w's callbacks.
 * Cost: that of twheel_advance(). @w's thread.
 */
TWHEEL_API long twheel_rt_advance(const struct twheel_rt *rt, struct twheel *w, uint64_t now_ns);

/*
 * The clock time (ns) at which tick @tick is reached: @tick * tick, or
 * TWHEEL_RT_FOREVER if @tick is TW_TICK_MAX or the product does not fit in
 * 64 bits (no 64-bit clock reading reaches it). Returns 0 if @rt is NULL.
 * O(1); any thread.
 */
TWHEEL_API uint64_t twheel_rt_tick_ns(const struct twheel_rt *rt, tw_tick_t tick);

/*
 * How long a loop that last read @now_ns may sleep before it must advance
 * @w, in nanoseconds:
 *   0                   a timer is due (its expiry is at or before
 *                       twheel_rt_target(@rt, @w, @now_ns)): do not sleep;
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

/*
 * twheel_rt_timeout_ns() as a timespec for ppoll(), epoll_pwait2(),
 * pselect() or io_uring_wait_cqe_timeout(): fills *@ts and returns @ts,
 * or returns NULL (the "wait indefinitely" argument of those calls) when
 * the timeout is TWHEEL_RT_FOREVER. If @ts is NULL, returns NULL.
 * O(levels); @w's thread.
 */
TWHEEL_API struct timespec *twheel_rt_timeout_ts(const struct twheel_rt *rt,
						 const struct twheel *w, uint64_t now_ns,
						 struct timespec *ts);

/*
 * What an adapter that drives a wheel from a host loop's timer counts
 * (twheel_host_get_stats() in <twheel/host.h>). "No-fire" wake-ups are expected:
 * a cascade tick before a far timer (at most TWHEEL_LEVELS per timer), or a
 * timer cancelled after the host timer was armed for it.
 */
struct twheel_rt_stats {
	uint64_t wakeups;     /* host timer callbacks that advanced the wheel */
	uint64_t idle_wakeups; /* ...of which ran no timer */
	uint64_t fired;       /* timer callbacks run */
	uint64_t host_arms;   /* times the host timer was (re)started */
	uint64_t host_stops;  /* times it was stopped because the wheel emptied */
};

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_RT_H */
