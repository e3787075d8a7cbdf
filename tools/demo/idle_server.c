/* SPDX-License-Identifier: MIT */
/*
 * idle_server.c - the idle-timeout TCP server on the C API of twheel-uring
 * (<twheel/loop.h>). The C++ build of the same server is idle_server.cpp.
 *
 * Every accepted connection embeds a loop timer; each read re-arms it with
 * twheel_loop_mod() (kernel mod_timer(): O(1), usually just a store when the
 * new expiry lands in the same slot), and when it fires the connection was
 * silent for the whole idle timeout and is closed. All I/O goes through the
 * loop's ring: one multishot accept, one recv or send in flight per
 * connection (the echo is sent from the buffer it was read into, and the
 * next recv is posted only once it went out: a client that does not read
 * cannot make the server buffer without bound).
 *
 * Closing: shutdown(SHUT_RDWR) sends the FIN at once and makes the
 * connection's in-flight request complete; its completion frees the
 * connection. (close() alone would not do: an io_uring request holds a
 * reference to the file, so the socket would stay open.)
 *
 * Out of descriptors: an accept that fails with EMFILE/ENFILE pauses
 * accepting (no spinning on a full backlog), prints one line a second at
 * most, and resumes when a connection closes or after 100 ms.
 *
 * Workers: --workers K runs K processes, each with its own loop and wheel,
 * on K SO_REUSEPORT listening sockets (for more connections than one
 * process may hold descriptors, or more cores). The parent only forwards
 * signals and reaps.
 *
 * Signals: SIGUSR1 prints each worker's STATS line (see demo_common.h) on
 * stdout; SIGTERM/SIGINT shut down gracefully: stop accepting, close every
 * connection, wait for every request to complete, print the final STATS
 * line and exit 0, or 1 if a timer or connection was left behind.
 *
 * Exit: 0; 1 runtime error or leak; 2 usage; 77 io_uring refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twheel/loop.h>

#include "demo_common.h"

#define CONN_BUF 512
#define BACKOFF_NS (100 * 1000000ull)

struct opts {
	struct in_addr bind;
	uint16_t port;
	uint64_t idle_ms;
	uint64_t tick_us;
	unsigned workers;
	unsigned backlog;
	rlim_t nofile; /* 0: as high as allowed */
	bool heartbeat;
	bool quiet;
	const char *trace; /* per-connection timing, one file per worker */
};

static struct opts o = {
	.port = DEMO_DEFAULT_PORT,
	.idle_ms = DEMO_DEFAULT_IDLE_MS,
	.tick_us = 1000,
	.workers = 1,
	.backlog = 4096,
};

struct server {
	struct twheel_loop *loop;
	int lfd, sfd;
	unsigned worker;
	struct tw_loop_io accept_io, signal_io, noop_io;
	struct tw_loop_timer backoff;  /* resume accepting after EMFILE */
	struct tw_loop_timer deadline; /* bound on a graceful shutdown */
	struct signalfd_siginfo si;
	struct tw_list conns;
	size_t nconns;       /* data connections (control ones excluded) */
	size_t nlive;        /* connection objects, control ones included */
	unsigned ios;        /* server-level requests in flight */
	bool accepting;      /* a multishot accept is in flight */
	bool paused;         /* accepting paused for lack of descriptors */
	bool stopping;
	uint64_t idle_ns;
	rlim_t nofile;
	/* counters */
	uint64_t accepted, idle_closed, peer_closed, resets, errors, protocol_errors;
	uint64_t emfile, emfile_unreported, control;
	uint64_t last_emfile_msg;
	/* the server's own timing, in the STATS line (see demo_common.h) */
	struct demo_hist h_fire;   /* idle timer: callback run - deadline */
	struct demo_hist h_fin;    /* idle timer: FIN sent (shutdown returned) - deadline */
	struct demo_hist h_close;  /* idle timer fired -> last request done, fd closed */
	struct demo_hist h_accept; /* handshake complete -> accept completion handled */
	struct demo_hist h_wake;   /* idle timer: start of its loop iteration - deadline */
	struct demo_hist h_busy;   /* loop iterations: end - wake-up */
	uint64_t max_ran;          /* most callbacks run by one iteration */
	FILE *trace;
};

