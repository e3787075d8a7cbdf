/*
 * loop_on_time.c - legacy timers bound to the io_uring loop
 * (twheel_loop_compat_bind()) fire in the first iteration whose clock has
 * reached their expiry, as <twheel/compat/timer_list.h> and callout.h
 * promise ("fires in the first advance (host run, loop iteration) that
 * sees jiffies at or past J"), also where 1/HZ s is not a whole number of
 * the loop's ticks: at HZ 300 a jiffy is 3,333,334 ns, and the loop timer
 * that drives the legacy timers sits on the loop's 1 ms (or 4 ms) tick,
 * up to a loop tick after the deadline. Never before it either.
 *
 * A loop on a clock the test sets, iterated with TW_LOOP_NOWAIT (the
 * fallback mode if io_uring is refused: the same iteration); for each
 * loop tick, a timer_list timer, a TIMER_DEFERRABLE one and a callout,
 * each run with the clock one ns before its jiffy (not fired) and then
 * exactly at it (fired, jiffies reading it). Exit 0 pass, 1 fail.
 */
#include <stdio.h>

#include <twheel/compat/callout.h>
#include <twheel/compat/timer_list.h>
#include <twheel/loop.h>

#include "../common/check.h"

static uint64_t clock_ns, bind_tick;

static uint64_t read_clock(void *arg)
{
	(void)arg;
	return clock_ns;
}

struct legacy {
	struct timer_list timer;
	struct callout co;
	int fired;
	unsigned long at; /* jiffies inside the callback */
};

static void timer_fn(struct timer_list *t)
{
	struct legacy *x = from_timer(x, t, timer);

	x->fired++;
	x->at = jiffies;
}

static void callout_fn(void *arg)
{
	struct legacy *x = arg;

	x->fired++;
	x->at = jiffies;
}

/* Set the clock to jiffy @j's start (less @early ns) and iterate once. */
static void run_at(struct twheel_loop *loop, unsigned long j, uint64_t early)
{
	clock_ns = (bind_tick + (j - INITIAL_JIFFIES)) * TWHEEL_COMPAT_TICK_NS - early;
	REQUIRE(twheel_loop_run_once(loop, TW_LOOP_NOWAIT) >= 0, "run_once");
}

static void on_time(uint64_t loop_tick_ns)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *loop;
	char msg[128];

	twheel_loop_config_init(&cfg);
	cfg.tick_ns = loop_tick_ns;
	cfg.clock = read_clock;
	clock_ns = 1000000000ull;
	bind_tick = clock_ns / TWHEEL_COMPAT_TICK_NS; /* INITIAL_JIFFIES */
	REQUIRE(twheel_loop_create(&loop, &cfg, msg, sizeof(msg)) == 0, "twheel_loop_create: %s", msg);
	REQUIRE(twheel_loop_compat_bind(loop, TWHEEL_COMPAT_TICK_NS) == 0, "twheel_loop_compat_bind");
	REQUIRE(jiffies == INITIAL_JIFFIES, "jiffies %lu at the bind", jiffies);
	for (int kind = 0; kind < 3; kind++) {
		for (unsigned long n = 1; n <= 12; n++) {
			struct legacy x = { 0 };
			unsigned long j = jiffies + n;

			if (kind < 2) {
				timer_setup(&x.timer, timer_fn, kind ? TIMER_DEFERRABLE : 0);
				CHECK(mod_timer(&x.timer, j) == 0, "mod_timer");
			} else {
				callout_init(&x.co, 1);
				CHECK(callout_reset(&x.co, (int)n, callout_fn, &x) == 0, "callout_reset");
			}
			run_at(loop, j, 1);
			CHECK(x.fired == 0, "kind %d, loop tick %llu ns: fired at jiffies %lu, before %lu", kind,
			      (unsigned long long)loop_tick_ns, jiffies, j);
			run_at(loop, j, 0);
			CHECK(x.fired == 1 && x.at == j, "kind %d, loop tick %llu ns, %lu jiffies ahead: fired %d "
			      "at jiffies %lu (expiry %lu)", kind, (unsigned long long)loop_tick_ns, n, x.fired,
			      x.at, j);
			if (kind < 2)
				CHECK(timer_delete(&x.timer) == 0, "pending after it ran");
			else
				CHECK(callout_stop(&x.co) == -1, "pending after it ran");
		}
	}
	REQUIRE(twheel_compat_unbind() == 0, "unbind");
	twheel_loop_destroy(loop, NULL, NULL, NULL);
}

int main(void)
{
	on_time(1000000); /* the loop's default tick */
	on_time(4000000);
	on_time(1000);
	printf("HZ %d: %d checks, %d failed\n", HZ, check_passes + check_failures, check_failures);
	return check_failures ? 1 : 0;
}
