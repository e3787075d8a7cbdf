/*
 * test_host_deadlines - the host driver's classification of deadlines
 * against its latest clock reading, driven adversarially: passed
 * deadlines, deadlines between the latest reading and now, arms from
 * callbacks, and the host timer armed iff something reachable is pending
 * (never stopped while timers are pending, never armed after the wheel
 * emptied), never waking later than the wheel's next event.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/host.h>
#include <twheel/twheel.h>

#include "../common/splitmix64.h"

/* ---- fixture ---------------------------------------------------------------- */

static uint64_t rng;


#define TICK UINT64_C(1000000)

static uint64_t fake_ns;
static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return fake_ns;
}

static bool host_armed;
static uint64_t host_wake;
static unsigned host_arms, host_stops;
static struct twheel_host H;

static void fake_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h;
	assert_true(wake_ns >= now_ns);
	assert_int_equal(now_ns, fake_ns); /* a fresh reading */
	host_armed = true;
	host_wake = wake_ns;
	host_arms++;
}

static void fake_stop(struct twheel_host *h)
{
	(void)h;
	assert_true(host_armed); /* only an armed host timer is stopped */
	host_armed = false;
	host_stops++;
}

static const struct twheel_host_ops fake_ops = { fake_arm, fake_stop };

struct hx {
	struct tw_timer t;
	uint64_t deadline;
	int fired;
	uint64_t fired_at;
	void (*action)(struct hx *x);
	struct hx *other;
	uint64_t arg;
};

static void hx_cb(struct tw_timer *t)
{
	struct hx *x = tw_container_of(t, struct hx, t);
	x->fired++;
	x->fired_at = fake_ns;
	assert_true(fake_ns >= x->deadline); /* never early */
	if (x->action)
		x->action(x);
}

static struct hx HX[64];

static void hx_init(struct hx *x, size_t n)
{
	memset(x, 0, n * sizeof(*x));
	for (size_t i = 0; i < n; i++)
		tw_timer_init(&x[i].t, hx_cb);
}

static void host_open(uint64_t start_ns)
{
	struct twheel_rt rt;
	fake_ns = start_ns;
	host_armed = false;
	host_arms = host_stops = 0;
	hx_init(HX, 64);
	twheel_rt_init(&rt, TICK, fake_clock, NULL);
	assert_int_equal(twheel_host_init(&H, &rt, &fake_ops), 0);
}

static long host_fire(void)
{
	assert_true(host_armed);
	assert_true(fake_ns >= host_wake);
	host_armed = false;
	return twheel_host_run(&H);
}

/*
 * The host timer is armed iff a reachable timer is pending, and it never
 * wakes later than the earliest pending expiry (outside a run). It may
 * wake later than a cascade tick that next_expiry() reports: a timer armed
 * at or after the tick the host waits for can land in a slot whose cascade
 * comes earlier, and the advance performs that cascade on the way.
 */
static void host_invariant(void)
{
	struct twheel *w = twheel_host_wheel(&H);
	if (twheel_count(w) == 0) {
		assert_false(host_armed);
		return;
	}
	tw_tick_t min = TW_TICK_MAX;
	for (int i = 0; i < 64; i++)
		if (tw_timer_pending(&HX[i].t) && tw_timer_expires(&HX[i].t) < min)
			min = tw_timer_expires(&HX[i].t);
	if (min == TW_TICK_MAX) /* a directed test's own timers */
		min = twheel_next_expiry(w);
	uint64_t at;
	if (min == TW_TICK_MAX ||
	    __builtin_mul_overflow(min, twheel_host_rt(&H)->tick_ns, &at))
		return; /* beyond any 64-bit clock reading */
	if (!host_armed)
		fail_msg("host timer stopped with %zu timers pending (earliest tick %llu)",
			 twheel_count(w), (unsigned long long)min);
	if (host_wake > at && host_wake > fake_ns)
		fail_msg("host wakes at %llu, after the earliest expiry at %llu (now %llu)",
			 (unsigned long long)host_wake, (unsigned long long)at,
			 (unsigned long long)fake_ns);
}

