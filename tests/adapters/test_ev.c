/*
 * test_ev - the adapter suite (suite.h) on Debian's libev, plus
 * twheel_ev_create()'s own argument check.
 */
#include <stdio.h>

#include <twheel/ev.h>

#include "suite.h"

static struct ev_loop *loop;

static void ev_setup(void)
{
	loop = ev_loop_new(EVFLAG_AUTO);
	assert_non_null(loop);
}

static void ev_teardown(void)
{
	ev_loop_destroy(loop);
}

static struct twheel_host *ev_create(const struct twheel_rt *rt)
{
	return twheel_ev_create(loop, rt);
}

static void ev_run_all(void)
{
	ev_run(loop, 0);
}

static void on_stop(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

static void ev_run_for(unsigned ms)
{
	ev_timer t;

	ev_now_update(loop);
	ev_timer_init(&t, on_stop, ms * 1e-3, 0.);
	ev_timer_start(loop, &t);
	ev_run(loop, 0);
	ev_timer_stop(loop, &t);
}

struct soon {
	ev_timer t;
	void (*fn)(void *arg);
	void *arg;
};

static void on_soon(struct ev_loop *l, ev_timer *w, int revents)
{
	struct soon *s = (struct soon *)w;

	(void)l;
	(void)revents;
	s->fn(s->arg);
	free(s);
}

static void ev_call_soon(void (*fn)(void *arg), void *arg)
{
	struct soon *s = malloc(sizeof(*s));

	assert_non_null(s);
	s->fn = fn;
	s->arg = arg;
	ev_timer_init(&s->t, on_soon, 0., 0.);
	ev_timer_start(loop, &s->t);
}

static const struct host_loop ev_host = {
	"libev", ev_setup, ev_teardown, ev_create, twheel_ev_destroy,
	ev_run_all, ev_run_for, ev_call_soon, NULL, true,
};

/*
 * A prepare watcher of the lowest priority started before
 * twheel_ev_create() runs after the adapter's own (libev invokes the
 * watchers of one priority newest first): a 2 ms delay it arms while the
 * host timer waits 1 s for another timer must still be placed before
 * libev waits: it fires long before that one's time (within 0.5 s, load
 * allowing; it cancels the far one, so that the loop returns). 0 if so.
 */
static struct twheel_host *late_h;
static struct tw_timer late_far, late_near;
static uint64_t late_due, late_fired_at;
static int late_far_fired;

static void late_far_cb(struct tw_timer *t)
{
	(void)t;
	late_far_fired++;
}

static void late_near_cb(struct tw_timer *t)
{
	(void)t;
	late_fired_at = mono_ns();
	twheel_host_del(late_h, &late_far);
}

static void late_prepare_cb(struct ev_loop *l, ev_prepare *w, int revents)
{
	(void)revents;
	ev_prepare_stop(l, w);
	late_due = mono_ns() + 2 * TICK_NS;
	if (twheel_host_add(late_h, &late_near, 2 * TICK_NS) != 0)
		late_due = 0;
}

static int arm_from_a_later_prepare_placed_before_the_wait(void)
{
	ev_prepare prep;

	ev_setup();
	ev_prepare_init(&prep, late_prepare_cb);
	ev_set_priority(&prep, EV_MINPRI);
	ev_prepare_start(loop, &prep);
	late_h = twheel_ev_create(loop, NULL);
	if (!late_h)
		return 1;
	tw_timer_init(&late_far, late_far_cb);
	tw_timer_init(&late_near, late_near_cb);
	if (twheel_host_add(late_h, &late_far, 1000 * TICK_NS) != 0)
		return 1;
	ev_run(loop, 0);
	twheel_ev_destroy(late_h, NULL, NULL);
	ev_teardown();
	if (!late_due || late_fired_at < late_due || late_fired_at - late_due > 500 * TICK_NS) {
		fprintf(stderr, "a delay armed from a later prepare watcher fired %lld us after its due time\n",
			(long long)(late_fired_at - late_due) / 1000);
		return 1;
	}
	return 0;
}

/*
 * ev_suspend(), 30 ms asleep, ev_resume(): libev delays the adapter's
 * ev_timer by those 30 ms, and twheel_host_run() right after ev_resume()
 * (<twheel/ev.h>) runs the timer that came due meanwhile, and re-arms the
 * ev_timer for the one still ahead, which fires (not early). 0 if so.
 */
static int resumed_loop_run_by_the_host(void)
{
	static struct tw_timer due, ahead;
	struct timespec nap = { 0, 30000000 };
	struct twheel_host *h;
	uint64_t t0;
	int bad;

	ev_setup();
	h = twheel_ev_create(loop, NULL);
	tw_timer_init(&due, late_far_cb);
	tw_timer_init(&ahead, late_far_cb);
	late_far_fired = 0;
	t0 = mono_ns();
	bad = !h || twheel_host_add(h, &due, 5 * TICK_NS) != 0 ||
	      twheel_host_add(h, &ahead, 40 * TICK_NS) != 0;
	ev_suspend(loop);
	nanosleep(&nap, NULL);
	ev_resume(loop);
	bad = bad || twheel_host_run(h) != 1 || late_far_fired != 1;
	ev_run(loop, 0);
	bad = bad || late_far_fired != 2 || mono_ns() - t0 < 40 * TICK_NS;
	if (h)
		twheel_ev_destroy(h, NULL, NULL);
	ev_teardown();
	return bad;
}

/*
 * A wheel callback that runs the loop again (libev allows ev_run() to
 * nest) until a native 3 ms ev_timer has fired: the adapter is not
 * re-entered (its ev_timer is stopped while the run goes on; its prepare
 * finds the run busy), the wheel's timer due meanwhile fires once the run
 * is over, and what the callback armed by delay before it nested fires
 * once, never early. 0 if so.
 */
static struct twheel_host *nest_h;
static struct tw_timer nest_outer, nest_armed, nest_other;
static uint64_t nest_due, nest_other_due, nest_armed_at;
static int nest_native, nest_fired[3];

static void nest_native_cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	nest_native++;
}

