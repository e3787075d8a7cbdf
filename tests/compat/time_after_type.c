/*
 * time_after_type.c - the jiffies comparisons take unsigned long, as the
 * kernel's do (typecheck(unsigned long, ...)). Built with -Werror: with
 * BAD=0 every comparison, given unsigned long values (const and volatile
 * ones too), compiles; with BAD=n the n-th, given a jiffies value kept in
 * 32 bits (wrong on LP64 from five minutes after the bind, when jiffies
 * passes 2^32), draws the kernel's warning: "comparison of distinct
 * pointer types".
 */
#include <twheel/compat/timer_list.h>

int check(unsigned int j32);
int check(unsigned int j32)
{
	unsigned long j = jiffies;
	const unsigned long c = j + HZ;
	volatile unsigned long v = c;

	(void)c;
	(void)v;
	(void)j32;
#if BAD == 0
	return time_after(jiffies, c) + time_before(j, c) + time_after_eq(j, v) + time_before_eq(v, c) +
	       time_in_range(j, j, c) + time_in_range_open(v, j, c) + time_is_after_jiffies(c) +
	       time_is_before_jiffies(c) + time_is_after_eq_jiffies(v) + time_is_before_eq_jiffies(c) +
	       time_after(j, j + 1UL) + time_after(j, (unsigned long)j32);
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
#endif
}
