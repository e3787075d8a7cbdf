/* SPDX-License-Identifier: MIT */
/*
 * fuzz_line - libFuzzer target: the servers' line protocol, the heartbeat
 * mode's parser (demo_heartbeat_input() in demo/demo_server.c, the file
 * both servers are built from), on the fuzzer's bytes as a connection's
 * byte stream, against a plain model of the protocol (demo_common.h:
 * newline-terminated lines, each exactly "PING" or "PING\r" answered, a line longer
 * than DEMO_MAX_LINE bytes, the CR of a CRLF not counted, an error that ends
 * the connection).
 *
 * The stream is fed in the servers' reads (512 bytes), one byte a call,
 * whole, and cut at points drawn from the input's own bytes; each read is
 * a heap block of its exact size (ASan: nothing read past it). After
 * each call the PINGs it completed must be the model's for those bytes,
 * -1 exactly where the model's first error falls (or where a call would
 * complete more than DEMO_HEARTBEAT_MAX_BATCH PINGs: never in a read of
 * 512 bytes), the carried line length the model's, its first bytes the
 * line's; the read is left unchanged.
 *
 * Build with -Dfuzz=true (clang); run e.g.
 *   build/tests/demo/fuzz_line -max_total_time=60 -dict=tests/demo/dicts/line.dict \
 *     corpus/ tests/demo/seeds/line
 */
#define FUZZ_NAME "fuzz_line"
#include "fuzz_stream.h"

/* The model's state: the current line's length and its first bytes. */
struct model {
	size_t len;
	uint8_t first[DEMO_PING_LEN];
};

/*
 * The model on bytes [from, to): the PINGs completed, or -1 at the first
 * line too long or the PING past DEMO_HEARTBEAT_MAX_BATCH.
 */
static long model_read(struct model *m, const uint8_t *d, size_t from, size_t to)
{
	long pings = 0;
	for (size_t i = from; i < to; i++) {
		if (d[i] == '\n') {
			bool ping = (m->len == 4 && memcmp(m->first, "PING", 4) == 0) ||
				    (m->len == 5 && memcmp(m->first, "PING\r", 5) == 0);
			if (ping && ++pings > DEMO_HEARTBEAT_MAX_BATCH)
				return -1;
			m->len = 0;
			continue;
		}
		if (m->len < DEMO_PING_LEN)
			m->first[m->len] = d[i];
		/* a CR just past the limit may be the one before an LF, no part
		 * of the line; any other byte there, or after it, is too many */
		if (++m->len > DEMO_MAX_LINE + 1 || (m->len == DEMO_MAX_LINE + 1 && d[i] != '\r'))
			return -1;
	}
	return pings;
}

static void check_cut(const uint8_t *d, size_t n, const size_t *cuts, size_t ncuts, bool whole)
{
	struct model m = { 0 };
	char line[DEMO_PING_LEN];
	uint16_t len = 0;
	size_t from = 0;
	for (size_t c = 0; c <= ncuts; c++) {
		size_t to = c < ncuts ? cuts[c] : n;
		char *b = fuzz_read(d + from, to - from);
		long want = model_read(&m, d, from, to);
		int got = demo_heartbeat_input(b, to - from, line, &len);
		fuzz_read_end(b, d + from, to - from);
		if (got != want)
			FAIL("read [%zu, %zu): %d PINGs, the model %ld", from, to, got, want);
		if (got < 0) {
			if (!whole && to - from <= READ_MAX && m.len <= DEMO_MAX_LINE)
				FAIL("read [%zu, %zu) of at most %d bytes completed too many PINGs", from, to, READ_MAX);
			return; /* the connection ends */
		}
		if (len != m.len || memcmp(line, m.first, m.len < DEMO_PING_LEN ? m.len : DEMO_PING_LEN) != 0)
			FAIL("after [%zu, %zu): line of %u bytes, the model %zu", from, to, len, m.len);
		from = to;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	static size_t cuts[65536];
	size_t nc = 0;
	for (size_t at = READ_MAX; at < size; at += READ_MAX)
		cuts[nc++] = at;
	check_cut(data, size, cuts, nc, false);
	check_cut(data, size, cuts, 0, true);
	nc = 0;
	for (size_t at = 1; at < size; at++)
		cuts[nc++] = at;
	check_cut(data, size, cuts, nc, false);
	nc = fuzz_drawn_cuts(data, size, cuts);
	check_cut(data, size, cuts, nc, false);
	return 0;
}
