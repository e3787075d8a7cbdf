/* SPDX-License-Identifier: MIT */
/*
 * udp_server.c - udp-session-server: many sessions behind one UDP socket
 * on one twheel-uring loop and its one wheel, each session with its own
 * idle timer (the protocol: udp_session.h).
 *
 * A session is a fixed-size record (struct session, 120 bytes on LP64)
 * with its loop timer embedded. The records live in one table allocated at
 * start (--max-sessions), found by ID through an open-addressing hash
 * (linear probing, backward-shift deletion, 4 bytes a slot, at most half
 * full); a free list recycles them. Nothing is allocated per datagram or
 * per session: the table's pages are touched as sessions first use them,
 * so the resident set grows with the sessions held.
 *
 * The IDs are the client's choice, so the hash must not let a client pick
 * IDs that share one probe run (with a fixed multiplier, multiples of its
 * inverse do: each insert, lookup and delete then walks the whole run, and
 * 40,000 such IDs stall the loop for seconds). A slot's home is therefore
 * SipHash-2-4 of the ID (libsodium's crypto_shorthash()) under a key drawn
 * at start from the kernel's random source, which a client never sees;
 * and no session lies more than PROBE_MAX slots past its home, so that no
 * lookup probes more than PROBE_MAX slots whatever the IDs. An ID whose
 * PROBE_MAX slots are all held is refused (counted in refused and
 * refused_probe), as when the table is full; nothing else changes. With a
 * key the client does not know, the probes are those of random homes: in
 * 20 fills of a table of 2^21 slots with 2^20 random homes (the most it
 * holds) the longest probe was 33 to 50 slots, and none of 21 million
 * inserts needed 65; PROBE_MAX is 128.
 *
 * I/O: one multishot poll on the socket; each completion drains it with
 * recvmmsg() (UDP_BATCH a call), RX_BUDGET calls before the loop runs its
 * due timers and the reading goes on. A datagram for an unknown ID opens a
 * session and arms its timer; one for a known ID re-arms it with
 * twheel_loop_mod() (O(1)). When a timer fires the session was silent for
 * the whole timeout, unless its datagram waits unread in the socket (the
 * server behind, short of CPU): so the session is closed only if the
 * socket was read up to the deadline or is empty now, else once the
 * datagrams before it are read (on_idle()). Then a UDP_CLOSED notice is
 * queued for its latest address and the record is freed; the notices of one loop iteration go out with
 * sendmmsg() after it. Drops are counted, never hidden: SO_RXQ_OVFL gives
 * the kernel's count of datagrams dropped on the socket.
 *
 * Signals: SIGUSR1 prints the STATS line; SIGTERM/SIGINT cancel the
 * socket's poll and, once it has ended (so that the port is free when the
 * process is), close every session (no notice), print it a last time and
 * exit 0, or 1 if a timer was left on the wheel.
 *
 * Poll errors: EINTR, EAGAIN and ECANCELED poll again; ENOMEM and ENOBUFS
 * again after POLL_BACKOFF_NS; any other would come back on every poll
 * (polled again at once, it made the server spin at full CPU): it stops
 * the server with one line, as SIGTERM does, exit 1, or 77 for EINVAL
 * (the kernel refuses a multishot poll: before Linux 5.13).
 *
 * Exit: 0; 1 runtime error, or a poll error that would come back; 2 usage;
 * 77 io_uring refused, or its multishot poll (before Linux 5.13).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>
#include <sodium.h>
#include <twheel/loop.h>

#include "args.h"
#include "demo_common.h"
#include "udp_session.h"

#define NAME "udp-session-server"
#define SEND_MAX 256 /* notices queued before a sendmmsg() */
#define RX_BUDGET 16 /* recvmmsg() calls of one rx_drain(): then due timers run */
#define POLL_BACKOFF_NS 100000000ull /* poll again this long after ENOMEM/ENOBUFS */
#define STOP_BOUND_NS 1000000000ull /* a stop waits this long at most for the cancelled poll to end */
#define PROBE_MAX 128 /* slots a lookup probes at most: a session's slot - its home < this */
/* STATS lines answered a second at most, in bursts of STATS_BURST (a line costs ~15 us) */
#define STATS_RATE 10000u
#define STATS_BURST 1000u
/* the server's own sync datagram (sync_send()), to itself; a client's is bad */
#define UDP_SYNC 0x80

static struct {
	const char *bind;
	uint16_t port;
	uint64_t idle_ms;
	uint32_t max_sessions;
	uint64_t tick_us;
	uint32_t buf_bytes;
	bool quiet, fixed_key;
} opt = { "127.0.0.1", DEMO_DEFAULT_PORT, 10000, 1u << 20, 1000, UDP_DEFAULT_BUF, false, false };

