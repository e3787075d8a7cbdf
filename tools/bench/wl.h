/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/wl.h - the virtual-time workloads of shared/BENCHMARKS.md,
 * written once and compiled once per implementation (impl_wheel.c,
 * impl_heap.c), so every call is a direct call and no implementation pays
 * for an indirection the others do not.
 *
 * The including file defines, before including this:
 *   WL(name)        how to name this instance's functions
 *   T, W            the timer type and the structure type
 *   static functions a_create(now, capacity), a_destroy(w), a_tinit(t, cb),
 *   a_add(w, t, e), a_mod(w, t, e), a_del(w, t), a_advance(w, now),
 *   a_next(w), a_count(w), a_expires(t), a_check(w), a_cascaded(w),
 *   a_mods_fast(w)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "impl.h"

/* What the callbacks check: every fire has lo < expiry <= hi, in order. */
static struct {
	uint64_t lo, hi;  /* the current advance goes from lo (excluded) to hi */
	uint64_t last;    /* expiry of the previous fire */
	uint64_t fired;
	uint64_t bad;     /* fires outside (lo, hi] or out of order */
	int exact;        /* also require expiry == hi */
} g;

static void check_cb(T *t)
{
	uint64_t e = a_expires(t);
	if (e <= g.lo || e > g.hi || e < g.last || (g.exact && e != g.hi))
		g.bad++;
	g.last = e;
	g.fired++;
}

static void check_reset(uint64_t lo, uint64_t hi, int exact)
{
	g.lo = lo;
	g.hi = hi;
	g.last = 0;
	g.fired = 0;
	g.bad = 0;
	g.exact = exact;
}

static T *timers_new(uint32_t n)
{
	size_t bytes = ((size_t)n * sizeof(T) + 63) & ~(size_t)63;
	T *tm = aligned_alloc(64, bytes ? bytes : 64);
	if (!tm)
		return NULL;
	memset(tm, 0, bytes);
	for (uint32_t i = 0; i < n; i++)
		a_tinit(&tm[i], check_cb);
	return tm;
}

#define FAIL(...)                                                  \
	do {                                                       \
		snprintf(o->why, sizeof(o->why), __VA_ARGS__);     \
		goto out;                                          \
	} while (0)

/* The structure allocated nothing between create and now. */
#define ALLOC_MARK() uint64_t alloc_mark = bench_alloc_calls
#define ALLOC_CHECK()                                                                      \
	do {                                                                               \
		if (bench_alloc_calls != alloc_mark)                                       \
			FAIL("%llu allocations after create",                              \
			     (unsigned long long)(bench_alloc_calls - alloc_mark));         \
	} while (0)

#define CHECK_STRUCT(w)                                                    \
	do {                                                               \
		if (a_check(w))                                            \
			FAIL("invariant check failed");                    \
	} while (0)

/*
 * add_expire: insert n timers uniform in [now+1, now+SPAN], then one advance
 * to now+SPAN. Figure: ns per timer (insert + fire).
 */
static int WL(add_expire)(const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t n = p->n;
	uint64_t now = BENCH_START;
	uint64_t *exp = malloc((size_t)n * sizeof(*exp));
	T *tm = timers_new(n);
	W *w = a_create(now, n);
	ALLOC_MARK();
	if (!exp || !tm || !w)
		FAIL("out of memory");
	struct rng r = rng_seed(1);
	for (uint32_t i = 0; i < n; i++)
		exp[i] = now + 1 + rng_below(&r, BENCH_SPAN);
	check_reset(now, now + BENCH_SPAN, 0);

	uint64_t t0 = clock_ns();
	long bad_add = 0;
	for (uint32_t i = 0; i < n; i++)
		bad_add |= a_add(w, &tm[i], exp[i]);
	long fired = a_advance(w, now + BENCH_SPAN);
	uint64_t t1 = clock_ns();

	ALLOC_CHECK();
	if (bad_add)
		FAIL("an add failed");
	if (fired != (long)n || g.fired != n)
		FAIL("fired %ld (callbacks %llu), expected %u", fired, (unsigned long long)g.fired, n);
	if (g.bad)
		FAIL("%llu timers fired early, late or out of order", (unsigned long long)g.bad);
	if (a_count(w))
		FAIL("%zu timers still pending", (size_t)a_count(w));
	CHECK_STRUCT(w);
	o->ops = n;
	o->value = (double)(t1 - t0) / n;
	rc = 0;
out:
	if (w)
		a_destroy(w);
	free(tm);
	free(exp);
	return rc;
}

