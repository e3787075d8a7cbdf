/*
 * test_debug - the -Ddebug_checks=true build reports misuse instead of
 * corrupting memory. This test compiles the wheel itself with
 * TWHEEL_DEBUG_CHECKS=1 (whatever the build's option), installs a misuse
 * handler that records instead of aborting, and checks each report and the
 * -EINVAL that follows it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/host.h>
#include <twheel/twheel.h>

#if !TWHEEL_DEBUG_CHECKS
#error "test_debug must be compiled with TWHEEL_DEBUG_CHECKS=1"
#endif

static int reports;
static char last[256];

static void record(const char *what)
{
	reports++;
	strncpy(last, what, sizeof(last) - 1);
}

static void noop(struct tw_timer *t)
{
	(void)t;
}

static int setup(void **state)
{
	(void)state;
	reports = 0;
	last[0] = '\0';
	twheel_set_misuse_handler(record);
	return 0;
}

/*
 * Memory that held a timer which was not pending, then partly reused (an
 * allocator's free-list links over its first words, a stack slot): the
 * magic is still there, the index is garbage, the owner is NULL. It is not
 * a pending timer: tw_timer_init() must not report it (the C++ layer's
 * handles tripped on their own stack frames).
 */
static void stale_bytes_of_an_idle_timer_are_not_pending(void **state)
{
	(void)state;
	struct tw_timer t;

	tw_timer_init(&t, noop);
	memset(&t, 0xa5, offsetof(struct tw_timer, flags)); /* expires and _idx */
	tw_timer_init(&t, noop);
	assert_int_equal(reports, 0);
	assert_false(tw_timer_pending(&t));
}

/*
 * Reused memory whose stale bytes hold the magic of another object at
 * that offset (a timer that lay elsewhere in the block, say) and nonzero
 * words where the index and the owner are: glibc's allocator handed such
 * a block to a program that then called tw_timer_init() on it, and the
 * check took it for a pending timer and aborted a correct program. A
 * pending timer is linked (both links set and aligned) and its index names
 * one of the wheel's lists; these bytes are none of that.
 */
static void stale_bytes_of_other_objects_are_not_pending(void **state)
{
	(void)state;
	struct tw_timer ref, t;
	static const struct {
		uint32_t idx;
		uintptr_t next, prev, wheel;
	} stale[] = {
		{ 0xf7fabcc0u, 0x55555555647b, 0, 0x2c },    /* as seen: odd link, no prev */
		{ 0xf7fabcc0u, 0x1000, 0x2000, 0x3000 },     /* no index of a list */
		{ 3, 0, 0, 0x3000 },                        /* a slot, links NULL */
		{ 3, 0x1001, 0x2000, 0x3000 },              /* a slot, link misaligned */
		{ 3, 0x1000, 0x2000, 0x3004 },              /* a slot, owner misaligned */
	};

	tw_timer_init(&ref, noop);
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
		memset(&t, 0xa5, sizeof(t));
		t._magic = ref._magic;
		t._idx = stale[i].idx;
		t.entry.next = (struct tw_list *)stale[i].next;
		t.entry.prev = (struct tw_list *)stale[i].prev;
		t._wheel = (const struct twheel *)stale[i].wheel;
		tw_timer_init(&t, noop);
		assert_int_equal(reports, 0);
		assert_false(tw_timer_pending(&t));
		assert_ptr_equal(t.func, noop);
	}
}

static void uninitialised_timer_is_reported(void **state)
{
	(void)state;
	struct twheel *w = twheel_create(0);
	struct tw_timer t;
	memset(&t, 0x5a, sizeof(t)); /* never passed to tw_timer_init() */
	t.func = noop;
	assert_int_equal(twheel_add(w, &t, 10), -EINVAL);
	assert_int_equal(reports, 1);
	assert_non_null(strstr(last, "initialised"));
	assert_int_equal(twheel_mod(w, &t, 10), -EINVAL);
	assert_int_equal(twheel_del(w, &t), -EINVAL);
	assert_int_equal(reports, 3);
	assert_int_equal(twheel_count(w), 0);
	assert_int_equal(twheel_check(w, NULL, 0), 0);
	twheel_destroy(w);
}

