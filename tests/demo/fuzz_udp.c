/* SPDX-License-Identifier: MIT */
/*
 * fuzz_udp - libFuzzer target: udp-session-server's datagram handling
 * (on_datagram(): the checks of udp_session.h, DATA, BYE, STATS, the
 * server's own sync datagram) and its session table (slot_find(),
 * session_new(), session_free(), slot_delete(): linear probing from a
 * keyed SipHash home, backward-shift deletion, PROBE_MAX) on a sequence
 * of datagrams the fuzzer's bytes spell, against a plain model.
 *
 * demo/udp_server.c itself is compiled into this file (its main()
 * renamed), so what is fuzzed is the server's code, not a copy. The
 * server is set up as main() sets it up, with a real loop for the
 * session timers (no socket: a STATS reply's sendto() fails, counted in
 * tx_failed, and nothing is sent anywhere), a table of 1 to 32 or 128 to
 * 255 sessions (--max-sessions) and the all-zero key (--debug-fixed-key),
 * so that the fuzzer can pick IDs that share a home slot: an op names a
 * home (the first four slots, or the last two: a probe run that wraps)
 * and the k-th ID of that home.
 *
 * Each datagram is a heap block of its length up to 24 bytes (a longer
 * one is cut to 24 and flagged MSG_TRUNC, as recvmmsg() returns it): ASan
 * sees a byte read past it. After each datagram these must match the
 * model: rx, bad, opened, byes, refused, refused_probe, peak, probe_max,
 * rx_dropped, the STATS answered or limited, the sessions held, the
 * pending timers (one a session), which slots are held (linear probing
 * places a set of homes in the same slots whatever the order of inserts
 * and removals: the model recomputes them from its homes), every
 * session found by its ID with the address of its latest DATA, and no
 * removed ID found.
 *
 * Build with -Dfuzz=true (clang); run e.g.
 *   build/tests/demo/fuzz_udp -max_total_time=60 corpus/ tests/demo/seeds/udp
 */
#define main udp_server_main
#include "udp_server.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...)                                                                                            \
	do {                                                                                                  \
		fprintf(stderr, "fuzz_udp: " __VA_ARGS__);                                                    \
		fputc('\n', stderr);                                                                          \
		abort();                                                                                      \
	} while (0)

#define MAX_BITS 9      /* a table of 255 sessions: 512 slots */
#define HOMES 6         /* the homes an op may name: slots 0-3, mask - 1, mask */
#define PER_HOME 256    /* the IDs known for each */
#define SYNC_TOKEN 0x5359434e544f4b4eull
#define SELF_PORT 7000

/* ids[bits][c][k]: the k-th ID (from 1 up) whose home is home_of(c) in a table of 2^bits slots. */
static uint64_t ids[MAX_BITS + 1][HOMES][PER_HOME];

static uint32_t home_of(unsigned c, uint32_t mask)
{
	return (c < 4 ? c : mask - (HOMES - 1 - c)) & mask;
}

static struct twheel_loop *loop;

static void init_once(void)
{
	if (sodium_init() < 0)
		FAIL("sodium_init");
	struct twheel_loop_config cfg;
	twheel_loop_config_init(&cfg);
	char msg[256];
	if (twheel_loop_create(&loop, &cfg, msg, sizeof(msg)) < 0)
		FAIL("no loop: %s", msg);
	struct server s = { 0 }; /* the all-zero key */
	for (unsigned bits = 1; bits <= MAX_BITS; bits++) {
		s.bits = bits;
		uint32_t mask = (1u << bits) - 1, n[HOMES] = { 0 };
		unsigned full = 0;
		for (uint64_t id = 1; full < HOMES; id++) {
			uint32_t h = home_slot(&s, id);
			for (unsigned c = 0; c < HOMES; c++)
				if (h == home_of(c, mask) && n[c] < PER_HOME) {
					ids[bits][c][n[c]++] = id;
					full += n[c] == PER_HOME;
				}
		}
	}
}

/* The model: the sessions held, and the counters. */
#define MODEL_MAX 256
static struct {
	size_t n;
	uint64_t id[MODEL_MAX];
	uint32_t home[MODEL_MAX], addr[MODEL_MAX];
	uint16_t port[MODEL_MAX];
	uint64_t rx, bad, opened, byes, refused, refused_probe, peak, stats, rx_dropped;
	uint32_t probe_max;
	bool occ[1u << MAX_BITS];
} m;

static long model_find(uint64_t id)
{
	for (size_t i = 0; i < m.n; i++)
		if (m.id[i] == id)
			return (long)i;
	return -1;
}

