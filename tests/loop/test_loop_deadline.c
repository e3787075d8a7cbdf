/* SPDX-License-Identifier: MIT */
/*
 * I/O deadlines (twheel_loop_io_deadline()) on the real clock, each test in
 * both ways the loop serves them: the kernel's linked timeout and the
 * loop's own timer plus an async cancel (TW_LOOP_NO_LINK_TIMEOUT, what a
 * kernel without IORING_OP_LINK_TIMEOUT or a replaced clock gets).
 *
 * A silent socket's recv ends with -ETIME, never before its deadline; one
 * that gets data first completes with it and its timeout goes away; the
 * handler may reuse the deadline at once; data arriving right at the
 * deadline gives either the data or -ETIME, never a lost byte or a second
 * call; the errors; drain and destroy with deadlines in flight; and the
 * loop's timer where the kernel's probe lacks IORING_OP_LINK_TIMEOUT.
 */
#define _GNU_SOURCE 1 /* RTLD_NEXT */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

static unsigned mode_flags; /* 0 (linked timeouts) or TW_LOOP_NO_LINK_TIMEOUT */

struct req {
	struct tw_loop_io io;
	struct tw_loop_deadline dl;
	int fd;
	char buf[64];
	uint64_t deadline;
	uint64_t done_at;
	int res;
	int calls;
};

static void req_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct req *r = tw_container_of(io, struct req, io);

	assert_ptr_equal(io_uring_cqe_get_data(cqe), io);
	r->done_at = mono_now();
	r->res = cqe->res;
	r->calls++;
}

static struct twheel_loop *mk(void)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l = NULL;
	char msg[256];

	twheel_loop_config_init(&cfg);
	cfg.flags = mode_flags;
	assert_int_equal(twheel_loop_create(&l, &cfg, msg, sizeof(msg)), 0);
	if (mode_flags & TW_LOOP_NO_LINK_TIMEOUT)
		assert_false(twheel_loop_features(l) & TW_LOOP_FEAT_LINK_TIMEOUT);
	return l;
}

/* Queue a recv on r->fd that must end by @deadline. */
static int recv_by(struct twheel_loop *l, struct req *r, uint64_t deadline)
{
	struct io_uring_sqe *sqe = twheel_loop_get_sqe(l, &r->io);

	assert_non_null(sqe);
	io_uring_prep_recv(sqe, r->fd, r->buf, sizeof(r->buf), 0);
	r->deadline = deadline;
	return twheel_loop_io_deadline(l, sqe, &r->dl, deadline);
}

static void run_until(struct twheel_loop *l, int *counter, int want, uint64_t limit_ns)
{
	uint64_t end = mono_now() + limit_ns;

	while (*counter < want && mono_now() < end)
		assert_true(twheel_loop_run_once(l, 0) >= 0);
	assert_int_equal(*counter, want);
}

/* Cancel @r's request in flight as a user would, by its deadline's
 * user_data: its handler gets -ECANCELED once. */
static void cancel_by_user(struct twheel_loop *l, struct req *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(twheel_loop_ring(l));

	assert_non_null(sqe);
	io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)&r->dl, 0);
	io_uring_sqe_set_data(sqe, NULL);
	run_until(l, &r->calls, 1, 1000 * MS);
	assert_int_equal(r->res, -ECANCELED);
}

#define NSILENT 200

/* Silent sockets: every recv ends with -ETIME, at or after its deadline,
 * and its handler is called once. */
