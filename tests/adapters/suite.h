/*
 * suite.h - the behaviour every host-loop adapter must show, written once
 * and run on each real host library (test_uv.c, test_ev.c, test_event.c,
 * test_epoll.c supply a struct host_loop and call suite_main()):
 *
 *   - no timer fires before its deadline on CLOCK_MONOTONIC, each fires
 *     exactly once, none fires grossly late (once the time the loop
 *     thread waited for a CPU is taken off: ../common/run_delay.h);
 *   - timer callbacks that re-arm themselves, cancel others and arm new
 *     ones; the same from the host loop's own handlers;
 *   - a delay counts from the call, not from the loop's cached time;
 *   - arms by delay from a handler read no clock when the adapter places
 *     them once per iteration, one each otherwise (injected clock);
 *   - arms by delay placed later than the call (from a handler, from
 *     outside the loop) are never early, the injected clock jumping ahead,
 *     standing still or stepping back before the placement, and placed
 *     before the loop waits;
 *   - no wake-ups while the wheel is empty (counted), and the host loop
 *     returns when nothing is pending (the host timer was stopped); a
 *     short timer armed after the wheel idled, one wake-up (no cascade);
 *   - shutdown hands every pending timer back exactly once, also from one
 *     of the host loop's handlers while the loop runs;
 *   - an injected clock (another epoch, or CLOCK_MONOTONIC through a
 *     function of its own: no host wake-up before its time);
 *   - bad input gives -EINVAL / -EBUSY.
 */
#ifndef TESTS_ADAPTERS_SUITE_H
#define TESTS_ADAPTERS_SUITE_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <twheel/host.h>

#include "../common/run_delay.h"
#include "../common/xorshift64.h"

/* What a test needs from a host loop; each function acts on "the" loop
 * that setup() created for the current test. */
struct host_loop {
	const char *name;
	void (*setup)(void);    /* create the loop */
	void (*teardown)(void); /* close it: must find nothing left open */
	struct twheel_host *(*create)(const struct twheel_rt *rt);
	int (*destroy)(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg), void *arg);
	/* run until the loop has nothing to do (the host timer stopped) */
	void (*run)(void);
	/* run for @ms milliseconds of real time, whatever is pending */
	void (*run_for)(unsigned ms);
	/* have @fn(@arg) called from one of the loop's own handlers (a native
	 * zero timer or the like) during the next run */
	void (*call_soon)(void (*fn)(void *arg), void *arg);
	/* optional: keep the loop waking every 100 us with a native timer of
	 * its own until *@until changes (the host loop refreshes its cached
	 * time all along) */
	void (*busy)(const int *until);
	/* the adapter places arms by delay once per iteration
	 * (twheel_host_defer()): they read no clock */
	bool places;
};

static const struct host_loop *HL;
static struct twheel_host *H;

#define TICK_NS UINT64_C(1000000)
/* Generous (timer slack of host loops that count in milliseconds, and
 * sanitizers), on the lateness that is not the scheduler's: the time the
 * thread waited for a CPU is taken off (run_delay.h). Early is the hard
 * rule. */
#define LATE_SLACK_NS UINT64_C(200000000)

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ttimer {
	struct tw_timer t;
	uint64_t deadline; /* CLOCK_MONOTONIC ns */
	uint64_t fired_at;
	int fired;
	int id;
	int rearms;        /* re-arm itself this many more times */
	struct ttimer *victim; /* cancel this one when firing */
	struct ttimer *spawn;  /* arm this one (2 ms) when firing */
};

static int early, late;
/* the loop thread's run queue time at each arm and each fire: the loop
 * runs inside the host library, so these are the samples taken before it
 * sleeps (run_delay.h) */
static struct run_delay_log rdl;

static void t_cb(struct tw_timer *t)
{
	struct ttimer *x = tw_container_of(t, struct ttimer, t);
	uint64_t rd0 = thread_run_delay(), now = mono_ns(), rd = thread_run_delay();

	x->fired++;
	x->fired_at = now;
	if (now < x->deadline)
		early++;
	else if (run_delay_own_late(&rdl, x->deadline, now, rd) > TICK_NS + LATE_SLACK_NS)
		late++;
	run_delay_add(&rdl, now, rd0);
	if (x->victim)
		assert_int_equal(twheel_host_del(H, &x->victim->t), 1);
	if (x->spawn) {
		x->spawn->deadline = mono_ns() + 2 * TICK_NS;
		assert_int_equal(twheel_host_add(H, &x->spawn->t, 2 * TICK_NS), 0);
	}
	if (x->rearms > 0) {
		x->rearms--;
		x->deadline = mono_ns() + 3 * TICK_NS;
		assert_int_equal(twheel_host_mod(H, t, 3 * TICK_NS), 0);
	}
}

static void arm(struct ttimer *x, uint64_t delay_ns)
{
	run_delay_mark(&rdl);
	x->deadline = mono_ns() + delay_ns;
	assert_int_equal(twheel_host_add(H, &x->t, delay_ns), 0);
}

static int setup(void **state)
{
	(void)state;
	early = late = 0;
	rdl.n = rdl.dropped = 0;
	HL->setup();
	H = HL->create(NULL);
	assert_non_null(H);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(rdl.dropped, 0);
	if (H)
		assert_int_equal(HL->destroy(H, NULL, NULL), 0);
	H = NULL;
	HL->teardown();
	return 0;
}

static uint64_t rnd_state = 88172645463325252ull;

#define NT 300

