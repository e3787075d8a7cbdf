/* SPDX-License-Identifier: MIT */
/*
 * twheel/compat.h - the per-thread wheel under the legacy timer APIs:
 * <twheel/compat/timer_list.h> (the Linux kernel's timer_list, jiffies)
 * and <twheel/compat/callout.h> (FreeBSD's callout(9), ticks). Part of
 * the core library (libc only). Legacy code calls add_timer() or
 * callout_reset() with no wheel argument, so each thread binds one wheel,
 * once:
 *
 *   twheel_compat_bind_wheel(w)       a plain struct twheel that the thread
 *                                     advances itself: one tick = one jiffy;
 *   twheel_compat_bind_host(h, TWHEEL_COMPAT_TICK_NS)
 *                                     a host (<twheel/host.h>: the libuv,
 *                                     libev, libevent or epoll adapter, or
 *                                     your own) whose tick is 1/HZ s;
 *   twheel_loop_compat_bind(loop, TWHEEL_COMPAT_TICK_NS)
 *                                     an io_uring loop (<twheel/loop.h>).
 *
 * Threads: a binding belongs to its thread, and so does every compat timer
 * pending on its wheel. A call on a timer pending on another thread's
 * wheel changes nothing and returns -EXDEV; a call that arms a timer on a
 * thread that bound nothing returns -ENXIO (the first of each thread also
 * says so on stderr: twheel_compat_mod()). Whether a timer is pending is
 * one word, read and written atomically (relaxed), so asking from another
 * thread is no data race, but the answer may be stale by the time it is
 * used (as the kernel's timer_pending()). Moving an idle timer to another
 * thread is the program's business (hand it over with a lock or a queue).
 *
 * Time: twheel_compat_now() counts ticks since the thread bound its wheel;
 * jiffies and ticks are that count plus the start value their kernels use.
 * A timer armed for tick T fires in the first advance (or host run) that
 * reaches T, never before; a tick already reached fires in the next one.
 * Inside a callback the time is the one the running advance reaches (a
 * plain wheel's twheel_target(), a host's clock), not the fired timer's
 * tick, as the kernels' jiffies and ticks are the current time while
 * their softirq catches up after a stall (Linux's __run_timers() runs
 * every bucket from its clock up to jiffies): after one advance of many
 * ticks, a timer that re-arms itself from its callback for the next tick
 * (mod_timer(t, jiffies + 1), callout_reset(c, 1, ...)) fires at the
 * first tick after it, and then on time. So every arm from a callback is
 * for a tick after the running advance and fires in a later one, as the
 * wheel requires (twheel_advance()). One difference from the kernel
 * stays: an expiry before the time reached (a timer->expires already
 * past given to add_timer() or mod_timer()) fires at the next tick, in
 * the next advance, where the kernel may run it again within the same
 * catch-up (it queues such a timer at the bucket its clock is at, still
 * behind jiffies). Expiries at the time reached, mod_timer(t, jiffies) or
 * callout_reset(c, 0, ...), fire at the next tick in both.
 */
#ifndef TWHEEL_COMPAT_H
#define TWHEEL_COMPAT_H

#include <stdbool.h>
#include <stdint.h>

#include <twheel/host.h>
#include <twheel/twheel.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Ticks a second of the legacy headers: HZ of <twheel/compat/timer_list.h>
 * and hz of <twheel/compat/callout.h>. Define it before including any of
 * them to change it; it must divide 3,000,000 and be at most 1,000,000:
 * 2^a * 3^c * 5^b with a and b up to 6 and c up to 1 (100, 250, 300, 400,
 * 1000, 1200 ... 1000000), which takes every HZ the kernel offers on
 * x86 (100, 250, 300, 1000). The conversions of <twheel/compat/
 * timer_list.h> compute what the kernel's do at that HZ. One value per
 * program: every thread binds with it, and files built with different
 * values do not link (below).
 */
#ifndef TWHEEL_COMPAT_HZ
#define TWHEEL_COMPAT_HZ 1000
#endif
#if TWHEEL_COMPAT_HZ <= 0 || TWHEEL_COMPAT_HZ > 1000000 || 3000000 % TWHEEL_COMPAT_HZ != 0
#error "TWHEEL_COMPAT_HZ must divide 3000000 and be at most 1000000"
#endif

/*
 * The length of one tick in nanoseconds, for the bind calls: 1/HZ s,
 * rounded up where that is not whole nanoseconds (HZ a multiple of 3:
 * 3,333,334 ns at HZ 300, so jiffies and ticks run 0.2 ppm slow, late
 * by 17 ms a day, never early). Unsigned long long, as the bind calls'
 * uint64_t, so that a count of ticks times it (n * TWHEEL_COMPAT_TICK_NS,
 * a host clock's nanoseconds) does not wrap at 2^32 ns, 4.3 s.
 */
