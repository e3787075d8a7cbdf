/* twheel::twheel: arm a timer, advance to it, check it fired once. */
#include <stdio.h>
#include <string.h>

#include <twheel/twheel.h>

static int fired;

static void on_fire(struct tw_timer *t)
{
	(void)t;
	fired++;
}

int main(void)
{
	struct twheel *w = twheel_create(0);
	struct tw_timer t;
	if (!w)
		return 1;
	tw_timer_init(&t, on_fire);
	if (twheel_add(w, &t, 100) != 0 || twheel_advance(w, 100) != 1 || fired != 1)
		return 1;
	twheel_destroy(w);
	if (strcmp(twheel_version(), TWHEEL_VERSION_STRING) != 0)
		return 1;
	printf("use_core: libtwheel %s\n", twheel_version());
	return 0;
}
