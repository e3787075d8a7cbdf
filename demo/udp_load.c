/* SPDX-License-Identifier: MIT */
/*
 * udp_load.c - udp-load: the load generator and referee of the UDP session
 * mode (protocol: udp_session.h). It opens --sessions sessions at --rate a
 * second over --sockets UDP sockets, keeps --silent percent of them silent
 * after their first datagram and the rest chatty (a datagram every quarter
 * timeout), and measures how late the server's UDP_CLOSED notice for each
 * silent session arrives against the idle timeout, as the generator sees
 * it: lateness = notice received - (its only datagram sent + timeout), an
 * upper bound of the server's own (the datagram's time is read before it
 * is sent, the notice's after it is received). A chatty session closed, or
 * a silent one closed early or never, fails the run. --plot draws each
 * silent session's lateness with idle-load's plot (lateness_plot.c).
 *
 * The generator referees itself too: a run is INVALID (exit 3), not a pass,
 * when a datagram was dropped anywhere (its sockets' and the server's
 * SO_RXQ_OVFL counts, a send refused), when a chatty datagram went out more
 * than a quarter timeout behind its schedule, or when it left its sockets
 * unread longer than --tolerance-ms (its lateness figures would then be its
 * own). Early closes fail even such a run: a notice received before the
 * session's only datagram was sent + the timeout is early whatever the
 * generator's lag or drops. So does a server that went away: its port
 * unreachable (ECONNREFUSED on a socket, the kernel's ICMP port
 * unreachable: no socket bound there), which nothing of the generator's
 * makes. It asks the server for STATS before the first session, once all are
 * open, just before the first timeout (memory, wake-ups and CPU come from
 * the differences) and at the end, until the server holds no session and
 * no timer.
 *
 * Single-threaded, no timers of its own: sessions open in index order, and
 * the chatty ones wait in one FIFO queue in the order of their next
 * datagram (every one is due a fixed period after the previous, so the
 * queue stays sorted).
 *
 * Exit: 0 pass, 1 fail, 2 usage, 3 invalid run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "args.h"
#include "demo_common.h"
#include "lateness_plot.h"
#include "udp_session.h"

#define NAME "udp-load"
#define MAX_SOCKETS 64
#define SEND_BUDGET 2048 /* datagrams sent between two reads of the sockets */
#define READ_BUDGET 16   /* recvmmsg() calls of one read of a socket: then the clock is read again */

static struct {
	const char *host;
	uint16_t port;
	uint32_t sessions, silent, rate, sockets, buf_bytes;
	uint64_t idle_ms, tolerance_ms, grace_ms, seed;
	const char *plot;
	bool quiet;
	bool dry_run; /* --dry-run: check the options, do nothing */
} opt = { "127.0.0.1", DEMO_DEFAULT_PORT, 10000, 50, 50000, 8, UDP_DEFAULT_BUF, 10000, 50, 2000, 1, NULL,
	  false, false };

enum { S_NEW, S_OPEN, S_CLOSED, S_BYE };
enum { SNAP_BASE, SNAP_FULL, SNAP_HOLD, SNAP_END, SNAP_N };

