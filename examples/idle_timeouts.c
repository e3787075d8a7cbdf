/*
 * idle_timeouts.c - the README's C example: idle timeouts for connections.
 *
 * Each connection embeds a struct tw_timer. Activity re-arms it with
 * twheel_mod() (cheap when it stays in its slot); silence lets it fire.
 * The program's own clock drives the wheel: here, one tick is one ms of a
 * simulated clock.
 */
#include <stdio.h>
#include <stdlib.h>

#include <twheel/twheel.h>

struct conn {
	int id;
	int closed_at;
	struct tw_timer idle; /* embedded: no allocation per timer */
};

static void on_idle(struct tw_timer *t)
{
	struct conn *c = tw_container_of(t, struct conn, idle);
	c->closed_at = (int)tw_timer_expires(t);
	printf("conn %d idle, closed at tick %d\n", c->id, c->closed_at);
}

int main(void)
{
	enum { NCONN = 4, IDLE_MS = 100 };
	struct twheel *w = twheel_create(0);
	if (!w) {
		perror("twheel_create");
		return 1;
	}
	struct conn conns[NCONN];
	for (int i = 0; i < NCONN; i++) {
		conns[i].id = i;
		conns[i].closed_at = -1;
		tw_timer_init(&conns[i].idle, on_idle);
		twheel_add(w, &conns[i].idle, IDLE_MS);
	}
	/* connections 0 and 1 talk every 30 ms until t = 300; 2 and 3 stay silent */
	for (tw_tick_t now = 30; now <= 300; now += 30) {
		twheel_advance(w, now);
		twheel_mod(w, &conns[0].idle, now + IDLE_MS);
		twheel_mod(w, &conns[1].idle, now + IDLE_MS);
	}
	/* jump far ahead: empty ticks cost nothing */
	long fired = twheel_advance(w, 1000000);
	printf("%ld timers fired in the final advance, %zu pending\n", fired, twheel_count(w));

	int ok = conns[0].closed_at == 400 && conns[1].closed_at == 400 &&
		 conns[2].closed_at == 100 && conns[3].closed_at == 100;
	twheel_destroy(w);
	return ok ? 0 : 1;
}
