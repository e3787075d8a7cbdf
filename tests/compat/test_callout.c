/*
 * test_callout - <twheel/compat/callout.h> against the promises of
 * FreeBSD's callout(9), each quoted (shortly) beside its test, on a plain
 * wheel that the test advances tick by tick.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/*
 * The program's locks, as a port of FreeBSD code has them, and the macros
 * that tell <twheel/compat/callout.h> how to take and release them (for
 * callout_init_mtx(), _rw(), _rm()). A mutex is a real one (another
 * thread takes it in one test) that checks its use; the reader/writer and
 * read-mostly locks only count holders. lock_errors counts misuse: a
 * double lock, an unlock of a lock not held.
 */
static int lock_errors;

struct mtx {
	pthread_mutex_t pm;
	pthread_t owner;
	int held;  /* written by its holder */
	int locks; /* times taken */
};

static void mtx_init(struct mtx *m)
{
	pthread_mutexattr_t a;

	*m = (struct mtx){ .held = 0 };
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m->pm, &a);
	pthread_mutexattr_destroy(&a);
}

static void mtx_lock(struct mtx *m)
{
	if (pthread_mutex_lock(&m->pm) != 0) {
		lock_errors++;
		return;
	}
	m->owner = pthread_self();
	m->held = 1;
	m->locks++;
}

static void mtx_unlock(struct mtx *m)
{
	int was = m->held;

	m->held = 0;
	if (pthread_mutex_unlock(&m->pm) != 0) {
		m->held = was;
		lock_errors++;
	}
}

/* The calling thread holds @m (FreeBSD's mtx_owned()). */
static int mtx_owned(const struct mtx *m)
{
	return m->held && pthread_equal(m->owner, pthread_self());
}

struct rwlock {
	int writer, readers;
};

static void rw_wlock(struct rwlock *rw)
{
	lock_errors += rw->writer || rw->readers;
	rw->writer = 1;
}

static void rw_wunlock(struct rwlock *rw)
{
	lock_errors += !rw->writer;
	rw->writer = 0;
}

static void rw_rlock(struct rwlock *rw)
{
	lock_errors += rw->writer;
	rw->readers++;
}

static void rw_runlock(struct rwlock *rw)
{
	lock_errors += !rw->readers;
	rw->readers--;
}

struct rmlock {
	int writer, readers;
};

struct rm_priotracker {
	struct rmlock *rm;
};

static void rm_wlock(struct rmlock *rm)
{
	lock_errors += rm->writer || rm->readers;
	rm->writer = 1;
}

static void rm_wunlock(struct rmlock *rm)
{
	lock_errors += !rm->writer;
	rm->writer = 0;
}

static void rm_rlock(struct rmlock *rm, struct rm_priotracker *tr)
{
	lock_errors += rm->writer;
	tr->rm = rm;
	rm->readers++;
}

static void rm_runlock(struct rmlock *rm, struct rm_priotracker *tr)
{
	lock_errors += !rm->readers || tr->rm != rm;
	rm->readers--;
}

#define TWHEEL_CALLOUT_MTX_LOCK(m) mtx_lock(m)
#define TWHEEL_CALLOUT_MTX_UNLOCK(m) mtx_unlock(m)
#define TWHEEL_CALLOUT_RW_WLOCK(rw) rw_wlock(rw)
#define TWHEEL_CALLOUT_RW_WUNLOCK(rw) rw_wunlock(rw)
#define TWHEEL_CALLOUT_RW_RLOCK(rw) rw_rlock(rw)
#define TWHEEL_CALLOUT_RW_RUNLOCK(rw) rw_runlock(rw)
#define TWHEEL_CALLOUT_RM_WLOCK(rm) rm_wlock(rm)
#define TWHEEL_CALLOUT_RM_WUNLOCK(rm) rm_wunlock(rm)
#define TWHEEL_CALLOUT_RM_RLOCK(rm, tr) rm_rlock(rm, tr)
#define TWHEEL_CALLOUT_RM_RUNLOCK(rm, tr) rm_runlock(rm, tr)

#include <twheel/compat/callout.h>

#define WHEEL_FIXTURE_START 777
#include "wheel_fixture.h"

/* b - a in ticks, as FreeBSD code writes it (tcp: ticks - t_rcvtime):
 * ticks wraps ten minutes after the bind, and the int subtraction wraps
 * with it because the file is built with -fwrapv, as FreeBSD's kernel is
 * (sys/conf/kern.mk) and as docs/migrating.md tells moved code to be. */
static int ticks_since(int a, int b)
{
	return b - a;
}

struct softc {
	struct callout co;
	int calls;
	int at;                /* ticks inside the function */
	int pending_inside;    /* callout_pending() inside the function */
	int active_inside;     /* callout_active() inside the function */
	int action;
	int rc;
	int again;             /* reschedules left */
	struct softc *other;   /* STOP_OTHER's victim */
};

enum { NOTHING, STOP_SELF, RESET_THEN_STOP, DRAIN_SELF, RESET_SELF, STOP_OTHER, FREE_SELF, ASYNC_DRAIN_NULL,
       RESET_OTHER };

static void fn(void *arg)
{
	struct softc *sc = arg;

	sc->calls++;
	sc->at = ticks;
	sc->pending_inside = callout_pending(&sc->co);
	sc->active_inside = callout_active(&sc->co) != 0;
	switch (sc->action) {
	case STOP_SELF:
		sc->rc = callout_stop(&sc->co);
		break;
	case RESET_THEN_STOP:
		callout_reset(&sc->co, 5, fn, sc);
		sc->rc = callout_stop(&sc->co);
		break;
	case DRAIN_SELF:
		sc->rc = callout_drain(&sc->co);
		break;
	case RESET_SELF:
		sc->rc = callout_reset(&sc->co, 5, fn, sc);
		break;
	case STOP_OTHER:
		sc->rc = callout_stop(&sc->other->co);
		break;
	case FREE_SELF:
		free(sc);
		return;
	case ASYNC_DRAIN_NULL:
		sc->rc = callout_async_drain(&sc->co, NULL);
		break;
	case RESET_OTHER:
		sc->rc = callout_reset(&sc->other->co, 10, fn, sc->other);
		break;
	}
	if (sc->again > 0) {
		sc->again--;
		callout_schedule(&sc->co, 10);
	}
}

static void new_sc(struct softc *sc)
{
	*sc = (struct softc){ 0 };
	callout_init(&sc->co, 1);
}

/* ticks starts at INT_MAX - (hz * 10 * 60): "Arrange for ticks to wrap 10
 * minutes after boot to help catch sign problems sooner." */
static void ticks_wrap_ten_minutes_after_binding(void **state)
{
	int t0 = ticks;

	(void)state;
	assert_int_equal(t0, INT_MAX - hz * 600);
	step(hz * 600ul);
	assert_int_equal(ticks, INT_MAX);
	step(1);
	assert_int_equal(ticks, INT_MIN); /* a sign bug shows here */
	assert_true(ticks < t0);          /* the naive comparison is wrong now */
	assert_int_equal(ticks - t0, hz * 600 + 1); /* with -fwrapv, as FreeBSD */
	assert_true(ticks - t0 > 0 && t0 + hz * 600 + 1 == ticks);
}

/* "the callout is scheduled to execute after ticks/hz seconds" */
static void reset_fires_after_ticks(void **state)
{
	struct softc sc;
	int t0 = ticks;

	(void)state;
	new_sc(&sc);
	assert_int_equal(callout_reset(&sc.co, 25, fn, &sc), 0);
	step(24);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(ticks_since(t0, sc.at), 25);
}

/* "Non-positive values of ticks are silently converted to the value '1'." */
static void non_positive_ticks_mean_one(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	callout_reset(&sc.co, 0, fn, &sc);
	assert_int_equal(twheel_advance(w, twheel_now(w)), 0); /* not this tick */
	step(1);
	assert_int_equal(sc.calls, 1);
	callout_reset(&sc.co, -5, fn, &sc);
	step(1);
	assert_int_equal(sc.calls, 2);
}

