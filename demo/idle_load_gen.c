/* SPDX-License-Identifier: MIT */
/*
 * idle_load_gen.c - idle-load's generator: one process's connections on
 * io_uring, played out in one loop (see idle_load.c for the other parts).
 *
 * Each connection is of one kind (enum kind, assigned by idle_load.c):
 *
 *   silent  connects and sends nothing: the server must close it after the
 *           idle timeout (--grace-ms past it we give up: "never").
 *   chatty  a ping every --ping-ms (+-25% jitter), the reply checked byte
 *           for byte: the echo of our message, a PONG, or with --http a
 *           response head that starts "HTTP/1.1 204 ", read up to its
 *           blank line (any headers, no body, at most DEMO_HTTP_MAX_HEAD
 *           bytes); kept open until the run ends.
 *   abrupt  (--abrupt N, extra connections, outside the statistics)
 *           reset   sends half a message then resets (SO_LINGER 0) while
 *                   the server is reading;
 *           half    sends a message, then shutdown(SHUT_WR): the server
 *                   must answer and close promptly (within half the timeout);
 *           vanish  connects and closes at once;
 *           flood   sends up to 256 KiB without reading, then resets.
 *
 * What it records, in struct result (idle_load.h), is what the referee
 * judges (idle_load_referee.c states the rules). Every timestamp is taken
 * from CLOCK_MONOTONIC: a connect just before it is submitted, a completion
 * just after it is reaped, a silent close's FIN from TCP_INFO at its latest
 * (fin_arrival()). So a slow generator makes closes look later, never
 * earlier.
 *
 * It measures its own lag too (struct proc_stats): (1) each of its timers
 * (a chatty ping due, a silent connection's grace, an abrupt client's
 * move) handled - due, and (2) its loop's stalls, the time it was away
 * from its ring beyond the wait it asked for.
 *
 * Connects go out as fast as --inflight (connects in flight) allows, or,
 * with --rate N, at most N a second over all processes: on one schedule,
 * connect i not submitted before start + i/N s (the loop's wait ends when
 * the next one is due; no busy-waiting). The silent connections then time
 * out at the rate they were opened, which bounds the server's close burst.
 */
#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <twheel/twheel.h>

#include "idle_load.h"

enum op { OP_CONNECT = 1, OP_RECV = 2, OP_SEND = 3 };
#define OP_MASK 3u
/* Bits of conn.ops: which requests are in flight. */
#define IN_CONNECT (1u << OP_CONNECT)
#define IN_RECV (1u << OP_RECV)
#define IN_SEND (1u << OP_SEND)
/* user_data of a link timeout: never dispatched. */
#define UD_LINK_TIMEOUT 0

enum state { S_IDLE, S_CONNECTING, S_OPEN, S_CLOSING, S_DONE };

struct conn {
	struct tw_timer timer; /* ping, abrupt action, or deadline */
	struct result *res;
	int fd;
	uint32_t id;
	uint8_t kind;
	uint8_t state;
	uint8_t ops;
	uint32_t seq;          /* pings sent */
	uint32_t send_off;     /* bytes of sbuf already sent */
	uint32_t send_len;
	uint64_t rcvd;         /* reply bytes received and checked */
	struct http_reply http; /* --http: the replies received (seq: requests sent) */
	uint64_t t_last_act;   /* chatty: last ping (or connect) submitted, ns */
	uint64_t t_acked;      /* chatty: t_last_act when every reply was in: what the server surely had */
	uint64_t t_quiet;      /* chatty: the first ping sent since the last reply byte, 0 none */
	union demo_sockaddr laddr; /* --trace: our address and port (either family) */
	char sbuf[DEMO_HTTP_REQ_LEN > DEMO_ECHO_MSG_LEN ? DEMO_HTTP_REQ_LEN : DEMO_ECHO_MSG_LEN + 1];
	char rbuf[64];
};

