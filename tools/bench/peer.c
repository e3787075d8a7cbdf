/* SPDX-License-Identifier: MIT */
/* tools/bench/peer.c - the peer helpers' driver; see peer.h. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

struct peer_args {
	uint32_t n, m, reps;
	char workloads[256];
};

static void parse(int argc, char **argv, struct peer_args *a)
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

static bool want(const struct peer_args *a, const char *workload)
{
	char buf[300], key[64];
	snprintf(buf, sizeof(buf), ",%s,", a->workloads);
	snprintf(key, sizeof(key), ",%s,", workload);
	return strstr(buf, key) != NULL;
}

/* n offsets uniform in [1, SPAN] (stream 1, as add_expire/add_cancel). */
static uint32_t *offsets(uint32_t n)
{
	uint32_t *o = malloc((size_t)n * sizeof(*o));
	if (!o)
		abort();
	struct rng r = rng_seed(1);
	for (uint32_t i = 0; i < n; i++)
		o[i] = 1 + rng_below(&r, BENCH_SPAN);
	return o;
}

/* A random permutation of 0..n-1 (stream 2, as add_cancel). */
static uint32_t *permutation(uint32_t n)
{
	uint32_t *p = malloc((size_t)n * sizeof(*p));
	if (!p)
		abort();
	rng_permutation(p, n, 2);
	return p;
}

/* Run @c's reps and print RESULT + NOTE, FAIL, or SKIP. */
static void run_case(const char *workload, const char *impl, const struct peer_case *c,
		     const struct peer_input *in, uint32_t reps)
{
	double v[64];
	if (!c->run) {
		if (c->note)
			printf("SKIP %s %s %s\n", workload, impl, c->note);
		return;
	}
	for (uint32_t i = 0; i < reps; i++) {
		if (c->run(in, &v[i])) {
			printf("FAIL %s %s %s\n", workload, impl, c->fail);
			fflush(stdout);
			return;
		}
	}
	printf("RESULT %s %s %u ns/op", workload, impl, in->n);
	for (uint32_t i = 0; i < reps; i++)
		printf(" %.4f", v[i]);
	printf("\nNOTE %s %s %s\n", workload, impl, c->note);
	fflush(stdout);
}

int peer_main(int argc, char **argv, const struct peer_ops *const *ops, size_t nops)
{
	struct peer_args a;
	parse(argc, argv, &a);
	struct peer_input in = { .n = a.n, .m = a.m };
	if (want(&a, "rearm"))
		for (size_t k = 0; k < nops; k++)
			run_case("rearm", ops[k]->name, &ops[k]->rearm, &in, a.reps);
	if (want(&a, "add_cancel")) {
		uint32_t *off = offsets(a.n), *perm = permutation(a.n);
		in.off = off;
		in.perm = perm;
		for (size_t k = 0; k < nops; k++)
			run_case("add_cancel", ops[k]->name, &ops[k]->add_cancel, &in, a.reps);
		free(off);
		free(perm);
		in.perm = NULL;
	}
	if (want(&a, "add_expire")) {
		uint32_t *off = offsets(a.n);
		in.off = off;
		for (size_t k = 0; k < nops; k++)
			run_case("add_expire", ops[k]->name, &ops[k]->add_expire, &in, a.reps);
		free(off);
	}
	return 0;
}
