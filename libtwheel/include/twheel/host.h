/* SPDX-License-Identifier: MIT */
/*
 * twheel/host.h - drive a wheel from one timer of a host event loop.
 * Part of the core library (libc only); the libuv, libev, libevent and
 * epoll adapters are built on it, and so can an adapter for any other loop.
 *
 * A struct twheel_host is a wheel, the real-time rules of <twheel/rt.h>
 * and one host timer (a uv_timer_t, an ev_timer, a timerfd...) that the
 * host loop runs. The adapter supplies two operations, arm and stop; the
 * host calls twheel_host_run() when the host timer fires. The host timer
 * is touched only when it must be:
 *   - an arm that succeeds (add or mod, by delay or deadline, outside
 *     twheel_host_run(); a parked arm by delay at its placement, once for
 *     the whole batch) re-arms it when it is stopped, or when the
 *     timer's tick is earlier than the tick the host timer waits for; the
 *     host timer is then set, from a fresh clock reading, for the wheel's
 *     next tick with work. Other arms never touch it: while it is set to
 *     fire at once (it was armed when a timer was already due, and waits
 *     for no particular tick) no arm can be earlier, so every arm leaves
 *     it as it is; and an arm at or after the tick it waits for leaves it
 *     too, even when the timer becomes the earliest (that tick may be a
 *     cascade tick before the earliest timer);
 *   - cancelling leaves it alone unless the wheel becomes empty; then it is
 *     stopped, so an idle wheel costs no wake-ups. A cancelled earliest
 *     timer costs at most one wake-up that runs nothing;
 *   - while twheel_host_run() runs the due timers nothing is re-armed;
 *     afterwards the host timer is armed once, from a fresh clock reading.
 * The wheel's time moves on in each run, and outside runs to the tick of
 * each fresh reading the host takes where that processes nothing (no
 * timer due by then, no cascade): a timer armed after the wheel idled is
 * placed from the clock's tick, not the last run's, and costs no wake-up
 * at a cascade tick before its own.
 * The host timer is one-shot: after it fired, the host considers it
 * stopped until arm is called again.
 *
 * Time: a delay is relative to the clock's time at the call, counted from
 * a time at or after it, never from a host loop's cached "now", which may
 * be old. Armed from a callback of twheel_host_run(), or, once the adapter
 * turned twheel_host_defer() on, anywhere while the host timer is armed
 * (a timer is pending), the timer is parked and placed
 * with the others of the iteration from one reading taken after them all
 * (at the run's end, by twheel_host_place() before the host loop waits,
 * or once 64 arms are parked): no clock reading per arm, and late by at
 * most the rest of the iteration (or the time of 64 arms). The adapter
 * calls twheel_host_place() from a hook its loop runs every iteration
 * (libev's ev_prepare), or, with twheel_host_init_ext(), schedules it
 * when the host says a first arm was parked (a handler posted to an Asio
 * executor, a libuv idle handle started). Otherwise it counts from twheel_rt_now_upper() (at most 1/16
 * of a tick after the call, usually without a clock reading). A deadline
 * is a clock reading (arming by a deadline still ahead reads no clock). A
 * timer
 * fires when twheel_host_run() finds the clock at or past its deadline
 * (never early, even if the clock stepped back; but a deadline the clock
 * had reached when it was armed has come, and fires in the next run
 * whatever the clock does meanwhile), at most one tick plus the host's
 * wake-up latency later.
 *
 * Threads: a host belongs to the thread that runs its loop. Every function
 * may be called from the wheel's callbacks and from the host loop's own
 * handlers on that thread, unless stated otherwise.
 */
#ifndef TWHEEL_HOST_H
#define TWHEEL_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include <twheel/rt.h>
#include <twheel/twheel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct twheel_host;

/*
 * What a host counts (twheel_host_get_stats()). "Idle" wake-ups are
 * expected: a cascade tick before a far timer (at most TWHEEL_LEVELS per
 * timer), or a timer cancelled after the host timer was armed for it.
 */