/* One session: 120 bytes on LP64, of which the loop timer is 96. */
struct session {
	struct tw_loop_timer idle;
	uint64_t id;        /* 0: the record is free */
	uint32_t addr;      /* the latest source address, network order */
	uint16_t port;      /* ...and port */
	uint16_t flags;     /* SS_DEFERRED, SS_LISTED */
	union {
		uint32_t next_free; /* free: the free list, index + 1 */
		uint32_t due_ms;    /* SS_DEFERRED: its deadline, ms (mod 2^32, rounded up) */
	};
	uint32_t home;      /* its home slot in the hash */
};
/* its timer fired with datagrams unread in the socket: closed once they are read */
#define SS_DEFERRED 1u
/* on the server's deferred list (which a session left, or freed, may still be on) */
#define SS_LISTED 2u
_Static_assert(sizeof(struct session) <= 256, "a session record must fit in 256 bytes");

struct rx_batch {
	struct mmsghdr m[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	struct udp_msg buf[UDP_BATCH];
	struct sockaddr_in from[UDP_BATCH];
	char ctl[UDP_BATCH][CMSG_SPACE(sizeof(uint32_t))];
};

struct tx_batch {
	struct mmsghdr m[SEND_MAX];
	struct iovec iov[SEND_MAX];
	struct udp_msg buf[SEND_MAX];
	struct sockaddr_in to[SEND_MAX];
	unsigned n;
};

struct server {
	struct twheel_loop *loop;
	int fd, sfd;
	struct tw_loop_io poll_io, signal_io, cancel_io;
	struct tw_loop_timer poll_backoff; /* poll again after ENOMEM/ENOBUFS; the bound on a stop */
	struct signalfd_siginfo si;
	bool polling, stopping;
	int status; /* the exit status a poll error set, or 0 */
	bool rx_more; /* rx_drain() stopped at RX_BUDGET: the socket may hold more */
	uint64_t idle_ns;
	/* the table and its hash */
	struct session *tab;
	uint32_t cap, used, free_head; /* used: records ever touched */
	uint32_t *slots;               /* record index + 1, 0 empty */
	uint32_t mask;
	unsigned bits;
	uint32_t probe_max; /* the longest probe a session ever opened needed */
	unsigned char key[crypto_shorthash_KEYBYTES];
	size_t nsess, peak;
	/* counters */
	uint64_t opened, idle_closed, byes, rx, bad, rx_dropped, tx_failed, refused, refused_probe;
	uint64_t stats_limited;          /* UDP_STATS not answered: over STATS_RATE */
	uint64_t stats_t;                /* the STATS token bucket: when last refilled (ns), */
	uint32_t stats_tokens;           /* ...and the answers it allows now */
	struct demo_hist h_fire; /* idle timer: callback run - deadline */
	/* Every datagram that arrived before read_upto (loop clock) has been
	 * read: the socket was found empty then, or a sync datagram sent then
	 * came back. A timer due later does not close its session until then. */
	uint64_t read_upto;
	uint64_t sync_t;     /* the sync datagram in flight: when sent, 0 none */
	uint64_t sync_drops; /* rx_dropped when it was sent (a drop since: maybe it) */
	uint64_t sync_token; /* its id: random, never sent to anyone else */
	struct sockaddr_in self;
	uint32_t *deferred;  /* sessions whose close waits for the socket to be read */
	uint32_t ndeferred, deferred_cap;
	uint64_t deferrals;  /* closes that waited so (STATS deferred) */
	uint64_t peeks;      /* socket_empty()'s receives (STATS peeks) */
	bool busy;           /* socket_empty() found a datagram since the last read */
	struct rx_batch rxb;
	struct tx_batch txb;
};

/* ---- The session table ---------------------------------------------------------- */

/* @id's home slot: the top bits of its keyed SipHash-2-4. */
static uint32_t home_slot(const struct server *s, uint64_t id)
{
	unsigned char in[sizeof(id)], out[crypto_shorthash_BYTES];
	uint64_t h;
	memcpy(in, &id, sizeof(id));
	crypto_shorthash(out, in, sizeof(in), s->key);
	memcpy(&h, out, sizeof(h));
	return (uint32_t)(h >> (64 - s->bits));
}

#define SLOT_NONE UINT32_MAX

/* The slot holding @id (*found true); else the empty slot where it would
 * go, or SLOT_NONE when the PROBE_MAX slots from its home (*home) are all
 * held. O(PROBE_MAX) at most. */
static uint32_t slot_find(const struct server *s, uint64_t id, bool *found, uint32_t *home)
{
	uint32_t i = *home = home_slot(s, id);
	*found = false;
	for (uint32_t n = 0; n < PROBE_MAX; n++, i = (i + 1) & s->mask) {
		if (!s->slots[i])
			return i;
		if (s->tab[s->slots[i] - 1].id == id) {
			*found = true;
			return i;
		}
	}
	return SLOT_NONE;
}

/* Empty slot @i and move later entries of its probe run back (no tombstones;
 * an entry only ever moves towards its home, so each stays within PROBE_MAX
 * of it). An entry PROBE_MAX or more slots past a hole has its home past
 * the hole too, so the search for one to move stops there: however long
 * the run, each hole costs PROBE_MAX steps at most, and each move brings
 * an entry closer to its home (fewer moves in all than the probes of the
 * inserts). */
static void slot_delete(struct server *s, uint32_t i)
{
	for (;;) {
		s->slots[i] = 0;
		uint32_t j = i;
		for (;;) {
			j = (j + 1) & s->mask;
			if (!s->slots[j] || ((j - i) & s->mask) >= PROBE_MAX)
				return;
			uint32_t k = s->tab[s->slots[j] - 1].home;
			/* the entry at j may move to i unless its home lies in (i, j] */
			bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
			if (!stays)
				break;
		}
		s->slots[i] = s->slots[j];
		i = j;
	}
}

static void on_idle(struct tw_loop_timer *t);

/* A record for @id, whose home is @home, in slot @slot, or NULL when the table is full. */
static struct session *session_new(struct server *s, uint32_t slot, uint32_t home, uint64_t id)
{
	uint32_t idx;
	if (s->free_head) {
		idx = s->free_head - 1;
		s->free_head = s->tab[idx].next_free;
	} else if (s->used < s->cap) {
		idx = s->used++;
	} else {
		return NULL;
	}
	struct session *ss = &s->tab[idx];
	tw_loop_timer_init(&ss->idle, on_idle, 0);
	ss->flags &= SS_LISTED; /* still listed: dropped from the list when it is next run */
	ss->id = id;
	ss->home = home;
	s->slots[slot] = idx + 1;
	uint32_t probe = ((slot - home) & s->mask) + 1;
	if (probe > s->probe_max)
		s->probe_max = probe;
	if (++s->nsess > s->peak)
		s->peak = s->nsess;
	s->opened++;
	return ss;
}

/* Forget @ss (its timer must be idle): its slot is within PROBE_MAX of its home. */
static void session_free(struct server *s, struct session *ss)
{
	uint32_t idx = (uint32_t)(ss - s->tab);
	uint32_t slot = ss->home, n = 0;
	for (; n < PROBE_MAX && s->slots[slot] != idx + 1; n++)
		slot = (slot + 1) & s->mask;
	if (n == PROBE_MAX) { /* cannot be: the table is corrupt */
		fprintf(stderr, NAME ": session %" PRIu64 " not within %d slots of its home\n", ss->id, PROBE_MAX);
		abort();
	}
	slot_delete(s, slot);
	ss->id = 0;
	ss->flags &= SS_LISTED;
	ss->next_free = s->free_head;
	s->free_head = idx + 1;
	s->nsess--;
}

/* Allocate the table for opt.max_sessions (lazily touched) and draw the
 * hash key (all zero with --debug-fixed-key); 0 or -ENOMEM. */
static int table_init(struct server *s)
{
	if (!opt.fixed_key)
		crypto_shorthash_keygen(s->key);
	s->cap = opt.max_sessions;
	s->bits = 1;
	while ((1ull << s->bits) < 2ull * s->cap)
		s->bits++;
	s->mask = (uint32_t)((1ull << s->bits) - 1);
	s->tab = calloc(s->cap, sizeof(*s->tab));
	s->slots = calloc((size_t)s->mask + 1, sizeof(*s->slots));
	return s->tab && s->slots ? 0 : -ENOMEM;
}

/* ---- Notices ---------------------------------------------------------------------- */

/*
 * Send the queued notices. sendmmsg() stops at the first one that fails:
 * when the socket's buffer is full (EAGAIN) the rest fail too and are
 * counted; any other error is that notice's own (its address: a datagram
 * from source port 0, which only a raw socket sends, leaves none to
 * answer), so it alone is counted and the others still go out.
 */
static void tx_flush(struct server *s)
{
	struct tx_batch *b = &s->txb;
	unsigned off = 0;
	while (off < b->n) {
		int n = sendmmsg(s->fd, b->m + off, b->n - off, MSG_DONTWAIT);
		if (n > 0) {
			off += (unsigned)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
			s->tx_failed += b->n - off;
			break;
		} else {
			s->tx_failed++;
			off++;
		}
	}
	b->n = 0;
}

static void tx_queue(struct server *s, const struct session *ss, uint64_t late_us)
{
	struct tx_batch *b = &s->txb;
	if (b->n == SEND_MAX)
		tx_flush(s);
	unsigned i = b->n++;
	b->buf[i] = (struct udp_msg){ .magic = UDP_MAGIC, .type = UDP_CLOSED, .id = ss->id, .arg = late_us };
	b->to[i] = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = ss->port,
					 .sin_addr = { .s_addr = ss->addr } };
	b->iov[i] = (struct iovec){ &b->buf[i], sizeof(b->buf[i]) };
	b->m[i].msg_hdr = (struct msghdr){ .msg_name = &b->to[i], .msg_namelen = sizeof(b->to[i]),
					   .msg_iov = &b->iov[i], .msg_iovlen = 1 };
}

