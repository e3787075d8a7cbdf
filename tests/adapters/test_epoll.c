/*
 * test_epoll - the adapter suite (suite.h) on a plain epoll loop watching
 * the adapter's timerfd, waiting with epoll_wait() (one bound per arm by
 * delay) and again with twheel_epoll_wait() (placed once per iteration),
 * plus its own arguments and its fd being silent while the wheel is empty
 * (also after a dispatch when it was not readable).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twheel/epoll.h>

#include "suite.h"

static int epfd = -1;
static struct twheel_host *cur;
static int wrapped; /* wait with twheel_epoll_wait() */

#define MAXSOON 8
static struct {
	void (*fn)(void *arg);
	void *arg;
} soon[MAXSOON];
static int nsoon;

static void ep_setup(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(epfd >= 0);
	nsoon = 0;
}

static void ep_teardown(void)
{
	assert_int_equal(nsoon, 0);
	close(epfd);
}

static struct twheel_host *ep_create(const struct twheel_rt *rt)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct twheel_host *h = twheel_epoll_create(rt);

	if (h) {
		ev.data.ptr = h;
		assert_int_equal(epoll_ctl(epfd, EPOLL_CTL_ADD, twheel_epoll_fd(h), &ev), 0);
		/* a loop already running: its handlers' arms are parked */
		if (wrapped)
			assert_int_equal(twheel_epoll_wait(h, epfd, &ev, 1, 0), 0);
	}
	cur = h;
	return h;
}

static int ep_destroy(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg), void *arg)
{
	int rc = twheel_epoll_destroy(h, fn, arg);

	if (rc == 0)
		cur = NULL;
	return rc;
}

/* The timerfd is armed, or has expired and not been read. */
static int fd_busy(void)
{
	struct itimerspec its;
	struct epoll_event ev;

	if (!cur)
		return 0;
	timerfd_gettime(twheel_epoll_fd(cur), &its);
	if (its.it_value.tv_sec || its.it_value.tv_nsec)
		return 1;
	return epoll_wait(epfd, &ev, 1, 0) > 0;
}

/* One iteration: run queued handlers, else wait up to @ms (-1: forever). */
static void ep_once(int ms)
{
	struct epoll_event ev[4];
	int n;

	if (nsoon) {
		int k = nsoon;

		nsoon = 0;
		for (int i = 0; i < k; i++)
			soon[i].fn(soon[i].arg);
		return;
	}
	if (wrapped && cur)
		n = twheel_epoll_wait(cur, epfd, ev, 4, ms);
	else
		n = epoll_wait(epfd, ev, 4, ms);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++)
		assert_true(twheel_epoll_dispatch(ev[i].data.ptr) >= 0);
}

static void ep_run(void)
{
	while (nsoon || fd_busy())
		ep_once(-1);
}

static void ep_run_for(unsigned ms)
{
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000u;

	for (uint64_t now; (now = mono_ns()) < end;)
		ep_once((int)((end - now + 999999) / 1000000));
}

static void ep_call_soon(void (*fn)(void *arg), void *arg)
{
	assert_true(nsoon < MAXSOON);
	soon[nsoon].fn = fn;
	soon[nsoon].arg = arg;
	nsoon++;
}

static const struct host_loop ep_host = {
	"epoll", ep_setup, ep_teardown, ep_create, ep_destroy, ep_run, ep_run_for, ep_call_soon,
	NULL, false,
};
static const struct host_loop ep_wait_host = {
	"epoll, twheel_epoll_wait()", ep_setup, ep_teardown, ep_create, ep_destroy, ep_run,
	ep_run_for, ep_call_soon, NULL, true,
};

/*
 * twheel_epoll_dispatch() when the fd was not readable (an injected clock
 * that runs ahead of the timerfd): the run empties the wheel, and the
 * timerfd must be left disarmed, not armed and readable later. 0 if so.
 */
static uint64_t spur_ns = UINT64_C(1000000000);
static int spur_fired;

static uint64_t spur_clock(void *arg)
{
	(void)arg;
	return spur_ns;
}

static void spur_cb(struct tw_timer *t)
{
	(void)t;
	spur_fired++;
}