/*
 * The commonest form of the mistake: a connection struct from calloc()
 * whose tw_timer_init() was forgotten, all zero, its callback NULL too.
 * Every arm reports it, as the other calls do: an add must not take the
 * missing callback for the only fault and refuse it unreported (a
 * program that ignores the add's -EINVAL would lose the timer silently,
 * in the very build meant to catch it).
 */
static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now);
static void host_stop(struct twheel_host *h);

static void all_zero_timer_is_reported_by_every_arm(void **state)
{
	static const struct twheel_host_ops ops = { host_arm, host_stop };
	struct twheel *w = twheel_create(0);
	struct twheel_host h;
	struct tw_timer z, first;
	int defer;

	(void)state;
	memset(&z, 0, sizeof(z));
	assert_int_equal(twheel_add(w, &z, 10), -EINVAL);
	assert_int_equal(reports, 1);
	assert_non_null(strstr(last, "initialised"));
	assert_int_equal(twheel_mod(w, &z, 10), -EINVAL);
	assert_int_equal((twheel_mod)(w, &z, 10), -EINVAL);
	assert_int_equal(twheel_park(w, &z, 10), -EINVAL);
	assert_int_equal(twheel_park_hint(w, &z, 10, 1000), -EINVAL);
	assert_int_equal(reports, 5);
	assert_int_equal(twheel_count(w), 0);
	twheel_destroy(w);
	/* through a host: with its timer stopped (the arm places at once),
	 * then armed with deferral on (an arm by delay is parked) */
	assert_int_equal(twheel_host_init(&h, NULL, &ops), 0);
	tw_timer_init(&first, noop);
	for (defer = 0; defer < 2; defer++) {
		uint64_t now = twheel_host_now(&h);

		if (defer) {
			assert_int_equal(twheel_host_defer(&h, true), 0);
			assert_int_equal(twheel_host_add(&h, &first, 1000000000), 0);
		}
		reports = 0;
		assert_int_equal(twheel_host_add(&h, &z, 1000000), -EINVAL);
		assert_int_equal(twheel_host_add(&h, &z, 0), -EINVAL);
		assert_int_equal(twheel_host_mod(&h, &z, 1000000), -EINVAL);
		assert_int_equal(twheel_host_add_at(&h, &z, now + 1000000), -EINVAL);
		assert_int_equal(twheel_host_mod_at(&h, &z, now + 1000000), -EINVAL);
		assert_int_equal(reports, 5);
		assert_int_equal(twheel_count(twheel_host_wheel(&h)), (size_t)defer);
	}
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_null(z.entry.next);
}

/*
 * twheel_move() reports a timer never initialised on either side, before
 * the errors an all-zero timer would otherwise meet first (it says
 * pending: with no wheel, or moved onto itself).
 */
static void all_zero_timer_is_reported_by_move(void **state)
{
	struct twheel *w = twheel_create(0);
	struct tw_timer z, ok;

	(void)state;
	memset(&z, 0, sizeof(z));
	tw_timer_init(&ok, noop);
	assert_int_equal(twheel_move(NULL, &ok, &z), -EINVAL);
	assert_int_equal(twheel_move(NULL, &z, &z), -EINVAL);
	assert_int_equal(twheel_move(w, &z, &z), -EINVAL);
	assert_int_equal(twheel_move(w, &ok, &z), -EINVAL);
	assert_int_equal(reports, 4);
	assert_non_null(strstr(last, "initialised"));
	assert_int_equal(twheel_move(NULL, &z, &ok), -EINVAL);
	assert_int_equal(twheel_move(w, &z, &ok), -EINVAL);
	assert_int_equal(reports, 6);
	assert_non_null(strstr(last, "twheel_move() to a timer not initialised"));
	/* the checks cost the well-formed calls nothing */
	assert_int_equal(twheel_add(w, &ok, 10), 0);
	tw_timer_init(&z, noop);
	assert_int_equal(twheel_move(w, &z, &ok), 1);
	assert_int_equal(twheel_move(w, &z, &z), 1);
	assert_int_equal(reports, 6);
	assert_int_equal(twheel_count(w), 1);
	assert_int_equal(twheel_del(w, &z), 1);
	twheel_destroy(w);
}

