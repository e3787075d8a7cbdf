/* SPDX-License-Identifier: MIT */
/*
 * demo/demo_common.h - what the idle-timeout servers (C and C++) and
 * the load generator share: the wire protocol, the STATS line, the file
 * descriptor limit, the clock, the PRNG and small parsers (the command line
 * is args.h's). Header-only, C11 and C++17.
 *
 * Protocol (TCP over IPv4 or IPv6, loopback only)
 *   echo mode       every byte read is written back.
 *   heartbeat mode  newline-terminated lines (a CR before the LF is not
 *                   part of the line); "PING" is answered "PONG\n",
 *                   other lines are consumed; a line longer than
 *                   DEMO_MAX_LINE bytes is malformed and closes the
 *                   connection.
 *   HTTP mode       (--http) HTTP/1.1 with RFC 9112's persistence: each
 *                   complete GET or HEAD request head (up to a blank line;
 *                   empty lines before its request line are skipped, a
 *                   bare LF ends a line too) is answered a 204 with no body and a
 *                   Date field (RFC 9110 6.6.1),
 *                   DEMO_HTTP_REPLY ("Connection: keep-alive"), or
 *                   DEMO_HTTP_REPLY_CLOSE to a request that closes the
 *                   connection ("Connection: close", HTTP/1.0 without
 *                   keep-alive: demo_http_input() in demo_server.h),
 *                   after which the server reads no more requests and
 *                   closes; a request with a body, which the server does
 *                   not read, gets a 413 (Content-Length) or a 411
 *                   (chunked) and the close; an invalid request (RFC 9112: no Host in
 *                   HTTP/1.1, a bad request line, field name or
 *                   framing) gets a 400 and the close, OPTIONS a 200 with
 *                   "Allow: GET, HEAD, OPTIONS" and the close, any other
 *                   method (CONNECT, POST, "get", ...) or a transfer coding
 *                   not chunked a 501 and the close (RFC 9110 9.1: not
 *                   implemented), a GET or HEAD with an If-Match of entity
 *                   tags a 412, with "If-None-Match: *" a 304 (RFC 9110
 *                   13), an "https" target a 421 (no TLS here: RFC 9110
 *                   7.4), HTTP/2.0 a 505, a head longer
 *                   than DEMO_HTTP_MAX_HEAD bytes a 414 or 431 and the
 *                   close. The generator's ping is
 *                   DEMO_HTTP_REQ; a reply is a head that starts with
 *                   DEMO_HTTP_STATUS and ends at its blank line ("\r\n\r\n"),
 *                   whatever headers it holds (nginx adds Server, Date,
 *                   Connection), so foreign HTTP servers answer it too.
 *   A read that completes a message counts as activity and re-arms the
 *   connection's idle timer: in echo mode any bytes, in heartbeat mode a
 *   line, in HTTP mode a request head (so a slow client that trickles a
 *   partial line or head, or only empty lines between heads, has one idle
 *   timeout to complete it); a connection without activity for the idle
 *   timeout is closed by the server.
 *   A connection whose first read is exactly "STATS\n" is a control
 *   connection: it is taken out of the counts (its timer deleted), gets one
 *   STATS line (below) and is closed. The load generator uses it to check
 *   that the server holds no connection and no pending timer at the end.
 *
 * STATS line: "STATS key=value key=value ...\n" with at least
 *   worker, workers, pid, conns (data connections open), timers (pending
 *   timers on the worker's wheel), accepted, idle_closed, peer_closed,
 *   errors, emfile (accepts refused for lack of descriptors), utime_us,
 *   stime_us (getrusage of the worker process).
 */