enum { RX = 1, TX = 2 };
enum cstate { C_OPEN, C_DRAIN, C_CLOSING };

struct conn {
	struct tw_loop_timer idle;
	struct tw_loop_io rx, tx;
	struct tw_list link;
	struct server *s;
	int fd;
	uint8_t inflight;    /* RX | TX */
	uint8_t state;
	bool seen_data;      /* the first read decides: STATS or data */
	bool control;
	uint16_t line_len;   /* heartbeat: bytes of the current line */
	char line[DEMO_PING_LEN]; /* ...its first bytes */
	uint16_t out_len, out_off;
	char *out;           /* what is being sent: buf, or a STATS line */
	uint64_t t_fire;     /* when the idle timer fired (loop clock), 0 if not */
	uint64_t t_fin;      /* ...and when shutdown() returned */
	uint64_t t_accept;   /* accept completion handled (loop clock) */
	uint32_t acc_wait_ms;  /* time spent in the accept queue (TCP_INFO) */
	uint32_t peer_addr;  /* --trace: the peer, network order */
	uint16_t peer_port;
	char buf[CONN_BUF];
};

static void conn_close(struct conn *c);

/* ---- Server-level helpers -------------------------------------------------- */

static struct io_uring_sqe *sqe_for(struct server *s, struct tw_loop_io *io)
{
	struct io_uring_sqe *sqe = twheel_loop_get_sqe(s->loop, io);
	if (!sqe) {
		/* twheel_loop_get_sqe() already submitted once: the ring is wedged */
		fprintf(stderr, "idle-server[%u]: io_uring submission queue full\n", s->worker);
		exit(1);
	}
	return sqe;
}

/* Pending timers that belong to connections (the server's own excluded). */
static size_t conn_timers(const struct server *s)
{
	size_t n = twheel_loop_count(s->loop);
	n -= twheel_loop_pending(s->loop, &s->backoff);
	n -= twheel_loop_pending(s->loop, &s->deadline);
	return n;
}

