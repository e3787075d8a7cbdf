/*
 * test_timer_list - <twheel/compat/timer_list.h> against the promises of
 * the kernel-doc of kernel/time/timer.c and <linux/jiffies.h> (Linux 6.x),
 * each quoted (shortly) beside its test, on a plain wheel that the test
 * advances tick by tick: one tick is one jiffy.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* before the header, as C programs include it: glibc's defines HZ as 100
 * (times()'s tick rate), which the kernel's HZ replaces */
#include <sys/param.h>

#include <twheel/compat/timer_list.h>
#include <twheel/host.h>

#define WHEEL_FIXTURE_START 12345
#include "wheel_fixture.h"

struct obj {
	int fired;
	unsigned long fired_at;  /* jiffies inside the callback */
	int pending_inside;      /* timer_pending() inside the callback */
	int rearm;               /* re-arms left (from the callback) */
	int action;              /* what the callback does, see cb() */
	int rc;                  /* what that call returned */
	struct obj *other;       /* DELETE_OTHER's victim */
	struct timer_list timer;
};

enum {
	NOTHING,
	REARM_THEN_DELETE_SYNC,
	SHUTDOWN_THEN_REARM,
	TRY_DEL,
	REARM_THEN_DELETE,
	REARM_THEN_TRY_DEL,
	DELETE_OTHER,
	FREE_SELF,
	MOVE_OTHER,
	REDUCE_OTHER_INTO_THE_PAST,
	PUSH_OTHER_IF_PENDING,
};

static void cb(struct timer_list *t)
{
	struct obj *o = from_timer(o, t, timer);

	o->fired++;
	o->fired_at = jiffies;
	o->pending_inside = timer_pending(t);
	switch (o->action) {
	case REARM_THEN_DELETE_SYNC:
		mod_timer(t, jiffies + 5);
		o->rc = timer_delete_sync(t);
		break;
	case REARM_THEN_DELETE:
		mod_timer(t, jiffies + 5);
		o->rc = del_timer(t);
		break;
	case SHUTDOWN_THEN_REARM:
		o->rc = timer_shutdown_sync(t);
		mod_timer(t, jiffies + 1);
		break;
	case TRY_DEL:
		o->rc = try_to_del_timer_sync(t);
		break;
	case REARM_THEN_TRY_DEL:
		mod_timer(t, jiffies + 5);
		o->rc = try_to_del_timer_sync(t);
		break;
	case DELETE_OTHER:
		o->rc = timer_delete(&o->other->timer);
		break;
	case FREE_SELF:
		free(o);
		return;
	case MOVE_OTHER:
		o->rc = mod_timer(&o->other->timer, jiffies + 10);
		break;
	case REDUCE_OTHER_INTO_THE_PAST:
		o->rc = timer_reduce(&o->other->timer, jiffies - 5);
		break;
	case PUSH_OTHER_IF_PENDING:
		o->rc = mod_timer_pending(&o->other->timer, jiffies + 10);
		break;
	}
	if (o->rearm > 0) {
		o->rearm--;
		mod_timer(t, jiffies + 10);
	}
}

static void new_obj(struct obj *o)
{
	*o = (struct obj){ 0 };
	timer_setup(&o->timer, cb, 0);
}

/* jiffies.h: INITIAL_JIFFIES ((unsigned long)(unsigned int) (-300*HZ)):
 * "Have the 32 bit jiffies value wrap 5 minutes after boot so jiffies wrap
 * bugs show up earlier." */
static void jiffies_start_five_minutes_before_the_wrap(void **state)
{
	(void)state;
	assert_int_equal(HZ, TWHEEL_COMPAT_HZ); /* not <sys/param.h>'s 100 */
	assert_int_equal(INITIAL_JIFFIES, 4294967296ul - 300ul * HZ);
	assert_int_equal(jiffies, INITIAL_JIFFIES);
	step(300ul * HZ - 1);
	assert_int_equal((unsigned int)jiffies, UINT32_MAX);
	step(1);
	assert_int_equal((unsigned int)jiffies, 0);
	assert_int_equal(jiffies, 1ul << 32);
}

/* A wrap bug shows as it does in the kernel: a deadline kept in 32 bits
 * and compared with < is wrong across the wrap; time_after() is right. */
static void jiffies_wrap_bug_shows_and_time_after_survives_it(void **state)
{
	struct obj o;
	unsigned int deadline32;

	(void)state;
	new_obj(&o);
	step(300ul * HZ - 10); /* 10 jiffies before the 32-bit wrap */
	deadline32 = (unsigned int)(jiffies + 20);
	o.timer.expires = jiffies + 20;
	add_timer(&o.timer);
	assert_true((unsigned int)jiffies > deadline32); /* the naive test says "passed" */
	assert_false(time_after(jiffies, o.timer.expires));
	step(19);
	assert_int_equal(o.fired, 0);
	assert_true(time_before(jiffies, o.timer.expires));
	step(1);
	assert_int_equal(o.fired, 1);
	assert_int_equal((unsigned int)o.fired_at, deadline32);
	assert_true(time_after_eq(jiffies, o.timer.expires));
}

/* "time_after(a,b) returns true if the time a is after time b." and the
 * same across the wrap of unsigned long. */
static void time_after_before_eq(void **state)
{
	unsigned long a = ULONG_MAX - 2, b = 3; /* b is 6 after a, across the wrap */

	(void)state;
	assert_true(time_after(b, a));
	assert_false(time_after(a, b));
	assert_true(time_before(a, b));
	assert_false(time_before(b, a));
	assert_true(time_after_eq(b, a) && time_after_eq(a, a));
	assert_true(time_before_eq(a, b) && time_before_eq(b, b));
	assert_false(time_after(a, a) || time_before(a, a));
	assert_true(time_is_after_jiffies(jiffies + 1));
	assert_true(time_is_before_jiffies(jiffies - 1));
	assert_true(time_is_after_eq_jiffies(jiffies) && time_is_before_eq_jiffies(jiffies));
}

/* READ_ONCE(jiffies), as kernel code reads it (the kernel's definition
 * takes the address): it compiles and reads the current time, every time. */
#define TEST_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
static void read_once_jiffies_reads_now(void **state)
{
	unsigned long j0 = TEST_READ_ONCE(jiffies);
	unsigned long long j64 = TEST_READ_ONCE(jiffies_64);

	(void)state;
	assert_true(j0 == jiffies && j64 == get_jiffies_64());
	step(3);
	assert_true(TEST_READ_ONCE(jiffies) == j0 + 3);
	assert_true(TEST_READ_ONCE(jiffies_64) == j64 + 3);
	assert_true(*&jiffies == j0 + 3);
}

/* time_in_range(a,b,c): "Calculate whether a is in the range of [b, c]";
 * _open: [b, c); the _64 forms in 64 bits. All across the wrap. */
static void time_in_range_and_64_bit_forms(void **state)
{
	unsigned long b = ULONG_MAX - 2, c = 3; /* [b, c] holds 7 values, across the wrap */
	unsigned long long b64 = ULLONG_MAX - 2, c64 = 3; /* u64: unsigned long long */

	(void)state;
	assert_true(time_in_range(b, b, c) && time_in_range(0UL, b, c) && time_in_range(c, b, c));
	assert_false(time_in_range(b - 1, b, c) || time_in_range(c + 1, b, c));
	assert_true(time_in_range_open(b, b, c) && time_in_range_open(c - 1, b, c));
	assert_false(time_in_range_open(c, b, c));
	assert_true(time_after64(c64, b64) && !time_after64(b64, c64));
	assert_true(time_before64(b64, c64) && !time_before64(c64, b64));
	assert_true(time_after_eq64(c64, b64) && time_after_eq64(b64, b64));
	assert_true(time_before_eq64(b64, c64) && time_before_eq64(c64, c64));
	assert_false(time_after64(b64, b64) || time_before64(b64, b64));
	/* 64 bits, not unsigned long truncated to 32: 2^32 apart is after */
	assert_true(time_after64(1ULL << 32, 0ULL));
	assert_true(time_in_range64(0ULL, b64, c64) && !time_in_range64(c64 + 1, b64, c64));
	assert_true(jiffies_64 == get_jiffies_64() && jiffies_64 == (uint64_t)jiffies);
	/* u64, the kernel's type of both, is unsigned long long on every
	 * architecture: kernel code prints them with %llu */
	assert_true(_Generic(get_jiffies_64(), unsigned long long: 1, default: 0));
	assert_true(_Generic(jiffies_64, unsigned long long: 1, default: 0));
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", jiffies_64);
	assert_int_equal(strtoull(buf, NULL, 10), jiffies);
	assert_true(time_is_after_jiffies64(jiffies_64 + 1) && time_is_before_jiffies64(jiffies_64 - 1));
	assert_true(time_is_after_eq_jiffies64(jiffies_64) && time_is_before_eq_jiffies64(jiffies_64));
}

