/* SPDX-License-Identifier: MIT */
/*
 * twheel/event.h - libtwheel inside a libevent loop: one timer event
 * drives a wheel (library twheel-event, pkg-config twheel-event).
 *
 * The host (<twheel/host.h>) arms, re-arms and cancels timers; this header
 * only creates and destroys it. Timer callbacks run on the loop's thread
 * from the timer event's callback, in nondecreasing order of expiry.
 *
 * Time. A delay given to twheel_host_add()/_mod() counts from the time at
 * the call (twheel_rt_now_upper(): never behind it, at most 1/16 of a tick
 * ahead) of the adapter's clock (struct twheel_rt; CLOCK_MONOTONIC and
 * 1 ms ticks by default), not from libevent's cached time, which is taken
 * once per iteration and, by default, from CLOCK_MONOTONIC_COARSE (a few
 * milliseconds behind). With the default clock the timer event is set
 * against libevent's own clock (event_gettime_monotonic(), read before
 * event_base_update_cache_time()), so it cannot fire before the tick
 * boundary it waits for, whichever clock the base uses. A timer fires when
 * the clock has reached its deadline, at most one tick plus libevent's
 * wake-up latency later: with a default base that latency includes the
 * coarse clock's lag (up to one kernel jiffy); a base created with
 * EVENT_BASE_FLAG_PRECISE_TIMER avoids it.
 *
 * The timer event is pending exactly while the wheel has pending timers:
 * event_base_dispatch() returns when nothing else is pending, and an idle
 * wheel costs no wake-ups. It is re-added only when a timer earlier than
 * the one it waits for is armed.
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
 * Create a host on @base: a wheel and one timer event (not pending). Arm
 * and cancel timers with <twheel/host.h>. @rt gives the tick and the clock
 * (NULL: 1 ms, CLOCK_MONOTONIC); it is copied. Returns the host, or NULL
 * with errno set: EINVAL (@base NULL), ENOMEM. Allocates. The base's thread.
 */
TWHEEL_EVENT_API struct twheel_host *twheel_event_create(struct event_base *base,
							 const struct twheel_rt *rt);

/*
 * Shut down: hand every pending timer to @fn(@t, @arg) exactly once (@fn
 * may be NULL, may free the timer; timers it arms again are dropped),
 * delete and free the timer event, free @h. Returns 0, or
 *   -EINVAL  @h NULL or not created by twheel_event_create();
 *   -EBUSY   called from one of the wheel's callbacks (nothing done).
 * O(pending timers). The base's thread.
 */
TWHEEL_EVENT_API int twheel_event_destroy(struct twheel_host *h,
					  void (*fn)(struct tw_timer *t, void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_EVENT_H */
