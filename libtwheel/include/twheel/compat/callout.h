/* SPDX-License-Identifier: MIT */
/*
 * twheel/compat/callout.h - FreeBSD's callout(9) (<sys/callout.h>, with
 * ticks, hz and the sbintime_t forms) on a libtwheel wheel, so that code
 * from BSD-derived network stacks moves in with its include line changed
 * and one line of set-up per thread (see <twheel/compat.h>):
 *
 *   twheel_compat_bind_wheel(w);                            a plain wheel
 *   twheel_compat_bind_host(h, TWHEEL_COMPAT_TICK_NS);      a host (libuv...)
 *   twheel_loop_compat_bind(loop, TWHEEL_COMPAT_TICK_NS);   the io_uring loop
 *
 * Static inline functions and macros over the public C API; the BSD names
 * are not prefixed, as the point is to keep them.
 *
 * Semantics and return values are callout(9)'s, with these differences,
 * all of them from "one thread per wheel":
 *   - A callout runs on the thread that armed it, inside that thread's
 *     twheel_advance(), host run or loop iteration: never concurrently
 *     with that thread's other code, so the races the manual's "Avoiding
 *     Race Conditions" works around cannot happen, and its handler pattern
 *     (callout_pending(), callout_active(), callout_deactivate()) works
 *     as written. "Being serviced" means: called from inside the callout's
 *     own function.
 *   - callout_drain() has nothing to wait for and returns as
 *     callout_stop(); from the callout's own function (where FreeBSD
 *     would deadlock) it returns 0 at once, as callout_stop() does there.
 *   - callout_init_mtx(), _rw() and _rm() need to be told how to take
 *     and release the program's locks: see "Callouts with a lock" below.
 *   - callout_async_drain() returns as callout_stop(): it can only find
 *     the callout running (0, and the drain function called once the
 *     function has returned) from the callout's own function.
 *   - Left out: the CPU argument's meaning (the _on and _curcpu forms are
 *     accepted, the callout stays on this thread).
 *   - A call on a callout pending on another thread's wheel changes
 *     nothing and returns -EXDEV; arming on a thread that bound no wheel
 *     returns -ENXIO (the first such arm of a thread is said on stderr). These and -EINVAL (misuse: see callout_reset())
 *     are the only negative values besides -1.
 *   - ticks and hz are macros: ticks reads the bound wheel's time (a host
 *     or loop reads its clock), hz is TWHEEL_COMPAT_HZ. A local variable
 *     named ticks or hz does not compile (in FreeBSD it would shadow the
 *     global). ticks starts where FreeBSD starts it, INT_MAX - hz * 600,
 *     so it turns negative ten minutes after the thread binds and sign
 *     bugs show then. FreeBSD code adds and subtracts ints holding ticks
 *     (ticks - tp->t_rcvtime) and counts on them wrapping, as FreeBSD
 *     builds its kernel with -fwrapv: build moved code with it too, or
 *     that arithmetic is undefined from ten minutes after the bind on.
 *   - sbinuptime() is the bound wheel's time since the thread bound, in
 *     whole ticks; an sbintime_t is mapped onto ticks, never early (the
 *     function runs with sbinuptime() at or past the time asked for): see
 *     callout_reset_sbt(). The precision argument and C_PREL() are
 *     accepted and ignored (a callout fires within its tick), as are
 *     C_DIRECT_EXEC and C_CATCH.
 *   - Expiry is exact: a callout armed for n ticks fires when ticks has
 *     advanced by n, never earlier and not later for being far away.
 *     Inside a function, ticks is the time the running advance reaches,
 *     as FreeBSD's while softclock catches up after a stall, so a
 *     function that re-arms for 1 tick fires at the first tick after it
 *     (see <twheel/compat.h>).
 *
 * Callouts with a lock (callout_init_mtx(), callout_init_rw(),
 * callout_init_rm()): the layer takes the lock before the function and
 * releases it after, unless CALLOUT_RETURNUNLOCKED, as FreeBSD's callout
 * subsystem does. It cannot know the program's lock types, so the program
 * says how to take and release each kind it uses by defining macros
 * before the first include of this header in each file, typically in the
 * header that defines its struct mtx (FreeBSD's <sys/mutex.h> for moved
 * code):
 *
 *   #define TWHEEL_CALLOUT_MTX_LOCK(m)        mtx_lock(m)   struct mtx *m
 *   #define TWHEEL_CALLOUT_MTX_UNLOCK(m)      mtx_unlock(m)
 *
 *   #define TWHEEL_CALLOUT_RW_WLOCK(rw)       rw_wlock(rw)  struct rwlock *rw
 *   #define TWHEEL_CALLOUT_RW_WUNLOCK(rw)     rw_wunlock(rw)
 *   #define TWHEEL_CALLOUT_RW_RLOCK(rw)       rw_rlock(rw)  CALLOUT_SHAREDLOCK
 *   #define TWHEEL_CALLOUT_RW_RUNLOCK(rw)     rw_runlock(rw)
 *
 *   #define TWHEEL_CALLOUT_RM_WLOCK(rm)       rm_wlock(rm)  struct rmlock *rm
 *   #define TWHEEL_CALLOUT_RM_WUNLOCK(rm)     rm_wunlock(rm)
 *   #define TWHEEL_CALLOUT_RM_RLOCK(rm, tr)   rm_rlock(rm, tr)
 *   #define TWHEEL_CALLOUT_RM_RUNLOCK(rm, tr) rm_runlock(rm, tr)
 *                                 tr: struct rm_priotracker *, on the stack
 *
 * (the right-hand sides are whatever takes and releases the lock in the
 * program). Each initialiser exists only when its kind's macros are
 * defined, so a program that defines none still fails to compile at its
 * callout_init_mtx() calls; a kind defined in part is an #error. The
 * macros are read where this header is included: a callout initialised
 * in one file may be armed, stopped and drained from any other.
 * Semantics, with one thread per wheel:
 *   - The function runs with the lock held (read-held for
 *     CALLOUT_SHAREDLOCK, which callout_init_mtx() ignores, as FreeBSD
 *     does) and must return with it held, or released if
 *     CALLOUT_RETURNUNLOCKED. The layer takes it before the callout is
 *     "being serviced": while another thread holds it, the wheel's thread
 *     waits and the callout stays pending, so that thread cannot stop or
 *     re-arm it (-EXDEV, as any call from another thread).
 *   - FreeBSD requires the lock held to stop or re-arm the callout; the
 *     layer does not check it. A callout stopped or re-armed by its own
 *     thread before its function runs, with the lock or without, does not
 *     run for the old arm (another function run by the same advance may
 *     stop it).
 *   - The thread that advances the wheel (or runs the host or loop) must
 *     not hold a callout's lock while it does, as FreeBSD's softclock
 *     never does: a non-recursive lock would deadlock.
 *   - A NULL lock (FreeBSD panics when the callout first runs, an
 *     INVARIANTS kernel at once with CALLOUT_RETURNUNLOCKED) or a flag
 *     other than CALLOUT_RETURNUNLOCKED and CALLOUT_SHAREDLOCK (an
 *     INVARIANTS kernel panics) leaves the callout unusable: every reset
 *     and schedule form returns -EINVAL and it never runs; stop and drain
 *     return -1.
 *
 * Size: struct callout is 88 bytes on LP64 in a release build.
 */
