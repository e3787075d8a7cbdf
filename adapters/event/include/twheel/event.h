/* SPDX-License-Identifier: MIT */
/*
 * twheel/event.h - libtwheel inside a libevent loop: one timer event
 * drives a wheel (library twheel-event, pkg-config twheel-event).
 *
 * The host (<twheel/host.h>) arms, re-arms and cancels timers; this header
 * creates and destroys it, and runs the base (twheel_event_loop()). Timer callbacks run on the loop's thread
 * from the timer event's callback, in nondecreasing order of expiry.
 *
 * Time. A delay given to twheel_host_add()/_mod() counts from the time at
 * the call (twheel_rt_now_upper(): never behind it, at most 1/16 of a tick
 * ahead) of the adapter's clock (struct twheel_rt; CLOCK_MONOTONIC and
 * 1 ms ticks by default), never from libevent's cached time, which is
 * taken once per iteration and, by default, from CLOCK_MONOTONIC_COARSE (a
 * few milliseconds behind). An arm by delay made while a timer is pending
 * counts instead from one clock reading per iteration taken after every
 * arm of it, however the base is run (event_base_dispatch() or
 * twheel_event_loop()): it is parked, and placed before the base waits
 * again, by an event the first such arm makes active (the wheel's
 * callbacks' at the run's end; in any case at the 64th arm:
 * <twheel/host.h>). No clock reading per arm, never early, and late by at
 * most the rest of the iteration (the callbacks active before the
 * placement event runs, of its priority and higher). With the
 * default clock the timer event is set against libevent's own clock
 * (event_gettime_monotonic(), read before event_base_update_cache_time()),
 * so it cannot fire before the tick boundary it waits for, whichever clock
 * the base uses; a timer already due when it is set (a delay of 0, a
 * deadline passed) runs in the base's next iteration, whatever the base's
 * clock reads. A timer fires when the clock has reached its deadline, at
 * most one tick plus libevent's wake-up latency later: with a default base
 * that latency includes the coarse clock's lag, which may pass one
 * kernel jiffy (measured up to 7.7 ms with 4 ms jiffies: timers then ran
 * a median 7.0 ms, at most 11 ms, after their tick boundary); a base
 * created with EVENT_BASE_FLAG_PRECISE_TIMER avoids it (a median 0.07 ms,
 * 99th percentile 2.2 ms).
 *
 * The timer event is pending exactly while the wheel has pending timers:
 * event_base_dispatch() returns when nothing else is pending, and an idle
 * wheel costs no wake-ups. It is re-added only when a timer earlier than
 * the one it waits for is armed.
 *
 * Deleted by the program. The two events are the adapter's, but a program
 * that deletes every event of its base (collected by
 * event_base_foreach_event(), then event_del()) deletes them too, and
 * libevent tells the adapter nothing. It checks its timer event
 * (event_pending(), against its own mark of having added it) where it runs
 * anyway: each iteration of twheel_event_loop(), the first arm by delay
 * parked after a placement, the placement's callback; one found deleted
 * is made active, so that the pending timers are run at once if due and
 * the event is added again for the others. Until the adapter looks, they
 * wait: with event_base_dispatch() and no arm, for ever (the base returns,
 * nothing being pending). A placement event deleted while active is made
 * active again by the next first park. Freeing the base (event_base_free())
 * or the events before twheel_event_destroy() is not allowed: they are
 * used afterwards.
 *
 * Threads: a host belongs to the thread that runs its base. Calls from the
 * wheel's callbacks and from libevent callbacks on that thread are
 * allowed unless stated otherwise.
 */
#ifndef TWHEEL_EVENT_H
#define TWHEEL_EVENT_H

#include <event2/event.h>

#include <twheel/host.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TWHEEL_ADAPTER_BUILDING) && defined(__GNUC__)
#define TWHEEL_EVENT_API __attribute__((visibility("default")))
#else
#define TWHEEL_EVENT_API
#endif

/*
 * Create a host on @base: a wheel, one timer event (not pending) and one
 * placement event (never added: made active when an arm is parked). Arm
 * and cancel timers with <twheel/host.h>. @rt gives the tick and the clock
 * (NULL: 1 ms, CLOCK_MONOTONIC); it is copied. The two events take the
 * base's default priority at the call (the middle one; the only one
 * before event_base_priority_init()). libevent refuses
 * event_base_priority_init() (-1) while an event is active, and an arm by
 * delay parked outside the base's loop (a timer pending already) makes the
 * placement event active until the base runs: call it before arming
 * timers (before this function, for the events to get the middle of the
 * new priorities). Returns the host, or NULL with errno set: EINVAL (@base
 * NULL), ENOMEM. Allocates. The base's thread.
 */
TWHEEL_EVENT_API struct twheel_host *twheel_event_create(struct event_base *base,
							 const struct twheel_rt *rt);

/*
 * event_base_loop(base, @flags) on the base of @h, one iteration at a time
 * (EVLOOP_ONCE), placing the arms by delay parked since the last one
 * (twheel_host_place()) before each iteration and once more on return.
 * Since 1.3 not needed for that (the adapter places them itself, see Time
 * above); kept, with the same effect. @flags: 0 (run until no event
 * is pending, event_base_loopexit() or event_base_loopbreak(), like
 * event_base_dispatch()), or EVLOOP_ONCE, EVLOOP_NONBLOCK,
 * EVLOOP_NO_EXIT_ON_EMPTY as for event_base_loop(). Returns
 * event_base_loop()'s result (0; 1 if no event was pending or active; -1
 * on libevent's error, such as a call from one of the base's callbacks),
 * or
 *   -EINVAL  @h NULL, not created by twheel_event_create() or shut down
 *            (twheel_host_fini()), or an unknown flag (nothing run);
 *   -EBUSY   called from one of the wheel's callbacks (nothing run).
 * If a callback destroys @h (twheel_event_destroy()), the base is run on
 * without it as asked, and @h is freed when this returns.
 * Cost per iteration: event_base_loop(EVLOOP_ONCE), plus one clock reading
 * if an arm was parked. The base's thread. (TWHEEL_EVENT_1.2)
 */
TWHEEL_EVENT_API int twheel_event_loop(struct twheel_host *h, int flags);

/*
 * Shut down: hand every pending timer to @fn(@t, @arg) exactly once (@fn
 * may be NULL, may free the timer; timers it arms again are dropped;
 * none if twheel_host_fini() shut @h down already: the rest is done
 * all the same),
 * delete and free the timer event and the placement event, free @h (from
 * a callback of twheel_event_loop(@h), when that returns). May be called
 * from any libevent callback on the base's thread except the wheel's
 * timer callbacks. Call it before event_base_free() of the base. Returns
 * 0, or
 *   -EINVAL  @h NULL or not created by twheel_event_create();
 *   -EBUSY   called from one of the wheel's callbacks, or from @fn of
 *            this destroy under way (nothing done).
 * O(pending timers). The base's thread.
 */
TWHEEL_EVENT_API int twheel_event_destroy(struct twheel_host *h,
					  void (*fn)(struct tw_timer *t, void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_EVENT_H */
