/* SPDX-License-Identifier: MIT */
/*
 * A short timer armed after the loop idled costs no iteration that runs
 * nothing: on an injected clock, every iteration from the arm to the
 * timer's tick sleeps in the kernel (stats.waits) and runs nothing, and
 * the one at its tick runs it. The wheels' time moves only when the loop
 * advances them; while the loop idles it stays at the last iteration's
 * tick. A timer placed from there, 256 ticks or more after it, went to a
 * slot above the first level, whose cascade tick came before the timer's
 * own (or had passed already): an iteration at that tick, with no sleep
 * when it had passed, that ran nothing. Each way of arming is checked:
 * on the loop thread outside an iteration by delay (alone, beside a far
 * timer, re-armed, placed by a del, 64 at once) and by deadline (alone,
 * re-armed beside a far timer), on the real clock below; from the inbox
 * (a schedule by delay and by deadline, also from another thread while
 * the loop sleeps, posted work that arms) and from an I/O handler (by
 * deadline and by delay; io_uring mode only). On an injected clock an arm
 * outside an iteration is not caught up (it may step back: see
 * twheel_loop_add()). On the injected clock each
 * iteration really sleeps for the wait it computed
 * (a few ms): the clock does not move meanwhile.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"

#define START (1000 * MS + 123) /* not on a tick boundary */

struct one {
	struct tw_loop_timer t;
	int n;
};

static int fired; /* every one_fn call */

static void one_fn(struct tw_loop_timer *t)
{
	tw_container_of(t, struct one, t)->n++;
	fired++;
}

static struct twheel_loop_stats stats(const struct twheel_loop *l)
{
	struct twheel_loop_stats s;

	assert_int_equal(twheel_loop_get_stats(l, &s), 0);
	return s;
}

/* A loop on the fake clock at START, its wheels advanced there, then idle
 * for @idle ns (no iteration). */
static struct twheel_loop *idle_loop(struct fake_clock *c, uint64_t idle)
{
	struct twheel_loop *l = fake_loop(c, START, NULL);

	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_add(c, idle);
	return l;
}

/*
 * Iterate (waiting) with the clock stepped by 1 ms, up to the tick of
 * @deadline: every iteration before it sleeps and runs nothing; the one
 * at that tick runs @o's timer (once) and nothing else.
 */
static void sleeps_until_n(struct twheel_loop *l, struct fake_clock *c, uint64_t deadline,
			   int n)
{
	uint64_t due = (deadline + MS - 1) / MS * MS; /* the tick they fire at */
	int before = fired;

	for (;;) {
		struct twheel_loop_stats a = stats(l), b;
		uint64_t now = fake_clock_read(c);
		int ret = twheel_loop_run_once(l, 0);

		b = stats(l);
		if (now >= due) {
			assert_int_equal(ret, n);
			assert_int_equal(fired - before, n);
			return;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(fired, before);
		if (b.waits != a.waits + 1)
			fail_msg("%llu ns before the timer's tick: an iteration that neither "
				 "slept nor ran anything",
				 (unsigned long long)(due - now));
		fake_clock_set(c, now + MS < due ? now + MS : due);
	}
}

/* sleeps_until_n() for @o's timer alone. */
static void sleeps_until(struct twheel_loop *l, struct fake_clock *c, struct one *o,
			 uint64_t deadline)
{
	int n = o->n;

	sleeps_until_n(l, c, deadline, 1);
	assert_int_equal(o->n, n + 1);
}

static void destroy(struct twheel_loop *l)
{
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * By delay on the loop thread, outside an iteration, on the default clock
 * (CLOCK_MONOTONIC: there the placement outside an iteration catches the
 * wheels up; an injected clock may step back, and it does not). The loop
 * really idles 300 ms, then the first iteration after the arm sleeps once
 * and runs the timer: before, it slept no time (the cascade tick had
 * passed) and ran nothing, and the second one ran it.
 */
static struct twheel_loop *real_loop(void)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l = NULL;
	char msg[256];

	twheel_loop_config_init(&cfg);
	cfg.flags = test_loop_flags();
	if (twheel_loop_create(&l, &cfg, msg, sizeof(msg)))
		fail_msg("twheel_loop_create: %s", msg);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	return l;
}

static void idle_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The next iteration sleeps once and runs @n timers. */
static void one_wait_runs(struct twheel_loop *l, int n)
{
	struct twheel_loop_stats a = stats(l), b;
	int before = fired, ret = twheel_loop_run_once(l, 0);

	b = stats(l);
	if (ret == 0 && b.waits == a.waits)
		fail_msg("an iteration that neither slept nor ran anything");
	assert_int_equal(ret, n);
	assert_int_equal(fired - before, n);
	assert_int_equal(b.waits, a.waits + 1);
}

static void test_delay_after_idle(void **state)
{
	struct twheel_loop *l = real_loop();
	struct one o = { .n = 0 };

	(void)state;
	idle_ms(300);
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_add(l, &o.t, 2 * MS), 0);
	one_wait_runs(l, 1);
	destroy(l);
}

