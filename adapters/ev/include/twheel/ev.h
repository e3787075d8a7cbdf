/* SPDX-License-Identifier: MIT */
/*
 * twheel/ev.h - libtwheel inside a libev loop: one ev_timer drives a
 * wheel (library twheel-ev, pkg-config twheel-ev).
 *
 * The host (<twheel/host.h>) arms, re-arms and cancels timers; this header
 * only creates and destroys it. Timers are struct tw_timer, embedded in
 * your own objects; their callbacks run on the loop's thread from the
 * ev_timer's callback, in nondecreasing order of expiry.
 *
 * Time. The clock is the struct twheel_rt passed to twheel_ev_create()
 * (CLOCK_MONOTONIC and 1 ms ticks by default). The adapter turns
 * twheel_host_defer() on: while a timer is pending, a delay
 * (twheel_host_add()/_mod()) is parked and placed by an ev_prepare of the
 * lowest priority (unreferenced: it keeps no loop alive) just before libev
 * waits (an arm from a prepare watcher that libev runs after it, one of
 * the same priority started earlier, has the prepare fed again, so that
 * libev runs it once more before it waits), from one clock reading taken
 * after every arm of the iteration:
 * no clock reading per arm, late by at most the rest of the iteration
 * (into an empty wheel it counts from twheel_rt_now_upper(): never behind
 * the clock, at most 1/16 of a tick ahead). A delay is relative to the
 * moment of the call, not to the loop's cached time (ev_now(), and the monotonic time libev
 * keeps beside it, are read once per iteration; an ev_timer started after
 * a long callback counts from that old time and fires early). Before the
 * ev_timer is started the adapter calls ev_now_update(), after reading its
 * own clock, so the ev_timer cannot fire before the tick boundary it waits
 * for. A timer fires when the clock has reached its deadline, at most one
 * tick plus libev's wake-up latency (its epoll backend waits whole
 * milliseconds) later. ev_resume() delays every ev_timer by the time the
 * loop was suspended (ev_suspend(); libev's rule), the adapter's too: call
 * twheel_host_run() right after ev_resume(), which runs the timers that
 * came due meanwhile and restarts the ev_timer from the clock, or they
 * fire that much late.
 *
 * The ev_timer is active exactly while the wheel has pending timers: it
 * keeps ev_run() running while something is pending and lets it return
 * when nothing is, and an idle wheel costs no wake-ups. It is restarted
 * only when a timer earlier than the one it waits for is armed.
 *
 * Threads: a host belongs to the thread that runs its loop. Calls from the
 * wheel's callbacks and from libev callbacks on that thread are allowed
 * unless stated otherwise.
 */
#ifndef TWHEEL_EV_H
#define TWHEEL_EV_H

#include <ev.h>

#include <twheel/host.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TWHEEL_ADAPTER_BUILDING) && defined(__GNUC__)
#define TWHEEL_EV_API __attribute__((visibility("default")))
#else
#define TWHEEL_EV_API
#endif

/*
 * Create a host on @loop: a wheel, one (stopped) ev_timer, one
 * ev_prepare of the lowest priority, started and unreferenced (it keeps
 * no loop alive), that places the arms by delay (see Time above), and one
 * ev_cleanup (which keeps no loop alive either) that notices the loop's
 * ev_loop_destroy() (see twheel_ev_destroy()). Arm and
 * cancel timers with twheel_host_add(), twheel_host_mod(), twheel_host_del()
 * and the rest of <twheel/host.h>. @rt gives the tick and the clock
 * (NULL: 1 ms, CLOCK_MONOTONIC); it is copied. Returns the host, or NULL
 * with errno set: EINVAL (@loop NULL, or destroyed by ev_loop_destroy():
 * ev_backend() reads 0; only the default loop's memory outlives that),
 * ENOMEM. Allocates. The loop's thread.
 */
TWHEEL_EV_API struct twheel_host *twheel_ev_create(struct ev_loop *loop, const struct twheel_rt *rt);

/*
 * Shut down: hand every pending timer to @fn(@t, @arg) exactly once (@fn
 * may be NULL, may free the timer; timers it arms again are dropped;
 * none if twheel_host_fini() shut @h down already: the rest is done
 * all the same), stop
 * the ev_timer and the ev_prepare and free @h. May be called from any
 * libev callback on the loop's thread except the wheel's timer callbacks.
 * Call it before ev_loop_destroy() of the loop, or after: the loop's
 * ev_loop_destroy() runs the adapter's ev_cleanup, which stops its
 * watchers and forgets the loop, and the host is lost
 * (twheel_host_lost()): every arm after it returns -ESHUTDOWN, and this
 * hands back the timers still pending and frees @h without touching the
 * loop.
 * Returns 0, or
 *   -EINVAL  @h NULL or not created by twheel_ev_create();
 *   -EBUSY   called from one of the wheel's callbacks, or from @fn of
 *            this destroy under way (nothing done).
 * O(pending timers). The loop's thread.
 */
TWHEEL_EV_API int twheel_ev_destroy(struct twheel_host *h,
				    void (*fn)(struct tw_timer *t, void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_EV_H */
