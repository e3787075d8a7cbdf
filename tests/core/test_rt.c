/*
 * test_rt - the real-time rules of <twheel/rt.h>: the rounding of deadlines
 * and delays (exhaustive over small ranges, at several tick lengths), the
 * advance target that never goes back, the sleep timeout in ns, ms and
 * timespec, saturation at the 64-bit edges, the injected clock, and a
 * randomised simulated event loop that checks, against an injected clock,
 * that no timer fires early, each fires once, none fires a tick late when
 * the loop sleeps as told, and the loop never wakes without work. It
 * tests the deprecated names of libtwheel 1.0 as well (they must keep
 * working until 2.0): no deprecation warnings here.
 */
#define TWHEEL_NO_DEPRECATED_WARNINGS
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <twheel/rt.h>

static const uint64_t ticks[] = { 1, 2, 3, 7, 1000, 1000000 };
#define NTICKS (sizeof(ticks) / sizeof(ticks[0]))

static uint64_t fake_ns;
static uint64_t fake_clock(void *arg)
{
	(*(int *)arg)++;
	return fake_ns;
}

static void init_defaults_and_errors(void **state)
{
	struct twheel_rt rt;
	int calls = 0;

	(void)state;
	assert_int_equal(twheel_rt_init(NULL, 5, NULL, NULL), -EINVAL);
	assert_int_equal(twheel_rt_init(&rt, 0, NULL, NULL), 0);
	assert_true(rt.tick_ns == TWHEEL_RT_DEFAULT_TICK_NS);
	assert_true(rt.clock == twheel_rt_clock_monotonic);

	assert_int_equal(twheel_rt_init(&rt, 250, fake_clock, &calls), 0);
	fake_ns = 123456789;
	assert_true(twheel_rt_now(&rt) == 123456789);
	assert_int_equal(calls, 1);
	assert_true(twheel_rt_now(NULL) == 0);
}

static void zeroed_struct_is_the_defaults(void **state)
{
	struct twheel_rt rt;

	(void)state;
	memset(&rt, 0, sizeof(rt));
	assert_true(twheel_rt_floor(&rt, 5999999) == 5);
	assert_true(twheel_rt_now(&rt) > 0); /* CLOCK_MONOTONIC, no crash */
}

static void monotonic_clock_moves_forward(void **state)
{
	uint64_t a, b;

	(void)state;
	a = twheel_rt_clock_monotonic(NULL);
	b = twheel_rt_clock_monotonic(NULL);
	assert_true(a > 0 && b >= a);
}

/* Every deadline and now in [0, 60] at every tick length. */
static void deadline_tick_exhaustive(void **state)
{
	(void)state;
	for (size_t i = 0; i < NTICKS; i++) {
		struct twheel_rt rt;
		uint64_t k = ticks[i];

		twheel_rt_init(&rt, k, NULL, NULL);
		for (uint64_t now = 0; now <= 60 * k; now += (k > 60 ? k / 7 + 1 : 1)) {
			tw_tick_t prev = 0;

			for (uint64_t d = 0; d <= 60 * k; d += (k > 60 ? k / 5 + 1 : 1)) {
				tw_tick_t t = twheel_rt_deadline_tick(&rt, d, now);
				tw_tick_t ceil_d = d / k + (d % k != 0);

				if (d > now) {
					/* exactly ceil: reached iff clock >= d */
					assert_true(t == ceil_d);
					assert_true(t * k >= d);
					assert_true(t == 0 || (t - 1) * k < d);
				} else {
					/* passed: due at the advance to floor(now) */
					assert_true(t <= now / k);
					assert_true(t <= ceil_d);
				}
				/* later deadlines never map to earlier ticks */
				assert_true(t >= prev);
				prev = t;
			}
		}
	}
}

/* A deadline in now's own tick, already passed: due now, not a tick later. */
static void passed_deadline_inside_current_tick_is_due(void **state)
{
	struct twheel_rt rt;

	(void)state;
	twheel_rt_init(&rt, 1000, NULL, NULL);
	assert_true(twheel_rt_deadline_tick(&rt, 5200, 5500) == 5);
	assert_true(twheel_rt_deadline_tick(&rt, 5500, 5500) == 5);
	assert_true(twheel_rt_deadline_tick(&rt, 5501, 5500) == 6);
	assert_true(twheel_rt_deadline_tick(&rt, 0, 5500) == 0);
	assert_true(twheel_rt_delay_tick(&rt, 0, 5500) == 5);
	assert_true(twheel_rt_delay_tick(&rt, 1, 5500) == 6);
	assert_true(twheel_rt_delay_tick(&rt, 500, 5500) == 6);
	assert_true(twheel_rt_delay_tick(&rt, 501, 5500) == 7);
}