static int dispatch_when_not_readable_leaves_idle_fd_silent(void)
{
	struct twheel_rt rt;
	struct twheel_host *h;
	struct tw_timer a;
	struct itimerspec its;
	struct pollfd p;
	int bad = 0;

	twheel_rt_init(&rt, 0, spur_clock, NULL);
	h = twheel_epoll_create(&rt);
	if (!h)
		return 1;
	tw_timer_init(&a, spur_cb);
	bad |= twheel_host_add(h, &a, 10000000) != 0; /* 10 ms on the injected clock */
	spur_ns += 20000000;                          /* the clock runs ahead of the timerfd */
	bad |= twheel_epoll_dispatch(h) != 1;         /* the fd was not readable */
	bad |= spur_fired != 1 || twheel_count(twheel_host_wheel(h)) != 0;
	bad |= timerfd_gettime(twheel_epoll_fd(h), &its) != 0;
	bad |= its.it_value.tv_sec != 0 || its.it_value.tv_nsec != 0;
	p.fd = twheel_epoll_fd(h);
	p.events = POLLIN;
	bad |= poll(&p, 1, 30) != 0; /* idle: never readable */
	bad |= twheel_epoll_destroy(h, NULL, NULL) != 0;
	if (bad)
		fprintf(stderr, "dispatch when not readable: the idle wheel's timerfd stayed armed\n");
	return bad;
}

static void count_handed(struct tw_timer *t, void *arg)
{
	(void)t;
	++*(int *)arg;
}

/* twheel_epoll_wait()'s arguments; a wait that fails places all the same. */
static int wait_args(void)
{
	struct twheel_host *h = twheel_epoll_create(NULL);
	struct epoll_event ev;
	struct tw_timer a, b;
	int bad = !h;

	if (!h)
		return 1;
	tw_timer_init(&a, spur_cb);
	tw_timer_init(&b, spur_cb);
	bad |= twheel_epoll_wait(NULL, 0, &ev, 1, 0) != -EINVAL;
	bad |= twheel_epoll_wait(h, 0, NULL, 1, 0) != -EINVAL;
	bad |= twheel_epoll_wait(h, 0, &ev, 0, 0) != -EINVAL;
	bad |= twheel_epoll_wait(h, -1, &ev, 1, 0) != -EBADF; /* defer now on */
	bad |= twheel_host_add(h, &a, 1000 * TICK_NS) != 0;  /* arms the timerfd */
	bad |= twheel_host_add(h, &b, 1000 * TICK_NS) != 0;  /* parked */
	bad |= twheel_host_place(h) != 1;
	bad |= twheel_host_mod(h, &b, 2000 * TICK_NS) != 1;  /* parked again */
	bad |= twheel_epoll_wait(h, -1, &ev, 1, 0) != -EBADF;
	bad |= twheel_host_place(h) != 0;                    /* placed by the wait */
	bad |= twheel_epoll_destroy(h, NULL, NULL) != 0;
	if (bad)
		fprintf(stderr, "twheel_epoll_wait: arguments or placement\n");
	return bad;
}

/*
 * fork() with a timer pending: the child destroys the host it inherited
 * (as a worker frees what it does not use) and exits. The timerfd is
 * shared with the parent, whose timer still fires. With @again, the
 * child's hand-back function calls the destroy once more, which is
 * refused (-EBUSY) and must change nothing: it used to clear the mark
 * that keeps the destroy from disarming the shared timerfd, and the
 * parent's timer never fired. 0 if so.
 */
static struct twheel_host *forked_h;
static int again_rc;

static void destroy_again(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	again_rc = twheel_epoll_destroy(forked_h, NULL, NULL);
}

static int fork_child_destroys_the_parents_host(bool again)
{
	static struct tw_timer t;
	struct twheel_host *h = twheel_epoll_create(NULL);
	struct pollfd p;
	int st = -1, n = 0;
	pid_t pid;

	spur_fired = 0;
	tw_timer_init(&t, spur_cb);
	if (!h || twheel_host_add(h, &t, 20 * TICK_NS) != 0)
		return 1;
	forked_h = h;
	pid = fork();
	if (pid == 0)
		_exit(twheel_epoll_destroy(h, again ? destroy_again : NULL, NULL) == 0 &&
		      (!again || again_rc == -EBUSY) ? 0 : 1);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	p.fd = twheel_epoll_fd(h);
	p.events = POLLIN;
	while (!spur_fired && n++ < 100 && poll(&p, 1, 10) >= 0)
		if (p.revents & POLLIN)
			twheel_epoll_dispatch(h);
	twheel_epoll_destroy(h, NULL, NULL);
	if (spur_fired != 1)
		fprintf(stderr, "fork: the child's destroy%s disarmed the parent's timerfd\n",
			again ? " (with a destroy again from its hand-back function)" : "");
	return spur_fired != 1;
}

/*
 * The timerfd closed behind the adapter's back: twheel_epoll_dispatch()
 * gives read(2)'s -EBADF and runs nothing (the due timer stays pending,
 * handed back by destroy). 0 if so.
 */
static int dispatch_on_a_closed_fd(void)
{
	struct twheel_host *h = twheel_epoll_create(NULL);
	struct tw_timer a;
	int bad = !h, handed = 0;

	if (!h)
		return 1;
	spur_fired = 0;
	tw_timer_init(&a, spur_cb);
	bad |= twheel_host_add(h, &a, 0) != 0;
	bad |= close(twheel_epoll_fd(h)) != 0;
	bad |= twheel_epoll_dispatch(h) != -EBADF;
	bad |= spur_fired != 0 || twheel_count(twheel_host_wheel(h)) != 1;
	bad |= twheel_epoll_destroy(h, count_handed, &handed) != 0 || handed != 1;
	if (bad)
		fprintf(stderr, "dispatch on a closed timerfd\n");
	return bad;
}