static void fires_once_never_early(void **state)
{
	static struct ttimer tm[NT];
	struct twheel_rt_stats st;

	(void)state;
	memset(tm, 0, sizeof(tm));
	for (int i = 0; i < NT; i++) {
		tw_timer_init(&tm[i].t, t_cb);
		if (i % 3 == 0) {
			/* absolute deadlines, some already passed */
			uint64_t now = twheel_host_now(H);

			tm[i].deadline = now + xorshift64(&rnd_state) % (40 * TICK_NS) - 5 * TICK_NS;
			assert_int_equal(twheel_host_add_at(H, &tm[i].t, tm[i].deadline), 0);
		} else {
			/* 0 .. 40 ms, many of them within a tick */
			arm(&tm[i], xorshift64(&rnd_state) % (40 * TICK_NS));
		}
	}
	HL->run(); /* returns only once the host timer is stopped */
	for (int i = 0; i < NT; i++)
		assert_int_equal(tm[i].fired, 1);
	assert_int_equal(early, 0);
	assert_int_equal(late, 0);
	assert_true(twheel_count(twheel_host_wheel(H)) == 0);
	assert_int_equal(twheel_host_get_stats(H, &st), 0);
	assert_true(st.fired == NT);
	/* every wake-up that ran nothing is a cascade tick: few */
	assert_true(st.idle_wakeups <= 2 * TWHEEL_LEVELS);
}

static void callbacks_rearm_cancel_and_arm(void **state)
{
	static struct ttimer a, b, c, d, e;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	memset(&e, 0, sizeof(e));
	tw_timer_init(&a.t, t_cb);
	tw_timer_init(&b.t, t_cb);
	tw_timer_init(&c.t, t_cb);
	tw_timer_init(&d.t, t_cb);
	tw_timer_init(&e.t, t_cb);
	a.rearms = 5;    /* fires 6 times */
	b.victim = &c;   /* b (3 ms) cancels c (30 ms) */
	b.spawn = &d;    /* and arms d */
	e.rearms = 1;    /* e re-arms itself once */
	arm(&a, 2 * TICK_NS);
	arm(&b, 3 * TICK_NS);
	arm(&c, 30 * TICK_NS);
	arm(&e, 1 * TICK_NS);
	HL->run();
	assert_int_equal(a.fired, 6);
	assert_int_equal(b.fired, 1);
	assert_int_equal(c.fired, 0);
	assert_int_equal(d.fired, 1);
	assert_int_equal(e.fired, 2);
	assert_int_equal(early, 0);
	assert_int_equal(late, 0);
}

/* ---- from the host loop's own handlers ------------------------------------- */

/*
 * Arm 30, 60 and 90 ms, cancel the second, re-arm the third to 1 ms: it
 * fires before the first. Its 1 ms counts from a time after the call (the
 * placement's reading, where the adapter places), so it fires after the
 * first only if 28 ms or more passed between the first arm and that
 * reading: microseconds of the loop's own work, unless the loop thread
 * waited for a CPU meanwhile (with 2 and 1 ms, a wait of 1 ms did it).
 * The order is checked unless the thread waited 25 ms or more in the run
 * (run_delay.h).
 */
static struct ttimer hx[3];
static uint64_t hx_rd; /* the loop thread's run queue time at the arms */

static void from_handler(void *arg)
{
	(void)arg;
	hx_rd = thread_run_delay();
	arm(&hx[0], 30 * TICK_NS);
	arm(&hx[1], 60 * TICK_NS);
	arm(&hx[2], 90 * TICK_NS);
	assert_int_equal(twheel_host_del(H, &hx[1].t), 1);
	hx[2].deadline = mono_ns() + 1 * TICK_NS;
	assert_int_equal(twheel_host_mod(H, &hx[2].t, 1 * TICK_NS), 1);
}

static void host_handlers_arm_and_cancel(void **state)
{
	uint64_t waited;

	(void)state;
	memset(hx, 0, sizeof(hx));
	for (int i = 0; i < 3; i++)
		tw_timer_init(&hx[i].t, t_cb);
	HL->call_soon(from_handler, NULL);
	HL->run();
	waited = thread_run_delay() - hx_rd;
	assert_int_equal(hx[0].fired, 1);
	assert_int_equal(hx[1].fired, 0);
	assert_int_equal(hx[2].fired, 1);
	if (waited < 25 * TICK_NS)
		assert_true(hx[2].fired_at < hx[0].fired_at);
	else
		print_message("# waited %.1f ms for a CPU: the order is not checked\n", waited / 1e6);
	assert_int_equal(early, 0);
}

/* A handler that ran long: the loop's cached time is 20 ms old. */
static struct ttimer slow_t;
static void slow_handler(void *arg)
{
	uint64_t end = mono_ns() + 20 * TICK_NS;

	(void)arg;
	while (mono_ns() < end)
		;
	arm(&slow_t, 5 * TICK_NS);
}

static void delay_counts_from_the_call_not_the_cached_time(void **state)
{
	(void)state;
	memset(&slow_t, 0, sizeof(slow_t));
	tw_timer_init(&slow_t.t, t_cb);
	HL->call_soon(slow_handler, NULL);
	HL->run();
	assert_int_equal(slow_t.fired, 1);
	assert_true(slow_t.fired_at >= slow_t.deadline);
	assert_int_equal(early, 0);
}

/*
 * Arms by delay from one of the host loop's handlers, another timer keeping
 * the host timer armed: where the adapter places them once per iteration,
 * none reads the clock (elsewhere each does: the clock is injected, so
 * twheel_rt_now_upper() reads it); each fires once, never before its delay
 * after the call.
 */
#define NBATCH 50
static struct ttimer batch[NBATCH + 1];
static unsigned counted_reads, reads_in_arms;

static uint64_t counting_clock(void *arg)
{
	(void)arg;
	counted_reads++;
	return mono_ns();
}

static void arm_batch(void *arg)
{
	unsigned r0;

	(void)arg;
	arm(&batch[NBATCH], 3 * TICK_NS);
	r0 = counted_reads;
	for (int i = 0; i < NBATCH; i++)
		arm(&batch[i], (uint64_t)(i % 7 + 1) * TICK_NS + (uint64_t)i * 1000);
	reads_in_arms = counted_reads - r0;
}