static int stats_line(const struct server *s, char *buf, size_t len)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	int n = snprintf(buf, len,
			"STATS worker=%u workers=%u pid=%d conns=%zu timers=%zu accepted=%" PRIu64
			" idle_closed=%" PRIu64 " peer_closed=%" PRIu64 " resets=%" PRIu64 " errors=%" PRIu64
			" protocol_errors=%" PRIu64 " emfile=%" PRIu64 " control=%" PRIu64 " nofile=%lu"
			" utime_us=%" PRIu64 " stime_us=%" PRIu64 "\n",
			s->worker, o.workers, (int)getpid(), s->nconns, conn_timers(s), s->accepted,
			s->idle_closed, s->peer_closed, s->resets, s->errors, s->protocol_errors, s->emfile,
			s->control, (unsigned long)s->nofile,
			(uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec,
			(uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec);
	if (n < 0 || (size_t)n >= len - 1)
		return n;
	/* replace the newline by the timing fields */
	n--;
	n += snprintf(buf + n, len - (size_t)n,
		      " fire_n=%" PRIu64 " fire_p50_us=%" PRIu64 " fire_p99_us=%" PRIu64 " fire_max_us=%" PRIu64
		      " fin_p50_us=%" PRIu64 " fin_p99_us=%" PRIu64 " fin_max_us=%" PRIu64
		      " close_p50_us=%" PRIu64 " close_p99_us=%" PRIu64 " close_max_us=%" PRIu64
		      " accept_p50_us=%" PRIu64 " accept_p99_us=%" PRIu64 " accept_max_us=%" PRIu64
		      " wake_p50_us=%" PRIu64 " wake_p99_us=%" PRIu64 " wake_max_us=%" PRIu64
		      " busy_p50_us=%" PRIu64 " busy_p99_us=%" PRIu64 " busy_max_us=%" PRIu64 " iters=%" PRIu64 " max_ran=%" PRIu64 "\n",
		      s->h_fire.n, demo_hist_pct(&s->h_fire, 0.5), demo_hist_pct(&s->h_fire, 0.99), s->h_fire.max_us,
		      demo_hist_pct(&s->h_fin, 0.5), demo_hist_pct(&s->h_fin, 0.99), s->h_fin.max_us,
		      demo_hist_pct(&s->h_close, 0.5), demo_hist_pct(&s->h_close, 0.99), s->h_close.max_us,
		      demo_hist_pct(&s->h_accept, 0.5), demo_hist_pct(&s->h_accept, 0.99), s->h_accept.max_us,
		      demo_hist_pct(&s->h_wake, 0.5), demo_hist_pct(&s->h_wake, 0.99), s->h_wake.max_us,
		      demo_hist_pct(&s->h_busy, 0.5), demo_hist_pct(&s->h_busy, 0.99), s->h_busy.max_us,
		      s->h_busy.n, s->max_ran);
	return n;
}

static void print_stats(const struct server *s)
{
	char line[DEMO_STATS_MAX];
	stats_line(s, line, sizeof(line));
	fputs(line, stdout);
	fflush(stdout);
}

static void accept_arm(struct server *s);

static void maybe_finish(struct server *s)
{
	if (s->stopping && s->ios == 0 && s->nlive == 0) {
		twheel_loop_del(s->loop, &s->deadline);
		twheel_loop_stop(s->loop);
	}
}

/* ---- Connections ------------------------------------------------------------- */

static void conn_free(struct conn *c)
{
	struct server *s = c->s;
	close(c->fd);
	if (c->t_fire) {
		uint64_t now = twheel_loop_clock(s->loop);
		demo_hist_add(&s->h_close, (int64_t)(now - c->t_fire));
		if (s->trace)
			fprintf(s->trace, "%08x:%u %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				ntohl(c->peer_addr), ntohs(c->peer_port), c->t_accept, c->acc_wait_ms,
				c->idle.deadline, c->t_fire, c->t_fin, now);
	}
	if (c->out != c->buf)
		free(c->out);
	tw_list_del(&c->link);
	if (!c->control)
		s->nconns--;
	s->nlive--;
	free(c);
	if (s->paused && !s->stopping) {
		/* a descriptor came free: try the backlog again */
		s->paused = false;
		twheel_loop_del(s->loop, &s->backoff);
		accept_arm(s);
	}
	maybe_finish(s);
}

static void conn_recv(struct conn *c)
{
	struct io_uring_sqe *sqe = sqe_for(c->s, &c->rx);
	io_uring_prep_recv(sqe, c->fd, c->buf, sizeof(c->buf), 0);
	c->inflight |= RX;
}

static void conn_send(struct conn *c)
{
	struct io_uring_sqe *sqe = sqe_for(c->s, &c->tx);
	io_uring_prep_send(sqe, c->fd, c->out + c->out_off, (size_t)(c->out_len - c->out_off), MSG_NOSIGNAL);
	c->inflight |= TX;
}

/*
 * Stop using @c: disarm its timer, send the FIN now, and free it when its
 * last in-flight request has completed.
 */
static void conn_close(struct conn *c)
{
	if (c->state == C_CLOSING)
		return;
	c->state = C_CLOSING;
	twheel_loop_del(c->s->loop, &c->idle);
	if (!c->inflight) {
		conn_free(c);
		return;
	}
	if (shutdown(c->fd, SHUT_RDWR) != 0) {
		/* not connected any more (reset): cancel whatever is in flight */
		struct io_uring_sqe *sqe = sqe_for(c->s, &c->s->noop_io);
		io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
		c->s->ios++;
	}
}

static void on_idle(struct tw_loop_timer *t)
{
	struct conn *c = tw_container_of(t, struct conn, idle);
	struct server *s = c->s;
	uint64_t now = twheel_loop_clock(s->loop);
	s->idle_closed++;
	c->t_fire = now;
	demo_hist_add(&s->h_fire, (int64_t)(now - t->deadline));
	demo_hist_add(&s->h_wake, (int64_t)(twheel_loop_now(s->loop) - t->deadline));
	conn_close(c);
	c->t_fin = twheel_loop_clock(s->loop);
	demo_hist_add(&s->h_fin, (int64_t)(c->t_fin - t->deadline));
}

/* Heartbeat protocol: consume @n bytes, write the PONGs into c->buf. */
static bool heartbeat_input(struct conn *c, size_t n)
{
	unsigned pings = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = c->buf[i];
		if (ch == '\n') {
			if (c->line_len == DEMO_PING_LEN - 1 && memcmp(c->line, DEMO_PING, DEMO_PING_LEN - 1) == 0)
				pings++;
			c->line_len = 0;
			continue;
		}
		if (c->line_len < DEMO_PING_LEN)
			c->line[c->line_len] = ch;
		if (++c->line_len > DEMO_MAX_LINE)
			return false;
	}
	/* one PONG per PING, and a PING takes as many bytes as a PONG */
	for (unsigned i = 0; i < pings; i++)
		memcpy(c->buf + i * DEMO_PING_LEN, DEMO_PONG, DEMO_PING_LEN);
	c->out_len = (uint16_t)(pings * DEMO_PING_LEN);
	c->out_off = 0;
	return true;
}

