/* SPDX-License-Identifier: MIT */
/* tools/bench/rt_epoll.c - the epoll adapter (<twheel/epoll.h>) on a bare epoll loop; see rt_host.h. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <twheel/epoll.h>

#include "rt_host.h"

static int epfd;
static bool stopping;
static struct twheel_host *host;

static struct twheel_host *host_open(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct twheel_host *h = host = twheel_epoll_create(NULL);
	epfd = epoll_create1(0);
	ev.data.ptr = h;
	if (h) {
		epoll_ctl(epfd, EPOLL_CTL_ADD, twheel_epoll_fd(h), &ev);
		/* a loop that waits through twheel_epoll_wait() from the start */
		twheel_epoll_wait(h, epfd, &ev, 1, 0);
	}
	return h;
}

/* One wait, for up to @timeout_ms (placing first: twheel_epoll_wait()), and the dispatch. */
static void host_wait(int timeout_ms)
{
	struct epoll_event ev;
	if (twheel_epoll_wait(host, epfd, &ev, 1, timeout_ms) == 1)
		twheel_epoll_dispatch(ev.data.ptr);
}

static void host_pump(void) { host_wait(0); }
static void host_stop(void) { stopping = true; }

static void host_run(void)
{
	for (stopping = false; !stopping;)
		host_wait(-1);
}

static void host_close(struct twheel_host *h)
{
	twheel_epoll_destroy(h, NULL, NULL);
	close(epfd);
}

RT_HOST_TABLES(rt_twheel_epoll, "twheel-epoll");
