/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/heap.h - the heaps libtwheel is measured against: a d-ary
 * min-heap of timers with back-pointers, the structure of libev (4-ary,
 * "EV_USE_4HEAP" with "EV_HEAP_CACHE_AT") and, with d = 2, of libuv, libevent
 * and Boost.Asio.
 *
 * The heap array holds { expiry, node } pairs (the expiry is cached next to
 * the pointer so that sifting compares without touching the nodes) and every
 * node stores its position in the array, so a delete or a re-arm is
 * O(log n) without a search. As in libev, the root sits at index D - 1 so
 * that the D children of a node share one 64-byte line when D = 4.
 *
 * The array is allocated once by heapD_init() for a fixed capacity: like the
 * wheel, no operation allocates.
 *
 * Two instances: heap4_* (D = 4) and heap2_* (D = 2), from heap_impl.h.
 */
#ifndef BENCH_HEAP_H
#define BENCH_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_IDX_NONE UINT32_MAX

/* A timer on a heap: embed it, like struct tw_timer. 24 bytes. */
struct heap_timer {
	uint64_t expires;
	uint32_t idx; /* position in the heap array; HEAP_IDX_NONE when not pending */
	uint32_t flags;
	void (*func)(struct heap_timer *t);
};

struct heap_ent {
	uint64_t at;
	struct heap_timer *t;
};

struct heap {
	struct heap_ent *a; /* a[D-1 .. D-1+n-1] are used */
	size_t n, cap;
	uint64_t now;
	bool running;
};

#define HEAP_DECLARE(P)                                                              \
	int P##_init(struct heap *h, size_t cap, uint64_t now);                       \
	void P##_fini(struct heap *h);                                                \
	void P##_timer_init(struct heap_timer *t, void (*func)(struct heap_timer *)); \
	int P##_add(struct heap *h, struct heap_timer *t, uint64_t expires);          \
	int P##_mod(struct heap *h, struct heap_timer *t, uint64_t expires);          \
	int P##_del(struct heap *h, struct heap_timer *t);                            \
	long P##_advance(struct heap *h, uint64_t now);                               \
	uint64_t P##_next_expiry(const struct heap *h);                               \
	int P##_check(const struct heap *h);

/*
 * P_init: allocate room for @cap timers; time starts at @now. 0 or -ENOMEM.
 * P_add: arm a timer that is not pending (-EBUSY if it is, -ENOSPC if full).
 * P_mod: arm whether or not pending; 1 if it was, 0 if not (libev's
 *        ev_timer_again, kernel mod_timer).
 * P_del: 1 if it was pending, else 0.
 * P_advance: fire every timer with expiry <= @now in nondecreasing expiry
 *        order (the timer is not pending inside its callback); returns the
 *        number fired, or -EINVAL if @now is in the past.
 * P_next_expiry: the earliest expiry, UINT64_MAX if none.
 * P_check: 0 if the heap order and every back-pointer hold, else -1.
 */
HEAP_DECLARE(heap4)
HEAP_DECLARE(heap2)

static inline size_t heap_count(const struct heap *h)
{
	return h->n;
}

#endif /* BENCH_HEAP_H */
