/*
 * test_lazy_rearm - the "re-armed later, moved at its slot's cascade" rule
 * of twheel_mod() (lazily placed timers), driven adversarially: lazily
 * placed timers at the top levels (expiries up to TW_TICK_MAX, wheels
 * starting near 2^64), re-arms from callbacks (a timer armed from a
 * callback fires in a later advance), del / move / drain of lazily placed
 * timers, next_expiry() after lazy re-arms, inspect(), the stats counters,
 * re-arm later then earlier again, and a randomised stress of all of these
 * against a brute-force model, with twheel_check() after every operation.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <twheel/twheel.h>

#include "../common/splitmix64.h"

/* ---- fixture ---------------------------------------------------------------- */

struct rt {
	struct tw_timer t;
	int id;
	int fired;
	tw_tick_t fired_target; /* the advance target when it fired */
	tw_tick_t fired_exp;
	void (*action)(struct rt *r);
	struct rt *other;
	tw_tick_t arg;
};

static struct twheel *W;
static tw_tick_t target;
static int nfired;
static tw_tick_t last_exp;

static void on_fire(struct tw_timer *t)
{
	struct rt *r = tw_container_of(t, struct rt, t);
	assert_false(tw_timer_pending(t));
	assert_true(t->expires <= target);
	assert_true(t->expires >= last_exp); /* nondecreasing within an advance */
	last_exp = t->expires;
	r->fired++;
	r->fired_target = target;
	r->fired_exp = t->expires;
	nfired++;
	if (r->action)
		r->action(r);
}

static void rinit(struct rt *r, int id)
{
	memset(r, 0, sizeof(*r));
	tw_timer_init(&r->t, on_fire);
	r->id = id;
}

static void check_ok(void)
{
	char msg[256];
	int rc = twheel_check(W, msg, sizeof(msg));
	if (rc)
		fail_msg("twheel_check: %s", msg);
}

static long adv(tw_tick_t now)
{
	target = now;
	last_exp = 0;
	long n = twheel_advance(W, now);
	check_ok();
	return n;
}

static void fresh(tw_tick_t now)
{
	twheel_destroy(W);
	W = twheel_create(now);
	assert_non_null(W);
	nfired = 0;
}

static int teardown(void **state)
{
	(void)state;
	twheel_destroy(W);
	W = NULL;
	return 0;
}

/*
 * Chase @r with next_expiry(): every step is after now and at or before
 * @e, it fires exactly on @e, within @max_steps advances.
 */
static void chase(struct rt *r, tw_tick_t e, int max_steps)
{
	int steps = 0;
	while (!r->fired) {
		tw_tick_t n = twheel_next_expiry(W);
		if (n <= twheel_now(W) || n > e)
			fail_msg("next_expiry %llu, now %llu, earliest %llu", (unsigned long long)n,
				 (unsigned long long)twheel_now(W), (unsigned long long)e);
		assert_true(adv(n) >= 0);
		if (++steps > max_steps)
			fail_msg("not fired in %d steps (now %llu, expiry %llu)", max_steps,
				 (unsigned long long)twheel_now(W), (unsigned long long)e);
	}
	assert_int_equal(r->fired, 1);
	assert_int_equal(r->fired_exp, e);
	assert_int_equal(twheel_now(W), e);
}

/* ---- lazily placed timers at the top levels --------------------------------- */

/*
 * Timers placed on levels 8, 9 and 10 (from wheels at 0 and near the end of
 * time), re-armed later (to TW_TICK_MAX among others), then chased: each
 * fires exactly on its final expiry, never a tick early, and the wheel's
 * invariants hold at every step.
 */
