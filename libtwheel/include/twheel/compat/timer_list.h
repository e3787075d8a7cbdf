/* SPDX-License-Identifier: MIT */
/*
 * twheel/compat/timer_list.h - the Linux kernel's timer API (<linux/timer.h>
 * and the jiffies of <linux/jiffies.h>, as of Linux 6.x, older spellings
 * too) on a libtwheel wheel, so that kernel-style C code moves in with its
 * include line changed and one line of set-up per thread:
 *
 *   twheel_compat_bind_wheel(w);                            a plain wheel
 *   twheel_compat_bind_host(h, TWHEEL_COMPAT_TICK_NS);      a host (libuv...)
 *   twheel_loop_compat_bind(loop, TWHEEL_COMPAT_TICK_NS);   the io_uring loop
 *
 * (<twheel/compat.h>). Static inline functions and macros over the public
 * C API; the kernel names are not prefixed, as the point is to keep them.
 *
 * Semantics are the kernel-doc's of kernel/time/timer.c, with these
 * differences, all of them from "one thread per wheel":
 *   - A timer's callback runs on the thread that armed it, inside that
 *     thread's twheel_advance(), host run or loop iteration, never
 *     concurrently with that thread's other code.
 *   - The _sync variants therefore have nothing to wait for: called outside
 *     the timer's own callback, no callback of the thread's wheel is
 *     running, and they return as their plain forms. Called from inside
 *     the timer's own callback (where the kernel would wait forever), they
 *     delete a re-arm the callback made and return at once.
 *     try_to_del_timer_sync() returns -1 there and changes nothing, as the
 *     kernel's does while the callback runs.
 *   - A call on a timer pending on another thread's wheel changes nothing
 *     and returns -EXDEV (add_timer(), void, does nothing); arming on a
 *     thread that bound no wheel returns -ENXIO (add_timer() does nothing;
 *     the first such arm of a thread is said on stderr). mod_timer(),
 *     mod_timer_pending(), timer_reduce(), timer_delete(), the _sync and
 *     shutdown forms return these negative values only for such misuse.
 *   - Expiry is exact: a timer armed for jiffy J fires in the first
 *     advance (host run, loop iteration) that sees jiffies at or past J,
 *     never before, and not later for being far away (the kernel's wheel,
 *     since Linux 4.8, queues a timer one granule after its expiry: a
 *     tick on its first level, so a timer for jiffies + 1 fires when
 *     jiffies reaches jiffies + 2, and far ones up to 12.5% later; and it
 *     fires a timer more than its capacity away, about 12 days at HZ 1000
 *     (WHEEL_TIMEOUT_MAX), early, at that capacity: here such a timer,
 *     jiffies + MAX_JIFFY_OFFSET as "never" included, fires at its
 *     expiry). An
 *     expiry at or before jiffies fires at the next tick, jiffies + 1, as
 *     the kernel queues it. Inside a callback, jiffies is the time the
 *     running advance reaches, as the kernel's while its softirq catches
 *     up (an expiry already past from a callback there: see
 *     <twheel/compat.h>).
 *   - TIMER_DEFERRABLE timers wait for another wake-up of the loop
 *     (twheel_loop_compat_bind(): a deferrable wheel, as the kernel's
 *     deferrable base); on a plain wheel or a host they are normal timers,
 *     which "work normally when the system is busy". TIMER_PINNED and
 *     TIMER_IRQSAFE are accepted and change nothing: a timer stays on the
 *     thread that armed it, and there is no interrupt context.
 *   - from_timer(), timer_container_of() and the type check of
 *     time_after() and friends use __typeof__ (GCC, Clang; C23 has
 *     typeof); in C++ those comparisons are not type-checked.
 *   - timer_delete() is a macro (POSIX <time.h> has a timer_delete() of
 *     its own): a program that also uses POSIX timers calls those through
 *     a file that does not include this header.
 *   - jiffies is a macro that reads the bound wheel's time (a host or loop
 *     reads its clock): it cannot be assigned, and a local variable named
 *     jiffies does not compile (in the kernel it would shadow the global).
 *     It is a read-only lvalue: READ_ONCE(jiffies) compiles (see below).
 *
 * jiffies starts at INITIAL_JIFFIES when the thread binds, five minutes
 * before its low 32 bits wrap, as in the kernel, so code that stores
 * jiffies in 32 bits or compares them with < shows its wrap bugs after
 * five minutes, not after 49 days.
 *
 * Linux before 4.15 (init_timer(), setup_timer(), a function taking
 * unsigned long data, timer.data, DEFINE_TIMER(name, fn, expires, data)):
 * define TWHEEL_COMPAT_TIMER_DATA before the include, in every file of the
 * program (executable or shared library) that includes it; the linker
 * refuses a program where some files define it and others do not (except
 * under clang's full -flto: see struct timer_list below). Without it,
 * those initialisers (init_timer(), setup_timer(), TIMER_INITIALIZER()
 * and their forms) are compile-time errors that say so, in C.
 *
 * Size: struct timer_list is 72 bytes on LP64 (the kernel's is 40), two
 * words more with TWHEEL_COMPAT_TIMER_DATA.
 */
#ifndef TWHEEL_COMPAT_TIMER_LIST_H
#define TWHEEL_COMPAT_TIMER_LIST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <twheel/compat.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Ticks a second (<twheel/compat.h>: define TWHEEL_COMPAT_HZ to change).
 * Linux's <asm/param.h> for user space, which glibc's <sys/param.h> and
 * so <uv.h> and <resolv.h> include, defines HZ as 100, the rate of
 * times()'s clock ticks (sysconf(_SC_CLK_TCK)): the kernel's HZ replaces
 * it. Another HZ defined before the include must be TWHEEL_COMPAT_HZ.
 */
#if defined(HZ) && defined(__ASM_GENERIC_PARAM_H) && HZ == 100
#undef HZ
#endif
#ifdef HZ
#if HZ != TWHEEL_COMPAT_HZ
#error "HZ differs from TWHEEL_COMPAT_HZ: define TWHEEL_COMPAT_HZ instead"
#endif
#else
#define HZ TWHEEL_COMPAT_HZ
#endif

/* The kernel's start value: five minutes before the low 32 bits wrap. */
#define INITIAL_JIFFIES ((unsigned long)(unsigned int)(-300 * HZ))

/* The longest timeout the conversions return ("infinite"). */
#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1) - 1)

/* Ticks since the thread bound its wheel, plus INITIAL_JIFFIES. O(1). */
static inline unsigned long twheel_jiffies(void)
{
	return INITIAL_JIFFIES + (unsigned long)twheel_compat_now();
}

