/* SPDX-License-Identifier: MIT */
/*
 * idle_load.c - load generator and referee for the idle-timeout servers
 * (the idle_conns workload, docs/demo.md).
 *
 * Opens N TCP connections to a server on loopback with io_uring, keeps a
 * fraction of them chatty (a ping every --ping-ms, the reply checked byte
 * for byte) and leaves the rest silent, then judges the server:
 *
 *   silent  must be closed by the server after the idle timeout. Lateness
 *           is close - (connect submitted + timeout): the server cannot
 *           have armed its timer before we submitted the connect, and we
 *           see the close after it happened, so lateness is an upper bound
 *           on the server's own lateness (it also holds the time the
 *           connection took to be set up and accepted, reported apart as
 *           "connect latency"), and a negative lateness is a certain
 *           violation:
 *           early   lateness < 0;
 *           on time lateness at most --tolerance-ms;
 *           late    closed after that, but within --grace-ms;
 *           never   still open --grace-ms after the timeout;
 *           wrong   the server sent data on a silent connection.
 *   chatty  must never be closed by the server while we keep talking; the
 *           echo (or PONG) must match what we sent; with --http each
 *           request (GET /) must get a response head that starts
 *           "HTTP/1.1 204 ", read up to its blank line (any headers, no
 *           body, at most DEMO_HTTP_MAX_HEAD bytes), and nothing else. A close less than the
 *           timeout after our last ping was submitted is certainly wrong;
 *           a later one means the generator itself fell behind and let the
 *           connection go silent ("starved": the run is invalid, not the
 *           server wrong).
 *   abrupt  (--abrupt N, extra connections, outside the statistics above)
 *           reset   sends half a message then resets (SO_LINGER 0) while
 *                   the server is reading;
 *           half    sends a message, then shutdown(SHUT_WR): the server
 *                   must answer and close promptly (within half the timeout);
 *           vanish  connects and closes at once;
 *           flood   sends up to 256 KiB without reading, then resets.
 *
 * Every timestamp is taken by the generator from CLOCK_MONOTONIC: a connect
 * just before it is submitted, a completion just after it is reaped. So a
 * slow generator makes closes look later, never earlier: "early" is never a
 * false alarm, "late" may be.
 *
 * The generator referees itself too: it measures its own lag, (1) each of
 * its timers (a chatty ping due, a silent connection's grace, an abrupt
 * client's move) handled - due, and (2) its loop's stalls, the time it
 * was away from its ring beyond the wait it asked for (handling
 * completions, or not running at all). Either one longer than the
 * lateness it judges (--tolerance-ms, at least MIN_LAG_BOUND_MS) makes the
 * run INVALID (exit 3), not a pass nor a fail: its closes could have been
 * seen that late for its own sake. So does a chatty connection it left
 * silent a whole timeout ("starved").
 *
 * Afterwards it asks the server for its STATS line (see demo_common.h)
 * until every server worker reports no connection and no pending timer,
 * and takes the server's CPU seconds from it (or from /proc/<pid>/stat with
 * --server-pid and --no-stats).
 *
 * Connects go out as fast as --inflight (connects in flight) allows, or,
 * with --rate N, at most N a second over all processes: on one schedule,
 * connect i not submitted before start + i/N s (the loop's wait ends when
 * the next one is due; no busy-waiting). The silent connections then time
 * out at the rate they were opened, which bounds the server's close burst.
 *
 * Above --per-proc connections the work is split over several processes
 * (a process cannot hold more descriptors than RLIMIT_NOFILE); above
 * --per-src connections, over several loopback source addresses
 * (127.0.0.1, .2, ...) so the ephemeral ports do not run out.
 *
 * Exit: 0 pass; 1 a connection closed early or wrongly, a silent one never
 * closed, a connect failed or the server kept connections or timers;
 * 2 usage; 3 invalid run (the generator fell behind); 77 io_uring refused
 * by the kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twheel/twheel.h>

#include "args.h"
#include "demo_common.h"

enum kind { K_SILENT, K_CHATTY, K_RESET, K_HALF, K_VANISH, K_FLOOD, K__N };

enum outcome {
	O_PENDING,
	O_ON_TIME,      /* silent, closed within the tolerance */
	O_LATE,         /* silent, closed after the tolerance */
	O_EARLY,        /* silent, closed before the timeout */
	O_NEVER,        /* silent, not closed within the grace period */
	O_WRONG,        /* chatty closed by the server, or data on a silent one */
	O_STARVED,      /* chatty closed after we let it go silent for a timeout */
	O_ECHO,         /* chatty or half-close: the reply did not match */
	O_KEPT,         /* chatty, open until we closed it */
	O_ABRUPT_OK,    /* abrupt client played out as planned */
	O_ABRUPT_FAIL,  /* half-close not answered and closed in time */
	O_CONNECT_FAIL,
	O__N
};

/* One per connection, in memory shared with the parent. */
struct result {
	uint64_t t_submit; /* connect about to be submitted (ns, CLOCK_MONOTONIC) */
	uint64_t t_est;    /* connect completion reaped */
	uint64_t t_close;  /* server's close (EOF or error) reaped */
	uint64_t t_fin_in; /* ...when the kernel took in the FIN (TCP_INFO, jiffies), 0 unknown */
	int32_t err;       /* errno of a failed connect or recv */
	uint8_t kind;
	uint8_t outcome;
};

/* One per process, shared with the parent. */
struct proc_stats {
	uint64_t pings;
	uint64_t pings_skipped; /* previous ping's send still in flight */
	uint64_t bytes_echoed;
	uint64_t t_first_submit, t_last_est;
	uint64_t t_ready;        /* its set-up done (before the start line) */
	uint64_t t_loop_end, t_teardown; /* its loop ended; its tear-down began (the finish line between) */
	struct demo_hist lag;    /* our own timers: handled - due (our lag) */
	struct demo_hist stall;  /* our loop away from the ring, beyond its wait */
	uint64_t stall_worst_ns, stall_worst_at; /* the longest stall, and when (since the start) */
	int fatal; /* the child could not run: message already printed */
	/* read by the progress line while the run goes on (relaxed atomics) */
	uint32_t connected, connect_failed, silent_done, silent_late;
};

struct opts {
	struct demo_addr host; /* the server, port included */
	unsigned family;       /* --family: 4 or 6, 0 = as --host says */
	uint16_t port;
	uint32_t conns;
	uint32_t silent_pct;
	uint32_t abrupt;
	uint64_t idle_ms, ping_ms, tolerance_ms, grace_ms, hold_ms;
	uint64_t connect_timeout_ms;
	uint32_t inflight;
	uint32_t rate;         /* --rate: connects a second over all processes, 0 = no limit */
	uint32_t per_proc, per_src;
	bool heartbeat;
	bool http;             /* --http: HTTP/1.1 keep-alive, GET answered by 204 */
	bool stats;
	uint32_t server_pid;
	uint64_t seed;
	bool quiet;
	const char *trace;
	const char *plot; /* --plot PREFIX */
	uint64_t stall_ms; /* --debug-stall-ms: stop once, all connections open */
};

/* The least lag bound: the wheel ticks in ms, a wait overruns by a few. */
#define MIN_LAG_BOUND_MS 10

static struct opts o = {
	.port = DEMO_DEFAULT_PORT,
	.conns = 10000,
	.silent_pct = 50,
	.idle_ms = DEMO_DEFAULT_IDLE_MS,
	.tolerance_ms = 50,
	.connect_timeout_ms = 5000,
	.inflight = 256,
	.per_proc = 0,
	.per_src = 10000,
	.stats = true,
	.seed = 42,
};

/* ---- One process's connections ------------------------------------------- */

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
	uint32_t replies;      /* --http: complete replies received (seq: requests sent) */
	uint16_t head_off;     /* --http: bytes of the reply head being received */
	uint8_t head_end;      /* --http: bytes of its "\r\n\r\n" seen */
	uint64_t t_last_act;   /* chatty: last ping (or connect) submitted, ns */
	uint32_t laddr;        /* --trace: our address and port, host order */
	uint16_t lport;
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
	struct proc_stats *ps;
	struct demo_rng rng;
	bool ending;           /* chatty connections being closed */
};

static char flood_buf[256 * 1024];

static uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000u;
}

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
	if (o.trace) {
		struct sockaddr_in la;
		socklen_t ll = sizeof(la);
		if (getsockname(c->fd, (struct sockaddr *)&la, &ll) == 0) {
			c->laddr = ntohl(la.sin_addr.s_addr);
			c->lport = ntohs(la.sin_port);
		}
	}
	switch (c->kind) {
	case K_SILENT:
		post_recv(w, c);
		arm(w, c, w->now + ms_ns(o.idle_ms + o.grace_ms));
		break;
	case K_CHATTY:
		post_recv(w, c);
		c->t_last_act = c->res->t_submit;
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

/* The server closed @c (EOF, or an error: res < 0). */
static void on_server_close(struct worker *w, struct conn *c, int res)
{
	c->res->t_close = w->now;
	if (c->kind == K_SILENT && res == 0) {
		/* When did the FIN arrive? It carries the first ACK a silent
		 * client receives after the handshake, so tcpi_last_ack_recv is
		 * the time since the kernel took it in: what is left is our own
		 * delay in reaping it (jiffies resolution). */
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);
		if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0) {
			uint64_t ago = (uint64_t)ti.tcpi_last_ack_recv * 1000000u;
			/* before the connection was up: not the FIN's ACK, unknown */
			c->res->t_fin_in = ago < w->now - c->res->t_est ? w->now - ago : 0;
		}
	}
	if (res < 0)
		c->res->err = -res;
	switch (c->kind) {
	case K_SILENT: {
		uint64_t idle = ms_ns(o.idle_ms);
		/* early: on the reaped time, which is never before the truth;
		 * late: on the FIN's arrival where the kernel told us, so that
		 * our own reaping lag is not blamed on the server */
		uint64_t in = c->res->t_fin_in ? c->res->t_fin_in : w->now;
		if (w->now - c->res->t_submit < idle)
			judge(w, c, O_EARLY);
		else if (in - c->res->t_submit > idle + ms_ns(o.tolerance_ms))
			judge(w, c, O_LATE);
		else
			judge(w, c, O_ON_TIME);
		break;
	}
	case K_CHATTY:
		if (!w->ending)
			judge(w, c, w->now - c->t_last_act < ms_ns(o.idle_ms) ? O_WRONG : O_STARVED);
		break;
	case K_HALF: /* its one message answered in full */
		if (o.http)
			judge(w, c, c->replies == 1 && !c->head_off ? O_ABRUPT_OK : O_ABRUPT_FAIL);
		else
			judge(w, c, c->rcvd == c->send_len ? O_ABRUPT_OK : O_ABRUPT_FAIL);
		break;
	default:
		break;
	}
	conn_close(w, c, false);
}


/* @c's @n reply bytes were what we asked for: count them, read on. */
static void reply_checked(struct worker *w, struct conn *c, size_t n)
{
	c->rcvd += n;
	w->ps->bytes_echoed += n;
	post_recv(w, c);
}

/* @c's reply differs from what we asked for: judge it, close it. */
static void reply_bad(struct worker *w, struct conn *c)
{
	judge(w, c, c->kind == K_CHATTY ? O_ECHO : O_ABRUPT_FAIL);
	conn_close(w, c, false);
}
/*
 * --http: check @n reply bytes. Each reply is a head that starts with
 * DEMO_HTTP_STATUS and ends at its blank line ("\r\n\r\n"), whatever its
 * headers (nginx adds Server, Date, Connection), at most
 * DEMO_HTTP_MAX_HEAD bytes, and no body (a 204). A byte when every request
 * sent has its reply already, a wrong status or an overlong head is a bad
 * reply. Returns false on a bad reply.
 */
static bool http_reply_bytes(struct conn *c, const char *p, size_t n)
{
	static const char end[4] = { '\r', '\n', '\r', '\n' };
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		if (!c->head_off && c->replies >= c->seq)
			return false; /* nothing was asked for */
		if (c->head_off < DEMO_HTTP_STATUS_LEN && ch != DEMO_HTTP_STATUS[c->head_off])
			return false;
		if (++c->head_off > DEMO_HTTP_MAX_HEAD)
			return false;
		c->head_end = ch == end[c->head_end] ? (uint8_t)(c->head_end + 1) : ch == '\r' ? 1 : 0;
		if (c->head_end == 4) { /* the head is complete: the next byte starts another */
			c->replies++;
			c->head_off = 0;
			c->head_end = 0;
		}
	}
	return true;
}

static void on_data(struct worker *w, struct conn *c, const char *p, size_t n)
{
	if (c->kind == K_SILENT) {
		judge(w, c, O_WRONG);
		conn_close(w, c, false);
		return;
	}
	if (o.http) {
		if (http_reply_bytes(c, p, n))
			reply_checked(w, c, n);
		else
			reply_bad(w, c);
		return;
	}
	/* one message is formatted per DEMO_ECHO_MSG_LEN bytes, not per byte:
	 * the referee must stay cheap, it shares the CPU with the server */
	char msg[DEMO_ECHO_MSG_LEN + 1];
	uint64_t cur = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = c->rcvd + i;
		char want;
		if (o.heartbeat) {
			want = DEMO_PONG[off % DEMO_PING_LEN];
		} else {
			if (off / DEMO_ECHO_MSG_LEN != cur) {
				cur = off / DEMO_ECHO_MSG_LEN;
				demo_echo_msg(msg, c->id, (uint32_t)cur);
			}
			want = msg[off % DEMO_ECHO_MSG_LEN];
		}
		if (p[i] != want) {
			reply_bad(w, c);
			return;
		}
	}
	reply_checked(w, c, n);
}