struct worker {
	struct io_uring ring;
	struct twheel *wheel;
	struct conn *conns;
	uint32_t n, next;      /* connections, next one to open */
	uint32_t pidx, nprocs; /* this process among the generator's (--rate's schedule) */
	uint32_t inflight;     /* connects in flight */
	uint32_t unresolved;   /* silent and abrupt connections not yet judged */
	uint32_t live;         /* connections whose fd is still open */
	uint64_t now;          /* ns, read once per loop iteration */
	uint64_t tick_ns;      /* the kernel's tick, the FIN stamps' unit */
	struct proc_stats *ps;
	struct demo_rng rng;
	bool ending;           /* chatty connections being closed */
};

static char flood_buf[256 * 1024]; /* what a flooding client sends */

static tw_tick_t tick_of(uint64_t ns)
{
	return ns / 1000000u; /* the generator's wheel ticks in ms */
}

/* A tick no earlier than @ns: timers never fire before their time. */
static tw_tick_t tick_ceil(uint64_t ns)
{
	return (ns + 999999u) / 1000000u;
}

static struct io_uring_sqe *get_sqe(struct worker *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	if (!sqe) {
		io_uring_submit(&w->ring);
		sqe = io_uring_get_sqe(&w->ring);
	}
	if (!sqe) {
		fprintf(stderr, "idle-load: io_uring submission queue stuck full\n");
		exit(1);
	}
	return sqe;
}

static void post(struct worker *w, struct conn *c, enum op op, struct io_uring_sqe *sqe)
{
	(void)w;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | op);
	c->ops |= (uint8_t)(1u << op);
}

static void post_recv(struct worker *w, struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe(w);
	io_uring_prep_recv(sqe, c->fd, c->rbuf, sizeof(c->rbuf), 0);
	post(w, c, OP_RECV, sqe);
}

static void post_send(struct worker *w, struct conn *c)
{
	struct io_uring_sqe *sqe = get_sqe(w);
	io_uring_prep_send(sqe, c->fd, c->sbuf + c->send_off, c->send_len - c->send_off, MSG_NOSIGNAL);
	post(w, c, OP_SEND, sqe);
}

static void arm(struct worker *w, struct conn *c, uint64_t at_ns)
{
	twheel_mod(w->wheel, &c->timer, tick_ceil(at_ns));
}

/* Length of the next message and the message itself, in c->sbuf. */
static void next_msg(struct conn *c)
{
	if (o.heartbeat) {
		memcpy(c->sbuf, DEMO_PING, DEMO_PING_LEN);
		c->send_len = DEMO_PING_LEN;
	} else if (o.http) {
		memcpy(c->sbuf, DEMO_HTTP_REQ, DEMO_HTTP_REQ_LEN);
		c->send_len = DEMO_HTTP_REQ_LEN;
	} else {
		demo_echo_msg(c->sbuf, c->id, c->seq);
		c->send_len = DEMO_ECHO_MSG_LEN;
	}
	c->send_off = 0;
	c->seq++;
}