#ifndef TWHEEL_DEMO_COMMON_H
#define TWHEEL_DEMO_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEMO_DEFAULT_PORT 7000
#define DEMO_DEFAULT_IDLE_MS 2000
#define DEMO_MAX_LINE 256
#define DEMO_STATS_REQ "STATS\n"
#define DEMO_STATS_REQ_LEN 6
/* Longest STATS line, newline included. */
#define DEMO_STATS_MAX 2048
#define DEMO_PING "PING\n"
#define DEMO_PONG "PONG\n"
#define DEMO_PING_LEN 5
/* HTTP mode: the generator's ping, the servers' answer, what a reply must start with. */
#define DEMO_HTTP_REQ "GET / HTTP/1.1\r\nHost: idle\r\n\r\n"
#define DEMO_HTTP_REQ_LEN 30
/* (each reply's Date field says when it was made, to the second: RFC 9110 6.6.1) */
#define DEMO_HTTP_REPLY "HTTP/1.1 204 No Content\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n" \
	"Connection: keep-alive\r\n\r\n"
#define DEMO_HTTP_REPLY_LEN 88
/* HTTP mode: the servers' answer to the request that closes the connection. */
#define DEMO_HTTP_REPLY_CLOSE "HTTP/1.1 204 No Content\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n" \
	"Connection: close\r\n\r\n"
#define DEMO_HTTP_REPLY_CLOSE_LEN 83
/* The Date field's value (IMF-fixdate, RFC 9110 5.6.7): 29 bytes. */
#define DEMO_HTTP_DATE_LEN 29
#define DEMO_HTTP_STATUS "HTTP/1.1 204 "
#define DEMO_HTTP_STATUS_LEN 13
/* The longest head either side accepts, its blank line included. */
#define DEMO_HTTP_MAX_HEAD 1024
/* the TCP servers' SO_SNDBUF (the kernel doubles it): see listen_socket() */
#define DEMO_SNDBUF 16384
/* Echo mode: every ping is "ping cccccccc ssss\n", 19 bytes (conn id, seq in hex). */
#define DEMO_ECHO_MSG_LEN 19

/* Exit code of both programs when io_uring is refused (the meson "skip"). */
#define DEMO_EXIT_NO_URING 77

/*
 * A loopback address of either family with a port: what --bind (servers)
 * and --host (load generator) accept. @text is the address as given back
 * to the user, with brackets around an IPv6 one ("[::1]") so that
 * "text:port" reads unambiguously.
 */
struct demo_addr {
	union {
		struct sockaddr sa;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} u;
	socklen_t len;
	char text[INET6_ADDRSTRLEN + 2];
};

/*
 * Parse @s as an IPv4 loopback address (127.x.y.z) or the IPv6 loopback
 * address (::1, brackets optional) into @a with port @port. Returns 0, or
 * -1 if @s is not one of them.
 */
static inline int demo_addr_parse(const char *s, uint16_t port, struct demo_addr *a)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(s);
	memset(a, 0, sizeof(*a));
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']' && n - 2 < sizeof(buf)) {
		memcpy(buf, s + 1, n - 2);
		buf[n - 2] = 0;
		s = buf;
	}
	if (inet_pton(AF_INET, s, &a->u.in4.sin_addr) == 1) {
		if ((ntohl(a->u.in4.sin_addr.s_addr) >> 24) != 127)
			return -1;
		a->u.in4.sin_family = AF_INET;
		a->u.in4.sin_port = htons(port);
		a->len = sizeof(a->u.in4);
		inet_ntop(AF_INET, &a->u.in4.sin_addr, a->text, sizeof(a->text));
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a->u.in6.sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&a->u.in6.sin6_addr))
			return -1;
		a->u.in6.sin6_family = AF_INET6;
		a->u.in6.sin6_port = htons(port);
		a->len = sizeof(a->u.in6);
		strcpy(a->text, "[::1]");
		return 0;
	}
	return -1;
}

static inline int demo_addr_family(const struct demo_addr *a)
{
	return a->u.sa.sa_family;
}

static inline void demo_addr_set_port(struct demo_addr *a, uint16_t port)
{
	if (demo_addr_family(a) == AF_INET6)
		a->u.in6.sin6_port = htons(port);
	else
		a->u.in4.sin_port = htons(port);
}