static void timer_pending_on_another_wheel_is_reported(void **state)
{
	(void)state;
	struct twheel *a = twheel_create(0), *b = twheel_create(0);
	struct tw_timer t;
	tw_timer_init(&t, noop);
	assert_int_equal(twheel_add(a, &t, 10), 0);
	assert_int_equal(twheel_mod(b, &t, 20), -EINVAL);
	assert_int_equal(twheel_del(b, &t), -EINVAL);
	assert_int_equal(twheel_add(b, &t, 20), -EINVAL);
	assert_int_equal(reports, 3);
	assert_non_null(strstr(last, "another wheel"));
	/* the timer is untouched on its own wheel */
	assert_true(tw_timer_pending(&t));
	assert_int_equal(twheel_count(a), 1);
	assert_int_equal(twheel_count(b), 0);
	assert_int_equal(twheel_check(a, NULL, 0), 0);
	assert_int_equal(twheel_check(b, NULL, 0), 0);
	assert_int_equal(twheel_advance(a, 10), 1);
	/* once it fired it may move to the other wheel */
	assert_int_equal(twheel_add(b, &t, 20), 0);
	assert_int_equal(twheel_del(b, &t), 1);
	assert_int_equal(reports, 3);
	twheel_destroy(a);
	twheel_destroy(b);
}

static void destroying_wheel_with_pending_timers_is_reported(void **state)
{
	(void)state;
	struct twheel *w = twheel_create(0);
	struct tw_timer t;
	tw_timer_init(&t, noop);
	twheel_add(w, &t, 10);
	twheel_destroy(w);
	assert_int_equal(reports, 1);
	assert_non_null(strstr(last, "pending"));
	assert_false(tw_timer_pending(&t)); /* unlinked all the same */
	w = twheel_create(0);
	twheel_destroy(w); /* empty: silent */
	assert_int_equal(reports, 1);
}

/* Destroying or draining a wheel from its callback: reported, nothing done. */
static struct twheel *cb_wheel;
static void drained(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	fail_msg("a drain from a callback handed a timer back");
}

static void destroy_and_drain_own_wheel(struct tw_timer *t)
{
	(void)t;
	twheel_destroy(cb_wheel);
	twheel_drain(cb_wheel, drained, NULL);
}

static void destroy_or_drain_from_a_callback_is_reported(void **state)
{
	(void)state;
	struct tw_timer t, u;
	cb_wheel = twheel_create(0);
	tw_timer_init(&t, destroy_and_drain_own_wheel);
	tw_timer_init(&u, noop);
	twheel_add(cb_wheel, &t, 10);
	twheel_add(cb_wheel, &u, 10);
	assert_int_equal(twheel_advance(cb_wheel, 10), 2); /* the advance went on */
	assert_int_equal(reports, 2);
	assert_non_null(strstr(last, "twheel_drain() from inside a callback"));
	assert_int_equal(twheel_check(cb_wheel, NULL, 0), 0);
	twheel_destroy(cb_wheel);
	assert_int_equal(reports, 2);
}

static void reinitialising_pending_timer_is_reported(void **state)
{
	(void)state;
	struct twheel *w = twheel_create(0);
	struct tw_timer t;
	struct tw_timer u;
	tw_timer_init(&t, noop);
	tw_timer_init(&u, noop);
	twheel_add(w, &t, 10);
	twheel_add(w, &u, 10);
	tw_timer_init(&t, NULL);
	assert_int_equal(reports, 1);
	/* the handler returned: the timer and its wheel are untouched */
	assert_true(tw_timer_pending(&t));
	assert_ptr_equal(t.func, noop);
	assert_int_equal(twheel_check(w, NULL, 0), 0);
	assert_int_equal(twheel_advance(w, 10), 2);
	assert_int_equal(twheel_count(w), 0);
	assert_int_equal(twheel_check(w, NULL, 0), 0);
	twheel_destroy(w);
}

/* Pending anywhere a wheel keeps a timer: a slot above level 0, the due
 * list, the parked list, parked in place (twheel_park_hint()). */
