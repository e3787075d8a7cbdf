/* SPDX-License-Identifier: MIT */
/*
 * A loop that is behind on I/O still looks at its timers: one iteration
 * runs at most a bounded batch of I/O handlers (256) before advancing the
 * wheels, and the completions left over are run by the next iterations
 * without sleeping. Found with the idle-timeout demo (docs/demo.md): a
 * CPU-starved server worker ran 8,192 completions (the whole CQ ring) per
 * iteration, about a second of wall time, before firing idle timers that
 * were due.
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
	struct tw_loop_io io;
	unsigned handled;          /* NOP completions run */
	unsigned handled_at_fire;  /* ...when the due timer fired */
	struct tw_loop_timer t;
	bool fired;
};

static void on_nop(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct ctx *x = tw_container_of(io, struct ctx, io);

	assert_int_equal(cqe->res, 0);
	x->handled++;
}

static void on_timer(struct tw_loop_timer *t)
{
	struct ctx *x = tw_container_of(t, struct ctx, t);

	x->fired = true;
	x->handled_at_fire = x->handled;
}

static void test_timers_not_behind_a_cqe_flood(void **state)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	struct ctx x = { .io.func = on_nop };
	char msg[256];
	unsigned i;
	int iters = 0;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.entries = 4096; /* CQ ring of 8192: the NOPs all fit */
	assert_int_equal(twheel_loop_create(&l, &cfg, msg, sizeof(msg)), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);

	/* Thousands of completions ready at once, and a timer already due. */
	for (i = 0; i < NOPS; i++) {
		struct io_uring_sqe *sqe = twheel_loop_get_sqe(l, &x.io);

		assert_non_null(sqe);
		io_uring_prep_nop(sqe);
	}
	assert_int_equal(twheel_loop_submit(l), (int)NOPS);
	tw_loop_timer_init(&x.t, on_timer, 0);
	assert_int_equal(twheel_loop_add_at(l, &x.t, twheel_loop_clock(l)), 0);
	usleep(2000); /* past the deadline's tick */

	/* The timer fires in the first iteration, after at most one batch. */
	assert_true(twheel_loop_run_once(l, 0) > 0);
	assert_true(x.fired);
	assert_true(x.handled_at_fire <= MAX_BATCH);
	assert_true(x.handled < NOPS);

	/* The rest is run without sleeping: nothing else would wake us
	 * (alarm() fails the test if an iteration blocks). */
	alarm(10);
	while (x.handled < NOPS && iters++ < (int)NOPS)
		assert_true(twheel_loop_run_once(l, 0) > 0);
	alarm(0);
	assert_int_equal(x.handled, NOPS);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_not_behind_a_cqe_flood),
	};

	require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