/* An address of either family, as getsockname() and getpeername() fill it. */
union demo_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/* Room for demo_sockaddr_text()'s text: "[", an IPv6 address, "]:65535". */
#define DEMO_SOCKADDR_TEXT_LEN (INET6_ADDRSTRLEN + 8)

/*
 * @a as text into @buf (DEMO_SOCKADDR_TEXT_LEN bytes): "127.0.0.1:40000"
 * or "[::1]:40000", the form --trace writes on both sides of a connection;
 * "-" if @a holds neither family (never filled: the call failed).
 */
static inline const char *demo_sockaddr_text(const union demo_sockaddr *a, char *buf)
{
	char ip[INET6_ADDRSTRLEN];
	if (a->sa.sa_family == AF_INET && inet_ntop(AF_INET, &a->in4.sin_addr, ip, sizeof(ip)))
		snprintf(buf, DEMO_SOCKADDR_TEXT_LEN, "%s:%u", ip, ntohs(a->in4.sin_port));
	else if (a->sa.sa_family == AF_INET6 && inet_ntop(AF_INET6, &a->in6.sin6_addr, ip, sizeof(ip)))
		snprintf(buf, DEMO_SOCKADDR_TEXT_LEN, "[%s]:%u", ip, ntohs(a->in6.sin6_port));
	else
		snprintf(buf, DEMO_SOCKADDR_TEXT_LEN, "-");
	return buf;
}

/* The local port of a bound socket of either family (0 on error). */
static inline uint16_t demo_sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static inline uint64_t demo_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The generator's PRNG: splitmix64 seeds xorshift64* (the benchmarks' own,
 * copied so that the demo stands alone). demo_rng_seed() gives stream
 * @stream (0, 1, ...) of seed @seed; demo_rng_below() is uniform in [0, n)
 * by multiply-high (bias < 2^-32).
 */
struct demo_rng {
	uint64_t s; /* never 0 */
};

static inline struct demo_rng demo_rng_seed(uint64_t seed, uint64_t stream)
{
	uint64_t z = seed + stream * UINT64_C(0x632BE59BD9B4E019) + UINT64_C(0x9E3779B97F4A7C15);
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	struct demo_rng r = { z ^ (z >> 31) };
	if (!r.s)
		r.s = 1;
	return r;
}

static inline uint32_t demo_rng_below(struct demo_rng *r, uint32_t n)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return (uint32_t)((((r->s * UINT64_C(0x2545F4914F6CDD1D)) >> 32) * (uint64_t)n) >> 32);
}

/*
 * The signals a server's loop reads from a signalfd, into @set: SIGTERM,
 * SIGUSR1 and SIGINT, but SIGINT only if it was not inherited as ignored.
 * A shell starts a background job with SIGINT ignored, so that a Ctrl-C
 * at the terminal goes to the foreground job alone; a server that blocked
 * it and read it anyway (a blocked signal is queued whatever its
 * disposition) shut down at a Ctrl-C meant for another program. SIGTERM
 * stays taken when ignored: it is how a supervisor stops a server.
 */
static inline void demo_signal_set(sigset_t *set)
{
	struct sigaction old;
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	if (sigaction(SIGINT, NULL, &old) != 0 || old.sa_handler != SIG_IGN)
		sigaddset(set, SIGINT);
}

/*
 * Raise the soft RLIMIT_NOFILE to the hard limit, and the hard limit to
 * @want (or as close as fs.nr_open allows) where the process is privileged.
 * Returns the soft limit now in force. Never fails: a limit that cannot be
 * raised is left as it was.
 */