/* The one server of this process (the timer callbacks' way back to it:
 * a record does not spend 8 bytes on a pointer every record would share). */
static struct server *srv;

/* Close @ss, silent since its deadline @due: its notice is queued. */
static void session_close(struct server *s, struct session *ss, uint64_t due)
{
	int64_t late = (int64_t)(twheel_loop_clock(s->loop) - due);
	demo_hist_add(&s->h_fire, late);
	s->idle_closed++;
	tx_queue(s, ss, late > 0 ? (uint64_t)late / 1000u : 0);
	session_free(s, ss);
}

/*
 * Send the socket a sync datagram unless one is in flight (and no drop
 * since could have been it): read back, it says every datagram that came
 * before it was read (the socket's queue is first in, first out).
 */
static void sync_send(struct server *s)
{
	if (s->sync_t && s->sync_drops == s->rx_dropped)
		return;
	uint64_t now = twheel_loop_clock(s->loop);
	struct udp_msg m = { .magic = UDP_MAGIC, .type = UDP_SYNC, .id = s->sync_token, .arg = now };
	if (sendto(s->fd, &m, sizeof(m), MSG_DONTWAIT, (const struct sockaddr *)&s->self, sizeof(s->self)) ==
	    (ssize_t)sizeof(m)) {
		s->sync_t = now;
		s->sync_drops = s->rx_dropped;
	}
}