/* add_timer: "Start @timer to expire at @timer->expires in the future.
 * @timer->expires is the absolute expiry time measured in 'jiffies'." */
static void add_timer_fires_when_jiffies_reach_expires(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	o.timer.expires = jiffies + 100;
	add_timer(&o.timer);
	assert_true(timer_pending(&o.timer));
	step(99);
	assert_int_equal(o.fired, 0);
	step(1);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.fired_at, o.timer.expires);
	/* timer_pending: the callback runs with the timer detached */
	assert_int_equal(o.pending_inside, 0);
	assert_false(timer_pending(&o.timer));
}

/* Exact, far away too: the kernel's wheel would round this up by 12.5%. */
static void far_timer_fires_exactly(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	mod_timer(&o.timer, jiffies + 5000000);
	twheel_advance(w, twheel_now(w) + 4999999);
	assert_int_equal(o.fired, 0);
	twheel_advance(w, twheel_now(w) + 1);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.fired_at, o.timer.expires);
}

/* add_timer: "If @timer->expires is already in the past @timer will be
 * queued to expire at the next timer tick." */
static void add_timer_in_the_past_fires_at_the_next_tick(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	step(50);
	o.timer.expires = jiffies - 30;
	add_timer(&o.timer);
	assert_true(timer_pending(&o.timer));
	assert_int_equal(step(1), 1);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.timer.expires, o.fired_at - 31); /* expires is kept as given */
}

/* add_timer: "This can only operate on an inactive timer. Attempts to
 * invoke this on an active timer are rejected with a warning." */
static void add_timer_on_an_active_timer_is_rejected(void **state)
{
	struct obj o;
	unsigned long first;

	(void)state;
	new_obj(&o);
	o.timer.expires = first = jiffies + 10;
	add_timer(&o.timer);
	o.timer.expires = jiffies + 3; /* the caller scribbles, then adds again */
	add_timer(&o.timer);
	step(9);
	assert_int_equal(o.fired, 0); /* not moved to +3 */
	step(1);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.fired_at, first);
}

/* add_timer_local(), add_timer_on(): "Same as add_timer() except that the
 * timer flag TIMER_PINNED is set"; add_timer_global(): "is unset". */
static void add_timer_local_and_global_set_the_pinned_flag(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	o.timer.expires = jiffies + 2;
	add_timer_local(&o.timer);
	assert_int_equal(o.timer.flags, TIMER_PINNED);
	add_timer_global(&o.timer); /* active: left as it is, flags too */
	assert_int_equal(o.timer.flags, TIMER_PINNED);
	step(2);
	assert_int_equal(o.fired, 1);
	o.timer.expires = jiffies + 2;
	add_timer_global(&o.timer);
	assert_int_equal(o.timer.flags, 0);
	step(2);
	assert_int_equal(o.fired, 2);
	o.timer.expires = jiffies + 1;
	add_timer_on(&o.timer, 3);
	assert_int_equal(o.timer.flags, TIMER_PINNED);
	step(1);
	assert_int_equal(o.fired, 3);
	timer_destroy_on_stack(&o.timer);
}

/* destroy_timer_on_stack() with the timer still pending: the kernel's
 * CONFIG_DEBUG_OBJECTS_TIMERS deletes it ("ODEBUG: free active", then
 * debug_timer_fixup_free()'s del_timer_sync()); without it the kernel's
 * wheel keeps a timer on a stack that is gone. Here it is deleted. */
static void __attribute__((noinline)) stack_timer_left_pending(int *pending)
{
	struct obj o;

	new_obj(&o);
	timer_setup_on_stack(&o.timer, cb, 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + 3), 0);
	destroy_timer_on_stack(&o.timer);
	*pending = timer_pending(&o.timer);
}

static void destroy_on_stack_deletes_a_pending_timer(void **state)
{
	int pending = -1;

	(void)state;
	stack_timer_left_pending(&pending);
	assert_int_equal(pending, 0);
	assert_int_equal(twheel_count(w), 0);
	assert_int_equal(step(5), 0);
}

/* add_timer: "If @timer->function == NULL then the start operation is
 * silently discarded." */
static void add_timer_without_function_is_discarded(void **state)
{
	struct timer_list t = { 0 };

	(void)state;
	t.expires = jiffies + 1;
	add_timer(&t);
	assert_false(timer_pending(&t));
	assert_int_equal(mod_timer(&t, jiffies + 1), 0);
	assert_false(timer_pending(&t));
}

/* mod_timer: "%0 - The timer was inactive and started ... %1 - The timer
 * was active and requeued to expire at @expires or the timer was active
 * and not modified because @expires did not change the effective expiry
 * time" */
static void mod_timer_returns_whether_it_was_pending(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	assert_int_equal(mod_timer(&o.timer, jiffies + 10), 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + 20), 1);
	assert_int_equal(mod_timer(&o.timer, jiffies + 20), 1); /* unchanged */
	assert_int_equal(o.timer.expires, jiffies + 20);
	step(19);
	assert_int_equal(o.fired, 0);
	step(1);
	assert_int_equal(o.fired, 1);
	assert_int_equal(mod_timer(&o.timer, jiffies + 1), 0); /* fired: inactive */
	assert_int_equal(timer_delete(&o.timer), 1);
}

/* mod_timer: "mod_timer(timer, expires) is equivalent to: del_timer(timer);
 * timer->expires = expires; add_timer(timer);" -- earlier, too. */
static void mod_timer_moves_earlier_and_later(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	mod_timer(&o.timer, jiffies + 1000);
	mod_timer(&o.timer, jiffies + 5);
	step(5);
	assert_int_equal(o.fired, 1);
	mod_timer(&o.timer, jiffies + 5);
	mod_timer(&o.timer, jiffies + 1000);
	step(999);
	assert_int_equal(o.fired, 1);
	step(1);
	assert_int_equal(o.fired, 2);
}

/* mod_timer_pending: "the same for pending timers as mod_timer(), but will
 * not activate inactive timers." "%0 - The timer was inactive and not
 * modified" "%1 - The timer was active and requeued to expire at @expires" */
static void mod_timer_pending_leaves_inactive_timers(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	assert_int_equal(mod_timer_pending(&o.timer, jiffies + 10), 0);
	assert_false(timer_pending(&o.timer));
	step(20);
	assert_int_equal(o.fired, 0);
	mod_timer(&o.timer, jiffies + 10);
	assert_int_equal(mod_timer_pending(&o.timer, jiffies + 30), 1);
	step(29);
	assert_int_equal(o.fired, 0);
	step(1);
	assert_int_equal(o.fired, 1);
}

/* timer_reduce: "only modify an enqueued timer if that would reduce the
 * expiration time. If @timer is not enqueued it starts the timer." */
static void timer_reduce_only_ever_earlier(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	assert_int_equal(timer_reduce(&o.timer, jiffies + 50), 0); /* started */
	assert_true(timer_pending(&o.timer));
	assert_int_equal(timer_reduce(&o.timer, jiffies + 80), 1); /* not later */
	assert_int_equal(o.timer.expires, jiffies + 50);
	assert_int_equal(timer_reduce(&o.timer, jiffies + 20), 1); /* earlier */
	assert_int_equal(o.timer.expires, jiffies + 20);
	step(20);
	assert_int_equal(o.fired, 1);
}

/* timer_delete: "%0 - The timer was not pending" "%1 - The timer was
 * pending and deactivated"; del_timer() is its old name. */
static void timer_delete_returns_and_the_timer_does_not_fire(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	assert_int_equal(timer_delete(&o.timer), 0);
	mod_timer(&o.timer, jiffies + 10);
	assert_int_equal(timer_delete(&o.timer), 1);
	assert_int_equal(del_timer(&o.timer), 0);
	assert_false(timer_pending(&o.timer));
	step(20);
	assert_int_equal(o.fired, 0);
	mod_timer(&o.timer, jiffies + 10);
	assert_int_equal(del_timer_sync(&o.timer), 1);
	step(20);
	assert_int_equal(o.fired, 0);
}

