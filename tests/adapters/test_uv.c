/*
 * test_uv - the adapter suite (suite.h) on Debian's libuv, plus what is
 * particular to libuv: bad arguments of twheel_uv_create/destroy, and the
 * loop closing cleanly (uv_loop_close() == 0) after every test.
 */
#include <twheel/uv.h>

#include "suite.h"

static uv_loop_t loop;

static void uv_setup(void)
{
	assert_int_equal(uv_loop_init(&loop), 0);
}

static void uv_teardown(void)
{
	uv_run(&loop, UV_RUN_DEFAULT); /* close callbacks */
	assert_int_equal(uv_loop_close(&loop), 0);
}

static struct twheel_host *uv_create(const struct twheel_rt *rt)
{
	return twheel_uv_create(&loop, rt);
}

static void uv_run_all(void)
{
	uv_run(&loop, UV_RUN_DEFAULT);
}

static void on_stop(uv_timer_t *t)
{
	uv_stop(t->loop);
}

static void uv_run_for(unsigned ms)
{
	uv_timer_t t;

	uv_timer_init(&loop, &t);
	uv_update_time(&loop);
	uv_timer_start(&t, on_stop, ms, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&t, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);
}

struct soon {
	uv_timer_t t;
	void (*fn)(void *arg);
	void *arg;
};

static void on_soon(uv_timer_t *t)
{
	struct soon *s = (struct soon *)t;

	s->fn(s->arg);
	uv_close((uv_handle_t *)t, (uv_close_cb)free);
}

static void uv_call_soon(void (*fn)(void *arg), void *arg)
{
	struct soon *s = malloc(sizeof(*s));

	assert_non_null(s);
	s->fn = fn;
	s->arg = arg;
	uv_timer_init(&loop, &s->t);
	uv_timer_start(&s->t, on_soon, 0, 0);
}

static const struct host_loop uv_host = {
	"libuv", uv_setup, uv_teardown, uv_create, twheel_uv_destroy,
	uv_run_all, uv_run_for, uv_call_soon,
};

int main(void)
{
	struct twheel_rt_stats st;

	/* particular to libuv */
	errno = 0;
	if (twheel_uv_create(NULL, NULL) != NULL || errno != EINVAL)
		return 1;
	uv_setup();
	{
		struct twheel_host *h = twheel_uv_create(&loop, NULL);

		if (!h || twheel_host_get_stats(h, &st) || st.wakeups)
			return 1;
		twheel_uv_destroy(h, NULL, NULL);
	}
	uv_teardown();
	return suite_main(&uv_host);
}