/* The slots linear probing fills with the model's homes (any order of inserts and removals). */
static void model_occupancy(uint32_t mask)
{
	static unsigned cnt[1u << MAX_BITS];
	memset(cnt, 0, sizeof(cnt));
	for (size_t i = 0; i < m.n; i++)
		cnt[m.home[i]]++;
	unsigned carry = 0;
	for (int round = 0; round < 2; round++) /* the second round starts with the true carry */
		for (uint32_t i = 0; i <= mask; i++) {
			unsigned x = carry + cnt[i];
			m.occ[i] = x > 0;
			carry = x ? x - 1 : 0;
		}
}

static void model_data(struct server *s, uint64_t id, uint32_t addr, uint16_t port)
{
	long i = model_find(id);
	if (i < 0) {
		uint32_t home = home_slot(s, id), d = 0;
		model_occupancy(s->mask);
		while (d < PROBE_MAX && d <= s->mask && m.occ[(home + d) & s->mask])
			d++;
		if (d >= PROBE_MAX || d > s->mask) {
			m.refused++;
			m.refused_probe++;
			return;
		}
		if (m.n == s->cap) {
			m.refused++;
			return;
		}
		i = (long)m.n++;
		m.id[i] = id;
		m.home[i] = home;
		m.opened++;
		if (m.n > m.peak)
			m.peak = m.n;
		if (d + 1 > m.probe_max)
			m.probe_max = d + 1;
	}
	m.addr[i] = addr;
	m.port[i] = port;
}

static void model_bye(uint64_t id)
{
	long i = model_find(id);
	if (i < 0)
		return;
	m.n--;
	m.id[i] = m.id[m.n];
	m.home[i] = m.home[m.n];
	m.addr[i] = m.addr[m.n];
	m.port[i] = m.port[m.n];
	m.byes++;
}

/* What udp_session.h says a datagram of @len bytes on the wire (@msg: its first 24) does. */
static void model_datagram(struct server *s, const struct udp_msg *msg, size_t len,
			   const struct sockaddr_in *from, bool has_drops, uint32_t drops)
{
	if (len == sizeof(*msg) && msg->magic == UDP_MAGIC && msg->type == UDP_SYNC && msg->id == SYNC_TOKEN &&
	    from->sin_port == s->self.sin_port && from->sin_addr.s_addr == s->self.sin_addr.s_addr)
		return; /* the server's own */
	m.rx++;
	if (has_drops)
		m.rx_dropped = drops;
	if (len != sizeof(*msg) || msg->magic != UDP_MAGIC || (msg->id == 0 && msg->type != UDP_STATS)) {
		m.bad++;
		return;
	}
	switch (msg->type) {
	case UDP_DATA: model_data(s, msg->id, from->sin_addr.s_addr, from->sin_port); break;
	case UDP_BYE: model_bye(msg->id); break;
	case UDP_STATS: m.stats++; break;
	default: m.bad++; break;
	}
}

static void check(struct server *s, size_t op)
{
#define SAME(a, b)                                                                                           \
	do {                                                                                                  \
		if ((uint64_t)(a) != (uint64_t)(b))                                                           \
			FAIL("after op %zu: %s = %" PRIu64 ", the model %" PRIu64, op, #a, (uint64_t)(a),     \
			     (uint64_t)(b));                                                                  \
	} while (0)
	SAME(s->rx, m.rx);
	SAME(s->bad, m.bad);
	SAME(s->opened, m.opened);
	SAME(s->byes, m.byes);
	SAME(s->refused, m.refused);
	SAME(s->refused_probe, m.refused_probe);
	SAME(s->peak, m.peak);
	SAME(s->probe_max, m.probe_max);
	SAME(s->rx_dropped, m.rx_dropped);
	SAME(s->stats_limited + s->tx_failed, m.stats);
	SAME(s->nsess, m.n);
	SAME(twheel_loop_count(s->loop), m.n);
	model_occupancy(s->mask);
	for (uint32_t i = 0; i <= s->mask; i++)
		if (!!s->slots[i] != m.occ[i])
			FAIL("after op %zu: slot %" PRIu32 " %s, the model's homes %s it", op, i,
			     s->slots[i] ? "held" : "empty", m.occ[i] ? "fill" : "leave");
	for (size_t i = 0; i < m.n; i++) {
		bool found;
		uint32_t home;
		uint32_t slot = slot_find(s, m.id[i], &found, &home);
		if (!found)
			FAIL("after op %zu: session %" PRIx64 " not found", op, m.id[i]);
		const struct session *ss = &s->tab[s->slots[slot] - 1];
		if (ss->addr != m.addr[i] || ss->port != m.port[i] || ss->home != home || home != m.home[i])
			FAIL("after op %zu: session %" PRIx64 ": its address or home is not the model's", op, m.id[i]);
		if (!twheel_loop_pending(s->loop, &ss->idle))
			FAIL("after op %zu: session %" PRIx64 " has no timer pending", op, m.id[i]);
	}
#undef SAME
}