/* timer_delete_sync: "Upon exit the timer is not queued and the handler is
 * not running on any CPU." With one thread per wheel: from outside the
 * callback nothing runs; from its own callback, the re-arm it made is
 * deleted and the call returns at once (the kernel would wait forever). */
static void timer_delete_sync_from_its_own_callback(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	o.action = REARM_THEN_DELETE_SYNC;
	mod_timer(&o.timer, jiffies + 1);
	step(1);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.rc, 1); /* the re-arm was pending */
	assert_false(timer_pending(&o.timer));
	step(20);
	assert_int_equal(o.fired, 1);
}

/* Delete from the timer's own callback, after a re-arm there. */
static void delete_from_its_own_callback(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	o.action = REARM_THEN_DELETE;
	mod_timer(&o.timer, jiffies + 1);
	step(30);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.rc, 1);
}

/* Re-arm from the timer's own callback: a periodic timer, kernel style. */
static void rearm_from_its_own_callback(void **state)
{
	struct obj o;
	unsigned long start = jiffies;

	(void)state;
	new_obj(&o);
	o.rearm = 3;
	mod_timer(&o.timer, jiffies + 10);
	step(40);
	assert_int_equal(o.fired, 4);
	assert_int_equal(o.fired_at, start + 40);
	assert_false(timer_pending(&o.timer));
}

/* try_to_del_timer_sync: "%-1 - The timer callback function is running"
 * (on a different CPU in the kernel; here, it is the caller). */
static void try_to_del_timer_sync_from_its_callback_is_minus_one(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	assert_int_equal(try_to_del_timer_sync(&o.timer), 0);
	mod_timer(&o.timer, jiffies + 5);
	assert_int_equal(try_to_del_timer_sync(&o.timer), 1);
	o.action = TRY_DEL;
	mod_timer(&o.timer, jiffies + 1);
	step(1);
	assert_int_equal(o.rc, -1);
	/* "-1": the timer is not deactivated, so a re-arm the callback made
	 * stays pending (the kernel detaches only if it is not running). */
	o.action = REARM_THEN_TRY_DEL;
	mod_timer(&o.timer, jiffies + 1);
	step(1);
	assert_int_equal(o.rc, -1);
	assert_true(timer_pending(&o.timer));
	o.action = NOTHING;
	step(5);
	assert_int_equal(o.fired, 3);
	mod_timer(&o.timer, jiffies + 5);
	assert_int_equal(timer_delete_sync_try(&o.timer), 1); /* its later name */
}

/* timer_shutdown_sync: "@timer cannot be enqueued again. Any attempt to
 * rearm @timer is silently ignored." "%0 - The timer was not pending"
 * "%1 - The timer was pending"; "If the timer should be reused after
 * shutdown it has to be initialized again." */
static void timer_shutdown_sync_ignores_later_arms(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	mod_timer(&o.timer, jiffies + 10);
	assert_int_equal(timer_shutdown_sync(&o.timer), 1);
	assert_null(o.timer.function);
	assert_int_equal(mod_timer(&o.timer, jiffies + 1), 0);
	o.timer.expires = jiffies + 1;
	add_timer(&o.timer);
	assert_int_equal(timer_reduce(&o.timer, jiffies + 1), 0);
	assert_int_equal(mod_timer_pending(&o.timer, jiffies + 1), 0);
	assert_false(timer_pending(&o.timer));
	step(20);
	assert_int_equal(o.fired, 0);
	assert_int_equal(timer_shutdown_sync(&o.timer), 0);
	timer_setup(&o.timer, cb, 0);
	mod_timer(&o.timer, jiffies + 1);
	step(1);
	assert_int_equal(o.fired, 1);
}

/* timer_shutdown: "it prevents rearming of the timer. Any attempt to arm
 * @timer after this function returns will be silently ignored." */
static void timer_shutdown_ignores_later_arms(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	assert_int_equal(timer_shutdown(&o.timer), 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + 1), 0);
	step(5);
	assert_int_equal(o.fired, 0);
}

/* Shutdown from the timer's own callback: the callback's later re-arm is
 * ignored. */
static void shutdown_from_its_own_callback(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	o.action = SHUTDOWN_THEN_REARM;
	mod_timer(&o.timer, jiffies + 1);
	step(1);
	assert_int_equal(o.rc, 0);
	assert_false(timer_pending(&o.timer));
	step(10);
	assert_int_equal(o.fired, 1);
}

static int static_fired;
static void static_cb(struct timer_list *t)
{
	(void)t;
	static_fired++;
}
static DEFINE_TIMER(static_timer, static_cb);

/* DEFINE_TIMER: a timer of static storage, ready without timer_setup(). */
static void define_timer_is_ready(void **state)
{
	(void)state;
	assert_false(timer_pending(&static_timer));
	assert_int_equal(timer_delete(&static_timer), 0);
	static_timer.expires = jiffies + 2;
	add_timer(&static_timer);
	step(2);
	assert_int_equal(static_fired, 1);
}

/*
 * Kernel code of the timer_setup() era compiles unchanged with these
 * two: a timer inside a static initializer, __TIMER_INITIALIZER(function,
 * flags) (as random.c's and workqueue.h's are), ready without
 * timer_setup(); and del_singleshot_timer_sync(), del_timer_sync() under
 * another name until Linux 6.2 (schedule_timeout()'s, sunrpc's).
 */
static struct {
	int seen;
	struct timer_list timer;
} static_mix = { .seen = 0, .timer = __TIMER_INITIALIZER(static_cb, TIMER_DEFERRABLE) };

static void static_initializer_and_singleshot_delete(void **state)
{
	int before = static_fired;

	(void)state;
	assert_int_equal(static_mix.timer.flags, TIMER_DEFERRABLE);
	assert_false(timer_pending(&static_mix.timer));
	assert_int_equal(mod_timer(&static_mix.timer, jiffies + 3), 0);
	assert_int_equal(del_singleshot_timer_sync(&static_mix.timer), 1);
	assert_int_equal(del_singleshot_timer_sync(&static_mix.timer), 0);
	assert_int_equal(mod_timer(&static_mix.timer, jiffies + 3), 0);
	step(3);
	assert_int_equal(static_fired, before + 1);
}

#if TWHEEL_DEBUG_CHECKS
static int reinit_reports;
static void reinit_misuse(const char *what)
{
	assert_non_null(strstr(what, "pending"));
	reinit_reports++;
}

static void other_cb(struct timer_list *t)
{
	(void)t;
	fail_msg("the re-initialisation took");
}
#endif

/* timer_setup() on a pending timer: the kernel's CONFIG_DEBUG_OBJECTS_TIMERS
 * warns ("ODEBUG: init active"); without it the wheel is corrupted. A
 * -Ddebug_checks build reports it and, if the handler returns, leaves the
 * timer as it was: pending, its function and flags, and it fires once. */
static void setup_of_a_pending_timer_is_reported(void **state)
{
	(void)state;
#if TWHEEL_DEBUG_CHECKS
	struct obj o;
	twheel_misuse_fn old = twheel_set_misuse_handler(reinit_misuse);

	reinit_reports = 0;
	new_obj(&o);
	assert_int_equal(mod_timer(&o.timer, jiffies + 5), 0);
	timer_setup(&o.timer, other_cb, TIMER_DEFERRABLE);
	twheel_set_misuse_handler(old);
	assert_int_equal(reinit_reports, 1);
	assert_true(timer_pending(&o.timer));
	assert_true(o.timer.function == cb);
	assert_int_equal(o.timer.flags, 0);
	step(5);
	assert_int_equal(o.fired, 1);
	assert_false(timer_pending(&o.timer));
#else
	skip(); /* a release build cannot tell a pending timer from garbage */
#endif
}

/* timer_setup() sets function and flags ("do_init_timer"), not expires:
 * code that fills in expires first, then sets the timer up and adds it,
 * keeps its expiry. */
static void timer_setup_keeps_expires(void **state)
{
	struct obj o = { 0 };

	(void)state;
	o.timer.expires = jiffies + 7;
	timer_setup(&o.timer, cb, 0);
	add_timer(&o.timer);
	step(6);
	assert_int_equal(o.fired, 0);
	step(1);
	assert_int_equal(o.fired, 1);
}

