/* SPDX-License-Identifier: MIT */
/* demo/demo_server.c - see demo_server.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "demo_common.h"
#include "demo_server.h"

struct demo_options demo_opts; /* defaults set by parse_args() */

/* ---- Setup ---------------------------------------------------------------------------- */

static int listen_socket(uint16_t port, bool reuseport)
{
	struct demo_addr *a = &demo_opts.bind;
	int fd = socket(demo_addr_family(a), SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (demo_addr_family(a) == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/*
	 * A client that sends and never reads leaves a connection's replies in
	 * its socket's send queue: with one send in flight, and nothing read
	 * until it went out, the queue is all a connection can hold, but the
	 * kernel's autotuning lets it grow to net.ipv4.tcp_wmem's maximum
	 * (4 MiB by default) for each such client. A fixed bound, which the
	 * accepted sockets inherit, holds it to what the server sends at once
	 * (a batch of HTTP replies, a STATS line: a few KiB); the kernel
	 * doubles it for its own bookkeeping.
	 */
	int sndbuf = DEMO_SNDBUF;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	demo_addr_set_port(a, port);
	if (bind(fd, &a->u.sa, a->len) != 0 || listen(fd, (int)demo_opts.backlog) != 0) {
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
		"  --bind ADDR      listen address, loopback only: 127.x.y.z or ::1 (127.0.0.1)\n"
		"  --port N         port, 0 = any free one (%d)\n"
		"  --idle-ms MS     close a connection silent this long (%d)\n"
		"  --heartbeat      heartbeat protocol: answer PING lines with PONG, nothing else\n"
		"  --http           HTTP/1.1: answer each GET or HEAD request head with\n"
		"                   \"HTTP/1.1 204 No Content\"; close after the reply to\n"
		"                   \"Connection: close\" or to HTTP/1.0 without \"Connection:\n"
		"                   keep-alive\"; OPTIONS gets a 200 with Allow and the close,\n"
		"                   any other method a 501, an invalid request a 400, a body\n"
		"                   (not read) a 413 or, chunked, a 411, each with the close\n"
		"  --workers K      K processes on SO_REUSEPORT sockets, one loop each (1)\n"
		"  --tick-us US     loop tick (1000)\n"
		"  --backlog N      listen backlog (4096)\n"
		"  --nofile N       set RLIMIT_NOFILE to N (default: as high as allowed)\n"
		"  --quiet          no start-up line\n"
		"  --trace PREFIX   write one line per idle-closed connection to PREFIX.<worker>:\n"
		"                   peer accept_ns accept_queue_ms deadline_ns fire_ns fin_ns freed_ns\n"
		"                   (CLOCK_MONOTONIC; demo/trace_join.py joins it with idle-load --trace)\n"
		"  --ring-bufs N    receive buffers in the worker's provided-buffer\n"
		"                   ring, a power of two up to 32768; 0: one per connection (1024)\n"
		"signals: SIGUSR1 prints STATS lines, SIGTERM/SIGINT shut down gracefully\n",
		name, DEMO_DEFAULT_PORT, DEMO_DEFAULT_IDLE_MS);
}

static void parse_args(int argc, char **argv, const char *name)
{
	const char *bind = "127.0.0.1";
	demo_opts.port = DEMO_DEFAULT_PORT;
	demo_opts.idle_ms = DEMO_DEFAULT_IDLE_MS;
	demo_opts.tick_us = 1000;
	demo_opts.workers = 1;
	demo_opts.backlog = 4096;
	demo_opts.ring_bufs = 1024;
	const struct args_opt opts[] = {
		ARGS_STR("bind", &bind),
		ARGS_NUM("port", &demo_opts.port, 0, 65535),
		ARGS_NUM("idle-ms", &demo_opts.idle_ms, 1, 86400000),
		ARGS_FLAG("heartbeat", &demo_opts.heartbeat),
		ARGS_FLAG("http", &demo_opts.http),
		ARGS_NUM("workers", &demo_opts.workers, 1, 256),
		ARGS_NUM("tick-us", &demo_opts.tick_us, 1, 1000000),
		ARGS_NUM("backlog", &demo_opts.backlog, 1, 65535),
		ARGS_NUM("nofile", &demo_opts.nofile, 16, 1u << 30),
		ARGS_FLAG("quiet", &demo_opts.quiet),
		ARGS_STR("trace", &demo_opts.trace),
		ARGS_NUM("ring-bufs", &demo_opts.ring_bufs, 0, 32768),
		ARGS_END,
	};
	args_parse(name, argc, argv, opts, usage);
	if (demo_opts.heartbeat && demo_opts.http)
		args_fail(name, "--heartbeat and --http are two protocols: one at most");
	if (demo_opts.ring_bufs & (demo_opts.ring_bufs - 1))
		args_fail(name, "--ring-bufs needs a power of two (or 0), not %u", (unsigned)demo_opts.ring_bufs);
	if (demo_addr_parse(bind, 0, &demo_opts.bind) != 0)
		args_fail(name, "--bind needs a loopback address (127.x.y.z or ::1), not '%s'", bind);
}

int demo_heartbeat_input(const char *buf, size_t n, char line[DEMO_PING_LEN], uint16_t *line_len)
{
	unsigned pings = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = buf[i];
		if (ch == '\n') {
			/* "PING" or "PING\r": a CR before the LF ends a line as well */
			bool ping = memcmp(line, DEMO_PING, DEMO_PING_LEN - 1) == 0 &&
				    (*line_len == DEMO_PING_LEN - 1 || (*line_len == DEMO_PING_LEN && line[4] == '\r'));
			if (ping && ++pings > DEMO_HEARTBEAT_MAX_BATCH)
				return -1;
			*line_len = 0;
			continue;
		}
		if (*line_len < DEMO_PING_LEN)
			line[*line_len] = ch;
		/* one byte past DEMO_MAX_LINE: a CR, whose LF may come next
		 * (not part of the line), or the line is too long */
		if (++*line_len > DEMO_MAX_LINE + 1 || (*line_len == DEMO_MAX_LINE + 1 && ch != '\r'))
			return -1;
	}
	return (int)pings;
}

const char *demo_pongs(void)
{
	static char pongs[DEMO_HEARTBEAT_MAX_BATCH * DEMO_PING_LEN];
	if (!pongs[0])
		for (unsigned i = 0; i < DEMO_HEARTBEAT_MAX_BATCH; i++)
			memcpy(pongs + i * DEMO_PING_LEN, DEMO_PONG, DEMO_PING_LEN);
	return pongs;
}

_Static_assert(sizeof(DEMO_HTTP_REQ) - 1 == DEMO_HTTP_REQ_LEN, "DEMO_HTTP_REQ_LEN");
_Static_assert(sizeof(DEMO_HTTP_REPLY) - 1 == DEMO_HTTP_REPLY_LEN, "DEMO_HTTP_REPLY_LEN");
_Static_assert(sizeof(DEMO_HTTP_REPLY_CLOSE) - 1 == DEMO_HTTP_REPLY_CLOSE_LEN, "DEMO_HTTP_REPLY_CLOSE_LEN");
_Static_assert(sizeof(DEMO_HTTP_STATUS) - 1 == DEMO_HTTP_STATUS_LEN, "DEMO_HTTP_STATUS_LEN");
_Static_assert(DEMO_HTTP_MAX_HEAD < UINT16_MAX, "struct demo_http's len");
_Static_assert(sizeof(struct demo_http) <= 12, "a connection's HTTP state stays 12 bytes");

/*
 * demo_http_input() reads a head byte by byte, keeping only what decides
 * its reply and whether the connection persists (RFC 9112 9.3): the
 * request line's method and version, the options of its Connection
 * fields, whether it has a Host field, and whether a body follows
 * (Content-Length, Transfer-Encoding: RFC 9112 6.3), and whether any of
 * that was invalid.
 * The server reads no bodies, so a head that announces one is refused
 * (413 or 411) and closes the connection: its body is never read as the
 * next request.
 */
enum http_part {
	HTTP_REQUEST_LINE, /* its words, the third the version */
	HTTP_LINE_START,   /* the first byte of a field line */
	HTTP_FIELD_NAME,   /* a field name, up to its colon */
	HTTP_CONNECTION,   /* the value of a Connection field: options */
	HTTP_LENGTH,       /* the value of a Content-Length field */
	HTTP_CODINGS,      /* the value of a Transfer-Encoding field: codings */
	HTTP_HOST_VALUE,   /* the value of a Host field */
	HTTP_IF_MATCH,     /* the value of an If-Match field: "*" or entity tags */
	HTTP_IF_NONE_MATCH, /* the value of an If-None-Match field: the same */
	HTTP_OTHER,        /* another field line: skipped */
};

/* struct demo_http's head bits */
#define HTTP_V10 1u          /* the version is HTTP/1.0 */
#define HTTP_V11 2u          /* the version is HTTP/1.1, or a later HTTP/1.x */
#define HTTP_CLOSE 4u        /* a "close" connection option */
#define HTTP_KEEP_ALIVE 8u   /* a "keep-alive" connection option */
#define HTTP_BODY 16u        /* a body follows: refused, and the connection closes */
#define HTTP_BAD 32u         /* the request is invalid: 400, and the connection closes */
#define HTTP_HOST 64u        /* a Host field */
#define HTTP_HAS_LENGTH 128u /* a Content-Length field */
#define HTTP_CODED 256u      /* a Transfer-Encoding field */
#define HTTP_CHUNKED 512u    /* the last transfer coding so far is "chunked" */
#define HTTP_CHUNKED_SEEN 1024u /* a transfer coding so far was "chunked" */
#define HTTP_OTHER_CODING 2048u /* a transfer coding other than "chunked": 501 (RFC 9112 6.1) */
#define HTTP_V_OTHER 4096u   /* the version is HTTP/x.y, x not 1: 505 (RFC 9110 15.6.6) */
#define HTTP_IF_MATCH_TAGS 8192u /* an If-Match of entity tags: none is the target's (it has none) */
#define HTTP_IF_NONE_MATCH_ANY 16384u /* "If-None-Match: *": the target has a representation */
#define HTTP_HTTPS 32768u    /* the target is an "https" URI: 421 (RFC 9110 7.4) */
#define HTTP_VERSIONS (HTTP_V10 | HTTP_V11 | HTTP_V_OTHER)
#define HTTP_NO_MATCH 0xff   /* pos: the word can no longer be what is looked for */

/* HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive (RFC 9112 2.3): # a digit */
static const char http_version[] = "HTTP/#.#";
#define HTTP_VERSION_LEN 8
_Static_assert(sizeof(http_version) == HTTP_VERSION_LEN + 1, "HTTP_VERSION_LEN");
/* The field names looked for (cand bits while a name is read), compared without regard to case. */
static const struct {
	const char *name;
	uint8_t len, part; /* part: what its value is (HTTP_OTHER: not read) */
	uint16_t bit;      /* what its presence says (a second one is invalid, but for Connection) */
} http_fields[] = {
	{ "connection", 10, HTTP_CONNECTION, 0 },
	{ "content-length", 14, HTTP_LENGTH, HTTP_HAS_LENGTH },
	{ "transfer-encoding", 17, HTTP_CODINGS, HTTP_CODED | HTTP_BODY },
	{ "host", 4, HTTP_HOST_VALUE, HTTP_HOST },
	{ "if-match", 8, HTTP_IF_MATCH, 0 },
	{ "if-none-match", 13, HTTP_IF_NONE_MATCH, 0 },
};
#define HTTP_NFIELDS (sizeof(http_fields) / sizeof(http_fields[0]))
/* The list elements looked for in a Connection (options) or Transfer-Encoding (codings) value. */
static const struct {
	const char *name;
	uint8_t len, part;
	uint16_t bit;
} http_options[] = {
	{ "close", 5, HTTP_CONNECTION, HTTP_CLOSE },
	{ "keep-alive", 10, HTTP_CONNECTION, HTTP_KEEP_ALIVE },
	{ "chunked", 7, HTTP_CODINGS, HTTP_CHUNKED },
};
#define HTTP_NOPTIONS (sizeof(http_options) / sizeof(http_options[0]))

static char http_lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Between a request line's words: SP, HTAB, VT, FF (RFC 9112 3), or the CR of CRLF. */
static bool http_word_gap(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r';
}

/*
 * Optional whitespace in a field value: SP, HTAB, the CR of CRLF, or a
 * NUL, read as SP (RFC 9110 5.5).
 */
static bool http_ows(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\0';
}

/* A byte of a token, as a field name is (RFC 9110 5.1, 5.6.2). */
static bool http_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/*
 * The methods that decide a reply (case-sensitive, RFC 9110 9.1): the
 * ones the server implements, GET, HEAD and OPTIONS, and CONNECT, whose
 * target has a form of its own (RFC 9112 3.2.3). struct demo_http's
 * method is one of them (HTTP_METHOD_*: its index + 1), or 0 for any
 * other; while the method is read, cand holds the ones it may still be
 * (bit i: http_methods[i]) and pos its bytes so far.
 */
static const struct {
	const char *name;
	uint8_t len;
} http_methods[] = { { "GET", 3 }, { "HEAD", 4 }, { "OPTIONS", 7 }, { "CONNECT", 7 } };
#define HTTP_NMETHODS (sizeof(http_methods) / sizeof(http_methods[0]))
enum http_method { HTTP_METHOD_OTHER, HTTP_METHOD_GET, HTTP_METHOD_HEAD, HTTP_METHOD_OPTIONS, HTTP_METHOD_CONNECT };
_Static_assert(HTTP_NMETHODS == HTTP_METHOD_CONNECT, "an HTTP_METHOD_* a method");

/* A byte of the method: which of http_methods it may still be. */
static void http_method_byte(struct demo_http *h, char ch)
{
	if (!h->pos)
		h->cand = (1u << HTTP_NMETHODS) - 1;
	for (size_t i = 0; i < HTTP_NMETHODS; i++)
		if (h->pos >= http_methods[i].len || ch != http_methods[i].name[h->pos])
			h->cand &= (uint16_t)~(1u << i);
	if (h->pos < HTTP_NO_MATCH)
		h->pos++;
}

/* The end of the method: the one of http_methods it spelled, if any. */
static void http_method_end(struct demo_http *h)
{
	h->method = HTTP_METHOD_OTHER;
	for (size_t i = 0; i < HTTP_NMETHODS; i++)
		if ((h->cand & (1u << i)) && h->pos == http_methods[i].len)
			h->method = (uint8_t)(i + 1);
	h->cand = 0;
}

/*
 * The request target's form so far (struct demo_http's target, bits 0-3;
 * bits 4-5: the hex digits a "%" still owes). RFC 9112 3.2: origin-form
 * ("/" and a path, then a query), absolute-form (a scheme, ":", the rest
 * of an absolute URI), authority-form (host ":" port) for CONNECT only,
 * asterisk-form ("*") for OPTIONS only; anything else is an invalid
 * request line.
 */
enum http_target {
	HTTP_TARGET_NONE,     /* no byte yet */
	HTTP_TARGET_ORIGIN,   /* "/" first: origin-form (3.2.1) */
	HTTP_TARGET_ASTERISK, /* "*" and nothing after it (3.2.4) */
	HTTP_TARGET_SCHEME,   /* a letter first, then scheme bytes, no ":" yet (3.2.2) */
	HTTP_TARGET_ABSOLUTE, /* a scheme and its ":": absolute-form (3.2.2) */
	HTTP_TARGET_HOST,     /* CONNECT: host bytes (3.2.3), bits 6-7 say where */
	HTTP_TARGET_PORT,     /* CONNECT: host bytes, ":", digits: authority-form (3.2.3) */
	/*
	 * An "http" or "https" scheme (any case: RFC 3986 3.1) needs "//"
	 * and a host, not empty (RFC 9110 4.2.1, 4.2.2: a recipient "MUST
	 * reject it as invalid"), without userinfo (4.2.4: an error)
	 */
	HTTP_TARGET_H,        /* "h", "ht", "htt", "http", "https": 7 to 11, a scheme so far */
	HTTP_TARGET_HTTP_COLON = HTTP_TARGET_H + 5, /* "http:" or "https:": "//" must follow */
	HTTP_TARGET_HTTP_SLASH, /* "http:/" */
	HTTP_TARGET_AUTHORITY_START, /* "http://": a host must follow */
	HTTP_TARGET_AUTHORITY, /* in the host, or its port: no "@" (userinfo); bits 6-7 say where */
};
_Static_assert(HTTP_TARGET_AUTHORITY < 16, "struct demo_http's target: the form in 4 bits");
static const char http_scheme_https[] = "https";
#define HTTP_TARGET_OWED 16u /* target: one hex digit a "%" owes (RFC 3986 2.1), bits 4-5 */
/*
 * Where in an http(s) authority, or CONNECT's (bits 6-7): host [":" port], the host a
 * reg-name or IPv4 address, or an IP literal in brackets (RFC 3986
 * 3.2.2, 3.2.3), as a Host value is read (http_host_byte())
 */
#define HTTP_TARGET_AT 64u
enum http_authority {
	HTTP_AUTH_NAME,        /* a reg-name or IPv4 address (or nothing yet) */
	HTTP_AUTH_LITERAL,     /* "[" and not yet "]" */
	HTTP_AUTH_LITERAL_END, /* "]": ":" or the authority's end must follow */
	HTTP_AUTH_PORT,        /* ":" then digits */
};

/*
 * A byte of an http(s) authority, but "/", "?" and a "%" encoding: @at
 * where it is (enum http_authority), @start if no byte came yet. False
 * if the authority cannot hold it there.
 */
static bool http_authority_byte(unsigned *at, char ch, bool start)
{
	switch (*at) {
	case HTTP_AUTH_LITERAL:
		*at = ch == ']' ? HTTP_AUTH_LITERAL_END : HTTP_AUTH_LITERAL;
		return ch != '[' && ch != '@';
	case HTTP_AUTH_LITERAL_END:
		*at = HTTP_AUTH_PORT;
		return ch == ':';
	case HTTP_AUTH_PORT:
		return ch >= '0' && ch <= '9';
	default:
		if (ch == '[')
			*at = HTTP_AUTH_LITERAL;
		else if (ch == ':')
			*at = HTTP_AUTH_PORT;
		return ch == '[' ? start : ch == ':' ? !start : ch != ']' && ch != '@'; /* "@": userinfo */
	}
}

static bool http_alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool http_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static bool http_hex(char ch)
{
	return http_digit(ch) || (http_lower(ch) >= 'a' && http_lower(ch) <= 'f');
}

/*
 * A byte a URI may hold outside a percent-encoding (RFC 3986 2.2, 2.3):
 * unreserved, sub-delims, gen-delims but "#" (a target has no fragment).
 */
static bool http_uri_byte(char ch)
{
	return http_alpha(ch) || http_digit(ch) || (ch && strchr("-._~!$&'()*+,;=:/?@[]", ch));
}

/* A byte of the request target (the line's second word): its form so far, HTTP_BAD if none. */
static void http_target_byte(struct demo_http *h, char ch)
{
	unsigned at = h->target / HTTP_TARGET_AT, owed = h->target % HTTP_TARGET_AT / HTTP_TARGET_OWED;
	unsigned form = h->target % HTTP_TARGET_OWED;
	bool ok = true;
	if (owed) {
		ok = http_hex(ch);
		owed--;
	} else if (ch == '%') {
		ok = form == HTTP_TARGET_ORIGIN || form == HTTP_TARGET_ABSOLUTE ||
		     ((form == HTTP_TARGET_HOST || form >= HTTP_TARGET_AUTHORITY_START) && at == HTTP_AUTH_NAME);
		if (form == HTTP_TARGET_AUTHORITY_START)
			form = HTTP_TARGET_AUTHORITY; /* a host of "%" and two hex digits */
		owed = 2;
	} else if (!http_uri_byte(ch)) {
		ok = false;
	} else if (form == HTTP_TARGET_NONE && h->method == HTTP_METHOD_CONNECT) {
		form = HTTP_TARGET_HOST; /* a host first, read as an http(s) authority's */
		ok = ch != '/' && ch != '*' && ch != '?' && http_authority_byte(&at, ch, true);
	} else if (form == HTTP_TARGET_NONE) {
		form = ch == '/' ? HTTP_TARGET_ORIGIN : ch == '*' ? HTTP_TARGET_ASTERISK
		     : http_lower(ch) == 'h' ? HTTP_TARGET_H : HTTP_TARGET_SCHEME;
		ok = ch == '/' || ch == '*' || http_alpha(ch);
	} else if (form >= HTTP_TARGET_H && form < HTTP_TARGET_HTTP_COLON) { /* a prefix of "https" */
		unsigned k = form - HTTP_TARGET_H + 1; /* its bytes */
		if (ch == ':' && k == 5)
			h->head |= HTTP_HTTPS; /* an "https" URI, on a connection without TLS */
		if (ch == ':')
			form = k >= 4 ? HTTP_TARGET_HTTP_COLON : HTTP_TARGET_ABSOLUTE;
		else if (k < 5 && http_lower(ch) == http_scheme_https[k])
			form++;
		else
			form = HTTP_TARGET_SCHEME;
		ok = ch == ':' || http_alpha(ch) || http_digit(ch) || ch == '+' || ch == '-' || ch == '.';
	} else if (form == HTTP_TARGET_HTTP_COLON || form == HTTP_TARGET_HTTP_SLASH) {
		ok = ch == '/';
		form++;
	} else if (form == HTTP_TARGET_AUTHORITY_START || form == HTTP_TARGET_AUTHORITY) {
		if (ch == '/' || ch == '?') { /* the path or the query: the authority is over */
			ok = form == HTTP_TARGET_AUTHORITY && at != HTTP_AUTH_LITERAL;
			form = HTTP_TARGET_ABSOLUTE;
			at = HTTP_AUTH_NAME;
		} else {
			ok = http_authority_byte(&at, ch, form == HTTP_TARGET_AUTHORITY_START);
			form = HTTP_TARGET_AUTHORITY;
		}
	} else if (form == HTTP_TARGET_ORIGIN) {
		ok = ch != '[' && ch != ']'; /* IP literals only in an authority */
	} else if (form == HTTP_TARGET_ASTERISK) {
		ok = false;
	} else if (form == HTTP_TARGET_SCHEME) {
		if (ch == ':')
			form = HTTP_TARGET_ABSOLUTE;
		else
			ok = http_alpha(ch) || http_digit(ch) || ch == '+' || ch == '-' || ch == '.';
	} else if (form == HTTP_TARGET_HOST || form == HTTP_TARGET_PORT) {
		/* host ":" port, as an http(s) authority (no path, query or userinfo) */
		ok = ch != '/' && ch != '?' && http_authority_byte(&at, ch, false);
		form = at == HTTP_AUTH_PORT ? HTTP_TARGET_PORT : HTTP_TARGET_HOST;
	}
	if (!ok)
		h->head |= HTTP_BAD;
	h->target = (uint8_t)(at * HTTP_TARGET_AT + owed * HTTP_TARGET_OWED + form);
}

/* The end of the request target: one of the four forms, complete, with its method. */
static void http_target_end(struct demo_http *h)
{
	unsigned form = h->target % HTTP_TARGET_AT; /* with the hex digits owed, if any */
	if (form == HTTP_TARGET_AUTHORITY && h->target / HTTP_TARGET_AT == HTTP_AUTH_LITERAL)
		form = HTTP_TARGET_NONE; /* an IP literal not closed */
	if (!(form == HTTP_TARGET_ORIGIN || form == HTTP_TARGET_ABSOLUTE || form == HTTP_TARGET_AUTHORITY ||
	      (form == HTTP_TARGET_ASTERISK && h->method == HTTP_METHOD_OPTIONS) ||
	      (form == HTTP_TARGET_PORT && h->method == HTTP_METHOD_CONNECT)))
		h->head |= HTTP_BAD; /* an owed hex digit too */
}

/*
 * The end of a request line's word: the method, the target, and the
 * version, if it spelled one (the last word's counts, and the line must
 * have three).
 */
static void http_word_end(struct demo_http *h)
{
	if (h->pos && h->words == 1) {
		http_method_end(h);
	} else if (h->pos) {
		if (h->words == 2)
			http_target_end(h);
		h->head &= (uint16_t)~HTTP_VERSIONS;
		if (h->pos == HTTP_VERSION_LEN)
			h->head |= h->cand;
	}
	h->pos = 0;
}

static void http_request_byte(struct demo_http *h, char ch)
{
	if (http_word_gap(ch)) {
		http_word_end(h);
		return;
	}
	if (!h->pos && h->words < 4)
		h->words++;
	/* the method is a token, the target visible bytes (RFC 9112 3): else the line is invalid */
	if ((h->words == 1 && !http_tchar(ch)) || (unsigned char)ch < 0x21 || ch == 0x7f)
		h->head |= HTTP_BAD;
	if (h->words == 1) {
		http_method_byte(h, ch);
		return;
	}
	if (h->words == 2)
		http_target_byte(h, ch);
	/* the version: HTTP/1.0, a later HTTP/1.x (read as 1.1: RFC 9110 2.5), or another major (cand) */
	if (h->pos < HTTP_VERSION_LEN && (http_version[h->pos] == '#' ? http_digit(ch) : ch == http_version[h->pos])) {
		if (h->pos == 5)
			h->cand = ch == '1' ? 0 : HTTP_V_OTHER;
		else if (h->pos == 7 && !h->cand)
			h->cand = ch == '0' ? HTTP_V10 : HTTP_V11;
		h->pos++;
	} else {
		h->pos = HTTP_NO_MATCH;
	}
}

/* Look for a new list element: each of http_options of the field being read. */
static void http_option_start(struct demo_http *h)
{
	h->pos = 0;
	h->cand = 0;
	for (size_t i = 0; i < HTTP_NOPTIONS; i++)
		if (http_options[i].part == h->field)
			h->cand |= http_options[i].bit;
	h->gap = false;
}

/*
 * The end of a list element. A Connection option counts if it is one of
 * http_options; a transfer coding, unless empty, is the last so far (RFC
 * 9112 6.3: the request's body is framed by its last coding, which must
 * be chunked). Chunked may come once (RFC 9112 7: "A sender MUST NOT
 * apply the chunked transfer coding more than once"); any other coding
 * is one the server does not implement (6.1: 501).
 */
static void http_option_end(struct demo_http *h)
{
	bool coding = h->field == HTTP_CODINGS && h->pos != 0;
	if (coding)
		h->head &= (uint16_t)~HTTP_CHUNKED;
	for (size_t i = 0; i < HTTP_NOPTIONS; i++)
		if ((h->cand & http_options[i].bit) && h->pos == http_options[i].len)
			h->head |= http_options[i].bit;
	if (coding && !(h->head & HTTP_CHUNKED))
		h->head |= HTTP_OTHER_CODING;
	else if (coding && (h->head & HTTP_CHUNKED_SEEN))
		h->head |= HTTP_BAD;
	else if (coding)
		h->head |= HTTP_CHUNKED_SEEN;
	http_option_start(h);
}

/* A byte of a Connection or Transfer-Encoding value: elements between commas and optional whitespace. */
static void http_option_byte(struct demo_http *h, char ch)
{
	if (ch == ',') {
		http_option_end(h);
		return;
	}
	if (http_ows(ch)) {
		h->gap = h->pos != 0; /* trailing, unless another byte follows */
		return;
	}
	for (size_t i = 0; i < HTTP_NOPTIONS; i++)
		if (h->gap || h->pos >= http_options[i].len || http_lower(ch) != http_options[i].name[h->pos])
			h->cand &= (uint16_t)~http_options[i].bit;
	if (h->pos < HTTP_NO_MATCH)
		h->pos++;
}

/*
 * A byte of a Content-Length value: one run of digits between optional
 * whitespace (RFC 9110 8.6), a body unless all are zeros; anything else
 * is invalid (pos: digits seen).
 */
static void http_length_byte(struct demo_http *h, char ch)
{
	if (http_ows(ch)) {
		h->gap = h->pos != 0;
	} else if (ch >= '0' && ch <= '9' && !h->gap) {
		h->pos = 1;
		if (ch != '0')
			h->head |= HTTP_BODY;
	} else {
		h->head |= HTTP_BAD;
	}
}

/*
 * A Host value: uri-host [":" port] between optional whitespace (RFC
 * 9112 3.2, 7230's grammar from RFC 3986 3.2.2, 3.2.3): a reg-name
 * (unreserved, sub-delims, "%" and two hex digits), an IPv4 address (a
 * reg-name's bytes) or an IP literal in brackets, then a port of digits.
 * pos is where the value is (0: no byte yet); anything else is invalid.
 */
enum http_host {
	HTTP_HOST_NONE,
	HTTP_HOST_NAME,        /* a reg-name or IPv4 address */
	HTTP_HOST_PCT1,        /* a "%": two hex digits owed */
	HTTP_HOST_PCT2,        /* one owed */
	HTTP_HOST_LITERAL,     /* "[" and not yet "]" */
	HTTP_HOST_LITERAL_END, /* "]": a port or nothing may follow */
	HTTP_HOST_PORT,        /* ":" then digits */
};

static void http_host_byte(struct demo_http *h, char ch)
{
	if (http_ows(ch)) {
		h->gap = h->pos != 0;
		return;
	}
	/* unreserved and sub-delims: a reg-name's, an IPv4 address's, an IP literal's with ":" */
	bool name = http_alpha(ch) || http_digit(ch) || (ch && strchr("-._~!$&'()*+,;=", ch));
	unsigned at = h->pos;
	bool ok;
	if (at == HTTP_HOST_PCT1 || at == HTTP_HOST_PCT2) {
		ok = http_hex(ch);
		h->pos = at == HTTP_HOST_PCT1 ? HTTP_HOST_PCT2 : HTTP_HOST_NAME;
	} else if (at == HTTP_HOST_LITERAL) {
		ok = name || ch == ':' || ch == ']';
		h->pos = ch == ']' ? HTTP_HOST_LITERAL_END : HTTP_HOST_LITERAL;
	} else if (at == HTTP_HOST_PORT || ch == ':') {
		ok = ch == ':' ? at != HTTP_HOST_PORT : http_digit(ch);
		h->pos = HTTP_HOST_PORT;
	} else if (ch == '[') {
		ok = at == HTTP_HOST_NONE;
		h->pos = HTTP_HOST_LITERAL;
	} else {
		ok = at != HTTP_HOST_LITERAL_END && (name || ch == '%');
		h->pos = ch == '%' ? HTTP_HOST_PCT1 : HTTP_HOST_NAME;
	}
	if (!ok || h->gap)
		h->head |= HTTP_BAD;
}

/*
 * A byte of an If-Match or If-None-Match value: "*" or a list of entity
 * tags (RFC 9110 13.1.1, 13.1.2), told apart by its first byte (an
 * entity tag starts with DQUOTE or "W/"); pos: a byte came.
 */
static void http_precondition_byte(struct demo_http *h, char ch)
{
	if (h->pos || http_ows(ch))
		return;
	h->pos = 1;
	if (h->part == HTTP_IF_MATCH && ch != '*')
		h->head |= HTTP_IF_MATCH_TAGS;
	else if (h->part == HTTP_IF_NONE_MATCH && ch == '*')
		h->head |= HTTP_IF_NONE_MATCH_ANY;
}

/* The end of a field (the next line does not continue it): a Content-Length needs a value. */
static void http_field_end(struct demo_http *h)
{
	if (h->field == HTTP_CONNECTION || h->field == HTTP_CODINGS)
		http_option_end(h);
	else if (h->field == HTTP_LENGTH && !h->pos)
		h->head |= HTTP_BAD;
	else if (h->field == HTTP_HOST_VALUE &&
		 (h->pos == HTTP_HOST_PCT1 || h->pos == HTTP_HOST_PCT2 || h->pos == HTTP_HOST_LITERAL))
		h->head |= HTTP_BAD; /* a Host value cut short */
	h->field = 0;
}

/* The first byte of a field line: which part it starts. */
static void http_line_start(struct demo_http *h, char ch)
{
	if (http_ows(ch)) { /* obs-fold: the field above goes on, read as a space (RFC 9112 5.2) */
		h->part = h->field ? h->field : HTTP_OTHER;
		if (h->field == HTTP_LENGTH || h->field == HTTP_HOST_VALUE)
			h->gap = h->pos != 0; /* a value's bytes are over: "0\r\n 5" is "0 5" */
		return;
	}
	http_field_end(h);
	h->part = HTTP_FIELD_NAME;
	h->pos = 0;
	h->cand = (1u << HTTP_NFIELDS) - 1;
}

/*
 * A byte of a field name: which of http_fields it may still be; at its
 * colon, what its value is. A name that is no token (empty, whitespace
 * before the colon, RFC 9112 5.1) makes the request invalid.
 */
static void http_name_byte(struct demo_http *h, char ch)
{
	if (ch == ':') {
		unsigned part = HTTP_OTHER;
		if (!h->pos)
			h->head |= HTTP_BAD;
		for (size_t i = 0; i < HTTP_NFIELDS; i++)
			if ((h->cand & (1u << i)) && h->pos == http_fields[i].len) {
				part = http_fields[i].part;
				if (h->head & http_fields[i].bit & (HTTP_HOST | HTTP_HAS_LENGTH))
					h->head |= HTTP_BAD; /* a second Host (RFC 9112 3.2) or Content-Length */
				h->head |= http_fields[i].bit;
			}
		h->part = (uint8_t)part;
		h->field = part == HTTP_OTHER ? 0 : (uint8_t)part;
		if (part == HTTP_CONNECTION || part == HTTP_CODINGS)
			http_option_start(h);
		h->pos = 0;
		h->gap = false;
		return;
	}
	if (!http_tchar(ch)) {
		h->head |= HTTP_BAD;
		h->part = HTTP_OTHER;
		return;
	}
	for (size_t i = 0; i < HTTP_NFIELDS; i++)
		if (h->pos >= http_fields[i].len || http_lower(ch) != http_fields[i].name[h->pos])
			h->cand &= (uint16_t)~(1u << i);
	if (h->pos < HTTP_NO_MATCH)
		h->pos++;
}

/* A byte of a head other than LF. */
static void http_head_byte(struct demo_http *h, char ch)
{
	if (h->part == HTTP_LINE_START)
		http_line_start(h, ch);
	switch (h->part) {
	case HTTP_REQUEST_LINE:
		http_request_byte(h, ch);
		break;
	case HTTP_FIELD_NAME:
		http_name_byte(h, ch);
		break;
	case HTTP_CONNECTION:
	case HTTP_CODINGS:
		http_option_byte(h, ch);
		break;
	case HTTP_LENGTH:
		http_length_byte(h, ch);
		break;
	case HTTP_HOST_VALUE:
		http_host_byte(h, ch);
		break;
	case HTTP_IF_MATCH:
	case HTTP_IF_NONE_MATCH:
		http_precondition_byte(h, ch);
		break;
	default:
		break;
	}
}

/* The LF of a line with bytes. */
static void http_line_end(struct demo_http *h)
{
	if (h->part == HTTP_REQUEST_LINE) {
		http_word_end(h);
		if (h->words != 3)
			h->head &= (uint16_t)~HTTP_VERSIONS;
	} else if (h->part == HTTP_FIELD_NAME) {
		h->head |= HTTP_BAD; /* a field line without a colon */
	} else if (h->part == HTTP_CONNECTION || h->part == HTTP_CODINGS) {
		h->gap = h->pos != 0; /* the line break is whitespace if the field goes on */
	}
	h->part = HTTP_LINE_START;
}

/* The head is complete: its reply, and whether the connection persists (RFC 9112 9.3). */
static enum demo_http_reply http_head_end(struct demo_http *h)
{
	http_field_end(h);
	unsigned head = h->head, method = h->method;
	*h = (struct demo_http){ .len = 0 };
	if ((head & HTTP_BAD) || !(head & HTTP_VERSIONS)) /* an invalid field, request line or version */
		return DEMO_HTTP_BAD_REQUEST;
	if (head & HTTP_V_OTHER) /* HTTP/2.0, HTTP/0.9: RFC 9110 15.6.6 */
		return DEMO_HTTP_VERSION_NOT_SUPPORTED;
	if (((head & HTTP_V11) && !(head & HTTP_HOST)) || /* HTTP/1.1 without Host (RFC 9112 3.2) */
	    ((head & HTTP_CODED) && (!(head & HTTP_CHUNKED) || (head & HTTP_V10)))) /* RFC 9112 6.1, 6.3 */
		return DEMO_HTTP_BAD_REQUEST;
	/*
	 * an "https" target: RFC 9110 7.4, a request for an "https" resource
	 * "MUST be rejected" unless received over a connection secured by a
	 * certificate for its origin (the servers have no TLS, and trust no
	 * gateway): 421, the client may retry where it is secured (15.5.20)
	 */
	if (head & HTTP_HTTPS)
		return DEMO_HTTP_MISDIRECTED;
	/*
	 * a method the server does not implement: 501 (RFC 9110 9.1; "get"
	 * too, methods are case-sensitive), before a body's 411 or 413, which
	 * would invite a retry without it. A 2xx would say a POST was
	 * processed, a PUT stored, a DELETE done, a TRACE reflected, a
	 * CONNECT's tunnel open (9.3).
	 */
	if (method != HTTP_METHOD_GET && method != HTTP_METHOD_HEAD && method != HTTP_METHOD_OPTIONS)
		return DEMO_HTTP_NOT_IMPLEMENTED;
	if (head & HTTP_OTHER_CODING) /* RFC 9112 6.1: a transfer coding the server does not implement */
		return DEMO_HTTP_NOT_IMPLEMENTED;
	if (head & HTTP_CODED) /* a chunked body, not read: RFC 9110 15.5.12 */
		return DEMO_HTTP_LENGTH_REQUIRED;
	if (head & HTTP_BODY) /* a body of a Content-Length, not read: RFC 9110 15.5.14 */
		return DEMO_HTTP_CONTENT_TOO_LARGE;
	if (method == HTTP_METHOD_OPTIONS) /* 200, what the server implements (RFC 9110 9.3.7) */
		return DEMO_HTTP_OPTIONS;
	/*
	 * GET and HEAD: the preconditions, in RFC 9110 13.2.2's order (not
	 * OPTIONS's: it selects no representation, 13.2.1). Every target has
	 * one, empty (the 204), with no entity tag and no modification date:
	 * entity tags never match it, "*" always does, and If-Modified-Since,
	 * If-Unmodified-Since and If-Range have nothing to compare.
	 */
	if (head & HTTP_IF_MATCH_TAGS) /* If-Match false: 412 (13.1.1) */
		return DEMO_HTTP_PRECONDITION_FAILED;
	if (head & HTTP_IF_NONE_MATCH_ANY) /* If-None-Match false: 304 (13.1.2) */
		return DEMO_HTTP_NOT_MODIFIED;
	if (head & HTTP_CLOSE)
		return DEMO_HTTP_CLOSE;
	return (head & HTTP_V11) || (head & HTTP_KEEP_ALIVE) ? DEMO_HTTP_KEEP : DEMO_HTTP_CLOSE;
}

int demo_http_input(const char *buf, size_t n, struct demo_http *h)
{
	int heads = 0;
	for (size_t i = 0; i < n && !h->close; i++) {
		char ch = buf[i];
		if (h->len == 0 && (ch == '\r' || ch == '\n'))
			continue; /* before a request line: skipped */
		if (++h->len > DEMO_HTTP_MAX_HEAD) { /* too long: answered, and the last */
			/*
			 * still in the method: 501; in the target: 414 (RFC 9112 3);
			 * elsewhere in the line, 400: past the target no version is
			 * that long, and whitespace before it is no URI
			 */
			bool line = h->part == HTTP_REQUEST_LINE;
			bool method = line && h->words == 1 && h->pos;
			bool target = line && h->words == 2 && h->pos;
			*h = (struct demo_http){ .len = 0 };
			h->reply = method ? DEMO_HTTP_NOT_IMPLEMENTED : target ? DEMO_HTTP_URI_TOO_LONG
					 : line ? DEMO_HTTP_BAD_REQUEST : DEMO_HTTP_TOO_LARGE;
			h->close = true;
			if (++heads > DEMO_HTTP_MAX_BATCH)
				return -1;
			break;
		}
		if (h->cr && ch != '\n')
			h->head |= HTTP_BAD; /* a bare CR: the element is invalid (RFC 9112 2.2) */
		h->cr = ch == '\r';
		if (ch != '\n') {
			if (ch != '\r')
				h->line = true;
			http_head_byte(h, ch); /* a CR is whitespace: the LF after it ends the line */
		} else if (h->line) {
			http_line_end(h);
			h->line = false;
		} else { /* an empty line: the head is complete */
			if (++heads > DEMO_HTTP_MAX_BATCH)
				return -1;
			h->reply = (uint8_t)http_head_end(h);
			h->close = h->reply != DEMO_HTTP_KEEP;
		}
	}
	return heads;
}

/* The reply that closes, by enum demo_http_reply from DEMO_HTTP_CLOSE on. */
static const struct {
	const char *text;
	uint16_t len;
} http_last[] = {
#define HTTP_LAST(lit) { lit, sizeof(lit) - 1 }
	HTTP_LAST(DEMO_HTTP_REPLY_CLOSE),
	HTTP_LAST("HTTP/1.1 200 OK\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nAllow: GET, HEAD, OPTIONS\r\n"
		  "Content-Length: 0\r\nConnection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 304 Not Modified\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nConnection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 400 Bad Request\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 414 URI Too Long\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 431 Request Header Fields Too Large\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n"
		  "Content-Length: 0\r\nConnection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 501 Not Implemented\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 505 HTTP Version Not Supported\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n"
		  "Content-Length: 0\r\nConnection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 411 Length Required\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 413 Content Too Large\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 412 Precondition Failed\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
	HTTP_LAST("HTTP/1.1 421 Misdirected Request\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nContent-Length: 0\r\n"
		  "Connection: close\r\n\r\n"),
#undef HTTP_LAST
};
#define HTTP_NLAST (sizeof(http_last) / sizeof(http_last[0]))
_Static_assert(HTTP_NLAST == DEMO_HTTP_MISDIRECTED, "a reply for each enum demo_http_reply that closes");
/*
 * demo_http_replies(): a block for each reply that closes, with
 * DEMO_HTTP_MAX_BATCH keep-alive ones before it (a run of keep-alive
 * ones ends the first block's).
 */
#define HTTP_KEEPS (DEMO_HTTP_MAX_BATCH * DEMO_HTTP_REPLY_LEN)
#define HTTP_BLOCK (HTTP_KEEPS + 128)
#define HTTP_REPLIES (HTTP_NLAST * HTTP_BLOCK)
_Static_assert(HTTP_REPLIES <= UINT16_MAX, "demo_http_reply_span()'s offsets");

void demo_http_reply_span(int heads, const struct demo_http *h, uint16_t *from, uint16_t *to)
{
	if (heads <= 0) {
		*from = *to = 0;
	} else if (!h->close) {
		*from = (uint16_t)(HTTP_KEEPS - heads * DEMO_HTTP_REPLY_LEN);
		*to = HTTP_KEEPS;
	} else {
		unsigned b = h->reply - DEMO_HTTP_CLOSE;
		*from = (uint16_t)(b * HTTP_BLOCK + HTTP_KEEPS - (heads - 1) * DEMO_HTTP_REPLY_LEN);
		*to = (uint16_t)(b * HTTP_BLOCK + HTTP_KEEPS + http_last[b].len);
	}
}

/*
 * The replies, twice: each copy's Date fields say one second, and a
 * copy is written again for a new second only while no send holds it
 * (a send that waits for its peer to read goes on out of the bytes it
 * began with: no reply leaves with half of one date and half of another).
 */
static struct {
	char buf[2][HTTP_REPLIES];
	time_t sec[2];    /* the second in each copy's Date fields */
	unsigned held[2]; /* sends out of each copy, in flight */
	unsigned cur;     /* the copy new replies go out of */
	bool built;
} http_rep;

/* @text (@len bytes) at @dst, its Date field's value @date. */
static void http_put_reply(char *dst, const char *text, size_t len, const char *date)
{
	memcpy(dst, text, len);
	memcpy(dst + (strstr(text, "\r\nDate: ") - text) + 8, date, DEMO_HTTP_DATE_LEN);
}

/* Copy @c of the replies, their Date fields saying second @sec. */
static void http_replies_build(unsigned c, time_t sec)
{
	char date[DEMO_HTTP_DATE_LEN + 1] = "Thu, 01 Jan 1970 00:00:00 GMT";
	struct tm tm;
	/* IMF-fixdate (RFC 9110 5.6.7), English names: the C locale, which the servers never leave */
	if (!gmtime_r(&sec, &tm) || strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm) != DEMO_HTTP_DATE_LEN)
		memcpy(date, "Thu, 01 Jan 1970 00:00:00 GMT", DEMO_HTTP_DATE_LEN);
	char *buf = http_rep.buf[c];
	for (size_t b = 0; b < HTTP_NLAST; b++) {
		for (unsigned i = 0; i < DEMO_HTTP_MAX_BATCH; i++)
			http_put_reply(buf + b * HTTP_BLOCK + i * DEMO_HTTP_REPLY_LEN, DEMO_HTTP_REPLY, DEMO_HTTP_REPLY_LEN,
				       date);
		http_put_reply(buf + b * HTTP_BLOCK + HTTP_KEEPS, http_last[b].text, http_last[b].len, date);
	}
	http_rep.sec[c] = sec;
}

unsigned demo_http_replies_hold(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	unsigned c = http_rep.cur;
	if (!http_rep.built) {
		http_replies_build(c, ts.tv_sec);
		http_rep.built = true;
	} else if (ts.tv_sec != http_rep.sec[c] && !http_rep.held[c ^ 1u]) {
		c ^= 1u;
		http_replies_build(c, ts.tv_sec);
		http_rep.cur = c;
	}
	http_rep.held[c]++;
	return c;
}

void demo_http_replies_put(unsigned copy)
{
	http_rep.held[copy]--;
}

const char *demo_http_replies(unsigned copy)
{
	return http_rep.buf[copy];
}

enum demo_accept_next demo_accept_failed(int lfd, int err, unsigned worker, int *status)
{
	switch (err) {
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
	case ENOMEM:
		return DEMO_ACCEPT_PAUSE;
	case EINTR:
	case EAGAIN:
	case ECANCELED:
	case ECONNABORTED:
		return DEMO_ACCEPT_AGAIN;
	/* accept(2): network errors pending on the new connection, and a firewall's refusal */
	case EPROTO:
	case EPERM:
	case ENETDOWN:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
		fprintf(stderr, "idle-server[%u]: accept: %s (that connection's; accepting on)\n", worker,
			strerror(err));
		return DEMO_ACCEPT_SKIP;
	default:
		break;
	}
	int listening = 0;
	socklen_t len = sizeof(listening);
	if (err == EINVAL && getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening) {
		fprintf(stderr, "idle-server[%u]: accept: %s: the kernel refuses a multishot accept "
			"(Linux 5.19 or later has it); shutting down\n", worker, strerror(err));
		*status = DEMO_EXIT_NO_URING;
	} else {
		fprintf(stderr, "idle-server[%u]: accept: %s: the listening socket accepts no more; "
			"shutting down\n", worker, strerror(err));
		*status = 1;
	}
	return DEMO_ACCEPT_STOP;
}

/* --nofile, or RLIMIT_NOFILE as high as allowed; returns the soft limit now in force. */
static rlim_t set_nofile(void)
{
	rlim_t nofile = demo_raise_nofile(1u << 20);
	if (demo_opts.nofile) {
		struct rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = demo_opts.nofile < rl.rlim_max ? demo_opts.nofile : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		nofile = rl.rlim_cur;
	}
	return nofile;
}

/*
 * Signals are read from a signalfd by each worker's loop (and by the
 * parent's sigwait()): block them, into @set, before anything else, so
 * that one sent while the process starts waits for the loop. Unblocked
 * there, SIGTERM and SIGUSR1 killed the server, and SIGTERM inherited as
 * ignored (trap '' TERM) was discarded: the server ran on until a second
 * one. A blocked signal is queued whatever its disposition; SIGCHLD's is
 * set back to the default all the same, as an ignored SIGCHLD reaps the
 * workers in the kernel and is never sent: the parent waited for it for
 * ever.
 */
static void block_signals(sigset_t *set)
{
	demo_signal_set(set);
	sigaddset(set, SIGCHLD);
	sigprocmask(SIG_BLOCK, set, NULL);
	signal(SIGCHLD, SIG_DFL);
}

/*
 * One listening socket per worker, all before any worker runs: none is
 * missed. The first takes --port (0: any free one), the others share the
 * port it got, returned in *@portp. NULL on failure (message printed if
 * a socket could not listen).
 */
static int *open_listeners(uint16_t *portp)
{
	int *lfds = (int *)calloc(demo_opts.workers, sizeof(*lfds));
	if (!lfds)
		return NULL;
	uint16_t port = demo_opts.port;
	for (unsigned i = 0; i < demo_opts.workers; i++) {
		lfds[i] = listen_socket(port, demo_opts.workers > 1);
		if (lfds[i] < 0) {
			fprintf(stderr, "idle-server: listen on %s:%u: %s\n", demo_opts.bind.text, port, strerror(-lfds[i]));
			return NULL;
		}
		port = demo_sock_port(lfds[i]);
	}
	*portp = port;
	return lfds;
}

/* What the "ready" line says of the listening sockets. */
static uint16_t banner_port;
static rlim_t banner_nofile;

/* ready_fd of the one worker run in this process: print the line. */
#define READY_BANNER (-2)

/* The "ready" line, unless --quiet. */
static void print_banner(uint16_t port, rlim_t nofile)
{
	if (demo_opts.quiet)
		return;
	printf("idle-server: ready: listening on %s:%u, %u worker%s, idle timeout %" PRIu64
	       " ms, %s mode, tick %" PRIu64 " us, RLIMIT_NOFILE %lu, pid %d\n",
	       demo_opts.bind.text, port, demo_opts.workers, demo_opts.workers == 1 ? "" : "s", demo_opts.idle_ms,
	       demo_opts.heartbeat ? "heartbeat" : demo_opts.http ? "http" : "echo", demo_opts.tick_us, (unsigned long)nofile, (int)getpid());
	fflush(stdout);
}

void demo_worker_ready(int ready_fd)
{
	if (ready_fd == READY_BANNER) {
		print_banner(banner_port, banner_nofile);
	} else if (ready_fd >= 0) {
		(void)!write(ready_fd, "r", 1);
		close(ready_fd);
	}
}

/* SIGTERM to the first @n workers in @pids, then wait for each to exit. */
static void stop_workers(const pid_t *pids, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (unsigned i = 0; i < n; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
}

/*
 * Fork one worker per listening socket in @lfds; each keeps only its own
 * socket and the write end of @ready, and exits with what @run_worker
 * returns. A worker gets SIGTERM (its graceful shutdown) when the parent
 * dies: killed (demo.sh's SIGKILL 5 s after a SIGTERM) or crashed, it
 * left its workers serving, orphaned, on its port. Returns the workers'
 * pids, or NULL (message printed if fork failed; the workers forked
 * before were stopped and reaped: they served on, orphaned).
 */
static pid_t *fork_workers(int *lfds, const int ready[2], demo_worker_fn run_worker)
{
	pid_t *pids = (pid_t *)calloc(demo_opts.workers, sizeof(*pids));
	if (!pids)
		return NULL;
	pid_t parent = getpid();
	for (unsigned i = 0; i < demo_opts.workers; i++) {
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("idle-server: fork");
			stop_workers(pids, i);
			free(pids);
			return NULL;
		}
		if (pids[i] == 0) {
			/* SIGTERM is blocked: it waits for the worker's signalfd */
			if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
				kill(getpid(), SIGTERM); /* the parent died before the prctl() */
			for (unsigned j = 0; j < demo_opts.workers; j++)
				if (j != i)
					close(lfds[j]);
			close(ready[0]);
			int lfd = lfds[i];
			free(lfds);
			free(pids);
			_exit(run_worker(lfd, i, ready[1]));
		}
	}
	return pids;
}

/*
 * Close the parent's copies of the listening sockets (freeing @lfds) and
 * of the pipe's write end, then count the workers that report ready (one
 * byte each) until all did or the last one closed the pipe.
 */
static unsigned wait_ready(int *lfds, const int ready[2])
{
	for (unsigned i = 0; i < demo_opts.workers; i++)
		close(lfds[i]);
	free(lfds);
	close(ready[1]);
	unsigned nready = 0;
	char b;
	while (nready < demo_opts.workers && read(ready[0], &b, 1) == 1)
		nready++;
	close(ready[0]);
	return nready;
}

/* The parent's view of its workers. */
struct supervisor {
	pid_t *pids;    /* 0 once reaped */
	unsigned alive;
	int status;     /* the first nonzero exit code */
	bool stopping;  /* the workers were told to stop */
};

/* Reap the workers that exited; the first that failed stops the others. */
static void reap_workers(struct supervisor *sv)
{
	pid_t p;
	int st;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		for (unsigned i = 0; i < demo_opts.workers; i++)
			if (sv->pids[i] == p) {
				sv->pids[i] = 0;
				sv->alive--;
			}
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (code && !sv->status)
			sv->status = code;
		if (code && !sv->stopping) {
			fprintf(stderr, "idle-server: worker %d exited with %d; stopping the others\n", (int)p, code);
			sv->stopping = true;
			for (unsigned i = 0; i < demo_opts.workers; i++)
				if (sv->pids[i])
					kill(sv->pids[i], SIGTERM);
		}
	}
}

