/*
 * epoll_example.c - idle timeouts in a plain epoll loop: the adapter's
 * timerfd is one more descriptor in the set; when it is readable,
 * twheel_epoll_dispatch() runs what is due. Activity re-arms a
 * connection's timeout; silence closes it. twheel_epoll_wait() places
 * the timeouts armed by delay in each iteration from one clock reading.
 */
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <twheel/epoll.h>

#define MS 1000000ull /* delays are in nanoseconds */

struct conn {
	int id;
	int activity;         /* how many more times it will look busy */
	struct tw_timer idle; /* embedded: no allocation per timeout */
};

static struct twheel_host *timeouts;

static void on_idle(struct tw_timer *t)
{
	struct conn *c = tw_container_of(t, struct conn, idle);

	if (c->activity-- > 0) {
		twheel_host_mod(timeouts, t, 10 * MS); /* busy: 10 ms more */
		return;
	}
	printf("connection %d idle, closed\n", c->id);
}

int main(void)
{
	struct conn conns[3] = { { 1, 2, { 0 } }, { 2, 0, { 0 } }, { 3, 1, { 0 } } };
	struct epoll_event ev = { .events = EPOLLIN };
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	timeouts = twheel_epoll_create(NULL); /* 1 ms ticks, CLOCK_MONOTONIC */
	if (epfd < 0 || !timeouts)
		return 1;
	ev.data.ptr = timeouts; /* tells the loop which descriptor it is */
	epoll_ctl(epfd, EPOLL_CTL_ADD, twheel_epoll_fd(timeouts), &ev);
	for (int i = 0; i < 3; i++) {
		tw_timer_init(&conns[i].idle, on_idle);
		twheel_host_add(timeouts, &conns[i].idle, 20 * MS);
	}
	while (twheel_count(twheel_host_wheel(timeouts))) {
		struct epoll_event got[16];
		int n = twheel_epoll_wait(timeouts, epfd, got, 16, -1); /* timerfd wakes us */

		for (int i = 0; i < n; i++)
			if (got[i].data.ptr == timeouts)
				twheel_epoll_dispatch(timeouts);
			/* else: your own descriptors */
	}
	twheel_epoll_destroy(timeouts, NULL, NULL);
	close(epfd);
	return 0;
}