static void delay_tick_matches_deadline_tick(void **state)
{
	(void)state;
	for (size_t i = 0; i < NTICKS; i++) {
		struct twheel_rt rt;

		twheel_rt_init(&rt, ticks[i], NULL, NULL);
		for (uint64_t now = 0; now < 40; now++)
			for (uint64_t dl = 0; dl < 40; dl++)
				assert_true(twheel_rt_delay_tick(&rt, dl, now * ticks[i] / 3) ==
					    twheel_rt_deadline_tick(&rt, now * ticks[i] / 3 + dl,
								    now * ticks[i] / 3));
	}
}

static void saturation_at_64_bits(void **state)
{
	struct twheel_rt rt;

	(void)state;
	twheel_rt_init(&rt, 1, NULL, NULL);
	assert_true(twheel_rt_deadline_tick(&rt, UINT64_MAX, 0) == UINT64_MAX);
	assert_true(twheel_rt_delay_tick(&rt, UINT64_MAX, UINT64_MAX - 5) == UINT64_MAX);
	assert_true(twheel_rt_delay_tick(&rt, 10, UINT64_MAX - 5) == UINT64_MAX);
	assert_true(twheel_rt_tick_ns(&rt, UINT64_MAX - 1) == UINT64_MAX - 1);
	assert_true(twheel_rt_tick_ns(&rt, TW_TICK_MAX) == TWHEEL_RT_FOREVER);

	twheel_rt_init(&rt, 1000, NULL, NULL);
	assert_true(twheel_rt_deadline_tick(&rt, UINT64_MAX, 0) == UINT64_MAX / 1000 + 1);
	assert_true(twheel_rt_delay_tick(&rt, UINT64_MAX, 12345) == UINT64_MAX / 1000 + 1);
	assert_true(twheel_rt_tick_ns(&rt, UINT64_MAX / 1000) == UINT64_MAX / 1000 * 1000);
	assert_true(twheel_rt_tick_ns(&rt, UINT64_MAX / 1000 + 1) == TWHEEL_RT_FOREVER);

	/* the largest tick */
	twheel_rt_init(&rt, UINT64_MAX, NULL, NULL);
	assert_true(twheel_rt_floor(&rt, UINT64_MAX - 1) == 0);
	assert_true(twheel_rt_floor(&rt, UINT64_MAX) == 1);
	assert_true(twheel_rt_deadline_tick(&rt, 1, 0) == 1);
	assert_true(twheel_rt_tick_ns(&rt, 2) == TWHEEL_RT_FOREVER);
}

static void null_arguments(void **state)
{
	struct twheel_rt rt;
	struct timespec ts;
	struct twheel *w = twheel_create(0);

	(void)state;
	twheel_rt_init(&rt, 10, NULL, NULL);
	assert_true(twheel_rt_floor(NULL, 100) == 0);
	assert_true(twheel_rt_deadline_tick(NULL, 100, 0) == 0);
	assert_true(twheel_rt_delay_tick(NULL, 100, 0) == 0);
	assert_true(twheel_rt_target(NULL, w, 100) == 0);
	assert_true(twheel_rt_target(&rt, NULL, 100) == 10);
	assert_int_equal(twheel_rt_advance(NULL, w, 100), -EINVAL);
	assert_int_equal(twheel_rt_advance(&rt, NULL, 100), -EINVAL);
	assert_true(twheel_rt_tick_ns(NULL, 5) == 0);
	assert_true(twheel_rt_timeout_ns(NULL, w, 0) == 0);
	assert_true(twheel_rt_timeout_ns(&rt, NULL, 0) == TWHEEL_RT_FOREVER);
	assert_int_equal(twheel_rt_timeout_ms(NULL, w, 0), 0);
	assert_int_equal(twheel_rt_timeout_ms(&rt, NULL, 0), -1);
	assert_null(twheel_rt_timeout_ts(&rt, w, 0, NULL));
	assert_ptr_equal(twheel_rt_timeout_ts(NULL, w, 0, &ts), &ts);
	assert_true(ts.tv_sec == 0 && ts.tv_nsec == 0);
	twheel_destroy(w);
}