#define TWHEEL_COMPAT_TICK_NS ((1000000000ull + TWHEEL_COMPAT_HZ - 1) / TWHEEL_COMPAT_HZ)

/*
 * One TWHEEL_COMPAT_HZ per program: a file built with one value and a
 * file built with another would count jiffies and ticks in different
 * units on one binding (msecs_to_jiffies(1000) of one would not be a
 * second for the other), so they do not link. HZ is 2^a * 3^c * 5^b (a,
 * b at most 6, c at most 1), and each file that includes this header (the
 * library's own files excepted: TWHEEL__COMPAT_NO_HZ_CHECK) defines seven
 * weak hidden symbols, one a bit of a or b, or c, thread-local where the
 * bit is set and not
 * elsewhere, and reads them: the linker (GNU ld, gold, lld; GCC's -flto
 * and clang's -flto=thin too, not clang's full -flto, as for
 * TWHEEL_COMPAT_TIMER_DATA in <twheel/compat/timer_list.h>) refuses a
 * symbol that is both, naming it:
 * twheel__TWHEEL_COMPAT_HZ_differs_between_files_a0 ... _b2, _c0. An executable
 * or a shared library is checked alone: two shared libraries built with
 * different values link, and must not bind one thread.
 */
#ifndef TWHEEL__COMPAT_NO_HZ_CHECK
#if TWHEEL_COMPAT_HZ % 64 == 0
#define TWHEEL__HZ_A 6
#elif TWHEEL_COMPAT_HZ % 32 == 0
#define TWHEEL__HZ_A 5
#elif TWHEEL_COMPAT_HZ % 16 == 0
#define TWHEEL__HZ_A 4
#elif TWHEEL_COMPAT_HZ % 8 == 0
#define TWHEEL__HZ_A 3
#elif TWHEEL_COMPAT_HZ % 4 == 0
#define TWHEEL__HZ_A 2
#elif TWHEEL_COMPAT_HZ % 2 == 0
#define TWHEEL__HZ_A 1
#else
#define TWHEEL__HZ_A 0
#endif
#if TWHEEL_COMPAT_HZ % 15625 == 0
#define TWHEEL__HZ_B 6
#elif TWHEEL_COMPAT_HZ % 3125 == 0
#define TWHEEL__HZ_B 5
#elif TWHEEL_COMPAT_HZ % 625 == 0
#define TWHEEL__HZ_B 4
#elif TWHEEL_COMPAT_HZ % 125 == 0
#define TWHEEL__HZ_B 3
#elif TWHEEL_COMPAT_HZ % 25 == 0
#define TWHEEL__HZ_B 2
#elif TWHEEL_COMPAT_HZ % 5 == 0
#define TWHEEL__HZ_B 1
#else
#define TWHEEL__HZ_B 0
#endif
#if TWHEEL_COMPAT_HZ % 3 == 0
#define TWHEEL__HZ_C0 __thread
#else
#define TWHEEL__HZ_C0
#endif
#if TWHEEL__HZ_A & 1
#define TWHEEL__HZ_A0 __thread
#else
#define TWHEEL__HZ_A0
#endif
#if TWHEEL__HZ_A & 2
#define TWHEEL__HZ_A1 __thread
#else
#define TWHEEL__HZ_A1
#endif
#if TWHEEL__HZ_A & 4
#define TWHEEL__HZ_A2 __thread
#else
#define TWHEEL__HZ_A2
#endif
#if TWHEEL__HZ_B & 1
#define TWHEEL__HZ_B0 __thread
#else
#define TWHEEL__HZ_B0
#endif
#if TWHEEL__HZ_B & 2
#define TWHEEL__HZ_B1 __thread
#else
#define TWHEEL__HZ_B1
#endif
#if TWHEEL__HZ_B & 4
#define TWHEEL__HZ_B2 __thread
#else
#define TWHEEL__HZ_B2
#endif
#define TWHEEL__HZ_BIT(kind, name) \
	extern kind char name;     \
	__attribute__((weak, visibility("hidden"))) kind char name;