static void on_recv(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct conn *c = tw_container_of(io, struct conn, rx);
	struct server *s = c->s;
	c->inflight &= (uint8_t)~RX;
	if (c->state == C_CLOSING) {
		if (!c->inflight)
			conn_free(c);
		return;
	}
	if (cqe->res <= 0) {
		if (cqe->res == 0)
			s->peer_closed++;
		else if (cqe->res == -ECONNRESET)
			s->resets++;
		else
			s->errors++;
		if (cqe->res == 0 && (c->inflight & TX))
			c->state = C_DRAIN; /* half-close: finish the reply, then close */
		else
			conn_close(c);
		return;
	}
	size_t n = (size_t)cqe->res;
	if (!c->seen_data) {
		c->seen_data = true;
		if (n == DEMO_STATS_REQ_LEN && memcmp(c->buf, DEMO_STATS_REQ, n) == 0) {
			c->control = true;
			s->control++;
			s->nconns--;
			twheel_loop_del(s->loop, &c->idle);
			char *line = malloc(DEMO_STATS_MAX);
			if (line)
				c->out = line;
			size_t cap = line ? DEMO_STATS_MAX : sizeof(c->buf);
			int len = stats_line(s, c->out, cap);
			c->out_len = (uint16_t)(len < (int)cap ? len : (int)cap - 1);
			c->out_off = 0;
			c->state = C_DRAIN; /* close once the line went out */
			conn_send(c);
			return;
		}
	}
	/* activity: the connection lives idle_ns more */
	twheel_loop_mod(s->loop, &c->idle, s->idle_ns);
	if (o.heartbeat) {
		if (!heartbeat_input(c, n)) {
			s->protocol_errors++;
			conn_close(c);
			return;
		}
	} else {
		c->out_len = (uint16_t)n;
		c->out_off = 0;
	}
	if (c->out_len)
		conn_send(c);
	else
		conn_recv(c);
}

static void on_send(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct conn *c = tw_container_of(io, struct conn, tx);
	struct server *s = c->s;
	c->inflight &= (uint8_t)~TX;
	if (c->state == C_CLOSING) {
		if (!c->inflight)
			conn_free(c);
		return;
	}
	if (cqe->res < 0) {
		if (cqe->res == -ECONNRESET || cqe->res == -EPIPE)
			s->resets++;
		else
			s->errors++;
		conn_close(c);
		return;
	}
	c->out_off = (uint16_t)(c->out_off + cqe->res);
	if (c->out_off < c->out_len) {
		conn_send(c);
		return;
	}
	if (c->state == C_DRAIN)
		conn_close(c);
	else
		conn_recv(c);
}

