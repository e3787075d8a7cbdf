/* SPDX-License-Identifier: MIT */
/* tools/bench/rt_wl.h - the real-time workloads (rt_wl.c) as the driver (rt.c) sees them. */
#ifndef BENCH_RT_WL_H
#define BENCH_RT_WL_H

#include "rt.h"

/* One repetition's figures: name=value pairs; ok false = failed its check (why in note). */
#define RT_MAX_METRICS 8
struct rt_res {
	bool ok;
	int n;
	const char *name[RT_MAX_METRICS];
	double val[RT_MAX_METRICS];
	char note[160];
};

void rt_put(struct rt_res *r, const char *name, double v);

struct rt_wl_def {
	const char *name;
	void (*run)(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r);
};
extern const struct rt_wl_def rt_wls[RT_NWL];

/* The tick of add_expire's compressed time on @ops. */
uint64_t rt_expire_tick(const struct rt_ops *ops);

#endif /* BENCH_RT_WL_H */