static int fired;
static void count_cb(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static void target_never_goes_back(void **state)
{
	struct twheel_rt rt;
	struct twheel *w = twheel_create(0);

	(void)state;
	twheel_rt_init(&rt, 1000, NULL, NULL);
	assert_true(twheel_rt_target(&rt, w, 99999) == 99);
	assert_int_equal(twheel_rt_advance(&rt, w, 100500), 0);
	assert_true(twheel_now(w) == 100);
	/* the clock steps back: the wheel stays */
	assert_true(twheel_rt_target(&rt, w, 5000) == 100);
	assert_int_equal(twheel_rt_advance(&rt, w, 5000), 0);
	assert_true(twheel_now(w) == 100);
	twheel_destroy(w);
}

/*
 * twheel_rt_place() arms each parked timer at its delay from the reading
 * it is given, with twheel_rt_expiry()'s rules (a delay of 0 is due; after
 * a step back behind the wheel, after the wheel's tick); twheel_rt_advance()
 * places before it advances; the wait is 0 while a timer is parked.
 */
static void place_counts_delays_from_the_reading(void **state)
{
	struct twheel_rt rt;
	struct twheel *w = twheel_create(100);
	struct tw_timer t[4];

	(void)state;
	twheel_rt_init(&rt, 1000, NULL, NULL);
	for (int i = 0; i < 4; i++)
		tw_timer_init(&t[i], count_cb);
	assert_int_equal(twheel_park(w, &t[0], 2500), 0);
	assert_int_equal(twheel_park(w, &t[1], 0), 0);
	assert_int_equal(twheel_park(w, &t[2], UINT64_MAX), 0);
	assert_true(twheel_rt_timeout_ns(&rt, w, 100000) == 0);
	assert_int_equal(twheel_rt_place(&rt, w, 100200), 3);
	assert_true(tw_timer_expires(&t[0]) == 103); /* ceil(102700 / 1000) */
	assert_true(tw_timer_expires(&t[1]) <= 100); /* due */
	assert_true(tw_timer_expires(&t[2]) == twheel_rt_expiry(&rt, w, UINT64_MAX, 100200));
	assert_int_equal(twheel_rt_place(&rt, w, 100200), 0);
	assert_int_equal(twheel_rt_place(NULL, w, 0), -EINVAL);
	assert_int_equal(twheel_rt_place(&rt, NULL, 0), -EINVAL);
	fired = 0;
	assert_int_equal(twheel_rt_advance(&rt, w, 102999), 1);
	/* parked, then the clock steps back behind the wheel: after its tick */
	assert_int_equal(twheel_park(w, &t[3], 500), 0);
	assert_int_equal(twheel_rt_advance(&rt, w, 50000), 0);
	assert_true(tw_timer_expires(&t[3]) == 103);
	assert_int_equal(twheel_rt_advance(&rt, w, 103000), 2);
	assert_int_equal(fired, 3);
	twheel_del(w, &t[2]);
	twheel_destroy(w);
}

static void timeout_ns_cases(void **state)
{
	struct twheel_rt rt;
	struct twheel *w = twheel_create(0);
	struct tw_timer a, b;

	(void)state;
	tw_timer_init(&a, count_cb);
	tw_timer_init(&b, count_cb);
	twheel_rt_init(&rt, 1000, NULL, NULL);

	assert_true(twheel_rt_timeout_ns(&rt, w, 0) == TWHEEL_RT_FOREVER);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), -1);

	/* a timer 2.5 ticks from now -> wait to the boundary of tick 3 */
	assert_int_equal(twheel_add(w, &a, twheel_rt_delay_tick(&rt, 2500, 0)), 0);
	assert_true(a.expires == 3);
	assert_true(twheel_rt_timeout_ns(&rt, w, 0) == 3000);
	assert_true(twheel_rt_timeout_ns(&rt, w, 2999) == 1);
	assert_true(twheel_rt_timeout_ns(&rt, w, 3000) == 0);
	assert_true(twheel_rt_timeout_ns(&rt, w, 999999) == 0);

	/* the clock stepped back after the wheel went past: due still means 0 */
	fired = 0;
	assert_int_equal(twheel_rt_advance(&rt, w, 10000), 1);
	assert_int_equal(twheel_add(w, &b, twheel_rt_deadline_tick(&rt, 9000, 10000)), 0);
	assert_true(twheel_rt_timeout_ns(&rt, w, 500) == 0);
	assert_int_equal(twheel_rt_advance(&rt, w, 500), 1);
	assert_int_equal(fired, 2);

	/* a far timer is waited for exactly; beyond 64 bits, forever */
	assert_int_equal(twheel_add(w, &a, UINT64_MAX / 1000 + 1), 0);
	{
		/* whatever cascade tick comes first, waiting for it is never 0 */
		uint64_t ns = twheel_rt_timeout_ns(&rt, w, 10000);
		tw_tick_t nx = twheel_next_expiry(w);

		if (nx <= UINT64_MAX / 1000)
			assert_true(ns == nx * 1000 - 10000);
		else
			assert_true(ns == TWHEEL_RT_FOREVER);
	}
	twheel_del(w, &a);
	twheel_destroy(w);

	/* a wheel whose time is beyond the 64-bit clock: only FOREVER waits */
	w = twheel_create(UINT64_MAX / 1000 + 1);
	assert_int_equal(twheel_add(w, &a, UINT64_MAX / 1000 + 5), 0);
	assert_true(twheel_rt_timeout_ns(&rt, w, UINT64_MAX) == TWHEEL_RT_FOREVER);
	twheel_del(w, &a);
	twheel_destroy(w);
}