/*
 * Arms after the program closed the timerfd: no timer can fire any more,
 * so an arm that re-arms the timerfd (its timerfd_settime() fails) is
 * refused with -ESHUTDOWN, and so is every later one; after a dispatch
 * that got -EBADF, even an arm that would leave the timerfd alone.
 * Destroy hands back what is pending and does not close the number, which
 * the program may have given to another descriptor since. @how: 0 the
 * wheel empty (the arm re-arms), 1 a timer pending and dispatch told
 * -EBADF, then an arm later than it. 0 if so.
 */
static int arms_after_the_timerfd_was_closed(int how)
{
	struct twheel_host *h = twheel_epoll_create(NULL);
	struct epoll_event ev;
	struct tw_timer a, b;
	int bad = !h, handed = 0, other[2] = { -1, -1 };

	if (!h)
		return 1;
	tw_timer_init(&a, spur_cb);
	tw_timer_init(&b, spur_cb);
	if (how == 1)
		bad |= twheel_host_add(h, &a, 100 * TICK_NS) != 0;
	bad |= close(twheel_epoll_fd(h)) != 0;
	if (how == 1) {
		bad |= twheel_epoll_dispatch(h) != -EBADF;
		bad |= twheel_host_add(h, &b, 200 * TICK_NS) != -ESHUTDOWN;
	} else {
		bad |= twheel_host_add(h, &b, TICK_NS) != -ESHUTDOWN;
	}
	bad |= tw_timer_pending(&b);
	bad |= twheel_host_add_at(h, &b, twheel_host_now(h) + TICK_NS) != -ESHUTDOWN;
	bad |= twheel_host_mod(h, &b, 0) != -ESHUTDOWN || tw_timer_pending(&b);
	bad |= twheel_epoll_wait(h, -1, &ev, 1, 0) != -ESHUTDOWN;
	/* the number goes to the next descriptor opened: dispatch reads
	 * nothing from it, and destroy leaves it */
	bad |= pipe(other) != 0;
	if (other[0] >= 0 && other[1] >= 0) {
		char c = 'x';

		/* non-blocking: a read that took the byte fails the test, not hangs it */
		bad |= fcntl(other[0], F_SETFL, O_NONBLOCK) != 0 || write(other[1], &c, 1) != 1;
		bad |= twheel_epoll_fd(h) != -ESHUTDOWN;
		bad |= twheel_epoll_dispatch(h) != -ESHUTDOWN;
		bad |= read(other[0], &c, 1) != 1 || c != 'x';
	}
	bad |= twheel_epoll_destroy(h, count_handed, &handed) != 0 || handed != how;
	bad |= fcntl(other[0], F_GETFD) < 0 || fcntl(other[1], F_GETFD) < 0;
	close(other[0]);
	close(other[1]);
	if (bad)
		fprintf(stderr, "an arm after the timerfd was closed (case %d)\n", how);
	return bad;
}

/* After twheel_host_fini(): dispatch and wait give -EINVAL; destroy frees. */
static int calls_after_host_fini(void)
{
	struct twheel_host *h = twheel_epoll_create(NULL);
	struct epoll_event ev;
	struct tw_timer a;
	int bad = !h;

	if (!h)
		return 1;
	tw_timer_init(&a, spur_cb);
	bad |= twheel_host_add(h, &a, 0) != 0;
	bad |= twheel_host_fini(h, NULL, NULL) != 0;
	bad |= twheel_epoll_dispatch(h) != -EINVAL;
	bad |= twheel_epoll_wait(h, -1, &ev, 1, 0) != -EINVAL;
	bad |= twheel_epoll_destroy(h, NULL, NULL) != 0;
	if (bad)
		fprintf(stderr, "dispatch or wait after twheel_host_fini()\n");
	return bad;
}

int main(void)
{
	int rc;

	if (twheel_epoll_fd(NULL) != -EINVAL || twheel_epoll_dispatch(NULL) != -EINVAL)
		return 1;
	if (dispatch_when_not_readable_leaves_idle_fd_silent() || wait_args() ||
	    fork_child_destroys_the_parents_host(false) ||
	    fork_child_destroys_the_parents_host(true) || dispatch_on_a_closed_fd() ||
	    calls_after_host_fini() || arms_after_the_timerfd_was_closed(0) ||
	    arms_after_the_timerfd_was_closed(1))
		return 1;
	rc = suite_main(&ep_host);
	wrapped = 1;
	return rc | suite_main(&ep_wait_host);
}