#ifndef TWHEEL_COMPAT_CALLOUT_H
#define TWHEEL_COMPAT_CALLOUT_H

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <twheel/compat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ticks a second (<twheel/compat.h>: define TWHEEL_COMPAT_HZ to change). */
#define hz TWHEEL_COMPAT_HZ

/* ticks since the thread bound its wheel, from INT_MAX - hz * 600. */
static inline int twheel_callout_ticks(void)
{
	return (int)((unsigned int)(INT_MAX - hz * 600) + (unsigned int)twheel_compat_now());
}

/* hz, ticks and tick_sbt are object-like macros, not FreeBSD's variables:
 * include this header after other libraries' headers that use those words
 * as names (Boost has functions named ticks(): <twheel/asio.hpp>, which
 * includes Boost.Asio, goes before this header). */
#define ticks (twheel_callout_ticks())

/* Seconds in 32.32 fixed point, as FreeBSD's <sys/time.h>. */
typedef int64_t sbintime_t;
#define SBT_1S ((sbintime_t)1 << 32)
#define SBT_1MS (SBT_1S / 1000)
#define SBT_1US (SBT_1S / 1000000)
#define SBT_1NS (SBT_1S / 1000000000)
#define tick_sbt (SBT_1S / hz)

/* @n ticks of 1/hz s as an sbintime_t (rounded down to its 2^-32 s). */
static inline sbintime_t twheel__ticks_sbt(uint64_t n)
{
	return (sbintime_t)(n / hz) * SBT_1S + (sbintime_t)(((n % hz) << 32) / hz);
}