static void timeout_ms_and_timespec_round_up(void **state)
{
	struct twheel_rt rt;
	struct twheel *w = twheel_create(0);
	struct tw_timer a;
	struct timespec ts;

	(void)state;
	tw_timer_init(&a, count_cb);
	twheel_rt_init(&rt, 1, NULL, NULL); /* 1 ns ticks: the wait is exact */

	assert_int_equal(twheel_add(w, &a, 1), 0);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), 1);
	assert_ptr_equal(twheel_rt_timeout_ts(&rt, w, 0, &ts), &ts);
	assert_true(ts.tv_sec == 0 && ts.tv_nsec == 1);

	twheel_del(w, &a);
	twheel_destroy(w);

	/* 10 us ticks, expiries on the first level (no cascade tick first) */
	twheel_rt_init(&rt, 10000, NULL, NULL);
	w = twheel_create(0);
	twheel_add(w, &a, 100);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), 1);
	twheel_mod(w, &a, 101);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), 2);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 10001), 1);
	twheel_del(w, &a);
	twheel_destroy(w);

	/* 3 s + 7 ns exactly, to the nanosecond */
	twheel_rt_init(&rt, 1, NULL, NULL);
	w = twheel_create(UINT64_C(3000000000));
	twheel_add(w, &a, UINT64_C(3000000100));
	assert_ptr_equal(twheel_rt_timeout_ts(&rt, w, 93, &ts), &ts);
	assert_true(ts.tv_sec == 3 && ts.tv_nsec == 7);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 93), 3001);

	/* more than INT_MAX ms: clamped, never negative */
	twheel_mod(w, &a, UINT64_C(1) << 62);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), INT_MAX);

	/* due: zero everywhere */
	twheel_mod(w, &a, 0);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), 0);
	assert_ptr_equal(twheel_rt_timeout_ts(&rt, w, 0, &ts), &ts);
	assert_true(ts.tv_sec == 0 && ts.tv_nsec == 0);

	/* empty: forever */
	twheel_del(w, &a);
	assert_null(twheel_rt_timeout_ts(&rt, w, 0, &ts));
	twheel_destroy(w);
}

/*
 * The top of the 64-bit range is a time like any other: a timer due on
 * TW_TICK_MAX means "do not sleep", and a tick boundary at exactly
 * UINT64_MAX ns is waited for (UINT64_MAX - 1 at most), not "forever".
 */
static void tick_max_is_not_a_sentinel(void **state)
{
	struct twheel_rt rt;
	struct twheel *w = twheel_create(TW_TICK_MAX);
	struct tw_timer a;
	struct timespec ts;

	(void)state;
	tw_timer_init(&a, count_cb);
	twheel_rt_init(&rt, 1, NULL, NULL);
	assert_int_equal(twheel_add(w, &a, TW_TICK_MAX), 0);
	assert_true(twheel_rt_timeout_ns(&rt, w, UINT64_MAX) == 0);
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, UINT64_MAX), 0);
	assert_ptr_equal(twheel_rt_timeout_ts(&rt, w, UINT64_MAX, &ts), &ts);
	/* even if the clock stepped back far behind the wheel */
	assert_true(twheel_rt_timeout_ns(&rt, w, 5) == 0);
	fired = 0;
	assert_int_equal(twheel_rt_advance(&rt, w, UINT64_MAX), 1);
	assert_int_equal(fired, 1);
	assert_true(twheel_rt_timeout_ns(&rt, w, UINT64_MAX) == TWHEEL_RT_FOREVER);
	twheel_destroy(w);

	/* the next tick with work begins at UINT64_MAX ns exactly */
	w = twheel_create(TW_TICK_MAX - 3);
	assert_int_equal(twheel_add(w, &a, TW_TICK_MAX), 0);
	assert_true(twheel_next_expiry(w) == TW_TICK_MAX);
	assert_true(twheel_rt_timeout_ns(&rt, w, UINT64_MAX - 7) == 7);
	assert_true(twheel_rt_timeout_ns(&rt, w, 1) == UINT64_MAX - 1);
	/* from 0 the wait is UINT64_MAX ns: one less, never the sentinel */
	assert_true(twheel_rt_timeout_ns(&rt, w, 0) == UINT64_MAX - 1);
	assert_non_null(twheel_rt_timeout_ts(&rt, w, 0, &ts));
	assert_int_equal(twheel_rt_timeout_ms(&rt, w, 0), INT_MAX);
	/* 3 ns ticks: the same tick begins beyond 64 bits: forever */
	twheel_rt_init(&rt, 3, NULL, NULL);
	assert_true(twheel_rt_timeout_ns(&rt, w, 0) == TWHEEL_RT_FOREVER);
	twheel_del(w, &a);
	twheel_destroy(w);
}

/*
 * twheel_target() is the tick the running advance goes to. From a callback
 * of an advance to tick 115 run at tick 111, with the clock stepped back to
 * 75 ms, a deadline 5 ms ahead must land after 115 (twheel_now() says 111:
 * a tick from 112 to 115 would fire in this same advance, 35 ms early).
 */
static struct twheel_rt cb_rt;
static tw_tick_t cb_now, cb_target, cb_expiry;
static struct tw_timer cb_late;

