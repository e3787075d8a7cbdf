/*
 * jiffies_read_only.c - jiffies and jiffies_64 are read-only lvalues, as
 * kernel code expects: with BAD=0, READ_ONCE(jiffies) (the kernel's
 * definitions, old and new, which take the address) and &jiffies compile
 * under -Werror; with BAD=n the n-th write, which the kernel's jiffies
 * would take, does not compile.
 */
#include <twheel/compat/timer_list.h>

/* <asm-generic/rwonce.h>, Linux 5.9 on (__unqual_scalar_typeof() keeps
 * the type, as here), and before it */
#define __unqual_scalar_typeof(x) __typeof__(_Generic((x), unsigned long: (unsigned long)0, \
	unsigned long long: (unsigned long long)0, default: (x)))
#define READ_ONCE(x) (*(const volatile __unqual_scalar_typeof(x) *)&(x))
#define READ_ONCE_OLD(x) (*(const volatile __typeof__(x) *)&(x))

unsigned long check(void);
unsigned long check(void)
{
#if BAD == 0
	unsigned long now = READ_ONCE(jiffies);
	unsigned long long now64 = READ_ONCE(jiffies_64) + READ_ONCE_OLD(jiffies_64);
	const volatile unsigned long *p = &jiffies;

	return now + READ_ONCE_OLD(jiffies) + (unsigned long)now64 + *p +
	       (unsigned long)time_after(READ_ONCE(jiffies), now);
#elif BAD == 1
	jiffies = 0;
	return 0;
#elif BAD == 2
	jiffies_64 = 0;
	return 0;
#elif BAD == 3
	return jiffies++;
#elif BAD == 4
	jiffies += HZ;
	return 0;
#endif
}
