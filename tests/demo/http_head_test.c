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
 * byte, the DEMO_HTTP_MAX_BATCH limit; persistence (RFC 9112 9.3) for
 * each version and Connection field (names and options in any case, option
 * lists, several lines, obs-fold), nothing read after a head that closes;
 * the same answers for random inputs however they are cut; and the replies
 * (demo_http_reply_span(), demo_http_replies()). Exit 0 pass, 1 fail.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo_common.h"
#include "demo_server.h"

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

/*
 * Feed @in (@n bytes) cut at @cuts (ascending, @ncuts of them); returns
 * the heads counted, or -1 as soon as a piece returned -1; *@close says
 * whether the last one closes the connection. @done_at gets, for each head
 * (@max_done at most), the end of the piece that counted it.
 */
static int feed(const char *in, size_t n, const size_t *cuts, int ncuts, size_t *done_at, int max_done, bool *close)
{
	struct demo_http st = { 0 };
	int total = 0;
	size_t from = 0;
	*close = false;
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
	*close = st.close;
	return total;
}

/*
 * @in must give @want heads (or -1), the i-th complete once byte
 * @ends[i] - 1 was read, and close the connection after the last one if
 * @want_close, however it is cut: in one piece, in two at every position,
 * and (inputs up to 256 bytes) in three at every pair.
 */
