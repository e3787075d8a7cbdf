/* SPDX-License-Identifier: MIT */
/*
 * tests/demo/udp_datagram_test.c - udp-session-server's on_datagram()
 * (demo/udp_server.c, compiled in with its main() renamed) on datagrams
 * that only its own address could send: its sync datagram, which it sends
 * itself to learn that the socket was read up to then, is taken only
 * whole. One longer, cut to its first 24 bytes (MSG_TRUNC), is a bad
 * datagram like any other (udp_session.h), even from the server's own
 * address with the sync token: taken as the server's own, it was counted
 * nowhere and moved read_upto to whatever its arg said (found by
 * fuzz_udp). Exit 0 pass, 1 fail.
 */
#define main udp_server_main
#include "udp_server.c"
#undef main

#include "../common/check.h"

/* A datagram whose first 24 bytes are @msg, from @from, MSG_TRUNC if @cut. */
static void receive(struct server *s, const struct udp_msg *msg, const struct sockaddr_in *from, bool cut)
{
	struct udp_msg *buf = malloc(sizeof(*buf)); /* what recvmmsg() filled: 24 bytes at most */
	if (!buf)
		abort();
	*buf = *msg;
	struct iovec iov = { buf, sizeof(*buf) };
	struct mmsghdr m = { .msg_len = sizeof(*buf) };
	m.msg_hdr = (struct msghdr){ .msg_name = (void *)from, .msg_namelen = sizeof(*from), .msg_iov = &iov,
				     .msg_iovlen = 1, .msg_flags = cut ? MSG_TRUNC : 0 };
	on_datagram(s, &m, from);
	free(buf);
}

int main(void)
{
	static struct server s;
	s.sync_token = 0x0123456789abcdefull;
	s.self = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(7000),
				       .sin_addr = { .s_addr = htonl(0x7f000001) } };
	s.sync_t = 5000;
	s.read_upto = 1000;
	struct udp_msg sync = { .magic = UDP_MAGIC, .type = UDP_SYNC, .id = s.sync_token, .arg = 5000 };

	/* longer than 24 bytes: not the server's, a bad datagram */
	receive(&s, &sync, &s.self, true);
	CHECK(s.rx == 1 && s.bad == 1, "a sync datagram cut to 24 bytes: rx %" PRIu64 " bad %" PRIu64 ", want 1 and 1",
	      s.rx, s.bad);
	CHECK(s.read_upto == 1000 && s.sync_t == 5000, "a sync datagram cut to 24 bytes moved read_upto to %" PRIu64,
	      s.read_upto);

	/* from another address or port, or with another token: a bad datagram (its type) */
	struct sockaddr_in other = s.self;
	other.sin_port = htons(7001);
	receive(&s, &sync, &other, false);
	struct udp_msg forged = sync;
	forged.id ^= 1;
	receive(&s, &forged, &s.self, false);
	CHECK(s.rx == 3 && s.bad == 3 && s.read_upto == 1000, "forged syncs: rx %" PRIu64 " bad %" PRIu64, s.rx, s.bad);

	/* the server's own, whole: counted nowhere, the socket read up to its sending */
	receive(&s, &sync, &s.self, false);
	CHECK(s.rx == 3 && s.bad == 3, "the server's own sync counted: rx %" PRIu64, s.rx);
	CHECK(s.read_upto == 5000 && s.sync_t == 0, "the server's own sync: read_upto %" PRIu64 " sync_t %" PRIu64,
	      s.read_upto, s.sync_t);

	printf("%s: udp_datagram_test (%d failures)\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
