/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/bench.h - the table of operations every in-process
 * implementation provides (ops_wheel.c, ops_cpp.cpp, heap.c), and the
 * virtual-time workloads that the driver (bench.c) runs over any such
 * table (workload.c).
 *
 * To add an implementation: one file defining a const struct bench_ops
 * (every operation is required), its extern below, its line in bench.c's
 * impls[] and in meson.build's bench sources. ops_selftest() checks it
 * against a model at every start.
 *
 * A workload builds its own structure and timers (untimed), runs the timed
 * region with no clock read inside it, tears down (untimed), and checks its
 * result: it returns 0 and fills struct wl_out only if the check passed;
 * otherwise -1 with the reason in out->why. Every implementation is called
 * through the same table. The timed loops use the _many operations, one
 * indirect call per batch (the implementation calls its own add, mod or del
 * directly for each timer), so that what is measured is the structure and
 * not the harness's calls; every implementation is called the same way.
 */
#ifndef BENCH_H
#define BENCH_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>
#include <stdint.h>

struct bench_ops {
	const char *name;
	size_t timer_size;      /* bytes a user embeds per timer */
	size_t per_timer_extra; /* bytes the structure adds per timer (heap entry) */
	/* The structure, with room for @cap timers (a wheel ignores it); NULL if out of memory. */
	void *(*create)(uint64_t now, size_t cap);
	/* Also ends every timer initialised on it (the memory stays the caller's). */
	void (*destroy)(void *w);
	/* Initialise a timer of @w whose expiry calls bench_fired(expiry). */
	void (*timer_init)(void *w, void *t);
	int (*add)(void *w, void *t, uint64_t expires);  /* 0, or -errno */
	int (*mod)(void *w, void *t, uint64_t expires);  /* 1 if it was pending, 0 if not */
	int (*del)(void *w, void *t);                    /* 1 if it was pending, 0 if not */
	long (*advance)(void *w, uint64_t now);          /* timers fired, or -errno */
	/* add timer i of the array @tm (timer_size apart) at @exp[i], i < @n: the adds' results or-ed */
	long (*add_many)(void *w, char *tm, const uint64_t *exp, uint32_t n);
	/* mod each of @t[0..@n) to @expires: the sum of the results */
	long (*mod_many)(void *w, void *const *t, uint32_t n, uint64_t expires);
	/* del timer @idx[i] of the array @tm, i < @n: the sum of the results */
	long (*del_many)(void *w, char *tm, const uint32_t *idx, uint32_t n);
	uint64_t (*next_expiry)(void *w);                /* UINT64_MAX if none */
	size_t (*count)(void *w);                        /* pending timers */
	int (*check)(void *w);                           /* 0 if every invariant holds */
	uint64_t (*cascaded)(void *w);  /* timers moved between levels so far (0: never) */
	uint64_t (*mods_fast)(void *w); /* re-arms that only stored the expiry (0: none) */
};

extern const struct bench_ops ops_wheel, ops_wheel_padded, ops_timer_list, ops_cpp, ops_cpp_hook, ops_heap4, ops_heap2;

/* What every timer callback reports; workload.c checks it. */
void bench_fired(uint64_t expires);

struct wl_params {
	uint32_t n; /* timers (rearm: live timers C) */
	uint32_t m; /* rearm: re-arms M; idle_skip: repetitions */
};

struct wl_out {
	double value;    /* the figure: ns per operation (advance_spike: max, us) */
	double extra[4]; /* workload-specific, see the workload */
	uint64_t ops;    /* operations the figure is divided by */
	char why[200];   /* why the check failed */
};

typedef int (*wl_fn)(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);

/* The workloads, defined in workload.c. */
int wl_add_expire(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);
int wl_add_cancel(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);
int wl_rearm(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);
int wl_advance_spike(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);
int wl_long_range(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);
int wl_idle_skip(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o);

/* The floors: no structure, what any structure must pay. 0, or -1 if their check failed. */
int floor_rearm(uint32_t c, uint32_t m, double *ns);
int floor_chase(uint32_t n, double *ns);

/* A randomised differential check of @ops against a plain array model; 0 if they agree. */
int ops_selftest(const struct bench_ops *ops);

/* Allocation counter kept by the malloc wrappers in alloc.c. */
extern volatile uint64_t bench_alloc_calls;
extern volatile size_t bench_alloc_last_size;
extern const int bench_alloc_hooked; /* 0 in sanitizer builds: nothing counted */

#ifdef __cplusplus
}
#endif

#endif /* BENCH_H */
