/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/workload.c - the virtual-time workloads, written once and run
 * over any table of operations (struct bench_ops, bench.h), the floors that
 * bound them from below, and the differential self-check of a table.
 *
 * Inputs come from common.h's seeded generator (seed 42; stream 1: expiries,
 * 2: cancel order, 3: re-arm picks, 4: long_range deltas, 5: floor_chase
 * order, 9: self-check); the virtual clock starts at BENCH_START.
 *
 *   add_expire     N timers uniform in [now+1, now+SPAN], one advance to
 *                  now+SPAN; ns per timer (insert + fire)
 *   add_cancel     the same N timers, then a delete of each in a random
 *                  order; ns per add+delete pair
 *   rearm          C = N live timers at now+DELTA; M re-arms of a random
 *                  timer to now+DELTA, one tick advanced every BLOCK re-arms;
 *                  ns per re-arm, advances included
 *   advance_spike  rearm again, each advance timed alone; max and p99.9, us
 *   long_range     N timers log-uniform in [1, 2^LONG_BITS] ticks ahead,
 *                  advance to each next expiry until none is left; ns per
 *                  timer, each must fire on exactly its tick
 *   idle_skip      one timer at now + 2^32, advance to it; M times on one
 *                  structure; ns per add + whole advance
 *   floor_rearm    rearm's picks over N 40-byte nodes: read one expiry, write
 *                  the new one; ns per pick
 *   floor_chase    walk N 40-byte nodes linked in a random order; ns per node
 *
 * N, M, SPAN, DELTA, BLOCK and LONG_BITS are in common.h; docs/bench.md
 * states every check.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common.h"

/* What the callbacks check: every fire has lo < expiry <= hi, in order. */
static struct {
	uint64_t lo, hi;  /* the current advance goes from lo (excluded) to hi */
	uint64_t last;    /* expiry of the previous fire */
	uint64_t fired;
	uint64_t bad;     /* fires outside (lo, hi] or out of order */
	int exact;        /* also require expiry == hi */
} g;