/*
 * Is the socket empty (then everything before now was read)? One syscall,
 * and none once it found a datagram until the socket is read again (only
 * a read takes one out): the timers due in one iteration with the socket
 * busy cost one receive, not one each (201 for 201: demo_udp_lag).
 */
static bool socket_empty(struct server *s)
{
	if (s->busy)
		return false;
	uint64_t now = twheel_loop_clock(s->loop);
	char b;
	s->peeks++;
	if (recv(s->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) >= 0) {
		s->busy = true;
		return false;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return false;
	if (now > s->read_upto)
		s->read_upto = now;
	return true;
}

/* @ss's deadline, @due, came with datagrams unread: put its close off
 * until they are read (deferred_run()). False if out of memory. */
static bool session_defer(struct server *s, struct session *ss, uint64_t due)
{
	if (!(ss->flags & SS_LISTED)) {
		if (s->ndeferred == s->deferred_cap) {
			uint32_t cap = s->deferred_cap ? 2 * s->deferred_cap : 1024;
			uint32_t *d = realloc(s->deferred, (size_t)cap * sizeof(*d));
			if (!d)
				return false;
			s->deferred = d;
			s->deferred_cap = cap;
		}
		s->deferred[s->ndeferred++] = (uint32_t)(ss - s->tab);
		ss->flags |= SS_LISTED;
	}
	ss->flags |= SS_DEFERRED;
	ss->due_ms = (uint32_t)((due + 999999u) / 1000000u);
	s->deferrals++;
	sync_send(s);
	return true;
}

/* A deferred session's deadline, from its due_ms (within 24 days of @now). */
static uint64_t deferred_due(const struct session *ss, uint64_t now)
{
	uint64_t now_ms = now / 1000000u;
	int64_t back = (int32_t)((uint32_t)now_ms - ss->due_ms);
	return (uint64_t)((int64_t)now_ms - back) * 1000000u;
}

/*
 * The socket was read up to s->read_upto: close the deferred sessions due
 * by then that no datagram brought back to life; keep the others (and ask
 * for another sync).
 */
static void deferred_run(struct server *s)
{
	uint64_t now = twheel_loop_clock(s->loop);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < s->ndeferred; i++) {
		struct session *ss = &s->tab[s->deferred[i]];
		if (ss->flags & SS_DEFERRED) {
			uint64_t due = deferred_due(ss, now);
			if (due > s->read_upto) {
				s->deferred[kept++] = s->deferred[i];
				continue;
			}
			ss->flags = 0;
			session_close(s, ss, due);
		}
		ss->flags &= (uint16_t)~SS_LISTED;
	}
	s->ndeferred = kept;
	if (kept)
		sync_send(s);
}

/*
 * A session's timer fired: it was silent for the timeout, unless its
 * datagram waits in the socket, unread (the server behind: short of CPU,
 * or a read of the socket stopped at RX_BUDGET). So it is closed only if
 * the socket was read up to its deadline, or is empty now; else once it
 * is, and only if no datagram for it was among those read.
 */
static void on_idle(struct tw_loop_timer *t)
{
	struct session *ss = tw_container_of(t, struct session, idle);
	struct server *s = srv;
	if (t->deadline > s->read_upto && !socket_empty(s) && session_defer(s, ss, t->deadline))
		return;
	session_close(s, ss, t->deadline);
}

/* ---- Datagrams -------------------------------------------------------------------- */