static void test_silent_never_early(void **state)
{
	static struct req r[NSILENT];
	int sv[NSILENT][2], done = 0, i;
	uint64_t seed = 7, t0;
	struct twheel_loop *l = mk();

	(void)state;
	/* started: a full SQ is submitted to make room (200 requests, two
	 * SQEs each with linked timeouts, on 256 entries) */
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	t0 = mono_now();
	for (i = 0; i < NSILENT; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
		memset(&r[i], 0, sizeof(r[i]));
		r[i].io.func = req_done;
		r[i].fd = sv[i][0];
		assert_int_equal(recv_by(l, &r[i], t0 + 1 * MS + splitmix64(&seed) % (60 * MS)), 0);
	}
	for (uint64_t end = mono_now() + 5000 * MS; done < NSILENT && mono_now() < end;) {
		assert_true(twheel_loop_run_once(l, 0) >= 0);
		for (done = 0, i = 0; i < NSILENT; i++)
			done += r[i].calls;
	}
	for (i = 0; i < NSILENT; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].res, -ETIME);
		assert_true(r[i].done_at >= r[i].deadline); /* never early */
		close(sv[i][0]);
		close(sv[i][1]);
	}
	assert_int_equal(twheel_loop_count(l), 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* Data before the deadline: the handler gets it at once (not at the
 * deadline), the timeout is gone, and nothing else is called later. */
static void test_completion_cancels_timeout(void **state)
{
	struct twheel_loop *l = mk();
	struct twheel_loop_stats st;
	struct req r = { .io.func = req_done };
	int sv[2];
	uint64_t t0;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r.fd = sv[0];
	t0 = mono_now();
	assert_int_equal(recv_by(l, &r, t0 + 300 * MS), 0);
	assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0, 1); /* submitted */
	assert_int_equal(write(sv[1], "hello", 5), 5);
	run_until(l, &r.calls, 1, 2000 * MS);
	assert_int_equal(r.res, 5);
	assert_memory_equal(r.buf, "hello", 5);
	assert_true(r.done_at < t0 + 300 * MS);
	assert_int_equal(twheel_loop_count(l), 0); /* the loop timer was deleted */
	/* past the old deadline: no second call, no stray completion */
	while (mono_now() < t0 + 400 * MS)
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	/* the request's CQE and the timeout's (linked timeout or cancel-free
	 * timer: none) went to the deadline, the user saw one */
	assert_true(st.io_completions >= 1 && st.io_completions <= 2);
	close(sv[0]);
	close(sv[1]);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* The handler re-arms the same deadline for the same socket at once:
 * five timeouts in a row, each never early, then data. */
struct chain {
	struct req r;
	struct twheel_loop *l;
	int timeouts;
	bool early;
};

static void chain_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct chain *c = tw_container_of(io, struct chain, r.io);

	req_done(io, cqe);
	if (cqe->res == -ETIME) {
		c->early |= c->r.done_at < c->r.deadline;
		if (++c->timeouts < 5)
			assert_int_equal(recv_by(c->l, &c->r, mono_now() + 5 * MS), 0);
	}
}

static void test_rearm_from_handler(void **state)
{
	struct chain c = { .r.io.func = chain_done };
	int sv[2];

	(void)state;
	c.l = mk();
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c.r.fd = sv[0];
	assert_int_equal(recv_by(c.l, &c.r, mono_now() + 5 * MS), 0);
	run_until(c.l, &c.r.calls, 5, 5000 * MS);
	assert_int_equal(c.timeouts, 5);
	assert_false(c.early);
	/* one more, with data this time */
	assert_int_equal(recv_by(c.l, &c.r, mono_now() + 1000 * MS), 0);
	assert_int_equal(write(sv[1], "x", 1), 1);
	run_until(c.l, &c.r.calls, 6, 2000 * MS);
	assert_int_equal(c.r.res, 1);
	close(sv[0]);
	close(sv[1]);
	twheel_loop_destroy(c.l, NULL, NULL, NULL);
}

/* Data written right at the deadline (by a timer due then): the handler
 * gets the data or -ETIME, once; -ETIME never early; a byte never lost
 * (after -ETIME it is still in the socket). The handler frees the request
 * and its deadline, as a server closing a connection does: under ASan a
 * CQE of the deadline arriving after the handler would be a
 * use-after-free. */
struct racer {
	struct tw_loop_timer t;
	int fd;
};

static void racer_fn(struct tw_loop_timer *t)
{
	struct racer *w = tw_container_of(t, struct racer, t);

	assert_int_equal(write(w->fd, "r", 1), 1);
}

struct outcome {
	int calls, res;
	char byte;
	uint64_t at;
};

struct heap_req {
	struct req r;
	struct outcome *out;
};

static void heap_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct heap_req *h = tw_container_of(io, struct heap_req, r.io);

	h->out->calls++;
	h->out->res = cqe->res;
	h->out->byte = h->r.buf[0];
	h->out->at = mono_now();
	free(h);
}

