/*
 * event_example.c - idle timeouts in a libevent program: one timer event
 * drives every timeout through libtwheel. Activity re-arms a connection's
 * timeout; silence closes it. twheel_event_loop() runs the base like
 * event_base_dispatch(), placing the timeouts armed by delay in each
 * iteration from one clock reading, and returns once none is pending.
 */
#include <stdio.h>
#include <twheel/event.h>

#define MS 1000000ull /* delays are in nanoseconds */

struct conn {
	int id;
	int activity;         /* how many more times it will look busy */
	struct tw_timer idle; /* embedded: no allocation per timeout */
};

static struct twheel_host *timeouts;

static void on_idle(struct tw_timer *t)
{
	struct conn *c = tw_container_of(t, struct conn, idle);

	if (c->activity-- > 0) {
		twheel_host_mod(timeouts, t, 10 * MS); /* busy: 10 ms more */
		return;
	}
	printf("connection %d idle, closed\n", c->id);
}

int main(void)
{
	struct conn conns[3] = { { 1, 2, { 0 } }, { 2, 0, { 0 } }, { 3, 1, { 0 } } };
	struct event_base *base = event_base_new();

	timeouts = base ? twheel_event_create(base, NULL) : NULL;
	if (!timeouts)
		return 1;
	for (int i = 0; i < 3; i++) {
		tw_timer_init(&conns[i].idle, on_idle);
		twheel_host_add(timeouts, &conns[i].idle, 20 * MS);
	}
	twheel_event_loop(timeouts, 0);          /* until no timeout is pending */
	twheel_event_destroy(timeouts, NULL, NULL);
	event_base_free(base);
	return 0;
}
