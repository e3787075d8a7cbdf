/*
 * time_after_type.c - the jiffies comparisons take unsigned long, as the
 * kernel's do (typecheck(unsigned long, ...)). Built with -Werror: with
 * BAD=0 every comparison, given unsigned long values (const and volatile
 * ones too), compiles; with BAD=n the n-th, given a jiffies value kept in
 * 32 bits (wrong on LP64 from five minutes after the bind, when jiffies
 * passes 2^32), draws the kernel's warning: "comparison of distinct
 * pointer types". BAD=9 to 16: the 64-bit forms take unsigned long long,
 * the kernel's u64 (typecheck(__u64, ...)), and draw the same warning for
 * an unsigned long (jiffies itself, uint64_t on LP64) or a 32-bit value.
 */
#include <twheel/compat/timer_list.h>

int check(unsigned int j32);
int check(unsigned int j32)
{
	unsigned long j = jiffies;
	const unsigned long c = j + HZ;
	volatile unsigned long v = c;
	unsigned long long j64 = get_jiffies_64();
	const unsigned long long c64 = j64 + HZ;
	volatile unsigned long long v64 = c64;

	(void)c;
	(void)v;
	(void)j32;
	(void)c64;
	(void)v64;
#if BAD == 0
	return time_after(jiffies, c) + time_before(j, c) + time_after_eq(j, v) + time_before_eq(v, c) +
	       time_in_range(j, j, c) + time_in_range_open(v, j, c) + time_is_after_jiffies(c) +
	       time_is_before_jiffies(c) + time_is_after_eq_jiffies(v) + time_is_before_eq_jiffies(c) +
	       time_after(j, j + 1UL) + time_after(j, (unsigned long)j32) + time_after64(jiffies_64, c64) +
	       time_before64(j64, c64) + time_after_eq64(j64, v64) + time_before_eq64(v64, c64) +
	       time_in_range64(j64, j64, c64) + time_is_after_jiffies64(c64) + time_is_before_jiffies64(v64) +
	       time_is_after_eq_jiffies64(c64) + time_is_before_eq_jiffies64(c64) +
	       time_after64(j64, (unsigned long long)j) + time_after64(get_jiffies_64(), j64 + 1ULL);
#elif BAD == 1
	return time_after(jiffies, j32 + HZ);
#elif BAD == 2
	return time_before(j32, j);
#elif BAD == 3
	return time_after_eq(j, j32);
#elif BAD == 4
	return time_before_eq(j32 + 1u, c);
#elif BAD == 5
	return time_in_range(j32, j, c);
#elif BAD == 6
	return time_in_range_open(j, j32, c);
#elif BAD == 7
	return time_is_after_jiffies(j32);
#elif BAD == 8
	return time_is_before_eq_jiffies((int)j32);
#elif BAD == 9
	return time_after64(jiffies, c64);
#elif BAD == 10
	return time_before64(j64, j);
#elif BAD == 11
	return time_after_eq64(j64, j32);
#elif BAD == 12
	return time_before_eq64((uint64_t)j, c64);
#elif BAD == 13
	return time_in_range64(j64, j, c64);
#elif BAD == 14
	return time_is_after_jiffies64(j);
#elif BAD == 15
	return time_is_before_jiffies64(j32);
#elif BAD == 16
	return time_is_after_eq_jiffies64((long long)j64);
#endif
}
