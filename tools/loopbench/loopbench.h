/* SPDX-License-Identifier: MIT */
/*
 * tools/loopbench - the real-time workloads of shared/BENCHMARKS.md run on
 * event loops: twheel-uring, libuv, libev (in this process) and Netty's
 * HashedWheelTimer (a Java driver compiled at run time).
 */
#ifndef LOOPBENCH_H
#define LOOPBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>

#define NS_PER_MS 1000000ull

struct lb_params {
	size_t late_n;        /* lateness: timers */
	unsigned late_span_ms; /* ...deadlines uniform in [1, span] ms */
	double idle_s;        /* idle_wakeups: observation window */
	unsigned idle_far_s;  /* ...the one timer is due this far away */
	size_t x_n;           /* xthread: timers per producer */
	unsigned x_span_ms;
	size_t ae_n;          /* add_expire (real time) */
	unsigned ae_span_ms;
	uint64_t tick_ns;     /* twheel and Netty tick */
	int reps;
};

/* One repetition's figures: name=value pairs; ok false = failed its check. */
#define LB_MAX_METRICS 8
struct lb_result {
	bool ok;
	int n;
	const char *name[LB_MAX_METRICS];
	double val[LB_MAX_METRICS];
	char note[160];
};

static inline void lb_put(struct lb_result *r, const char *name, double v)
{
	if (r->n < LB_MAX_METRICS) {
		r->name[r->n] = name;
		r->val[r->n] = v;
		r->n++;
	}
}

/* An event loop under test: each workload function runs one repetition. */
struct lb_impl {
	const char *name;
	int (*lateness)(const struct lb_params *p, struct lb_result *r);
	int (*idle)(const struct lb_params *p, struct lb_result *r);
	int (*xthread)(const struct lb_params *p, struct lb_result *r);
	int (*add_expire)(const struct lb_params *p, struct lb_result *r);
};

extern const struct lb_impl lb_twheel, lb_libuv, lb_libev;

/*
 * The harness's own per-timer bookkeeping, kept apart from each library's
 * timer object in one array for every loop, so that all loops pay the same
 * for it (one 24-byte record touched at add and at fire).
 */
struct lb_rec {
	uint64_t due;   /* request time + delay */
	int64_t late;   /* fire time - due */
	uint32_t fired;
};

/* ---- shared helpers (loopbench.c) ---- */

uint64_t lb_now(void);              /* CLOCK_MONOTONIC ns */
uint64_t lb_cpu_process(void);      /* process CPU ns */
uint64_t splitmix64(uint64_t *s);

/* Delays in ns, integer milliseconds uniform in [1, span], seed 42; sorted
 * descending when @descending (see the lateness workload). malloc'ed. */
uint64_t *lb_delays_ms(size_t n, unsigned span_ms, uint64_t seed, bool descending);
/*
 * The check every loop's run ends with: each of the n timers fired exactly
 * once (else false, with the culprit in r->note); copies their lateness
 * into @late when it is not NULL.
 */
bool lb_check_recs(const struct lb_rec *recs, size_t n, int64_t *late, struct lb_result *r);

/* Lateness figures from fire - due (ns, signed) for n timers. */
void lb_lateness_stats(int64_t *late, size_t n, struct lb_result *r);

/* Voluntary context switches of thread @tid (a sleep = one switch). */
long lb_thread_vcsw(pid_t tid);

/*
 * The idle controller: call lb_idle_begin() on the loop thread just before
 * it enters its loop; a helper thread waits 100 ms, samples the loop
 * thread's context switches and CPU time, sleeps idle_s, samples again,
 * stores the figures in @r and calls @stop(@arg) (which must be
 * thread-safe for the loop). lb_idle_end() joins it.
 */
struct lb_idle {
	const struct lb_params *p;
	struct lb_result *r;
	void (*stop)(void *arg);
	void *arg;
	pid_t tid;
	clockid_t cpu;
	pthread_t th;
};
void lb_idle_begin(struct lb_idle *c);
void lb_idle_end(struct lb_idle *c);

#endif