static struct twheel *cb_wheel;

static void arm_from_callback_cb(struct tw_timer *t)
{
	(void)t;
	cb_now = twheel_now(cb_wheel);
	cb_target = twheel_target(cb_wheel);
	cb_expiry = twheel_rt_expiry(&cb_rt, cb_wheel, 80 * 1000000, 75 * 1000000);
	assert_int_equal(twheel_add(cb_wheel, &cb_late, cb_expiry), 0);
	fired++;
}

static void expiry_from_callback_is_after_the_advance(void **state)
{
	struct tw_timer a;

	(void)state;
	cb_wheel = twheel_create(100);
	assert_non_null(cb_wheel);
	assert_true(twheel_target(cb_wheel) == 100);
	assert_true(twheel_target(NULL) == 0);
	twheel_rt_init(&cb_rt, 1000000, NULL, NULL);
	tw_timer_init(&a, arm_from_callback_cb);
	tw_timer_init(&cb_late, count_cb);
	assert_int_equal(twheel_add(cb_wheel, &a, 111), 0);
	fired = 0;
	assert_int_equal(twheel_advance(cb_wheel, 115), 1);
	assert_true(cb_now == 111);
	assert_true(cb_target == 115);
	assert_true(cb_expiry == 116);
	assert_int_equal(fired, 1); /* cb_late did not run in that advance */
	assert_true(twheel_target(cb_wheel) == 115);
	assert_int_equal(twheel_advance(cb_wheel, 115), 0);
	assert_int_equal(twheel_advance(cb_wheel, 116), 1);
	twheel_destroy(cb_wheel);
}

/* After the clock stepped back behind the wheel: a deadline ahead of the
 * clock goes after the wheel's time, never on a tick the wheel has reached. */
static void expiry_after_clock_steps_back(void **state)
{
	struct twheel_rt rt;
	struct twheel *w = twheel_create(10); /* the wheel saw 10 ms */

	(void)state;
	assert_non_null(w);
	twheel_rt_init(&rt, 1000000, NULL, NULL);
	/* the clock reads 3 ms: 5 ms is ahead of it, but tick 5 has passed */
	assert_int_equal(twheel_rt_deadline_tick(&rt, 5000000, 3000000), 5);
	assert_int_equal(twheel_rt_expiry(&rt, w, 5000000, 3000000), 11);
	assert_int_equal(twheel_rt_expiry(&rt, w, 10000000, 3000000), 11);
	assert_int_equal(twheel_rt_expiry(&rt, w, 10000001, 3000000), 11);
	assert_int_equal(twheel_rt_expiry(&rt, w, 11000001, 3000000), 12);
	/* passed deadlines stay due, in deadline order */
	assert_int_equal(twheel_rt_expiry(&rt, w, 3000000, 3000000), 3);
	assert_int_equal(twheel_rt_expiry(&rt, w, 2000000, 3000000), 2);
	/* no step back: the same as twheel_rt_deadline_tick() */
	for (uint64_t d = 9000000; d < 14000000; d += 250000)
		assert_int_equal(twheel_rt_expiry(&rt, w, d, 10000000),
				 twheel_rt_deadline_tick(&rt, d, 10000000));
	/* no wheel, no rt */
	assert_int_equal(twheel_rt_expiry(&rt, NULL, 5000000, 3000000), 5);
	assert_int_equal(twheel_rt_expiry(NULL, w, 5000000, 3000000), 0);
	twheel_destroy(w);
	/* a wheel at the end of time saturates */
	w = twheel_create(TW_TICK_MAX);
	assert_non_null(w);
	assert_true(twheel_rt_expiry(&rt, w, 5000000, 3000000) == TW_TICK_MAX);
	twheel_destroy(w);
}

/* ---- a simulated event loop on an injected clock ----------------------------- */

struct sim_timer {
	struct tw_timer t;
	uint64_t deadline; /* clock ns */
	uint64_t armed_at;
	uint64_t armed_high; /* the furthest clock reading before it was armed */
	int fired;
};

static uint64_t sim_now, sim_high, sim_tick, sim_bad_early, sim_bad_late;
static long sim_fires;

