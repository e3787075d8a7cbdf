/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/peer.h - what the peer helpers (bench-peer-*) share: their
 * command line, the same seeded inputs as the in-process workloads, and the
 * line protocol that bench reads (RESULT/FAIL/SKIP/NOTE, see bench.c).
 *
 * Peers run on real event loops with real clocks, so their figures are the
 * cost of the operations on the calling thread (wall time around the same
 * loop as the virtual-time workload); each helper says precisely what in a
 * NOTE line.
 */
#ifndef BENCH_PEER_H
#define BENCH_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct peer_args {
	uint32_t n, m, reps;
	char workloads[256];
};

/* Parse --n --m --reps --workload; exits with status 2 on a bad option. */
void peer_parse(int argc, char **argv, struct peer_args *a);
bool peer_want(const struct peer_args *a, const char *workload);

/* n offsets uniform in [1, SPAN] (stream 1, as add_expire/add_cancel); malloc'd. */
uint32_t *peer_offsets(uint32_t n);
/* A random permutation of 0..n-1 (stream 2, as add_cancel); malloc'd. */
uint32_t *peer_perm(uint32_t n);

void peer_result(const char *workload, const char *impl, uint32_t n, const char *unit,
		 const double *v, int nv);
void peer_fail(const char *workload, const char *impl, const char *fmt, ...);
void peer_skip(const char *workload, const char *impl, const char *fmt, ...);
void peer_note(const char *workload, const char *impl, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_PEER_H */