/* Count one for the progress line (a relaxed atomic: another process reads it). */
static void bump(uint32_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static void judge(struct worker *w, struct conn *c, enum outcome out)
{
	if (c->res->outcome != O_PENDING)
		return;
	c->res->outcome = (uint8_t)out;
	if (c->kind != K_CHATTY)
		w->unresolved--;
	if (c->kind == K_SILENT)
		bump(&w->ps->silent_done);
	if (out == O_LATE)
		bump(&w->ps->silent_late);
	if (out == O_CONNECT_FAIL)
		bump(&w->ps->connect_failed);
}

/*
 * Stop using @c. With no request in flight the descriptor is closed now;
 * otherwise shutdown() makes the requests complete and the last completion
 * closes it (an io_uring request holds the file, so close() alone would
 * not release the socket). @reset sends an RST instead of a FIN.
 */
static void conn_close(struct worker *w, struct conn *c, bool reset)
{
	twheel_del(w->wheel, &c->timer);
	if (c->state == S_OPEN)
		w->ps->held--;
	if (c->fd < 0)
		return;
	if (reset) {
		struct linger lg = { 1, 0 };
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	if (c->ops) {
		if (c->state != S_CLOSING)
			shutdown(c->fd, SHUT_RDWR);
		c->state = S_CLOSING;
		return;
	}
	close(c->fd);
	c->fd = -1;
	c->state = S_DONE;
	w->live--;
}

static void start_connect(struct worker *w, struct conn *c)
{
	c->fd = socket(demo_addr_family(&o.host), SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		int e = errno;
		fprintf(stderr, "idle-load: socket(): %s%s\n", strerror(e),
			e == EMFILE ? " (RLIMIT_NOFILE too low: lower --per-proc or raise ulimit -n)" : "");
		exit(1);
	}
	w->live++;
	/* IPv4: spread the connections over 127.0.0.x source addresses, --per-src
	 * each, for more than one source's worth of ports; IPv6 has only ::1
	 * (parse_args() checks that one source is enough). */
	if (demo_addr_family(&o.host) == AF_INET) {
		int one = 1;
		setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		struct sockaddr_in src = { .sin_family = AF_INET };
		src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + c->id / o.per_src);
		if (bind(c->fd, (struct sockaddr *)&src, sizeof(src)) != 0) {
			fprintf(stderr, "idle-load: bind(%s): %s\n", inet_ntoa(src.sin_addr), strerror(errno));
			exit(1);
		}
	}

	/* The connect and its link timeout go to the kernel together, after
	 * the stamp below: with one entry left, get_sqe() submitted the
	 * connect alone (linked to nothing: the timeout then failed EINVAL)
	 * before t_submit was read, so the deadline we judge by could be
	 * later than the server's */
	if (io_uring_sq_space_left(&w->ring) < 2)
		io_uring_submit(&w->ring);
	struct io_uring_sqe *sqe = get_sqe(w);
	io_uring_prep_connect(sqe, c->fd, &o.host.u.sa, o.host.len);
	sqe->flags |= IOSQE_IO_LINK;
	post(w, c, OP_CONNECT, sqe);
	static struct __kernel_timespec cto;
	cto.tv_sec = (long long)(o.connect_timeout_ms / 1000);
	cto.tv_nsec = (long long)(o.connect_timeout_ms % 1000) * 1000000;
	sqe = get_sqe(w);
	io_uring_prep_link_timeout(sqe, &cto, 0);
	io_uring_sqe_set_data64(sqe, UD_LINK_TIMEOUT);

	c->state = S_CONNECTING;
	/* a fresh reading: the connect goes to the kernel after this instant */
	c->res->t_submit = demo_now_ns();
	if (!w->ps->t_first_submit)
		w->ps->t_first_submit = c->res->t_submit;
	w->inflight++;
}

static void on_timer(struct tw_timer *t);
static struct worker *the_worker; /* timer callbacks get back to it here */

static void on_connected(struct worker *w, struct conn *c)
{
	c->res->t_est = w->now;
	w->ps->t_last_est = w->now;
	bump(&w->ps->connected);
	c->state = S_OPEN;
	if (++w->ps->held > w->ps->held_max)
		w->ps->held_max = w->ps->held;
	if (o.trace) {
		socklen_t ll = sizeof(c->laddr);
		if (getsockname(c->fd, &c->laddr.sa, &ll) != 0)
			c->laddr.sa.sa_family = AF_UNSPEC;
	}
	switch (c->kind) {
	case K_SILENT:
		post_recv(w, c);
		arm(w, c, w->now + ms_ns(o.idle_ms + o.grace_ms));
		break;
	case K_CHATTY:
		post_recv(w, c);
		c->t_last_act = c->t_acked = c->res->t_submit;
		arm(w, c, w->now + ms_ns(1 + demo_rng_below(&w->rng, o.ping_ms)));
		break;
	case K_RESET: {
		/* half a message: the server is in the middle of reading one */
		next_msg(c);
		(void)!send(c->fd, c->sbuf, c->send_len / 2, MSG_DONTWAIT | MSG_NOSIGNAL);
		arm(w, c, w->now + ms_ns(5 + demo_rng_below(&w->rng, 45)));
		break;
	}
	case K_HALF:
		next_msg(c);
		if (send(c->fd, c->sbuf, c->send_len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)c->send_len ||
		    shutdown(c->fd, SHUT_WR) != 0) {
			c->res->err = errno;
			judge(w, c, O_ABRUPT_FAIL);
			conn_close(w, c, false);
			break;
		}
		post_recv(w, c);
		arm(w, c, w->now + ms_ns(o.idle_ms / 2));
		break;
	case K_VANISH:
		judge(w, c, O_ABRUPT_OK);
		conn_close(w, c, false);
		break;
	case K_FLOOD: {
		size_t off = 0;
		ssize_t r;
		while (off < sizeof(flood_buf) &&
		       (r = send(c->fd, flood_buf + off, sizeof(flood_buf) - off, MSG_DONTWAIT | MSG_NOSIGNAL)) > 0)
			off += (size_t)r;
		arm(w, c, w->now + ms_ns(20 + demo_rng_below(&w->rng, 80)));
		break;
	}
	}
}

static void on_timer(struct tw_timer *t)
{
	struct worker *w = the_worker;
	struct conn *c = tw_container_of(t, struct conn, timer);
	/* how far behind we are: a close that arrives now is seen that late */
	demo_hist_add(&w->ps->lag, (int64_t)(w->now - t->expires * 1000000u));
	if (c->state != S_OPEN)
		return;
	switch (c->kind) {
	case K_SILENT:
		judge(w, c, O_NEVER);
		conn_close(w, c, false);
		break;
	case K_CHATTY: {
		/* jitter of +-25% so the pings do not march in lockstep */
		uint64_t next = o.ping_ms * 3 / 4 + demo_rng_below(&w->rng, o.ping_ms / 2 + 1);
		arm(w, c, w->now + ms_ns(next ? next : 1));
		if (c->ops & IN_SEND) {
			w->ps->pings_skipped++;
			break;
		}
		next_msg(c);
		c->t_last_act = demo_now_ns(); /* before the send is submitted */
		if (!c->t_quiet)
			c->t_quiet = c->t_last_act;
		post_send(w, c);
		w->ps->pings++;
		break;
	}
	case K_RESET:
	case K_FLOOD:
		judge(w, c, O_ABRUPT_OK);
		conn_close(w, c, true);
		break;
	case K_HALF:
		c->res->err = ETIMEDOUT;
		judge(w, c, O_ABRUPT_FAIL);
		conn_close(w, c, false);
		break;
	}
}

/*
 * When did the FIN of silent @c arrive (an estimate, 0: unknown)? It
 * carries the first ACK a silent client receives after the handshake, so
 * tcpi_last_ack_recv is the time since the kernel took it in, in ticks
 * (idle_load_report.c's head says when it is a bound, and when not).
 */
static uint64_t fin_arrival(const struct worker *w, const struct conn *c)
{
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0)
		return 0;
	uint64_t read = demo_now_ns(); /* after the kernel's reading, not w->now before it */
	uint64_t at = referee_fin_bound(read, ti.tcpi_last_ack_recv, w->tick_ns);
	/* within two margins of the connection's set-up, the stamp may be the
	 * handshake's (no ACK since), not the FIN's: unknown */
	return at > c->res->t_est + 2 * referee_fin_margin(w->tick_ns) ? at : 0;
}