struct txq {
	struct mmsghdr m[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	struct udp_msg buf[UDP_BATCH];
	uint32_t idx[UDP_BATCH];
	unsigned n;
};

/* A STATS line of the server and when it was asked for. */
struct snap {
	char line[DEMO_STATS_MAX];
	uint64_t t;
	bool have;
};

struct gen {
	int fd[MAX_SOCKETS];
	struct txq tx[MAX_SOCKETS];
	uint32_t sock_drops[MAX_SOCKETS];
	uint32_t n, nsilent, first_silent, opened, byes_sent;
	uint64_t tag, t0, idle_ns, period_ns, tol_ns;
	uint64_t *sent;    /* per session: when its latest DATA went out */
	uint64_t *due;     /* per chatty session: its next DATA */
	uint8_t *st;
	uint32_t *q, qhead, qlen; /* the chatty ones, in the order of due[] */
	/* counters */
	uint64_t on_time, late, early, closed_silent, wrong, bad, send_fail, datagrams;
	uint64_t dup; /* notices for sessions already closed or ended by a BYE: wrong */
	uint64_t starved; /* chatty datagrams we sent a whole timeout after the one before */
	uint64_t unreachable; /* ECONNREFUSED: the server's port had no socket (ICMP) */
	int64_t min_late_ns;
	int64_t *late_ns;      /* each silent session's lateness, in the order closed (closed_silent) */
	struct demo_hist lat;  /* silent sessions' lateness (early ones as 0) */
	struct demo_hist lag;  /* chatty DATA sent - due */
	struct demo_hist gap;  /* between two reads of the sockets */
	uint64_t last_read;
	/* the server's STATS */
	struct snap snap[SNAP_N];
	int want;               /* the snapshot asked for, -1 none */
	uint64_t asked_at;
	uint64_t last_progress;
	struct demo_machine m_start, m_end; /* the machine before and after the run */
};

static bool is_silent(uint32_t i)
{
	/* exactly silent% of any prefix, spread evenly */
	return (uint64_t)(i + 1) * opt.silent / 100 > (uint64_t)i * opt.silent / 100;
}

/* ---- Sending ------------------------------------------------------------------------ */

static void txq_flush(struct gen *g, unsigned k)
{
	struct txq *q = &g->tx[k];
	unsigned off = 0;
	uint64_t now = demo_now_ns();
	for (unsigned i = 0; i < q->n; i++)
		g->sent[q->idx[i]] = now; /* before the send: the server cannot have it earlier */
	while (off < q->n) {
		int r = sendmmsg(g->fd[k], q->m + off, q->n - off, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			g->unreachable += r < 0 && errno == ECONNREFUSED;
			g->send_fail += q->n - off;
			break;
		}
		off += (unsigned)r;
	}
	g->datagrams += off;
	q->n = 0;
}

static void send_msg(struct gen *g, uint32_t idx, uint8_t type)
{
	unsigned k = idx % opt.sockets;
	struct txq *q = &g->tx[k];
	if (q->n == UDP_BATCH)
		txq_flush(g, k);
	unsigned i = q->n++;
	q->buf[i] = (struct udp_msg){ .magic = UDP_MAGIC, .type = type, .id = g->tag | idx };
	q->iov[i] = (struct iovec){ &q->buf[i], sizeof(q->buf[i]) };
	q->m[i].msg_hdr = (struct msghdr){ .msg_iov = &q->iov[i], .msg_iovlen = 1 };
	q->idx[i] = idx;
}

static void flush_all(struct gen *g)
{
	for (unsigned k = 0; k < opt.sockets; k++)
		if (g->tx[k].n)
			txq_flush(g, k);
}

static void ask_stats(struct gen *g, int which)
{
	struct udp_msg m = { .magic = UDP_MAGIC, .type = UDP_STATS };
	g->want = which;
	g->asked_at = demo_now_ns();
	if (send(g->fd[0], &m, sizeof(m), 0) != (ssize_t)sizeof(m)) {
		g->unreachable += errno == ECONNREFUSED;
		g->send_fail++;
	}
}

/* Open the sessions due by @now (--rate a second); the chatty ones join the queue. */
static unsigned open_due(struct gen *g, uint64_t now, unsigned budget)
{
	uint64_t target = (now - g->t0) * opt.rate / 1000000000u + 1;
	unsigned sent = 0;
	while (g->opened < g->n && g->opened < target && sent < budget) {
		uint32_t i = g->opened++;
		send_msg(g, i, UDP_DATA);
		g->st[i] = S_OPEN;
		if (!is_silent(i)) {
			g->due[i] = g->t0 + (uint64_t)i * 1000000000u / opt.rate + g->period_ns;
			g->q[(g->qhead + g->qlen++) % (g->n - g->nsilent)] = i;
		}
		sent++;
	}
	return sent;
}

/* Send the chatty sessions' DATA due by @now, each then due a period later. */
static unsigned ping_due(struct gen *g, uint64_t now, unsigned budget)
{
	uint32_t nchatty = g->n - g->nsilent;
	unsigned sent = 0;
	while (g->qlen && sent < budget) {
		uint32_t i = g->q[g->qhead];
		if (g->st[i] == S_OPEN && g->due[i] > now)
			break;
		g->qhead = (g->qhead + 1) % nchatty;
		g->qlen--;
		if (g->st[i] != S_OPEN)
			continue; /* closed (wrongly) or ended: leaves the queue */
		demo_hist_add(&g->lag, (int64_t)(now - g->due[i]));
		/* due a period after the last: three more late, the session was
		 * silent a whole timeout for our sake (behind() holds too) */
		g->starved += now - g->due[i] >= 3 * g->period_ns;
		send_msg(g, i, UDP_DATA);
		g->due[i] += g->period_ns;
		g->q[(g->qhead + g->qlen++) % nchatty] = i;
		sent++;
	}
	return sent;
}

/* ---- Receiving ---------------------------------------------------------------------- */

static void on_closed(struct gen *g, uint64_t id, uint64_t now)
{
	uint32_t i = (uint32_t)id;
	if ((id & ~UINT64_C(0xffffffff)) != g->tag || i >= g->n) {
		g->bad++;
		return;
	}
	if (g->st[i] != S_OPEN) { /* closed twice, or after the BYE that ended it */
		g->dup++;
		return;
	}
	g->st[i] = S_CLOSED;
	if (!is_silent(i)) {
		g->wrong++;
		return;
	}
	int64_t late = (int64_t)(now - (g->sent[i] + g->idle_ns));
	g->late_ns[g->closed_silent++] = late;
	if (late < g->min_late_ns || g->closed_silent == 1)
		g->min_late_ns = late;
	demo_hist_add(&g->lat, late);
	if (late < 0)
		g->early++;
	else if ((uint64_t)late <= g->tol_ns)
		g->on_time++;
	else
		g->late++;
}

static void on_reply(struct gen *g, const char *buf, size_t len, uint64_t now)
{
	if (len >= 6 && memcmp(buf, "STATS ", 6) == 0) {
		if (g->want >= 0) {
			struct snap *s = &g->snap[g->want];
			size_t n = len < sizeof(s->line) - 1 ? len : sizeof(s->line) - 1;
			memcpy(s->line, buf, n);
			s->line[n] = 0;
			s->t = g->asked_at;
			s->have = true;
			g->want = -1;
		}
		return;
	}
	const struct udp_msg *m = (const struct udp_msg *)(const void *)buf;
	if (len != sizeof(*m) || m->magic != UDP_MAGIC || m->type != UDP_CLOSED) {
		g->bad++;
		return;
	}
	on_closed(g, m->id, now);
}

/* Read socket @k dry, or READ_BUDGET batches of it: a sender as fast as
 * we read (a hostile server) kept us here for as long as it sent, past
 * every deadline of ours; the callers read again while there is more.
 * Returns the datagrams read. */
static unsigned read_socket(struct gen *g, unsigned k)
{
	static struct mmsghdr m[UDP_BATCH];
	static struct iovec iov[UDP_BATCH];
	static char buf[UDP_BATCH][DEMO_STATS_MAX];
	static char ctl[UDP_BATCH][CMSG_SPACE(sizeof(uint32_t))];
	unsigned total = 0;
	for (unsigned calls = 0; calls < READ_BUDGET; calls++) {
		for (unsigned i = 0; i < UDP_BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1, .msg_control = ctl[i],
							.msg_controllen = sizeof(ctl[i]) };
		}
		int n = recvmmsg(g->fd[k], m, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNREFUSED) { /* the socket's error, taken: read on */
			g->unreachable++;
			continue;
		}
		if (n <= 0)
			return total;
		uint64_t now = demo_now_ns();
		for (int i = 0; i < n; i++) {
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&m[i].msg_hdr); c; c = CMSG_NXTHDR(&m[i].msg_hdr, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL)
					memcpy(&g->sock_drops[k], CMSG_DATA(c), sizeof(uint32_t));
			/* longer than any reply of the protocol, cut to the buffer (MSG_TRUNC): not one */
			if (m[i].msg_hdr.msg_flags & MSG_TRUNC)
				g->bad++;
			else
				on_reply(g, buf[i], m[i].msg_len, now);
		}
		total += (unsigned)n;
		if (n < UDP_BATCH)
			return total;
	}
	return total;
}

