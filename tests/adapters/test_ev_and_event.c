/* SPDX-License-Identifier: MIT */
/*
 * test_ev_and_event - twheel-ev and twheel-event in one program, linked in
 * the order docs/event-loops.md gives (libevent before libev). Debian's
 * libev also exports libevent's API (event_add, event_base_new...): with
 * libev first on the link line, this program's and twheel-event's libevent
 * calls bind to libev's emulation and crash. Passes when each adapter's
 * timer fires once on its own loop.
 */
#include <stdio.h>

#include <event2/event.h>

#include <twheel/event.h>

int ev_half(void);

static int fired;

static void cb(struct tw_timer *t)
{
	(void)t;
	fired++;
}

int main(void)
{
	struct event_base *base = event_base_new();
	struct twheel_host *h;
	struct tw_timer t;
	int ev_fired;

	if (!base || !(h = twheel_event_create(base, NULL)))
		return 1;
	tw_timer_init(&t, cb);
	twheel_host_add(h, &t, 1000000);
	event_base_dispatch(base);
	twheel_event_destroy(h, NULL, NULL);
	event_base_free(base);
	ev_fired = ev_half();
	printf("libevent: %d, libev: %d\n", fired, ev_fired);
	return fired == 1 && ev_fired == 1 ? 0 : 1;
}
