/*
 * test_uv - the adapter suite (suite.h) on Debian's libuv, plus what is
 * particular to libuv: bad arguments of twheel_uv_create/destroy, the loop
 * closing cleanly (uv_loop_close() == 0) after every test, and an injected
 * clock whose millisecond phase differs from uv_now()'s.
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
	uv_run_all, uv_run_for, uv_call_soon, NULL, true,
};

/*
 * An injected clock half a millisecond off CLOCK_MONOTONIC's millisecond
 * phase, a busy loop (an idle handle) arming one timer at a time at odd
 * moments, delays within the first level (no cascade ticks): the
 * uv_timer_t must never wake before the tick boundary, so no wake-up runs
 * nothing. 0 if so.
 */
static struct twheel_host *phase_h;
static struct tw_timer phase_t;
static int phase_left = 100;
static uint64_t phase_x = 88172645463325252ull;

static uint64_t phase_clock(void *arg)
{
	(void)arg;
	return mono_ns() + 700000;
}

static void phase_cb(struct tw_timer *t)
{
	(void)t;
	phase_left--;
}

static void phase_spin(uv_idle_t *i)
{
	if (phase_left <= 0) {
		uv_idle_stop(i);
		return;
	}
	xorshift64(&phase_x);
	if (!tw_timer_pending(&phase_t) && phase_x % 50 == 0)
		twheel_host_add(phase_h, &phase_t, 300000 + phase_x % 1500000);
}

static int injected_clock_never_wakes_before_the_tick(void)
{
	struct twheel_rt rt;
	struct twheel_rt_stats st;
	uv_idle_t idle;

	uv_setup();
	twheel_rt_init(&rt, 0, phase_clock, NULL);
	phase_h = twheel_uv_create(&loop, &rt);
	if (!phase_h)
		return 1;
	tw_timer_init(&phase_t, phase_cb);
	uv_idle_init(&loop, &idle);
	uv_idle_start(&idle, phase_spin);
	uv_run(&loop, UV_RUN_DEFAULT);
	twheel_host_get_stats(phase_h, &st);
	uv_close((uv_handle_t *)&idle, NULL);
	twheel_uv_destroy(phase_h, NULL, NULL);
	uv_teardown();
	if (st.idle_wakeups || st.fired != 100) {
		fprintf(stderr, "injected clock: %llu of %llu wake-ups ran nothing (fired %llu)\n",
			(unsigned long long)st.idle_wakeups, (unsigned long long)st.wakeups,
			(unsigned long long)st.fired);
		return 1;
	}
	return 0;
}

/*
 * A prepare handle started before twheel_uv_create() runs after the
 * adapter's own hook in each iteration (libuv runs the newest first): a
 * 2 ms delay it arms while the host timer waits 1 s for another timer
 * must still be placed before libuv polls: it fires long before that
 * one's time (within 0.5 s, load allowing; it cancels the far one, so
 * that the loop returns). 0 if so.
 */
static struct twheel_host *late_h;
static struct tw_timer late_far, late_near;
static uint64_t late_due, late_fired_at;

static void late_near_cb(struct tw_timer *t)
{
	(void)t;
	late_fired_at = mono_ns();
	twheel_host_del(late_h, &late_far);
}

static void late_prepare_cb(uv_prepare_t *p)
{
	uv_prepare_stop(p);
	late_due = mono_ns() + 2 * TICK_NS;
	if (twheel_host_add(late_h, &late_near, 2 * TICK_NS) != 0)
		late_due = 0;
}

static int arm_from_a_later_prepare_placed_before_the_poll(void)
{
	uv_prepare_t prep;
	uv_setup();
	uv_prepare_init(&loop, &prep);
	uv_prepare_start(&prep, late_prepare_cb);
	late_h = twheel_uv_create(&loop, NULL);
	if (!late_h)
		return 1;
	tw_timer_init(&late_far, phase_cb);
	tw_timer_init(&late_near, late_near_cb);
	if (twheel_host_add(late_h, &late_far, 1000 * TICK_NS) != 0)
		return 1;
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&prep, NULL);
	twheel_uv_destroy(late_h, NULL, NULL);
	uv_teardown();
	if (!late_due || late_fired_at < late_due || late_fired_at - late_due > 500 * TICK_NS) {
		fprintf(stderr, "a delay armed from a later prepare handle fired %lld us after its due time\n",
			(long long)(late_fired_at - late_due) / 1000);
		return 1;
	}
	return 0;
}