static void delays_from_a_handler_batched(void **state)
{
	struct twheel_rt rt;

	(void)state;
	assert_int_equal(HL->destroy(H, NULL, NULL), 0);
	twheel_rt_init(&rt, TICK_NS, counting_clock, NULL);
	H = HL->create(&rt);
	assert_non_null(H);
	memset(batch, 0, sizeof(batch));
	for (int i = 0; i <= NBATCH; i++)
		tw_timer_init(&batch[i].t, t_cb);
	HL->call_soon(arm_batch, NULL);
	HL->run();
	for (int i = 0; i <= NBATCH; i++)
		assert_int_equal(batch[i].fired, 1);
	assert_int_equal(early, 0);
	if (HL->places)
		assert_int_equal(reads_in_arms, 0);
	else /* one each, and one more to re-arm the host timer earlier */
		assert_true(reads_in_arms >= NBATCH);
}

/*
 * Arms by delay placed later than the call, where the adapter places them
 * once per iteration: from a handler and from outside the loop, while the
 * injected clock jumps ahead (between the host's latest reading and the
 * call), stands still, or steps back (after the call, before the
 * placement). Each fires once, and never before its delay of real time has
 * passed since the call; unless the clock stepped back after the call,
 * also not before the injected clock reads its reading at the call plus
 * the delay (placed from a reading taken before the call, a timer armed
 * after the jump would fire up to the jump early).
 */
static int64_t adj_off;          /* the injected clock: CLOCK_MONOTONIC + adj_off */
static uint64_t adj_still_until; /* ...standing still at adj_still_at until then */
static uint64_t adj_still_at;

static uint64_t adj_clock(void *arg)
{
	uint64_t m = mono_ns();

	(void)arg;
	return m < adj_still_until ? adj_still_at : m + (uint64_t)adj_off;
}

/* The injected clock stands still for @ns of real time, then goes on. */
static void adj_stand_still(uint64_t ns)
{
	adj_still_at = adj_clock(NULL);
	adj_still_until = mono_ns() + ns;
	adj_off -= (int64_t)ns;
}

struct atimer {
	struct tw_timer t;
	uint64_t real_due, adj_due; /* the call's readings plus the delay */
	uint64_t real_fired, adj_fired;
	bool stepped_back;          /* the clock stepped back after the call */
	int fired;
};

static void adj_cb(struct tw_timer *t)
{
	struct atimer *x = tw_container_of(t, struct atimer, t);

	x->fired++;
	x->real_fired = mono_ns();
	x->adj_fired = adj_clock(NULL);
}

static void adj_arm(struct atimer *x, uint64_t delay_ns)
{
	x->real_due = mono_ns() + delay_ns;
	x->adj_due = adj_clock(NULL) + delay_ns;
	assert_true(twheel_host_mod(H, &x->t, delay_ns) >= 0);
}

#define NADJ 12
static struct atimer adj[NADJ];

/* Each phase arms 4: after a jump, standing still, then before a step back. */
static void adj_phase(void *arg)
{
	struct atimer *a = arg;

	adj_off += 30 * (int64_t)TICK_NS; /* 30 ms ahead of the host's latest reading */
	adj_arm(&a[0], 5 * TICK_NS);
	adj_arm(&a[1], 1 * TICK_NS);
	adj_stand_still(3 * TICK_NS);
	adj_arm(&a[2], 2 * TICK_NS);
	adj_arm(&a[3], 4 * TICK_NS);
	a[3].stepped_back = true;
	adj_off -= 20 * (int64_t)TICK_NS; /* after the call, before the placement */
}

/* Keeps the host timer armed; the clock jumps while it waits: not judged. */
static int keeper_fired;
static void keeper_cb(struct tw_timer *t)
{
	(void)t;
	keeper_fired++;
}

static void delays_placed_later_never_early(void **state)
{
	static struct tw_timer keeper;
	struct twheel_rt rt;

	(void)state;
	if (!HL->places)
		skip();
	assert_int_equal(HL->destroy(H, NULL, NULL), 0);
	adj_off = 0;
	adj_still_until = 0;
	twheel_rt_init(&rt, TICK_NS, adj_clock, NULL);
	H = HL->create(&rt);
	assert_non_null(H);
	memset(adj, 0, sizeof(adj));
	keeper_fired = 0;
	for (int i = 0; i < NADJ; i++)
		tw_timer_init(&adj[i].t, adj_cb);
	tw_timer_init(&keeper, keeper_cb);

	/* from a handler; the keeper keeps the host timer armed meanwhile */
	assert_int_equal(twheel_host_add(H, &keeper, 60 * TICK_NS), 0);
	HL->call_soon(adj_phase, &adj[0]);
	HL->run();
	/* from outside the loop (the adapter has run it: it places now) */
	assert_int_equal(twheel_host_add(H, &keeper, 60 * TICK_NS), 0);
	adj_phase(&adj[4]);
	HL->run();
	/* both, the first run's arms parked outside, the second's inside */
	assert_int_equal(twheel_host_add(H, &keeper, 60 * TICK_NS), 0);
	adj_phase(&adj[8]);
	HL->call_soon(adj_phase, &adj[8]);
	HL->run();
	for (int i = 0; i < NADJ; i++) {
		assert_int_equal(adj[i].fired, 1);
		assert_true(adj[i].real_fired >= adj[i].real_due);
		if (!adj[i].stepped_back)
			assert_true(adj[i].adj_fired >= adj[i].adj_due);
	}
	assert_int_equal(keeper_fired, 3);
}

