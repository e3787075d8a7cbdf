/* SPDX-License-Identifier: MIT */
/*
 * Arms timers that sit in an array before a guard word, fires them and
 * prints whether the guard survived: a library of another layout than the
 * headers this file was built with (tests/install/meson.build) writes past
 * them. Exits 0 when the timers fired and the guard held.
 */
#include <stdio.h>

#include <twheel/twheel.h>

static int fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

int main(void)
{
	struct {
		struct tw_timer t[4];
		unsigned long guard;
	} s;
	struct twheel *w = twheel_create(0);
	int n;

	if (!w)
		return 1;
	s.guard = 0x5a5a5a5aul;
	for (int i = 0; i < 4; i++) {
		tw_timer_init(&s.t[i], on_fire);
		if (twheel_add(w, &s.t[i], 10 + (tw_tick_t)i) != 0)
			return 1;
	}
	n = twheel_advance(w, 100);
	twheel_destroy(w);
	printf("fired %d of 4, guard %#lx\n", fired, s.guard);
	return n == 4 && fired == 4 && s.guard == 0x5a5a5a5aul ? 0 : 1;
}