/* A callback deletes another timer due at the same tick, not run yet: it
 * is still pending ("%1 - The timer was pending and deactivated") and does
 * not run. */
static void delete_another_timer_due_at_the_same_tick(void **state)
{
	struct obj a, b;

	(void)state;
	new_obj(&a);
	new_obj(&b);
	a.action = DELETE_OTHER;
	a.other = &b;
	b.action = DELETE_OTHER;
	b.other = &a;
	mod_timer(&a.timer, jiffies + 3);
	mod_timer(&b.timer, jiffies + 3);
	assert_int_equal(step(3), 1);
	assert_int_equal(a.fired + b.fired, 1);
	assert_int_equal(a.fired ? a.rc : b.rc, 1);
	assert_false(timer_pending(&a.timer) || timer_pending(&b.timer));
}

/* A callback that moves another timer due at the same tick, which the
 * advance has not run yet (rc 1: it was pending) or has run already (rc
 * 0), as a driver's completion pushes back its watchdog: mod_timer()
 * moves it off this tick ("equivalent to del_timer(); ...; add_timer()");
 * timer_reduce() into the past queues it for the next tick, as the
 * kernel's wheel, whose clock has passed this tick, does; mod_timer_pending()
 * moves it only if it has not run. Either order gives the same ends. */
static void rearm_another_timer_due_at_the_same_tick(void **state)
{
	static const struct {
		int action;
		unsigned long last_at; /* the other's last run, after this tick */
	} cases[] = { { MOVE_OTHER, 10 }, { REDUCE_OTHER_INTO_THE_PAST, 1 }, { PUSH_OTHER_IF_PENDING, 10 } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int first = 0; first < 2; first++) {
			struct obj a, b;
			unsigned long t;

			new_obj(&a);
			new_obj(&b);
			a.action = cases[i].action;
			a.other = &b;
			t = jiffies + 3;
			mod_timer(first ? &b.timer : &a.timer, t);
			mod_timer(first ? &a.timer : &b.timer, t);
			step(3);
			assert_int_equal(a.fired, 1);
			assert_true(a.rc == 0 || a.rc == 1);
			assert_int_equal(b.fired, !a.rc); /* run already, or moved */
			assert_true(!b.fired || b.fired_at == t);
			if (cases[i].action == PUSH_OTHER_IF_PENDING && !a.rc) {
				assert_false(timer_pending(&b.timer)); /* not started */
				continue;
			}
			assert_true(timer_pending(&b.timer));
			assert_int_equal(b.timer.expires, cases[i].action == MOVE_OTHER || cases[i].action == PUSH_OTHER_IF_PENDING ? t + 10 : t - 5);
			step(cases[i].last_at - 1);
			assert_int_equal(b.fired, !a.rc);
			step(1);
			assert_int_equal(b.fired, !a.rc + 1);
			assert_int_equal(b.fired_at, t + cases[i].last_at);
			assert_false(timer_pending(&b.timer));
		}
	}
}

/* Expiries at the ends of the jiffies arithmetic: jiffies + LONG_MAX is
 * the farthest future time_after() can tell (pending, not fired), one
 * more wraps into the past (the next tick, as the kernel queues a
 * negative delta), as does jiffies + ULONG_MAX, jiffies - 1. */
static void expiries_at_the_ends_of_the_arithmetic(void **state)
{
	struct obj o;
	unsigned long far;

	(void)state;
	new_obj(&o);
	far = jiffies + LONG_MAX;
	assert_int_equal(mod_timer(&o.timer, far), 0);
	assert_true(timer_pending(&o.timer));
	assert_true(o.timer.expires == far);
	assert_true(time_after(far, jiffies));
	twheel_advance(w, twheel_now(w) + 5000000);
	assert_int_equal(o.fired, 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + (unsigned long)LONG_MAX + 1), 1);
	assert_int_equal(step(1), 1);
	assert_int_equal(mod_timer(&o.timer, jiffies + ULONG_MAX), 0);
	assert_int_equal(step(1), 1);
	assert_int_equal(o.fired, 2);
	assert_int_equal(timer_reduce(&o.timer, jiffies + MAX_JIFFY_OFFSET), 0);
	assert_int_equal(timer_reduce(&o.timer, jiffies + LONG_MAX), 1); /* later: unchanged */
	assert_true(o.timer.expires == jiffies + MAX_JIFFY_OFFSET);
	assert_int_equal(timer_delete_sync(&o.timer), 1);
}

/* A callback frees the struct its timer is in (the kernel's usual end of
 * an object); the sanitizer build checks that nothing touches it after. */
static void callback_frees_its_own_struct(void **state)
{
	struct obj *o = malloc(sizeof(*o));

	(void)state;
	assert_non_null(o);
	new_obj(o);
	o->action = FREE_SELF;
	mod_timer(&o->timer, jiffies + 2);
	assert_int_equal(step(2), 1);
}

/* from_timer() and timer_container_of(): the struct around the timer. */
static void container_of_the_timer(void **state)
{
	struct obj o, *p = NULL, *q = NULL;

	(void)state;
	p = from_timer(p, &o.timer, timer);
	q = timer_container_of(q, &o.timer, timer);
	assert_ptr_equal(p, &o);
	assert_ptr_equal(q, &o);
}

/* timer_setup flags: TIMER_DEFERRABLE, TIMER_PINNED, TIMER_IRQSAFE are
 * accepted and kept in ->flags (the kernel masks others, with a warning);
 * on a plain wheel a deferrable timer fires on time. */
static void timer_setup_flags_accepted(void **state)
{
	struct obj o = { 0 };

	(void)state;
	timer_setup(&o.timer, cb, TIMER_DEFERRABLE | TIMER_PINNED | TIMER_IRQSAFE | 0x7u);
	assert_int_equal(o.timer.flags, TIMER_DEFERRABLE | TIMER_PINNED | TIMER_IRQSAFE);
	mod_timer(&o.timer, jiffies + 3);
	step(3);
	assert_int_equal(o.fired, 1);
}

/* secs_to_jiffies (Linux 6.13, in place of msecs_to_jiffies(s * 1000)
 * since): "Conversion is done by simple multiplication with HZ", "a macro
 * rather than a static inline function so it can be used in static
 * initializers". */
static const unsigned long keepalive_period = secs_to_jiffies(75);

/* msecs_to_jiffies: "negative values mean 'infinite timeout'
 * (MAX_JIFFY_OFFSET)"; others are converted, rounded up. */
static void conversions(void **state)
{
	(void)state;
	assert_int_equal(keepalive_period, 75ul * HZ);
	assert_int_equal(secs_to_jiffies(0), 0);
	assert_int_equal(secs_to_jiffies(3u), msecs_to_jiffies(3000));
	assert_int_equal(msecs_to_jiffies(0), 0);
	assert_int_equal(msecs_to_jiffies(1), 1);
	assert_int_equal(msecs_to_jiffies(1500), 1500ul * HZ / 1000);
	assert_int_equal(msecs_to_jiffies((unsigned int)-1), MAX_JIFFY_OFFSET);
	assert_int_equal(msecs_to_jiffies(0x80000000u), MAX_JIFFY_OFFSET);
	assert_int_equal(usecs_to_jiffies(1), 1);
	assert_int_equal(usecs_to_jiffies(1000000), HZ);
	assert_int_equal(usecs_to_jiffies(1000001), HZ + 1);
	assert_int_equal(jiffies_to_msecs(HZ), 1000);
	assert_int_equal(jiffies_to_usecs(HZ), 1000000);
	assert_int_equal(MAX_JIFFY_OFFSET, (LONG_MAX >> 1) - 1);
	/* Rounded up, at any HZ (the kernel's generic conversions, for an HZ
	 * that neither divides 1000 nor is a multiple of it): the least whole
	 * number of jiffies, or of milliseconds, not shorter than the value. */
	for (unsigned int m = 0; m < 5000; m += 7) {
		uint64_t j = msecs_to_jiffies(m);

		assert_true(j * 1000 >= (uint64_t)m * HZ);
		assert_true(j == 0 || (j - 1) * 1000 < (uint64_t)m * HZ);
	}
	for (unsigned long j = 0; j < 5000; j += 7) {
		uint64_t m = jiffies_to_msecs(j);

		assert_true(m * HZ >= j * 1000);
		assert_true(m == 0 || (m - 1) * HZ < j * 1000);
	}
	assert_int_equal(msecs_to_jiffies(INT_MAX), ((uint64_t)INT_MAX * HZ + 999) / 1000);
}

