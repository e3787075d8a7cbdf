/* SPDX-License-Identifier: MIT */
/*
 * test_contract - what <twheel/twheel.h>, <twheel/rt.h> and <twheel/host.h>
 * promise that no other suite checked (found by reading each header as a
 * user who reads nothing else, then grepping tests/): NULL and
 * never-initialised arguments of the functions around twheel_mod(), the
 * host's errors (init, a shut-down or lost host, calls from a callback),
 * and the ends of the 64-bit clock (a tick of UINT64_MAX ns, a deadline
 * of UINT64_MAX on ticks that do not divide it, a delay counted from the
 * clock's last reading).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/compat.h>
#include <twheel/host.h>

static void cb(struct tw_timer *t)
{
	(void)t;
}

static tw_tick_t same(uint64_t v, void *arg)
{
	(void)arg;
	return v;
}

/* ---- the wheel ------------------------------------------------------------ */

/* a -Ddebug_checks build reports an all-zero timer first: then -EINVAL
 * all the same (twheel_set_misuse_handler()) */
static void zeroed_misuse(const char *what)
{
	assert_non_null(strstr(what, "not initialised"));
}

/*
 * twheel_mod(), as the library's function and through the inline path,
 * and twheel__mod() behind it: NULL, a never-initialised timer and a
 * pending timer without its wheel are refused with -EINVAL, nothing
 * changed.
 */
static void mod_refuses_null_and_zero(void **state)
{
	struct twheel *w = twheel_create(0);
	struct tw_timer t, z;

	(void)state;
	memset(&z, 0, sizeof(z));
	tw_timer_init(&t, cb);
	twheel_misuse_fn old = twheel_set_misuse_handler(zeroed_misuse);
	assert_int_equal((twheel_mod)(NULL, &t, 1), -EINVAL);
	assert_int_equal((twheel_mod)(w, NULL, 1), -EINVAL);
	assert_int_equal(twheel_mod(w, NULL, 1), -EINVAL);
	assert_int_equal(twheel_mod(w, &z, 1), -EINVAL);
	twheel_set_misuse_handler(old);
	assert_int_equal(twheel_add(w, &t, 1000), 0);
	assert_int_equal(twheel_mod(NULL, &t, 2000), -EINVAL);
	assert_int_equal((twheel_mod)(NULL, &t, 2000), -EINVAL);
	assert_int_equal(twheel__mod(NULL, &t, 2000), -EINVAL);
	assert_int_equal(tw_timer_expires(&t), 1000);
	assert_int_equal(twheel_count(w), 1);
	assert_int_equal(twheel_check(w, NULL, 0), 0);
	assert_int_equal(twheel_del(w, &t), 1);
	twheel_destroy(w);
}

/* The internal entry points the host and the loop use: -EINVAL or false
 * for NULL (and a tick of 0), nothing touched. */
static void internal_entry_points_refuse_null(void **state)
{
	struct twheel *w = twheel_create(5);

	(void)state;
	assert_int_equal(twheel__place_deadlines(NULL, 0, 0, 1, 0), -EINVAL);
	assert_int_equal(twheel__place_deadlines(w, 0, 0, 0, 0), -EINVAL);
	assert_false(twheel__catch_up(NULL, 10));
	assert_false(twheel__catch_up_cascades(NULL, 10));
	assert_false(twheel__catch_up(w, 5)); /* not after the wheel's time */
	assert_int_equal(twheel_now(w), 5);
	twheel_destroy(w);
}

/* A hint of TW_TICK_MAX is a hint like any other: the timer is parked,
 * never fires while parked, and is placed at its value. */
static void park_hint_at_tick_max(void **state)
{
	struct twheel *w = twheel_create(0);
	struct tw_timer t;

	(void)state;
	tw_timer_init(&t, cb);
	assert_int_equal(twheel_park_hint(w, &t, 300, TW_TICK_MAX), 0);
	assert_true(tw_timer_pending(&t));
	assert_int_equal(twheel_advance(w, 299), 0);
	assert_true(tw_timer_pending(&t));
	assert_int_equal(twheel_place(w, same, NULL), 1);
	assert_int_equal(tw_timer_expires(&t), 300);
	assert_int_equal(twheel_advance(w, 299), 0);
	assert_int_equal(twheel_advance(w, 300), 1);
	assert_int_equal(twheel_check(w, NULL, 0), 0);
	twheel_destroy(w);
}

/*
 * twheel_rt_place() from a reading of UINT64_MAX, the clock's last: every
 * parked delay has come, a saturating one too, and is due in the next
 * advance (to floor(UINT64_MAX / tick)), not on a tick never reached.
 */
