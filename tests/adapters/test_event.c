/*
 * test_event - the adapter suite (suite.h) on Debian's libevent, with a
 * default base (its clock is CLOCK_MONOTONIC_COARSE) run through
 * twheel_event_loop(), and again with EVENT_BASE_FLAG_PRECISE_TIMER run
 * by event_base_dispatch(), and a default one with
 * EVENT_BASE_FLAG_NO_CACHE_TIME: arms by delay placed once per iteration all
 * three ways (by the adapter's placement event), plus twheel_event_create()'s
 * and twheel_event_loop()'s own argument checks.
 */
#include <twheel/event.h>

#include "suite.h"

static struct event_base *base;
static int precise; /* and the base run by event_base_dispatch() */
static int nocache; /* EVENT_BASE_FLAG_NO_CACHE_TIME */

static void event_setup(void)
{
	struct event_config *cfg = event_config_new();

	assert_non_null(cfg);
	if (precise)
		event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	if (nocache)
		event_config_set_flag(cfg, EVENT_BASE_FLAG_NO_CACHE_TIME);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	assert_non_null(base);
}

static void event_teardown(void)
{
	event_base_free(base);
}

static struct twheel_host *event_create(const struct twheel_rt *rt)
{
	return twheel_event_create(base, rt);
}

static void event_run_all(void)
{
	if (precise || !H)
		assert_true(event_base_dispatch(base) >= 0);
	else
		assert_true(twheel_event_loop(H, 0) >= 0);
}

static void event_run_for(unsigned ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	event_base_loopexit(base, &tv);
	event_run_all();
}

struct soon {
	void (*fn)(void *arg);
	void *arg;
};

static void on_soon(evutil_socket_t fd, short what, void *arg)
{
	struct soon *s = arg;

	(void)fd;
	(void)what;
	s->fn(s->arg);
	free(s);
}

static void event_call_soon(void (*fn)(void *arg), void *arg)
{
	struct soon *s = malloc(sizeof(*s));
	struct timeval zero = { 0, 0 };

	assert_non_null(s);
	s->fn = fn;
	s->arg = arg;
	assert_int_equal(event_base_once(base, -1, EV_TIMEOUT, on_soon, s, &zero), 0);
}

/* A native persistent 100 us timer, until *until changes. */
static struct event *ticker;
static const int *ticker_until;
static int ticker_start;

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (*ticker_until != ticker_start) {
		event_free(ticker);
		ticker = NULL;
	}
}

static void event_busy(const int *until)
{
	struct timeval tv = { 0, 100 };

	assert_null(ticker);
	ticker_until = until;
	ticker_start = *until;
	ticker = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	assert_non_null(ticker);
	assert_int_equal(event_add(ticker, &tv), 0);
}

/* twheel_event_loop(): an unknown flag; a base with nothing pending; a
 * host shut down by twheel_host_fini(). */
static int bad_flags(void)
{
	struct twheel_host *h;
	int bad;

	event_setup();
	h = twheel_event_create(base, NULL);
	bad = !h || twheel_event_loop(h, 0x100) != -EINVAL ||
	      twheel_event_loop(h, EVLOOP_NONBLOCK) != 1 || twheel_host_fini(h, NULL, NULL) != 0 ||
	      twheel_event_loop(h, EVLOOP_NONBLOCK) != -EINVAL ||
	      twheel_event_destroy(h, NULL, NULL) != 0;
	event_teardown();
	return bad;
}

/*
 * Destroyed with its placement event active (an arm parked, the base not
 * run since): the event is freed with the host, and the base runs nothing
 * of it (ASan would see a use of the freed host).
 */
static void nop_cb(struct tw_timer *t)
{
	(void)t;
}

static int destroyed_with_placement_active(void)
{
	struct tw_timer far, near;
	struct twheel_host *h;
	int bad;

	event_setup();
	h = twheel_event_create(base, NULL);
	tw_timer_init(&far, nop_cb);
	tw_timer_init(&near, nop_cb);
	bad = !h || twheel_host_add(h, &far, 1000 * TICK_NS) != 0 ||
	      twheel_host_add(h, &near, TICK_NS) != 0 || twheel_event_destroy(h, NULL, NULL) != 0 ||
	      event_base_loop(base, EVLOOP_NONBLOCK) != 1;
	event_teardown();
	return bad;
}