struct twheel_host_stats {
	uint64_t wakeups;      /* twheel_host_run() calls that advanced the wheel */
	uint64_t idle_wakeups; /* ...of which ran no timer */
	uint64_t fired;        /* timer callbacks run */
	uint64_t host_arms;    /* times the host timer was (re)started */
	uint64_t host_stops;   /* times it was stopped because the wheel emptied */
};

/* The struct's name in libtwheel 1.0 (in <twheel/rt.h>), until 2.0. */
#define twheel_rt_stats twheel_host_stats

/* What an adapter does to its host loop's timer. */
struct twheel_host_ops {
	/*
	 * Start (or restart) the host timer so that it fires once, when the
	 * rt clock reads @wake_ns or later. @now_ns is the fresh reading
	 * @wake_ns was computed from (@wake_ns == @now_ns: fire as soon as
	 * possible). A host whose timer counts from a cached time must make
	 * sure it does not fire before @wake_ns (see the adapters). One that
	 * finds its host timer gone (closed under it) calls
	 * twheel_host_lost(@h) and returns: the arm is refused.
	 */
	void (*arm)(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns);
	/* Stop the host timer (it is armed). May call twheel_host_lost(). */
	void (*stop)(struct twheel_host *h);
};

/* Embed in the adapter's own struct; fields are private. */
struct twheel_host {
	struct twheel_rt _rt;
	struct twheel *_w;
	const struct twheel_host_ops *_ops;
	tw_tick_t _armed;     /* the tick the host timer waits for, if _on */
	uint64_t _seen;       /* the latest clock reading this host took */
	bool _in_run;
	bool _on;             /* the host timer is armed */
	uint8_t _flags;       /* defer on (1.2), _ops extended (1.3): the 1.0 padding */
	uint8_t _parked;      /* arms parked since the last placement (< 64) */
	struct twheel_host_stats _st;
};

/*
 * An adapter that can schedule a placement of its own (a handler posted
 * to its loop, an event made active) adds @parked to its ops
 * (twheel_host_init_ext()). (TWHEEL_1.3)
 */
struct twheel_host_ops_ext {
	struct twheel_host_ops ops; /* arm, stop: as above */
	/*
	 * An arm by delay was just parked outside twheel_host_run() (with
	 * twheel_host_defer() on), the first since the last placement: make
	 * sure twheel_host_place() is called before the host loop waits
	 * (schedule it, unless a call is already scheduled), and return 0.
	 * Nonzero: it cannot be scheduled (out of memory); the host places
	 * at once, from a reading taken after the arm. Called from inside
	 * twheel_host_add() and twheel_host_mod(): it must not call @h's
	 * functions, but for twheel_host_lost() (its host timer is gone:
	 * then the arm is refused; return nonzero). A placement scheduled by an earlier call may still be
	 * pending (the run or the 64th park placed that batch): the adapter
	 * keeps its own "scheduled" mark, cleared when its placement runs.
	 */
	int (*parked)(struct twheel_host *h);
};

/*
 * Initialise @h with a new wheel at the clock's current tick. @rt gives
 * the tick and clock (NULL: 1 ms, CLOCK_MONOTONIC) and is copied; @ops
 * must outlive @h. Returns 0, or
 *   -EINVAL  @h or @ops NULL, or an op missing;
 *   -ENOMEM  the wheel could not be allocated.
 * Allocates the wheel (twheel_create()). Any thread.
 */
TWHEEL_API int twheel_host_init(struct twheel_host *h, const struct twheel_rt *rt,
				const struct twheel_host_ops *ops);

/*
 * twheel_host_init() for an adapter that schedules its own placements:
 * @ops->parked is called when an arm by delay is parked and no placement
 * was scheduled since the last one (see struct twheel_host_ops_ext), so
 * that the adapter needs no hook that runs every iteration. It does not
 * turn deferral on: the adapter still calls twheel_host_defer(@h, true).
 * twheel_host_get_ops() returns &@ops->ops.
 * Returns what twheel_host_init() returns, and -EINVAL if @ops->parked is
 * NULL. Any thread. (TWHEEL_1.3)
 */