static void act_add_at(struct hx *x)
{
	assert_int_equal(twheel_host_mod_at(&H, &x->other->t, x->arg), 0);
}

/* From a callback: a passed deadline is not run in this run, but the host wakes at once. */
static void host_passed_deadline_from_callback(void **state)
{
	(void)state;
	struct hx x[2];
	hx_init(x, 2);
	host_open(50 * TICK + 10);
	x[0].deadline = 60 * TICK;
	assert_int_equal(twheel_host_add_at(&H, &x[0].t, x[0].deadline), 0);
	assert_int_equal(host_wake, 60 * TICK);
	x[0].action = act_add_at;
	x[0].other = &x[1];
	x[0].arg = 55 * TICK; /* passed */
	x[1].deadline = 55 * TICK;
	fake_ns = 60 * TICK + 7;
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x[1].fired, 0);
	host_invariant();
	assert_true(host_armed);
	assert_int_equal(host_wake, fake_ns); /* at once */
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x[1].fired, 1);
	assert_false(host_armed);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

static void act_del_other(struct hx *x)
{
	assert_int_equal(twheel_host_del(&H, &x->other->t), 1);
}

/* Deleting the last timer stops the host timer; from a callback, no stop of a fired timer. */
static void host_del_last_stops(void **state)
{
	(void)state;
	struct hx x[3];
	hx_init(x, 3);
	host_open(1000 * TICK);
	assert_int_equal(twheel_host_add(&H, &x[0].t, 10 * TICK), 0);
	assert_int_equal(twheel_host_add(&H, &x[1].t, 5000 * TICK), 0);
	assert_int_equal(twheel_host_mod(&H, &x[1].t, 9000 * TICK), 1); /* lazy */
	host_invariant();
	assert_int_equal(twheel_host_del(&H, &x[1].t), 1);
	host_invariant();
	assert_true(host_armed);
	assert_int_equal(twheel_host_del(&H, &x[0].t), 1);
	assert_false(host_armed);
	assert_int_equal(host_stops, 1);
	assert_int_equal(twheel_host_del(&H, &x[0].t), 0);
	/* from a callback: x[0] deletes x[1], the last one */
	assert_int_equal(twheel_host_add(&H, &x[0].t, 10 * TICK), 0);
	assert_int_equal(twheel_host_add(&H, &x[1].t, 20 * TICK), 0);
	x[0].action = act_del_other;
	x[0].other = &x[1];
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	assert_false(host_armed);
	assert_int_equal(host_stops, 1);
	host_invariant();
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * A lazily re-armed earliest timer: the host keeps waiting for the old
 * tick (a wake-up that runs nothing), then waits for the new one; the timer
 * fires on its new deadline's tick, never before.
 */
static void host_lazy_rearm_of_earliest(void **state)
{
	(void)state;
	struct hx x[1];
	hx_init(x, 1);
	host_open(7 * TICK + 3);
	assert_int_equal(twheel_host_add_at(&H, &x[0].t, 1000 * TICK), 0);
	x[0].deadline = 1000 * TICK + 1;
	fake_ns = 500 * TICK;
	assert_int_equal(twheel_host_mod_at(&H, &x[0].t, x[0].deadline), 1);
	host_invariant();
	int runs = 0;
	while (host_armed) {
		fake_ns = host_wake > fake_ns ? host_wake : fake_ns;
		assert_true(host_fire() >= 0);
		host_invariant();
		assert_true(++runs < 20);
	}
	assert_int_equal(x[0].fired, 1);
	assert_int_equal(x[0].fired_at, 1001 * TICK);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * A deadline that passed after the host's latest reading, a delay form that
 * takes a newer reading, then deadlines around that reading.
 */
static void host_seen_advances_with_delay_forms(void **state)
{
	(void)state;
	struct hx x[3];
	hx_init(x, 3);
	host_open(100 * TICK);
	fake_ns = 100 * TICK + TICK / 2;
	assert_int_equal(twheel_host_add(&H, &x[0].t, 500 * TICK), 0); /* reads 100.5 */
	fake_ns = 103 * TICK;
	/* passed at 100.2, i.e. before the latest reading: due at once */
	x[1].deadline = 100 * TICK + TICK / 5;
	assert_int_equal(twheel_host_add_at(&H, &x[1].t, x[1].deadline), 0);
	assert_true(host_armed);
	assert_int_equal(host_wake, fake_ns);
	/* the re-arm read the clock (103): 101.5 has passed too */
	x[2].deadline = 101 * TICK + TICK / 2;
	assert_int_equal(twheel_host_add_at(&H, &x[2].t, x[2].deadline), 0);
	assert_int_equal(host_fire(), 2);
	assert_int_equal(x[1].fired + x[2].fired, 2);
	host_invariant();
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/* Random host traffic with the invariant checked after every call. */
static void act_host_random(struct hx *x);

static void host_random_op(void)
{
	struct hx *p = &HX[splitmix64(&rng) % 64];
	uint64_t r = splitmix64(&rng);
	uint64_t d = (r >> 8) % (r & 1 ? 3 * TICK : 20000 * TICK);
	uint64_t seen_guess = fake_ns;
	switch (r % 5) {
	case 0:
		assert_true(twheel_host_mod(&H, &p->t, d) >= 0);
		p->deadline = fake_ns + d;
		break;
	case 1:
		/* deadline from an old reading: maybe passed */
		p->deadline = seen_guess > d / 4 ? seen_guess - d / 4 + (r & 2 ? d : 0) : 0;
		assert_true(twheel_host_mod_at(&H, &p->t, p->deadline) >= 0);
		break;
	case 2:
		if (tw_timer_pending(&p->t)) {
			/* push back: lazy in the wheel */
			p->deadline += d;
			assert_int_equal(twheel_host_mod_at(&H, &p->t, p->deadline), 1);
		}
		break;
	case 3:
		(void)twheel_host_del(&H, &p->t);
		break;
	default:
		break;
	}
}

static void act_host_random(struct hx *x)
{
	(void)x;
	if (splitmix64(&rng) % 2)
		host_random_op();
}

static void host_random_armed_iff_pending(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		rng = seed * 31337;
		host_open(seed * 123456789);
		for (int i = 0; i < 64; i++)
			HX[i].action = act_host_random;
		for (int s = 0; s < 100000; s++) {
			if (splitmix64(&rng) % 3) {
				host_random_op();
			} else {
				uint64_t next = fake_ns + splitmix64(&rng) % (3 * TICK);
				if (host_armed && host_wake <= next) {
					fake_ns = host_wake > fake_ns ? host_wake : fake_ns;
					assert_true(host_fire() >= 0);
				} else {
					fake_ns = next;
				}
			}
			host_invariant();
		}
		int guard = 0;
		while (host_armed) {
			for (int i = 0; i < 64; i++)
				HX[i].action = NULL;
			fake_ns = host_wake > fake_ns ? host_wake : fake_ns;
			assert_true(host_fire() >= 0);
			host_invariant();
			assert_true(++guard < 100000);
		}
		assert_int_equal(twheel_count(twheel_host_wheel(&H)), 0);
		assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_passed_deadline_from_callback),
		cmocka_unit_test(host_del_last_stops),
		cmocka_unit_test(host_lazy_rearm_of_earliest),
		cmocka_unit_test(host_seen_advances_with_delay_forms),
		cmocka_unit_test(host_random_armed_iff_pending),
	};
	return cmocka_run_group_tests_name("host_deadlines", tests, NULL, NULL);
}