/* kernel/time/time.c: jiffies64_to_nsecs(), jiffies64_to_msecs(),
 * nsecs_to_jiffies64() (rounded down; "this doesn't return
 * MAX_JIFFY_OFFSET since this function is designed for scheduler"),
 * nsecs_to_jiffies() "Convert nsecs in u64 to jiffies"; <linux/jiffies.h>:
 * jiffies_to_nsecs() is jiffies_to_usecs(j) * NSEC_PER_USEC,
 * jiffies_delta_to_msecs() is jiffies_to_msecs(max(0L, delta)). */
static void conversions_in_64_bits(void **state)
{
	const unsigned long long ns_per_jiffy = 1000000000ull / HZ;

	(void)state;
	assert_true(_Generic(jiffies64_to_nsecs(1), unsigned long long: 1, default: 0));
	assert_true(_Generic(jiffies64_to_msecs(1), unsigned long long: 1, default: 0));
	assert_true(_Generic(nsecs_to_jiffies64(1), unsigned long long: 1, default: 0));
	assert_true(_Generic(jiffies_to_nsecs(1), unsigned long long: 1, default: 0));
	assert_true(jiffies64_to_nsecs(HZ) == 1000000000ull);
	assert_true(jiffies64_to_msecs(3ull * HZ) == 3000);
	assert_true(jiffies64_to_msecs(1ull << 40) == (1ull << 40) * 1000 / HZ);
	assert_true(nsecs_to_jiffies64(1000000000ull) == HZ);
	assert_true(jiffies_to_nsecs(HZ) == 1000000000ull);
	assert_int_equal(jiffies_delta_to_msecs(-5), 0);
	assert_int_equal(jiffies_delta_to_msecs(0), 0);
	assert_int_equal(jiffies_delta_to_msecs(HZ), 1000);
	assert_int_equal(jiffies_delta_to_msecs((long)(jiffies - (jiffies - HZ))), 1000);
	for (unsigned long long j = 0; j < 5000; j += 7) {
		assert_true(jiffies64_to_msecs(j) == j * 1000 / HZ);       /* down */
		assert_true(jiffies64_to_msecs(j) <= jiffies_to_msecs(j)); /* that one up */
	}
	if (1000000000 % HZ != 0)
		return; /* a jiffy of whole nanoseconds from here on (HZ 300:
			 * the kernel's values are conversions.c's) */
	assert_true(jiffies64_to_nsecs(1ull << 40) == (1ull << 40) * ns_per_jiffy); /* past 32 bits */
	assert_true(nsecs_to_jiffies64(ns_per_jiffy - 1) == 0); /* down */
	assert_true(nsecs_to_jiffies64(UINT64_MAX) == UINT64_MAX / ns_per_jiffy);
	assert_true(nsecs_to_jiffies(UINT64_MAX) == (unsigned long)(UINT64_MAX / ns_per_jiffy));
	assert_true(jiffies_to_nsecs(7) == 7 * ns_per_jiffy);
	for (unsigned long long j = 0; j < 5000; j += 7) {
		assert_true(nsecs_to_jiffies64(jiffies64_to_nsecs(j)) == j);
		assert_true(nsecs_to_jiffies64(jiffies64_to_nsecs(j) + ns_per_jiffy - 1) == j);
	}
}

/* round_jiffies: "rounds an absolute time in the future (in jiffies) up or
 * down to (approximately) full seconds"; down within a quarter second after
 * one; "Make sure j is still in the future. Otherwise return the unmodified
 * value." */
static void round_jiffies_to_whole_seconds(void **state)
{
	unsigned long s;

	(void)state;
	s = (jiffies / HZ + 5) * HZ; /* a whole second, 5 s ahead at least 4 */
	assert_int_equal(round_jiffies(s + HZ / 4 - 1), s);     /* down */
	assert_int_equal(round_jiffies(s + HZ / 4), s + HZ);    /* up */
	assert_int_equal(round_jiffies(s - 1), s);              /* up */
	assert_int_equal(round_jiffies_up(s + 1), s + HZ);      /* never down */
	unsigned long past = (jiffies / HZ - 1) * HZ + 1; /* rounds down, into the past */
	assert_int_equal(round_jiffies(past), past);          /* unmodified */
	unsigned long r = round_jiffies_relative(3 * HZ);
	assert_int_equal((jiffies + r) % HZ, 0);
	assert_true(r > 2 * HZ && r <= 4 * HZ);
	assert_true(round_jiffies_up_relative(1) >= 1);
	assert_int_equal((jiffies + round_jiffies_up_relative(1)) % HZ, 0);
}

/* __round_jiffies(j, cpu) and the other __ forms: "The exact rounding is
 * skewed for each processor to avoid all processors firing at the exact
 * same time": round_jiffies_common() adds cpu * 3, rounds, and takes it
 * off again. round_jiffies() and friends are these on CPU 0 here. */
static void round_jiffies_skewed_by_cpu(void **state)
{
	unsigned long s;

	(void)state;
	s = (jiffies / HZ + 5) * HZ; /* a whole second, 5 s ahead at least 4 */
	assert_int_equal(__round_jiffies(s + 10, 0), round_jiffies(s + 10));
	assert_int_equal(__round_jiffies(s + 10, 2), s - 6);              /* down, skewed */
	assert_int_equal(round_jiffies(s + HZ / 4 - 2), s);                /* down on CPU 0 */
	assert_int_equal(__round_jiffies(s + HZ / 4 - 2, 1), s + HZ - 3); /* up on CPU 1 */
	assert_int_equal(__round_jiffies_up(s + 10, 2), s + HZ - 6);      /* never down */
	assert_int_equal(__round_jiffies_up(s - 6, 2), s + HZ - 6);       /* up even if whole */
	unsigned long past = (jiffies / HZ - 1) * HZ + 1;
	assert_int_equal(__round_jiffies(past, 3), past); /* into the past: unmodified */
	unsigned long r = __round_jiffies_relative(3 * HZ, 1);
	assert_int_equal((jiffies + r + 3) % HZ, 0);
	assert_true(r > 2 * HZ - 3 && r <= 4 * HZ);
	r = __round_jiffies_up_relative(1, 5);
	assert_int_equal((jiffies + r + 15) % HZ, 0);
	assert_true(r >= 1);
	assert_int_equal(__round_jiffies_relative(3 * HZ, 0), round_jiffies_relative(3 * HZ));
}

/* ---- threads -------------------------------------------------------------- */

struct other {
	struct timer_list *t;
	unsigned long expires;   /* t's, read by the test's thread */
	int del, mod, mod_unbound, pending, mod_same, reduce_later, mod_pending;
	unsigned long jiffies_unbound;
	struct twheel *w2;
};

static void *other_thread(void *arg)
{
	struct other *x = arg;
	struct timer_list mine;

	x->jiffies_unbound = jiffies;
	x->mod_unbound = mod_timer(x->t, jiffies + 1);    /* pending elsewhere: -EXDEV */
	timer_setup(&mine, cb, 0);
	x->pending = mod_timer(&mine, jiffies + 1);       /* unbound: -ENXIO */
	x->w2 = twheel_create(0);
	twheel_compat_bind_wheel(x->w2);
	x->del = timer_delete(x->t);
	x->mod = mod_timer(x->t, jiffies + 1);
	/* the kernel's shortcuts (expiry unchanged, or not earlier) too */
	x->mod_same = mod_timer(x->t, x->expires);
	x->reduce_later = timer_reduce(x->t, x->expires + 5);
	x->mod_pending = mod_timer_pending(x->t, x->expires);
	twheel_compat_unbind();
	twheel_destroy(x->w2);
	return NULL;
}

/* A call from another thread on a pending timer returns -EXDEV and changes
 * nothing; an arm on an unbound thread returns -ENXIO. */