/*
 * The bound wheel's time since the thread bound, in whole ticks: hz ticks
 * are SBT_1S (tick_sbt, rounded down, is a little less than a tick).
 */
static inline sbintime_t sbinuptime(void)
{
	return twheel__ticks_sbt(twheel_compat_now());
}

/* FreeBSD's getsbinuptime(), sbinuptime() as of the last hardclock, which
 * drivers use for deadlines (nvme: getsbinuptime() + timeout * SBT_1S):
 * sbinuptime() here, which counts whole ticks already. O(1). */
static inline sbintime_t getsbinuptime(void)
{
	return sbinuptime();
}

/* The largest sbintime_t, which drivers use for "no deadline", as
 * FreeBSD's <sys/time.h>. */
#define SBT_MAX 0x7fffffffffffffffLL

/* A minute, as FreeBSD's <sys/time.h>. */
#define SBT_1M (SBT_1S * 60)

/*
 * @x units of 1/@per s as an sbintime_t (@per: 10^3, 10^6 or 10^9),
 * rounded up to the next 2^-32 s, so that the conversion back gives @x
 * and a callout armed for it is never early. Whole seconds are taken
 * apart first, so no product wraps; a result past SBT_MAX (68 years) is
 * SBT_MAX. A negative @x, which FreeBSD's assertions refuse, gives the
 * negative of the conversion of its magnitude: rounded away from zero, so
 * the conversion back (rounded down) gives @x - 1 unless @x is a whole
 * number of seconds.
 */
static inline sbintime_t twheel__to_sbt(int64_t x, uint64_t per)
{
	uint64_t m = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
	uint64_t c = ((1ull << 63) + per - 1) / per; /* ceil(2^63 / per) */
	sbintime_t sb = SBT_MAX;

	if (m / per < (1ull << 31))
		sb = (sbintime_t)((m / per) << 32) + (sbintime_t)(((m % per) * c + 0x7fffffffu) >> 31);
	return x < 0 ? -sb : sb;
}

/* @sbt in units of 1/@per s, rounded down (toward minus infinity), for
 * every sbintime_t: whole seconds are converted apart, so nothing wraps. */
static inline int64_t twheel__from_sbt(sbintime_t sbt, int64_t per)
{
	return (sbt >> 32) * per + (int64_t)(((uint64_t)sbt & 0xffffffffu) * (uint64_t)per >> 32);
}

/*
 * FreeBSD's decimal conversions of <sys/time.h>: sbttons(), sbttous() and
 * sbttoms() round down, nstosbt(), ustosbt() and mstosbt() round up, so
 * that sbttoms(mstosbt(ms)) == ms for every ms >= 0 (and so for ns and
 * us), as FreeBSD's do; a negative ms, which FreeBSD refuses, comes back
 * one less unless a whole number of seconds (sbttoms(mstosbt(-1)) is -2).
 * FreeBSD's forms wrap where these do not: its sbttous() past 35
 * minutes (2^63 / 10^6 sbintime_t units), its sbttoms() past 24 days,
 * and, where its Xtosbt() compare the value with SBT_1S before taking
 * whole seconds apart, its nstosbt() from 2 s to 2^32 ns (4.3 s),
 * ustosbt() from 2 s to 2^32 us (71 minutes) and mstosbt() from 2 s to
 * 2^32 ms (49 days): mstosbt(2000) is 1 there. Here each is exact to its
 * rounding over the whole range, and an Xtosbt() result past SBT_MAX is
 * SBT_MAX. O(1).
 */
static inline int64_t sbttons(sbintime_t sbt)
{
	return twheel__from_sbt(sbt, 1000000000);
}

static inline sbintime_t nstosbt(int64_t ns)
{
	return twheel__to_sbt(ns, 1000000000);
}

static inline int64_t sbttous(sbintime_t sbt)
{
	return twheel__from_sbt(sbt, 1000000);
}

static inline sbintime_t ustosbt(int64_t us)
{
	return twheel__to_sbt(us, 1000000);
}

static inline int64_t sbttoms(sbintime_t sbt)
{
	return twheel__from_sbt(sbt, 1000);
}

static inline sbintime_t mstosbt(int64_t ms)
{
	return twheel__to_sbt(ms, 1000);
}