static void reinitialising_pending_timer_is_reported_wherever_it_waits(void **state)
{
	(void)state;
	struct twheel *w = twheel_create(100);
	struct tw_timer t[4];
	for (int i = 0; i < 4; i++)
		tw_timer_init(&t[i], noop);
	assert_int_equal(twheel_add(w, &t[0], 100 + 5000), 0);
	assert_int_equal(twheel_add(w, &t[1], 50), 0);
	assert_int_equal(twheel_park(w, &t[2], 7), 0);
	assert_int_equal(twheel_park_hint(w, &t[3], 7, 100 + 5000), 0);
	for (int i = 0; i < 4; i++) {
		tw_timer_init(&t[i], NULL);
		assert_int_equal(reports, i + 1);
		assert_true(tw_timer_pending(&t[i]));
		assert_ptr_equal(t[i].func, noop);
	}
	assert_int_equal(twheel_check(w, NULL, 0), 0);
	assert_int_equal(twheel_count(w), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(twheel_del(w, &t[i]), 1);
	assert_int_equal(reports, 4);
	twheel_destroy(w);
}

static void default_handler_restored_by_null(void **state)
{
	(void)state;
	assert_ptr_equal(twheel_set_misuse_handler(NULL), record);
	assert_ptr_not_equal(twheel_set_misuse_handler(record), record);
}

/*
 * The host driver (<twheel/host.h>) on top: a timer pending on one host,
 * placed or parked (an arm by delay while the host timer is armed, with
 * twheel_host_defer() on), re-armed or cancelled through another host is
 * reported and refused with -EINVAL, and stays pending on its own host.
 */
static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	(void)h;
	(void)wake;
	(void)now;
}

static void host_stop(struct twheel_host *h)
{
	(void)h;
}

static void timer_pending_on_another_host_is_reported(void **state)
{
	static const struct twheel_host_ops ops = { host_arm, host_stop };
	struct twheel_host a, b;
	struct tw_timer first_a, first_b, t;
	uint64_t now;
	int parked;

	(void)state;
	assert_int_equal(twheel_host_init(&a, NULL, &ops), 0);
	assert_int_equal(twheel_host_init(&b, NULL, &ops), 0);
	assert_int_equal(twheel_host_defer(&a, true), 0);
	assert_int_equal(twheel_host_defer(&b, true), 0);
	tw_timer_init(&first_a, noop);
	tw_timer_init(&first_b, noop);
	tw_timer_init(&t, noop);
	/* the host timers armed: arms by delay are parked from now on */
	assert_int_equal(twheel_host_add(&a, &first_a, 1000000000), 0);
	assert_int_equal(twheel_host_add(&b, &first_b, 1000000000), 0);
	for (parked = 0; parked < 2; parked++) {
		reports = 0;
		assert_int_equal(twheel_host_add(&a, &t, 10000000), 0);
		if (!parked)
			assert_true(twheel_host_place(&a) >= 1);
		now = twheel_host_now(&b);
		assert_int_equal(twheel_host_add(&b, &t, 1000000), -EINVAL);
		assert_int_equal(twheel_host_mod(&b, &t, 1000000), -EINVAL);
		assert_int_equal(twheel_host_add_at(&b, &t, now + 1000000), -EINVAL);
		assert_int_equal(twheel_host_mod_at(&b, &t, now + 1000000), -EINVAL);
		assert_int_equal(twheel_host_del(&b, &t), -EINVAL);
		assert_int_equal(reports, 5);
		assert_non_null(strstr(last, "another wheel"));
		assert_true(tw_timer_pending(&t));
		assert_int_equal(twheel_count(twheel_host_wheel(&a)), 2);
		assert_int_equal(twheel_count(twheel_host_wheel(&b)), 1);
		assert_int_equal(twheel_host_del(&a, &t), 1);
	}
	assert_int_equal(twheel_host_fini(&a, NULL, NULL), 0);
	assert_int_equal(twheel_host_fini(&b, NULL, NULL), 0);
	assert_int_equal(reports, 5);
}