/*
 * event_base_priority_init() where <twheel/event.h> says it may go: before
 * twheel_event_create() (its events then get the middle priority), and
 * after it while no arm is parked (a placement leaves nothing active). The
 * timers then fire, a parked arm among them. 0 if so.
 */
static int priorities_set_before_arming(void)
{
	static struct tw_timer a, b;
	struct twheel_host *h;
	int bad, pass;

	for (pass = 0; pass < 2; pass++) {
		event_setup();
		bad = pass == 0 && event_base_priority_init(base, 3) != 0;
		h = twheel_event_create(base, NULL);
		tw_timer_init(&a, nop_cb);
		tw_timer_init(&b, nop_cb);
		bad = bad || !h || (pass == 1 && event_base_priority_init(base, 3) != 0) ||
		      twheel_host_add(h, &a, TICK_NS) != 0 || twheel_host_add(h, &b, 2 * TICK_NS) != 0 ||
		      event_base_dispatch(base) != 1 || tw_timer_pending(&a) || tw_timer_pending(&b);
		/* placed: nothing active, so the base takes new priorities */
		bad = bad || (pass == 1 && (twheel_host_add(h, &a, 1000 * TICK_NS) != 0 ||
					    twheel_host_place(h) != 0 ||
					    event_base_priority_init(base, 2) != 0));
		if (h)
			twheel_event_destroy(h, NULL, NULL);
		event_teardown();
		if (bad)
			return 1;
	}
	return 0;
}

/*
 * The program deletes every event of the base (collected by
 * event_base_foreach_event(), then event_del(): a common shutdown or
 * reset), the adapter's among them, while timers are pending. The
 * adapter finds its event deleted and makes it active, so that every
 * pending timer fires all the same; before, none fired and the loop
 * returned at once. @how: 0 an arm that leaves the timer event alone, then
 * twheel_event_loop(); 1 an arm by delay (the first park of a batch: the
 * parked op looks), then event_base_dispatch(); 2 the placement event
 * active (and deleted with the rest) when the program deletes, an arm by
 * delay (not the first of its batch), then twheel_event_loop(), and a
 * first park after that finds the placement event deleted. 0 if so.
 */
static struct event *all_events[8];
static int n_events;
static int fired_after_delete;

static int collect(const struct event_base *b, const struct event *ev, void *arg)
{
	(void)b;
	(void)arg;
	if (n_events < 8)
		all_events[n_events++] = (struct event *)ev;
	return 0;
}

static struct tw_timer *fired_first;

static void count_cb(struct tw_timer *t)
{
	if (!fired_first)
		fired_first = t;
	fired_after_delete++;
}

