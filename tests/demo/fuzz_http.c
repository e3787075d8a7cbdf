/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http - libFuzzer target: the servers' HTTP request-head parser
 * (demo_http_input() in demo/demo_server.c, the file both servers are
 * built from) on the fuzzer's bytes, as a connection's byte stream.
 *
 * The stream is fed one byte a call (the reference: where each head ends,
 * its reply, the byte after which the connection closes), then in the
 * servers' reads (512 bytes), then whole, then cut at points drawn from
 * the input's own bytes; each read is a heap block of its exact size, so
 * ASan sees a byte read past it. Any of these aborts:
 *  - a cutting that counts other heads, counts a head in another read
 *    than the one holding its last byte, ends with another reply, or
 *    closes in another read than the one holding the reference's last
 *    consumed byte (pipelining: the bytes after a close are never read;
 *    a later call returns 0);
 *  - -1 (more than DEMO_HTTP_MAX_BATCH heads) for a read of at most 512
 *    bytes, or a whole-stream call that returns -1 but for the 65th head;
 *  - a reply that is not one of enum demo_http_reply's, or a KEEP that
 *    closes, or a close that is not the last head;
 *  - a head that ends other than at an empty line (or at its 1,025th
 *    byte, with a 414, 431, 501 or 400), or is longer than
 *    DEMO_HTTP_MAX_HEAD bytes;
 *  - a head of a pipeline whose reply differs from its own, fed alone to
 *    a fresh parser (the state between heads is reset);
 *  - a 2xx (a 204, or OPTIONS's 200) to a head that a plain reading of
 *    it finds invalid: a request line not of three words with "HTTP/1.d"
 *    last, a method not a token, a bare CR, an HTTP/1.1 head without
 *    exactly one Host line, two Content-Length lines;
 *  - a 204 to a method but GET and HEAD, a 200 to one but OPTIONS (the
 *    others are not implemented: RFC 9110 9.1, a 501); a 204 to a head
 *    with an If-Match of entity tags (a 412) or "If-None-Match: *" (a
 *    304: RFC 9110 13.1.1, 13.1.2); a 2xx to an "https" target (a 421:
 *    no TLS here, 7.4);
 *  - a 204 that keeps the connection to a head that announces a body
 *    (Transfer-Encoding, a Content-Length not all zeros: it would be read
 *    as the next request), carries a "close" option, or is HTTP/1.0
 *    without "keep-alive"; any 2xx to a head that announces a body (the
 *    server reads none: a 411 or 413).
 *
 * Build with -Dfuzz=true (clang); run e.g.
 *   build/tests/demo/fuzz_http -max_total_time=60 -dict=tests/demo/dicts/http.dict \
 *     corpus/ tests/demo/seeds/http
 */
#define FUZZ_NAME "fuzz_http"
#include "fuzz_stream.h"

#define MAX_HEADS 4096

/* The reference: the stream one byte a call. */
struct ref {
	size_t nheads;
	size_t end[MAX_HEADS];  /* the index of each head's last byte */
	uint8_t reply[MAX_HEADS];
	bool closed;
	size_t consumed; /* bytes read: up to the close, else all */
};

/* The status line each reply starts with, by enum demo_http_reply (KEEP and CLOSE: 204). */
static const char *const status[] = {
	"HTTP/1.1 204 No Content\r\n", "HTTP/1.1 204 No Content\r\n", "HTTP/1.1 200 OK\r\n",
	"HTTP/1.1 304 Not Modified\r\n", "HTTP/1.1 400 Bad Request\r\n",
	"HTTP/1.1 414 URI Too Long\r\n", "HTTP/1.1 431 Request Header Fields Too Large\r\n",
	"HTTP/1.1 501 Not Implemented\r\n", "HTTP/1.1 505 HTTP Version Not Supported\r\n",
	"HTTP/1.1 411 Length Required\r\n", "HTTP/1.1 413 Content Too Large\r\n", "HTTP/1.1 412 Precondition Failed\r\n",
	"HTTP/1.1 421 Misdirected Request\r\n",
};
_Static_assert(sizeof(status) / sizeof(status[0]) == DEMO_HTTP_MISDIRECTED + 1, "a status line a reply");

/*
 * The bytes the server sends for @heads heads counted with @h
 * (demo_http_reply_span() into demo_http_replies()): @heads replies, each
 * a 204 with "Connection: keep-alive" but the last when @h closes, which
 * is @h->reply's with "Connection: close".
 */
static void check_span(int heads, const struct demo_http *h)
{
	static const char *rep;
	if (!rep) {
		unsigned copy = demo_http_replies_hold(); /* held for good: never rewritten */
		rep = demo_http_replies(copy);
	}
	uint16_t from, to;
	demo_http_reply_span(heads, h, &from, &to);
	if (heads <= 0) {
		if (from != to)
			FAIL("%d heads, a span of %u bytes", heads, to - from);
		return;
	}
	const char *p = rep + from, *end = rep + to;
	for (int k = 0; k < heads; k++) {
		bool last = k + 1 == heads, closes = last && h->close;
		unsigned r = closes ? h->reply : DEMO_HTTP_KEEP;
		const char *conn = closes ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n";
		size_t sl = strlen(status[r]);
		const char *e = p < end ? memmem(p, (size_t)(end - p), "\r\n\r\n", 4) : NULL;
		if (!e || (size_t)(end - p) < sl || memcmp(p, status[r], sl) != 0)
			FAIL("reply %d of %d (%u) is not a %.12s", k, heads, r, status[r]);
		e += 4;
		if ((size_t)(e - p) < strlen(conn) || memcmp(e - strlen(conn), conn, strlen(conn)) != 0)
			FAIL("reply %d of %d (%u) does not end with %s", k, heads, r, conn);
		p = e;
	}
	if (p != end)
		FAIL("%d replies leave %zu bytes of the span", heads, (size_t)(end - p));
}

/* One call on a heap copy of exactly @n bytes (ASan: nothing read past them). */
static int call(const uint8_t *p, size_t n, struct demo_http *h)
{
	char *b = fuzz_read(p, n);
	int r = demo_http_input(b, n, h);
	fuzz_read_end(b, p, n);
	return r;
}

static void check_reply(unsigned r)
{
	if (r > DEMO_HTTP_MISDIRECTED)
		FAIL("reply %u is none of enum demo_http_reply", r);
}

static void reference(const uint8_t *d, size_t n, struct ref *ref)
{
	struct demo_http h = { 0 };
	ref->nheads = 0;
	ref->closed = false;
	ref->consumed = n;
	for (size_t i = 0; i < n; i++) {
		int k = call(d + i, 1, &h);
		if (k < 0 || k > 1)
			FAIL("one byte completed %d heads", k);
		if (ref->closed) {
			if (k != 0 || !h.close)
				FAIL("a byte after the close was read");
			continue;
		}
		check_reply(h.reply);
		if (k == 1) {
			if (ref->nheads == MAX_HEADS)
				return; /* cannot be: a head takes 3 bytes at least */
			ref->end[ref->nheads] = i;
			ref->reply[ref->nheads++] = h.reply;
			if (h.close != (h.reply != DEMO_HTTP_KEEP))
				FAIL("reply %u and close %d disagree", h.reply, h.close);
		} else if (h.close) {
			FAIL("closed without a head");
		}
		if (h.close) {
			ref->closed = true;
			ref->consumed = i + 1;
		}
	}
}

/*
 * The stream cut at @cuts (ascending, inside (0, n)): the heads each read
 * counts must be those whose last byte it holds, the close in the read of
 * the last consumed byte, the last reply the reference's.
 */
static void check_cut(const uint8_t *d, size_t n, const size_t *cuts, size_t ncuts, const struct ref *ref,
		      bool whole)
{
	struct demo_http h = { 0 };
	size_t from = 0, k = 0;
	bool closed = false;
	for (size_t c = 0; c <= ncuts; c++) {
		size_t to = c < ncuts ? cuts[c] : n;
		size_t want = 0;
		while (k + want < ref->nheads && ref->end[k + want] < to)
			want++;
		int got = call(d + from, to - from, &h);
		check_span(got, &h);
		if (closed) {
			if (got != 0)
				FAIL("read [%zu, %zu) after the close counted %d heads", from, to, got);
		} else if (got < 0) {
			if (!whole || to - from <= READ_MAX || want <= DEMO_HTTP_MAX_BATCH)
				FAIL("read [%zu, %zu) of %zu heads returned -1", from, to, want);
			return; /* a protocol error: the connection ends */
		} else {
			if ((size_t)got != want || want > DEMO_HTTP_MAX_BATCH)
				FAIL("read [%zu, %zu) counted %d heads, the bytes hold %zu", from, to, got, want);
			k += want;
			if (h.close) {
				closed = true;
				if (!ref->closed || ref->consumed <= from || ref->consumed > to)
					FAIL("read [%zu, %zu) closed; the byte-a-call stream consumed %zu", from, to,
					     ref->consumed);
				if (h.reply != ref->reply[ref->nheads - 1])
					FAIL("last reply %u, byte-a-call %u", h.reply, ref->reply[ref->nheads - 1]);
			}
		}
		from = to;
	}
	if (k != ref->nheads || closed != ref->closed)
		FAIL("%zu heads (closed %d), byte-a-call %zu (closed %d)", k, closed, ref->nheads, ref->closed);
}

/* ---- A plain reading of one head ---------------------------------------------------- */

static bool tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool ows(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\0';
}

static bool word_gap(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

static bool name_is(const uint8_t *p, size_t n, const char *name)
{
	if (n != strlen(name))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i] >= 'A' && p[i] <= 'Z' ? (uint8_t)(p[i] - 'A' + 'a') : p[i];
		if (c != (uint8_t)name[i])
			return false;
	}
	return true;
}