/* Beside a far timer (10 s), a far timer re-armed short. */
static void test_delay_beside_a_far_timer(void **state)
{
	struct twheel_loop *l = real_loop();
	struct one far = { .n = 0 }, o = { .n = 0 };

	(void)state;
	assert_int_equal(tw_loop_timer_init(&far.t, one_fn, 0), 0);
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_add(l, &far.t, 10000 * MS), 0);
	assert_int_equal(twheel_loop_add(l, &o.t, 10000 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	idle_ms(300);
	assert_int_equal(twheel_loop_mod(l, &o.t, 2 * MS), 1);
	one_wait_runs(l, 1);
	assert_int_equal(far.n, 0);
	destroy(l);
}

/* Then a del of another timer armed by delay: the del places both from a
 * fresh reading, outside an iteration. */
static void test_delay_placed_by_a_del_after_idle(void **state)
{
	struct twheel_loop *l = real_loop();
	struct one o = { .n = 0 }, other = { .n = 0 };

	(void)state;
	idle_ms(300);
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(tw_loop_timer_init(&other.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_add(l, &o.t, 2 * MS), 0);
	assert_int_equal(twheel_loop_add(l, &other.t, 5000 * MS), 0);
	assert_int_equal(twheel_loop_del(l, &other.t), 1);
	one_wait_runs(l, 1);
	destroy(l);
}

/* By deadline outside an iteration: placed at once, from the wheels'
 * time then; the wait's reading catches them up through the cascade. */
static void test_deadline_after_idle(void **state)
{
	struct twheel_loop *l = real_loop();
	struct one o = { .n = 0 };

	(void)state;
	idle_ms(300);
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_add_at(l, &o.t, twheel_loop_clock(l) + 2 * MS), 0);
	one_wait_runs(l, 1);
	destroy(l);
}

/*
 * The same with a 256-tick boundary, where the first level wraps and the
 * slot above cascades, between the arm's time and the deadline: placed
 * from the wheels' time before the idle, the timer went to that slot, and
 * the first iteration slept until the boundary and ran nothing. The test
 * above meets a boundary there in 2 of 256 runs; this one in every run
 * (1 ms ticks count from CLOCK_MONOTONIC's zero: twheel_rt_floor()).
 */
static void test_deadline_after_idle_across_a_cascade(void **state)
{
	struct twheel_loop *l = real_loop();
	struct one o = { .n = 0 };
	uint64_t tick, b;

	(void)state;
	idle_ms(300);
	for (;;) { /* a boundary 8 to 200 ticks ahead */
		tick = twheel_loop_clock(l) / MS;
		b = (tick | 255) + 1;
		if (b - tick >= 8 && b - tick <= 200)
			break;
		/* to about 128 ticks before a boundary, mid-window (rather
		 * than just past one: 247 ahead, outside it again) */
		idle_ms((unsigned)(b - tick + 128) % 256);
	}
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_add_at(l, &o.t, (b + 1) * MS), 0);
	one_wait_runs(l, 1);
	destroy(l);
}