static void test_cancel_races_completion(void **state)
{
	struct twheel_loop *l = mk();
	int i, got_data = 0, got_time = 0;
	uint64_t seed = 99;

	(void)state;
	for (i = 0; i < 200; i++) {
		struct heap_req *h = calloc(1, sizeof(*h));
		struct outcome out = { 0 };
		struct racer w;
		int sv[2];
		uint64_t d;
		char b;

		assert_non_null(h);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		h->r.io.func = heap_done;
		h->r.fd = sv[0];
		h->out = &out;
		w.fd = sv[1];
		d = mono_now() + 2 * MS;
		assert_int_equal(recv_by(l, &h->r, d), 0);
		assert_int_equal(tw_loop_timer_init(&w.t, racer_fn, 0), 0);
		/* around the deadline: a tick either side */
		assert_int_equal(twheel_loop_add_at(l, &w.t, d - MS + splitmix64(&seed) % (2 * MS)), 0);
		run_until(l, &out.calls, 1, 2000 * MS);
		/* the writer has run, and any late CQE has had time to come */
		for (uint64_t end = mono_now() + 3 * MS;
		     twheel_loop_pending(l, &w.t) || mono_now() < end;)
			assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
		if (out.res == 1) {
			got_data++;
			assert_int_equal(out.byte, 'r');
		} else {
			assert_int_equal(out.res, -ETIME);
			assert_true(out.at >= d);
			got_time++;
			assert_int_equal(read(sv[0], &b, 1), 1); /* not consumed */
		}
		assert_int_equal(out.calls, 1);
		close(sv[0]);
		close(sv[1]);
	}
	assert_int_equal(got_data + got_time, 200);
	printf("race: %d data, %d timeouts\n", got_data, got_time);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* The user cancels the request before its deadline: -ECANCELED, not -ETIME. */
static void test_user_cancel(void **state)
{
	struct twheel_loop *l = mk();
	struct req r = { .io.func = req_done };
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r.fd = sv[0];
	assert_int_equal(recv_by(l, &r, mono_now() + 1000 * MS), 0);
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	cancel_by_user(l, &r);
	close(sv[0]);
	close(sv[1]);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * Deadlines no clock reaches, up to UINT64_MAX ns (a linked timeout's
 * timespec then holds 18,446,744,073 s, past the kernel's KTIME_MAX):
 * the request waits, is not ended early nor refused, and completes with
 * its own result; one that never completes still ends when cancelled.
 */
static void test_far_deadlines(void **state)
{
	static const uint64_t far[] = { UINT64_MAX, UINT64_MAX - 1, (uint64_t)INT64_MAX + 1,
					(uint64_t)INT64_MAX, 9223372036ull * 1000000000u };
	struct twheel_loop *l = mk();
	struct req r[5], quiet = { .io.func = req_done };
	int sv[5][2], qv[2], i;

	(void)state;
	for (i = 0; i < 5; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
		memset(&r[i], 0, sizeof(r[i]));
		r[i].io.func = req_done;
		r[i].fd = sv[i][0];
		assert_int_equal(recv_by(l, &r[i], far[i]), 0);
	}
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, qv), 0);
	quiet.fd = qv[0];
	assert_int_equal(recv_by(l, &quiet, UINT64_MAX), 0);
	for (i = 0; i < 20; i++) /* submitted, 20 iterations: nothing ends */
		assert_int_equal(twheel_loop_run_once(l, TW_LOOP_NOWAIT), 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(r[i].calls, 0);
		assert_int_equal(write(sv[i][1], "x", 1), 1);
		run_until(l, &r[i].calls, 1, 1000 * MS);
		assert_int_equal(r[i].res, 1);
		assert_int_equal(r[i].buf[0], 'x');
	}
	assert_int_equal(quiet.calls, 0);
	cancel_by_user(l, &quiet);
	assert_int_equal(twheel_loop_count(l), 0);
	for (i = 0; i < 5; i++)
		close(sv[i][0]), close(sv[i][1]);
	close(qv[0]);
	close(qv[1]);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

static void test_errors(void **state)
{
	struct twheel_loop *l = mk(), *fb;
	struct twheel_loop_config cfg;
	struct req r = { .io.func = req_done }, r2 = { .io.func = req_done };
	struct io_uring_sqe *a, *b;
	uint64_t d = mono_now() + 1000 * MS;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r.fd = r2.fd = sv[0];
	a = twheel_loop_get_sqe(l, &r.io);
	io_uring_prep_nop(a);
	assert_int_equal(twheel_loop_io_deadline(NULL, a, &r.dl, d), -EINVAL);
	assert_int_equal(twheel_loop_io_deadline(l, NULL, &r.dl, d), -EINVAL);
	assert_int_equal(twheel_loop_io_deadline(l, a, NULL, d), -EINVAL);
	b = twheel_loop_get_sqe(l, &r2.io);
	io_uring_prep_recv(b, sv[0], r2.buf, sizeof(r2.buf), 0);
	/* not the last SQE taken */
	assert_int_equal(twheel_loop_io_deadline(l, a, &r.dl, d), -EINVAL);
	assert_int_equal(twheel_loop_io_deadline(l, b, &r2.dl, d), 0);
	/* r2.dl in flight: busy */
	a = twheel_loop_get_sqe(l, &r.io);
	io_uring_prep_nop(a);
	assert_int_equal(twheel_loop_io_deadline(l, a, &r2.dl, d), -EBUSY);
	/* a multishot request */
	a = twheel_loop_get_sqe(l, &r.io);
	io_uring_prep_recv_multishot(a, sv[0], NULL, 0, 0);
	assert_int_equal(twheel_loop_io_deadline(l, a, &r.dl, d), -EINVAL);
	/* a request that posts no CQE when it succeeds: the handler could
	 * never be called, and the deadline would stay busy for good */
	io_uring_prep_nop(a);
	a->flags |= IOSQE_CQE_SKIP_SUCCESS;
	assert_int_equal(twheel_loop_io_deadline(l, a, &r.dl, d), -EINVAL);
	assert_int_equal(a->flags, IOSQE_CQE_SKIP_SUCCESS);
	/* an SQE refused is left alone: it still goes to r.io */
	io_uring_prep_nop(a);
	run_until(l, &r.calls, 3, 500 * MS); /* the three nops */
	assert_int_equal(r.res, 0);
	assert_int_equal(r2.calls, 0);
	assert_int_equal(write(sv[1], "y", 1), 1);
	run_until(l, &r2.calls, 1, 500 * MS);
	close(sv[0]);
	close(sv[1]);
	twheel_loop_destroy(l, NULL, NULL, NULL);

	twheel_loop_config_init(&cfg);
	cfg.flags = TW_LOOP_NO_URING;
	assert_int_equal(twheel_loop_create(&fb, &cfg, NULL, 0), 0);
	assert_int_equal(twheel_loop_io_deadline(fb, (struct io_uring_sqe *)&r, &r.dl, d),
			 -EOPNOTSUPP);
	twheel_loop_destroy(fb, NULL, NULL, NULL);
}

/*
 * A handler with no function is refused where it is handed over: by
 * twheel_loop_get_sqe() (NULL, nothing taken) and by
 * twheel_loop_io_deadline() (-EINVAL, the SQE left as it was). Before,
 * both took it, and the CQE called a NULL function pointer (SIGSEGV).
 */
static void test_handler_without_function(void **state)
{
	struct twheel_loop *l = mk();
	struct req r = { .io.func = NULL };
	struct io_uring_sqe *sqe;
	uint64_t d = mono_now() + 1000 * MS;

	(void)state;
	sqe = twheel_loop_get_sqe(l, &r.io);
	if (sqe) { /* the old behaviour: show what it led to */
		io_uring_prep_nop(sqe);
		twheel_loop_run_once(l, 0);
	}
	assert_null(sqe);
	/* nothing was taken: the next SQE is the first one submitted */
	r.io.func = req_done;
	sqe = twheel_loop_get_sqe(l, &r.io);
	assert_non_null(sqe);
	io_uring_prep_nop(sqe);
	/* the handler's function cleared after the SQE was taken */
	r.io.func = NULL;
	assert_int_equal(twheel_loop_io_deadline(l, sqe, &r.dl, d), -EINVAL);
	r.io.func = req_done;
	run_until(l, &r.calls, 1, 500 * MS); /* still the nop's, to r.io */
	assert_int_equal(r.res, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A second deadline on one request is refused (-EINVAL) in both ways, and
 * the first one holds. On the loop-timer path it was taken: its cancel
 * then named the request by the second deadline's user_data, so the
 * first deadline's cancel found nothing (-ENOENT) and the request ran on
 * to the second one (a 50 ms deadline ended at 1000 ms).
 */
static void test_second_deadline_is_refused(void **state)
{
	struct twheel_loop *l = mk();
	struct req r = { .io.func = req_done };
	struct tw_loop_deadline dl2;
	struct io_uring_sqe *sqe;
	uint64_t t0 = mono_now();
	int sv[2];

	(void)state;
	memset(&dl2, 0, sizeof(dl2));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r.fd = sv[0];
	sqe = twheel_loop_get_sqe(l, &r.io);
	assert_non_null(sqe);
	io_uring_prep_recv(sqe, r.fd, r.buf, sizeof(r.buf), 0);
	assert_int_equal(twheel_loop_io_deadline(l, sqe, &r.dl, t0 + 50 * MS), 0);
	assert_int_equal(twheel_loop_io_deadline(l, sqe, &dl2, t0 + 10000 * MS), -EINVAL);
	run_until(l, &r.calls, 1, 5000 * MS);
	assert_int_equal(r.res, -ETIME);
	assert_true(r.done_at >= t0 + 50 * MS);
	close(sv[0]);
	close(sv[1]);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/*
 * A stopped loop submits nothing again: twheel_loop_get_sqe() takes no
 * SQE (NULL), twheel_loop_io_deadline() refuses a request taken before
 * the stop with -ESHUTDOWN, the same on both paths, and
 * twheel_loop_submit() submits nothing (-ESHUTDOWN): the request taken
 * before the stop never reads the socket. Before, the SQE was handed out
 * and never submitted, the linked-timeout path returned 0 for a deadline
 * that could never be served, and submit() started a recv whose
 * completion no iteration would reap.
 */
static void test_stopped_loop_takes_no_request(void **state)
{
	struct twheel_loop *l = mk();
	struct req r = { .io.func = req_done };
	struct io_uring_sqe *sqe;
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r.fd = sv[0];
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0); /* the ring is enabled */
	sqe = twheel_loop_get_sqe(l, &r.io);
	assert_non_null(sqe);
	io_uring_prep_recv(sqe, r.fd, r.buf, sizeof(r.buf), 0);
	assert_int_equal(twheel_loop_stop(l), 0);
	assert_int_equal(twheel_loop_io_deadline(l, sqe, &r.dl, mono_now() + 50 * MS), -ESHUTDOWN);
	assert_int_equal(twheel_loop_count(l), 0);
	assert_null(twheel_loop_get_sqe(l, &r.io));
	assert_int_equal(twheel_loop_submit(l), -ESHUTDOWN);
	assert_int_equal(send(sv[1], "x", 1, 0), 1);
	usleep(20000);
	assert_int_equal(recv(sv[0], r.buf, sizeof(r.buf), MSG_DONTWAIT), 1); /* not taken by the ring */
	twheel_loop_destroy(l, NULL, NULL, NULL);
	assert_int_equal(r.calls, 0);
	close(sv[0]);
	close(sv[1]);
}

/* A request with a deadline inside a chain (IOSQE_IO_LINK, _HARDLINK): the
 * chain goes on after it in both ways, so the next SQE runs only once the
 * request ended, and a soft link cancels it when the deadline did. */
static void test_chain_goes_on_after_the_request(void **state)
{
	static const uint8_t links[] = { IOSQE_IO_LINK, IOSQE_IO_HARDLINK };
	struct req r = { .io.func = req_done }, next = { .io.func = req_done };
	struct io_uring_sqe *sqe;
	int sv[2];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(links); i++) {
		struct twheel_loop *l = mk();

		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		r.fd = sv[0];
		r.calls = next.calls = 0;
		sqe = twheel_loop_get_sqe(l, &r.io);
		io_uring_prep_recv(sqe, r.fd, r.buf, sizeof(r.buf), 0);
		sqe->flags |= links[i];
		r.deadline = mono_now() + 20 * MS;
		assert_int_equal(twheel_loop_io_deadline(l, sqe, &r.dl, r.deadline), 0);
		sqe = twheel_loop_get_sqe(l, &next.io);
		io_uring_prep_nop(sqe);
		run_until(l, &r.calls, 1, 5000 * MS);
		assert_int_equal(r.res, -ETIME);
		run_until(l, &next.calls, 1, 5000 * MS);
		assert_true(next.done_at >= r.deadline); /* not before the request ended */
		assert_int_equal(next.res, links[i] == IOSQE_IO_LINK ? -ECANCELED : 0);
		close(sv[0]);
		close(sv[1]);
		twheel_loop_destroy(l, NULL, NULL, NULL);
	}
}

/* Drain and destroy with deadlines in flight: the user's timer_fn never
 * sees a deadline's timer; nothing leaks (ASan/LSan). */
static int drained;
static void count_fn(struct tw_loop_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	drained++;
}

static void test_destroy_in_flight(void **state)
{
	struct twheel_loop *l = mk();
	struct req r[4];
	int sv[2], i;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (i = 0; i < 4; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].io.func = req_done;
		r[i].fd = sv[0];
		assert_int_equal(recv_by(l, &r[i], mono_now() + 10000 * MS), 0);
	}
	assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	drained = 0;
	twheel_loop_destroy(l, count_fn, NULL, NULL);
	assert_int_equal(drained, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(r[i].calls, 0);
	close(sv[0]);
	close(sv[1]);
}

/*
 * io_uring_submit(), as the loop calls it, replaced here: one call, when
 * asked, runs refuse_hook and submits nothing (as the kernel does with
 * -EBUSY while CQEs overflow), so that a full SQ stays full.
 */
static void (*refuse_hook)(void);

int io_uring_submit(struct io_uring *ring)
{
	static int (*real)(struct io_uring *);

	if (refuse_hook) {
		void (*hook)(void) = refuse_hook;

		refuse_hook = NULL;
		hook();
		return -EBUSY;
	}
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "io_uring_submit"); /* POSIX's idiom */
	return real(ring);
}

static struct twheel_loop *cur;
static struct tw_loop_timer others[2];
static struct tw_loop_io nop_io;

static void nop_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	(void)io;
	(void)cqe;
}

static void never_fn(struct tw_loop_timer *t)
{
	(void)t;
}

/* Another thread's arms, landing while the SQ is full: max_pending reached. */
static void take_every_slot(void)
{
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tw_loop_timer_init(&others[i], never_fn, 0), 0);
		assert_int_equal(twheel_loop_add(cur, &others[i], 3600000 * MS), 0);
	}
}