static void on_cqe(struct worker *w, const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	if (ud == UD_LINK_TIMEOUT)
		return;
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
 * ---- Progress ----------------------------------------------------------------
 * One line at most once a second while connections are made and while the
 * server's idle closes come in, from the counters of every process: on a
 * terminal it overwrites itself (\r), elsewhere (a pipe, a log) it is a
 * line of its own, printed when it changed and at least every 5 s.
 */
static struct {
	struct proc_stats *ps;
	uint32_t nprocs, total, nsilent;
	uint64_t t0, next, last_print;
	bool on, tty, printed;
	char last[128];
} prog;

static void progress(uint64_t now, bool force)
{
	if (!prog.on || (now < prog.next && !force))
		return;
	prog.next = now + ms_ns(1000);
	uint32_t conn = 0, failed = 0, done = 0, late = 0;
	for (uint32_t p = 0; p < prog.nprocs; p++) {
		conn += __atomic_load_n(&prog.ps[p].connected, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&prog.ps[p].connect_failed, __ATOMIC_RELAXED);
		done += __atomic_load_n(&prog.ps[p].silent_done, __ATOMIC_RELAXED);
		late += __atomic_load_n(&prog.ps[p].silent_late, __ATOMIC_RELAXED);
	}
	char line[128];
	if (conn + failed < prog.total)
		snprintf(line, sizeof(line), "connecting: %u of %u connected, %u failed", conn, prog.total, failed);
	else if (done < prog.nsilent)
		snprintf(line, sizeof(line), "waiting for idle closes: %u of %u silent closed, %u late", done,
			 prog.nsilent, late);
	else
		snprintf(line, sizeof(line), "all %u silent closed, %u late; closing the chatty ones", prog.nsilent,
			 late);
	/* a pipe: a line when it changed, and every 5 s that it did not */
	if (!prog.tty && !strcmp(line, prog.last) && (force || now < prog.last_print + ms_ns(5000)))
		return;
	snprintf(prog.last, sizeof(prog.last), "%s", line);
	prog.last_print = now;
	printf(prog.tty ? "\r[%4.0f s] %s\033[K" : "[%4.0f s] %s\n", (double)(now - prog.t0) / 1e9, line);
	fflush(stdout);
	prog.printed = true;
}

/* The last progress line, and the end of an overwritten one. */
static void progress_end(void)
{
	if (!prog.on || !prog.printed)
		return;
	progress(demo_now_ns(), true);
	if (prog.tty)
		putchar('\n');
}

/*
 * Set up @w for connections [lo, hi) of @res: its ring, its wheel and its
 * connections, none open yet. Exits the process on failure (message
 * printed; DEMO_EXIT_NO_URING when the kernel refuses io_uring).
 */
static void worker_init(struct worker *w, struct result *res, uint32_t lo, uint32_t pidx)
{
	w->rng = demo_rng_seed(o.seed, 1000 + pidx);
	int ret = ring_init(&w->ring, 4096, 65536);
	if (ret < 0) {
		fprintf(stderr, "idle-load: io_uring refused by the kernel: %s\n", strerror(-ret));
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
static uint64_t rate_t0;

/*
 * The start line, in the memory the processes share: every process sets up
 * (its ring, its wheel, its connection table) before any starts, and they
 * start together, a little after the last is ready. Forked at once on one
 * core, the first ones' loops would otherwise wait for the others' set-up:
 * stalls of 170-600 ms at the start of a million-connection run, when no
 * connection can be late yet, that made the run INVALID.
 */
struct start_line {
	uint32_t ready;  /* processes set up */
	uint32_t done;   /* processes whose loop has ended (the finish line) */
	uint64_t go;     /* the start (CLOCK_MONOTONIC ns), 0 until all are ready */
};
static struct start_line *the_start;

/* Wait at the start line (10 s at most: a process that failed its set-up
 * exits and never arrives); rate_t0 becomes the common start. */
static void start_together(uint32_t nprocs)
{
	struct start_line *l = the_start;
	if (!l || nprocs == 1)
		return;
	if (__atomic_add_fetch(&l->ready, 1, __ATOMIC_ACQ_REL) == nprocs)
		__atomic_store_n(&l->go, demo_now_ns() + ms_ns(20), __ATOMIC_RELEASE);
	uint64_t go, give_up = demo_now_ns() + ms_ns(10000);
	while (!(go = __atomic_load_n(&l->go, __ATOMIC_ACQUIRE))) {
		if (demo_now_ns() >= give_up) {
			fprintf(stderr, "idle-load: not every process got ready in 10 s: starting anyway\n");
			return;
		}
		usleep(1000);
	}
	struct timespec ts = { .tv_sec = (time_t)(go / 1000000000u), .tv_nsec = (long)(go % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	rate_t0 = go;
}
/*
 * The finish line: a process whose loop has ended (everything it opened
 * judged) waits for the others before it tears down its ring and its
 * connections and exits. Tearing down on the one core the others share,
 * while they still wait for their last closes, stalled them (118 ms at the
 * end of a million-connection run). 120 s at most (a process that died
 * never arrives; every loop ends by its own hard stop).
 */
static void finish_together(uint32_t nprocs)
{
	struct start_line *l = the_start;
	if (!l || nprocs == 1)
		return;
	__atomic_add_fetch(&l->done, 1, __ATOMIC_ACQ_REL);
	uint64_t give_up = demo_now_ns() + ms_ns(120000);
	while (__atomic_load_n(&l->done, __ATOMIC_ACQUIRE) < nprocs) {
		if (demo_now_ns() >= give_up) {
			fprintf(stderr, "idle-load: not every process finished in 120 s: tearing down anyway\n");
			return;
		}
		usleep(2000);
	}
}

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

/* The end of the run: judge every chatty connection still open kept, and close it. */
static void close_chatty(struct worker *w)
{
	w->ending = true;
	for (uint32_t i = 0; i < w->n; i++) {
		struct conn *c = &w->conns[i];
		if (c->kind == K_CHATTY && c->state == S_OPEN) {
			judge(w, c, O_KEPT);
			conn_close(w, c, false);
		}
	}
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

/* --debug-stall-ms: stop for that long (once), as an overloaded machine would stop us. */
static void debug_stall(void)
{
	struct timespec ts = { .tv_sec = (time_t)(o.stall_ms / 1000), .tv_nsec = (long)(o.stall_ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	o.stall_ms = 0;
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
		w->now = demo_now_ns();
		twheel_advance(w->wheel, tick_of(w->now));
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
		uint64_t t = demo_now_ns(), over = t - slept > asked ? t - slept - asked : 0;
		if (!w->ending) { /* closing the chatty ones at the end delays no judgement */
			uint64_t away = slept - woke + over; /* busy, overslept */
			demo_hist_add(&w->ps->stall, (int64_t)away);
			if (away > w->ps->stall_worst_ns) {
				w->ps->stall_worst_ns = away;
				w->ps->stall_worst_at = woke - rate_t0;
			}
		}
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
		if (c->kind == K_SILENT && c->lport)
			fprintf(f, "%08x:%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", c->laddr, c->lport,
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
static int run_worker(struct result *res, struct proc_stats *ps, uint32_t lo, uint32_t hi,
		      uint32_t pidx, uint32_t nprocs, bool report)
{
	struct worker w = { .n = hi - lo, .ps = ps, .pidx = pidx, .nprocs = nprocs };
	the_worker = &w;
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

/* ---- Server inspection ----------------------------------------------------- */

/* Timing fields of the STATS line (demo_common.h), in this order. */
enum { ST_FIRE_N, ST_FIRE_P50, ST_FIRE_P99, ST_FIRE_MAX, ST_FIN_P50, ST_FIN_P99, ST_FIN_MAX,
       ST_CLOSE_P50, ST_CLOSE_P99, ST_CLOSE_MAX, ST_ACC_P50, ST_ACC_P99, ST_ACC_MAX, ST__N };
static const char *const st_keys[ST__N] = {
	"fire_n", "fire_p50_us", "fire_p99_us", "fire_max_us", "fin_p50_us", "fin_p99_us", "fin_max_us",
	"close_p50_us", "close_p99_us", "close_max_us", "accept_p50_us", "accept_p99_us", "accept_max_us",
};

struct server_view {
	uint32_t workers;     /* 0: unknown */
	uint32_t seen;        /* workers that answered with conns=0 timers=0 */
	uint64_t conns, timers, emfile, accepted, idle_closed;
	double cpu_user, cpu_sys;
	bool ok;
	/* the servers' own timing (STATS *_us fields), the worst worker's for
	 * each figure; timing = false if the server does not report it */
	bool timing;
	uint64_t tm[ST__N];
};

/* One STATS request; returns 0 and fills @line, or -errno. */
static int stats_once(char *line, size_t len)
{
	int fd = socket(demo_addr_family(&o.host), SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct timeval tv = { 1, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	size_t got = 0;
	int ret = 0;
	if (connect(fd, &o.host.u.sa, o.host.len) != 0 ||
	    send(fd, DEMO_STATS_REQ, DEMO_STATS_REQ_LEN, MSG_NOSIGNAL) != DEMO_STATS_REQ_LEN) {
		ret = -errno;
		goto out;
	}
	while (got + 1 < len) {
		ssize_t r = recv(fd, line + got, len - 1 - got, 0);
		if (r <= 0) {
			ret = r == 0 ? -EPROTO : -errno;
			break;
		}
		got += (size_t)r;
		if (memchr(line, '\n', got)) {
			ret = 0;
			break;
		}
	}
out:
	line[got] = '\0';
	close(fd);
	if (!ret && strncmp(line, "STATS ", 6) != 0)
		ret = -EPROTO;
	return ret;
}

/*
 * Ask the server until each of its workers has reported no connection and
 * no pending timer, for up to @ms milliseconds, or 100 ms a worker when
 * that is longer. A worker is chosen by the kernel (SO_REUSEPORT) for each
 * request, so we keep asking until we have heard from all of them.
 */
static struct server_view query_server(uint64_t ms)
{
	struct server_view v = { 0 };
	enum { MAXW = 256 };
	bool done[MAXW] = { false };
	uint64_t conns[MAXW] = { 0 }, timers[MAXW] = { 0 }, emfile[MAXW] = { 0 };
	uint64_t acc[MAXW] = { 0 }, idle[MAXW] = { 0 }, ut[MAXW] = { 0 }, st[MAXW] = { 0 };
	static uint64_t tm[MAXW][ST__N];
	bool has_tm[MAXW] = { false };
	uint64_t deadline = demo_now_ns() + ms_ns(ms);
	char line[DEMO_STATS_MAX];
	while (demo_now_ns() < deadline) {
		int ret = stats_once(line, sizeof(line));
		uint64_t wk = 0, nw = 0;
		if (ret == 0 && demo_stats_get(line, "worker", &wk) == 0 &&
		    demo_stats_get(line, "workers", &nw) == 0 && nw > 0 && nw <= MAXW && wk < nw) {
			if (!v.workers) {
				/* SO_REUSEPORT picks the worker that answers: seeing
				 * each of nw takes about nw * ln(nw) requests */
				uint64_t need = demo_now_ns() + ms_ns(100 * nw);
				if (need > deadline)
					deadline = need;
			}
			v.workers = (uint32_t)nw;
			demo_stats_get(line, "conns", &conns[wk]);
			demo_stats_get(line, "timers", &timers[wk]);
			demo_stats_get(line, "emfile", &emfile[wk]);
			demo_stats_get(line, "accepted", &acc[wk]);
			demo_stats_get(line, "idle_closed", &idle[wk]);
			demo_stats_get(line, "utime_us", &ut[wk]);
			demo_stats_get(line, "stime_us", &st[wk]);
			has_tm[wk] = true;
			for (int k = 0; k < ST__N; k++)
				if (demo_stats_get(line, st_keys[k], &tm[wk][k]) != 0)
					has_tm[wk] = false;
			done[wk] = conns[wk] == 0 && timers[wk] == 0;
			uint32_t seen = 0;
			for (uint32_t i = 0; i < nw; i++)
				seen += done[i];
			v.seen = seen;
			if (seen == nw)
				break;
		} else if (ret != 0 && ret != -EINTR && !o.quiet) { /* EINTR: just ask again */
			fprintf(stderr, "idle-load: STATS request: %s\n", strerror(-ret));
		}
		usleep(5000);
	}
	for (uint32_t i = 0; i < v.workers; i++) {
		v.conns += conns[i];
		v.timers += timers[i];
		v.emfile += emfile[i];
		v.accepted += acc[i];
		v.idle_closed += idle[i];
		v.cpu_user += (double)ut[i] / 1e6;
		v.cpu_sys += (double)st[i] / 1e6;
	}
	v.timing = v.workers > 0;
	for (uint32_t i = 0; i < v.workers; i++) {
		v.timing = v.timing && has_tm[i];
		for (int k = 0; k < ST__N; k++) {
			if (k == ST_FIRE_N)
				v.tm[k] += tm[i][k];
			else if (tm[i][k] > v.tm[k])
				v.tm[k] = tm[i][k];
		}
	}
	v.ok = v.workers > 0 && v.seen == v.workers;
	return v;
}

/* utime and stime of @pid and of its children (its worker processes), in seconds. */
static int proc_cpu(long pid, double *user, double *sys)
{
	long hz = sysconf(_SC_CLK_TCK);
	DIR *d = opendir("/proc");
	if (!d || hz <= 0)
		return -errno;
	struct dirent *de;
	int found = 0;
	*user = *sys = 0;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[1024];
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *p = strrchr(buf, ')'); /* the command name may hold spaces */
		long self = strtol(de->d_name, NULL, 10), ppid;
		unsigned long ut, st;
		if (!p || sscanf(p + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				 &ppid, &ut, &st) != 3)
			continue;
		if (self == pid || ppid == pid) {
			*user += (double)ut / (double)hz;
			*sys += (double)st / (double)hz;
			found = 1;
		}
	}
	closedir(d);
	return found ? 0 : -ESRCH;
}

/* ---- Summary ---------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double pct_ms(const int64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t k = (size_t)(p * (double)n + 0.999999); /* nearest rank */
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e6;
}

/* ---- Tally, plot, summary ---------------------------------------------------------- */

/* The protocol spoken, for the summary and the plot. */
static const char *mode_name(void)
{
	return o.heartbeat ? "heartbeat" : o.http ? "http" : "echo";
}

/* What the run came to: every connection's result and every process's stats. */
struct report {
	uint32_t total, nsilent, nprocs;
	int fail_procs;
	uint64_t count[K__N][O__N];
	uint64_t wrong, abrupt_ok, abrupt_fail, connect_fail, pending;
	int err_connect;
	/* sorted, ns: silent lateness as the close was reaped, as the FIN came
	 * in (where the kernel told us), our reaping delay, connect times */
	int64_t *late, *late_in, *reap, *setup;
	size_t nlate, nlate_in, nsetup;
	struct proc_stats sum;
	double open_s, wall_s, gen_cpu, cpu_user, cpu_sys;
	uint64_t start_overlap_us; /* first connect submitted -> last process set up, if after */
	uint64_t end_overlap_us;   /* first tear-down -> last loop's end, if after */
	struct server_view sv;
	bool server_clean, pass;
	bool invalid;      /* the generator fell behind: its lag beyond lag_bound_ms, or starved */
	uint64_t lag_bound_ms;
	char plot[9000]; /* what write_plot() made, for the summary */
};

static void hist_merge(struct demo_hist *sum, const struct demo_hist *h)
{
	for (unsigned i = 0; i < DEMO_HIST_N; i++)
		sum->b[i] += h->b[i];
	sum->n += h->n;
	if (h->max_us > sum->max_us)
		sum->max_us = h->max_us;
}

static int tally(struct report *r, const struct result *res, const struct proc_stats *ps)
{
	size_t ns = r->nsilent ? r->nsilent : 1;
	r->late = malloc(sizeof(int64_t) * ns);
	r->late_in = malloc(sizeof(int64_t) * ns);
	r->reap = malloc(sizeof(int64_t) * ns);
	r->setup = malloc(sizeof(int64_t) * (r->total ? r->total : 1));
	if (!r->late || !r->late_in || !r->reap || !r->setup)
		return -ENOMEM;
	uint64_t first_submit = UINT64_MAX, last_est = 0, last_ready = 0, last_loop_end = 0,
		 first_teardown = UINT64_MAX;
	struct proc_stats *sum = &r->sum;
	for (uint32_t p = 0; p < r->nprocs; p++) {
		hist_merge(&sum->lag, &ps[p].lag);
		hist_merge(&sum->stall, &ps[p].stall);
		if (ps[p].stall_worst_ns > sum->stall_worst_ns) {
			sum->stall_worst_ns = ps[p].stall_worst_ns;
			sum->stall_worst_at = ps[p].stall_worst_at;
		}
		sum->pings += ps[p].pings;
		sum->pings_skipped += ps[p].pings_skipped;
		sum->bytes_echoed += ps[p].bytes_echoed;
		if (ps[p].t_first_submit && ps[p].t_first_submit < first_submit)
			first_submit = ps[p].t_first_submit;
		if (ps[p].t_last_est > last_est)
			last_est = ps[p].t_last_est;
		if (ps[p].t_ready > last_ready)
			last_ready = ps[p].t_ready;
		if (ps[p].t_loop_end > last_loop_end)
			last_loop_end = ps[p].t_loop_end;
		if (ps[p].t_teardown && ps[p].t_teardown < first_teardown)
			first_teardown = ps[p].t_teardown;
	}
	/* a process tore down while another's loop still ran: they did not finish together */
	r->end_overlap_us = first_teardown != UINT64_MAX && last_loop_end > first_teardown
				    ? (last_loop_end - first_teardown) / 1000 : 0;
	/* a connect submitted before the last process was set up: they did not start together */
	r->start_overlap_us = first_submit != UINT64_MAX && last_ready > first_submit ? (last_ready - first_submit) / 1000 : 0;
	r->open_s = last_est > first_submit && first_submit != UINT64_MAX ? (double)(last_est - first_submit) / 1e9 : 0;
	int64_t idle = (int64_t)ms_ns(o.idle_ms);
	for (uint32_t i = 0; i < r->total; i++) {
		const struct result *x = &res[i];
		r->count[x->kind][x->outcome]++;
		if (x->outcome == O_CONNECT_FAIL && !r->err_connect)
			r->err_connect = x->err;
		if (x->kind == K_SILENT && (x->outcome == O_ON_TIME || x->outcome == O_LATE)) {
			r->late[r->nlate++] = (int64_t)(x->t_close - x->t_submit) - idle;
			if (x->t_fin_in) {
				r->late_in[r->nlate_in] = (int64_t)(x->t_fin_in - x->t_submit) - idle;
				r->reap[r->nlate_in++] = (int64_t)(x->t_close - x->t_fin_in);
			}
		}
		if (x->t_est)
			r->setup[r->nsetup++] = (int64_t)(x->t_est - x->t_submit);
	}
	qsort(r->late, r->nlate, sizeof(int64_t), cmp_i64);
	qsort(r->late_in, r->nlate_in, sizeof(int64_t), cmp_i64);
	qsort(r->reap, r->nlate_in, sizeof(int64_t), cmp_i64);
	qsort(r->setup, r->nsetup, sizeof(int64_t), cmp_i64);
	for (int k = 0; k < K__N; k++) {
		r->connect_fail += r->count[k][O_CONNECT_FAIL];
		r->pending += r->count[k][O_PENDING];
		if (k >= K_RESET) {
			r->abrupt_ok += r->count[k][O_ABRUPT_OK];
			r->abrupt_fail += r->count[k][O_ABRUPT_FAIL] + r->count[k][O_WRONG] + r->count[k][O_ECHO];
		}
	}
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	r->wrong = s[O_WRONG] + c[O_WRONG] + c[O_ECHO] + r->abrupt_fail;
	return 0;
}

/*
 * --plot PREFIX: PREFIX.csv (one row per silent connection the server
 * closed: its lateness as judged, i.e. at the FIN's arrival where known,
 * and as the close was reaped, in ms), PREFIX.gp (a gnuplot script that
 * draws both as the share of closes by lateness, the tolerance marked) and,
 * where gnuplot is installed, PREFIX.png.
 */
static void write_plot(struct report *r, const struct result *res)
{
	char csv[4200], gp[4200], png[4200];
	snprintf(csv, sizeof(csv), "%s.csv", o.plot);
	snprintf(gp, sizeof(gp), "%s.gp", o.plot);
	snprintf(png, sizeof(png), "%s.png", o.plot);
	FILE *f = fopen(csv, "w");
	if (!f) {
		snprintf(r->plot, sizeof(r->plot), "%s: %s", csv, strerror(errno));
		return;
	}
	int64_t idle = (int64_t)ms_ns(o.idle_ms);
	fprintf(f, "# idle-load: silent connections closed by the server, idle timeout %" PRIu64
		   " ms\n# judged_ms,seen_ms (lateness: judged at the FIN's arrival where known)\n", o.idle_ms);
	for (uint32_t i = 0; i < r->total; i++) {
		const struct result *x = &res[i];
		if (x->kind != K_SILENT || (x->outcome != O_ON_TIME && x->outcome != O_LATE))
			continue;
		double seen = (double)((int64_t)(x->t_close - x->t_submit) - idle) / 1e6;
		double judged = x->t_fin_in ? (double)((int64_t)(x->t_fin_in - x->t_submit) - idle) / 1e6 : seen;
		fprintf(f, "%.3f,%.3f\n", judged, seen);
	}
	fclose(f);
	/* x up to where the curves have flattened: past p99 and the tolerance */
	double xmax = pct_ms(r->late, r->nlate, 0.99) * 1.5;
	if (xmax < (double)o.tolerance_ms * 1.5)
		xmax = (double)o.tolerance_ms * 1.5;
	if (xmax < 1)
		xmax = 1;
	/* the FIN's time is in jiffies (+-4 ms): it may fall a little before 0 */
	double xmin = r->nlate_in && r->late_in[0] < 0 ? (double)r->late_in[0] / 1e6 - 1 : 0;
	f = fopen(gp, "w");
	if (!f) {
		snprintf(r->plot, sizeof(r->plot), "%s: %s", gp, strerror(errno));
		return;
	}
	fprintf(f,
		"set terminal pngcairo size 900,520 font 'DejaVu Sans,11'\n"
		"set output '%s'\n"
		"set datafile separator ','\n"
		"set title \"idle-load: when the server closed %zu silent connections\\n"
		"%s mode, idle timeout %" PRIu64 " ms, %u connections in all\"\n"
		"set xlabel 'lateness, ms: close - (connect + idle timeout)'\n"
		"set ylabel 'share of the closes'\n"
		"set xrange [%.1f:%.1f]\nset yrange [0:1.02]\nset grid\nset key right center opaque box\n"
		"set arrow from %" PRIu64 ", graph 0 to %" PRIu64 ", graph 1 nohead dt 2 lc rgb '#c00000'\n"
		"set label 'tolerance %" PRIu64 " ms: later is \"late\"' at %" PRIu64 ", graph 0.1 offset 0.5,0 "
		"tc rgb '#c00000'\n"
		"plot '%s' using 1:(1) smooth cnormal lw 2 title 'FIN arrived, +-4 ms (judged on this)', \\\n"
		"     '' using 2:(1) smooth cnormal lw 2 dt 3 title 'close seen by idle-load'\n",
		png, r->nlate, mode_name(), o.idle_ms, r->total, xmin, xmax, o.tolerance_ms, o.tolerance_ms,
		o.tolerance_ms, o.tolerance_ms, csv);
	fclose(f);
	if (!r->nlate) {
		snprintf(r->plot, sizeof(r->plot), "no silent connection was closed: nothing to draw");
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		execlp("gnuplot", "gnuplot", gp, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		snprintf(r->plot, sizeof(r->plot), "%s (and .csv, .gp)", png);
	else if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
		snprintf(r->plot, sizeof(r->plot), "%s (no gnuplot here: \"gnuplot %s\" draws it)", csv, gp);
	else
		snprintf(r->plot, sizeof(r->plot), "%s (gnuplot failed on %s)", csv, gp);
}

/* "p50 A  p99 B  max C" of sorted ns values, in ms. */
static const char *pcts(char *buf, size_t len, const int64_t *v, size_t n)
{
	snprintf(buf, len, "p50 %.2f  p99 %.2f  max %.2f", pct_ms(v, n, 0.50), pct_ms(v, n, 0.99),
		 n ? (double)v[n - 1] / 1e6 : 0.0);
	return buf;
}

/* The summary's first lines: the run, and what became of each kind of connection. */
static void print_counts(const struct report *r)
{
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	printf("\nidle_conns summary: %s mode, idle timeout %" PRIu64 " ms, tolerance %" PRIu64
	       " ms, grace %" PRIu64 " ms\n", mode_name(), o.idle_ms, o.tolerance_ms, o.grace_ms);
	char rate[40];
	if (o.rate)
		snprintf(rate, sizeof(rate), "at most %u/s (--rate)", o.rate);
	else
		snprintf(rate, sizeof(rate), "no --rate");
	printf("  connections    %u opened in %.2f s, %s, by %u process%s, %" PRIu64 " failed%s%s\n", r->total,
	       r->open_s, rate, r->nprocs, r->nprocs == 1 ? "" : "es", r->connect_fail, r->err_connect ? ": " : "",
	       r->err_connect ? strerror(r->err_connect) : "");
	printf("  silent         %u: on time %" PRIu64 ", late %" PRIu64 ", early %" PRIu64 ", never %" PRIu64
	       ", sent data %" PRIu64 "\n", r->nsilent, s[O_ON_TIME], s[O_LATE], s[O_EARLY], s[O_NEVER], s[O_WRONG]);
	printf("  chatty         %u: kept open %" PRIu64 ", closed %" PRIu64 ", bad replies %" PRIu64 "\n",
	       o.conns - r->nsilent, c[O_KEPT], c[O_WRONG], c[O_ECHO]);
	printf("                 %" PRIu64 " pings (%" PRIu64 " skipped), %" PRIu64 " reply bytes checked\n",
	       r->sum.pings, r->sum.pings_skipped, r->sum.bytes_echoed);
	if (o.abrupt) {
		const uint64_t (*k)[O__N] = r->count;
		printf("  abrupt         %u: played out %" PRIu64 ", misbehaved %" PRIu64 "\n", o.abrupt, r->abrupt_ok,
		       r->abrupt_fail);
		printf("                 reset %" PRIu64 ", half-close %" PRIu64 " of %" PRIu64 " answered, vanish %" PRIu64
		       ", flood %" PRIu64 "\n", k[K_RESET][O_ABRUPT_OK], k[K_HALF][O_ABRUPT_OK],
		       k[K_HALF][O_ABRUPT_OK] + k[K_HALF][O_ABRUPT_FAIL] + k[K_HALF][O_ECHO], k[K_VANISH][O_ABRUPT_OK],
		       k[K_FLOOD][O_ABRUPT_OK]);
	}
	if (c[O_STARVED])
		printf("  INVALID RUN    %" PRIu64 " chatty ones closed after idle-load left them silent a whole\n"
		       "                 timeout (it fell behind: machine overloaded?)\n", c[O_STARVED]);
}

/* The summary's timing lines: lateness, connects, the server's own figures, our lag. */
static void print_timing(const struct report *r)
{
	const uint64_t *t = r->sv.tm;
	char b[100];
	if (r->nlate) {
		printf("  lateness ms    %s  min %.2f\n", pcts(b, sizeof(b), r->late, r->nlate),
		       (double)r->late[0] / 1e6);
		printf("                 (close seen - (connect submitted + timeout); %zu closes, an upper bound)\n",
		       r->nlate);
	}
	if (r->nlate_in) {
		printf("  FIN arrived    %s  (the same, when our kernel took the FIN in)\n",
		       pcts(b, sizeof(b), r->late_in, r->nlate_in));
		printf("  our reaping    %s  (FIN in -> close seen: our delay)\n",
		       pcts(b, sizeof(b), r->reap, r->nlate_in));
	}
	if (r->nsetup)
		printf("  connect ms     %s  (submitted -> established; in the lateness)\n",
		       pcts(b, sizeof(b), r->setup, r->nsetup));
	if (o.stats && r->sv.timing) {
		printf("  server's part  timer fired p50 %.2f  p99 %.2f  max %.2f ms after its deadline\n",
		       t[ST_FIRE_P50] / 1e3, t[ST_FIRE_P99] / 1e3, t[ST_FIRE_MAX] / 1e3);
		printf("                 FIN sent p99 %.2f  max %.2f, accept queue p99 %.2f  max %.2f ms\n",
		       t[ST_FIN_P99] / 1e3, t[ST_FIN_MAX] / 1e3, t[ST_ACC_P99] / 1e3, t[ST_ACC_MAX] / 1e3);
		printf("                 (%" PRIu64 " idle timers, the worst of %u worker%s for each figure)\n",
		       t[ST_FIRE_N], r->sv.workers, r->sv.workers == 1 ? "" : "s");
	}
	if (r->sum.lag.n)
		printf("  generator lag  p50 %.2f  p99 %.2f  max %.2f  (ms: our own timers, handled - due)\n",
		       demo_hist_pct(&r->sum.lag, 0.5) / 1e3, demo_hist_pct(&r->sum.lag, 0.99) / 1e3,
		       r->sum.lag.max_us / 1e3);
	if (r->sum.stall.n)
		printf("  our stalls     p50 %.2f  p99 %.2f  max %.2f ms, at %.1f s  (our loop away from its ring)\n",
		       demo_hist_pct(&r->sum.stall, 0.5) / 1e3, demo_hist_pct(&r->sum.stall, 0.99) / 1e3,
		       r->sum.stall.max_us / 1e3, (double)r->sum.stall_worst_at / 1e9);
}

/* The summary's last figures: the server's counters, CPU time, the plot. */
static void print_resources(const struct report *r)
{
	if (o.stats && r->sv.workers)
		printf("  server         %u worker%s: %" PRIu64 " accepted, %" PRIu64 " idle-closed, %" PRIu64 " EMFILE\n",
		       r->sv.workers, r->sv.workers == 1 ? "" : "s", r->sv.accepted, r->sv.idle_closed, r->sv.emfile);
	else if (o.stats)
		printf("  server         did not answer STATS\n");
	if (r->cpu_user >= 0)
		printf("  CPU            server %.2f s (user %.2f, sys %.2f), idle-load %.2f s; %.2f s wall\n",
		       r->cpu_user + r->cpu_sys, r->cpu_user, r->cpu_sys, r->gen_cpu, r->wall_s);
	else
		printf("  CPU            server unknown, idle-load %.2f s; %.2f s wall\n", r->gen_cpu, r->wall_s);
	if (o.plot)
		printf("  plot           %s\n", r->plot);
}

/* The RESULT line: the summary's figures for scripts, key=value. */
static void print_result_line(const struct report *r)
{
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY], *t = r->sv.tm;
	printf("RESULT conns=%u silent=%u on_time=%" PRIu64 " late=%" PRIu64 " early=%" PRIu64 " never=%" PRIu64
	       " wrong=%" PRIu64 " starved=%" PRIu64 " chatty_kept=%" PRIu64 " abrupt_ok=%" PRIu64 " abrupt_fail=%" PRIu64
	       " connect_fail=%" PRIu64 " server_conns=%" PRIu64 " server_timers=%" PRIu64
	       " server_clean=%d late_min_us=%.0f late_p50_us=%.0f late_p99_us=%.0f late_max_us=%.0f"
	       " fin_p50_us=%.0f fin_p99_us=%.0f fin_max_us=%.0f server_fire_p99_us=%" PRIu64 " server_fire_max_us=%" PRIu64
	       " server_cpu_s=%.3f lag_max_us=%" PRIu64 " stall_max_us=%" PRIu64 " rate=%u open_s=%.3f wall_s=%.3f start_overlap_us=%" PRIu64 " end_overlap_us=%" PRIu64
	       " invalid=%d pass=%d\n",
	       r->total, r->nsilent, s[O_ON_TIME], s[O_LATE], s[O_EARLY], s[O_NEVER], r->wrong, c[O_STARVED], c[O_KEPT],
	       r->abrupt_ok, r->abrupt_fail, r->connect_fail, r->sv.conns, r->sv.timers, r->server_clean ? 1 : 0,
	       r->nlate ? (double)r->late[0] / 1e3 : 0.0, pct_ms(r->late, r->nlate, 0.50) * 1e3,
	       pct_ms(r->late, r->nlate, 0.99) * 1e3, r->nlate ? (double)r->late[r->nlate - 1] / 1e3 : 0.0,
	       pct_ms(r->late_in, r->nlate_in, 0.50) * 1e3, pct_ms(r->late_in, r->nlate_in, 0.99) * 1e3,
	       r->nlate_in ? (double)r->late_in[r->nlate_in - 1] / 1e3 : 0.0, t[ST_FIRE_P99], t[ST_FIRE_MAX],
	       r->cpu_user >= 0 ? r->cpu_user + r->cpu_sys : -1.0, r->sum.lag.max_us, r->sum.stall.max_us, o.rate,
	       r->open_s, r->wall_s, r->start_overlap_us, r->end_overlap_us, r->invalid ? 1 : 0, r->pass ? 1 : 0);
}

/* What the verdict is made of: exactly the terms of r->pass, then what "late" means. */
static void print_verdict(const struct report *r)
{
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	char b[100];
	printf("%s: each of these must be 0%s\n", r->invalid ? "INVALID" : r->pass ? "PASS" : "FAIL",
	       r->pass ? ", and is" : "");
	printf("  early %-8" PRIu64 " silent, closed before the idle timeout\n", s[O_EARLY]);
	printf("  never %-8" PRIu64 " silent, still open %" PRIu64 " ms (--grace-ms) past the timeout\n", s[O_NEVER],
	       o.grace_ms);
	printf("  wrong %-8" PRIu64 " a chatty one closed, a reply that differs, data on a silent one\n", r->wrong);
	printf("  failed %-7" PRIu64 " connects that failed\n", r->connect_fail);
	if (o.stats && r->sv.workers) {
		snprintf(b, sizeof(b), "%" PRIu64 "/%" PRIu64, r->sv.conns, r->sv.timers);
		printf("  left %-9s connections/timers the server still held at the end\n", b);
	} else if (o.stats) {
		printf("  left ?         the server did not answer STATS\n");
	}
	if (c[O_STARVED])
		printf("  starved %-6" PRIu64 " chatty ones idle-load itself left silent (an invalid run)\n", c[O_STARVED]);
	if (r->pending || r->fail_procs)
		printf("  undecided %-4" PRIu64 " connections never judged (%d generator process%s failed)\n", r->pending,
		       r->fail_procs, r->fail_procs == 1 ? "" : "es");
	printf("late: %" PRIu64 " of %u closed more than %" PRIu64 " ms (--tolerance-ms) after the idle timeout,\n"
	       "  taken when the FIN arrived (else when idle-load saw the close); counted, not a failure\n", s[O_LATE], r->nsilent, o.tolerance_ms);
	if (r->invalid) {
		printf("INVALID RUN: idle-load fell behind (lag max %.1f ms, stalls max %.1f ms, starved %" PRIu64
		       "),\n  beyond the %" PRIu64 " ms it judges lateness by: this run says nothing of the server\n",
		       r->sum.lag.max_us / 1e3, r->sum.stall.max_us / 1e3, c[O_STARVED], r->lag_bound_ms);
		printf("INVALID\n");
		return;
	}
	printf("%s\n", r->pass ? "PASS" : "FAIL");
}

/*
 * The summary: lines under 100 characters, figures first, then what PASS
 * judged and what "late" means; the RESULT line holds the same for scripts.
 */
static void print_summary(const struct report *r)
{
	print_counts(r);
	print_timing(r);
	print_resources(r);
	print_result_line(r);
	print_verdict(r);
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  --host ADDR          server address, loopback only: 127.x.y.z or ::1\n"
		"                       (127.0.0.1, or ::1 with --family 6)\n"
		"  --family 4|6         address family: IPv4 or IPv6 (as --host says; 4)\n"
		"  --port N             server port (%d)\n"
		"  --conns N            connections to open (10000)\n"
		"  --silent PCT         percent of them left silent (50)\n"
		"  --abrupt N           extra abrupt clients: reset, half-close, vanish, flood in turn (0)\n"
		"  --idle-ms MS         the server's idle timeout (%d)\n"
		"  --ping-ms MS         chatty ping interval, +-25%% jitter (idle/4)\n"
		"  --tolerance-ms MS    lateness still counted on time (50)\n"
		"  --grace-ms MS        a silent connection open this long past the timeout was never closed (max(1000, idle))\n"
		"  --hold-ms MS         keep chatty connections this long past the timeout after the last connect\n"
		"                       (idle; 0 with --silent 100)\n"
		"  --heartbeat          speak the heartbeat protocol (PING/PONG) instead of echo\n"
		"  --http               speak HTTP/1.1 keep-alive: the ping is GET / and the reply a\n"
		"                       head starting \"HTTP/1.1 204 \" (headers read up to its blank line)\n"
		"  --inflight N         connects in flight at once (256)\n"
		"  --rate N             open at most N connections a second, over all processes\n"
		"                       (0: as fast as --inflight allows; 0)\n"
		"  --connect-timeout-ms MS  (5000)\n"
		"  --per-proc N         connections per generator process (RLIMIT_NOFILE - 256)\n"
		"  --per-src N          connections per loopback source address (10000);\n"
		"                       IPv6 has one (::1), so at most N connections in all\n"
		"  --no-stats           do not query the server's STATS (a foreign server)\n"
		"  --server-pid PID     take server CPU from /proc/PID/stat (and its children)\n"
		"  --seed N             PRNG seed (42)\n"
		"  --quiet              only the summary (no progress lines)\n"
		"  --plot PREFIX        write PREFIX.csv (each silent close's lateness), PREFIX.gp and,\n"
		"                       with gnuplot installed, PREFIX.png: the share of closes by lateness\n"
		"  --trace PREFIX       write each silent connection to PREFIX.<process>:\n"
		"                       addr:port connect_submitted_ns established_ns close_seen_ns fin_arrived_ns\n"
		"                       (demo/trace_join.py joins it with idle-server --trace)\n"
		"  --debug-stall-ms MS  once every connection is open, stop for MS (tests the INVALID verdict)\n"
		"a run is INVALID when idle-load's timers ran late or its loop stalled longer than\n"
		"--tolerance-ms (10 at least), or it left a chatty connection silent a timeout\n"
		"exit: 0 pass, 1 fail, 2 usage, 3 invalid run (idle-load fell behind), 77 io_uring unavailable\n",
		prog, DEMO_DEFAULT_PORT, DEMO_DEFAULT_IDLE_MS);
}

static void parse_args(int argc, char **argv)
{
	const char *host = NULL;
	bool no_stats = false;
	/* UINT64_MAX: not given, derived from --idle-ms below */
	o.ping_ms = o.grace_ms = o.hold_ms = UINT64_MAX;
	const struct args_opt opts[] = {
		ARGS_STR("host", &host),
		ARGS_NUM("family", &o.family, 4, 6),
		ARGS_NUM("port", &o.port, 1, 65535),
		ARGS_NUM("conns", &o.conns, 0, 10000000),
		ARGS_NUM("silent", &o.silent_pct, 0, 100),
		ARGS_NUM("abrupt", &o.abrupt, 0, 1000000),
		ARGS_NUM("idle-ms", &o.idle_ms, 10, 3600000),
		ARGS_NUM("ping-ms", &o.ping_ms, 1, 3600000),
		ARGS_NUM("tolerance-ms", &o.tolerance_ms, 0, 3600000),
		ARGS_NUM("grace-ms", &o.grace_ms, 1, 3600000),
		ARGS_NUM("hold-ms", &o.hold_ms, 0, 3600000),
		ARGS_FLAG("heartbeat", &o.heartbeat),
		ARGS_FLAG("http", &o.http),
		ARGS_NUM("inflight", &o.inflight, 1, 65536),
		ARGS_NUM("rate", &o.rate, 0, 100000000),
		ARGS_NUM("connect-timeout-ms", &o.connect_timeout_ms, 1, 600000),
		ARGS_NUM("per-proc", &o.per_proc, 1, 10000000),
		ARGS_NUM("per-src", &o.per_src, 1, 60000),
		ARGS_FLAG("no-stats", &no_stats),
		ARGS_NUM("server-pid", &o.server_pid, 1, 1u << 30),
		ARGS_NUM("seed", &o.seed, 0, UINT64_MAX),
		ARGS_FLAG("quiet", &o.quiet),
		ARGS_STR("trace", &o.trace),
		ARGS_STR("plot", &o.plot),
		ARGS_NUM("debug-stall-ms", &o.stall_ms, 0, 3600000),
		ARGS_END,
	};
	args_parse("idle-load", argc, argv, opts, usage);
	o.stats = !no_stats;
	if (o.heartbeat && o.http)
		args_fail("idle-load", "--heartbeat and --http are two protocols: one at most");
	if (o.family == 5)
		args_fail("idle-load", "--family needs 4 or 6, not '5'");
	if (!host)
		host = o.family == 6 ? "::1" : "127.0.0.1";
	if (demo_addr_parse(host, o.port, &o.host) != 0)
		args_fail("idle-load", "--host needs a loopback address (127.x.y.z or ::1), not '%s'", host);
	if (o.family && (o.family == 6) != (demo_addr_family(&o.host) == AF_INET6))
		args_fail("idle-load", "--host %s is not an IPv%u address (--family %u)", host, o.family, o.family);
	if (o.ping_ms == UINT64_MAX)
		o.ping_ms = o.idle_ms / 4 ? o.idle_ms / 4 : 1;
	if (o.grace_ms == UINT64_MAX)
		o.grace_ms = o.idle_ms > 1000 ? o.idle_ms : 1000;
	if (o.hold_ms == UINT64_MAX) /* no chatty connection: nothing to hold */
		o.hold_ms = o.silent_pct == 100 ? 0 : o.idle_ms;
	if (o.ping_ms * 5 / 4 >= o.idle_ms)
		args_fail("idle-load", "--ping-ms %" PRIu64 " (+25%% jitter) must stay below --idle-ms %" PRIu64,
			  o.ping_ms, o.idle_ms);
	unsigned nsrc = demo_addr_family(&o.host) == AF_INET6 ? 1 : 254;
	if ((uint64_t)(o.conns + o.abrupt) / o.per_src >= nsrc)
		args_fail("idle-load", "--conns %u plus --abrupt %u are too many for --per-src %u%s", o.conns,
			  o.abrupt, o.per_src, nsrc == 1 ? " (IPv6 has one loopback source address)" : "");
}

/*
 * Kinds: the first @nsilent of a seeded shuffle are silent, the rest of
 * the --conns chatty; the abrupt clients are spread among them. Returns 0,
 * or -1 out of memory (message printed).
 */
static int assign_kinds(struct result *res, uint32_t total, uint32_t nsilent)
{
	struct demo_rng rng = demo_rng_seed(o.seed, 0);
	for (uint32_t i = 0; i < total; i++)
		res[i].kind = K_CHATTY;
	uint32_t *perm = malloc(sizeof(*perm) * (total ? total : 1));
	if (!perm) {
		perror("idle-load: malloc");
		return -1;
	}
	for (uint32_t i = 0; i < total; i++) {
		uint32_t j = (uint32_t)demo_rng_below(&rng, (uint64_t)i + 1);
		perm[i] = perm[j];
		perm[j] = i;
	}
	for (uint32_t i = 0; i < total; i++) {
		if (i < nsilent)
			res[perm[i]].kind = K_SILENT;
		else if (i >= o.conns)
			res[perm[i]].kind = (uint8_t)(K_RESET + (i - o.conns) % 4);
	}
	free(perm);
	return 0;
}

/* The progress line's counters and clock, from @t0 (on unless --quiet). */
static void progress_start(struct proc_stats *ps, uint32_t nprocs, uint32_t total, uint32_t nsilent,
			   uint64_t t0)
{
	prog.ps = ps;
	prog.nprocs = nprocs;
	prog.total = total;
	prog.nsilent = nsilent;
	prog.t0 = t0;
	prog.next = t0 + ms_ns(1000);
	prog.on = !o.quiet;
	prog.tty = isatty(STDOUT_FILENO);
}

/*
 * Wait for the @nprocs worker processes, printing the progress line
 * meanwhile; count in *@fail_procs those that failed. Returns 0, or
 * DEMO_EXIT_NO_URING as soon as one reports io_uring refused.
 */
static int wait_procs(uint32_t nprocs, int *fail_procs)
{
	for (uint32_t left = nprocs; left > 0;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid == 0 || (pid < 0 && errno == EINTR)) {
			progress(demo_now_ns(), false);
			usleep(100000);
			continue;
		}
		if (pid < 0)
			break;
		left--;
		if (WIFEXITED(st) && WEXITSTATUS(st) == DEMO_EXIT_NO_URING)
			return DEMO_EXIT_NO_URING;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			(*fail_procs)++;
	}
	return 0;
}

/*
 * Run the @total connections: in this process, or split over @nprocs
 * forked ones while this one reports their progress. Returns 0 with the
 * failed processes counted in *@fail_procs, or the exit status when the
 * run cannot go on (message printed).
 */
static int run_procs(struct result *res, struct proc_stats *ps, uint32_t total, uint32_t nprocs,
		     int *fail_procs)
{
	if (nprocs == 1) {
		run_worker(res, &ps[0], 0, total, 0, 1, true);
		return 0;
	}
	pid_t *pids = calloc(nprocs, sizeof(*pids));
	if (!pids) {
		perror("idle-load: calloc");
		return 1;
	}
	for (uint32_t p = 0; p < nprocs; p++) {
		uint32_t lo = (uint32_t)((uint64_t)total * p / nprocs);
		uint32_t hi = (uint32_t)((uint64_t)total * (p + 1) / nprocs);
		pids[p] = fork();
		if (pids[p] < 0) {
			perror("idle-load: fork");
			return 1;
		}
		if (pids[p] == 0)
			_exit(run_worker(res, &ps[p], lo, hi, p, nprocs, false));
	}
	/* the children work; this process reports their progress */
	int ret = wait_procs(nprocs, fail_procs);
	if (ret)
		return ret;
	free(pids);
	return 0;
}

/*
 * CPU seconds: the server's from its STATS (unless --no-stats), else from
 * /proc with --server-pid, else unknown (-1); the generator's own,
 * children included, from getrusage().
 */
static void measure_cpu(struct report *r)
{
	r->cpu_user = r->cpu_sys = -1;
	if (o.stats) {
		r->sv = query_server(5000);
		if (r->sv.workers) {
			r->cpu_user = r->sv.cpu_user;
			r->cpu_sys = r->sv.cpu_sys;
		}
	}
	if (o.server_pid && (!o.stats || !r->sv.workers) && proc_cpu(o.server_pid, &r->cpu_user, &r->cpu_sys) != 0) {
		fprintf(stderr, "idle-load: cannot read /proc/%u/stat\n", o.server_pid);
		r->cpu_user = r->cpu_sys = -1;
	}
	struct rusage ru_self, ru_kids;
	getrusage(RUSAGE_SELF, &ru_self);
	getrusage(RUSAGE_CHILDREN, &ru_kids);
	r->gen_cpu = (double)(ru_self.ru_utime.tv_sec + ru_self.ru_stime.tv_sec + ru_kids.ru_utime.tv_sec +
			      ru_kids.ru_stime.tv_sec) +
		     (double)(ru_self.ru_utime.tv_usec + ru_self.ru_stime.tv_usec + ru_kids.ru_utime.tv_usec +
			      ru_kids.ru_stime.tv_usec) / 1e6;
}

/* The verdict: no process failed, no connection judged wrongly or left undecided, the server clean. */
static void judge_run(struct report *r)
{
	r->server_clean = !o.stats || r->sv.ok;
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	r->lag_bound_ms = o.tolerance_ms > MIN_LAG_BOUND_MS ? o.tolerance_ms : MIN_LAG_BOUND_MS;
	r->invalid = c[O_STARVED] != 0 || r->sum.lag.max_us > r->lag_bound_ms * 1000u ||
		     r->sum.stall.max_us > r->lag_bound_ms * 1000u;
	r->pass = !r->fail_procs && s[O_EARLY] == 0 && s[O_NEVER] == 0 && r->wrong == 0 && r->connect_fail == 0 &&
		  r->pending == 0 && r->server_clean && !r->invalid;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	memset(flood_buf, 'x', sizeof(flood_buf));

	rlim_t nofile = demo_raise_nofile(1u << 20);
	if (!o.per_proc)
		o.per_proc = nofile > 512 ? (uint32_t)(nofile - 256) : 256;

	uint32_t total = o.conns + o.abrupt;
	uint32_t nsilent = (uint32_t)(((uint64_t)o.conns * o.silent_pct + 50) / 100);
	uint32_t nprocs = total ? (total + o.per_proc - 1) / o.per_proc : 1;

	size_t res_bytes = sizeof(struct result) * (total ? total : 1);
	size_t ps_bytes = sizeof(struct proc_stats) * nprocs;
	void *shm = mmap(NULL, res_bytes + ps_bytes + sizeof(struct start_line), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("idle-load: mmap");
		return 1;
	}
	struct result *res = shm;
	struct proc_stats *ps = (struct proc_stats *)((char *)shm + res_bytes);
	the_start = (struct start_line *)((char *)ps + ps_bytes);
	if (assign_kinds(res, total, nsilent) != 0)
		return 1;

	if (!o.quiet) {
		printf("idle-load: %u connections to %s:%u, idle timeout %" PRIu64 " ms, %u process%s\n"
		       "  %u silent, %u chatty, %u abrupt, ",
		       total, o.host.text, o.port, o.idle_ms, nprocs, nprocs == 1 ? "" : "es", nsilent,
		       o.conns - nsilent, o.abrupt);
		if (o.rate)
			printf("opened at %u a second (--rate)\n", o.rate);
		else
			printf("opened as fast as %u connects in flight allow\n", o.inflight);
	}
	fflush(stdout);

	uint64_t t0 = demo_now_ns();
	rate_t0 = t0; /* --rate's schedule, the same in every process */
	progress_start(ps, nprocs, total, nsilent, t0);
	int fail_procs = 0;
	int ret = run_procs(res, ps, total, nprocs, &fail_procs);
	if (ret)
		return ret;
	progress_end();
	uint64_t t_end = demo_now_ns();

	/* ---- tally, plot, summary ---- */
	struct report r = { .total = total, .nsilent = nsilent, .nprocs = nprocs, .fail_procs = fail_procs,
			    .wall_s = (double)(t_end - t0) / 1e9 };
	if (tally(&r, res, ps) != 0) {
		fprintf(stderr, "idle-load: out of memory for the summary\n");
		return 1;
	}
	measure_cpu(&r);
	judge_run(&r);
	if (o.plot)
		write_plot(&r, res);
	print_summary(&r);
	free(r.late);
	free(r.late_in);
	free(r.reap);
	free(r.setup);
	munmap(shm, res_bytes + ps_bytes);
	return r.invalid ? 3 : r.pass ? 0 : 1;
}
