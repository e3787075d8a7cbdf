/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/heap.c - the heaps libtwheel is measured against, as two
 * tables of operations: a d-ary min-heap of timers with back-pointers, the
 * structure of libev with d = 4 ("EV_USE_4HEAP" with "EV_HEAP_CACHE_AT") and,
 * with d = 2, of libuv, libevent and Boost.Asio.
 *
 * The heap array holds { expiry, node } pairs (the expiry is cached next to
 * the pointer so that sifting compares without touching the nodes) and every
 * node stores its position in the array, so a delete or a re-arm is
 * O(log n) without a search. As in libev, the root sits at index d - 1 so
 * that the d children of a node share one 64-byte line when d = 4.
 *
 * The array is allocated once, for the workload's number of timers: like
 * the wheel, no operation allocates.
 *
 * The code is written once with d as a parameter; every function that takes
 * it is inlined into the d = 4 and d = 2 operations below, so d is a
 * constant in each (the compiler divides by it with shifts).
 *
 * add: arm a timer that is not pending (-EBUSY if it is, -ENOSPC if full).
 * mod: arm whether or not pending; 1 if it was, 0 if not (libev's
 *      ev_timer_again, kernel mod_timer).
 * del: 1 if it was pending, else 0.
 * advance: fire every timer with expiry <= @now in nondecreasing expiry
 *      order (the timer is not pending inside its callback); returns the
 *      number fired, or -EINVAL if @now is in the past.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define HEAP_IDX_NONE UINT32_MAX
#define INLINE static inline __attribute__((always_inline))
/* out of line, each starting a 64-byte line as libtwheel's entry points do */
#define NOINLINE static __attribute__((noinline, aligned(64)))

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
	struct heap_ent *a; /* a[d-1 .. d-1+n-1] are used */
	size_t n, cap;
	uint64_t now;
	bool running;
};

/* index of the root, of @k's parent and of its first child */
INLINE size_t root(size_t d) { return d - 1; }
INLINE size_t parent(size_t k, size_t d) { return (k - root(d) - 1) / d + root(d); }
INLINE size_t first_child(size_t k, size_t d) { return d * (k - root(d)) + root(d) + 1; }

INLINE void *heap_create(uint64_t now, size_t cap, size_t d)
{
	struct heap *h = malloc(sizeof(*h));
	size_t bytes = (cap + d + 1) * sizeof(struct heap_ent);
	bytes = (bytes + 63) & ~(size_t)63;
	if (!h)
		return NULL;
	h->a = aligned_alloc(64, bytes);
	if (!h->a) {
		free(h);
		return NULL;
	}
	memset(h->a, 0, bytes);
	h->n = 0;
	h->cap = cap;
	h->now = now;
	h->running = false;
	return h;
}

INLINE void heap_destroy(void *w, size_t d)
{
	struct heap *h = w;
	for (size_t i = 0; i < h->n; i++)
		h->a[root(d) + i].t->idx = HEAP_IDX_NONE;
	free(h->a);
	free(h);
}

static void fired(struct heap_timer *t)
{
	bench_fired(t->expires);
}

static void heap_timer_init(void *w, void *p)
{
	(void)w;
	struct heap_timer *t = p;
	t->expires = 0;
	t->idx = HEAP_IDX_NONE;
	t->flags = 0;
	t->func = fired;
}

INLINE void place(struct heap *h, size_t k, struct heap_ent e)
{
	h->a[k] = e;
	e.t->idx = (uint32_t)k;
}

/* Move the entry @e, destined for hole @k, up towards the root. */
INLINE void upheap(struct heap *h, size_t k, struct heap_ent e, size_t d)
{
	while (k > root(d)) {
		size_t p = parent(k, d);
		if (h->a[p].at <= e.at)
			break;
		place(h, k, h->a[p]);
		k = p;
	}
	place(h, k, e);
}

/* Move the entry @e, destined for hole @k, down towards the leaves. */
INLINE void downheap(struct heap *h, size_t k, struct heap_ent e, size_t d)
{
	size_t end = root(d) + h->n;
	for (;;) {
		size_t c = first_child(k, d);
		if (c >= end)
			break;
		size_t best = c;
		uint64_t bat = h->a[c].at;
		if (d == 4 && c + 3 < end) {
			/* all four children exist: compare them without bounds tests */
			if (h->a[c + 1].at < bat) best = c + 1, bat = h->a[c + 1].at;
			if (h->a[c + 2].at < bat) best = c + 2, bat = h->a[c + 2].at;
			if (h->a[c + 3].at < bat) best = c + 3, bat = h->a[c + 3].at;
		} else {
			for (size_t i = c + 1; i < c + d && i < end; i++)
				if (h->a[i].at < bat)
					best = i, bat = h->a[i].at;
		}
		if (bat >= e.at)
			break;
		place(h, k, h->a[best]);
		k = best;
	}
	place(h, k, e);
}

/* Restore order around position @k whose key just changed. */
INLINE void adjust(struct heap *h, size_t k, size_t d)
{
	struct heap_ent e = h->a[k];
	if (k > root(d) && h->a[parent(k, d)].at > e.at)
		upheap(h, k, e, d);
	else
		downheap(h, k, e, d);
}

INLINE int heap_add(void *w, void *p, uint64_t expires, size_t d)
{
	struct heap *h = w;
	struct heap_timer *t = p;
	if (t->idx != HEAP_IDX_NONE)
		return -EBUSY;
	if (h->n == h->cap)
		return -ENOSPC;
	t->expires = expires;
	size_t k = root(d) + h->n++;
	upheap(h, k, (struct heap_ent){ expires, t }, d);
	return 0;
}