static inline rlim_t demo_raise_nofile(rlim_t want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
		struct rlimit up = { want, want };
		FILE *f = fopen("/proc/sys/fs/nr_open", "r");
		unsigned long nr_open = 0;
		if (f) {
			if (fscanf(f, "%lu", &nr_open) != 1)
				nr_open = 0;
			fclose(f);
		}
		if (nr_open && up.rlim_max > nr_open)
			up.rlim_cur = up.rlim_max = nr_open;
		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	if (rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur;
}

/* This process's resident set in KiB (/proc/self/statm), 0 if unknown. */
static inline uint64_t demo_rss_kb(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE) / 1024u;
}

/*
 * The load a run was measured under, as the generator can know it: the
 * machine's CPU time (/proc/stat's "cpu" line: busy, stolen by a
 * hypervisor, all) and the time some task waited for a CPU
 * (/proc/pressure/cpu "some", Linux 4.20+ with PSI). Read once before the
 * run and once after; demo_machine_load() gives the difference.
 */
struct demo_machine {
	uint64_t busy, steal, total; /* ticks (USER_HZ), every CPU summed */
	uint64_t wait_us;            /* PSI cpu "some" total */
	uint64_t at_ns;              /* CLOCK_MONOTONIC */
	bool stat, psi;              /* which of the two could be read */
};

static inline struct demo_machine demo_machine_read(void)
{
	struct demo_machine m;
	memset(&m, 0, sizeof(m));
	m.at_ns = demo_now_ns();
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	if (f) {
		/* user nice system idle iowait irq softirq steal (guest is in user) */
		m.stat = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
				&v[5], &v[6], &v[7]) == 8;
		fclose(f);
	}
	m.busy = v[0] + v[1] + v[2] + v[5] + v[6];
	m.steal = v[7];
	m.total = m.busy + v[3] + v[4] + v[7];
	f = fopen("/proc/pressure/cpu", "r");
	if (f) {
		unsigned long long us = 0;
		m.psi = fscanf(f, "some avg10=%*f avg60=%*f avg300=%*f total=%llu", &us) == 1;
		m.wait_us = us;
		fclose(f);
	}
	return m;
}

/* The load over a run, from demo_machine_read() before (@a) and after (@b) it. */
struct demo_load {
	long ncpu;
	double busy_pct;    /* of all CPUs' time, busy */
	double others_cpus; /* CPUs busy besides @ours_cpu_s CPU seconds of the programs measured */
	double steal_pct;   /* of all CPUs' time, taken by the hypervisor */
	double wait_pct;    /* of the run's wall time, some task waited for a CPU (-1: no PSI) */
	bool known;
};

static inline struct demo_load demo_machine_load(const struct demo_machine *a, const struct demo_machine *b,
						 double ours_cpu_s)
{
	struct demo_load l;
	memset(&l, 0, sizeof(l));
	l.ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	l.wait_pct = -1;
	double wall = (double)(b->at_ns - a->at_ns) / 1e9;
	if (!a->stat || !b->stat || b->total <= a->total || wall <= 0 || l.ncpu < 1)
		return l;
	double all = (double)(b->total - a->total);
	l.known = true;
	l.busy_pct = (double)(b->busy - a->busy) * 100 / all;
	l.others_cpus = l.busy_pct / 100 * (double)l.ncpu - ours_cpu_s / wall;
	if (l.others_cpus < 0)
		l.others_cpus = 0;
	l.steal_pct = (double)(b->steal - a->steal) * 100 / all;
	if (a->psi && b->psi)
		l.wait_pct = (double)(b->wait_us - a->wait_us) / 1e4 / wall;
	return l;
}

/* The summary's "machine" lines for @l, the programs measured being @ours. */
static inline void demo_load_print(const struct demo_load *l, const char *ours)
{
	if (!l->known)
		return;
	printf("  machine        %ld CPUs %.0f%% busy, %.2f of them besides %s,\n", l->ncpu, l->busy_pct,
	       l->others_cpus, ours);
	if (l->wait_pct >= 0)
		printf("                 %.0f%% stolen by a hypervisor; some task waited for a CPU %.0f%% of the run\n",
		       l->steal_pct, l->wait_pct);
	else
		printf("                 %.0f%% stolen by a hypervisor\n", l->steal_pct);
}

