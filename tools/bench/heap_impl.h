/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/heap_impl.h - the d-ary heap, instantiated by heap4.c and
 * heap2.c with HEAP_D and HEAP_P defined. See heap.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(HEAP_P, CAT(_, name))

#define D HEAP_D
#define HEAP0 (D - 1) /* index of the root */
#define PARENT(k) ((((k) - HEAP0 - 1) / D) + HEAP0)
#define FIRST_CHILD(k) (D * ((k) - HEAP0) + HEAP0 + 1)

int FN(init)(struct heap *h, size_t cap, uint64_t now)
{
	size_t bytes = (cap + D + 1) * sizeof(struct heap_ent);
	bytes = (bytes + 63) & ~(size_t)63;
	h->a = aligned_alloc(64, bytes);
	if (!h->a)
		return -ENOMEM;
	memset(h->a, 0, bytes);
	h->n = 0;
	h->cap = cap;
	h->now = now;
	h->running = false;
	return 0;
}

void FN(fini)(struct heap *h)
{
	for (size_t i = 0; i < h->n; i++)
		h->a[HEAP0 + i].t->idx = HEAP_IDX_NONE;
	free(h->a);
	h->a = NULL;
	h->n = 0;
}

void FN(timer_init)(struct heap_timer *t, void (*func)(struct heap_timer *))
{
	t->expires = 0;
	t->idx = HEAP_IDX_NONE;
	t->flags = 0;
	t->func = func;
}

static inline void place(struct heap *h, size_t k, struct heap_ent e)
{
	h->a[k] = e;
	e.t->idx = (uint32_t)k;
}

/* Move the entry @e, destined for hole @k, up towards the root. */
static void upheap(struct heap *h, size_t k, struct heap_ent e)
{
	while (k > HEAP0) {
		size_t p = PARENT(k);
		if (h->a[p].at <= e.at)
			break;
		place(h, k, h->a[p]);
		k = p;
	}
	place(h, k, e);
}

/* Move the entry @e, destined for hole @k, down towards the leaves. */
static void downheap(struct heap *h, size_t k, struct heap_ent e)
{
	size_t end = HEAP0 + h->n;
	for (;;) {
		size_t c = FIRST_CHILD(k);
		if (c >= end)
			break;
		size_t best = c;
		uint64_t bat = h->a[c].at;
#if D == 4
		if (c + 3 < end) {
			/* all four children exist: compare them without bounds tests */
			if (h->a[c + 1].at < bat) best = c + 1, bat = h->a[c + 1].at;
			if (h->a[c + 2].at < bat) best = c + 2, bat = h->a[c + 2].at;
			if (h->a[c + 3].at < bat) best = c + 3, bat = h->a[c + 3].at;
		} else
#endif
		{
			for (size_t i = c + 1; i < c + D && i < end; i++)
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
static void adjust(struct heap *h, size_t k)
{
	struct heap_ent e = h->a[k];
	if (k > HEAP0 && h->a[PARENT(k)].at > e.at)
		upheap(h, k, e);
	else
		downheap(h, k, e);
}

int FN(add)(struct heap *h, struct heap_timer *t, uint64_t expires)
{
	if (t->idx != HEAP_IDX_NONE)
		return -EBUSY;
	if (h->n == h->cap)
		return -ENOSPC;
	t->expires = expires;
	size_t k = HEAP0 + h->n++;
	upheap(h, k, (struct heap_ent){ expires, t });
	return 0;
}

static void remove_at(struct heap *h, size_t k)
{
	size_t last = HEAP0 + --h->n;
	h->a[k].t->idx = HEAP_IDX_NONE;
	if (k != last) {
		h->a[k] = h->a[last];
		adjust(h, k);
	}
}

int FN(del)(struct heap *h, struct heap_timer *t)
{
	if (t->idx == HEAP_IDX_NONE)
		return 0;
	remove_at(h, t->idx);
	return 1;
}

int FN(mod)(struct heap *h, struct heap_timer *t, uint64_t expires)
{
	if (t->idx == HEAP_IDX_NONE) {
		int r = FN(add)(h, t, expires);
		return r < 0 ? r : 0;
	}
	t->expires = expires;
	h->a[t->idx].at = expires;
	adjust(h, t->idx);
	return 1;
}

long FN(advance)(struct heap *h, uint64_t now)
{
	long n = 0;
	if (now < h->now || h->running)
		return -EINVAL;
	h->running = true;
	/*
	 * Unlike the wheel, a timer that a callback arms at or before @now
	 * fires in this same advance (as in libev); the benchmarks' callbacks
	 * never arm timers.
	 */
	while (h->n && h->a[HEAP0].at <= now) {
		struct heap_timer *t = h->a[HEAP0].t;
		remove_at(h, HEAP0);
		n++;
		t->func(t);
	}
	h->now = now;
	h->running = false;
	return n;
}

uint64_t FN(next_expiry)(const struct heap *h)
{
	return h->n ? h->a[HEAP0].at : UINT64_MAX;
}

int FN(check)(const struct heap *h)
{
	for (size_t i = 0; i < h->n; i++) {
		size_t k = HEAP0 + i;
		const struct heap_ent *e = &h->a[k];
		if (!e->t || e->t->idx != k || e->t->expires != e->at)
			return -1;
		if (k > HEAP0 && h->a[PARENT(k)].at > e->at)
			return -1;
	}
	return 0;
}
