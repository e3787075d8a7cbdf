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
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

/* The session re-armed its 100 ms idle timer when its data came, at the
 * clock's reading now: it is not closed 99 ms on, and is 2 ms later. */
static void closes_a_timeout_after_the_data(struct fake_clock *c, struct ctx *x)
{
	fake_clock_add(c, 99 * MS);
	assert_int_equal(twheel_loop_run_once(x->l, TW_LOOP_NOWAIT), 0);
	assert_false(x->closed);
	fake_clock_add(c, 2 * MS);
	assert_int_equal(twheel_loop_run_once(x->l, TW_LOOP_NOWAIT), 1);
	assert_true(x->closed);
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
	closes_a_timeout_after_the_data(&c, &x);
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

/*
 * The CQ ring overflowed: more completions came than it holds (1,024), and
 * the kernel keeps the rest on its overflow list until the loop has room.
 * Those came before the clock reading too, and run before the timers it
 * finds due. A loop with a small SQ (64) and the least CQ (1,024).
 */
#define OVF_NOPS 1500u
#define CQ_RING 1024u

static struct twheel_loop *small_cq_loop(struct fake_clock *c, struct ctx *x, unsigned flags)
{
	struct twheel_loop_config cfg;

	twheel_loop_config_init(&cfg);
	cfg.entries = 64; /* the CQ gets its floor, 1,024 */
	cfg.flags = flags;
	x->l = fake_loop(c, 1000 * MS, &cfg);
	x->io.func = on_nop;
	assert_int_equal(twheel_loop_run_once(x->l, TW_LOOP_NOWAIT), 0);
	assert_int_equal(twheel_loop_ring(x->l)->cq.ring_entries, CQ_RING);
	return x->l;
}

/* Whether the kernel holds completions on the ring's overflow list. */
static bool cq_overflowed(struct twheel_loop *l)
{
	return IO_URING_READ_ONCE(*twheel_loop_ring(l)->sq.kflags) & IORING_SQ_CQ_OVERFLOW;
}

/*
 * 1,500 NOPs complete at once, the last one a session's data: 1,024 go to
 * the CQ ring and 476 to the overflow list, the data among them. The
 * session's idle timer and another timer are due at the next reading:
 * every completion runs before either fires, and the data re-arms the idle
 * timer, which does not fire.
 */
static void test_overflowed_completions_run_before_due_timers(void **state)
{
	struct fake_clock c;
	struct ctx x = { 0 };
	struct twheel_loop *l = small_cq_loop(&c, &x, 0);
	struct twheel_loop_stats st;
	struct io_uring_sqe *sqe;
	int iters = 0;

	(void)state;
	tw_loop_timer_init(&x.idle, on_idle, 0);
	assert_int_equal(twheel_loop_add(l, &x.idle, 100 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0); /* placed */
	queue_nops(&x, OVF_NOPS - 1); /* get_sqe submits each full SQ */
	x.data.func = on_data;
	sqe = twheel_loop_get_sqe(l, &x.data);
	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	assert_true(twheel_loop_submit(l) > 0);
	assert_true(cq_overflowed(l));
	tw_loop_timer_init(&x.t, on_timer, 0);
	assert_int_equal(twheel_loop_add_at(l, &x.t, twheel_loop_clock(l)), 0);
	fake_clock_add(&c, 150 * MS); /* both timers are due */

	alarm(10);
	while (!x.fired && iters++ < 40) {
		int ran = twheel_loop_run_once(l, 0);

		assert_false(x.closed);
		assert_true(ran > 0 && ran <= (int)MAX_BATCH + 1);
	}
	alarm(0);
	assert_true(x.fired);
	assert_int_equal(x.handled_at_fire, OVF_NOPS - 1);
	assert_int_equal(x.data_seen, 1);
	assert_false(x.closed);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_true(st.cq_overflows > 0);
	assert_int_equal(st.cq_dropped, 0);
	/* the idle timeout counts from the data */
	closes_a_timeout_after_the_data(&c, &x);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A steady flood through an overflowed CQ: each handler submits another
 * NOP, so the overflow list never empties. The due timer waits for the
 * completions that were there at the reading (1,500: the ring and the
 * list), and for at most one CQ ring past the ring's (the bound), plus the
 * last iteration's batch.
 */
static void test_an_overflowing_flood_does_not_starve_timers(void **state)
{
	struct fake_clock c;
	struct ctx x = { 0 };
	struct twheel_loop *l = small_cq_loop(&c, &x, 0);
	int iters = 0;

	(void)state;
	queue_nops(&x, OVF_NOPS);
	assert_true(twheel_loop_submit(l) > 0);
	assert_true(cq_overflowed(l));
	x.resubmit = true;
	tw_loop_timer_init(&x.t, on_timer, 0);
	assert_int_equal(twheel_loop_add_at(l, &x.t, twheel_loop_clock(l)), 0);
	fake_clock_add(&c, 2 * MS);

	alarm(10);
	while (!x.fired && iters++ < 100)
		assert_true(twheel_loop_run_once(l, 0) > 0);
	alarm(0);
	print_message("the timer fired after %u completions\n", x.handled_at_fire);
	assert_true(x.fired);
	assert_true(cq_overflowed(l)); /* still flooding */
	assert_true(x.handled_at_fire >= OVF_NOPS);
	assert_true(x.handled_at_fire <= 2 * CQ_RING + MAX_BATCH);
	x.resubmit = false;
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * Sessions on sockets: 1,100 connections, each with a receive in flight and
 * an idle timer of 100 ms that its data re-arms. Every peer sends a byte at
 * 90 ms; the loop next reads the clock at 150 ms, with more completions
 * waiting than the CQ ring holds: with DEFER_TASKRUN as the kernel's task
 * work and on its overflow list, without it on the overflow list; with a
 * one-shot receive or a multishot poll (which the full ring ends). No
 * connection whose byte came is closed as idle.
 */
#define NSOCK 1100u

struct sock_ctx;

struct conn {
	int fd[2];
	struct tw_loop_io io;
	struct tw_loop_timer idle;
	struct tw_loop_deadline dl;
	struct sock_ctx *x;
	char buf[8];
	bool seen, closed;
};

struct sock_ctx {
	struct twheel_loop *l;
	struct conn *c;
	unsigned seen, closed, closed_seen;
	bool no_idle; /* the sessions have no idle timer */
};

static void on_sock(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct conn *k = tw_container_of(io, struct conn, io);

	assert_true(cqe->res > 0);
	if (k->seen)
		return; /* a multishot poll's later CQEs */
	k->seen = true;
	k->x->seen++;
	if (!k->closed && !k->x->no_idle)
		assert_int_equal(twheel_loop_mod(k->x->l, &k->idle, 100 * MS), 1);
}

static void on_sock_idle(struct tw_loop_timer *t)
{
	struct conn *k = tw_container_of(t, struct conn, idle);

	k->closed = true;
	k->x->closed++;
	if (k->seen)
		k->x->closed_seen++;
}

/* Raises the soft RLIMIT_NOFILE to @need, or skips the calling test (the
 * hard limit is lower): the tests that open no socket still run. */
static void require_nofile(rlim_t need)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		print_message("SKIP: RLIMIT_NOFILE hard limit %lu, the test needs %lu\n",
			      (unsigned long)rl.rlim_max, (unsigned long)need);
		skip();
	}
	rl.rlim_cur = need;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

enum session_kind {
	RECV,      /* a one-shot receive and an idle timer */
	MULTISHOT, /* a multishot poll and an idle timer */
	DEADLINE,  /* a receive with a deadline on the loop-timer path */
};

static void sessions_behind_a_full_cq(unsigned flags, enum session_kind kind)
{
	struct fake_clock c;
	struct ctx unused = { 0 };
	struct sock_ctx x = { 0 };
	struct twheel_loop_stats st;
	int iters = 0;

	require_nofile(2 * NSOCK + 64);
	x.l = small_cq_loop(&c, &unused, flags);
	x.no_idle = kind == DEADLINE;
	x.c = calloc(NSOCK, sizeof(*x.c));
	assert_non_null(x.c);
	for (unsigned i = 0; i < NSOCK; i++) {
		struct conn *k = &x.c[i];
		struct io_uring_sqe *sqe;

		k->x = &x;
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, k->fd), 0);
		k->io.func = on_sock;
		sqe = twheel_loop_get_sqe(x.l, &k->io);
		assert_non_null(sqe);
		if (kind == MULTISHOT)
			io_uring_prep_poll_multishot(sqe, k->fd[0], POLLIN);
		else
			io_uring_prep_recv(sqe, k->fd[0], k->buf, sizeof(k->buf), 0);
		tw_loop_timer_init(&k->idle, on_sock_idle, 0);
		if (kind == DEADLINE) /* the fake clock: the loop's own timer */
			assert_int_equal(twheel_loop_io_deadline(x.l, sqe, &k->dl,
								 twheel_loop_clock(x.l) + 100 * MS), 0);
		else
			assert_int_equal(twheel_loop_add(x.l, &k->idle, 100 * MS), 0);
	}
	/* the receives wait for data; the idle timers are placed at 0 ms */
	assert_int_equal(twheel_loop_run_once(x.l, TW_LOOP_NOWAIT), 0);
	fake_clock_add(&c, 90 * MS);
	for (unsigned i = 0; i < NSOCK; i++)
		assert_int_equal(write(x.c[i].fd[1], "x", 1), 1);
	fake_clock_add(&c, 60 * MS); /* every idle deadline has passed */

	alarm(10);
	while (x.seen < NSOCK && iters++ < 40)
		assert_true(twheel_loop_run_once(x.l, 0) > 0);
	alarm(0);
	assert_int_equal(twheel_loop_get_stats(x.l, &st), 0);
	print_message("%u of %u sessions closed as idle with their data come, %u "
		      "closed, %llu timers fired, %d iterations, %llu overflows\n",
		      x.closed - x.closed_seen, NSOCK, x.closed,
		      (unsigned long long)st.timers_fired, iters,
		      (unsigned long long)st.cq_overflows);
	assert_int_equal(x.seen, NSOCK); /* each with its byte, none -ETIME */
	assert_true(st.cq_overflows > 0); /* the case this test is for */
	assert_int_equal(x.closed, 0);
	/* no deadline fired: the requests had completed */
	assert_int_equal(st.timers_fired, 0);
	if (kind == DEADLINE)
		goto out;
	/* and they close 100 ms after their data */
	fake_clock_add(&c, 101 * MS);
	assert_int_equal(twheel_loop_run_once(x.l, TW_LOOP_NOWAIT), (int)NSOCK);
	assert_int_equal(x.closed, NSOCK);
out:
	twheel_loop_destroy(x.l, NULL, NULL, NULL);
	for (unsigned i = 0; i < NSOCK; i++) {
		close(x.c[i].fd[0]);
		close(x.c[i].fd[1]);
	}
	free(x.c);
}

static void test_sessions_behind_a_full_cq_defer_taskrun(void **state)
{
	(void)state;
	sessions_behind_a_full_cq(0, RECV);
}

static void test_sessions_behind_a_full_cq_multishot(void **state)
{
	(void)state;
	sessions_behind_a_full_cq(0, MULTISHOT);
}

static void test_sessions_behind_a_full_cq_plain_ring(void **state)
{
	(void)state;
	sessions_behind_a_full_cq(TW_LOOP_NO_DEFER_TASKRUN, RECV);
}

static void test_sessions_behind_a_full_cq_io_deadline(void **state)
{
	(void)state;
	sessions_behind_a_full_cq(0, DEADLINE);
}

/*
 * Task work the ring had no room for: with DEFER_TASKRUN, 64 sessions' data
 * comes just before the loop reads the clock (the clock itself writes it),
 * when the CQ ring already holds 1,024 completions. The kernel keeps the
 * receives' completions as task work (IORING_SQ_TASKRUN) until the loop
 * enters it with room in the ring; they came before the reading, and no
 * session is closed as idle before its data has run.
 */
#define NLATE 64u

struct late_clock {
	struct fake_clock c;
	struct sock_ctx *x;
	bool send; /* the next reading writes the peers' bytes first */
};

static uint64_t late_clock_read(void *arg)
{
	struct late_clock *lc = arg;

	if (lc->send) {
		lc->send = false;
		for (unsigned i = 0; i < NLATE; i++)
			assert_int_equal(write(lc->x->c[i].fd[1], "x", 1), 1);
	}
	return fake_clock_read(&lc->c);
}

static void test_task_work_behind_a_full_ring_runs_before_due_timers(void **state)
{
	struct twheel_loop_config cfg;
	struct late_clock lc = { 0 };
	struct sock_ctx x = { 0 };
	struct ctx nops = { 0 };
	char msg[256];
	int iters = 0;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.entries = 64;
	cfg.clock = late_clock_read;
	cfg.clock_arg = &lc;
	fake_clock_set(&lc.c, 1000 * MS);
	lc.x = &x;
	assert_int_equal(twheel_loop_create(&x.l, &cfg, msg, sizeof(msg)), 0);
	if (!(twheel_loop_features(x.l) & TW_LOOP_FEAT_DEFER_TASKRUN)) {
		twheel_loop_destroy(x.l, NULL, NULL, NULL);
		skip();
	}
	nops.l = x.l;
	nops.io.func = on_nop;
	assert_int_equal(twheel_loop_run_once(x.l, TW_LOOP_NOWAIT), 0);
	x.c = calloc(NLATE, sizeof(*x.c));
	assert_non_null(x.c);
	for (unsigned i = 0; i < NLATE; i++) {
		struct conn *k = &x.c[i];
		struct io_uring_sqe *sqe;

		k->x = &x;
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, k->fd), 0);
		k->io.func = on_sock;
		sqe = twheel_loop_get_sqe(x.l, &k->io);
		assert_non_null(sqe);
		io_uring_prep_recv(sqe, k->fd[0], k->buf, sizeof(k->buf), 0);
		tw_loop_timer_init(&k->idle, on_sock_idle, 0);
		assert_int_equal(twheel_loop_add(x.l, &k->idle, 100 * MS), 0);
	}
	assert_int_equal(twheel_loop_run_once(x.l, TW_LOOP_NOWAIT), 0);
	queue_nops(&nops, CQ_RING); /* the ring is full, nothing overflows */
	assert_true(twheel_loop_submit(x.l) > 0);
	assert_int_equal(io_uring_cq_ready(twheel_loop_ring(x.l)), CQ_RING);
	assert_false(cq_overflowed(x.l));
	fake_clock_add(&lc.c, 150 * MS); /* every idle deadline has passed */
	lc.send = true;

	/* NOWAIT: the first reading is the iteration's own, after its entry
	 * into the kernel, so the data's task work waits at the mark */
	while (x.seen < NLATE && iters++ < 20)
		assert_true(twheel_loop_run_once(x.l, TW_LOOP_NOWAIT) > 0);
	assert_false(lc.send);
	print_message("%u of %u sessions closed as idle with their data come, %d "
		      "iterations\n", x.closed, NLATE, iters);
	assert_int_equal(nops.handled, CQ_RING);
	assert_int_equal(x.seen, NLATE);
	assert_int_equal(x.closed, 0);
	twheel_loop_destroy(x.l, NULL, NULL, NULL);
	for (unsigned i = 0; i < NLATE; i++) {
		close(x.c[i].fd[0]);
		close(x.c[i].fd[1]);
	}
	free(x.c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_in_the_cq_runs_before_a_due_timer),
		cmocka_unit_test(test_a_backlog_runs_in_batches_then_the_timers),
		cmocka_unit_test(test_a_steady_flood_does_not_starve_timers),
		cmocka_unit_test(test_overflowed_completions_run_before_due_timers),
		cmocka_unit_test(test_an_overflowing_flood_does_not_starve_timers),
		cmocka_unit_test(test_sessions_behind_a_full_cq_defer_taskrun),
		cmocka_unit_test(test_sessions_behind_a_full_cq_multishot),
		cmocka_unit_test(test_sessions_behind_a_full_cq_plain_ring),
		cmocka_unit_test(test_sessions_behind_a_full_cq_io_deadline),
		cmocka_unit_test(test_task_work_behind_a_full_ring_runs_before_due_timers),
	};

	require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