/* The fuzzer's bytes, one at a time (0 once they are used up). */
struct src {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct src *src)
{
	if (!src->n)
		return 0;
	src->n--;
	return *src->p++;
}

static uint64_t take64(struct src *src)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)take(src) << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool inited;
	if (!inited) {
		init_once();
		inited = true;
	}
	struct src src = { data, size };
	uint8_t b0 = take(&src);
	opt.max_sessions = b0 & 0x80 ? 128u + (b0 & 0x7fu) : 1u + (b0 & 0x1fu);
	opt.fixed_key = true;
	static struct server s0;
	struct server *s = srv = &s0;
	memset(s, 0, sizeof(*s));
	s->loop = loop;
	s->fd = -1; /* sends fail (tx_failed): nothing leaves the process */
	s->idle_ns = 3600 * 1000000000ull;
	s->sync_token = SYNC_TOKEN;
	s->self = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(SELF_PORT),
					.sin_addr = { .s_addr = htonl(0x7f000001) } };
	if (table_init(s) != 0)
		FAIL("table_init");
	memset(&m, 0, sizeof(m));

	for (size_t op = 0; src.n; op++) {
		uint8_t k = take(&src);
		struct udp_msg msg = { .magic = UDP_MAGIC };
		size_t len = sizeof(msg);
		uint8_t raw[48];
		bool is_raw = false;
		switch (k & 3) {
		case 0: /* DATA or BYE for the j-th ID of one of the homes an op may name */
		case 1: {
			uint8_t c = take(&src), j = take(&src);
			msg.type = k & 1 ? UDP_BYE : UDP_DATA;
			msg.id = ids[s->bits][c % HOMES][j];
			break;
		}
		case 2: /* a datagram of the fuzzer's bytes, of 0 to 47 bytes */
			len = take(&src) % sizeof(raw);
			for (size_t i = 0; i < len; i++)
				raw[i] = take(&src);
			memcpy(&msg, raw, len < sizeof(msg) ? len : sizeof(msg));
			is_raw = true;
			break;
		default: /* a well-formed datagram, the fuzzer's type and ID */
			msg.type = take(&src);
			msg.id = take64(&src);
			break;
		}
		/* its source: 127.0.0.x, a port of the fuzzer's, or the server's own address */
		uint8_t a = take(&src), p = take(&src);
		struct sockaddr_in from = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(SELF_PORT + p - 1)),
					    .sin_addr = { .s_addr = htonl(0x7f000000u | (a & 3u)) } };
		bool has_drops = k & 4;
		uint32_t drops = has_drops ? (uint32_t)take(&src) * 7919u : 0;

		/* as recvmmsg() leaves it: at most 24 bytes, MSG_TRUNC if there were more */
		size_t got = len < sizeof(msg) ? len : sizeof(msg);
		void *buf = malloc(got ? got : 1);
		if (!buf)
			abort();
		memcpy(buf, is_raw ? (const void *)raw : (const void *)&msg, got);
		struct iovec iov = { buf, got };
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(uint32_t))];
		} ctl;
		struct mmsghdr mm = { .msg_len = (unsigned)got };
		mm.msg_hdr = (struct msghdr){ .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
					      .msg_iovlen = 1, .msg_flags = len > sizeof(msg) ? MSG_TRUNC : 0 };
		if (has_drops) {
			memset(&ctl, 0, sizeof(ctl));
			mm.msg_hdr.msg_control = ctl.b;
			mm.msg_hdr.msg_controllen = sizeof(ctl.b);
			struct cmsghdr *c = CMSG_FIRSTHDR(&mm.msg_hdr);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SO_RXQ_OVFL;
			c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
			memcpy(CMSG_DATA(c), &drops, sizeof(drops));
		}
		on_datagram(s, &mm, &from);
		free(buf);
		model_datagram(s, &msg, len, &from, has_drops, drops);
		check(s, op);
	}

	/* as server_close(): every session's timer off the loop */
	for (uint32_t i = 0; i < s->used; i++)
		if (s->tab[i].id) {
			twheel_loop_del(s->loop, &s->tab[i].idle);
			session_free(s, &s->tab[i]);
		}
	if (s->nsess || twheel_loop_count(loop))
		FAIL("%zu sessions, %zu timers left after every one was freed", s->nsess, twheel_loop_count(loop));
	for (uint32_t i = 0; i <= s->mask; i++)
		if (s->slots[i])
			FAIL("slot %" PRIu32 " held after every session was freed", i);
	free(s->tab);
	free(s->slots);
	free(s->deferred);
	return 0;
}