static void lazy_rearm_at_top_levels_is_exact(void **state)
{
	(void)state;
	const tw_tick_t T = TW_TICK_MAX;
	static const struct {
		tw_tick_t start, first, later[3];
	} cases[] = {
		{ 0, UINT64_C(1) << 62, { T, 0, 0 } },                        /* level 9 -> end */
		{ 0, (UINT64_C(1) << 62) + 5, { (UINT64_C(3) << 62) + 1, T - 1, 0 } }, /* level 10 */
		{ 0, UINT64_C(1) << 56, { UINT64_C(1) << 63, T, 0 } },
		{ 0, (UINT64_C(1) << 50) + 3, { (UINT64_C(1) << 57) + 7, (UINT64_C(1) << 63) + 9, 0 } },
		{ (UINT64_C(1) << 62) - 1, UINT64_C(1) << 63, { T, 0, 0 } },
		{ T - (UINT64_C(1) << 40), T - (UINT64_C(1) << 39), { T - 1, T, 0 } },
		{ T - 1000, T - 700, { T - 1, T, 0 } },
		{ (UINT64_C(3) << 62) - 17, (UINT64_C(3) << 62) + 300, { T - 300, T, 0 } },
		/* later, then earlier again (still above the slot's cascade) */
		{ 0, (UINT64_C(1) << 62) + 5, { T, (UINT64_C(3) << 62), 0 } },
		{ 0, UINT64_C(1) << 56, { T - 3, (UINT64_C(1) << 56) + 1, 0 } },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct rt a, b;
		fresh(cases[c].start);
		rinit(&a, 1);
		rinit(&b, 2);
		assert_int_equal(twheel_add(W, &a.t, cases[c].first), 0);
		/* a companion at the first expiry: it must not be disturbed */
		assert_int_equal(twheel_add(W, &b.t, cases[c].first), 0);
		tw_tick_t e = cases[c].first;
		int lazies = 0;
		for (int i = 0; i < 3 && cases[c].later[i]; i++) {
			assert_int_equal(twheel_mod(W, &a.t, cases[c].later[i]), 1);
			lazies += cases[c].later[i] > e;
			e = cases[c].later[i];
			check_ok();
			assert_true(twheel_next_expiry(W) <= cases[c].first);
			assert_true(twheel_next_expiry(W) > twheel_now(W));
		}
		assert_int_equal(twheel_count(W), 2);
		chase(&b, cases[c].first, TWHEEL_LEVELS + 1 + lazies);
		assert_int_equal(a.fired, e == cases[c].first);
		if (e > cases[c].first) {
			/* one tick before: nothing; then exactly on it */
			if (e - 1 > twheel_now(W))
				assert_int_equal(adv(e - 1), 0);
			assert_int_equal(a.fired, 0);
			assert_int_equal(adv(e), 1);
		}
		assert_int_equal(a.fired, 1);
		assert_int_equal(a.fired_exp, e);
		assert_int_equal(twheel_count(W), 0);
		assert_int_equal(twheel_next_expiry(W), TW_TICK_MAX);
	}
}

/* The same, chasing the re-armed timer itself with next_expiry(). */
static void lazy_rearm_chase_to_the_end_of_time(void **state)
{
	(void)state;
	static const tw_tick_t firsts[] = { 300, 20000, UINT64_C(1) << 33, UINT64_C(1) << 50,
					    (UINT64_C(1) << 56) + 1, (UINT64_C(1) << 62) + 1,
					    (UINT64_C(1) << 63) + 1 };
	static const tw_tick_t finals[] = { TW_TICK_MAX, TW_TICK_MAX - 1, (UINT64_C(1) << 63) + 2,
					    UINT64_C(3) << 62, (UINT64_C(1) << 63) - 1 };
	for (size_t i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++)
		for (size_t j = 0; j < sizeof(finals) / sizeof(finals[0]); j++) {
			if (finals[j] <= firsts[i])
				continue;
			struct rt a;
			fresh(0);
			rinit(&a, 1);
			assert_int_equal(twheel_add(W, &a.t, firsts[i]), 0);
			struct twheel_stats s0, s1;
			twheel_get_stats(W, &s0);
			assert_int_equal(twheel_mod(W, &a.t, finals[j]), 1);
			twheel_get_stats(W, &s1);
			assert_int_equal(s1.mods - s0.mods, 1);
			check_ok();
			chase(&a, finals[j], TWHEEL_LEVELS + 2);
		}
}

/* ---- callbacks ---------------------------------------------------------------- */

static void act_mod_other(struct rt *r)
{
	assert_int_equal(twheel_mod(W, &r->other->t, r->arg), 1);
}

/*
 * A callback re-arms a timer that waits in a level >= 1 slot whose cascade
 * lies within the current advance: to a later expiry at or before the
 * advance's target, it must not fire in this advance (it was armed from a
 * callback); to one after the target, it fires exactly there.
 */