static void conn_new(struct server *s, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		s->errors++;
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* how long the connection waited in the accept queue: the kernel stamps
	 * lsndtime when the handshake creates it, and we have sent nothing yet
	 * (jiffies resolution) */
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0) {
		demo_hist_add(&s->h_accept, (int64_t)ti.tcpi_last_data_sent * 1000000);
		c->acc_wait_ms = ti.tcpi_last_data_sent;
	}
	if (s->trace) {
		struct sockaddr_in pa;
		socklen_t pl = sizeof(pa);
		if (getpeername(fd, (struct sockaddr *)&pa, &pl) == 0) {
			c->peer_addr = pa.sin_addr.s_addr;
			c->peer_port = pa.sin_port;
		}
	}
	c->t_accept = twheel_loop_clock(s->loop);
	c->s = s;
	c->fd = fd;
	c->out = c->buf;
	c->rx.func = on_recv;
	c->tx.func = on_send;
	tw_loop_timer_init(&c->idle, on_idle, 0);
	tw_list_add_tail(&c->link, &s->conns);
	s->nconns++;
	s->nlive++;
	s->accepted++;
	twheel_loop_add(s->loop, &c->idle, s->idle_ns);
	conn_recv(c);
}

/* ---- Accepting ----------------------------------------------------------------- */

static void emfile_report(struct server *s, int err)
{
	uint64_t now = twheel_loop_now(s->loop);
	s->emfile++;
	s->emfile_unreported++;
	if (s->last_emfile_msg && now - s->last_emfile_msg < 1000000000ull)
		return;
	fprintf(stderr,
		"idle-server[%u]: accept: %s (%s): %zu connections open, RLIMIT_NOFILE %lu; "
		"%" PRIu64 " accept%s refused since the last report; accepting paused until a connection "
		"closes (raise ulimit -n, or add --workers)\n",
		s->worker, strerror(err), err == EMFILE ? "EMFILE" : err == ENFILE ? "ENFILE" : "no memory",
		s->nconns, (unsigned long)s->nofile, s->emfile_unreported, s->emfile_unreported == 1 ? "" : "s");
	s->emfile_unreported = 0;
	s->last_emfile_msg = now;
}

static void on_accept(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, accept_io);
	bool more = cqe->flags & IORING_CQE_F_MORE;
	if (!more) {
		s->accepting = false;
		s->ios--;
	}
	int res = cqe->res;
	if (res >= 0) {
		if (s->stopping)
			close(res);
		else
			conn_new(s, res);
	} else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM) {
		emfile_report(s, -res);
		if (!s->paused && !s->stopping) {
			s->paused = true;
			twheel_loop_mod(s->loop, &s->backoff, BACKOFF_NS);
		}
		if (more) {
			/* the kernel kept the multishot going: stop it, we are paused */
			struct io_uring_sqe *sqe = sqe_for(s, &s->noop_io);
			io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)&s->accept_io, 0);
			s->ios++;
		}
	} else if (res != -ECANCELED && res != -EINTR && res != -ECONNABORTED && res != -EAGAIN) {
		fprintf(stderr, "idle-server[%u]: accept: %s\n", s->worker, strerror(-res));
		s->errors++;
	}
	if (!s->accepting && !s->paused && !s->stopping)
		accept_arm(s);
	maybe_finish(s);
}

static void accept_arm(struct server *s)
{
	if (s->accepting)
		return;
	struct io_uring_sqe *sqe = sqe_for(s, &s->accept_io);
	io_uring_prep_multishot_accept(sqe, s->lfd, NULL, NULL, SOCK_CLOEXEC);
	s->accepting = true;
	s->ios++;
}

static void on_backoff(struct tw_loop_timer *t)
{
	struct server *s = tw_container_of(t, struct server, backoff);
	if (s->paused && !s->stopping) {
		s->paused = false;
		accept_arm(s);
	}
}

/* ---- Signals and shutdown ------------------------------------------------------ */

static void on_noop(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, noop_io);
	(void)cqe;
	s->ios--;
	maybe_finish(s);
}

static void on_deadline(struct tw_loop_timer *t)
{
	struct server *s = tw_container_of(t, struct server, deadline);
	fprintf(stderr, "idle-server[%u]: shutdown: %u requests still in flight after 2 s; stopping anyway\n",
		s->worker, s->ios);
	twheel_loop_stop(s->loop);
}

