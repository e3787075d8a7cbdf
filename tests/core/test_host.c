/*
 * test_host - <twheel/host.h> against an injected clock and a fake host
 * timer: arming by deadline reads no clock unless the host timer must be
 * re-armed, a delay reads it once, passed deadlines are due in the next
 * run, and a simulated host loop that wakes exactly when told sees every
 * timer fire once, never before its deadline and at most one tick after
 * it, and none after it was cancelled (tick 1 ms).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/host.h>

#include "../common/splitmix64.h"

#define TICK UINT64_C(1000000)

static uint64_t fake_ns;
static unsigned clock_reads;
static uint64_t fake_clock(void *arg)
{
	(void)arg;
	clock_reads++;
	return fake_ns;
}

/* the fake host timer: one-shot, armed for wake_ns, or stopped */
static bool host_armed;
static uint64_t host_wake;
static unsigned host_arms, host_stops;

static void fake_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h;
	assert_true(wake_ns >= now_ns);
	host_armed = true;
	host_wake = wake_ns;
	host_arms++;
}

static void fake_stop(struct twheel_host *h)
{
	(void)h;
	assert_true(host_armed);
	host_armed = false;
	host_stops++;
}

static const struct twheel_host_ops fake_ops = { fake_arm, fake_stop };

struct ht {
	struct tw_timer t;
	uint64_t deadline; /* ns; the timer must not run before it */
	uint64_t due;      /* ns; it must run by one tick after this */
	uint64_t fired_at;
	int fired;
};

static void ht_cb(struct tw_timer *t)
{
	struct ht *x = tw_container_of(t, struct ht, t);

	x->fired++;
	x->fired_at = fake_ns;
	assert_true(fake_ns >= x->deadline);
	if (x->due)
		assert_true(fake_ns - x->due <= TICK);
}

static struct twheel_host H;

static void host_open(uint64_t start_ns)
{
	struct twheel_rt rt;

	fake_ns = start_ns;
	host_armed = false;
	host_arms = host_stops = 0;
	twheel_rt_init(&rt, TICK, fake_clock, NULL);
	assert_int_equal(twheel_host_init(&H, &rt, &fake_ops), 0);
	clock_reads = 0;
}

static void ht_init(struct ht *x, size_t n)
{
	memset(x, 0, n * sizeof(*x));
	for (size_t i = 0; i < n; i++)
		tw_timer_init(&x[i].t, ht_cb);
}

/* The host timer fires: the loop runs the wheel (the host's arm is one-shot). */
static long host_fire(void)
{
	assert_true(host_armed);
	host_armed = false;
	return twheel_host_run(&H);
}

static void deadline_arms_read_no_clock(void **state)
{
	enum { N = 1000 };
	struct ht *x = malloc(N * sizeof(*x));

	(void)state;
	assert_non_null(x);
	ht_init(x, N);
	host_open(100 * TICK + 123);
	/* the first timer re-arms the host timer: one reading for that */
	assert_int_equal(twheel_host_add_at(&H, &x[0].t, 150 * TICK), 0);
	assert_int_equal(clock_reads, 1);
	assert_true(host_armed);
	assert_int_equal(host_wake, 150 * TICK);
	/* later ones, and re-arms later still, never touch the clock */
	for (int i = 1; i < N; i++)
		assert_int_equal(twheel_host_add_at(&H, &x[i].t, 200 * TICK + (uint64_t)i), 0);
	for (int r = 0; r < 3; r++)
		for (int i = 1; i < N; i++)
			assert_int_equal(twheel_host_mod_at(&H, &x[i].t, 300 * TICK + (uint64_t)(r * N + i)), 1);
	assert_int_equal(clock_reads, 1);
	assert_int_equal(host_arms, 1);
	/* a delay reads the clock once */
	assert_int_equal(twheel_host_mod(&H, &x[1].t, 500 * TICK), 1);
	assert_int_equal(clock_reads, 2);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	free(x);
}

/*
 * host.h: "while the host timer is set to fire at once (a timer was due
 * when it was armed), no arm touches it"; "nor does an arm at or after the
 * tick it waits for"; an arm earlier than that tick re-arms it.
 */