static void lazy_rearm_from_callback_waits_for_a_later_advance(void **state)
{
	(void)state;
	for (int beyond = 0; beyond < 2; beyond++) {
		struct rt a, b;
		fresh(0);
		rinit(&a, 1);
		rinit(&b, 2);
		/* b on level 1: slot of 300, cascade at 256 */
		assert_int_equal(twheel_add(W, &b.t, 300), 0);
		assert_int_equal(twheel_add(W, &a.t, 100), 0);
		a.action = act_mod_other;
		a.other = &b;
		a.arg = beyond ? 5001 : 400; /* later than 300; the advance goes to 5000 */
		assert_int_equal(adv(5000), 1);
		assert_int_equal(a.fired, 1);
		assert_int_equal(b.fired, 0);
		assert_true(tw_timer_pending(&b.t));
		if (!beyond) {
			/* due now: next_expiry says so, the next advance runs it */
			assert_true(twheel_next_expiry(W) <= 5000);
			assert_int_equal(adv(5000), 1);
			assert_int_equal(b.fired_exp, 400);
		} else {
			assert_int_equal(twheel_next_expiry(W), 5001);
			assert_int_equal(adv(5001), 1);
			assert_int_equal(b.fired_exp, 5001);
		}
		assert_int_equal(b.fired, 1);
	}
}

/* A callback re-arms a lazily placed timer earlier again, into the past of the advance. */
static void lazy_then_earlier_from_callback(void **state)
{
	(void)state;
	struct rt a, b;
	fresh(0);
	rinit(&a, 1);
	rinit(&b, 2);
	assert_int_equal(twheel_add(W, &b.t, 20000), 0);       /* level 2, cascade 16384 */
	assert_int_equal(twheel_mod(W, &b.t, 1000000), 1);     /* lazy */
	assert_int_equal(twheel_add(W, &a.t, 17000), 0);
	a.action = act_mod_other;
	a.other = &b;
	a.arg = 16999; /* before a's own expiry: due, but only in a later advance */
	assert_int_equal(adv(30000), 1);
	assert_int_equal(b.fired, 0);
	assert_true(twheel_next_expiry(W) <= 30000);
	assert_int_equal(adv(30000), 1);
	assert_int_equal(b.fired_exp, 16999);
}

/* ---- del / move / drain of lazily placed timers ----------------------------------- */

static void lazy_del_never_fires_and_empties(void **state)
{
	(void)state;
	struct rt a;
	fresh(0);
	rinit(&a, 1);
	assert_int_equal(twheel_add(W, &a.t, 5000), 0);
	assert_int_equal(twheel_mod(W, &a.t, UINT64_C(1) << 40), 1);
	assert_int_equal(twheel_del(W, &a.t), 1);
	assert_false(tw_timer_pending(&a.t));
	assert_int_equal(twheel_count(W), 0);
	assert_int_equal(twheel_next_expiry(W), TW_TICK_MAX);
	check_ok();
	struct twheel_level_info li[TWHEEL_LEVELS];
	size_t due = 99;
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	for (int l = 0; l < TWHEEL_LEVELS; l++) {
		assert_int_equal(li[l].timers, 0);
		assert_int_equal(li[l].slots_used, 0);
		assert_int_equal(li[l].next, TW_TICK_MAX);
	}
	assert_int_equal(due, 0);
	assert_int_equal(adv(UINT64_C(1) << 41), 0);
	assert_int_equal(a.fired, 0);
	/* re-add after delete: normal again */
	assert_int_equal(twheel_add(W, &a.t, (UINT64_C(1) << 41) + 1), 0);
	assert_int_equal(adv((UINT64_C(1) << 41) + 1), 1);
}

static void lazy_move_fires_once_as_dst(void **state)
{
	(void)state;
	struct rt a, b, c;
	fresh(0);
	rinit(&a, 1);
	rinit(&b, 2);
	rinit(&c, 3);
	assert_int_equal(twheel_add(W, &a.t, 5000), 0);
	assert_int_equal(twheel_add(W, &c.t, 5001), 0); /* a neighbour in the slot */
	assert_int_equal(twheel_mod(W, &a.t, 70000), 1);
	assert_int_equal(twheel_move(W, &b.t, &a.t), 1);
	assert_false(tw_timer_pending(&a.t));
	assert_true(tw_timer_pending(&b.t));
	assert_int_equal(tw_timer_expires(&b.t), 70000);
	check_ok();
	assert_int_equal(adv(69999), 1); /* c only */
	assert_int_equal(c.fired, 1);
	assert_int_equal(b.fired, 0);
	assert_int_equal(adv(70000), 1);
	assert_int_equal(b.fired, 1);
	assert_int_equal(a.fired, 0);
	assert_int_equal(b.fired_exp, 70000);
}

