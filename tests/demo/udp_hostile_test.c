/* SPDX-License-Identifier: MIT */
/*
 * tests/demo/udp_hostile_test.c - udp-session-server (demo/udp_server.c)
 * under datagrams a hostile client crafts. Starts the server given as its
 * first argument on a free loopback port and runs one of:
 *
 *   lengths  Datagrams of 23, 25, 1500 and 65507 bytes whose first 24
 *            bytes are a valid UDP_DATA (or UDP_BYE, UDP_STATS) message:
 *            each is counted bad and changes no session. It opens none,
 *            closes none, pushes no idle timeout back (the session's
 *            notice arrives less than 1.6 s after its one valid datagram at
 *            a 1 s timeout, though an oversized DATA came 0.6 s after it)
 *            and moves no reply address (the notice reaches the socket of
 *            the valid datagram, not the other). The 24-byte one opens one.
 *
 * Exit 0 pass, 1 fail, 77 skip (io_uring refused), 2 usage.
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "udp_session.h"

#define MAX_SESSIONS 65536

static int fails;

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                  \
		if (!(cond)) {                                                                                \
			fails++;                                                                              \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                           \
			printf(__VA_ARGS__);                                                                  \
			printf("\n");                                                                         \
		}                                                                                             \
	} while (0)

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- The server ------------------------------------------------------------------ */

struct server {
	pid_t pid;
	FILE *out; /* its stdout */
	struct sockaddr_in addr;
	int ctl;   /* our socket for STATS requests and replies */
};

/* Start @path with an idle timeout of @idle_ms, a table of MAX_SESSIONS
 * and @extra (an option or NULL), and wait for its ready line. */
static void server_start(struct server *s, const char *path, unsigned idle_ms, const char *extra)
{
	int p[2];
	if (pipe(p) != 0)
		die("pipe");
	char idle[16], max[16];
	snprintf(idle, sizeof(idle), "%u", idle_ms);
	snprintf(max, sizeof(max), "%u", MAX_SESSIONS);
	const char *argv[] = { path, "--port", "0", "--idle-ms", idle, "--max-sessions", max, extra, NULL };
	fflush(stdout);
	s->pid = fork();
	if (s->pid < 0)
		die("fork");
	if (s->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	s->out = fdopen(p[0], "r");
	char line[512];
	unsigned port = 0;
	while (!port && fgets(line, sizeof(line), s->out)) {
		const char *r = strstr(line, "ready: listening on 127.0.0.1:");
		if (r)
			port = (unsigned)strtoul(r + strlen("ready: listening on 127.0.0.1:"), NULL, 10);
	}
	if (!port) {
		int st;
		waitpid(s->pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			printf("SKIP: io_uring refused\n");
			exit(77);
		}
		printf("FAIL: the server exited (status %d) without a ready line\n", st);
		exit(1);
	}
	s->addr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
					.sin_addr = { .s_addr = htonl(INADDR_LOOPBACK) } };
	s->ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->ctl < 0)
		die("socket");
}

/* SIGTERM; the server must exit 0 after its last STATS line with no session left. */
static void server_stop(struct server *s)
{
	kill(s->pid, SIGTERM);
	char line[4096];
	bool clean = false;
	while (fgets(line, sizeof(line), s->out))
		if (!strncmp(line, "STATS ", 6))
			clean = strstr(line, " conns=0 timers=0 ") != NULL;
	int st;
	waitpid(s->pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server's exit status %d after SIGTERM", st);
	CHECK(clean, "the server's last STATS line shows sessions or timers left");
	fclose(s->out);
	close(s->ctl);
}

struct stats {
	uint64_t conns, opened, rx, bad, byes, refused, rx_dropped, cpu_us, fire_max_us;
};

static uint64_t key_of(const char *line, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), " %s=", key);
	const char *p = strstr(line, k);
	if (!p) {
		printf("FAIL: no %s in the server's STATS line: %s\n", key, line);
		exit(1);
	}
	return strtoull(p + strlen(k), NULL, 10);
}

/* Ask for STATS and wait for the reply (5 s at most). */
static struct stats stats_get(const struct server *s)
{
	struct udp_msg m = { .magic = UDP_MAGIC, .type = UDP_STATS };
	if (sendto(s->ctl, &m, sizeof(m), 0, (const struct sockaddr *)&s->addr, sizeof(s->addr)) != sizeof(m))
		die("send STATS");
	struct pollfd pfd = { .fd = s->ctl, .events = POLLIN };
	if (poll(&pfd, 1, 5000) != 1) {
		printf("FAIL: no STATS reply within 5 s\n");
		exit(1);
	}
	char line[4096];
	ssize_t n = recv(s->ctl, line, sizeof(line) - 1, 0);
	if (n <= 0)
		die("recv STATS");
	line[n] = 0;
	return (struct stats){
		.conns = key_of(line, "conns"), .opened = key_of(line, "opened"), .rx = key_of(line, "rx"),
		.bad = key_of(line, "bad"), .byes = key_of(line, "byes"), .refused = key_of(line, "refused"),
		.rx_dropped = key_of(line, "rx_dropped"),
		.cpu_us = key_of(line, "utime_us") + key_of(line, "stime_us"),
		.fire_max_us = key_of(line, "fire_max_us"),
	};
}