/* A far timer re-armed short by deadline, beside another far one. */
static void test_deadline_beside_a_far_timer(void **state)
{
	struct twheel_loop *l = real_loop();
	struct one far = { .n = 0 }, o = { .n = 0 };

	(void)state;
	assert_int_equal(tw_loop_timer_init(&far.t, one_fn, 0), 0);
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_add(l, &far.t, 10000 * MS), 0);
	assert_int_equal(twheel_loop_add(l, &o.t, 10000 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	idle_ms(300);
	assert_int_equal(twheel_loop_mod_at(l, &o.t, twheel_loop_clock(l) + 2 * MS), 1);
	one_wait_runs(l, 1);
	assert_int_equal(far.n, 0);
	destroy(l);
}

/* 64 arms by delay: the 64th places them all at once (PARK_BATCH). The
 * first few may fire a tick before the rest (they were placed earlier). */
static void test_many_delays_after_idle(void **state)
{
	struct twheel_loop *l = real_loop();
	static struct one o[64];
	int total = 0;
	unsigned i;

	(void)state;
	idle_ms(300);
	for (i = 0; i < 64; i++) {
		o[i].n = 0;
		assert_int_equal(tw_loop_timer_init(&o[i].t, one_fn, 0), 0);
		assert_int_equal(twheel_loop_add(l, &o[i].t, 2 * MS), 0);
	}
	while (total < 64) {
		struct twheel_loop_stats a = stats(l), b;
		int ret = twheel_loop_run_once(l, 0);

		b = stats(l);
		assert_true(ret >= 0);
		if (ret == 0 && b.waits == a.waits)
			fail_msg("an iteration that neither slept nor ran anything");
		total += ret;
	}
	assert_int_equal(total, 64);
	destroy(l);
}

/*
 * From the inbox: the iteration that takes the item places the timer,
 * then advances the wheels to its tick, which falls short of the level-1
 * slot's cascade tick (1280 ms): 270 ms idle, 20 ms, the timer at 1291.
 */
static void test_schedule_after_idle(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = idle_loop(&c, 270 * MS);
	struct one o = { .n = 0 };
	uint64_t d = fake_clock_read(&c) + 20 * MS;

	(void)state;
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_schedule(l, &o.t, 20 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, 0), 0); /* takes it */
	sleeps_until(l, &c, &o, d);
	destroy(l);
}

static void test_schedule_at_after_idle(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = idle_loop(&c, 270 * MS);
	struct one o = { .n = 0 };
	uint64_t d = fake_clock_read(&c) + 20 * MS;

	(void)state;
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(twheel_loop_schedule_at(l, &o.t, d), 0);
	assert_int_equal(twheel_loop_run_once(l, 0), 0);
	sleeps_until(l, &c, &o, d);
	destroy(l);
}

/* The same from another thread, while the loop sleeps with no timer. */
struct sched_arg {
	struct twheel_loop *l;
	struct one *o;
};

static void *schedule_thread(void *p)
{
	struct sched_arg *a = p;

	assert_int_equal(twheel_loop_schedule(a->l, &a->o->t, 20 * MS), 0);
	return NULL;
}

static void test_schedule_from_another_thread_after_idle(void **state)
{
	struct fake_clock c;
	struct twheel_loop *l = idle_loop(&c, 270 * MS);
	struct one o = { .n = 0 };
	struct sched_arg a = { .l = l, .o = &o };
	uint64_t d = fake_clock_read(&c) + 20 * MS;
	pthread_t th;

	(void)state;
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, schedule_thread, &a), 0);
	/* sleeps until the schedule wakes it (or takes it at once) */
	while (stats(l).inbox_items == 0)
		assert_int_equal(twheel_loop_run_once(l, 0), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	sleeps_until(l, &c, &o, d);
	destroy(l);
}

