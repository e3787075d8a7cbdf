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
	bool http;     /* HTTP/1.1: a 204 for each request head (demo_http_input()) */
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
 * HTTP mode: a connection's request-head parser, zeroed when the
 * connection opens. demo_http_input() sets @close once a request head
 * asked for the connection to be closed; the other fields are its own.
 */
struct demo_http {
	uint16_t len;   /* the current head's bytes so far, 0 between heads */
	uint8_t part;   /* what the next byte belongs to (enum http_part, demo_server.c) */
	uint8_t pos;    /* bytes of the current word, field name, option or length so far */
	uint8_t cand;   /* what these bytes may still spell: a version, field names, or options */
	uint8_t words;  /* the request line's words so far (4: more than 3) */
	uint8_t head;   /* what the head said so far: its version, its Connection options */
	bool line : 1;  /* the current line has a byte other than CR */
	bool gap : 1;   /* the current option has whitespace after its first bytes */
	bool fold : 1;  /* in a Connection field (a line that starts with whitespace continues it) */
	bool length : 1; /* in a Content-Length field (a line that starts with whitespace continues it) */
	bool close : 1; /* the last head counted closes the connection: nothing after it is read */
};

/*
 * HTTP mode on @n received bytes at @buf: count the request heads they
 * complete, carrying a head across calls in *@h. A head ends at its first
 * empty line; CR/LF before a request line are skipped; a line ends at LF,
 * a CR before it is dropped.
 *
 * Persistence (RFC 9112 9.3): a head closes the connection unless its
 * request line is "METHOD TARGET HTTP/1.x" (three words, x a digit) and
 * its Connection fields have no "close" option, and, for HTTP/1.0, have a
 * "keep-alive" option. Bodies are not read: a head that announces one (a
 * Transfer-Encoding field, or a Content-Length field whose value is not a
 * run of zeros between optional whitespace, on one line; several such
 * fields must all be) closes, so that its body is never read as a request
 * (RFC 9112 6.3). A field line with whitespace in its name (before its
 * colon, or with no colon) is invalid and closes (RFC 9112 5.1). Connection fields are matched by name without
 * regard to case; each value is a comma-separated list of options, each
 * between optional whitespace and compared without regard to case; the
 * field may appear on several lines, and a line that starts with
 * whitespace continues the field above (obs-fold, read as a space). A
 * bare CR counts as a space (RFC 9112 2.2), and so does a NUL in a field
 * line (RFC 9110 5.5: "Connection: close\0" closes). An unknown version
 * (HTTP/2.0, HTTP/0.9, "http/1.1", no version) closes.
 *
 * Returns the heads completed, each to be answered (demo_http_reply_span()),
 * or -1 (a protocol error) once a head is longer than DEMO_HTTP_MAX_HEAD
 * bytes or more than DEMO_HTTP_MAX_BATCH complete at once. When a head
 * closes the connection, it is the last one counted: h->close is set, the
 * bytes after it are not read (nor any later call's: 0 then). O(@n), no
 * allocation.
 */
int demo_http_input(const char *buf, size_t n, struct demo_http *h);

/*
 * The replies to @heads request heads (at most DEMO_HTTP_MAX_BATCH): bytes
 * [*@from, *@to) of demo_http_replies(). Each is DEMO_HTTP_REPLY
 * ("Connection: keep-alive"), but with @close the last one is
 * DEMO_HTTP_REPLY_CLOSE ("Connection: close"). Empty for @heads <= 0.
 */
void demo_http_reply_span(int heads, bool close, uint16_t *from, uint16_t *to);

/* DEMO_HTTP_MAX_BATCH DEMO_HTTP_REPLYs back to back, then one DEMO_HTTP_REPLY_CLOSE. */
const char *demo_http_replies(void);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_DEMO_SERVER_H */
