/* SPDX-License-Identifier: MIT */
/*
 * I/O before timers, and a loop that is behind on I/O. One iteration runs
 * at most 256 I/O handlers (a CPU-starved server with thousands of
 * completions waiting still returns from every run_once() and serves other
 * threads' requests), and the wheels are advanced to a clock reading only
 * once every completion that was in the CQ at that reading has run: an
 * idle timer due now must not close a connection whose data already waits
 * in the CQ behind hundreds of other completions (a loaded demo server once
 * closed a chatty connection so). Completions that arrive after the reading
 * do not hold the timers back: a steady flood delays them by one CQ ring of
 * handlers at most.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define NOPS 3000u
#define MAX_BATCH 256u

struct ctx {
	struct twheel_loop *l;
	struct tw_loop_io io;
	unsigned handled;          /* NOP completions run */
	unsigned handled_at_fire;  /* ...when the due timer fired */
	unsigned handled_at_work;  /* ...when the posted work ran */
	bool resubmit;             /* each NOP's handler submits another */
	struct tw_loop_timer t;
	struct tw_loop_work w;
	bool fired;
	/* a session: its data's completion and its idle timer */
	struct tw_loop_io data;
	struct tw_loop_timer idle;
	unsigned data_seen;
	bool closed;
};

static void on_nop(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct ctx *x = tw_container_of(io, struct ctx, io);

	assert_int_equal(cqe->res, 0);
	x->handled++;
	if (x->resubmit) {
		struct io_uring_sqe *sqe = twheel_loop_get_sqe(x->l, &x->io);

		assert_non_null(sqe);
		io_uring_prep_nop(sqe);
	}
}

static void on_timer(struct tw_loop_timer *t)
{
	struct ctx *x = tw_container_of(t, struct ctx, t);

	x->fired = true;
	x->handled_at_fire = x->handled;
}

static void on_work(struct tw_loop_work *w)
{
	struct ctx *x = tw_container_of(w, struct ctx, w);

	x->handled_at_work = x->handled;
}

/* The session's data: it is alive, its idle timeout starts again. */
static void on_data(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct ctx *x = tw_container_of(io, struct ctx, data);

	(void)cqe;
	x->data_seen++;
	assert_int_equal(twheel_loop_mod(x->l, &x->idle, 100 * MS), 1);
}

static void on_idle(struct tw_loop_timer *t)
{
	struct ctx *x = tw_container_of(t, struct ctx, idle);

	x->closed = true;
}

/* A loop on a fake clock with a CQ of 8,192 entries, started. */
static struct twheel_loop *flood_loop(struct fake_clock *c, struct ctx *x)
{
	struct twheel_loop_config cfg;

	twheel_loop_config_init(&cfg);
	cfg.entries = 4096; /* CQ ring of 8192: the NOPs all fit */
	x->l = fake_loop(c, 1000 * MS, &cfg);
	x->io.func = on_nop;
	assert_int_equal(twheel_loop_run_once(x->l, TW_LOOP_NOWAIT), 0);
	return x->l;
}

static void queue_nops(struct ctx *x, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = twheel_loop_get_sqe(x->l, &x->io);

		assert_non_null(sqe);
		io_uring_prep_nop(sqe);
	}
}

/*
 * A session's idle timer is due, and its data is in the CQ behind 600
 * other completions (more than one iteration's batch): the data's handler
 * runs first and re-arms the timer, which does not fire.
 */
static void test_data_in_the_cq_runs_before_a_due_timer(void **state)
{
	struct fake_clock c;
	struct ctx x = { 0 };
	struct twheel_loop *l = flood_loop(&c, &x);
	struct io_uring_sqe *sqe;
	int iters = 0;

	(void)state;
	tw_loop_timer_init(&x.idle, on_idle, 0);
	assert_int_equal(twheel_loop_add(l, &x.idle, 100 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0); /* placed */
	queue_nops(&x, 600);
	x.data.func = on_data;
	sqe = twheel_loop_get_sqe(l, &x.data);
	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	assert_int_equal(twheel_loop_submit(l), 601);
	fake_clock_add(&c, 150 * MS); /* the idle deadline has passed */

	while (x.data_seen == 0 && iters++ < 10) {
		int ran = twheel_loop_run_once(l, TW_LOOP_NOWAIT);

		assert_true(ran > 0 && ran <= (int)MAX_BATCH + 1);
		assert_false(x.closed);
	}
	assert_int_equal(x.data_seen, 1);
	assert_int_equal(x.handled, 600);
	assert_true(iters > 1); /* more than one batch was waiting */
	/* the timeout counts from the data: not before 100 ms more */
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	fake_clock_add(&c, 99 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	assert_false(x.closed);
	fake_clock_add(&c, 2 * MS);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 1);
	assert_true(x.closed);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * Thousands of completions waiting and a timer due: every run_once() runs
 * at most one batch, without sleeping, and serves the inbox; the timer
 * fires once the completions that were waiting have all run.
 */
static void test_a_backlog_runs_in_batches_then_the_timers(void **state)
{
	struct fake_clock c;
	struct ctx x = { 0 };
	struct twheel_loop *l = flood_loop(&c, &x);
	int iters = 0;

	(void)state;
	queue_nops(&x, NOPS);
	assert_int_equal(twheel_loop_submit(l), (int)NOPS);
	tw_loop_timer_init(&x.t, on_timer, 0);
	assert_int_equal(twheel_loop_add_at(l, &x.t, twheel_loop_clock(l)), 0);
	tw_loop_work_init(&x.w, on_work);
	assert_int_equal(twheel_loop_post(l, &x.w), 0);
	fake_clock_add(&c, 2 * MS); /* past the deadline's tick */

	/* Nothing else would wake the loop: alarm() fails the test if an
	 * iteration blocks. */
	alarm(10);
	while (!x.fired && iters++ < (int)NOPS) {
		int ran = twheel_loop_run_once(l, 0);

		assert_true(ran > 0 && ran <= (int)MAX_BATCH + 2);
	}
	alarm(0);
	assert_true(x.fired);
	assert_int_equal(x.handled_at_fire, NOPS);
	assert_true(x.handled_at_work <= MAX_BATCH); /* the first iteration */
	assert_int_equal(iters, (int)((NOPS + MAX_BATCH - 1) / MAX_BATCH));
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A steady flood (each completion's handler submits another request, so
 * the CQ never empties): the due timer waits for the completions that were
 * there when it was found due, not for the ones that keep arriving.
 */
static void test_a_steady_flood_does_not_starve_timers(void **state)
{
	struct fake_clock c;
	struct ctx x = { 0 };
	struct twheel_loop *l = flood_loop(&c, &x);
	int iters = 0;

	(void)state;
	queue_nops(&x, 600);
	assert_int_equal(twheel_loop_submit(l), 600);
	x.resubmit = true;
	tw_loop_timer_init(&x.t, on_timer, 0);
	assert_int_equal(twheel_loop_add_at(l, &x.t, twheel_loop_clock(l)), 0);
	fake_clock_add(&c, 2 * MS);

	alarm(10);
	while (!x.fired && iters++ < 100)
		assert_true(twheel_loop_run_once(l, 0) > 0);
	alarm(0);
	assert_true(x.fired);
	assert_true(x.handled_at_fire >= 600 && x.handled_at_fire <= 600 + MAX_BATCH);
	x.resubmit = false;
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_in_the_cq_runs_before_a_due_timer),
		cmocka_unit_test(test_a_backlog_runs_in_batches_then_the_timers),
		cmocka_unit_test(test_a_steady_flood_does_not_starve_timers),
	};

	require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