static void host_timer_touched_only_by_an_earlier_arm(void **state)
{
	struct ht x[5];

	(void)state;
	ht_init(x, 5);
	host_open(100 * TICK + 5);
	assert_int_equal(twheel_host_add(&H, &x[0].t, 0), 0); /* due now */
	assert_int_equal(host_arms, 1);
	assert_int_equal(host_wake, fake_ns);                 /* fire at once */
	assert_int_equal(twheel_host_add(&H, &x[1].t, 0), 0);
	assert_int_equal(twheel_host_add_at(&H, &x[2].t, 50 * TICK), 0); /* passed */
	assert_int_equal(twheel_host_add_at(&H, &x[3].t, 300 * TICK), 0);
	assert_int_equal(host_arms, 1);                       /* left as it is */
	assert_int_equal(host_fire(), 3);
	/* now waiting for tick 300: an arm at that tick leaves it, one earlier re-arms */
	assert_int_equal(host_arms, 2);
	assert_int_equal(host_wake, 300 * TICK);
	assert_int_equal(twheel_host_add_at(&H, &x[4].t, 300 * TICK), 0);
	assert_int_equal(host_arms, 2);
	assert_int_equal(twheel_host_mod_at(&H, &x[4].t, 299 * TICK), 1);
	assert_int_equal(host_arms, 3);
	assert_int_equal(host_wake, 299 * TICK);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * The injected clock steps back behind the wheel: a timer armed then, by
 * delay or by deadline, runs only once the clock reads its deadline (the
 * wheel is held until the clock is back at its time: late, never early).
 */
static void clock_steps_back_never_early(void **state)
{
	struct ht x[2];

	(void)state;
	ht_init(x, 2);
	host_open(10 * TICK); /* the wheel at tick 10 */
	fake_ns = 3 * TICK;   /* the clock steps back */
	x[0].deadline = 5 * TICK;
	x[1].deadline = 7 * TICK;
	assert_int_equal(twheel_host_add(&H, &x[0].t, 2 * TICK), 0);
	assert_int_equal(twheel_host_now(&H), 3 * TICK);
	assert_int_equal(twheel_host_add_at(&H, &x[1].t, 7 * TICK), 0);
	assert_true(host_armed);
	assert_true(host_wake > fake_ns); /* not a wake-up at once */
	/* the loop wakes when told; every run finds the clock past what it
	 * waited for, and nothing runs before its deadline (ht_cb checks) */
	for (int i = 0; i < 20 && host_armed; i++) {
		fake_ns = host_wake;
		host_fire();
	}
	assert_int_equal(x[0].fired, 1);
	assert_int_equal(x[1].fired, 1);
	assert_true(x[0].fired_at <= 11 * TICK);
	assert_false(host_armed);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * The clock steps back inside a callback. A timer due at tick 111 runs
 * late, in the run that goes to tick 115; its callback steps the clock back
 * 40 ms and arms one timer for a deadline 20 ms ahead of the new reading
 * (the host's latest reading, 115.8 ms, says it has passed: a fresh one
 * must decide) and one with a 5 ms delay. Inside the callback the wheel is
 * at tick 111, but the run goes on to 115: a tick from 112 to 115 would
 * fire in this same run, at a clock 40 ms behind. Neither may run before
 * the clock reads its deadline (ht_cb checks), in this run or later ones.
 */
static struct ht back[3];

static void step_back_cb(struct tw_timer *t)
{
	ht_cb(t);
	fake_ns -= 40 * TICK;
	back[1].deadline = fake_ns + 20 * TICK;
	assert_int_equal(twheel_host_add_at(&H, &back[1].t, back[1].deadline), 0);
	back[2].deadline = fake_ns + 5 * TICK;
	assert_int_equal(twheel_host_add(&H, &back[2].t, 5 * TICK), 0);
}

static void clock_steps_back_in_callback_never_early(void **state)
{
	(void)state;
	ht_init(back, 3);
	tw_timer_init(&back[0].t, step_back_cb);
	host_open(100 * TICK);
	back[0].deadline = 111 * TICK;
	assert_int_equal(twheel_host_add_at(&H, &back[0].t, back[0].deadline), 0);
	assert_int_equal(host_wake, 111 * TICK);
	fake_ns = 115 * TICK + 800000; /* the host loop woke 4.8 ms late */
	assert_int_equal(host_fire(), 1);
	assert_int_equal(back[1].fired + back[2].fired, 0);
	/* the clock is behind the wheel's tick 115: the host timer waits,
	 * and every run finds nothing early */
	assert_true(host_armed);
	for (int i = 0; i < 20 && host_armed; i++) {
		fake_ns = host_wake > fake_ns ? host_wake : fake_ns + 1;
		assert_true(host_fire() >= 0);
	}
	assert_int_equal(back[1].fired, 1);
	assert_int_equal(back[2].fired, 1);
	/* late only until the clock is back at the wheel's time: the first
	 * tick after 115 */
	assert_true(back[1].fired_at <= 117 * TICK);
	assert_true(back[2].fired_at <= 117 * TICK);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/* Arming by a deadline the latest reading has passed, after the clock
 * stepped back behind it: a fresh reading finds it still ahead. */
static void passed_deadline_after_step_back_is_not_due(void **state)
{
	struct ht x;

	(void)state;
	ht_init(&x, 1);
	host_open(50 * TICK);  /* latest reading: 50 ms */
	fake_ns = 20 * TICK;   /* the clock steps back, nothing reads it */
	x.deadline = 30 * TICK; /* before the latest reading, after the clock */
	assert_int_equal(twheel_host_add_at(&H, &x.t, x.deadline), 0);
	assert_true(host_armed);
	assert_true(host_wake > fake_ns);
	for (int i = 0; i < 20 && host_armed; i++) {
		fake_ns = host_wake > fake_ns ? host_wake : fake_ns + 1;
		assert_true(host_fire() >= 0);
	}
	assert_int_equal(x.fired, 1);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * A deadline the clock has reached when it is armed has come: it fires in
 * the next run even if the clock steps back before that run (host.h; the
 * wheel cannot hold back a tick it has reached), unlike one armed after
 * the step back, which waits for the clock.
 */
static void come_cb(struct tw_timer *t)
{
	struct ht *x = tw_container_of(t, struct ht, t);

	x->fired++;
	x->fired_at = fake_ns; /* before the deadline: checked below */
}

static void passed_deadline_then_step_back_has_come(void **state)
{
	struct ht x[2];

	(void)state;
	ht_init(x, 2);
	tw_timer_init(&x[0].t, come_cb);
	host_open(50 * TICK);
	x[0].deadline = 40 * TICK; /* the clock read it: come */
	assert_int_equal(twheel_host_add_at(&H, &x[0].t, x[0].deadline), 0);
	assert_true(host_armed);
	assert_true(host_wake <= fake_ns); /* at once */
	fake_ns = 20 * TICK;       /* the clock steps back before the run */
	x[1].deadline = 45 * TICK; /* ahead of the clock now: not come */
	assert_int_equal(twheel_host_add_at(&H, &x[1].t, x[1].deadline), 0);
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x[0].fired, 1);
	assert_true(x[0].fired_at < x[0].deadline);
	assert_int_equal(x[1].fired, 0);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * The top of the 64-bit range: with 1 ns ticks, UINT64_MAX is a clock
 * reading and TW_TICK_MAX a tick like any other. A delay-0 timer armed
 * there starts the host timer (it was left stopped: TW_TICK_MAX was the
 * "stopped" mark) and runs in the next run.
 */
static void host_at_tick_max(void **state)
{
	struct twheel_rt rt;
	struct ht x;

	(void)state;
	ht_init(&x, 1);
	fake_ns = UINT64_MAX;
	host_armed = false;
	twheel_rt_init(&rt, 1, fake_clock, NULL);
	assert_int_equal(twheel_host_init(&H, &rt, &fake_ops), 0);
	assert_true(twheel_now(twheel_host_wheel(&H)) == TW_TICK_MAX);
	x.deadline = UINT64_MAX;
	assert_int_equal(twheel_host_add(&H, &x.t, 0), 0);
	assert_true(host_armed);
	assert_true(host_wake == UINT64_MAX);
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x.fired, 1);
	assert_false(host_armed);
	/* re-armed at the top again: the host timer starts again */
	assert_int_equal(twheel_host_add_at(&H, &x.t, UINT64_MAX), 0);
	assert_true(host_armed);
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x.fired, 2);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);

	/* the clock at 0, a timer on the last tick: the host is armed (for
	 * a cascade on the way), not left waiting forever */
	fake_ns = 0;
	assert_int_equal(twheel_host_init(&H, &rt, &fake_ops), 0);
	x.deadline = UINT64_MAX;
	assert_int_equal(twheel_host_add_at(&H, &x.t, UINT64_MAX), 0);
	assert_true(host_armed);
	assert_true(host_wake < UINT64_MAX);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	assert_false(host_armed);
}

/* A host shut down refuses every call with -EINVAL and counts nothing. */
static void shut_down_host_refuses_and_counts_nothing(void **state)
{
	struct ht x;
	struct twheel_rt_stats before, after;

	(void)state;
	ht_init(&x, 1);
	host_open(10 * TICK);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	assert_int_equal(twheel_host_get_stats(&H, &before), 0);
	assert_int_equal(twheel_host_run(&H), -EINVAL);
	assert_int_equal(twheel_host_add(&H, &x.t, TICK), -EINVAL);
	assert_int_equal(twheel_host_mod_at(&H, &x.t, 20 * TICK), -EINVAL);
	assert_int_equal(twheel_host_del(&H, &x.t), -EINVAL);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), -EINVAL);
	assert_int_equal(twheel_host_get_stats(&H, &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_false(tw_timer_pending(&x.t));
	assert_false(host_armed);
}

/*
 * A timer never initialised but all zero, or NULL, is refused with -EINVAL
 * by every arm and cancel, whether the arm would be placed at once, parked
 * with deferral on, or parked from a callback of the run, and nothing
 * changes (an add from a callback said -EBUSY, a mod parked it through its
 * NULL links).
 */
static struct ht zeroed_ok;
static int zeroed_runs;

/* a debug_checks build reports the timer first: then -EINVAL all the same */
static void zeroed_misuse(const char *what)
{
	assert_non_null(strstr(what, "not initialised"));
}

static void zeroed_arms_refused(void)
{
	struct tw_timer z;
	size_t n = twheel_count(twheel_host_wheel(&H));
	char msg[128];
	twheel_misuse_fn old = twheel_set_misuse_handler(zeroed_misuse);

	memset(&z, 0, sizeof(z));
	z.func = ht_cb;
	assert_int_equal(twheel_host_add(&H, &z, TICK), -EINVAL);
	assert_int_equal(twheel_host_add(&H, &z, 0), -EINVAL);
	assert_int_equal(twheel_host_mod(&H, &z, TICK), -EINVAL);
	assert_int_equal(twheel_host_add_at(&H, &z, fake_ns + TICK), -EINVAL);
	assert_int_equal(twheel_host_mod_at(&H, &z, fake_ns + TICK), -EINVAL);
	assert_int_equal(twheel_host_del(&H, &z), -EINVAL);
	assert_int_equal(twheel_host_add(&H, NULL, TICK), -EINVAL);
	assert_int_equal(twheel_host_mod(&H, NULL, TICK), -EINVAL);
	assert_int_equal(twheel_host_add_at(&H, NULL, TICK), -EINVAL);
	assert_int_equal(twheel_host_del(&H, NULL), -EINVAL);
	twheel_set_misuse_handler(old);
	assert_null(z.entry.next);
	assert_int_equal(twheel_count(twheel_host_wheel(&H)), n);
	assert_int_equal(twheel_check(twheel_host_wheel(&H), msg, sizeof(msg)), 0);
}

static void zeroed_cb(struct tw_timer *t)
{
	ht_cb(t);
	zeroed_runs++;
	zeroed_arms_refused();
}

static void zeroed_timer_refused_in_every_mode(void **state)
{
	struct ht x;

	(void)state;
	ht_init(&x, 1);
	ht_init(&zeroed_ok, 1);
	host_open(10 * TICK);
	zeroed_arms_refused(); /* placed at once */
	assert_false(host_armed);
	assert_int_equal(twheel_host_add_at(&H, &x.t, 1000 * TICK), 0);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	zeroed_arms_refused(); /* parked: deferral on, the host timer armed */
	assert_int_equal(twheel_host_place(&H), 0);
	zeroed_ok.t.func = zeroed_cb;
	assert_int_equal(twheel_host_add_at(&H, &zeroed_ok.t, 12 * TICK), 0);
	fake_ns = 12 * TICK;
	zeroed_runs = 0;
	assert_int_equal(host_fire(), 1); /* parked: from a callback */
	assert_int_equal(zeroed_runs, 1);
	assert_int_equal(twheel_count(twheel_host_wheel(&H)), 1);
	assert_int_equal(twheel_host_del(&H, &x.t), 1);
	assert_false(host_armed);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

static void passed_deadline_is_due_in_next_run(void **state)
{
	struct ht x[3];

	(void)state;
	ht_init(x, 3);
	host_open(10 * TICK + TICK / 2); /* the host's latest reading: 10.5 ticks */
	x[0].deadline = 10 * TICK + TICK / 5; /* passed before that reading */
	x[1].deadline = 3 * TICK;             /* long passed */
	assert_int_equal(twheel_host_add_at(&H, &x[0].t, x[0].deadline), 0);
	assert_int_equal(twheel_host_add_at(&H, &x[1].t, x[1].deadline), 0);
	assert_true(host_armed);
	assert_int_equal(host_wake, fake_ns); /* as soon as possible */
	fake_ns += 1000; /* still inside tick 10 */
	assert_int_equal(host_fire(), 2);
	assert_int_equal(x[0].fired + x[1].fired, 2);
	assert_false(host_armed); /* empty: stopped, no idle wake-up */

	/* a deadline that passed after the latest reading: never early, and due
	 * at the tick boundary after it */
	x[2].deadline = fake_ns + 100; /* 10.5 ticks + a little */
	fake_ns += 2000;                /* it has passed, but no reading saw it */
	assert_int_equal(twheel_host_add_at(&H, &x[2].t, x[2].deadline), 0);
	assert_true(host_armed);
	assert_int_equal(host_wake, 11 * TICK);
	fake_ns = 11 * TICK;
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x[2].fired, 1);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/* Spin until CLOCK_MONOTONIC has moved @ns on. */
static void spin_mono(uint64_t ns)
{
	uint64_t end = twheel_rt_clock_monotonic(NULL) + ns;

	while (twheel_rt_clock_monotonic(NULL) < end)
		;
}

/*
 * A delay of 0 has come: it is due in the next run, like a passed
 * deadline, whatever twheel_rt_now_upper() would count from. With the
 * default clock, a reading this thread took in the last 1/16 of a tick
 * and reuses is counted as a time in the next tick: the timer would wait
 * for that tick. Each round arms it so (where the reading is reused) and
 * runs the host in the same tick, with 1/64 of a tick to spare.
 */
static void zero_delay_is_due_in_next_run(void **state)
{
	const uint64_t tick = UINT64_C(64000000), slack = tick / 16;
	struct twheel_rt rt;
	struct twheel_host h;
	struct ht x;
	int same_tick = 0;

	(void)state;
	host_armed = false;
	twheel_rt_init(&rt, tick, NULL, NULL);
	assert_int_equal(twheel_host_init(&h, &rt, &fake_ops), 0);
	for (int round = 0; round < 6; round++) {
		uint64_t before, after;

		ht_init(&x, 1);
		/* two readings 2 ms apart let twheel_rt_now_upper() reuse one */
		twheel_rt_now_upper(&rt);
		spin_mono(2000000);
		twheel_rt_now_upper(&rt);
		/* then one in the last 1/32 .. 1/64 of a tick, reused by the add */
		do
			before = twheel_rt_clock_monotonic(NULL);
		while (before % tick < tick - slack / 2 || before % tick > tick - slack / 4);
		twheel_rt_now_upper(&rt);
		assert_int_equal(twheel_host_add(&h, &x.t, 0), 0);
		long n = twheel_host_run(&h);
		after = twheel_rt_clock_monotonic(NULL);
		if (after / tick != before / tick) {
			twheel_host_del(&h, &x.t); /* preempted past the boundary: no verdict */
			continue;
		}
		same_tick++;
		assert_int_equal(n, 1);
		assert_int_equal(x.fired, 1);
	}
	assert_true(same_tick > 0);
	assert_int_equal(twheel_host_fini(&h, NULL, NULL), 0);
}

static uint64_t rng_state;

/*
 * Random arms (delay or deadline, passed or not), re-arms and cancels while
 * time moves on in random steps; the host timer fires exactly at the time
 * it was armed for. Each fire: not before the deadline, at most one tick
 * after it (or after the arm, for a deadline that had passed). Cancelled
 * timers never fire; nothing is left at the end.
 */
static void simulated_loop_never_early_fires_once(void **state)
{
	enum { N = 256, STEPS = 200000 };
	struct ht x[N];
	struct twheel_rt_stats st;
	long runs = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		rng_state = seed;
		ht_init(x, N);
		host_open(seed * 7777777);
		for (int s = 0; s < STEPS; s++) {
			struct ht *p = &x[splitmix64(&rng_state) % N];
			uint64_t r = splitmix64(&rng_state);
			uint64_t d = (r >> 8) % (r & 1 ? 5 * TICK : 3000 * TICK);
			int rc;

			switch (r % 7) {
			case 0:
			case 1:
				rc = twheel_host_mod(&H, &p->t, d);
				p->deadline = fake_ns + d;
				break;
			case 2:
			case 3: { /* deadlines around now, some passed */
				uint64_t base = twheel_host_now(&H);
				p->deadline = (r & 2) && base > d ? base - d / 8 : base + d;
				rc = twheel_host_mod_at(&H, &p->t, p->deadline);
				break;
			}
			case 4:
				rc = twheel_host_del(&H, &p->t);
				p->deadline = UINT64_MAX;
				break;
			default: /* time passes; the host timer fires if it is due */
				rc = 0;
				{
					uint64_t next = fake_ns + (r >> 8) % (2 * TICK);
					if (host_armed && host_wake <= next) {
						fake_ns = host_wake > fake_ns ? host_wake : fake_ns;
						assert_true(host_fire() >= 0);
						runs++;
					} else {
						fake_ns = next;
					}
				}
				continue;
			}
			assert_true(rc >= 0);
			p->due = p->deadline > fake_ns ? p->deadline : fake_ns;
		}
		/* let everything run out */
		while (host_armed) {
			fake_ns = host_wake > fake_ns ? host_wake : fake_ns;
			assert_true(host_fire() >= 0);
			runs++;
		}
		assert_int_equal(twheel_count(twheel_host_wheel(&H)), 0);
		assert_int_equal(twheel_host_get_stats(&H, &st), 0);
		assert_true(st.fired > (uint64_t)STEPS / 10);
		assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	}
	assert_true(runs > 1000);
}

/*
 * With twheel_host_defer() on, arms by delay read no clock: they are
 * pending at once (del, mod, count, fini see them) and are placed by
 * twheel_host_place() from one reading, which counts every delay from a
 * time after its call and re-arms the host timer once for the batch.
 */
static void deferred_delays_read_no_clock(void **state)
{
	enum { N = 30 }; /* 60 arms: fewer than a batch of 64 */
	struct ht *x = malloc(N * sizeof(*x));
	struct ht far;

	(void)state;
	assert_non_null(x);
	ht_init(x, N);
	ht_init(&far, 1);
	host_open(100 * TICK + 123);
	assert_int_equal(twheel_host_add_at(&H, &far.t, 10000 * TICK), 0);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	clock_reads = 0;
	host_arms = 0;
	for (int i = 0; i < N; i++)
		assert_int_equal(twheel_host_add(&H, &x[i].t, 50 * TICK + (uint64_t)i), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(twheel_host_mod(&H, &x[i].t, 60 * TICK + (uint64_t)i), 1);
	assert_int_equal(twheel_host_add(&H, &x[0].t, TICK), -EBUSY);
	assert_int_equal(clock_reads, 0);
	assert_int_equal(host_arms, 0);
	assert_true(tw_timer_pending(&x[0].t));
	assert_int_equal(twheel_count(twheel_host_wheel(&H)), N + 1);
	assert_int_equal(twheel_host_del(&H, &x[1].t), 1);
	assert_int_equal(twheel_host_del(&H, &x[1].t), 0);
	/* the clock moved on before the placement: the delays count from there */
	fake_ns = 105 * TICK;
	for (int i = 2; i < N; i++)
		x[i].deadline = 105 * TICK + 60 * TICK + (uint64_t)i;
	x[0].deadline = 105 * TICK + 60 * TICK;
	assert_int_equal(twheel_host_place(&H), N - 1);
	assert_int_equal(clock_reads, 1);
	assert_int_equal(host_arms, 1);
	assert_int_equal(host_wake, 165 * TICK);
	assert_int_equal(twheel_host_place(&H), 0); /* nothing parked: no reading */
	assert_int_equal(clock_reads, 1);
	assert_int_equal(twheel_check(twheel_host_wheel(&H), NULL, 0), 0);
	for (int i = 0; i < 10 && x[N - 1].fired == 0; i++) {
		fake_ns = host_wake;
		host_fire();
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(x[i].fired, i != 1);
	assert_int_equal(x[1].fired, 0);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	free(x);
}

/*
 * An arm by deadline earlier than the tick the host timer waits for, while
 * an arm by delay waits parked: the host timer is set for that deadline's
 * tick. The wheel reports a parked timer as due at once, so asking it
 * armed the host timer to fire at once: a run that fired nothing.
 */
static void deadline_arm_while_parked_waits_for_its_tick(void **state)
{
	struct twheel_host_stats st;
	struct ht x[3];

	(void)state;
	ht_init(x, 3);
	host_open(100 * TICK + 123);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	assert_int_equal(twheel_host_add(&H, &x[0].t, 100 * TICK), 0); /* the host timer */
	assert_int_equal(host_wake, 201 * TICK);
	assert_int_equal(twheel_host_add(&H, &x[1].t, 50 * TICK), 0); /* parked */
	host_arms = 0;
	x[2].deadline = 110 * TICK + 1;
	assert_int_equal(twheel_host_add_at(&H, &x[2].t, x[2].deadline), 0);
	assert_int_equal(host_arms, 1);
	assert_int_equal(host_wake, 111 * TICK);
	/* the placement before the wait: the parked delay is later still */
	x[1].deadline = fake_ns + 50 * TICK;
	assert_int_equal(twheel_host_place(&H), 1);
	assert_int_equal(host_wake, 111 * TICK);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x[2].fired, 1);
	assert_int_equal(twheel_host_get_stats(&H, &st), 0);
	assert_int_equal(st.idle_wakeups, 0);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	assert_int_equal(x[1].fired, 1);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * The wheel's time stands still while the host timer sleeps. A short
 * timer armed 1000 ticks after the wheel's last run (into an empty wheel,
 * or beside a far timer; by delay, by deadline, parked and placed) wakes
 * the host for its own tick, in one run that fires it: not first for the
 * cascade tick of a slot above the first level, where an expiry 256
 * ticks or more past the wheel's time would put it (a run that fires
 * nothing).
 */
static void short_arm_after_idle_wakes_for_its_tick(void **state)
{
	struct twheel_host_stats st;
	struct ht x[4], far;

	(void)state;
	ht_init(x, 4);
	ht_init(&far, 1);
	host_open(100 * TICK + 123);
	assert_int_equal(twheel_host_add(&H, &x[0].t, 2 * TICK), 0);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	assert_false(host_armed);
	/* an empty wheel, idle since: by delay, then by deadline */
	fake_ns += 1000 * TICK + 456;
	x[0].deadline = fake_ns + 2 * TICK;
	assert_int_equal(twheel_host_add(&H, &x[0].t, 2 * TICK), 0);
	assert_int_equal(host_wake, (fake_ns / TICK + 3) * TICK);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	fake_ns += 1000 * TICK + 789;
	x[1].deadline = fake_ns + 3 * TICK;
	assert_int_equal(twheel_host_add_at(&H, &x[1].t, x[1].deadline), 0);
	assert_int_equal(host_wake, (fake_ns / TICK + 4) * TICK);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	/* a far timer pending (its cascade tick 16,000 ticks on at least) */
	assert_int_equal(twheel_host_add(&H, &far.t, 100000 * TICK), 0);
	assert_true(host_wake > fake_ns + 16000 * TICK);
	fake_ns += 1000 * TICK + 321;
	x[2].deadline = fake_ns + 2 * TICK;
	assert_int_equal(twheel_host_add_at(&H, &x[2].t, x[2].deadline), 0);
	assert_int_equal(host_wake, (fake_ns / TICK + 3) * TICK);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	assert_true(host_wake > fake_ns + 16000 * TICK);
	/* by delay with deferral on: parked, placed 1000 ticks after the run */
	assert_int_equal(twheel_host_defer(&H, true), 0);
	assert_int_equal(twheel_host_add(&H, &x[3].t, 2 * TICK), 0);
	fake_ns += 1000 * TICK + 654;
	x[3].deadline = fake_ns + 2 * TICK;
	assert_int_equal(twheel_host_place(&H), 1);
	assert_int_equal(host_wake, (fake_ns / TICK + 3) * TICK);
	fake_ns = host_wake;
	assert_int_equal(host_fire(), 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(x[i].fired, 1 + (i == 0));
	assert_int_equal(twheel_host_get_stats(&H, &st), 0);
	assert_true(st.wakeups == 5 && st.idle_wakeups == 0);
	assert_int_equal(far.fired, 0);
	assert_int_equal(twheel_check(twheel_host_wheel(&H), NULL, 0), 0);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * twheel_host_expires() of a timer parked by delay is the tick a placement
 * from the host's latest reading gives (tw_timer_expires() is its delay
 * then): the same tick as the placement gives with the clock standing
 * still, a lower bound once the clock moved on. Of a placed timer it is
 * tw_timer_expires().
 */
static void expires_of_a_parked_timer_is_its_tick(void **state)
{
	struct ht x[3];
	tw_tick_t e1, e2;

	(void)state;
	ht_init(x, 3);
	host_open(100 * TICK + 123);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	assert_int_equal(twheel_host_add(&H, &x[0].t, 100 * TICK), 0); /* placed at once */
	assert_int_equal(twheel_host_expires(&H, &x[0].t), tw_timer_expires(&x[0].t));
	assert_int_equal(twheel_host_add(&H, &x[1].t, 50 * TICK + 7), 0); /* parked */
	assert_true(tw_timer_pending(&x[1].t));
	e1 = twheel_host_expires(&H, &x[1].t);
	assert_int_equal(e1, (fake_ns + 50 * TICK + 7 + TICK - 1) / TICK);
	fake_ns += 3 * TICK + 5; /* the clock moves on before the next arm */
	assert_int_equal(twheel_host_add(&H, &x[2].t, 20 * TICK), 0); /* parked */
	e2 = twheel_host_expires(&H, &x[2].t); /* from the older reading */
	assert_int_equal(e2, (100 * TICK + 123 + 20 * TICK + TICK - 1) / TICK);
	assert_int_equal(twheel_host_expires(NULL, &x[0].t), tw_timer_expires(&x[0].t));
	assert_int_equal(twheel_host_expires(&H, NULL), 0);
	assert_int_equal(twheel_host_place(&H), 2);
	assert_int_equal(tw_timer_expires(&x[1].t), (fake_ns + 50 * TICK + 7 + TICK - 1) / TICK);
	assert_true(tw_timer_expires(&x[1].t) >= e1);
	assert_true(tw_timer_expires(&x[2].t) >= e2);
	assert_int_equal(twheel_host_expires(&H, &x[1].t), tw_timer_expires(&x[1].t));
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

static int handed;
static void count_handed(struct tw_timer *t, void *arg)
{
	(void)arg;
	assert_false(tw_timer_pending(t));
	handed++;
}

/*
 * Into an empty wheel an arm by delay is placed at once, arming the host
 * timer (the host loop may have nothing else to iterate for); later ones
 * are parked. A parked timer is handed back by fini; turning deferral off
 * places it.
 */
static void parked_timers_at_fini_and_defer_off(void **state)
{
	struct ht x[4];

	(void)state;
	ht_init(x, 4);
	host_open(10 * TICK);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	assert_int_equal(twheel_host_add(&H, &x[3].t, 50 * TICK), 0);
	assert_true(host_armed);
	assert_int_equal(host_wake, 60 * TICK);
	assert_int_equal(twheel_host_add(&H, &x[0].t, 5 * TICK), 0);
	assert_int_equal(host_wake, 60 * TICK);
	fake_ns = 12 * TICK;
	x[0].deadline = 17 * TICK;
	assert_int_equal(twheel_host_defer(&H, false), 0); /* places it */
	assert_true(host_armed);
	assert_int_equal(host_wake, 17 * TICK);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	assert_int_equal(twheel_host_add(&H, &x[1].t, 0), 0);
	assert_int_equal(twheel_host_add(&H, &x[2].t, 3 * TICK), 0);
	assert_int_equal(twheel_host_del(&H, &x[0].t), 1);
	handed = 0;
	assert_int_equal(twheel_host_fini(&H, count_handed, NULL), 0);
	assert_int_equal(handed, 3);
	assert_false(host_armed);
	assert_int_equal(twheel_host_place(&H), -EINVAL);
	assert_int_equal(twheel_host_defer(&H, true), -EINVAL);
	assert_int_equal(twheel_host_place(NULL), -EINVAL);
}

/*
 * fini's function re-arms by delay (parked: fini runs nothing) the other
 * timer of its object before that timer's turn, and frees the object when
 * handed its second timer: the re-armed one is dropped, not handed back,
 * and nothing of the wheel points at the object afterwards.
 */
static struct ht *pair;
static void rearm_other_then_free(struct tw_timer *t, void *arg)
{
	(void)arg;
	assert_false(tw_timer_pending(t));
	if (++handed == 2)
		free(pair);
	else
		assert_int_equal(twheel_host_mod(&H, &pair[t == &pair[0].t].t, 5 * TICK), 1);
}

static void fini_fn_rearms_the_other_timer_of_its_object(void **state)
{
	(void)state;
	pair = malloc(2 * sizeof(*pair));
	assert_non_null(pair);
	ht_init(pair, 2);
	host_open(10 * TICK);
	assert_int_equal(twheel_host_add(&H, &pair[0].t, 3000 * TICK), 0);
	assert_int_equal(twheel_host_add(&H, &pair[1].t, 3000 * TICK), 0);
	handed = 0;
	assert_int_equal(twheel_host_fini(&H, rearm_other_then_free, NULL), 0);
	assert_int_equal(handed, 1);
	free(pair);
}

/*
 * Delays armed from callbacks are parked and placed after the callbacks,
 * from the run's second reading, even without deferral: a callback that
 * stands the clock still, one that moves it on, and one that steps it back
 * before arming are never early; the run reads the clock twice in all.
 */
static struct ht cbx[4];
static void rearm_cb(struct tw_timer *t)
{
	struct ht *x = tw_container_of(t, struct ht, t);

	ht_cb(t);
	if (x == &cbx[0]) {
		/* arm by delay, then step the clock back: still never before
		 * 4 ms after a reading taken after the call */
		assert_int_equal(twheel_host_add(&H, &cbx[2].t, 4 * TICK), 0);
		assert_true(tw_timer_pending(&cbx[2].t));
		fake_ns -= 3 * TICK;
		assert_int_equal(twheel_host_place(&H), -EBUSY);
		assert_int_equal(twheel_host_defer(&H, true), -EBUSY);
	} else if (x == &cbx[1]) {
		assert_int_equal(twheel_host_mod(&H, &cbx[3].t, 2 * TICK), 1);
	}
}

static void delays_from_callbacks_are_placed_after_them(void **state)
{
	(void)state;
	memset(cbx, 0, sizeof(cbx));
	for (int i = 0; i < 4; i++)
		tw_timer_init(&cbx[i].t, rearm_cb);
	host_open(20 * TICK);
	assert_int_equal(twheel_host_add_at(&H, &cbx[0].t, 21 * TICK), 0);
	assert_int_equal(twheel_host_add_at(&H, &cbx[1].t, 21 * TICK), 0);
	assert_int_equal(twheel_host_add_at(&H, &cbx[3].t, 900 * TICK), 0);
	fake_ns = 21 * TICK;
	clock_reads = 0;
	assert_int_equal(host_fire(), 2);
	assert_int_equal(clock_reads, 2);
	assert_true(host_armed);
	/* counted from the reading after the callbacks, 18 ms: not from 21 */
	assert_int_equal(fake_ns, 18 * TICK);
	cbx[2].deadline = 22 * TICK;
	cbx[3].deadline = 20 * TICK;
	for (int i = 0; i < 20 && (!cbx[2].fired || !cbx[3].fired); i++) {
		fake_ns = host_wake;
		host_fire();
	}
	assert_int_equal(cbx[2].fired, 1);
	assert_int_equal(cbx[3].fired, 1);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/* The 64th arm parked since the last placement places the batch at once. */
static void a_batch_of_64_is_placed_at_once(void **state)
{
	struct ht x[65];
	uint64_t wake;

	(void)state;
	ht_init(x, 65);
	host_open(10 * TICK);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	assert_int_equal(twheel_host_add_at(&H, &x[64].t, 1000 * TICK), 0);
	wake = host_wake;
	clock_reads = 0;
	for (int i = 0; i < 63; i++)
		assert_int_equal(twheel_host_add(&H, &x[i].t, 5 * TICK), 0);
	assert_int_equal(clock_reads, 0);
	assert_true(host_wake == wake && wake > 16 * TICK);
	fake_ns = 11 * TICK;
	assert_int_equal(twheel_host_add(&H, &x[63].t, 5 * TICK), 0);
	assert_int_equal(clock_reads, 1);
	assert_int_equal(host_wake, 16 * TICK); /* placed from 11 ms */
	assert_int_equal(twheel_host_place(&H), 0);
	assert_int_equal(clock_reads, 1);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/* An adapter that schedules its own placements (twheel_host_init_ext()). */
static unsigned parked_calls;
static int parked_rc;
static uint64_t parked_reads; /* clock_reads when the op was called */
static int fake_parked(struct twheel_host *h)
{
	(void)h;
	parked_calls++;
	parked_reads = clock_reads;
	return parked_rc;
}

static const struct twheel_host_ops_ext fake_ext = { { fake_arm, fake_stop }, fake_parked };

/*
 * The parked op is called at the first park after each placement (a
 * scheduled twheel_host_place(), a run, the 64th park) outside runs, never
 * from a run's callbacks, and before any clock reading; when it refuses,
 * the host places at once, from a reading taken after the arm.
 */
static void parked_op_schedules_the_placement(void **state)
{
	const struct twheel_host_ops_ext no_op = { { fake_arm, fake_stop }, NULL };
	struct twheel_rt rt;
	struct ht x[70];

	(void)state;
	ht_init(x, 70);
	fake_ns = 10 * TICK;
	host_armed = false;
	twheel_rt_init(&rt, TICK, fake_clock, NULL);
	assert_int_equal(twheel_host_init_ext(&H, &rt, &no_op), -EINVAL);
	assert_int_equal(twheel_host_init_ext(&H, &rt, NULL), -EINVAL);
	assert_int_equal(twheel_host_init_ext(NULL, &rt, &fake_ext), -EINVAL);
	assert_int_equal(twheel_host_init_ext(&H, &rt, &fake_ext), 0);
	assert_ptr_equal(twheel_host_get_ops(&H), &fake_ext.ops);
	parked_calls = 0;
	parked_rc = 0;
	/* without deferral nothing is parked outside runs: no call */
	assert_int_equal(twheel_host_add(&H, &x[69].t, 1000 * TICK), 0);
	assert_int_equal(twheel_host_add(&H, &x[68].t, 900 * TICK), 0);
	assert_int_equal(parked_calls, 0);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	clock_reads = 0;
	for (int i = 0; i < 10; i++)
		assert_int_equal(twheel_host_add(&H, &x[i].t, 5 * TICK), 0);
	assert_int_equal(parked_calls, 1);
	assert_int_equal(parked_reads, 0);
	assert_int_equal(clock_reads, 0);
	/* the scheduled placement, later: the delays count from then */
	fake_ns = 12 * TICK;
	for (int i = 0; i < 10; i++)
		x[i].deadline = 17 * TICK;
	assert_int_equal(twheel_host_place(&H), 10);
	assert_int_equal(host_wake, 17 * TICK);
	/* the next park asks again; a refusal places at once */
	parked_rc = -1;
	fake_ns = 13 * TICK;
	clock_reads = 0;
	assert_int_equal(twheel_host_mod(&H, &x[0].t, 2 * TICK), 1);
	assert_int_equal(parked_calls, 2);
	assert_int_equal(parked_reads, 0); /* asked before reading the clock */
	assert_int_equal(clock_reads, 1);
	assert_int_equal(host_wake, 15 * TICK);
	x[0].deadline = 15 * TICK;
	parked_rc = 0;
	/* 64 parks: the batch is placed at once, the 65th asks again */
	for (int i = 10; i < 64 + 10; i++)
		assert_int_equal(twheel_host_mod(&H, &x[i % 64].t, 50 * TICK), i % 64 < 10);
	assert_int_equal(parked_calls, 3);
	assert_int_equal(twheel_host_mod(&H, &x[64].t, 50 * TICK), 0);
	assert_int_equal(parked_calls, 4);
	assert_int_equal(twheel_host_place(&H), 1);
	handed = 0;
	assert_int_equal(twheel_host_fini(&H, count_handed, NULL), 0);
	assert_int_equal(handed, 67);
}

/* The run places what was parked before it and what its callbacks park: no call. */
static void parked_cb(struct tw_timer *t)
{
	ht_cb(t);
	assert_int_equal(twheel_host_add(&H, &cbx[1].t, 3 * TICK), 0);
}

static void parked_op_not_called_from_a_run(void **state)
{
	struct twheel_rt rt;

	(void)state;
	memset(cbx, 0, sizeof(cbx));
	tw_timer_init(&cbx[0].t, parked_cb);
	tw_timer_init(&cbx[1].t, ht_cb);
	tw_timer_init(&cbx[2].t, ht_cb);
	fake_ns = 10 * TICK;
	host_armed = false;
	twheel_rt_init(&rt, TICK, fake_clock, NULL);
	assert_int_equal(twheel_host_init_ext(&H, &rt, &fake_ext), 0);
	assert_int_equal(twheel_host_defer(&H, true), 0);
	parked_calls = 0;
	parked_rc = 0;
	assert_int_equal(twheel_host_add_at(&H, &cbx[0].t, 11 * TICK), 0);
	assert_int_equal(twheel_host_add(&H, &cbx[2].t, 100 * TICK), 0);
	assert_int_equal(parked_calls, 1);
	fake_ns = 11 * TICK;
	assert_int_equal(host_fire(), 1);
	assert_int_equal(parked_calls, 1);
	assert_true(tw_timer_pending(&cbx[1].t) && tw_timer_pending(&cbx[2].t));
	assert_int_equal(host_wake, 14 * TICK);
	/* the placement scheduled before the run finds nothing: no reading */
	clock_reads = 0;
	assert_int_equal(twheel_host_place(&H), 0);
	assert_int_equal(clock_reads, 0);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
}

/*
 * An adapter whose host timer was closed under it (twheel_host_lost()),
 * found by its arm op, by its parked op, or by the placement of a batch of
 * 64: the arm that found it and every later arm, run, placement and defer
 * return -ESHUTDOWN and change nothing (a timer not pending stays so, one
 * pending stays pending); cancelling works; fini hands back what is
 * pending and calls no stop op.
 */
static bool lose_on_arm, lose_on_parked;
static void losing_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	if (lose_on_arm) {
		assert_int_equal(twheel_host_lost(h), 0);
		return;
	}
	fake_arm(h, wake_ns, now_ns);
}

static int losing_parked(struct twheel_host *h)
{
	if (lose_on_parked) {
		assert_int_equal(twheel_host_lost(h), 0);
		return -1;
	}
	return fake_parked(h);
}

static const struct twheel_host_ops_ext losing_ext = { { losing_arm, fake_stop }, losing_parked };

static void lost_host_refuses_every_arm_and_hands_back(void)
{
	struct ht y;
	unsigned stops = host_stops;

	ht_init(&y, 1);
	assert_int_equal(twheel_host_add(&H, &y.t, 5 * TICK), -ESHUTDOWN);
	assert_int_equal(twheel_host_add(&H, &y.t, 0), -ESHUTDOWN);
	assert_int_equal(twheel_host_mod(&H, &y.t, 5 * TICK), -ESHUTDOWN);
	assert_int_equal(twheel_host_add_at(&H, &y.t, fake_ns + 5 * TICK), -ESHUTDOWN);
	assert_int_equal(twheel_host_mod_at(&H, &y.t, 0), -ESHUTDOWN);
	assert_false(tw_timer_pending(&y.t));
	assert_int_equal(twheel_host_place(&H), -ESHUTDOWN);
	assert_int_equal(twheel_host_run(&H), -ESHUTDOWN);
	assert_int_equal(twheel_host_defer(&H, false), -ESHUTDOWN);
	assert_int_equal(twheel_host_lost(&H), 0); /* again: nothing more */
	assert_int_equal(host_stops, stops);
}

static void lost_host_refuses_arms(void **state)
{
	struct twheel_rt rt;
	struct ht x[66];

	(void)state;
	assert_int_equal(twheel_host_lost(NULL), -EINVAL);
	for (int how = 0; how < 4; how++) {
		ht_init(x, 66);
		fake_ns = 10 * TICK;
		host_armed = false;
		host_stops = 0;
		lose_on_arm = lose_on_parked = false;
		parked_rc = 0;
		twheel_rt_init(&rt, TICK, fake_clock, NULL);
		assert_int_equal(twheel_host_init_ext(&H, &rt, &losing_ext), 0);
		assert_int_equal(twheel_host_defer(&H, true), 0);
		switch (how) {
		case 0: /* into an empty wheel: the arm op finds it */
			lose_on_arm = true;
			assert_int_equal(twheel_host_add(&H, &x[0].t, 5 * TICK), -ESHUTDOWN);
			assert_false(tw_timer_pending(&x[0].t));
			handed = 1; /* none pending: fini hands back none */
			break;
		case 1: /* an earlier deadline re-arms: the arm op */
			assert_int_equal(twheel_host_add(&H, &x[0].t, 50 * TICK), 0);
			lose_on_arm = true;
			assert_int_equal(twheel_host_add_at(&H, &x[1].t, 20 * TICK), -ESHUTDOWN);
			assert_false(tw_timer_pending(&x[1].t));
			assert_int_equal(twheel_host_mod_at(&H, &x[0].t, 20 * TICK), -ESHUTDOWN);
			assert_true(tw_timer_pending(&x[0].t));
			handed = 0;
			break;
		case 2: /* the first park of a batch: the parked op */
			assert_int_equal(twheel_host_add(&H, &x[0].t, 50 * TICK), 0);
			lose_on_parked = true;
			assert_int_equal(twheel_host_mod(&H, &x[0].t, 60 * TICK), -ESHUTDOWN);
			assert_true(tw_timer_pending(&x[0].t));
			handed = 0;
			break;
		default: /* the 64th park places, and re-arms for an earlier timer */
			assert_int_equal(twheel_host_add(&H, &x[65].t, 500 * TICK), 0);
			for (int i = 0; i < 63; i++)
				assert_int_equal(twheel_host_add(&H, &x[i].t, 100 * TICK), 0);
			lose_on_arm = true;
			assert_int_equal(twheel_host_add(&H, &x[63].t, 5 * TICK), -ESHUTDOWN);
			assert_false(tw_timer_pending(&x[63].t));
			/* the 63 accepted before are pending, placed, handed back */
			assert_int_equal(twheel_host_del(&H, &x[0].t), 1);
			handed = -62;
			break;
		}
		lost_host_refuses_every_arm_and_hands_back();
		assert_int_equal(twheel_host_fini(&H, count_handed, NULL), 0);
		assert_int_equal(handed, 1);
		assert_int_equal(host_stops, 0);
	}
}

static void lost_from_a_callback_is_refused_cb(struct tw_timer *t)
{
	ht_cb(t);
	assert_int_equal(twheel_host_lost(&H), -EBUSY);
}

static void lost_from_a_callback_is_refused(void **state)
{
	struct ht x;

	(void)state;
	host_open(10 * TICK);
	memset(&x, 0, sizeof(x));
	tw_timer_init(&x.t, lost_from_a_callback_is_refused_cb);
	assert_int_equal(twheel_host_add(&H, &x.t, TICK), 0);
	fake_ns = 11 * TICK;
	assert_int_equal(host_fire(), 1);
	assert_int_equal(twheel_host_fini(&H, NULL, NULL), 0);
	assert_int_equal(twheel_host_lost(&H), -EINVAL); /* shut down */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deadline_arms_read_no_clock),
		cmocka_unit_test(zeroed_timer_refused_in_every_mode),
		cmocka_unit_test(passed_deadline_is_due_in_next_run),
		cmocka_unit_test(zero_delay_is_due_in_next_run),
		cmocka_unit_test(clock_steps_back_never_early),
		cmocka_unit_test(clock_steps_back_in_callback_never_early),
		cmocka_unit_test(passed_deadline_after_step_back_is_not_due),
		cmocka_unit_test(passed_deadline_then_step_back_has_come),
		cmocka_unit_test(host_at_tick_max),
		cmocka_unit_test(host_timer_touched_only_by_an_earlier_arm),
		cmocka_unit_test(shut_down_host_refuses_and_counts_nothing),
		cmocka_unit_test(simulated_loop_never_early_fires_once),
		cmocka_unit_test(deferred_delays_read_no_clock),
		cmocka_unit_test(deadline_arm_while_parked_waits_for_its_tick),
		cmocka_unit_test(short_arm_after_idle_wakes_for_its_tick),
		cmocka_unit_test(expires_of_a_parked_timer_is_its_tick),
		cmocka_unit_test(parked_timers_at_fini_and_defer_off),
		cmocka_unit_test(fini_fn_rearms_the_other_timer_of_its_object),
		cmocka_unit_test(delays_from_callbacks_are_placed_after_them),
		cmocka_unit_test(a_batch_of_64_is_placed_at_once),
		cmocka_unit_test(parked_op_schedules_the_placement),
		cmocka_unit_test(parked_op_not_called_from_a_run),
		cmocka_unit_test(lost_host_refuses_arms),
		cmocka_unit_test(lost_from_a_callback_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
