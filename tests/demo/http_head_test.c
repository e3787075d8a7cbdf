/* SPDX-License-Identifier: MIT */
/*
 * tests/demo/http_head_test.c - the servers' HTTP request-head counter
 * (demo_http_input() in demo/demo_server.c) on its own: the same input must
 * give the same heads however the reads split it, so each case is fed
 * whole, then cut in two at every byte position, then in three at every
 * pair of positions (short inputs), the state carried across the pieces; the heads
 * counted per piece must add up and fall in the piece that completes
 * them. Also: CR/LF before a request line skipped, bare LF line ends, the
 * DEMO_HTTP_MAX_HEAD limit to the byte, the DEMO_HTTP_MAX_BATCH limit, and
 * demo_http_replies(). Exit 0 pass, 1 fail.
 */
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
 * the heads counted, or -1 as soon as a piece returned -1. @done_at gets,
 * for each head (@max_done at most), the end of the piece that counted it.
 */
static int feed(const char *in, size_t n, const size_t *cuts, int ncuts, size_t *done_at, int max_done)
{
	uint16_t st = 0;
	int total = 0;
	size_t from = 0;
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
	return total;
}

/*
 * @in must give @want heads (or -1), the i-th complete once byte
 * @ends[i] - 1 was read, however it is cut: in one piece, in two at every
 * position, and (inputs up to 256 bytes) in three at every pair.
 */
static void check_splits(const char *name, const char *in, size_t n, int want, const size_t *ends)
{
	size_t done_at[64];
	size_t cuts[2] = { 0, 0 }; /* none read with ncuts 0: set for the compiler */
	int r = feed(in, n, cuts, 0, done_at, 64);
	CHECK(r == want, "%s whole: %d heads, want %d", name, r, want);
	for (size_t i = 0; i <= n; i++) {
		cuts[0] = i;
		r = feed(in, n, cuts, 1, done_at, 64);
		CHECK(r == want, "%s cut at %zu: %d heads, want %d", name, i, r, want);
		for (int h = 0; want > 0 && r == want && h < want; h++) {
			/* the piece that completes head h is the one holding byte ends[h] - 1 */
			size_t piece_end = ends[h] <= i ? i : n;
			CHECK(done_at[h] == piece_end, "%s cut at %zu: head %d counted with the piece ending at %zu, "
				"want %zu", name, i, h, done_at[h], piece_end);
		}
		for (size_t j = i; n <= 256 && j <= n; j++) {
			cuts[1] = j;
			r = feed(in, n, cuts, 2, done_at, 64);
			CHECK(r == want, "%s cut at %zu and %zu: %d heads, want %d", name, i, j, r, want);
		}
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
	check_splits("3 requests", buf, n, 3, ends);

	/* a browser-like head with more headers, then a partial one: one head */
	const char *b = "GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:7000\r\nUser-Agent: t\r\nAccept: */*\r\n\r\nGET / HT";
	ends[0] = strstr(b, "\r\n\r\n") + 4 - b;
	check_splits("headers + partial", b, strlen(b), 1, ends);

	/* CR/LF before a request line are skipped (RFC 9112 2.2): no empty head */
	const char *lead = "\r\n\r\n\nGET / HTTP/1.1\r\nHost: idle\r\n\r\n\r\n";
	ends[0] = strlen(lead) - 2;
	check_splits("leading empty lines", lead, strlen(lead), 1, ends);
	check_splits("only empty lines", "\r\n\r\n\n\n\r\n", 8, 0, ends);

	/* a bare LF ends a line too */
	const char *lf = "GET / HTTP/1.1\nHost: idle\n\nGET / HTTP/1.1\r\nHost: idle\n\r\n";
	ends[0] = strlen("GET / HTTP/1.1\nHost: idle\n\n");
	ends[1] = strlen(lf);
	check_splits("bare LF", lf, strlen(lf), 2, ends);

	/* a CR alone inside a line does not end it; "\r\r\n" is an empty line */
	const char *cr = "GET / HTTP/1.1\r\nX: a\rb\r\n\r\r\n";
	ends[0] = strlen(cr);
	check_splits("stray CR", cr, strlen(cr), 1, ends);

	/* DEMO_HTTP_MAX_HEAD: a head of exactly that many bytes passes, one more fails */
	size_t max = DEMO_HTTP_MAX_HEAD;
	memset(buf, 'a', max - 4);
	memcpy(buf + max - 4, "\r\n\r\n", 4);
	ends[0] = max;
	check_splits("head of the longest length", buf, max, 1, ends);
	memset(buf, 'a', max - 3);
	memcpy(buf + max - 3, "\r\n\r\n", 4);
	check_splits("head one byte too long", buf, max + 1, -1, ends);
	/* ...and bytes without an end, however they come */
	memset(buf, 'x', sizeof(buf));
	check_splits("no end", buf, max + 1, -1, ends);
	uint16_t st = 0;
	CHECK(demo_http_input(buf, max, &st) == 0, "%zu bytes without an end: no head yet", max);
	CHECK(demo_http_input(buf, 1, &st) == -1, "one byte more: too long");

	/* DEMO_HTTP_MAX_BATCH heads in one read pass, one more fails */
	n = 0;
	for (int k = 0; k < DEMO_HTTP_MAX_BATCH + 1; k++) {
		memcpy(buf + n, "x\n\n", 3);
		n += 3;
	}
	st = 0;
	CHECK(demo_http_input(buf, n - 3, &st) == DEMO_HTTP_MAX_BATCH, "%d minimal heads in one read",
	      DEMO_HTTP_MAX_BATCH);
	CHECK(st == 0, "state after complete heads: %u, want 0", st);
	st = 0;
	CHECK(demo_http_input(buf, n, &st) == -1, "%d heads in one read: refused", DEMO_HTTP_MAX_BATCH + 1);

	/* the replies: DEMO_HTTP_MAX_BATCH copies of DEMO_HTTP_REPLY */
	const char *rep = demo_http_replies();
	for (int k = 0; k < DEMO_HTTP_MAX_BATCH; k++)
		CHECK(memcmp(rep + (size_t)k * DEMO_HTTP_REPLY_LEN, DEMO_HTTP_REPLY, DEMO_HTTP_REPLY_LEN) == 0,
		      "reply %d", k);
	CHECK(strncmp(DEMO_HTTP_REPLY, DEMO_HTTP_STATUS, DEMO_HTTP_STATUS_LEN) == 0, "reply starts with the status");

	if (fails) {
		printf("%d checks failed\n", fails);
		return 1;
	}
	printf("PASS: demo_http_input\n");
	return 0;
}
