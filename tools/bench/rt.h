/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt.h - the real-time benchmarks: one table of operations per
 * timer facility on a real event loop (struct rt_ops), and one driver
 * (rt.c, workloads in rt_wl.c) that runs every real-time workload over any
 * table:
 *
 *   rearm         N timers 30 s out, M re-arms of a random one to 30 s,
 *                 the loop polled once every 1,000; wall ns per re-arm
 *   add_cancel    N timers 1..65,536 ms out, each deleted in a random
 *                 order; wall ns per pair
 *   add_expire    N timers 1..65,536 ticks out, time compressed (1 tick =
 *                 100 ns, or the facility's resolution up to 1 us), run
 *                 until all fired; wall ns per timer
 *   lateness      N timers [1, span] ms out; fire - due: p50, p99, max, min
 *   idle_wakeups  one timer far away; the loop thread's wake-ups and CPU/s
 *   xthread       2 producer threads schedule N timers each onto the loop
 *   expire_cpu    N timers [1, span] ms out, run until all fired; process
 *                 CPU ns per timer, and never early where promised
 *
 * The inputs are common.h's (rearm, add_cancel, add_expire: the streams of
 * the virtual-time workloads) and splitmix64 from seed 42 for the delays of
 * the others (xthread's second producer: 43).
 *
 * How to add a table (a facility, or a way of using one): one file that
 * defines a const struct rt_ops. Its timers are numbered 0..n-1 and made
 * by create(); a timer that fires calls rt_fired(i) on the loop thread. Fill
 * in the operations it has and leave the others NULL: a workload whose
 * operations are missing (see rt_needs in rt.c) is reported as skipped,
 * with note[workload] as the reason when given. Then name the table in
 * meson.build's list for the executable whose libraries it needs (tables
 * whose libraries clash, libev's and libevent's, go in different
 * executables). A kernel-timer peer fits in one such file: one
 * IORING_OP_TIMEOUT per timer on a ring (add = a timeout SQE, del = a
 * timeout-remove, poll = reap CQEs without waiting, run = wait for CQEs
 * until stop), IORING_OP_LINK_TIMEOUT per request the same way, or one
 * timerfd per timer on epoll (add/mod = timerfd_settime, del = disarm).
 */
#ifndef BENCH_RT_H
#define BENCH_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NS_PER_MS UINT64_C(1000000)

enum rt_wl { RT_REARM, RT_ADD_CANCEL, RT_ADD_EXPIRE, RT_LATENESS, RT_IDLE, RT_XTHREAD,
	     RT_EXPIRE_CPU, RT_NWL };

struct rt_params {
	uint32_t n, m;          /* rearm, add_cancel, add_expire: timers; rearm's re-arms */
	uint32_t late_n, late_span_ms;  /* lateness: timers, deadlines in [1, span] ms */
	uint32_t idle_ms, idle_far_s;   /* idle_wakeups: window; the one timer this far */
	uint32_t x_n, x_span_ms;        /* xthread: timers per producer */
	uint32_t ae_n, ae_span_ms;      /* expire_cpu */
	uint64_t tick_ns;               /* the tick of the loops that have one */
	uint32_t reps;
};

struct rt_ops {
	const char *name;
	/* Per workload: what its figure measures here; for a workload not run, why. */
	const char *note[RT_NWL];
	unsigned only;    /* a mask of 1 << enum rt_wl: the workloads it runs (0: all it can) */
	uint64_t res_ns;  /* the finest delay it arms: 1 (ns) ... 1000000 (ms) */
	bool never_early; /* a fire before its due time fails the run */
	/* A loop and n timers; NULL (with the reason in err) if it cannot. One at a time. */
	void *(*create)(const struct rt_params *p, size_t n, char *err, size_t errlen);
	void (*destroy)(void *l);
	/* Refresh the loop's cached time (before each add of lateness and expire_cpu). */
	void (*sync)(void *l);
	/*
	 * Arm timer i, not pending, @delay_ns from now; @due_ns is the
	 * harness's reading of CLOCK_MONOTONIC plus the delay, for a table
	 * that arms by deadline. 0, or -errno.
	 */
	int (*add)(void *l, size_t i, uint64_t delay_ns, uint64_t due_ns);
	/* As add, pending or not (a re-arm). 1 if it was pending, 0 if not, or -errno. */
	int (*mod)(void *l, size_t i, uint64_t delay_ns, uint64_t due_ns);
	int (*del)(void *l, size_t i); /* 1 if it was pending, 0 if not */
	bool (*pending)(void *l, size_t i);
	void (*poll)(void *l);         /* one loop iteration without blocking */
	void (*run)(void *l);          /* until stop or wake_stop */
	void (*stop)(void *l);         /* from a callback on the loop thread */
	void (*wake_stop)(void *l);    /* from any thread */
	/* Arm timer i from another thread while the loop runs; 0 or -errno. */
	int (*schedule)(void *l, size_t i, uint64_t delay_ns);
	/*
	 * Optional, asked before each workload: NULL if the table can run
	 * workload @w (enum rt_wl) with @n timers on this machine, else why
	 * not (in @buf, or a static string): the workload is reported as
	 * skipped. For what only the run time knows (kernel features,
	 * descriptor limits, a cost that grows as N squared).
	 */
	const char *(*unable)(const struct rt_params *p, int w, uint64_t n, char *buf, size_t len);
};

/* What every table's timer callback calls, on the loop thread. */
void rt_fired(size_t i);

/* calloc(@n, @size), or exit(1) after perror: the tables' set-up cannot fail softly. */
void *rt_calloc(size_t n, size_t size);

/*
 * The hand-over of loops without a thread-safe add (libuv, libev): the
 * producers push under a mutex and wake the loop, which takes the whole
 * list. A table embeds struct rt_qent in its timer's item.
 */
struct rt_qent {
	uint64_t delay; /* in the loop's unit */
	struct rt_qent *next;
};
struct rt_queue;
struct rt_queue *rt_queue_new(void);
void rt_queue_free(struct rt_queue *q);
void rt_queue_push(struct rt_queue *q, struct rt_qent *e);
struct rt_qent *rt_queue_take(struct rt_queue *q);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_RT_H */