static void nest_cb(struct tw_timer *t)
{
	if (t == &nest_armed) {
		nest_fired[1]++;
		nest_armed_at = mono_ns();
	} else if (t == &nest_other) {
		nest_fired[2]++;
		if (mono_ns() < nest_other_due)
			nest_fired[2] += 100;
	} else {
		ev_timer n;

		nest_fired[0]++;
		nest_due = mono_ns() + 2 * TICK_NS;
		if (twheel_host_add(nest_h, &nest_armed, 2 * TICK_NS) != 0)
			nest_fired[0] += 100;
		ev_timer_init(&n, nest_native_cb, 0.003, 0.);
		ev_timer_start(loop, &n);
		ev_run(loop, 0);
		ev_timer_stop(loop, &n);
	}
}

static int nested_ev_run_from_a_callback(void)
{
	int bad;

	ev_setup();
	nest_h = twheel_ev_create(loop, NULL);
	if (!nest_h)
		return 1;
	tw_timer_init(&nest_outer, nest_cb);
	tw_timer_init(&nest_armed, nest_cb);
	tw_timer_init(&nest_other, nest_cb);
	nest_other_due = mono_ns() + 2 * TICK_NS;
	bad = twheel_host_add(nest_h, &nest_outer, 1 * TICK_NS) != 0 ||
	      twheel_host_add(nest_h, &nest_other, 2 * TICK_NS) != 0;
	ev_run(loop, 0);
	bad = bad || nest_native != 1 || nest_fired[0] != 1 || nest_fired[1] != 1 ||
	      nest_fired[2] != 1 || nest_armed_at < nest_due ||
	      twheel_count(twheel_host_wheel(nest_h)) != 0;
	if (bad)
		fprintf(stderr, "nested ev_run(): native %d, fired %d %d %d\n", nest_native,
			nest_fired[0], nest_fired[1], nest_fired[2]);
	twheel_ev_destroy(nest_h, NULL, NULL);
	ev_teardown();
	return bad;
}

/*
 * The loop destroyed before the adapter (ev_loop_destroy() first, the
 * shutdown order of many a program): the adapter's ev_cleanup marks the
 * host lost, so that arms return -ESHUTDOWN instead of starting watchers
 * on a freed loop, and twheel_ev_destroy() hands back every timer still
 * pending without touching the loop (it used to crash in ev_timer_stop()).
 * 0 if so.
 */
static int after_handed;
static void after_hand(struct tw_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	after_handed++;
}

static void after_cb(struct tw_timer *t)
{
	(void)t;
}

static int destroyed_after_its_loop(void)
{
	struct twheel_host *h;
	struct tw_timer t[4];
	int bad = 0, i;

	for (i = 0; i < 2; i++) { /* a loop that ran, and one that never did */
		ev_setup();
		h = twheel_ev_create(loop, NULL);
		if (!h)
			return 1;
		for (int k = 0; k < 4; k++)
			tw_timer_init(&t[k], after_cb);
		/* the first placed (the wheel was empty), the others parked */
		bad |= twheel_host_add(h, &t[0], 1000 * TICK_NS) != 0;
		if (i == 0)
			ev_run(loop, EVRUN_NOWAIT); /* placed by the prepare */
		bad |= twheel_host_add(h, &t[1], 2000 * TICK_NS) != 0;
		bad |= twheel_host_add(h, &t[2], 3000 * TICK_NS) != 0;
		ev_teardown();
		bad |= twheel_host_add(h, &t[3], TICK_NS) != -ESHUTDOWN;
		bad |= twheel_host_mod(h, &t[1], TICK_NS) != -ESHUTDOWN;
		bad |= twheel_host_add_at(h, &t[3], twheel_host_now(h)) != -ESHUTDOWN;
		bad |= twheel_host_place(h) != -ESHUTDOWN;
		bad |= twheel_host_del(h, &t[2]) != 1;
		after_handed = 0;
		bad |= twheel_ev_destroy(h, after_hand, NULL) != 0;
		bad |= after_handed != 2 || tw_timer_pending(&t[0]) || tw_timer_pending(&t[1]);
		if (bad) {
			fprintf(stderr, "destroyed after its loop (%s): handed back %d of 2\n",
				i ? "never run" : "run", after_handed);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	errno = 0;
	if (twheel_ev_create(NULL, NULL) != NULL || errno != EINVAL)
		return 1;
	/* the default loop destroyed (its memory stays): a host on it was
	 * made, and its arms returned 0, for a loop that never runs again */
	struct ev_loop *gone = ev_default_loop(0);

	if (!gone)
		return 1;
	ev_loop_destroy(gone);
	errno = 0;
	if (twheel_ev_create(gone, NULL) != NULL || errno != EINVAL) {
		fprintf(stderr, "twheel_ev_create() on a destroyed loop was not refused\n");
		return 1;
	}
	if (arm_from_a_later_prepare_placed_before_the_wait() || resumed_loop_run_by_the_host() ||
	    nested_ev_run_from_a_callback() || destroyed_after_its_loop())
		return 1;
	return suite_main(&ev_host);
}
