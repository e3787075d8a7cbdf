/* SPDX-License-Identifier: MIT */
/*
 * tools/demo/demo_server.h - what the two idle-timeout servers (idle_server.c
 * on the C loop API, idle_server.cpp on twheel++) share besides the
 * protocol: their options, the listening sockets, the SO_REUSEPORT worker
 * processes and the parent that forwards signals and reaps them. So both
 * take the same flags and behave the same outside their loop. Include it
 * once, after defining DEMO_SERVER_NAME; the includer defines
 *   static int run_worker(int lfd, unsigned worker, int ready_fd);
 * which runs one worker's loop and returns its exit status. C11 and C++17.
 */
#ifndef TWHEEL_DEMO_SERVER_H
#define TWHEEL_DEMO_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_common.h"

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

static struct opts o; /* defaults set by parse_args() */

static int run_worker(int lfd, unsigned worker, int ready_fd);

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
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr = o.bind;
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
		"usage: " DEMO_SERVER_NAME " [options]\n"
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
	o.port = DEMO_DEFAULT_PORT;
	o.idle_ms = DEMO_DEFAULT_IDLE_MS;
	o.tick_us = 1000;
	o.workers = 1;
	o.backlog = 4096;
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
	int *lfds = (int *)calloc(o.workers, sizeof(*lfds));
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
	pid_t *pids = (pid_t *)calloc(o.workers, sizeof(*pids));
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

#endif /* TWHEEL_DEMO_SERVER_H */