/* callout_reset_sbt() flags, with FreeBSD's values. */
#define C_DIRECT_EXEC 0x0001
#define C_PRELBITS 7
#define C_PRELRANGE ((1 << C_PRELBITS) - 1)
#define C_PREL(x) (((x) + 1) << 1)
#define C_PRELGET(x) (int)((((x) >> 1) & C_PRELRANGE) - 1)
#define C_HARDCLOCK 0x0100
#define C_ABSOLUTE 0x0200
#define C_PRECALC 0x0400
#define C_CATCH 0x0800

/* c_flags bits (FreeBSD's values). */
#define CALLOUT_ACTIVE 0x0002
#define CALLOUT_MPSAFE 0x0008

/* callout_init_mtx(), _rw(), _rm() flags (FreeBSD's values). */
#define CALLOUT_RETURNUNLOCKED 0x0010 /* the function releases the lock */
#define CALLOUT_SHAREDLOCK 0x0020     /* read-lock it (rw, rm) */
#define TWHEEL__CALLOUT_BAD 0x4000    /* private: a NULL lock or a bad flag */

typedef void callout_func_t(void *);

/*
 * A callout. Public fields as in FreeBSD: c_func, c_arg (set by the
 * callout_reset() forms), c_flags (CALLOUT_ACTIVE, CALLOUT_MPSAFE). The
 * others are private: _ct, _lock (the callout_init_mtx() forms' lock),
 * _lflags (their flags; set at initialisation only, so the wheel's thread
 * reads them without the lock) and _drain (the address of the slot where
 * callout_async_drain() leaves its drain function, on the stack of the
 * thread that runs the function, valid while it runs; bit 0: a drain
 * function is there). Initialise it with callout_init() or a
 * callout_init_mtx() form before any other call.
 */
struct callout {
	struct twheel_compat_timer _ct;
	callout_func_t *c_func;
	void *c_arg;
	void *_lock;
	uintptr_t _drain;
	int c_flags;
	int _lflags;
};

/*
 * Call @c's function with its argument, which *@arg keeps: not pending
 * from here on; "active" unchanged. The function may free @c: nothing
 * reads or writes it after the call. Returns the drain function that
 * callout_async_drain() gave from the function (NULL: none), which the
 * caller calls with *@arg once the lock, if any, is released.
 */
static inline callout_func_t *twheel__callout_call(struct callout *c, void **arg)
{
	callout_func_t *func = c->c_func;
	callout_func_t *drain = TWHEEL__NULL;
	const struct twheel_compat_timer *prev = twheel_compat_enter(&c->_ct);

	*arg = c->c_arg;
	__atomic_store_n(&c->_drain, (uintptr_t)&drain, __ATOMIC_RELAXED);
	func(*arg);
	twheel_compat_leave(prev);
	return drain;
}

/* The wheel's callback of a callout_init() callout. */
static inline void twheel__callout_fire(struct tw_timer *tw)
{
	void *arg;
	callout_func_t *drain = twheel__callout_call(tw_container_of(tw, struct callout, _ct.tw), &arg);

	if (drain)
		drain(arg);
}

/*
 * Initialise @c with the wheel's callback @fire, not pending, not active,
 * no function, no lock; 1. As in FreeBSD, @c must not be pending (its
 * memory may be anything else); a -Ddebug_checks build reports a pending
 * one (tw_timer_init()) and, if the misuse handler returns, leaves it as
 * it is and returns 0.
 */
static inline int twheel__callout_init(struct callout *c, void (*fire)(struct tw_timer *))
{
	tw_timer_init(&c->_ct.tw, fire);
#if TWHEEL_DEBUG_CHECKS
	if (tw_timer_pending(&c->_ct.tw))
		return 0; /* reported, and left alone */
#endif
	c->_ct._wheel = TWHEEL__NULL;
	c->c_func = TWHEEL__NULL;
	c->c_arg = TWHEEL__NULL;
	c->_lock = TWHEEL__NULL;
	c->_drain = 0;
	c->c_flags = 0;
	c->_lflags = 0;
	return 1;
}

/*
 * Initialise @c, not pending and not active. @mpsafe is kept in c_flags
 * (CALLOUT_MPSAFE) and changes nothing: there is no Giant lock. As in
 * FreeBSD, @c must not be pending (its memory may be anything else; a
 * -Ddebug_checks build reports a pending one). O(1).
 */