/*
 * Where the adapter places once per iteration, it places before the host
 * loop waits: a 2 ms delay parked while the host timer waits 1 s for
 * another timer fires long before that one's time (placed only by the
 * host timer's run, it would fire with it). Armed from a handler, and
 * from outside the loop; each cancels the far timer, so that the loop
 * returns.
 */
static struct tw_timer far_t;
static uint64_t far_due;
static struct ttimer near_t[2];

static void near_cb(struct tw_timer *t)
{
	t_cb(t);
	assert_int_equal(twheel_host_del(H, &far_t), 1);
}

static void arm_near(void *arg)
{
	arm(arg, 2 * TICK_NS);
}

static void parked_delays_placed_before_the_loop_waits(void **state)
{
	(void)state;
	if (!HL->places)
		skip();
	memset(near_t, 0, sizeof(near_t));
	tw_timer_init(&far_t, keeper_cb);
	for (int i = 0; i < 2; i++)
		tw_timer_init(&near_t[i].t, near_cb);
	HL->run_for(1); /* the loop has run (the wrappers turn deferral on) */
	far_due = mono_ns() + 1000 * TICK_NS;
	assert_int_equal(twheel_host_add(H, &far_t, 1000 * TICK_NS), 0);
	HL->call_soon(arm_near, &near_t[0]);
	HL->run();
	far_due = mono_ns() + 1000 * TICK_NS;
	assert_int_equal(twheel_host_add(H, &far_t, 1000 * TICK_NS), 0);
	arm_near(&near_t[1]);
	HL->run();
	for (int i = 0; i < 2; i++) {
		assert_int_equal(near_t[i].fired, 1);
		assert_true(near_t[i].fired_at < far_due);
	}
	assert_int_equal(early, 0);
}

static void no_wakeups_while_idle(void **state)
{
	static struct ttimer a;
	struct twheel_rt_stats s0, s1;

	(void)state;
	memset(&a, 0, sizeof(a));
	tw_timer_init(&a.t, t_cb);

	/* armed then cancelled: the host timer is stopped at once */
	arm(&a, 5 * TICK_NS);
	assert_int_equal(twheel_host_del(H, &a.t), 1);
	HL->run_for(30);
	assert_int_equal(twheel_host_get_stats(H, &s0), 0);
	assert_true(s0.wakeups == 0);
	assert_true(s0.host_arms == 1 && s0.host_stops == 1);

	/* after the last timer fired: nothing more */
	arm(&a, 2 * TICK_NS);
	HL->run();
	assert_int_equal(a.fired, 1);
	assert_int_equal(twheel_host_get_stats(H, &s0), 0);
	HL->run_for(30);
	assert_int_equal(twheel_host_get_stats(H, &s1), 0);
	assert_true(s1.wakeups == s0.wakeups);
	assert_true(s0.wakeups >= 1);
}

static int drained[16];
static void drain_fn(struct tw_timer *t, void *arg)
{
	struct ttimer *x = tw_container_of(t, struct ttimer, t);

	assert_false(tw_timer_pending(t));
	drained[x->id]++;
	(*(int *)arg)++;
	/* arming again during shutdown is dropped, not leaked */
	twheel_host_add(H, t, TICK_NS);
}

static void shutdown_hands_back_pending_timers(void **state)
{
	static struct ttimer tm[16];
	int n = 0;

	(void)state;
	memset(tm, 0, sizeof(tm));
	memset(drained, 0, sizeof(drained));
	for (int i = 0; i < 16; i++) {
		tw_timer_init(&tm[i].t, t_cb);
		tm[i].id = i;
		arm(&tm[i], (uint64_t)(i + 1) * 1000 * TICK_NS);
	}
	assert_int_equal(HL->destroy(H, drain_fn, &n), 0);
	H = NULL;
	assert_int_equal(n, 16);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(drained[i], 1);
		assert_false(tw_timer_pending(&tm[i].t));
		assert_int_equal(tm[i].fired, 0);
	}
	HL->run(); /* completes the close; teardown checks nothing is left */
}

/*
 * Shut down with twheel_host_fini() (<twheel/host.h>: any host), then
 * destroyed: the destroy frees what is left, the adapter's own part (it
 * used to refuse the shut-down host with -EINVAL, the header's error for
 * a host the adapter did not create, and leak its handles or timerfd
 * and memory); the teardown checks that the loop has nothing left open.
 */
static void destroy_after_host_fini(void **state)
{
	static struct ttimer tm;
	int n = 0;

	(void)state;
	memset(&tm, 0, sizeof(tm));
	memset(drained, 0, sizeof(drained));
	tw_timer_init(&tm.t, t_cb);
	arm(&tm, 1000 * TICK_NS);
	assert_int_equal(twheel_host_fini(H, drain_fn, &n), 0);
	assert_int_equal(n, 1);
	assert_false(tw_timer_pending(&tm.t));
	assert_int_equal(twheel_host_add(H, &tm.t, TICK_NS), -EINVAL);
	assert_int_equal(HL->destroy(H, NULL, NULL), 0);
	H = NULL;
	HL->run(); /* completes the close */
	assert_int_equal(tm.fired, 0);
}

/*
 * Destroyed from one of the host loop's own handlers, with a timer placed
 * and one parked (an arm by delay while the host timer is armed): both are
 * handed back, and the loop goes on without the host (the libevent run
 * wrapper, twheel_event_loop(), frees it only when it returns; the libuv
 * handles close in this run) and returns when nothing else is pending.
 */
static struct ttimer doomed[2];
static int doomed_rc = 1, doomed_n;

static void destroy_from_handler(void *arg)
{
	(void)arg;
	arm(&doomed[1], 2 * TICK_NS);
	doomed_rc = HL->destroy(H, drain_fn, &doomed_n);
	if (doomed_rc == 0)
		H = NULL;
}

