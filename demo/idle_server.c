/* SPDX-License-Identifier: MIT */
/*
 * idle_server.c - the idle-timeout TCP server on the C API of twheel-uring
 * (<twheel/loop.h>). The C++ build of the same server is idle_server.cpp.
 *
 * Every accepted connection embeds a loop timer; each read that completes
 * a message (any bytes in echo mode, a line with --heartbeat, a request
 * head with --http: a slow client trickling a partial one gets one idle
 * timeout for it) re-arms it with twheel_loop_mod() (kernel mod_timer(): O(1), just a store when the timer
 * is pushed later and more than 256 ticks out), and when it fires the connection was
 * silent for the whole idle timeout and is closed. All I/O goes through the
 * loop's ring: one multishot accept, one recv or send in flight per
 * connection (the echo is sent from the buffer it was read into, and the
 * next recv is posted only once it went out: a client that does not read
 * cannot make the server buffer without bound). --heartbeat answers PING
 * lines with PONGs out of a constant buffer (demo_pongs()); --http answers each complete HTTP/1.1 request
 * head with a 204, or an invalid one with a 400 (demo_http_input() counts
 * them and says which reply each gets and when a request closes the
 * connection, the replies go out of a shared buffer whose Date fields
 * change once a second, but not while a send holds it: demo_http_replies_hold(),
 * the receive buffer is given back at once); after the reply that closes:
 * FIN, then read until the peer closes (C_LINGER).
 *
 * Closing: shutdown(SHUT_RDWR) sends the FIN at once and makes the
 * connection's in-flight request complete; its completion frees the
 * connection. (close() alone would not do: an io_uring request holds a
 * reference to the file, so the socket would stay open.)
 *
 * Out of descriptors: an accept that fails with EMFILE/ENFILE pauses
 * accepting (no spinning on a full backlog), prints one line a second at
 * most, and resumes when a connection closes or after 100 ms. An accept
 * error that every later accept would return too (the listening socket
 * broken, or a kernel without multishot accept) shuts the worker down
 * with one line (demo_accept_failed()), rather than accept again at once.
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
 * Exit: 0; 1 runtime error, leak, or a listening socket that accepts no
 * more; 2 usage; 77 io_uring refused or older than 5.11, or its multishot
 * accept (before 5.19).
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

#include <liburing.h>
#include <twheel/loop.h>

#include "demo_common.h"
#include "demo_server.h"

#define CONN_BUF 512
_Static_assert(CONN_BUF / DEMO_PING_LEN + 1 <= DEMO_HEARTBEAT_MAX_BATCH, "the PINGs one read completes");
_Static_assert(DEMO_HTTP_BATCH_COVERS(CONN_BUF), "the HTTP heads one read completes");
#define BACKOFF_NS (100 * 1000000ull)
#define BUF_GROUP 0 /* the provided-buffer ring's group (--ring-bufs buffers) */


struct server {
	struct twheel_loop *loop;
	int lfd, sfd;
	unsigned worker;
	struct tw_loop_io accept_io, signal_io, noop_io;
	struct tw_loop_timer backoff;  /* resume accepting after EMFILE */
	struct tw_loop_timer deadline; /* bound on a graceful shutdown */
	struct signalfd_siginfo si;
	struct tw_list conns;   /* every connection but those on starved */
	size_t nconns;       /* data connections (control ones excluded) */
	size_t nlive;        /* connection objects, control ones included */
	unsigned ios;        /* server-level requests in flight */
	bool accepting;      /* a multishot accept is in flight */
	bool signal_reading; /* a read of the signalfd is in flight */
	bool paused;         /* accepting paused for lack of descriptors */
	bool stopping;
	int status;          /* the exit status a failure set (the listener's), 0 */
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
	/* receive buffers: a provided-buffer ring, or (NULL) one per connection */
	struct io_uring_buf_ring *br;
	char *bufs;
	struct tw_list starved;    /* connections waiting for a buffer (ENOBUFS), first
				    * come first served: their link moves here from conns */
	unsigned held;             /* provided buffers held by connections */
	unsigned waking;           /* receives of woken connections in flight */
	uint64_t nobufs;
	uint64_t deferred;         /* idle closes put off: data waited for a buffer */
};

enum { RX = 1, TX = 2 };
/* C_LINGER: HTTP, the last reply goes out, then FIN and read until the peer closes */
enum cstate { C_OPEN, C_DRAIN, C_LINGER, C_CLOSING };