/*
 * jiffies and jiffies_64 are object-like macros, not Linux's variables:
 * include this header after other libraries' headers that use those words
 * as names. Each is a read-only lvalue, the current value stored in a
 * thread-local of the including file, so that kernel code's
 * READ_ONCE(jiffies) (which takes the address) compiles and reads it,
 * while an assignment does not compile. An address kept and read later
 * reads the value of the last read of jiffies in that file, not the time
 * then: read jiffies itself.
 */
static inline const volatile unsigned long *twheel__jiffies_ref(void)
{
	static __thread unsigned long twheel__jiffies_now;

	twheel__jiffies_now = twheel_jiffies();
	return &twheel__jiffies_now;
}
#define jiffies (*twheel__jiffies_ref())

/* jiffies as 64 bits (unsigned long is 64 bits on LP64 already); the
 * kernel's jiffies_64 variable is a macro here too, read-only. Both are
 * unsigned long long, the kernel's u64 on every architecture (not
 * uint64_t, unsigned long on LP64), so that kernel code's %llu fits. */
static inline unsigned long long get_jiffies_64(void)
{
	return (unsigned long long)INITIAL_JIFFIES + twheel_compat_now();
}
static inline const volatile unsigned long long *twheel__jiffies_64_ref(void)
{
	static __thread unsigned long long twheel__jiffies_64_now;

	twheel__jiffies_64_now = get_jiffies_64();
	return &twheel__jiffies_64_now;
}
#define jiffies_64 (*twheel__jiffies_64_ref())

/*
 * 1, and a warning ("comparison of distinct pointer types") if @x is not
 * of @type, as the kernel's typecheck(@type, @x): jiffies kept in a u32
 * or an int compare wrongly once jiffies passes 2^32, five minutes after
 * the bind on LP64. Not in C++ (where it would be an error). It compares
 * pointers to the two types rather than the addresses of two objects, as
 * the kernel's does: an object of @x's type would be an uninitialised
 * const for jiffies (const volatile here) or any const @x, which clang 21
 * warns of by default (-Wdefault-const-init-var-unsafe).
 */
#ifdef __cplusplus
#define twheel__typecheck(type, x) 1
#else
#define twheel__typecheck(type, x)                                                        \
	__extension__({                                                                  \
		type *twheel__jiffies_type = 0;                                          \
		__typeof__(x) *twheel__argument = 0;                                     \
		(void)(twheel__jiffies_type == twheel__argument);                        \
		1;                                                                       \
	})
#endif
#define twheel__jiffies_typecheck(x) twheel__typecheck(unsigned long, x)

/* Wrap-safe comparisons of jiffies values: true if @a is after @b, etc.
 * Both must be unsigned long, as in the kernel (or a warning says so). */