static int drained[4];
static void on_drain(struct tw_timer *t, void *arg)
{
	(void)arg;
	assert_false(tw_timer_pending(t));
	drained[tw_container_of(t, struct rt, t)->id]++;
}

static void lazy_drain_hands_back_once(void **state)
{
	(void)state;
	struct rt a, b, c;
	fresh(0);
	rinit(&a, 1);
	rinit(&b, 2);
	rinit(&c, 3);
	memset(drained, 0, sizeof(drained));
	assert_int_equal(twheel_add(W, &a.t, 5000), 0);
	assert_int_equal(twheel_add(W, &b.t, 5000), 0);
	assert_int_equal(twheel_add(W, &c.t, UINT64_C(1) << 62), 0);
	assert_int_equal(twheel_mod(W, &a.t, 1 << 20), 1);
	assert_int_equal(twheel_mod(W, &c.t, TW_TICK_MAX), 1);
	assert_int_equal(adv(4999), 0); /* cascade of a's slot at 4864: a moves */
	twheel_drain(W, on_drain, NULL);
	assert_int_equal(drained[1], 1);
	assert_int_equal(drained[2], 1);
	assert_int_equal(drained[3], 1);
	assert_int_equal(twheel_count(W), 0);
	check_ok();
	assert_int_equal(adv(TW_TICK_MAX), 0);
}

/* ---- next_expiry, inspect, stats --------------------------------------------------- */

static void lazy_inspect_and_stats_are_exact(void **state)
{
	(void)state;
	struct rt a;
	struct twheel_stats st;
	struct twheel_level_info li[TWHEEL_LEVELS];
	size_t due;
	fresh(0);
	rinit(&a, 1);
	assert_int_equal(twheel_add(W, &a.t, 300), 0); /* level 1, slot 1, cascade 256 */
	assert_int_equal(twheel_mod(W, &a.t, 1000), 1); /* lazy: stays */
	assert_int_equal(twheel_get_stats(W, &st), 0);
	assert_int_equal(st.adds, 1);
	assert_int_equal(st.mods, 1);
	assert_int_equal(st.mods_fast, 1);
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	assert_int_equal(li[1].timers, 1);
	assert_int_equal(li[1].slots_used, 1);
	assert_int_equal(li[1].next, 256);
	assert_int_equal(twheel_next_expiry(W), 256);
	/* the cascade at 256 moves it to level 1 slot 3 (cascade 768) */
	assert_int_equal(adv(256), 0);
	assert_int_equal(twheel_get_stats(W, &st), 0);
	assert_int_equal(st.cascades, 1);
	assert_int_equal(st.cascaded, 1);
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	assert_int_equal(li[1].timers, 1);
	assert_int_equal(li[1].next, 768);
	assert_int_equal(li[0].timers, 0);
	assert_int_equal(twheel_next_expiry(W), 768);
	assert_int_equal(adv(768), 0);
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	assert_int_equal(li[0].timers, 1);
	assert_int_equal(li[0].next, 1000);
	assert_int_equal(li[1].timers, 0);
	assert_int_equal(twheel_next_expiry(W), 1000);
	assert_int_equal(adv(1000), 1);
	assert_int_equal(twheel_get_stats(W, &st), 0);
	assert_int_equal(st.cascades, 2);
	assert_int_equal(st.cascaded, 2);
	assert_int_equal(st.fires, 1);
	assert_int_equal(st.mods, 1);
	assert_int_equal(st.mods_fast, 1);

	/* re-arm later then earlier into another slot: one fast, one moving */
	assert_int_equal(twheel_add(W, &a.t, 5000), 0);
	assert_int_equal(twheel_mod(W, &a.t, 9000), 1);
	assert_int_equal(twheel_mod(W, &a.t, 4000), 1);
	assert_int_equal(twheel_get_stats(W, &st), 0);
	assert_int_equal(st.mods, 3);
	assert_int_equal(st.mods_fast, 2);
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	assert_int_equal(li[1].next, 3840); /* 4000 & ~255 */
	assert_int_equal(twheel_next_expiry(W), 3840);
	assert_int_equal(adv(3999), 0);
	assert_int_equal(adv(4000), 1);
	assert_int_equal(a.fired_exp, 4000);
}