/* Is @opt one of the comma-separated elements of @v (@n bytes), OWS trimmed, any case? */
static bool has_option(const uint8_t *v, size_t n, const char *opt)
{
	size_t i = 0;
	while (i <= n) {
		size_t j = i;
		while (j < n && v[j] != ',')
			j++;
		size_t a = i, b = j;
		while (a < b && ows(v[a]))
			a++;
		while (b > a && ows(v[b - 1]))
			b--;
		if (name_is(v + a, b - a, opt))
			return true;
		i = j + 1;
	}
	return false;
}

#define MAX_FIELDS 512
struct field {
	const uint8_t *name;
	size_t nlen;
	uint8_t value[DEMO_HTTP_MAX_HEAD + 1]; /* with its obs-fold lines, each after a space */
	size_t vlen;
};
static struct field fields[MAX_FIELDS];

/*
 * The head @p (@n bytes, from its request line to its empty line's LF)
 * answered @r: a 204 (DEMO_HTTP_KEEP: the connection kept) or OPTIONS's 200.
 */
static void check_2xx(const uint8_t *p, size_t n, unsigned r)
{
	bool keep = r == DEMO_HTTP_KEEP;
	for (size_t i = 0; i < n; i++)
		if (p[i] == '\r' && (i + 1 == n || p[i + 1] != '\n'))
			FAIL("a 2xx to a head with a bare CR at %zu", i);
	/* the request line */
	size_t eol = 0;
	while (eol < n && p[eol] != '\n')
		eol++;
	size_t w[3][2], nw = 0, i = 0;
	while (i < eol) {
		while (i < eol && word_gap(p[i]))
			i++;
		if (i == eol)
			break;
		size_t a = i;
		while (i < eol && !word_gap(p[i]))
			i++;
		if (nw == 3)
			FAIL("a 2xx to a request line of more than three words");
		w[nw][0] = a;
		w[nw++][1] = i - a;
	}
	if (nw != 3)
		FAIL("a 2xx to a request line of %zu words", nw);
	for (size_t j = 0; j < w[0][1]; j++)
		if (!tchar(p[w[0][0] + j]))
			FAIL("a 2xx to a method that is no token");
	/* the methods the server implements, case-sensitive (RFC 9110 9.1): GET and HEAD a 204, OPTIONS a 200 */
	const uint8_t *m = p + w[0][0];
	size_t ml = w[0][1];
	bool get_head = (ml == 3 && memcmp(m, "GET", 3) == 0) || (ml == 4 && memcmp(m, "HEAD", 4) == 0);
	bool options = ml == 7 && memcmp(m, "OPTIONS", 7) == 0;
	if (r == DEMO_HTTP_OPTIONS ? !options : !get_head)
		FAIL("a %s to the method %.*s", r == DEMO_HTTP_OPTIONS ? "200" : "204", (int)(ml < 32 ? ml : 32), m);
	if (w[1][1] >= 6 && name_is(p + w[1][0], 6, "https:"))
		FAIL("a 2xx to an \"https\" target, on a connection without TLS (a 421)");
	const uint8_t *v = p + w[2][0];
	if (w[2][1] != 8 || memcmp(v, "HTTP/1.", 7) != 0 || v[7] < '0' || v[7] > '9')
		FAIL("a 2xx to a version other than HTTP/1.d");
	bool v10 = v[7] == '0';
	/* the field lines, obs-fold joined */
	size_t nf = 0;
	i = eol + 1;
	while (i < n) {
		size_t e = i;
		while (e < n && p[e] != '\n')
			e++;
		size_t len = e - i;
		if (len && p[i + len - 1] == '\r')
			len--;
		const uint8_t *l = p + i;
		i = e + 1;
		if (!len) {
			if (e + 1 != n)
				FAIL("a 2xx to a head whose empty line is not its last");
			break;
		}
		if (ows(l[0])) { /* obs-fold */
			if (nf) {
				struct field *f = &fields[nf - 1];
				f->value[f->vlen++] = ' ';
				memcpy(f->value + f->vlen, l, len);
				f->vlen += len;
			}
			continue;
		}
		const uint8_t *colon = memchr(l, ':', len);
		if (!colon)
			FAIL("a 2xx to a field line without a colon");
		if (nf == MAX_FIELDS)
			return;
		struct field *f = &fields[nf++];
		f->name = l;
		f->nlen = (size_t)(colon - l);
		for (size_t j = 0; j < f->nlen; j++)
			if (!tchar(l[j]))
				FAIL("a 2xx to a field name that is no token");
		if (!f->nlen)
			FAIL("a 2xx to an empty field name");
		f->vlen = len - f->nlen - 1;
		memcpy(f->value, colon + 1, f->vlen);
	}
	unsigned hosts = 0, lengths = 0;
	bool body = false, close = false, keep_alive = false;
	for (size_t j = 0; j < nf; j++) {
		struct field *f = &fields[j];
		if (name_is(f->name, f->nlen, "host"))
			hosts++;
		if (name_is(f->name, f->nlen, "content-length")) {
			lengths++;
			for (size_t q = 0; q < f->vlen; q++)
				body |= f->value[q] >= '1' && f->value[q] <= '9';
		}
		if (name_is(f->name, f->nlen, "transfer-encoding"))
			body = true;
		if (name_is(f->name, f->nlen, "connection")) {
			close |= has_option(f->value, f->vlen, "close");
			keep_alive |= has_option(f->value, f->vlen, "keep-alive");
		}
		/* GET's and HEAD's preconditions: the value's first byte says "*" or entity tags */
		size_t q = 0;
		while (q < f->vlen && ows(f->value[q]))
			q++;
		bool star = q < f->vlen && f->value[q] == '*', tags = q < f->vlen && !star;
		if (r != DEMO_HTTP_OPTIONS && name_is(f->name, f->nlen, "if-match") && tags)
			FAIL("a 204 to an If-Match of entity tags, none the target's (a 412)");
		if (r != DEMO_HTTP_OPTIONS && name_is(f->name, f->nlen, "if-none-match") && star)
			FAIL("a 204 to \"If-None-Match: *\" (a 304)");
	}
	if (hosts > 1 || (!v10 && hosts != 1))
		FAIL("a 2xx to an HTTP/1.%c head with %u Host lines", v[7], hosts);
	if (lengths > 1)
		FAIL("a 2xx to a head with %u Content-Length lines", lengths);
	if (keep && body)
		FAIL("a head with a body kept the connection: its body would be read as the next request");
	if (body)
		FAIL("a 2xx to a head with a body, which the server does not read (a 411 or 413)");
	if (keep && close)
		FAIL("a head with a close option kept the connection");
	if (keep && v10 && !keep_alive)
		FAIL("an HTTP/1.0 head without keep-alive kept the connection");
}