/*
 * A timer armed through the wheel's own API on a host's wheel
 * (twheel_host_wheel()), outside the host's run: the host does not re-arm
 * its loop's timer for it, so into an empty wheel it never fires (an
 * adapter's twheel_add() returned 0 and the timer was lost). Each arm
 * (twheel_add, twheel_mod, twheel_park, twheel_park_hint) is reported and
 * refused with -EINVAL, the timer left as it was; cancelling directly is
 * not (it loses nothing). From a callback of the host's run the arm is
 * allowed: the run re-arms the host timer after its callbacks, for it too.
 */
static int host_arms, direct_rc = 1;
static struct twheel_host *direct_h;
static struct tw_timer direct_t;

static void counting_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	(void)h;
	(void)wake;
	(void)now;
	host_arms++;
}

static void arm_directly(struct tw_timer *t)
{
	struct twheel *w = twheel_host_wheel(direct_h);

	(void)t;
	direct_rc = twheel_mod(w, &direct_t, twheel_now(w) + 5);
}

static void direct_arm_on_a_hosts_wheel_is_reported(void **state)
{
	static const struct twheel_host_ops ops = { counting_arm, host_stop };
	struct twheel_host h;
	struct twheel *w;
	struct tw_timer first;

	(void)state;
	assert_int_equal(twheel_host_init(&h, NULL, &ops), 0);
	w = twheel_host_wheel(&h);
	direct_h = &h;
	tw_timer_init(&direct_t, noop);
	tw_timer_init(&first, arm_directly);
	reports = 0;
	assert_int_equal(twheel_add(w, &direct_t, twheel_now(w) + 5), -EINVAL);
	assert_int_equal(twheel_mod(w, &direct_t, twheel_now(w) + 5), -EINVAL);
	assert_int_equal(twheel_park(w, &direct_t, 5000000), -EINVAL);
	assert_int_equal(twheel_park_hint(w, &direct_t, 5000000, twheel_now(w) + 300), -EINVAL);
	assert_int_equal(reports, 4);
	assert_non_null(strstr(last, "host's wheel"));
	assert_false(tw_timer_pending(&direct_t));
	assert_int_equal(twheel_count(w), 0);
	/* the host's own arms are not reported; a direct cancel is not either */
	assert_int_equal(twheel_host_add_at(&h, &first, 0), 0);
	assert_int_equal(host_arms, 1);
	assert_int_equal(twheel_host_add(&h, &direct_t, 1000000000), 0);
	assert_int_equal(twheel_del(w, &direct_t), 1);
	assert_int_equal(reports, 4);
	/* from the run's callback: allowed, and the host timer re-armed for it */
	assert_int_equal(twheel_host_run(&h), 1);
	assert_int_equal(direct_rc, 0);
	assert_true(tw_timer_pending(&direct_t));
	assert_int_equal(host_arms, 2);
	assert_int_equal(reports, 4);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(uninitialised_timer_is_reported, setup),
		cmocka_unit_test_setup(all_zero_timer_is_reported_by_every_arm, setup),
		cmocka_unit_test_setup(all_zero_timer_is_reported_by_move, setup),
		cmocka_unit_test_setup(stale_bytes_of_an_idle_timer_are_not_pending, setup),
		cmocka_unit_test_setup(stale_bytes_of_other_objects_are_not_pending, setup),
		cmocka_unit_test_setup(timer_pending_on_another_wheel_is_reported, setup),
		cmocka_unit_test_setup(destroying_wheel_with_pending_timers_is_reported, setup),
		cmocka_unit_test_setup(reinitialising_pending_timer_is_reported, setup),
		cmocka_unit_test_setup(reinitialising_pending_timer_is_reported_wherever_it_waits, setup),
		cmocka_unit_test_setup(destroy_or_drain_from_a_callback_is_reported, setup),
		cmocka_unit_test_setup(default_handler_restored_by_null, setup),
		cmocka_unit_test_setup(timer_pending_on_another_host_is_reported, setup),
		cmocka_unit_test_setup(direct_arm_on_a_hosts_wheel_is_reported, setup),
	};
	return cmocka_run_group_tests_name("debug_checks", tests, NULL, NULL);
}