void bench_fired(uint64_t e)
{
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

/* n timers of @w in one 64-byte aligned array, initialised (NULL without @w). */
static char *timers_new(const struct bench_ops *ops, void *w, uint32_t n)
{
	if (!w)
		return NULL;
	size_t bytes = ((size_t)n * ops->timer_size + 63) & ~(size_t)63;
	char *tm = aligned_alloc(64, bytes ? bytes : 64);
	if (!tm)
		return NULL;
	memset(tm, 0, bytes);
	for (uint32_t i = 0; i < n; i++)
		ops->timer_init(w, tm + (size_t)i * ops->timer_size);
	return tm;
}

/* What a workload allocates before its timed region; NULL where not asked for or out of memory. */
struct run {
	uint64_t *exp;  /* RUN_EXP: n expiries */
	uint32_t *perm; /* RUN_PERM: n indices */
	char *tm;       /* n timers, initialised */
	void *w;        /* the structure at BENCH_START, room for n */
	int flags;      /* what run_open() was asked for */
	uint64_t alloc_mark; /* bench_alloc_calls once all of it was allocated */
};

enum { RUN_EXP = 1, RUN_PERM = 2 };

/*
 * Allocate, in this order, what @flags asks for, the structure and its
 * timers, then take the allocation mark; run_ok() says whether all of it
 * was allocated. Untimed.
 */
static struct run run_open(const struct bench_ops *ops, uint32_t n, int flags)
{
	struct run r = { .flags = flags };
	if (flags & RUN_EXP)
		r.exp = malloc((size_t)n * sizeof(*r.exp));
	if (flags & RUN_PERM)
		r.perm = malloc((size_t)n * sizeof(*r.perm));
	r.w = ops->create(BENCH_START, n);
	r.tm = timers_new(ops, r.w, n);
	r.alloc_mark = bench_alloc_calls;
	return r;
}

static bool run_ok(struct run r)
{
	return (r.exp || !(r.flags & RUN_EXP)) && (r.perm || !(r.flags & RUN_PERM)) && r.tm && r.w;
}

static void run_close(const struct bench_ops *ops, struct run r)
{
	if (r.w)
		ops->destroy(r.w);
	free(r.tm);
	free(r.perm);
	free(r.exp);
}

/* add_expire's and add_cancel's expiries: uniform in [now+1, now+SPAN] (stream 1). */
static void uniform_expiries(uint64_t *exp, uint32_t n, uint64_t now)
{
	struct rng r = rng_seed(1);
	for (uint32_t i = 0; i < n; i++)
		exp[i] = now + 1 + rng_below(&r, BENCH_SPAN);
}

#define TIMER(i) (run.tm + (size_t)(i) * ops->timer_size)

#define FAIL(...)                                                  \
	do {                                                       \
		snprintf(o->why, sizeof(o->why), __VA_ARGS__);     \
		goto out;                                          \
	} while (0)

/*
 * The checks every workload ends with: nothing allocated since create, no
 * failed add, the structure's invariants. True, with the reason, if one failed.
 */
static bool checks_failed(const struct bench_ops *ops, const struct run *run, long bad_add, struct wl_out *o)
{
	if (bench_alloc_calls != run->alloc_mark)
		snprintf(o->why, sizeof(o->why), "%llu allocations after create",
			 (unsigned long long)(bench_alloc_calls - run->alloc_mark));
	else if (bad_add)
		snprintf(o->why, sizeof(o->why), "an add failed");
	else if (ops->check(run->w))
		snprintf(o->why, sizeof(o->why), "invariant check failed");
	return o->why[0] != '\0';
}

/*
 * add_expire: insert n timers uniform in [now+1, now+SPAN], then one advance
 * to now+SPAN. Figure: ns per timer (insert + fire).
 */
int wl_add_expire(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t n = p->n;
	uint64_t now = BENCH_START;
	struct run run = run_open(ops, n, RUN_EXP);
	if (!run_ok(run))
		FAIL("out of memory");
	uniform_expiries(run.exp, n, now);
	check_reset(now, now + BENCH_SPAN, 0);

	uint64_t t0 = clock_ns();
	long bad_add = ops->add_many(run.w, run.tm, run.exp, n);
	long fired = ops->advance(run.w, now + BENCH_SPAN);
	uint64_t t1 = clock_ns();

	if (checks_failed(ops, &run, bad_add, o))
		goto out;
	if (fired != (long)n || g.fired != n)
		FAIL("fired %ld (callbacks %llu), expected %u", fired, (unsigned long long)g.fired, n);
	if (g.bad)
		FAIL("%llu timers fired early, late or out of order", (unsigned long long)g.bad);
	if (ops->count(run.w))
		FAIL("%zu timers still pending", (size_t)ops->count(run.w));
	o->ops = n;
	o->value = (double)(t1 - t0) / n;
	rc = 0;
out:
	run_close(ops, run);
	return rc;
}

/*
 * add_cancel: insert n timers uniform in [now+1, now+SPAN], then delete
 * every one in a random order. Figure: ns per add+delete pair.
 */
int wl_add_cancel(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t n = p->n;
	uint64_t now = BENCH_START;
	struct run run = run_open(ops, n, RUN_EXP | RUN_PERM);
	if (!run_ok(run))
		FAIL("out of memory");
	uniform_expiries(run.exp, n, now);
	rng_permutation(run.perm, n, 2);
	check_reset(now, now, 0);

	uint64_t t0 = clock_ns();
	long bad_add = ops->add_many(run.w, run.tm, run.exp, n);
	long dels = ops->del_many(run.w, run.tm, run.perm, n);
	uint64_t t1 = clock_ns();

	if (checks_failed(ops, &run, bad_add, o))
		goto out;
	if (dels != (long)n)
		FAIL("%ld deletes found their timer pending, expected %u", dels, n);
	if (g.fired)
		FAIL("%llu timers fired", (unsigned long long)g.fired);
	if (ops->count(run.w))
		FAIL("%zu timers still pending", (size_t)ops->count(run.w));
	o->ops = n;
	o->value = (double)(t1 - t0) / n;
	rc = 0;
out:
	run_close(ops, run);
	return rc;
}

/*
 * rearm: C live timers at now+DELTA, then M re-arms of a random timer to
 * now+DELTA, advancing one tick after every BLOCK re-arms. Figure: ns per
 * re-arm, advances included. With @spikes, each advance is timed instead
 * (advance_spike) and the re-arm figure is not produced.
 */
static int rearm_run(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o, double *spikes)
{
	int rc = -1;
	uint32_t c = p->n, m = p->m;
	uint64_t now = BENCH_START;
	struct run run = run_open(ops, c, 0);
	if (!run_ok(run))
		FAIL("out of memory");
	check_reset(now, now, 0);
	long bad = 0;
	for (uint32_t i = 0; i < c; i++)
		bad |= ops->add(run.w, TIMER(i), now + BENCH_REARM_DELTA);
	if (bad)
		FAIL("an add failed");

	struct rng r = rng_seed(3);
	long pend = 0, fired = 0;
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	void *pick[BENCH_REARM_BLOCK];
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		uint64_t e = now + BENCH_REARM_DELTA;
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			pick[k] = TIMER(rng_below(&r, c));
		pend += ops->mod_many(run.w, pick, BENCH_REARM_BLOCK, e);
		now++;
		if (spikes) {
			uint64_t s0 = clock_ns();
			fired += ops->advance(run.w, now);
			spikes[b] = (double)(clock_ns() - s0) / 1000.0;
		} else {
			fired += ops->advance(run.w, now);
		}
	}
	uint64_t t1 = clock_ns();

	if (checks_failed(ops, &run, 0, o))
		goto out;
	uint64_t done = (uint64_t)blocks * BENCH_REARM_BLOCK;
	if (pend != (long)done)
		FAIL("%ld re-arms found their timer pending, expected %llu", pend,
		     (unsigned long long)done);
	/* every timer stays at least DELTA - (ticks advanced) > 0 ahead: none fires */
	if (fired || g.fired)
		FAIL("%ld timers fired, expected none", fired);
	if (ops->count(run.w) != c)
		FAIL("%zu timers pending, expected %u", (size_t)ops->count(run.w), c);
	o->ops = done;
	o->value = (double)(t1 - t0) / (double)done;
	o->extra[0] = done ? (double)ops->mods_fast(run.w) / (double)done : 0; /* fraction of re-arms that only stored the expiry */
	rc = 0;
out:
	run_close(ops, run);
	return rc;
}