/* Fills the SQ with NOPs; the next submission it would force is refused. */
static void fill_sq(struct tw_loop_timer *t)
{
	struct io_uring *ring = twheel_loop_ring(cur);

	(void)t;
	nop_io.func = nop_done;
	while (io_uring_sq_space_left(ring))
		io_uring_prep_nop(twheel_loop_get_sqe(cur, &nop_io));
	refuse_hook = take_every_slot;
}

/*
 * The deadline's timer fires with the SQ full, the submission that should
 * make room for its cancel fails, and meanwhile max_pending was reached:
 * its retry a tick later must not be refused (-ENOSPC), or the request is
 * never cancelled. It was: the recv waited forever. (Loop timer mode.)
 */
static void test_full_sq_and_max_pending_still_cancel(void **state)
{
	struct twheel_loop_config cfg;
	struct tw_loop_timer filler;
	struct req r;
	char msg[256];
	int sv[2];

	(void)state;
	if (!(mode_flags & TW_LOOP_NO_LINK_TIMEOUT))
		skip(); /* the kernel's linked timeout needs no SQE at the deadline */
	twheel_loop_config_init(&cfg);
	cfg.flags = mode_flags;
	cfg.entries = 8;
	cfg.max_pending = 2;
	assert_int_equal(twheel_loop_create(&cur, &cfg, msg, sizeof(msg)), 0);
	assert_true(twheel_loop_run_once(cur, TW_LOOP_NOWAIT) >= 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(&r, 0, sizeof(r));
	r.io.func = req_done;
	r.fd = sv[0];
	/* the filler fires first, in the same iteration as the deadline */
	uint64_t d = mono_now() + 2 * MS;
	assert_int_equal(tw_loop_timer_init(&filler, fill_sq, 0), 0);
	assert_int_equal(twheel_loop_add_at(cur, &filler, d - twheel_loop_tick(cur)), 0);
	assert_int_equal(recv_by(cur, &r, d), 0);
	while (mono_now() < d + 2 * MS)
		;
	assert_true(twheel_loop_run_once(cur, TW_LOOP_NOWAIT) >= 0);
	assert_null(refuse_hook); /* the refused submission happened */
	assert_int_equal(r.calls, 0);
	/* polled: with the deadline lost, the loop would sleep for an hour */
	for (uint64_t end = mono_now() + 2000 * MS; !r.calls && mono_now() < end; usleep(1000))
		assert_true(twheel_loop_run_once(cur, TW_LOOP_NOWAIT) >= 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.res, -ETIME);
	twheel_loop_destroy(cur, NULL, NULL, NULL);
	close(sv[0]);
	close(sv[1]);
}

/*
 * io_uring_get_probe_ring(), as the loop calls it at creation, replaced
 * too: probe_hide 1 answers without IORING_OP_LINK_TIMEOUT (as a kernel
 * before 5.5 would), 2 fails (NULL: before 5.6, no IORING_REGISTER_PROBE).
 */
static int probe_hide;

struct io_uring_probe *io_uring_get_probe_ring(struct io_uring *ring)
{
	static struct io_uring_probe *(*real)(struct io_uring *);
	struct io_uring_probe *p;

	if (probe_hide == 2)
		return NULL;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "io_uring_get_probe_ring");
	p = real(ring);
	if (p && probe_hide == 1)
		p->ops[IORING_OP_LINK_TIMEOUT].flags &= ~IO_URING_OP_SUPPORTED;
	return p;
}