/* "If c already has a pending callout, it is cancelled before the new
 * invocation is scheduled. These functions return a value of one if a
 * pending callout was cancelled and zero if there was no pending callout." */
static void reset_cancels_and_returns_whether_pending(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	assert_int_equal(callout_reset(&sc.co, 10, fn, &sc), 0);
	assert_int_equal(callout_reset(&sc.co, 30, fn, &sc), 1);
	step(29);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(callout_schedule(&sc.co, 5), 0); /* served: not pending */
	assert_int_equal(callout_schedule(&sc.co, 1), 1);
	step(1);
	assert_int_equal(sc.calls, 2);
}

/* "The callout_schedule() functions reuse the func and arg arguments from
 * the previous callout." "one of the callout_reset() functions must always
 * be called to initialize func and arg before" (else -EINVAL here). */
static void schedule_reuses_func_and_arg(void **state)
{
	struct softc sc, other;

	(void)state;
	new_sc(&sc);
	new_sc(&other);
	assert_int_equal(callout_schedule(&sc.co, 3), -EINVAL);
	callout_reset(&sc.co, 3, fn, &other);
	callout_stop(&sc.co);
	callout_schedule(&sc.co, 3);
	step(3);
	assert_int_equal(other.calls, 1);
	assert_int_equal(sc.calls, 0);
}

/* callout_stop: "If the callout is pending and successfully stopped, then
 * callout_stop() returns a value of one. If the callout is not set, or has
 * already been serviced, then negative one is returned." */
static void stop_returns_one_or_minus_one(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	assert_int_equal(callout_stop(&sc.co), -1); /* not set */
	callout_reset(&sc.co, 10, fn, &sc);
	assert_int_equal(callout_stop(&sc.co), 1);
	step(20);
	assert_int_equal(sc.calls, 0);
	callout_reset(&sc.co, 1, fn, &sc);
	step(1);
	assert_int_equal(callout_stop(&sc.co), -1); /* already serviced */
	assert_int_equal(callout_stop(&sc.co), -1); /* "multiple times in a row" */
}

/* "If the callout is currently being serviced and cannot be stopped, then
 * zero will be returned." (from its own function) */
static void stop_while_being_serviced_is_zero(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	sc.action = STOP_SELF;
	callout_reset(&sc.co, 1, fn, &sc);
	step(1);
	assert_int_equal(sc.rc, 0);
	assert_false(callout_active(&sc.co));
}

/* "If the callout is currently being serviced and cannot be stopped, and
 * at the same time a next invocation of the same callout is also
 * scheduled, then callout_stop() unschedules the next run and returns
 * zero." */
static void stop_unschedules_the_next_run_and_returns_zero(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	sc.action = RESET_THEN_STOP;
	callout_reset(&sc.co, 1, fn, &sc);
	step(1);
	assert_int_equal(sc.rc, 0);
	assert_false(callout_pending(&sc.co));
	step(20);
	assert_int_equal(sc.calls, 1);
}

/* callout_drain: "identical to callout_stop() except that it will wait for
 * the callout c to complete if it is already in progress" -- from its own
 * function it cannot wait (FreeBSD would deadlock): it returns 0. */
static void drain_is_stop(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	assert_int_equal(callout_drain(&sc.co), -1);
	callout_reset(&sc.co, 4, fn, &sc);
	assert_int_equal(callout_drain(&sc.co), 1);
	step(10);
	assert_int_equal(sc.calls, 0);
	sc.action = DRAIN_SELF;
	callout_reset(&sc.co, 1, fn, &sc);
	step(1);
	assert_int_equal(sc.rc, 0);
	assert_int_equal(callout_drain(&sc.co), -1);
}

/* "once the timeout time arrives and the callout subsystem starts to
 * process this callout, callout_pending() will return FALSE"; "It then
 * invokes the callout function without changing the active flag, and does
 * not clear the active flag even after the callout function returns." */
static void pending_false_and_active_kept_when_it_fires(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	assert_false(callout_pending(&sc.co));
	assert_false(callout_active(&sc.co));
	callout_reset(&sc.co, 2, fn, &sc);
	/* "When a callout's timeout is set, the callout subsystem marks the
	 * callout as both active and pending." */
	assert_true(callout_pending(&sc.co));
	assert_true(callout_active(&sc.co));
	step(2);
	assert_int_equal(sc.pending_inside, 0);
	assert_int_equal(sc.active_inside, 1);
	assert_true(callout_active(&sc.co));
	assert_false(callout_pending(&sc.co));
	callout_deactivate(&sc.co);
	assert_false(callout_active(&sc.co));
}

/* "The callout_stop() and callout_drain() functions always clear both the
 * active and pending flags before returning." */
static void stop_and_drain_clear_active_and_pending(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	callout_reset(&sc.co, 2, fn, &sc);
	callout_stop(&sc.co);
	assert_false(callout_active(&sc.co) || callout_pending(&sc.co));
	callout_reset(&sc.co, 2, fn, &sc);
	step(2);
	assert_true(callout_active(&sc.co)); /* fired: still active */
	callout_drain(&sc.co);
	assert_false(callout_active(&sc.co) || callout_pending(&sc.co));
}

/* The manual's handler pattern: "The callout function should first check
 * the pending flag and return without action if callout_pending() returns
 * TRUE ... If callout_active() returns FALSE then the callout function
 * should also return without action." */
static int pattern_work;
static struct callout pattern_co;

static void pattern_fn(void *arg)
{
	(void)arg;
	if (callout_pending(&pattern_co))
		return; /* callout was reset */
	if (!callout_active(&pattern_co))
		return; /* callout was stopped */
	callout_deactivate(&pattern_co);
	pattern_work++;
}

static void manual_handler_pattern(void **state)
{
	(void)state;
	callout_init(&pattern_co, 1);
	callout_reset(&pattern_co, 3, pattern_fn, NULL);
	step(3);
	assert_int_equal(pattern_work, 1);
	assert_false(callout_active(&pattern_co));
}

/* "Callouts only provide a single-shot mode. If a consumer requires a
 * periodic timer, it must explicitly reschedule each function call." */
static void periodic_by_rescheduling_in_the_function(void **state)
{
	struct softc sc;
	int t0 = ticks;

	(void)state;
	new_sc(&sc);
	sc.again = 4;
	callout_reset(&sc.co, 10, fn, &sc);
	step(60);
	assert_int_equal(sc.calls, 5);
	assert_int_equal(ticks_since(t0, sc.at), 50);
}

/* Reset from its own function: "return a value of one if the callout was
 * pending before" -- it is not pending while its function runs: 0. */
static void reset_from_its_own_function(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	sc.action = RESET_SELF;
	callout_reset(&sc.co, 1, fn, &sc);
	step(1);
	assert_int_equal(sc.rc, 0);
	sc.action = NOTHING;
	step(5);
	assert_int_equal(sc.calls, 2);
}

/* A function stops another callout due at the same tick, not run yet: it
 * is still pending ("returns a value of one") and does not run. A function
 * frees the structure its callout is in; the sanitizer build checks that
 * nothing touches it after. */
static void stop_another_and_free_itself(void **state)
{
	struct softc a, b, *f = malloc(sizeof(*f));

	(void)state;
	new_sc(&a);
	new_sc(&b);
	a.action = b.action = STOP_OTHER;
	a.other = &b;
	b.other = &a;
	callout_reset(&a.co, 3, fn, &a);
	callout_reset(&b.co, 3, fn, &b);
	assert_int_equal(step(3), 1);
	assert_int_equal(a.calls + b.calls, 1);
	assert_int_equal(a.calls ? a.rc : b.rc, 1);
	assert_false(callout_pending(&a.co) || callout_pending(&b.co));
	assert_non_null(f);
	new_sc(f);
	f->action = FREE_SELF;
	callout_reset(&f->co, 2, fn, f);
	assert_int_equal(step(2), 1);
}