static void signal_arm(struct server *s)
{
	struct io_uring_sqe *sqe = sqe_for(s, &s->signal_io);
	io_uring_prep_read(sqe, s->sfd, &s->si, sizeof(s->si), 0);
	s->ios++;
}

static void begin_shutdown(struct server *s)
{
	if (s->stopping)
		return;
	s->stopping = true;
	twheel_loop_del(s->loop, &s->backoff);
	twheel_loop_add(s->loop, &s->deadline, 2000000000ull);
	if (s->accepting) {
		struct io_uring_sqe *sqe = sqe_for(s, &s->noop_io);
		io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)&s->accept_io, 0);
		s->ios++;
	}
	struct tw_list *pos, *n;
	tw_list_for_each_safe(pos, n, &s->conns)
		conn_close(tw_list_entry(pos, struct conn, link));
	maybe_finish(s);
}

static void on_signal(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, signal_io);
	s->ios--;
	if (cqe->res == (int)sizeof(s->si)) {
		if (s->si.ssi_signo == SIGUSR1)
			print_stats(s);
		else
			begin_shutdown(s);
	} else if (cqe->res < 0 && cqe->res != -EINTR && cqe->res != -EAGAIN) {
		if (cqe->res != -ECANCELED)
			fprintf(stderr, "idle-server[%u]: signalfd read: %s\n", s->worker, strerror(-cqe->res));
		begin_shutdown(s);
	}
	if (!s->stopping)
		signal_arm(s);
	maybe_finish(s);
}

/* ---- One worker ------------------------------------------------------------------- */

static int run_worker(int lfd, unsigned worker, int ready_fd)
{
	struct server s = { .lfd = lfd, .worker = worker, .idle_ns = o.idle_ms * 1000000u };
	tw_list_init(&s.conns);
	s.accept_io.func = on_accept;
	s.signal_io.func = on_signal;
	s.noop_io.func = on_noop;
	tw_loop_timer_init(&s.backoff, on_backoff, 0);
	tw_loop_timer_init(&s.deadline, on_deadline, 0);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	s.nofile = rl.rlim_cur;
	if (o.trace) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.%u", o.trace, worker);
		s.trace = fopen(path, "w");
		if (!s.trace) {
			fprintf(stderr, "idle-server[%u]: %s: %s\n", worker, path, strerror(errno));
			return 1;
		}
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	s.sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (s.sfd < 0) {
		perror("idle-server: signalfd");
		return 1;
	}

	struct twheel_loop_config cfg;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = o.tick_us * 1000u;
	cfg.entries = 4096;
	char msg[256];
	int ret = twheel_loop_create(&s.loop, &cfg, msg, sizeof(msg));
	if (ret < 0) {
		fprintf(stderr, "idle-server[%u]: %s\n", worker, msg);
		return ret == -ENOSYS || ret == -EPERM ? DEMO_EXIT_NO_URING : 1;
	}
	signal_arm(&s);
	accept_arm(&s);
	if (ready_fd >= 0) {
		(void)!write(ready_fd, "r", 1);
		close(ready_fd);
	}
	for (;;) {
		ret = twheel_loop_run_once(s.loop, 0);
		if (ret < 0)
			break;
		demo_hist_add(&s.h_busy, (int64_t)(twheel_loop_clock(s.loop) - twheel_loop_now(s.loop)));
		if ((uint64_t)ret > s.max_ran)
			s.max_ran = (uint64_t)ret;
	}
	if (ret == -ESHUTDOWN)
		ret = 0;
	if (ret < 0)
		fprintf(stderr, "idle-server[%u]: loop: %s\n", worker, strerror(-ret));

	/* after a clean shutdown nothing is left; after an error, clean up */
	struct tw_list *pos, *n;
	size_t left_conns = s.nconns, left_timers = conn_timers(&s);
	print_stats(&s);
	twheel_loop_destroy(s.loop, NULL, NULL, NULL);
	tw_list_for_each_safe(pos, n, &s.conns) {
		struct conn *c = tw_list_entry(pos, struct conn, link);
		close(c->fd);
		free(c);
	}
	close(s.sfd);
	close(lfd);
	if (s.trace)
		fclose(s.trace);
	if (left_conns || left_timers) {
		fprintf(stderr, "idle-server[%u]: %zu connections and %zu timers left at exit\n", worker,
			left_conns, left_timers);
		return 1;
	}
	return ret < 0 ? 1 : 0;
}