static void destroyed_from_a_handler(void **state)
{
	(void)state;
	memset(doomed, 0, sizeof(doomed));
	memset(drained, 0, sizeof(drained));
	doomed_rc = 1;
	doomed_n = 0;
	for (int i = 0; i < 2; i++) {
		tw_timer_init(&doomed[i].t, t_cb);
		doomed[i].id = i;
	}
	assert_int_equal(twheel_host_add_at(H, &doomed[0].t, twheel_host_now(H) + 1000 * TICK_NS), 0);
	HL->call_soon(destroy_from_handler, NULL);
	HL->run();
	assert_int_equal(doomed_rc, 0);
	assert_int_equal(doomed_n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(drained[i], 1);
		assert_int_equal(doomed[i].fired, 0);
		assert_false(tw_timer_pending(&doomed[i].t));
	}
}

static struct twheel_host *busy_h;
static int busy_rc = 1;
static void destroy_from_callback(struct tw_timer *t)
{
	(void)t;
	busy_rc = HL->destroy(busy_h, NULL, NULL);
}

static void bad_input(void **state)
{
	struct tw_timer t, nocb;

	(void)state;
	tw_timer_init(&t, destroy_from_callback);
	tw_timer_init(&nocb, NULL);
	assert_int_equal(HL->destroy(NULL, NULL, NULL), -EINVAL);
	assert_int_equal(twheel_host_add(NULL, &t, 0), -EINVAL);
	assert_int_equal(twheel_host_add(H, NULL, 0), -EINVAL);
	assert_int_equal(twheel_host_add(H, &nocb, 0), -EINVAL);
	assert_int_equal(twheel_host_mod(NULL, &t, 0), -EINVAL);
	assert_int_equal(twheel_host_add_at(NULL, &t, 0), -EINVAL);
	assert_int_equal(twheel_host_mod_at(NULL, &t, 0), -EINVAL);
	assert_int_equal(twheel_host_del(NULL, &t), -EINVAL);
	assert_int_equal(twheel_host_del(H, NULL), -EINVAL);
	assert_int_equal(twheel_host_run(NULL), -EINVAL);
	assert_int_equal(twheel_host_get_stats(H, NULL), -EINVAL);
	assert_null(twheel_host_wheel(NULL));
	assert_true(twheel_host_now(NULL) == 0);
	assert_int_equal(twheel_host_del(H, &t), 0);

	/* destroying from a timer callback is refused */
	busy_h = H;
	assert_int_equal(twheel_host_add(H, &t, 0), 0);
	assert_int_equal(twheel_host_add(H, &t, 0), -EBUSY);
	HL->run();
	assert_int_equal(busy_rc, -EBUSY);
}

/* An injected clock: CLOCK_MONOTONIC plus a large offset (another epoch). */
#define FAKE_OFFSET (UINT64_C(1) << 50)
static uint64_t offset_clock(void *arg)
{
	(void)arg;
	return mono_ns() + FAKE_OFFSET;
}

static void injected_clock(void **state)
{
	static struct ttimer tm[20];
	struct twheel_rt rt;

	(void)state;
	assert_int_equal(HL->destroy(H, NULL, NULL), 0);
	twheel_rt_init(&rt, 500000, offset_clock, NULL); /* 0.5 ms ticks */
	H = HL->create(&rt);
	assert_non_null(H);
	assert_true(twheel_host_now(H) >= FAKE_OFFSET);
	memset(tm, 0, sizeof(tm));
	for (int i = 0; i < 20; i++) {
		tw_timer_init(&tm[i].t, t_cb);
		arm(&tm[i], (uint64_t)i * 700000);
	}
	HL->run();
	for (int i = 0; i < 20; i++)
		assert_int_equal(tm[i].fired, 1);
	assert_int_equal(early, 0);
	assert_int_equal(late, 0);
}

/*
 * An injected clock that is CLOCK_MONOTONIC itself, through a function of
 * the test's own (so the adapter cannot tell). Armed from a native handler
 * late in a tick of the kernel's coarse clock, when a host loop that counts
 * from its coarse cached time lags most: the host timer must still not wake
 * before its wake time, so no wake-up runs nothing (no cascade is due:
 * every delay is a few ticks).
 */