/*
 * Re-arm later, then earlier again within the stored expiry's span: the
 * fast path compares with the stored expiry, not the slot the timer sits
 * in; it must still fire exactly.
 */
static void later_then_earlier_in_stored_span(void **state)
{
	(void)state;
	static const tw_tick_t seq[][3] = {
		{ 300, 20000, 19999 },        /* level 1 slot 1; 20000's level-1 span */
		{ 300, 20000, 19968 },        /* 20000 & ~255 */
		{ 5000, 1 << 20, (1 << 20) - (1 << 14) + 1 },
		{ 20000, 70000, 65536 },
		{ 20000, 70000, 301 },        /* below the slot's cascade: must move */
		{ 1 << 20, (1 << 20) + 1, (1 << 20) - 1 },
	};
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		struct rt a;
		fresh(0);
		rinit(&a, 1);
		assert_int_equal(twheel_add(W, &a.t, seq[i][0]), 0);
		assert_int_equal(twheel_mod(W, &a.t, seq[i][1]), 1);
		assert_int_equal(twheel_mod(W, &a.t, seq[i][2]), 1);
		check_ok();
		assert_true(twheel_next_expiry(W) <= seq[i][2]);
		assert_int_equal(adv(seq[i][2] - 1), 0);
		assert_int_equal(a.fired, 0);
		assert_int_equal(adv(seq[i][2]), 1);
		assert_int_equal(a.fired_exp, seq[i][2]);
	}
}

/* ---- randomised stress against a brute-force model ------------------------------ */

enum { NS = 48 };
static struct rt S[NS];
static bool s_pending[NS], s_defer[NS];
static tw_tick_t s_exp[NS];
static bool s_in_adv;
static bool s_quiet; /* callbacks do not act (draining at the end) */
static uint64_t rng;


static tw_tick_t sat_add(tw_tick_t a, uint64_t d)
{
	return a + d < a ? TW_TICK_MAX : a + d;
}

static tw_tick_t s_rnd_exp(void)
{
	tw_tick_t base = s_in_adv ? target : twheel_now(W);
	uint64_t r = splitmix64(&rng);
	switch (r % 6) {
	case 0:
		return TW_TICK_MAX - splitmix64(&rng) % 3;
	case 1:
		return sat_add(base, splitmix64(&rng) >> (splitmix64(&rng) % 64));
	case 2:
		return base - (base ? splitmix64(&rng) % 2 : 0);
	default:
		return sat_add(base, splitmix64(&rng) % (UINT64_C(1) << (splitmix64(&rng) % 30)));
	}
}

static void s_arm(int id, tw_tick_t e, bool mod)
{
	int rc = mod ? twheel_mod(W, &S[id].t, e) : twheel_add(W, &S[id].t, e);
	if (mod)
		assert_int_equal(rc, s_pending[id]);
	else
		assert_int_equal(rc, s_pending[id] ? -EBUSY : 0);
	if (rc < 0)
		return;
	s_pending[id] = true;
	s_exp[id] = e;
	s_defer[id] = s_in_adv;
}

static void s_fire(struct rt *r)
{
	int id = r->id;
	assert_true(s_pending[id]);
	assert_false(s_defer[id]);
	assert_int_equal(r->fired_exp, s_exp[id]);
	/* no eligible pending timer is earlier */
	for (int i = 0; i < NS; i++)
		if (s_pending[i] && !s_defer[i] && i != id)
			assert_true(s_exp[i] >= s_exp[id]);
	s_pending[id] = false;
	if (s_quiet)
		return;
	/* act: re-arm myself or another, later (lazy) or anywhere, or delete */
	uint64_t k = splitmix64(&rng) % 8;
	int o = (int)(splitmix64(&rng) % NS);
	if (k == 0)
		s_arm(id, s_rnd_exp(), true);
	else if (k == 1 && s_pending[o])
		s_arm(o, sat_add(s_exp[o], splitmix64(&rng) >> (splitmix64(&rng) % 64)), true);
	else if (k == 2) {
		assert_int_equal(twheel_del(W, &S[o].t), s_pending[o]);
		s_pending[o] = false;
	} else if (k == 3)
		s_arm(o, s_rnd_exp(), true);
}