static inline void callout_init(struct callout *c, int mpsafe)
{
	if (twheel__callout_init(c, twheel__callout_fire))
		c->c_flags = mpsafe ? CALLOUT_MPSAFE : 0;
}

/*
 * The callout_init_mtx() forms: initialise @c with @lock, which @fire (the
 * kind's callback) takes around the function. A NULL @lock or an unknown
 * flag marks @c unusable (TWHEEL__CALLOUT_BAD in _lflags): arming it
 * returns -EINVAL.
 */
static inline void twheel__callout_init_lock(struct callout *c, void *lock, int flags,
					     void (*fire)(struct tw_timer *))
{
	if (!twheel__callout_init(c, fire))
		return;
	c->_lock = lock;
	c->_lflags = flags;
	if (!lock || (flags & ~(CALLOUT_RETURNUNLOCKED | CALLOUT_SHAREDLOCK)))
		c->_lflags = TWHEEL__CALLOUT_BAD;
}

#if defined(TWHEEL_CALLOUT_MTX_LOCK) != defined(TWHEEL_CALLOUT_MTX_UNLOCK)
#error "callout_init_mtx(): define both TWHEEL_CALLOUT_MTX_LOCK and _UNLOCK"
#endif
#ifdef TWHEEL_CALLOUT_MTX_LOCK
struct mtx;

/* The callback of a callout_init_mtx() callout. */
static inline void twheel__callout_fire_mtx(struct tw_timer *tw)
{
	struct callout *c = tw_container_of(tw, struct callout, _ct.tw);
	struct mtx *m = (struct mtx *)c->_lock;
	int unlock = !(c->_lflags & CALLOUT_RETURNUNLOCKED);
	callout_func_t *drain;
	void *arg;

	TWHEEL_CALLOUT_MTX_LOCK(m);
	drain = twheel__callout_call(c, &arg);
	if (unlock)
		TWHEEL_CALLOUT_MTX_UNLOCK(m);
	if (drain)
		drain(arg);
}

/*
 * callout_init() for a callout whose function runs with @mtx held (see
 * "Callouts with a lock" above): TWHEEL_CALLOUT_MTX_LOCK(@mtx) before it,
 * TWHEEL_CALLOUT_MTX_UNLOCK(@mtx) after unless @flags has
 * CALLOUT_RETURNUNLOCKED (CALLOUT_SHAREDLOCK is ignored). @mtx NULL or
 * another flag: @c cannot be armed (-EINVAL). O(1).
 */
static inline void callout_init_mtx(struct callout *c, struct mtx *mtx, int flags)
{
	twheel__callout_init_lock(c, mtx, flags, twheel__callout_fire_mtx);
}
#endif

#if defined(TWHEEL_CALLOUT_RW_WLOCK) || defined(TWHEEL_CALLOUT_RW_WUNLOCK) || \
	defined(TWHEEL_CALLOUT_RW_RLOCK) || defined(TWHEEL_CALLOUT_RW_RUNLOCK)
#if !defined(TWHEEL_CALLOUT_RW_WLOCK) || !defined(TWHEEL_CALLOUT_RW_WUNLOCK) || \
	!defined(TWHEEL_CALLOUT_RW_RLOCK) || !defined(TWHEEL_CALLOUT_RW_RUNLOCK)
#error "callout_init_rw(): define TWHEEL_CALLOUT_RW_WLOCK, _WUNLOCK, _RLOCK and _RUNLOCK"
#endif
struct rwlock;

/* The callback of a callout_init_rw() callout. */
static inline void twheel__callout_fire_rw(struct tw_timer *tw)
{
	struct callout *c = tw_container_of(tw, struct callout, _ct.tw);
	struct rwlock *rw = (struct rwlock *)c->_lock;
	int flags = c->_lflags;
	callout_func_t *drain;
	void *arg;

	if (flags & CALLOUT_SHAREDLOCK)
		TWHEEL_CALLOUT_RW_RLOCK(rw);
	else
		TWHEEL_CALLOUT_RW_WLOCK(rw);
	drain = twheel__callout_call(c, &arg);
	if (!(flags & CALLOUT_RETURNUNLOCKED)) {
		if (flags & CALLOUT_SHAREDLOCK)
			TWHEEL_CALLOUT_RW_RUNLOCK(rw);
		else
			TWHEEL_CALLOUT_RW_WUNLOCK(rw);
	}
	if (drain)
		drain(arg);
}