/* The kernel's tick (a jiffy): the resolution of CLOCK_MONOTONIC_COARSE.
 * Where it is not a tick of 1-10 ms (HZ 1000 to 100), 10 ms, the coarsest. */
static uint64_t kernel_tick_ns(void)
{
	struct timespec res;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || res.tv_sec != 0 || res.tv_nsec < 1000000 ||
	    res.tv_nsec > 10000000)
		return 10000000;
	return (uint64_t)res.tv_nsec;
}

/* The server closed @c (EOF, or an error: res < 0): the referee judges it. */
static void on_server_close(struct worker *w, struct conn *c, int res)
{
	c->res->t_close = w->now;
	if (c->kind == K_SILENT && res == 0)
		c->res->t_fin_in = fin_arrival(w, c);
	if (res < 0)
		c->res->err = -res;
	switch (c->kind) {
	case K_SILENT:
		judge(w, c, referee_silent_close(c->res));
		break;
	case K_CHATTY:
		if (!w->ending)
			judge(w, c, referee_chatty_close(w->now, c->t_acked, c->t_last_act));
		break;
	case K_HALF: /* its one message answered in full */
		if (o.http)
			judge(w, c, c->http.replies == 1 && !c->http.head_off ? O_ABRUPT_OK : O_ABRUPT_FAIL);
		else
			judge(w, c, c->rcvd == c->send_len ? O_ABRUPT_OK : O_ABRUPT_FAIL);
		break;
	default:
		break;
	}
	conn_close(w, c, false);
}