/*
 * The loop's handles closed by uv_walk() before twheel_uv_destroy(), a
 * common way to shut a loop down: the adapter's two handles among them
 * (one timer pending, one arm by delay parked). Destroying it then hands
 * both timers back and closes nothing twice (libuv aborts on that); the
 * loop closes, and the adapter is freed (forgotten here: LeakSanitizer
 * finds it if not), destroyed once the loop ran the close callbacks
 * (@run_first) or while they are still due. 0 if so.
 */
static struct twheel_host *walked_h;
static int walked_back;

static void close_any(uv_handle_t *handle, void *arg)
{
	(void)arg;
	if (!uv_is_closing(handle))
		uv_close(handle, NULL);
}

static void count_back(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	walked_back++;
}

/*
 * A new loop and adapter with two timers pending (one tick and 1,000
 * ticks away), then every handle closed by uv_walk(), the adapter's two
 * too, as a program's shutdown does. 0 if so.
 */
static int walked_start(void)
{
	static struct tw_timer far, near;

	walked_back = 0;
	uv_setup();
	walked_h = twheel_uv_create(&loop, NULL);
	tw_timer_init(&far, late_near_cb);
	tw_timer_init(&near, late_near_cb);
	if (!walked_h || twheel_host_add(walked_h, &far, 1000 * TICK_NS) != 0 ||
	    twheel_host_add(walked_h, &near, TICK_NS) != 0)
		return 1;
	uv_walk(&loop, close_any, NULL);
	return 0;
}

static int destroyed_after_uv_walk_closed_its_handles(bool run_first)
{
	if (walked_start() != 0)
		return 1;
	if (run_first)
		uv_run(&loop, UV_RUN_DEFAULT);
	if (twheel_uv_destroy(walked_h, count_back, NULL) != 0 || walked_back != 2)
		return 1;
	walked_h = NULL; /* freed by uv_teardown()'s run */
	uv_teardown();
	return 0;
}

/*
 * The shutdown order of many a libuv program: uv_walk() closes every
 * handle (the adapter's two too), uv_run() runs the close callbacks,
 * uv_loop_close() succeeds, and only then is each module torn down:
 * twheel_uv_destroy() after uv_loop_close(). libuv overwrites a closed
 * loop (Debian's: every byte 0xff); destroy used to start a handle of its
 * own on it to wait for close callbacks that had all run (SIGSEGV in
 * uv_idle_init()). It hands back the pending timers and frees the adapter
 * at once (LeakSanitizer finds it if not), touching the loop only to ask
 * uv_backend_fd(). 0 if so.
 */
static int destroyed_after_uv_loop_close(void)
{
	if (walked_start() != 0)
		return 1;
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop) != 0)
		return 1;
	if (twheel_uv_destroy(walked_h, count_back, NULL) != 0 || walked_back != 2)
		return 1;
	walked_h = NULL;
	return 0;
}

/*
 * Arms made after uv_walk() closed the adapter's handles: no timer can
 * fire any more, so each arm that reaches the adapter is refused with
 * -ESHUTDOWN, and so is every arm after it; nothing changes (a timer not
 * pending stays so, one pending stays pending), and twheel_uv_destroy()
 * hands back what was pending. @how: 0 the wheel empty at the close (the
 * arm re-arms the uv_timer_t), 1 timers pending and their placement done
 * (an arm by delay parks the first of a batch: the parked op), 2 timers
 * pending (an arm by deadline earlier than the tick the uv_timer_t waits
 * for). 0 if so.
 */
static int arms_after_uv_walk_are_refused(int how)
{
	static struct tw_timer far, near, late;
	struct twheel_host *h;
	uint64_t now;
	int pending = 0;

	walked_back = 0;
	uv_setup();
	h = twheel_uv_create(&loop, NULL);
	if (!h)
		return 1;
	tw_timer_init(&far, late_near_cb);
	tw_timer_init(&near, late_near_cb);
	tw_timer_init(&late, late_near_cb);
	if (how > 0) {
		if (twheel_host_add(h, &far, 1000 * TICK_NS) != 0 ||
		    twheel_host_add(h, &near, 500 * TICK_NS) != 0)
			return 1;
		uv_run(&loop, UV_RUN_NOWAIT); /* places near */
		pending = 2;
	}
	uv_walk(&loop, close_any, NULL);
	now = twheel_host_now(h);
	switch (how) {
	case 0:
		if (twheel_host_add(h, &late, TICK_NS) != -ESHUTDOWN)
			return 1;
		break;
	case 1:
		if (twheel_host_mod(h, &near, 10 * TICK_NS) != -ESHUTDOWN || !tw_timer_pending(&near))
			return 1;
		break;
	default:
		if (twheel_host_add_at(h, &late, now + 10 * TICK_NS) != -ESHUTDOWN)
			return 1;
		break;
	}
	/* every later arm, whatever its form; cancelling still works */
	if (tw_timer_pending(&late) || twheel_host_add(h, &late, TICK_NS) != -ESHUTDOWN ||
	    twheel_host_mod(h, &late, 2000 * TICK_NS) != -ESHUTDOWN ||
	    twheel_host_add_at(h, &late, now + 2000 * TICK_NS) != -ESHUTDOWN ||
	    twheel_host_mod_at(h, &late, now) != -ESHUTDOWN || tw_timer_pending(&late) ||
	    twheel_host_place(h) != -ESHUTDOWN || twheel_host_run(h) != -ESHUTDOWN)
		return 1;
	if (how > 0 && (twheel_host_del(h, &far) != 1 || twheel_host_mod(h, &far, 0) != -ESHUTDOWN))
		return 1;
	if (how > 0)
		pending--;
	uv_run(&loop, UV_RUN_DEFAULT); /* the close callbacks; nothing keeps it running */
	if (twheel_uv_destroy(h, count_back, NULL) != 0 || walked_back != pending)
		return 1;
	uv_teardown();
	return 0;
}