/* callout_init_mtx() with the reader/writer lock @rw: write-locked around
 * the function, read-locked with CALLOUT_SHAREDLOCK. O(1). */
static inline void callout_init_rw(struct callout *c, struct rwlock *rw, int flags)
{
	twheel__callout_init_lock(c, rw, flags, twheel__callout_fire_rw);
}
#endif

#if defined(TWHEEL_CALLOUT_RM_WLOCK) || defined(TWHEEL_CALLOUT_RM_WUNLOCK) || \
	defined(TWHEEL_CALLOUT_RM_RLOCK) || defined(TWHEEL_CALLOUT_RM_RUNLOCK)
#if !defined(TWHEEL_CALLOUT_RM_WLOCK) || !defined(TWHEEL_CALLOUT_RM_WUNLOCK) || \
	!defined(TWHEEL_CALLOUT_RM_RLOCK) || !defined(TWHEEL_CALLOUT_RM_RUNLOCK)
#error "callout_init_rm(): define TWHEEL_CALLOUT_RM_WLOCK, _WUNLOCK, _RLOCK and _RUNLOCK"
#endif
struct rmlock;

/* The callback of a callout_init_rm() callout: a read lock's tracker
 * (struct rm_priotracker, the program's) lives on its stack, as in
 * FreeBSD. */
static inline void twheel__callout_fire_rm(struct tw_timer *tw)
{
	struct callout *c = tw_container_of(tw, struct callout, _ct.tw);
	struct rmlock *rm = (struct rmlock *)c->_lock;
	struct rm_priotracker tracker;
	int flags = c->_lflags;
	callout_func_t *drain;
	void *arg;

	if (flags & CALLOUT_SHAREDLOCK)
		TWHEEL_CALLOUT_RM_RLOCK(rm, &tracker);
	else
		TWHEEL_CALLOUT_RM_WLOCK(rm);
	drain = twheel__callout_call(c, &arg);
	if (!(flags & CALLOUT_RETURNUNLOCKED)) {
		if (flags & CALLOUT_SHAREDLOCK)
			TWHEEL_CALLOUT_RM_RUNLOCK(rm, &tracker);
		else
			TWHEEL_CALLOUT_RM_WUNLOCK(rm);
	}
	if (drain)
		drain(arg);
}

/* callout_init_mtx() with the read-mostly lock @rm: write-locked around
 * the function, read-locked with CALLOUT_SHAREDLOCK. O(1). */
static inline void callout_init_rm(struct callout *c, struct rmlock *rm, int flags)
{
	twheel__callout_init_lock(c, rm, flags, twheel__callout_fire_rm);
}
#endif

/* 1 if @c is pending (set and its time not come), else 0. O(1). */
static inline int callout_pending(const struct callout *c)
{
	return twheel_compat_pending(&c->_ct);
}

/* The active flag: set by the reset forms, cleared by stop, drain and
 * callout_deactivate(), not when the callout fires. */
#define callout_active(c) ((c)->c_flags & CALLOUT_ACTIVE)
#define callout_deactivate(c) ((c)->c_flags &= ~CALLOUT_ACTIVE)

/* True if @c's function is running on this thread and has called
 * callout_async_drain() with a drain function (bit 0 of _drain, which a
 * run that has returned may have left: it is running that tells). */
static inline int twheel__callout_draining(const struct callout *c)
{
	return (__atomic_load_n(&c->_drain, __ATOMIC_RELAXED) & 1) && twheel_compat_running(&c->_ct);
}

/* Arm @c at tick @when of twheel_compat_now() with @func(@arg); not once
 * its running function has asked for an asynchronous drain (0). */
static inline int twheel__callout_arm(struct callout *c, uint64_t when, callout_func_t *func,
				      void *arg)
{
	int rc;

	if (!c->_ct.tw.func) /* never initialised: refused, and reported in a debug build */
		return twheel_compat_mod(&c->_ct, when, 0);
	if (!func || (c->_lflags & TWHEEL__CALLOUT_BAD))
		return -EINVAL;
	if (twheel__callout_draining(c))
		return 0; /* "Don't reschedule", as FreeBSD */
	rc = twheel_compat_mod(&c->_ct, when, 0);
	if (rc < 0)
		return rc;
	c->c_func = func;
	c->c_arg = arg;
	c->c_flags |= CALLOUT_ACTIVE;
	return rc;
}