/* A function that resets another callout due at the same tick, which
 * the advance has not run yet (1: "a pending callout was cancelled") or
 * has run (0): either way it runs 10 ticks on, active and pending until
 * then; with a stop instead (above) it does not run again. */
static void reset_another_callout_due_at_the_same_tick(void **state)
{
	(void)state;
	for (int first = 0; first < 2; first++) {
		struct softc a, b;
		int t;

		new_sc(&a);
		new_sc(&b);
		a.action = RESET_OTHER;
		a.other = &b;
		t = ticks + 3;
		callout_reset(first ? &b.co : &a.co, 3, fn, first ? (void *)&b : (void *)&a);
		callout_reset(first ? &a.co : &b.co, 3, fn, first ? (void *)&a : (void *)&b);
		step(3);
		assert_int_equal(a.calls, 1);
		assert_true(a.rc == 0 || a.rc == 1);
		assert_int_equal(b.calls, !a.rc);
		assert_true(callout_pending(&b.co) && callout_active(&b.co));
		step(9);
		assert_int_equal(b.calls, !a.rc);
		step(1);
		assert_int_equal(b.calls, !a.rc + 1);
		assert_int_equal(ticks_since(t, b.at), 10);
		assert_false(callout_pending(&b.co));
		assert_true(callout_active(&b.co)); /* "does not clear it when a callout expires" */
		assert_int_equal(callout_stop(&b.co), -1);
		assert_false(callout_active(&b.co));
	}
}

/* The ends of the arguments: INT_MAX ticks fire after exactly that many,
 * INT_MIN is "non-positive", 1; SBT_MAX, relative (from the current tick
 * or the next), absolute or precalculated, is pending and stops with 1;
 * INT64_MIN relative and 0 absolute are in the past: the next tick. */
static void ticks_and_times_at_their_ends(void **state)
{
	static const int sbt_flags[] = { 0, C_HARDCLOCK, C_ABSOLUTE, C_PRECALC };
	struct softc sc;
	int t0;

	(void)state;
	new_sc(&sc);
	for (size_t i = 0; i < sizeof(sbt_flags) / sizeof(sbt_flags[0]); i++) {
		assert_int_equal(callout_reset_sbt(&sc.co, SBT_MAX, SBT_MAX, fn, &sc, sbt_flags[i]), 0);
		assert_int_equal(step(3), 0);
		assert_int_equal(callout_stop(&sc.co), 1);
	}
	/* (before the INT_MAX ticks below, which at hz 1 take sbinuptime()
	 * to SBT_MAX, 68 years, as FreeBSD's) */
	t0 = ticks;
	assert_int_equal(callout_reset(&sc.co, INT_MAX, fn, &sc), 0);
	twheel_advance(w, twheel_now(w) + INT_MAX - 1);
	assert_int_equal(sc.calls, 0);
	assert_int_equal(step(1), 1);
	assert_int_equal(ticks_since(t0, sc.at), INT_MAX);
	t0 = ticks;
	assert_int_equal(callout_reset(&sc.co, INT_MIN, fn, &sc), 0);
	assert_int_equal(step(1), 1);
	assert_int_equal(ticks_since(t0, sc.at), 1);
	assert_int_equal(callout_reset_sbt(&sc.co, INT64_MIN, 0, fn, &sc, 0), 0);
	assert_int_equal(step(1), 1);
	assert_int_equal(callout_reset_sbt(&sc.co, 0, 0, fn, &sc, C_ABSOLUTE), 0);
	assert_int_equal(step(1), 1);
	assert_int_equal(sc.calls, 4);
}

/* "a callout structure may be reused to schedule a new function call
 * after a scheduled call is completed." */
static void reused_after_completion(void **state)
{
	struct softc a, b;

	(void)state;
	new_sc(&a);
	new_sc(&b);
	callout_reset(&a.co, 1, fn, &a);
	step(1);
	callout_reset(&a.co, 1, fn, &b);
	step(1);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
}

/* callout_reset_sbt: relative times are never early ("C_HARDCLOCK: Align
 * the timeouts to hardclock() calls", counted from the current tick like
 * ticks; without it, from the next tick); "If sbt specifies a time in the
 * past, the window is adjusted to start at the current time"; C_ABSOLUTE
 * "Handle the sbt argument as an absolute time since boot". */
static void reset_sbt_maps_to_ticks(void **state)
{
	struct softc sc;
	int t0;

	(void)state;
	new_sc(&sc);
	t0 = ticks;
	callout_reset_sbt(&sc.co, 3 * tick_sbt, 0, fn, &sc, C_HARDCLOCK);
	step(3);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(ticks_since(t0, sc.at), 3);
	t0 = ticks;
	callout_reset_sbt(&sc.co, 3 * tick_sbt - 1, SBT_1MS, fn, &sc, 0);
	step(3);
	assert_int_equal(sc.calls, 1); /* from the next tick */
	step(1);
	assert_int_equal(sc.calls, 2);
	assert_int_equal(ticks_since(t0, sc.at), 4);
	callout_reset_sbt(&sc.co, -SBT_1S, 0, fn, &sc, 0); /* in the past */
	assert_int_equal(twheel_advance(w, twheel_now(w)), 1);
	assert_int_equal(sc.calls, 3);
	t0 = ticks;
	callout_reset_sbt(&sc.co, sbinuptime() + 7 * tick_sbt, 0, fn, &sc, C_ABSOLUTE);
	step(6);
	assert_int_equal(sc.calls, 3);
	step(1);
	assert_int_equal(sc.calls, 4);
	assert_int_equal(ticks_since(t0, sc.at), 7);
}

/*
 * FreeBSD runs a callout at or after its time (callout_process(): "if
 * (tmp->c_time <= now)"), and code counts on it: kern_event's timer
 * function counts an expiry only "if (now >= kc->next)" and otherwise
 * re-arms for the same time. So the function runs with sbinuptime() at
 * or past the time asked for, at the first tick that is, also for the
 * times the rounded-up conversions give (mstosbt(750) is a unit of
 * 2^-32 s past 750 ms, a tick's time is rounded down): absolute from
 * sbinuptime(), relative from the current tick (C_HARDCLOCK) or from
 * the next (no flag).
 */
static sbintime_t fired_sbt;

static void record_sbt(void *arg)
{
	(void)arg;
	fired_sbt = sbinuptime();
}

static void sbt_time_reached_when_it_runs(void **state)
{
	static const int64_t ms[] = { 1, 3, 10, 250, 500, 750, 1000, 1001, 2500 };
	static const int flags[] = { C_ABSOLUTE, C_HARDCLOCK, 0 };
	struct callout c;

	(void)state;
	callout_init(&c, 1);
	for (unsigned f = 0; f < 3; f++) {
		for (unsigned i = 0; i < 3 * sizeof(ms) / sizeof(ms[0]); i++) {
			int64_t v = ms[i / 3];
			sbintime_t sbt = i % 3 == 0 ? mstosbt(v) : i % 3 == 1 ? ustosbt(v * 1000 + 1) : nstosbt(v * 1000000 - 1);
			sbintime_t at = sbinuptime() + sbt, prev = 0;

			if (flags[f] == 0)
				at += tick_sbt + 1; /* from the next tick's time, which is at most that */
			fired_sbt = -1;
			callout_reset_sbt(&c, flags[f] == C_ABSOLUTE ? at : sbt, 0, record_sbt, NULL, flags[f]);
			while (fired_sbt < 0) {
				prev = sbinuptime();
				step(1);
			}
			assert_true(fired_sbt >= at - (flags[f] == 0 ? 1 : 0)); /* never before its time */
			assert_true(prev < at);                                 /* at the first tick past it */
		}
	}
}

