/*
 * wheel_fixture.h - what test_timer_list.c and test_callout.c share: each
 * test gets a plain wheel `w`, created at tick WHEEL_FIXTURE_START (the
 * includer defines it) and bound to the thread (twheel_compat_bind_wheel());
 * step(n) advances it one tick at a time; the tear-down checks that the
 * test left no timer behind and unbinds. T(f) is the test f with both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <twheel/compat.h>

static struct twheel *w;

static int wheel_setup(void **state)
{
	(void)state;
	w = twheel_create(WHEEL_FIXTURE_START);
	assert_non_null(w);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
	return 0;
}

static int wheel_teardown(void **state)
{
	(void)state;
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_count(w), 0); /* each test leaves nothing behind */
	twheel_destroy(w);
	return 0;
}

/* Advance @n ticks, one at a time; returns the callbacks run. */
static long step(unsigned long n)
{
	long fired = 0;

	for (unsigned long i = 0; i < n; i++)
		fired += twheel_advance(w, twheel_now(w) + 1);
	return fired;
}

#define T(f) cmocka_unit_test_setup_teardown(f, wheel_setup, wheel_teardown)