INLINE void remove_at(struct heap *h, size_t k, size_t d)
{
	size_t last = root(d) + --h->n;
	h->a[k].t->idx = HEAP_IDX_NONE;
	if (k != last) {
		h->a[k] = h->a[last];
		adjust(h, k, d);
	}
}

INLINE int heap_del(void *w, void *p, size_t d)
{
	struct heap_timer *t = p;
	if (t->idx == HEAP_IDX_NONE)
		return 0;
	remove_at(w, t->idx, d);
	return 1;
}

INLINE int heap_mod(void *w, void *p, uint64_t expires, size_t d)
{
	struct heap *h = w;
	struct heap_timer *t = p;
	if (t->idx == HEAP_IDX_NONE) {
		int r = heap_add(h, t, expires, d);
		return r < 0 ? r : 0;
	}
	t->expires = expires;
	h->a[t->idx].at = expires;
	adjust(h, t->idx, d);
	return 1;
}

INLINE long heap_advance(void *w, uint64_t now, size_t d)
{
	struct heap *h = w;
	long n = 0;
	if (now < h->now || h->running)
		return -EINVAL;
	h->running = true;
	/*
	 * Unlike the wheel, a timer that a callback arms at or before @now
	 * fires in this same advance (as in libev); the benchmarks' callbacks
	 * never arm timers.
	 */
	while (h->n && h->a[root(d)].at <= now) {
		struct heap_timer *t = h->a[root(d)].t;
		remove_at(h, root(d), d);
		n++;
		t->func(t);
	}
	h->now = now;
	h->running = false;
	return n;
}

INLINE uint64_t heap_next_expiry(void *w, size_t d)
{
	struct heap *h = w;
	return h->n ? h->a[root(d)].at : UINT64_MAX;
}

static size_t heap_count(void *w)
{
	return ((struct heap *)w)->n;
}

/* 0 if the heap order and every back-pointer hold, else -1. */
INLINE int heap_check(void *w, size_t d)
{
	struct heap *h = w;
	for (size_t i = 0; i < h->n; i++) {
		size_t k = root(d) + i;
		const struct heap_ent *e = &h->a[k];
		if (!e->t || e->t->idx != k || e->t->expires != e->at)
			return -1;
		if (k > root(d) && h->a[parent(k, d)].at > e->at)
			return -1;
	}
	return 0;
}

/*
 * The batches call the table's own add, mod and del, which are kept out of
 * line: every implementation then pays one direct call per operation, as
 * a program calling libtwheel (or libev, whose heap this is) does.
 */
INLINE long heap_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n,
			  int (*add)(void *, void *, uint64_t))
{
	struct heap_timer *t = (struct heap_timer *)(void *)tm;
	long bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad |= add(w, &t[i], exp[i]);
	return bad;
}

INLINE long heap_mod_many(void *w, void *const *t, uint32_t n, uint64_t e,
			  int (*mod)(void *, void *, uint64_t))
{
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += mod(w, t[i], e);
	return sum;
}

INLINE long heap_del_many(void *w, char *tm, const uint32_t *idx, uint32_t n,
			  int (*del)(void *, void *))
{
	struct heap_timer *t = (struct heap_timer *)(void *)tm;
	long sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += del(w, &t[idx[i]]);
	return sum;
}

static uint64_t zero(void *w)
{
	(void)w;
	return 0;
}

/* The table of the heap of arity D: ops_heapD. */
#define HEAP_TABLE(D)                                                                                 \
	static void *heap##D##_create(uint64_t now, size_t cap) { return heap_create(now, cap, D); } \
	static void heap##D##_destroy(void *w) { heap_destroy(w, D); }                                \
	NOINLINE int heap##D##_add(void *w, void *t, uint64_t e) { return heap_add(w, t, e, D); }    \
	NOINLINE int heap##D##_mod(void *w, void *t, uint64_t e) { return heap_mod(w, t, e, D); }    \
	NOINLINE int heap##D##_del(void *w, void *t) { return heap_del(w, t, D); }                    \
	static long heap##D##_advance(void *w, uint64_t now) { return heap_advance(w, now, D); }      \
	static long heap##D##_add_many(void *w, char *tm, const uint64_t *exp, uint32_t n)            \
	{                                                                                             \
		return heap_add_many(w, tm, exp, n, heap##D##_add);                                   \
	}                                                                                             \
	static long heap##D##_mod_many(void *w, void *const *t, uint32_t n, uint64_t e)               \
	{                                                                                             \
		return heap_mod_many(w, t, n, e, heap##D##_mod);                                      \
	}                                                                                             \
	static long heap##D##_del_many(void *w, char *tm, const uint32_t *idx, uint32_t n)            \
	{                                                                                             \
		return heap_del_many(w, tm, idx, n, heap##D##_del);                                   \
	}                                                                                             \
	static uint64_t heap##D##_next_expiry(void *w) { return heap_next_expiry(w, D); }             \
	static int heap##D##_check(void *w) { return heap_check(w, D); }                              \
	const struct bench_ops ops_heap##D = {                                                        \
		"heap" #D, sizeof(struct heap_timer), sizeof(struct heap_ent), heap##D##_create,      \
		heap##D##_destroy, heap_timer_init, heap##D##_add, heap##D##_mod, heap##D##_del,      \
		heap##D##_advance, heap##D##_add_many, heap##D##_mod_many, heap##D##_del_many,        \
		heap##D##_next_expiry, heap_count, heap##D##_check, zero, zero,                       \
	}

HEAP_TABLE(4);
HEAP_TABLE(2);