/*
 * FreeBSD's decimal conversions of <sys/time.h>, which drivers pass to
 * the sbt forms (callout_reset_sbt(c, mstosbt(ms), 0, ...)): sbttoX()
 * round down, Xtosbt() up, "so that sbttoX(Xtosbt(y)) == y" and a callout
 * waits "at least as long as requested", over the whole range, where
 * FreeBSD's products wrap (its mstosbt(2000) is 1 where it takes whole
 * seconds apart only from SBT_1S on; its sbttous() of an hour is
 * negative); an Xtosbt() past SBT_MAX is SBT_MAX. Checked against exact
 * 128-bit arithmetic.
 */
__extension__ typedef __int128 wide;

static void sbt_decimal_conversions(void **state)
{
	static const int64_t per[] = { 1000, 1000000, 1000000000 };
	static const int64_t x[] = { 0, 1, 2, 499, 500, 999, 1000, 1001, 1999, 2000, 2001, 4095,
				     999999, 1000000, 2000000, 123456789, 999999999, 1000000000,
				     2000000000, 4294967295LL, 4294967296LL, 4294967297LL,
				     3600000000000LL, 2147483647999LL, 9223372036854775807LL };
	static const sbintime_t sbt[] = { 0, 1, 4294967, 4294968, SBT_1S / 2, SBT_1S - 1, SBT_1S,
					  SBT_1S + 1, 2 * SBT_1S + 12345, SBT_1M, 3600 * SBT_1S,
					  86400 * SBT_1S * 25, SBT_MAX - 1, SBT_MAX, -1, -SBT_1S,
					  -SBT_1S - 1, INT64_MIN };
	struct softc sc;
	int t0;

	(void)state;
	for (unsigned p = 0; p < 3; p++) {
		for (unsigned i = 0; i < sizeof(x) / sizeof(x[0]); i++) {
			sbintime_t sb = per[p] == 1000 ? mstosbt(x[i]) : per[p] == 1000000 ? ustosbt(x[i]) : nstosbt(x[i]);
			int64_t back = per[p] == 1000 ? sbttoms(sb) : per[p] == 1000000 ? sbttous(sb) : sbttons(sb);
			wide exact = (wide)x[i] << 32; /* sb * per[p], had it no rounding */

			if (x[i] / per[p] >= ((int64_t)1 << 31)) {
				assert_true(sb == SBT_MAX); /* 68 years and more */
				continue;
			}
			assert_true((wide)sb * per[p] >= exact);                /* never short */
			assert_true((wide)sb * per[p] < exact + 2 * per[p]);    /* by 2 units at most */
			assert_true(back == x[i]);
			assert_true((per[p] == 1000 ? mstosbt(-x[i]) : per[p] == 1000000 ? ustosbt(-x[i]) : nstosbt(-x[i])) == -sb);
		}
		for (unsigned i = 0; i < sizeof(sbt) / sizeof(sbt[0]); i++) {
			int64_t got = per[p] == 1000 ? sbttoms(sbt[i]) : per[p] == 1000000 ? sbttous(sbt[i]) : sbttons(sbt[i]);
			wide n = (wide)sbt[i] * per[p];
			wide floor = n >= 0 ? n >> 32 : -((-n + 0xffffffff) >> 32);

			assert_true(got == (int64_t)floor);
		}
	}
	assert_true(mstosbt(2000) == 2 * SBT_1S);
	assert_true(mstosbt(500) == SBT_1S / 2 + 1 && nstosbt(1000000) == 4294968 && nstosbt(1) == 5);
	assert_true(sbttous(3600 * SBT_1S) == 3600000000LL && sbttoms(SBT_1M) == 60000);
	assert_true(mstosbt(INT64_MAX) == SBT_MAX && mstosbt(INT64_MIN) == -SBT_MAX);
	/* a negative value rounds away from zero: back one less, unless whole seconds */
	assert_true(sbttoms(mstosbt(-1)) == -2 && sbttoms(mstosbt(-1000)) == -1000);
	assert_true(sbttous(ustosbt(-1500000)) == -1500001 && sbttons(nstosbt(-2000000000)) == -2000000000);
	/* a driver's quarter second, from the current tick: mstosbt(250) is a
	 * unit past hz / 4 ticks, so it runs at the next tick; 250 * SBT_1MS,
	 * rounded down, at hz / 4 */
	new_sc(&sc);
	t0 = ticks;
	callout_reset_sbt(&sc.co, mstosbt(250), 0, fn, &sc, C_HARDCLOCK);
	step((unsigned long)hz / 4);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(ticks_since(t0, sc.at), hz / 4 + 1);
	t0 = ticks;
	callout_reset_sbt(&sc.co, 250 * SBT_1MS, 0, fn, &sc, C_HARDCLOCK);
	step((unsigned long)hz / 4);
	assert_int_equal(sc.calls, 2);
	assert_int_equal(ticks_since(t0, sc.at), hz / 4);
}

/* getsbinuptime() and SBT_MAX of FreeBSD's <sys/time.h>, as drivers use
 * them for deadlines (nvme_qpair_submit_tracker(): getsbinuptime() +
 * timeout * SBT_1S, SBT_MAX for none): the same clock as sbinuptime() and
 * the callouts, and a "never" later than any time. */
static void getsbinuptime_and_sbt_max(void **state)
{
	struct softc sc;
	sbintime_t deadline = getsbinuptime() + 2 * SBT_1S;

	(void)state;
	assert_true(getsbinuptime() == sbinuptime());
	assert_true(SBT_MAX == INT64_MAX && getsbinuptime() < SBT_MAX);
	new_sc(&sc);
	callout_reset_sbt(&sc.co, deadline, 0, fn, &sc, C_ABSOLUTE);
	step(2 * hz - 1);
	assert_int_equal(sc.calls, 0);
	assert_true(getsbinuptime() < deadline);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_true(getsbinuptime() == deadline);
}

/* An sbintime_t is seconds in 32.32 fixed point, and a tick is 1/hz s:
 * SBT_1S from the current tick (C_HARDCLOCK, the way callout_reset()
 * counts) is hz ticks, as callout_reset(c, hz, ...), and sbinuptime()
 * gains SBT_1S in hz ticks. "C_HARDCLOCK ... if sbt < tick_sbt, sbt =
 * tick_sbt" (kern_timeout.c): a time not ahead is one tick, as
 * callout_reset() makes a non-positive one, not this tick. */
static void reset_sbt_whole_seconds_and_hardclock_minimum(void **state)
{
	struct softc sc;
	sbintime_t t0 = sbinuptime();

	(void)state;
	new_sc(&sc);
	callout_reset_sbt(&sc.co, SBT_1S, 0, fn, &sc, C_HARDCLOCK);
	step(hz - 1);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(sbinuptime() - t0, SBT_1S);
	callout_reset_sbt(&sc.co, 0, 0, fn, &sc, C_HARDCLOCK);
	assert_int_equal(twheel_advance(w, twheel_now(w)), 0); /* not this tick */
	step(1);
	assert_int_equal(sc.calls, 2);
	callout_reset_sbt(&sc.co, -SBT_1S, 0, fn, &sc, C_HARDCLOCK);
	assert_int_equal(twheel_advance(w, twheel_now(w)), 0);
	step(1);
	assert_int_equal(sc.calls, 3);
}

/* callout_when: "pre-calculate the absolute time at which the timeout
 * should be run"; "add the C_PRECALC flag". */
static void when_and_precalc(void **state)
{
	struct softc sc;
	sbintime_t at, pr;
	int t0 = ticks;

	(void)state;
	new_sc(&sc);
	sbintime_t ret = callout_when(5 * tick_sbt, SBT_1MS, C_HARDCLOCK, &at, &pr);

	assert_int_equal(ret, at);
	/* the larger of pr and FreeBSD's default deviation, 1/16 of sbt */
	assert_int_equal(pr, SBT_1MS > (5 * tick_sbt) >> 4 ? SBT_1MS : (5 * tick_sbt) >> 4);
	assert_int_equal(at, sbinuptime() + 5 * tick_sbt);
	callout_reset_sbt(&sc.co, at, pr, fn, &sc, C_PRECALC);
	step(4);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(ticks_since(t0, sc.at), 5);
}