/*
 * Find "key=" in a STATS line and parse the unsigned value after it: one
 * run of decimal digits that fits 64 bits, ended by a space, a line end
 * or the string's end. Returns 0, -ENOENT (no such key), or -EINVAL (a
 * value that is not such a number: "conns=", "conns=x", "conns=-1",
 * "conns=5x"; @out untouched). A server's line is input like any other:
 * a count it does not give is unknown, never 0.
 */
static inline int demo_stats_get(const char *line, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			const char *v = p + kl + 1;
			char *end;
			if (*v < '0' || *v > '9')
				return -EINVAL;
			errno = 0;
			unsigned long long x = strtoull(v, &end, 10);
			if (errno == ERANGE || (*end && *end != ' ' && *end != '\n' && *end != '\r'))
				return -EINVAL;
			*out = x;
			return 0;
		}
	}
	return -ENOENT;
}

/* The echo-mode message number @seq of connection @id, written to @buf (20 bytes). */
static inline void demo_echo_msg(char buf[DEMO_ECHO_MSG_LEN + 1], uint32_t id, uint32_t seq)
{
	snprintf(buf, DEMO_ECHO_MSG_LEN + 1, "ping %08x %04x\n", id, seq & 0xffffu);
}

/*
 * A log-linear latency histogram (microseconds): exact below 64 us, then 32
 * buckets per power of two (3% resolution) up to 2^40 us. Used by the
 * servers for their own timer lateness, close and accept delays (reported
 * in the STATS line) and by the generator for its own lag. 4.6 KiB.
 */
#define DEMO_HIST_SUB 32u
#define DEMO_HIST_N (64u + (40u - 6u) * DEMO_HIST_SUB)

struct demo_hist {
	uint64_t n, max_us;
	uint32_t b[DEMO_HIST_N];
};

static inline unsigned demo_hist_idx(uint64_t us)
{
	if (us < 64)
		return (unsigned)us;
	unsigned e = 63u - (unsigned)__builtin_clzll(us); /* 6 .. 63 */
	if (e >= 40)
		return DEMO_HIST_N - 1;
	return 64u + (e - 6u) * DEMO_HIST_SUB + (unsigned)((us >> (e - 5u)) & (DEMO_HIST_SUB - 1u));
}

/* The largest value that falls into bucket @i (a conservative percentile). */
static inline uint64_t demo_hist_top(unsigned i)
{
	if (i < 64)
		return i;
	unsigned e = 6u + (i - 64u) / DEMO_HIST_SUB, sub = (i - 64u) % DEMO_HIST_SUB;
	return ((uint64_t)(DEMO_HIST_SUB + sub + 1u) << (e - 5u)) - 1u;
}

/* Record @ns nanoseconds (negative values, impossible here, count as 0). */
static inline void demo_hist_add(struct demo_hist *h, int64_t ns)
{
	uint64_t us = ns > 0 ? (uint64_t)ns / 1000u : 0;
	h->b[demo_hist_idx(us)]++;
	h->n++;
	if (us > h->max_us)
		h->max_us = us;
}

/* The @p quantile (nearest rank, 0 < p <= 1) in us, never below the truth;
 * the exact maximum for p = 1; 0 when empty. */
static inline uint64_t demo_hist_pct(const struct demo_hist *h, double p)
{
	if (!h->n)
		return 0;
	uint64_t k = (uint64_t)(p * (double)h->n + 0.999999), seen = 0;
	if (k < 1)
		k = 1;
	if (k >= h->n)
		return h->max_us;
	for (unsigned i = 0; i < DEMO_HIST_N; i++) {
		seen += h->b[i];
		if (seen >= k) {
			uint64_t top = demo_hist_top(i);
			return top < h->max_us ? top : h->max_us;
		}
	}
	return h->max_us;
}

#endif /* TWHEEL_DEMO_COMMON_H */