static int stats_line(const struct server *s, char *buf, size_t len)
{
	struct rusage ru;
	struct twheel_loop_stats ls;
	getrusage(RUSAGE_SELF, &ru);
	twheel_loop_get_stats(s->loop, &ls);
	return snprintf(buf, len,
		"STATS worker=0 workers=1 pid=%d conns=%zu timers=%zu peak=%zu opened=%" PRIu64
		" idle_closed=%" PRIu64 " byes=%" PRIu64 " rx=%" PRIu64 " bad=%" PRIu64 " rx_dropped=%" PRIu64
		" tx_failed=%" PRIu64 " refused=%" PRIu64 " refused_probe=%" PRIu64 " stats_limited=%" PRIu64
		" probe_max=%" PRIu32
		" record_bytes=%zu table=%" PRIu32 " rss_kb=%" PRIu64
		" utime_us=%" PRIu64 " stime_us=%" PRIu64 " iters=%" PRIu64 " wakeups=%" PRIu64
		" fire_n=%" PRIu64 " fire_p50_us=%" PRIu64 " fire_p99_us=%" PRIu64 " fire_max_us=%" PRIu64
		" deferred=%" PRIu64 " peeks=%" PRIu64 "\n",
		(int)getpid(), s->nsess, twheel_loop_count(s->loop), s->peak, s->opened, s->idle_closed, s->byes,
		s->rx, s->bad, s->rx_dropped, s->tx_failed, s->refused, s->refused_probe, s->stats_limited, s->probe_max,
		sizeof(struct session), s->cap, demo_rss_kb(),
		(uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec,
		(uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec, ls.iterations,
		ls.wakeups, s->h_fire.n, demo_hist_pct(&s->h_fire, 0.5), demo_hist_pct(&s->h_fire, 0.99),
		s->h_fire.max_us, s->deferrals, s->peeks);
}

static void print_stats(const struct server *s)
{
	char line[DEMO_STATS_MAX];
	stats_line(s, line, sizeof(line));
	fputs(line, stdout);
	fflush(stdout);
}

/* A UDP_DATA for @id from @from: open the session, or push its timeout back. */
static void on_data(struct server *s, uint64_t id, const struct sockaddr_in *from)
{
	bool found;
	uint32_t home;
	uint32_t slot = slot_find(s, id, &found, &home);
	struct session *ss;
	if (found) {
		ss = &s->tab[s->slots[slot] - 1];
		ss->flags &= (uint16_t)~SS_DEFERRED; /* its close was put off: it lives on */
		twheel_loop_mod(s->loop, &ss->idle, s->idle_ns);
	} else {
		ss = slot == SLOT_NONE ? NULL : session_new(s, slot, home, id);
		if (!ss) {
			s->refused++;
			s->refused_probe += slot == SLOT_NONE;
			return;
		}
		twheel_loop_add(s->loop, &ss->idle, s->idle_ns);
	}
	ss->addr = from->sin_addr.s_addr;
	ss->port = from->sin_port;
}

static void on_bye(struct server *s, uint64_t id)
{
	bool found;
	uint32_t home;
	uint32_t slot = slot_find(s, id, &found, &home);
	if (!found)
		return;
	struct session *ss = &s->tab[s->slots[slot] - 1];
	twheel_loop_del(s->loop, &ss->idle);
	session_free(s, ss);
	s->byes++;
}

/*
 * A UDP_STATS: the line to @from, unless STATS_RATE a second were answered
 * (a token bucket of STATS_BURST). A STATS line costs the server far more
 * than any other datagram: unbounded, a flood of requests alone would
 * hold the loop while the socket's queue, and every datagram in it,
 * waits behind them.
 */
static void on_stats_req(struct server *s, const struct sockaddr_in *from)
{
	const uint64_t now = demo_now_ns(), per = 1000000000u / STATS_RATE;
	if (now - s->stats_t >= per) {
		uint64_t add = (now - s->stats_t) / per;
		s->stats_tokens = add >= STATS_BURST - s->stats_tokens ? STATS_BURST : s->stats_tokens + (uint32_t)add;
		s->stats_t = s->stats_tokens == STATS_BURST ? now : s->stats_t + add * per;
	}
	if (!s->stats_tokens) {
		s->stats_limited++;
		return;
	}
	s->stats_tokens--;
	char line[DEMO_STATS_MAX];
	int n = stats_line(s, line, sizeof(line));
	if (n > 0 && sendto(s->fd, line, (size_t)n, MSG_DONTWAIT, (const struct sockaddr *)from,
			    sizeof(*from)) < 0)
		s->tx_failed++;
}

static void on_datagram(struct server *s, const struct mmsghdr *m, const struct sockaddr_in *from)
{
	const struct udp_msg *msg = m->msg_hdr.msg_iov->iov_base;
	/* (24 bytes: one cut to 24, MSG_TRUNC, is not the server's, whatever its first bytes say) */
	if (m->msg_len == sizeof(*msg) && !(m->msg_hdr.msg_flags & MSG_TRUNC) && msg->magic == UDP_MAGIC &&
	    msg->type == UDP_SYNC && msg->id == s->sync_token && from->sin_port == s->self.sin_port &&
	    from->sin_addr.s_addr == s->self.sin_addr.s_addr) { /* ours, back: read up to its sending */
		if (msg->arg > s->read_upto)
			s->read_upto = msg->arg;
		if (msg->arg == s->sync_t)
			s->sync_t = 0;
		return;
	}
	s->rx++;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m->msg_hdr); c; c = CMSG_NXTHDR((struct msghdr *)&m->msg_hdr, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
			uint32_t dropped; /* the socket's drops so far, a __u32 */
			memcpy(&dropped, CMSG_DATA(c), sizeof(dropped));
			s->rx_dropped = dropped;
		}
	/* a longer datagram was cut to the buffer's 24 bytes: MSG_TRUNC says so */
	if (m->msg_len != sizeof(*msg) || (m->msg_hdr.msg_flags & MSG_TRUNC) || msg->magic != UDP_MAGIC ||
	    (msg->id == 0 && msg->type != UDP_STATS)) {
		s->bad++;
		return;
	}
	switch (msg->type) {
	case UDP_DATA: on_data(s, msg->id, from); break;
	case UDP_BYE: on_bye(s, msg->id); break;
	case UDP_STATS: on_stats_req(s, from); break;
	default: s->bad++; break;
	}
}

/*
 * Read the socket, UDP_BATCH datagrams a call, RX_BUDGET calls at most:
 * then s->rx_more, and serve() reads on after a loop iteration that ran
 * the timers due. Read until dry, a flood that comes faster than the
 * server reads would hold the loop as long as it lasts, every timer
 * waiting. A call that finds the socket empty (or short of a batch) has
 * read every datagram that came before it: s->read_upto.
 */
static void rx_read(struct server *s)
{
	struct rx_batch *b = &s->rxb;
	s->rx_more = false;
	s->busy = false; /* socket_empty() asks again */
	for (unsigned calls = 0; calls < RX_BUDGET; calls++) {
		for (unsigned i = 0; i < UDP_BATCH; i++) {
			b->iov[i] = (struct iovec){ &b->buf[i], sizeof(b->buf[i]) };
			b->m[i].msg_hdr = (struct msghdr){ .msg_name = &b->from[i], .msg_namelen = sizeof(b->from[i]),
							   .msg_iov = &b->iov[i], .msg_iovlen = 1,
							   .msg_control = b->ctl[i], .msg_controllen = sizeof(b->ctl[i]) };
		}
		uint64_t before = twheel_loop_clock(s->loop);
		int n = recvmmsg(s->fd, b->m, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < UDP_BATCH && (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK) && before > s->read_upto)
			s->read_upto = before;
		if (n <= 0)
			return;
		for (int i = 0; i < n; i++)
			on_datagram(s, &b->m[i], &b->from[i]);
		if (n < UDP_BATCH)
			return;
	}
	s->rx_more = true;
}

/*
 * rx_read(); then the deferred closes the reading allows (deferred_run()),
 * or, while some wait, a sync datagram again if a drop may have been ours
 * (else, under a flood that keeps the socket full, they waited for it to
 * end).
 */
static void rx_drain(struct server *s)
{
	uint64_t upto = s->read_upto;
	rx_read(s);
	if (s->ndeferred && s->read_upto != upto)
		deferred_run(s);
	else if (s->ndeferred)
		sync_send(s);
}

/* ---- The loop ------------------------------------------------------------------- */

static struct io_uring_sqe *sqe_for(struct server *s, struct tw_loop_io *io)
{
	struct io_uring_sqe *sqe = twheel_loop_get_sqe(s->loop, io);
	if (!sqe) {
		fprintf(stderr, NAME ": io_uring submission queue full\n");
		exit(1);
	}
	return sqe;
}

static void poll_arm(struct server *s)
{
	io_uring_prep_poll_multishot(sqe_for(s, &s->poll_io), s->fd, POLLIN);
	s->polling = true;
}

static void on_poll(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, poll_io);
	if (!(cqe->flags & IORING_CQE_F_MORE)) {
		s->polling = false;
		if (s->stopping) { /* the poll a stop cancelled has ended (stop()) */
			twheel_loop_stop(s->loop);
			return;
		}
	}
	switch (cqe->res < 0 ? -cqe->res : 0) {
	case 0:
	case EINTR:
	case EAGAIN:
	case ECANCELED:
		break;
	case ENOMEM:
	case ENOBUFS: /* the poll ended (no F_MORE): poll again after a pause */
		fprintf(stderr, NAME ": poll: %s (polling again in 100 ms)\n", strerror(-cqe->res));
		twheel_loop_mod(s->loop, &s->poll_backoff, POLL_BACKOFF_NS);
		return;
	default: /* every poll would fail so: stop, no spinning on it */
		if (cqe->res == -EINVAL) {
			fprintf(stderr, NAME ": poll: %s: the kernel refuses a multishot poll "
				"(Linux 5.13 or later has it); shutting down\n", strerror(-cqe->res));
			s->status = DEMO_EXIT_NO_URING;
		} else {
			fprintf(stderr, NAME ": poll: %s: shutting down\n", strerror(-cqe->res));
			s->status = 1;
		}
		s->stopping = true;
		twheel_loop_stop(s->loop);
		return;
	}
	rx_drain(s);
	if (!s->polling && !s->stopping)
		poll_arm(s);
}

