/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/impl.h - the in-process implementations (libtwheel and the two
 * heaps) as seen by the driver: one function per virtual-time workload.
 *
 * Every workload builds its own structure and timers (untimed), runs the
 * timed region with no clock read inside it, tears down (untimed), and checks
 * its result: it returns 0 and fills struct wl_out only if the check passed;
 * otherwise -1 with the reason in out->why.
 */
#ifndef BENCH_IMPL_H
#define BENCH_IMPL_H

#include <stddef.h>
#include <stdint.h>

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

typedef int (*wl_fn)(const struct wl_params *p, struct wl_out *o);

struct impl {
	const char *name;
	size_t node_size;       /* bytes a user embeds per timer */
	size_t per_timer_extra; /* bytes the structure adds per timer (heap entry) */
	wl_fn add_expire, add_cancel, rearm, long_range, advance_spike, idle_skip;
};

extern const struct impl impl_wheel, impl_heap4, impl_heap2;

/* Allocation counter kept by the malloc wrappers in alloc.c. */
extern volatile uint64_t bench_alloc_calls;
extern volatile size_t bench_alloc_last_size;
extern const int bench_alloc_hooked; /* 0 in sanitizer builds: nothing counted */

#endif /* BENCH_IMPL_H */