static void another_thread_is_refused(void **state)
{
	struct obj o;
	struct other x = { .t = &o.timer };
	pthread_t th;
	char msg[128];

	(void)state;
	new_obj(&o);
	mod_timer(&o.timer, jiffies + 10);
	x.expires = o.timer.expires;
	assert_int_equal(pthread_create(&th, NULL, other_thread, &x), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(x.jiffies_unbound, INITIAL_JIFFIES);
	assert_int_equal(x.mod_unbound, -EXDEV);
	assert_int_equal(x.pending, -ENXIO);
	assert_int_equal(x.del, -EXDEV);
	assert_int_equal(x.mod, -EXDEV);
	assert_int_equal(x.mod_same, -EXDEV);
	assert_int_equal(x.reduce_later, -EXDEV);
	assert_int_equal(x.mod_pending, -EXDEV);
	assert_true(timer_pending(&o.timer));
	assert_int_equal(twheel_check(w, msg, sizeof(msg)), 0);
	step(10);
	assert_int_equal(o.fired, 1);
}

/* What @fn(@arg) writes to stderr, run on a new thread, into @out. */
static void stderr_of_thread(void *(*fn)(void *), void *arg, char *out, size_t n)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	pthread_t th;

	assert_non_null(tmp);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fileno(tmp), 2), 2);
	assert_int_equal(pthread_create(&th, NULL, fn, arg), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	rewind(tmp);
	size_t got = fread(out, 1, n - 1, tmp);
	out[got] = '\0';
	fclose(tmp);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

struct lost_arms {
	int add_fired, mod, mod_again;
};

static void lost_cb(struct timer_list *t)
{
	(void)t;
}

/* On a thread that bound nothing: add_timer() (no return), mod_timer() twice. */
static void *arm_unbound(void *arg)
{
	struct lost_arms *x = arg;
	struct timer_list a, b;

	timer_setup(&a, lost_cb, 0);
	timer_setup(&b, lost_cb, 0);
	a.expires = jiffies + 1;
	add_timer(&a);
	x->add_fired = timer_pending(&a);
	x->mod = mod_timer(&b, jiffies + 1);
	x->mod_again = mod_timer(&b, jiffies + 2);
	return NULL;
}

/* On a thread whose bound wheel was destroyed: two arms. */
static void *arm_on_destroyed(void *arg)
{
	struct lost_arms *x = arg;
	struct twheel *w2 = twheel_create(0);
	struct timer_list a;

	twheel_compat_bind_wheel(w2);
	twheel_destroy(w2);
	timer_setup(&a, lost_cb, 0);
	x->mod = mod_timer(&a, jiffies + 1);
	x->mod_again = mod_timer(&a, jiffies + 2);
	twheel_compat_unbind();
	return NULL;
}

/* add_timer() returns nothing, and legacy code ignores mod_timer()'s
 * return: an arm that finds no wheel is said on stderr, once a thread,
 * not lost silently. */
static void lost_arms_are_said(void **state)
{
	struct lost_arms x = { 0 };
	char out[1024];

	(void)state;
	stderr_of_thread(arm_unbound, &x, out, sizeof(out));
	assert_false(x.add_fired);
	assert_int_equal(x.mod, -ENXIO);
	assert_int_equal(x.mod_again, -ENXIO);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "bound no wheel"));
	assert_non_null(strstr(out, "-ENXIO"));

	/* each thread says it once */
	stderr_of_thread(arm_unbound, &x, out, sizeof(out));
	assert_int_equal(count_lines(out), 1);

	x = (struct lost_arms){ 0 };
	stderr_of_thread(arm_on_destroyed, &x, out, sizeof(out));
	assert_int_equal(x.mod, -EINVAL);
	assert_int_equal(x.mod_again, -EINVAL);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "destroyed"));
}

/* The binding calls' errors. */
static void bind_errors(void **state)
{
	(void)state;
	assert_int_equal(twheel_compat_bind_wheel(w), -EBUSY);
	assert_int_equal(twheel_compat_bind_wheel(NULL), -EINVAL);
	assert_int_equal(twheel_compat_bind_host(NULL, TWHEEL_COMPAT_TICK_NS), -EINVAL);
}

/*
 * <twheel/compat.h>'s calls with NULL: -EINVAL, or (enter, leave,
 * running) nothing running; twheel_compat_enter(NULL) used to write
 * through it.
 */
static void compat_calls_take_null(void **state)
{
	struct obj o;
	const struct twheel_compat_timer *prev;

	(void)state;
	new_obj(&o);
	assert_int_equal(twheel_compat_mod(NULL, 1, 0), -EINVAL);
	assert_int_equal(twheel_compat_del(NULL), -EINVAL);
	assert_int_equal(twheel_compat_owned(NULL), -EINVAL);
	assert_int_equal(twheel_compat_bind_hosts(NULL, NULL, NULL, NULL), -EINVAL);
	assert_false(twheel_compat_running(NULL));
	struct twheel_compat_timer *volatile none = NULL; /* not seen as NULL when compiled */
	assert_false(twheel_compat_pending(none)); /* inline: it used to read it */
	prev = twheel_compat_enter(&o.timer._ct);
	assert_true(twheel_compat_running(&o.timer._ct));
	assert_ptr_equal(twheel_compat_enter(NULL), &o.timer._ct);
	assert_false(twheel_compat_running(&o.timer._ct));
	assert_false(twheel_compat_running(NULL));
	twheel_compat_leave(&o.timer._ct);
	assert_true(twheel_compat_running(&o.timer._ct));
	twheel_compat_leave(prev);
	assert_false(twheel_compat_running(&o.timer._ct));
	/* the timer is as it was: armed as usual */
	assert_int_equal(mod_timer(&o.timer, jiffies + 3), 0);
	step(3);
	assert_int_equal(o.fired, 1);
}

/* twheel_compat_unbind(): a timer still pending stays on its wheel and is
 * no longer the thread's (-EXDEV, after a new bind too); it fires when
 * the wheel is advanced, on a thread without binding. */
static void unbind_leaves_pending_timers_on_their_wheel(void **state)
{
	struct obj o;
	struct twheel *w2 = twheel_create(0);

	(void)state;
	new_obj(&o);
	mod_timer(&o.timer, jiffies + 5);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_true(timer_pending(&o.timer));
	assert_int_equal(timer_delete(&o.timer), -EXDEV);
	assert_int_equal(twheel_compat_bind_wheel(w2), 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + 1), -EXDEV);
	assert_int_equal(twheel_compat_unbind(), 0);
	o.rearm = 1;
	assert_int_equal(twheel_advance(w, twheel_now(w) + 5), 1);
	assert_int_equal(o.fired_at, INITIAL_JIFFIES); /* no binding: the start */
	assert_false(timer_pending(&o.timer));          /* its re-arm: -ENXIO */
	twheel_destroy(w2);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
}

/*
 * The bound wheel destroyed before the thread unbinds: the binding stays
 * until then but no longer reaches the wheel (it used to: jiffies read the
 * freed wheel's time, mod_timer() armed on it). jiffies stays at the
 * destroy's value, an arm returns -EINVAL, a timer left pending on the
 * wheel is no longer the thread's (-EXDEV), unbind works, and so does a
 * bind after it. A host's wheel (twheel_host_fini(), an adapter's
 * destroy) goes the same way.
 */
static struct twheel_host gone_host;
static void gone_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h;
	(void)wake_ns;
	(void)now_ns;
}
static void gone_stop(struct twheel_host *h)
{
	(void)h;
}
static const struct twheel_host_ops gone_ops = { gone_arm, gone_stop };
/* a debug_checks build reports destroying a wheel with a pending timer */
static void gone_misuse(const char *what)
{
	assert_non_null(strstr(what, "twheel_destroy()"));
}
static uint64_t gone_clock_ns;
static uint64_t gone_clock(void *arg)
{
	(void)arg;
	return gone_clock_ns;
}

