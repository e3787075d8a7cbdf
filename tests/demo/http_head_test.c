/* SPDX-License-Identifier: MIT */
/*
 * tests/demo/http_head_test.c - the servers' HTTP request-head parser
 * (demo_http_input() in demo/demo_server.c) on its own: the same input must
 * give the same heads and the same decision to close however the reads
 * split it, so each case is fed whole, then cut in two at every byte
 * position, then in three at every pair of positions (short inputs), the
 * state carried across the pieces; the heads counted per piece must add up
 * and fall in the piece that completes them. Also: CR/LF before a request
 * line skipped, bare LF line ends, the DEMO_HTTP_MAX_HEAD limit to the
 * byte, the DEMO_HTTP_MAX_BATCH limit; each head's reply and persistence (RFC 9112 9.3) for
 * each version and Connection field (names and options in any case, option
 * lists, several lines, obs-fold), nothing read after a head that closes;
 * the requests refused with a 400 (RFC 9112: an invalid request line,
 * field name, Content-Length or Transfer-Encoding; Host missing from an
 * HTTP/1.1 request, or twice), the 501 of a method the server does not
 * implement (all but GET, HEAD and OPTIONS, any case but upper, CONNECT
 * too), the 200 of an OPTIONS, the 412 and 304 of GET's and HEAD's
 * preconditions, the 421 of an "https" target, and the 414 and 431 of a
 * head too long;
 * the same answers for random inputs however they are cut; and the replies
 * (demo_http_reply_span(), demo_http_replies()), each with the Date of
 * the second it was made (RFC 9110 6.6.1). And the heartbeat
 * parser (demo_heartbeat_input(), demo_pongs(): check_heartbeat()).
 * Exit 0 pass, 1 fail.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/check.h"
#include "../common/xorshift64.h"
#include "demo_common.h"
#include "demo_server.h"

/* Short names for the replies (enum demo_http_reply) in the tables below. */
#define KEEP DEMO_HTTP_KEEP
#define CLOSE DEMO_HTTP_CLOSE
#define BAD DEMO_HTTP_BAD_REQUEST
#define NI DEMO_HTTP_NOT_IMPLEMENTED
#define VNS DEMO_HTTP_VERSION_NOT_SUPPORTED
#define LR DEMO_HTTP_LENGTH_REQUIRED
#define CTL DEMO_HTTP_CONTENT_TOO_LARGE
#define OPT DEMO_HTTP_OPTIONS
#define NM DEMO_HTTP_NOT_MODIFIED
#define PF DEMO_HTTP_PRECONDITION_FAILED
#define MIS DEMO_HTTP_MISDIRECTED

/*
 * Feed @in (@n bytes) cut at @cuts (ascending, @ncuts of them); returns
 * the heads counted, or -1 as soon as a piece returned -1; *@reply is the
 * last one's reply (enum demo_http_reply: DEMO_HTTP_KEEP unless it closes
 * the connection). @done_at gets, for each head (@max_done at most), the
 * end of the piece that counted it.
 */
static int feed(const char *in, size_t n, const size_t *cuts, int ncuts, size_t *done_at, int max_done, int *reply)
{
	struct demo_http st = { 0 };
	int total = 0;
	size_t from = 0;
	*reply = KEEP;
	for (int k = 0; k <= ncuts; k++) {
		size_t to = k < ncuts ? cuts[k] : n;
		int r = demo_http_input(in + from, to - from, &st);
		if (r < 0)
			return -1;
		for (int h = 0; h < r && total + h < max_done; h++)
			done_at[total + h] = to;
		total += r;
		from = to;
	}
	*reply = st.close ? st.reply : KEEP;
	return total;
}

/*
 * @in must give @want heads (or -1), the i-th complete once byte
 * @ends[i] - 1 was read, the last one's reply @want_reply (DEMO_HTTP_KEEP:
 * the connection persists), however it is cut: in one piece, in two at
 * every position, and (inputs up to 256 bytes) in three at every pair.
 */
static void check_splits(const char *name, const char *in, size_t n, int want, int want_reply, const size_t *ends)
{
	size_t done_at[64];
	size_t cuts[2] = { 0, 0 }; /* none read with ncuts 0: set for the compiler */
	int reply;
	int r = feed(in, n, cuts, 0, done_at, 64, &reply);
	CHECK(r == want, "%s whole: %d heads, want %d", name, r, want);
	CHECK(want < 0 || reply == want_reply, "%s whole: reply %d, want %d", name, reply, want_reply);
	for (size_t i = 0; i <= n; i++) {
		cuts[0] = i;
		r = feed(in, n, cuts, 1, done_at, 64, &reply);
		CHECK(r == want, "%s cut at %zu: %d heads, want %d", name, i, r, want);
		CHECK(want < 0 || reply == want_reply, "%s cut at %zu: reply %d, want %d", name, i, reply, want_reply);
		for (int h = 0; want > 0 && r == want && h < want; h++) {
			/* the piece that completes head h is the one holding byte ends[h] - 1 */
			size_t piece_end = ends[h] <= i ? i : n;
			CHECK(done_at[h] == piece_end, "%s cut at %zu: head %d counted with the piece ending at %zu, "
				"want %zu", name, i, h, done_at[h], piece_end);
		}
		for (size_t j = i; n <= 256 && j <= n; j++) {
			cuts[1] = j;
			r = feed(in, n, cuts, 2, done_at, 64, &reply);
			CHECK(r == want, "%s cut at %zu and %zu: %d heads, want %d", name, i, j, r, want);
			CHECK(want < 0 || reply == want_reply, "%s cut at %zu and %zu: reply %d, want %d", name, i, j,
			      reply, want_reply);
		}
	}
}