/*
 * @c's @n reply bytes were what we asked for: count them, read on. A
 * chatty one whose every ping is answered in full: the server had them
 * all, the last one submitted at t_last_act.
 */
static void reply_checked(struct worker *w, struct conn *c, size_t n)
{
	c->rcvd += n;
	c->t_quiet = 0;
	w->ps->bytes_echoed += n;
	if (c->kind == K_CHATTY &&
	    (o.http ? c->http.replies == c->seq && !c->http.head_off
		    : c->rcvd == (uint64_t)c->seq * (o.heartbeat ? DEMO_PING_LEN : DEMO_ECHO_MSG_LEN)))
		c->t_acked = c->t_last_act;
	post_recv(w, c);
}

/* @c's reply differs from what we asked for: judge it, close it. */
static void reply_bad(struct worker *w, struct conn *c)
{
	judge(w, c, c->kind == K_CHATTY ? O_ECHO : O_ABRUPT_FAIL);
	conn_close(w, c, false);
}
static void on_data(struct worker *w, struct conn *c, const char *p, size_t n)
{
	if (c->kind == K_SILENT) {
		judge(w, c, O_WRONG);
		conn_close(w, c, false);
		return;
	}
	bool ok = o.http ? referee_http_reply(&c->http, c->seq, p, n) : referee_echo_reply(c->id, c->rcvd, p, n);
	if (ok)
		reply_checked(w, c, n);
	else
		reply_bad(w, c);
}

static void on_cqe(struct worker *w, const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	if (ud == UD_LINK_TIMEOUT) {
		w->ps->unlinked += cqe->res == -EINVAL; /* submitted alone: start_connect() failed */
		return;
	}
	struct conn *c = (struct conn *)(uintptr_t)(ud & ~(uint64_t)OP_MASK);
	enum op op = (enum op)(ud & OP_MASK);
	int res = cqe->res;
	c->ops &= (uint8_t) ~(1u << op);

	if (c->state == S_CLOSING) {
		if (op == OP_CONNECT)
			w->inflight--;
		if (!c->ops)
			conn_close(w, c, false);
		return;
	}
	switch (op) {
	case OP_CONNECT:
		w->inflight--;
		if (res < 0) {
			c->res->err = res == -ECANCELED ? ETIMEDOUT : -res;
			judge(w, c, O_CONNECT_FAIL);
			conn_close(w, c, false);
		} else {
			on_connected(w, c);
		}
		break;
	case OP_RECV:
		if (res > 0)
			on_data(w, c, c->rbuf, (size_t)res);
		else
			on_server_close(w, c, res);
		break;
	case OP_SEND:
		if (res < 0) {
			/* the recv side reports the close; only remember why */
			c->res->err = -res;
		} else if ((c->send_off += (uint32_t)res) < c->send_len) {
			post_send(w, c);
		}
		break;
	}
}