/* callout_when()'s precision: "Note that the larger of pr or this value
 * [C_PREL(): the relative event time divided by 2^x] is used as the
 * length of the time window"; without C_PREL(), FreeBSD's default
 * kern.timecounter.alloweddeviation (5%: 2^-4); absolute times keep pr. */
static void when_precision_as_freebsd(void **state)
{
	sbintime_t at, pr;

	(void)state;
	callout_when(SBT_1S, 0, 0, &at, &pr);
	assert_int_equal(pr, SBT_1S >> 4);
	callout_when(SBT_1S, 0, C_PREL(2), &at, &pr);
	assert_int_equal(pr, SBT_1S >> 2);
	callout_when(SBT_1S, SBT_1S, C_PREL(2), &at, &pr);
	assert_int_equal(pr, SBT_1S);
	callout_when(0, 0, C_HARDCLOCK | C_PREL(1), &at, &pr); /* sbt made tick_sbt */
	assert_int_equal(pr, tick_sbt >> 1);
	callout_when(SBT_1S, 7, C_ABSOLUTE | C_PREL(1), &at, &pr);
	assert_int_equal(at, SBT_1S);
	assert_int_equal(pr, 7);
	callout_when(SBT_1S, 7, C_PRECALC, &at, &pr);
	assert_int_equal(pr, 7);
	callout_when(SBT_1S, 7, C_PREL(100), &at, &pr); /* no shift past 63 bits */
	assert_int_equal(pr, 7);
}

/* The per-CPU forms are accepted; the callout stays on this thread. */
static void per_cpu_forms(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	assert_int_equal(callout_reset_on(&sc.co, 2, fn, &sc, 3), 0);
	assert_int_equal(callout_reset_curcpu(&sc.co, 2, fn, &sc), 1);
	assert_int_equal(callout_schedule_on(&sc.co, 2, 1), 1);
	assert_int_equal(callout_schedule_curcpu(&sc.co, 2), 1);
	assert_int_equal(callout_reset_sbt_on(&sc.co, tick_sbt, 0, fn, &sc, 0, C_HARDCLOCK), 1);
	assert_int_equal(callout_reset_sbt_curcpu(&sc.co, tick_sbt, 0, fn, &sc, C_HARDCLOCK), 1);
	assert_int_equal(callout_schedule_sbt(&sc.co, tick_sbt, 0, C_HARDCLOCK), 1);
	assert_int_equal(callout_schedule_sbt_on(&sc.co, tick_sbt, 0, 2, C_HARDCLOCK), 1);
	assert_int_equal(callout_schedule_sbt_curcpu(&sc.co, tick_sbt, 0, C_HARDCLOCK), 1);
	step(1);
	assert_int_equal(sc.calls, 1);
}

#if TWHEEL_DEBUG_CHECKS
static int reinit_reports;
static void reinit_misuse(const char *what)
{
	assert_non_null(strstr(what, "pending"));
	reinit_reports++;
}
#endif

/* callout_init: the callout must not be pending (FreeBSD's bzero()
 * corrupts its callwheel). A -Ddebug_checks build reports each form on a
 * pending callout (as tw_timer_init() does) and, if the handler returns,
 * leaves the callout as it was: pending, active, its function, argument
 * and lock, and it fires once. */
static void init_of_a_pending_callout_is_reported(void **state)
{
	(void)state;
#if TWHEEL_DEBUG_CHECKS
	struct softc a = { 0 }, b = { 0 };
	struct mtx m;
	twheel_misuse_fn old = twheel_set_misuse_handler(reinit_misuse);

	reinit_reports = 0;
	mtx_init(&m);
	callout_init(&a.co, 1);
	callout_init_mtx(&b.co, &m, 0);
	assert_int_equal(callout_reset(&a.co, 5, fn, &a), 0);
	assert_int_equal(callout_reset(&b.co, 5, fn, &b), 0);
	callout_init(&a.co, 0);
	assert_int_equal(reinit_reports, 1);
	callout_init_mtx(&b.co, &m, CALLOUT_RETURNUNLOCKED);
	callout_init(&b.co, 1);
	assert_int_equal(reinit_reports, 3);
	twheel_set_misuse_handler(old);
	assert_true(callout_pending(&a.co) && callout_active(&a.co));
	assert_true(callout_pending(&b.co) && callout_active(&b.co));
	assert_int_equal(a.co.c_flags & CALLOUT_MPSAFE, CALLOUT_MPSAFE);
	step(5);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(m.locks, 1); /* its lock kept, and released after */
	assert_false(mtx_owned(&m));
	assert_int_equal(lock_errors, 0);
	assert_int_equal(callout_stop(&a.co), -1);
	assert_int_equal(callout_stop(&b.co), -1);
	pthread_mutex_destroy(&m.pm);
#else
	skip(); /* a release build cannot tell a pending callout from garbage */
#endif
}

#if TWHEEL_DEBUG_CHECKS
static int zeroed_reports;
static void zeroed_misuse(const char *what)
{
	assert_non_null(strstr(what, "initialised"));
	zeroed_reports++;
}
#endif

/* A callout whose callout_init() was forgotten, all zero (a softc from
 * calloc()): every reset and schedule form refuses it with -EINVAL, and a
 * -Ddebug_checks build reports each, as the wheel's arms report a timer
 * never initialised: FreeBSD code ignores callout_reset()'s return, and
 * would lose the callout silently in the build meant to catch it. */
static void reset_of_a_callout_never_initialised(void **state)
{
	struct softc sc;

	(void)state;
	memset(&sc, 0, sizeof(sc));
#if TWHEEL_DEBUG_CHECKS
	twheel_misuse_fn old = twheel_set_misuse_handler(zeroed_misuse);

	zeroed_reports = 0;
#endif
	assert_int_equal(callout_reset(&sc.co, 5, fn, &sc), -EINVAL);
	assert_int_equal(callout_reset_sbt(&sc.co, SBT_1S, 0, fn, &sc, 0), -EINVAL);
	assert_int_equal(callout_reset_on(&sc.co, 5, fn, &sc, 0), -EINVAL);
	/* the schedule forms, whose func (the callout's, NULL) is checked too */
	assert_int_equal(callout_schedule(&sc.co, 5), -EINVAL);
	assert_int_equal(callout_schedule_sbt(&sc.co, SBT_1S, 0, 0), -EINVAL);
#if TWHEEL_DEBUG_CHECKS
	twheel_set_misuse_handler(old);
	assert_int_equal(zeroed_reports, 5);
#endif
	assert_false(callout_pending(&sc.co));
	assert_false(callout_active(&sc.co));
	assert_int_equal(step(10), 0);
	assert_int_equal(sc.calls, 0);
}

/* callout_reset: "Non-positive values of ticks are silently converted
 * to the value 1", and an sbt time not ahead fires at the next tick: a
 * function that re-arms its callout for no time (callout_reset() with 0,
 * callout_schedule() with a negative count, callout_reset_sbt() with 0)
 * runs once a tick, never again within one, however late the advance. */
static int zero_calls;
static struct callout zero_co;
static void rearm_for_nothing(void *arg)
{
	(void)arg;
	switch (zero_calls++ % 3) {
	case 0:
		callout_reset(&zero_co, 0, rearm_for_nothing, NULL);
		break;
	case 1:
		callout_schedule(&zero_co, -5);
		break;
	default:
		callout_reset_sbt(&zero_co, 0, 0, rearm_for_nothing, NULL, 0);
		break;
	}
}

static void rearm_for_no_time_runs_next_tick(void **state)
{
	int t0 = ticks;

	(void)state;
	zero_calls = 0;
	callout_init(&zero_co, 1);
	assert_int_equal(callout_reset(&zero_co, 0, rearm_for_nothing, NULL), 0);
	assert_int_equal(twheel_advance(w, twheel_now(w) + 1000), 1); /* late: once */
	assert_true(callout_pending(&zero_co));
	assert_int_equal(step(6), 6); /* then once a tick */
	assert_int_equal(zero_calls, 7);
	assert_int_equal(ticks_since(t0, ticks), 1006);
	assert_int_equal(callout_drain(&zero_co), 1);
}