static unsigned read_all(struct gen *g)
{
	uint64_t now = demo_now_ns();
	if (g->last_read)
		demo_hist_add(&g->gap, (int64_t)(now - g->last_read));
	g->last_read = now;
	unsigned n = 0;
	for (unsigned k = 0; k < opt.sockets; k++)
		n += read_socket(g, k);
	return n;
}

/* Sleep until a socket is readable or @ms passed. */
static void wait_input(struct gen *g, int ms)
{
	struct pollfd p[MAX_SOCKETS];
	for (unsigned k = 0; k < opt.sockets; k++)
		p[k] = (struct pollfd){ .fd = g->fd[k], .events = POLLIN };
	poll(p, opt.sockets, ms);
}

/* ---- The server's STATS ------------------------------------------------------------- */

static uint64_t stat_of(const struct gen *g, int which, const char *key)
{
	uint64_t v = 0;
	if (g->snap[which].have)
		demo_stats_get(g->snap[which].line, key, &v);
	return v;
}

/* Ask for the snapshots when their moment comes, again after 500 ms without a reply. */
static void snap_step(struct gen *g, uint64_t now)
{
	if (g->want >= 0) {
		if (now - g->asked_at > 500000000u)
			ask_stats(g, g->want);
		return;
	}
	if (g->opened == g->n && !g->snap[SNAP_FULL].have) {
		ask_stats(g, SNAP_FULL);
		return;
	}
	/* just before the first silent session's timeout: the hold phase ends */
	uint64_t first = g->sent[g->first_silent] + g->idle_ns;
	if (g->nsilent && g->snap[SNAP_FULL].have && !g->snap[SNAP_HOLD].have && now + 100000000u >= first)
		ask_stats(g, SNAP_HOLD);
}