/* Posted work that arms a timer by deadline: it runs before the advance. */
static struct twheel_loop *work_loop;
static struct one work_one;

static void work_arms(struct tw_loop_work *w)
{
	(void)w;
	assert_int_equal(twheel_loop_add_at(work_loop, &work_one.t,
					    twheel_loop_now(work_loop) + 20 * MS), 0);
}

static void test_posted_work_arms_after_idle(void **state)
{
	struct fake_clock c;
	struct tw_loop_work w;
	uint64_t d;

	(void)state;
	work_loop = idle_loop(&c, 270 * MS);
	work_one.n = 0;
	d = fake_clock_read(&c) + 20 * MS;
	assert_int_equal(tw_loop_timer_init(&work_one.t, one_fn, 0), 0);
	tw_loop_work_init(&w, work_arms);
	assert_int_equal(twheel_loop_post(work_loop, &w), 0);
	assert_int_equal(twheel_loop_run_once(work_loop, 0), 1); /* the work */
	sleeps_until(work_loop, &c, &work_one, d);
	destroy(work_loop);
}

/* An I/O handler arms by deadline and by delay (io_uring mode only). */
struct nop {
	struct tw_loop_io io;
	struct twheel_loop *l;
	struct one *o;
	bool by_delay;
};

static void nop_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct nop *n = tw_container_of(io, struct nop, io);

	assert_int_equal(cqe->res, 0);
	if (n->by_delay)
		assert_int_equal(twheel_loop_add(n->l, &n->o->t, 20 * MS), 0);
	else
		assert_int_equal(twheel_loop_add_at(n->l, &n->o->t,
						    twheel_loop_now(n->l) + 20 * MS), 0);
}

static void io_handler_arms(bool by_delay)
{
	struct fake_clock c;
	struct twheel_loop *l = idle_loop(&c, 270 * MS);
	struct one o = { .n = 0 };
	struct nop n = { .io.func = nop_done, .l = l, .o = &o, .by_delay = by_delay };
	struct io_uring_sqe *sqe;
	uint64_t d = fake_clock_read(&c) + 20 * MS;

	if (twheel_loop_features(l) & TW_LOOP_FEAT_FALLBACK) {
		destroy(l);
		skip();
	}
	assert_int_equal(tw_loop_timer_init(&o.t, one_fn, 0), 0);
	sqe = twheel_loop_get_sqe(l, &n.io);
	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	assert_int_equal(twheel_loop_run_once(l, 0), 1); /* the nop's handler */
	assert_int_equal(stats(l).io_completions, 1);
	sleeps_until(l, &c, &o, d);
	destroy(l);
}

static void test_io_handler_arms_at_after_idle(void **state)
{
	(void)state;
	io_handler_arms(false);
}

static void test_io_handler_arms_by_delay_after_idle(void **state)
{
	(void)state;
	io_handler_arms(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delay_after_idle),
		cmocka_unit_test(test_delay_beside_a_far_timer),
		cmocka_unit_test(test_delay_placed_by_a_del_after_idle),
		cmocka_unit_test(test_many_delays_after_idle),
		cmocka_unit_test(test_deadline_after_idle),
		cmocka_unit_test(test_deadline_after_idle_across_a_cascade),
		cmocka_unit_test(test_deadline_beside_a_far_timer),
		cmocka_unit_test(test_schedule_after_idle),
		cmocka_unit_test(test_schedule_at_after_idle),
		cmocka_unit_test(test_schedule_from_another_thread_after_idle),
		cmocka_unit_test(test_posted_work_arms_after_idle),
		cmocka_unit_test(test_io_handler_arms_at_after_idle),
		cmocka_unit_test(test_io_handler_arms_by_delay_after_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