static int probe_real(void **state)
{
	(void)state;
	probe_hide = 0;
	return 0;
}

/* Where the probe lacks IORING_OP_LINK_TIMEOUT, or fails, the loop's timer
 * serves a deadline: a silent recv still ends -ETIME, not early. */
static void test_probe_without_link_timeout(void **state)
{
	(void)state;
	if (mode_flags & TW_LOOP_NO_LINK_TIMEOUT)
		skip(); /* once is enough: the probe decides with no flag */
	for (probe_hide = 1; probe_hide <= 2; probe_hide++) {
		struct twheel_loop *l = mk();
		struct req r = { .io.func = req_done };
		int sv[2];

		assert_false(twheel_loop_features(l) & TW_LOOP_FEAT_LINK_TIMEOUT);
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		r.fd = sv[0];
		assert_int_equal(recv_by(l, &r, mono_now() + 20 * MS), 0);
		assert_int_equal(twheel_loop_count(l), 1); /* the loop's timer */
		run_until(l, &r.calls, 1, 5000 * MS);
		assert_int_equal(r.res, -ETIME);
		assert_true(r.done_at >= r.deadline);
		assert_int_equal(twheel_loop_count(l), 0);
		twheel_loop_destroy(l, NULL, NULL, NULL);
		close(sv[0]);
		close(sv[1]);
	}
}