/* Ask for snapshot @which until @ok(line) holds or @ms passed; reads the sockets meanwhile. */
static bool snap_until(struct gen *g, int which, bool (*ok)(const char *line), uint64_t ms)
{
	uint64_t end = demo_now_ns() + ms * 1000000u;
	/* no server on the port: no reply will come */
	while (demo_now_ns() < end && !g->unreachable) {
		g->snap[which].have = false;
		ask_stats(g, which);
		uint64_t until = demo_now_ns() + 200000000u;
		while (!g->snap[which].have && demo_now_ns() < until && !g->unreachable) {
			read_all(g);
			wait_input(g, 10);
		}
		if (g->snap[which].have && ok(g->snap[which].line))
			return true;
		if (g->snap[which].have) {
			usleep(100000);
			g->last_read = 0; /* a pause of ours between two asks, not a read gap */
		}
	}
	return false;
}

static bool any_line(const char *line)
{
	(void)line;
	return true;
}

static bool server_empty(const char *line)
{
	uint64_t c = 1, t = 1;
	demo_stats_get(line, "conns", &c);
	demo_stats_get(line, "timers", &t);
	return c == 0 && t == 0;
}

/* ---- Progress ----------------------------------------------------------------------- */

static void progress(struct gen *g, uint64_t now, const char *phase)
{
	if (opt.quiet || now - g->last_progress < 1000000000u)
		return;
	g->last_progress = now;
	unsigned s = (unsigned)((now - g->t0) / 1000000000u);
	if (g->opened < g->n)
		printf("[%4u s] opening: %u of %u sessions, %" PRIu64 " datagrams sent\n", s, g->opened, g->n,
		       g->datagrams);
	else
		printf("[%4u s] %s: %" PRIu64 " of %u silent closed, %" PRIu64 " late, %" PRIu64 " early, %"
		       PRIu64 " chatty closed\n", s, phase, g->closed_silent, g->nsilent, g->late, g->early, g->wrong);
	fflush(stdout);
}

/* ---- Phases ------------------------------------------------------------------------- */

/* Open, keep the chatty ones alive and take the closes until every silent one
 * was closed, or --grace-ms after the last one's timeout. */
static void run_sessions(struct gen *g)
{
	uint64_t end = UINT64_MAX;
	g->t0 = demo_now_ns();
	g->last_read = 0;
	for (;;) {
		uint64_t now = demo_now_ns();
		unsigned work = open_due(g, now, SEND_BUDGET);
		work += ping_due(g, now, SEND_BUDGET - work);
		flush_all(g);
		work += read_all(g);
		snap_step(g, now);
		progress(g, now, "waiting for idle closes");
		if (g->opened == g->n && end == UINT64_MAX)
			end = demo_now_ns() + g->idle_ns + opt.grace_ms * 1000000u;
		if (g->closed_silent == g->nsilent && g->opened == g->n && g->snap[SNAP_FULL].have)
			break;
		if (now > end || g->unreachable) /* the server gone: nothing more to see */
			break;
		if (!work)
			wait_input(g, 1);
	}
	if (g->want >= 0) /* a snapshot still unanswered: not taken */
		g->want = -1;
}

/* End every chatty session still open with UDP_BYE, at --rate. The pings
 * still due get half the budget at most: behind on them, they would
 * otherwise take all of it, every time, and no BYE would ever go out. */
static void end_chatty(struct gen *g)
{
	uint32_t i = 0;
	uint64_t t = demo_now_ns();
	while (i < g->n) {
		uint64_t now = demo_now_ns();
		uint64_t target = (now - t) * opt.rate / 1000000000u + 1;
		unsigned work = ping_due(g, now, SEND_BUDGET / 2);
		for (; i < g->n && g->byes_sent < target && work < SEND_BUDGET; i++)
			if (g->st[i] == S_OPEN && !is_silent(i)) {
				send_msg(g, i, UDP_BYE);
				g->st[i] = S_BYE;
				g->byes_sent++;
				work++;
			}
		flush_all(g);
		work += read_all(g);
		progress(g, now, "ending the chatty sessions");
		if (!work)
			wait_input(g, 1);
	}
}

/* ---- Summary ------------------------------------------------------------------------ */

static double ms(uint64_t us)
{
	return (double)us / 1000.0;
}