static void s_check_next(void)
{
	tw_tick_t n = twheel_next_expiry(W), min = TW_TICK_MAX;
	bool any = false;
	for (int i = 0; i < NS; i++)
		if (s_pending[i]) {
			any = true;
			if (s_exp[i] < min)
				min = s_exp[i];
		}
	if (!any) {
		assert_int_equal(n, TW_TICK_MAX);
		return;
	}
	assert_true(n <= min);
	if (min > twheel_now(W))
		assert_true(n > twheel_now(W));
}

static void s_advance(tw_tick_t t)
{
	if (t < twheel_now(W))
		t = twheel_now(W);
	s_in_adv = true;
	long n = adv(t);
	s_in_adv = false;
	assert_true(n >= 0);
	for (int i = 0; i < NS; i++) {
		if (s_pending[i] && !s_defer[i])
			assert_true(s_exp[i] > t); /* everything due ran */
		s_defer[i] = false;
	}
}

static void lazy_stress_against_brute_force(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		rng = seed * 7919;
		tw_tick_t start = seed % 3 == 0   ? TW_TICK_MAX - (splitmix64(&rng) >> (splitmix64(&rng) % 64))
				  : seed % 3 == 1 ? 0
						  : splitmix64(&rng) >> (splitmix64(&rng) % 64);
		fresh(start);
		s_quiet = false;
		for (int i = 0; i < NS; i++) {
			rinit(&S[i], i);
			S[i].action = s_fire;
			s_pending[i] = s_defer[i] = false;
		}
		for (int step = 0; step < 20000; step++) {
			int id = (int)(splitmix64(&rng) % NS);
			uint64_t op = splitmix64(&rng) % 100;
			if (op < 20) {
				s_arm(id, s_rnd_exp(), false);
			} else if (op < 45) {
				/* later than stored: the lazy path */
				s_arm(id, sat_add(S[id].t.expires, splitmix64(&rng) >> (splitmix64(&rng) % 64)), true);
			} else if (op < 55) {
				/* earlier than stored, maybe in the same span */
				tw_tick_t e = S[id].t.expires;
				uint64_t d = splitmix64(&rng) >> (splitmix64(&rng) % 64);
				e = d > e ? 0 : e - d;
				s_arm(id, e, true);
			} else if (op < 62) {
				assert_int_equal(twheel_del(W, &S[id].t), s_pending[id]);
				s_pending[id] = false;
			} else if (op < 66 && s_pending[id]) {
				/* move to a spare and back */
				struct rt tmp;
				tw_timer_init(&tmp.t, on_fire);
				assert_int_equal(twheel_move(W, &tmp.t, &S[id].t), 1);
				check_ok();
				assert_int_equal(twheel_move(W, &S[id].t, &tmp.t), 1);
			} else if (op < 85) {
				tw_tick_t now = twheel_now(W);
				s_advance(sat_add(now, splitmix64(&rng) % (UINT64_C(1) << (splitmix64(&rng) % 40))));
			} else if (op < 95) {
				/* chase the earliest */
				tw_tick_t n = twheel_next_expiry(W);
				if (n != TW_TICK_MAX || splitmix64(&rng) % 16 == 0)
					s_advance(n);
			} else {
				s_check_next();
				size_t due;
				struct twheel_level_info li[TWHEEL_LEVELS];
				assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
				size_t sum = due;
				for (int l = 0; l < TWHEEL_LEVELS; l++)
					sum += li[l].timers;
				assert_int_equal(sum, twheel_count(W));
			}
			check_ok();
			size_t cnt = 0;
			for (int i = 0; i < NS; i++)
				cnt += s_pending[i];
			assert_int_equal(cnt, twheel_count(W));
		}
		s_quiet = true;
		s_advance(TW_TICK_MAX);
		assert_int_equal(twheel_count(W), 0);
	}
}

int main(void)
{
#define T(f) cmocka_unit_test_teardown(f, teardown)
	const struct CMUnitTest tests[] = {
		T(lazy_rearm_at_top_levels_is_exact),
		T(lazy_rearm_chase_to_the_end_of_time),
		T(lazy_rearm_from_callback_waits_for_a_later_advance),
		T(lazy_then_earlier_from_callback),
		T(lazy_del_never_fires_and_empties),
		T(lazy_move_fires_once_as_dst),
		T(lazy_drain_hands_back_once),
		T(lazy_inspect_and_stats_are_exact),
		T(later_then_earlier_in_stored_span),
		T(lazy_stress_against_brute_force),
	};
	return cmocka_run_group_tests_name("lazy_rearm", tests, NULL, NULL);
}