static int rt_fired;
static void rt_cb(struct tw_timer *t)
{
	(void)t;
	rt_fired++;
}

static void rt_place_at_the_clocks_end(void **state)
{
	struct twheel_rt rt;
	struct twheel *w;
	struct tw_timer t[3];
	int i;

	(void)state;
	twheel_rt_init(&rt, 1000000, NULL, NULL);
	w = twheel_create(twheel_rt_floor(&rt, UINT64_MAX) - 10);
	for (i = 0; i < 3; i++)
		tw_timer_init(&t[i], rt_cb);
	assert_int_equal(twheel_park(w, &t[0], 0), 0);
	assert_int_equal(twheel_park(w, &t[1], 5000000), 0);
	assert_int_equal(twheel_park(w, &t[2], UINT64_MAX), 0);
	assert_int_equal(twheel_rt_place(&rt, w, UINT64_MAX), 3);
	for (i = 0; i < 3; i++)
		assert_true(tw_timer_expires(&t[i]) <= twheel_rt_floor(&rt, UINT64_MAX));
	assert_int_equal(twheel_rt_timeout_ns(&rt, w, UINT64_MAX), 0);
	rt_fired = 0;
	assert_int_equal(twheel_rt_advance(&rt, w, UINT64_MAX), 3);
	assert_int_equal(rt_fired, 3);
	assert_int_equal(twheel_rt_timeout_ns(&rt, w, UINT64_MAX), TWHEEL_RT_FOREVER);
	twheel_destroy(w);
}

/* ---- the host ------------------------------------------------------------- */

static uint64_t fake_ns;
static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return fake_ns;
}

static void fake_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h, (void)wake_ns, (void)now_ns;
}

static void fake_stop(struct twheel_host *h)
{
	(void)h;
}

static const struct twheel_host_ops fake_ops = { fake_arm, fake_stop };

static void host_at(struct twheel_host *h, uint64_t tick_ns, uint64_t now_ns)
{
	struct twheel_rt rt;

	fake_ns = now_ns;
	assert_int_equal(twheel_rt_init(&rt, tick_ns, fake_clock, NULL), 0);
	assert_int_equal(twheel_host_init(h, &rt, &fake_ops), 0);
}

/* twheel_host_init(): NULL host or ops, or an op missing: -EINVAL. */
static void host_init_errors(void **state)
{
	static const struct twheel_host_ops no_arm = { NULL, fake_stop };
	static const struct twheel_host_ops no_stop = { fake_arm, NULL };
	struct twheel_host h;

	(void)state;
	assert_int_equal(twheel_host_init(NULL, NULL, &fake_ops), -EINVAL);
	assert_int_equal(twheel_host_init(&h, NULL, NULL), -EINVAL);
	assert_int_equal(twheel_host_init(&h, NULL, &no_arm), -EINVAL);
	assert_int_equal(twheel_host_init(&h, NULL, &no_stop), -EINVAL);
	assert_int_equal(twheel_host_init(&h, NULL, &fake_ops), 0);
	assert_ptr_equal(twheel_host_get_ops(&h), &fake_ops);
	assert_int_equal(twheel_host_rt(&h)->tick_ns, TWHEEL_RT_DEFAULT_TICK_NS);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_null(twheel_host_rt(NULL));
	assert_null(twheel_host_get_ops(NULL));
	assert_null(twheel_host_wheel(NULL));
	assert_int_equal(twheel_host_defer(NULL, true), -EINVAL);
}

/*
 * A host never initialised (all zero) or shut down: fini says -EINVAL, and
 * so does every call that needs a live host (place, defer, lost, run,
 * add_at); twheel_host_expires() gives tw_timer_expires().
 */
static void host_not_initialised_or_shut_down(void **state)
{
	struct twheel_host z, h;
	struct tw_timer t;

	(void)state;
	memset(&z, 0, sizeof(z));
	tw_timer_init(&t, cb);
	t.expires = 77;
	assert_int_equal(twheel_host_fini(&z, NULL, NULL), -EINVAL);
	assert_int_equal(twheel_host_run(&z), -EINVAL);
	assert_int_equal(twheel_host_place(&z), -EINVAL);
	assert_int_equal(twheel_host_defer(&z, true), -EINVAL);
	assert_int_equal(twheel_host_lost(&z), -EINVAL);
	assert_int_equal(twheel_host_add(&z, &t, 1), -EINVAL);
	assert_int_equal(twheel_host_mod_at(&z, &t, 1), -EINVAL);
	assert_int_equal(twheel_host_del(&z, &t), -EINVAL);
	assert_int_equal(twheel_host_expires(&z, &t), 77);

	host_at(&h, 0, 1000);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_int_equal(twheel_host_place(&h), -EINVAL);
	assert_int_equal(twheel_host_defer(&h, false), -EINVAL);
	assert_int_equal(twheel_host_lost(&h), -EINVAL);
	assert_int_equal(twheel_host_add_at(&h, &t, 5), -EINVAL);
	assert_int_equal(twheel_host_mod(&h, &t, 5), -EINVAL);
	assert_int_equal(twheel_host_expires(&h, &t), 77);
	assert_false(tw_timer_pending(&t));
}

