/*
 * test_threads - loops run from several threads at once, each with its own
 * adapter: a libuv loop, a libev loop, a libevent base and an epoll loop,
 * two threads of each. Each thread arms timers by delay and by deadline
 * (callbacks re-arm themselves a few times, with a delay of 0 too), runs
 * its loop until nothing is pending, and checks that every arm fired once,
 * never before its deadline on CLOCK_MONOTONIC, and that its host counted
 * them; then destroys its adapter and its loop. The adapters share nothing
 * but the core library (the TSan build runs this: suite tsan). Linked
 * with libevent before libev, its libev half in a file of its own
 * (threads_ev.c), as docs/event-loops.md says.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <twheel/epoll.h>
#include <twheel/event.h>
#include <twheel/uv.h>

#include "../common/xorshift64.h"

#define NT 200
#define MS UINT64_C(1000000)

#if defined(__SANITIZE_THREAD__) /* gcc */
#define TT_TSAN 1
#elif defined(__has_feature) /* clang */
#if __has_feature(thread_sanitizer)
#define TT_TSAN 1
#endif
#endif
#ifdef TT_TSAN
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/syscall.h>

/*
 * libuv closes its descriptors with syscall(SYS_close, fd) on Linux (it
 * imports syscall() and not close()), which ThreadSanitizer does not
 * intercept: to it each descriptor a libuv loop closed stays open, and
 * another thread's loop that the kernel then gives the same number
 * (epoll_create1(), pipe2()) was reported as racing with libuv's creation
 * of it, in about 1 run in 60. Under TSan this program routes that call
 * through close(), which TSan sees, and hands every other one to libc's
 * syscall(), with the six argument registers it reads.
 */
static long (*real_syscall)(long, ...);

__attribute__((constructor)) static void find_syscall(void)
{
	*(void **)&real_syscall = dlsym(RTLD_NEXT, "syscall"); /* POSIX's way to a function */
}

long syscall(long n, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_close)
		return close((int)a[0]);
	return real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * The case itself, every run: a libuv loop opened and closed on one
 * thread, then, with nothing ordering the two threads for TSan (a
 * relaxed flag), a descriptor made on another, which gets the number
 * libuv's loop had. Without the close above TSan reports a race here.
 */
#include <stdatomic.h>

static atomic_int uv_closed;

static void *uv_open_close(void *arg)
{
	uv_loop_t loop;

	(void)arg;
	if (uv_loop_init(&loop) == 0)
		uv_loop_close(&loop);
	atomic_store_explicit(&uv_closed, 1, memory_order_relaxed);
	return NULL;
}

static int fd_after_uv_close(void)
{
	pthread_t t;
	int fd;

	if (pthread_create(&t, NULL, uv_open_close, NULL) != 0)
		return 1;
	while (!atomic_load_explicit(&uv_closed, memory_order_relaxed))
		sched_yield();
	fd = epoll_create1(EPOLL_CLOEXEC);
	pthread_join(t, NULL);
	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}
#else
static int fd_after_uv_close(void)
{
	return 0;
}
#endif

struct job;

struct tt {
	struct tw_timer t;
	struct job *j;
	uint64_t deadline;
	int rearms;
};