static int deleted_by_the_program_still_fires(int how)
{
	struct tw_timer t[3];
	struct twheel_host *h;
	int bad = 0, want = how == 2 ? 3 : 2;

	event_setup();
	h = twheel_event_create(base, NULL);
	if (!h)
		return 1;
	fired_after_delete = 0;
	for (int i = 0; i < 3; i++)
		tw_timer_init(&t[i], count_cb);
	bad |= twheel_host_add(h, &t[0], 20 * TICK_NS) != 0;
	if (how == 2)
		bad |= twheel_host_add(h, &t[2], 25 * TICK_NS) != 0; /* parked: placement active */
	else
		event_base_loop(base, EVLOOP_NONBLOCK); /* nothing parked, nothing active */
	n_events = 0;
	event_base_foreach_event(base, collect, NULL);
	bad |= n_events < 1;
	for (int i = 0; i < n_events; i++)
		event_del(all_events[i]);
	if (how == 0) {
		bad |= twheel_host_add_at(h, &t[1], twheel_host_now(h) + 30 * TICK_NS) != 0;
		bad |= twheel_event_loop(h, 0) < 0;
	} else if (how == 2) {
		bad |= twheel_host_add(h, &t[1], 30 * TICK_NS) != 0;
		bad |= twheel_event_loop(h, 0) < 0;
		if (fired_after_delete == 3) {
			/* the placement event, deleted while active, is made
			 * active again by the next first park: the 5 ms timer
			 * is placed before the base waits, and fires first
			 * (before, it waited parked for the 20 ms one's run) */
			bad |= twheel_host_add(h, &t[0], 20 * TICK_NS) != 0;
			bad |= twheel_host_add(h, &t[1], 5 * TICK_NS) != 0;
			fired_first = NULL;
			bad |= event_base_dispatch(base) < 0;
			bad |= fired_first != &t[1];
			want = 5;
		}
	} else {
		bad |= twheel_host_add(h, &t[1], 30 * TICK_NS) != 0;
		bad |= event_base_dispatch(base) < 0;
	}
	bad |= fired_after_delete != want || twheel_count(twheel_host_wheel(h)) != 0;
	if (bad)
		fprintf(stderr, "timer event deleted by the program (case %d): %d of %d fired\n", how,
			fired_after_delete, want);
	bad |= twheel_event_destroy(h, NULL, NULL) != 0;
	event_teardown();
	return bad;
}

/*
 * A timer already due (a delay of 0, a deadline passed) is run by the
 * base's next iteration: the host asks its timer to fire as soon as
 * possible (wake == now), which must not wait for a default base's coarse
 * clock to pass our reading (it lags it by up to two jiffies: every such
 * timer ran 4 to 8 ms late). One non-blocking event_base_loop() right
 * after the arm runs it, and, as it re-arms itself with a delay of 0 from
 * its callback, runs it again in each of the base's iterations (libevent
 * iterates while a callback is active), on a default base and a precise
 * one. 0 if so.
 */
static int due_fired;
static struct twheel_host *due_h;

static void due_cb(struct tw_timer *t)
{
	if (++due_fired < 5)
		twheel_host_mod(due_h, t, 0);
}

static int due_timer_runs_in_the_next_iteration(void)
{
	struct tw_timer t;
	int bad = 0;

	for (precise = 0; precise < 2 && !bad; precise++) {
		event_setup();
		due_h = twheel_event_create(base, NULL);
		if (!due_h)
			return 1;
		tw_timer_init(&t, due_cb);
		due_fired = 0;
		bad |= twheel_host_add(due_h, &t, 0) != 0;
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (bad || due_fired != 5) {
			fprintf(stderr, "due timer (%s base): %d runs of 5 in a non-blocking loop\n",
				precise ? "precise" : "default", due_fired);
			bad = 1;
		}
		twheel_event_destroy(due_h, NULL, NULL);
		event_teardown();
	}
	precise = 0;
	return bad;
}

int main(void)
{
	static const struct host_loop coarse = {
		"libevent (default base)", event_setup, event_teardown, event_create,
		twheel_event_destroy, event_run_all, event_run_for, event_call_soon, event_busy, true,
	};
	static const struct host_loop fine = {
		"libevent (precise timer)", event_setup, event_teardown, event_create,
		twheel_event_destroy, event_run_all, event_run_for, event_call_soon, event_busy, true,
	};
	static const struct host_loop uncached = {
		"libevent (no cached time)", event_setup, event_teardown, event_create,
		twheel_event_destroy, event_run_all, event_run_for, event_call_soon, event_busy, true,
	};
	int rc;

	errno = 0;
	if (twheel_event_create(NULL, NULL) != NULL || errno != EINVAL)
		return 1;
	if (twheel_event_loop(NULL, 0) != -EINVAL || bad_flags() || destroyed_with_placement_active() ||
	    priorities_set_before_arming() || due_timer_runs_in_the_next_iteration())
		return 1;
	for (int how = 0; how < 3; how++)
		if (deleted_by_the_program_still_fires(how))
			return 1;
	rc = suite_main(&coarse);
	nocache = 1;
	rc |= suite_main(&uncached);
	nocache = 0;
	precise = 1;
	return rc | suite_main(&fine);
}
