/*
 * ev_example.c - idle timeouts in a libev program: one ev_timer drives
 * every timeout through libtwheel. Activity re-arms a connection's
 * timeout; silence closes it. ev_run() returns once no timeout is pending.
 */
#include <stdio.h>
#include <twheel/ev.h>

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
	struct ev_loop *loop = ev_default_loop(0);

	timeouts = twheel_ev_create(loop, NULL); /* 1 ms ticks, CLOCK_MONOTONIC */
	if (!timeouts)
		return 1;
	for (int i = 0; i < 3; i++) {
		tw_timer_init(&conns[i].idle, on_idle);
		twheel_host_add(timeouts, &conns[i].idle, 20 * MS);
	}
	ev_run(loop, 0);                         /* until no timeout is pending */
	return twheel_ev_destroy(timeouts, NULL, NULL) != 0;
}
