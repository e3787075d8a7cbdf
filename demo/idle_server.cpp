// SPDX-License-Identifier: MIT
//
// idle_server.cpp - the idle-timeout TCP server on twheel++ (<twheel/loop.hpp>),
// the showcase for C++ users. Same protocol, flags, STATS line and exit
// codes as the C variant idle_server.c (scripts/demo.sh runs either).
//
// Every connection is a tw::Hook<tw::Loop, Conn>: its idle timer is part of
// the connection record (nothing allocated per timer), armed when the
// connection is accepted, re-armed with arm_in() on every read that
// completes a message (as in idle_server.c; O(1), kernel mod_timer()); when it fires (Conn::on_timer()) the connection was
// silent for the whole idle timeout and is closed. Destroying the
// connection cancels it (RAII): no timer can outlive its connection.
//
// I/O goes through the loop's ring. The server's own requests (the
// multishot accept, the signalfd read, cancellations) use
// Loop::submit(prep, handler), which allocates each request; a
// connection's recv or send, one at a time (the echo is sent from the
// buffer it was read into; the next recv waits for it), uses the C
// request embedded in the connection (struct tw_loop_io and
// twheel_loop_get_sqe() on the loop's native_handle(): the C++ layer has no
// intrusive request), so an idle connection allocates nothing but itself.
// --heartbeat sends its PONGs out of demo_pongs(); --http answers each
// complete request head with a 204 (a 400 if invalid) out of
// demo_http_replies(), shared, its Date fields written once a second
// (not while a send holds it), and gives the receive buffer back at once.
// Receive buffers come from a provided-buffer ring registered on the loop's
// ring (native_handle(), Linux 5.19; --ring-bufs): a recv selects a buffer
// only when data arrives, so an idle connection holds none; where the
// kernel refuses the ring (or --ring-bufs 0) each connection has its own.
// Closing: shutdown() sends the FIN at once and completes the in-flight
// request, whose handler then destroys the connection.
//
// Exit: 0; 1 runtime error, leak, or a listening socket that accepts no
// more; 2 usage; 77 io_uring refused or older than 5.11, or its multishot
// accept (before 5.19).
#include <netinet/tcp.h>
#include <sys/signalfd.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>
#include <unordered_map>

#include <twheel/loop.hpp>

#include "demo_common.h"
#include "demo_server.h"

namespace {

const demo_options &o = demo_opts;

constexpr std::size_t conn_buf = 512;
// A connection whose idle timer fired while its data waited reads on at
// most this many times while its reads complete no message: enough for the
// rest of the longest head at conn_buf a read (see idle_server.c).
constexpr unsigned due_reads_max = DEMO_HTTP_MAX_HEAD / conn_buf + 1;
static_assert(conn_buf / DEMO_PING_LEN + 1 <= DEMO_HEARTBEAT_MAX_BATCH, "the PINGs one read completes");
static_assert(DEMO_HTTP_BATCH_COVERS(conn_buf), "the HTTP heads one read completes");
constexpr auto backoff_delay = std::chrono::milliseconds(100);
constexpr unsigned short buf_group = 0; // the provided-buffer ring's group

struct Server;

// The worker's provided-buffer ring: --ring-bufs buffers of conn_buf bytes.
// It outlives the Loop (declared before it), whose ring it is registered on.
struct BufRing {
	io_uring_buf_ring *br = nullptr;
	char *bufs = nullptr;
	~BufRing()
	{
		std::free(br);
		std::free(bufs);
	}
	char *buf(int bid) const { return bufs + static_cast<std::size_t>(bid) * conn_buf; }
};

// A connection: no buffer while it is idle. Its recv takes one from the
// ring only when data arrives, and the echo goes out of it, which returns
// to the ring once sent. A recv waits for data before it takes a buffer
// (IORING_RECVSEND_POLL_FIRST), so one that finds the ring empty (ENOBUFS)
// has data waiting: it waits on the starved list, first come first served,
// and the next buffer given back is handed to the list's head (buf_put());
// should the ring hold buffers while connections wait, as many are woken
// as buffers are free for them (see idle_server.c's struct conn for why
// it must wait for data first, and starved_wake() there). Without a ring, the connection has its
// own (own); with one, own holds what a send out of the ring's buffer
// could not place at once (spill()), so a peer that does not read holds
// none of the ring's.
struct Conn : tw::Hook<tw::Loop, Conn> {
	enum State : std::uint8_t { open, drain, linger, closing }; // linger: see on_send()
	enum : std::uint8_t { rx = 1, tx = 2 };

	// The connection's one request in flight (inflight says which).
	struct Io {
		tw_loop_io io; // first: the C request leads back here
		Conn *c;
	};

	Server *s;
	Io req;
	Conn *prev = nullptr, *next = nullptr; // on Server::conns, or on Server::starved
	std::unique_ptr<char[]> stats; // a control connection's STATS line, or a spilled HTTP reply
	std::unique_ptr<char[]> own;   // no ring: this connection's buffer; with one: a spilled send
	union {
		std::uint64_t t_fire = 0; // !idle_due: when it was closed as idle (loop clock), 0 if not
		std::uint64_t t_due;      // idle_due: the deadline its close was put off from
	};
	int fd;
	std::int16_t bid = -1; // the provided buffer held, -1 none
	std::uint16_t out_len = 0, out_off = 0;
	std::uint8_t inflight = 0;
	State state = open;
	bool seen_data = false;
	bool control = false;
	bool starving = false; // on the starved list
	bool woken = false;    // its recv was woken for a buffer (counted in Server::waking)
	bool idle_due = false; // its timer fired while its data waited for a buffer
	bool partial = false;  // its last read completed no message
	std::uint8_t due_reads = 0; // reads since idle_due that completed nothing (due_reads_max)
	std::uint8_t replies = 0; // HTTP: the copy of the replies a send goes out of, + 1; 0 none
	// What the mode reads (one mode for the whole server): the heartbeat's
	// current line (its length and first bytes), or the HTTP request head.
	struct Line {
		std::uint16_t len;
		char start[DEMO_PING_LEN];
	};
	union {
		Line line;
		demo_http http{};
	};