#define time_after(a, b)                                                \
	(twheel__jiffies_typecheck(a) && twheel__jiffies_typecheck(b) && \
	 (long)((unsigned long)(b) - (unsigned long)(a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_after_eq(a, b)                                             \
	(twheel__jiffies_typecheck(a) && twheel__jiffies_typecheck(b) && \
	 (long)((unsigned long)(a) - (unsigned long)(b)) >= 0)
#define time_before_eq(a, b) time_after_eq(b, a)
#define time_is_before_jiffies(a) time_after(jiffies, a)
#define time_is_after_jiffies(a) time_before(jiffies, a)
#define time_is_before_eq_jiffies(a) time_after_eq(jiffies, a)
#define time_is_after_eq_jiffies(a) time_before_eq(jiffies, a)
/* True if @a is in [@b, @c] (time_in_range) or [@b, @c) (_open), wrap-safe. */
#define time_in_range(a, b, c) (time_after_eq(a, b) && time_before_eq(a, c))
#define time_in_range_open(a, b, c) (time_after_eq(a, b) && time_before(a, c))
/* The same for 64-bit values (get_jiffies_64()), wrap-safe in 64 bits.
 * Both must be unsigned long long, the kernel's u64 on every architecture
 * (typecheck(__u64, ...)): an unsigned long (jiffies, uint64_t on LP64)
 * or a 32-bit value draws the warning above, as in the kernel. */
#define time_after64(a, b)                                                                   \
	(twheel__typecheck(unsigned long long, a) && twheel__typecheck(unsigned long long, b) && \
	 (long long)((unsigned long long)(b) - (unsigned long long)(a)) < 0)
#define time_before64(a, b) time_after64(b, a)
#define time_after_eq64(a, b)                                                                \
	(twheel__typecheck(unsigned long long, a) && twheel__typecheck(unsigned long long, b) && \
	 (long long)((unsigned long long)(a) - (unsigned long long)(b)) >= 0)
#define time_before_eq64(a, b) time_after_eq64(b, a)
#define time_in_range64(a, b, c) (time_after_eq64(a, b) && time_before_eq64(a, c))
#define time_is_before_jiffies64(a) time_after64(get_jiffies_64(), a)
#define time_is_after_jiffies64(a) time_before64(get_jiffies_64(), a)
#define time_is_before_eq_jiffies64(a) time_after_eq64(get_jiffies_64(), a)
#define time_is_after_eq_jiffies64(a) time_before_eq64(get_jiffies_64(), a)

/*
 * What the kernel's conversions compute at an HZ that does not divide 1000
 * or 1000000 (HZ 300, or 400) comes from kernel/time/timeconst.bc:
 * gcd(HZ, 10^6) and gcd(HZ, 10^9) are HZ without its factor 3, and
 * gcd(HZ, 1000) its factors 2 and 5 up to the third power; fmul(), fmuls()
 * and fadj() give the reciprocals MSEC_TO_HZ_MUL32 and USEC_TO_HZ_MUL32,
 * their shifts and adjustments (constants, once the compiler folds them).
 */
#define TWHEEL__HZ_NO3 (HZ % 3 ? HZ : HZ / 3)
#define TWHEEL__HZ_GCD1000                                                                          \
	((TWHEEL__HZ_NO3 % 8 ? TWHEEL__HZ_NO3 % 4 ? TWHEEL__HZ_NO3 % 2 ? 1 : 2 : 4 : 8) *            \
	 (TWHEEL__HZ_NO3 % 125 ? TWHEEL__HZ_NO3 % 25 ? TWHEEL__HZ_NO3 % 5 ? 1 : 5 : 25 : 125))

/* timeconst.bc's fmul(b, n, d): ceil(2^b * n / d). */
static inline unsigned long long twheel__fmul(unsigned int b, unsigned long long n, unsigned long long d)
{
	return ((1ull << b) * n + d - 1) / d;
}

/* fmuls(32, n, d): the least shift b with fmul(b, n, d) >= 2^31. */
static inline unsigned int twheel__fmuls(unsigned long long n, unsigned long long d)
{
	unsigned int b = 0;

	while (twheel__fmul(b, n, d) < (1ull << 31))
		b++;
	return b;
}

/* fadj(b, n, d), with @dg = d / gcd(n, d): floor(2^b * (dg - 1) / dg),
 * computed as 2^b - ceil(2^b / dg), which does not overflow. */
static inline unsigned long long twheel__fadj(unsigned int b, unsigned long long dg)
{
	return (1ull << b) - ((1ull << b) + dg - 1) / dg;
}

/*
 * Milliseconds and microseconds from jiffies, as the kernel's
 * (kernel/time/time.c): exact where HZ divides 1000 (1000000), the
 * milliseconds rounded up and the microseconds down elsewhere; unsigned
 * int, so a result past UINT_MAX keeps its low 32 bits. (With a 32-bit
 * unsigned long, the kernel multiplies by timeconst.h's reciprocals
 * there; this header computes the exact values instead.)
 */
static inline unsigned int jiffies_to_msecs(const unsigned long j)
{
#if HZ <= 1000 && !(1000 % HZ)
	return (unsigned int)((1000 / HZ) * j);
#elif HZ > 1000 && !(HZ % 1000)
	return (unsigned int)((j + (HZ / 1000) - 1) / (HZ / 1000));
#elif ULONG_MAX > 0xffffffffUL
	return (unsigned int)((j * (1000 / TWHEEL__HZ_GCD1000) + (HZ / TWHEEL__HZ_GCD1000) - 1) /
			      (HZ / TWHEEL__HZ_GCD1000));
#else
	return (unsigned int)(j / HZ * 1000 + (j % HZ * 1000 + HZ - 1) / HZ);
#endif
}

static inline unsigned int jiffies_to_usecs(const unsigned long j)
{
#if !(1000000 % HZ)
	return (unsigned int)((1000000 / HZ) * j);
#elif ULONG_MAX > 0xffffffffUL
	return (unsigned int)((j * (1000000 / TWHEEL__HZ_NO3)) / (HZ / TWHEEL__HZ_NO3));
#else
	return (unsigned int)(j / HZ * 1000000 + j % HZ * 1000000 / HZ);
#endif
}

/*
 * The same in 64 bits, rounded down, as the kernel's (kernel/time/time.c):
 * nanoseconds (exact where HZ divides 10^9) and milliseconds from
 * jiffies, jiffies from nanoseconds ("designed for scheduler": no
 * MAX_JIFFY_OFFSET; at an HZ that is a multiple of 3, the kernel's
 * n * 9 / ((9 * 10^9 + HZ / 2) / HZ), which wraps past 65 years);
 * nsecs_to_jiffies() is the last as unsigned long. Unsigned long long,
 * the kernel's u64 on every architecture.
 */
static inline unsigned long long jiffies64_to_nsecs(unsigned long long j)
{
#if !(1000000000 % HZ)
	return (1000000000ull / HZ) * j;
#else
	return j * (1000000000ull / TWHEEL__HZ_NO3) / (HZ / TWHEEL__HZ_NO3);
#endif
}

static inline unsigned long long jiffies64_to_msecs(const unsigned long long j)
{
#if HZ <= 1000 && !(1000 % HZ)
	return (1000ull / HZ) * j;
#else
	return j * (1000ull / TWHEEL__HZ_GCD1000) / (HZ / TWHEEL__HZ_GCD1000);
#endif
}

static inline unsigned long long nsecs_to_jiffies64(unsigned long long n)
{
#if !(1000000000 % HZ)
	return n / (1000000000ull / HZ);
#else
	return n * 9 / ((9ull * 1000000000 + HZ / 2) / HZ);
#endif
}

static inline unsigned long nsecs_to_jiffies(unsigned long long n)
{
	return (unsigned long)nsecs_to_jiffies64(n);
}

/* Nanoseconds from jiffies, as the kernel's: jiffies_to_usecs() (so its
 * low 32 bits) times 1000. */
static inline unsigned long long jiffies_to_nsecs(const unsigned long j)
{
	return (unsigned long long)jiffies_to_usecs(j) * 1000;
}

/* Milliseconds of a jiffies difference (time_after()'s long), 0 if it is
 * negative, as the kernel's. */
static inline unsigned int jiffies_delta_to_msecs(long delta)
{
	return jiffies_to_msecs(delta > 0 ? (unsigned long)delta : 0);
}

/*
 * Jiffies from milliseconds, rounded up, as the kernel's: a negative value
 * (as int) means "infinite", MAX_JIFFY_OFFSET. Where HZ does not divide
 * 1000, the kernel's reciprocal (MSEC_TO_HZ_MUL32: rounded up too, up to
 * about 2^31 ms); above 1000 HZ, a value past jiffies_to_msecs(
 * MAX_JIFFY_OFFSET) is MAX_JIFFY_OFFSET, as there.
 */
static inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
#if HZ <= 1000 && !(1000 % HZ)
	return (m + (1000ul / HZ) - 1) / (1000ul / HZ);
#elif HZ > 1000 && !(HZ % 1000)
	if (m > jiffies_to_msecs(MAX_JIFFY_OFFSET))
		return MAX_JIFFY_OFFSET;
	return (unsigned long)m * (HZ / 1000);
#else
	{
		unsigned int s = twheel__fmuls(HZ, 1000);

		if (HZ > 1000 && m > jiffies_to_msecs(MAX_JIFFY_OFFSET))
			return MAX_JIFFY_OFFSET;
		return (unsigned long)((twheel__fmul(s, HZ, 1000) * m +
					twheel__fadj(s, 1000 / TWHEEL__HZ_GCD1000)) >> s);
	}
#endif
}

/*
 * Jiffies from seconds, @_secs * HZ (Linux 6.13): a macro, so that it can
 * be used in static initializers, and like the kernel's it multiplies in
 * the type of @_secs (an int past INT_MAX / HZ seconds overflows).
 */
#define secs_to_jiffies(_secs) ((unsigned long)((_secs) * HZ))

/* Jiffies from microseconds, rounded up (where HZ does not divide 1000000,
 * with the kernel's reciprocal USEC_TO_HZ_MUL32); too large:
 * MAX_JIFFY_OFFSET. */
static inline unsigned long usecs_to_jiffies(const unsigned int u)
{
	if (u > jiffies_to_usecs(MAX_JIFFY_OFFSET))
		return MAX_JIFFY_OFFSET;
#if !(1000000 % HZ)
	return (u + (1000000ul / HZ) - 1) / (1000000ul / HZ);
#else
	{
		unsigned int s = twheel__fmuls(HZ, 1000000);

		return (unsigned long)((twheel__fmul(s, HZ, 1000000) * u +
					twheel__fadj(s, 1000000 / TWHEEL__HZ_NO3)) >> s);
	}
#endif
}

/*
 * The kernel's time constants (<vdso/time64.h>), which driver code passes
 * to the conversions (msecs_to_jiffies(t * MSEC_PER_SEC)); each is left
 * as it is if the program defined it first.
 */
#ifndef MSEC_PER_SEC
#define MSEC_PER_SEC 1000L
#endif
#ifndef USEC_PER_MSEC
#define USEC_PER_MSEC 1000L
#endif
#ifndef NSEC_PER_USEC
#define NSEC_PER_USEC 1000L
#endif
#ifndef NSEC_PER_MSEC
#define NSEC_PER_MSEC 1000000L
#endif
#ifndef USEC_PER_SEC
#define USEC_PER_SEC 1000000L
#endif
#ifndef NSEC_PER_SEC
#define NSEC_PER_SEC 1000000000L
#endif

/* A jiffy in nanoseconds and in microseconds, rounded to the nearest, as
 * the kernel's (<vdso/jiffies.h>, <linux/jiffies.h>). */
#define TICK_NSEC ((1000000000L + HZ / 2) / HZ)
#define TICK_USEC ((1000000L + HZ / 2) / HZ)

/* The clock_t tick rate of user space (times(), /proc: sysconf(_SC_CLK_TCK)),
 * the kernel's USER_HZ, unless the program defined it first. */
#ifndef USER_HZ
#define USER_HZ 100
#endif
#define USER_TICK_USEC ((1000000UL + USER_HZ / 2) / USER_HZ)

/* The longest delay the kernel's wheel looks ahead for its next expiry
 * (<linux/timer.h>); code uses it as "far away". */
#define NEXT_TIMER_MAX_DELTA ((1UL << 30) - 1)

/*
 * clock_t (USER_HZ ticks) from jiffies and back, as the kernel's
 * (kernel/time/time.c), with its rounding and types: jiffies_to_clock_t()
 * and jiffies_64_to_clock_t() round down; clock_t_to_jiffies() returns
 * ~0UL past what it can represent (and, where HZ is not a multiple of
 * USER_HZ, wraps in 64 bits before that, as the kernel's); nsec_to_clock_t()
 * rounds down. clock_t is <time.h>'s, long on Linux, as the kernel's.
 */
static inline clock_t jiffies_to_clock_t(unsigned long x)
{
#if (TICK_NSEC % (1000000000L / USER_HZ)) == 0
#if HZ < USER_HZ
	return (clock_t)(x * (USER_HZ / HZ));
#else
	return (clock_t)(x / (HZ / USER_HZ));
#endif
#else
	return (clock_t)((unsigned long long)x * TICK_NSEC / (1000000000L / USER_HZ));
#endif
}

static inline unsigned long clock_t_to_jiffies(unsigned long x)
{
#if (HZ % USER_HZ) == 0
	if (x >= ~0UL / (HZ / USER_HZ))
		return ~0UL;
	return x * (HZ / USER_HZ);
#else
	if (x >= ~0UL / HZ * USER_HZ)
		return ~0UL;
	return (unsigned long)((unsigned long long)x * HZ / USER_HZ);
#endif
}

static inline unsigned long long jiffies_64_to_clock_t(unsigned long long x)
{
#if (TICK_NSEC % (1000000000L / USER_HZ)) == 0
#if HZ < USER_HZ
	x = x * USER_HZ / HZ;
#elif HZ > USER_HZ
	x = x / (HZ / USER_HZ);
#endif
#else
	x = x * TICK_NSEC / (1000000000L / USER_HZ);
#endif
	return x;
}

static inline unsigned long long nsec_to_clock_t(unsigned long long x)
{
#if (1000000000L % USER_HZ) == 0
	return x / (1000000000L / USER_HZ);
#elif (USER_HZ % 512) == 0
	return x * USER_HZ / 512 / (1000000000L / 512);
#else
	return x * 9 / ((9ull * 1000000000L + (USER_HZ / 2)) / USER_HZ);
#endif
}

/* jiffies_to_clock_t() of a difference of jiffies, 0 if it is negative. */
static inline clock_t jiffies_delta_to_clock_t(long delta)
{
	return jiffies_to_clock_t(delta > 0 ? (unsigned long)delta : 0);
}

/* The kernel's <linux/time64.h> types, unless its header (or a program's
 * copy, with the same guard) came first. */
#ifndef _LINUX_TIME64_H
typedef long long time64_t;
struct timespec64 {
	time64_t tv_sec; /* seconds */
	long tv_nsec;    /* nanoseconds */
};
#endif

/*
 * The kernel's scaled arithmetic for timespec64_to_jiffies()
 * (<linux/jiffies.h>): SHIFT_HZ for HZ from 12 to 12287, the kernel's
 * range (timespec64_to_jiffies() is not defined outside it).
 */
#if HZ >= 12 && HZ < 24
#define TWHEEL__SHIFT_HZ 4
#elif HZ >= 24 && HZ < 48
#define TWHEEL__SHIFT_HZ 5
#elif HZ >= 48 && HZ < 96
#define TWHEEL__SHIFT_HZ 6
#elif HZ >= 96 && HZ < 192
#define TWHEEL__SHIFT_HZ 7
#elif HZ >= 192 && HZ < 384
#define TWHEEL__SHIFT_HZ 8
#elif HZ >= 384 && HZ < 768
#define TWHEEL__SHIFT_HZ 9
#elif HZ >= 768 && HZ < 1536
#define TWHEEL__SHIFT_HZ 10
#elif HZ >= 1536 && HZ < 3072
#define TWHEEL__SHIFT_HZ 11
#elif HZ >= 3072 && HZ < 6144
#define TWHEEL__SHIFT_HZ 12
#elif HZ >= 6144 && HZ < 12288
#define TWHEEL__SHIFT_HZ 13
#endif
#ifdef TWHEEL__SHIFT_HZ
#if !((((1000000000L << 2) / TICK_NSEC) << (31 - TWHEEL__SHIFT_HZ - 2)) & 0x80000000)
#define TWHEEL__SEC_JIFFIE_SC (32 - TWHEEL__SHIFT_HZ)
#else
#define TWHEEL__SEC_JIFFIE_SC (31 - TWHEEL__SHIFT_HZ)
#endif
#define TWHEEL__NSEC_JIFFIE_SC (TWHEEL__SEC_JIFFIE_SC + 29)
#define TWHEEL__SEC_CONVERSION \
	((unsigned long)((((unsigned long long)1000000000L << TWHEEL__SEC_JIFFIE_SC) + TICK_NSEC - 1) / \
			 (unsigned long long)TICK_NSEC))
#define TWHEEL__NSEC_CONVERSION \
	((unsigned long)((((unsigned long long)1 << TWHEEL__NSEC_JIFFIE_SC) + TICK_NSEC - 1) / \
			 (unsigned long long)TICK_NSEC))
#define TWHEEL__SH_DIV(nom, den, lsh) ((((nom) / (den)) << (lsh)) + ((((nom) % (den)) << (lsh)) + (den) / 2) / (den))
#if ULONG_MAX > 0xffffffffUL
#define TWHEEL__MAX_SEC_IN_JIFFIES \
	(TWHEEL__SH_DIV((MAX_JIFFY_OFFSET >> TWHEEL__SEC_JIFFIE_SC) * TICK_NSEC, 1000000000L, 1) - 1)
#else
#define TWHEEL__MAX_SEC_IN_JIFFIES \
	(long)((unsigned long long)((unsigned long long)MAX_JIFFY_OFFSET * TICK_NSEC) / 1000000000L)
#endif

/*
 * Jiffies from a timespec64, rounded up to the next jiffy, as the
 * kernel's (the same scaled arithmetic, so the same result for every
 * value, its small error for a tv_nsec past a second included); a time
 * past MAX_SEC_IN_JIFFIES seconds (or a negative tv_sec) gives that many
 * seconds' jiffies. O(1).
 */
static inline unsigned long timespec64_to_jiffies(const struct timespec64 *value)
{
	unsigned long long sec = (unsigned long long)value->tv_sec;
	long nsec = value->tv_nsec + TICK_NSEC - 1;

	if (sec >= (unsigned long long)TWHEEL__MAX_SEC_IN_JIFFIES) {
		sec = (unsigned long long)TWHEEL__MAX_SEC_IN_JIFFIES;
		nsec = 0;
	}
	return (unsigned long)(((sec * TWHEEL__SEC_CONVERSION) +
				(((unsigned long long)nsec * TWHEEL__NSEC_CONVERSION) >>
				 (TWHEEL__NSEC_JIFFIE_SC - TWHEEL__SEC_JIFFIE_SC))) >>
			       TWHEEL__SEC_JIFFIE_SC);
}
#endif

/* The time @j jiffies take, as the kernel's: j * TICK_NSEC nanoseconds,
 * split into seconds and nanoseconds. O(1). */
static inline void jiffies_to_timespec64(const unsigned long j, struct timespec64 *value)
{
	unsigned long long ns = (unsigned long long)j * TICK_NSEC;

	value->tv_sec = (time64_t)(ns / 1000000000u);
	value->tv_nsec = (long)(unsigned int)(ns % 1000000000u);
}

/*
 * The kernel's round_jiffies_common(): round the absolute @j to a whole
 * second, down if within a quarter second after one (unless @force_up),
 * else up; keep @j if the result is not in the future. "skewed for each
 * processor": @j + @cpu * 3 is rounded, and the skew taken off again.
 */
static inline unsigned long twheel__round_jiffies(unsigned long j, int cpu, bool force_up)
{
	unsigned long original = j;
	unsigned long rem;

	j += (unsigned long)cpu * 3;
	rem = j % HZ;
	if (rem < HZ / 4 && !force_up)
		j = j - rem;
	else
		j = j - rem + HZ;
	j -= (unsigned long)cpu * 3;
	return time_is_after_jiffies(j) ? j : original;
}

/* Round the absolute @j to about a whole second (see above), skewed for
 * @cpu. O(1). */
static inline unsigned long __round_jiffies(unsigned long j, int cpu)
{
	return twheel__round_jiffies(j, cpu, false);
}

/* Round the delay @j from now to about a whole second, skewed for @cpu. */
static inline unsigned long __round_jiffies_relative(unsigned long j, int cpu)
{
	unsigned long j0 = jiffies;

	return twheel__round_jiffies(j + j0, cpu, false) - j0;
}

/* As __round_jiffies(), never down (up by a second if whole already). */
static inline unsigned long __round_jiffies_up(unsigned long j, int cpu)
{
	return twheel__round_jiffies(j, cpu, true);
}

/* As __round_jiffies_relative(), never down. */
static inline unsigned long __round_jiffies_up_relative(unsigned long j, int cpu)
{
	unsigned long j0 = jiffies;

	return twheel__round_jiffies(j + j0, cpu, true) - j0;
}

/* Round the absolute @j to about a whole second: __round_jiffies() on
 * CPU 0 (one thread, no skew), as the kernel's on the calling CPU. */
static inline unsigned long round_jiffies(unsigned long j)
{
	return __round_jiffies(j, 0);
}

/* Round the delay @j from now to about a whole second (CPU 0). */
static inline unsigned long round_jiffies_relative(unsigned long j)
{
	return __round_jiffies_relative(j, 0);
}

/* As round_jiffies(), never down: never earlier than @j. */
static inline unsigned long round_jiffies_up(unsigned long j)
{
	return __round_jiffies_up(j, 0);
}

/* As round_jiffies_relative(), never down. */
static inline unsigned long round_jiffies_up_relative(unsigned long j)
{
	return __round_jiffies_up_relative(j, 0);
}

/* ---- struct timer_list ---------------------------------------------------- */

/* timer_setup() flags, with the kernel's values. */
#define TIMER_DEFERRABLE 0x00080000u
#define TIMER_PINNED 0x00100000u
#define TIMER_IRQSAFE 0x00200000u
#define TIMER_INIT_FLAGS (TIMER_DEFERRABLE | TIMER_PINNED | TIMER_IRQSAFE)

#ifdef TWHEEL_COMPAT_TIMER_DATA
/*
 * A kernel timer of Linux before 4.15 (TWHEEL_COMPAT_TIMER_DATA defined
 * before the include: see "Linux before 4.15" below). Public fields as in
 * that kernel: expires, function (called with data), data, flags. _ct and
 * _callback (timer_setup()'s function) are private. A zeroed struct is a
 * valid timer that is not pending.
 */
struct timer_list {
	struct twheel_compat_timer _ct;
	unsigned long expires;
	void (*function)(unsigned long data);
	unsigned long data;
	uint32_t flags;
	void (*_callback)(struct timer_list *timer);
};
#define TWHEEL__TIMER_CALL(t) ((t)->function((t)->data))
#else
/*
 * A kernel timer. Public fields as in the kernel: expires (absolute, in
 * jiffies), function (NULL after a shutdown), flags (TIMER_*). _ct is
 * private. A zeroed struct (static storage, DEFINE_TIMER) is a valid timer
 * that is not pending.
 */
struct timer_list {
	struct twheel_compat_timer _ct;
	unsigned long expires;
	void (*function)(struct timer_list *timer);
	uint32_t flags;
};
#define TWHEEL__TIMER_CALL(t) ((t)->function(t))
#endif

/*
 * One struct timer_list per program: a file built with
 * TWHEEL_COMPAT_TIMER_DATA and one built without it cannot share a timer
 * (the structs differ), so they do not link together. Each file that
 * includes this header defines this weak hidden symbol, thread-local in
 * the first kind and not in the second, and reads it: the linker (GNU
 * ld, gold, lld) refuses a symbol that is both, naming it, also with
 * GCC's -flto and clang's -flto=thin. Not with clang's full -flto, whose
 * IR linker merges the two weak definitions into one: there nothing
 * stops a mixed program. An executable
 * or a shared library is one kind or the other; two shared libraries of
 * different kinds may be loaded together, as each keeps its timers.
 */
#ifdef TWHEEL_COMPAT_TIMER_DATA
#define TWHEEL__TIMER_LIST_KIND __thread
#else
#define TWHEEL__TIMER_LIST_KIND
#endif
extern TWHEEL__TIMER_LIST_KIND char twheel__timer_list_TWHEEL_COMPAT_TIMER_DATA_in_some_files_only;
__attribute__((weak, visibility("hidden"))) TWHEEL__TIMER_LIST_KIND char
	twheel__timer_list_TWHEEL_COMPAT_TIMER_DATA_in_some_files_only;
__attribute__((used)) static char twheel__timer_list_kind(void)
{
	return twheel__timer_list_TWHEEL_COMPAT_TIMER_DATA_in_some_files_only;
}

/* The wheel's callback: the timer is not pending when function runs. */
static inline void twheel__timer_list_fire(struct tw_timer *tw)
{
	struct timer_list *t = tw_container_of(tw, struct timer_list, _ct.tw);
	const struct twheel_compat_timer *prev = twheel_compat_enter(&t->_ct);

	if (t->function)
		TWHEEL__TIMER_CALL(t);
	twheel_compat_leave(prev);
}

/* Initialise the wheel's part of @t once, lazily (DEFINE_TIMER). */
static inline void twheel__timer_list_ready(struct timer_list *t)
{
	if (!t->_ct.tw.func)
		tw_timer_init(&t->_ct.tw, twheel__timer_list_fire);
}

/* True if @t is armed and has not fired or been deleted. O(1). */
static inline int timer_pending(const struct timer_list *timer)
{
	return twheel_compat_pending(&timer->_ct);
}

enum { TWHEEL__MOD, TWHEEL__MOD_PENDING_ONLY, TWHEEL__MOD_REDUCE, TWHEEL__MOD_NOTPENDING };

/* The kernel's __mod_timer(): see mod_timer() and the others below. */
static inline int twheel__mod_timer(struct timer_list *t, unsigned long expires, int how)
{
	uint64_t now, when;
	long delta;
	int rc;

	if (!t->function)
		return 0; /* shut down (or never set): silently discarded */
	if (how != TWHEEL__MOD_NOTPENDING && timer_pending(t)) {
		long diff = (long)(t->expires - expires);

		/* nothing to change, if the timer is this thread's (the
		 * re-arm below asks twheel_compat_mod() that) */
		if (!diff || (how == TWHEEL__MOD_REDUCE && diff <= 0)) {
			rc = twheel_compat_owned(&t->_ct);
			return rc < 0 ? rc : 1;
		}
	} else if (how == TWHEEL__MOD_PENDING_ONLY) {
		return 0;
	}
	twheel__timer_list_ready(t);
	now = twheel_compat_now();
	delta = (long)(expires - (INITIAL_JIFFIES + (unsigned long)now));
	when = now + (delta > 0 ? (uint64_t)delta : 1); /* past: the next tick */
	rc = twheel_compat_mod(&t->_ct, when, (t->flags & TIMER_DEFERRABLE) ? TWHEEL_COMPAT_DEFERRABLE : 0);
	if (rc >= 0)
		t->expires = expires;
	return rc;
}

/*
 * Initialise @timer with @flags (TIMER_*; others are dropped, as the
 * kernel warns and masks them); the caller sets the function if this
 * returns 1. expires is left as it is, as the kernel leaves it (code may
 * fill it in before). As in the kernel, @timer must not be pending (its
 * memory may be anything else: a stack timer's garbage); a
 * -Ddebug_checks build reports a pending one (tw_timer_init()) and, if
 * the misuse handler returns, leaves it as it is and returns 0.
 */
static inline int twheel__init_timer(struct timer_list *timer, unsigned int flags)
{
	tw_timer_init(&timer->_ct.tw, twheel__timer_list_fire);
#if TWHEEL_DEBUG_CHECKS
	if (tw_timer_pending(&timer->_ct.tw))
		return 0; /* reported, and left alone */
#endif
	timer->_ct._wheel = TWHEEL__NULL;
	timer->flags = flags & TIMER_INIT_FLAGS;
	return 1;
}

#ifdef TWHEEL_COMPAT_TIMER_DATA
/* timer_setup()'s function, as the kernel of 4.14 set it up: called with
 * data = the timer, it calls the function timer_setup() was given. */
static inline void twheel__timer_setup_call(unsigned long data)
{
	struct timer_list *t = (struct timer_list *)data;

	t->_callback(t);
}
#endif

static inline void timer_setup(struct timer_list *timer, void (*func)(struct timer_list *),
			       unsigned int flags)
{
	if (!twheel__init_timer(timer, flags))
		return;
#ifdef TWHEEL_COMPAT_TIMER_DATA
	timer->_callback = func;
	timer->function = func ? twheel__timer_setup_call : TWHEEL__NULL;
	timer->data = (unsigned long)timer;
#else
	timer->function = func;
#endif
}

/*
 * The same for a timer on the stack, and its counterpart, also by its
 * later name timer_destroy_on_stack(), called before the timer's stack
 * frame ends. The timer must not be pending then: one still pending on
 * this thread's wheel is deleted, as the kernel's
 * CONFIG_DEBUG_OBJECTS_TIMERS deletes it ("ODEBUG: free active"), where
 * without it the wheel would keep a timer on a stack that is gone (one
 * pending on another thread's wheel cannot be: -EXDEV, see above). O(1).
 */
#define timer_setup_on_stack(timer, func, flags) timer_setup(timer, func, flags)
static inline void destroy_timer_on_stack(struct timer_list *timer)
{
	(void)twheel_compat_del(&timer->_ct);
}
static inline void timer_destroy_on_stack(struct timer_list *timer)
{
	destroy_timer_on_stack(timer);
}

#ifndef TWHEEL_COMPAT_TIMER_DATA
/* A timer of static storage with callback @_function and @_flags
 * (TIMER_*), as an initializer (inside a struct's, say); and one defined
 * as @_name. Ready without timer_setup(), as in the kernel. */
#define __TIMER_INITIALIZER(_function, _flags) { .function = (_function), .flags = (_flags) }
#define DEFINE_TIMER(_name, _function) struct timer_list _name = __TIMER_INITIALIZER(_function, 0)
/*
 * timer_setup() and timer_setup_on_stack() by the names they expand to
 * in the kernel (Linux 4.15 on), which other kernel headers call:
 * <linux/workqueue.h>'s INIT_DELAYED_WORK() and
 * INIT_DELAYED_WORK_ONSTACK() are __init_timer(&w->timer,
 * delayed_work_timer_fn, flags | TIMER_IRQSAFE). Statements, as there.
 * (Before 4.15, and here with TWHEEL_COMPAT_TIMER_DATA, __init_timer()
 * took the timer and flags only: see below.)
 */
#define __init_timer(_timer, _fn, _flags) timer_setup((_timer), (_fn), (_flags))
#define __init_timer_on_stack(_timer, _fn, _flags) timer_setup_on_stack((_timer), (_fn), (_flags))
#ifndef __cplusplus
/*
 * Linux before 4.15's initialisers (below) set up a function taking
 * unsigned long data, which this struct timer_list cannot call: each is
 * a compile-time error here that names the way on, rather than an
 * implicit declaration, a warning only in gnu89, that fails at link time.
 */
#define twheel__before_4_15_n(name)                                                               \
	(0 * sizeof(struct {                                                                       \
		_Static_assert(0, name "() is Linux before 4.15 (a function of unsigned long data): " \
				       "define TWHEEL_COMPAT_TIMER_DATA before the include, or call "  \
				       "timer_setup()");                                             \
		int twheel__x;                                                                     \
	}))
#define twheel__before_4_15(name) ((void)twheel__before_4_15_n(name))
#define init_timer(timer) twheel__before_4_15("init_timer")
#define init_timer_pinned(timer) twheel__before_4_15("init_timer_pinned")
#define init_timer_deferrable(timer) twheel__before_4_15("init_timer_deferrable")
#define init_timer_pinned_deferrable(timer) twheel__before_4_15("init_timer_pinned_deferrable")
#define init_timer_on_stack(timer) twheel__before_4_15("init_timer_on_stack")
#define init_timer_deferrable_on_stack(timer) twheel__before_4_15("init_timer_deferrable_on_stack")
#define __setup_timer(timer, fn, data, flags) twheel__before_4_15("__setup_timer")
#define __setup_timer_on_stack(timer, fn, data, flags) twheel__before_4_15("__setup_timer_on_stack")
#define setup_timer(timer, fn, data) twheel__before_4_15("setup_timer")
#define setup_pinned_timer(timer, fn, data) twheel__before_4_15("setup_pinned_timer")
#define setup_deferrable_timer(timer, fn, data) twheel__before_4_15("setup_deferrable_timer")
#define setup_pinned_deferrable_timer(timer, fn, data) twheel__before_4_15("setup_pinned_deferrable_timer")
#define setup_timer_on_stack(timer, fn, data) twheel__before_4_15("setup_timer_on_stack")
#define setup_pinned_timer_on_stack(timer, fn, data) twheel__before_4_15("setup_pinned_timer_on_stack")
#define setup_deferrable_timer_on_stack(timer, fn, data) twheel__before_4_15("setup_deferrable_timer_on_stack")
#define setup_pinned_deferrable_timer_on_stack(timer, fn, data) \
	twheel__before_4_15("setup_pinned_deferrable_timer_on_stack")
#define TIMER_INITIALIZER(_fn, _expires, _data) { .expires = twheel__before_4_15_n("TIMER_INITIALIZER") }
#define TIMER_PINNED_INITIALIZER(_fn, _expires, _data) \
	{ .expires = twheel__before_4_15_n("TIMER_PINNED_INITIALIZER") }
#define TIMER_DEFERRED_INITIALIZER(_fn, _expires, _data) \
	{ .expires = twheel__before_4_15_n("TIMER_DEFERRED_INITIALIZER") }
#endif
#else
/*
 * Linux before 4.15: a timer's function takes unsigned long data, the
 * timer's data field. Define TWHEEL_COMPAT_TIMER_DATA before the include
 * (or on the compiler's command line, as a Makefile's ccflags) for these
 * names and that struct timer_list; timer_setup() and from_timer() work
 * as well (timer_setup() sets function to a private one of the right type
 * and data to the timer, as 4.14 did with a cast). Not provided:
 * TIMER_FUNC_TYPE and TIMER_DATA_TYPE, whose cast made the kernel call a
 * function through a pointer of another type (undefined behaviour, which
 * -fsanitize=function and CFI catch): call timer_setup() instead.
 *
 * init_timer() and the other initialisers leave function, data and
 * expires as they are (code fills them in after); the flags are those of
 * timer_setup(). DEFINE_TIMER() and TIMER_INITIALIZER() take expires and
 * data as well. The function must be set before the timer is armed: an
 * arm with function NULL is discarded (as after timer_shutdown()).
 */
#define __init_timer(timer, flags) ((void)twheel__init_timer((timer), (flags)))
#define __init_timer_on_stack(timer, flags) __init_timer((timer), (flags))
#define init_timer(timer) __init_timer((timer), 0)
#define init_timer_pinned(timer) __init_timer((timer), TIMER_PINNED)
#define init_timer_deferrable(timer) __init_timer((timer), TIMER_DEFERRABLE)
#define init_timer_pinned_deferrable(timer) __init_timer((timer), TIMER_DEFERRABLE | TIMER_PINNED)
#define init_timer_on_stack(timer) __init_timer_on_stack((timer), 0)
#define init_timer_deferrable_on_stack(timer) __init_timer_on_stack((timer), TIMER_DEFERRABLE)
#define __setup_timer(_timer, _fn, _data, _flags)       \
	do {                                                         \
		if (twheel__init_timer((_timer), (_flags))) {        \
			(_timer)->function = (_fn);                  \
			(_timer)->data = (_data);                    \
		}                                                    \
	} while (0)
#define __setup_timer_on_stack(_timer, _fn, _data, _flags) __setup_timer(_timer, _fn, _data, _flags)
#define setup_timer(timer, fn, data) __setup_timer((timer), (fn), (data), 0)
#define setup_pinned_timer(timer, fn, data) __setup_timer((timer), (fn), (data), TIMER_PINNED)
#define setup_deferrable_timer(timer, fn, data) __setup_timer((timer), (fn), (data), TIMER_DEFERRABLE)
#define setup_pinned_deferrable_timer(timer, fn, data) \
	__setup_timer((timer), (fn), (data), TIMER_DEFERRABLE | TIMER_PINNED)
#define setup_timer_on_stack(timer, fn, data) __setup_timer_on_stack((timer), (fn), (data), 0)
#define setup_pinned_timer_on_stack(timer, fn, data) \
	__setup_timer_on_stack((timer), (fn), (data), TIMER_PINNED)
#define setup_deferrable_timer_on_stack(timer, fn, data) \
	__setup_timer_on_stack((timer), (fn), (data), TIMER_DEFERRABLE)
#define setup_pinned_deferrable_timer_on_stack(timer, fn, data) \
	__setup_timer_on_stack((timer), (fn), (data), TIMER_DEFERRABLE | TIMER_PINNED)
/* Static timers: function(data) at expires once add_timer() arms it. */
#define __TIMER_INITIALIZER(_function, _expires, _data, _flags) \
	{ .expires = (_expires), .function = (_function), .data = (_data), .flags = (_flags) }
#define TIMER_INITIALIZER(_function, _expires, _data) __TIMER_INITIALIZER((_function), (_expires), (_data), 0)
#define TIMER_PINNED_INITIALIZER(_function, _expires, _data) \
	__TIMER_INITIALIZER((_function), (_expires), (_data), TIMER_PINNED)
#define TIMER_DEFERRED_INITIALIZER(_function, _expires, _data) \
	__TIMER_INITIALIZER((_function), (_expires), (_data), TIMER_DEFERRABLE)
#define DEFINE_TIMER(_name, _function, _expires, _data) \
	struct timer_list _name = TIMER_INITIALIZER(_function, _expires, _data)
#endif

/* The struct embedding @callback_timer as its member @timer_fieldname. */
#define timer_container_of(var, callback_timer, timer_fieldname) \
	((__typeof__(var))(void *)((char *)(callback_timer) - offsetof(__typeof__(*var), timer_fieldname)))
#define from_timer(var, callback_timer, timer_fieldname) \
	timer_container_of(var, callback_timer, timer_fieldname)

/*
 * Arm @timer at @expires (absolute jiffies) whether or not it is pending.
 * Returns 0 if it was inactive and started (or shut down: discarded), 1 if
 * it was active and requeued, or not modified because @expires equals its
 * expiry; -ENXIO, -EXDEV as above. O(1).
 */
static inline int mod_timer(struct timer_list *timer, unsigned long expires)
{
	return twheel__mod_timer(timer, expires, TWHEEL__MOD);
}

/* mod_timer() for a pending timer only: 0 if inactive (not started), 1. */
static inline int mod_timer_pending(struct timer_list *timer, unsigned long expires)
{
	return twheel__mod_timer(timer, expires, TWHEEL__MOD_PENDING_ONLY);
}

/* mod_timer() that only ever moves a pending timer earlier. */
static inline int timer_reduce(struct timer_list *timer, unsigned long expires)
{
	return twheel__mod_timer(timer, expires, TWHEEL__MOD_REDUCE);
}

/*
 * Start @timer at timer->expires. An active timer is left as it is (the
 * kernel rejects it with a warning), a shut-down one is discarded. O(1).
 */
static inline void add_timer(struct timer_list *timer)
{
	if (timer_pending(timer))
		return;
	(void)twheel__mod_timer(timer, timer->expires, TWHEEL__MOD_NOTPENDING);
}

/*
 * add_timer() that also sets TIMER_PINNED in flags (an active timer is
 * left as it is, flags included), as the kernel's (since Linux 6.9); the
 * flag changes nothing here. O(1).
 */
static inline void add_timer_local(struct timer_list *timer)
{
	if (timer_pending(timer))
		return;
	timer->flags |= TIMER_PINNED;
	add_timer(timer);
}

/* add_timer_local() that clears TIMER_PINNED instead. O(1). */
static inline void add_timer_global(struct timer_list *timer)
{
	if (timer_pending(timer))
		return;
	timer->flags &= ~TIMER_PINNED;
	add_timer(timer);
}

/* add_timer_local(); @cpu is ignored (the timer stays on this thread). */
static inline void add_timer_on(struct timer_list *timer, int cpu)
{
	(void)cpu;
	add_timer_local(timer);
}

/*
 * Deactivate @timer: 1 if it was pending, 0 if not; -EXDEV. O(1).
 * timer_delete() is a macro for it: POSIX's timer_delete(timer_t) of
 * <time.h>, which this header includes first, has the same name.
 */
static inline int twheel_timer_delete(struct timer_list *timer)
{
	return twheel_compat_del(&timer->_ct);
}
#define timer_delete(timer) twheel_timer_delete(timer)

/*
 * timer_delete(), and "upon exit the timer is not queued and the handler
 * is not running": true at once with one thread per wheel, except from the
 * timer's own callback, which is running (see above).
 */
static inline int timer_delete_sync(struct timer_list *timer)
{
	return timer_delete(timer);
}

/*
 * timer_delete(), or -1 from the timer's own callback: it is running, and
 * (as in the kernel) the timer is left as it is, a re-arm made there
 * included.
 */
static inline int try_to_del_timer_sync(struct timer_list *timer)
{
	if (twheel_compat_running(&timer->_ct))
		return -1;
	return timer_delete(timer);
}

/*
 * Deactivate @timer and prevent rearming (function = NULL): any later arm
 * is silently ignored until timer_setup(). 1 if it was pending, 0 if not;
 * -EXDEV (nothing done). O(1).
 */
static inline int timer_shutdown(struct timer_list *timer)
{
	int rc = timer_delete(timer);

	if (rc >= 0)
		timer->function = TWHEEL__NULL;
	return rc;
}

/* timer_shutdown(); nothing to wait for (see the _sync variants above). */
static inline int timer_shutdown_sync(struct timer_list *timer)
{
	return timer_shutdown(timer);
}

/*
 * The names before Linux 6.2 (del_timer) and 6.16 (from_timer, above).
 * Functions, as the kernel's (and timer_destroy_on_stack() above,
 * timer_delete_sync_try() below), not function-like macros: kernel code
 * names other things after them, as <linux/usb/otg-fsm.h>'s operations
 * table, called as fsm->ops->del_timer(fsm, timer). (timer_delete()
 * stays a macro: see above.)
 */
static inline int del_timer(struct timer_list *timer)
{
	return timer_delete(timer);
}

static inline int del_timer_sync(struct timer_list *timer)
{
	return timer_delete_sync(timer);
}

/* try_to_del_timer_sync()'s later name. */
static inline int timer_delete_sync_try(struct timer_list *timer)
{
	return try_to_del_timer_sync(timer);
}

/* Linux before 6.2: del_timer_sync() for a one-shot timer. */
#define del_singleshot_timer_sync(timer) del_timer_sync(timer)

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_COMPAT_TIMER_LIST_H */