int wl_rearm(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o)
{
	return rearm_run(ops, p, o, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* advance_spike: value = max of one advance in rearm (us), extra[0] = p99.9. */
int wl_advance_spike(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o)
{
	uint32_t blocks = p->m / BENCH_REARM_BLOCK;
	double *s = calloc(blocks ? blocks : 1, sizeof(*s));
	if (!s) {
		snprintf(o->why, sizeof(o->why), "out of memory");
		return -1;
	}
	int rc = rearm_run(ops, p, o, s);
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
int wl_long_range(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t n = p->n;
	uint64_t now = BENCH_START;
	struct run run = run_open(ops, n, RUN_EXP);
	if (!run_ok(run))
		FAIL("out of memory");
	uint64_t *exp = run.exp;
	struct rng r = rng_seed(4);
	uint64_t last = now;
	for (uint32_t i = 0; i < n; i++) {
		exp[i] = now + rng_log_uniform(&r, BENCH_LONG_BITS);
		if (exp[i] > last)
			last = exp[i];
	}
	check_reset(now, now, 1);
	uint64_t c0 = ops->cascaded(run.w);

	uint64_t t0 = clock_ns();
	long bad_add = ops->add_many(run.w, run.tm, exp, n), fired = 0, advances = 0;
	while (ops->count(run.w)) {
		uint64_t t = ops->next_expiry(run.w);
		if (t <= now) /* cannot happen: nothing here is armed in the past */
			break;
		g.lo = now;
		g.hi = t;
		fired += ops->advance(run.w, t);
		now = t;
		advances++;
	}
	uint64_t t1 = clock_ns();

	if (checks_failed(ops, &run, bad_add, o))
		goto out;
	if (fired != (long)n || g.fired != n)
		FAIL("fired %ld, expected %u", fired, n);
	if (g.bad)
		FAIL("%llu timers did not fire on exactly their tick", (unsigned long long)g.bad);
	if (now != last)
		FAIL("ended at %llu, last expiry %llu", (unsigned long long)now, (unsigned long long)last);
	uint64_t moved = ops->cascaded(run.w) - c0;
	o->ops = n;
	o->value = (double)(t1 - t0) / n;
	o->extra[0] = (double)moved / n;
	o->extra[1] = moved ? (double)(t1 - t0) / (double)moved : 0;
	o->extra[2] = (double)advances;
	rc = 0;
out:
	run_close(ops, run);
	return rc;
}

/*
 * idle_skip: one timer at now + 2^32, advance to it; repeated p->m times on
 * the same structure. Figure: ns per repetition (the add plus the whole
 * advance: an upper bound on the advance).
 */
int wl_idle_skip(const struct bench_ops *ops, const struct wl_params *p, struct wl_out *o)
{
	int rc = -1;
	uint32_t k = p->m;
	uint64_t now = BENCH_START;
	struct run run = run_open(ops, 1, 0);
	if (!run_ok(run))
		FAIL("out of memory");
	check_reset(now, now, 1);
	long fired = 0, bad_add = 0;
	uint64_t c0 = ops->cascaded(run.w);
	uint64_t t0 = clock_ns();
	for (uint32_t i = 0; i < k; i++) {
		uint64_t e = now + BENCH_IDLE_TICKS;
		bad_add |= ops->add(run.w, TIMER(0), e);
		g.lo = now;
		g.hi = e;
		fired += ops->advance(run.w, e);
		now = e;
	}
	uint64_t t1 = clock_ns();
	if (checks_failed(ops, &run, bad_add, o))
		goto out;
	if (fired != (long)k || g.fired != k || g.bad)
		FAIL("fired %ld (bad %llu), expected %u on their tick", fired,
		     (unsigned long long)g.bad, k);
	o->ops = k;
	o->value = (double)(t1 - t0) / k;
	o->extra[0] = (double)(ops->cascaded(run.w) - c0) / k; /* timers moved per skip */
	rc = 0;
out:
	run_close(ops, run);
	return rc;
}


/* ---- floors --------------------------------------------------------------- */

/* A 40-byte node, the size of struct tw_timer. */
struct floor_node {
	uint64_t expires;
	struct floor_node *next;
	uint64_t pad[3];
};

/*
 * floor_rearm: over C nodes and the same random picks as rearm (made the
 * same way, a block at a time), read a node's expiry and write the new one;
 * the clock moves one tick every BLOCK.
 */
int floor_rearm(uint32_t c, uint32_t m, double *ns)
{
	struct floor_node *a = aligned_alloc(64, ((size_t)c * sizeof(*a) + 63) & ~(size_t)63);
	if (!a)
		return -1;
	uint64_t now = BENCH_START;
	for (uint32_t i = 0; i < c; i++)
		a[i] = (struct floor_node){ .expires = now + BENCH_REARM_DELTA };
	struct rng r = rng_seed(3);
	uint64_t sum = 0;
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	struct floor_node *pick[BENCH_REARM_BLOCK];
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		uint64_t e = now + BENCH_REARM_DELTA;
		/* the picks as rearm makes them, then the node reads and writes */
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			pick[k] = &a[rng_below(&r, c)];
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++) {
			struct floor_node *x = pick[k];
			sum += x->expires;
			x->expires = e;
		}
		now++;
	}
	uint64_t t1 = clock_ns();
	/* the check: every node holds a plausible expiry and the reads happened */
	int rc = 0;
	for (uint32_t i = 0; i < c; i++)
		if (a[i].expires < BENCH_START + BENCH_REARM_DELTA || a[i].expires > now + BENCH_REARM_DELTA)
			rc = -1;
	if (sum < (uint64_t)blocks * BENCH_REARM_BLOCK * (BENCH_START + BENCH_REARM_DELTA))
		rc = -1;
	free(a);
	*ns = (double)(t1 - t0) / ((double)blocks * BENCH_REARM_BLOCK);
	return rc;
}

/* floor_chase: walk n nodes linked in a random order, reading one field of each. */
int floor_chase(uint32_t n, double *ns)
{
	struct floor_node *a = aligned_alloc(64, ((size_t)n * sizeof(*a) + 63) & ~(size_t)63);
	uint32_t *perm = malloc((size_t)n * sizeof(*perm));
	if (!a || !perm) {
		free(a);
		free(perm);
		return -1;
	}
	rng_permutation(perm, n, 5);
	uint64_t expect = 0;
	for (uint32_t i = 0; i < n; i++) {
		a[perm[i]].expires = i + 1;
		a[perm[i]].next = i + 1 < n ? &a[perm[i + 1]] : NULL;
		expect += i + 1;
	}
	struct floor_node *p = &a[perm[0]];
	free(perm);
	uint64_t sum = 0, visited = 0;
	uint64_t t0 = clock_ns();
	while (p) {
		sum += p->expires;
		visited++;
		p = p->next;
	}
	uint64_t t1 = clock_ns();
	free(a);
	*ns = (double)(t1 - t0) / n;
	return sum == expect && visited == n ? 0 : -1;
}

/* ---- self-check --------------------------------------------------------- */

/*
 * add/mod/del/advance with random expiries against a plain array model:
 * every return value, the next expiry, every fire due and in order, and the
 * structure's invariants after every step. Runs at every start (a few ms).
 */
int ops_selftest(const struct bench_ops *ops)
{
	enum { NT = 200, STEPS = 40000 };
	bool pend[NT] = { 0 };
	uint64_t ex[NT] = { 0 }, now = 100;
	struct rng r = rng_seed(9);
	struct run run = { .w = ops->create(now, NT) };
	run.tm = timers_new(ops, run.w, NT);
	int rc = -1;
	if (!run_ok(run))
		goto out;
	check_reset(now, now, 0);
	for (int s = 0; s < STEPS; s++) {
		int i = (int)rng_below(&r, NT);
		uint64_t e = now + 1 + rng_below(&r, 1000);
		switch (rng_below(&r, 4)) {
		case 0:
			if (ops->add(run.w, TIMER(i), e) != (pend[i] ? -EBUSY : 0))
				goto out;
			if (!pend[i])
				pend[i] = true, ex[i] = e;
			break;
		case 1:
			if (ops->mod(run.w, TIMER(i), e) != (pend[i] ? 1 : 0))
				goto out;
			pend[i] = true, ex[i] = e;
			break;
		case 2:
			if (ops->del(run.w, TIMER(i)) != (pend[i] ? 1 : 0))
				goto out;
			pend[i] = false;
			break;
		default: {
			uint64_t to = now + rng_below(&r, 300);
			uint64_t want = UINT64_MAX, due = 0;
			for (int j = 0; j < NT; j++) {
				if (pend[j] && ex[j] < want)
					want = ex[j];
				if (pend[j] && ex[j] <= to)
					due++, pend[j] = false;
			}
			if (ops->next_expiry(run.w) != want)
				goto out;
			check_reset(now, to, 0);
			now = to;
			if (ops->advance(run.w, to) != (long)due || g.fired != due)
				goto out;
			break;
		}
		}
		if (ops->check(run.w) || g.bad)
			goto out;
	}
	rc = 0;
out:
	run_close(ops, run);
	return rc;
}