TWHEEL__HZ_BIT(TWHEEL__HZ_A0, twheel__TWHEEL_COMPAT_HZ_differs_between_files_a0)
TWHEEL__HZ_BIT(TWHEEL__HZ_A1, twheel__TWHEEL_COMPAT_HZ_differs_between_files_a1)
TWHEEL__HZ_BIT(TWHEEL__HZ_A2, twheel__TWHEEL_COMPAT_HZ_differs_between_files_a2)
TWHEEL__HZ_BIT(TWHEEL__HZ_B0, twheel__TWHEEL_COMPAT_HZ_differs_between_files_b0)
TWHEEL__HZ_BIT(TWHEEL__HZ_B1, twheel__TWHEEL_COMPAT_HZ_differs_between_files_b1)
TWHEEL__HZ_BIT(TWHEEL__HZ_B2, twheel__TWHEEL_COMPAT_HZ_differs_between_files_b2)
TWHEEL__HZ_BIT(TWHEEL__HZ_C0, twheel__TWHEEL_COMPAT_HZ_differs_between_files_c0)
__attribute__((used)) static char twheel__compat_hz_kind(void)
{
	return (char)(twheel__TWHEEL_COMPAT_HZ_differs_between_files_a0 +
		      twheel__TWHEEL_COMPAT_HZ_differs_between_files_a1 +
		      twheel__TWHEEL_COMPAT_HZ_differs_between_files_a2 +
		      twheel__TWHEEL_COMPAT_HZ_differs_between_files_b0 +
		      twheel__TWHEEL_COMPAT_HZ_differs_between_files_b1 +
		      twheel__TWHEEL_COMPAT_HZ_differs_between_files_b2 +
		      twheel__TWHEEL_COMPAT_HZ_differs_between_files_c0);
}
#endif

/*
 * The node a legacy timer embeds (struct timer_list, struct callout).
 * Private fields: tw is the wheel's timer, _wheel the wheel it is pending
 * on (NULL when not pending; atomic).
 */
struct twheel_compat_timer {
	struct tw_timer tw;
	struct twheel *_wheel;
};

/* twheel_compat_mod() flags. */
enum {
	/* Arm on the binding's deferrable wheel, if it has one (the loop's). */
	TWHEEL_COMPAT_DEFERRABLE = 1u << 0,
};

/*
 * Bind the calling thread to the plain wheel @w: compat timers are armed on
 * it, and twheel_compat_now() is twheel_now(@w) minus its value here
 * (inside a callback, twheel_target(@w): the time the advance reaches). The
 * thread drives @w with twheel_advance() as usual (one tick = one jiffy or
 * callout tick); callbacks run inside it. Returns 0, or
 *   -EINVAL  @w NULL;
 *   -EBUSY   the thread is bound already (twheel_compat_unbind() first).
 * O(1); the thread that owns @w.
 */
TWHEEL_API int twheel_compat_bind_wheel(struct twheel *w);

/*
 * Bind the calling thread to the host @h (<twheel/host.h>; an adapter's
 * host, from twheel_uv_create() for instance), whose tick must be @tick_ns
 * (pass TWHEEL_COMPAT_TICK_NS: HZ must match the host's tick). Timers are
 * armed with twheel_host_mod_at(); twheel_compat_now() reads the host's
 * clock. Returns 0, or
 *   -EINVAL  @h NULL or shut down, or its tick is not @tick_ns;
 *   -EBUSY   the thread is bound already.
 * O(1) plus a clock reading; the thread that runs @h's loop.
 */
TWHEEL_API int twheel_compat_bind_host(struct twheel_host *h, uint64_t tick_ns);

/*
 * For a layer that builds hosts of its own (twheel_loop_compat_bind()):
 * bind @h, and @deferrable (NULL: @h) for TWHEEL_COMPAT_DEFERRABLE timers;
 * both must have the same tick and clock. twheel_compat_unbind() calls
 * @unbind(@arg) (if not NULL) after forgetting the hosts; an error it
 * returns is returned and the binding kept. Returns as
 * twheel_compat_bind_host(), with -EINVAL also for hosts that differ.
 */
TWHEEL_API int twheel_compat_bind_hosts(struct twheel_host *h, struct twheel_host *deferrable,
					int (*unbind)(void *arg), void *arg);

