/* SPDX-License-Identifier: MIT */
/*
 * test_rt_tsc - twheel_rt_now_upper()'s reuse of a reading, with rt.c
 * compiled in against a simulated time-stamp counter (3 cycles per ns)
 * and simulated clocks, so that a system suspend can be staged: the TSC
 * runs on, CLOCK_MONOTONIC does not, CLOCK_BOOTTIME counts it. A rate
 * measured across it would be too high, and a reading would be reused for
 * far longer than 1/64 of a tick: the bound would fall behind the clock.
 * And the kernel's clocksource can change from the TSC to another (when it
 * finds the TSC unstable): the TSC is then no measure of time to trust.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#if defined(__x86_64__)
#include <x86intrin.h>

static uint64_t fake_tsc, fake_mono, fake_boot;
static char fake_clocksource[16];
static unsigned clocksource_reads;

static FILE *fake_fopen(const char *path, const char *mode)
{
	(void)mode;
	assert_string_equal(path, "/sys/devices/system/clocksource/clocksource0/current_clocksource");
	clocksource_reads++;
	return fmemopen(fake_clocksource, strlen(fake_clocksource), "r");
}

static unsigned long long fake_rdtsc(void)
{
	return fake_tsc;
}

static int fake_clock_gettime(clockid_t id, struct timespec *ts)
{
	uint64_t v = id == CLOCK_BOOTTIME ? fake_boot : fake_mono;

	ts->tv_sec = (time_t)(v / 1000000000u);
	ts->tv_nsec = (long)(v % 1000000000u);
	return 0;
}

/* the headers rt.c includes are in already: only its calls are renamed */
#define __rdtsc fake_rdtsc
#define clock_gettime fake_clock_gettime
#define fopen fake_fopen
#include "../../libtwheel/rt.c"
#undef __rdtsc
#undef clock_gettime
#undef fopen

#define TICK UINT64_C(1000000) /* slack 62.5 us, a reading reused for 15.6 us */

/* Time passes, the machine awake. */
static void run_for(uint64_t ns)
{
	fake_mono += ns;
	fake_boot += ns;
	fake_tsc += 3 * ns;
}

/* The machine sleeps: the TSC runs on (s2idle), CLOCK_MONOTONIC stops. */
static void suspend_for(uint64_t ns)
{
	fake_boot += ns;
	fake_tsc += 3 * ns;
}

static void reset(struct twheel_rt *rt)
{
	memset(&tsc_last, 0, sizeof(tsc_last));
	tsc_state = 0;
	strcpy(fake_clocksource, "tsc\n"); /* as if the kernel's clocksource were the TSC */
	clocksource_reads = 0;
	fake_mono = UINT64_C(1000000000);
	fake_boot = UINT64_C(1000000000);
	fake_tsc = UINT64_C(3000000000);
	twheel_rt_init(rt, TICK, NULL, NULL);
}

/* Never behind the clock, at most 1/16 of a tick ahead. */
static void check_bound(const struct twheel_rt *rt)
{
	uint64_t upper = twheel_rt_now_upper(rt);

	if (upper < fake_mono || upper > fake_mono + TICK / 16)
		fail_msg("%llu not in [%llu, %llu + tick / 16]", (unsigned long long)upper,
			 (unsigned long long)fake_mono, (unsigned long long)fake_mono);
}

/* The simulation reuses readings as a real TSC does. */
static void reuses_within_the_window(void **state)
{
	struct twheel_rt rt;
	uint64_t read_at;

	(void)state;
	reset(&rt);
	check_bound(&rt);
	run_for(500000000); /* the rate: two readings 0.5 s apart */
	check_bound(&rt);
	read_at = fake_mono;
	run_for(5000);
	assert_int_equal(twheel_rt_now_upper(&rt), read_at + TICK / 16);
	run_for(20000); /* past 1/64 of a tick: a fresh reading */
	assert_int_equal(twheel_rt_now_upper(&rt), fake_mono);
}

/* A rate measured across a suspend, after a good one. */
static void suspend_after_the_rate(void **state)
{
	struct twheel_rt rt;

	(void)state;
	reset(&rt);
	check_bound(&rt);
	run_for(500000000);
	check_bound(&rt); /* rate measured: 3 cycles per ns */
	suspend_for(UINT64_C(3600000000000));
	run_for(100000000);
	check_bound(&rt); /* a fresh reading: the TSC says it is old */
	for (int i = 0; i < 200; i++) {
		run_for(10000000); /* 10 ms: far more than 1/16 of a tick */
		check_bound(&rt);
	}
}

/* The first rate of a thread measured across a suspend. */
static void suspend_before_the_rate(void **state)
{
	struct twheel_rt rt;

	(void)state;
	reset(&rt);
	check_bound(&rt);
	suspend_for(UINT64_C(60000000000));
	run_for(2000000);
	check_bound(&rt);
	for (int i = 0; i < 200; i++) {
		run_for(1000000); /* 1 ms: 16 times the slack */
		check_bound(&rt);
	}
	/* and the rate is measured again once awake */
	run_for(5000);
	assert_int_equal(twheel_rt_now_upper(&rt), fake_mono - 5000 + TICK / 16);
}

/*
 * The kernel gives up the TSC as its clocksource (it found it unstable),
 * and then the TSC stops: no reading is reused on its word any longer.
 */
static void clocksource_leaves_the_tsc(void **state)
{
	struct twheel_rt rt;

	(void)state;
	reset(&rt);
	check_bound(&rt);
	run_for(500000000);
	check_bound(&rt);
	assert_int_equal(clocksource_reads, 1);
	strcpy(fake_clocksource, "hpet\n");
	for (int i = 0; i < 300; i++) { /* 3 s */
		run_for(10000000);
		check_bound(&rt);
	}
	assert_true(clocksource_reads > 1);
	for (int i = 0; i < 100; i++) {
		fake_mono += 1000000; /* 1 ms, the TSC standing still */
		fake_boot += 1000000;
		check_bound(&rt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reuses_within_the_window),
		cmocka_unit_test(suspend_after_the_rate),
		cmocka_unit_test(suspend_before_the_rate),
		cmocka_unit_test(clocksource_leaves_the_tsc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
	return 77; /* no TSC reuse elsewhere */
}
#endif