TWHEEL_API int twheel_host_init_ext(struct twheel_host *h, const struct twheel_rt *rt,
				    const struct twheel_host_ops_ext *ops);

/*
 * Shut down: hand every pending timer to @fn(@t, @arg) exactly once (one
 * parked with the tick twheel_host_expires() gave it, not its delay; @fn
 * may be NULL; it may free the timer; timers it arms again are dropped,
 * not pending, when this returns, and so is one it re-arms before its
 * turn, which it is then not handed: see twheel_drain()), stop the host
 * timer if armed, destroy the wheel. Returns 0, or
 *   -EINVAL  @h NULL or not initialised;
 *   -EBUSY   called from one of the wheel's callbacks, or from @fn of
 *            this shutdown under way (nothing done).
 * O(pending timers).
 */
TWHEEL_API int twheel_host_fini(struct twheel_host *h,
				void (*fn)(struct tw_timer *t, void *arg), void *arg);

/*
 * Arm @t to fire @delay_ns after the call (_add, _mod), or when the clock
 * reaches @deadline_ns (_add_at, _mod_at). _add requires @t not pending;
 * _mod re-arms it whether or not it is.
 *
 * A delay never counts from before the call. From a callback of
 * twheel_host_run(), or with twheel_host_defer() on while the host timer
 * is armed (another timer is pending), @t is parked: pending
 * at once (del, mod, twheel_count() and fini see it), placed by the run's
 * end, the next twheel_host_place() or the 64th arm parked since the last
 * placement (whichever comes first), counting from the one clock reading
 * that placement takes (after the call: never early; late by the time
 * from the call to it; if the clock stepped back meanwhile, counted from
 * that reading all the same). Outside a run, the first such park since
 * the last placement on a host made with twheel_host_init_ext() calls its
 * parked op; if the op refuses, the call places at once, from a reading
 * taken after the arm. Otherwise it counts from
 * twheel_rt_now_upper(): at most 1/16 of a tick later than from a fresh
 * reading. A delay of 0 has come: @t fires in the next run (a parked one,
 * in the run that places it if that comes first).
 *
 * The _at forms read no clock (unless the host timer is re-armed: see
 * the top of this header): a loop that already has the time, read once
 * per iteration with twheel_host_now() or taken from the host loop, arms
 * each timer at that time plus its delay for the cost of the wheel
 * operation alone. Such a deadline is as old as that reading: like the host
 * loop's own timers, it counts from the iteration, not from the call. A
 * deadline at or before the host's latest clock reading (taken by
 * twheel_host_run(), by a delay of 0 and when the host timer is re-armed) is
 * checked against a fresh reading: if the clock has reached it, it has
 * come and fires in the next run (in deadline order with the others due),
 * even if the clock steps back before that run (the wheel does not hold
 * back a tick it has reached); if the clock stepped back behind it, it is
 * still ahead. A deadline ahead fires
 * once the clock has reached the tick boundary at or after it (one that
 * passed since the latest reading: within a tick).
 *
 * If the clock steps back (before the call, or inside a callback of the
 * run that is going on), a timer armed meanwhile by either form fires late,
 * never early: not before the clock reads its deadline, and not before the
 * first tick after the one the wheel had reached or was being advanced to
 * (twheel_target()), that is, once the clock is back there.
 *
 * Returns 0 (_add, _add_at), 1 if @t was pending or 0 if not (_mod,
 * _mod_at), or
 *   -ESHUTDOWN  the host timer is gone (the adapter called
 *            twheel_host_lost(): its loop's handle was closed under it,
 *            its timerfd closed...), checked first after @h: nothing is
 *            changed (@t is not armed; one pending stays pending, never
 *            fires, and twheel_host_fini() hands it back; if this very
 *            arm found the loss, at the tick it asked for). No cost on
 *            an arm that does not touch the host timer: a lost host's
 *            timer counts as stopped, so every arm tries to re-arm it;
 *   -EINVAL  @h or @t NULL, @h shut down, @t has no callback, or @t was
 *            never initialised (all zero: see <twheel/twheel.h>), or (a
 *            -Ddebug_checks build, once the misuse handler returns:
 *            twheel_set_misuse_handler()) @t is pending on another host
 *            or wheel, placed or parked; nothing is changed. A release
 *            build cannot tell such a timer: a call on it through
 *            another host corrupts both;
 *   -EBUSY   (_add, _add_at) @t is already pending.
 * O(1); a delay that is not parked also reads the clock (or bounds it
 * with twheel_rt_now_upper()); any form that places @t calls the host's
 * arm (after a clock reading) when the host timer is stopped or waits for
 * a later tick than @t's (never while it is set to fire at once: see the
 * top of this header).
 */