/*
 * add_cancel: insert n timers uniform in [now+1, now+SPAN], then delete
 * every one in a random order. Figure: ns per add+delete pair.
 */
static int WL(add_cancel)(const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t n = p->n;
	uint64_t now = BENCH_START;
	uint64_t *exp = malloc((size_t)n * sizeof(*exp));
	uint32_t *perm = malloc((size_t)n * sizeof(*perm));
	T *tm = timers_new(n);
	W *w = a_create(now, n);
	ALLOC_MARK();
	if (!exp || !perm || !tm || !w)
		FAIL("out of memory");
	struct rng r = rng_seed(1);
	for (uint32_t i = 0; i < n; i++)
		exp[i] = now + 1 + rng_below(&r, BENCH_SPAN);
	struct rng rp = rng_seed(2);
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	for (uint32_t i = n; i > 1; i--) { /* Fisher-Yates */
		uint32_t j = rng_below(&rp, i);
		uint32_t x = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = x;
	}
	check_reset(now, now, 0);

	uint64_t t0 = clock_ns();
	long bad_add = 0, dels = 0;
	for (uint32_t i = 0; i < n; i++)
		bad_add |= a_add(w, &tm[i], exp[i]);
	for (uint32_t i = 0; i < n; i++)
		dels += a_del(w, &tm[perm[i]]);
	uint64_t t1 = clock_ns();

	ALLOC_CHECK();
	if (bad_add)
		FAIL("an add failed");
	if (dels != (long)n)
		FAIL("%ld deletes found their timer pending, expected %u", dels, n);
	if (g.fired)
		FAIL("%llu timers fired", (unsigned long long)g.fired);
	if (a_count(w))
		FAIL("%zu timers still pending", (size_t)a_count(w));
	CHECK_STRUCT(w);
	o->ops = n;
	o->value = (double)(t1 - t0) / n;
	rc = 0;
out:
	if (w)
		a_destroy(w);
	free(tm);
	free(perm);
	free(exp);
	return rc;
}

/*
 * rearm: C live timers at now+DELTA, then M re-arms of a random timer to
 * now+DELTA, advancing one tick after every BLOCK re-arms. Figure: ns per
 * re-arm, advances included. With @spikes, each advance is timed instead
 * (advance_spike) and the re-arm figure is not produced.
 */
static int rearm_run(const struct wl_params *p, struct wl_out *o, double *spikes)
{
	int rc = -1;
	uint32_t c = p->n, m = p->m;
	uint64_t now = BENCH_START;
	T *tm = timers_new(c);
	W *w = a_create(now, c);
	ALLOC_MARK();
	if (!tm || !w)
		FAIL("out of memory");
	check_reset(now, now, 0);
	long bad = 0;
	for (uint32_t i = 0; i < c; i++)
		bad |= a_add(w, &tm[i], now + BENCH_REARM_DELTA);
	if (bad)
		FAIL("an add failed");

	struct rng r = rng_seed(3);
	long pend = 0, fired = 0;
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		uint64_t e = now + BENCH_REARM_DELTA;
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			pend += a_mod(w, &tm[rng_below(&r, c)], e);
		now++;
		if (spikes) {
			uint64_t s0 = clock_ns();
			fired += a_advance(w, now);
			spikes[b] = (double)(clock_ns() - s0) / 1000.0;
		} else {
			fired += a_advance(w, now);
		}
	}
	uint64_t t1 = clock_ns();

	ALLOC_CHECK();
	uint64_t done = (uint64_t)blocks * BENCH_REARM_BLOCK;
	if (pend != (long)done)
		FAIL("%ld re-arms found their timer pending, expected %llu", pend,
		     (unsigned long long)done);
	/* every timer stays at least DELTA - (ticks advanced) > 0 ahead: none fires */
	if (fired || g.fired)
		FAIL("%ld timers fired, expected none", fired);
	if (a_count(w) != c)
		FAIL("%zu timers pending, expected %u", (size_t)a_count(w), c);
	CHECK_STRUCT(w);
	o->ops = done;
	o->value = (double)(t1 - t0) / (double)done;
	o->extra[0] = done ? (double)a_mods_fast(w) / (double)done : 0; /* fraction of re-arms that only stored the expiry */
	rc = 0;
out:
	if (w)
		a_destroy(w);
	free(tm);
	return rc;
}