static void check_splits(const char *name, const char *in, size_t n, int want, bool want_close, const size_t *ends)
{
	size_t done_at[64];
	size_t cuts[2] = { 0, 0 }; /* none read with ncuts 0: set for the compiler */
	bool close;
	int r = feed(in, n, cuts, 0, done_at, 64, &close);
	CHECK(r == want, "%s whole: %d heads, want %d", name, r, want);
	CHECK(want < 0 || close == want_close, "%s whole: close %d, want %d", name, close, want_close);
	for (size_t i = 0; i <= n; i++) {
		cuts[0] = i;
		r = feed(in, n, cuts, 1, done_at, 64, &close);
		CHECK(r == want, "%s cut at %zu: %d heads, want %d", name, i, r, want);
		CHECK(want < 0 || close == want_close, "%s cut at %zu: close %d, want %d", name, i, close, want_close);
		for (int h = 0; want > 0 && r == want && h < want; h++) {
			/* the piece that completes head h is the one holding byte ends[h] - 1 */
			size_t piece_end = ends[h] <= i ? i : n;
			CHECK(done_at[h] == piece_end, "%s cut at %zu: head %d counted with the piece ending at %zu, "
				"want %zu", name, i, h, done_at[h], piece_end);
		}
		for (size_t j = i; n <= 256 && j <= n; j++) {
			cuts[1] = j;
			r = feed(in, n, cuts, 2, done_at, 64, &close);
			CHECK(r == want, "%s cut at %zu and %zu: %d heads, want %d", name, i, j, r, want);
			CHECK(want < 0 || close == want_close, "%s cut at %zu and %zu: close %d, want %d", name, i, j,
			      close, want_close);
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
 * Persistence (RFC 9112 9.3): whether the connection closes after the
 * reply to each head.
 */
static const struct {
	const char *head;
	bool close;
} persistence[] = {
	/* versions: HTTP/1.1 and later 1.x persist, HTTP/1.0 only with keep-alive, anything else closes */
	{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\n\r\n", false },
	{ "GET / HTTP/1.1\n\n", false },
	{ "GET / HTTP/1.2\r\n\r\n", false },
	{ "GET / HTTP/1.9\r\n\r\n", false },
	{ "GET  /\t HTTP/1.1 \r\n\r\n", false }, /* any whitespace between the words */
	{ "GET / HTTP/1.0\r\nHost: a\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\n\r\n", true },
	{ "GET / HTTP/2.0\r\n\r\n", true },
	{ "GET / HTTP/0.9\r\n\r\n", true },
	{ "GET / http/1.1\r\n\r\n", true }, /* the version is case-sensitive */
	{ "GET / HTTP/1.10\r\n\r\n", true },
	{ "GET / HTTP/1.\r\n\r\n", true },
	{ "GET / HTTP/1.x\r\n\r\n", true },
	{ "GET / HTTP/11\r\n\r\n", true },
	{ "GET /\r\n\r\n", true },                  /* no version: HTTP/0.9 */
	{ "GET / HTTP/1.1 x\r\n\r\n", true },       /* four words */
	{ "GET HTTP/1.1\r\n\r\n", true },           /* two words */
	{ "HTTP/1.1\r\n\r\n", true },
	{ "GET /HTTP/1.1 HTTP/1.0\r\n\r\n", true }, /* the third word counts */
	{ "GET / HTTP/1.1\r\nVersion: HTTP/1.1\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nVersion: HTTP/1.1\r\n\r\n", true },
	/* Connection: close, field name and option in any case */
	{ "GET / HTTP/1.1\r\nConnection: close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nconnection: close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nCONNECTION: CLOSE\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\ncOnNeCtIoN: cLoSe\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\nAccept: */*\r\n\r\n", true },
	{ "GET / HTTP/1.1\nConnection: close\n\n", true },
	/* option lists and whitespace */
	{ "GET / HTTP/1.1\r\nConnection:close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: \t close \t \r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: close, keep-alive\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: Upgrade,close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: ,, close ,,\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: foo , close , bar\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: TE, Upgrade\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection:\r\n\r\n", false },
	/* several Connection lines: the options of all of them */
	{ "GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: TE\r\nHost: a\r\nconnection: close\r\n\r\n", true },
	/* obs-fold: a line starting with whitespace continues the field; a bare CR is a space */
	{ "GET / HTTP/1.1\r\nConnection: keep-alive,\r\n close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: TE\r\n\t, close\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: close\r\n foo\r\n\r\n", false }, /* one option, "close foo" */
	{ "GET / HTTP/1.1\r\nConnection: clo\r\n se\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nHost: a\r\n Connection: close\r\n\r\n", false }, /* Host goes on */
	{ "GET / HTTP/1.1\r\n Connection: close\r\n\r\n", false }, /* after the request line: skipped */
	{ "GET / HTTP/1.1\r\nConnection:\rclose\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nConnection: cl\rose\r\n\r\n", false },
	/* not a close option, or not a Connection field */
	{ "GET / HTTP/1.1\r\nConnection: closed\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: clos\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: xclose\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: close-x\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: close x\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: c lose\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: \"close\"\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection: close;q=1\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nX-Connection: close\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection-X: close\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnectio: close\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection : close\r\n\r\n", true }, /* a space before the colon: rejected */
	{ "GET / HTTP/1.1\r\nHost: close\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nX: Connection: close\r\n\r\n", false },
	{ "GET /close HTTP/1.1\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nConnection close\r\n\r\n", true }, /* whitespace in a field name: rejected */
	/* HTTP/1.0: keep-alive in any case (ab -k sends "Keep-Alive"), close wins */
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: a\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nconnection:KEEP-ALIVE\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nConnection: TE, keep-alive\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nConnection: TE\r\nConnection: keep-alive\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nConnection: TE,\r\n keep-alive\r\n\r\n", false },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\nKeep-Alive: timeout=5\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\nConnection: keepalive\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\nConnection: keep-alive-x\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\nConnection: keep\r\n\r\n", true },
	{ "GET / HTTP/1.0\r\nConnection:\r\n\r\n", true },
	{ "GET / HTTP/2.0\r\nConnection: keep-alive\r\n\r\n", true },
	/*
	 * A head that announces a body closes (RFC 9112 6.3): the server reads
	 * no bodies, so the body must not be read as the next request. A body
	 * is announced by any Transfer-Encoding, or by a Content-Length other
	 * than a run of zeros (one that is not a single valid value closes too).
	 */
	{ "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\ncontent-length:18\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nCONTENT-LENGTH: 10\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", true },
	{ "POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 3\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", false },
	{ "POST / HTTP/1.1\r\nContent-Length:\t000 \r\n\r\n", false },
	{ "POST / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n", false },
	{ "POST / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 7\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: 0 0\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: 0, 0\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: -0\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: +0\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: 0x0\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nContent-Length: 0\r\n 5\r\n\r\n", true }, /* obs-fold: "0 5" */
	{ "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nContent-Lengthx: 5\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nX-Content-Length: 5\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nContent-Lengt: 5\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nContent: 5\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nTransfer-Encodin: chunked\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nX: Content-Length: 5\r\n\r\n", false },
	{ "GET / HTTP/1.1\r\nHost: a\r\n Transfer-Encoding: chunked\r\n\r\n", false }, /* Host goes on */
	/* whitespace between a field name and its colon: rejected (RFC 9112 5.1), so closed */
	{ "POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\n", true },
	{ "POST / HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n", true },
	{ "GET / HTTP/1.1\r\nHost : a\r\n\r\n", true },
};

/* xorshift64: the random inputs, the same every run */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned below)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % below);
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
		"Transfer-Encoding:", " chunked", "\0",
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
		bool close, c2;
		int whole = feed(in, n, cuts, 0, done_at, 0, &close);
		for (size_t i = 0; i < n; i++)
			cuts[i] = i + 1;
		int bytewise = feed(in, n, cuts, n ? (int)n - 1 : 0, done_at, 0, &c2);
		CHECK(bytewise == whole && (whole < 0 || c2 == close), "random input %d: %d heads (close %d) whole, "
		      "%d (close %d) a byte at a time", t, whole, close, bytewise, c2);
		cuts[0] = n ? rnd((unsigned)n + 1) : 0;
		cuts[1] = cuts[0] + (n - cuts[0] ? rnd((unsigned)(n - cuts[0]) + 1) : 0);
		int three = feed(in, n, cuts, 2, done_at, 0, &c2);
		CHECK(three == whole && (whole < 0 || c2 == close), "random input %d: %d heads (close %d) whole, "
		      "%d (close %d) cut at %zu and %zu", t, whole, close, three, c2, cuts[0], cuts[1]);
	}
}

