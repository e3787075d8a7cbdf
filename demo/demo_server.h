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
 * Runs one worker's loop on the listening socket @lfd; calls
 * demo_worker_ready(@ready_fd) once it accepts (its accept submitted and
 * not refused: after one iteration of its loop); returns its exit status.
 */
typedef int (*demo_worker_fn)(int lfd, unsigned worker, int ready_fd);

/*
 * A worker accepts: tell the parent (one byte to @ready_fd), or, run in the
 * parent's process (one worker), print the "ready" line. So the line
 * never comes from a server whose kernel refuses io_uring or its accept.
 */
void demo_worker_ready(int ready_fd);

/*
 * The servers' main(): block the signals the workers read from a signalfd
 * (first, so that none sent while the server starts is lost; SIGCHLD's
 * disposition back to the default), parse the options (@name in the usage
 * text), raise the descriptor limit, open the listening sockets, then run
 * @run_worker in this process (one worker) or in forked ones, forwarding
 * signals to them and reaping them; a forked worker gets SIGTERM when the
 * parent dies. Returns the exit status.
 */
int demo_server_main(int argc, char **argv, const char *name, demo_worker_fn run_worker);

/* What a worker does after an accept failed (demo_accept_failed()). */
enum demo_accept_next {
	DEMO_ACCEPT_AGAIN, /* that connection went away: accept the next one now */
	DEMO_ACCEPT_SKIP,  /* that connection's own error: counted in errors (line printed), and the same */
	DEMO_ACCEPT_PAUSE, /* out of descriptors or memory: pause, accept again once one is back */
	DEMO_ACCEPT_STOP,  /* the listening socket accepts no more: shut down (message printed) */
};

/*
 * An accept on worker @worker's listening socket @lfd failed with @err (a
 * positive errno): what now? AGAIN for ECONNABORTED (the client reset
 * it first), EINTR, EAGAIN and ECANCELED; SKIP for the errors accept(2)
 * passes on from the one connection being accepted (a network error
 * pending on it, or a firewall's refusal: EPROTO, EPERM, ENETDOWN,
 * EHOSTUNREACH, ...), one line each; PAUSE for EMFILE, ENFILE, ENOBUFS and
 * ENOMEM; STOP for any other, which every later accept would return too
 * (accepted again at once, it made the worker spin at full CPU writing
 * one line per failure): *@status is then the exit status, 77
 * (DEMO_EXIT_NO_URING) for an EINVAL while @lfd still listens (the
 * kernel refuses a multishot accept: before Linux 5.19), else 1, and one
 * line says why. O(1).
 */
enum demo_accept_next demo_accept_failed(int lfd, int err, unsigned worker, int *status);

/* Heartbeat mode: the most PINGs one read may complete (a protocol error beyond). */
#define DEMO_HEARTBEAT_MAX_BATCH 128

/*
 * The heartbeat protocol on @n received bytes at @buf: count the lines that
 * are exactly "PING" (ended by LF or CRLF, as telnet sends), carrying a line across calls in *@line_len (its
 * length so far) and @line (its first DEMO_PING_LEN bytes). Returns the
 * PINGs completed, each answered by a DEMO_PONG (demo_pongs()), or -1 once
 * a line is longer than DEMO_MAX_LINE (a CR before its LF not counted) or more than DEMO_HEARTBEAT_MAX_BATCH
 * PINGs complete at once. @buf is only read: a PING begun in an earlier
 * read may end in this one, so the PONGs can take more bytes than @n.
 * O(@n), no allocation.
 */
int demo_heartbeat_input(const char *buf, size_t n, char line[DEMO_PING_LEN], uint16_t *line_len);

/*
 * DEMO_HEARTBEAT_MAX_BATCH DEMO_PONGs in a row, constant (built at the
 * first call): the replies to k PINGs are its first k * DEMO_PING_LEN bytes.
 */
const char *demo_pongs(void);

/*
 * HTTP mode: the most requests one read may complete (a protocol error
 * beyond). A read of the servers is 512 bytes and a head that keeps the
 * connection at least 22 ("GET / HTTP/1.1\nHost:\n\n"), so one read
 * completes 25 at most: one begun in an earlier read, 23, and one that
 * closes. Each reply that closes has a block of DEMO_HTTP_MAX_BATCH
 * keep-alive replies before it (demo_http_replies()).
 */
#define DEMO_HTTP_MAX_BATCH 32
/* The shortest head that keeps the connection, as above. */
#define DEMO_HTTP_MIN_KEEP_HEAD 22
/* True if a read of @bytes completes at most DEMO_HTTP_MAX_BATCH heads. */
#define DEMO_HTTP_BATCH_COVERS(bytes) ((bytes) / DEMO_HTTP_MIN_KEEP_HEAD + 2 <= DEMO_HTTP_MAX_BATCH)