static void destroying_the_bound_wheel(void **state)
{
	struct obj o, p;
	struct twheel *w2 = twheel_create(1000);
	struct twheel_rt rt;
	unsigned long at;

	(void)state;
	new_obj(&o);
	new_obj(&p);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_bind_wheel(w2), 0);
	assert_int_equal(twheel_advance(w2, 1007), 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + 5), 0);
	at = jiffies;
	assert_true(at == INITIAL_JIFFIES + 7);
	twheel_misuse_fn old = twheel_set_misuse_handler(gone_misuse);
	twheel_destroy(w2);
	twheel_set_misuse_handler(old);
	twheel_destroy(twheel_create(5000)); /* malloc's reuse: jiffies must not read it */
	assert_true(jiffies == at);
	assert_true(timer_pending(&o.timer)); /* as compat.h says: until timer_setup() */
	assert_int_equal(timer_delete(&o.timer), -EXDEV);
	assert_int_equal(mod_timer(&p.timer, jiffies + 1), -EINVAL);
	assert_false(timer_pending(&p.timer));
	assert_int_equal(twheel_compat_bind_wheel(w), -EBUSY); /* still bound */
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_unbind(), -ENXIO);

	/* a host shut down under its binding */
	gone_clock_ns = 50 * TWHEEL_COMPAT_TICK_NS;
	twheel_rt_init(&rt, TWHEEL_COMPAT_TICK_NS, gone_clock, NULL);
	assert_int_equal(twheel_host_init(&gone_host, &rt, &gone_ops), 0);
	assert_int_equal(twheel_compat_bind_host(&gone_host, TWHEEL_COMPAT_TICK_NS), 0);
	timer_setup(&p.timer, cb, 0);
	assert_int_equal(mod_timer(&p.timer, jiffies + 5), 0);
	gone_clock_ns += 3 * TWHEEL_COMPAT_TICK_NS;
	at = jiffies;
	assert_true(at == INITIAL_JIFFIES + 3);
	assert_int_equal(twheel_host_fini(&gone_host, NULL, NULL), 0);
	memset(&gone_host, 0xa5, sizeof(gone_host)); /* as if freed: no longer read */
	gone_clock_ns += 10 * TWHEEL_COMPAT_TICK_NS;
	assert_true(jiffies == at);
	assert_int_equal(timer_delete(&p.timer), -EXDEV);
	assert_int_equal(mod_timer(&o.timer, jiffies + 1), -EXDEV);
	timer_setup(&o.timer, cb, 0);
	assert_int_equal(mod_timer(&o.timer, jiffies + 1), -EINVAL);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
	new_obj(&o);
	assert_int_equal(mod_timer(&o.timer, jiffies + 2), 0);
	step(2);
	assert_int_equal(o.fired, 1);
}

/* A thread that binds the same wheel again takes the timers left pending
 * on it over: its own again (not -EXDEV), firing with the binding, with
 * jiffies counted from the new bind. */
static void rebinding_the_same_wheel_takes_its_timers_over(void **state)
{
	struct obj o;

	(void)state;
	new_obj(&o);
	step(100);
	mod_timer(&o.timer, jiffies + 5);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(timer_delete(&o.timer), -EXDEV);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
	assert_int_equal(jiffies, INITIAL_JIFFIES);
	assert_int_equal(mod_timer_pending(&o.timer, jiffies + 3), 1);
	o.rearm = 1;
	step(3);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.fired_at, INITIAL_JIFFIES + 3);
	assert_true(timer_pending(&o.timer)); /* re-armed with the binding */
	assert_int_equal(timer_delete(&o.timer), 1);
}

/* A host whose clock the test sets (ns). */
static uint64_t host_clock;
static uint64_t read_host_clock(void *arg)
{
	(void)arg;
	return host_clock;
}
static void host_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h, (void)wake_ns, (void)now_ns;
}
static void host_stop(struct twheel_host *h)
{
	(void)h;
}

/* jiffies never goes back ("jiffies ... increments"), even on a host
 * whose clock steps back (<twheel/host.h> allows it), below the reading
 * at bind time too; a timer armed then fires once the clock is past it
 * (late, never early), not never. */
static void host_clock_stepping_back(void **state)
{
	static const struct twheel_host_ops ops = { .arm = host_arm, .stop = host_stop };
	struct twheel_rt rt = { .tick_ns = TWHEEL_COMPAT_TICK_NS, .clock = read_host_clock };
	struct twheel_host h;
	struct obj o;
	unsigned long j0;

	(void)state;
	host_clock = 1000ull * TWHEEL_COMPAT_TICK_NS;
	assert_int_equal(twheel_host_init(&h, &rt, &ops), 0);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_bind_host(&h, TWHEEL_COMPAT_TICK_NS), 0);
	new_obj(&o);
	host_clock += 20 * TWHEEL_COMPAT_TICK_NS;
	j0 = jiffies;
	assert_int_equal(j0, INITIAL_JIFFIES + 20);
	host_clock -= 30 * TWHEEL_COMPAT_TICK_NS; /* back, 10 before the bind */
	assert_int_equal(jiffies, j0);
	mod_timer(&o.timer, jiffies + 5);
	for (int i = 0; i < 40 && !o.fired; i++) {
		host_clock += TWHEEL_COMPAT_TICK_NS;
		twheel_host_run(&h);
	}
	assert_int_equal(o.fired, 1);
	assert_int_equal(host_clock, 1025ull * TWHEEL_COMPAT_TICK_NS); /* late, not early */
	assert_true(time_after_eq(o.fired_at, j0 + 5));
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
}

/* TWHEEL_COMPAT_TICK_NS is the bind calls' 64-bit tick: a host clock
 * moved by a number of ticks times it moves by that many ticks, past
 * 2^32 ns (4.3 s) too, where a 32-bit product would wrap (5 s of ticks
 * would move it by 0.7 s at HZ 1000, and the timer would not fire). */
static void tick_ns_times_a_count_does_not_wrap(void **state)
{
	static const struct twheel_host_ops ops = { .arm = host_arm, .stop = host_stop };
	struct twheel_rt rt = { .tick_ns = TWHEEL_COMPAT_TICK_NS, .clock = read_host_clock };
	struct twheel_host h;
	struct obj o;
	unsigned int n = 5 * HZ; /* 5 s of ticks, as a program counts them */
	unsigned long j0;

	(void)state;
	assert_int_equal(sizeof(TWHEEL_COMPAT_TICK_NS), sizeof(uint64_t));
	host_clock = 1000ull * TWHEEL_COMPAT_TICK_NS;
	assert_int_equal(twheel_host_init(&h, &rt, &ops), 0);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_bind_host(&h, TWHEEL_COMPAT_TICK_NS), 0);
	new_obj(&o);
	j0 = jiffies;
	assert_int_equal(mod_timer(&o.timer, j0 + n), 0);
	host_clock += n * TWHEEL_COMPAT_TICK_NS;
	twheel_host_run(&h);
	assert_int_equal(jiffies - j0, n);
	assert_int_equal(o.fired, 1);
	assert_int_equal(o.fired_at, j0 + n);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
}

/* A bound host lost under the binding (its loop gone: an adapter's loop
 * destroyed before the adapter, twheel_host_lost()) refuses every arm
 * with -ESHUTDOWN, which the legacy headers do not name: the legacy
 * calls return -EINVAL, as on a destroyed host, a pending timer staying
 * pending (nothing fires it) and deleted with 1. */
static void arm_on_a_lost_host_is_einval(void **state)
{
	static const struct twheel_host_ops ops = { .arm = host_arm, .stop = host_stop };
	struct twheel_rt rt = { .tick_ns = TWHEEL_COMPAT_TICK_NS, .clock = read_host_clock };
	struct twheel_host h;
	struct obj a, b;

	(void)state;
	host_clock = 1000ull * TWHEEL_COMPAT_TICK_NS;
	assert_int_equal(twheel_host_init(&h, &rt, &ops), 0);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_bind_host(&h, TWHEEL_COMPAT_TICK_NS), 0);
	new_obj(&a);
	new_obj(&b);
	assert_int_equal(mod_timer(&a.timer, jiffies + 10), 0);
	assert_int_equal(twheel_host_lost(&h), 0);
	assert_int_equal(mod_timer(&a.timer, jiffies + 20), -EINVAL);
	assert_int_equal(mod_timer(&b.timer, jiffies + 20), -EINVAL);
	assert_int_equal(timer_reduce(&b.timer, jiffies + 5), -EINVAL);
	assert_true(timer_pending(&a.timer));
	assert_false(timer_pending(&b.timer));
	assert_int_equal(timer_delete(&a.timer), 1);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_int_equal(a.fired + b.fired, 0);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
}

/* A callback that re-arms its timer for now (mod_timer(t, jiffies)), or
 * with add_timer() in the past: the kernel queues it for the next tick
 * ("If @timer->expires is already in the past @timer will be queued to
 * expire at the next timer tick"), so it runs once a tick, never again
 * within one, however late the wheel or the host runs. */
static int now_fires, now_gaps;
static unsigned long now_at;
static void rearm_now(struct timer_list *t)
{
	now_gaps += now_fires && jiffies != now_at + 1; /* each a tick after the last */
	now_at = jiffies;
	if (++now_fires % 2) {
		mod_timer(t, jiffies);
	} else {
		t->expires = jiffies - 1;
		add_timer(t);
	}
}