static void sim_cb(struct tw_timer *t)
{
	struct sim_timer *s = tw_container_of(t, struct sim_timer, t);

	s->fired++;
	sim_fires++;
	if (sim_now < s->deadline)
		sim_bad_early++;
	/* sleeping exactly as told: at most one tick after the deadline, or
	 * at the first advance after arming when it was already due. Armed
	 * after the clock stepped back behind the wheel: by one tick after
	 * the furthest reading before (the wheel is held there). */
	if (s->deadline > s->armed_at &&
	    (s->deadline > s->armed_high ? sim_high >= s->deadline + sim_tick
					 : sim_high > s->armed_high + sim_tick))
		sim_bad_late++;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

#define SIM_N 2000

static void simulated_loop_never_early_never_spins(void **state)
{
	static struct sim_timer tm[SIM_N];
	const uint64_t sim_ticks[] = { 1, 3, 1000, 1000000 };

	(void)state;
	for (size_t k = 0; k < sizeof(sim_ticks) / sizeof(sim_ticks[0]); k++) {
		struct twheel_rt rt;
		int calls = 0;
		struct twheel *w;
		long idle_wakes = 0, wakes = 0;

		sim_tick = sim_ticks[k];
		twheel_rt_init(&rt, sim_tick, fake_clock, &calls);
		fake_ns = sim_now = sim_high = 1000003 * sim_tick + 17;
		w = twheel_create(twheel_rt_floor(&rt, sim_now));
		sim_fires = 0;
		sim_bad_early = sim_bad_late = 0;
		memset(tm, 0, sizeof(tm));

		for (int i = 0; i < SIM_N; i++) {
			uint64_t now = twheel_rt_now(&rt);
			/* delays from 0 to ~300 ticks, some of them sub-tick */
			uint64_t delay = rnd() % (300 * sim_tick + 1);

			tw_timer_init(&tm[i].t, sim_cb);
			tm[i].armed_at = now;
			tm[i].deadline = now + delay;
			assert_int_equal(twheel_add(w, &tm[i].t, twheel_rt_delay_tick(&rt, delay, now)), 0);
			/* a loop turn between arms: a little time passes, never
			 * more than the wait the rules allow */
			uint64_t step = rnd() % (sim_tick / 2 + 1);
			uint64_t to = twheel_rt_timeout_ns(&rt, w, now);

			fake_ns = sim_now = sim_high = now + (to < step ? to : step);
			assert_true(twheel_rt_advance(&rt, w, twheel_rt_now(&rt)) >= 0);
		}
		/* the loop: sleep exactly as long as told, then advance */
		while (twheel_count(w)) {
			uint64_t to = twheel_rt_timeout_ns(&rt, w, sim_now);
			long n;

			assert_true(to != TWHEEL_RT_FOREVER);
			fake_ns = sim_now = sim_high = sim_now + to;
			n = twheel_rt_advance(&rt, w, twheel_rt_now(&rt));
			assert_true(n >= 0);
			wakes++;
			if (n == 0)
				idle_wakes++;
			/* a wake without work may only be a cascade tick */
			assert_true(idle_wakes <= wakes);
			assert_true(wakes < 10 * SIM_N);
		}
		assert_true(twheel_rt_timeout_ns(&rt, w, sim_now) == TWHEEL_RT_FOREVER);
		assert_int_equal(sim_fires, SIM_N);
		for (int i = 0; i < SIM_N; i++)
			assert_int_equal(tm[i].fired, 1);
		assert_true(sim_bad_early == 0);
		assert_true(sim_bad_late == 0);
		/* cascades give a few wakes without work, never a spin */
		assert_true(idle_wakes <= wakes / 2 + TWHEEL_LEVELS);
		twheel_destroy(w);
	}
}

/* Clock steps back and forth at random, timers armed with
 * twheel_rt_expiry(): never early by the clock's current reading, every
 * timer once. */
static void simulated_clock_steps_back(void **state)
{
	static struct sim_timer tm[SIM_N];
	struct twheel_rt rt;
	int calls = 0;
	struct twheel *w;

	(void)state;
	sim_tick = 1000;
	twheel_rt_init(&rt, sim_tick, fake_clock, &calls);
	fake_ns = sim_now = sim_high = UINT64_C(5000000000);
	w = twheel_create(twheel_rt_floor(&rt, sim_now));
	sim_fires = 0;
	sim_bad_early = sim_bad_late = 0;
	memset(tm, 0, sizeof(tm));

	for (int i = 0; i < SIM_N; i++) {
		uint64_t now = twheel_rt_now(&rt);
		uint64_t delay = rnd() % 100000;

		tw_timer_init(&tm[i].t, sim_cb);
		tm[i].armed_at = now;
		tm[i].armed_high = sim_high;
		tm[i].deadline = now + delay;
		assert_int_equal(twheel_add(w, &tm[i].t, twheel_rt_expiry(&rt, w, now + delay, now)), 0);
		if (rnd() % 4 == 0) {
			uint64_t to = twheel_rt_timeout_ns(&rt, w, now);

			if (rnd() % 3 == 0)
				sim_now = now - rnd() % 50000; /* step back */
			else
				sim_now = now + (to == TWHEEL_RT_FOREVER ? 1 : to);
			fake_ns = sim_now;
			if (sim_now > sim_high)
				sim_high = sim_now;
			assert_true(twheel_rt_advance(&rt, w, twheel_rt_now(&rt)) >= 0);
			assert_true(twheel_now(w) == sim_high / sim_tick);
		}
	}
	while (twheel_count(w)) {
		uint64_t to = twheel_rt_timeout_ns(&rt, w, sim_now);

		assert_true(to != TWHEEL_RT_FOREVER);
		fake_ns = sim_now = sim_now + to;
		if (sim_now > sim_high)
			sim_high = sim_now;
		assert_true(twheel_rt_advance(&rt, w, twheel_rt_now(&rt)) >= 0);
	}
	assert_true(sim_bad_early == 0);
	assert_int_equal(sim_fires, SIM_N);
	for (int i = 0; i < SIM_N; i++)
		assert_int_equal(tm[i].fired, 1);
	twheel_destroy(w);
}

/*
 * The rules at the edges: ticks of 1 ns, of odd and huge lengths (up to
 * UINT64_MAX ns), a clock that starts at 0, anywhere, or just below
 * UINT64_MAX and jumps, stands still and steps back; timers armed by
 * deadline (twheel_rt_expiry()) and by delay (parked, placed by
 * twheel_rt_place() or twheel_rt_advance()), some cancelled. None fires
 * before the clock reads its deadline (one that had come when it was
 * armed or placed is due at once; so is every timer armed on a wheel at
 * TW_TICK_MAX, twheel_rt_expiry()'s one limit), and a loop that sleeps as
 * told runs every timer but those beyond any 64-bit clock reading.
 */
struct edge_timer {
	struct tw_timer t;
	uint64_t deadline; /* 0: had come */
	uint64_t delay;
	bool parked;
	int fired;
};

#define EDGE_N 64
static struct edge_timer edge[EDGE_N];
static long edge_early;

static void edge_cb(struct tw_timer *t)
{
	struct edge_timer *x = tw_container_of(t, struct edge_timer, t);

	x->fired++;
	edge_early += fake_ns < x->deadline;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* The deadline a timer armed (or placed) at @now for @delay must wait for. */
static uint64_t edge_deadline(const struct twheel *w, uint64_t now, uint64_t delay)
{
	uint64_t d = sat_add(now, delay);

	return d > now && twheel_now(w) < TW_TICK_MAX ? d : 0;
}

static void edge_place(const struct twheel_rt *rt, struct twheel *w)
{
	for (int i = 0; i < EDGE_N; i++) {
		if (edge[i].parked) {
			edge[i].parked = false;
			edge[i].deadline = edge_deadline(w, fake_ns, edge[i].delay);
		}
	}
	assert_true(twheel_rt_place(rt, w, fake_ns) >= 0);
}

static void edge_drop(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
}

static void simulated_edges_of_time(void **state)
{
	const uint64_t edge_ticks[] = { 1, 3, (UINT64_C(1) << 40) + 1, UINT64_MAX / 3,
					UINT64_MAX - 1, UINT64_MAX };
	int calls = 0;

	(void)state;
	for (unsigned run = 0; run < 3 * 6; run++) {
		uint64_t tick = edge_ticks[run % 6];
		struct twheel_rt rt;
		struct twheel *w;

		twheel_rt_init(&rt, tick, fake_clock, &calls);
		fake_ns = run / 6 == 0 ? 0 : run / 6 == 1 ? rnd() >> (rnd() % 64)
						     : UINT64_MAX - (rnd() >> (rnd() % 64));
		w = twheel_create(twheel_rt_floor(&rt, fake_ns));
		memset(edge, 0, sizeof(edge));
		edge_early = 0;
		for (int i = 0; i < EDGE_N; i++)
			tw_timer_init(&edge[i].t, edge_cb);
		for (int step = 0; step < 600; step++) {
			struct edge_timer *x = &edge[rnd() % EDGE_N];
			uint64_t r = rnd() % 10, delay = rnd() >> (rnd() % 64), to;

			if (r < 4 && !tw_timer_pending(&x->t)) {
				x->delay = delay;
				x->parked = r & 1;
				if (x->parked) {
					assert_int_equal(twheel_park(w, &x->t, delay), 0);
				} else {
					x->deadline = edge_deadline(w, fake_ns, delay);
					assert_int_equal(twheel_add(w, &x->t, twheel_rt_expiry(&rt, w, sat_add(fake_ns, delay), fake_ns)), 0);
				}
			} else if (r < 5) {
				twheel_del(w, &x->t);
				x->parked = false;
			} else if (r < 8) { /* sleep as told, or part of it, or jump */
				to = twheel_rt_timeout_ns(&rt, w, fake_ns);
				fake_ns = sat_add(fake_ns, to == TWHEEL_RT_FOREVER ? delay : rnd() % 3 ? to : to / 2);
				edge_place(&rt, w);
				assert_true(twheel_rt_advance(&rt, w, fake_ns) >= 0);
			} else if (r < 9) { /* step back */
				fake_ns = fake_ns > delay ? fake_ns - delay : 0;
				edge_place(&rt, w);
				assert_true(twheel_rt_advance(&rt, w, fake_ns) >= 0);
			} else {
				edge_place(&rt, w);
			}
			assert_int_equal(twheel_check(w, NULL, 0), 0);
		}
		/* sleep as told until nothing is left to wait for */
		edge_place(&rt, w);
		for (int i = 0; i < 1000 && twheel_rt_timeout_ns(&rt, w, fake_ns) != TWHEEL_RT_FOREVER; i++) {
			fake_ns = sat_add(fake_ns, twheel_rt_timeout_ns(&rt, w, fake_ns));
			assert_true(twheel_rt_advance(&rt, w, fake_ns) >= 0);
		}
		assert_int_equal(twheel_rt_timeout_ns(&rt, w, fake_ns), TWHEEL_RT_FOREVER);
		/* what is left waits for a tick whose boundary is beyond 2^64 ns */
		assert_true(!twheel_count(w) || twheel_next_expiry(w) > UINT64_MAX / tick);
		assert_int_equal(edge_early, 0);
		twheel_drain(w, edge_drop, NULL);
		twheel_destroy(w);
	}
}

/* ---- twheel_rt_now_upper() ------------------------------------------------ */

static uint64_t fixed_clock(void *arg)
{
	return *(const uint64_t *)arg;
}

/* With any clock but the default it is that clock's reading. */
static void now_upper_injected_clock_is_read(void **state)
{
	(void)state;
	struct twheel_rt rt;
	uint64_t t = 123456789;

	twheel_rt_init(&rt, 0, fixed_clock, &t);
	assert_int_equal(twheel_rt_now_upper(&rt), t);
	t = 5;
	assert_int_equal(twheel_rt_now_upper(&rt), 5);
	assert_int_equal(twheel_rt_now_upper(NULL), 0);
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = twheel_rt_clock_monotonic(NULL) + ns;
	while (twheel_rt_clock_monotonic(NULL) < end)
		;
}

/*
 * Between a reading before and one after: never behind the first (a delay
 * counted from it is never early), at most tick / 16 after the second.
 * Pauses around the reuse window make it reuse, then read afresh; a CPU
 * change between calls (every 64th) crosses time-stamp counters.
 */
static void *bound_holds(void *arg)
{
	const uint64_t tick = *(const uint64_t *)arg, slack = tick / 16;
	struct twheel_rt rt;
	uint64_t x = tick;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	twheel_rt_init(&rt, tick, NULL, NULL);
	for (int i = 0; i < 40000; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		if (i % 64 == 0 && ncpu > 1) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)((x >> 40) % (uint64_t)ncpu), &set);
			sched_setaffinity(0, sizeof(set), &set); /* may be refused: fine */
		}
		if ((x >> 33) % 4 == 0)
			spin_ns((x >> 20) % (slack / 2 + 1)); /* around tick / 64 .. tick / 32 */
		uint64_t before = twheel_rt_clock_monotonic(NULL);
		uint64_t upper = twheel_rt_now_upper(&rt);
		uint64_t after = twheel_rt_clock_monotonic(NULL);
		if (upper < before || upper > after + slack) {
			fprintf(stderr, "tick %llu: %llu not in [%llu, %llu + %llu]\n",
				(unsigned long long)tick, (unsigned long long)upper,
				(unsigned long long)before, (unsigned long long)after,
				(unsigned long long)slack);
			return (void *)1;
		}
	}
	return NULL;
}