/*
 * Forget the calling thread's binding. Timers still pending stay on their
 * wheel (a plain wheel, a host you own) and fire when it is advanced; a
 * layer's unbind (the loop's) hands them back, not fired and not pending.
 * Such a timer is no longer the thread's: until it fires, a call on it
 * returns -EXDEV (after a bind to another wheel or host too), and its
 * callback runs on a thread that has no binding (jiffies and ticks read
 * their start values, a re-arm returns -ENXIO). A thread that binds that
 * wheel or host again takes such timers over, as its own, with jiffies
 * and ticks counted from the new bind. So delete the timers first if the
 * wheel or host is to go: one left pending on a destroyed wheel
 * (twheel_destroy(), twheel_drain(), twheel_host_fini(), an adapter's
 * destroy) stays pending until timer_setup() or callout_init()
 * initialises it again. A wheel or host destroyed on the thread while
 * still bound to it (twheel_destroy(), twheel_host_fini(), an adapter's
 * or the loop's destroy) leaves the binding in place, but no longer
 * reaching it: twheel_compat_now() stays at its value then, an arm
 * returns -EINVAL, a timer left pending there is no longer the thread's
 * (-EXDEV), until the thread unbinds (then binds again as usual).
 * Returns 0, -ENXIO (nothing bound) or the layer's error (the loop's:
 * -EBUSY from one of the bound timers' callbacks). O(1), plus the layer's.
 */
TWHEEL_API int twheel_compat_unbind(void);

/*
 * Ticks since the calling thread bound its wheel (0 if unbound): the wheel's
 * time (inside a callback: the running advance's target, twheel_target(),
 * the time it reaches), or the host's clock read now, in whole ticks. It never goes back: if a host's clock steps back,
 * it stays at its latest value until the clock is past it again (timers
 * armed meanwhile fire late, never early). O(1); a host reads its clock.
 */
TWHEEL_API uint64_t twheel_compat_now(void);

/*
 * Arm @ct at @when (a twheel_compat_now() value; at or before now: due in
 * the next advance or host run) whether or not it is pending. Returns 1 if
 * it was pending, 0 if not, or
 *   -EINVAL  @ct NULL, or its tw has no callback (a -Ddebug_checks build
 *            reports one never initialised, all zero, as the wheel's
 *            arms do), or the thread's bound wheel or host was
 *            destroyed (see twheel_compat_unbind()), or the host is
 *            lost (twheel_host_lost(): an adapter whose loop was
 *            destroyed first, or whose loop timer was closed under it;
 *            not the host's -ESHUTDOWN);
 *   -ENXIO   the calling thread bound no wheel;
 *   -EXDEV   @ct is pending on another thread's wheel (nothing changed).
 * The first -ENXIO, or -EINVAL for a destroyed or lost one, of each thread is
 * also said on stderr (one line), as legacy code often ignores the return
 * (add_timer() has none), and the timer would otherwise be lost silently.
 * O(1); the binding's thread, callbacks included.
 */
TWHEEL_API int twheel_compat_mod(struct twheel_compat_timer *ct, uint64_t when, unsigned flags);

/*
 * Disarm @ct. Returns 1 if it was pending, 0 if not (on any thread, bound
 * or not), or -EINVAL (@ct NULL), -EXDEV (pending on another thread's
 * wheel; nothing changed). O(1); the binding's thread, callbacks included.
 */
TWHEEL_API int twheel_compat_del(struct twheel_compat_timer *ct);

/*
 * Where @ct is pending, for the legacy headers' shortcuts that change
 * nothing (kernel mod_timer() to the same expiry): 1 on the calling
 * thread's binding, 0 not pending, or -EINVAL (@ct NULL), -EXDEV
 * (pending on a wheel the calling thread has not bound: another thread's,
 * or one it bound before and not again). O(1); any thread. (TWHEEL_1.3)
 */
TWHEEL_API int twheel_compat_owned(const struct twheel_compat_timer *ct);

/*
 * Called by a legacy header's callback trampoline before the legacy
 * function runs: @ct is not pending from here on, and is the timer
 * "running" (twheel_compat_running()) until twheel_compat_leave(@prev)
 * with the value this returned (@ct NULL: no timer is running until
 * then). O(1); the binding's thread.
 */
TWHEEL_API const struct twheel_compat_timer *twheel_compat_enter(struct twheel_compat_timer *ct);

/* Undo twheel_compat_enter(): @prev is what it returned. O(1). */
TWHEEL_API void twheel_compat_leave(const struct twheel_compat_timer *prev);

/*
 * True if @ct's callback is running on the calling thread now (the legacy
 * "being serviced", "the handler is running"). O(1).
 */
TWHEEL_API bool twheel_compat_running(const struct twheel_compat_timer *ct);

/*
 * True if @ct is armed on a wheel and has not fired or been deleted; false
 * if @ct is NULL. O(1); any thread (from another thread the answer may be
 * stale, see above).
 */
static inline bool twheel_compat_pending(const struct twheel_compat_timer *ct)
{
	return ct && __atomic_load_n(&ct->_wheel, __ATOMIC_RELAXED); /* a pointer's truth: no NULL in C++ */
}

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_COMPAT_H */
