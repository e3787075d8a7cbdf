/* SPDX-License-Identifier: MIT */
/*
 * A burst of connections against a multishot accept on the loop. The kernel
 * ends a multishot request when it cannot post a CQE (the CQ ring is full):
 * the last CQE lacks IORING_CQE_F_MORE and still carries an accepted fd. A
 * server whose handler ignored cqe->flags stopped accepting at 1,249 of
 * 5,000 clients connecting at once, and nothing in the loop's stats showed
 * it.
 *
 * 5,000 nonblocking clients connect to a loopback listener while the loop
 * is not running, so that the accepts the kernel makes at the loop's next
 * wait (or, without DEFER_TASKRUN, while the clients connect) overflow the
 * CQ ring. The handler written as docs/loop.md shows (keep the fd of every
 * CQE with res >= 0, re-arm on a CQE without F_MORE) accepts every client
 * exactly once, and the stats count each end it saw and the overflow. A
 * handler that ignores the flags stops accepting, and the stats say so.
 * Then thousands of multishot polls and one-shot requests: the stats count
 * exactly the polls' ends.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define NCLIENTS 5000u
#define CQ_ENTRIES 1024u /* the default loop's CQ ring: 2 * 256, at least 1024 */

struct server {
	struct twheel_loop *loop;
	struct tw_loop_io accept_io;
	struct tw_loop_timer tick; /* wakes the loop while nothing else does */
	int lfd;
	bool rearm;                /* the documented handler */
	bool no_multishot;         /* the kernel refused it (before 5.19) */
	unsigned accepted;
	unsigned finals;           /* CQEs without IORING_CQE_F_MORE */
	unsigned final_fds;        /* ...carrying an accepted fd */
	int fds[NCLIENTS];
	unsigned short peer_port[NCLIENTS];
};

static void accept_arm(struct server *s)
{
	struct io_uring_sqe *sqe = twheel_loop_get_sqe(s->loop, &s->accept_io);

	assert_non_null(sqe);
	io_uring_prep_multishot_accept(sqe, s->lfd, NULL, NULL, SOCK_CLOEXEC);
}

static void conn_new(struct server *s, int fd)
{
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);

	assert_true(s->accepted < NCLIENTS);
	assert_int_equal(getpeername(fd, (struct sockaddr *)&peer, &len), 0);
	s->peer_port[s->accepted] = ntohs(peer.sin_port);
	s->fds[s->accepted++] = fd;
}

/* The handler of docs/loop.md's server. */
static void on_accept(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, accept_io);
	bool more = cqe->flags & IORING_CQE_F_MORE;

	if (cqe->res == -EINVAL && !s->accepted) {
		s->no_multishot = true;
		return;
	}
	if (!more) {
		s->finals++;
		s->final_fds += cqe->res >= 0;
	}
	if (!s->rearm) {
		/* the newcomer's handler: every CQE is a connection */
		if (cqe->res >= 0)
			conn_new(s, cqe->res);
		return;
	}
	if (cqe->res >= 0)
		conn_new(s, cqe->res); /* the last CQE may carry one too */
	else
		assert_int_equal(cqe->res, -ECONNABORTED); /* a client gave up */
	if (more)
		return;
	/* (docs/loop.md re-arms from a timer after EMFILE/ENFILE: not here) */
	accept_arm(s); /* the kernel ended the request: accept on */
}

static void on_tick(struct tw_loop_timer *t)
{
	(void)t;
}

