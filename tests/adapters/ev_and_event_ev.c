/* SPDX-License-Identifier: MIT */
/*
 * The libev half of test_ev_and_event: <ev.h> and <event2/event.h> cannot
 * share a translation unit (both define EV_READ and friends).
 */
#include <ev.h>

#include <twheel/ev.h>

int ev_half(void);

static int fired;

static void cb(struct tw_timer *t)
{
	(void)t;
	fired++;
}

/* One timer through twheel-ev on libev's default loop; 1 if it fired. */
int ev_half(void)
{
	struct ev_loop *loop = ev_default_loop(0);
	struct twheel_host *h = twheel_ev_create(loop, NULL);
	struct tw_timer t;

	if (!h)
		return 0;
	tw_timer_init(&t, cb);
	twheel_host_add(h, &t, 1000000);
	ev_run(loop, 0);
	twheel_ev_destroy(h, NULL, NULL);
	return fired;
}