static int ring_init(struct io_uring *ring, unsigned entries, unsigned cq)
{
	const unsigned try_flags[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	int ret = -EINVAL;
	for (size_t i = 0; i < sizeof(try_flags) / sizeof(try_flags[0]); i++) {
		struct io_uring_params p = { .flags = try_flags[i] | IORING_SETUP_CQSIZE, .cq_entries = cq };
		ret = io_uring_queue_init_params(entries, ring, &p);
		if (ret != -EINVAL)
			return ret;
	}
	return ret;
}

static bool silent_or_abrupt_left(const struct worker *w)
{
	return w->unresolved > 0;
}


/*
 * Set up @w for connections [lo, hi) of @res: its ring, its wheel and its
 * connections, none open yet. Exits the process on failure (message
 * printed; DEMO_EXIT_NO_URING when the kernel refuses io_uring).
 */
static void worker_init(struct worker *w, struct result *res, uint32_t lo, uint32_t pidx)
{
	w->rng = demo_rng_seed(o.seed, 1000 + pidx);
	w->tick_ns = kernel_tick_ns();
	w->ps->fin_margin_ns = referee_fin_margin(w->tick_ns);
	int ret = ring_init(&w->ring, o.sq_entries, 65536);
	if (ret < 0) {
		fprintf(stderr, "idle-load: io_uring refused by the kernel: %s\n", strerror(-ret));
		exit(DEMO_EXIT_NO_URING);
	}
	/* Without EXT_ARG liburing's timed wait queues a timeout SQE of its
	 * own, whose CQE (user_data LIBURING_UDATA_TIMEOUT) the batch reaping
	 * below would take for a connection's */
	if (!(w->ring.features & IORING_FEAT_EXT_ARG)) {
		fprintf(stderr, "idle-load: io_uring: the kernel lacks IORING_FEAT_EXT_ARG (timed waits): "
			"Linux 5.11 or later is needed\n");
		exit(DEMO_EXIT_NO_URING);
	}
	w->now = demo_now_ns();
	w->wheel = twheel_create(tick_of(w->now));
	w->conns = calloc(w->n ? w->n : 1, sizeof(*w->conns));
	if (!w->wheel || !w->conns) {
		fprintf(stderr, "idle-load: out of memory\n");
		exit(1);
	}
	for (uint32_t i = 0; i < w->n; i++) {
		struct conn *c = &w->conns[i];
		c->id = lo + i;
		c->res = &res[lo + i];
		c->kind = c->res->kind;
		c->fd = -1;
		tw_timer_init(&c->timer, on_timer);
		if (c->kind != K_CHATTY)
			w->unresolved++;
	}
}

/*
 * --rate: when the next connect is due (ns; 0 without --rate). The
 * processes' connects interleave on one schedule, from the run's start
 * (rate_t0: the start every process waits for, start_together()): this process's j-th
 * is the run's (j * nprocs + pidx)-th, which is not submitted before
 * rate_t0 + (j * nprocs + pidx) / rate seconds. So all processes together
 * open at most --rate a second; a process held back by --inflight catches
 * up, never getting ahead of the schedule.
 */

static uint64_t connect_due(const struct worker *w)
{
	if (!o.rate)
		return 0;
	return rate_t0 + ((uint64_t)w->next * w->nprocs + w->pidx) * 1000000000u / o.rate;
}

/* Open more connections, a bounded number per iteration, none before it is due. */
static void open_more(struct worker *w)
{
	for (uint32_t k = 0; k < 64 && w->next < w->n && w->inflight < o.inflight && connect_due(w) <= w->now; k++)
		start_connect(w, &w->conns[w->next++]);
}

/*
 * Submit, and sleep until the next timer, an I/O completion, or 100 ms;
 * not at all while connections wait to be opened. Exits the process on an
 * error of the ring (message printed).
 */
/* Submit, and wait for a completion or our next timer; returns the wait asked for (ns). */
static uint64_t wait_io(struct worker *w)
{
	uint64_t wait_ns = ms_ns(100);
	tw_tick_t next = twheel_next_expiry(w->wheel);
	if (next != TW_TICK_MAX) {
		uint64_t at = next * 1000000u;
		wait_ns = at > w->now ? (at - w->now < wait_ns ? at - w->now : wait_ns) : 0;
	}
	if (w->next < w->n && w->inflight < o.inflight) {
		/* the next connect: now, or (--rate) when it is due */
		uint64_t due = connect_due(w);
		if (due <= w->now)
			wait_ns = 0;
		else if (due - w->now < wait_ns)
			wait_ns = due - w->now;
	}
	struct __kernel_timespec ts = { .tv_sec = (long long)(wait_ns / 1000000000u),
					.tv_nsec = (long long)(wait_ns % 1000000000u) };
	struct io_uring_cqe *cqe;
	int ret = io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, &ts, NULL);
	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
		fprintf(stderr, "idle-load: io_uring_submit_and_wait_timeout: %s\n", strerror(-ret));
		exit(1);
	}
	return wait_ns;
}