/* @s with CR, LF and HTAB made visible, for messages (one buffer: use at once). */
static const char *shown(const char *s)
{
	static char out[1024];
	size_t o = 0;
	for (; *s && o < sizeof(out) - 3; s++) {
		const char *e = *s == '\r' ? "\\r" : *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : NULL;
		if (e) {
			memcpy(out + o, e, 2);
			o += 2;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
	return out;
}

/*
 * Each head's reply: 204 and the connection persists (KEEP), 204 and it
 * closes (CLOSE: RFC 9112 9.3), 411 or 413 and it closes (LR, CTL: a
 * body, which the server does not read), or
 * 400 and it closes (BAD: an invalid request).
 */
#define H11 "GET / HTTP/1.1\r\nHost: a\r\n"
static const struct {
	const char *head;
	int reply;
} persistence[] = {
	/*
	 * versions: HTTP/1.1 and later 1.x persist, HTTP/1.0 only with
	 * keep-alive; another major is a 505 (RFC 9110 15.6.6), anything
	 * not HTTP/x.y is invalid (RFC 9112 2.3)
	 */
	{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\nHost: a\n\n", KEEP },
	{ "GET / HTTP/1.2\r\nHost: a\r\n\r\n", KEEP },
	{ "GET / HTTP/1.9\r\nHost: a\r\n\r\n", KEEP },
	{ "GET  /\t HTTP/1.1 \r\nHost: a\r\n\r\n", KEEP }, /* any whitespace between the words */
	{ "GET / HTTP/1.0\r\nHost: a\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\n\r\n", CLOSE },
	{ "GET / HTTP/2.0\r\nHost: a\r\n\r\n", VNS },
	{ "GET / HTTP/0.9\r\n\r\n", VNS },
	{ "GET / HTTP/3.0\r\nHost: a\r\n\r\n", VNS },
	{ "GET / HTTP/9.9\r\n\r\n", VNS },
	{ "GET / HTTP/2.0\r\n\r\n", VNS },   /* no Host needed */
	{ "OPTIONS * HTTP/2.0\r\n\r\n", VNS },
	{ "POST / HTTP/2.0\r\nTransfer-Encoding: chunked\r\n\r\n", VNS },
	{ "PRI * HTTP/2.0\r\n\r\n", BAD },    /* HTTP/2's preface: invalid first ("*" is OPTIONS's) */
	{ "GET foo HTTP/2.0\r\n\r\n", BAD },
	{ "GET / HTTP/2.0\r\nX\r\n\r\n", BAD },
	{ "GET / HTTP/2\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/2.x\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/a.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/12.0\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/2.00\r\nHost: a\r\n\r\n", BAD },
	{ "GET / http/2.0\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/1.0 \r\n\r\n", CLOSE },
	{ "GET / http/1.1\r\nHost: a\r\n\r\n", BAD }, /* the version is case-sensitive */
	{ "GET / HTTP/1.10\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/1.\r\n\r\n", BAD },
	{ "GET / HTTP/1.x\r\n\r\n", BAD },
	{ "GET / HTTP/11\r\n\r\n", BAD },
	{ "GET /\r\n\r\n", BAD },                        /* no version: HTTP/0.9 */
	{ "GET / HTTP/1.1 x\r\nHost: a\r\n\r\n", BAD },  /* four words */
	{ "GET HTTP/1.1\r\nHost: a\r\n\r\n", BAD },      /* two words */
	{ "HTTP/1.1\r\n\r\n", BAD },
	{ "GET /HTTP/1.1 HTTP/1.0\r\n\r\n", CLOSE },     /* the third word counts */
	{ "M-SEARCH / HTTP/1.1\r\nHost: a\r\n\r\n", NI }, /* a method is a token (not implemented) */
	/*
	 * The methods (RFC 9110 9): GET and HEAD get the 204, OPTIONS a 200
	 * with Allow and Content-Length: 0 (9.3.7; a 204 may have no
	 * Content-Length: 8.6), which closes; any other token is a method the
	 * server does not implement, a 501 (9.1), after the 400s and 505s but
	 * before a body's 411 and 413. Methods are case-sensitive.
	 */
	{ "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "HEAD / HTTP/1.0\r\n\r\n", CLOSE },
	{ "HEAD http://a/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", CLOSE },
	{ "OPTIONS / HTTP/1.0\r\n\r\n", OPT },
	{ "OPTIONS * HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", OPT },
	{ "OPTIONS * HTTP/1.1\r\nHost: a\r\nMax-Forwards: 0\r\n\r\n", OPT },
	{ "OPTIONS http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", OPT },
	{ "OPTIONS / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", OPT },
	{ "OPTIONS / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", CTL },
	{ "OPTIONS * HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", LR },
	{ "OPTIONS / HTTP/1.1\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", NI },
	{ "POST / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", NI },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", NI },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", NI },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", NI },
	{ "PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", NI },
	{ "PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n", NI },
	{ "DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "TRACE / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "TRACE / HTTP/1.1\r\nHost: a\r\nMax-Forwards: 0\r\n\r\n", NI },
	{ "PATCH / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "PRI / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "a / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "!#$%&'*+-.^_`|~09azAZ / HTTP/1.1\r\nHost: a\r\n\r\n", NI }, /* every kind of tchar */
	{ "get / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "Get / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "gET / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "head / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "options / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "post / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "G / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "GE / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "GETS / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "XGET / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "GETGET / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "HEA / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "HEADS / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "HEAT / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "HGET / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "OPTION / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "OPTIONSS / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "OPTIONZ / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "CPTIONS / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "OONNECT / HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "POST / HTTP/1.1\r\n\r\n", BAD },               /* invalid first: no Host */
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n", BAD },
	{ "TRACE * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },  /* "*" is OPTIONS's */
	{ "POST / HTTP/2.0\r\n\r\n", VNS },
	{ "get / HTTP/2.0\r\n\r\n", VNS },
	/*
	 * Preconditions (RFC 9110 13), of GET and HEAD: the target's
	 * representation is empty, with no entity tag and no date, so an
	 * If-Match of entity tags is false (412), "*" true; "If-None-Match: *"
	 * false (304), of entity tags true; If-Match first (13.2.2). Not of
	 * OPTIONS (13.2.1), nor of a request refused anyway.
	 */
	{ H11 "If-Match: \"a\"\r\n\r\n", PF },
	{ H11 "if-match:W/\"a\"\r\n\r\n", PF },
	{ H11 "If-Match: \"a\", \"b\"\r\n\r\n", PF },
	{ H11 "IF-MATCH: \t x\r\n\r\n", PF },       /* invalid, and no tag of the target's */
	{ H11 "If-Match:\r\n \"a\"\r\n\r\n", PF },  /* obs-fold */
	{ H11 "If-Match: *\r\nIf-Match: \"a\"\r\n\r\n", PF },
	{ "HEAD / HTTP/1.0\r\nIf-Match: \"a\"\r\n\r\n", PF },
	{ H11 "If-Match: *\r\n\r\n", KEEP },
	{ H11 "If-Match:  * \r\n\r\n", KEEP },
	{ H11 "If-Match:\r\n\r\n", KEEP },            /* no member */
	{ H11 "If-None-Match: *\r\n\r\n", NM },
	{ H11 "if-none-match:*\t\r\n\r\n", NM },
	{ "HEAD / HTTP/1.1\r\nHost: a\r\nIf-None-Match: *\r\n\r\n", NM },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\nIf-None-Match: *\r\n\r\n", NM },
	{ H11 "If-None-Match: \"a\"\r\n\r\n", KEEP },
	{ H11 "If-None-Match: W/\"a\", \"*\"\r\n\r\n", KEEP },
	{ H11 "If-None-Match: *\r\nIf-Match: \"a\"\r\n\r\n", PF }, /* If-Match first */
	{ H11 "If-None-Match: *\r\nIf-Match: *\r\n\r\n", NM },
	{ H11 "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n", KEEP },
	{ H11 "If-Unmodified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\n", KEEP },
	{ H11 "If-Range: \"a\"\r\nRange: bytes=0-1\r\n\r\n", KEEP },
	{ H11 "X-If-Match: \"a\"\r\n\r\n", KEEP },
	{ H11 "If-Matchx: \"a\"\r\n\r\n", KEEP },
	{ H11 "If-None-Matc: *\r\n\r\n", KEEP },
	{ H11 "X: a\r\n If-Match: \"a\"\r\n\r\n", KEEP }, /* X goes on */
	{ "OPTIONS * HTTP/1.1\r\nHost: a\r\nIf-Match: \"a\"\r\n\r\n", OPT },
	{ "OPTIONS / HTTP/1.1\r\nHost: a\r\nIf-None-Match: *\r\n\r\n", OPT },
	{ "POST / HTTP/1.1\r\nHost: a\r\nIf-Match: \"a\"\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nIf-Match: \"a\"\r\n\r\n", BAD },
	{ H11 "If-None-Match: *\r\nContent-Length: 5\r\n\r\n", CTL },
	/* a method with a byte that is no tchar: invalid (RFC 9112 3, RFC 9110 5.6.2) */
	{ "GE\"T / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET@ / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GE:T / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "G,ET / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET/ / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "[GET] / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "G\x80T / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET\xff / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "\x01GET / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "OPTIONS\x7f * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	/*
	 * The request target: origin-form, absolute-form, authority-form for
	 * CONNECT only, asterisk-form for OPTIONS only (RFC 9112 3.2); else the
	 * request line is invalid (3: 400). Its bytes are a URI's (RFC 3986):
	 * no "#", no byte RFC 3986 leaves out (space, '"', '<', '>', '\\',
	 * '^', '`', '{', '|', '}', above 0x7f), a "%" and two hex digits.
	 */
	{ "GET foo HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "M-SEARCH * HTTP/1.1\r\nHost: a\r\n\r\n", BAD }, /* SSDP's, over UDP: not HTTP/1.1 */
	{ "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", OPT },
	{ "OPTIONS / HTTP/1.1\r\nHost: a\r\n\r\n", OPT },
	{ "OPTIONS */ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "OPTIONS ** HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "options * HTTP/1.1\r\nHost: a\r\n\r\n", BAD }, /* a method is case-sensitive */
	{ "OPTIONSX * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "OPTION * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "COPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a/x?y=1 HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET HTTP://a HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET a+b-c.9:x HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET http://[::1]:80/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	/*
	 * an http or https URI (scheme in any case) has an authority with a
	 * host: one without, or with an empty host, is invalid (RFC 9110
	 * 4.2.1, 4.2.2: a recipient "MUST reject it as invalid"); userinfo
	 * is an error too (4.2.4); other schemes are RFC 3986's generic URIs
	 */
	{ "GET http: HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http:x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http:/x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET HTTP:%2F%2Fa/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http:// HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET https://?a HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET hTTpS://:443/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://u:p@a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://@a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a@ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	/* ...whose authority is host [":" port], as a Host value (RFC 3986 3.2.2, 3.2.3) */
	{ "GET http://a:b/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a:80x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a:8:0/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a:%38/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET https://[::1 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET https://[::1/x] HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://[::1]x/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://[::1]:x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://[::[1] HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://[%41]/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a]/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a[::1]/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http://a:/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP }, /* port = *DIGIT */
	{ "GET http://a:8080?x HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET http://%41:80/[] HTTP/1.1\r\nHost: a\r\n\r\n", KEEP }, /* brackets in the path: as before */
	{ "GET https://[::1] HTTP/1.1\r\nHost: a\r\n\r\n", MIS },
	{ "GET http://[v1.a:b]:0/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET http://1.2.3.4:5?:@[] HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET http://a%40b/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP }, /* a "%40" is no delimiter */
	{ "GET http://%41/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET http://a HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET https://a:443?x HTTP/1.1\r\nHost: a\r\n\r\n", MIS },
	{ "GET http://a/@ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },   /* "@" in the path */
	{ "GET http://a?@ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },   /* ...in the query */
	{ "GET http://a/b//c HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET h: HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET htt:/x HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET httpx:/// HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET httpsx: HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET hxttp:// HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET file:///x HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET urn:a@b HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	/*
	 * an "https" URI, valid: 421, after the 400s and 505s, before the rest
	 * (RFC 9110 7.4: rejected unless it came over a connection secured
	 * for its origin; the servers have no TLS)
	 */
	{ "GET https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", MIS },
	{ "GET HTTPS://a HTTP/1.1\r\nHost: a\r\n\r\n", MIS },
	{ "HEAD hTTpS://a:443/x?y HTTP/1.1\r\nHost: a\r\n\r\n", MIS },
	{ "GET https://a/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", MIS },
	{ "OPTIONS https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", MIS },
	{ "POST https://a/ HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", MIS },
	{ H11 "X: https://a/\r\n\r\n", KEEP },
	{ "GET https://a/ HTTP/1.1\r\nHost: a\r\nIf-None-Match: *\r\n\r\n", MIS },
	{ "GET https://a/ HTTP/1.1\r\n\r\n", BAD },     /* no Host */
	{ "GET https://a/ HTTP/2.0\r\n\r\n", VNS },
	{ "GET /https://a/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET http://a/?https://b HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET httpss://a/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP }, /* another scheme */
	{ "GET xhttps://a/ HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "CONNECT https:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI }, /* a host named "https" */
	{ "GET http HTTP/1.1\r\nHost: a\r\n\r\n", BAD },   /* no ":": no form */
	{ "GET https HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET ht%41p://a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET http:/%2Fa HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET ://a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET 1http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET h_ttp://a/ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET ?a HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /a/b;c=d?e=f&g=h/?:@!$'()*+,~._- HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET /? HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /a<b> HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /\" HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /a\\b HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /| HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /^ HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /` HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /[a] HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /%41%7e%7E HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	{ "GET /%4 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /% HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /%4g HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET %2F HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", BAD }, /* obs-text: no URI byte */
	{ "GET /%C3%A9 HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	/* CONNECT: 501 and the close (a 2xx would tell the client a tunnel is open: RFC 9110 9.3.6) */
	{ "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", NI },
	{ "CONNECT a:443 HTTP/1.0\r\n\r\n", NI },
	{ "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nConnection: keep-alive\r\n\r\n", NI },
	{ "CONNECT a:443 HTTP/1.1\r\n\r\n", BAD },            /* invalid first: no Host */
	/* a method is case-sensitive: another one, with "a:443" as an absolute URI; 501 all the same */
	{ "connect a:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "CONNECTS a:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "CONNEC a:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "XCONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "connect [::1]:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD }, /* no URI: authority-form is CONNECT's */
	{ "CONNECTS a.b:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },  /* "a.b" a scheme */
	{ "OPTIONS a:443 HTTP/1.1\r\nHost: a\r\n\r\n", OPT },
	{ "GET /CONNECT HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },  /* only the method counts */
	/* CONNECT's target is host ":" port (RFC 9112 3.2.3), no other form */
	{ "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", NI },
	{ "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "CONNECT a%41:443 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT * HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a:443x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT :443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT user@a:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a:443/x HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT http://a:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	/* ...its host and port as a Host value's (RFC 3986 3.2.2, 3.2.3): a
	 * port of digits, an IP literal closed and the whole host */
	{ "CONNECT a:8:0 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a:44x3 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a:%34%34 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT [::1:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT [::1] HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT [::1]x:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a]:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a[::1]:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT [a@b]:443 HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "CONNECT a: HTTP/1.1\r\nHost: a\r\n\r\n", NI }, /* port = *DIGIT */
	{ "CONNECT [v1.x]:80 HTTP/1.1\r\nHost: a\r\n\r\n", NI },
	{ "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET\x7f / HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", BAD }, /* a target of visible bytes */
	{ "GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ H11 "Version: HTTP/1.1\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nVersion: HTTP/1.1\r\n\r\n", CLOSE },
	/* Host (RFC 9112 3.2): one in an HTTP/1.1 request, at most one in any */
	{ "GET / HTTP/1.1\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nhOST:\r\n\r\n", KEEP }, /* empty, as a target without authority has it */
	{ "GET / HTTP/1.1\r\nX-Host: a\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHosts: a\r\n\r\n", BAD },
	{ H11 "Host: a\r\n\r\n", BAD },
	{ "GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\n Host: a\r\n\r\n", BAD }, /* after the request line: skipped */
	/* ...whose value is a host and a port (RFC 9112 3.2) */
	{ "GET / HTTP/1.1\r\nHost: 127.0.0.1:7000\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: [::1]:7000\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: \t ex-am_ple.~%41!$&'()*+,;=  \r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost:\r\n a\r\n\r\n", KEEP }, /* obs-fold: " a" */
	{ "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", BAD }, /* obs-fold: "a b" */
	{ "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: user@a\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a?b\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: \"a\"\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", BAD },
	/* ...uri-host [":" port] to the letter (RFC 3986 3.2.2, 3.2.3): a MUST (RFC 9112 3.2) */
	{ "GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: [v1.x:y]:1\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: :80\r\n\r\n", KEEP },  /* an empty reg-name */
	{ "GET / HTTP/1.1\r\nHost: a:\r\n\r\n", KEEP },   /* an empty port */
	{ "GET / HTTP/1.1\r\nHost: A.B-c%2a\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: a:b\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a:80:90\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a:8 0\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: ::1\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: [::1]]\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: [[::1]\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a[::1]\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a]\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: [a/b]\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a%4\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a%\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: [::1\r\n ]\r\n\r\n", BAD }, /* obs-fold: "[::1 ]" */
	/* Connection: close, field name and option in any case */
	{ H11 "Connection: close\r\n\r\n", CLOSE },
	{ H11 "connection: close\r\n\r\n", CLOSE },
	{ H11 "CONNECTION: CLOSE\r\n\r\n", CLOSE },
	{ H11 "cOnNeCtIoN: cLoSe\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\nAccept: */*\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.1\nConnection: close\nHost: a\n\n", CLOSE },
	/* option lists and whitespace */
	{ H11 "Connection:close\r\n\r\n", CLOSE },
	{ H11 "Connection: \t close \t \r\n\r\n", CLOSE },
	{ H11 "Connection: keep-alive, close\r\n\r\n", CLOSE },
	{ H11 "Connection: close, keep-alive\r\n\r\n", CLOSE },
	{ H11 "Connection: Upgrade,close\r\n\r\n", CLOSE },
	{ H11 "Connection: ,, close ,,\r\n\r\n", CLOSE },
	{ H11 "Connection: foo , close , bar\r\n\r\n", CLOSE },
	{ H11 "Connection: TE, Upgrade\r\n\r\n", KEEP },
	{ H11 "Connection: keep-alive\r\n\r\n", KEEP },
	{ H11 "Connection:\r\n\r\n", KEEP },
	/* several Connection lines: the options of all of them */
	{ H11 "Connection: keep-alive\r\nConnection: close\r\n\r\n", CLOSE },
	{ H11 "Connection: close\r\nConnection: keep-alive\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.1\r\nConnection: TE\r\nHost: a\r\nconnection: close\r\n\r\n", CLOSE },
	/* obs-fold: a line starting with whitespace continues the field; a bare CR is a space */
	{ H11 "Connection: keep-alive,\r\n close\r\n\r\n", CLOSE },
	{ H11 "Connection: TE\r\n\t, close\r\n\r\n", CLOSE },
	{ H11 "Connection: close\r\n foo\r\n\r\n", KEEP }, /* one option, "close foo" */
	{ H11 "Connection: clo\r\n se\r\n\r\n", KEEP },
	{ H11 "X: a\r\n Connection: close\r\n\r\n", KEEP }, /* X goes on */
	{ "GET / HTTP/1.1\r\n Connection: close\r\nHost: a\r\n\r\n", KEEP }, /* after the request line: skipped */
	/* a bare CR, one not followed by LF: invalid (RFC 9112 2.2), wherever it is */
	{ H11 "Connection:\rclose\r\n\r\n", BAD },
	{ H11 "Connection: cl\rose\r\n\r\n", BAD },
	{ "GET /\rHTTP/1.1\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\r\nHost: a\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\rHost: a\r\n\r\n", BAD },
	{ H11 "X: y\r\r\n\r\n", BAD },
	{ H11 "X\r: y\r\n\r\n", BAD },
	{ H11 "\r\r\n", BAD },     /* the head ends refused: what follows is no next request */
	{ H11 "\r \r\n\r\n", BAD },

	/* not a close option, or not a Connection field */
	{ H11 "Connection: closed\r\n\r\n", KEEP },
	{ H11 "Connection: clos\r\n\r\n", KEEP },
	{ H11 "Connection: xclose\r\n\r\n", KEEP },
	{ H11 "Connection: close-x\r\n\r\n", KEEP },
	{ H11 "Connection: close x\r\n\r\n", KEEP },
	{ H11 "Connection: c lose\r\n\r\n", KEEP },
	{ H11 "Connection: \"close\"\r\n\r\n", KEEP },
	{ H11 "Connection: close;q=1\r\n\r\n", KEEP },
	{ H11 "X-Connection: close\r\n\r\n", KEEP },
	{ H11 "Proxy-Connection: close\r\n\r\n", KEEP },
	{ H11 "Connection-X: close\r\n\r\n", KEEP },
	{ H11 "Connectio: close\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: close\r\n\r\n", KEEP },
	{ H11 "X: Connection: close\r\n\r\n", KEEP },
	{ "GET /close HTTP/1.1\r\nHost: a\r\n\r\n", KEEP },
	/* a field name that is no token (RFC 9112 5.1: whitespace before the colon), or no colon: invalid */
	{ H11 "Connection : close\r\n\r\n", BAD },
	{ H11 "Connection close\r\n\r\n", BAD },
	{ H11 "Connection\r\n\r\n", BAD },
	{ H11 "X\n\n", BAD },
	{ H11 ": close\r\n\r\n", BAD },
	{ H11 "X(y): z\r\n\r\n", BAD },
	{ H11 "X\"y: z\r\n\r\n", BAD },
	{ H11 "!#$%&'*+-.^_`|~09azAZ: z\r\n\r\n", KEEP }, /* every kind of token byte */
	{ "GET / HTTP/1.1\r\nHost : a\r\n\r\n", BAD },
	/* HTTP/1.0: keep-alive in any case (ab -k sends "Keep-Alive"), close wins */
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: a\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nconnection:KEEP-ALIVE\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nConnection: TE, keep-alive\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nConnection: TE\r\nConnection: keep-alive\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nConnection: TE,\r\n keep-alive\r\n\r\n", KEEP },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\nKeep-Alive: timeout=5\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\nConnection: keepalive\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive-x\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\nConnection: keep\r\n\r\n", CLOSE },
	{ "GET / HTTP/1.0\r\nConnection:\r\n\r\n", CLOSE },
	{ "GET / HTTP/2.0\r\nConnection: keep-alive\r\n\r\n", VNS },
	/*
	 * A head that announces a body is refused, and closes (RFC 9112 6.3):
	 * the server reads no bodies, so it does not take the request (a 2xx
	 * would say its content was received and accepted: RFC 9110 15.3),
	 * and the body must not be read as the next request. A Content-Length
	 * of digits not all zero gets a 413 (the content is larger than the
	 * server processes: RFC 9110 15.5.14); a Transfer-Encoding whose last
	 * coding is chunked a 411 (a Content-Length is required: 15.5.12; a
	 * client with no content may send "Content-Length: 0").
	 */
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\ncontent-length:18\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nCONTENT-LENGTH: 10\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 007\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n 5\r\n\r\n", CTL }, /* obs-fold: " 5" */
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 9\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", LR },
	{ "GET / HTTP/1.1\r\nHost: a\r\ntransfer-encoding: CHUNKED\r\n\r\n", LR },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \t Chunked \t\r\n\r\n", LR },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , chunked ,,\r\n\r\n", LR },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n", LR },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n", LR },
	/* a coding other than chunked before it: 501, the server implements none (RFC 9112 6.1) */
	{ "GET / HTTP/1.1\r\nHost: a\r\ntransfer-encoding: gzip, CHUNKED\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked ,\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity, chunked\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunk, chunked\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 5\r\n\r\n", NI },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\nConnection: keep-alive\r\n\r\n", NI },
	/* chunked twice: invalid (RFC 9112 7), whatever is between */
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,,Chunked\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip, chunked\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked,\r\n chunked\r\n\r\n", BAD },
	{ "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", LR },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\n", CTL },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\t000 \r\n\r\n", KEEP },
	{ "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", KEEP },
	{ H11 "Content-Lengthx: 5\r\n\r\n", KEEP },
	{ H11 "X-Content-Length: 5\r\n\r\n", KEEP },
	{ H11 "Content-Lengt: 5\r\n\r\n", KEEP },
	{ H11 "Content: 5\r\n\r\n", KEEP },
	{ H11 "Transfer-Encodin: chunked\r\n\r\n", KEEP },
	{ H11 "X: Content-Length: 5\r\n\r\n", KEEP },
	{ H11 "X: a\r\n Transfer-Encoding: chunked\r\n\r\n", KEEP }, /* X goes on */
	/* a Content-Length not one run of digits, or two of them: invalid (RFC 9110 8.6, RFC 9112 6.3) */
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 7\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0 0\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0, 0\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \t \r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -0\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x0\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5a\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n 5\r\n\r\n", BAD }, /* obs-fold: "0 5" */
	/* a Transfer-Encoding whose last coding is not chunked (RFC 9112 6.3), or in HTTP/1.0 (6.1) */
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunkedx\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked;x=1\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \"chunked\"\r\n\r\n", BAD },
	{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", BAD },
	{ "POST / HTTP/1.0\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", BAD },
	{ "POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n", BAD },
	/* whitespace between a field name and its colon: invalid (RFC 9112 5.1) */
	{ "POST / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\n", BAD },
	{ "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding\t: chunked\r\n\r\n", BAD },
};

/* xorshift64: the random inputs, the same every run */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned below)
{
	return (unsigned)(xorshift64(&rng) % below);
}

/*
 * Random heads built of the pieces the parser looks for (and any byte):
 * fed whole, a byte at a time and cut in three at random, they must give
 * the same heads and the same decision. (ASan and UBSan builds of this
 * test check every byte's handling besides.)
 */
static void check_random(void)
{
	static const char *const pieces[] = {
		"GET", " ", "/", "HTTP/1.0", "HTTP/1.1", "HTTP/1.", "\r\n", "\n", "\r", "\t", ":", ",",
		"Connection", "connection:", "Connection: ", "close", "CLOSE", "keep-alive", "Keep-Alive",
		"\r\n\r\n", "x", "\r\n ", "HTTP/2.0", "Content-Length:", "content-length: ", "0", "5",
		"Transfer-Encoding:", " chunked", "\0", "Host: a\r\n", "host:", "gzip", "(",
		"*", "OPTIONS", "CONNECT", "%4", "http:", "a:1", "#", "[::1]", "]", "Host: ",
		"HEAD", "POST", "get", "GE", "If-Match: ", "If-None-Match:", "\"a\"",
		"https://a", "HTTPS:",
	};
	char in[600];
	for (int t = 0; t < 20000; t++) {
		size_t n = 0;
		while (n < 500 && rnd(40)) {
			if (rnd(8) == 0) {
				in[n++] = (char)rnd(256);
				continue;
			}
			const char *p = pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))];
			memcpy(in + n, p, strlen(p));
			n += strlen(p);
		}
		size_t done_at[8], cuts[600];
		int close, c2;
		int whole = feed(in, n, cuts, 0, done_at, 0, &close);
		for (size_t i = 0; i < n; i++)
			cuts[i] = i + 1;
		int bytewise = feed(in, n, cuts, n ? (int)n - 1 : 0, done_at, 0, &c2);
		CHECK(bytewise == whole && (whole < 0 || c2 == close), "random input %d: %d heads (reply %d) whole, "
		      "%d (reply %d) a byte at a time", t, whole, close, bytewise, c2);
		cuts[0] = n ? rnd((unsigned)n + 1) : 0;
		cuts[1] = cuts[0] + (n - cuts[0] ? rnd((unsigned)(n - cuts[0]) + 1) : 0);
		int three = feed(in, n, cuts, 2, done_at, 0, &c2);
		CHECK(three == whole && (whole < 0 || c2 == close), "random input %d: %d heads (reply %d) whole, "
		      "%d (reply %d) cut at %zu and %zu", t, whole, close, three, c2, cuts[0], cuts[1]);
	}
}

/*
 * The heartbeat parser (demo_heartbeat_input()): the PINGs one read
 * completes, however the reads cut the lines, with their PONGs out of
 * demo_pongs(). A PING begun in one read may end in the next, so a full
 * read can complete more PINGs than its bytes hold PONGs: one of 512
 * bytes, "\n" and 102 PINGs, completes 103, 515 bytes of PONGs; written
 * in place, they ran 3 bytes past the buffer (into the next provided
 * buffer, or past a malloc'd one).
 */
static void check_heartbeat(void)
{
	char line[DEMO_PING_LEN];
	uint16_t len = 0;
	char *rd = malloc(512); /* exactly one read: ASan sees a byte past it */
	CHECK(rd != NULL, "malloc");
	if (!rd)
		return;
	CHECK(demo_heartbeat_input("PING", 4, line, &len) == 0 && len == 4, "a PING begun: none yet");
	rd[0] = '\n';
	for (int i = 0; i < 102; i++)
		memcpy(rd + 1 + DEMO_PING_LEN * i, DEMO_PING, DEMO_PING_LEN);
	rd[511] = 'P';
	int k = demo_heartbeat_input(rd, 512, line, &len);
	CHECK(k == 103 && len == 1, "a read of 512 bytes ending a PING begun before and 102 more: %d PINGs, want 103", k);
	CHECK(rd[0] == '\n' && memcmp(rd + 1, DEMO_PING, DEMO_PING_LEN) == 0 && rd[511] == 'P', "the read is left as it was");
	free(rd);

	/* the same lines cut at every position: the same PINGs; only exact "PING"
	 * lines count, ended by LF or CRLF (telnet's) */
	const char *in = "PING\nPONG\nPING\r\nPIN\nPINGS\nPING\r\r\nPI\rNG\n\rPING\nPING\n\nPING\n";
	size_t n = strlen(in);
	for (size_t cut = 0; cut <= n; cut++) {
		len = 0;
		int a = demo_heartbeat_input(in, cut, line, &len);
		int b = demo_heartbeat_input(in + cut, n - cut, line, &len);
		CHECK(a >= 0 && b >= 0 && a + b == 4 && len == 0, "cut at %zu: %d + %d PINGs, want 4", cut, a, b);
	}

	/* the limits: a line of DEMO_MAX_LINE bytes, one more; DEMO_HEARTBEAT_MAX_BATCH PINGs, one more */
	char big[(DEMO_HEARTBEAT_MAX_BATCH + 1) * DEMO_PING_LEN];
	memset(big, 'x', DEMO_MAX_LINE + 1);
	len = 0;
	CHECK(demo_heartbeat_input(big, DEMO_MAX_LINE, line, &len) == 0, "a line of %d bytes", DEMO_MAX_LINE);
	CHECK(demo_heartbeat_input(big, 1, line, &len) == -1, "a line of %d bytes", DEMO_MAX_LINE + 1);
	/* a line of DEMO_MAX_LINE bytes ended by CRLF (its CR is no part of
	 * it), cut at every position: kept, and a PING after it answered; the
	 * CR of a longer one, or one not followed by LF, is one byte too many */
	char crlf[DEMO_MAX_LINE + 7];
	memset(crlf, 'x', DEMO_MAX_LINE);
	memcpy(crlf + DEMO_MAX_LINE, "\r\nPING\n", 7);
	for (size_t cut = 0; cut <= sizeof(crlf); cut++) {
		len = 0;
		int a = demo_heartbeat_input(crlf, cut, line, &len);
		int b = a < 0 ? -1 : demo_heartbeat_input(crlf + cut, sizeof(crlf) - cut, line, &len);
		CHECK(a >= 0 && b >= 0 && a + b == 1 && len == 0,
		      "a line of %d bytes and CRLF, then PING, cut at %zu: %d + %d PINGs, want 1", DEMO_MAX_LINE,
		      cut, a, b);
	}
	crlf[DEMO_MAX_LINE + 1] = 'y'; /* the CR not followed by LF */
	len = 0;
	CHECK(demo_heartbeat_input(crlf, DEMO_MAX_LINE + 2, line, &len) == -1, "a line of %d bytes and a CR, then y",
	      DEMO_MAX_LINE);
	crlf[DEMO_MAX_LINE] = 'x'; /* a byte past the limit, then CRLF */
	memcpy(crlf + DEMO_MAX_LINE + 1, "\r\n", 2);
	len = 0;
	CHECK(demo_heartbeat_input(crlf, DEMO_MAX_LINE + 3, line, &len) == -1, "a line of %d bytes and CRLF",
	      DEMO_MAX_LINE + 1);
	for (int i = 0; i <= DEMO_HEARTBEAT_MAX_BATCH; i++)
		memcpy(big + DEMO_PING_LEN * i, DEMO_PING, DEMO_PING_LEN);
	len = 0;
	k = demo_heartbeat_input(big, DEMO_HEARTBEAT_MAX_BATCH * DEMO_PING_LEN, line, &len);
	CHECK(k == DEMO_HEARTBEAT_MAX_BATCH, "%d PINGs at once: %d", DEMO_HEARTBEAT_MAX_BATCH, k);
	len = 0;
	k = demo_heartbeat_input(big, sizeof(big), line, &len);
	CHECK(k == -1, "%d PINGs at once: %d, want -1", DEMO_HEARTBEAT_MAX_BATCH + 1, k);

	const char *pongs = demo_pongs();
	for (int i = 0; i < DEMO_HEARTBEAT_MAX_BATCH; i++)
		CHECK(memcmp(pongs + DEMO_PING_LEN * i, DEMO_PONG, DEMO_PING_LEN) == 0, "demo_pongs(): PONG %d", i);
}

int main(void)
{
	char buf[8192];
	size_t ends[64];

	/* the generator's request, three times back to back (pipelined) */
	size_t n = 0;
	for (int k = 0; k < 3; k++) {
		memcpy(buf + n, DEMO_HTTP_REQ, DEMO_HTTP_REQ_LEN);
		n += DEMO_HTTP_REQ_LEN;
		ends[k] = n;
	}
	check_splits("3 requests", buf, n, 3, KEEP, ends);

	/* a browser-like head with more headers, then a partial one: one head */
	const char *b = "GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:7000\r\nUser-Agent: t\r\nAccept: */*\r\n\r\nGET / HT";
	ends[0] = strstr(b, "\r\n\r\n") + 4 - b;
	check_splits("headers + partial", b, strlen(b), 1, KEEP, ends);

	/* CR/LF before a request line are skipped (RFC 9112 2.2): no empty head */
	const char *lead = "\r\n\r\n\nGET / HTTP/1.1\r\nHost: idle\r\n\r\n\r\n";
	ends[0] = strlen(lead) - 2;
	check_splits("leading empty lines", lead, strlen(lead), 1, KEEP, ends);
	check_splits("only empty lines", "\r\n\r\n\n\n\r\n", 8, 0, KEEP, ends);

	/* a bare LF ends a line too */
	const char *lf = "GET / HTTP/1.1\nHost: idle\n\nGET / HTTP/1.1\r\nHost: idle\n\r\n";
	ends[0] = strlen("GET / HTTP/1.1\nHost: idle\n\n");
	ends[1] = strlen(lf);
	check_splits("bare LF", lf, strlen(lf), 2, KEEP, ends);

	/* a CR alone inside a line does not end it; "\r\r\n" ends the head (a 400: bare CR) */
	const char *cr = "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\r\n";
	ends[0] = strlen(cr);
	check_splits("stray CR", cr, strlen(cr), 1, BAD, ends); /* and invalid (RFC 9112 2.2) */

	/*
	 * Each head alone, then with a request pipelined after it, which is
	 * answered only if the head keeps the connection open.
	 */
	const char *next = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	for (size_t i = 0; i < sizeof(persistence) / sizeof(persistence[0]); i++) {
		const char *h = persistence[i].head;
		int reply = persistence[i].reply;
		ends[0] = strlen(h);
		ends[1] = ends[0] + strlen(next);
		check_splits(shown(h), h, ends[0], 1, reply, ends);
		snprintf(buf, sizeof(buf), "%s%s", h, next);
		check_splits(shown(buf), buf, ends[1], reply != KEEP ? 1 : 2, reply, ends);
	}

	/*
	 * A NUL in a field value is read as a space (RFC 9110 5.5 allows that
	 * or rejecting the message; both close on "close\0"), never as part of
	 * an option or a length; in a field name it is no token byte.
	 */
	static const struct {
		const char *head;
		size_t len;
		int reply;
	} nul[] = {
#define NUL_CASE(lit, r) { lit, sizeof(lit) - 1, r }
		NUL_CASE(H11 "Connection: close\0\r\n\r\n", CLOSE),
		NUL_CASE(H11 "Connection:\0close\r\n\r\n", CLOSE),
		NUL_CASE(H11 "Connection: cl\0ose\r\n\r\n", KEEP),
		NUL_CASE("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\0\r\n\r\n", KEEP),
		NUL_CASE("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\0" "5\r\n\r\n", BAD),
		NUL_CASE(H11 "X\0: y\r\n\r\n", BAD),
		NUL_CASE("GET /\0 HTTP/1.1\r\nHost: a\r\n\r\n", BAD),
#undef NUL_CASE
	};
	for (size_t i = 0; i < sizeof(nul) / sizeof(nul[0]); i++) {
		ends[0] = nul[i].len;
		ends[1] = ends[0] + strlen(next);
		check_splits(shown(nul[i].head), nul[i].head, ends[0], 1, nul[i].reply, ends);
		memcpy(buf, nul[i].head, ends[0]);
		memcpy(buf + ends[0], next, strlen(next));
		check_splits(shown(nul[i].head), buf, ends[1], nul[i].reply != KEEP ? 1 : 2, nul[i].reply, ends);
	}

	/* a run of requests: the one that closes is the last answered, the rest is not read */
	const char *run = H11 "\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
			  "GET /2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" H11 "\r\nGET";
	ends[0] = strlen(H11 "\r\n");
	ends[1] = strstr(run, "GET /2") - run;
	ends[2] = strstr(run, "close\r\n\r\n") + 9 - run;
	check_splits("close third of four", run, strlen(run), 3, CLOSE, ends);
	/* ...and the one refused */
	const char *bad = H11 "\r\nGET / HTTP/1.1\r\n\r\n" H11 "\r\n";
	ends[0] = strlen(H11 "\r\n");
	ends[1] = ends[0] + strlen("GET / HTTP/1.1\r\n\r\n");
	check_splits("refused second of three", bad, strlen(bad), 2, BAD, ends);
	/* ...and a CONNECT: the method does not carry over, nor does it from the one before */
	const char *con = "HEAD / HTTP/1.1\r\nHost: a\r\n\r\nCONNECT a:1 HTTP/1.1\r\nHost: a\r\n\r\n" H11 "\r\n";
	ends[0] = strstr(con, "\r\n\r\n") + 4 - con;
	ends[1] = strstr(con + ends[0], "\r\n\r\n") + 4 - con;
	check_splits("CONNECT second of three", con, strlen(con), 2, NI, ends);
	/* ...and a method not implemented after GET and HEAD, an OPTIONS after GET: the last answered */
	const char *meth = "GET / HTTP/1.1\r\nHost: a\r\n\r\nHEAD / HTTP/1.1\r\nHost: a\r\n\r\n"
			   "GETX / HTTP/1.1\r\nHost: a\r\n\r\n" H11 "\r\n";
	ends[0] = strstr(meth, "HEAD") - meth;
	ends[1] = strstr(meth, "GETX") - meth;
	ends[2] = ends[1] + strlen("GETX / HTTP/1.1\r\nHost: a\r\n\r\n");
	check_splits("a method not implemented third of four", meth, strlen(meth), 3, NI, ends);
	const char *opt = H11 "\r\nOPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n" H11 "\r\n";
	ends[0] = strlen(H11 "\r\n");
	ends[1] = strstr(opt + ends[0], "\r\n\r\n") + 4 - opt;
	check_splits("OPTIONS second of three", opt, strlen(opt), 2, OPT, ends);
	/* what a head says holds for that head only */
	const char *ka = "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n" H11 "\r\n";
	ends[0] = strstr(ka, "\r\n\r\n") + 4 - ka;
	ends[1] = strstr(ka + ends[0], "\r\n\r\n") + 4 - ka;
	check_splits("keep-alive does not carry over", ka, strlen(ka), 2, CLOSE, ends);
	const char *v = H11 "\r\nGET /\r\nHost: a\r\n\r\n" H11 "\r\n";
	ends[0] = strlen(H11 "\r\n");
	ends[1] = ends[0] + strlen("GET /\r\nHost: a\r\n\r\n");
	check_splits("the version does not carry over", v, strlen(v), 2, BAD, ends);
	const char *host = H11 "\r\nGET / HTTP/1.1\r\n\r\n";
	ends[0] = strlen(H11 "\r\n");
	ends[1] = strlen(host);
	check_splits("Host does not carry over", host, strlen(host), 2, BAD, ends);
	const char *cl = "GET / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
			 "GET / HTTP/1.0\r\nContent-Length: 0\r\n\r\n";
	ends[0] = strstr(cl, "\r\n\r\n") + 4 - cl;
	ends[1] = strlen(cl);
	check_splits("Content-Length does not carry over", cl, strlen(cl), 2, CLOSE, ends);
	/* after the head that closes, nothing is read: an overlong or endless rest is no error */
	n = (size_t)snprintf(buf, sizeof(buf), H11 "Connection: close\r\n\r\n");
	ends[0] = n;
	memset(buf + n, 'x', 2 * DEMO_HTTP_MAX_HEAD);
	check_splits("close, then an overlong head", buf, n + 2 * DEMO_HTTP_MAX_HEAD, 1, CLOSE, ends);
	struct demo_http st = { 0 };
	CHECK(demo_http_input(buf, n, &st) == 1 && st.close, "a head that closes");
	CHECK(demo_http_input(next, strlen(next), &st) == 0 && st.close, "a later read after it: nothing");
	/* between heads that persist, nothing is left of the last one */
	st = (struct demo_http){ 0 };
	const char *fold = H11 "Connection: TE\r\n\r\n";
	CHECK(demo_http_input(fold, strlen(fold), &st) == 1 && !st.close && st.len == 0 && !st.field && !st.head,
	      "state after a complete head");

	/*
	 * DEMO_HTTP_MAX_HEAD: a head of exactly that many bytes passes; one
	 * more is answered 414 if it is all request line, else 431, and closes
	 */
	size_t max = DEMO_HTTP_MAX_HEAD;
	memset(buf, 'a', max - 4);
	memcpy(buf + max - 4, "\r\n\r\n", 4);
	ends[0] = max;
	check_splits("head of the longest length", buf, max, 1, BAD, ends); /* no version */
	memset(buf, 'a', max - 3);
	memcpy(buf + max - 3, "\r\n\r\n", 4);
	ends[0] = max + 1;
	check_splits("head one byte too long", buf, max + 1, 1, DEMO_HTTP_TOO_LARGE, ends);
	/* ...with a Connection field at its end, either way */
	for (int c = 0; c < 2; c++) {
		const char *tail = c ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n";
		size_t prefix = strlen(H11 "X: ");
		memcpy(buf, H11 "X: ", prefix);
		memset(buf + prefix, 'a', max - prefix - strlen(tail));
		memcpy(buf + max - strlen(tail), tail, strlen(tail));
		ends[0] = max;
		check_splits(c ? "longest head, closing" : "longest head, keep-alive", buf, max, 1, c ? CLOSE : KEEP,
			     ends);
		memmove(buf + 1, buf, max); /* one more byte in X's value */
		memcpy(buf, H11 "X: a", prefix + 1);
		ends[0] = max + 1;
		check_splits("one byte too long", buf, max + 1, 1, DEMO_HTTP_TOO_LARGE, ends);
	}
	/*
	 * ...and bytes without an end, however they come: a method too long
	 * (RFC 9112 3: "SHOULD respond with a 501"), a target too long (414)
	 */
	memset(buf, 'x', sizeof(buf));
	ends[0] = max + 1;
	check_splits("no end", buf, max + 1, 1, NI, ends);
	check_splits("no end, and more", buf, max + 100, 1, NI, ends);
	st = (struct demo_http){ 0 };
	CHECK(demo_http_input(buf, max, &st) == 0, "%zu bytes without an end: no head yet", max);
	CHECK(demo_http_input(buf, 1, &st) == 1 && st.close && st.reply == NI, "one byte more: too long, 501");
	CHECK(demo_http_input(buf, 1, &st) == 0, "then nothing is read");
	memcpy(buf, "GET /", 5);
	check_splits("a target without an end", buf, max + 1, 1, DEMO_HTTP_URI_TOO_LONG, ends);
	memcpy(buf, "GET    ", 7);
	check_splits("whitespace, then a target without an end", buf, max + 1, 1, DEMO_HTTP_URI_TOO_LONG, ends);
	/* a target that ended, then whitespace: no version is that long, 400 */
	memset(buf, ' ', sizeof(buf));
	memcpy(buf, "GET /", 5);
	check_splits("a target, then whitespace without an end", buf, max + 1, 1, BAD, ends);
	/*
	 * ...whitespace before any target (RFC 9112 3 lets a recipient skip
	 * it): no URI was sent, so no 414; an invalid request line, 400
	 */
	memset(buf, ' ', sizeof(buf));
	check_splits("whitespace without an end", buf, max + 1, 1, BAD, ends);
	memcpy(buf, "GET", 3);
	check_splits("a method, then whitespace without an end", buf, max + 1, 1, BAD, ends);
	memset(buf, '\t', sizeof(buf));
	memcpy(buf, "\r\n\t\vGET\f", 8);
	ends[0] = max + 3;
	check_splits("an empty line, then tabs without an end", buf, max + 3, 1, BAD, ends);
	ends[0] = max + 1;
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "\r\n\r\nGET /", 9);
	ends[0] = max + 5;
	check_splits("empty lines, then a target without an end", buf, max + 5, 1, DEMO_HTTP_URI_TOO_LONG, ends);
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "\r\n", 2);
	ends[0] = max + 3;
	check_splits("an empty line, then a method without an end", buf, max + 3, 1, NI, ends);
	/* ...a third word without an end: no HTTP-version (RFC 9112 2.3), an invalid line: 400 */
	memcpy(buf, "GET / HTTP/1.1", 14);
	ends[0] = max + 1;
	check_splits("a version without an end", buf, max + 1, 1, BAD, ends);
	memset(buf + 14, ' ', sizeof(buf) - 14);
	check_splits("a version, then whitespace without an end", buf, max + 1, 1, BAD, ends);
	memcpy(buf, "GET / HTTP/1.1 x", 16);
	check_splits("a fourth word without an end", buf, max + 1, 1, BAD, ends);
	memset(buf, 'x', sizeof(buf));
	/* a head too long after keep-alive ones in the same read: they are answered, then the 431 */
	n = 0;
	for (int k = 0; k < 2; k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", DEMO_HTTP_REQ);
	ends[0] = DEMO_HTTP_REQ_LEN;
	ends[1] = 2 * DEMO_HTTP_REQ_LEN;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, H11);
	memset(buf + n, 'y', max);
	ends[2] = 2 * DEMO_HTTP_REQ_LEN + max + 1;
	check_splits("two, then too long", buf, n + max, 3, DEMO_HTTP_TOO_LARGE, ends);

	/*
	 * methods of any length but the three the server implements: 501,
	 * however many bytes they hold (one as long as the head allows, any
	 * length around 255, where a count of its bytes in a byte would wrap
	 * and read a "GET" after them as the method)
	 */
	const char *rest = " / HTTP/1.1\r\nHost: a\r\n\r\n";
	for (size_t k = 250; k <= max - strlen(rest); k = k == 260 ? max - strlen(rest) : k + 1) {
		memset(buf, 'x', k);
		memcpy(buf + k, "GET", 3);
		n = k < 260 ? k + 3 : k;
		memcpy(buf + n, rest, strlen(rest));
		n += strlen(rest);
		ends[0] = n;
		char name[64];
		snprintf(name, sizeof(name), "a method of %zu bytes", n - strlen(rest));
		check_splits(name, buf, n, 1, NI, ends);
	}

	/* DEMO_HTTP_MAX_BATCH heads in one read pass, one more fails */
	const char *min = "GET / HTTP/1.1\nHost:\n\n";
	size_t ml = strlen(min);
	n = 0;
	for (int k = 0; k < DEMO_HTTP_MAX_BATCH + 1; k++) {
		memcpy(buf + n, min, ml);
		n += ml;
	}
	st = (struct demo_http){ 0 };
	CHECK(demo_http_input(buf, n - ml, &st) == DEMO_HTTP_MAX_BATCH, "%d minimal heads in one read",
	      DEMO_HTTP_MAX_BATCH);
	CHECK(st.len == 0 && !st.close, "state after complete heads: len %u close %d", st.len, st.close);
	st = (struct demo_http){ 0 };
	CHECK(demo_http_input(buf, n, &st) == -1, "%d heads in one read: refused", DEMO_HTTP_MAX_BATCH + 1);

	check_random();

	/* the replies: k keep-alive ones, or k - 1 then the one that closes, whichever it is */
	static const struct {
		int reply;
		const char *status;
	} last[] = {
		{ KEEP, "HTTP/1.1 204 No Content\r\nDate: \r\nConnection: keep-alive\r\n\r\n" },
		{ CLOSE, "HTTP/1.1 204 No Content\r\nDate: \r\nConnection: close\r\n\r\n" },
		{ OPT, "HTTP/1.1 200 OK\r\nDate: \r\nAllow: GET, HEAD, OPTIONS\r\nContent-Length: 0\r\n"
		       "Connection: close\r\n\r\n" },
		{ NM, "HTTP/1.1 304 Not Modified\r\nDate: \r\nConnection: close\r\n\r\n" },
		{ PF, "HTTP/1.1 412 Precondition Failed\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
		{ MIS, "HTTP/1.1 421 Misdirected Request\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
		{ BAD, "HTTP/1.1 400 Bad Request\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
		{ DEMO_HTTP_URI_TOO_LONG, "HTTP/1.1 414 URI Too Long\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
		{ DEMO_HTTP_TOO_LARGE, "HTTP/1.1 431 Request Header Fields Too Large\r\nDate: \r\nContent-Length: 0\r\n"
				       "Connection: close\r\n\r\n" },
		{ NI, "HTTP/1.1 501 Not Implemented\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
		{ VNS, "HTTP/1.1 505 HTTP Version Not Supported\r\nDate: \r\nContent-Length: 0\r\n"
		       "Connection: close\r\n\r\n" },
		{ LR, "HTTP/1.1 411 Length Required\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
		{ CTL, "HTTP/1.1 413 Content Too Large\r\nDate: \r\nContent-Length: 0\r\nConnection: close\r\n\r\n" },
	};
	/* each reply's Date field (RFC 9110 6.6.1): the second the replies were taken, IMF-fixdate */
	time_t t0 = time(NULL);
	unsigned copy = demo_http_replies_hold();
	time_t t1 = time(NULL);
	const char *rep = demo_http_replies(copy);
	char date0[DEMO_HTTP_DATE_LEN + 1], date1[DEMO_HTTP_DATE_LEN + 1];
	struct tm tm;
	strftime(date0, sizeof(date0), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&t0, &tm));
	strftime(date1, sizeof(date1), "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&t1, &tm));
	for (int k = 0; k <= DEMO_HTTP_MAX_BATCH; k++)
		for (size_t l = 0; l < sizeof(last) / sizeof(last[0]); l++) {
			uint16_t from = 1, to = 0;
			struct demo_http h = { .close = last[l].reply != KEEP, .reply = (uint8_t)last[l].reply };
			demo_http_reply_span(k, &h, &from, &to);
			size_t keep = strlen(last[0].status) + DEMO_HTTP_DATE_LEN;
			size_t want = k == 0 ? 0 : (size_t)(k - 1) * keep + strlen(last[l].status) + DEMO_HTTP_DATE_LEN;
			CHECK(to >= from && (size_t)(to - from) == want, "%d replies (last %d): %u bytes, want %zu", k,
			      last[l].reply, (unsigned)(to - from), want);
			CHECK(keep == DEMO_HTTP_REPLY_LEN, "a keep-alive reply is %zu bytes, DEMO_HTTP_REPLY_LEN %d", keep,
			      DEMO_HTTP_REPLY_LEN);
			for (int i = 0; k > 0 && (size_t)(to - from) == want && i < k; i++) {
				const char *r = rep + from + (size_t)i * keep;
				const char *w = i == k - 1 ? last[l].status : last[0].status;
				size_t d = (size_t)(strstr(w, "\r\nDate: ") - w) + 8; /* where the date goes */
				CHECK(memcmp(r, w, d) == 0 &&
				      memcmp(r + d + DEMO_HTTP_DATE_LEN, w + d, strlen(w) - d) == 0,
				      "%d replies (last %d): reply %d", k, last[l].reply, i);
				CHECK(memcmp(r + d, date0, DEMO_HTTP_DATE_LEN) == 0 ||
				      memcmp(r + d, date1, DEMO_HTTP_DATE_LEN) == 0,
				      "%d replies (last %d): reply %d: Date %.29s, want %s", k, last[l].reply, i, r + d, date1);
			}
		}
	demo_http_replies_put(copy);
	/* while a copy is held, a new one never overwrites it: hold the current one, and the next holds
	 * either the same (this second) or the other; the held one stays as it was */
	char before[DEMO_HTTP_REPLY_LEN];
	unsigned c1 = demo_http_replies_hold();
	memcpy(before, demo_http_replies(c1), sizeof(before));
	unsigned c2 = demo_http_replies_hold();
	unsigned c3 = demo_http_replies_hold(); /* both held now if c2 != c1: then c3 is c2 */
	CHECK(memcmp(before, demo_http_replies(c1), sizeof(before)) == 0, "a held copy of the replies changed");
	CHECK(c1 < 2 && c2 < 2 && c3 < 2 && (c2 == c1 || c3 == c2), "copies %u %u %u", c1, c2, c3);
	demo_http_replies_put(c1);
	demo_http_replies_put(c2);
	demo_http_replies_put(c3);
	CHECK(strncmp(DEMO_HTTP_REPLY, DEMO_HTTP_STATUS, DEMO_HTTP_STATUS_LEN) == 0, "reply starts with the status");
	CHECK(strncmp(DEMO_HTTP_REPLY_CLOSE, DEMO_HTTP_STATUS, DEMO_HTTP_STATUS_LEN) == 0,
	      "closing reply starts with the status");
	CHECK(strstr(DEMO_HTTP_REPLY, "\r\nConnection: keep-alive\r\n") != NULL, "reply says keep-alive");
	CHECK(strstr(DEMO_HTTP_REPLY_CLOSE, "\r\nConnection: close\r\n") != NULL, "closing reply says close");
	/* a 204 has no Content-Length (RFC 9110 8.6) */
	CHECK(strstr(DEMO_HTTP_REPLY, "Content-Length") == NULL && strstr(DEMO_HTTP_REPLY_CLOSE, "Content-Length") == NULL,
	      "no Content-Length in a 204");

	check_heartbeat();

	if (check_failures) {
		printf("%d checks failed\n", check_failures);
		return 1;
	}
	printf("PASS: demo_http_input, demo_heartbeat_input\n");
	return 0;
}