/* _add_at of a pending timer: -EBUSY, as _add; a lost host checks the
 * loss first after @h: -ESHUTDOWN even for a NULL timer. */
static void host_add_at_busy_and_lost_first(void **state)
{
	struct twheel_host h;
	struct tw_timer t;

	(void)state;
	tw_timer_init(&t, cb);
	host_at(&h, 0, 1000);
	assert_int_equal(twheel_host_add(&h, &t, 10000000), 0);
	assert_int_equal(twheel_host_add_at(&h, &t, 2000), -EBUSY);
	assert_int_equal(twheel_host_expires(&h, &t), 11);
	assert_int_equal(twheel_host_lost(&h), 0);
	assert_int_equal(twheel_host_add(&h, NULL, 5), -ESHUTDOWN);
	assert_int_equal(twheel_host_add_at(&h, NULL, 5), -ESHUTDOWN);
	assert_int_equal(twheel_host_mod(&h, NULL, 5), -ESHUTDOWN);
	assert_int_equal(twheel_host_mod_at(&h, NULL, 5), -ESHUTDOWN);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
}

/* Every call the host refuses from one of its wheel's callbacks, and
 * twheel_rt_advance() on that wheel: -EBUSY, nothing done. */
static struct twheel_host CH;
static long from_cb[6];
static void busy_cb(struct tw_timer *t)
{
	(void)t;
	from_cb[0] = twheel_host_run(&CH);
	from_cb[1] = twheel_host_fini(&CH, NULL, NULL);
	from_cb[2] = twheel_host_place(&CH);
	from_cb[3] = twheel_host_defer(&CH, true);
	from_cb[4] = twheel_host_lost(&CH);
	from_cb[5] = twheel_rt_advance(twheel_host_rt(&CH), twheel_host_wheel(&CH),
				       twheel_host_now(&CH));
}

static void host_calls_from_a_callback(void **state)
{
	struct tw_timer t, u;
	int i;

	(void)state;
	tw_timer_init(&t, busy_cb);
	tw_timer_init(&u, cb);
	host_at(&CH, 0, 1000000);
	assert_int_equal(twheel_host_add(&CH, &t, 0), 0);
	assert_int_equal(twheel_host_add(&CH, &u, 50000000), 0);
	assert_int_equal(twheel_host_run(&CH), 1);
	for (i = 0; i < 6; i++)
		assert_int_equal(from_cb[i], -EBUSY);
	/* nothing was done: the host is live, not lost, u still pending */
	assert_true(tw_timer_pending(&u));
	assert_int_equal(twheel_host_place(&CH), 0);
	fake_ns = 51000000;
	assert_int_equal(twheel_host_run(&CH), 1);
	assert_int_equal(twheel_host_fini(&CH, NULL, NULL), 0);
}

/*
 * The ends of the clock. A tick of UINT64_MAX ns: tick 1 begins at
 * UINT64_MAX, so a deadline of 5 and a delay of 1 fire only there. On 1 ms
 * ticks a deadline of UINT64_MAX lies in a tick that begins beyond any
 * 64-bit reading: it never fires (rt.h). From a reading of UINT64_MAX
 * every delay has come: due at the next run.
 */
