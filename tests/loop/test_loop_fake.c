/* SPDX-License-Identifier: MIT */
/*
 * Loop behaviour on an injected clock: exact, deterministic checks of
 * rounding (never early), order, deferrable and periodic timers, misfire
 * policies, cancel outcomes, max_pending, posting and drain on shutdown.
 * Every iteration runs with TW_LOOP_NOWAIT: the test moves time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/compat/timer_list.h>

#include "common.h"

#define START (1000 * MS + 123) /* deliberately not on a tick boundary */

struct rec {
	struct tw_loop_timer t;
	struct fake_clock *clk;
	uint64_t fired_at[64];
	uint32_t missed[64];
	int n;
	int order;  /* global firing sequence number of the last run */
};

static int seq;

static void rec_fn(struct tw_loop_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	if (r->n < 64) {
		r->fired_at[r->n] = fake_clock_read(r->clk);
		r->missed[r->n] = t->missed;
	}
	r->n++;
	r->order = ++seq;
}

/* Arm @t @delay from now and let the loop place it before the clock moves
 * on, as a running loop does before it waits: an arm by delay counts from a
 * reading the loop takes after it, at its next iteration at the latest. */
static int add_placed(struct twheel_loop *l, struct tw_loop_timer *t, uint64_t delay)
{
	int ret = twheel_loop_add(l, t, delay);

	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	return ret;
}

/* Step the fake clock by @step up to @until, one NOWAIT iteration each,
 * after one at the clock's time (it places what was armed by delay). */
static void run_until(struct twheel_loop *l, struct fake_clock *c, uint64_t until,
		      uint64_t step)
{
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	while (fake_clock_read(c) < until) {
		fake_clock_add(c, step);
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	}
}

static void test_config_rejects_bad_ticks(void **state)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	char msg[128];

	(void)state;
	twheel_loop_config_init(&cfg);
	assert_int_equal(cfg.tick_ns, MS);
	cfg.tick_ns = 999;
	assert_int_equal(twheel_loop_create(&l, &cfg, msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "tick"));
	cfg.tick_ns = 1000000001ull;
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), -EINVAL);
	cfg.tick_ns = 1000;
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);
	assert_int_equal(twheel_loop_tick(l), 1000);
	twheel_loop_destroy(l, NULL, NULL, NULL);
	cfg.tick_ns = 1000000000ull;
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
	assert_int_equal(twheel_loop_create(NULL, NULL, NULL, 0), -EINVAL);
}

/* A NULL loop or an unknown flag: -EINVAL, and nothing is run or counted. */
static void test_run_once_rejects_bad_arguments(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	struct twheel_loop_stats st;
	struct rec r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.clk = &c;
	assert_int_equal(tw_loop_timer_init(&r.t, rec_fn, 0), 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 0), 0); /* due */
	assert_int_equal(twheel_loop_run_once(NULL, 0), -EINVAL);
	assert_int_equal(twheel_loop_run_once(NULL, TW_LOOP_NOWAIT), -EINVAL);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT << 1), -EINVAL);
	assert_int_equal(twheel_loop_run_once(l, ~0u), -EINVAL);
	assert_int_equal(twheel_loop_run(NULL), -EINVAL);
	assert_int_equal(twheel_loop_post(l, NULL), -EINVAL);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.iterations, 0);
	assert_int_equal(r.n, 0);
	assert_true(twheel_loop_pending(l, &r.t));
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r.n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Delays that are not multiples of the tick round up: never early, and at
 * most one tick late, for every delay from 1 ns to a few ticks. */
static void test_never_early_rounds_up(void **state)
{
	static const uint64_t delays[] = { 1, 999, 1000, MS - 1, MS, MS + 1,
					   2 * MS - 7, 3 * MS, 17 * MS + 3, 64 * MS + 1,
					   4097 * MS + 5 };
	struct rec r[sizeof(delays) / sizeof(delays[0])];
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	size_t i, n = sizeof(delays) / sizeof(delays[0]);

	(void)state;
	memset(r, 0, sizeof(r));
	for (i = 0; i < n; i++) {
		r[i].clk = &c;
		assert_int_equal(tw_loop_timer_init(&r[i].t, rec_fn, 0), 0);
		assert_int_equal(twheel_loop_add(l, &r[i].t, delays[i]), 0);
		assert_int_equal(r[i].t.deadline, START + delays[i]);
	}
	/* 10 us steps: the first iteration at or after a deadline's tick fires it */
	run_until(l, &c, START + 4200 * MS, 10 * US);
	for (i = 0; i < n; i++) {
		uint64_t dl = START + delays[i];

		assert_int_equal(r[i].n, 1);
		assert_true(r[i].fired_at[0] >= dl);              /* never early */
		assert_true(r[i].fired_at[0] < dl + MS + 10 * US); /* <= 1 tick + step */
	}
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A deadline that has come when it is armed (at or before twheel_loop_now(),
 * confirmed by a fresh reading) fires in the next iteration even if the
 * clock steps back before it: the loop's wheel is at that tick already,
 * and it does not hold back a tick it has reached. One armed after the
 * step back, ahead of the clock, waits for the clock.
 */
static void test_come_deadline_fires_after_a_step_back(void **state)
{
	struct rec r[2];
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	memset(r, 0, sizeof(r));
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	for (int i = 0; i < 2; i++) {
		r[i].clk = &c;
		assert_int_equal(tw_loop_timer_init(&r[i].t, rec_fn, 0), 0);
	}
	assert_int_equal(twheel_loop_add_at(l, &r[0].t, START - 10 * MS), 0); /* has come */
	fake_clock_set(&c, START - 30 * MS); /* the clock steps back */
	assert_int_equal(twheel_loop_add_at(l, &r[1].t, START - 5 * MS), 0); /* ahead now */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r[0].n, 1);
	assert_true(r[0].fired_at[0] == START - 30 * MS); /* before its deadline */
	assert_int_equal(r[1].n, 0);
	run_until(l, &c, START + 2 * MS, 100 * US);
	assert_int_equal(r[1].n, 1);
	assert_true(r[1].fired_at[0] >= START - 5 * MS); /* never early */
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A microsecond tick gives microsecond resolution. */
static void test_fine_tick(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = US;
	l = fake_loop(&c, START, &cfg);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 2500), 0);
	run_until(l, &c, START + 2 * US, 100);
	assert_int_equal(r.n, 0);
	run_until(l, &c, START + 5 * US, 100);
	assert_int_equal(r.n, 1);
	assert_true(r.fired_at[0] >= START + 2500);
	assert_true(r.fired_at[0] <= START + 2500 + US + 100);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Timers that come due in one iteration fire in deadline order. */
static void test_firing_order(void **state)
{
	struct rec r[40];
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	int i;

	(void)state;
	memset(r, 0, sizeof(r));
	seq = 0;
	for (i = 0; i < 40; i++) {
		r[i].clk = &c;
		tw_loop_timer_init(&r[i].t, rec_fn, 0);
		/* scrambled deadlines 1..40 ms, each on its own tick */
		assert_int_equal(twheel_loop_add_at(l, &r[i].t, START + (uint64_t)((i * 17) % 40 + 1) * MS), 0);
	}
	fake_clock_add(&c, 100 * MS); /* all due in one iteration */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 40);
	for (i = 0; i < 40; i++)
		for (int j = 0; j < 40; j++)
			if (r[i].t.deadline < r[j].t.deadline)
				assert_true(r[i].order < r[j].order);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

static void test_add_mod_del(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_del(l, &r.t), 0);
	assert_int_equal(twheel_loop_mod(l, &r.t, 5 * MS), 0); /* was idle */
	assert_int_equal(twheel_loop_add(l, &r.t, 5 * MS), -EBUSY);
	assert_true(twheel_loop_pending(l, &r.t));
	assert_true(tw_loop_timer_busy(&r.t));
	assert_int_equal(twheel_loop_count(l), 1);
	assert_int_equal(twheel_loop_mod(l, &r.t, 20 * MS), 1);
	run_until(l, &c, START + 15 * MS, MS);
	assert_int_equal(r.n, 0);
	assert_int_equal(twheel_loop_del(l, &r.t), 1);
	assert_false(tw_loop_timer_busy(&r.t));
	assert_int_equal(twheel_loop_del(l, &r.t), 0);
	run_until(l, &c, START + 40 * MS, MS);
	assert_int_equal(r.n, 0);
	/* a deadline in the past fires at the next iteration */
	assert_int_equal(twheel_loop_add_at(l, &r.t, START), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r.n, 1);
	assert_false(tw_loop_timer_busy(&r.t));
	/* errors */
	assert_int_equal(twheel_loop_add(NULL, &r.t, 1), -EINVAL);
	assert_int_equal(twheel_loop_add(l, NULL, 1), -EINVAL);
	assert_int_equal(tw_loop_timer_init(&r.t, NULL, 0), -EINVAL);
	assert_int_equal(tw_loop_timer_init(&r.t, rec_fn, 0x80), -EINVAL);
	assert_int_equal(tw_loop_timer_init(&r.t, rec_fn, TW_LOOP_EXECUTOR), 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 1), -EINVAL); /* no executor */
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A deferrable timer does not shorten the wait; it runs on the next
 * iteration that happens for another reason. */
static void test_deferrable(void **state)
{
	struct fake_clock c;
	struct rec d = { .clk = &c }, n = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	tw_loop_timer_init(&d.t, rec_fn, TW_LOOP_DEFERRABLE);
	tw_loop_timer_init(&n.t, rec_fn, 0);
	assert_int_equal(add_placed(l, &d.t, 5 * MS), 0);
	assert_int_equal(twheel_loop_count(l), 1);
	/* Only the normal wheel decides the wait, so the loop sees nothing to
	 * wake for: the deferrable one runs when the loop runs anyway. */
	fake_clock_add(&c, 10 * MS);
	assert_int_equal(d.n, 0);
	assert_int_equal(twheel_loop_add(l, &n.t, 20 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(d.n, 1);
	assert_true(d.fired_at[0] >= START + 5 * MS);
	assert_int_equal(n.n, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Fixed rate keeps the phase: runs at d0 + k * period exactly (on tick). */
static void test_periodic_fixed_rate(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	int k;

	(void)state;
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, rec_fn, 0, 0), -EINVAL);
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, rec_fn, 10 * MS,
						     TW_LOOP_MISFIRE_MASK), -EINVAL);
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, rec_fn, 10 * MS, 0), 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 10 * MS), 0);
	run_until(l, &c, 1105 * MS, MS);
	assert_int_equal(r.n, 10);
	for (k = 0; k < 10; k++) {
		assert_int_equal(r.fired_at[k], 1000 * MS + (uint64_t)(k + 1) * 10 * MS);
		assert_int_equal(r.missed[k], 0);
	}
	assert_true(tw_loop_timer_busy(&r.t));
	assert_int_equal(twheel_loop_del(l, &r.t), 1);
	run_until(l, &c, 1200 * MS, MS);
	assert_int_equal(r.n, 10);
	/* a period shorter than the tick cannot be honoured */
	tw_loop_timer_init_periodic(&r.t, rec_fn, MS / 2, 0);
	assert_int_equal(twheel_loop_add(l, &r.t, MS), -EINVAL);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* The loop falls 35 ms behind a 10 ms fixed-rate timer due at 10 ms:
 * deadlines 10, 20, 30 and 40 have passed at t = 45. */