int main(void)
{
	char buf[4096];
	size_t ends[64];

	/* the generator's request, three times back to back (pipelined) */
	size_t n = 0;
	for (int k = 0; k < 3; k++) {
		memcpy(buf + n, DEMO_HTTP_REQ, DEMO_HTTP_REQ_LEN);
		n += DEMO_HTTP_REQ_LEN;
		ends[k] = n;
	}
	check_splits("3 requests", buf, n, 3, false, ends);

	/* a browser-like head with more headers, then a partial one: one head */
	const char *b = "GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:7000\r\nUser-Agent: t\r\nAccept: */*\r\n\r\nGET / HT";
	ends[0] = strstr(b, "\r\n\r\n") + 4 - b;
	check_splits("headers + partial", b, strlen(b), 1, false, ends);

	/* CR/LF before a request line are skipped (RFC 9112 2.2): no empty head */
	const char *lead = "\r\n\r\n\nGET / HTTP/1.1\r\nHost: idle\r\n\r\n\r\n";
	ends[0] = strlen(lead) - 2;
	check_splits("leading empty lines", lead, strlen(lead), 1, false, ends);
	check_splits("only empty lines", "\r\n\r\n\n\n\r\n", 8, 0, false, ends);

	/* a bare LF ends a line too */
	const char *lf = "GET / HTTP/1.1\nHost: idle\n\nGET / HTTP/1.1\r\nHost: idle\n\r\n";
	ends[0] = strlen("GET / HTTP/1.1\nHost: idle\n\n");
	ends[1] = strlen(lf);
	check_splits("bare LF", lf, strlen(lf), 2, false, ends);

	/* a CR alone inside a line does not end it; "\r\r\n" is an empty line */
	const char *cr = "GET / HTTP/1.1\r\nX: a\rb\r\n\r\r\n";
	ends[0] = strlen(cr);
	check_splits("stray CR", cr, strlen(cr), 1, false, ends);

	/*
	 * Persistence: each head alone, then with a request pipelined after it,
	 * which is answered only if the head keeps the connection open.
	 */
	const char *next = "GET / HTTP/1.1\r\n\r\n";
	for (size_t i = 0; i < sizeof(persistence) / sizeof(persistence[0]); i++) {
		const char *h = persistence[i].head;
		bool close = persistence[i].close;
		ends[0] = strlen(h);
		ends[1] = ends[0] + strlen(next);
		check_splits(shown(h), h, ends[0], 1, close, ends);
		snprintf(buf, sizeof(buf), "%s%s", h, next);
		check_splits(shown(buf), buf, ends[1], close ? 1 : 2, close, ends);
	}

	/*
	 * A NUL in a field value is read as a space (RFC 9110 5.5 allows that
	 * or rejecting the message; both close on "close\0"), never as part of
	 * an option or a length.
	 */
	static const struct {
		const char *head;
		size_t len;
		bool close;
	} nul[] = {
#define NUL_CASE(lit, cl) { lit, sizeof(lit) - 1, cl }
		NUL_CASE("GET / HTTP/1.1\r\nConnection: close\0\r\n\r\n", true),
		NUL_CASE("GET / HTTP/1.1\r\nConnection:\0close\r\n\r\n", true),
		NUL_CASE("GET / HTTP/1.1\r\nConnection: cl\0ose\r\n\r\n", false),
		NUL_CASE("POST / HTTP/1.1\r\nContent-Length: 0\0\r\n\r\n", false),
		NUL_CASE("POST / HTTP/1.1\r\nContent-Length: 0\0" "5\r\n\r\n", true),
#undef NUL_CASE
	};
	for (size_t i = 0; i < sizeof(nul) / sizeof(nul[0]); i++) {
		ends[0] = nul[i].len;
		ends[1] = ends[0] + strlen(next);
		check_splits(shown(nul[i].head), nul[i].head, ends[0], 1, nul[i].close, ends);
		memcpy(buf, nul[i].head, ends[0]);
		memcpy(buf + ends[0], next, strlen(next));
		check_splits(shown(nul[i].head), buf, ends[1], nul[i].close ? 1 : 2, nul[i].close, ends);
	}

	/* a run of requests: the one that closes is the last answered, the rest is not read */
	const char *run = "GET / HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
			  "GET /2 HTTP/1.1\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\nGET";
	ends[0] = strlen("GET / HTTP/1.1\r\n\r\n");
	ends[1] = strstr(run, "GET /2") - run;
	ends[2] = strstr(run, "close\r\n\r\n") + 9 - run;
	check_splits("close third of four", run, strlen(run), 3, true, ends);
	/* what a head says holds for that head only */
	const char *ka = "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	ends[0] = strstr(ka, "\r\n\r\n") + 4 - ka;
	ends[1] = strstr(ka + ends[0], "\r\n\r\n") + 4 - ka;
	check_splits("keep-alive does not carry over", ka, strlen(ka), 2, true, ends);
	const char *v = "GET / HTTP/1.1\r\n\r\nGET /\r\n\r\nGET / HTTP/1.1\r\n\r\n";
	ends[0] = strlen("GET / HTTP/1.1\r\n\r\n");
	ends[1] = ends[0] + strlen("GET /\r\n\r\n");
	check_splits("the version does not carry over", v, strlen(v), 2, true, ends);
	/* after the head that closes, nothing is read: an overlong or endless rest is no error */
	n = (size_t)snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
	ends[0] = n;
	memset(buf + n, 'x', 2 * DEMO_HTTP_MAX_HEAD);
	check_splits("close, then an overlong head", buf, n + 2 * DEMO_HTTP_MAX_HEAD, 1, true, ends);
	struct demo_http st = { 0 };
	CHECK(demo_http_input(buf, n, &st) == 1 && st.close, "a head that closes");
	CHECK(demo_http_input(next, strlen(next), &st) == 0 && st.close, "a later read after it: nothing");
	/* between heads that persist, nothing is left of the last one */
	st = (struct demo_http){ 0 };
	const char *fold = "GET / HTTP/1.1\r\nConnection: TE\r\n\r\n";
	CHECK(demo_http_input(fold, strlen(fold), &st) == 1 && !st.close && st.len == 0 && !st.fold,
	      "state after a complete head");

	/* DEMO_HTTP_MAX_HEAD: a head of exactly that many bytes passes, one more fails */
	size_t max = DEMO_HTTP_MAX_HEAD;
	memset(buf, 'a', max - 4);
	memcpy(buf + max - 4, "\r\n\r\n", 4);
	ends[0] = max;
	check_splits("head of the longest length", buf, max, 1, true, ends); /* no version: closes */
	memset(buf, 'a', max - 3);
	memcpy(buf + max - 3, "\r\n\r\n", 4);
	check_splits("head one byte too long", buf, max + 1, -1, false, ends);
	/* ...with a Connection field at its end, either way */
	for (int cl = 0; cl < 2; cl++) {
		const char *tail = cl ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n";
		size_t prefix = strlen("GET / HTTP/1.1\r\nX: ");
		memcpy(buf, "GET / HTTP/1.1\r\nX: ", prefix);
		memset(buf + prefix, 'a', max - prefix - strlen(tail));
		memcpy(buf + max - strlen(tail), tail, strlen(tail));
		check_splits(cl ? "longest head, closing" : "longest head, keep-alive", buf, max, 1, cl, ends);
		memmove(buf + 1, buf, max); /* one more byte in X's value */
		memcpy(buf, "GET / HTTP/1.1\r\nX: a", prefix + 1);
		check_splits("one byte too long", buf, max + 1, -1, false, ends);
	}
	/* ...and bytes without an end, however they come */
	memset(buf, 'x', sizeof(buf));
	check_splits("no end", buf, max + 1, -1, false, ends);
	st = (struct demo_http){ 0 };
	CHECK(demo_http_input(buf, max, &st) == 0, "%zu bytes without an end: no head yet", max);
	CHECK(demo_http_input(buf, 1, &st) == -1, "one byte more: too long");

	/* DEMO_HTTP_MAX_BATCH heads in one read pass, one more fails */
	const char *min = "a b HTTP/1.1\n\n";
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

	/* the replies: k keep-alive ones, or k - 1 then the closing one */
	const char *rep = demo_http_replies();
	for (int k = 0; k <= DEMO_HTTP_MAX_BATCH; k++)
		for (int cl = 0; cl < 2; cl++) {
			uint16_t from = 1, to = 0;
			demo_http_reply_span(k, cl, &from, &to);
			size_t want = k == 0 ? 0 : (size_t)(k - 1) * DEMO_HTTP_REPLY_LEN +
				(cl ? DEMO_HTTP_REPLY_CLOSE_LEN : DEMO_HTTP_REPLY_LEN);
			CHECK(to >= from && (size_t)(to - from) == want, "%d replies (close %d): %u bytes, want %zu", k,
			      cl, (unsigned)(to - from), want);
			for (int i = 0; k > 0 && (size_t)(to - from) == want && i < k; i++) {
				const char *r = rep + from + (size_t)i * DEMO_HTTP_REPLY_LEN;
				bool last_close = cl && i == k - 1;
				CHECK(memcmp(r, last_close ? DEMO_HTTP_REPLY_CLOSE : DEMO_HTTP_REPLY,
					     last_close ? DEMO_HTTP_REPLY_CLOSE_LEN : DEMO_HTTP_REPLY_LEN) == 0,
				      "%d replies (close %d): reply %d", k, cl, i);
			}
		}
	CHECK(strncmp(DEMO_HTTP_REPLY, DEMO_HTTP_STATUS, DEMO_HTTP_STATUS_LEN) == 0, "reply starts with the status");
	CHECK(strncmp(DEMO_HTTP_REPLY_CLOSE, DEMO_HTTP_STATUS, DEMO_HTTP_STATUS_LEN) == 0,
	      "closing reply starts with the status");
	CHECK(strstr(DEMO_HTTP_REPLY, "\r\nConnection: keep-alive\r\n") != NULL, "reply says keep-alive");
	CHECK(strstr(DEMO_HTTP_REPLY_CLOSE, "\r\nConnection: close\r\n") != NULL, "closing reply says close");
	/* a 204 has no Content-Length (RFC 9110 8.6) */
	CHECK(strstr(DEMO_HTTP_REPLY, "Content-Length") == NULL && strstr(DEMO_HTTP_REPLY_CLOSE, "Content-Length") == NULL,
	      "no Content-Length in a 204");

	if (fails) {
		printf("%d checks failed\n", fails);
		return 1;
	}
	printf("PASS: demo_http_input\n");
	return 0;
}