static void on_poll_backoff(struct tw_loop_timer *t)
{
	struct server *s = tw_container_of(t, struct server, poll_backoff);
	if (s->stopping) { /* the cancelled poll did not end within STOP_BOUND_NS */
		twheel_loop_stop(s->loop);
		return;
	}
	if (!s->polling) {
		rx_drain(s);
		poll_arm(s);
	}
}

static void signal_arm(struct server *s)
{
	io_uring_prep_read(sqe_for(s, &s->signal_io), s->sfd, &s->si, sizeof(s->si), 0);
}

static void on_cancel(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	(void)io;
	(void)cqe; /* -ENOENT: the poll had ended, its CQE comes or came */
}

/*
 * SIGTERM/SIGINT: stop once the socket's poll has ended. A poll in flight
 * holds the socket: left to the ring's close, it is let go of only after
 * the process has exited (the kernel tears a ring down in the background),
 * and the port stayed bound for a while after the server was reaped (a
 * server started at once on the same port, as demo.sh's next try, failed
 * "Address already in use"). So it is cancelled, and the loop stops when
 * its last CQE comes, or after STOP_BOUND_NS at the latest.
 */
static void stop(struct server *s)
{
	s->stopping = true;
	if (!s->polling) {
		twheel_loop_stop(s->loop);
		return;
	}
	io_uring_prep_cancel64(sqe_for(s, &s->cancel_io), (uint64_t)(uintptr_t)&s->poll_io, 0);
	twheel_loop_mod(s->loop, &s->poll_backoff, STOP_BOUND_NS);
}