/*
 * Handle the completions waiting in the ring, and a backlog the kernel
 * holds back, in a bounded number of rounds (our timers wait too).
 *
 * Take the completions first and read the clock after: every completion
 * handled below happened before w->now, so a close is never stamped
 * earlier than it happened.
 */
static void reap(struct worker *w)
{
	struct io_uring_cqe *batch[512], *cqe;
	unsigned n, got = 0;
	for (int round = 0; round < 8; round++) { /* bounded: our timers too */
		do {
			n = io_uring_peek_batch_cqe(&w->ring, batch, 512);
			w->now = demo_now_ns();
			for (unsigned i = 0; i < n; i++)
				on_cqe(w, batch[i]);
			io_uring_cq_advance(&w->ring, n);
			got += n;
		} while (n == 512);
		/*
		 * With DEFER_TASKRUN, a wait for one completion runs at most
		 * 20 of the pending ones (Linux 6.13+, IO_LOCAL_TW_DEFAULT_MAX):
		 * the rest wait for the next system call. When we got a full
		 * helping, there may be a backlog: reap all of it now, or the
		 * closes we measure would wait behind it (measured: up to 2.5 s
		 * on a starved machine, while the FIN was in for 4 ms).
		 */
		if (got < 16)
			break;
		static struct __kernel_timespec zero;
		got = 0;
		io_uring_submit_and_wait_timeout(&w->ring, &cqe, 4096, &zero, NULL);
	}
}

/*
 * Take every completion that came before now, the kernel's backlog too:
 * before a verdict that a reply or a close is missing (a silent
 * connection never closed, a ping unanswered), since one that came while
 * we were away from the ring (a stall, a long turn) happened before the
 * deadline it answers. They are stamped after they are taken (reap()).
 */
static void take_all(struct worker *w)
{
	static struct __kernel_timespec zero;
	struct io_uring_cqe *cqe;
	io_uring_submit_and_wait_timeout(&w->ring, &cqe, 4096, &zero, NULL);
	reap(w);
}

/* The end of the run: judge every chatty connection still open kept, and close it. */
static void close_chatty(struct worker *w)
{
	uint64_t now = demo_now_ns(); /* a ping sent this iteration was stamped after w->now */
	take_all(w); /* every reply that came before now */
	w->ending = true;
	for (uint32_t i = 0; i < w->n; i++) {
		struct conn *c = &w->conns[i];
		if (c->kind == K_CHATTY && c->state == S_OPEN) {
			/* a server that takes the pings without a word is not one
			 * that answers them: no reply byte for --grace-ms since a
			 * ping was sent (a close seen later: --grace-ms, too) */
			judge(w, c, c->t_quiet && now > c->t_quiet + ms_ns(o.grace_ms) ? O_UNANSWERED : O_KEPT);
			conn_close(w, c, false);
		}
	}
}

