/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/impl_heap_tmpl.h - a heap of heap.h under the workloads of
 * wl.h; impl_heap4.c and impl_heap2.c define HEAP_P and IMPL_NAME first.
 */
#include <stdlib.h>

#include "heap.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define HF(name) CAT(HEAP_P, CAT(_, name))

typedef struct heap_timer T;
typedef struct heap W;
#define WL(name) CAT(HEAP_P, CAT(_wl_, name))

/* The heap array is allocated once, for the workload's number of timers. */
static inline W *a_create(uint64_t now, size_t cap)
{
	W *w = malloc(sizeof(*w));
	if (w && HF(init)(w, cap, now)) {
		free(w);
		return NULL;
	}
	return w;
}
static inline void a_destroy(W *w) { HF(fini)(w); free(w); }
static inline void a_tinit(T *t, void (*cb)(T *)) { HF(timer_init)(t, cb); }
static inline int a_add(W *w, T *t, uint64_t e) { return HF(add)(w, t, e); }
static inline int a_mod(W *w, T *t, uint64_t e) { return HF(mod)(w, t, e); }
static inline int a_del(W *w, T *t) { return HF(del)(w, t); }
static inline long a_advance(W *w, uint64_t now) { return HF(advance)(w, now); }
static inline uint64_t a_next(W *w) { return HF(next_expiry)(w); }
static inline size_t a_count(W *w) { return heap_count(w); }
static inline uint64_t a_expires(T *t) { return t->expires; }
static inline int a_check(W *w) { return HF(check)(w); }
static inline uint64_t a_cascaded(W *w) { (void)w; return 0; }
static inline uint64_t a_mods_fast(W *w) { (void)w; return 0; }

#include "wl.h"

const struct impl CAT(impl_, HEAP_P) = {
	.name = IMPL_NAME,
	.node_size = sizeof(struct heap_timer),
	.per_timer_extra = sizeof(struct heap_ent),
	.add_expire = WL(add_expire),
	.add_cancel = WL(add_cancel),
	.rearm = WL(rearm),
	.long_range = WL(long_range),
	.advance_spike = WL(advance_spike),
	.idle_skip = WL(idle_skip),
};
