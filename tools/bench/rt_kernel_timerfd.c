/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_kernel_timerfd.c - "timerfd": one timerfd per timer
 * (CLOCK_MONOTONIC, relative) on one epoll instance, the other way to let
 * the kernel keep the timers (rt.h). add and mod = timerfd_settime, del =
 * timerfd_settime with a zero value (disarms and clears the count), a fire =
 * an epoll event and a read of the count. A timer re-armed after it expired
 * but before its event was taken reads nothing (EAGAIN) and does not fire.
 *
 * Every timer is a descriptor: runs needing more timers than RLIMIT_NOFILE
 * allows (raised to its hard limit, less a reserve for the process's own)
 * are declined by unable().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "rt.h"

#define TF_RESERVE 64   /* descriptors left to the process: stdio, the driver's files */
#define TF_EVENTS 1024
#define TF_WAKE UINT64_MAX

struct tf {
	int ep, efd;
	bool stop;
	size_t n;
	int *fd;
	uint8_t *pend;
};

static void tf_die(const char *what)
{
	perror(what);
	exit(1);
}

/* The most timers this process may have: RLIMIT_NOFILE, raised to the hard limit, less a reserve. */
static uint64_t tf_max(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl); /* best effort */
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur > TF_RESERVE ? rl.rlim_cur - TF_RESERVE : 0;
}

static void tf_destroy(void *p)
{
	struct tf *l = p;
	for (size_t i = 0; i < l->n; i++)
		if (l->fd[i] >= 0)
			close(l->fd[i]);
	if (l->efd >= 0)
		close(l->efd);
	if (l->ep >= 0)
		close(l->ep);
	free(l->fd);
	free(l->pend);
	free(l);
}

/* 0, or -1 with errno set: fd registered on epoll with @data. */
static int tf_watch(struct tf *l, int fd, uint64_t data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };
	return epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev);
}

static void *tf_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	struct tf *l = rt_calloc(1, sizeof(*l));
	(void)p;
	l->fd = rt_calloc(n, sizeof(*l->fd));
	l->pend = rt_calloc(n, sizeof(*l->pend));
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->n = n;
	for (size_t i = 0; i < n; i++)
		l->fd[i] = -1;
	bool ok = l->ep >= 0 && l->efd >= 0 && !tf_watch(l, l->efd, TF_WAKE);
	for (size_t i = 0; i < n && ok; i++) {
		l->fd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		ok = l->fd[i] >= 0 && !tf_watch(l, l->fd[i], i);
	}
	if (!ok) {
		snprintf(err, errlen, "timerfd, eventfd or epoll: %s", strerror(errno));
		tf_destroy(l);
		return NULL;
	}
	return l;
}

static int tf_set(struct tf *l, size_t i, uint64_t d)
{
	struct itimerspec its = { .it_value = { .tv_sec = (time_t)(d / 1000000000u),
						 .tv_nsec = (long)(d % 1000000000u) } };
	int was = l->pend[i];
	if (timerfd_settime(l->fd[i], 0, &its, NULL))
		return -errno;
	l->pend[i] = d != 0;
	return was;
}

static int tf_add(void *p, size_t i, uint64_t d, uint64_t due)
{
	(void)due;
	int r = tf_set(p, i, d ? d : 1); /* a zero value would disarm */
	return r < 0 ? r : 0;
}

static int tf_mod(void *p, size_t i, uint64_t d, uint64_t due)
{
	(void)due;
	return tf_set(p, i, d ? d : 1);
}

static int tf_del(void *p, size_t i) { return tf_set(p, i, 0); }
static bool tf_pending(void *p, size_t i) { return ((struct tf *)p)->pend[i]; }
static void tf_stop(void *p) { ((struct tf *)p)->stop = true; }

static void tf_wake_stop(void *p)
{
	uint64_t one = 1;
	if (write(((struct tf *)p)->efd, &one, sizeof(one)) != sizeof(one))
		tf_die("eventfd write");
}

/* One epoll_wait (@timeout ms) and its events: a read of each ready timer's count. */
static void tf_wait(struct tf *l, int timeout)
{
	struct epoll_event ev[TF_EVENTS];
	uint64_t cnt;
	int k = epoll_wait(l->ep, ev, TF_EVENTS, timeout);
	if (k < 0 && errno != EINTR)
		tf_die("epoll_wait");
	for (int j = 0; j < k; j++) {
		uint64_t i = ev[j].data.u64;
		if (i == TF_WAKE) {
			if (read(l->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
				tf_die("eventfd read");
			l->stop = true;
		} else if (read(l->fd[i], &cnt, sizeof(cnt)) == sizeof(cnt)) {
			l->pend[i] = 0;
			rt_fired((size_t)i);
		} else if (errno != EAGAIN) { /* EAGAIN: re-armed or disarmed since it expired */
			tf_die("timerfd read");
		}
	}
}

static void tf_poll(void *p) { tf_wait(p, 0); }

static void tf_run(void *p)
{
	struct tf *l = p;
	l->stop = false;
	while (!l->stop)
		tf_wait(l, -1);
}

static const char *tf_unable(const struct rt_params *p, int w, uint64_t n, char *buf, size_t len)
{
	uint64_t max = tf_max();
	(void)p, (void)w;
	if (n <= max)
		return NULL;
	snprintf(buf, len, "one descriptor per timer: %llu timers, but RLIMIT_NOFILE allows %llu "
		 "(its hard limit, less %d for the process)", (unsigned long long)n,
		 (unsigned long long)max, TF_RESERVE);
	return buf;
}

const struct rt_ops rt_kernel_timerfd = {
	.name = "timerfd",
	.note = { [RT_REARM] = "timerfd_settime(30 s, relative) of a pending timerfd, one syscall per "
			       "re-arm; epoll_wait(0) every 1,000; wall ns per re-arm",
		  [RT_ADD_CANCEL] = "timerfd_settime, then timerfd_settime(0) in random order: two "
				    "syscalls per pair; wall ns per pair",
		  [RT_XTHREAD] = "timerfd_settime is thread-safe, but the table keeps its pending flags "
				 "on the loop thread; not measured" },
	.res_ns = 1, .never_early = true,
	.create = tf_create, .destroy = tf_destroy, .add = tf_add, .mod = tf_mod, .del = tf_del,
	.pending = tf_pending, .poll = tf_poll, .run = tf_run, .stop = tf_stop, .wake_stop = tf_wake_stop,
	.unable = tf_unable,
};