/* A callout whose function re-arms it for the next tick (callout_reset()
 * with 1, callout_reset_sbt() with tick_sbt and C_HARDCLOCK), after one
 * advance of many ticks (a stall): FreeBSD's softclock runs the late
 * callouts with ticks at the current time, so the function reads the
 * time reached and the callout fires at the first tick after it, then
 * once a tick, each at its time. (The old code read the callout's own
 * tick and stayed a tick behind for as long as it re-armed.) */
static int poll_calls, poll_late, poll_at[8];
static int poll_due;
static struct callout poll_co;
static void poll_function(void *arg)
{
	(void)arg;
	poll_late += ticks != poll_due;
	if (poll_calls < 8)
		poll_at[poll_calls] = ticks;
	poll_calls++;
	poll_due = ticks + 1;
	if (poll_calls % 2)
		callout_reset(&poll_co, 1, poll_function, NULL);
	else
		callout_reset_sbt(&poll_co, tick_sbt, 0, poll_function, NULL, C_HARDCLOCK);
}

static void rearm_for_next_tick_after_a_catch_up_is_on_time(void **state)
{
	int t0 = ticks;

	(void)state;
	poll_calls = 0;
	callout_init(&poll_co, 1);
	poll_due = t0 + 1;
	assert_int_equal(callout_reset(&poll_co, 1, poll_function, NULL), 0);
	assert_int_equal(twheel_advance(w, twheel_now(w) + 1000), 1); /* late: once */
	assert_int_equal(ticks_since(t0, poll_at[0]), 1000);
	poll_late = 0; /* that run was late, as in FreeBSD */
	assert_int_equal(step(5), 5);
	assert_int_equal(poll_calls, 6);
	assert_int_equal(ticks_since(t0, poll_at[1]), 1001);
	assert_int_equal(ticks_since(t0, poll_at[5]), 1005);
	assert_int_equal(poll_late, 0);
	assert_int_equal(callout_drain(&poll_co), 1);
}

/* Far away, exact. */
static void far_callout_is_exact(void **state)
{
	struct softc sc;
	int t0 = ticks;

	(void)state;
	new_sc(&sc);
	callout_reset(&sc.co, 3000000, fn, &sc);
	twheel_advance(w, twheel_now(w) + 2999999);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(ticks_since(t0, sc.at), 3000000);
}

struct other {
	struct callout *c;
	int stop, reset, unbound, drain, async_drain;
};

static void *other_thread(void *arg)
{
	struct other *x = arg;
	struct callout mine;
	struct twheel *w2 = twheel_create(0);

	callout_init(&mine, 1);
	x->unbound = callout_reset(&mine, 1, fn, NULL);
	twheel_compat_bind_wheel(w2);
	x->stop = callout_stop(x->c);
	x->reset = callout_reset(x->c, 1, fn, NULL);
	x->drain = callout_drain(x->c); /* FreeBSD would wait; here: refused */
	x->async_drain = callout_async_drain(x->c, fn);
	twheel_compat_unbind();
	twheel_destroy(w2);
	return NULL;
}

/* Another thread: -EXDEV, nothing changed (callout_drain() and
 * callout_async_drain() too, where FreeBSD would wait or defer); an
 * unbound thread: -ENXIO. */