/* The server's CPU seconds between two snapshots (both taken). */
static double cpu_s(const struct gen *g, int a, int b)
{
	uint64_t ua = stat_of(g, a, "utime_us") + stat_of(g, a, "stime_us");
	uint64_t ub = stat_of(g, b, "utime_us") + stat_of(g, b, "stime_us");
	return (double)(ub - ua) / 1e6;
}

/*
 * What the server's STATS say: memory, CPU, wake-ups, its timers. A
 * figure whose snapshot the server did not answer is said unknown (it
 * read as 0: a difference then wrapped to 1.8e13 CPU seconds).
 */
static void print_server(const struct gen *g)
{
	const bool base = g->snap[SNAP_BASE].have, full = g->snap[SNAP_FULL].have, end = g->snap[SNAP_END].have;
	if (base && full) {
		uint64_t held = stat_of(g, SNAP_FULL, "conns");
		uint64_t rss = stat_of(g, SNAP_FULL, "rss_kb") - stat_of(g, SNAP_BASE, "rss_kb");
		printf("  server memory  RSS +%" PRIu64 " KiB holding %" PRIu64 " sessions: %.0f B a session\n", rss,
		       held, held ? (double)rss * 1024.0 / (double)held : 0.0);
	} else {
		printf("  server memory  unknown: no STATS reply %s\n", base ? "once all were open" : "before the run");
	}
	if (end) {
		printf("                 (record %" PRIu64 " B, table of %" PRIu64 ", peak %" PRIu64 " held)\n",
		       stat_of(g, SNAP_END, "record_bytes"), stat_of(g, SNAP_END, "table"), stat_of(g, SNAP_END, "peak"));
		printf("  server timer   fired p50 %.1f  p99 %.1f  max %.1f ms after its deadline (%" PRIu64 ")\n",
		       ms(stat_of(g, SNAP_END, "fire_p50_us")), ms(stat_of(g, SNAP_END, "fire_p99_us")),
		       ms(stat_of(g, SNAP_END, "fire_max_us")), stat_of(g, SNAP_END, "fire_n"));
	} else {
		printf("  server timer   unknown: no STATS reply at the end\n");
	}
	if (base && end)
		printf("  server CPU     %.2f s for the run", cpu_s(g, SNAP_BASE, SNAP_END));
	else
		printf("  server CPU     unknown for the run");
	if (base && full)
		printf("; %.2f s opening\n", cpu_s(g, SNAP_BASE, SNAP_FULL));
	else
		printf("; unknown opening\n");
	if (full && g->snap[SNAP_HOLD].have) {
		double dt = (double)(g->snap[SNAP_HOLD].t - g->snap[SNAP_FULL].t) / 1e9;
		uint64_t w = stat_of(g, SNAP_HOLD, "wakeups") - stat_of(g, SNAP_FULL, "wakeups");
		printf("  holding        %.1f s: %.0f wake-ups/s, %.2f CPU s (chatty traffic only)\n", dt,
		       dt > 0 ? (double)w / dt : 0.0, cpu_s(g, SNAP_FULL, SNAP_HOLD));
	}
}

/* Drops anywhere: ours, the server's, sends refused. */
static uint64_t drops(const struct gen *g, uint64_t *ours)
{
	*ours = 0;
	for (unsigned k = 0; k < opt.sockets; k++)
		*ours += g->sock_drops[k];
	return *ours + stat_of(g, SNAP_END, "rx_dropped") + stat_of(g, SNAP_END, "tx_failed") + g->send_fail;
}

static bool behind(const struct gen *g)
{
	return g->lag.max_us * 1000u > g->period_ns || g->gap.max_us * 1000u > g->tol_ns;
}

/* The load the run was measured under (the machine's, from /proc): what
 * ran besides udp-load and the server (its CPU from STATS, where known). */
static struct demo_load machine_load(const struct gen *g)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double ours = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		      (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	if (g->snap[SNAP_BASE].have && g->snap[SNAP_END].have)
		ours += cpu_s(g, SNAP_BASE, SNAP_END);
	return demo_machine_load(&g->m_start, &g->m_end, ours);
}