/* HTTP mode: the reply to a request head (demo_http_input(), demo_http_reply_span()). */
enum demo_http_reply {
	DEMO_HTTP_KEEP,         /* 204, "Connection: keep-alive" (DEMO_HTTP_REPLY) */
	DEMO_HTTP_CLOSE,        /* 204, "Connection: close" (DEMO_HTTP_REPLY_CLOSE), then the close */
	DEMO_HTTP_OPTIONS,      /* 200, "Allow: GET, HEAD, OPTIONS", "Connection: close": OPTIONS */
	DEMO_HTTP_NOT_MODIFIED, /* 304, "Connection: close": "If-None-Match: *" */
	DEMO_HTTP_BAD_REQUEST,  /* 400, "Connection: close": an invalid request */
	DEMO_HTTP_URI_TOO_LONG, /* 414, "Connection: close": a request line of DEMO_HTTP_MAX_HEAD bytes */
	DEMO_HTTP_TOO_LARGE,    /* 431, "Connection: close": a head longer than DEMO_HTTP_MAX_HEAD */
	DEMO_HTTP_NOT_IMPLEMENTED, /* 501, "Connection: close": a method but GET, HEAD, OPTIONS, */
				   /* a coding not chunked */
	DEMO_HTTP_VERSION_NOT_SUPPORTED, /* 505, "Connection: close": HTTP/x.y, x not 1 */
	DEMO_HTTP_LENGTH_REQUIRED, /* 411, "Connection: close": a chunked body (the server reads none) */
	DEMO_HTTP_CONTENT_TOO_LARGE, /* 413, "Connection: close": a Content-Length not zero (the same) */
	DEMO_HTTP_PRECONDITION_FAILED, /* 412, "Connection: close": an If-Match of entity tags */
	DEMO_HTTP_MISDIRECTED,  /* 421, "Connection: close": an "https" target (no TLS here) */
};

/*
 * HTTP mode: a connection's request-head parser, zeroed when the
 * connection opens. demo_http_input() sets @close once a request head
 * asked for the connection to be closed, or was refused, and @reply to
 * the reply that head gets; the other fields are its own.
 */
struct demo_http {
	uint16_t len;   /* the current head's bytes so far, 0 between heads */
	uint16_t head;  /* what the head said so far: its version, its Connection options, ... */
	uint16_t cand;  /* what the current bytes may still spell: a version, field names, or options */
	uint8_t part;   /* what the next byte belongs to (enum http_part, demo_server.c) */
	uint8_t field;  /* the field a line that starts with whitespace continues (0: none read) */
	uint8_t pos;    /* bytes of the current word, field name, option or length so far */
	uint8_t target; /* the request target's form so far (HTTP_TARGET_*, demo_server.c) */
	uint8_t words : 3; /* the request line's words so far (4: more than 3) */
	uint8_t reply : 4; /* the reply to the last head counted (enum demo_http_reply) */
	bool line : 1;  /* the current line has a byte other than CR */
	bool gap : 1;   /* the current option has whitespace after its first bytes */
	bool close : 1; /* the last head counted closes the connection: nothing after it is read */
	bool cr : 1;    /* the last byte was a CR: the next must be LF */
	uint8_t method : 3; /* the method: GET, HEAD, OPTIONS, CONNECT or another (HTTP_METHOD_*, demo_server.c) */
};

