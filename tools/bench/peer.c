/* SPDX-License-Identifier: MIT */
/* tools/bench/peer.c - see peer.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

void peer_parse(int argc, char **argv, struct peer_args *a)
{
	a->n = BENCH_N;
	a->m = BENCH_M;
	a->reps = 5;
	snprintf(a->workloads, sizeof(a->workloads), "rearm,add_cancel,add_expire");
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (v && !strcmp(argv[i], "--n"))
			a->n = (uint32_t)strtod(v, NULL), i++;
		else if (v && !strcmp(argv[i], "--m"))
			a->m = (uint32_t)strtod(v, NULL), i++;
		else if (v && !strcmp(argv[i], "--reps"))
			a->reps = (uint32_t)strtod(v, NULL), i++;
		else if (v && !strcmp(argv[i], "--workload"))
			snprintf(a->workloads, sizeof(a->workloads), "%s", v), i++;
		else {
			fprintf(stderr, "usage: %s [--n N] [--m M] [--reps R] [--workload LIST]\n", argv[0]);
			exit(2);
		}
	}
	if (!a->n || !a->reps || a->reps > 64 || a->m < BENCH_REARM_BLOCK) {
		fprintf(stderr, "%s: bad sizes\n", argv[0]);
		exit(2);
	}
}

bool peer_want(const struct peer_args *a, const char *workload)
{
	char buf[300], key[64];
	snprintf(buf, sizeof(buf), ",%s,", a->workloads);
	snprintf(key, sizeof(key), ",%s,", workload);
	return strstr(buf, key) != NULL;
}

uint32_t *peer_offsets(uint32_t n)
{
	uint32_t *o = malloc((size_t)n * sizeof(*o));
	if (!o)
		abort();
	struct rng r = rng_seed(1);
	for (uint32_t i = 0; i < n; i++)
		o[i] = 1 + rng_below(&r, BENCH_SPAN);
	return o;
}

uint32_t *peer_perm(uint32_t n)
{
	uint32_t *p = malloc((size_t)n * sizeof(*p));
	if (!p)
		abort();
	struct rng r = rng_seed(2);
	for (uint32_t i = 0; i < n; i++)
		p[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = rng_below(&r, i);
		uint32_t x = p[i - 1];
		p[i - 1] = p[j];
		p[j] = x;
	}
	return p;
}

void peer_result(const char *workload, const char *impl, uint32_t n, const char *unit,
		 const double *v, int nv)
{
	printf("RESULT %s %s %u %s", workload, impl, n, unit);
	for (int i = 0; i < nv; i++)
		printf(" %.4f", v[i]);
	printf("\n");
	fflush(stdout);
}

static void line(const char *kind, const char *workload, const char *impl, const char *fmt,
		 va_list ap)
{
	printf("%s %s %s ", kind, workload, impl);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

void peer_fail(const char *workload, const char *impl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line("FAIL", workload, impl, fmt, ap);
	va_end(ap);
}

void peer_skip(const char *workload, const char *impl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line("SKIP", workload, impl, fmt, ap);
	va_end(ap);
}

void peer_note(const char *workload, const char *impl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	line("NOTE", workload, impl, fmt, ap);
	va_end(ap);
}
