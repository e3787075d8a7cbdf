/* SPDX-License-Identifier: MIT */
/*
 * run_delay.h - lateness that is the timer code's, not the scheduler's.
 * Header-only; shared by the tests that bound how late a timer fires on
 * the real clock (tests/loop, tests/adapters, tests/demo).
 *
 * A timer fires late for two reasons: the code under test (its tick, its
 * wait, its own work), which the test bounds, and the scheduler: the thread
 * was woken at its deadline but waited for a CPU (on a loaded 2-core CI
 * machine, tens to hundreds of milliseconds now and then). The kernel counts
 * the second per thread: the second field of /proc/thread-self/schedstat,
 * the nanoseconds the thread spent runnable on a run queue (run_delay).
 *
 * A run_delay_log is a list of (clock, run_delay) samples of one thread, in
 * time order, taken where the thread may be about to wait (before each
 * loop iteration; at each arm and each fire where the loop is a host
 * library's). For a timer that fired at @at on that thread, with the
 * thread's run_delay @rd_at read just after: own lateness =
 * (@at - deadline) minus the run queue time since the last sample taken at
 * or before the deadline. The samples read run_delay first, the fired timer
 * last, so a preemption between two readings is counted as the scheduler's
 * (never as the code's): the bound can fail only on lateness the thread had
 * the CPU for.
 */
#ifndef TWHEEL_TESTS_RUN_DELAY_H
#define TWHEEL_TESTS_RUN_DELAY_H

#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* The run queue time so far (ns) of the thread whose schedstat file is
 * @path, or 0 where the kernel does not say (no CONFIG_SCHED_INFO, or no
 * such thread): then nothing is subtracted. */
static inline uint64_t run_delay_of(const char *path)
{
	char buf[96];
	unsigned long long run = 0, delay = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
		return 0;
	return delay;
}

/* The calling thread's run queue time so far (ns). */
static inline uint64_t thread_run_delay(void)
{
	return run_delay_of("/proc/thread-self/schedstat");
}

/* The run queue time so far (ns) of process @pid's main thread (another
 * process's loop: a server under test). */
static inline uint64_t pid_run_delay(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/schedstat", (long)pid);
	return run_delay_of(path);
}

static inline uint64_t run_delay_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define RUN_DELAY_SAMPLES 4096

struct run_delay_log {
	uint64_t at[RUN_DELAY_SAMPLES], rd[RUN_DELAY_SAMPLES];
	int n;
	int dropped; /* samples past the end (the test checks it is 0) */
};

/* A sample: the clock @at and the run_delay @rd read before it, later
 * than every sample before. */
static inline void run_delay_add(struct run_delay_log *g, uint64_t at, uint64_t rd)
{
	if (g->n == RUN_DELAY_SAMPLES) {
		g->dropped++;
		return;
	}
	g->at[g->n] = at;
	g->rd[g->n] = rd;
	g->n++;
}

/* A sample now: run_delay first, then the clock. */
static inline void run_delay_mark(struct run_delay_log *g)
{
	uint64_t rd = thread_run_delay();

	run_delay_add(g, run_delay_clock(), rd);
}

/* The run queue time of the thread from the last sample at or before
 * @deadline (the first sample if none) to @rd_at, its run_delay read after
 * the timer fired. */
static inline uint64_t run_delay_since(const struct run_delay_log *g, uint64_t deadline,
				       uint64_t rd_at)
{
	int lo = 0, hi = g->n; /* the last sample with at <= deadline: lo - 1 */

	if (!g->n)
		return 0;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (g->at[mid] <= deadline)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo = lo ? lo - 1 : 0;
	return rd_at > g->rd[lo] ? rd_at - g->rd[lo] : 0;
}

/* Lateness of a timer due at @deadline that fired at @at (its thread's
 * run_delay @rd_at read just after), less the scheduler's part. */
static inline uint64_t run_delay_own_late(const struct run_delay_log *g, uint64_t deadline,
					  uint64_t at, uint64_t rd_at)
{
	uint64_t late = at - deadline, sched = run_delay_since(g, deadline, rd_at);

	return late > sched ? late - sched : 0;
}

#endif