/* ---- Setup ---------------------------------------------------------------------------- */

static int listen_socket(uint16_t port, bool reuseport)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = o.bind };
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, (int)o.backlog) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static uint16_t bound_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &len);
	return ntohs(a.sin_port);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: idle-server-c [options]\n"
		"  --bind ADDR      listen address, loopback only (127.0.0.1)\n"
		"  --port N         port, 0 = any free one (%d)\n"
		"  --idle-ms MS     close a connection silent this long (%d)\n"
		"  --heartbeat      heartbeat protocol: answer PING lines with PONG, nothing else\n"
		"  --workers K      K processes on SO_REUSEPORT sockets, one loop each (1)\n"
		"  --tick-us US     loop tick (1000)\n"
		"  --backlog N      listen backlog (4096)\n"
		"  --nofile N       set RLIMIT_NOFILE to N (default: as high as allowed)\n"
		"  --quiet          no start-up line\n"
		"  --trace PREFIX   write one line per idle-closed connection to PREFIX.<worker>:\n"
		"                   peer accept_ns accept_queue_ms deadline_ns fire_ns fin_ns freed_ns\n"
		"                   (CLOCK_MONOTONIC; tools/demo/trace_join.py joins it with idle-load --trace)\n"
		"signals: SIGUSR1 prints STATS lines, SIGTERM/SIGINT shut down gracefully\n",
		DEMO_DEFAULT_PORT, DEMO_DEFAULT_IDLE_MS);
}