static void print_summary(const struct gen *g, uint64_t never, uint64_t wall_ns)
{
	uint64_t ours, all = drops(g, &ours);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("udp_sessions summary: idle timeout %" PRIu64 " ms, tolerance %" PRIu64 " ms, grace %" PRIu64
	       " ms\n", opt.idle_ms, opt.tolerance_ms, opt.grace_ms);
	printf("  sessions       %u opened at %u/s over %u sockets, %" PRIu64 " datagrams\n", g->n, opt.rate,
	       opt.sockets, g->datagrams);
	printf("  silent         %u: on time %" PRIu64 ", late %" PRIu64 ", early %" PRIu64 ", never %" PRIu64
	       "\n", g->nsilent, g->on_time, g->late, g->early, never);
	printf("  chatty         %u: closed %" PRIu64 ", ended by us %u\n", g->n - g->nsilent, g->wrong,
	       g->byes_sent);
	if (g->dup || g->bad)
		printf("  wrong notices  %" PRIu64 " for sessions closed already or ended by us, %" PRIu64
		       " not ours or not one\n", g->dup, g->bad);
	printf("  lateness ms    p50 %.1f  p99 %.1f  max %.1f  min %.1f\n", ms(demo_hist_pct(&g->lat, 0.5)),
	       ms(demo_hist_pct(&g->lat, 0.99)), ms(g->lat.max_us), (double)g->min_late_ns / 1e6);
	printf("                 (notice received - (datagram sent + timeout): an upper bound)\n");
	print_server(g);
	if (g->snap[SNAP_END].have)
		printf("  drops          ours %" PRIu64 ", server rx %" PRIu64 ", server tx %" PRIu64 ", sends %" PRIu64
		       "\n", ours, stat_of(g, SNAP_END, "rx_dropped"), stat_of(g, SNAP_END, "tx_failed"), g->send_fail);
	else
		printf("  drops          ours %" PRIu64 ", server's unknown, sends %" PRIu64 "\n", ours, g->send_fail);
	printf("  generator lag  sends p99 %.1f max %.1f ms; reads apart p99 %.1f max %.1f ms\n",
	       ms(demo_hist_pct(&g->lag, 0.99)), ms(g->lag.max_us), ms(demo_hist_pct(&g->gap, 0.99)),
	       ms(g->gap.max_us));
	double own = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	printf("  udp-load       %.2f CPU s; %.1f s wall\n", own, (double)wall_ns / 1e9);
	struct demo_load l = machine_load(g);
	demo_load_print(&l, "the server and udp-load");
	(void)all;
}

/*
 * --plot PREFIX: each silent session's lateness, as the summary takes it
 * (an upper bound from a baseline no later than the server's: below zero
 * only when closed early), drawn with idle-load's plot (lateness_plot.h);
 * the title says the verdict.
 */
static void write_plot(const struct gen *g, bool invalid, bool pass)
{
	char what[160], how[160], verdict[200], said[4300];
	snprintf(what, sizeof(what), "udp-load: when the server closed %" PRIu64 " silent sessions",
		 g->closed_silent);
	snprintf(how, sizeof(how), "%u sessions, %u%% silent, idle timeout %" PRIu64 " ms, %u/s", g->n, opt.silent,
		 opt.idle_ms, opt.rate);
	if (invalid)
		snprintf(verdict, sizeof(verdict), "INVALID RUN: the generator fell behind or datagrams were "
			 "dropped: this says nothing of the server");
	else
		snprintf(verdict, sizeof(verdict), "%s: early %" PRIu64 ", late %" PRIu64 " (over %" PRIu64 " ms)",
			 pass ? "PASS" : "FAIL", g->early, g->late, opt.tolerance_ms);
	struct lateness_plot p = {
		.prefix = opt.plot, .what = what, .how = how, .verdict = verdict,
		.xlabel = "lateness, ms: notice received - (datagram sent + idle timeout); below 0: closed early",
		.tolerance_ms = opt.tolerance_ms, .n = g->closed_silent, .ncurves = 1,
		.curve = { { "UDP_CLOSED notice received by udp-load", g->late_ns } },
	};
	lateness_plot_write(&p, said, sizeof(said));
	printf("  plot           %s\n", said);
}

/*
 * Why the run fell behind (behind(), drops(), a STATS reply the figures
 * need), each cause with its figures, on one line without its end: an
 * INVALID run says why.
 */
static void say_behind(const struct gen *g, uint64_t dr)
{
	const char *sep = "";
	if (g->lag.max_us * 1000u > g->period_ns) {
		printf("%sa chatty datagram went out %.1f ms behind its schedule (a quarter timeout: %.1f)", sep,
		       ms(g->lag.max_us), (double)g->period_ns / 1e6);
		sep = "; ";
	}
	if (g->gap.max_us * 1000u > g->tol_ns) {
		printf("%sudp-load left its sockets unread %.1f ms (--tolerance-ms %" PRIu64 ")", sep, ms(g->gap.max_us),
		       opt.tolerance_ms);
		sep = "; ";
	}
	if (dr) {
		printf("%s%" PRIu64 " datagrams dropped (the drops line)", sep, dr);
		sep = "; ";
	}
	if (!g->snap[SNAP_BASE].have || !g->snap[SNAP_FULL].have) {
		printf("%sno STATS reply from the server %s", sep,
		       g->snap[SNAP_BASE].have ? "once all sessions were open" : "before the run");
		sep = "; ";
	}
	if (!*sep)
		printf("the generator fell behind");
}

