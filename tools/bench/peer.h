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

/* The inputs of one repetition, the same for every peer. */
struct peer_input {
	uint32_t n, m;        /* timers; rearm's re-arms */
	const uint32_t *off;  /* add_cancel, add_expire: n offsets in [1, SPAN] (stream 1) */
	const uint32_t *perm; /* add_cancel: the cancel order (stream 2) */
};

/* One workload on one peer: 0 with the figure in *ns, or -1 if its check failed. */
typedef int (*peer_fn)(const struct peer_input *in, double *ns);

struct peer_case {
	peer_fn run;      /* NULL: not run (reported as skipped when note is set) */
	const char *note; /* what the figure measures; without run, why it is skipped */
	const char *fail; /* what a failed check means */
};

/* A peer's table: one entry per workload it can run. */
struct peer_ops {
	const char *name;
	struct peer_case rearm, add_cancel, add_expire;
};

/*
 * The helpers' main(): parse --n --m --reps --workload (exit 2 on a bad
 * option), then run rearm, add_cancel and add_expire (those asked for) on
 * each table in turn, and print their RESULT, FAIL, SKIP and NOTE lines.
 */
int peer_main(int argc, char **argv, const struct peer_ops *const *ops, size_t nops);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_PEER_H */