static void rearm_with_no_delay_runs_next_tick(void **state)
{
	static const struct twheel_host_ops ops = { .arm = host_arm, .stop = host_stop };
	struct twheel_rt rt = { .tick_ns = TWHEEL_COMPAT_TICK_NS, .clock = read_host_clock };
	struct twheel_host h;
	struct timer_list t;
	unsigned long j0 = jiffies;

	(void)state;
	now_fires = 0;
	now_gaps = 0;
	timer_setup(&t, rearm_now, 0);
	assert_int_equal(mod_timer(&t, jiffies), 0);
	assert_int_equal(twheel_advance(w, twheel_now(w) + 1000), 1); /* late: once */
	assert_true(timer_pending(&t));
	assert_true(now_at == j0 + 1000); /* the time reached, as the kernel's jiffies */
	assert_true(t.expires == j0 + 1000); /* for now: it fires at the next tick */
	assert_int_equal(step(5), 5); /* then once a tick, on time */
	assert_int_equal(now_fires, 6);
	assert_int_equal(now_gaps, 0);
	assert_true(now_at == j0 + 1005);
	assert_int_equal(timer_delete_sync(&t), 1);

	/* a host run 100 ticks late, as a loop is after a stall */
	host_clock = 1000ull * TWHEEL_COMPAT_TICK_NS;
	assert_int_equal(twheel_host_init(&h, &rt, &ops), 0);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_compat_bind_host(&h, TWHEEL_COMPAT_TICK_NS), 0);
	j0 = jiffies;
	now_fires = 0;
	now_gaps = 0;
	assert_int_equal(mod_timer(&t, jiffies), 0);
	host_clock += 100 * TWHEEL_COMPAT_TICK_NS;
	twheel_host_run(&h);
	assert_int_equal(now_fires, 1);
	assert_true(now_at == j0 + 100);
	twheel_host_run(&h); /* the same tick: nothing */
	assert_int_equal(now_fires, 1);
	for (int i = 0; i < 5; i++) {
		host_clock += TWHEEL_COMPAT_TICK_NS;
		twheel_host_run(&h);
	}
	assert_int_equal(now_fires, 6);
	assert_int_equal(now_gaps, 0);
	assert_true(now_at == j0 + 105); /* on time: a host's callbacks read its clock */
	assert_int_equal(timer_delete_sync(&t), 1);
	assert_int_equal(twheel_compat_unbind(), 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
	assert_int_equal(twheel_compat_bind_wheel(w), 0);
}

/*
 * An advance of many ticks on a plain wheel, as the kernel's softirq
 * catching up after a stall (kernel/time/timer.c, __run_timers(): it
 * runs every bucket from base->clk up to jiffies, and each callback reads
 * jiffies, the current time, not the bucket's): a callback reads jiffies
 * at the advance's target, so a timer that re-arms itself for jiffies + 1
 * (a poll, a heartbeat) fires at the first tick after the catch-up and
 * on every tick from then on, on time; one that re-arms for 5 jiffies
 * fires 5 ticks after the catch-up. The rule of the wheel holds: an arm
 * from a callback fires in a later advance, never in the one running.
 */
static int poll_fires, poll_late;
static unsigned long poll_seen[8];
static void poll_next_tick(struct timer_list *t)
{
	poll_late += jiffies != t->expires; /* fired at the tick it was armed for */
	if (poll_fires < 8)
		poll_seen[poll_fires] = jiffies;
	poll_fires++;
	mod_timer(t, jiffies + 1);
}

static int five_fires;
static unsigned long five_seen;
static void every_five(struct timer_list *t)
{
	five_fires++;
	five_seen = jiffies;
	mod_timer(t, jiffies + 5);
}

static void rearm_for_next_tick_after_a_catch_up_is_on_time(void **state)
{
	struct timer_list poll, five;
	unsigned long j0 = jiffies;

	(void)state;
	poll_fires = 0;
	poll_late = 0;
	five_fires = 0;
	timer_setup(&poll, poll_next_tick, 0);
	timer_setup(&five, every_five, 0);
	assert_int_equal(mod_timer(&poll, jiffies + 1), 0);
	assert_int_equal(mod_timer(&five, jiffies + 5), 0);
	/* a stall: one advance of 1000 ticks runs each once, reading jiffies
	 * at the time reached (the old code read the expiry's tick, 1 and 5) */
	assert_int_equal(twheel_advance(w, twheel_now(w) + 1000), 2);
	assert_int_equal(poll_fires, 1);
	assert_true(poll_seen[0] == j0 + 1000);
	assert_true(five_seen == j0 + 1000);
	assert_true(poll.expires == j0 + 1001 && five.expires == j0 + 1005);
	poll_late = 0; /* the catch-up's own run was late, as in the kernel */
	/* then once a tick, each at its expiry (the old code stayed one behind) */
	assert_int_equal(step(1), 1);
	assert_true(poll_seen[1] == j0 + 1001);
	assert_int_equal(step(4), 5); /* and every_five at j0 + 1005 */
	assert_int_equal(poll_fires, 6);
	assert_true(poll_seen[5] == j0 + 1005);
	assert_int_equal(poll_late, 0);
	assert_int_equal(five_fires, 2);
	assert_true(five_seen == j0 + 1005);
	/* outside an advance, jiffies is the wheel's time, as before */
	assert_true(jiffies == j0 + 1005);
	assert_int_equal(timer_delete_sync(&poll), 1);
	assert_int_equal(timer_delete_sync(&five), 1);
}

static void unbind_without_binding(void **state)
{
	(void)state;
	assert_int_equal(twheel_compat_unbind(), -ENXIO);
	assert_int_equal(twheel_compat_now(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(jiffies_start_five_minutes_before_the_wrap),
		T(jiffies_wrap_bug_shows_and_time_after_survives_it),
		T(time_after_before_eq),
		T(time_in_range_and_64_bit_forms),
		T(read_once_jiffies_reads_now),
		T(add_timer_fires_when_jiffies_reach_expires),
		T(far_timer_fires_exactly),
		T(add_timer_in_the_past_fires_at_the_next_tick),
		T(add_timer_on_an_active_timer_is_rejected),
		T(add_timer_local_and_global_set_the_pinned_flag),
		T(destroy_on_stack_deletes_a_pending_timer),
		T(add_timer_without_function_is_discarded),
		T(mod_timer_returns_whether_it_was_pending),
		T(mod_timer_moves_earlier_and_later),
		T(mod_timer_pending_leaves_inactive_timers),
		T(timer_reduce_only_ever_earlier),
		T(timer_delete_returns_and_the_timer_does_not_fire),
		T(timer_delete_sync_from_its_own_callback),
		T(delete_from_its_own_callback),
		T(rearm_from_its_own_callback),
		T(try_to_del_timer_sync_from_its_callback_is_minus_one),
		T(timer_shutdown_sync_ignores_later_arms),
		T(timer_shutdown_ignores_later_arms),
		T(shutdown_from_its_own_callback),
		T(define_timer_is_ready),
		T(static_initializer_and_singleshot_delete),
		T(timer_setup_keeps_expires),
		T(setup_of_a_pending_timer_is_reported),
		T(delete_another_timer_due_at_the_same_tick),
		T(rearm_another_timer_due_at_the_same_tick),
		T(expiries_at_the_ends_of_the_arithmetic),
		T(callback_frees_its_own_struct),
		T(container_of_the_timer),
		T(timer_setup_flags_accepted),
		T(conversions),
		T(conversions_in_64_bits),
		T(round_jiffies_to_whole_seconds),
		T(round_jiffies_skewed_by_cpu),
		T(another_thread_is_refused),
		T(bind_errors),
		T(compat_calls_take_null),
		T(destroying_the_bound_wheel),
		T(unbind_leaves_pending_timers_on_their_wheel),
		T(rebinding_the_same_wheel_takes_its_timers_over),
		T(host_clock_stepping_back),
		T(tick_ns_times_a_count_does_not_wrap),
		T(arm_on_a_lost_host_is_einval),
		T(rearm_with_no_delay_runs_next_tick),
		T(rearm_for_next_tick_after_a_catch_up_is_on_time),
		cmocka_unit_test(unbind_without_binding),
		cmocka_unit_test(lost_arms_are_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