/*
 * A connection: 200 bytes on LP64 and no buffer while it is idle. Its
 * receive takes a buffer from the worker's provided-buffer ring only when
 * data arrives (IOSQE_BUFFER_SELECT), and the echo goes out of that buffer,
 * which returns to the ring once sent. Where the kernel has no
 * provided-buffer rings (before 5.19), each connection gets its own
 * CONN_BUF bytes (@buf). A receive waits for data before it takes a
 * buffer (IORING_RECVSEND_POLL_FIRST), so one that finds the ring empty
 * (ENOBUFS) has data waiting: it waits on the starved list, first come
 * first served, and the next buffer given back is handed to the list's
 * head, whose receive reads into it (buf_put()). Should the ring hold
 * buffers while connections wait (given back before a refusal was
 * seen), as many are woken as buffers are free for them (neither held nor
 * claimed by a receive woken before), and one whose buffer another
 * receive took first waits at the head again. (Issued at once, a receive fails ENOBUFS on an empty ring with no
 * data there: idle connections would queue for buffers, and each buffer
 * given back to one would lie unused while connections with data waited.)
 * A client that never reads its echo does not hold the buffer: what its
 * socket cannot take at once moves to a CONN_BUF of its own (@buf, freed
 * once sent: spill()), and the ring's goes back (else one such client
 * per buffer left every other connection unread, closed as idle).
 */
/* --trace: what a traced connection's line holds besides the record */
struct conn_trace {
	uint64_t t_accept;    /* accept completion handled (loop clock) */
	uint64_t t_fin;       /* when shutdown() returned after the idle timer fired */
	uint64_t t_due;       /* a close put off (idle_due): the deadline it was due at, */
	uint64_t t_due_fire;  /* ...and when its timer fired then; 0 if none */
	uint32_t acc_wait_ms; /* time spent in the accept queue (TCP_INFO) */
	union demo_sockaddr peer; /* either family (an IPv4 field read an IPv6 peer as 0) */
};

struct conn {
	struct tw_loop_timer idle;
	struct tw_loop_io rx, tx;
	struct tw_list link; /* on the server's conns, or its starved list */
	struct server *s;
	char *out;           /* what is being sent: the data read, or a STATS line */
	char *buf;           /* no provided buffers: this connection's own */
	union {
		uint64_t t_fire; /* !idle_due: when it was closed as idle (loop clock), 0 if not */
		uint64_t t_due;  /* idle_due: the deadline its close was put off from */
	};
	struct conn_trace *tr; /* --trace only (NULL without, or if out of memory) */
	int fd;
	int16_t bid;         /* the provided buffer held, -1 none */
	union {
		struct { /* heartbeat: the current line's length and first bytes */
			uint16_t line_len;
			char line[DEMO_PING_LEN];
		};
		struct demo_http http; /* HTTP: the request head being read */
	};
	uint16_t out_len, out_off;
	uint8_t inflight;    /* RX | TX */
	uint8_t state;
	bool seen_data : 1;  /* the first read decides: STATS or data */
	bool control : 1;
	bool out_heap : 1;   /* out was malloc'd (a STATS line, or a spilled HTTP reply) */
	bool starving : 1;   /* on the starved list */
	bool woken : 1;      /* its receive was woken for a buffer (counted in waking) */
	bool replies : 1;    /* HTTP: a send goes out of a copy of the replies, held: */
	bool replies_copy : 1; /* ...this one */
	bool idle_due : 1;   /* its timer fired while its data waited for a buffer */
	bool partial : 1;    /* its last read completed no message */
	unsigned due_reads : 2; /* reads since idle_due that completed nothing (DUE_READS) */
};
_Static_assert(sizeof(struct conn) <= 256, "an idle connection must cost at most 256 bytes");

static void conn_close(struct conn *c);
static void conn_recv(struct conn *c);

/* HTTP: the replies' copy @c held is sent, or never will be. */
static void replies_put(struct conn *c)
{
	if (c->replies) {
		demo_http_replies_put(c->replies_copy);
		c->replies = false;
	}
}

/* ---- Receive buffers ------------------------------------------------------------ */

/* The bytes @c received last: its provided buffer, or its own. */
static char *conn_data(const struct conn *c)
{
	return c->bid >= 0 ? c->s->bufs + (size_t)c->bid * CONN_BUF : c->buf;
}

static void starved_remove(struct server *s, struct conn *c);

/*
 * Wake the connections waiting for a buffer, first come first served,
 * one for each buffer free for them: held by no connection and claimed by
 * no receive woken before (which completes with it, or puts it back:
 * on_recv()). Woken all at once, every waiting receive but one found the
 * ring empty again and retried at once, each time a buffer came back:
 * millions of refusals a second, and the connections that came later
 * took their turns (closed as idle, their requests unread).
 */
static void starved_wake(struct server *s)
{
	while (!tw_list_empty(&s->starved) && s->held + s->waking < demo_opts.ring_bufs) {
		struct conn *w = tw_list_entry(s->starved.next, struct conn, link);
		starved_remove(s, w);
		w->woken = true;
		s->waking++;
		conn_recv(w);
	}
}