static void another_thread_is_refused(void **state)
{
	struct softc sc;
	struct other x = { .c = &sc.co };
	pthread_t th;

	(void)state;
	new_sc(&sc);
	callout_reset(&sc.co, 5, fn, &sc);
	assert_int_equal(pthread_create(&th, NULL, other_thread, &x), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(x.unbound, -ENXIO);
	assert_int_equal(x.stop, -EXDEV);
	assert_int_equal(x.reset, -EXDEV);
	assert_int_equal(x.drain, -EXDEV);
	assert_int_equal(x.async_drain, -EXDEV);
	assert_true(callout_active(&sc.co) && callout_pending(&sc.co));
	step(5);
	assert_int_equal(sc.calls, 1);
}

/* Callouts with a lock: "The callout subsystem acquires the associated
 * lock before calling the callout function and releases it after the
 * function returns." */
struct locked {
	struct callout co;
	struct mtx *m;
	struct rwlock *rw;
	struct rmlock *rm;
	int calls;
	int held;         /* the mutex held by this thread inside */
	int writer, readers, rm_writer, rm_readers;
	int serviced;     /* callout_stop() inside: 0 ("being serviced") */
	int unlock;       /* CALLOUT_RETURNUNLOCKED: release the mutex inside */
	int again;        /* re-arms left */
	int at;           /* ticks inside */
	struct locked *other; /* stop it from inside */
	int other_rc;
	int free_self;
	const int *watch; /* read inside, into watched */
	int watched;
};

static void locked_fn(void *arg)
{
	struct locked *l = arg;

	l->calls++;
	l->at = ticks;
	if (l->watch)
		l->watched = *l->watch;
	if (l->m)
		l->held = mtx_owned(l->m);
	if (l->rw) {
		l->writer = l->rw->writer;
		l->readers = l->rw->readers;
	}
	if (l->rm) {
		l->rm_writer = l->rm->writer;
		l->rm_readers = l->rm->readers;
	}
	if (l->other)
		l->other_rc = callout_stop(&l->other->co);
	if (l->again > 0) {
		l->again--;
		callout_reset(&l->co, 10, locked_fn, l);
	} else {
		l->serviced = callout_stop(&l->co);
	}
	if (l->unlock)
		mtx_unlock(l->m);
	if (l->free_self)
		free(l);
}

static void mtx_held_around_the_function(void **state)
{
	struct mtx m;
	struct locked l = { .m = &m };

	(void)state;
	mtx_init(&m);
	lock_errors = 0;
	callout_init_mtx(&l.co, &m, 0);
	assert_false(callout_pending(&l.co) || callout_active(&l.co));
	mtx_lock(&m);
	assert_int_equal(callout_reset(&l.co, 5, locked_fn, &l), 0);
	mtx_unlock(&m);
	step(4);
	assert_int_equal(l.calls, 0);
	assert_int_equal(m.locks, 1); /* not taken before its time */
	step(1);
	assert_int_equal(l.calls, 1);
	assert_true(l.held);
	assert_int_equal(l.serviced, 0);
	assert_int_equal(m.locks, 2); /* taken once, released after */
	assert_false(m.held);
	assert_int_equal(lock_errors, 0);
	pthread_mutex_destroy(&m.pm);
}

/* "CALLOUT_RETURNUNLOCKED: The callout function will release the
 * associated lock itself, so the callout subsystem should not attempt to
 * unlock it after the callout function returns." (An unlock of the
 * released mutex is counted in lock_errors.) */
static void returnunlocked_leaves_the_unlock_to_the_function(void **state)
{
	struct mtx m;
	struct locked l = { .m = &m, .unlock = 1 };

	(void)state;
	mtx_init(&m);
	lock_errors = 0;
	callout_init_mtx(&l.co, &m, CALLOUT_RETURNUNLOCKED);
	callout_reset(&l.co, 2, locked_fn, &l);
	step(2);
	assert_int_equal(l.calls, 1);
	assert_true(l.held);
	assert_false(m.held);
	assert_int_equal(lock_errors, 0);
	/* the lock is free again: the layer took it once and left it */
	mtx_lock(&m);
	mtx_unlock(&m);
	assert_int_equal(m.locks, 2);
	assert_int_equal(lock_errors, 0);
	pthread_mutex_destroy(&m.pm);
}

/* "CALLOUT_SHAREDLOCK: The lock is only acquired in read mode when running
 * the callout handler. This flag is ignored by callout_init_mtx()." */
static void sharedlock_reads_rw_and_rm_and_is_ignored_for_mtx(void **state)
{
	struct rwlock rw = { 0 };
	struct rmlock rm = { 0 };
	struct mtx m;
	struct locked lw = { .rw = &rw }, lr = { .rw = &rw };
	struct locked mw = { .rm = &rm }, mr = { .rm = &rm }, ms = { .m = &m };

	(void)state;
	mtx_init(&m);
	lock_errors = 0;
	callout_init_rw(&lw.co, &rw, 0);
	callout_init_rw(&lr.co, &rw, CALLOUT_SHAREDLOCK);
	callout_init_rm(&mw.co, &rm, 0);
	callout_init_rm(&mr.co, &rm, CALLOUT_SHAREDLOCK);
	callout_init_mtx(&ms.co, &m, CALLOUT_SHAREDLOCK);
	callout_reset(&lw.co, 1, locked_fn, &lw);
	callout_reset(&lr.co, 2, locked_fn, &lr);
	callout_reset(&mw.co, 3, locked_fn, &mw);
	callout_reset(&mr.co, 4, locked_fn, &mr);
	callout_reset(&ms.co, 5, locked_fn, &ms);
	assert_int_equal(step(5), 5);
	assert_true(lw.writer && !lw.readers);
	assert_true(!lr.writer && lr.readers == 1);
	assert_true(mw.rm_writer && !mw.rm_readers);
	assert_true(!mr.rm_writer && mr.rm_readers == 1);
	assert_true(ms.held);
	assert_true(!rw.writer && !rw.readers && !rm.writer && !rm.readers && !m.held);
	assert_int_equal(lock_errors, 0);
	pthread_mutex_destroy(&m.pm);
}

/* "The associated lock must be held while stopping or rescheduling the
 * callout ... This ensures that stopping or rescheduling the callout will
 * abort any previously scheduled invocation." Stopped, re-armed or
 * drained with the lock held, the old arm never runs; two callouts on one
 * lock, due at the same tick, each stopping the other from its function:
 * exactly one runs, and its stop of the other returns 1. */
static void stop_or_reset_under_the_lock_aborts_the_arm(void **state)
{
	struct mtx m;
	struct locked a = { .m = &m }, b = { .m = &m }, c = { .m = &m };

	(void)state;
	mtx_init(&m);
	lock_errors = 0;
	callout_init_mtx(&a.co, &m, 0);
	callout_init_mtx(&b.co, &m, 0);
	callout_init_mtx(&c.co, &m, 0);
	mtx_lock(&m);
	callout_reset(&a.co, 3, locked_fn, &a);
	callout_reset(&b.co, 3, locked_fn, &b);
	callout_reset(&c.co, 3, locked_fn, &c);
	assert_int_equal(callout_stop(&a.co), 1);
	assert_int_equal(callout_reset(&b.co, 6, locked_fn, &b), 1);
	assert_int_equal(callout_drain(&c.co), 1);
	mtx_unlock(&m);
	assert_int_equal(step(5), 0);
	assert_int_equal(m.locks, 1);
	assert_int_equal(step(1), 1);
	assert_int_equal(a.calls + b.calls + c.calls, 1);
	assert_int_equal(b.calls, 1);

	a = (struct locked){ .m = &m, .other = &b };
	b = (struct locked){ .m = &m, .other = &a };
	callout_init_mtx(&a.co, &m, 0);
	callout_init_mtx(&b.co, &m, 0);
	mtx_lock(&m);
	callout_reset(&a.co, 2, locked_fn, &a);
	callout_reset(&b.co, 2, locked_fn, &b);
	mtx_unlock(&m);
	assert_int_equal(step(2), 1);
	assert_int_equal(a.calls + b.calls, 1);
	assert_int_equal(a.calls ? a.other_rc : b.other_rc, 1);
	assert_true(a.calls ? a.held : b.held);
	assert_false(m.held);
	assert_int_equal(lock_errors, 0);
	pthread_mutex_destroy(&m.pm);
}

/* A driver's tick: re-armed from its function with the lock held, every
 * 10 ticks, then stopped from there on its last run (0: being serviced);
 * drained at detach (-1: not pending). Then a callout whose function
 * frees it: the layer releases the lock without reading the callout
 * again (the sanitizer build checks it). */
static void rearm_from_the_function_then_drain(void **state)
{
	struct mtx m;
	struct locked l = { .m = &m, .again = 3 }, *f = malloc(sizeof(*f));
	int t0 = ticks;

	(void)state;
	mtx_init(&m);
	lock_errors = 0;
	callout_init_mtx(&l.co, &m, 0);
	mtx_lock(&m);
	callout_reset(&l.co, 10, locked_fn, &l);
	mtx_unlock(&m);
	step(45);
	assert_int_equal(l.calls, 4);
	assert_int_equal(ticks_since(t0, l.at), 40);
	assert_true(l.held);
	assert_int_equal(l.serviced, 0);
	assert_int_equal(m.locks, 5);
	assert_int_equal(callout_drain(&l.co), -1);
	assert_false(callout_pending(&l.co) || callout_active(&l.co));

	assert_non_null(f);
	*f = (struct locked){ .m = &m, .free_self = 1 };
	callout_init_mtx(&f->co, &m, 0);
	mtx_lock(&m);
	callout_reset(&f->co, 1, locked_fn, f);
	mtx_unlock(&m);
	assert_int_equal(step(1), 1);
	assert_false(m.held);
	assert_int_equal(lock_errors, 0);
	pthread_mutex_destroy(&m.pm);
}

/* Misuse FreeBSD panics on (a NULL lock: when the callout first runs, or
 * at the initialisation in an INVARIANTS kernel with
 * CALLOUT_RETURNUNLOCKED; an unknown flag, in an INVARIANTS kernel): the
 * callout cannot be armed (-EINVAL) and never runs; stop and drain
 * return -1. */
static void null_lock_or_bad_flags_cannot_be_armed(void **state)
{
	struct mtx m;
	struct locked l[4] = { { .m = NULL } };

	(void)state;
	mtx_init(&m);
	callout_init_mtx(&l[0].co, NULL, 0);
	callout_init_mtx(&l[1].co, NULL, CALLOUT_RETURNUNLOCKED);
	callout_init_rw(&l[2].co, NULL, CALLOUT_SHAREDLOCK);
	callout_init_mtx(&l[3].co, &m, 0x0001);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(callout_reset(&l[i].co, 1, locked_fn, &l[i]), -EINVAL);
		assert_int_equal(callout_reset_sbt(&l[i].co, SBT_1MS, 0, locked_fn, &l[i], 0), -EINVAL);
		assert_int_equal(callout_schedule(&l[i].co, 1), -EINVAL);
		assert_false(callout_pending(&l[i].co) || callout_active(&l[i].co));
		assert_int_equal(callout_stop(&l[i].co), -1);
		assert_int_equal(callout_drain(&l[i].co), -1);
	}
	assert_int_equal(step(3), 0);
	assert_int_equal(m.locks, 0);
	pthread_mutex_destroy(&m.pm);
}

/* Another thread holding the lock cannot stop or re-arm the callout
 * pending on this thread's wheel (-EXDEV, nothing changed), and the
 * function runs after that thread has released the lock, holding it. */
struct holder {
	struct mtx *m;
	struct callout *c;
	pthread_barrier_t locked;
	int stop, reset, released;
};

static void *hold_the_lock(void *arg)
{
	struct holder *h = arg;

	mtx_lock(h->m);
	pthread_barrier_wait(&h->locked);
	h->stop = callout_stop(h->c);
	h->reset = callout_reset(h->c, 1, locked_fn, NULL);
	h->released = 1;
	mtx_unlock(h->m);
	return NULL;
}

