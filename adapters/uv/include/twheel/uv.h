/* SPDX-License-Identifier: MIT */
/*
 * twheel/uv.h - libtwheel inside a libuv loop: one uv_timer_t drives a
 * wheel (library twheel-uv, pkg-config twheel-uv).
 *
 * The host (<twheel/host.h>) arms, re-arms and cancels timers; this header
 * only creates and destroys it. Timers are struct tw_timer, embedded in
 * your own objects; their callbacks run on the loop's thread from the
 * uv_timer_t's callback, in nondecreasing order of expiry.
 *
 * Time. The clock is the struct twheel_rt passed to twheel_uv_create()
 * (CLOCK_MONOTONIC and 1 ms ticks by default). A delay
 * (twheel_host_add()/_mod()) is relative to the moment of the call, not
 * to the loop's cached uv_now(), so a timer armed after a long callback
 * does not fire early (libuv's own timers do: they count from the time
 * cached at the start of the iteration). The adapter turns
 * twheel_host_defer() on: while a timer is pending, a delay is parked and
 * placed before libuv polls, from one clock reading taken after every arm
 * of the iteration: no clock reading per arm, late by at most the rest of
 * the iteration (into an empty wheel it counts from twheel_rt_now_upper():
 * never behind the clock, at most 1/16 of a tick ahead). The first arm
 * parked after a placement starts a uv_idle_t (unreferenced: it keeps no
 * loop alive; it stops itself) whose callback places them: libuv runs it
 * before it polls, and polls without waiting while it is active, so an
 * arm from any callback, a prepare handle's included, is placed before
 * the loop waits. A timer fires when the clock has reached its deadline, at most one tick plus the loop's wake-up latency
 * later. The uv_timer_t is set in uv_now()'s milliseconds so that it
 * never fires before the tick boundary it waits for.
 *
 * The uv_timer_t is active exactly while the wheel has pending timers: it
 * keeps uv_run(UV_RUN_DEFAULT) running while something is pending and lets
 * it return when nothing is, and an idle wheel costs no wake-ups. It is
 * re-armed only when a timer earlier than the one it waits for is armed;
 * re-arming and cancelling other timers never touches libuv.
 *
 * Closed under it. libuv tells the adapter nothing when the program
 * closes its handles (a uv_walk() at shutdown): no callback of its own
 * runs. It asks uv_is_closing() whenever the host calls it (see
 * twheel_uv_destroy()), for one call into libuv on a re-arm of the
 * uv_timer_t; arms that leave the uv_timer_t alone ask nothing. A
 * uv_timer_t the program stopped (uv_timer_stop() through uv_walk()) while
 * timers are pending is found by the first arm by delay parked after a
 * placement (uv_is_active()), and the placement's callback, and started
 * to fire at once: its run re-arms it. Until then the timers wait, and
 * uv_run() may return, nothing active keeping it.
 *
 * Threads: an adapter belongs to the thread that runs its uv loop. Calls
 * from the wheel's callbacks and from any libuv callback on that thread
 * are allowed unless stated otherwise.
 */
#ifndef TWHEEL_UV_H
#define TWHEEL_UV_H

#include <stdint.h>
#include <uv.h>

#include <twheel/host.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TWHEEL_ADAPTER_BUILDING) && defined(__GNUC__)
#define TWHEEL_UV_API __attribute__((visibility("default")))
#else
#define TWHEEL_UV_API
#endif

/*
 * Create a host on @loop: a wheel, one (inactive) uv_timer_t and one
 * (inactive, unreferenced) uv_idle_t that places parked arms. Arm and
 * cancel timers with twheel_host_add(), twheel_host_mod(), twheel_host_del()
 * and the rest of <twheel/host.h>. @rt gives the tick and the clock
 * (NULL: 1 ms, CLOCK_MONOTONIC); it is copied. Returns the host, or NULL
 * with errno set: EINVAL (@loop NULL, closed by uv_loop_close() (its
 * uv_backend_fd() reads -1; its memory must still be there), or
 * uv_timer_init() failed), ENOMEM.
 * Allocates. The loop's thread.
 */
TWHEEL_UV_API struct twheel_host *twheel_uv_create(uv_loop_t *loop, const struct twheel_rt *rt);

/*
 * Shut down: hand every pending timer to @fn(@t, @arg) exactly once (@fn
 * may be NULL, may free the timer; timers it arms again are dropped;
 * none if twheel_host_fini() shut @h down already: the rest is done
 * all the same), stop
 * and close the uv_timer_t and the uv_idle_t. May be called from any
 * libuv callback on the loop's thread except the wheel's timer callbacks.
 * Destroy it before closing every handle of the loop (uv_walk()): the
 * two handles are the adapter's, and once someone else closed them no
 * timer fires. The adapter checks its handles (uv_is_closing()) each time
 * the host calls it: an arm into an empty wheel or earlier than the tick
 * the uv_timer_t waits for, the first arm by delay parked since the last
 * placement (at the latest the 64th arm by delay after the close). That
 * arm and every later one then return -ESHUTDOWN (twheel_host_lost());
 * the timers pending at the close, and those armed before the adapter
 * noticed, are handed to @fn here. This then closes only what is still open, and
 * a third handle of its own (a uv_idle_t, never started) whose close
 * callback frees @h once the close callbacks of those someone else closed
 * have run (one closed in the same phase of the loop: in the next one).
 * The memory is freed by the close callbacks, so
 * the loop must run once more (as for any handle; after a uv_walk() that
 * closed the adapter's handles, until uv_run(UV_RUN_DEFAULT) returns)
 * before uv_loop_close() succeeds; @h must not be used after this
 * returns 0. After uv_walk() closed both handles and the loop ran their
 * close callbacks, the destroy may also come after uv_loop_close(): it
 * then frees @h at once, and reads only uv_backend_fd() of the closed
 * loop (-1). The uv_loop_t's memory must still be there: freeing it
 * before this is not allowed (the adapter keeps a pointer to the loop,
 * and nothing can tell it the memory is gone). Returns 0, or
 *   -EINVAL  @h NULL or not created by twheel_uv_create();
 *   -EBUSY   called from one of the wheel's callbacks, or from @fn of
 *            this destroy under way (nothing done).
 * O(pending timers), plus (in a close callback) a uv_walk() of the
 * loop's handles or two if someone else closed one of the adapter's. The
 * loop's thread.
 */
TWHEEL_UV_API int twheel_uv_destroy(struct twheel_host *h,
				    void (*fn)(struct tw_timer *t, void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_UV_H */