	Conn(Server *srv, tw::Loop &loop, int f) : Hook(loop), s(srv), req{{&io_done}, this}, fd(f)
	{
		if (demo_opts.heartbeat)
			line = Line{}; // the member in use from now on
	}
	Hook &idle() { return *this; } // the idle timer
	void on_timer();                        // it fired: silent for the whole timeout
	static void io_done(tw_loop_io *io, const io_uring_cqe *cqe) noexcept;
	char *data() const; // the bytes received last: the provided buffer, or own
	// what goes out: the STATS line, the HTTP replies, the PONGs, or the bytes read
	const char *out() const
	{
		return stats ? stats.get() : replies ? demo_http_replies(replies - 1u) : demo_opts.heartbeat ? demo_pongs() : data();
	}
};
static_assert(sizeof(Conn) <= 256, "an idle connection must cost at most 256 bytes");

// A list of connections through their prev and next: O(1) to add at
// either end and to take out of anywhere.
struct ConnList {
	Conn *head = nullptr, *tail = nullptr;
	void push_back(Conn *c)
	{
		c->prev = tail;
		c->next = nullptr;
		(tail ? tail->next : head) = c;
		tail = c;
	}
	void push_front(Conn *c)
	{
		c->prev = nullptr;
		c->next = head;
		(head ? head->prev : tail) = c;
		head = c;
	}
	void erase(Conn *c)
	{
		(c->prev ? c->prev->next : head) = c->next;
		(c->next ? c->next->prev : tail) = c->prev;
	}
};

struct Server {
	tw::Loop &loop;
	BufRing &ring;
	ConnList starved;                    // connections waiting for a buffer (ENOBUFS), first
					     // come first served: moved here from conns
	unsigned held = 0;                   // provided buffers held by connections
	unsigned waking = 0;                 // recvs of woken connections in flight
	int lfd, sfd;
	unsigned worker;
	std::chrono::nanoseconds idle;
	rlim_t nofile;
	ConnList conns;         // every other connection; both owned: deleted by conn_free() or ~Server
	std::size_t nconns = 0; // data connections (control ones excluded)
	unsigned ios = 0;       // server-level requests in flight
	bool accepting = false, paused = false, stopping = false;
	int status = 0; // the exit status a failure of the listener set (demo_accept_failed())
	tw::Timer<tw::Loop> backoff, deadline;
	signalfd_siginfo si{};
	std::uint64_t accepted = 0, idle_closed = 0, peer_closed = 0, resets = 0, errors = 0,
		      protocol_errors = 0, emfile = 0, emfile_unreported = 0, control = 0, last_emfile_msg = 0;
	demo_hist h_fire{}, h_fin{}, h_close{}, h_accept{}, h_wake{}, h_busy{};
	std::uint64_t max_ran = 0, nobufs = 0;
	std::uint64_t deferred = 0; // idle closes put off: data waited for a buffer
	FILE *trace = nullptr;
	// --trace: what a traced connection's line holds besides the record
	struct TraceRec {
		demo_sockaddr peer{}; // either family (an IPv4 field read an IPv6 peer as 0)
		std::uint64_t t_accept = 0, t_fin = 0;
		std::uint64_t t_due = 0, t_due_fire = 0; // a close put off: its deadline and timer run
		std::uint32_t acc_wait_ms = 0;
	};
	std::unordered_map<const Conn *, TraceRec> traced; // empty without --trace

	Server(tw::Loop &l, BufRing &r, int lf, int sf, unsigned w)
		: loop(l), ring(r), lfd(lf), sfd(sf), worker(w), idle(std::chrono::milliseconds(o.idle_ms))
	{
		rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		nofile = rl.rlim_cur;
		backoff = tw::Timer(loop, [this] { on_backoff(); });
		deadline = tw::Timer(loop, [this] {
			std::fprintf(stderr, "idle-server[%u]: shutdown: %u requests still in flight after 2 s; stopping anyway\n",
				     worker, ios);
			loop.stop();
		});
	}

	~Server()
	{
		starved_clear();
		while (conns.head)
			conn_unlink_delete(conns.head);
	}

	std::uint64_t clock() const { return twheel_loop_clock(loop.native_handle()); }

	// Pending timers that belong to connections (the server's own excluded).
	std::size_t conn_timers() const { return loop.size() - backoff.pending() - deadline.pending(); }

