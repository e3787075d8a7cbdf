/* SPDX-License-Identifier: MIT */
/*
 * demo/demo_server.h - what the two idle-timeout servers (idle_server.c
 * on the C loop API, idle_server.cpp on twheel++) share besides the
 * protocol: their options, the listening sockets, the SO_REUSEPORT worker
 * processes and the parent that forwards signals and reaps them
 * (demo_server.c). So both take the same flags and behave the same outside
 * their loop. C11 and C++17.
 */
#ifndef TWHEEL_DEMO_SERVER_H
#define TWHEEL_DEMO_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "demo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct demo_options {
	struct demo_addr bind; /* its port is set per socket */
	uint16_t port;
	uint64_t idle_ms;
	uint64_t tick_us;
	unsigned workers;
	unsigned backlog;
	rlim_t nofile; /* 0: as high as allowed */
	bool heartbeat;
	bool http;     /* HTTP/1.1 keep-alive: a 204 for each request head */
	bool quiet;
	const char *trace; /* per-connection timing, one file per worker */
	uint32_t ring_bufs; /* provided receive buffers a worker, 0: one per connection */
};

/* The command line, parsed by demo_server_main() before any worker runs. */
extern struct demo_options demo_opts;

/*
 * Runs one worker's loop on the listening socket @lfd; writes one byte to
 * @ready_fd (when not -1) once it accepts; returns its exit status.
 */
typedef int (*demo_worker_fn)(int lfd, unsigned worker, int ready_fd);

/*
 * The servers' main(): parse the options (@name in the usage text), raise
 * the descriptor limit, block the signals the workers read from a signalfd,
 * open the listening sockets, then run @run_worker in this process (one
 * worker) or in forked ones, forwarding signals to them and reaping them.
 * Returns the exit status.
 */
int demo_server_main(int argc, char **argv, const char *name, demo_worker_fn run_worker);

/*
 * The heartbeat protocol on @n received bytes at @buf: count the lines that
 * are exactly DEMO_PING, carrying a line across calls in *@line_len (its
 * length so far) and @line (its first DEMO_PING_LEN bytes); then write one
 * DEMO_PONG per PING at the start of @buf (a PING takes as many bytes as a
 * PONG, so they fit). Returns the bytes written, or -1 (nothing written)
 * once a line is longer than DEMO_MAX_LINE.
 */
int demo_heartbeat_input(char *buf, size_t n, char line[DEMO_PING_LEN], uint16_t *line_len);

/* HTTP mode: the most requests one read may complete (a protocol error beyond). */
#define DEMO_HTTP_MAX_BATCH 256

/*
 * HTTP mode on @n received bytes at @buf: count the request heads they
 * complete (a head ends at its first empty line; CR/LF before a request
 * line are skipped; a line ends at LF, a CR before it is dropped),
 * carrying a head across calls in *@state (0 at the start of a
 * connection: the head's length so far and whether the current line has
 * a byte other than CR). Returns the heads completed, each to be answered
 * with DEMO_HTTP_REPLY, or -1 once a head is longer than DEMO_HTTP_MAX_HEAD
 * bytes or more than DEMO_HTTP_MAX_BATCH complete at once.
 */
int demo_http_input(const char *buf, size_t n, uint16_t *state);

/* DEMO_HTTP_MAX_BATCH DEMO_HTTP_REPLYs back to back: k replies are its first k * DEMO_HTTP_REPLY_LEN bytes. */
const char *demo_http_replies(void);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_DEMO_SERVER_H */