TWHEEL_API int twheel_host_add(struct twheel_host *h, struct tw_timer *t, uint64_t delay_ns);
TWHEEL_API int twheel_host_mod(struct twheel_host *h, struct tw_timer *t, uint64_t delay_ns);
TWHEEL_API int twheel_host_add_at(struct twheel_host *h, struct tw_timer *t, uint64_t deadline_ns);
TWHEEL_API int twheel_host_mod_at(struct twheel_host *h, struct tw_timer *t, uint64_t deadline_ns);

/*
 * Cancel @t. One cancelled while parked keeps the tick
 * twheel_host_expires() gave it then (not its delay) in its expires.
 * Returns 1 if it was pending, 0 if not, or -EINVAL (@h or @t NULL, @h
 * shut down, or @t never initialised: all zero; @t pending on another
 * host, in a -Ddebug_checks build: see twheel_host_add()). O(1), plus the
 * host's stop when the wheel becomes empty.
 */
TWHEEL_API int twheel_host_del(struct twheel_host *h, struct tw_timer *t);

/*
 * The host timer fired: advance the wheel to the clock's current tick
 * (running every due timer), then arm the host timer for the next tick
 * with work, or leave it stopped if the wheel is empty. Call it from the
 * host timer's callback: the host counts its timer stopped from here on
 * (called while the host timer is still armed, that timer may wake once
 * for nothing). Timers parked before the run are placed from its first
 * clock reading, those its callbacks parked from its second, after them.
 * Returns the number of timer callbacks run, or
 *   -EINVAL  @h NULL or shut down (nothing counted);
 *   -EBUSY   called from one of the wheel's callbacks;
 *   -ESHUTDOWN  the host timer is gone (twheel_host_lost(); nothing run).
 * Cost: that of twheel_advance() plus two clock readings.
 */
TWHEEL_API long twheel_host_run(struct twheel_host *h);

/*
 * Place the timers parked by arms by delay (see twheel_host_add()) from one
 * fresh clock reading, and re-arm the host timer if one of them is now the
 * earliest. An adapter that turned twheel_host_defer() on calls this once
 * per host loop iteration, before the loop waits (a prepare hook: libev's
 * ev_prepare), or when its parked op asks for it (twheel_host_init_ext():
 * libuv's uv_idle_t); anyone may call it at any time.
 * Returns the number of timers placed (0, without reading the clock, when
 * none was parked), or
 *   -EINVAL  @h NULL or shut down;
 *   -EBUSY   called from one of the wheel's callbacks (the run places them);
 *   -ESHUTDOWN  the host timer is gone (twheel_host_lost(), before the
 *            call or found by re-arming it for what was placed: those
 *            timers stay pending and are handed back by twheel_host_fini()).
 * Cost: one clock reading, O(1) per timer placed, O(levels) to ask the
 * wheel for its earliest tick. (TWHEEL_1.2)
 */
TWHEEL_API long twheel_host_place(struct twheel_host *h);

/*
 * With @on, park every arm by delay (twheel_host_add(), twheel_host_mod())
 * made while the host timer is armed until the next twheel_host_place() or
 * run, instead of bounding the time of each call (with the host timer
 * stopped, the wheel empty, the arm places at once and arms it, so that
 * the host loop has something to run for). The caller promises to call
 * twheel_host_place() before its host loop waits, every iteration, or
 * whenever its parked op asks (twheel_host_init_ext()): a parked timer is
 * not placed otherwise until the next run. Without it,
 * only the arms from the run's callbacks are parked. Turning it off places
 * what is parked. Returns 0, or
 *   -EINVAL  @h NULL or shut down;
 *   -EBUSY   called from one of the wheel's callbacks (nothing done);
 *   -ESHUTDOWN  the host timer is gone (twheel_host_lost(); nothing done).
 * O(1), or twheel_host_place()'s cost when turned off. (TWHEEL_1.2)
 */