	int stats_line(char *b, std::size_t len) const
	{
		rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		return std::snprintf(
			b, len,
			"STATS worker=%u workers=%u pid=%d conns=%zu timers=%zu accepted=%" PRIu64 " idle_closed=%" PRIu64
			" peer_closed=%" PRIu64 " resets=%" PRIu64 " errors=%" PRIu64 " protocol_errors=%" PRIu64
			" emfile=%" PRIu64 " control=%" PRIu64 " nofile=%lu conn_bytes=%zu bufring=%d nobufs=%" PRIu64
			" deferred=%" PRIu64 " rss_kb=%" PRIu64 " utime_us=%" PRIu64 " stime_us=%" PRIu64
			" fire_n=%" PRIu64 " fire_p50_us=%" PRIu64 " fire_p99_us=%" PRIu64 " fire_max_us=%" PRIu64
			" fin_p50_us=%" PRIu64 " fin_p99_us=%" PRIu64 " fin_max_us=%" PRIu64 " close_p50_us=%" PRIu64
			" close_p99_us=%" PRIu64 " close_max_us=%" PRIu64 " accept_p50_us=%" PRIu64 " accept_p99_us=%" PRIu64
			" accept_max_us=%" PRIu64 " wake_p50_us=%" PRIu64 " wake_p99_us=%" PRIu64 " wake_max_us=%" PRIu64
			" busy_p50_us=%" PRIu64 " busy_p99_us=%" PRIu64 " busy_max_us=%" PRIu64 " iters=%" PRIu64
			" max_ran=%" PRIu64 "\n",
			worker, o.workers, static_cast<int>(getpid()), nconns, conn_timers(), accepted, idle_closed,
			peer_closed, resets, errors, protocol_errors, emfile, control, static_cast<unsigned long>(nofile),
			sizeof(Conn), ring.br != nullptr, nobufs, deferred, demo_rss_kb(),
			static_cast<std::uint64_t>(ru.ru_utime.tv_sec) * 1000000u + static_cast<std::uint64_t>(ru.ru_utime.tv_usec),
			static_cast<std::uint64_t>(ru.ru_stime.tv_sec) * 1000000u + static_cast<std::uint64_t>(ru.ru_stime.tv_usec),
			h_fire.n, demo_hist_pct(&h_fire, 0.5), demo_hist_pct(&h_fire, 0.99), h_fire.max_us,
			demo_hist_pct(&h_fin, 0.5), demo_hist_pct(&h_fin, 0.99), h_fin.max_us, demo_hist_pct(&h_close, 0.5),
			demo_hist_pct(&h_close, 0.99), h_close.max_us, demo_hist_pct(&h_accept, 0.5),
			demo_hist_pct(&h_accept, 0.99), h_accept.max_us, demo_hist_pct(&h_wake, 0.5),
			demo_hist_pct(&h_wake, 0.99), h_wake.max_us, demo_hist_pct(&h_busy, 0.5), demo_hist_pct(&h_busy, 0.99),
			h_busy.max_us, h_busy.n, max_ran);
	}

	void print_stats() const
	{
		char l[DEMO_STATS_MAX];
		stats_line(l, sizeof l);
		std::fputs(l, stdout);
		std::fflush(stdout);
	}

	void maybe_finish()
	{
		if (stopping && ios == 0 && !conns.head && !starved.head) {
			deadline.cancel();
			loop.stop();
		}
	}

	// ---- receive buffers ----

	// The worker's provided-buffer ring (Linux 5.19) on the loop's ring.
	// Where the kernel refuses it, say so once and leave ring.br null: each
	// connection then has a buffer of its own.
	void bufring_open()
	{
		const unsigned n = o.ring_bufs;
		void *mem = nullptr, *bufs = nullptr;
		int ret = -ENOMEM;
		if (!n)
			return; // --ring-bufs 0
		io_uring *r = twheel_loop_ring(loop.native_handle());
		if (posix_memalign(&mem, 4096, n * sizeof(io_uring_buf)) == 0 &&
		    posix_memalign(&bufs, 64, static_cast<std::size_t>(n) * conn_buf) == 0) {
			io_uring_buf_reg reg{};
			reg.ring_addr = reinterpret_cast<std::uintptr_t>(mem);
			reg.ring_entries = n;
			reg.bgid = buf_group;
			ret = r ? io_uring_register_buf_ring(r, &reg, 0) : -EOPNOTSUPP;
		}
		if (ret < 0) {
			std::fprintf(stderr, "idle-server[%u]: no provided-buffer ring (%s; Linux 5.19 has them): "
				     "a %zu-byte buffer per connection instead\n", worker, std::strerror(-ret), conn_buf);
			std::free(mem);
			std::free(bufs);
			return;
		}
		ring.br = static_cast<io_uring_buf_ring *>(mem);
		ring.bufs = static_cast<char *>(bufs);
		io_uring_buf_ring_init(ring.br);
		for (unsigned i = 0; i < n; i++)
			io_uring_buf_ring_add(ring.br, ring.buf(static_cast<int>(i)), conn_buf,
					      static_cast<unsigned short>(i), io_uring_buf_ring_mask(n), static_cast<int>(i));
		io_uring_buf_ring_advance(ring.br, static_cast<int>(n));
	}

	// @c gives its provided buffer back: to the connection waiting
	// longest, whose recv reads into it (it has data waiting), or to the
	// ring when none waits (see idle_server.c: put back into the ring for
	// a waiting recv, it went to whichever recv found data first, and
	// pipelining clients took it turn after turn).
	void buf_put(Conn *c)
	{
		const std::int16_t bid = c->bid;
		c->bid = -1;
		if (starved.head) {
			Conn *w = starved.head;
			starved_remove(w);
			w->bid = bid; // still held
			conn_recv(w);
			return;
		}
		io_uring_buf_ring_add(ring.br, ring.buf(bid), conn_buf, static_cast<unsigned short>(bid),
				      io_uring_buf_ring_mask(o.ring_bufs), 0);
		io_uring_buf_ring_advance(ring.br, 1);
		held--;
	}