/*
 * The parent: forward the signals in @set to the workers and reap them
 * (SIGCHLD) until none is left. Returns the first nonzero exit code of a
 * worker, or 0.
 */
static int supervise(pid_t *pids, const sigset_t *set)
{
	struct supervisor sv = { .pids = pids, .alive = demo_opts.workers };
	while (sv.alive) {
		int sig;
		if (sigwait(set, &sig) != 0)
			continue;
		if (sig == SIGCHLD) {
			reap_workers(&sv);
			continue;
		}
		if (sig != SIGUSR1)
			sv.stopping = true;
		for (unsigned i = 0; i < demo_opts.workers; i++)
			if (pids[i])
				kill(pids[i], sig);
	}
	return sv.status;
}

int demo_server_main(int argc, char **argv, const char *name, demo_worker_fn run_worker)
{
	sigset_t set;
	block_signals(&set); /* first: a signal sent from now on is taken */
	parse_args(argc, argv, name);
	signal(SIGPIPE, SIG_IGN);
	rlim_t nofile = set_nofile();
	uint16_t port;
	int *lfds = open_listeners(&port);
	if (!lfds)
		return 1;

	if (demo_opts.workers == 1) {
		/* the banner once the worker accepts (connections wait in the backlog) */
		banner_port = port;
		banner_nofile = nofile;
		int ret = run_worker(lfds[0], 0, READY_BANNER);
		free(lfds);
		return ret;
	}

	int ready[2];
	if (pipe2(ready, O_CLOEXEC) != 0) {
		perror("idle-server: pipe");
		return 1;
	}
	pid_t *pids = fork_workers(lfds, ready, run_worker);
	if (!pids) {
		for (unsigned i = 0; i < demo_opts.workers; i++)
			close(lfds[i]);
		free(lfds);
		close(ready[0]);
		close(ready[1]);
		return 1;
	}
	if (wait_ready(lfds, ready) == demo_opts.workers)
		print_banner(port, nofile);
	int status = supervise(pids, &set);
	free(pids);
	return status;
}
