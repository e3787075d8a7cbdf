/* SPDX-License-Identifier: MIT */
/*
 * twheel/epoll.h - libtwheel in a plain epoll (or poll, select) loop: one
 * timerfd drives a wheel (library twheel-epoll, pkg-config twheel-epoll).
 *
 * Why a timerfd rather than the loop's wait timeout: the timerfd carries
 * its own deadline, so the loop needs no change to its wait (a loop owned
 * by other code, or one with several timer sources, just watches one more
 * file descriptor), and with the default clock the deadline is absolute
 * (TFD_TIMER_ABSTIME on CLOCK_MONOTONIC): no cached time, no rounding to
 * milliseconds, no early wake-up. A loop that computes its own timeout can
 * use <twheel/rt.h> directly instead (twheel_rt_timeout_ms()).
 *
 * Use: add twheel_epoll_fd() to your epoll set for EPOLLIN (level- or
 * edge-triggered) and call twheel_epoll_dispatch() when it is readable.
 * Arm and cancel timers with <twheel/host.h> (twheel_host_add() ...). The
 * timerfd is disarmed whenever the wheel is empty: an idle wheel never
 * makes the fd readable.
 *
 * Time: delays count from the clock's time at the call
 * (twheel_rt_now_upper(): never behind it, at most 1/16 of a tick ahead),
 * until the loop waits through twheel_epoll_wait(). From its first call,
 * an arm by delay made while a timer is pending is parked and placed with
 * the others of the iteration from one clock reading taken right before
 * the next epoll_wait() (or at the run's end for the wheel's callbacks, or
 * at the 64th arm: <twheel/host.h>): no clock reading per arm, never
 * early, and late by at most the rest of the iteration (the time from the
 * call to the next wait). With an injected clock (struct twheel_rt), the
 * timerfd is armed relative to that clock's reading, and a wake-up that
 * comes early only re-arms it.
 *
 * Threads: a host belongs to the thread that runs the loop; every function
 * may be called from the wheel's callbacks and the loop's other handlers,
 * unless stated otherwise.
 */
#ifndef TWHEEL_EPOLL_H
#define TWHEEL_EPOLL_H

#include <sys/epoll.h>

#include <twheel/host.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TWHEEL_ADAPTER_BUILDING) && defined(__GNUC__)
#define TWHEEL_EPOLL_API __attribute__((visibility("default")))
#else
#define TWHEEL_EPOLL_API
#endif

/*
 * Create a host: a wheel and a disarmed, non-blocking, close-on-exec
 * timerfd on CLOCK_MONOTONIC. @rt gives the tick and clock (NULL: 1 ms,
 * CLOCK_MONOTONIC); it is copied. Returns the host, or NULL with errno set
 * (ENOMEM, or the errno of timerfd_create()). Allocates. Any thread.
 */
TWHEEL_EPOLL_API struct twheel_host *twheel_epoll_create(const struct twheel_rt *rt);

/*
 * The timerfd to watch for EPOLLIN (POLLIN), or -EINVAL if @h is NULL or
 * not created by twheel_epoll_create(), or -ESHUTDOWN once it was found
 * closed (see twheel_epoll_destroy(): the number may be another
 * descriptor's). It stays the adapter's: do not read, set or close it
 * (twheel_epoll_destroy() closes it). O(1).
 */
TWHEEL_EPOLL_API int twheel_epoll_fd(const struct twheel_host *h);

/*
 * The timerfd is readable (or might be): consume its expiry and run every
 * due timer, then re-arm it. Harmless when it was not readable. Returns
 * the number of timer callbacks run, or
 *   -EINVAL  @h NULL, not created by twheel_epoll_create(), or shut down
 *            (twheel_host_fini());
 *   -EBUSY   called from one of the wheel's callbacks;
 *   -ESHUTDOWN  the timerfd was found closed before (see
 *            twheel_epoll_destroy()): nothing read (the number may be
 *            another descriptor's), nothing run;
 *   or read(2)'s error other than EAGAIN as a negative errno (-EBADF:
 *   the timerfd was closed behind the adapter's back: the host is then
 *   lost, see twheel_epoll_destroy()), nothing run.
 * Cost: one read(2), twheel_advance(), at most one timerfd_settime(2).
 */