static void released_by_another_thread_first(void **state)
{
	struct mtx m;
	struct locked l = { .m = &m };
	struct holder h = { .m = &m, .c = &l.co };
	pthread_t th;

	l.watch = &h.released;

	(void)state;
	mtx_init(&m);
	lock_errors = 0;
	callout_init_mtx(&l.co, &m, 0);
	callout_reset(&l.co, 1, locked_fn, &l);
	pthread_barrier_init(&h.locked, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, hold_the_lock, &h), 0);
	pthread_barrier_wait(&h.locked); /* the thread holds the lock */
	step(1);                         /* waits for it */
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_barrier_destroy(&h.locked);
	assert_int_equal(h.stop, -EXDEV);
	assert_int_equal(h.reset, -EXDEV);
	assert_int_equal(l.calls, 1);
	assert_true(l.held);
	assert_true(l.watched); /* it ran after the thread's unlock */
	assert_int_equal(lock_errors, 0);
	pthread_mutex_destroy(&m.pm);
}

/* callout_async_drain: "identical to callout_stop() with one difference.
 * When callout_async_drain() returns zero it will arrange for the
 * function drain to be called using the same argument given to the
 * callout_reset() function." Not running: 1 or -1, and no drain. */
static int drains;
static void *drained_arg;

static void count_drain(void *arg)
{
	drains++;
	drained_arg = arg;
}

static void async_drain_of_a_callout_not_running(void **state)
{
	struct softc sc;

	(void)state;
	drains = 0;
	new_sc(&sc);
	assert_int_equal(callout_async_drain(&sc.co, count_drain), -1); /* never set */
	callout_reset(&sc.co, 3, fn, &sc);
	assert_int_equal(callout_async_drain(&sc.co, count_drain), 1);
	assert_false(callout_pending(&sc.co) || callout_active(&sc.co));
	step(5);
	assert_int_equal(sc.calls, 0);
	assert_int_equal(drains, 0);
	assert_int_equal(callout_reset(&sc.co, 1, fn, &sc), 0); /* still usable */
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(callout_async_drain(&sc.co, count_drain), -1); /* serviced */
	assert_int_equal(drains, 0);
}

/* From its own function: 0, the re-arm made there unscheduled, later
 * resets refused ("Someone has called callout_drain to kill this callout.
 * Don't reschedule."), and the drain function called once, with the
 * argument the function got (not the one of a reset made there), after
 * the function returned and the layer released the lock. The drain
 * function frees the callout: the layer must not touch it after the
 * function returns (ASan checks), and what it saw is copied first. */
struct dying {
	struct callout co;
	int calls;
	int rc, reset_rc, stop_rc, pending_after, returned;
	int drained_after_return;
	struct mtx *m;
	int unlock;            /* CALLOUT_RETURNUNLOCKED: release m inside */
	int held_inside;       /* m held by this thread inside the function */
	int held_in_drain;     /* ... and inside the drain function */
};

static struct dying last_drained;

static void dying_drain(void *arg)
{
	struct dying *d = arg;

	drains++;
	d->drained_after_return = d->returned;
	d->held_in_drain = d->m && mtx_owned(d->m);
	last_drained = *d;
	free(d);
}

static void dying_fn(void *arg)
{
	struct dying *d = arg;

	d->calls++;
	d->held_inside = d->m && mtx_owned(d->m);
	callout_reset(&d->co, 5, dying_fn, d); /* re-armed, then drained */
	d->rc = callout_async_drain(&d->co, dying_drain);
	d->reset_rc = callout_reset(&d->co, 5, dying_fn, &last_drained);
	d->pending_after = callout_pending(&d->co) || callout_active(&d->co);
	d->stop_rc = callout_stop(&d->co); /* being serviced still */
	if (d->unlock)
		mtx_unlock(d->m);
	d->returned = 1;
}

static void async_drain_case(struct mtx *m, int flags)
{
	struct dying *d = calloc(1, sizeof(*d));

	assert_non_null(d);
	drains = 0;
	last_drained = (struct dying){ 0 };
	lock_errors = 0;
	if (m) {
		callout_init_mtx(&d->co, m, flags);
		d->m = m;
		d->unlock = !!(flags & CALLOUT_RETURNUNLOCKED);
		mtx_lock(m);
	} else {
		callout_init(&d->co, 1);
	}
	assert_int_equal(callout_reset(&d->co, 2, dying_fn, d), 0);
	if (m)
		mtx_unlock(m);
	step(2);
	assert_int_equal(drains, 1);
	assert_int_equal(last_drained.calls, 1);
	assert_int_equal(last_drained.rc, 0);
	assert_int_equal(last_drained.reset_rc, 0);
	assert_int_equal(last_drained.pending_after, 0);
	assert_int_equal(last_drained.stop_rc, 0);
	assert_true(last_drained.drained_after_return);
	assert_int_equal(last_drained.held_inside, m != NULL);
	assert_false(last_drained.held_in_drain);
	assert_int_equal(twheel_count(w), 0); /* neither re-arm is left */
	step(10);
	assert_int_equal(drains, 1);
	assert_int_equal(lock_errors, 0);
}

static void async_drain_from_its_own_function(void **state)
{
	struct mtx m;

	(void)state;
	async_drain_case(NULL, 0);
	/* "If the callout has an associated lock, then that lock must be held
	 * when this function is called": it is, inside the function; the
	 * drain function runs after the layer released it, or after the
	 * function did (CALLOUT_RETURNUNLOCKED). */
	mtx_init(&m);
	async_drain_case(&m, 0);
	assert_false(m.held);
	async_drain_case(&m, CALLOUT_RETURNUNLOCKED);
	assert_false(m.held);
	pthread_mutex_destroy(&m.pm);
}

/* A drain function given as NULL is callout_stop(): nothing is called, and
 * the callout can be re-armed from the function afterwards. */
static void async_drain_without_a_function_is_stop(void **state)
{
	struct softc sc;

	(void)state;
	new_sc(&sc);
	sc.action = ASYNC_DRAIN_NULL;
	sc.again = 1;
	callout_reset(&sc.co, 1, fn, &sc);
	step(1);
	assert_int_equal(sc.rc, 0);
	assert_true(callout_pending(&sc.co)); /* callout_schedule() after it */
	step(10);
	assert_int_equal(sc.calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(ticks_wrap_ten_minutes_after_binding),
		T(reset_fires_after_ticks),
		T(non_positive_ticks_mean_one),
		T(reset_cancels_and_returns_whether_pending),
		T(schedule_reuses_func_and_arg),
		T(stop_returns_one_or_minus_one),
		T(stop_while_being_serviced_is_zero),
		T(stop_unschedules_the_next_run_and_returns_zero),
		T(drain_is_stop),
		T(pending_false_and_active_kept_when_it_fires),
		T(stop_and_drain_clear_active_and_pending),
		T(manual_handler_pattern),
		T(periodic_by_rescheduling_in_the_function),
		T(reset_from_its_own_function),
		T(stop_another_and_free_itself),
		T(reset_another_callout_due_at_the_same_tick),
		T(ticks_and_times_at_their_ends),
		T(reused_after_completion),
		T(reset_sbt_maps_to_ticks),
		T(sbt_time_reached_when_it_runs),
		T(sbt_decimal_conversions),
		T(getsbinuptime_and_sbt_max),
		T(reset_sbt_whole_seconds_and_hardclock_minimum),
		T(when_and_precalc),
		T(when_precision_as_freebsd),
		T(per_cpu_forms),
		T(far_callout_is_exact),
		T(rearm_for_no_time_runs_next_tick),
		T(rearm_for_next_tick_after_a_catch_up_is_on_time),
		T(init_of_a_pending_callout_is_reported),
		T(reset_of_a_callout_never_initialised),
		T(another_thread_is_refused),
		T(mtx_held_around_the_function),
		T(returnunlocked_leaves_the_unlock_to_the_function),
		T(sharedlock_reads_rw_and_rm_and_is_ignored_for_mtx),
		T(stop_or_reset_under_the_lock_aborts_the_arm),
		T(rearm_from_the_function_then_drain),
		T(null_lock_or_bad_flags_cannot_be_armed),
		T(released_by_another_thread_first),
		T(async_drain_of_a_callout_not_running),
		T(async_drain_from_its_own_function),
		T(async_drain_without_a_function_is_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
