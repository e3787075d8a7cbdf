/*
 * test_ev - the adapter suite (suite.h) on Debian's libev, plus
 * twheel_ev_create()'s own argument check.
 */
#include <twheel/ev.h>

#include "suite.h"

static struct ev_loop *loop;

static void ev_setup(void)
{
	loop = ev_loop_new(EVFLAG_AUTO);
	assert_non_null(loop);
}

static void ev_teardown(void)
{
	ev_loop_destroy(loop);
}

static struct twheel_host *ev_create(const struct twheel_rt *rt)
{
	return twheel_ev_create(loop, rt);
}

static void ev_run_all(void)
{
	ev_run(loop, 0);
}

static void on_stop(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

static void ev_run_for(unsigned ms)
{
	ev_timer t;

	ev_now_update(loop);
	ev_timer_init(&t, on_stop, ms * 1e-3, 0.);
	ev_timer_start(loop, &t);
	ev_run(loop, 0);
	ev_timer_stop(loop, &t);
}

struct soon {
	ev_timer t;
	void (*fn)(void *arg);
	void *arg;
};

static void on_soon(struct ev_loop *l, ev_timer *w, int revents)
{
	struct soon *s = (struct soon *)w;

	(void)l;
	(void)revents;
	s->fn(s->arg);
	free(s);
}

static void ev_call_soon(void (*fn)(void *arg), void *arg)
{
	struct soon *s = malloc(sizeof(*s));

	assert_non_null(s);
	s->fn = fn;
	s->arg = arg;
	ev_timer_init(&s->t, on_soon, 0., 0.);
	ev_timer_start(loop, &s->t);
}

static const struct host_loop ev_host = {
	"libev", ev_setup, ev_teardown, ev_create, twheel_ev_destroy,
	ev_run_all, ev_run_for, ev_call_soon, NULL, true,
};

int main(void)
{
	errno = 0;
	if (twheel_ev_create(NULL, NULL) != NULL || errno != EINVAL)
		return 1;
	return suite_main(&ev_host);
}