/*
 * HTTP mode on @n received bytes at @buf: count the request heads they
 * complete, carrying a head across calls in *@h. A head ends at its first
 * empty line; CR/LF before a request line are skipped; a line ends at LF,
 * a CR before it is dropped.
 *
 * The reply (h->reply) to each head (RFC 9112):
 *  - 400 Bad Request, and the connection closes, when the request is
 *    invalid: its request line is not "METHOD TARGET HTTP/x.y" (three
 *    words, x and y a digit; so HTTP/0.9's "GET /", "http/1.1"; the
 *    method a token, the target without control bytes: RFC 9112 3); its
 *    target is in none of RFC 9112 3.2's forms: "/" and a path
 *    (origin-form), a scheme and ":" (absolute-form; for "http" and
 *    "https", in any case, "//" and a host, not empty, without userinfo:
 *    RFC 9110 4.2.1, 4.2.2, 4.2.4; the authority host [":" port] as a
 *    Host value: a port of digits, an IP literal closed), host ":" port
 *    (read the same way) for CONNECT and "*" for OPTIONS only, each of URI bytes (RFC 3986: no
 *    "#", no byte above 0x7f, "%" and two hex digits); a
 *    field line has no colon or its name is not a token (empty, or with
 *    whitespace before its colon: 5.1); an HTTP/1.1 request has no Host
 *    field, or any request two, or one whose value is not uri-host
 *    [":" port] (RFC 3986: "a:b", "[::1", "user@a", whitespace inside:
 *    3.2); a CR not
 *    followed by LF anywhere in the head (2.2); a
 *    Content-Length is not one run of digits between optional
 *    whitespace, or comes twice (6.3); a
 *    Transfer-Encoding's last coding is not "chunked" (6.3), or "chunked"
 *    comes twice (7), or it is in an HTTP/1.0 request (6.1);
 *  - 501 Not Implemented, and the connection closes, when the method is
 *    not GET, HEAD or OPTIONS, the ones the server implements (RFC 9110
 *    9.1: POST, PUT, DELETE, CONNECT, TRACE, PATCH, any other token, and
 *    "get": methods are case-sensitive; a 2xx to a CONNECT would tell the
 *    client a tunnel is open, 9.3.6); or a transfer coding before the
 *    last "chunked" is another one ("gzip, chunked"): the server
 *    implements chunked alone (RFC 9112 6.1);
 *  - 421 Misdirected Request, and the connection closes, when the request
 *    is valid, of HTTP/1.x, and its target an "https" URI (any case):
 *    the servers have no TLS, and RFC 9110 7.4 says a request for an
 *    "https" resource "MUST be rejected" unless it came over a
 *    connection secured for its origin;
 *  - 505 HTTP Version Not Supported, and the connection closes, when
 *    the request is valid but its version's major is not 1 (HTTP/2.0,
 *    HTTP/0.9: RFC 9110 15.6.6); a later HTTP/1.x is read as HTTP/1.1
 *    (RFC 9110 2.5);
 *  - 413 Content Too Large, and the connection closes, when the request
 *    announces a body by a Content-Length other than zeros, and 411
 *    Length Required when by a Transfer-Encoding (RFC 9110 15.5.14,
 *    15.5.12): the server reads no bodies, so it takes no request that
 *    has one (a 2xx says the request, its content too, was received and
 *    accepted: 15.3), and, closing, it never reads a body as the next
 *    request (RFC 9112 6.3); "Expect: 100-continue" gets this final
 *    status at once, and no 100 (RFC 9110 10.1.1);
 *  - 200 OK with "Allow: GET, HEAD, OPTIONS" and "Content-Length: 0"
 *    (RFC 9110 9.3.7 asks for the Content-Length, which a 204 may not
 *    carry: 8.6), and the connection closes, to OPTIONS (its target "*"
 *    too): a read's replies are keep-alive 204s and one that closes;
 *  - for GET and HEAD, preconditions (RFC 9110 13.2; every target has a
 *    representation, empty, with no entity tag or date): 412 Precondition
 *    Failed, and the connection closes, when an If-Match field is a list
 *    of entity tags (none can match: 13.1.1), else 304 Not Modified, and
 *    the connection closes, when an If-None-Match field is "*" (13.1.2);
 *  - 204 and the close when the request closes the connection (9.3): a
 *    "close" connection option, or HTTP/1.0 without a "keep-alive" one;
 *  - 204 and the connection persists otherwise.
 * Connection fields are matched by name without regard to case; each
 * value is a comma-separated list of options (Transfer-Encoding's, of
 * codings), each between optional whitespace and compared without regard
 * to case; the field may appear on several lines, and a line that starts
 * with whitespace continues the field above (obs-fold, read as a space).
 * A NUL in a field value counts as a space (RFC 9110 5.5: "Connection:
 * close\0" closes); a bare CR, one not followed by LF, makes the request
 * invalid (RFC 9112 2.2), a 400.
 *
 * Returns the heads completed, each to be answered (demo_http_reply_span()).
 * A head longer than DEMO_HTTP_MAX_HEAD bytes counts as one, answered
 * 414 URI Too Long if it ran past the limit in its target, 501 Not
 * Implemented in its method (RFC 9112 3), 400 elsewhere in its request
 * line (whitespace before the target is no URI, and no version is that
 * long), else 431 Request Header Fields Too Large, and closes. When a head closes the connection,
 * it is the last one counted: h->close is set, the bytes after it are not
 * read (nor any later call's: 0 then). Returns -1 (a protocol error, no
 * reply) when more than DEMO_HTTP_MAX_BATCH heads complete at once. O(@n),
 * no allocation.
 */
int demo_http_input(const char *buf, size_t n, struct demo_http *h);

/*
 * The replies to @heads request heads (at most DEMO_HTTP_MAX_BATCH) that
 * demo_http_input() counted with @h: bytes [*@from, *@to) of
 * demo_http_replies(). Each is DEMO_HTTP_REPLY ("Connection: keep-alive")
 * but, when @h closes, the last one, @h->reply's. Empty for @heads <= 0.
 */
void demo_http_reply_span(int heads, const struct demo_http *h, uint16_t *from, uint16_t *to);

/*
 * The replies demo_http_reply_span() points into, with a Date field
 * (RFC 9110 6.6.1: an origin server with a clock sends one in every 2xx
 * and 4xx). There are two copies: demo_http_replies_hold() returns the
 * one of the current second (CLOCK_REALTIME_COARSE; of an earlier second
 * while the other is held), which stays unchanged, held, until
 * demo_http_replies_put() (call it once the send out of it completed, or
 * its connection went); demo_http_replies() is copy @copy. O(1), but
 * once a second a copy is written again (35,328 bytes: 12 replies that
 * close, each after DEMO_HTTP_MAX_BATCH keep-alive ones). Not thread-safe (one
 * worker, one thread).
 */
unsigned demo_http_replies_hold(void);
void demo_http_replies_put(unsigned copy);
const char *demo_http_replies(unsigned copy);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_DEMO_SERVER_H */