	// Wake the connections waiting for a buffer, first come first served,
	// one for each buffer free for them: held by none, claimed by no recv
	// woken before (see idle_server.c: woken all at once, all but one
	// retried at once, each time a buffer came back).
	void starved_wake()
	{
		while (starved.head && held + waking < o.ring_bufs) {
			Conn *w = starved.head;
			starved_remove(w);
			w->woken = true;
			waking++;
			conn_recv(w);
		}
	}

	// @c waits for a buffer: at the list's tail, or at its head (@first:
	// its turn came, and another recv took the buffer first). It moves
	// from conns, so that leaving the list is O(1) wherever it is (see
	// idle_server.c).
	void starved_add(Conn *c, bool first)
	{
		conns.erase(c);
		if (first)
			starved.push_front(c);
		else
			starved.push_back(c);
		c->starving = true;
	}

	// @c leaves the starved list, back on conns. O(1).
	void starved_remove(Conn *c)
	{
		starved.erase(c);
		conns.push_back(c);
		c->starving = false;
	}

	// Every connection waiting for a buffer back on conns (shutdown, exit).
	void starved_clear()
	{
		while (starved.head)
			starved_remove(starved.head);
	}

	// ---- connections ----

	void conn_unlink_delete(Conn *c) // not starving
	{
		conns.erase(c);
		delete c; // cancels its timer
	}

	// HTTP: the replies' copy @c held is sent, or never will be.
	static void replies_put(Conn *c)
	{
		if (c->replies) {
			demo_http_replies_put(c->replies - 1u);
			c->replies = 0;
		}
	}

	void conn_free(Conn *c)
	{
		close(c->fd);
		replies_put(c);
		if (!c->idle_due && c->t_fire) {
			std::uint64_t now = clock();
			demo_hist_add(&h_close, static_cast<std::int64_t>(now - c->t_fire));
			if (trace) {
				const TraceRec &r = traced[c]; // a close put off: its deadline and timer run
				char peer[DEMO_SOCKADDR_TEXT_LEN];
				std::fprintf(trace, "%s %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
					     demo_sockaddr_text(&r.peer, peer), r.t_accept, r.acc_wait_ms,
					     r.t_due ? r.t_due : c->idle().native_handle()->deadline,
					     r.t_due ? r.t_due_fire : c->t_fire, r.t_fin, now);
			}
		}
		if (trace)
			traced.erase(c);
		if (c->starving)
			starved_remove(c);
		if (c->bid >= 0)
			buf_put(c);
		if (!c->control)
			nconns--;
		conn_unlink_delete(c);
		if (paused && !stopping) {
			// a descriptor came free: try the backlog again
			paused = false;
			backoff.cancel();
			accept_arm();
		}
		maybe_finish();
	}

	// An SQE for @c's request @what (Conn::rx or tx): one at a time.
	io_uring_sqe &conn_sqe(Conn *c, std::uint8_t what)
	{
		if (c->inflight) {
			std::fprintf(stderr, "idle-server[%u]: a second request on one connection\n", worker);
			std::abort(); // this server's invariant, not a condition of the peer
		}
		io_uring_sqe *sqe = twheel_loop_get_sqe(loop.native_handle(), &c->req.io);
		if (!sqe) // twheel_loop_get_sqe() already submitted once: the ring is wedged
			throw std::system_error(EBUSY, std::generic_category(), "io_uring submission queue full");
		c->inflight = what;
		return *sqe;
	}

	// Post @c's recv. One handed a buffer (buf_put()) or woken for one
	// (starved_wake()) does not wait (MSG_DONTWAIT): a lone urgent byte
	// or a spurious wake-up fails ENOBUFS too, and a recv that then
	// waited held the buffer (or its claim) until the idle timer closed
	// it, every other connection unread (see idle_server.c); it completes
	// -EAGAIN instead (recv_done()).
	void conn_recv(Conn *c)
	{
		io_uring_sqe &sqe = conn_sqe(c, Conn::rx);
		if (c->bid >= 0) { // a provided buffer handed to it (buf_put())
			io_uring_prep_recv(&sqe, c->fd, c->data(), conn_buf, MSG_DONTWAIT);
		} else if (ring.br) {
			io_uring_prep_recv(&sqe, c->fd, nullptr, conn_buf, c->woken ? MSG_DONTWAIT : 0);
			sqe.flags |= IOSQE_BUFFER_SELECT;
			sqe.buf_group = buf_group;
			// wait for data before taking a buffer: without, a recv issued
			// while the ring is empty fails ENOBUFS at once, data or not,
			// and an idle connection joins the starved list
			if (!c->woken)
				sqe.ioprio |= IORING_RECVSEND_POLL_FIRST;
		} else {
			io_uring_prep_recv(&sqe, c->fd, c->own.get(), conn_buf, 0);
		}
	}

	// Is what goes out of @c in the provided buffer it holds?
	static bool out_in_ring(const Conn *c) { return c->bid >= 0 && c->out() == c->data(); }

	// Send out()[out_off, out_len). Out of a provided buffer, or out of
	// the shared HTTP replies, the first send does not wait
	// (MSG_DONTWAIT): what the socket cannot take at once moves to a
	// buffer of the connection's own (spill(), replies_spill()), for a
	// peer that does not read must not hold one of the ring's, which every
	// connection draws from, nor a copy of the replies; @wait: the send
	// waits (after a spill).
	void conn_send(Conn *c, bool wait)
	{
		io_uring_sqe &sqe = conn_sqe(c, Conn::tx);
		const int flags = MSG_NOSIGNAL | (!wait && (out_in_ring(c) || c->replies) ? MSG_DONTWAIT : 0);
		io_uring_prep_send(&sqe, c->fd, c->out() + c->out_off, static_cast<std::size_t>(c->out_len - c->out_off),
				   flags);
	}