static uint64_t mono_clock(void *arg)
{
	(void)arg;
	return mono_ns();
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct ttimer lag_t;

static void arm_when_coarse_lags(void *arg)
{
	struct timespec res;
	uint64_t c0, start, lag;

	(void)arg;
	clock_getres(CLOCK_MONOTONIC_COARSE, &res);
	lag = (uint64_t)res.tv_nsec * 9 / 10; /* 0.9 ms (HZ 1000) to 9 ms (HZ 100) */
	/* wait for the coarse clock to tick, then for most of its period */
	c0 = coarse_ns();
	while (coarse_ns() == c0)
		;
	start = mono_ns();
	while (mono_ns() - start < lag && coarse_ns() - c0 < 2 * (uint64_t)res.tv_nsec)
		;
	arm(&lag_t, 2 * TICK_NS);
	if (HL->busy)
		HL->busy(&lag_t.fired);
}

static void injected_monotonic_never_wakes_early(void **state)
{
	struct twheel_rt rt;
	struct twheel_rt_stats st;

	(void)state;
	assert_int_equal(HL->destroy(H, NULL, NULL), 0);
	twheel_rt_init(&rt, TICK_NS, mono_clock, NULL);
	H = HL->create(&rt);
	assert_non_null(H);
	memset(&lag_t, 0, sizeof(lag_t));
	tw_timer_init(&lag_t.t, t_cb);
	for (int i = 0; i < 16; i++) {
		HL->call_soon(arm_when_coarse_lags, NULL);
		HL->run();
		assert_int_equal(lag_t.fired, i + 1);
	}
	assert_int_equal(early, 0);
	assert_int_equal(twheel_host_get_stats(H, &st), 0);
	assert_int_equal(st.wakeups, 16);
	assert_int_equal(st.idle_wakeups, 0);
}

/*
 * The wheel's time stands still while the host timer sleeps. A 2 ms timer
 * armed from a handler after 300 ms without a run (the wheel empty, then
 * beside a far timer: by delay, parked where the adapter places) fires in
 * the one wake-up of its own tick: none for the cascade tick of a slot
 * above the first level, where an expiry 256 ticks past the wheel's time
 * would put it.
 */
static struct ttimer idle_t[2];

static void arm_idle_0(void *arg)
{
	(void)arg;
	arm(&idle_t[0], 2 * TICK_NS);
}

static void arm_idle_1(void *arg)
{
	(void)arg;
	arm(&idle_t[1], 2 * TICK_NS);
}

static void short_timer_after_idle_wakes_once(void **state)
{
	struct twheel_rt_stats st;
	struct timespec idle = { 0, 300 * 1000000L };

	(void)state;
	memset(idle_t, 0, sizeof(idle_t));
	tw_timer_init(&idle_t[0].t, t_cb);
	tw_timer_init(&idle_t[1].t, near_cb); /* cancels far_t */
	tw_timer_init(&far_t, keeper_cb);
	HL->call_soon(arm_idle_0, NULL);
	HL->run();
	assert_int_equal(idle_t[0].fired, 1);
	/* empty since */
	nanosleep(&idle, NULL);
	HL->call_soon(arm_idle_0, NULL);
	HL->run();
	assert_int_equal(idle_t[0].fired, 2);
	/* a far timer (its cascade tick 984 s on at least), the loop waiting */
	assert_int_equal(twheel_host_add(H, &far_t, 1000000 * TICK_NS), 0);
	HL->run_for(300);
	HL->call_soon(arm_idle_1, NULL);
	HL->run();
	assert_int_equal(idle_t[1].fired, 1);
	assert_int_equal(early, 0);
	assert_int_equal(twheel_host_get_stats(H, &st), 0);
	assert_int_equal(st.wakeups, 3);
	assert_int_equal(st.idle_wakeups, 0);
}

/*
 * Deadlines at the ends of the clock, for ticks of 1 ns, 1 ms and 1 s:
 * 0, 1 and the time now have come (they fire in the first run); UINT64_MAX
 * (by deadline, and as a delay, which saturates), and TW_TICK_MAX - 1 ns,
 * never come. The host loop's timer is set for those far ones (on a 1 ns
 * tick the wait fits in 64 bits) or stopped: either way no wake-up fires
 * them, and shutdown hands each back once.
 */
static int edge_handed;
static void edge_drain(struct tw_timer *t, void *arg)
{
	(void)arg;
	tw_container_of(t, struct ttimer, t)->fired += 100;
	edge_handed++;
}

static void edge_deadlines_and_ticks(void **state)
{
	static const uint64_t ticks[] = { 1, TICK_NS, 1000 * TICK_NS };
	static struct ttimer tm[7];
	struct twheel_rt rt;
	struct twheel_host_stats st;

	(void)state;
	for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
		assert_int_equal(HL->destroy(H, NULL, NULL), 0);
		twheel_rt_init(&rt, ticks[k], NULL, NULL);
		H = HL->create(&rt);
		assert_non_null(H);
		memset(tm, 0, sizeof(tm));
		for (int i = 0; i < 7; i++)
			tw_timer_init(&tm[i].t, t_cb);
		tm[3].deadline = mono_ns();
		assert_int_equal(twheel_host_add_at(H, &tm[0].t, 0), 0);
		assert_int_equal(twheel_host_add_at(H, &tm[1].t, 1), 0);
		assert_int_equal(twheel_host_add_at(H, &tm[2].t, UINT64_MAX), 0);
		assert_int_equal(twheel_host_add_at(H, &tm[3].t, tm[3].deadline), 0);
		arm(&tm[4], 0);
		assert_int_equal(twheel_host_add(H, &tm[5].t, UINT64_MAX), 0);
		assert_int_equal(twheel_host_add_at(H, &tm[6].t, TW_TICK_MAX - 1), 0);
		tm[2].deadline = tm[5].deadline = tm[6].deadline = UINT64_MAX;
		HL->run_for(30);
		for (int i = 0; i < 7; i++)
			assert_int_equal(tm[i].fired, i == 2 || i >= 5 ? 0 : 1);
		assert_int_equal(twheel_count(twheel_host_wheel(H)), 3);
		assert_int_equal(twheel_host_get_stats(H, &st), 0);
		assert_true(st.fired == 4);
		assert_true(st.wakeups == 1);
		edge_handed = 0;
		assert_int_equal(HL->destroy(H, edge_drain, NULL), 0);
		H = NULL;
		HL->run_for(1); /* a loop that frees in close callbacks */
		assert_int_equal(edge_handed, 3);
		H = HL->create(NULL);
		assert_non_null(H);
	}
	assert_int_equal(early, 0);
}

/*
 * Random arms, re-arms and cancels against a model, from outside the
 * loop, from the host loop's handlers and from the wheel's callbacks (a
 * callback re-arms itself, often with a delay of 0), while an injected
 * clock jumps ahead by hours and steps back by up to 30 ms; ticks of 1 ns,
 * 250 us and 1 ms. Every return value is the model's; every timer fires
 * exactly once per arm that was not cancelled or re-armed, never before
 * its deadline on the injected clock (by deadline; by delay: the reading
 * at the call plus the delay, unless the clock stepped back since the
 * call, then never before the delay of real time: unless it also jumped
 * ahead since, which makes it due; a deadline the clock had reached when
 * it was armed has come, and fires in the next run even if the clock
 * steps back before it), and the host counts what ran. TWHEEL_MODEL_SEED,
 * if set, picks other sequences.
 */