struct job {
	int kind; /* 0 uv, 1 ev, 2 event, 3 epoll */
	struct twheel_host *h;
	struct tt tm[NT];
	uint64_t seed;
	long armed, fired, early;
	int bad;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cb(struct tw_timer *t)
{
	struct tt *x = tw_container_of(t, struct tt, t);
	struct job *j = x->j;

	j->fired++;
	if (mono_ns() < x->deadline)
		j->early++;
	if (x->rearms > 0) {
		uint64_t d = xorshift64(&j->seed) % 2 ? 0 : xorshift64(&j->seed) % (3 * MS);

		x->rearms--;
		x->deadline = mono_ns() + d;
		j->bad |= twheel_host_add(j->h, t, d) != 0;
		j->armed++;
	}
}

static void arm_all(struct job *j)
{
	for (int i = 0; i < NT; i++) {
		struct tt *x = &j->tm[i];
		uint64_t d = xorshift64(&j->seed) % (20 * MS);

		tw_timer_init(&x->t, cb);
		x->j = j;
		x->rearms = (int)(xorshift64(&j->seed) % 3);
		if (i % 2) {
			x->deadline = mono_ns() + d;
			j->bad |= twheel_host_add(j->h, &x->t, d) != 0;
		} else {
			x->deadline = twheel_host_now(j->h) + d;
			j->bad |= twheel_host_add_at(j->h, &x->t, x->deadline) != 0;
		}
		j->armed++;
	}
}

/* Nothing pending, and the host counted every callback. */
static void check_host(struct job *j)
{
	struct twheel_host_stats st;

	j->bad |= twheel_count(twheel_host_wheel(j->h)) != 0;
	j->bad |= twheel_host_get_stats(j->h, &st) != 0 || st.fired != (uint64_t)j->fired;
}

static void run_uv(struct job *j)
{
	uv_loop_t loop;

	if (uv_loop_init(&loop) != 0 || !(j->h = twheel_uv_create(&loop, NULL))) {
		j->bad = 1;
		return;
	}
	arm_all(j);
	uv_run(&loop, UV_RUN_DEFAULT);
	check_host(j);
	j->bad |= twheel_uv_destroy(j->h, NULL, NULL) != 0;
	uv_run(&loop, UV_RUN_DEFAULT); /* the close callbacks */
	j->bad |= uv_loop_close(&loop) != 0;
}

struct twheel_host *threads_ev_create(void **loop);
void threads_ev_run(void *loop);
int threads_ev_destroy(struct twheel_host *h, void *loop);

static void run_ev(struct job *j)
{
	void *loop;

	j->h = threads_ev_create(&loop);
	if (!j->h) {
		j->bad = 1;
		threads_ev_destroy(NULL, loop);
		return;
	}
	arm_all(j);
	threads_ev_run(loop);
	check_host(j);
	j->bad |= threads_ev_destroy(j->h, loop) != 0;
}

static void run_event(struct job *j)
{
	struct event_base *base = event_base_new();

	if (!base || !(j->h = twheel_event_create(base, NULL))) {
		j->bad = 1;
		return;
	}
	arm_all(j);
	j->bad |= event_base_dispatch(base) < 0;
	check_host(j);
	j->bad |= twheel_event_destroy(j->h, NULL, NULL) != 0;
	event_base_free(base);
}

static void run_epoll(struct job *j)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0 || !(j->h = twheel_epoll_create(NULL))) {
		j->bad = 1;
		return;
	}
	ev.data.ptr = j->h;
	j->bad |= epoll_ctl(ep, EPOLL_CTL_ADD, twheel_epoll_fd(j->h), &ev) != 0;
	arm_all(j);
	while (!j->bad && twheel_count(twheel_host_wheel(j->h))) {
		int n = twheel_epoll_wait(j->h, ep, &ev, 1, 1000);

		if (n == 1)
			j->bad |= twheel_epoll_dispatch(j->h) < 0;
		else
			j->bad |= n != 0 && n != -EINTR;
	}
	check_host(j);
	j->bad |= twheel_epoll_destroy(j->h, NULL, NULL) != 0;
	close(ep);
}

static void *thread_main(void *arg)
{
	struct job *j = arg;
	static void (*const run[])(struct job *) = { run_uv, run_ev, run_event, run_epoll };

	j->h = NULL;
	run[j->kind](j);
	return NULL;
}

int main(void)
{
	enum { NJOBS = 8 };
	static struct job jobs[NJOBS];
	pthread_t th[NJOBS];
	int bad = fd_after_uv_close();

	for (int i = 0; i < NJOBS; i++) {
		jobs[i].kind = i % 4;
		jobs[i].seed = 88172645463325252ull + (uint64_t)i * 7919;
		if (pthread_create(&th[i], NULL, thread_main, &jobs[i]) != 0)
			return 1;
	}
	for (int i = 0; i < NJOBS; i++) {
		struct job *j = &jobs[i];

		pthread_join(th[i], NULL);
		if (j->bad || j->early || j->fired != j->armed) {
			fprintf(stderr, "thread %d (adapter %d): bad %d, %ld early, %ld of %ld fired\n",
				i, j->kind, j->bad, j->early, j->fired, j->armed);
			bad = 1;
		}
	}
	return bad;
}
