/* SPDX-License-Identifier: MIT */
/*
 * multishot.c - which of the requests in flight are multishot, so that the
 * loop can count their ends (twheel_loop_stats.multishot_ends).
 *
 * A CQE does not say whether its request was multishot: the last CQE of a
 * multishot request and the only CQE of a one-shot one both arrive without
 * IORING_CQE_F_MORE. The SQE says it, so the loop looks at every SQE just
 * before it submits it (its wait, twheel_loop_submit(), a full SQ in
 * twheel_loop_get_sqe()): when the request is multishot, its user_data (the
 * struct tw_loop_io) goes into a multiset. A CQE without F_MORE whose
 * user_data is in the set ends one of those requests: it is taken out and
 * counted. A request is in the set before the kernel sees it, so its end
 * cannot come first.
 *
 * Multishot are:
 *
 *	opcode                  flag                         since
 *	IORING_OP_POLL_ADD      IORING_POLL_ADD_MULTI in len      5.13
 *	IORING_OP_ACCEPT        IORING_ACCEPT_MULTISHOT in ioprio 5.19
 *	IORING_OP_RECV, RECVMSG IORING_RECV_MULTISHOT in ioprio   6.0
 *	IORING_OP_TIMEOUT       IORING_TIMEOUT_MULTISHOT          6.4
 *	IORING_OP_READ_MULTISHOT   always                         6.7
 *	IORING_OP_RECV_ZC          always                         6.15
 *
 * (Zero-copy sends also post a CQE with F_MORE, followed by a notification
 * without it; they are not multishot and not counted.)
 *
 * The set is an open-addressing hash table with linear probing, keyed by
 * user_data, a key once per request in flight (a handler shared by two
 * multishot requests is in it twice); it grows by doubling and stays at
 * most half full, so an insert, a lookup and a removal are O(1) expected.
 * Cost for the loop: reading the opcode of each SQE it submits, and for a
 * CQE without F_MORE, one lookup, only while a multishot request is in
 * flight. Only the loop thread touches the set.
 *
 * Exact for requests the loop submits. It cannot tell apart the end of a
 * multishot request and the completion of a one-shot request in flight at
 * the same time with the same handler; and SQEs submitted with
 * io_uring_submit() on twheel_loop_ring() are looked at only at the loop's
 * next submission, after which their end may already have come.
 */
#include "loop_impl.h"

/* Opcodes and flags newer than the oldest liburing headers we build with. */
#define OP_READ_MULTISHOT 49 /* IORING_OP_READ_MULTISHOT, 6.7 */
#define OP_RECV_ZC 58        /* IORING_OP_RECV_ZC, 6.15 */
#define TIMEOUT_MULTISHOT (1u << 6) /* IORING_TIMEOUT_MULTISHOT, 6.4 */

#define MS_MIN_BITS 6u /* the first table: 64 slots */

bool twl_sqe_multishot(const struct io_uring_sqe *sqe)
{
	switch (sqe->opcode) {
	case IORING_OP_POLL_ADD:
		return sqe->len & IORING_POLL_ADD_MULTI;
	case IORING_OP_ACCEPT:
		return sqe->ioprio & IORING_ACCEPT_MULTISHOT;
	case IORING_OP_RECV:
	case IORING_OP_RECVMSG:
		return sqe->ioprio & IORING_RECV_MULTISHOT;
	case IORING_OP_TIMEOUT:
		return sqe->timeout_flags & TIMEOUT_MULTISHOT;
	case OP_READ_MULTISHOT:
	case OP_RECV_ZC:
		return true;
	default:
		return false;
	}
}

/* The home slot of @key in a table of 2^@bits slots (Fibonacci hashing:
 * the handlers' addresses differ in their middle bits). */
static size_t ms_home(uint64_t key, unsigned bits)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static void ms_put(uint64_t *tab, unsigned bits, uint64_t key)
{
	size_t mask = ((size_t)1 << bits) - 1, i = ms_home(key, bits);

	while (tab[i])
		i = (i + 1) & mask;
	tab[i] = key;
}

/* Make room for one more key; false when out of memory. */
static bool ms_reserve(struct twheel_loop *l)
{
	unsigned bits = l->ms_bits ? l->ms_bits + 1 : MS_MIN_BITS;
	size_t i, cap = l->ms_bits ? (size_t)1 << l->ms_bits : 0;
	uint64_t *tab;

	if ((l->ms_len + 1) * 2 <= cap)
		return true;
	tab = calloc((size_t)1 << bits, sizeof(*tab));
	if (!tab)
		return false;
	for (i = 0; i < cap; i++)
		if (l->ms_tab[i])
			ms_put(tab, bits, l->ms_tab[i]);
	free(l->ms_tab);
	l->ms_tab = tab;
	l->ms_bits = bits;
	return true;
}

void twl_multishot_scan(struct twheel_loop *l)
{
	struct io_uring_sq *sq = &l->ring.sq;
	unsigned i = l->sq_seen;

	/* Slots already reused by SQEs submitted behind the loop's back
	 * (io_uring_submit() on twheel_loop_ring()) cannot be read. */
	if (sq->sqe_tail - i > sq->ring_entries)
		i = sq->sqe_tail - sq->ring_entries;
	for (; i != sq->sqe_tail; i++) {
		const struct io_uring_sqe *sqe = &sq->sqes[i & sq->ring_mask];

		/* out of memory: that request's end is not counted */
		if (sqe->user_data && twl_sqe_multishot(sqe) && ms_reserve(l)) {
			ms_put(l->ms_tab, l->ms_bits, sqe->user_data);
			l->ms_len++;
		}
	}
	l->sq_seen = i;
}

bool twl_multishot_end(struct twheel_loop *l, uint64_t key)
{
	size_t mask = ((size_t)1 << l->ms_bits) - 1, i = ms_home(key, l->ms_bits), j;

	while (l->ms_tab[i] != key) {
		if (!l->ms_tab[i])
			return false;
		i = (i + 1) & mask;
	}
	/* Remove slot i; move back each key after it that may sit there
	 * (its home is not in the cyclic range (i, j]). */
	for (j = (i + 1) & mask; l->ms_tab[j]; j = (j + 1) & mask) {
		size_t h = ms_home(l->ms_tab[j], l->ms_bits);

		if (((j - h) & mask) >= ((j - i) & mask)) {
			l->ms_tab[i] = l->ms_tab[j];
			i = j;
		}
	}
	l->ms_tab[i] = 0;
	l->ms_len--;
	return true;
}