#define NR 48
static int64_t rm_off;
static uint64_t rm_clock(void *arg)
{
	(void)arg;
	return mono_ns() + (uint64_t)rm_off;
}

struct rtimer {
	struct tw_timer t;
	bool pending;         /* the model */
	bool by_delay, back, ahead;
	bool passed;          /* by deadline: the clock had read it after the call */
	uint64_t due, real_due;
	int fired;
};
static struct rtimer rm[NR];
static long rm_callbacks, rm_early;

static void rm_op(int depth);

static void rm_cb(struct tw_timer *t)
{
	struct rtimer *x = tw_container_of(t, struct rtimer, t);
	uint64_t now = rm_clock(NULL), real = mono_ns();

	assert_true(x->pending);
	x->pending = false;
	x->fired++;
	rm_callbacks++;
	if (now < x->due && !(x->back && (x->by_delay || x->passed)))
		rm_early++;
	if (x->by_delay && x->back && !x->ahead && real < x->real_due)
		rm_early++;
	if (xorshift64(&rnd_state) % 4 == 0) { /* re-arm itself, often with 0 */
		x->by_delay = true;
		x->back = x->ahead = false;
		x->due = rm_clock(NULL);
		x->real_due = mono_ns();
		assert_int_equal(twheel_host_add(H, t, 0), 0);
		x->pending = true;
	}
	for (int i = xorshift64(&rnd_state) % 3; i > 0; i--)
		rm_op(1);
}

static void rm_op(int depth)
{
	struct rtimer *x = &rm[xorshift64(&rnd_state) % NR];
	unsigned kind = (unsigned)(xorshift64(&rnd_state) % 6);
	uint64_t r = xorshift64(&rnd_state) % (8 * TICK_NS), now = rm_clock(NULL), real = mono_ns();
	int rc;

	(void)depth;
	switch (kind) {
	case 0: /* add by delay */
	case 1: /* mod by delay */
		rc = kind ? twheel_host_mod(H, &x->t, r) : twheel_host_add(H, &x->t, r);
		if (!kind && x->pending) {
			assert_int_equal(rc, -EBUSY);
			return;
		}
		assert_int_equal(rc, kind ? (int)x->pending : 0);
		x->by_delay = true;
		x->due = now + r;
		x->real_due = real + r;
		break;
	case 2: /* add by deadline, some passed */
	case 3:
		now += r - 2 * TICK_NS; /* the deadline */
		rc = kind == 3 ? twheel_host_mod_at(H, &x->t, now) : twheel_host_add_at(H, &x->t, now);
		if (kind == 2 && x->pending) {
			assert_int_equal(rc, -EBUSY);
			return;
		}
		assert_int_equal(rc, kind == 3 ? (int)x->pending : 0);
		x->by_delay = false;
		x->due = now;
		x->passed = rm_clock(NULL) >= now;
		break;
	default: /* cancel */
		assert_int_equal(twheel_host_del(H, &x->t), (int)x->pending);
		x->pending = false;
		return;
	}
	x->back = x->ahead = false;
	x->pending = true;
}

static void rm_handler(void *arg)
{
	(void)arg;
	for (int i = 0; i < 12; i++)
		rm_op(0);
	switch (xorshift64(&rnd_state) % 8) {
	case 0: /* hours ahead */
		rm_off += (int64_t)(3600 * UINT64_C(1000000000));
		for (int i = 0; i < NR; i++)
			rm[i].ahead = true;
		break;
	case 1: /* a step back */
		rm_off -= (int64_t)(xorshift64(&rnd_state) % (30 * TICK_NS));
		for (int i = 0; i < NR; i++)
			rm[i].back = true;
		break;
	default:
		break;
	}
	for (int i = 0; i < 4; i++)
		rm_op(0);
}

static void random_ops_against_a_model(void **state)
{
	static const uint64_t ticks[] = { 1, TICK_NS / 4, TICK_NS };
	struct twheel_rt rt;
	struct twheel_host_stats st;

	(void)state;
	/* TWHEEL_MODEL_SEED (test.sh) runs it over other sequences */
	if (getenv("TWHEEL_MODEL_SEED"))
		rnd_state += strtoull(getenv("TWHEEL_MODEL_SEED"), NULL, 0) * 0x9e3779b97f4a7c15ull;
	for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
		assert_int_equal(HL->destroy(H, NULL, NULL), 0);
		rm_off = (int64_t)(k << 40);
		twheel_rt_init(&rt, ticks[k], rm_clock, NULL);
		H = HL->create(&rt);
		assert_non_null(H);
		memset(rm, 0, sizeof(rm));
		rm_callbacks = rm_early = 0;
		for (int i = 0; i < NR; i++)
			tw_timer_init(&rm[i].t, rm_cb);
		for (int round = 0; round < 25; round++) {
			for (int i = 0; i < 6; i++)
				rm_op(0);
			HL->call_soon(rm_handler, NULL);
			HL->call_soon(rm_handler, NULL);
			HL->run_for(6);
		}
		/* the rest, until nothing is pending */
		HL->run();
		for (int i = 0; i < NR; i++)
			assert_false(rm[i].pending);
		assert_int_equal(twheel_count(twheel_host_wheel(H)), 0);
		assert_int_equal(rm_early, 0);
		assert_int_equal(twheel_host_get_stats(H, &st), 0);
		assert_true(st.fired == (uint64_t)rm_callbacks);
	}
}

/*
 * Two adapters on one host loop: each drives its own wheel with its own
 * host timer; timers of both fire once, never early, each counted by its
 * own host; one destroyed from a handler while the other goes on.
 */
static struct twheel_host *two_other;

static void destroy_other(void *arg)
{
	(void)arg;
	assert_int_equal(HL->destroy(two_other, NULL, NULL), 0);
	two_other = NULL;
}