/* --debug-stall-ms: stop for that long (once), as an overloaded machine would stop us. */
static void debug_stall(void)
{
	struct timespec ts = { .tv_sec = (time_t)(o.stall_ms / 1000), .tv_nsec = (long)(o.stall_ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	o.stall_ms = 0;
}

/*
 * One turn of the loop measured: awake from @woke, waiting from @slept
 * (asking for @asked ns), awake again at @now. Away from the ring: the
 * time busy, plus what the wait overslept.
 */
static void note_stall(struct worker *w, uint64_t woke, uint64_t slept, uint64_t now, uint64_t asked)
{
	uint64_t over = now - slept > asked ? now - slept - asked : 0;
	uint64_t away = slept - woke + over;
	demo_hist_add(&w->ps->stall, (int64_t)away);
	if (away > w->ps->stall_worst_ns) {
		w->ps->stall_worst_ns = away;
		w->ps->stall_worst_at = woke - rate_t0;
	}
}

/*
 * The loop: open the connections, play them out, and once every silent
 * and abrupt one is judged and the chatty ones were held long enough,
 * close the chatty ones and wait (2 s at most) for them to go. A hard
 * stop ends it anyway. @report: print the progress line.
 */
static void worker_loop(struct worker *w, bool report)
{
	uint64_t chatty_end = 0;       /* when the chatty connections are closed */
	uint64_t drain_deadline = 0;   /* ... and how long we wait for them to go */
	/* A hard stop, so that a broken server cannot keep us forever. */
	uint64_t pacing_ms = o.rate ? (uint64_t)w->n * w->nprocs * 1000 / o.rate : 0; /* --rate */
	uint64_t hard_stop = w->now + ms_ns(o.connect_timeout_ms * 2 + (uint64_t)w->n * 2 + pacing_ms +
					    o.idle_ms * 2 + o.grace_ms + o.hold_ms + 10000 + o.stall_ms);
	uint64_t woke = demo_now_ns(); /* the last wait's end */

	for (;;) {
		const uint64_t at = demo_now_ns();
		w->now = at;
		if (twheel_next_expiry(w->wheel) <= tick_of(at))
			take_all(w); /* a verdict is due: moves w->now on, not @at */
		twheel_advance(w->wheel, tick_of(at));
		open_more(w);

		if (w->next == w->n && w->inflight == 0 && !chatty_end)
			chatty_end = w->ps->t_last_est + ms_ns(o.idle_ms + o.hold_ms);
		if (o.stall_ms && chatty_end) {
			debug_stall(); /* --debug-stall-ms: fall behind, once */
			continue;
		}
		if (chatty_end && !w->ending && w->now >= chatty_end && !silent_or_abrupt_left(w)) {
			close_chatty(w);
			drain_deadline = w->now + ms_ns(2000);
		}
		if (w->ending && (w->live == 0 || w->now >= drain_deadline))
			break;
		if (w->now >= hard_stop) {
			fprintf(stderr, "idle-load: gave up: %u connections still undecided after the hard stop\n",
				w->unresolved);
			break;
		}
		uint64_t slept = demo_now_ns(), asked = wait_io(w);
		uint64_t t = demo_now_ns();
		if (!w->ending) /* closing the chatty ones at the end delays no judgement */
			note_stall(w, woke, slept, t, asked);
		woke = t;
		reap(w);
		if (report)
			progress(w->now, false);
	}
}

/* --trace: each silent connection's times to PREFIX.<pidx> (a message if it cannot). */
static void write_trace(const struct worker *w, uint32_t pidx)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.%u", o.trace, pidx);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "idle-load: %s: %s\n", path, strerror(errno));
		return;
	}
	for (uint32_t i = 0; i < w->n; i++) {
		const struct conn *c = &w->conns[i];
		char la[DEMO_SOCKADDR_TEXT_LEN];
		if (c->kind == K_SILENT && c->laddr.sa.sa_family != AF_UNSPEC)
			fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", demo_sockaddr_text(&c->laddr, la),
				c->res->t_submit, c->res->t_est, c->res->t_close, c->res->t_fin_in);
	}
	fclose(f);
}

/* Close what is still open (hard stop; results stay as judged) and free @w. */
static void worker_free(struct worker *w)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->conns[i].fd >= 0) {
			twheel_del(w->wheel, &w->conns[i].timer);
			close(w->conns[i].fd);
		}
	io_uring_queue_exit(&w->ring);
	twheel_destroy(w->wheel);
	free(w->conns);
}

/*
 * Run connections [lo, hi). Returns 0, or exits the process on a fatal
 * error (message printed).
 */
int run_worker(struct result *res, struct proc_stats *ps, uint32_t lo, uint32_t hi,
		      uint32_t pidx, uint32_t nprocs, bool report)
{
	struct worker w = { .n = hi - lo, .ps = ps, .pidx = pidx, .nprocs = nprocs };
	the_worker = &w;
	memset(flood_buf, 'x', sizeof(flood_buf));
	worker_init(&w, res, lo, pidx);
	ps->t_ready = demo_now_ns();
	start_together(nprocs);
	worker_loop(&w, report);
	ps->t_loop_end = demo_now_ns();
	finish_together(nprocs);
	ps->t_teardown = demo_now_ns();
	if (o.trace)
		write_trace(&w, pidx);
	worker_free(&w);
	return 0;
}
