/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/common.h - what every benchmark program of tools/bench shares:
 * the seeded PRNG (splitmix64 to seed, xorshift64* to draw, seed 42), the
 * clocks read outside timed regions, the workload sizes and the lists of
 * names on command lines. demo/demo_common.h holds a copy of the PRNG for
 * the load generator.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_SEED 42

/* The standard sizes of the workloads (workload.c); --quick scales them down. */
#define BENCH_N 1000000u          /* add_expire, add_cancel, long_range, rearm's C */
#define BENCH_M 10000000u         /* rearm's re-arms */
#define BENCH_SPAN 65536u         /* add_expire / add_cancel expiries: [now+1, now+SPAN] */
#define BENCH_REARM_DELTA 30000u  /* rearm: every timer sits at now + 30,000 */
#define BENCH_REARM_BLOCK 1000u   /* rearm: advance one tick after this many re-arms */
#define BENCH_LONG_BITS 40        /* long_range: log-uniform in [1, 2^40] */
#define BENCH_IDLE_TICKS (UINT64_C(1) << 32)
/*
 * The virtual clock starts here, not at 0, so that no implementation gets a
 * wheel whose slots happen to line up with time 0.
 */
#define BENCH_START UINT64_C(1000000007)

static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* xorshift64* state; seed it with rng_seed() (never 0). */
struct rng {
	uint64_t s;
};

/* Seed stream @stream (0, 1, ...) from @seed through splitmix64. */
static inline struct rng rng_seed_from(uint64_t seed, uint64_t stream)
{
	uint64_t x = seed + stream * UINT64_C(0x632BE59BD9B4E019);
	struct rng r = { splitmix64(&x) };
	if (!r.s)
		r.s = 1;
	return r;
}

/* Seed stream @stream (0, 1, ...) from BENCH_SEED. */
static inline struct rng rng_seed(uint64_t stream)
{
	return rng_seed_from(BENCH_SEED, stream);
}

static inline uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * UINT64_C(0x2545F4914F6CDD1D);
}

/* Uniform in [0, n), by multiply-high (Lemire, without rejection: bias < 2^-32). */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform double in [0, 1). */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Log-uniform delta in [1, 2^bits]. */
static inline uint64_t rng_log_uniform(struct rng *r, int bits)
{
	double d = exp2(rng_unit(r) * bits);
	uint64_t v = (uint64_t)d;
	return v ? v : 1;
}

/* p[0..n-1] = a random permutation of 0..n-1 from stream @stream (Fisher-Yates). */
static inline void rng_permutation(uint32_t *p, uint32_t n, uint64_t stream)
{
	struct rng r = rng_seed(stream);
	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = rng_below(&r, i);
		uint32_t x = p[i - 1];
		p[i - 1] = p[j];
		p[j] = x;
	}
}

static inline uint64_t clock_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_ns(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

/* Thread CPU time, for loops that run other threads. */
static inline uint64_t thread_cpu_ns(void)
{
	return clock_of(CLOCK_THREAD_CPUTIME_ID);
}

/* Is @name one of the comma-separated names of @list? */
static inline bool bench_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *s = list; (s = strstr(s, name)); s += n)
		if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))
			return true;
	return false;
}

/*
 * The first name of the comma-separated @list that is neither in @known
 * (NULL-terminated) nor @extra, in a static buffer; NULL if there is none.
 */
static inline const char *bench_unknown(const char *list, const char *const *known, const char *extra)
{
	static char name[64];
	for (const char *s = list; *s;) {
		size_t n = strcspn(s, ",");
		bool ok = n == strlen(extra) && !strncmp(s, extra, n);
		for (size_t k = 0; known[k] && !ok; k++)
			ok = n == strlen(known[k]) && !strncmp(s, known[k], n);
		if (!ok) {
			snprintf(name, sizeof(name), "%.*s", (int)n, s);
			return name;
		}
		s += n + (s[n] == ',');
	}
	return NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* BENCH_COMMON_H */
