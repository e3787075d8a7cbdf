/* SPDX-License-Identifier: MIT */
/*
 * tools/loopbench/loopbench.h - the table of operations every event loop
 * under test provides (ops_twheel.c, ops_uv.c, ops_ev.c); the driver,
 * loopbench.c, runs the real-time workloads over it (Netty's
 * HashedWheelTimer runs the same workloads in LoopBenchNetty.java).
 */
#ifndef LOOPBENCH_H
#define LOOPBENCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * An event loop under test, with timers numbered 0..n-1; a timer that fires
 * calls lb_fired(i) on the loop thread. One loop exists at a time.
 */
struct lb_ops {
	const char *name;
	/* A loop and n timers; NULL (with the reason in err) if it cannot. */
	void *(*create)(const struct lb_params *p, size_t n, char *err, size_t errlen);
	/*
	 * Arm timer i @delay_ns from now, on the loop thread before run.
	 * @due_ns is the harness's request time (CLOCK_MONOTONIC, read just
	 * before the call) plus the delay: a loop whose API takes a deadline
	 * may arm at it instead of reading a clock itself.
	 */
	void (*add)(void *l, size_t i, uint64_t delay_ns, uint64_t due_ns);
	/* Arm timer i from another thread while the loop runs; 0 or -errno. */
	int (*schedule)(void *l, size_t i, uint64_t delay_ns);
	void (*run)(void *l);       /* until stop or wake_stop */
	void (*stop)(void *l);      /* from a callback on the loop thread */
	void (*wake_stop)(void *l); /* from any thread */
	void (*destroy)(void *l);
	/* add_expire: a timer that fires early fails the check (else early_pct is reported) */
	bool never_early;
};

extern const struct lb_ops lb_twheel, lb_twheel_at, lb_libuv, lb_libev;

/* What every loop's timer callback calls. */
void lb_fired(size_t i);

/*
 * The idiomatic hand-over for loops without a thread-safe add (libuv,
 * libev): producers append under a mutex and wake the loop, which takes
 * the whole list. Embed a struct lb_qent in the timer's item.
 */
struct lb_qent {
	uint64_t delay; /* in the loop's unit */
	struct lb_qent *next;
};

struct lb_queue {
	pthread_mutex_t mu;
	struct lb_qent *head, **tail;
};

/* calloc(@n, @size), or exit(1) after perror("calloc"): the tables' set-up cannot fail softly. */
void *lb_calloc(size_t n, size_t size);

void lb_queue_init(struct lb_queue *q);
void lb_queue_push(struct lb_queue *q, struct lb_qent *e);
struct lb_qent *lb_queue_take(struct lb_queue *q);

#endif