/*
 * @c gives its provided buffer back. A connection waiting for one gets it
 * directly, the one waiting longest, and its receive reads into it (it
 * has data waiting: its receive failed ENOBUFS after its data came); only
 * when none waits does the buffer go back to the ring. Put back into the
 * ring for a waiting receive to take, the buffer went to whichever
 * receive found data first: pipelining clients, their receives issued
 * again with data waiting, took it turn after turn ahead of the one woken
 * for it, and other connections waited past their idle timeout.
 */
static void buf_put(struct server *s, struct conn *c)
{
	char *data = conn_data(c);
	int16_t bid = c->bid;
	c->bid = -1;
	if (!tw_list_empty(&s->starved)) {
		struct conn *w = tw_list_entry(s->starved.next, struct conn, link);
		starved_remove(s, w);
		w->bid = bid; /* still held: s->held stays */
		conn_recv(w);
		return;
	}
	io_uring_buf_ring_add(s->br, data, CONN_BUF, (unsigned short)bid,
			      io_uring_buf_ring_mask(demo_opts.ring_bufs), 0);
	io_uring_buf_ring_advance(s->br, 1);
	s->held--;
}

/*
 * @c waits for a buffer: at the starved list's tail, or at its head
 * (@first: its turn came, a buffer was taken first). Its link moves from
 * the server's conns, so that leaving the list is O(1) wherever it is: a
 * peer that picks which waiting connections close (their idle timers, in
 * an order it chose) must not make each close walk the list.
 */
static void starved_add(struct server *s, struct conn *c, bool first)
{
	tw_list_del(&c->link);
	if (first)
		tw_list_add(&c->link, &s->starved);
	else
		tw_list_add_tail(&c->link, &s->starved);
	c->starving = true;
}

/* @c leaves the starved list, back on the server's conns. O(1). */
static void starved_remove(struct server *s, struct conn *c)
{
	tw_list_del(&c->link);
	tw_list_add_tail(&c->link, &s->conns);
	c->starving = false;
}

/* Every connection waiting for a buffer back on the server's conns (shutdown, exit). */
static void starved_clear(struct server *s)
{
	while (!tw_list_empty(&s->starved))
		starved_remove(s, tw_list_entry(s->starved.next, struct conn, link));
}

/*
 * The worker's provided-buffer ring (Linux 5.19): --ring-bufs buffers of
 * CONN_BUF bytes that receives draw from. Where the kernel refuses it, say
 * so once and leave s->br NULL: each connection then has a buffer of its own.
 */
static void bufring_open(struct server *s)
{
	const unsigned n = demo_opts.ring_bufs;
	void *mem = NULL;
	int ret = -ENOMEM;
	if (!n)
		return; /* --ring-bufs 0 */
	if (posix_memalign(&mem, 4096, n * sizeof(struct io_uring_buf)) == 0 &&
	    posix_memalign((void **)&s->bufs, 64, (size_t)n * CONN_BUF) == 0) {
		struct io_uring_buf_reg reg = { .ring_addr = (uintptr_t)mem, .ring_entries = n,
						.bgid = BUF_GROUP };
		ret = io_uring_register_buf_ring(twheel_loop_ring(s->loop), &reg, 0);
	}
	if (ret < 0) {
		fprintf(stderr, "idle-server[%u]: no provided-buffer ring (%s; Linux 5.19 has them): "
			"a %d-byte buffer per connection instead\n", s->worker, strerror(-ret), CONN_BUF);
		free(mem);
		free(s->bufs);
		s->bufs = NULL;
		return;
	}
	s->br = mem;
	io_uring_buf_ring_init(s->br);
	for (unsigned i = 0; i < n; i++)
		io_uring_buf_ring_add(s->br, s->bufs + (size_t)i * CONN_BUF, CONN_BUF, (unsigned short)i,
				      io_uring_buf_ring_mask(demo_opts.ring_bufs), (int)i);
	io_uring_buf_ring_advance(s->br, (int)n);
}

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

/* Cancel the request of @io (which the loop keys by its address). */
static void cancel_io(struct server *s, struct tw_loop_io *io)
{
	struct io_uring_sqe *sqe = sqe_for(s, &s->noop_io);
	io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)io, 0);
	s->ios++;
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
			" conn_bytes=%zu bufring=%d nobufs=%" PRIu64 " deferred=%" PRIu64 " rss_kb=%" PRIu64
			" utime_us=%" PRIu64 " stime_us=%" PRIu64 "\n",
			s->worker, demo_opts.workers, (int)getpid(), s->nconns, conn_timers(s), s->accepted,
			s->idle_closed, s->peer_closed, s->resets, s->errors, s->protocol_errors, s->emfile,
			s->control, (unsigned long)s->nofile, sizeof(struct conn), s->br != NULL, s->nobufs, s->deferred,
			demo_rss_kb(),
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
static void begin_shutdown(struct server *s);

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
	if (!c->idle_due && c->t_fire) {
		uint64_t now = twheel_loop_clock(s->loop);
		demo_hist_add(&s->h_close, (int64_t)(now - c->t_fire));
		if (c->tr) { /* a close put off: the deadline and the timer's run that put it off */
			char peer[DEMO_SOCKADDR_TEXT_LEN];
			bool due = c->tr->t_due != 0;
			fprintf(s->trace, "%s %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				demo_sockaddr_text(&c->tr->peer, peer), c->tr->t_accept, c->tr->acc_wait_ms,
				due ? c->tr->t_due : c->idle.deadline, due ? c->tr->t_due_fire : c->t_fire,
				c->tr->t_fin, now);
		}
	}
	free(c->tr);
	if (c->out_heap)
		free(c->out);
	free(c->buf);
	replies_put(c);
	if (c->starving)
		starved_remove(s, c);
	if (c->bid >= 0)
		buf_put(s, c);
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