static void on_signal(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct server *s = tw_container_of(io, struct server, signal_io);
	if (cqe->res == (int)sizeof(s->si) && s->si.ssi_signo == SIGUSR1) {
		print_stats(s);
		signal_arm(s);
		return;
	}
	stop(s);
}

/* Run until a signal stops the loop; the notices of each iteration go out
 * after it. While the socket may hold more (rx_more), the loop does not
 * sleep and the socket is read on after each iteration. */
static int serve(struct server *s)
{
	int ret;
	while ((ret = twheel_loop_run_once(s->loop, s->rx_more ? TW_LOOP_NOWAIT : 0)) >= 0) {
		if (s->rx_more)
			rx_drain(s);
		if (s->txb.n)
			tx_flush(s);
	}
	if (ret == -ESHUTDOWN)
		return 0;
	fprintf(stderr, NAME ": loop: %s\n", strerror(-ret));
	return ret;
}

/* ---- Setup ---------------------------------------------------------------------- */

/* SO_*BUFFORCE (root), else as much as net.core.[rw]mem_max allows. */
static void set_buf(int fd, int force, int plain, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof(bytes)) != 0)
		setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof(bytes));
}

static int socket_open(const struct demo_addr *a)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, (int)opt.buf_bytes);
	set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, (int)opt.buf_bytes);
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (bind(fd, &a->u.sa, a->len) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void usage(FILE *f, const char *name)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  --bind ADDR          IPv4 loopback address, 127.x.y.z (127.0.0.1)\n"
		"  --port N             UDP port, 0 = any free one (%d)\n"
		"  --idle-ms MS         close a session silent this long (10000)\n"
		"  --max-sessions N     the session table's size, allocated at start (1048576)\n"
		"  --tick-us US         loop tick (1000)\n"
		"  --buf-bytes N        SO_RCVBUF and SO_SNDBUF of the socket (%u)\n"
		"  --quiet              no start-up line\n"
		"  --debug-fixed-key    hash session IDs under an all-zero key, not a random one\n"
		"                       (for tests: what a client who knows the key can do)\n"
		"protocol: demo/udp_session.h; signals: SIGUSR1 prints STATS, SIGTERM/SIGINT stop\n",
		name, DEMO_DEFAULT_PORT, UDP_DEFAULT_BUF);
}

static void parse_args(int argc, char **argv, struct demo_addr *a)
{
	const struct args_opt opts[] = {
		ARGS_STR("bind", &opt.bind),
		ARGS_NUM("port", &opt.port, 0, 65535),
		ARGS_NUM("idle-ms", &opt.idle_ms, 1, 86400000),
		ARGS_NUM("max-sessions", &opt.max_sessions, 1, 1u << 30),
		ARGS_NUM("tick-us", &opt.tick_us, 1, 1000000),
		ARGS_NUM("buf-bytes", &opt.buf_bytes, 4096, 1u << 30),
		ARGS_FLAG("quiet", &opt.quiet),
		ARGS_FLAG("debug-fixed-key", &opt.fixed_key),
		ARGS_END,
	};
	args_parse(NAME, argc, argv, opts, usage);
	if (demo_addr_parse(opt.bind, opt.port, a) != 0 || demo_addr_family(a) != AF_INET)
		args_fail(NAME, "--bind needs an IPv4 loopback address (127.x.y.z), not '%s'", opt.bind);
}

