/*
 * twheel-inspect - show how a libtwheel wheel holds a workload: per level,
 * the slots in use, the timers, the span of a slot and the next tick with
 * work, then what advancing through it costs (fires, cascades, timers moved,
 * advance steps). Useful to see why a workload is cheap or not.
 *
 *   twheel-inspect [--n N] [--max-delay TICKS] [--log] [--seed S] [--steps]
 *
 * --log draws delays log-uniformly in [1, max-delay] (long_range-like);
 * the default draws them uniformly. --steps advances to next_expiry() one
 * step at a time and prints every step (use a small --n).
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <twheel/twheel.h>

#include "args.h"

static uint64_t seed = 42;
static uint64_t splitmix64(void)
{
	uint64_t z = (seed += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static long fired;
static tw_tick_t last;
static int late;
static void on_fire(struct tw_timer *t)
{
	fired++;
	if (t->expires < last)
		late++; /* out of order: never expected */
	last = t->expires;
}

static void show(const struct twheel *w, const char *when)
{
	struct twheel_level_info li[TWHEEL_LEVELS];
	size_t due = 0;
	if (twheel_inspect(w, li, TWHEEL_LEVELS, &due)) {
		fprintf(stderr, "twheel_inspect failed\n");
		exit(1);
	}
	printf("\n%s: now %" PRIu64 ", %zu pending (%zu due), next_expiry %" PRIu64 "\n", when,
	       twheel_now(w), twheel_count(w), due, twheel_next_expiry(w));
	printf("| level | slots used | timers | span of a slot | next tick with work |\n");
	printf("| ---: | ---: | ---: | ---: | ---: |\n");
	for (int i = 0; i < TWHEEL_LEVELS; i++) {
		if (!li[i].timers)
			continue;
		printf("| %d | %u / %u | %zu | %" PRIu64 " | %" PRIu64 " |\n", i, li[i].slots_used,
		       li[i].slots, li[i].timers, li[i].span, li[i].next);
	}
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  --n N              timers (100000)\n"
		"  --max-delay TICKS  the longest delay (65536)\n"
		"  --log              delays log-uniform in [1, TICKS] instead of uniform\n"
		"  --seed S           the seed of the delays (42)\n"
		"  --steps            advance one next_expiry() at a time, print every step\n"
		"exit: 0 all fired in order, 1 a check failed, 2 usage\n",
		prog);
}

int main(int argc, char **argv)
{
	uint64_t n = 100000, max_delay = 65536;
	bool logd = false, steps = false;
	const struct args_opt opts[] = {
		ARGS_NUM("n", &n, 1, 100000000),
		ARGS_NUM("max-delay", &max_delay, 1, UINT64_C(1) << 62),
		ARGS_FLAG("log", &logd),
		ARGS_NUM("seed", &seed, 0, UINT64_MAX),
		ARGS_FLAG("steps", &steps),
		ARGS_END,
	};
	args_parse("twheel-inspect", argc, argv, opts, usage);
	struct tw_timer *t = calloc(n, sizeof(*t));
	struct twheel *w = twheel_create(0);
	if (!t || !w) {
		fprintf(stderr, "twheel-inspect: no memory for %" PRIu64 " timers\n", n);
		return 1;
	}
	printf("libtwheel %s: %" PRIu64 " timers, delays %s in [1, %" PRIu64 "], seed %" PRIu64
	       ", sizeof(struct tw_timer) = %zu\n",
	       twheel_version(), n, logd ? "log-uniform" : "uniform", max_delay, seed, sizeof(*t));
	tw_tick_t maxe = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d;
		if (logd)
			d = (uint64_t)exp2((double)(splitmix64() >> 11) / 9007199254740992.0 * log2((double)max_delay));
		else
			d = 1 + splitmix64() % max_delay;
		if (d < 1)
			d = 1;
		tw_timer_init(&t[i], on_fire);
		twheel_add(w, &t[i], d);
		if (d > maxe)
			maxe = d;
	}
	show(w, "after adding");
	long nsteps = 0;
	while (twheel_count(w)) {
		tw_tick_t next = twheel_next_expiry(w);
		long f = twheel_advance(w, next);
		nsteps++;
		if (steps)
			printf("step %ld: advance to %" PRIu64 " fired %ld\n", nsteps, next, f);
	}
	struct twheel_stats st;
	twheel_get_stats(w, &st);
	char msg[200];
	int ok = twheel_check(w, msg, sizeof(msg)) == 0 && (uint64_t)fired == n && !late;
	printf("\nadvanced to %" PRIu64 " in %ld steps: %" PRIu64 " fired, %" PRIu64 " cascades moved %" PRIu64
	       " timers (%.2f per timer), %s\n",
	       maxe, nsteps, st.fires, st.cascades, st.cascaded, n ? (double)st.cascaded / (double)n : 0.0,
	       ok ? "all fired in order" : "CHECK FAILED");
	twheel_destroy(w);
	free(t);
	return ok ? 0 : 1;
}