static int setup_link(void **state)
{
	struct twheel_loop *l;

	(void)state;
	mode_flags = 0;
	l = mk();
	if (!(twheel_loop_features(l) & TW_LOOP_FEAT_LINK_TIMEOUT))
		printf("note: no IORING_OP_LINK_TIMEOUT here: the loop timer serves\n");
	twheel_loop_destroy(l, NULL, NULL, NULL);
	return 0;
}

static int setup_timer(void **state)
{
	(void)state;
	mode_flags = TW_LOOP_NO_LINK_TIMEOUT;
	return 0;
}

#define ALL_TESTS                                        \
	cmocka_unit_test(test_silent_never_early),       \
	cmocka_unit_test(test_completion_cancels_timeout), \
	cmocka_unit_test(test_rearm_from_handler),       \
	cmocka_unit_test(test_cancel_races_completion),  \
	cmocka_unit_test(test_user_cancel),              \
	cmocka_unit_test(test_far_deadlines),            \
	cmocka_unit_test(test_errors),                   \
	cmocka_unit_test(test_handler_without_function), \
	cmocka_unit_test(test_second_deadline_is_refused), \
	cmocka_unit_test(test_stopped_loop_takes_no_request), \
	cmocka_unit_test(test_chain_goes_on_after_the_request), \
	cmocka_unit_test(test_destroy_in_flight),        \
	cmocka_unit_test(test_full_sq_and_max_pending_still_cancel), \
	cmocka_unit_test_teardown(test_probe_without_link_timeout, probe_real)

int main(void)
{
	const struct CMUnitTest tests[] = { ALL_TESTS };
	int ret;

	require_uring();
	ret = cmocka_run_group_tests_name("linked timeout", tests, setup_link, NULL);
	ret |= cmocka_run_group_tests_name("loop timer", tests, setup_timer, NULL);
	return ret;
}