static int fired;
static void count_cb(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static void host_at_the_clocks_ends(void **state)
{
	struct twheel_host h;
	struct tw_timer t;

	(void)state;
	tw_timer_init(&t, count_cb);

	fired = 0;
	host_at(&h, UINT64_MAX, 0);
	assert_int_equal(twheel_host_add_at(&h, &t, 5), 0);
	assert_int_equal(twheel_host_expires(&h, &t), 1);
	fake_ns = UINT64_MAX - 1;
	assert_int_equal(twheel_host_run(&h), 0);
	fake_ns = UINT64_MAX;
	assert_int_equal(twheel_host_run(&h), 1);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);

	host_at(&h, UINT64_MAX, 0);
	assert_int_equal(twheel_host_add(&h, &t, 1), 0);
	fake_ns = UINT64_MAX - 1;
	assert_int_equal(twheel_host_run(&h), 0);
	fake_ns = UINT64_MAX;
	assert_int_equal(twheel_host_run(&h), 1);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);

	host_at(&h, 1000000, 0);
	assert_int_equal(twheel_host_add(&h, &t, UINT64_MAX), 0); /* a delay: the same */
	fake_ns = UINT64_MAX;
	assert_int_equal(twheel_host_run(&h), 0);
	assert_true(tw_timer_pending(&t));
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);

	host_at(&h, 1000000, 0);
	assert_int_equal(twheel_host_add_at(&h, &t, UINT64_MAX), 0);
	fake_ns = UINT64_MAX;
	assert_int_equal(twheel_host_run(&h), 0);
	assert_true(tw_timer_pending(&t));
	assert_int_equal(twheel_rt_timeout_ns(twheel_host_rt(&h), twheel_host_wheel(&h), fake_ns),
			 TWHEEL_RT_FOREVER);
	assert_int_equal(twheel_host_del(&h, &t), 1);

	assert_int_equal(twheel_host_add(&h, &t, 5), 0); /* from UINT64_MAX: due */
	assert_int_equal(twheel_host_run(&h), 1);
	assert_int_equal(fired, 3);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
}

/* ---- the legacy timers' layer (<twheel/compat.h>) ------------------------ */

/*
 * twheel_compat_bind_host() refuses a host never initialised or shut down
 * (-EINVAL) and a thread bound already (-EBUSY); an all-zero compat timer
 * has no callback (-EINVAL to arm, 0 to delete, not pending); NULL is not
 * pending; an arm at UINT64_MAX fires at TW_TICK_MAX, not before.
 */
static void compat_cb(struct tw_timer *t)
{
	/* what a legacy header's trampoline does */
	struct twheel_compat_timer *ct = tw_container_of(t, struct twheel_compat_timer, tw);

	twheel_compat_leave(twheel_compat_enter(ct));
	fired++;
}

static void compat_contract(void **state)
{
	struct twheel_host z, h;
	struct twheel_compat_timer ct, zt;
	struct twheel *w = twheel_create(0);

	(void)state;
	memset(&z, 0, sizeof(z));
	memset(&zt, 0, sizeof(zt));
	memset(&ct, 0, sizeof(ct));
	tw_timer_init(&ct.tw, compat_cb);
	assert_int_equal(twheel_compat_bind_host(&z, TWHEEL_COMPAT_TICK_NS), -EINVAL);
	host_at(&h, TWHEEL_COMPAT_TICK_NS, 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_int_equal(twheel_compat_bind_host(&h, TWHEEL_COMPAT_TICK_NS), -EINVAL);
	host_at(&h, TWHEEL_COMPAT_TICK_NS, 0);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
	assert_int_equal(twheel_compat_bind_host(&h, TWHEEL_COMPAT_TICK_NS), -EBUSY);
	assert_false(twheel_compat_pending(NULL));
	twheel_misuse_fn old = twheel_set_misuse_handler(zeroed_misuse);
	assert_int_equal(twheel_compat_mod(&zt, 5, 0), -EINVAL);
	twheel_set_misuse_handler(old);
	assert_int_equal(twheel_compat_del(&zt), 0);
	assert_false(twheel_compat_pending(&zt));
	fired = 0;
	assert_int_equal(twheel_compat_mod(&ct, UINT64_MAX, 0), 0);
	assert_true(twheel_compat_pending(&ct));
	assert_int_equal(twheel_advance(w, UINT64_MAX - 1), 0);
	assert_int_equal(twheel_advance(w, UINT64_MAX), 1);
	assert_int_equal(fired, 1);
	assert_false(twheel_compat_pending(&ct));
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	twheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mod_refuses_null_and_zero),
		cmocka_unit_test(internal_entry_points_refuse_null),
		cmocka_unit_test(park_hint_at_tick_max),
		cmocka_unit_test(rt_place_at_the_clocks_end),
		cmocka_unit_test(host_init_errors),
		cmocka_unit_test(host_not_initialised_or_shut_down),
		cmocka_unit_test(host_add_at_busy_and_lost_first),
		cmocka_unit_test(host_calls_from_a_callback),
		cmocka_unit_test(host_at_the_clocks_ends),
		cmocka_unit_test(compat_contract),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
