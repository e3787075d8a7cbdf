/* SPDX-License-Identifier: MIT */
/*
 * check.h - the checks of the tests that do not use cmocka's asserts: the
 * programs with a main() of their own (the demo's tests, the compat
 * conversions, the C++ server test) and the threads of the loop's stress
 * tests (cmocka's asserts may be called from the test's thread only).
 * Header-only, C11 and C++17.
 *
 *   CHECK(cond, fmt, ...)    if @cond is false: count a failure and print
 *                            one line, then go on (the test checks the
 *                            rest and gives its verdict at its end)
 *   REQUIRE(cond, fmt, ...)  if @cond is false: print the same line, then
 *                            abort() (where going on would hang or crash:
 *                            a thread waiting for what did not happen)
 *
 * The line, on stdout, written whole and flushed (so that it is seen
 * before a later crash or abort, and in one piece when threads fail at
 * once):
 *
 *   FAIL file.c:123: cond: message
 *
 * file and line are the CHECK's, cond is @cond as written, and message is
 * printf(@fmt, ...) (@fmt without a trailing newline). Each @cond is
 * evaluated once.
 *
 * check_failures counts the failed CHECKs, check_passes the others; both
 * are updated atomically, so that any thread may check. A test reads them
 * at its end (__atomic_load_n() where threads checked) for its verdict:
 * its exit status (1 on a failure, in the programs of their own) or a
 * cmocka assert that none failed. Each file that includes this header has
 * counts of its own (a test is one file).
 */
#ifndef TWHEEL_TESTS_CHECK_H
#define TWHEEL_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures __attribute__((unused));
static int check_passes __attribute__((unused));

__attribute__((format(printf, 4, 5))) static inline void check_say(const char *file, int line, const char *cond,
								    const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	printf("FAIL %s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	funlockfile(stdout);
}

#define CHECK(cond, ...)                                                                  \
	do {                                                                              \
		if (cond) {                                                               \
			__atomic_fetch_add(&check_passes, 1, __ATOMIC_RELAXED);           \
		} else {                                                                  \
			__atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);         \
			check_say(__FILE__, __LINE__, #cond, __VA_ARGS__);                \
		}                                                                         \
	} while (0)

#define REQUIRE(cond, ...)                                                                \
	do {                                                                              \
		if (!(cond)) {                                                            \
			check_say(__FILE__, __LINE__, #cond, __VA_ARGS__);                \
			abort();                                                          \
		}                                                                         \
	} while (0)

#endif
