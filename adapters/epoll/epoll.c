/* SPDX-License-Identifier: MIT */
/*
 * adapters/epoll/epoll.c - one timerfd drives a wheel (see <twheel/epoll.h>).
 * A zero it_value disarms a timerfd, so "now" is armed as 1 ns (absolute:
 * long past, so the fd becomes readable at once).
 *
 * Arms by delay: the loop owns its wait, so the adapter cannot hook it; a
 * loop that waits through twheel_epoll_wait() lets it place the delays
 * parked since the last wait (twheel_host_place()) right before
 * epoll_wait(), from one clock reading taken after them all: one reading
 * per iteration instead of one per arm. Its first call turns
 * twheel_host_defer() on, and the loop then promises to wait only through
 * it; a loop that never calls it keeps the per-arm bound.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "adapter.h"
#include "twheel/epoll.h"

struct twheel_epoll {
	struct twheel_host h; /* first: a host pointer is an adapter pointer */
	int fd;
	bool defer;   /* twheel_epoll_wait() turned twheel_host_defer() on */
	bool closing; /* in destroy: the timerfd is left as it is */
	bool gone;    /* the program closed the timerfd (EBADF): not ours to close */
};

/*
 * A call on the timerfd failed: closed under the adapter (EBADF), or its
 * number reused for a descriptor that is not a timerfd (EINVAL). No timer
 * can fire any more: the host refuses every later arm
 * (twheel_host_lost()), and destroy does not close a number that may be
 * someone else's by then.
 */
static void fd_lost(struct twheel_epoll *e)
{
	e->gone = true;
	twheel_host_lost(&e->h);
}

static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	struct twheel_epoll *e = (struct twheel_epoll *)h;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int flags = 0;
	uint64_t v;

	if (twheel_host_rt(h)->clock == twheel_rt_clock_monotonic) {
		flags = TFD_TIMER_ABSTIME;
		v = wake;
	} else {
		v = wake - now;
	}
	if (!v)
		v = 1;
	its.it_value.tv_sec = (time_t)(v / 1000000000u);
	its.it_value.tv_nsec = (long)(v % 1000000000u);
	/* Cannot fail on a valid timerfd with a normalised value. */
	if (timerfd_settime(e->fd, flags, &its, NULL) != 0)
		fd_lost(e);
}

/*
 * Disarm the timerfd, but not in destroy: closing it is enough, and a
 * process forked since holds the same timerfd (its host's timer, or ours
 * if destroy runs in the child): disarming it would lose their wake-up.
 */
static void host_stop(struct twheel_host *h)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	struct twheel_epoll *e = (struct twheel_epoll *)h;

	if (!e->closing && timerfd_settime(e->fd, 0, &its, NULL) != 0)
		fd_lost(e);
}

static const struct twheel_host_ops epoll_ops = { host_arm, host_stop };

struct twheel_host *twheel_epoll_create(const struct twheel_rt *rt)
{
	struct twheel_epoll *e = calloc(1, sizeof(*e));
	int rc;

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	e->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (e->fd < 0) {
		rc = errno;
		free(e);
		errno = rc;
		return NULL;
	}
	rc = twheel_host_init(&e->h, rt, &epoll_ops);
	if (rc) {
		close(e->fd);
		free(e);
		errno = -rc;
		return NULL;
	}
	return &e->h;
}

int twheel_epoll_fd(const struct twheel_host *h)
{
	if (twheel_host_get_ops(h) != &epoll_ops)
		return -EINVAL;
	if (((const struct twheel_epoll *)h)->gone)
		return -ESHUTDOWN; /* the number may be another descriptor's */
	return ((const struct twheel_epoll *)h)->fd;
}

long twheel_epoll_dispatch(struct twheel_host *h)
{
	uint64_t expirations;
	ssize_t n;
	long rc;

	if (twheel_host_get_ops(h) != &epoll_ops)
		return -EINVAL;
	if (((struct twheel_epoll *)h)->gone)
		return -ESHUTDOWN; /* no read: the number may be another descriptor's */
	n = read(((struct twheel_epoll *)h)->fd, &expirations, sizeof(expirations));
	if (n < 0 && errno != EAGAIN) {
		rc = -errno;
		if (rc == -EBADF && twheel_host_wheel(h))
			fd_lost((struct twheel_epoll *)h);
		return rc;
	}
	rc = twheel_host_run(h);
	/*
	 * EAGAIN: it was not readable, so the timerfd may still be armed. The
	 * run re-armed it if timers are left; if none is, the host counts it
	 * stopped: disarm it, or an idle wheel's fd would become readable.
	 */
	if (n < 0 && rc >= 0 && !twheel_count(twheel_host_wheel(h)))
		host_stop(h);
	return rc;
}

int twheel_epoll_wait(struct twheel_host *h, int epfd, struct epoll_event *events, int maxevents,
		      int timeout_ms)
{
	struct twheel_epoll *e = (struct twheel_epoll *)h;
	long placed;
	int n;

	if (twheel_host_get_ops(h) != &epoll_ops || !events || maxevents <= 0)
		return -EINVAL;
	if (!e->defer) {
		int rc = twheel_host_defer(h, true);

		if (rc)
			return rc;
		e->defer = true;
	}
	placed = twheel_host_place(h);
	if (placed < 0)
		return (int)placed;
	n = epoll_wait(epfd, events, maxevents, timeout_ms);
	return n < 0 ? -errno : n;
}

int twheel_epoll_destroy(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg),
			 void *arg)
{
	struct twheel_epoll *e = (struct twheel_epoll *)h;
	bool was_closing;
	int rc;

	if (twheel_host_get_ops(h) != &epoll_ops)
		return -EINVAL;
	/* a call from @fn of a destroy under way is refused (-EBUSY), and
	 * must leave that destroy's mark as it was */
	was_closing = e->closing;
	e->closing = true;
	rc = twheel__adapter_fini(h, &epoll_ops, fn, arg);
	if (rc) {
		e->closing = was_closing;
		return rc;
	}
	if (!e->gone)
		close(e->fd);
	free(e);
	return 0;
}