	// The socket did not take all of what goes out of @c's provided
	// buffer: move the rest to a buffer of its own (own, freed once sent)
	// and give the provided one back. Out of memory, @c keeps it.
	void spill(Conn *c)
	{
		if (!c->own)
			c->own.reset(new (std::nothrow) char[conn_buf]);
		if (!c->own)
			return;
		std::memcpy(c->own.get() + c->out_off, c->data() + c->out_off,
			    static_cast<std::size_t>(c->out_len - c->out_off));
		buf_put(c); // data() is own from now on
	}

	// HTTP: the socket did not take all of the replies: move the rest to
	// a buffer of @c's own (stats, freed once sent) and let go of the
	// replies' copy, whose Date could not move on while held. Out of
	// memory, @c keeps it.
	void replies_spill(Conn *c)
	{
		const std::size_t n = static_cast<std::size_t>(c->out_len - c->out_off);
		std::unique_ptr<char[]> p(new (std::nothrow) char[n]);
		if (!p)
			return;
		std::memcpy(p.get(), c->out() + c->out_off, n);
		replies_put(c);
		c->stats = std::move(p);
		c->out_off = 0;
		c->out_len = static_cast<std::uint16_t>(n);
	}

	// Stop using @c: disarm its timer, send the FIN now, free it when its
	// last in-flight request has completed.
	void conn_close(Conn *c)
	{
		if (c->state == Conn::closing)
			return;
		c->state = Conn::closing;
		c->idle().cancel();
		if (!c->inflight) {
			conn_free(c);
			return;
		}
		if (shutdown(c->fd, SHUT_RDWR) != 0) {
			// not connected any more (reset): cancel whatever is in flight
			int fd = c->fd;
			loop.submit([fd](io_uring_sqe &sqe) { io_uring_prep_cancel_fd(&sqe, fd, IORING_ASYNC_CANCEL_ALL); },
				    [this](const io_uring_cqe &) { ios--; maybe_finish(); });
			ios++;
		}
	}

	// Bytes wait in @c's socket, unread (one system call): a byte a read
	// returns, peeked. Not FIONREAD, which counts the bytes before a
	// pending urgent byte only (see idle_server.c).
	static bool more_waits(const Conn *c)
	{
		char b;
		return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
	}

	// Has @c data waiting that its recv has not read yet? Its recv failed
	// ENOBUFS (see idle_server.c): it waits on the starved list, or was
	// woken, or was handed a buffer. Or its last read completed no
	// message and the rest waits behind it.
	static bool data_waits(const Conn *c)
	{
		if (c->starving)
			return true;
		if (c->inflight != Conn::rx)
			return false;
		return c->woken || c->bid >= 0 || (c->partial && more_waits(c));
	}

	// The idle timer fired: silent for a whole timeout, close. Unless its
	// data waits for a buffer (the server was behind, not the peer: see
	// idle_server.c): then the close waits for the read (idle_due), which
	// re-arms the timer if it completes a message, else closes (recv_done());
	// for one more timeout at most, the timer armed again (a recv that
	// never completes, or a wait on the starved list: see idle_server.c).
	void on_idle(Conn *c)
	{
		std::uint64_t now = clock(), dl = c->idle().native_handle()->deadline;
		demo_hist_add(&h_fire, static_cast<std::int64_t>(now - dl));
		demo_hist_add(&h_wake, static_cast<std::int64_t>(twheel_loop_now(loop.native_handle()) - dl));
		if (c->state == Conn::open && !c->idle_due && data_waits(c)) {
			deferred++;
			c->idle_due = true;
			c->t_due = dl;
			if (trace) {
				TraceRec &r = traced[c];
				r.t_due = dl;
				r.t_due_fire = now;
			}
			c->idle().arm_in(idle);
			return;
		}
		idle_close(c, dl);
	}

	// Closes @c as idle: from its timer's callback, @dl the deadline it
	// ran for, or a close put off (idle_due), its FIN measured from the
	// deadline it was put off from (as idle_server.c).
	void idle_close(Conn *c, std::uint64_t dl)
	{
		bool freed_now = !c->inflight; // an open connection always has a request in flight
		if (c->idle_due)
			dl = c->t_due;
		c->idle_due = false;
		idle_closed++;
		c->t_fire = clock();
		conn_close(c);
		std::uint64_t fin = clock();
		if (!freed_now && trace)
			traced[c].t_fin = fin;
		demo_hist_add(&h_fin, static_cast<std::int64_t>(fin - dl));
	}

	// Heartbeat protocol: consume @n bytes; a PONG goes out for each PING
	// they complete, out of demo_pongs() (Conn::out(); not in place: see
	// idle_server.c). Returns whether they completed a line, or -1 (a line
	// too long).
	int heartbeat_input(Conn *c, std::size_t n)
	{
		const bool line = std::memchr(c->data(), '\n', n) != nullptr;
		const int pings = demo_heartbeat_input(c->data(), n, c->line.start, &c->line.len);
		if (pings < 0)
			return -1;
		if (c->bid >= 0)
			buf_put(c); // the PONGs do not go out of it
		c->out_len = static_cast<std::uint16_t>(pings * DEMO_PING_LEN);
		c->out_off = 0;
		return line;
	}