/*
 * Post @c's receive. One handed a buffer (buf_put()) or woken for one
 * (starved_wake()) does not wait (MSG_DONTWAIT): its ENOBUFS said data
 * was there, but a lone urgent byte (MSG_OOB, which a read skips) or a
 * spurious wake-up says so too, and a receive that then waited held the
 * ring's buffer (or its claim on one) until the idle timer closed it,
 * every other connection's data unread meanwhile; it completes -EAGAIN
 * instead, and the connection waits for data as any other (recv_done()).
 */
static void conn_recv(struct conn *c)
{
	struct io_uring_sqe *sqe = sqe_for(c->s, &c->rx);
	if (c->bid >= 0) { /* a provided buffer handed to it (buf_put()) */
		io_uring_prep_recv(sqe, c->fd, conn_data(c), CONN_BUF, MSG_DONTWAIT);
	} else if (c->s->br) {
		io_uring_prep_recv(sqe, c->fd, NULL, CONN_BUF, c->woken ? MSG_DONTWAIT : 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = BUF_GROUP;
		/* wait for data before taking a buffer: without, a receive
		 * issued while the ring is empty fails ENOBUFS at once, data
		 * or not, and an idle connection joins the starved list */
		if (!c->woken)
			sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
	} else {
		io_uring_prep_recv(sqe, c->fd, c->buf, CONN_BUF, 0);
	}
	c->inflight |= RX;
}

/* Is what goes out of @c in the provided buffer it holds? */
static bool out_in_ring(const struct conn *c)
{
	return c->bid >= 0 && c->out == conn_data(c);
}

/*
 * Send out[out_off, out_len). Out of a provided buffer, or out of the
 * shared HTTP replies, the first send does not wait (MSG_DONTWAIT): what
 * the socket cannot take at once is moved to a buffer of the
 * connection's own (spill(), replies_spill()), for a peer that does not
 * read must not hold one of the ring's buffers, which every connection
 * draws from, nor a copy of the replies, whose Date could not move on;
 * @wait: the send waits (what a first one did not place).
 */
static void conn_send(struct conn *c, bool wait)
{
	struct io_uring_sqe *sqe = sqe_for(c->s, &c->tx);
	int flags = MSG_NOSIGNAL | (!wait && (out_in_ring(c) || c->replies) ? MSG_DONTWAIT : 0);
	io_uring_prep_send(sqe, c->fd, c->out + c->out_off, (size_t)(c->out_len - c->out_off), flags);
	c->inflight |= TX;
}

/*
 * The socket did not take all of what goes out of @c's provided buffer:
 * move the rest to a CONN_BUF of its own (freed once sent) and give the
 * provided buffer back. Out of memory, @c keeps it.
 */
static void spill(struct conn *c)
{
	if (!c->buf && !(c->buf = malloc(CONN_BUF)))
		return;
	memcpy(c->buf + c->out_off, c->out + c->out_off, (size_t)(c->out_len - c->out_off));
	c->out = c->buf;
	buf_put(c->s, c);
}

/*
 * HTTP: the socket did not take all of the replies: move the rest to
 * the heap (out_heap: freed once sent, or with the connection) and let
 * go of the replies' copy. Out of memory, @c keeps it.
 */
static void replies_spill(struct conn *c)
{
	size_t n = (size_t)(c->out_len - c->out_off);
	char *p = malloc(n);
	if (!p)
		return;
	memcpy(p, c->out + c->out_off, n);
	replies_put(c);
	c->out = p;
	c->out_heap = true;
	c->out_off = 0;
	c->out_len = (uint16_t)n;
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

/*
 * A connection whose idle timer fired while its data waited reads on at
 * most this many times while its reads complete no message: enough for
 * the rest of the longest head (DEMO_HTTP_MAX_HEAD) at CONN_BUF a read.
 */
#define DUE_READS (DEMO_HTTP_MAX_HEAD / CONN_BUF + 1)
_Static_assert(DUE_READS < 4, "due_reads holds DUE_READS");

/*
 * Bytes wait in @c's socket, unread (one system call): a byte a read
 * returns, peeked. Not FIONREAD: with an urgent byte (MSG_OOB) pending it
 * counts the bytes before that byte only, 0 once a read stopped at it,
 * and a deferred close was made with the rest of a head unread.
 */
static bool more_waits(const struct conn *c)
{
	char b;
	return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/*
 * Has @c data waiting that its receive has not read yet? Its receive
 * failed ENOBUFS, which it does only once its socket is readable
 * (POLL_FIRST): it waits on the starved list, or was woken, or was
 * handed a buffer. Or its last read completed no message and the rest
 * waits behind it (a receive reads CONN_BUF at most, and its buffer may
 * have gone to a waiting connection before the next read).
 */
static bool data_waits(const struct conn *c)
{
	if (c->starving)
		return true;
	if (!(c->inflight & RX))
		return false;
	return c->woken || c->bid >= 0 || (c->partial && more_waits(c));
}

/*
 * Closes @c as idle: from its timer's callback, @dl the deadline it ran
 * for, or a close put off (idle_due) from the read it waited for, or from
 * the timer's run one timeout later. fin_* measures the FIN from the
 * connection's deadline: for a close put off, the one it was put off from.
 */
static void idle_close(struct conn *c, uint64_t dl)
{
	struct server *s = c->s;
	bool freed_now = !c->inflight; /* an open connection always has a request in flight */
	if (c->idle_due)
		dl = c->t_due;
	c->idle_due = false;
	s->idle_closed++;
	c->t_fire = twheel_loop_clock(s->loop);
	conn_close(c);
	uint64_t fin = twheel_loop_clock(s->loop);
	if (!freed_now && c->tr)
		c->tr->t_fin = fin;
	demo_hist_add(&s->h_fin, (int64_t)(fin - dl));
}

/*
 * The idle timer fired: silent for a whole timeout, close. Unless its
 * data waits for a buffer (the server was behind, not the peer: that data
 * may have come long before the deadline, the server stopped or short of
 * CPU): then the close waits for the read (idle_due), which re-arms the
 * timer if it completes a message, else closes (recv_done()); for one
 * more timeout at most, the timer armed again: a receive that never
 * completes kept the connection for ever (a lone urgent byte, MSG_OOB,
 * woke a receive that then found nothing to read and waited; a handed or
 * woken one no longer waits: conn_recv()), and a connection may wait on
 * the starved list while others hold every buffer.
 */
static void on_idle(struct tw_loop_timer *t)
{
	struct conn *c = tw_container_of(t, struct conn, idle);
	struct server *s = c->s;
	uint64_t now = twheel_loop_clock(s->loop), dl = t->deadline;
	demo_hist_add(&s->h_fire, (int64_t)(now - dl));
	demo_hist_add(&s->h_wake, (int64_t)(twheel_loop_now(s->loop) - dl));
	if (c->state == C_OPEN && !c->idle_due && data_waits(c)) {
		s->deferred++;
		c->idle_due = true;
		c->t_due = dl;
		if (c->tr) {
			c->tr->t_due = dl;
			c->tr->t_due_fire = now;
		}
		twheel_loop_mod(s->loop, &c->idle, s->idle_ns);
		return;
	}
	idle_close(c, dl);
}

/*
 * Heartbeat protocol: consume @n bytes; a PONG goes out for each PING they
 * complete, out of demo_pongs() (not in place: a PING begun in the last
 * read takes fewer bytes of this one than its PONG). Returns whether they
 * completed a line, or -1 (a line too long).
 */
static int heartbeat_input(struct conn *c, size_t n)
{
	bool line = memchr(conn_data(c), '\n', n) != NULL;
	int pings = demo_heartbeat_input(conn_data(c), n, c->line, &c->line_len);
	if (pings < 0)
		return -1;
	if (c->bid >= 0)
		buf_put(c->s, c); /* the PONGs do not go out of it */
	c->out = (char *)demo_pongs();
	c->out_len = (uint16_t)(pings * DEMO_PING_LEN);
	c->out_off = 0;
	return line;
}

/*
 * HTTP mode: consume @n bytes; a reply goes out for each request head they
 * complete. After one that closes the connection: C_LINGER. Returns the
 * heads completed, or -1 (a protocol error).
 */
static int http_input(struct conn *c, size_t n)
{
	int heads = demo_http_input(conn_data(c), n, &c->http);
	if (heads < 0)
		return -1;
	if (c->bid >= 0)
		buf_put(c->s, c); /* the replies do not go out of it */
	if (heads > 0) { /* held until sent (replies_put()) */
		unsigned copy = demo_http_replies_hold();
		c->out = (char *)demo_http_replies(copy);
		c->replies = true;
		c->replies_copy = copy != 0;
	}
	demo_http_reply_span(heads, &c->http, &c->out_off, &c->out_len);
	if (c->http.close) {
		c->state = C_LINGER;
		if (c->http.reply >= DEMO_HTTP_BAD_REQUEST)
			c->s->protocol_errors++; /* refused: a 4xx or 5xx reply, then the close */
	}
	return heads;
}

/* The first bytes were "STATS\n": answer with the STATS line, then close. */
static void control_reply(struct conn *c)
{
	struct server *s = c->s;
	c->control = true;
	s->control++;
	s->nconns--;
	twheel_loop_del(s->loop, &c->idle);
	char *line = malloc(DEMO_STATS_MAX);
	size_t cap = DEMO_STATS_MAX;
	if (line) {
		c->out = line;
		c->out_heap = true;
		if (c->bid >= 0)
			buf_put(s, c);
	} else {
		cap = CONN_BUF; /* into the buffer the request came in */
	}
	int len = stats_line(s, c->out, cap);
	c->out_len = (uint16_t)(len < (int)cap ? len : (int)cap - 1);
	c->out_off = 0;
	c->state = C_DRAIN; /* close once the line went out */
	conn_send(c, false);
}

/*
 * A receive that brought no data: end of stream, an error, or no buffer
 * left (@woken: it was woken for one, and another receive took it first).
 */
static void recv_none(struct conn *c, int res, bool woken)
{
	struct server *s = c->s;
	if (res == -ENOBUFS && s->br) {
		s->nobufs++;
		starved_add(s, c, woken); /* woken again in its turn (on_recv(), buf_put()) */
		return;
	}
	if (res == 0)
		s->peer_closed++;
	else if (res == -ECONNRESET)
		s->resets++;
	else
		s->errors++;
	if (res == 0 && (c->inflight & TX))
		c->state = C_DRAIN; /* half-close: finish the reply, then close */
	else
		conn_close(c);
}

static void recv_done(struct conn *c, const struct io_uring_cqe *cqe, bool woken);

/*
 * A receive completed. Then the connections waiting for a buffer are
 * woken for those free: a woken receive that ends without taking one (the
 * end of the stream, a reset, a cancel: the kernel puts the buffer back)
 * leaves it to the next (else that one waited, its data unread, until
 * closed as idle).
 */
static void on_recv(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct conn *c = tw_container_of(io, struct conn, rx);
	struct server *s = c->s;
	bool woken = c->woken;
	c->inflight &= (uint8_t)~RX;
	if (woken) {
		c->woken = false;
		s->waking--;
	}
	if (cqe->flags & IORING_CQE_F_BUFFER) {
		c->bid = (int16_t)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
		s->held++;
	}
	recv_done(c, cqe, woken); /* may free c */
	if (s->br)
		starved_wake(s);
}

static void recv_done(struct conn *c, const struct io_uring_cqe *cqe, bool woken)
{
	struct server *s = c->s;
	if (cqe->res == -EAGAIN && c->state != C_CLOSING) {
		/* handed or woken (MSG_DONTWAIT: conn_recv()), it found nothing
		 * to read: no data waits, the buffer goes on to the next */
		if (c->bid >= 0)
			buf_put(s, c);
		if (c->idle_due) { /* its timer fired: silent since its deadline */
			idle_close(c, c->t_due); /* no run of the timer: no fire_* */
			return;
		}
		conn_recv(c);
		return;
	}
	if (c->state == C_CLOSING || cqe->res <= 0) {
		if (c->bid >= 0)
			buf_put(s, c);
		if (c->state != C_CLOSING)
			recv_none(c, cqe->res, woken);
		else if (!c->inflight)
			conn_free(c);
		return;
	}
	if (c->state == C_LINGER) { /* closing: what the peer still sends is dropped */
		if (c->bid >= 0)
			buf_put(s, c);
		conn_recv(c);
		return;
	}
	size_t n = (size_t)cqe->res;
	c->out = conn_data(c);
	if (!c->seen_data) {
		c->seen_data = true;
		if (n == DEMO_STATS_REQ_LEN && memcmp(c->out, DEMO_STATS_REQ, n) == 0) {
			control_reply(c);
			return;
		}
	}
	int done = 1; /* echo: any bytes are a message */
	if (demo_opts.heartbeat || demo_opts.http) {
		done = demo_opts.http ? http_input(c, n) : heartbeat_input(c, n);
		if (done < 0) {
			s->protocol_errors++;
			conn_close(c);
			return;
		}
	} else {
		c->out_len = (uint16_t)n;
		c->out_off = 0;
	}
	/* activity, a complete message (a slow partial one is not): the connection lives idle_ns more */
	c->partial = !done;
	if (done) {
		twheel_loop_mod(s->loop, &c->idle, s->idle_ns);
		c->idle_due = false;
		c->t_fire = 0; /* was t_due */
		c->due_reads = 0;
		if (c->tr)
			c->tr->t_due = c->tr->t_due_fire = 0;
	} else if (c->idle_due) {
		/* its timer fired while this waited, and it completes nothing:
		 * read on for the rest of a message, DUE_READS reads at most
		 * (bytes that complete none, empty lines before a request line,
		 * sent as fast as they are read, kept it open for ever) */
		if (c->due_reads == DUE_READS || !more_waits(c)) {
			idle_close(c, c->t_due);
			return;
		}
		c->due_reads++;
	}
	if (c->out_len) {
		conn_send(c, false);
		return;
	}
	if (c->bid >= 0)
		buf_put(s, c);
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
	int res = cqe->res == -EAGAIN ? 0 : cqe->res; /* MSG_DONTWAIT: nothing taken */
	if (res < 0) {
		if (res == -ECONNRESET || res == -EPIPE)
			s->resets++;
		else
			s->errors++;
		conn_close(c);
		return;
	}
	c->out_off = (uint16_t)(c->out_off + res);
	if (c->out_off < c->out_len) {
		if (out_in_ring(c))
			spill(c); /* the peer is slow to read: wait without the ring's buffer */
		else if (c->replies)
			replies_spill(c); /* ...or without the replies' copy */
		conn_send(c, true);
		return;
	}
	if (c->out_heap && !c->control) { /* a spilled reply, sent */
		free(c->out);
		c->out_heap = false;
	}
	if (c->bid >= 0)
		buf_put(s, c); /* the echo went out of it */
	replies_put(c);
	if (s->br && c->buf && c->out == c->buf) {
		free(c->buf); /* spilled, and sent */
		c->buf = NULL;
	}
	if (c->state == C_DRAIN) {
		conn_close(c);
		return;
	}
	/*
	 * C_LINGER: the reply that closes went out; the FIN follows it, and
	 * the connection reads until the peer closes (or its idle timer
	 * fires): closed now with unread bytes, the kernel would send an RST,
	 * which can destroy the reply before the client read it (RFC 9112 9.6).
	 */
	if (c->state == C_LINGER)
		shutdown(c->fd, SHUT_WR);
	conn_recv(c);
}

static void conn_new(struct server *s, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (c && !s->br && !(c->buf = malloc(CONN_BUF))) {
		free(c);
		c = NULL;
	}
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
	bool ti_ok = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0;
	if (ti_ok)
		demo_hist_add(&s->h_accept, (int64_t)ti.tcpi_last_data_sent * 1000000);
	if (s->trace && (c->tr = calloc(1, sizeof(*c->tr)))) {
		socklen_t pl = sizeof(c->tr->peer);
		if (getpeername(fd, &c->tr->peer.sa, &pl) != 0)
			c->tr->peer.sa.sa_family = AF_UNSPEC;
		c->tr->acc_wait_ms = ti_ok ? ti.tcpi_last_data_sent : 0;
		c->tr->t_accept = twheel_loop_clock(s->loop);
	}
	c->s = s;
	c->fd = fd;
	c->bid = -1;
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
	} else {
		switch (demo_accept_failed(s->lfd, -res, s->worker, &s->status)) {
		case DEMO_ACCEPT_PAUSE:
			emfile_report(s, -res);
			if (!s->paused && !s->stopping) {
				s->paused = true;
				twheel_loop_mod(s->loop, &s->backoff, BACKOFF_NS);
			}
			if (more) /* the kernel kept the multishot going: stop it, we are paused */
				cancel_io(s, &s->accept_io);
			break;
		case DEMO_ACCEPT_STOP: /* every accept would fail so: no spinning on it */
			begin_shutdown(s);
			break;
		case DEMO_ACCEPT_SKIP:
			s->errors++;
			break;
		case DEMO_ACCEPT_AGAIN:
			break;
		}
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
	s->signal_reading = true;
}

static void begin_shutdown(struct server *s)
{
	if (s->stopping)
		return;
	s->stopping = true;
	twheel_loop_del(s->loop, &s->backoff);
	twheel_loop_add(s->loop, &s->deadline, 2000000000ull);
	if (s->accepting)
		cancel_io(s, &s->accept_io);
	if (s->signal_reading) /* not stopped by a signal (the listener failed) */
		cancel_io(s, &s->signal_io);
	struct tw_list *pos, *n;
	starved_clear(s);
	tw_list_for_each_safe(pos, n, &s->conns)
		conn_close(tw_list_entry(pos, struct conn, link));
	maybe_finish(s);
}

static void on_signal(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, signal_io);
	s->ios--;
	s->signal_reading = false;
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

/*
 * The server's callbacks, timers and descriptor limit; with --trace, its
 * file PREFIX.<worker>. Returns 0, or 1 if that cannot be opened (message
 * printed).
 */
static int server_init(struct server *s)
{
	tw_list_init(&s->conns);
	tw_list_init(&s->starved);
	s->accept_io.func = on_accept;
	s->signal_io.func = on_signal;
	s->noop_io.func = on_noop;
	tw_loop_timer_init(&s->backoff, on_backoff, 0);
	tw_loop_timer_init(&s->deadline, on_deadline, 0);
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	s->nofile = rl.rlim_cur;
	if (demo_opts.trace) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.%u", demo_opts.trace, s->worker);
		s->trace = fopen(path, "w");
		if (!s->trace) {
			fprintf(stderr, "idle-server[%u]: %s: %s\n", s->worker, path, strerror(errno));
			return 1;
		}
	}
	return 0;
}

/* The signalfd the loop reads SIGTERM, SIGINT and SIGUSR1 from (demo_signal_set()). Returns 0, or 1 (message printed). */
static int signalfd_open(struct server *s)
{
	sigset_t set;
	demo_signal_set(&set);
	s->sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (s->sfd < 0) {
		perror("idle-server: signalfd");
		return 1;
	}
	return 0;
}

/*
 * The worker's loop, on io_uring only. Returns 0, or the exit status
 * (message printed): DEMO_EXIT_NO_URING when io_uring is refused or too
 * old, else 1.
 */
static int loop_open(struct server *s)
{
	struct twheel_loop_config cfg;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = demo_opts.tick_us * 1000u;
	cfg.entries = 4096;
	cfg.flags = TW_LOOP_URING_ONLY; /* the server's I/O needs the ring */
	char msg[256];
	int ret = twheel_loop_create(&s->loop, &cfg, msg, sizeof(msg));
	if (ret < 0) {
		fprintf(stderr, "idle-server[%u]: %s\n", s->worker, msg);
		return ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP ? DEMO_EXIT_NO_URING : 1;
	}
	return 0;
}

/*
 * Run the loop until it stops, timing each iteration. Returns 0 after a
 * stop, or the loop's negative errno (message printed).
 */
static int serve(struct server *s)
{
	int ret;
	for (;;) {
		ret = twheel_loop_run_once(s->loop, 0);
		if (ret < 0)
			break;
		demo_hist_add(&s->h_busy, (int64_t)(twheel_loop_clock(s->loop) - twheel_loop_now(s->loop)));
		if ((uint64_t)ret > s->max_ran)
			s->max_ran = (uint64_t)ret;
	}
	if (ret == -ESHUTDOWN)
		ret = 0;
	if (ret < 0)
		fprintf(stderr, "idle-server[%u]: loop: %s\n", s->worker, strerror(-ret));
	return ret;
}

/*
 * Print the final STATS line and free everything; after a clean shutdown
 * nothing is left, after an error this cleans up. Returns the exit status:
 * 1 if connections or timers were left (message printed) or @ret < 0,
 * else the status a failure of the listener set (demo_accept_failed()).
 */
static int server_exit(struct server *s, int ret)
{
	struct tw_list *pos, *n;
	size_t left_conns = s->nconns, left_timers = conn_timers(s);
	print_stats(s);
	twheel_loop_destroy(s->loop, NULL, NULL, NULL);
	starved_clear(s);
	tw_list_for_each_safe(pos, n, &s->conns) {
		struct conn *c = tw_list_entry(pos, struct conn, link);
		close(c->fd);
		if (c->out_heap)
			free(c->out);
		free(c->buf);
		free(c->tr);
		free(c);
	}
	close(s->sfd);
	close(s->lfd);
	free(s->br);
	free(s->bufs);
	if (s->trace)
		fclose(s->trace);
	if (left_conns || left_timers) {
		fprintf(stderr, "idle-server[%u]: %zu connections and %zu timers left at exit\n", s->worker,
			left_conns, left_timers);
		return 1;
	}
	return ret < 0 ? 1 : s->status;
}

static int run_worker(int lfd, unsigned worker, int ready_fd)
{
	struct server s = { .lfd = lfd, .worker = worker, .idle_ns = demo_opts.idle_ms * 1000000u };
	int ret = server_init(&s);
	if (!ret)
		ret = signalfd_open(&s);
	if (!ret)
		ret = loop_open(&s);
	if (ret)
		return ret;
	bufring_open(&s);
	signal_arm(&s);
	accept_arm(&s);
	/* one iteration submits the accept: a kernel that refuses it says so
	 * at once (demo_accept_failed(): the server shuts down), before "ready" */
	if (twheel_loop_run_once(s.loop, TW_LOOP_NOWAIT) >= 0 && !s.stopping)
		demo_worker_ready(ready_fd);
	return server_exit(&s, serve(&s));
}


int main(int argc, char **argv)
{
	return demo_server_main(argc, argv, "idle-server-c", run_worker);
}
