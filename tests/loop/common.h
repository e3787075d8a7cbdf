/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the loop tests: an injectable clock and the io_uring
 * availability check (exit 77, meson's "skip", where the kernel refuses).
 */
#ifndef TWHEEL_TESTS_LOOP_COMMON_H
#define TWHEEL_TESTS_LOOP_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <liburing.h>
#include <twheel/loop.h>

#include "../common/splitmix64.h" /* the stress tests' random numbers */

#define MS 1000000ull
#define US 1000ull

/* A clock the test moves by hand. Read from any thread, so atomic. */
struct fake_clock {
	uint64_t ns;
};

static inline uint64_t fake_clock_read(void *arg)
{
	struct fake_clock *c = arg;

	return __atomic_load_n(&c->ns, __ATOMIC_ACQUIRE);
}

static inline void fake_clock_set(struct fake_clock *c, uint64_t ns)
{
	__atomic_store_n(&c->ns, ns, __ATOMIC_RELEASE);
}

static inline void fake_clock_add(struct fake_clock *c, uint64_t ns)
{
	__atomic_fetch_add(&c->ns, ns, __ATOMIC_ACQ_REL);
}

static inline uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Config flags every test loop gets: TW_LOOP_NO_URING when the environment
 * asks for fallback mode (TWHEEL_TEST_FALLBACK=1; meson runs the suites that do
 * not need io_uring both ways). */
static inline unsigned test_loop_flags(void)
{
	const char *e = getenv("TWHEEL_TEST_FALLBACK");

	return e && *e == '1' ? TW_LOOP_NO_URING : 0;
}

/* Exit 77 (skip) when the kernel refuses io_uring here (for the tests of
 * I/O); fail on other errors. */
static inline void require_uring(void)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	char msg[256];
	int ret;

	twheel_loop_config_init(&cfg);
	cfg.flags = TW_LOOP_URING_ONLY;
	ret = twheel_loop_create(&l, &cfg, msg, sizeof(msg));
	if (ret == -ENOSYS || ret == -EPERM || ret == -EOPNOTSUPP) {
		printf("SKIP: io_uring unavailable: %s\n", msg);
		exit(77);
	}
	if (ret) {
		fprintf(stderr, "twheel_loop_create: %d: %s\n", ret, msg);
		exit(1);
	}
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* A loop on a fake clock with a 1 ms tick, starting at @start ns. */
static inline struct twheel_loop *fake_loop(struct fake_clock *c, uint64_t start,
					    struct twheel_loop_config *cfg_in)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l = NULL;
	char msg[256];

	if (cfg_in)
		cfg = *cfg_in;
	else
		twheel_loop_config_init(&cfg);
	fake_clock_set(c, start);
	cfg.flags |= test_loop_flags();
	cfg.clock = fake_clock_read;
	cfg.clock_arg = c;
	if (twheel_loop_create(&l, &cfg, msg, sizeof(msg))) {
		fprintf(stderr, "twheel_loop_create: %s\n", msg);
		abort();
	}
	return l;
}

#endif