TWHEEL_API int twheel_host_defer(struct twheel_host *h, bool on);

/*
 * For adapters: the host timer is gone, closed or freed under the adapter
 * by the program (a uv_walk() that closed its handles, its timerfd
 * closed), so that no timer can fire any more. The adapter calls this when
 * it finds so, from its ops (arm, stop, parked: the arm that called them is
 * then refused) or any of its own functions. From then on every arm
 * (twheel_host_add() and its forms), twheel_host_run(),
 * twheel_host_place() and twheel_host_defer() return -ESHUTDOWN and change
 * nothing; twheel_host_del(), the read-only calls and twheel_host_fini()
 * work as before, and fini hands back every timer still pending (it calls
 * no stop op). It cannot be undone. Returns 0 (also when @h was lost
 * already), or
 *   -EINVAL  @h NULL or shut down;
 *   -EBUSY   called from one of the wheel's callbacks (nothing done; an
 *            adapter calls it from its ops, which a run calls only after
 *            its callbacks).
 * O(1). @h's thread. (TWHEEL_1.3)
 */
TWHEEL_API int twheel_host_lost(struct twheel_host *h);

/*
 * The tick @t (armed through @h) fires at, as tw_timer_expires() gives it,
 * but right while @t waits parked (an arm by delay not placed yet, whose
 * tw_timer_expires() is its delay): then the tick that placing it from
 * @h's latest clock reading would give, the earliest it can fire at (its
 * placement reads the clock again, after the arm, and gives that tick or
 * a later one, unless the clock steps back, or reads UINT64_MAX, where
 * every delay is due: see <twheel/rt.h>); a timer cancelled
 * (twheel_host_del()) or handed back by twheel_host_fini() while parked
 * keeps that tick. 0 if @t is NULL; with @h
 * NULL or shut down, tw_timer_expires(). Reads no clock. O(1); @h's
 * thread. (TWHEEL_1.3)
 */
TWHEEL_API tw_tick_t twheel_host_expires(const struct twheel_host *h, const struct tw_timer *t);

/* A fresh reading of @h's clock (ns); 0 if @h is NULL. O(1). */
TWHEEL_API uint64_t twheel_host_now(const struct twheel_host *h);

/*
 * The wheel, for the read-only calls of <twheel/twheel.h> (twheel_count,
 * twheel_next_expiry, twheel_get_stats...). Arm through @h: an arm through
 * the wheel's own API (twheel_add, twheel_mod, twheel_park...) outside a
 * callback of @h's run does not re-arm the host timer, so the timer fires
 * only once the host timer fires for another one, late, or never if none
 * is pending; a -Ddebug_checks build reports it (twheel_set_misuse_handler())
 * and refuses it with -EINVAL. From a callback of the run it is allowed
 * (the run re-arms the host timer after its callbacks). Cancel through @h
 * too: twheel_del() on the wheel loses nothing, but leaves the host timer
 * armed (a wake-up for nothing; the host loop does not return until then).
 * NULL if @h is NULL. O(1).
 */
TWHEEL_API struct twheel *twheel_host_wheel(const struct twheel_host *h);

/* @h's real-time configuration; NULL if @h is NULL. O(1). */
TWHEEL_API const struct twheel_rt *twheel_host_rt(const struct twheel_host *h);

/* Copy @h's counters into @st. 0, or -EINVAL (either NULL). O(1). */
TWHEEL_API int twheel_host_get_stats(const struct twheel_host *h, struct twheel_host_stats *st);

/*
 * The ops @h was initialised with, NULL if @h is NULL: how an adapter
 * tells its own hosts from others' (compare with its ops table). O(1).
 */
TWHEEL_API const struct twheel_host_ops *twheel_host_get_ops(const struct twheel_host *h);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_HOST_H */