/*
 * The program stops every timer of the loop (uv_walk() and
 * uv_timer_stop()), the adapter's uv_timer_t among them, while timers are
 * pending: uv_run() would return at once and none would fire. The first
 * arm by delay parked after a placement finds the uv_timer_t stopped and
 * starts it: both timers fire. 0 if so.
 */
static int stopped_fired;

static void stop_timers(uv_handle_t *handle, void *arg)
{
	(void)arg;
	if (handle->type == UV_TIMER)
		uv_timer_stop((uv_timer_t *)handle);
}

static void stopped_cb(struct tw_timer *t)
{
	(void)t;
	stopped_fired++;
}

static int timer_stopped_by_the_program_still_fires(void)
{
	static struct tw_timer far, near;
	struct twheel_host *h;
	int bad = 0;

	uv_setup();
	h = twheel_uv_create(&loop, NULL);
	if (!h)
		return 1;
	stopped_fired = 0;
	tw_timer_init(&far, stopped_cb);
	tw_timer_init(&near, stopped_cb);
	bad |= twheel_host_add(h, &far, 20 * TICK_NS) != 0;
	uv_run(&loop, UV_RUN_NOWAIT);
	uv_walk(&loop, stop_timers, NULL);
	bad |= twheel_host_add(h, &near, 10 * TICK_NS) != 0;
	uv_run(&loop, UV_RUN_DEFAULT);
	bad |= stopped_fired != 2;
	if (bad)
		fprintf(stderr, "uv_timer_t stopped by the program: %d of 2 fired\n", stopped_fired);
	bad |= twheel_uv_destroy(h, NULL, NULL) != 0;
	uv_teardown();
	return bad;
}

int main(void)
{
	struct twheel_rt_stats st;

	/* particular to libuv */
	errno = 0;
	if (twheel_uv_create(NULL, NULL) != NULL || errno != EINVAL)
		return 1;
	/* a loop closed already (libuv overwrote it: uv_timer_init() on it
	 * was a SIGSEGV) */
	uv_setup();
	uv_teardown();
	errno = 0;
	if (twheel_uv_create(&loop, NULL) != NULL || errno != EINVAL) {
		fprintf(stderr, "twheel_uv_create() on a closed loop was not refused\n");
		return 1;
	}
	uv_setup();
	{
		struct twheel_host *h = twheel_uv_create(&loop, NULL);

		if (!h || twheel_host_get_stats(h, &st) || st.wakeups)
			return 1;
		twheel_uv_destroy(h, NULL, NULL);
	}
	uv_teardown();
	if (injected_clock_never_wakes_before_the_tick())
		return 1;
	if (arm_from_a_later_prepare_placed_before_the_poll())
		return 1;
	if (destroyed_after_uv_walk_closed_its_handles(true) ||
	    destroyed_after_uv_walk_closed_its_handles(false))
		return 1;
	if (timer_stopped_by_the_program_still_fires())
		return 1;
	if (destroyed_after_uv_loop_close()) {
		fprintf(stderr, "twheel_uv_destroy() after uv_loop_close() failed\n");
		return 1;
	}
	for (int how = 0; how < 3; how++) {
		if (arms_after_uv_walk_are_refused(how)) {
			fprintf(stderr, "an arm after uv_walk() closed the adapter's handles (case %d) was not refused\n",
				how);
			return 1;
		}
	}
	return suite_main(&uv_host);
}