static struct rec *misfire_run(unsigned policy, struct twheel_loop **lp,
			       struct fake_clock *c, struct rec *r)
{
	struct twheel_loop *l = fake_loop(c, 1000 * MS, NULL);

	memset(r, 0, sizeof(*r));
	r->clk = c;
	tw_loop_timer_init_periodic(&r->t, rec_fn, 10 * MS, TW_LOOP_FIXED_RATE | policy);
	add_placed(l, &r->t, 10 * MS);
	fake_clock_set(c, 1045 * MS);
	*lp = l;
	return r;
}

static void test_misfire_skip(void **state)
{
	struct twheel_loop *l;
	struct fake_clock c;
	struct rec r;
	struct twheel_loop_stats st;

	(void)state;
	misfire_run(TW_LOOP_MISFIRE_SKIP, &l, &c, &r);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_int_equal(r.n, 0);                           /* overdue runs dropped */
	assert_int_equal(r.t.deadline, 1050 * MS);          /* schedule resumes in phase */
	twheel_loop_get_stats(l, &st);
	assert_int_equal(st.misfires, 1);
	run_until(l, &c, 1070 * MS, MS);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.fired_at[0], 1050 * MS);
	assert_int_equal(r.fired_at[1], 1060 * MS);
	assert_int_equal(r.missed[0], 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* run_once() counts callbacks run, not timers expired: a skipped misfire
 * runs nothing and counts nothing. */
static void test_skipped_misfire_is_not_counted(void **state)
{
	struct twheel_loop *l;
	struct fake_clock c;
	struct rec r;

	(void)state;
	misfire_run(TW_LOOP_MISFIRE_SKIP, &l, &c, &r);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r.n, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

static void test_misfire_once(void **state)
{
	struct twheel_loop *l;
	struct fake_clock c;
	struct rec r;

	(void)state;
	misfire_run(TW_LOOP_MISFIRE_ONCE, &l, &c, &r);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_int_equal(r.n, 1);               /* once, now */
	assert_int_equal(r.fired_at[0], 1045 * MS);
	assert_int_equal(r.missed[0], 3);       /* 20, 30, 40 also passed */
	assert_int_equal(r.t.deadline, 1050 * MS);
	run_until(l, &c, 1050 * MS, MS);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.fired_at[1], 1050 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* ONCE runs once however many deadlines passed, more than t->missed (a
 * uint32_t, saturated) can count included: the schedule then resumes on
 * its next deadline that lies ahead, not on one that has passed too. */
static void test_misfire_once_beyond_u32(void **state)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	struct fake_clock c;
	struct rec r = { .clk = &c };
	const uint64_t gap = ((1ull << 32) + 1000) * US; /* 2^32 + 1000 periods */

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = US;
	l = fake_loop(&c, 1000 * MS, &cfg);
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, rec_fn, US, TW_LOOP_MISFIRE_ONCE), 0);
	assert_int_equal(add_placed(l, &r.t, US), 0);
	fake_clock_add(&c, gap);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.missed[0], UINT32_MAX); /* saturated */
	assert_true(r.t.deadline > fake_clock_read(&c));
	/* the clock has not moved: nothing is due */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r.n, 1);
	fake_clock_add(&c, US);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.missed[1], 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