static void now_upper_never_behind_the_clock(void **state)
{
	(void)state;
	/* 10 us: always a reading; 100 us, 1 ms: reuse; on two threads at once */
	static const uint64_t ticks[] = { 10000, 100000, 1000000, 100000 };
	pthread_t th[4];
	void *bad;

	for (int k = 0; k < 4; k++)
		assert_int_equal(pthread_create(&th[k], NULL, bound_holds, (void *)&ticks[k]), 0);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(pthread_join(th[k], &bad), 0);
		assert_null(bad);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init_defaults_and_errors),
		cmocka_unit_test(zeroed_struct_is_the_defaults),
		cmocka_unit_test(monotonic_clock_moves_forward),
		cmocka_unit_test(deadline_tick_exhaustive),
		cmocka_unit_test(passed_deadline_inside_current_tick_is_due),
		cmocka_unit_test(delay_tick_matches_deadline_tick),
		cmocka_unit_test(saturation_at_64_bits),
		cmocka_unit_test(null_arguments),
		cmocka_unit_test(target_never_goes_back),
		cmocka_unit_test(place_counts_delays_from_the_reading),
		cmocka_unit_test(timeout_ns_cases),
		cmocka_unit_test(timeout_ms_and_timespec_round_up),
		cmocka_unit_test(simulated_loop_never_early_never_spins),
		cmocka_unit_test(expiry_after_clock_steps_back),
		cmocka_unit_test(tick_max_is_not_a_sentinel),
		cmocka_unit_test(expiry_from_callback_is_after_the_advance),
		cmocka_unit_test(simulated_clock_steps_back),
		cmocka_unit_test(simulated_edges_of_time),
		cmocka_unit_test(now_upper_injected_clock_is_read),
		cmocka_unit_test(now_upper_never_behind_the_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