/* The RESULT line and the verdict; returns the exit status. */
static int verdict(const struct gen *g, bool clean, uint64_t wall_ns)
{
	uint64_t never = 0, ours, dr = drops(g, &ours);
	for (uint32_t i = 0; i < g->n; i++)
		never += is_silent(i) && g->st[i] != S_CLOSED;
	print_summary(g, never, wall_ns);
	bool fell_behind = dr || behind(g) || !g->snap[SNAP_BASE].have || !g->snap[SNAP_FULL].have;
	/* An early close is one whatever our lag or drops: its notice came in
	 * before its session's only datagram was sent + the timeout; a port
	 * unreachable says the server went away; a datagram that is neither a
	 * STATS line nor a notice for one of our sessions (bad) is wrong
	 * whenever it came. So each fails even a run that fell behind;
	 * nothing else does. */
	bool invalid = fell_behind && !g->early && !g->unreachable && !g->bad;
	bool pass = !g->early && !never && !g->wrong && !g->dup && !g->bad && clean && !g->unreachable;
	struct demo_load l = machine_load(g);
	if (opt.plot)
		write_plot(g, invalid, pass);
	printf("RESULT sessions=%u silent=%u on_time=%" PRIu64 " late=%" PRIu64 " early=%" PRIu64 " never=%"
	       PRIu64 " wrong=%" PRIu64 " dup=%" PRIu64 " drops=%" PRIu64 " behind=%d starved=%" PRIu64 " abrupt_fail=0 connect_fail=0"
	       " server_conns=%" PRIu64 " server_timers=%" PRIu64 " server_clean=%d load_busy_pct=%.0f"
	       " load_others_cpus=%.2f load_steal_pct=%.1f load_wait_pct=%.0f lag_max_us=%" PRIu64 " stall_max_us=%" PRIu64
	       " invalid=%d pass=%d\n",
	       g->n, g->nsilent, g->on_time, g->late, g->early, never, g->wrong, g->dup, dr, behind(g), g->starved,
	       stat_of(g, SNAP_END, "conns"), stat_of(g, SNAP_END, "timers"), clean, l.busy_pct, l.others_cpus,
	       l.steal_pct, l.wait_pct, g->lag.max_us, g->gap.max_us, invalid, pass && !fell_behind);
	if (invalid) {
		printf("INVALID RUN: ");
		say_behind(g, dr);
		printf(": this run says nothing of the server\n");
		return 3;
	}
	if (g->unreachable)
		printf("The server's port was unreachable %" PRIu64 " times (ICMP port unreachable: no socket\n"
		       "bound there): the server went away during the run: FAIL.\n", g->unreachable);
	else if (fell_behind) {
		printf("The run fell behind (");
		say_behind(g, dr);
		printf("),\nbut a close seen before its session's datagram was sent + the timeout is early\n"
		       "whatever that lag, and a datagram that is no STATS line nor notice of ours is wrong\n"
		       "whenever it came: FAIL.\n");
	}
	printf("%s: early %" PRIu64 ", never %" PRIu64 ", chatty closed %" PRIu64 ", closed again %" PRIu64
	       ", bad %" PRIu64 ", server left %s\n", pass ? "PASS" : "FAIL", g->early, never, g->wrong, g->dup,
	       g->bad, clean ? "empty" : "sessions or timers");
	return pass ? 0 : 1;
}

/* ---- Setup -------------------------------------------------------------------------- */

static void usage(FILE *f, const char *name)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  --host ADDR        the server, IPv4 loopback (127.0.0.1)\n"
		"  --port N           its UDP port (%d)\n"
		"  --sessions N       sessions (10000)\n"
		"  --silent PCT       percent of them silent after their first datagram (50)\n"
		"  --idle-ms MS       the server's idle timeout (10000)\n"
		"  --rate N           sessions opened a second (50000)\n"
		"  --sockets K        client UDP sockets, sessions spread over them (8)\n"
		"  --buf-bytes N      SO_RCVBUF and SO_SNDBUF of each (%u)\n"
		"  --tolerance-ms MS  a close later than this is late; also the longest the\n"
		"                     sockets may go unread before the run is invalid (50)\n"
		"  --grace-ms MS      wait this long past the last timeout (2000)\n"
		"  --seed N           the session IDs' seed (1)\n"
		"  --plot PREFIX      write PREFIX.csv (each silent session's lateness), PREFIX.gp\n"
		"                     and, with gnuplot installed, PREFIX.png: the share of closes by lateness\n"
		"  --quiet            no progress lines\n"
		"  --dry-run          check the options and exit 0 (2 and one line if one is wrong)\n"
		"exit: 0 pass, 1 fail, 2 usage, 3 invalid run (the generator fell behind or dropped)\n",
		name, DEMO_DEFAULT_PORT, UDP_DEFAULT_BUF);
}

