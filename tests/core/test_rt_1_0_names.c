/*
 * test_rt_1_0_names - a program written for libtwheel 1.0's <twheel/rt.h>
 * builds and runs against this one: the deprecated functions, the clock
 * type twheel_rt_clock_fn and struct twheel_rt_stats, with <twheel/rt.h>
 * as its only libtwheel include. (Without TWHEEL_NO_DEPRECATED_WARNINGS the
 * functions warn; here they must only work.)
 */
#define TWHEEL_NO_DEPRECATED_WARNINGS
#include <stdio.h>
#include <time.h>

#include <twheel/rt.h>

static uint64_t fixed(void *arg)
{
	return *(uint64_t *)arg;
}

int main(void)
{
	uint64_t ns = 5500000;
	twheel_rt_clock_fn clock = fixed;
	struct twheel_rt rt;
	struct twheel_rt_stats st = { 0 };
	struct twheel *w;
	struct timespec ts;
	int bad = 0;

	twheel_rt_init(&rt, 1000000, clock, &ns);
	w = twheel_create(twheel_rt_floor(&rt, twheel_rt_now(&rt)));
	bad |= twheel_rt_deadline_tick(&rt, 7200000, ns) != 8;
	bad |= twheel_rt_delay_tick(&rt, 1000000, ns) != 7;
	bad |= twheel_rt_target(&rt, w, ns) != 5;
	bad |= twheel_rt_tick_ns(&rt, 3) != 3000000;
	bad |= twheel_rt_timeout_ts(&rt, w, ns, &ts) != NULL; /* empty: forever */
	bad |= st.wakeups != 0 || sizeof(st) != 5 * sizeof(uint64_t);
	twheel_destroy(w);
	if (bad)
		fprintf(stderr, "a 1.0 name of <twheel/rt.h> behaves differently\n");
	return bad;
}