	// HTTP mode: consume @n bytes; a reply goes out for each request head they
	// complete. Returns the heads completed, or -1 (a protocol error).
	int http_input(Conn *c, std::size_t n)
	{
		const int heads = demo_http_input(c->data(), n, &c->http);
		if (heads < 0)
			return -1;
		if (c->bid >= 0)
			buf_put(c); // the replies do not go out of it (Conn::out())
		if (heads > 0) // held until sent (replies_put())
			c->replies = static_cast<std::uint8_t>(demo_http_replies_hold() + 1);
		demo_http_reply_span(heads, &c->http, &c->out_off, &c->out_len);
		if (c->http.close) {
			c->state = Conn::linger;
			if (c->http.reply >= DEMO_HTTP_BAD_REQUEST)
				protocol_errors++; // refused: a 4xx or 5xx reply, then the close
		}
		return heads;
	}

	// The first bytes were "STATS\n": answer with the STATS line, then close.
	void control_reply(Conn *c)
	{
		c->control = true;
		control++;
		nconns--;
		c->idle().cancel();
		c->stats.reset(new (std::nothrow) char[DEMO_STATS_MAX]);
		if (!c->stats) { // no memory for the line: closed unanswered, the server goes on
			errors++;
			conn_close(c);
			return;
		}
		if (c->bid >= 0)
			buf_put(c);
		int len = stats_line(c->stats.get(), DEMO_STATS_MAX);
		c->out_len = static_cast<std::uint16_t>(len < DEMO_STATS_MAX ? len : DEMO_STATS_MAX - 1);
		c->out_off = 0;
		c->state = Conn::drain; // close once the line went out
		conn_send(c, false);
	}

	// A recv that brought no data: end of stream, an error, or no buffer
	// left (@woken: it was woken for one, and another recv took it first).
	void recv_none(Conn *c, int res, bool woken)
	{
		if (res == -ENOBUFS && ring.br) {
			nobufs++;
			starved_add(c, woken); // woken again in its turn (on_recv(), buf_put())
			return;
		}
		if (res == 0)
			peer_closed++;
		else if (res == -ECONNRESET)
			resets++;
		else
			errors++;
		if (res == 0 && (c->inflight & Conn::tx))
			c->state = Conn::drain; // half-close: finish the reply, then close
		else
			conn_close(c);
	}

	// A recv completed. Then the connections waiting for a buffer are
	// woken for those free: a woken recv that ends without taking one (the
	// end of the stream, a reset, a cancel: the kernel puts the buffer
	// back) leaves it to the next (else that one waited, its data unread,
	// until closed as idle).
	void on_recv(Conn *c, const io_uring_cqe &cqe)
	{
		const bool woken = c->woken;
		c->inflight = 0;
		if (woken) {
			c->woken = false;
			waking--;
		}
		if (cqe.flags & IORING_CQE_F_BUFFER) {
			c->bid = static_cast<std::int16_t>(cqe.flags >> IORING_CQE_BUFFER_SHIFT);
			held++;
		}
		recv_done(c, cqe.res, woken); // may free c
		if (ring.br)
			starved_wake();
	}