/* Each head of the reference: where it ends, how long it is, its reply alone, its reading if a 2xx. */
static void check_heads(const uint8_t *d, const struct ref *ref)
{
	size_t start = 0;
	for (size_t k = 0; k < ref->nheads; k++) {
		size_t end = ref->end[k], s = start;
		unsigned r = ref->reply[k];
		if (k + 1 < ref->nheads && r != DEMO_HTTP_KEEP)
			FAIL("head %zu closes but another follows", k);
		while (s <= end && (d[s] == '\r' || d[s] == '\n'))
			s++;
		size_t len = end + 1 - s;
		if (s > end)
			FAIL("head %zu of CR and LF alone", k);
		if (len > DEMO_HTTP_MAX_HEAD + 1)
			FAIL("head %zu is %zu bytes long", k, len);
		if (len == DEMO_HTTP_MAX_HEAD + 1) {
			if (r != DEMO_HTTP_URI_TOO_LONG && r != DEMO_HTTP_TOO_LARGE && r != DEMO_HTTP_NOT_IMPLEMENTED &&
			    r != DEMO_HTTP_BAD_REQUEST)
				FAIL("head %zu too long, answered %u", k, r);
		} else {
			if (d[end] != '\n' || r == DEMO_HTTP_URI_TOO_LONG || r == DEMO_HTTP_TOO_LARGE)
				FAIL("head %zu of %zu bytes ends other than at an empty line (reply %u)", k, len, r);
			size_t b = end; /* the empty line: LF after a LF, CRs between (bare ones: a 400) */
			while (b > s && d[b - 1] == '\r')
				b--;
			if (b == s || d[b - 1] != '\n')
				FAIL("head %zu ends at a line that is not empty", k);
		}
		/* the same head alone, on a fresh parser */
		struct demo_http h = { 0 };
		int got = call(d + start, end + 1 - start, &h);
		if (got != 1 || h.reply != r)
			FAIL("head %zu alone: %d heads, reply %u; in the stream reply %u", k, got, h.reply, r);
		if (r == DEMO_HTTP_KEEP || r == DEMO_HTTP_CLOSE || r == DEMO_HTTP_OPTIONS) {
			if (len > DEMO_HTTP_MAX_HEAD)
				FAIL("a 2xx to a head too long");
			check_2xx(d + s, len, r);
		}
		start = end + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	static struct ref ref;
	static size_t cuts[8192];
	reference(data, size, &ref);
	check_heads(data, &ref);
	/* the servers' reads */
	size_t nc = 0;
	for (size_t at = READ_MAX; at < size; at += READ_MAX)
		cuts[nc++] = at;
	check_cut(data, size, cuts, nc, &ref, false);
	/* whole */
	check_cut(data, size, cuts, 0, &ref, true);
	/* cut where the input's own bytes say: a byte's low bits give the next read's length */
	nc = fuzz_drawn_cuts(data, size, cuts);
	check_cut(data, size, cuts, nc, &ref, false);
	/* in two at each point, for short streams (the existing test's every-point cut) */
	if (size <= 256)
		for (size_t at = 1; at < size; at++) {
			cuts[0] = at;
			check_cut(data, size, cuts, 1, &ref, size <= READ_MAX ? false : true);
		}
	return 0;
}
