/* SPDX-License-Identifier: MIT */
/*
 * test_loop_contract - what <twheel/loop.h> promises that no other suite
 * checked (found by reading the header as a user who reads nothing else,
 * then grepping tests/): NULL and never-initialised arguments of every
 * function, an executor timer on a loop without an executor through every
 * arm, calls from a callback, and the ends of the 64-bit clock on the
 * shortest and longest ticks. On an injected clock: milliseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"

struct rec {
	struct tw_loop_timer t;
	struct twheel_loop *l;
	int n;
	int ret; /* what the callback's call returned */
};

static void rec_fn(struct tw_loop_timer *t)
{
	tw_container_of(t, struct rec, t)->n++;
}

/* NULL where the header gives a result for it: -EINVAL, 0, false or NULL. */
static void null_arguments(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	struct twheel_loop_stats st;
	struct rec r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(tw_loop_timer_init(&r.t, rec_fn, 0), 0);
	assert_int_equal(tw_loop_timer_init_periodic(NULL, rec_fn, MS, 0), -EINVAL);
	assert_int_equal(tw_loop_timer_init_periodic(&r.t, NULL, MS, 0), -EINVAL);
	assert_int_equal(tw_loop_timer_init(&r.t, rec_fn, 0), 0);
	assert_false(tw_loop_timer_busy(NULL));
	twheel_loop_config_init(NULL);
	assert_int_equal(twheel_loop_stop(NULL), -EINVAL);
	assert_false(twheel_loop_stopped(NULL));
	assert_int_equal(twheel_loop_now(NULL), 0);
	assert_int_equal(twheel_loop_clock(NULL), 0);
	assert_int_equal(twheel_loop_tick(NULL), 0);
	assert_int_equal(twheel_loop_features(NULL), 0);
	assert_int_equal(twheel_loop_count(NULL), 0);
	assert_null(twheel_loop_ring(NULL));
	assert_int_equal(twheel_loop_drain(NULL, NULL, NULL, NULL), 0);
	twheel_loop_destroy(NULL, NULL, NULL, NULL);
	assert_int_equal(twheel_loop_get_stats(NULL, &st), -EINVAL);
	assert_int_equal(twheel_loop_get_stats(l, NULL), -EINVAL);
	assert_int_equal(twheel_loop_mod(NULL, &r.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_mod(l, NULL, MS), -EINVAL);
	assert_int_equal(twheel_loop_mod_at(NULL, &r.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_mod_at(l, NULL, MS), -EINVAL);
	assert_int_equal(twheel_loop_add_at(NULL, &r.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_add_at(l, NULL, MS), -EINVAL);
	assert_int_equal(twheel_loop_del(NULL, &r.t), -EINVAL);
	assert_int_equal(twheel_loop_del(l, NULL), -EINVAL);
	assert_false(twheel_loop_pending(NULL, &r.t));
	assert_false(twheel_loop_pending(l, NULL));
	assert_int_equal(twheel_loop_schedule(NULL, &r.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule(l, NULL, MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule_at(NULL, &r.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule_at(l, NULL, MS), -EINVAL);
	assert_int_equal(twheel_loop_cancel(NULL, &r.t), -EINVAL);
	assert_int_equal(twheel_loop_cancel(l, NULL), -EINVAL);
	assert_int_equal(twheel_loop_post(NULL, NULL), -EINVAL);
	assert_int_equal(twheel_loop_submit(NULL), -EINVAL);
	assert_null(twheel_loop_get_sqe(NULL, NULL));
	assert_int_equal(twheel_loop_io_deadline(NULL, NULL, NULL, 0), -EINVAL);
	assert_int_equal(twheel_loop_compat_bind(NULL, MS), -EINVAL);
	assert_int_equal(twheel_loop_compat_bind(l, 999), -EINVAL);
	assert_int_equal(twheel_loop_compat_bind(l, 1000000001), -EINVAL);
	/* nothing was armed or counted */
	assert_int_equal(twheel_loop_count(l), 0);
	assert_false(tw_loop_timer_busy(&r.t));
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.iterations, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A timer (and a work item) never initialised, all zero: refused by every
 * arm and move, idle to del, cancel, busy and pending; nothing changes. */
static void zeroed_timer_and_work(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	struct tw_loop_timer z, d;
	struct tw_loop_work wz;

	(void)state;
	memset(&z, 0, sizeof(z));
	memset(&wz, 0, sizeof(wz));
	assert_int_equal(tw_loop_timer_init(&d, rec_fn, 0), 0);
	assert_int_equal(twheel_loop_add(l, &z, MS), -EINVAL);
	assert_int_equal(twheel_loop_add_at(l, &z, 1001 * MS), -EINVAL);
	assert_int_equal(twheel_loop_mod(l, &z, MS), -EINVAL);
	assert_int_equal(twheel_loop_mod_at(l, &z, 1001 * MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule(l, &z, MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule_at(l, &z, 1001 * MS), -EINVAL);
	assert_int_equal(twheel_loop_move(l, &z, &d), -EINVAL);
	assert_int_equal(twheel_loop_move(l, &d, &z), -EINVAL);
	assert_int_equal(twheel_loop_del(l, &z), 0);
	assert_int_equal(twheel_loop_cancel(l, &z), -ENOENT);
	assert_int_equal(tw_loop_timer_call(&z), -EINVAL);
	assert_false(tw_loop_timer_busy(&z));
	assert_false(twheel_loop_pending(l, &z));
	assert_int_equal(twheel_loop_post(l, &wz), -EINVAL);
	assert_int_equal(twheel_loop_count(l), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* TW_LOOP_EXECUTOR on a loop without an executor: every arm says -EINVAL,
 * not only twheel_loop_add(); so does a period shorter than the tick,
 * scheduled from another thread; and an armed timer is -EBUSY to _add_at. */
static void refused_timers_through_every_arm(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	struct rec x, p, r;

	(void)state;
	memset(&x, 0, sizeof(x));
	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	assert_int_equal(tw_loop_timer_init(&x.t, rec_fn, TW_LOOP_EXECUTOR), 0);
	assert_int_equal(twheel_loop_add_at(l, &x.t, 1001 * MS), -EINVAL);
	assert_int_equal(twheel_loop_mod(l, &x.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_mod_at(l, &x.t, 1001 * MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule(l, &x.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule_at(l, &x.t, 1001 * MS), -EINVAL);
	assert_int_equal(tw_loop_timer_init_periodic(&p.t, rec_fn, MS - 1, 0), 0);
	assert_int_equal(twheel_loop_schedule(l, &p.t, MS), -EINVAL);
	assert_int_equal(twheel_loop_schedule_at(l, &p.t, 1001 * MS), -EINVAL);
	assert_int_equal(tw_loop_timer_init_periodic(&p.t, rec_fn, MS, 0), 0);
	assert_int_equal(twheel_loop_add(l, &p.t, MS), 0); /* a period of one tick is allowed */
	assert_int_equal(tw_loop_timer_init(&r.t, rec_fn, 0), 0);
	assert_int_equal(twheel_loop_add_at(l, &r.t, 1005 * MS), 0);
	assert_int_equal(twheel_loop_add_at(l, &r.t, 1002 * MS), -EBUSY);
	assert_int_equal(r.t.deadline, 1005 * MS);
	assert_int_equal(twheel_loop_count(l), 2);
	assert_false(tw_loop_timer_busy(&x.t));
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* twheel_loop_run_once() from a callback: -EBUSY, nothing run (the other
 * timer due in the same iteration still runs once, in that iteration). */
static void run_once_fn(struct tw_loop_timer *t)
{
	struct rec *r = tw_container_of(t, struct rec, t);

	r->n++;
	r->ret = twheel_loop_run_once(r->l, TW_LOOP_NOWAIT);
}

static void run_once_from_a_callback(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 1000 * MS, NULL);
	struct rec a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.l = l;
	assert_int_equal(tw_loop_timer_init(&a.t, run_once_fn, 0), 0);
	assert_int_equal(tw_loop_timer_init(&b.t, rec_fn, 0), 0);
	assert_int_equal(twheel_loop_add_at(l, &a.t, 1001 * MS), 0);
	assert_int_equal(twheel_loop_add_at(l, &b.t, 1002 * MS), 0);
	fake_clock_set(&c, 1002 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 2);
	assert_int_equal(a.ret, -EBUSY);
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 1);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * The ends of the clock, on the longest tick (1 s), the default and the
 * shortest (1 us). A deadline of UINT64_MAX lies in a tick that begins
 * beyond any 64-bit reading (none of these divides 2^64 - 1): armed by
 * deadline, by delay or from the inbox, it stays pending and never fires,
 * the clock at UINT64_MAX included. From a reading of UINT64_MAX a delay
 * has come: due in the next iteration, queued ones too. On 1 s ticks a
 * deadline just past a tick boundary waits for the next boundary.
 */
static void at_the_clocks_ends(void **state)
{
	static const uint64_t ticks[] = { 1000000000, MS, US };
	struct twheel_loop_config cfg;
	struct fake_clock c;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		struct rec a, b, s, q;
		struct twheel_loop *l;

		twheel_loop_config_init(&cfg);
		cfg.tick_ns = ticks[i];
		l = fake_loop(&c, 0, &cfg);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		memset(&s, 0, sizeof(s));
		memset(&q, 0, sizeof(q));
		tw_loop_timer_init(&a.t, rec_fn, 0);
		tw_loop_timer_init(&b.t, rec_fn, 0);
		tw_loop_timer_init(&s.t, rec_fn, 0);
		tw_loop_timer_init(&q.t, rec_fn, 0);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		assert_int_equal(twheel_loop_add_at(l, &a.t, UINT64_MAX), 0);
		assert_int_equal(twheel_loop_add(l, &b.t, UINT64_MAX), 0);
		assert_int_equal(twheel_loop_schedule_at(l, &s.t, UINT64_MAX), 0);
		assert_int_equal(twheel_loop_schedule(l, &q.t, UINT64_MAX), 0);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		fake_clock_set(&c, UINT64_MAX - 1);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		fake_clock_set(&c, UINT64_MAX);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		assert_int_equal(a.n + b.n + s.n + q.n, 0);
		assert_int_equal(twheel_loop_count(l), 4);
		assert_int_equal(a.t.deadline, UINT64_MAX);
		assert_int_equal(b.t.deadline, UINT64_MAX);

		/* from the last reading every delay has come */
		assert_int_equal(twheel_loop_mod(l, &b.t, 5), 1);
		assert_int_equal(twheel_loop_del(l, &q.t), 1);
		assert_int_equal(twheel_loop_schedule(l, &q.t, 5), 0);
		/* b in the next iteration; q, from the inbox, in it or the one after */
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 1);
		assert_int_equal(b.n, 1);
		twheel_loop_run_once(l, TW_LOOP_NOWAIT);
		assert_int_equal(q.n, 1);
		assert_int_equal(a.n + s.n, 0);
		twheel_loop_destroy(l, NULL, NULL, NULL);
	}

	/* 1 s ticks: a delay of 1 ns 10 ns before the clock's end lies in a
	 * tick that begins past it: never */
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = 1000000000;
	{
		struct twheel_loop *l = fake_loop(&c, UINT64_MAX - 10, &cfg);
		struct rec a;

		memset(&a, 0, sizeof(a));
		tw_loop_timer_init(&a.t, rec_fn, 0);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		assert_int_equal(twheel_loop_add(l, &a.t, 1), 0);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		fake_clock_set(&c, UINT64_MAX);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		assert_true(twheel_loop_pending(l, &a.t));
		twheel_loop_destroy(l, NULL, NULL, NULL);
	}

	/* 1 s ticks: a deadline 1 ns past a boundary fires at the next one */
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = 1000000000;
	{
		struct twheel_loop *l = fake_loop(&c, 0, &cfg);
		struct rec a;

		memset(&a, 0, sizeof(a));
		tw_loop_timer_init(&a.t, rec_fn, 0);
		assert_int_equal(twheel_loop_add_at(l, &a.t, 1000000001), 0);
		fake_clock_set(&c, 1999999999);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
		fake_clock_set(&c, 2000000000);
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
		twheel_loop_destroy(l, NULL, NULL, NULL);
	}
}

/*
 * A periodic timer whose next deadline lies beyond UINT64_MAX ns (its
 * schedule overflows 64 bits) never runs again: no 64-bit clock reaches
 * that deadline. At the clock's last reading the first version took the
 * saturated deadline, UINT64_MAX, for one that had come, and ran the
 * timer again in every iteration, serving the same deadline each time.
 * Fixed rate (a period of half the range; a 1 ms period with each misfire
 * policy) and fixed delay.
 */
static struct {
	int n;
	uint64_t deadline[16];
} pruns;

static void prun_fn(struct tw_loop_timer *t)
{
	if (pruns.n < 16)
		pruns.deadline[pruns.n] = t->deadline;
	pruns.n++;
}

/* Arm periodic @t at @first, run at @first, then 8 iterations at the
 * clock's end, and one more that runs nothing; returns the runs. */
static int runs_to_the_end(uint64_t period, unsigned flags, uint64_t first)
{
	struct fake_clock c;
	struct twheel_loop *l = fake_loop(&c, 0, NULL);
	struct tw_loop_timer t;
	int i;

	memset(&pruns, 0, sizeof(pruns));
	assert_int_equal(tw_loop_timer_init_periodic(&t, prun_fn, period, flags), 0);
	assert_int_equal(twheel_loop_add_at(l, &t, first), 0);
	fake_clock_set(&c, first);
	twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	fake_clock_set(&c, UINT64_MAX);
	for (i = 0; i < 8; i++)
		twheel_loop_run_once(l, TW_LOOP_NOWAIT);
	assert_true(twheel_loop_pending(l, &t));
	assert_int_equal(t.deadline, UINT64_MAX);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
	return pruns.n;
}

static void periodic_beyond_the_clocks_end(void **state)
{
	const uint64_t end = UINT64_MAX - 5 * MS - MS / 2; /* 6 deadlines <= UINT64_MAX */

	(void)state;
	/* 1e9, then 1e9 + period (at the end); 1e9 + 2 * period is beyond */
	assert_int_equal(runs_to_the_end(UINT64_MAX / 2, 0, 1000000000), 2);
	assert_int_equal(pruns.deadline[1], 1000000000 + UINT64_MAX / 2);
	/* a period of UINT64_MAX: once, whatever the misfire policy */
	assert_int_equal(runs_to_the_end(UINT64_MAX, 0, 1000000000), 1);
	assert_int_equal(runs_to_the_end(UINT64_MAX, TW_LOOP_MISFIRE_ONCE, 1000000000), 1);
	assert_int_equal(runs_to_the_end(UINT64_MAX, TW_LOOP_MISFIRE_ALL, 1000000000), 1);
	assert_int_equal(runs_to_the_end(UINT64_MAX, TW_LOOP_FIXED_DELAY, 1000000000), 1);
	/* 1 ms, the first deadline 5.5 ms before the end, not due before it:
	 * at the end 4 more have passed (SKIP runs none, ONCE one, ALL each
	 * of the 6 up to UINT64_MAX - 0.5 ms) */
	assert_int_equal(runs_to_the_end(MS, TW_LOOP_MISFIRE_SKIP, end), 0);
	assert_int_equal(runs_to_the_end(MS, TW_LOOP_MISFIRE_ONCE, end), 1);
	assert_int_equal(runs_to_the_end(MS, TW_LOOP_MISFIRE_ALL, end), 6);
	assert_int_equal(pruns.deadline[5], UINT64_MAX - MS / 2);
	/* fixed delay: the next a period after the run (or the skip) at the
	 * end is beyond; ALL first pays the 4 runs it owes */
	assert_int_equal(runs_to_the_end(MS, TW_LOOP_FIXED_DELAY, end), 0);
	assert_int_equal(runs_to_the_end(MS, TW_LOOP_FIXED_DELAY | TW_LOOP_MISFIRE_ONCE, end), 1);
	assert_int_equal(runs_to_the_end(MS, TW_LOOP_FIXED_DELAY | TW_LOOP_MISFIRE_ALL, end), 5);
}

/*
 * The I/O calls' mode errors: before the loop's first run its ring cannot
 * submit (-EBADFD), and a loop in fallback mode has no I/O at all
 * (-EOPNOTSUPP, NULL). Skipped where io_uring is refused.
 */
static void io_fn(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	(void)io, (void)cqe;
}

static void io_calls_by_mode(void **state)
{
	struct twheel_loop_config cfg;
	struct tw_loop_deadline dl;
	struct twheel_loop *l;
	struct io_uring_sqe *sqe;
	struct tw_loop_io io = { .func = NULL };

	(void)state;
	memset(&dl, 0, sizeof(dl));
	twheel_loop_config_init(&cfg);
	cfg.flags = TW_LOOP_NO_URING;
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);
	assert_true(twheel_loop_features(l) & TW_LOOP_FEAT_FALLBACK);
	assert_null(twheel_loop_ring(l));
	assert_null(twheel_loop_get_sqe(l, &io));
	assert_int_equal(twheel_loop_submit(l), -EOPNOTSUPP);
	/* any non-NULL pointer: fallback mode refuses before reading it */
	assert_int_equal(twheel_loop_io_deadline(l, (struct io_uring_sqe *)(void *)&dl, &dl, 1),
			 -EOPNOTSUPP);
	twheel_loop_destroy(l, NULL, NULL, NULL);

	cfg.flags = TW_LOOP_URING_ONLY;
	if (twheel_loop_create(&l, &cfg, NULL, 0)) {
		skip();
		return;
	}
	assert_int_equal(twheel_loop_submit(l), -EBADFD);
	assert_null(twheel_loop_get_sqe(l, &io)); /* a NULL handler */
	io.func = io_fn;
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_true(twheel_loop_submit(l) >= 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	assert_int_equal(twheel_loop_submit(l), -ESHUTDOWN);
	sqe = twheel_loop_get_sqe(l, &io); /* stopped: it would never start */
	assert_null(sqe);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(null_arguments),
		cmocka_unit_test(zeroed_timer_and_work),
		cmocka_unit_test(refused_timers_through_every_arm),
		cmocka_unit_test(run_once_from_a_callback),
		cmocka_unit_test(at_the_clocks_ends),
		cmocka_unit_test(periodic_beyond_the_clocks_end),
		cmocka_unit_test(io_calls_by_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
