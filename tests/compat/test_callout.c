/*
 * test_callout - <twheel/compat/callout.h> against the promises of
 * FreeBSD's callout(9), each quoted (shortly) beside its test, on a plain
 * wheel that the test advances tick by tick.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

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

enum { NOTHING, STOP_SELF, RESET_THEN_STOP, DRAIN_SELF, RESET_SELF, STOP_OTHER, FREE_SELF };

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
	assert_int_equal(pr, SBT_1MS);
	assert_int_equal(at, sbinuptime() + 5 * tick_sbt);
	callout_reset_sbt(&sc.co, at, pr, fn, &sc, C_PRECALC);
	step(4);
	assert_int_equal(sc.calls, 0);
	step(1);
	assert_int_equal(sc.calls, 1);
	assert_int_equal(ticks_since(t0, sc.at), 5);
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
	int stop, reset, unbound;
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
	twheel_compat_unbind();
	twheel_destroy(w2);
	return NULL;
}

/* Another thread: -EXDEV, nothing changed; an unbound thread: -ENXIO. */
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
	assert_true(callout_active(&sc.co) && callout_pending(&sc.co));
	step(5);
	assert_int_equal(sc.calls, 1);
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
		T(reused_after_completion),
		T(reset_sbt_maps_to_ticks),
		T(reset_sbt_whole_seconds_and_hardclock_minimum),
		T(when_and_precalc),
		T(per_cpu_forms),
		T(far_callout_is_exact),
		T(another_thread_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