static void parse_args(int argc, char **argv)
{
	enum { O_BIND = 256, O_PORT, O_IDLE, O_HB, O_WORKERS, O_TICK, O_BACKLOG, O_NOFILE, O_QUIET, O_TRACE, O_HELP };
	static const struct option lo[] = {
		{ "bind", required_argument, 0, O_BIND },
		{ "port", required_argument, 0, O_PORT },
		{ "idle-ms", required_argument, 0, O_IDLE },
		{ "heartbeat", no_argument, 0, O_HB },
		{ "workers", required_argument, 0, O_WORKERS },
		{ "tick-us", required_argument, 0, O_TICK },
		{ "backlog", required_argument, 0, O_BACKLOG },
		{ "nofile", required_argument, 0, O_NOFILE },
		{ "quiet", no_argument, 0, O_QUIET },
		{ "trace", required_argument, 0, O_TRACE },
		{ "help", no_argument, 0, O_HELP },
		{ 0, 0, 0, 0 },
	};
	inet_pton(AF_INET, "127.0.0.1", &o.bind);
	int ch;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		uint64_t v = 0;
		int bad = 0;
		switch (ch) {
		case O_BIND:
			if (inet_pton(AF_INET, optarg, &o.bind) != 1 || (ntohl(o.bind.s_addr) >> 24) != 127) {
				fprintf(stderr, "idle-server: --bind must be an IPv4 loopback address (127.x.y.z)\n");
				exit(2);
			}
			break;
		case O_PORT: bad = demo_parse_u64(optarg, 0, 65535, &v); o.port = (uint16_t)v; break;
		case O_IDLE: bad = demo_parse_u64(optarg, 1, 86400000, &o.idle_ms); break;
		case O_HB: o.heartbeat = true; break;
		case O_WORKERS: bad = demo_parse_u64(optarg, 1, 256, &v); o.workers = (unsigned)v; break;
		case O_TICK: bad = demo_parse_u64(optarg, 1, 1000000, &o.tick_us); break;
		case O_BACKLOG: bad = demo_parse_u64(optarg, 1, 65535, &v); o.backlog = (unsigned)v; break;
		case O_NOFILE: bad = demo_parse_u64(optarg, 16, 1u << 30, &v); o.nofile = (rlim_t)v; break;
		case O_QUIET: o.quiet = true; break;
		case O_TRACE: o.trace = optarg; break;
		case O_HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
		if (bad) {
			fprintf(stderr, "idle-server: bad value for --%s: %s\n", lo[ch - O_BIND].name, optarg);
			exit(2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	rlim_t nofile = demo_raise_nofile(1u << 20);
	if (o.nofile) {
		struct rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = o.nofile < rl.rlim_max ? o.nofile : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		nofile = rl.rlim_cur;
	}

	/* Signals are read from a signalfd by each worker's loop. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);

	/* All listening sockets exist before any worker runs: none is missed. */
	int *lfds = calloc(o.workers, sizeof(*lfds));
	if (!lfds)
		return 1;
	uint16_t port = o.port;
	for (unsigned i = 0; i < o.workers; i++) {
		lfds[i] = listen_socket(port, o.workers > 1);
		if (lfds[i] < 0) {
			fprintf(stderr, "idle-server: listen on %s:%u: %s\n", inet_ntoa(o.bind), port, strerror(-lfds[i]));
			return 1;
		}
		port = bound_port(lfds[i]);
	}
	const char *banner = "idle-server: ready: listening on %s:%u, %u worker%s, idle timeout %" PRIu64
			     " ms, %s mode, tick %" PRIu64 " us, RLIMIT_NOFILE %lu, pid %d\n";

	if (o.workers == 1) {
		if (!o.quiet) {
			printf(banner, inet_ntoa(o.bind), port, 1u, "", o.idle_ms, o.heartbeat ? "heartbeat" : "echo",
			       o.tick_us, (unsigned long)nofile, (int)getpid());
			fflush(stdout);
		}
		/* the banner is printed before the loop exists; connections wait in the backlog */
		int ret = run_worker(lfds[0], 0, -1);
		free(lfds);
		return ret;
	}

	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0) {
		perror("idle-server: pipe");
		return 1;
	}
	pid_t *pids = calloc(o.workers, sizeof(*pids));
	if (!pids)
		return 1;
	for (unsigned i = 0; i < o.workers; i++) {
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("idle-server: fork");
			return 1;
		}
		if (pids[i] == 0) {
			for (unsigned j = 0; j < o.workers; j++)
				if (j != i)
					close(lfds[j]);
			close(ready[0]);
			int lfd = lfds[i];
			free(lfds);
			free(pids);
			_exit(run_worker(lfd, i, ready[1]));
		}
	}
	for (unsigned i = 0; i < o.workers; i++)
		close(lfds[i]);
	free(lfds);
	close(ready[1]);
	unsigned nready = 0;
	char b;
	while (nready < o.workers && read(ready[0], &b, 1) == 1)
		nready++;
	close(ready[0]);
	if (nready == o.workers && !o.quiet) {
		printf(banner, inet_ntoa(o.bind), port, o.workers, "s", o.idle_ms, o.heartbeat ? "heartbeat" : "echo",
		       o.tick_us, (unsigned long)nofile, (int)getpid());
		fflush(stdout);
	}

	/* The parent: forward signals, reap workers. */
	int status = 0;
	unsigned alive = o.workers;
	bool stopping = false;
	while (alive) {
		int sig;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGCHLD) {
			pid_t p;
			int st;
			while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
				for (unsigned i = 0; i < o.workers; i++)
					if (pids[i] == p) {
						pids[i] = 0;
						alive--;
					}
				int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				if (code && !status)
					status = code;
				if (code && !stopping) {
					fprintf(stderr, "idle-server: worker %d exited with %d; stopping the others\n", (int)p, code);
					stopping = true;
					for (unsigned i = 0; i < o.workers; i++)
						if (pids[i])
							kill(pids[i], SIGTERM);
				}
			}
			continue;
		}
		if (sig != SIGUSR1)
			stopping = true;
		for (unsigned i = 0; i < o.workers; i++)
			if (pids[i])
				kill(pids[i], sig);
	}
	free(pids);
	return status;
}