static void test_misfire_all(void **state)
{
	struct twheel_loop *l;
	struct fake_clock c;
	struct rec r;
	int i;

	(void)state;
	misfire_run(TW_LOOP_MISFIRE_ALL, &l, &c, &r);
	/* one run per iteration, without the clock moving */
	for (i = 0; i < 6; i++)
		twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_int_equal(r.n, 4);               /* 10, 20, 30, 40 */
	for (i = 0; i < 4; i++)
		assert_int_equal(r.missed[i], 3 - i);
	assert_int_equal(r.t.deadline, 1050 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Fixed delay: the next run is a period after the previous one *ended*. */
static struct fake_clock *fd_clock;
static void slow_fn(struct tw_loop_timer *t)
{
	rec_fn(t);
	fake_clock_add(fd_clock, 3 * MS); /* the callback "takes" 3 ms */
}

static void test_periodic_fixed_delay(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	fd_clock = &c;
	tw_loop_timer_init_periodic(&r.t, slow_fn, 10 * MS, TW_LOOP_FIXED_DELAY);
	add_placed(l, &r.t, 10 * MS);
	run_until(l, &c, 1050 * MS, MS);
	/* runs at 10, 23, 36, 49 (each 3 ms + 10 ms after the previous) */
	assert_int_equal(r.n, 4);
	assert_int_equal(r.fired_at[0], 1010 * MS);
	assert_int_equal(r.fired_at[1], 1023 * MS);
	assert_int_equal(r.fired_at[2], 1036 * MS);
	assert_int_equal(r.fired_at[3], 1049 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);

	/* fixed delay + ALL: 35 ms behind -> 4 back-to-back runs, then +10 */
	memset(&r, 0, sizeof(r));
	r.clk = &c;
	l = fake_loop(&c, 1000 * MS, NULL);
	tw_loop_timer_init_periodic(&r.t, rec_fn, 10 * MS,
				    TW_LOOP_FIXED_DELAY | TW_LOOP_MISFIRE_ALL);
	add_placed(l, &r.t, 10 * MS);
	fake_clock_set(&c, 1045 * MS);
	for (int i = 0; i < 8; i++)
		twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_int_equal(r.n, 4);
	assert_int_equal(r.missed[0], 3);
	assert_int_equal(r.missed[3], 0);
	assert_int_equal(r.t.deadline, 1055 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A periodic callback may delete (then free) or re-arm its own timer. */
static struct twheel_loop *self_loop;
static void del_self(struct tw_loop_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	rec_fn(t);
	if (r->n == 3) {
		assert_int_equal(twheel_loop_del(self_loop, t), 1);
		memset(t, 0xa5, sizeof(*t)); /* the loop must not look at it again */
	}
}

static void rearm_self(struct tw_loop_timer *t)
{
	rec_fn(t);
	assert_int_equal(twheel_loop_mod(self_loop, t, 50 * MS), 0);
}

static void test_periodic_self_del_and_rearm(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c }, q = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	self_loop = l;
	tw_loop_timer_init_periodic(&r.t, del_self, 10 * MS, 0);
	tw_loop_timer_init_periodic(&q.t, rearm_self, 10 * MS, 0);
	twheel_loop_add(l, &r.t, 10 * MS);
	twheel_loop_add(l, &q.t, 10 * MS);
	run_until(l, &c, 1200 * MS, MS);
	assert_int_equal(r.n, 3);
	/* q: 10, then re-armed +50 by itself each time: 60, 110, 160 */
	assert_int_equal(q.n, 4);
	assert_int_equal(q.fired_at[1], 1060 * MS);
	assert_int_equal(q.fired_at[3], 1160 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Cancel outcomes on one thread: won, lost, already, idle. */
static int released;
static void on_release(struct tw_loop_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	released++;
}

static void test_cancel_outcomes(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct rec a = { .clk = &c }, b = { .clk = &c }, p = { .clk = &c };
	struct twheel_loop *l;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.release = on_release;
	l = fake_loop(&c, START, &cfg);
	released = 0;
	tw_loop_timer_init(&a.t, rec_fn, 0);
	tw_loop_timer_init(&b.t, rec_fn, 0);
	assert_int_equal(twheel_loop_cancel(l, &a.t), -ENOENT);

	/* queued, then cancelled before the loop saw it */
	assert_int_equal(twheel_loop_schedule(l, &a.t, 5 * MS), 0);
	assert_int_equal(twheel_loop_schedule(l, &a.t, 5 * MS), -EBUSY);
	assert_int_equal(twheel_loop_cancel(l, &a.t), 1);
	assert_int_equal(twheel_loop_cancel(l, &a.t), -EALREADY);
	assert_true(tw_loop_timer_busy(&a.t));         /* still on the inbox */
	assert_int_equal(twheel_loop_schedule(l, &a.t, 5 * MS), -EBUSY);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_false(tw_loop_timer_busy(&a.t));
	assert_int_equal(released, 1);

	/* armed (the loop took it), then cancelled */
	assert_int_equal(twheel_loop_schedule(l, &b.t, 5 * MS), 0);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_true(twheel_loop_pending(l, &b.t));
	assert_int_equal(twheel_loop_cancel(l, &b.t), 1);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_false(twheel_loop_pending(l, &b.t));
	assert_int_equal(released, 2);
	run_until(l, &c, START + 20 * MS, MS);
	assert_int_equal(a.n + b.n, 0);

	/* fired, then cancelled: lost */
	assert_int_equal(twheel_loop_schedule(l, &b.t, 5 * MS), 0);
	run_until(l, &c, START + 40 * MS, MS);
	assert_int_equal(b.n, 1);
	assert_int_equal(twheel_loop_cancel(l, &b.t), 0);

	/* periodic: cancel between runs wins and stops it */
	tw_loop_timer_init_periodic(&p.t, rec_fn, 10 * MS, 0);
	assert_int_equal(twheel_loop_schedule(l, &p.t, 10 * MS), 0);
	run_until(l, &c, START + 75 * MS, MS);
	assert_int_equal(p.n, 3);
	assert_int_equal(twheel_loop_cancel(l, &p.t), 1);
	run_until(l, &c, START + 150 * MS, MS);
	assert_int_equal(p.n, 3);
	assert_false(tw_loop_timer_busy(&p.t));
	assert_int_equal(released, 3);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A periodic timer cancelled while its callback runs: lost, no more runs. */
static struct twheel_loop *cancel_loop;
static int cancel_result;
static void cancel_self(struct tw_loop_timer *t)
{
	rec_fn(t);
	cancel_result = twheel_loop_cancel(cancel_loop, t);
}

static void test_cancel_while_running(void **state)
{
	struct fake_clock c;
	struct rec p = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	cancel_loop = l;
	tw_loop_timer_init_periodic(&p.t, cancel_self, 10 * MS, 0);
	twheel_loop_schedule(l, &p.t, 10 * MS);
	run_until(l, &c, START + 100 * MS, MS);
	assert_int_equal(p.n, 1);
	assert_int_equal(cancel_result, 0);
	assert_false(tw_loop_timer_busy(&p.t));
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A cancel from another thread that lands while a periodic callback re-arms
 * its own timer, between the re-arm's look at the state and its publishing
 * the timer armed (emulated exactly: the clock the re-arm reads cancels).
 * The cancel loses to the running callback (0) and the re-arm sees it
 * (-EBUSY), as when the cancel comes first: the timer stays busy and is
 * released after the callback returns, never while it runs (a thread
 * told "not busy" may free it).
 */
static struct twheel_loop *race_loop;
static struct tw_loop_timer *race_victim;
static int race_cancel, race_rearm, race_released_in_cb;
static bool race_busy_in_cb;

static uint64_t cancelling_clock(void *arg)
{
	struct tw_loop_timer *t = race_victim;

	if (t) {
		race_victim = NULL;
		race_cancel = twheel_loop_cancel(race_loop, t);
	}
	return fake_clock_read(arg);
}

static void rearm_racing_cancel(struct tw_loop_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);
	uint64_t served = t->deadline;

	rec_fn(t);
	race_victim = t;
	race_rearm = r->n == 1 ? twheel_loop_mod(race_loop, t, 0)
			       : twheel_loop_mod_at(race_loop, t, 0);
	race_busy_in_cb = tw_loop_timer_busy(t) && t->deadline == served; /* as it was */
	race_released_in_cb = released;
}

static void test_cancel_racing_a_periodic_self_rearm(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct rec p = { .clk = &c };
	struct twheel_loop *l;
	int round;

	(void)state;
	for (round = 1; round <= 2; round++) { /* mod by delay 0, mod_at a past deadline */
		twheel_loop_config_init(&cfg);
		cfg.release = on_release;
		cfg.flags = test_loop_flags();
		cfg.clock = cancelling_clock;
		cfg.clock_arg = &c;
		fake_clock_set(&c, START);
		assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);
		race_loop = l;
		released = 0;
		p.n = round - 1;
		tw_loop_timer_init_periodic(&p.t, rearm_racing_cancel, 10 * MS, 0);
		assert_int_equal(add_placed(l, &p.t, 10 * MS), 0);
		fake_clock_set(&c, START + 11 * MS);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
		assert_int_equal(p.n, round);
		assert_int_equal(race_cancel, 0);     /* lost: the callback runs */
		assert_int_equal(race_rearm, -EBUSY); /* cancelled from another thread */
		assert_true(race_busy_in_cb);
		assert_int_equal(race_released_in_cb, 0);
		assert_int_equal(released, 1); /* after the callback returned */
		assert_false(tw_loop_timer_busy(&p.t));
		run_until(l, &c, START + 100 * MS, MS);
		assert_int_equal(p.n, round); /* never again */
		assert_int_equal(released, 1);
		twheel_loop_destroy(l, NULL, NULL, NULL);
	}
}

static void test_max_pending(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct rec r[4];
	struct twheel_loop *l;
	int i;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.max_pending = 3;
	l = fake_loop(&c, START, &cfg);
	memset(r, 0, sizeof(r));
	for (i = 0; i < 4; i++) {
		r[i].clk = &c;
		tw_loop_timer_init(&r[i].t, rec_fn, 0);
	}
	assert_int_equal(twheel_loop_add(l, &r[0].t, 1 * MS), 0);
	assert_int_equal(twheel_loop_schedule(l, &r[1].t, 50 * MS), 0);
	assert_int_equal(twheel_loop_add(l, &r[2].t, 50 * MS), 0);
	assert_int_equal(twheel_loop_add(l, &r[3].t, 50 * MS), -ENOSPC);
	assert_int_equal(twheel_loop_schedule(l, &r[3].t, 50 * MS), -ENOSPC);
	assert_false(tw_loop_timer_busy(&r[3].t));
	run_until(l, &c, START + 2 * MS, MS); /* r[0] fires: a slot frees */
	assert_int_equal(r[0].n, 1);
	assert_int_equal(twheel_loop_schedule(l, &r[3].t, 50 * MS), 0);
	assert_int_equal(twheel_loop_del(l, &r[2].t), 1);
	assert_int_equal(twheel_loop_add(l, &r[0].t, 50 * MS), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

static int work_runs;
static void work_fn(struct tw_loop_work *w)
{
	(void)w;
	work_runs++;
}

static void test_post(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	struct tw_loop_work w;

	(void)state;
	tw_loop_work_init(&w, work_fn);
	work_runs = 0;
	assert_int_equal(twheel_loop_post(l, &w), 0);
	assert_int_equal(twheel_loop_post(l, &w), -EBUSY);
	assert_int_equal(work_runs, 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(work_runs, 1);
	assert_int_equal(twheel_loop_post(l, &w), 0);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_int_equal(work_runs, 2);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* The inbox moves at most cfg.batch items per iteration. */
static void test_inbox_batch_bound(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct twheel_loop *l;
	struct tw_loop_work w[10];
	struct twheel_loop_stats st;
	int i;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.batch = 4;
	l = fake_loop(&c, START, &cfg);
	work_runs = 0;
	for (i = 0; i < 10; i++) {
		tw_loop_work_init(&w[i], work_fn);
		twheel_loop_post(l, &w[i]);
	}
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 4);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 4);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 2);
	twheel_loop_get_stats(l, &st);
	assert_int_equal(st.inbox_items, 10);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Stop + destroy hand back every timer that never ran, exactly once:
 * armed on either wheel, periodic between runs, or still queued. */
#define NDRAIN 200
static int drained[NDRAIN];
static struct rec drec[NDRAIN];
static int work_drained;

static void drain_fn(struct tw_loop_timer *t, void *arg)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	assert_ptr_equal(arg, &drained);
	assert_false(tw_loop_timer_busy(t));
	drained[r - drec]++;
}

static void work_drain_fn(struct tw_loop_work *w, void *arg)
{
	(void)w;
	(void)arg;
	work_drained++;
}

static void test_stop_drains_every_timer(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	struct tw_loop_work w;
	int i, fired = 0, handed = 0;

	(void)state;
	memset(drained, 0, sizeof(drained));
	memset(drec, 0, sizeof(drec));
	for (i = 0; i < NDRAIN; i++) {
		drec[i].clk = &c;
		if (i % 5 == 0)
			tw_loop_timer_init_periodic(&drec[i].t, rec_fn, 7 * MS, 0);
		else
			tw_loop_timer_init(&drec[i].t, rec_fn, i % 3 == 0 ? TW_LOOP_DEFERRABLE : 0);
		if (i % 2)
			assert_int_equal(twheel_loop_add(l, &drec[i].t, (uint64_t)i * MS), 0);
		else
			assert_int_equal(twheel_loop_schedule(l, &drec[i].t, (uint64_t)i * MS), 0);
	}
	run_until(l, &c, START + 50 * MS, MS); /* some fire */
	/* more that never reach the wheel */
	for (i = 0; i < NDRAIN; i++)
		if (!tw_loop_timer_busy(&drec[i].t))
			assert_int_equal(twheel_loop_schedule(l, &drec[i].t, 1000 * MS), 0);
	tw_loop_work_init(&w, work_fn);
	assert_int_equal(twheel_loop_post(l, &w), 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	assert_true(twheel_loop_stopped(l));
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), -ESHUTDOWN);
	assert_int_equal(twheel_loop_run(l), 0);
	assert_int_equal(twheel_loop_schedule(l, &drec[0].t, MS), -ESHUTDOWN);
	work_drained = 0;
	twheel_loop_destroy(l, drain_fn, work_drain_fn, &drained);
	for (i = 0; i < NDRAIN; i++) {
		assert_int_equal(drained[i], 1); /* all still owned: each once */
		fired += drec[i].n;
		handed += drained[i];
	}
	assert_true(fired > 0);
	assert_int_equal(handed, NDRAIN);
	assert_int_equal(work_drained, 1);
}

/*
 * What drain hands a timer to may cancel another timer the loop still owns
 * (an object with two timers, say): that cancel wins (1), so the loop must
 * release the timer as it promises (the release hook, busy() false), within
 * the drain: no iteration follows. Each pair is cancelled from the timer_fn
 * of whichever of the two the drain hands back first.
 */
static struct twheel_loop *sib_loop;
static struct tw_loop_timer *sib_of[2][2];
static int sib_handed, sib_won;

static void cancel_sibling_fn(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	sib_handed++;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			if (sib_of[i][j] == t && twheel_loop_cancel(sib_loop, sib_of[i][!j]) == 1)
				sib_won++;
}

static void test_drain_releases_what_its_callbacks_cancel(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct rec r[4];
	struct twheel_loop *l;
	int i;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.release = on_release;
	l = fake_loop(&c, START, &cfg);
	sib_loop = l;
	released = sib_handed = sib_won = 0;
	memset(r, 0, sizeof(r));
	for (i = 0; i < 4; i++) {
		r[i].clk = &c;
		tw_loop_timer_init(&r[i].t, rec_fn, i >= 2 ? TW_LOOP_DEFERRABLE : 0);
		assert_int_equal(twheel_loop_add(l, &r[i].t, (uint64_t)(i + 1) * 10 * MS), 0);
		sib_of[i / 2][i % 2] = &r[i].t;
	}
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	assert_int_equal(twheel_loop_drain(l, cancel_sibling_fn, NULL, NULL), 2);
	assert_int_equal(sib_handed, 2);
	assert_int_equal(sib_won, 2);
	assert_int_equal(released, 2);
	for (i = 0; i < 4; i++)
		assert_false(tw_loop_timer_busy(&r[i].t));
	assert_int_equal(twheel_loop_count(l), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * Legacy timers bound to the loop (twheel_loop_compat_bind()) run from the
 * loop's own timers: a drain while they are bound must not hand those to
 * the caller's timer_fn, which would take them for its own (container_of()
 * on a struct it does not know); the legacy timers stay pending on their
 * host until unbound.
 */
static int legacy_runs;
static void legacy_fn(struct timer_list *t)
{
	(void)t;
	legacy_runs++;
}

static int count_drained;
static void count_drain_fn(struct tw_loop_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	count_drained++;
}

static void test_drain_keeps_the_legacy_hosts_timers(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	struct timer_list tl;
	struct rec r = { .clk = &c };

	(void)state;
	assert_int_equal(twheel_loop_compat_bind(l, TWHEEL_COMPAT_TICK_NS), 0);
	timer_setup(&tl, legacy_fn, 0);
	mod_timer(&tl, jiffies + HZ);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 5000 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	count_drained = 0;
	assert_int_equal(twheel_loop_drain(l, count_drain_fn, NULL, NULL), 1); /* r only */
	assert_int_equal(count_drained, 1);
	assert_false(tw_loop_timer_busy(&r.t));
	assert_true(timer_pending(&tl));
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_false(timer_pending(&tl));
	assert_int_equal(legacy_runs, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A loop destroyed while the thread's legacy timers are still bound to it
 * hands them back, not pending, as an unbind does, and leaves the binding
 * harmless until the thread unbinds: jiffies stays at the destroy's time,
 * an arm returns -EINVAL, a del 0. It used to leave the binding on the
 * freed loop: reading jiffies read its clock, an arm re-armed its timer.
 * Binding a loop that another binding holds is refused (-EBUSY).
 */
static void test_destroy_while_legacy_timers_are_bound(void **state)
{
	struct fake_clock c, c2;
	struct twheel_loop *l = fake_loop(&c, START, NULL), *l2;
	struct timer_list tl, tl2;
	unsigned long at;

	(void)state;
	assert_int_equal(twheel_loop_compat_bind(l, TWHEEL_COMPAT_TICK_NS), 0);
	assert_int_equal(twheel_loop_compat_bind(l, TWHEEL_COMPAT_TICK_NS), -EBUSY);
	legacy_runs = 0;
	timer_setup(&tl, legacy_fn, 0);
	timer_setup(&tl2, legacy_fn, TIMER_DEFERRABLE);
	assert_int_equal(mod_timer(&tl, jiffies + HZ), 0);
	assert_int_equal(mod_timer(&tl2, jiffies + HZ), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_add(&c, 5 * MS);
	at = jiffies;
	twheel_loop_destroy(l, NULL, NULL, NULL);
	assert_false(timer_pending(&tl));
	assert_false(timer_pending(&tl2));
	fake_clock_add(&c, 50 * MS);
	assert_true(jiffies == at);
	assert_int_equal(mod_timer(&tl, jiffies + 1), -EINVAL);
	assert_false(timer_pending(&tl));
	assert_int_equal(del_timer(&tl), 0);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_unbind(), -ENXIO);
	assert_int_equal(legacy_runs, 0);

	/* the thread binds again, another loop, as usual */
	l2 = fake_loop(&c2, START, NULL);
	assert_int_equal(twheel_loop_compat_bind(l2, TWHEEL_COMPAT_TICK_NS), 0);
	assert_int_equal(mod_timer(&tl, jiffies + HZ / 10), 0);
	run_until(l2, &c2, START + 200 * MS, MS);
	assert_int_equal(legacy_runs, 1);
	assert_int_equal(twheel_compat_unbind(), 0);
	twheel_loop_destroy(l2, NULL, NULL, NULL);
	legacy_runs = 0;
}

/*
 * cfg.max_pending bounds the timers the program owns on the loop, not the
 * loop's own: with the program's timers at the limit, a bound legacy host
 * still arms its loop timer, so a mod_timer() that returned is not stalled
 * for good (nothing reports the host's failure to arm, and nothing would
 * arm it again).
 */
static void test_legacy_timers_run_at_max_pending(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct twheel_loop *l;
	struct timer_list tl;
	struct rec r = { .clk = &c };

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.max_pending = 1;
	l = fake_loop(&c, START, &cfg);
	assert_int_equal(twheel_loop_compat_bind(l, TWHEEL_COMPAT_TICK_NS), 0);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 5000 * MS), 0); /* the one slot */
	legacy_runs = 0;
	timer_setup(&tl, legacy_fn, 0);
	mod_timer(&tl, jiffies + HZ / 10);
	run_until(l, &c, START + 200 * MS, MS);
	assert_int_equal(legacy_runs, 1);
	assert_int_equal(r.n, 0);
	assert_int_equal(twheel_compat_unbind(), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A timer scheduled with a delay and drained before the loop armed it is
 * handed back with a deadline, counted from a clock reading taken by the
 * drain (like an armed timer's), not with the bare delay. */
static uint64_t drained_deadline;

static void deadline_drain_fn(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	drained_deadline = t->deadline;
}

static void test_drain_hands_back_a_queued_delay_as_a_deadline(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_schedule(l, &r.t, 5 * MS), 0);
	fake_clock_add(&c, 2 * MS);
	assert_int_equal(twheel_loop_stop(l), 0);
	drained_deadline = 0;
	assert_int_equal(twheel_loop_drain(l, deadline_drain_fn, NULL, NULL), 1);
	assert_int_equal(drained_deadline, START + 7 * MS);
	assert_false(tw_loop_timer_busy(&r.t));
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* ---- contracts a careless or hostile caller relies on --------------------- */

/*
 * An arm by delay reads no clock: the loop counts the delay from one
 * reading it takes after the arm (before it next waits, or at the end of the
 * iteration whose callback armed it). Outside the loop's callbacks: the
 * clock moved 7 ms since the iteration's reading, and the 10 ms count from
 * the reading after the arm, not from twheel_loop_now(). Fails if the
 * placement used a reading taken before the arm.
 */
static void test_delay_counts_from_a_reading_after_the_arm(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_add(&c, 7 * MS);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 10 * MS), 0);
	assert_true(twheel_loop_pending(l, &r.t));
	assert_int_equal(r.t.deadline, 1010 * MS); /* until placed: now() + delay */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r.t.deadline, 1017 * MS); /* placed before the wait */
	fake_clock_set(&c, 1017 * MS - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_set(&c, 1017 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r.fired_at[0], 1017 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A slow callback: the clock moves 5 ms, then it arms @b by 10 ms. */
static struct rec *slow_armed;
static void slow_arm_fn(struct tw_loop_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	rec_fn(t);
	fake_clock_add(r->clk, 5 * MS);
	assert_int_equal(twheel_loop_add(tw_container_of(t, struct rec, t)->t._loop, &slow_armed->t,
					 10 * MS), 0);
}

/* From a callback: placed at the end of the iteration, from a reading
 * after the callback's arm (the clock moved during the callback). */
static void test_delay_armed_in_a_callback_counts_from_after_it(void **state)
{
	struct fake_clock c;
	struct rec a = { .clk = &c }, b = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	slow_armed = &b;
	tw_loop_timer_init(&a.t, slow_arm_fn, 0);
	tw_loop_timer_init(&b.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add_at(l, &a.t, 1001 * MS), 0);
	fake_clock_set(&c, 1001 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.t.deadline, 1016 * MS); /* 1006 ms + 10 ms */
	fake_clock_set(&c, 1016 * MS - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_set(&c, 1016 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(b.n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* The 64th arm by delay since the last placement places them all, from a
 * reading after it: a long run of arms holds none back by more. */
static void test_64th_arm_places_the_batch(void **state)
{
	struct fake_clock c;
	struct rec r[65];
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	int i;

	(void)state;
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	for (i = 0; i < 65; i++) {
		r[i] = (struct rec){ .clk = &c };
		tw_loop_timer_init(&r[i].t, rec_fn, i % 2 ? TW_LOOP_DEFERRABLE : 0);
	}
	for (i = 0; i < 63; i++)
		assert_int_equal(twheel_loop_add(l, &r[i].t, 10 * MS), 0);
	assert_int_equal(r[0].t.deadline, 1010 * MS); /* parked */
	fake_clock_add(&c, 3 * MS);
	assert_int_equal(twheel_loop_add(l, &r[63].t, 10 * MS), 0);
	for (i = 0; i < 64; i++)
		assert_int_equal(r[i].t.deadline, 1013 * MS);
	assert_int_equal(twheel_loop_add(l, &r[64].t, 10 * MS), 0);
	assert_int_equal(r[64].t.deadline, 1010 * MS); /* the next batch */
	assert_int_equal(twheel_loop_count(l), 65);
	fake_clock_set(&c, 1013 * MS - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r[64].t.deadline, 1023 * MS - 1); /* placed before the wait */
	fake_clock_set(&c, 1013 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 64);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * At the clock's last reading a delay saturates to that reading: the
 * placement treats it as a deadline that has come (due in the next
 * iteration), as twheel_rt_place() does for the host driver, not as one
 * ahead of the reading (ceil(deadline / tick), a tick the wheel never
 * reaches). Fails if the placement took every parked deadline for one
 * ahead of its reading.
 */
static void test_delay_at_the_clocks_end_is_due(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, UINT64_MAX - 3 * MS, NULL);

	(void)state;
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 10 * MS), 0);
	assert_int_equal(r.t.deadline, UINT64_MAX); /* parked, saturated */
	fake_clock_set(&c, UINT64_MAX - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r.t.deadline, UINT64_MAX); /* placed: ahead of UINT64_MAX - 1 */
	fake_clock_set(&c, UINT64_MAX);
	assert_int_equal(twheel_loop_mod(l, &r.t, 10 * MS), 1); /* placed from UINT64_MAX */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.fired_at[0], UINT64_MAX);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

static uint64_t drained_parked;
static void parked_drain_fn(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	drained_parked = t->deadline;
}

/*
 * A timer armed by delay and not yet placed: pending and counted; mod_at
 * re-arms it by deadline (and the placement leaves it there); del disarms
 * it and leaves the deadline it would have had (a reading at the del); a
 * cancel from "another thread" releases it; drain hands it back with a
 * deadline from its own reading; it never fires before it is placed.
 */
static void test_parked_timer_del_mod_cancel_drain(void **state)
{
	struct fake_clock c;
	struct rec a = { .clk = &c }, b = { .clk = &c }, d = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	tw_loop_timer_init(&a.t, rec_fn, 0);
	tw_loop_timer_init(&b.t, rec_fn, 0);
	tw_loop_timer_init(&d.t, rec_fn, TW_LOOP_DEFERRABLE);
	assert_int_equal(twheel_loop_add(l, &a.t, 5 * MS), 0);
	assert_int_equal(twheel_loop_mod(l, &a.t, 6 * MS), 1); /* parked again */
	assert_int_equal(twheel_loop_add(l, &b.t, 5 * MS), 0);
	assert_int_equal(twheel_loop_count(l), 2);
	assert_true(twheel_loop_pending(l, &a.t) && twheel_loop_pending(l, &b.t));
	assert_int_equal(twheel_loop_add(l, &a.t, MS), -EBUSY);
	fake_clock_add(&c, 2 * MS);
	assert_int_equal(twheel_loop_del(l, &b.t), 1);
	assert_int_equal(b.t.deadline, 1007 * MS); /* its deadline from the del's reading */
	assert_false(twheel_loop_pending(l, &b.t));
	assert_int_equal(a.t.deadline, 1008 * MS); /* placed with it */
	assert_int_equal(twheel_loop_mod(l, &a.t, 10 * MS), 1);
	assert_int_equal(twheel_loop_mod_at(l, &a.t, 1004 * MS), 1); /* by deadline now */
	assert_int_equal(twheel_loop_add(l, &b.t, 50 * MS), 0);
	assert_int_equal(twheel_loop_cancel(l, &b.t), 1);
	fake_clock_set(&c, 1004 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.fired_at[0], 1004 * MS);
	assert_int_equal(b.n, 0);
	assert_false(tw_loop_timer_busy(&b.t)); /* the cancel was released */
	assert_int_equal(twheel_loop_add(l, &d.t, 3 * MS), 0);
	fake_clock_add(&c, MS);
	assert_int_equal(twheel_loop_stop(l), 0);
	drained_parked = 0;
	assert_int_equal(twheel_loop_drain(l, parked_drain_fn, NULL, NULL), 1);
	assert_int_equal(drained_parked, 1008 * MS);
	assert_false(tw_loop_timer_busy(&d.t));
	assert_int_equal(d.n, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A del of a timer that is placed leaves the parked ones parked: no clock
 * reading for them, so they count from the iteration's later reading. A
 * del of a parked one still places them all. Fails if every del of an
 * armed timer placed the parked ones.
 */
static void test_del_of_a_placed_timer_places_nothing(void **state)
{
	struct fake_clock c;
	struct rec a = { .clk = &c }, b = { .clk = &c }, p = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	tw_loop_timer_init(&a.t, rec_fn, 0);
	tw_loop_timer_init(&b.t, rec_fn, 0);
	tw_loop_timer_init(&p.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add_at(l, &a.t, 1050 * MS), 0); /* placed */
	assert_int_equal(twheel_loop_add(l, &p.t, 10 * MS), 0);     /* parked */
	assert_int_equal(twheel_loop_add(l, &b.t, 20 * MS), 0);     /* parked */
	fake_clock_add(&c, 2 * MS);
	assert_int_equal(twheel_loop_del(l, &a.t), 1);
	assert_int_equal(p.t.deadline, 1010 * MS); /* still parked */
	assert_int_equal(b.t.deadline, 1020 * MS);
	fake_clock_add(&c, MS);
	assert_int_equal(twheel_loop_del(l, &b.t), 1); /* parked: places them */
	assert_int_equal(b.t.deadline, 1023 * MS);
	assert_int_equal(p.t.deadline, 1013 * MS);
	fake_clock_set(&c, 1013 * MS - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_set(&c, 1013 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(p.n, 1);
	assert_int_equal(a.n + b.n, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * twheel_loop_move(): an armed timer moves with its deadline and fires
 * once, as the new address; one armed by delay is placed first; a
 * deferrable one stays deferrable; an idle one is copied; a busy @dst, a
 * queued or cancelled @src and another loop's timer are refused with
 * nothing changed; on a stopped loop the moved timer is the one drained.
 */
static struct twheel_loop *twl_test_loop;
static struct tw_loop_timer *moved_to, *moved_from;
static int moved_ret;
static void move_fn(struct tw_loop_timer *t)
{
	rec_fn(t);
	moved_ret = twheel_loop_move(twl_test_loop, moved_to, moved_from);
}

static struct tw_loop_timer *drained_timer;
static void move_drain_fn(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	drained_timer = t;
}

static void test_move(void **state)
{
	struct fake_clock c, c2;
	struct rec a = { .clk = &c }, a2 = { .clk = &c }, p = { .clk = &c }, p2 = { .clk = &c };
	struct rec d = { .clk = &c }, d2 = { .clk = &c }, q = { .clk = &c }, q2 = { .clk = &c };
	struct rec f = { .clk = &c }, b = { .clk = &c }, b2 = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL), *other = fake_loop(&c2, 1000 * MS, NULL);

	(void)state;
	tw_loop_timer_init(&a.t, rec_fn, 0);
	tw_loop_timer_init(&a2.t, rec_fn, 0);
	tw_loop_timer_init(&p.t, rec_fn, 0);
	tw_loop_timer_init(&p2.t, rec_fn, 0);
	tw_loop_timer_init(&d.t, rec_fn, TW_LOOP_DEFERRABLE);
	tw_loop_timer_init(&d2.t, rec_fn, 0);
	tw_loop_timer_init(&q.t, rec_fn, 0);
	tw_loop_timer_init(&q2.t, rec_fn, 0);

	/* idle: copied, nothing armed; @loop may be NULL */
	a.t.deadline = 42;
	assert_int_equal(twheel_loop_move(NULL, &a2.t, &a.t), 0);
	assert_int_equal(a2.t.deadline, 42);
	assert_false(tw_loop_timer_busy(&a2.t));
	assert_int_equal(twheel_loop_move(l, NULL, &a.t), -EINVAL);
	assert_int_equal(twheel_loop_move(l, &a2.t, NULL), -EINVAL);

	assert_int_equal(twheel_loop_add_at(l, &a.t, 1005 * MS), 0);
	assert_int_equal(twheel_loop_move(l, &a.t, &a.t), 1);
	assert_int_equal(twheel_loop_move(NULL, &a2.t, &a.t), -EINVAL);
	assert_int_equal(twheel_loop_move(other, &a2.t, &a.t), -EXDEV);
	assert_int_equal(twheel_loop_add_at(l, &q.t, 1009 * MS), 0);
	assert_int_equal(twheel_loop_move(l, &q.t, &a.t), -EBUSY); /* @dst busy */
	assert_true(twheel_loop_pending(l, &a.t) && twheel_loop_pending(l, &q.t));
	assert_int_equal(twheel_loop_move(l, &a2.t, &a.t), 1);
	assert_false(tw_loop_timer_busy(&a.t));
	assert_false(twheel_loop_pending(l, &a.t));
	assert_true(twheel_loop_pending(l, &a2.t));
	assert_int_equal(a2.t.deadline, 1005 * MS);
	assert_int_equal(twheel_loop_del(l, &a.t), 0);

	/* armed by delay, not yet placed: placed from a reading at the move */
	assert_int_equal(twheel_loop_add(l, &p.t, 10 * MS), 0);
	fake_clock_add(&c, 2 * MS);
	assert_int_equal(twheel_loop_move(l, &p2.t, &p.t), 1);
	assert_int_equal(p2.t.deadline, 1012 * MS);

	/* deferrable: still on the deferrable wheel, which a normal timer wakes */
	assert_int_equal(twheel_loop_add_at(l, &d.t, 1005 * MS), 0);
	assert_int_equal(twheel_loop_move(l, &d2.t, &d.t), 1);
	assert_true(d2.t.timer.flags & TW_LOOP_DEFERRABLE);

	/* cancelled (as from another thread) and queued: refused, unchanged */
	assert_int_equal(twheel_loop_cancel(l, &q.t), 1);
	assert_int_equal(twheel_loop_move(l, &q2.t, &q.t), -EBUSY);
	assert_true(tw_loop_timer_busy(&q.t));
	assert_false(tw_loop_timer_busy(&q2.t));
	assert_int_equal(twheel_loop_count(l), 4);
	fake_clock_set(&c, 1005 * MS - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_false(tw_loop_timer_busy(&q.t)); /* released */
	assert_int_equal(twheel_loop_schedule(l, &q.t, MS), 0);
	assert_int_equal(twheel_loop_move(l, &q2.t, &q.t), -EBUSY);
	fake_clock_set(&c, 1005 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 2);
	assert_int_equal(a.n + d.n, 0);
	assert_int_equal(a2.n, 1);
	assert_int_equal(a2.fired_at[0], 1005 * MS);
	assert_int_equal(d2.n, 1);
	fake_clock_set(&c, 1012 * MS - 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1); /* q */
	fake_clock_set(&c, 1012 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(p.n, 0);
	assert_int_equal(p2.n, 1);
	assert_int_equal(twheel_loop_count(l), 0);

	/* from a callback of the same iteration: the moved timer still fires in it */
	tw_loop_timer_init(&f.t, move_fn, 0);
	tw_loop_timer_init(&b.t, rec_fn, 0);
	tw_loop_timer_init(&b2.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add_at(l, &f.t, 1019 * MS), 0); /* an earlier tick, one iteration */
	assert_int_equal(twheel_loop_add_at(l, &b.t, 1020 * MS), 0);
	twl_test_loop = l, moved_to = &b2.t, moved_from = &b.t, moved_ret = -1;
	fake_clock_set(&c, 1020 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 2);
	assert_int_equal(moved_ret, 1);
	assert_int_equal(b.n, 0);
	assert_int_equal(b2.n, 1);

	/* a stopped loop moves it and drains it from its new address */
	tw_loop_timer_init(&b.t, rec_fn, 0);
	tw_loop_timer_init(&b2.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &b.t, 50 * MS), 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	assert_int_equal(twheel_loop_move(l, &b2.t, &b.t), 1);
	drained_timer = NULL;
	assert_int_equal(twheel_loop_drain(l, move_drain_fn, NULL, NULL), 1);
	assert_ptr_equal(drained_timer, &b2.t);
	assert_false(tw_loop_timer_busy(&b.t) || tw_loop_timer_busy(&b2.t));
	twheel_loop_destroy(l, NULL, NULL, NULL);
	twheel_loop_destroy(other, NULL, NULL, NULL);
}

/*
 * A @src never initialised (all zero: not a loop timer) is refused with
 * -EINVAL, as twheel_move() refuses one, and @dst is left as it was: the
 * first version took it for an idle timer, returned 0 and copied its NULL
 * callback into @dst, which every arm then refused.
 */
static void test_move_refuses_an_uninitialised_src(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	struct rec a = { .clk = &c }, z;

	(void)state;
	memset(&z, 0, sizeof(z));
	assert_int_equal(tw_loop_timer_init(&a.t, rec_fn, 0), 0);
	a.t.deadline = 42;
	assert_int_equal(twheel_loop_move(l, &a.t, &z.t), -EINVAL);
	assert_int_equal(twheel_loop_move(NULL, &a.t, &z.t), -EINVAL);
	assert_ptr_equal(a.t.func, rec_fn);
	assert_int_equal(a.t.deadline, 42);
	assert_int_equal(twheel_loop_add_at(l, &a.t, 1001 * MS), 0);
	fake_clock_set(&c, 1001 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(a.n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A move while "another thread" polls and cancels: the loop clock, read by
 * the placement inside twheel_loop_move() (the timer was armed by delay),
 * plays that thread. @src must still look busy then (the move reads it
 * after), and its cancel must win: the move then fails -EBUSY, @dst stays
 * idle, and the loop releases @src once. The first version made @src look
 * idle there and the cancel say -ENOENT.
 */
static struct tw_loop_timer *mr_src;
static struct twheel_loop *mr_loop;
static int mr_busy = -1, mr_cancel = -2;
static uint64_t mr_clock(void *arg)
{
	if (mr_src && mr_cancel == -2) {
		mr_busy = tw_loop_timer_busy(mr_src);
		mr_cancel = twheel_loop_cancel(mr_loop, mr_src);
	}
	return fake_clock_read(arg);
}

static void test_move_racing_a_cancel(void **state)
{
	struct twheel_loop_config cfg;
	struct fake_clock c;
	struct rec a = { .clk = &c }, b = { .clk = &c };
	struct twheel_loop *l;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.release = on_release;
	cfg.flags = test_loop_flags();
	cfg.clock = mr_clock;
	cfg.clock_arg = &c;
	fake_clock_set(&c, START);
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);
	released = 0;
	tw_loop_timer_init(&a.t, rec_fn, 0);
	tw_loop_timer_init(&b.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(l, &a.t, 5 * MS), 0); /* parked */
	mr_loop = l, mr_src = &a.t;
	assert_int_equal(twheel_loop_move(l, &b.t, &a.t), -EBUSY);
	mr_src = NULL;
	assert_int_equal(mr_busy, 1);
	assert_int_equal(mr_cancel, 1);
	assert_true(tw_loop_timer_busy(&a.t));
	assert_false(tw_loop_timer_busy(&b.t));
	assert_false(twheel_loop_pending(l, &b.t));
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(released, 1);
	assert_false(tw_loop_timer_busy(&a.t));
	assert_int_equal(twheel_loop_count(l), 0);
	fake_clock_add(&c, 10 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(a.n + b.n, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Fixed delay + ALL off a tick boundary: the owed runs come one per
 * iteration even when the clock does not reach the next tick. */
static void test_fixed_delay_all_back_to_back_off_tick(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);

	(void)state;
	tw_loop_timer_init_periodic(&r.t, rec_fn, 10 * MS,
				    TW_LOOP_FIXED_DELAY | TW_LOOP_MISFIRE_ALL);
	add_placed(l, &r.t, 10 * MS);
	fake_clock_set(&c, 1045 * MS + MS / 2); /* 35.5 ms behind, mid-tick */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
		assert_int_equal(r.n, i + 1);
		assert_int_equal(r.missed[i], 3 - i);
	}
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r.t.deadline, 1055 * MS + MS / 2);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A deadline that has come fires in the next iteration, not at the next
 * tick boundary: delay 0, an _at deadline in the past, schedule(0). */
static void test_due_deadline_fires_next_iteration(void **state)
{
	struct fake_clock c;
	struct rec r[4] = { { .clk = &c }, { .clk = &c }, { .clk = &c }, { .clk = &c } };
	struct twheel_loop *l = fake_loop(&c, START, NULL); /* mid-tick */

	(void)state;
	for (int i = 0; i < 4; i++)
		tw_loop_timer_init(&r[i].t, rec_fn, 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(twheel_loop_add(l, &r[0].t, 0), 0);
	assert_int_equal(twheel_loop_add_at(l, &r[1].t, START - 1), 0);
	assert_int_equal(twheel_loop_schedule(l, &r[2].t, 0), 0);
	assert_int_equal(twheel_loop_add(l, &r[3].t, 1), 0); /* still ahead: next tick */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].n, 1);
	assert_int_equal(r[3].n, 0);
	fake_clock_set(&c, 1001 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(r[3].n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* The clock steps back behind the loop's wheel: timers armed then (by
 * delay, by a deadline ahead of the loop's reading, by schedule) never
 * fire before their deadline. */
static void test_clock_steps_back_never_early(void **state)
{
	struct fake_clock c;
	struct rec r[3] = { { .clk = &c }, { .clk = &c }, { .clk = &c } };
	struct twheel_loop *l = fake_loop(&c, START + 10 * MS, NULL);

	(void)state;
	for (int i = 0; i < 3; i++)
		tw_loop_timer_init(&r[i].t, rec_fn, 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_set(&c, START + 3 * MS); /* 7 ms back */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0); /* the loop reads it */
	assert_int_equal(twheel_loop_add(l, &r[0].t, 2 * MS), 0);
	assert_int_equal(twheel_loop_add_at(l, &r[1].t, START + 4 * MS), 0);
	assert_int_equal(twheel_loop_schedule(l, &r[2].t, 1 * MS), 0);
	for (uint64_t t = START + 3 * MS; t <= START + 12 * MS; t += MS / 4) {
		fake_clock_set(&c, t);
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
		for (int i = 0; i < 3; i++)
			if (r[i].n)
				assert_true(r[i].fired_at[0] >= r[i].t.deadline);
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * The clock steps back inside a callback. A timer due at tick 111 runs in
 * an iteration that reads 115.8 ms (4.8 ms late); its callback steps the
 * clock back 40 ms and arms, by a deadline 20 ms ahead of the new reading
 * (before twheel_loop_now(): a fresh reading must decide), by a 5 ms delay,
 * a deferrable timer by a 5 ms delay (its wheel is advanced after the main
 * one, to the same tick) and a fixed-delay periodic timer of 5 ms. None
 * may run before the clock reads its deadline, in this iteration or later.
 */
#define NBACK 5
static struct rec back[NBACK];
static struct twheel_loop *back_loop;

static void step_back_fn(struct tw_loop_timer *t)
{
	struct fake_clock *c = back[0].clk;
	uint64_t now;

	rec_fn(t);
	fake_clock_set(c, fake_clock_read(c) - 40 * MS);
	now = fake_clock_read(c);
	assert_int_equal(twheel_loop_add_at(back_loop, &back[1].t, now + 20 * MS), 0);
	assert_int_equal(twheel_loop_add(back_loop, &back[2].t, 5 * MS), 0);
	assert_int_equal(twheel_loop_add(back_loop, &back[3].t, 5 * MS), 0);
	assert_int_equal(twheel_loop_add(back_loop, &back[4].t, 5 * MS), 0);
}

static void test_clock_steps_back_in_callback_never_early(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 100 * MS, NULL);
	uint64_t first[NBACK];

	(void)state;
	back_loop = l;
	memset(back, 0, sizeof(back));
	for (int i = 0; i < NBACK; i++)
		back[i].clk = &c;
	tw_loop_timer_init(&back[0].t, step_back_fn, 0);
	tw_loop_timer_init(&back[1].t, rec_fn, 0);
	tw_loop_timer_init(&back[2].t, rec_fn, 0);
	tw_loop_timer_init(&back[3].t, rec_fn, TW_LOOP_DEFERRABLE);
	/* held until tick 116, its first run is 35 ms behind by the clock:
	 * MISFIRE_ONCE runs it then (SKIP would drop it, as documented) */
	assert_int_equal(tw_loop_timer_init_periodic(&back[4].t, rec_fn, 5 * MS,
						     TW_LOOP_FIXED_DELAY |
							     TW_LOOP_MISFIRE_ONCE), 0);
	assert_int_equal(twheel_loop_add_at(l, &back[0].t, 111 * MS), 0);
	fake_clock_set(&c, 115 * MS + 800 * US);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	for (int i = 1; i < NBACK; i++) {
		assert_int_equal(back[i].n, 0);
		first[i] = back[i].t.deadline;
	}
	/* the clock goes on from 75.8 ms in 250 us steps */
	for (uint64_t t = fake_clock_read(&c); t <= 130 * MS; t += MS / 4) {
		fake_clock_set(&c, t);
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
		for (int i = 1; i < NBACK; i++)
			if (back[i].n)
				assert_true(back[i].fired_at[0] >= first[i]);
	}
	for (int i = 1; i < NBACK; i++) {
		assert_true(back[i].n >= 1);
		/* late only until the clock is back past tick 115 */
		assert_true(back[i].fired_at[0] <= 117 * MS);
	}
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * The same from posted work, which runs before the wheels are advanced: the
 * iteration reads 115.8 ms with the wheels at tick 100, so it goes to tick
 * 115; the work item steps the clock back 40 ms and arms 5 ms ahead. The
 * wheel still stands at 100 (a tick from 101 to 115 would fire in this
 * iteration, 35 ms early).
 */
static void step_back_work_fn(struct tw_loop_work *w)
{
	struct fake_clock *c = back[0].clk;

	(void)w;
	fake_clock_set(c, fake_clock_read(c) - 40 * MS);
	assert_int_equal(twheel_loop_add(back_loop, &back[1].t, 5 * MS), 0);
	assert_int_equal(twheel_loop_add(back_loop, &back[2].t, 5 * MS), 0);
}

static void test_clock_steps_back_in_posted_work_never_early(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 100 * MS, NULL);
	struct tw_loop_work w;

	(void)state;
	back_loop = l;
	memset(back, 0, sizeof(back));
	for (int i = 0; i < 3; i++)
		back[i].clk = &c;
	tw_loop_timer_init(&back[1].t, rec_fn, 0);
	tw_loop_timer_init(&back[2].t, rec_fn, TW_LOOP_DEFERRABLE);
	tw_loop_work_init(&w, step_back_work_fn);
	assert_int_equal(twheel_loop_post(l, &w), 0);
	fake_clock_set(&c, 115 * MS + 800 * US);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1); /* the work only */
	assert_int_equal(back[1].n + back[2].n, 0);
	for (uint64_t t = fake_clock_read(&c); t <= 130 * MS; t += MS / 4) {
		fake_clock_set(&c, t);
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
		for (int i = 1; i < 3; i++)
			if (back[i].n)
				assert_true(back[i].fired_at[0] >= back[i].t.deadline);
	}
	assert_int_equal(back[1].n, 1);
	assert_int_equal(back[2].n, 1);
	assert_true(back[1].fired_at[0] <= 117 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A periodic timer whose period is the tick, its deadlines just after tick
 * boundaries (k ms + 1.288 us): each runs in the iteration at the next
 * boundary, nearly a period after its deadline. That lateness is the
 * rounding to the tick, not a missed deadline: with the default policy
 * (SKIP) every run must happen, though the loop wakes 5 us after each
 * boundary (more than 1.288 us: counted by the clock, the next deadline
 * would have passed too, and every run was skipped).
 */
static void test_rounding_to_the_tick_is_not_a_misfire(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	struct rec r = { .clk = &c };
	struct twheel_loop_stats st;

	(void)state;
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, rec_fn, MS, 0), 0);
	assert_int_equal(twheel_loop_add_at(l, &r.t, 1001 * MS + 1288), 0);
	for (uint64_t k = 2; k <= 21; k++) {
		fake_clock_set(&c, (1000 + k) * MS + 5 * US);
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	}
	assert_int_equal(r.n, 20);
	for (int i = 0; i < 20; i++)
		assert_int_equal(r.missed[i], 0);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.misfires, 0);
	/* a real miss: the loop sleeps through three ticks */
	fake_clock_set(&c, 1025 * MS + 5 * US);
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	assert_int_equal(r.n, 20); /* SKIP */
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.misfires, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A schedule's delay counts from the clock reading the loop takes when it
 * takes the timer from the inbox (no earlier than the call); a
 * schedule_at() deadline stays absolute. */
static void test_schedule_delay_counts_from_the_pop(void **state)
{
	struct fake_clock c;
	struct rec r[2] = { { .clk = &c }, { .clk = &c } };
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	for (int i = 0; i < 2; i++)
		tw_loop_timer_init(&r[i].t, rec_fn, 0);
	assert_int_equal(twheel_loop_schedule(l, &r[0].t, 5 * MS), 0);
	assert_int_equal(twheel_loop_schedule_at(l, &r[1].t, START + 5 * MS), 0);
	fake_clock_add(&c, 3 * MS); /* the loop takes them 3 ms later */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r[0].t.deadline, START + 8 * MS);
	assert_int_equal(r[1].t.deadline, START + 5 * MS);
	run_until(l, &c, START + 10 * MS, 10 * US);
	assert_int_equal(r[0].n, 1);
	assert_int_equal(r[1].n, 1);
	assert_true(r[0].fired_at[0] >= START + 8 * MS);
	assert_true(r[1].fired_at[0] >= START + 5 * MS);
	assert_true(r[1].fired_at[0] < START + 7 * MS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A schedule made after the loop read its clock for the iteration but
 * before it popped the inbox: here from an I/O handler (they run between
 * the two), which moves the clock first. The delay counts from the later
 * reading, so the timer does not fire before call + delay. */
struct sched_io {
	struct tw_loop_io io;
	struct twheel_loop *l;
	struct fake_clock *c;
	struct rec *r;
	int calls;
};

static void sched_io_fn(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct sched_io *s = tw_container_of(io, struct sched_io, io);

	(void)cqe;
	s->calls++;
	fake_clock_add(s->c, 3 * MS);
	assert_int_equal(twheel_loop_schedule(s->l, &s->r->t, 5 * MS), 0);
}

static void test_schedule_after_the_iterations_reading(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, START, NULL);
	struct sched_io s = { .io.func = sched_io_fn, .l = l, .c = &c, .r = &r };
	struct io_uring_sqe *sqe;

	(void)state;
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	sqe = twheel_loop_get_sqe(l, &s.io);
	if (!sqe) { /* fallback mode: no I/O */
		twheel_loop_destroy(l, NULL, NULL, NULL);
		skip();
	}
	io_uring_prep_nop(sqe);
	for (int i = 0; i < 100 && !s.calls; i++)
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	assert_int_equal(s.calls, 1);
	/* the handler scheduled at START + 3 ms; the loop took it at once */
	assert_int_equal(r.t.deadline, START + 8 * MS);
	run_until(l, &c, START + 8 * MS - 10 * US, 10 * US);
	assert_int_equal(r.n, 0);
	run_until(l, &c, START + 10 * MS, 10 * US);
	assert_int_equal(r.n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* An executor that holds on to what it is given, so the test decides
 * when each run happens. */
struct held {
	struct tw_loop_timer *t[8];
	int n;
};

static void hold_executor(struct tw_loop_timer *t, void *arg)
{
	struct held *h = arg;

	assert_true(h->n < 8);
	h->t[h->n++] = t;
}

static uint64_t seen_deadline;
static void deadline_fn(struct tw_loop_timer *t)
{
	seen_deadline = t->deadline;
	rec_fn(t);
}

/* A periodic executor timer is not re-armed while its run is pending or
 * running: the callback reads the deadline it serves, and no run overlaps. */
static void test_executor_periodic_serves_its_deadline(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct held h = { .n = 0 };
	struct twheel_loop_config cfg;
	struct twheel_loop *l;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.executor = hold_executor;
	cfg.executor_arg = &h;
	l = fake_loop(&c, 1000 * MS, &cfg);
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, deadline_fn, 10 * MS,
						     TW_LOOP_EXECUTOR | TW_LOOP_MISFIRE_ALL), 0);
	assert_int_equal(twheel_loop_add(l, &r.t, 10 * MS), 0);
	run_until(l, &c, 1010 * MS, MS);
	assert_int_equal(h.n, 1);
	run_until(l, &c, 1035 * MS, MS); /* the executor is slow */
	assert_int_equal(h.n, 1);        /* not handed again meanwhile */
	assert_int_equal(r.t.deadline, 1010 * MS);
	assert_true(tw_loop_timer_busy(&r.t));
	tw_loop_timer_call(h.t[0]);
	assert_int_equal(seen_deadline, 1010 * MS);
	/* ALL: 20 and 30 are owed; each is handed over by the iteration that
	 * takes the previous run back, then 40 on time */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(h.n, 2);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	tw_loop_timer_call(h.t[1]);
	assert_int_equal(seen_deadline, 1020 * MS);
	assert_int_equal(r.missed[1], 1);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_int_equal(h.n, 3);
	tw_loop_timer_call(h.t[2]);
	assert_int_equal(seen_deadline, 1030 * MS);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	run_until(l, &c, 1039 * MS, MS);
	assert_int_equal(h.n, 3);
	run_until(l, &c, 1040 * MS, MS);
	assert_int_equal(h.n, 4);
	/* cancelled while on the executor: released when it returns */
	assert_int_equal(twheel_loop_cancel(l, h.t[3]), 0);
	assert_int_equal(twheel_loop_cancel(l, h.t[3]), -EALREADY);
	tw_loop_timer_call(h.t[3]);
	assert_int_equal(r.n, 4);
	assert_true(tw_loop_timer_busy(&r.t));
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_false(tw_loop_timer_busy(&r.t));
	assert_int_equal(tw_loop_timer_call(h.t[3]), -EINVAL); /* handed back already */
	run_until(l, &c, 1100 * MS, MS);
	assert_int_equal(h.n, 4);
	assert_int_equal(r.n, 4);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A periodic executor timer whose run has ended (tw_loop_timer_call()
 * returned) and that the loop has not re-armed yet when it stops: drain
 * hands it back with the deadline of its next run, as it does an armed
 * periodic timer, not with the one just served (re-armed at that, it
 * would run again at once). Fixed rate: the next deadline of the schedule;
 * fixed delay: a period after a reading taken after the run.
 */
static struct tw_loop_timer *drained_t[2];
static uint64_t drained_at[2];
static void record_drain_fn(struct tw_loop_timer *t, void *arg)
{
	int *n = arg;

	drained_t[*n] = t;
	drained_at[(*n)++] = t->deadline;
}

static void test_drain_hands_back_a_returned_periodic_at_its_next_deadline(void **state)
{
	struct fake_clock c;
	struct rec rate = { .clk = &c }, delay = { .clk = &c };
	struct held h = { .n = 0 };
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	int n = 0, i;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.executor = hold_executor;
	cfg.executor_arg = &h;
	l = fake_loop(&c, 1000 * MS, &cfg);
	assert_int_equal(tw_loop_timer_init_periodic(&rate.t, rec_fn, 10 * MS, TW_LOOP_EXECUTOR), 0);
	assert_int_equal(tw_loop_timer_init_periodic(&delay.t, rec_fn, 10 * MS,
						     TW_LOOP_EXECUTOR | TW_LOOP_FIXED_DELAY), 0);
	assert_int_equal(twheel_loop_add_at(l, &rate.t, 1010 * MS), 0);
	assert_int_equal(twheel_loop_add_at(l, &delay.t, 1010 * MS), 0);
	run_until(l, &c, 1010 * MS, MS);
	assert_int_equal(h.n, 2);
	fake_clock_set(&c, 1013 * MS);
	assert_int_equal(tw_loop_timer_call(&rate.t), 0);
	assert_int_equal(tw_loop_timer_call(&delay.t), 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	assert_int_equal(twheel_loop_drain(l, record_drain_fn, NULL, &n), 2);
	for (i = 0; i < 2; i++)
		assert_int_equal(drained_at[i], drained_t[i] == &rate.t ? 1020 * MS : 1023 * MS);
	assert_false(tw_loop_timer_busy(&rate.t));
	assert_false(tw_loop_timer_busy(&delay.t));
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A one-shot executor timer stays owned until tw_loop_timer_call(). */
static int busy_in_callback = -1;
static void busy_fn(struct tw_loop_timer *t)
{
	busy_in_callback = tw_loop_timer_busy(t);
}

static void test_executor_oneshot_busy_until_called(void **state)
{
	struct fake_clock c;
	struct tw_loop_timer t;
	struct held h = { .n = 0 };
	struct twheel_loop_config cfg;
	struct twheel_loop *l;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.executor = hold_executor;
	cfg.executor_arg = &h;
	cfg.max_pending = 1;
	l = fake_loop(&c, 1000 * MS, &cfg);
	tw_loop_timer_init(&t, busy_fn, TW_LOOP_EXECUTOR);
	assert_int_equal(twheel_loop_add(l, &t, MS), 0);
	run_until(l, &c, 1001 * MS, MS);
	assert_int_equal(h.n, 1);
	assert_true(tw_loop_timer_busy(&t));
	assert_int_equal(twheel_loop_schedule(l, &t, MS), -EBUSY);
	assert_int_equal(twheel_loop_cancel(l, &t), 0); /* fired already */
	assert_int_equal(twheel_loop_del(l, &t), 0);
	assert_int_equal(tw_loop_timer_call(&t), 0);
	assert_int_equal(busy_in_callback, 0);
	/* one call per hand-off: a second one, or one on an idle timer, is refused */
	busy_in_callback = -1;
	assert_int_equal(tw_loop_timer_call(&t), -EINVAL);
	assert_int_equal(tw_loop_timer_call(NULL), -EINVAL);
	struct tw_loop_timer plain;
	tw_loop_timer_init(&plain, busy_fn, 0);
	assert_int_equal(tw_loop_timer_call(&plain), -EINVAL); /* not an executor timer */
	assert_int_equal(busy_in_callback, -1);
	assert_int_equal(twheel_loop_add(l, &t, MS), 0); /* max_pending freed */
	assert_int_equal(twheel_loop_del(l, &t), 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * One call per hand-off holds for a periodic executor timer too: a second
 * tw_loop_timer_call() while the first one runs (here from the callback
 * itself, as a careless executor that dispatched a timer twice would) is
 * refused with -EINVAL and runs nothing, and the timer is handed back to
 * the loop once (a second hand-back would push its node onto the inbox
 * while it is still there, and turn the run into a cancel).
 */
static int reenter_runs, reenter_ret = 1;
static void reenter_fn(struct tw_loop_timer *t)
{
	if (++reenter_runs == 1)
		reenter_ret = tw_loop_timer_call(t);
}

static void test_executor_periodic_one_call_per_handoff(void **state)
{
	struct fake_clock c;
	struct tw_loop_timer t;
	struct held h = { .n = 0 };
	struct twheel_loop_config cfg;
	struct twheel_loop *l;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.executor = hold_executor;
	cfg.executor_arg = &h;
	l = fake_loop(&c, 1000 * MS, &cfg);
	assert_int_equal(tw_loop_timer_init_periodic(&t, reenter_fn, 10 * MS, TW_LOOP_EXECUTOR), 0);
	assert_int_equal(twheel_loop_add(l, &t, 10 * MS), 0);
	run_until(l, &c, 1010 * MS, MS);
	assert_int_equal(h.n, 1);
	assert_int_equal(tw_loop_timer_call(h.t[0]), 0);
	assert_int_equal(reenter_runs, 1);
	assert_int_equal(reenter_ret, -EINVAL);
	/* handed back once, as a finished run: re-armed, not released */
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	assert_true(tw_loop_timer_busy(&t));
	assert_true(twheel_loop_pending(l, &t));
	assert_int_equal(t.deadline, 1020 * MS);
	run_until(l, &c, 1020 * MS, MS);
	assert_int_equal(h.n, 2);
	assert_int_equal(tw_loop_timer_call(h.t[1]), 0);
	assert_int_equal(reenter_runs, 2);
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	/* cancelled while handed over: still one call, then released once */
	run_until(l, &c, 1030 * MS, MS);
	assert_int_equal(h.n, 3);
	assert_int_equal(twheel_loop_cancel(l, &t), 0);
	reenter_runs = 0;
	reenter_ret = 1;
	assert_int_equal(tw_loop_timer_call(h.t[2]), 0);
	assert_int_equal(reenter_ret, -EINVAL);
	assert_int_equal(reenter_runs, 1);
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	assert_false(tw_loop_timer_busy(&t));
	assert_int_equal(twheel_loop_drain(l, NULL, NULL, NULL), 0); /* owns nothing */
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A timer owned by one loop is refused by another, whatever the state,
 * and neither loop's accounting moves. */
static void test_foreign_loop_is_refused(void **state)
{
	struct fake_clock ca, cb;
	struct rec a = { .clk = &ca }, q = { .clk = &ca }, b[2] = { { .clk = &cb }, { .clk = &cb } };
	struct twheel_loop_config cfg;
	struct twheel_loop *la, *lb;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.max_pending = 2;
	la = fake_loop(&ca, 1000 * MS, &cfg);
	lb = fake_loop(&cb, 1000 * MS, &cfg);
	tw_loop_timer_init(&a.t, rec_fn, 0);
	tw_loop_timer_init(&q.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(la, &a.t, 5 * MS), 0);
	assert_int_equal(twheel_loop_schedule(la, &q.t, 5 * MS), 0); /* queued */
	for (int i = 0; i < 2; i++) {
		struct tw_loop_timer *t = i ? &q.t : &a.t;

		assert_int_equal(twheel_loop_del(lb, t), -EXDEV);
		assert_int_equal(twheel_loop_mod(lb, t, MS), -EXDEV);
		assert_int_equal(twheel_loop_mod_at(lb, t, 0), -EXDEV);
		assert_int_equal(twheel_loop_add(lb, t, MS), -EXDEV);
		assert_int_equal(twheel_loop_cancel(lb, t), -EXDEV);
		assert_int_equal(twheel_loop_schedule(lb, t, MS), -EBUSY);
		assert_false(twheel_loop_pending(lb, t));
	}
	assert_int_equal(twheel_loop_count(lb), 0);
	/* lb's max_pending budget is untouched: two timers fit */
	tw_loop_timer_init(&b[0].t, rec_fn, 0);
	tw_loop_timer_init(&b[1].t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(lb, &b[0].t, MS), 0);
	assert_int_equal(twheel_loop_add(lb, &b[1].t, MS), 0);
	/* la still owns both and fires each once */
	run_until(la, &ca, 1010 * MS, MS);
	assert_int_equal(a.n, 1);
	assert_int_equal(q.n, 1);
	assert_int_equal(twheel_loop_count(la), 0);
	run_until(lb, &cb, 1010 * MS, MS);
	assert_int_equal(b[0].n + b[1].n, 2);
	/* once idle, any loop may take it */
	assert_int_equal(twheel_loop_add(lb, &a.t, MS), 0);
	assert_int_equal(twheel_loop_del(lb, &a.t), 1);
	twheel_loop_destroy(la, NULL, NULL, NULL);
	twheel_loop_destroy(lb, NULL, NULL, NULL);
}

/* Once stopped, every arming call says so; disarming still works. */
static void work_fn_nop(struct tw_loop_work *w)
{
	(void)w;
}

static void test_stopped_loop_refuses_arming(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c }, s = { .clk = &c };
	struct tw_loop_work w;
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	tw_loop_timer_init(&r.t, rec_fn, 0);
	tw_loop_timer_init(&s.t, rec_fn, 0);
	tw_loop_work_init(&w, work_fn_nop);
	assert_int_equal(twheel_loop_add(l, &s.t, MS), 0);
	twheel_loop_stop(l);
	assert_int_equal(twheel_loop_add(l, &r.t, MS), -ESHUTDOWN);
	assert_int_equal(twheel_loop_add_at(l, &r.t, START), -ESHUTDOWN);
	assert_int_equal(twheel_loop_mod(l, &r.t, MS), -ESHUTDOWN);
	assert_int_equal(twheel_loop_mod_at(l, &s.t, START), -ESHUTDOWN);
	assert_int_equal(twheel_loop_schedule(l, &r.t, MS), -ESHUTDOWN);
	assert_int_equal(twheel_loop_schedule_at(l, &r.t, START), -ESHUTDOWN);
	assert_int_equal(twheel_loop_post(l, &w), -ESHUTDOWN);
	assert_false(tw_loop_timer_busy(&r.t));
	assert_int_equal(twheel_loop_del(l, &s.t), 1);
	assert_int_equal(twheel_loop_count(l), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Destroying the loop from one of its own callbacks does nothing: the
 * loop is in use (under ASan, the old code's free was a use-after-free). */
static struct twheel_loop *destroy_loop;
static void destroy_fn(struct tw_loop_timer *t)
{
	(void)t;
	twheel_loop_destroy(destroy_loop, NULL, NULL, NULL);
}

static void test_destroy_from_callback_is_refused(void **state)
{
	struct fake_clock c;
	struct tw_loop_timer t, u;
	struct rec r = { .clk = &c };

	(void)state;
	destroy_loop = fake_loop(&c, START, NULL);
	tw_loop_timer_init(&t, destroy_fn, 0);
	tw_loop_timer_init(&u, destroy_fn, TW_LOOP_DEFERRABLE);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(destroy_loop, &t, MS), 0);
	assert_int_equal(twheel_loop_add(destroy_loop, &u, MS), 0);
	assert_int_equal(twheel_loop_add(destroy_loop, &r.t, 2 * MS), 0);
	run_until(destroy_loop, &c, START + 2 * MS, MS); /* t and u fire */
	assert_int_equal(twheel_loop_count(destroy_loop), 1);
	assert_int_equal(r.n, 0);
	run_until(destroy_loop, &c, START + 4 * MS, MS);
	assert_int_equal(r.n, 1);
	twheel_loop_destroy(destroy_loop, NULL, NULL, NULL);
}

/*
 * What drain calls is one of the loop's callbacks: a work item that
 * destroy's drain runs may not destroy the loop again (it did, and the
 * outer drain read the freed loop) nor run an iteration (-EBUSY); a timer
 * that destroy's @timer_fn re-arms is refused (-ESHUTDOWN: destroy stops
 * the loop first), not left owned by the freed loop.
 */
static int nested_rc[2];
static int nested_n;

static void destroy_from_work(struct tw_loop_work *w)
{
	(void)w;
	twheel_loop_destroy(destroy_loop, NULL, NULL, NULL);
	if (nested_n < 2)
		nested_rc[nested_n++] = twheel_loop_run_once(destroy_loop, TW_LOOP_NOWAIT);
}

static int rearm_rc = 1;

static void rearm_in_destroy(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	rearm_rc = twheel_loop_add(destroy_loop, t, MS);
}

static void test_destroy_from_what_drain_calls_does_nothing(void **state)
{
	struct fake_clock c;
	struct tw_loop_work w[2];
	struct rec r = { .clk = &c };

	(void)state;
	destroy_loop = fake_loop(&c, START, NULL);
	tw_loop_timer_init(&r.t, rec_fn, 0);
	assert_int_equal(twheel_loop_add(destroy_loop, &r.t, 5 * MS), 0);
	for (int i = 0; i < 2; i++) {
		tw_loop_work_init(&w[i], destroy_from_work);
		assert_int_equal(twheel_loop_post(destroy_loop, &w[i]), 0);
	}
	nested_n = 0;
	/* not stopped first: destroy runs the posts (NULL work_fn), hands back r */
	twheel_loop_destroy(destroy_loop, rearm_in_destroy, NULL, NULL);
	assert_int_equal(nested_n, 2);
	assert_int_equal(nested_rc[0], -EBUSY);
	assert_int_equal(nested_rc[1], -EBUSY);
	assert_int_equal(rearm_rc, -ESHUTDOWN);
	assert_false(tw_loop_timer_busy(&r.t));
	assert_int_equal(r.n, 0);
}

/*
 * A fixed-delay periodic timer whose callback steps the clock back: its
 * next deadline counts from the end of the run, and it must not run
 * before the clock reaches it (it ran in the next iteration).
 */
static struct fake_clock *back_clock;

static void step_back_once(struct tw_loop_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	rec_fn(t);
	if (r->n == 1)
		fake_clock_set(back_clock, fake_clock_read(back_clock) - 500 * MS);
}

static void test_fixed_delay_after_clock_steps_back_never_early(void **state)
{
	struct fake_clock c;
	struct rec r = { .clk = &c };
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	back_clock = &c;
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, step_back_once, 10 * MS,
						     TW_LOOP_FIXED_DELAY),
			 0);
	assert_int_equal(add_placed(l, &r.t, 10 * MS), 0);
	fake_clock_set(&c, START + 11 * MS); /* past the deadline's tick boundary */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1); /* steps back 500 ms */
	uint64_t next = r.t.deadline;
	assert_int_equal(next, START + 11 * MS - 500 * MS + 10 * MS);
	for (int i = 0; i < 3; i++)
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(r.n, 1);
	for (uint64_t t = fake_clock_read(&c); r.n < 3 && t < START + 100 * MS; t += MS / 2) {
		fake_clock_set(&c, t);
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	}
	assert_int_equal(r.n, 3);
	assert_true(r.fired_at[1] >= next);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* 1.0's name of the flag still compiles, with the same value. */
_Static_assert(TW_LOOP_FEAT_EPOLL == TW_LOOP_FEAT_FALLBACK, "TW_LOOP_FEAT_EPOLL");

/* TWHEEL_TEST_FALLBACK=1 runs this whole suite in fallback mode. */
static void test_mode_is_the_one_asked(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, START, NULL);

	(void)state;
	if (test_loop_flags())
		assert_true(twheel_loop_features(l) & TW_LOOP_FEAT_FALLBACK);
	printf("# mode: %s\n", twheel_loop_features(l) & TW_LOOP_FEAT_FALLBACK ? "fallback" : "io_uring");
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_is_the_one_asked),
		cmocka_unit_test(test_config_rejects_bad_ticks),
		cmocka_unit_test(test_run_once_rejects_bad_arguments),
		cmocka_unit_test(test_destroy_while_legacy_timers_are_bound),
		cmocka_unit_test(test_never_early_rounds_up),
		cmocka_unit_test(test_come_deadline_fires_after_a_step_back),
		cmocka_unit_test(test_fine_tick),
		cmocka_unit_test(test_firing_order),
		cmocka_unit_test(test_add_mod_del),
		cmocka_unit_test(test_deferrable),
		cmocka_unit_test(test_periodic_fixed_rate),
		cmocka_unit_test(test_misfire_skip),
		cmocka_unit_test(test_skipped_misfire_is_not_counted),
		cmocka_unit_test(test_misfire_once),
		cmocka_unit_test(test_misfire_once_beyond_u32),
		cmocka_unit_test(test_misfire_all),
		cmocka_unit_test(test_periodic_fixed_delay),
		cmocka_unit_test(test_periodic_self_del_and_rearm),
		cmocka_unit_test(test_cancel_outcomes),
		cmocka_unit_test(test_cancel_while_running),
		cmocka_unit_test(test_cancel_racing_a_periodic_self_rearm),
		cmocka_unit_test(test_max_pending),
		cmocka_unit_test(test_post),
		cmocka_unit_test(test_inbox_batch_bound),
		cmocka_unit_test(test_stop_drains_every_timer),
		cmocka_unit_test(test_drain_keeps_the_legacy_hosts_timers),
		cmocka_unit_test(test_legacy_timers_run_at_max_pending),
		cmocka_unit_test(test_drain_releases_what_its_callbacks_cancel),
		cmocka_unit_test(test_drain_hands_back_a_queued_delay_as_a_deadline),
		cmocka_unit_test(test_fixed_delay_all_back_to_back_off_tick),
		cmocka_unit_test(test_delay_counts_from_a_reading_after_the_arm),
		cmocka_unit_test(test_delay_armed_in_a_callback_counts_from_after_it),
		cmocka_unit_test(test_64th_arm_places_the_batch),
		cmocka_unit_test(test_delay_at_the_clocks_end_is_due),
		cmocka_unit_test(test_parked_timer_del_mod_cancel_drain),
		cmocka_unit_test(test_del_of_a_placed_timer_places_nothing),
		cmocka_unit_test(test_move),
		cmocka_unit_test(test_move_refuses_an_uninitialised_src),
		cmocka_unit_test(test_move_racing_a_cancel),
		cmocka_unit_test(test_due_deadline_fires_next_iteration),
		cmocka_unit_test(test_clock_steps_back_never_early),
		cmocka_unit_test(test_clock_steps_back_in_callback_never_early),
		cmocka_unit_test(test_clock_steps_back_in_posted_work_never_early),
		cmocka_unit_test(test_rounding_to_the_tick_is_not_a_misfire),
		cmocka_unit_test(test_schedule_delay_counts_from_the_pop),
		cmocka_unit_test(test_schedule_after_the_iterations_reading),
		cmocka_unit_test(test_executor_periodic_serves_its_deadline),
		cmocka_unit_test(test_drain_hands_back_a_returned_periodic_at_its_next_deadline),
		cmocka_unit_test(test_executor_oneshot_busy_until_called),
		cmocka_unit_test(test_executor_periodic_one_call_per_handoff),
		cmocka_unit_test(test_foreign_loop_is_refused),
		cmocka_unit_test(test_stopped_loop_refuses_arming),
		cmocka_unit_test(test_destroy_from_callback_is_refused),
		cmocka_unit_test(test_fixed_delay_after_clock_steps_back_never_early),
		cmocka_unit_test(test_destroy_from_what_drain_calls_does_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