TWHEEL_EPOLL_API long twheel_epoll_dispatch(struct twheel_host *h);

/*
 * epoll_wait(@epfd, @events, @maxevents, @timeout_ms), right after placing
 * the arms by delay parked since the last wait (twheel_host_place()). The
 * first call turns twheel_host_defer() on for @h (it stays on): from then
 * on the loop must wait only through this function, or call
 * twheel_host_place(@h) right before its own waits, or a parked timer is
 * placed (and fires) late: by the timerfd's next expiry (for the earliest
 * timer, or a cascade tick before it) or the 64th arm parked (a 5 ms
 * delay parked beside a 300 ms timer fired after 121 ms). A loop with
 * several hosts waits through one of them and calls twheel_host_place()
 * on each other one this function was ever given, right before.
 * Returns the number of ready events, or
 *   -EINVAL  @h NULL, not created by twheel_epoll_create() or shut down
 *            (twheel_host_fini()), @events NULL or @maxevents <= 0
 *            (nothing placed, no wait);
 *   -EBUSY   called from one of the wheel's callbacks (nothing placed);
 *   -ESHUTDOWN  the timerfd was found closed (see twheel_epoll_destroy();
 *            nothing placed, no wait);
 *   or epoll_wait()'s error as a negative errno (-EINTR, -EBADF...), the
 *   parked timers placed.
 * Cost: twheel_host_place() (one clock reading if an arm was parked, O(1)
 * per timer placed), then epoll_wait(2). (TWHEEL_EPOLL_1.2)
 */
TWHEEL_EPOLL_API int twheel_epoll_wait(struct twheel_host *h, int epfd, struct epoll_event *events,
				       int maxevents, int timeout_ms);

/*
 * Shut down: hand every pending timer to @fn(@t, @arg) exactly once (@fn
 * may be NULL, may free the timer; timers it arms again are dropped;
 * none if twheel_host_fini() shut @h down already: the rest is done
 * all the same),
 * close the timerfd (which removes it from every epoll set) and free @h.
 * The timerfd is closed, not disarmed: after fork() the parent and the
 * child share it (as they share an epoll set), so a host made before the
 * fork is for one of them to use, and the other may only destroy its
 * copy, which leaves the timer of the one that uses it armed.
 * Destroyed while the loop handles a batch of events from one
 * epoll_wait(), the rest of that batch may still hold the timerfd's
 * event, whose data names the freed @h: the loop must skip it (as for any
 * descriptor closed in the middle of a batch), not dispatch it.
 * A timerfd the program closed cannot fire. The adapter finds it when a
 * call on it fails: dispatch's -EBADF, or timerfd_settime() (EBADF; EINVAL
 * if the number went to a descriptor that is not a timerfd) when the host
 * re-arms the timerfd (an arm into an empty wheel or earlier than the tick
 * it waits for) or stops it; no extra call. The host is then lost
 * (twheel_host_lost()): that arm and every later one, and
 * twheel_epoll_wait(), return -ESHUTDOWN; this hands back what was
 * pending (arms that left the timerfd alone before the adapter found the
 * close included) and does not close the number, which may be another
 * descriptor's by then.
 * Returns 0, or
 *   -EINVAL  @h NULL or not created by twheel_epoll_create();
 *   -EBUSY   called from one of the wheel's callbacks, or from @fn of
 *            this destroy under way (nothing done).
 * O(pending timers).
 */
TWHEEL_EPOLL_API int twheel_epoll_destroy(struct twheel_host *h,
					  void (*fn)(struct tw_timer *t, void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_EPOLL_H */
