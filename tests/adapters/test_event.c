/*
 * test_event - the adapter suite (suite.h) on Debian's libevent, with a
 * default base (its clock is CLOCK_MONOTONIC_COARSE) and again with
 * EVENT_BASE_FLAG_PRECISE_TIMER, plus twheel_event_create()'s own argument
 * check.
 */
#include <twheel/event.h>

#include "suite.h"

static struct event_base *base;
static int precise;

static void event_setup(void)
{
	struct event_config *cfg = event_config_new();

	assert_non_null(cfg);
	if (precise)
		event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	assert_non_null(base);
}

static void event_teardown(void)
{
	event_base_free(base);
}

static struct twheel_host *event_create(const struct twheel_rt *rt)
{
	return twheel_event_create(base, rt);
}

static void event_run_all(void)
{
	event_base_dispatch(base);
}

static void event_run_for(unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

struct soon {
	void (*fn)(void *arg);
	void *arg;
};

static void on_soon(evutil_socket_t fd, short what, void *arg)
{
	struct soon *s = arg;

	(void)fd;
	(void)what;
	s->fn(s->arg);
	free(s);
}

static void event_call_soon(void (*fn)(void *arg), void *arg)
{
	struct soon *s = malloc(sizeof(*s));
	struct timeval zero = { 0, 0 };

	assert_non_null(s);
	s->fn = fn;
	s->arg = arg;
	assert_int_equal(event_base_once(base, -1, EV_TIMEOUT, on_soon, s, &zero), 0);
}

/* A native persistent 100 us timer, until *until changes. */
static struct event *ticker;
static const int *ticker_until;
static int ticker_start;

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (*ticker_until != ticker_start) {
		event_free(ticker);
		ticker = NULL;
	}
}

static void event_busy(const int *until)
{
	struct timeval tv = { 0, 100 };

	assert_null(ticker);
	ticker_until = until;
	ticker_start = *until;
	ticker = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	assert_non_null(ticker);
	assert_int_equal(event_add(ticker, &tv), 0);
}

int main(void)
{
	static const struct host_loop coarse = {
		"libevent (default base)", event_setup, event_teardown, event_create,
		twheel_event_destroy, event_run_all, event_run_for, event_call_soon, event_busy, false,
	};
	static const struct host_loop fine = {
		"libevent (precise timer)", event_setup, event_teardown, event_create,
		twheel_event_destroy, event_run_all, event_run_for, event_call_soon, event_busy, false,
	};
	int rc;

	errno = 0;
	if (twheel_event_create(NULL, NULL) != NULL || errno != EINVAL)
		return 1;
	rc = suite_main(&coarse);
	precise = 1;
	return rc | suite_main(&fine);
}