static int data_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	int bytes = 8 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	return fd;
}

/* ---- lengths ---------------------------------------------------------------------- */

static unsigned char big[65507];

/* @len bytes from @fd whose first 24 are a valid message of @type for @id. */
static void send_len(const struct server *s, int fd, uint8_t type, uint64_t id, size_t len)
{
	struct udp_msg m = { .magic = UDP_MAGIC, .type = type, .id = id };
	memset(big, 0xA5, sizeof(big));
	memcpy(big, &m, len < sizeof(m) ? len : sizeof(m));
	if (sendto(fd, big, len, 0, (const struct sockaddr *)&s->addr, sizeof(s->addr)) != (ssize_t)len)
		die("sendto");
}

/* A UDP_CLOSED notice for @id on @fd within @ms; its arrival time, or 0. */
static uint64_t notice_wait(int fd, uint64_t id, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	while (poll(&pfd, 1, ms) == 1) {
		struct udp_msg m;
		if (recv(fd, &m, sizeof(m), 0) == sizeof(m) && m.magic == UDP_MAGIC && m.type == UDP_CLOSED &&
		    m.id == id)
			return now_us();
	}
	return 0;
}

static void test_lengths(const char *path)
{
	struct server s;
	server_start(&s, path, 1000, NULL);
	int a = data_socket(), b = data_socket();
	static const size_t lens[] = { 23, 25, 1500, 65507 };

	/* no session opened by a DATA of the wrong length, nor a STATS answered */
	for (unsigned i = 0; i < 4; i++)
		send_len(&s, a, UDP_DATA, 1000 + i, lens[i]);
	send_len(&s, s.ctl, UDP_STATS, 0, 25);
	struct stats st = stats_get(&s); /* the first reply read is this one's: no other came */
	CHECK(st.bad == 5 && st.conns == 0 && st.opened == 0 && st.refused == 0,
	      "after DATA of 23, 25, 1500, 65507 bytes and STATS of 25: bad=%" PRIu64 " conns=%" PRIu64
	      " opened=%" PRIu64 ", expected bad=5 conns=0 opened=0",
	      st.bad, st.conns, st.opened);

	/* the 24-byte one opens its session; oversized BYEs close nothing */
	send_len(&s, a, UDP_DATA, 2000, 24);
	uint64_t t_open = now_us();
	st = stats_get(&s);
	CHECK(st.conns == 1 && st.opened == 1 && st.bad == 5, "after a 24-byte DATA: conns=%" PRIu64
	      " opened=%" PRIu64 " bad=%" PRIu64 ", expected 1, 1, 5", st.conns, st.opened, st.bad);
	for (unsigned i = 0; i < 4; i++)
		send_len(&s, a, UDP_BYE, 2000, lens[i]);
	st = stats_get(&s);
	CHECK(st.conns == 1 && st.byes == 0 && st.bad == 9, "after BYEs of 23, 25, 1500, 65507 bytes: conns=%"
	      PRIu64 " byes=%" PRIu64 " bad=%" PRIu64 ", expected 1, 0, 9", st.conns, st.byes, st.bad);

	/* 0.6 s in, oversized DATAs from another socket: no timeout pushed back, no address moved */
	usleep(600000);
	for (unsigned i = 1; i < 4; i++)
		send_len(&s, b, UDP_DATA, 2000, lens[i]);
	st = stats_get(&s);
	CHECK(st.conns == 1 && st.bad == 12, "after oversized DATAs from another socket: conns=%" PRIu64
	      " bad=%" PRIu64 ", expected 1, 12", st.conns, st.bad);
	uint64_t t_closed = notice_wait(a, 2000, 3000);
	CHECK(t_closed, "no UDP_CLOSED notice on the socket of the session's valid datagram");
	if (t_closed)
		CHECK(t_closed - t_open < 1600000, "the notice came %" PRIu64 " ms after the session's one"
		      " valid datagram (1 s timeout): an oversized DATA pushed it back", (t_closed - t_open) / 1000);
	CHECK(!notice_wait(b, 2000, 100), "a notice went to the socket of the oversized DATAs");
	st = stats_get(&s);
	CHECK(st.conns == 0 && st.opened == 1 && st.bad == 12 && st.rx_dropped == 0,
	      "at the end: conns=%" PRIu64 " opened=%" PRIu64 " bad=%" PRIu64 " rx_dropped=%" PRIu64
	      ", expected 0, 1, 12, 0", st.conns, st.opened, st.bad, st.rx_dropped);
	close(a);
	close(b);
	server_stop(&s);
}

int main(int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[2], "lengths")) {
		fprintf(stderr, "usage: %s UDP-SESSION-SERVER lengths\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	test_lengths(argv[1]);
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