/* The fds this test holds: the clients, the accepted ends, a few more. */
static void require_nofile(rlim_t need)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		printf("SKIP: RLIMIT_NOFILE hard limit %lu, the burst needs %lu descriptors "
		       "(raise ulimit -Hn)\n",
		       (unsigned long)rl.rlim_max, (unsigned long)need);
		exit(77);
	}
	rl.rlim_cur = need;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static int listener(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	/* capped at net.core.somaxconn: the clients beyond it retry their
	 * SYN a second later */
	assert_int_equal(listen(fd, (int)NCLIENTS), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	return fd;
}

/* Connect every client without waiting; returns their local ports. */
static void connect_all(const struct sockaddr_in *addr, int *cfd, unsigned short *port)
{
	for (unsigned i = 0; i < NCLIENTS; i++) {
		struct sockaddr_in me;
		socklen_t len = sizeof(me);
		struct linger lg = { .l_onoff = 1, .l_linger = 0 }; /* close: RST, no TIME_WAIT */

		cfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		assert_true(cfd[i] >= 0);
		assert_int_equal(setsockopt(cfd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
		if (connect(cfd[i], (const struct sockaddr *)addr, sizeof(*addr)) != 0)
			assert_int_equal(errno, EINPROGRESS);
		assert_int_equal(getsockname(cfd[i], (struct sockaddr *)&me, &len), 0);
		port[i] = ntohs(me.sin_port);
	}
}

/* Every client's port among the accepted peers exactly once. */
static void assert_each_once(const struct server *s, const unsigned short *port)
{
	static unsigned char seen[65536];

	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < s->accepted; i++)
		seen[s->peer_port[i]]++;
	for (unsigned i = 0; i < NCLIENTS; i++)
		assert_int_equal(seen[port[i]], 1);
}

static long somaxconn(void)
{
	FILE *f = fopen("/proc/sys/net/core/somaxconn", "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void burst_run(unsigned flags, bool rearm)
{
	static struct server s;
	static int cfd[NCLIENTS];
	static unsigned short port[NCLIENTS];
	struct twheel_loop_config cfg;
	struct twheel_loop_stats st;
	struct sockaddr_in addr;
	uint64_t start, last = 0;
	char msg[256];
	long backlog = somaxconn();

	require_nofile(2 * NCLIENTS + 64);
	memset(&s, 0, sizeof(s));
	s.rearm = rearm;
	s.accept_io.func = on_accept;
	s.lfd = listener(&addr);
	twheel_loop_config_init(&cfg);
	cfg.flags = flags;
	assert_int_equal(twheel_loop_create(&s.loop, &cfg, msg, sizeof(msg)), 0);
	tw_loop_timer_init_periodic(&s.tick, on_tick, 20 * MS, 0);
	assert_int_equal(twheel_loop_add(s.loop, &s.tick, 20 * MS), 0);
	accept_arm(&s);
	assert_true(twheel_loop_run_once(s.loop, TW_LOOP_NOWAIT) >= 0); /* submitted */
	if (s.no_multishot) {
		printf("# SKIP: this kernel has no multishot accept (Linux 5.19)\n");
		twheel_loop_destroy(s.loop, NULL, NULL, NULL);
		close(s.lfd);
		skip();
	}

	start = mono_now();
	connect_all(&addr, cfd, port);
	printf("# %s, %s handler: %u clients connected in %.0f ms (somaxconn %ld)\n",
	       flags & TW_LOOP_NO_DEFER_TASKRUN ? "plain ring" : "DEFER_TASKRUN",
	       rearm ? "re-arming" : "flag-ignoring", NCLIENTS, (mono_now() - start) / 1e6,
	       backlog);

	/* The documented handler: until every client is in (those the full
	 * backlog refused come back with their SYN retransmitted). The other
	 * stops once the request ended, which it does not notice. */
	start = mono_now();
	while (s.accepted < NCLIENTS && mono_now() - start < 60000 * MS) {
		unsigned before = s.accepted;

		assert_true(twheel_loop_run_once(s.loop, 0) >= 0);
		if (s.accepted != before || !last)
			last = mono_now();
		if (!rearm && s.finals && mono_now() - last > 300 * MS)
			break;
	}
	assert_int_equal(twheel_loop_get_stats(s.loop, &st), 0);
	printf("# accepted %u in %.0f ms; multishot ends %u (%u with an fd); stats: "
	       "multishot_ends %llu, cq_overflows %llu, cq_dropped %llu\n",
	       s.accepted, (mono_now() - start) / 1e6, s.finals, s.final_fds,
	       (unsigned long long)st.multishot_ends, (unsigned long long)st.cq_overflows,
	       (unsigned long long)st.cq_dropped);

	/* Every end the handler saw is counted, and nothing else. */
	assert_int_equal(st.multishot_ends, s.finals);
	assert_int_equal(st.cq_dropped, 0);
	/* The burst is more than the CQ ring holds: the ring overflowed and
	 * the kernel ended the multishot accept, its last CQE holding an fd. */
	if (backlog > (long)CQ_ENTRIES) {
		assert_true(s.finals >= 1);
		assert_true(s.final_fds >= 1);
		assert_true(st.cq_overflows >= 1);
	} else {
		printf("# net.core.somaxconn %ld: the burst may fit the CQ ring\n", backlog);
	}
	if (rearm) {
		assert_int_equal(s.accepted, NCLIENTS);
		assert_each_once(&s, port);
	} else if (s.finals) {
		/* what the newcomer saw: accepting stopped, the stats tell why */
		assert_true(s.accepted < NCLIENTS);
		assert_int_equal(st.multishot_ends, 1);
	}

	twheel_loop_destroy(s.loop, NULL, NULL, NULL);
	for (unsigned i = 0; i < s.accepted; i++)
		close(s.fds[i]);
	for (unsigned i = 0; i < NCLIENTS; i++)
		close(cfd[i]);
	close(s.lfd);
}

static void test_burst_rearmed_defer_taskrun(void **state)
{
	(void)state;
	burst_run(0, true);
}

static void test_burst_rearmed_plain_ring(void **state)
{
	(void)state;
	burst_run(TW_LOOP_NO_DEFER_TASKRUN, true);
}

static void test_burst_end_unnoticed_shows_in_stats(void **state)
{
	(void)state;
	burst_run(0, false);
}

/* ---- the count is exact ------------------------------------------------------ */

#define NPOLL 2000u

struct req {
	struct tw_loop_io io;
	unsigned more, finals;
	int res; /* of the last CQE */
};

static void on_req(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct req *r = tw_container_of(io, struct req, io);

	r->res = cqe->res;
	if (cqe->flags & IORING_CQE_F_MORE)
		r->more++;
	else
		r->finals++;
}

/* CQEs with (@more) or without F_MORE over @n requests. */
static unsigned total(const struct req *r, unsigned n, bool more)
{
	unsigned sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += more ? r[i].more : r[i].finals;
	return sum;
}

/* Iterate without sleeping until @n requests got @want such CQEs in all. */
static void run_until(struct twheel_loop *l, const struct req *r, unsigned n, bool more,
		      unsigned want)
{
	uint64_t start = mono_now();

	while (total(r, n, more) < want && mono_now() - start < 10000 * MS)
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	assert_int_equal(total(r, n, more), want);
}

/*
 * Thousands of multishot polls on distinct handlers (the set grows and
 * shrinks), one-shot requests on other handlers and then on the same ones
 * once their polls ended: only the polls' last CQEs are ends.
 */
static void test_ends_counted_exactly(void **state)
{
	static struct req poll[NPOLL], nop[NPOLL];
	struct twheel_loop_config cfg;
	struct twheel_loop_stats st;
	struct twheel_loop *l;
	struct req cancel = { .io.func = on_req };
	char msg[256];
	unsigned i;
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	(void)state;
	assert_true(efd >= 0);
	twheel_loop_config_init(&cfg);
	cfg.entries = 4096; /* every CQE of a round fits: nothing ends by overflow */
	assert_int_equal(twheel_loop_create(&l, &cfg, msg, sizeof(msg)), 0);
	for (i = 0; i < NPOLL; i++) {
		poll[i] = (struct req){ .io.func = on_req };
		nop[i] = (struct req){ .io.func = on_req };
		io_uring_prep_poll_multishot(twheel_loop_get_sqe(l, &poll[i].io), efd, POLLIN);
		io_uring_prep_nop(twheel_loop_get_sqe(l, &nop[i].io));
	}
	run_until(l, nop, NPOLL, false, NPOLL);
	if (poll[0].finals && poll[0].res == -EINVAL) {
		/* before 5.13 (the test waited 10 s for wake-ups and failed) */
		twheel_loop_destroy(l, NULL, NULL, NULL);
		close(efd);
		printf("# SKIP: this kernel has no multishot poll (Linux 5.13)\n");
		skip();
	}

	/* one wake-up each, with F_MORE: no end */
	assert_int_equal(eventfd_write(efd, 1), 0);
	run_until(l, poll, NPOLL, true, NPOLL);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.multishot_ends, 0);

	/* cancel them all: NPOLL ends; the cancel itself is not one */
	io_uring_prep_cancel_fd(twheel_loop_get_sqe(l, &cancel.io), efd, IORING_ASYNC_CANCEL_ALL);
	run_until(l, &cancel, 1, false, 1);
	run_until(l, poll, NPOLL, false, NPOLL);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.multishot_ends, NPOLL);

	/* the ended polls' handlers, reused for one-shot requests: no end */
	for (i = 0; i < NPOLL; i++)
		io_uring_prep_nop(twheel_loop_get_sqe(l, &poll[i].io));
	run_until(l, poll, NPOLL, false, 2 * NPOLL);
	assert_int_equal(twheel_loop_get_stats(l, &st), 0);
	assert_int_equal(st.multishot_ends, NPOLL);
	assert_int_equal(st.cq_overflows, 0);
	assert_int_equal(st.cq_dropped, 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_rearmed_defer_taskrun),
		cmocka_unit_test(test_burst_rearmed_plain_ring),
		cmocka_unit_test(test_burst_end_unnoticed_shows_in_stats),
		cmocka_unit_test(test_ends_counted_exactly),
	};

	require_uring();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
