/*
 * conversions.c - the jiffies conversions of <twheel/compat/timer_list.h>
 * that the kernel computes with rounding of its own (clock_t, timespec64,
 * and the msecs, usecs and nsecs ones) give the kernel's values: each is checked against a table computed with
 * the kernel's formulas (kernel_conversions.py, conversions_expected.h),
 * at the HZ it is built with (100, 250, 300, 400, 1000, 50, 1200:
 * meson.build), edge cases and
 * wrap-arounds included, plus the constants. Exit 0 if all match.
 */
#include <stdio.h>

#include <twheel/compat/timer_list.h>

#include "../common/check.h"

struct j_row {
	unsigned long j;
	long clock_t_of_j;
	unsigned long jiffies_of_clock_t;
	unsigned long long clock_t_of_j64;
	long long ts_sec;
	long ts_nsec;
};
struct ts_row {
	long long sec;
	long nsec;
	unsigned long j;
};
struct j2_row {
	unsigned long j;
	unsigned int msecs, usecs;
	unsigned long long msecs64, nsecs64, jiffies_of_nsecs;
};
struct m_row {
	unsigned int m;
	unsigned long msecs_j, usecs_j;
};
struct ns_row {
	unsigned long long ns;
	unsigned long long clock_t_of_ns;
};

#include "conversions_expected.h"

#ifndef KERNEL_CONVERSIONS_HZ
#error "no kernel table for this TWHEEL_COMPAT_HZ: run kernel_conversions.py"
#endif

int main(void)
{
	size_t i;

	CHECK(TICK_NSEC == (1000000000L + HZ / 2) / HZ, "TICK_NSEC %ld", (long)TICK_NSEC);
	CHECK(TICK_USEC == (1000000L + HZ / 2) / HZ, "TICK_USEC %ld", (long)TICK_USEC);
	CHECK(USER_HZ == 100, "USER_HZ");
	CHECK(NEXT_TIMER_MAX_DELTA == 1073741823UL, "NEXT_TIMER_MAX_DELTA");
	CHECK(NSEC_PER_SEC == 1000000000L && USEC_PER_SEC == 1000000L && MSEC_PER_SEC == 1000L &&
		      NSEC_PER_MSEC == 1000000L && NSEC_PER_USEC == 1000L && USEC_PER_MSEC == 1000L,
	      "the time constants");
	CHECK(_Generic(jiffies_to_clock_t(1), clock_t: 1, default: 0), "jiffies_to_clock_t() is clock_t");
	CHECK(_Generic(jiffies_64_to_clock_t(1), unsigned long long: 1, default: 0), "u64");
	CHECK(_Generic(nsec_to_clock_t(1), unsigned long long: 1, default: 0), "u64");
	CHECK(_Generic(clock_t_to_jiffies(1), unsigned long: 1, default: 0), "unsigned long");
	for (i = 0; i < sizeof(j_rows) / sizeof(j_rows[0]); i++) {
		const struct j_row *r = &j_rows[i];
		struct timespec64 ts;

		CHECK(jiffies_to_clock_t(r->j) == r->clock_t_of_j, "jiffies_to_clock_t(%lu) = %ld, kernel %ld", r->j,
		      (long)jiffies_to_clock_t(r->j), r->clock_t_of_j);
		CHECK(clock_t_to_jiffies(r->j) == r->jiffies_of_clock_t, "clock_t_to_jiffies(%lu) = %lu, kernel %lu",
		      r->j, clock_t_to_jiffies(r->j), r->jiffies_of_clock_t);
		CHECK(jiffies_64_to_clock_t(r->j) == r->clock_t_of_j64, "jiffies_64_to_clock_t(%lu) = %llu, kernel %llu",
		      r->j, jiffies_64_to_clock_t(r->j), r->clock_t_of_j64);
		ts.tv_sec = -1;
		ts.tv_nsec = -1;
		jiffies_to_timespec64(r->j, &ts);
		CHECK(ts.tv_sec == r->ts_sec && ts.tv_nsec == r->ts_nsec,
		      "jiffies_to_timespec64(%lu) = %lld.%09ld, kernel %lld.%09ld", r->j, (long long)ts.tv_sec,
		      ts.tv_nsec, r->ts_sec, r->ts_nsec);
		CHECK(jiffies_delta_to_clock_t((long)r->j) ==
			      ((long)r->j > 0 ? r->clock_t_of_j : 0),
		      "jiffies_delta_to_clock_t(%ld)", (long)r->j);
	}
	for (i = 0; i < sizeof(ts_rows) / sizeof(ts_rows[0]); i++) {
		struct timespec64 ts;

		ts.tv_sec = ts_rows[i].sec;
		ts.tv_nsec = ts_rows[i].nsec;
		CHECK(timespec64_to_jiffies(&ts) == ts_rows[i].j, "timespec64_to_jiffies(%lld.%09ld) = %lu, kernel %lu",
		      ts_rows[i].sec, ts_rows[i].nsec, timespec64_to_jiffies(&ts), ts_rows[i].j);
	}
	for (i = 0; i < sizeof(j2_rows) / sizeof(j2_rows[0]); i++) {
		const struct j2_row *r = &j2_rows[i];

		CHECK(jiffies_to_msecs(r->j) == r->msecs, "jiffies_to_msecs(%lu) = %u, kernel %u", r->j,
		      jiffies_to_msecs(r->j), r->msecs);
		CHECK(jiffies_to_usecs(r->j) == r->usecs, "jiffies_to_usecs(%lu) = %u, kernel %u", r->j,
		      jiffies_to_usecs(r->j), r->usecs);
		CHECK(jiffies_to_nsecs(r->j) == r->usecs * 1000ull, "jiffies_to_nsecs(%lu)", r->j);
		CHECK(jiffies64_to_msecs(r->j) == r->msecs64, "jiffies64_to_msecs(%lu) = %llu, kernel %llu", r->j,
		      jiffies64_to_msecs(r->j), r->msecs64);
		CHECK(jiffies64_to_nsecs(r->j) == r->nsecs64, "jiffies64_to_nsecs(%lu) = %llu, kernel %llu", r->j,
		      jiffies64_to_nsecs(r->j), r->nsecs64);
		CHECK(nsecs_to_jiffies64(r->j) == r->jiffies_of_nsecs, "nsecs_to_jiffies64(%lu) = %llu, kernel %llu",
		      r->j, nsecs_to_jiffies64(r->j), r->jiffies_of_nsecs);
		CHECK(nsecs_to_jiffies(r->j) == (unsigned long)r->jiffies_of_nsecs, "nsecs_to_jiffies(%lu)", r->j);
	}
	for (i = 0; i < sizeof(m_rows) / sizeof(m_rows[0]); i++) {
		const struct m_row *r = &m_rows[i];

		CHECK(msecs_to_jiffies(r->m) == r->msecs_j, "msecs_to_jiffies(%u) = %lu, kernel %lu", r->m,
		      msecs_to_jiffies(r->m), r->msecs_j);
		CHECK(usecs_to_jiffies(r->m) == r->usecs_j, "usecs_to_jiffies(%u) = %lu, kernel %lu", r->m,
		      usecs_to_jiffies(r->m), r->usecs_j);
	}
	for (i = 0; i < sizeof(ns_rows) / sizeof(ns_rows[0]); i++)
		CHECK(nsec_to_clock_t(ns_rows[i].ns) == ns_rows[i].clock_t_of_ns, "nsec_to_clock_t(%llu)", ns_rows[i].ns);
	printf("HZ %d: %d passed, %d failed\n", HZ, check_passes, check_failures);
	return check_failures ? 1 : 0;
}