/*
 * Call @func(@arg) after @to_ticks ticks (non-positive: 1), counted from
 * the current tick; a pending invocation is cancelled first. Returns 1 if
 * one was pending, 0 if not; -EXDEV, -ENXIO (see above), -EINVAL (@func
 * NULL, or @c initialised with a NULL lock or an unknown flag, or never
 * initialised: all zero, which a -Ddebug_checks build also reports). O(1).
 */
static inline int callout_reset(struct callout *c, int to_ticks, callout_func_t *func, void *arg)
{
	return twheel__callout_arm(c, twheel_compat_now() + (uint64_t)(to_ticks > 0 ? to_ticks : 1),
				   func, arg);
}

/* callout_reset() with the previous func and arg: a reset form must have
 * set them ("callout_reset() ... must always be called to initialize func
 * and arg before one of the callout_schedule() functions"): -EINVAL if not. */
static inline int callout_schedule(struct callout *c, int to_ticks)
{
	return callout_reset(c, to_ticks, c->c_func, c->c_arg);
}

/*
 * The first tick at or after the sbinuptime() time @sbt (0 if not after 0):
 * the callout's function runs with sbinuptime() at or past @sbt, as
 * FreeBSD runs a callout at or after its time. A time a unit of 2^-32 s
 * past a tick, as the rounded-up conversions give for a whole number of
 * ticks (mstosbt(500) is SBT_1S / 2 + 1), is the next tick.
 */
static inline uint64_t twheel__sbt_tick(sbintime_t sbt)
{
	uint64_t s = (uint64_t)sbt;

	if (sbt <= 0)
		return 0;
	return (s >> 32) * hz + (((s & 0xffffffffu) * hz + 0xffffffffu) >> 32);
}

/*
 * The sbinuptime() time an arm with these arguments is for, as FreeBSD's
 * callout_when() computes it, with tick @now for its last hardclock():
 *   C_ABSOLUTE, C_PRECALC  @sbt itself;
 *   C_HARDCLOCK            relative, counted from the current tick, as
 *                          callout_reset() counts, and at least tick_sbt
 *                          (one tick, as callout_reset() makes a
 *                          non-positive number of ticks);
 *   otherwise              relative, counted from the next tick, so that
 *                          @sbt has passed when it fires, whenever in the
 *                          current tick the call came (up to two ticks
 *                          late).
 * A time past the largest sbintime_t is the largest.
 */
static inline sbintime_t twheel__sbt_at(sbintime_t sbt, int flags, uint64_t now)
{
	sbintime_t base;

	if (flags & (C_ABSOLUTE | C_PRECALC))
		return sbt;
	if ((flags & C_HARDCLOCK) && sbt < tick_sbt)
		sbt = tick_sbt;
	base = twheel__ticks_sbt(now + !(flags & C_HARDCLOCK));
	return sbt > INT64_MAX - base ? INT64_MAX : base + sbt;
}

/*
 * callout_reset() at @sbt: at the first tick at or after the time
 * twheel__sbt_at() above gives; a time not ahead ("If sbt specifies a time
 * in the past, the window is adjusted to start at the current time") fires
 * in the next advance. @pr is ignored. Returns as callout_reset().
 */
static inline int callout_reset_sbt(struct callout *c, sbintime_t sbt, sbintime_t pr,
				    callout_func_t *func, void *arg, int flags)
{
	uint64_t now = twheel_compat_now();
	uint64_t at = twheel__sbt_tick(twheel__sbt_at(sbt, flags, now));

	(void)pr;
	return twheel__callout_arm(c, at > now ? at : now, func, arg);
}

/* callout_reset_sbt() with the previous func and arg. */
static inline int callout_schedule_sbt(struct callout *c, sbintime_t sbt, sbintime_t pr, int flags)
{
	return callout_reset_sbt(c, sbt, pr, c->c_func, c->c_arg, flags);
}

/* FreeBSD's default tc_precexp (kern.timecounter.alloweddeviation 5%):
 * without C_PREL(), a relative time's window is at least 2^-4 of it. */
#define TWHEEL__CALLOUT_PRECEXP 4

/*
 * The absolute time and precision an arm with these arguments would use,
 * in *@sbt_res and *@precision_res, for callout_reset_sbt(..., C_PRECALC),
 * as FreeBSD computes them: with C_ABSOLUTE or C_PRECALC, @sbt and
 * @precision; otherwise the time of twheel__sbt_at() and the larger of
 * @precision and the relative time (at least tick_sbt with C_HARDCLOCK)
 * shifted right by C_PRELGET(@flags), or by 4 without C_PREL(). The
 * layer arms at the time and ignores the precision. Returns *@sbt_res
 * (FreeBSD's returns nothing). O(1).
 */