/*
 * The signals the loop reads from its signalfd, blocked into @set first of
 * all, so that one sent while the server starts waits for the loop:
 * blocked only once the table and the socket were made, SIGTERM and
 * SIGUSR1 killed the server, and SIGTERM inherited as ignored (trap ''
 * TERM) was discarded, the server running on until a second one (a
 * blocked signal is queued whatever its disposition).
 */
static void block_signals(sigset_t *set)
{
	demo_signal_set(set);
	sigprocmask(SIG_BLOCK, set, NULL);
}

/* The signalfd of @set, the loop and the first requests; 0 or an exit status (message printed). */
static int server_open(struct server *s, const sigset_t *set)
{
	s->sfd = signalfd(-1, set, SFD_CLOEXEC);
	if (s->sfd < 0) {
		perror(NAME ": signalfd");
		return 1;
	}
	struct twheel_loop_config cfg;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = opt.tick_us * 1000u;
	cfg.flags = TW_LOOP_URING_ONLY;
	char msg[256];
	int ret = twheel_loop_create(&s->loop, &cfg, msg, sizeof(msg));
	if (ret < 0) {
		fprintf(stderr, NAME ": %s\n", msg);
		return ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP ? DEMO_EXIT_NO_URING : 1;
	}
	s->poll_io.func = on_poll;
	s->signal_io.func = on_signal;
	s->cancel_io.func = on_cancel;
	tw_loop_timer_init(&s->poll_backoff, on_poll_backoff, 0);
	signal_arm(s);
	poll_arm(s);
	return 0;
}

/* Close every session left (no notice), print the last STATS line; the exit
 * status: 1 if a timer was left or @ret < 0, else the one a poll error set. */
static int server_close(struct server *s, int ret)
{
	twheel_loop_del(s->loop, &s->poll_backoff);
	for (uint32_t i = 0; i < s->used; i++)
		if (s->tab[i].id) {
			twheel_loop_del(s->loop, &s->tab[i].idle);
			session_free(s, &s->tab[i]);
		}
	free(s->deferred);
	s->deferred = NULL;
	s->ndeferred = 0;
	print_stats(s);
	size_t left = twheel_loop_count(s->loop);
	twheel_loop_destroy(s->loop, NULL, NULL, NULL);
	close(s->fd);
	close(s->sfd);
	if (left) {
		fprintf(stderr, NAME ": %zu timers left on the wheel at exit\n", left);
		return 1;
	}
	return ret < 0 ? 1 : s->status;
}

int main(int argc, char **argv)
{
	sigset_t set;
	block_signals(&set);
	struct demo_addr a;
	parse_args(argc, argv, &a);
	if (sodium_init() < 0) {
		fprintf(stderr, NAME ": libsodium failed to initialise\n");
		return 1;
	}
	static struct server s0;
	struct server *s = srv = &s0;
	s->idle_ns = opt.idle_ms * 1000000u;
	if (table_init(s) != 0) {
		fprintf(stderr, NAME ": no memory for %" PRIu32 " sessions\n", opt.max_sessions);
		return 1;
	}
	s->fd = socket_open(&a);
	if (s->fd < 0) {
		fprintf(stderr, NAME ": bind %s:%u: %s\n", a.text, opt.port, strerror(-s->fd));
		return 1;
	}
	socklen_t sl = sizeof(s->self);
	if (getsockname(s->fd, (struct sockaddr *)&s->self, &sl) != 0) {
		fprintf(stderr, NAME ": getsockname: %s\n", strerror(errno));
		return 1;
	}
	randombytes_buf(&s->sync_token, sizeof(s->sync_token));
	int ret = server_open(s, &set);
	if (ret)
		return ret;
	int rcv = 0;
	socklen_t rl = sizeof(rcv);
	getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcv, &rl);
	/* one iteration submits the poll: a kernel that refuses it says so at
	 * once (the server stops), before "ready" */
	if (twheel_loop_run_once(s->loop, TW_LOOP_NOWAIT) >= 0 && !s->stopping && !opt.quiet)
		printf(NAME ": ready: listening on %s:%u, udp, idle timeout %" PRIu64 " ms, table %" PRIu32
		       " sessions of %zu bytes, SO_RCVBUF %d, tick %" PRIu64 " us, pid %d\n",
		       a.text, demo_sock_port(s->fd), opt.idle_ms, opt.max_sessions, sizeof(struct session), rcv,
		       opt.tick_us, (int)getpid());
	fflush(stdout);
	return server_close(s, serve(s));
}