	void recv_done(Conn *c, const int res, bool woken)
	{
		if (res == -EAGAIN && c->state != Conn::closing) {
			// handed or woken (MSG_DONTWAIT: conn_recv()), it found
			// nothing to read: no data waits, the buffer goes on
			if (c->bid >= 0)
				buf_put(c);
			if (c->idle_due) { // its timer fired: silent since its deadline
				idle_close(c, c->t_due); // no run of the timer: no fire_*
				return;
			}
			conn_recv(c);
			return;
		}
		if (c->state == Conn::closing || res <= 0) {
			if (c->bid >= 0)
				buf_put(c);
			if (c->state != Conn::closing)
				recv_none(c, res, woken);
			else if (!c->inflight)
				conn_free(c);
			return;
		}
		if (c->state == Conn::linger) { // closing: what the peer still sends is dropped
			if (c->bid >= 0)
				buf_put(c);
			conn_recv(c);
			return;
		}
		std::size_t n = static_cast<std::size_t>(res);
		if (!c->seen_data) {
			c->seen_data = true;
			if (n == DEMO_STATS_REQ_LEN && std::memcmp(c->data(), DEMO_STATS_REQ, n) == 0) {
				control_reply(c);
				return;
			}
		}
		int done = 1; // echo: any bytes are a message
		if (o.heartbeat || o.http) {
			done = o.http ? http_input(c, n) : heartbeat_input(c, n);
			if (done < 0) {
				protocol_errors++;
				conn_close(c);
				return;
			}
		} else {
			c->out_len = static_cast<std::uint16_t>(n);
			c->out_off = 0;
		}
		// activity, a complete message (a slow partial one is not): one more idle timeout
		c->partial = !done;
		if (done) {
			c->idle().arm_in(idle);
			c->idle_due = false;
			c->t_fire = 0; // was t_due
			c->due_reads = 0;
			if (trace) {
				TraceRec &r = traced[c];
				r.t_due = r.t_due_fire = 0;
			}
		} else if (c->idle_due) {
			// its timer fired while this waited, and it completes nothing:
			// read on for the rest of a message, due_reads_max reads at most
			// (bytes that complete none, sent as fast as they are read, kept
			// it open for ever)
			if (c->due_reads == due_reads_max || !more_waits(c)) {
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
			buf_put(c);
		conn_recv(c);
	}

	void on_send(Conn *c, int res)
	{
		c->inflight = 0;
		if (c->state == Conn::closing) {
			if (!c->inflight)
				conn_free(c);
			return;
		}
		if (res == -EAGAIN)
			res = 0; // MSG_DONTWAIT: nothing taken
		if (res < 0) {
			if (res == -ECONNRESET || res == -EPIPE)
				resets++;
			else
				errors++;
			conn_close(c);
			return;
		}
		c->out_off = static_cast<std::uint16_t>(c->out_off + res);
		if (c->out_off < c->out_len) {
			if (out_in_ring(c))
				spill(c); // the peer is slow to read: wait without the ring's buffer
			else if (c->replies)
				replies_spill(c); // ...or without the replies' copy
			conn_send(c, true);
			return;
		}
		if (!c->control)
			c->stats.reset(); // a spilled reply, sent
		if (c->bid >= 0)
			buf_put(c); // the echo went out of it
		replies_put(c);
		if (ring.br && c->own)
			c->own.reset(); // spilled, and sent
		if (c->state == Conn::drain) {
			conn_close(c);
			return;
		}
		// linger: the reply that closes went out; FIN, then read until the
		// peer closes, not close() on unread bytes (an RST: idle_server.c)
		if (c->state == Conn::linger)
			shutdown(c->fd, SHUT_WR);
		conn_recv(c);
	}

	// A connection accepted: its record, its timer, its first recv. Out of
	// memory, it is closed and counted in errors, and the server goes on
	// (as idle_server.c): nothing here throws, so on_accept() re-arms.
	void conn_new(int fd)
	{
		std::unique_ptr<Conn> n(new (std::nothrow) Conn(this, loop, fd));
		if (n && !ring.br)
			n->own.reset(new (std::nothrow) char[conn_buf]);
		bool traced_ok = true;
		if (n && trace) {
			try {
				traced[n.get()];
			} catch (const std::bad_alloc &) {
				traced_ok = false;
			}
		}
		if (!n || (!ring.br && !n->own) || !traced_ok) {
			errors++;
			close(fd);
			return;
		}
		Conn *c = n.release();
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		conns.push_front(c);
		// time spent in the accept queue (see idle_server.c)
		tcp_info ti;
		socklen_t tl = sizeof ti;
		const bool ti_ok = getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0;
		if (ti_ok)
			demo_hist_add(&h_accept, static_cast<std::int64_t>(ti.tcpi_last_data_sent) * 1000000);
		if (trace) {
			TraceRec &r = traced[c];
			socklen_t pl = sizeof r.peer;
			if (getpeername(fd, &r.peer.sa, &pl) != 0)
				r.peer.sa.sa_family = AF_UNSPEC;
			r.t_accept = clock();
			r.acc_wait_ms = ti_ok ? ti.tcpi_last_data_sent : 0;
		}
		c->idle().arm_in(idle);
		nconns++;
		accepted++;
		conn_recv(c);
	}

	// ---- accepting ----

	void emfile_report(int err)
	{
		std::uint64_t now = twheel_loop_now(loop.native_handle());
		emfile++;
		emfile_unreported++;
		if (last_emfile_msg && now - last_emfile_msg < 1000000000ull)
			return;
		std::fprintf(stderr,
			     "idle-server[%u]: accept: %s (%s): %zu connections open, RLIMIT_NOFILE %lu; %" PRIu64
			     " accept%s refused since the last report; accepting paused until a connection closes "
			     "(raise ulimit -n, or add --workers)\n",
			     worker, std::strerror(err), err == EMFILE ? "EMFILE" : err == ENFILE ? "ENFILE" : "no memory",
			     nconns, static_cast<unsigned long>(nofile), emfile_unreported, emfile_unreported == 1 ? "" : "s");
		emfile_unreported = 0;
		last_emfile_msg = now;
	}

	std::uint64_t accept_key = 0; // user_data of the multishot accept, for cancelling it

	void on_accept(const io_uring_cqe &cqe)
	{
		bool more = cqe.flags & IORING_CQE_F_MORE;
		if (!more) {
			accepting = false;
			ios--;
		}
		int res = cqe.res;
		if (res >= 0) {
			if (stopping)
				close(res);
			else
				conn_new(res);
		} else {
			switch (demo_accept_failed(lfd, -res, worker, &status)) {
			case DEMO_ACCEPT_PAUSE:
				emfile_report(-res);
				if (!paused && !stopping) {
					paused = true;
					backoff.arm_in(backoff_delay);
				}
				if (more) // the kernel kept the multishot going: stop it, we are paused
					cancel_accept_req();
				break;
			case DEMO_ACCEPT_STOP: // every accept would fail so: no spinning on it
				begin_shutdown();
				break;
			case DEMO_ACCEPT_SKIP:
				errors++;
				break;
			case DEMO_ACCEPT_AGAIN:
				break;
			}
		}
		if (!accepting && !paused && !stopping)
			accept_arm();
		maybe_finish();
	}

	// Cancel the request Loop::submit() returned @key for.
	void cancel_req(std::uint64_t key)
	{
		loop.submit([key](io_uring_sqe &sqe) { io_uring_prep_cancel64(&sqe, key, 0); },
			    [this](const io_uring_cqe &) { ios--; maybe_finish(); });
		ios++;
	}

	void cancel_accept_req() { cancel_req(accept_key); }

	// The multishot accept. Loop::submit() allocates the request: out of
	// memory, accepting pauses as for an accept refused ENOMEM (on_backoff()
	// tries again), rather than never resume.
	void accept_arm()
	{
		if (accepting)
			return;
		try {
			accept_key = loop.submit(
				[this](io_uring_sqe &sqe) { io_uring_prep_multishot_accept(&sqe, lfd, nullptr, nullptr, SOCK_CLOEXEC); },
				[this](const io_uring_cqe &cqe) { on_accept(cqe); });
		} catch (const std::bad_alloc &) {
			emfile_report(ENOMEM);
			if (!paused && !stopping) {
				paused = true;
				backoff.arm_in(backoff_delay);
			}
			return;
		}
		accepting = true;
		ios++;
	}

	void on_backoff()
	{
		if (paused && !stopping) {
			paused = false;
			accept_arm();
		}
	}

	// ---- signals and shutdown ----

	std::uint64_t signal_key = 0; // user_data of the signalfd read, for cancelling it
	bool signal_reading = false;  // ...which is in flight

	void signal_arm()
	{
		signal_key = loop.submit([this](io_uring_sqe &sqe) { io_uring_prep_read(&sqe, sfd, &si, sizeof si, 0); },
					 [this](const io_uring_cqe &cqe) { on_signal(cqe.res); });
		ios++;
		signal_reading = true;
	}

	void begin_shutdown()
	{
		if (stopping)
			return;
		stopping = true;
		backoff.cancel();
		deadline.arm_in(std::chrono::seconds(2));
		if (accepting)
			cancel_accept_req();
		if (signal_reading) // not stopped by a signal (the listener failed)
			cancel_req(signal_key);
		starved_clear();
		for (Conn *c = conns.head, *next; c; c = next) {
			next = c->next; // conn_close() may free c
			conn_close(c);
		}
		maybe_finish();
	}

	void on_signal(int res)
	{
		ios--;
		signal_reading = false;
		if (res == static_cast<int>(sizeof si)) {
			if (si.ssi_signo == SIGUSR1)
				print_stats();
			else
				begin_shutdown();
		} else if (res < 0 && res != -EINTR && res != -EAGAIN) {
			if (res != -ECANCELED)
				std::fprintf(stderr, "idle-server[%u]: signalfd read: %s\n", worker, std::strerror(-res));
			begin_shutdown();
		}
		if (!stopping)
			signal_arm();
		maybe_finish();
	}
};

void Conn::on_timer()
{
	s->on_idle(this);
}

// The connection's recv or send completed.
void Conn::io_done(tw_loop_io *io, const io_uring_cqe *cqe) noexcept
{
	Conn *c = reinterpret_cast<Io *>(io)->c;
	try {
		if (c->inflight == rx)
			c->s->on_recv(c, *cqe);
		else
			c->s->on_send(c, cqe->res);
	} catch (const std::exception &e) { // the ring is wedged
		std::fprintf(stderr, "idle-server[%u]: %s\n", c->s->worker, e.what());
		std::exit(1);
	}
}

char *Conn::data() const
{
	return bid >= 0 ? s->ring.buf(bid) : own.get();
}

} // namespace

static int run_worker(int lfd, unsigned worker, int ready_fd)
{
	sigset_t set;
	demo_signal_set(&set);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		std::perror("idle-server: signalfd");
		return 1;
	}
	std::size_t left_conns = 0, left_timers = 0;
	int status = 0;
	bool have_loop = false; // an error before it: io_uring refused or too old?
	try {
		tw::loop_options lo;
		lo.tick = std::chrono::microseconds(o.tick_us);
		lo.entries = 4096;
		lo.flags = TW_LOOP_URING_ONLY; // the server's I/O needs the ring
		BufRing ring; // outlives the loop it is registered on
		tw::Loop loop(lo);
		have_loop = true;
		Server s(loop, ring, lfd, sfd, worker);
		s.bufring_open();
		if (o.trace) {
			char path[4096];
			std::snprintf(path, sizeof path, "%s.%u", o.trace, worker);
			s.trace = std::fopen(path, "w");
			if (!s.trace) {
				std::fprintf(stderr, "idle-server[%u]: %s: %s\n", worker, path, std::strerror(errno));
				return 1;
			}
		}
		s.signal_arm();
		s.accept_arm();
		// one iteration submits the accept: a kernel that refuses it says
		// so at once (demo_accept_failed(): the server shuts down), before
		// "ready"
		loop.run_once(false);
		if (!s.stopping)
			demo_worker_ready(ready_fd);
		for (;;) {
			std::size_t ran = loop.run_once();
			if (loop.stopped())
				break;
			demo_hist_add(&s.h_busy, static_cast<std::int64_t>(s.clock() - twheel_loop_now(loop.native_handle())));
			if (ran > s.max_ran)
				s.max_ran = ran;
		}
		left_conns = s.nconns;
		left_timers = s.conn_timers();
		status = s.status;
		s.print_stats();
		s.starved_clear();
		for (Conn *c = s.conns.head; c; c = c->next)
			close(c->fd);
		if (s.trace)
			std::fclose(s.trace);
		// ~Server destroys the connections (their timers cancel), then ~Loop
	} catch (const std::system_error &e) {
		std::fprintf(stderr, "idle-server[%u]: %s\n", worker, e.what());
		int ev = e.code().value();
		close(sfd);
		return !have_loop && (ev == ENOSYS || ev == EPERM || ev == EOPNOTSUPP) ? DEMO_EXIT_NO_URING : 1;
	}
	close(sfd);
	close(lfd);
	if (left_conns || left_timers) {
		std::fprintf(stderr, "idle-server[%u]: %zu connections and %zu timers left at exit\n", worker,
			     left_conns, left_timers);
		status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	return demo_server_main(argc, argv, "idle-server", run_worker);
}
