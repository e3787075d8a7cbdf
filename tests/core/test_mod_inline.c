/* SPDX-License-Identifier: MIT */
/*
 * test_mod_inline - twheel.h's inline re-arm against the library's
 * twheel_mod(): two wheels fed the same random operations, one re-armed
 * through twheel_mod(...) (the inline fast path in a release build), the
 * other through (twheel_mod)(...) (the library's function), must return
 * the same values, fire the same timers at the same expiries in the same
 * order, keep the same statistics and pass twheel_check() throughout.
 * Re-arms come from outside and from callbacks (where the running
 * advance's target decides), to expiries the same, later, earlier, in the
 * past and near TW_TICK_MAX. Also: the inline path's NULL checks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/twheel.h>

#include "../common/splitmix64.h"

#if !TWHEEL_DEBUG_CHECKS && !defined(twheel_mod)
#error "a release build must re-arm inline: this test would compare the function with itself"
#endif

#define NT 512
#define MAXFIRES 4096

struct side {
	struct twheel *w;
	bool inline_mod;
	struct tw_timer t[NT];
	uint32_t fires[MAXFIRES]; /* timer index, in firing order */
	tw_tick_t fire_exp[MAXFIRES];
	size_t nfires;
	int cb_rc[MAXFIRES]; /* what the callbacks' re-arms returned */
};

static struct side A, B;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t cb_seed; /* the same choices in both wheels' callbacks */

static int mod(struct side *s, struct tw_timer *t, tw_tick_t e)
{
	return s->inline_mod ? twheel_mod(s->w, t, e) : (twheel_mod)(s->w, t, e);
}

/*
 * An expiry around @now: the same, later, earlier, past, far, near the end
 * of time, or at the wheel's target (from a callback: the running advance's
 * target, the edge between firing in it and in the next one).
 */
static tw_tick_t pick_expiry(uint64_t *s, const struct twheel *w, tw_tick_t cur)
{
	tw_tick_t now = twheel_now(w), target = twheel_target(w);

	switch (splitmix64(s) % 10) {
	case 8: return target + splitmix64(s) % 3 - 1;
	case 9: return target;
	case 0: return cur;
	case 1: return cur + 1 + splitmix64(s) % 64;
	case 2: return cur > 100 ? cur - splitmix64(s) % 100 : cur;
	case 3: return now - (now ? splitmix64(s) % (now < 50 ? now : 50) : 0);
	case 4: return now + splitmix64(s) % 300;
	case 5: return now + splitmix64(s) % 100000;
	case 6: return TW_TICK_MAX - splitmix64(s) % 1000;
	default: return now + (splitmix64(s) % 40) * 1000 + 1;
	}
}

static struct side *side_of(const struct tw_timer *t)
{
	return t >= A.t && t < A.t + NT ? &A : &B;
}

/* Each fire is recorded; one in four re-arms itself or another timer. */
static void on_fire(struct tw_timer *t)
{
	struct side *s = side_of(t);
	size_t k = s->nfires++;
	assert_true(k < MAXFIRES);
	s->fires[k] = (uint32_t)(t - s->t);
	s->fire_exp[k] = t->expires;
	s->cb_rc[k] = 0;
	/* the same seed for the k-th fire of either wheel */
	uint64_t seed = cb_seed + k;
	if (splitmix64(&seed) % 4 == 0) {
		struct tw_timer *o = &s->t[splitmix64(&seed) % NT];
		s->cb_rc[k] = mod(s, o, pick_expiry(&seed, s->w, o->expires));
	}
}

static void assert_same(void)
{
	struct twheel_stats sa, sb;
	char msg[200];

	assert_int_equal(twheel_get_stats(A.w, &sa), 0);
	assert_int_equal(twheel_get_stats(B.w, &sb), 0);
	assert_memory_equal(&sa, &sb, sizeof(sa));
	assert_int_equal(twheel_count(A.w), twheel_count(B.w));
	assert_int_equal(twheel_next_expiry(A.w), twheel_next_expiry(B.w));
	assert_int_equal(A.nfires, B.nfires);
	assert_memory_equal(A.fires, B.fires, A.nfires * sizeof(A.fires[0]));
	assert_memory_equal(A.fire_exp, B.fire_exp, A.nfires * sizeof(A.fire_exp[0]));
	assert_memory_equal(A.cb_rc, B.cb_rc, A.nfires * sizeof(A.cb_rc[0]));
	for (size_t i = 0; i < NT; i++)
		assert_int_equal(tw_timer_pending(&A.t[i]), tw_timer_pending(&B.t[i]));
	if (twheel_check(A.w, msg, sizeof(msg)) || twheel_check(B.w, msg, sizeof(msg)))
		fail_msg("twheel_check: %s", msg);
}

static void setup_sides(tw_tick_t start)
{
	struct side *s[2] = { &A, &B };
	for (int k = 0; k < 2; k++) {
		memset(s[k], 0, sizeof(*s[k]));
		s[k]->inline_mod = k == 0;
		s[k]->w = twheel_create(start);
		assert_non_null(s[k]->w);
		for (size_t i = 0; i < NT; i++)
			tw_timer_init(&s[k]->t[i], on_fire);
	}
}

/* One random operation on both wheels; the fire logs restart when full. */
static void step(tw_tick_t *now)
{
	uint64_t r = splitmix64(&rng), s = splitmix64(&rng);
	size_t i = r % NT;
	tw_tick_t e = pick_expiry(&s, A.w, A.t[i].expires);

	switch ((r >> 32) % 8) {
	case 0:
		assert_int_equal(twheel_del(A.w, &A.t[i]), twheel_del(B.w, &B.t[i]));
		return;
	case 1: {
		tw_tick_t step = splitmix64(&rng) % 2000;
		tw_tick_t to = *now + (step < TW_TICK_MAX - *now ? step : 0);
		if (A.nfires > MAXFIRES / 2)
			A.nfires = B.nfires = 0;
		cb_seed = splitmix64(&rng);
		assert_int_equal(twheel_advance(A.w, to), twheel_advance(B.w, to));
		*now = to;
		return;
	}
	default:
		assert_int_equal(mod(&A, &A.t[i], e), mod(&B, &B.t[i], e));
	}
}

static void run(tw_tick_t start, int ops)
{
	tw_tick_t now = start;
	setup_sides(start);
	for (int k = 0; k < ops; k++) {
		step(&now);
		if (k % 64 == 0)
			assert_same();
	}
	assert_same();
	for (size_t i = 0; i < NT; i++) {
		twheel_del(A.w, &A.t[i]);
		twheel_del(B.w, &B.t[i]);
	}
	twheel_destroy(A.w);
	twheel_destroy(B.w);
}

static void test_inline_matches_library(void **state)
{
	(void)state;
	run(0, 200000);
	run(1000000007, 200000);
	run(TW_TICK_MAX - 5000000, 200000); /* the end of time */
}

static void test_inline_null_arguments(void **state)
{
	(void)state;
	struct tw_timer t;
	struct twheel *w = twheel_create(0);
	assert_non_null(w);
	tw_timer_init(&t, on_fire);
	assert_int_equal(twheel_mod(NULL, &t, 5), -EINVAL);
	assert_int_equal(twheel_mod(w, NULL, 5), -EINVAL);
	tw_timer_init(&t, NULL);
	assert_int_equal(twheel_mod(w, &t, 5), -EINVAL); /* no callback, not pending */
	twheel_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_matches_library),
		cmocka_unit_test(test_inline_null_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