static inline sbintime_t callout_when(sbintime_t sbt, sbintime_t precision, int flags,
				      sbintime_t *sbt_res, sbintime_t *precision_res)
{
	int shift = C_PRELGET(flags) < 0 ? TWHEEL__CALLOUT_PRECEXP : C_PRELGET(flags);
	sbintime_t pr;

	*sbt_res = twheel__sbt_at(sbt, flags, twheel_compat_now());
	*precision_res = precision;
	if (flags & (C_ABSOLUTE | C_PRECALC))
		return *sbt_res;
	if ((flags & C_HARDCLOCK) && sbt < tick_sbt)
		sbt = tick_sbt;
	pr = shift < 63 ? sbt >> shift : 0; /* C_PREL() takes up to 126 */
	if (pr > precision)
		*precision_res = pr;
	return *sbt_res;
}

/* The per-CPU forms: @cpu is ignored (the callout stays on this thread). */
#define callout_reset_on(c, to_ticks, func, arg, cpu) \
	((void)(cpu), callout_reset(c, to_ticks, func, arg))
#define callout_reset_curcpu(c, to_ticks, func, arg) callout_reset(c, to_ticks, func, arg)
#define callout_schedule_on(c, to_ticks, cpu) ((void)(cpu), callout_schedule(c, to_ticks))
#define callout_schedule_curcpu(c, to_ticks) callout_schedule(c, to_ticks)
#define callout_reset_sbt_on(c, sbt, pr, func, arg, cpu, flags) \
	((void)(cpu), callout_reset_sbt(c, sbt, pr, func, arg, flags))
#define callout_reset_sbt_curcpu(c, sbt, pr, func, arg, flags) \
	callout_reset_sbt(c, sbt, pr, func, arg, flags)
#define callout_schedule_sbt_on(c, sbt, pr, cpu, flags) \
	((void)(cpu), callout_schedule_sbt(c, sbt, pr, flags))
#define callout_schedule_sbt_curcpu(c, sbt, pr, flags) callout_schedule_sbt(c, sbt, pr, flags)

/*
 * Cancel @c and clear its active flag. Returns 1 if it was pending and is
 * stopped; 0 if it is being serviced (called from its own function; a
 * re-arm made there is unscheduled); -1 if it was not set or has already
 * been serviced; -EXDEV (pending on another thread's wheel: nothing done).
 * O(1).
 */
static inline int callout_stop(struct callout *c)
{
	bool serviced = twheel_compat_running(&c->_ct);
	int rc = twheel_compat_del(&c->_ct);

	if (rc < 0)
		return rc;
	c->c_flags &= ~CALLOUT_ACTIVE;
	if (serviced)
		return 0;
	return rc ? 1 : -1;
}

/* callout_stop(): with one thread per wheel there is nothing to wait for. */
static inline int callout_drain(struct callout *c)
{
	return callout_stop(c);
}

/*
 * callout_stop(), and if it returns 0 (called from @c's own function),
 * @drain(the argument that function was called with) once the function
 * has returned and the layer has released @c's lock (unless
 * CALLOUT_RETURNUNLOCKED: the function released it), as FreeBSD calls it
 * when the running callout completes. The layer does not touch @c after
 * the function returns, so the function or @drain may free it. From then
 * until the function returns, the reset and schedule forms leave @c
 * stopped and return 0. Otherwise (1: it was pending and is stopped; -1:
 * not set, or already serviced; -EXDEV) @drain is not called. @drain
 * NULL: callout_stop(). A second call from the same function replaces
 * @drain. O(1).
 */
static inline int callout_async_drain(struct callout *c, callout_func_t *drain)
{
	bool serviced = twheel_compat_running(&c->_ct);
	int rc = callout_stop(c);
	uintptr_t slot = __atomic_load_n(&c->_drain, __ATOMIC_RELAXED);

	if (rc == 0 && serviced && drain && slot) {
		*(callout_func_t **)(slot & ~(uintptr_t)1) = drain;
		__atomic_store_n(&c->_drain, slot | 1, __ATOMIC_RELAXED);
	}
	return rc;
}

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_COMPAT_CALLOUT_H */
