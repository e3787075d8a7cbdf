/* SPDX-License-Identifier: MIT */
/*
 * demo/udp_session.h - the UDP session protocol of udp-session-server
 * (udp_server.c) and its load generator udp-load (udp_load.c): many
 * sessions behind one UDP socket, keyed by an ID that every datagram
 * carries, as QUIC servers key their connections. Header-only, C11.
 *
 * Datagrams (IPv4 loopback; host byte order, both ends are on one machine)
 *   client -> server  UDP_DATA   id: opens the session if the server does
 *                                not hold it, else counts as activity and
 *                                pushes its idle timeout back.
 *                     UDP_BYE    id: the client ends the session; no reply.
 *                     UDP_STATS  the server answers with one STATS line
 *                                (text, "STATS key=value ...", no newline
 *                                needed) to the sender; 10,000 a second
 *                                at most (in bursts of 1,000), the rest
 *                                unanswered (stats_limited).
 *   server -> client  UDP_CLOSED id: the session was silent for the idle
 *                                timeout and is closed; @arg carries how
 *                                late the server's timer ran (us).
 * Every datagram is one struct udp_msg, exactly sizeof(struct udp_msg) =
 * 24 bytes. The server takes a datagram only if it is 24 bytes long, its
 * magic is UDP_MAGIC, its type UDP_DATA, UDP_BYE or UDP_STATS, and its id
 * not 0 (but for UDP_STATS); pad and arg are not read. Any other datagram,
 * shorter or longer (even one whose first 24 bytes would do: the server
 * reads 24 bytes and the kernel's MSG_TRUNC tells it there were more), is
 * counted in rx and bad and changes nothing else: it opens no session,
 * pushes no timeout back, moves no reply address; so is an empty one. The
 * reply address of a session is the source address of its latest datagram
 * (a client may move, as under QUIC).
 *
 * Trust. Nothing in a datagram is authenticated, and the server relies on
 * being bound to loopback (--bind takes 127.x.y.z only). An ID is a name,
 * not a credential: any sender that uses a session's ID keeps it open,
 * moves its reply address to itself (the UDP_CLOSED notice then goes
 * there; QUIC would validate the new path first) or ends it with UDP_BYE;
 * a UDP_BYE for an ID the server does not hold changes nothing (counted in
 * rx only). A datagram from source port 0 (RFC 768: no port to answer)
 * opens or prolongs a session like any other, but its notice cannot be
 * sent (counted in tx_failed), which costs no other session its own.
 * One sender may fill the table (refused, below). Replies: a
 * session's one UDP_CLOSED is as long as a datagram that opened it, but
 * the STATS line answering a 24-byte UDP_STATS is about 300 bytes, a
 * reflection amplifier of the kind RFC 8085 (section 6) warns about,
 * bounded only by the rate cap above (which exists because a STATS line
 * costs the server far more than any other datagram: a flood of requests
 * held its loop and queued every other datagram behind them).
 * That is harmless here only because the replies go to loopback
 * addresses, which a sender elsewhere cannot put in a datagram's source
 * (the kernel drops such datagrams arriving from outside); a server on a
 * routable address would have to authenticate IDs and answer STATS no
 * longer than the request, or only to a verified source.
 *
 * IDs are the client's choice. The server finds a session by a keyed hash
 * of its ID (SipHash, a key drawn at start that it never sends), so that
 * no choice of IDs costs it more than random ones; and, whatever the key
 * and the IDs, a lookup walks at most 128 slots, and a removal at most 128
 * for each session it moves back towards its home. A new ID whose 128
 * slots are all held is refused like one that finds the table full (no
 * notice; counted in refused and refused_probe) and may be sent again.
 *
 * STATS keys (the server's): worker=0 workers=1 pid conns (sessions held)
 * timers (pending session timers) peak (most sessions held at once) opened
 * idle_closed byes rx (datagrams) bad rx_dropped (datagrams the kernel
 * dropped on the server's socket, SO_RXQ_OVFL) tx_failed (notices that
 * could not be sent) stats_limited (UDP_STATS left unanswered) refused (new sessions refused: the table full, or
 * refused_probe: their probe run full) probe_max (the longest probe, in
 * slots, that a session opened needed) record_bytes table (capacity)
 * rss_kb utime_us stime_us iters wakeups fire_n fire_p50_us fire_p99_us
 * fire_max_us deferred (closes put off until the datagrams that came
 * before the session's deadline were read: the server was behind) peeks
 * (receives that looked whether the socket was empty, for such timers:
 * one until the socket is read again, however many are due). "conns" and "timers" are named as in the TCP server's line,
 * so that the same checks read both.
 */
#ifndef TWHEEL_DEMO_UDP_SESSION_H
#define TWHEEL_DEMO_UDP_SESSION_H

#include <stdint.h>

#define UDP_MAGIC 0x53555754u /* "TWUS" */

enum udp_type { UDP_DATA = 1, UDP_BYE = 2, UDP_CLOSED = 3, UDP_STATS = 4 };

struct udp_msg {
	uint32_t magic;
	uint8_t type;
	uint8_t pad[3];
	uint64_t id;
	uint64_t arg;
};
_Static_assert(sizeof(struct udp_msg) == 24, "a udp_msg is 24 bytes on the wire");

/* Datagrams read or written per recvmmsg()/sendmmsg() call. */
#define UDP_BATCH 64

/* Socket buffers both programs ask for (SO_RCVBUFFORCE, else SO_RCVBUF). */
#define UDP_DEFAULT_BUF (64u << 20)

#endif /* TWHEEL_DEMO_UDP_SESSION_H */