static int WL(rearm)(const struct wl_params *p, struct wl_out *o)
{
	return rearm_run(p, o, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* advance_spike: value = max of one advance in rearm (us), extra[0] = p99.9. */
static int WL(advance_spike)(const struct wl_params *p, struct wl_out *o)
{
	uint32_t blocks = p->m / BENCH_REARM_BLOCK;
	double *s = calloc(blocks ? blocks : 1, sizeof(*s));
	if (!s) {
		snprintf(o->why, sizeof(o->why), "out of memory");
		return -1;
	}
	int rc = rearm_run(p, o, s);
	if (rc == 0) {
		qsort(s, blocks, sizeof(*s), cmp_double);
		size_t i999 = (size_t)((double)blocks * 0.999);
		if (i999 >= blocks)
			i999 = blocks - 1;
		o->value = s[blocks - 1];
		o->extra[0] = s[i999];
		o->ops = blocks;
	}
	free(s);
	return rc;
}

/*
 * long_range: n timers log-uniform in [1, 2^40] ticks ahead; advance
 * straight to each next expiry until none is left; every timer must fire on
 * exactly its tick. Figure: ns per timer; extra[0] = timers moved by cascades
 * per timer, extra[1] = ns per moved timer (whole time / moves: an upper
 * bound on what one move costs).
 */
static int WL(long_range)(const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t n = p->n;
	uint64_t now = BENCH_START;
	uint64_t *exp = malloc((size_t)n * sizeof(*exp));
	T *tm = timers_new(n);
	W *w = a_create(now, n);
	ALLOC_MARK();
	if (!exp || !tm || !w)
		FAIL("out of memory");
	struct rng r = rng_seed(4);
	uint64_t last = now;
	for (uint32_t i = 0; i < n; i++) {
		exp[i] = now + rng_log_uniform(&r, BENCH_LONG_BITS);
		if (exp[i] > last)
			last = exp[i];
	}
	check_reset(now, now, 1);
	uint64_t c0 = a_cascaded(w);

	uint64_t t0 = clock_ns();
	long bad_add = 0, fired = 0, advances = 0;
	for (uint32_t i = 0; i < n; i++)
		bad_add |= a_add(w, &tm[i], exp[i]);
	while (a_count(w)) {
		uint64_t t = a_next(w);
		if (t <= now) /* cannot happen: nothing here is armed in the past */
			break;
		g.lo = now;
		g.hi = t;
		fired += a_advance(w, t);
		now = t;
		advances++;
	}
	uint64_t t1 = clock_ns();

	ALLOC_CHECK();
	if (bad_add)
		FAIL("an add failed");
	if (fired != (long)n || g.fired != n)
		FAIL("fired %ld, expected %u", fired, n);
	if (g.bad)
		FAIL("%llu timers did not fire on exactly their tick", (unsigned long long)g.bad);
	if (now != last)
		FAIL("ended at %llu, last expiry %llu", (unsigned long long)now, (unsigned long long)last);
	CHECK_STRUCT(w);
	uint64_t moved = a_cascaded(w) - c0;
	o->ops = n;
	o->value = (double)(t1 - t0) / n;
	o->extra[0] = (double)moved / n;
	o->extra[1] = moved ? (double)(t1 - t0) / (double)moved : 0;
	o->extra[2] = (double)advances;
	rc = 0;
out:
	if (w)
		a_destroy(w);
	free(tm);
	free(exp);
	return rc;
}

/*
 * idle_skip: one timer at now + 2^32, advance to it; repeated p->m times on
 * the same structure. Figure: ns per repetition (the add plus the whole
 * advance: an upper bound on the advance).
 */
static int WL(idle_skip)(const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t k = p->m;
	uint64_t now = BENCH_START;
	T *tm = timers_new(1);
	W *w = a_create(now, 1);
	ALLOC_MARK();
	if (!tm || !w)
		FAIL("out of memory");
	check_reset(now, now, 1);
	long fired = 0, bad_add = 0;
	uint64_t c0 = a_cascaded(w);
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < k; i++) {
		uint64_t e = now + BENCH_IDLE_TICKS;
		bad_add |= a_add(w, &tm[0], e);
		g.lo = now;
		g.hi = e;
		fired += a_advance(w, e);
		now = e;
	}
	uint64_t t1 = clock_ns();
	ALLOC_CHECK();
	if (bad_add)
		FAIL("an add failed");
	if (fired != (long)k || g.fired != k || g.bad)
		FAIL("fired %ld (bad %llu), expected %u on their tick", fired,
		     (unsigned long long)g.bad, k);
	CHECK_STRUCT(w);
	o->ops = k;
	o->value = (double)(t1 - t0) / k;
	o->extra[0] = (double)(a_cascaded(w) - c0) / k; /* timers moved per skip */
	rc = 0;
out:
	if (w)
		a_destroy(w);
	free(tm);
	return rc;
}

#undef FAIL