static void parse_args(int argc, char **argv, struct demo_addr *a)
{
	const struct args_opt opts[] = {
		ARGS_STR("host", &opt.host),
		ARGS_NUM("port", &opt.port, 1, 65535),
		ARGS_NUM("sessions", &opt.sessions, 1, 1u << 26),
		ARGS_NUM("silent", &opt.silent, 0, 100),
		ARGS_NUM("idle-ms", &opt.idle_ms, 4, 86400000),
		ARGS_NUM("rate", &opt.rate, 1, 100000000),
		ARGS_NUM("sockets", &opt.sockets, 1, MAX_SOCKETS),
		ARGS_NUM("buf-bytes", &opt.buf_bytes, 4096, 1u << 30),
		ARGS_NUM("tolerance-ms", &opt.tolerance_ms, 1, 86400000),
		ARGS_NUM("grace-ms", &opt.grace_ms, 0, 86400000),
		ARGS_NUM("seed", &opt.seed, 0, UINT64_MAX),
		ARGS_STR("plot", &opt.plot),
		ARGS_FLAG("quiet", &opt.quiet),
		ARGS_FLAG("dry-run", &opt.dry_run),
		ARGS_END,
	};
	args_parse(NAME, argc, argv, opts, usage);
	if (demo_addr_parse(opt.host, opt.port, a) != 0 || demo_addr_family(a) != AF_INET)
		args_fail(NAME, "--host needs an IPv4 loopback address (127.x.y.z), not '%s'", opt.host);
}

static int open_socket(const struct demo_addr *server)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1, bytes = (int)opt.buf_bytes;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (connect(fd, &server->u.sa, server->len) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Sockets, per-session arrays, the ID tag; 0 or 1 (message printed). */
static int gen_init(struct gen *g, const struct demo_addr *server)
{
	for (unsigned k = 0; k < opt.sockets; k++) {
		g->fd[k] = open_socket(server);
		if (g->fd[k] < 0) {
			fprintf(stderr, NAME ": socket to %s:%u: %s\n", server->text, opt.port, strerror(-g->fd[k]));
			return 1;
		}
	}
	g->n = opt.sessions;
	for (uint32_t i = 0; i < g->n; i++)
		g->nsilent += is_silent(i);
	while (g->first_silent + 1 < g->n && !is_silent(g->first_silent))
		g->first_silent++;
	g->sent = calloc(g->n, sizeof(*g->sent));
	g->late_ns = calloc(g->nsilent + 1, sizeof(*g->late_ns));
	g->due = calloc(g->n, sizeof(*g->due));
	g->st = calloc(g->n, 1);
	g->q = calloc(g->n - g->nsilent + 1, sizeof(*g->q));
	if (!g->sent || !g->late_ns || !g->due || !g->st || !g->q) {
		fprintf(stderr, NAME ": no memory for %u sessions\n", g->n);
		return 1;
	}
	struct demo_rng r = demo_rng_seed(opt.seed, (uint64_t)getpid());
	g->tag = (uint64_t)(demo_rng_below(&r, UINT32_MAX) | 1u) << 32;
	g->idle_ns = opt.idle_ms * 1000000u;
	g->period_ns = g->idle_ns / 4;
	g->tol_ns = opt.tolerance_ms * 1000000u;
	g->want = -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct demo_addr server;
	parse_args(argc, argv, &server);
	if (opt.dry_run)
		return 0;
	static struct gen g0;
	struct gen *g = &g0;
	if (gen_init(g, &server))
		return 1;
	if (!snap_until(g, SNAP_BASE, any_line, 3000)) {
		fprintf(stderr, NAME ": no STATS reply from %s:%u (is udp-session-server running?)\n", server.text,
			opt.port);
		return 1;
	}
	g->m_start = demo_machine_read();
	uint64_t t = demo_now_ns();
	run_sessions(g);
	end_chatty(g);
	g->last_read = 0; /* the wait for an empty server below is not a read gap */
	bool clean = snap_until(g, SNAP_END, server_empty, 5000);
	g->m_end = demo_machine_read();
	return verdict(g, clean, demo_now_ns() - t);
}