static void two_adapters_on_one_loop(void **state)
{
	static struct ttimer a[20], b[20];
	struct twheel_host *h1 = H;
	struct twheel_host_stats st;

	(void)state;
	two_other = HL->create(NULL);
	assert_non_null(two_other);
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	for (int i = 0; i < 20; i++) {
		tw_timer_init(&a[i].t, t_cb);
		tw_timer_init(&b[i].t, t_cb);
		H = h1;
		arm(&a[i], (uint64_t)(i % 7) * TICK_NS);
		H = two_other;
		arm(&b[i], (uint64_t)(i % 5) * TICK_NS + TICK_NS / 2);
	}
	H = h1;
	while (twheel_count(twheel_host_wheel(h1)) || twheel_count(twheel_host_wheel(two_other)))
		HL->run_for(5);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(a[i].fired, 1);
		assert_int_equal(b[i].fired, 1);
	}
	assert_int_equal(twheel_host_get_stats(h1, &st), 0);
	assert_true(st.fired == 20);
	assert_int_equal(twheel_host_get_stats(two_other, &st), 0);
	assert_true(st.fired == 20);
	/* one destroyed from a handler, timers of both pending */
	H = two_other;
	arm(&b[0], 2 * TICK_NS);
	H = h1;
	arm(&a[0], 4 * TICK_NS);
	HL->call_soon(destroy_other, NULL);
	while (twheel_count(twheel_host_wheel(h1)))
		HL->run_for(5);
	assert_null(two_other);
	assert_int_equal(a[0].fired, 2);
	assert_int_equal(b[0].fired, 1);
	assert_int_equal(early, 0);
}

/*
 * A callback that re-arms itself with a delay of 0, 50 times: each arm
 * fires in the next run, never in the run that armed it (no livelock
 * inside one host iteration), so 51 runs, each running one callback; and
 * a callback that arms 3000 others by delay (parked, placed in batches):
 * each fires once, never early.
 */
#define NMANY 3000
static struct ttimer many[NMANY];
static int self_left;

static void self_zero_cb(struct tw_timer *t)
{
	struct ttimer *x = tw_container_of(t, struct ttimer, t);

	t_cb(t);
	if (self_left-- > 0) {
		x->deadline = mono_ns();
		assert_int_equal(twheel_host_add(H, t, 0), 0);
	}
}

/* t_cb() without the lateness samples (too many for the log): never early. */
static void many_cb(struct tw_timer *t)
{
	struct ttimer *x = tw_container_of(t, struct ttimer, t);

	x->fired++;
	if (mono_ns() < x->deadline)
		early++;
}

static void arm_many_cb(struct tw_timer *t)
{
	t_cb(t);
	for (int i = 0; i < NMANY; i++) {
		uint64_t d = xorshift64(&rnd_state) % (10 * TICK_NS);

		tw_timer_init(&many[i].t, many_cb);
		many[i].deadline = mono_ns() + d;
		assert_int_equal(twheel_host_add(H, &many[i].t, d), 0);
	}
}

static void self_rearm_zero_and_arm_thousands(void **state)
{
	static struct ttimer self, spawner;
	struct twheel_host_stats st;

	(void)state;
	memset(&self, 0, sizeof(self));
	tw_timer_init(&self.t, self_zero_cb);
	self_left = 50;
	arm(&self, 0);
	HL->run();
	assert_int_equal(self.fired, 51);
	assert_int_equal(twheel_host_get_stats(H, &st), 0);
	assert_true(st.fired == 51);
	assert_true(st.wakeups == 51);
	assert_true(st.idle_wakeups == 0);

	memset(&spawner, 0, sizeof(spawner));
	memset(many, 0, sizeof(many));
	tw_timer_init(&spawner.t, arm_many_cb);
	arm(&spawner, TICK_NS);
	HL->run();
	assert_int_equal(spawner.fired, 1);
	for (int i = 0; i < NMANY; i++)
		assert_int_equal(many[i].fired, 1);
	assert_int_equal(twheel_host_get_stats(H, &st), 0);
	assert_true(st.fired == 51 + 1 + NMANY);
	assert_int_equal(early, 0);
	assert_int_equal(late, 0);
}

static int suite_main(const struct host_loop *hl)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fires_once_never_early, setup, teardown),
		cmocka_unit_test_setup_teardown(callbacks_rearm_cancel_and_arm, setup, teardown),
		cmocka_unit_test_setup_teardown(host_handlers_arm_and_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(delay_counts_from_the_call_not_the_cached_time, setup,
						teardown),
		cmocka_unit_test_setup_teardown(delays_from_a_handler_batched, setup, teardown),
		cmocka_unit_test_setup_teardown(delays_placed_later_never_early, setup, teardown),
		cmocka_unit_test_setup_teardown(parked_delays_placed_before_the_loop_waits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(no_wakeups_while_idle, setup, teardown),
		cmocka_unit_test_setup_teardown(shutdown_hands_back_pending_timers, setup, teardown),
		cmocka_unit_test_setup_teardown(destroyed_from_a_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(destroy_after_host_fini, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_input, setup, teardown),
		cmocka_unit_test_setup_teardown(injected_clock, setup, teardown),
		cmocka_unit_test_setup_teardown(injected_monotonic_never_wakes_early, setup,
						teardown),
		cmocka_unit_test_setup_teardown(short_timer_after_idle_wakes_once, setup, teardown),
		cmocka_unit_test_setup_teardown(edge_deadlines_and_ticks, setup, teardown),
		cmocka_unit_test_setup_teardown(random_ops_against_a_model, setup, teardown),
		cmocka_unit_test_setup_teardown(two_adapters_on_one_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(self_rearm_zero_and_arm_thousands, setup, teardown),
	};

	HL = hl;
	return cmocka_run_group_tests_name(hl->name, tests, NULL, NULL);
}

#endif
