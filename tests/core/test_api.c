/*
 * test_api - one test per documented behaviour of <twheel/twheel.h>,
 * every error code, and the boundaries: each level's wrap and cascade
 * point, expiries in the past, at now, at TW_TICK_MAX, a wheel starting near
 * 2^64, jumps of 1 and 2^40 ticks, and callbacks that act on the wheel.
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

#include "../common/xorshift64.h"

/* ---- a recording timer ------------------------------------------------------ */

#define MAXREC 4096

struct rec_timer {
	struct tw_timer t;
	int id;
	int fired;
	tw_tick_t fired_now; /* the advance target when it fired */
	void (*action)(struct rec_timer *r);
	struct rec_timer *other;
	tw_tick_t arg;
};

static struct twheel *W;
static tw_tick_t target;       /* target of the advance in progress */
static int order[MAXREC];      /* ids in firing order */
static tw_tick_t order_exp[MAXREC];
static int norder;

static void on_rec(struct tw_timer *t)
{
	struct rec_timer *r = tw_container_of(t, struct rec_timer, t);
	assert_false(tw_timer_pending(t));
	r->fired++;
	r->fired_now = target;
	if (norder < MAXREC) {
		order_exp[norder] = t->expires;
		order[norder++] = r->id;
	}
	if (r->action)
		r->action(r);
}

static void rec_init(struct rec_timer *r, int id)
{
	memset(r, 0, sizeof(*r));
	tw_timer_init(&r->t, on_rec);
	r->id = id;
}

static long adv(tw_tick_t now)
{
	target = now;
	return twheel_advance(W, now);
}

static void check_ok(void)
{
	char msg[256];
	int rc = twheel_check(W, msg, sizeof(msg));
	if (rc)
		fail_msg("twheel_check: %s", msg);
}

static int setup(void **state)
{
	(void)state;
	W = twheel_create(0);
	norder = 0;
	return W ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	twheel_destroy(W);
	W = NULL;
	return 0;
}

static void noop(struct tw_timer *t)
{
	(void)t;
}

/* ---- timers ------------------------------------------------------------------- */

static void timer_init_leaves_not_pending(void **state)
{
	(void)state;
	struct tw_timer t;
	memset(&t, 0xa5, sizeof(t));
	tw_timer_init(&t, noop);
	assert_false(tw_timer_pending(&t));
	assert_ptr_equal(t.func, noop);
	assert_int_equal(t.flags, 0);
	assert_false(tw_timer_pending(NULL));
	/* NULL is no timer, for the inline accessor too (it used to read it) */
	struct tw_timer *volatile none = NULL; /* not seen as NULL when compiled */
	assert_true(tw_timer_expires(none) == 0);
	tw_timer_init(NULL, noop);
}

static void timer_is_at_most_40_bytes(void **state)
{
	(void)state;
#if !TWHEEL_DEBUG_CHECKS
	assert_true(sizeof(struct tw_timer) <= 40);
#endif
	assert_int_equal(TWHEEL_LEVELS * TWHEEL_LEVEL_BITS >= 64, 1);
}

/* ---- create / now / count ----------------------------------------------------- */

static void create_starts_at_now(void **state)
{
	(void)state;
	tw_tick_t starts[] = { 0, 1, 12345, UINT64_C(1) << 40, TW_TICK_MAX - 1, TW_TICK_MAX };
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		struct twheel *w = twheel_create(starts[i]);
		assert_non_null(w);
		assert_true(twheel_now(w) == starts[i]);
		assert_int_equal(twheel_count(w), 0);
		assert_true(twheel_next_expiry(w) == TW_TICK_MAX);
		twheel_destroy(w);
	}
	assert_true(twheel_now(NULL) == 0);
	assert_int_equal(twheel_count(NULL), 0);
	assert_true(twheel_next_expiry(NULL) == TW_TICK_MAX);
	twheel_destroy(NULL); /* no-op */
}

/* ---- add ---------------------------------------------------------------------- */

static void add_errors(void **state)
{
	(void)state;
	struct tw_timer t, nofunc;
	tw_timer_init(&t, noop);
	tw_timer_init(&nofunc, NULL);
	assert_int_equal(twheel_add(NULL, &t, 5), -EINVAL);
	assert_int_equal(twheel_add(W, NULL, 5), -EINVAL);
	assert_int_equal(twheel_add(W, &nofunc, 5), -EINVAL);
	assert_false(tw_timer_pending(&nofunc));
	assert_int_equal(twheel_add(W, &t, 5), 0);
	assert_true(tw_timer_pending(&t));
	assert_int_equal(twheel_add(W, &t, 6), -EBUSY);
	assert_true(tw_timer_expires(&t) == 5); /* -EBUSY left it alone */
	assert_int_equal(twheel_count(W), 1);
	assert_int_equal(adv(6), 1);
	assert_false(tw_timer_pending(&t));
}

/*
 * A timer never passed to tw_timer_init() but all zero (a calloc'ed or
 * "= {0}" connection struct whose init was forgotten) looks pending in
 * slot 0 with no links: every call that takes it returns -EINVAL and
 * changes nothing (it used to follow its NULL links), and
 * tw_timer_pending() says false. A debug_checks build reports it first.
 */
static int zeroed_reports;
static void zeroed_misuse(const char *what)
{
	assert_non_null(strstr(what, "not initialised"));
	zeroed_reports++;
}

static void zeroed_timer_is_refused(void **state)
{
	(void)state;
	struct rec_timer a, b;
	struct tw_timer z;
	twheel_misuse_fn old = twheel_set_misuse_handler(zeroed_misuse);

	rec_init(&a, 1);
	rec_init(&b, 2);
	assert_int_equal(twheel_add(W, &a.t, 0), 0);   /* the due list and slot 0: */
	assert_int_equal(twheel_add(W, &b.t, 256), 0); /* the lists z's _idx names */
	assert_int_equal(adv(0), 1);
	assert_int_equal(twheel_add(W, &a.t, 1000), 0);
	memset(&z, 0, sizeof(z));
	assert_false(tw_timer_pending(&z));
	z.func = noop;
	assert_false(tw_timer_pending(&z));
	assert_int_equal(twheel_add(W, &z, 5), -EINVAL);
	assert_int_equal(twheel_mod(W, &z, 5), -EINVAL);
	assert_int_equal((twheel_mod)(W, &z, 0), -EINVAL);
	assert_int_equal(twheel_mod(W, &z, UINT64_MAX), -EINVAL);
	assert_int_equal(twheel_del(W, &z), -EINVAL);
	assert_int_equal(twheel_park(W, &z, 5), -EINVAL);
	assert_int_equal(twheel_park_hint(W, &z, 5, 1 << 20), -EINVAL);
	assert_int_equal(twheel_move(W, &a.t, &z), -EINVAL);
	assert_int_equal(twheel_move(W, &z, &z), -EINVAL);
	struct tw_timer d;
	tw_timer_init(&d, noop);
	assert_int_equal(twheel_move(W, &d, &z), -EINVAL);
	assert_int_equal(twheel_move(W, &z, &d), -EINVAL); /* @dst zeroed: not initialised */
	assert_int_equal(twheel_move(NULL, &z, &d), -EINVAL);
	twheel_set_misuse_handler(old);
	/* nothing changed: not z (still all zero but its callback) nor the wheel */
	assert_null(z.entry.next);
	assert_int_equal(z._idx, 0);
	assert_int_equal(twheel_count(W), 2);
	assert_true(tw_timer_pending(&a.t) && tw_timer_pending(&b.t));
	assert_false(tw_timer_pending(&d));
	check_ok();
	assert_int_equal(adv(1000), 2);
	assert_int_equal(twheel_count(W), 0);
	if (TWHEEL_DEBUG_CHECKS)
		assert_true(zeroed_reports > 0);
	/* tw_timer_init() makes it a timer like any other */
	tw_timer_init(&z, noop);
	assert_int_equal(twheel_add(W, &z, 1001), 0);
	assert_int_equal(twheel_del(W, &z), 1);
}

static void add_in_past_or_at_now_fires_on_next_advance(void **state)
{
	(void)state;
	struct rec_timer a, b, c;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	assert_int_equal(adv(100), 0);
	assert_int_equal(twheel_add(W, &a.t, 100), 0); /* at now */
	assert_int_equal(twheel_add(W, &b.t, 3), 0);   /* in the past */
	assert_int_equal(twheel_add(W, &c.t, 0), 0);
	assert_true(twheel_next_expiry(W) <= 0);
	/* advancing to the same time runs them, in expiry order */
	assert_int_equal(adv(100), 3);
	assert_int_equal(norder, 3);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 1);
	assert_int_equal(twheel_count(W), 0);
}

/* ---- mod ---------------------------------------------------------------------- */

static void mod_returns_whether_it_was_pending(void **state)
{
	(void)state;
	struct rec_timer a;
	struct tw_timer nofunc;
	rec_init(&a, 1);
	tw_timer_init(&nofunc, NULL);
	assert_int_equal(twheel_mod(NULL, &a.t, 1), -EINVAL);
	assert_int_equal(twheel_mod(W, NULL, 1), -EINVAL);
	assert_int_equal(twheel_mod(W, &nofunc, 1), -EINVAL);
	assert_int_equal(twheel_mod(W, &a.t, 50), 0);
	assert_true(tw_timer_pending(&a.t));
	assert_int_equal(twheel_mod(W, &a.t, 70), 1);
	assert_int_equal(twheel_mod(W, &a.t, 30), 1);
	assert_int_equal(twheel_count(W), 1);
	assert_int_equal(adv(29), 0);
	assert_int_equal(adv(30), 1);
	assert_int_equal(a.fired, 1);
	assert_int_equal(twheel_mod(W, &a.t, 31), 0); /* fired: not pending */
	assert_int_equal(adv(31), 1);
}

static void mod_within_slot_only_stores_expiry(void **state)
{
	(void)state;
	struct rec_timer a;
	struct twheel_stats st0, st1;
	rec_init(&a, 1);
	/* level 2 slot spans 4096 ticks: 10000 and 10100 share slot (10000>>12)&63 */
	assert_int_equal(twheel_add(W, &a.t, 10000), 0);
	twheel_get_stats(W, &st0);
	assert_int_equal(twheel_mod(W, &a.t, 10100), 1);
	assert_int_equal(twheel_mod(W, &a.t, 10100), 1); /* same expiry */
	twheel_get_stats(W, &st1);
	assert_int_equal(st1.mods_fast - st0.mods_fast, 2);
	check_ok();
	/* still exact */
	assert_int_equal(adv(10099), 0);
	assert_int_equal(adv(10100), 1);
	/* above level 0, a re-arm later into another slot only stores too */
	assert_int_equal(twheel_add(W, &a.t, 20000), 0);
	twheel_get_stats(W, &st0);
	assert_int_equal(twheel_mod(W, &a.t, 30000), 1);
	twheel_get_stats(W, &st1);
	assert_int_equal(st1.mods_fast - st0.mods_fast, 1);
	check_ok();
	/* a re-arm earlier into another slot moves the timer */
	assert_int_equal(twheel_mod(W, &a.t, 15000), 1);
	twheel_get_stats(W, &st0);
	assert_int_equal(st0.mods_fast - st1.mods_fast, 0);
	check_ok();
	assert_int_equal(adv(14999), 0);
	assert_int_equal(adv(15000), 1);
	/* on level 0 (within 256 ticks) a re-arm to another tick moves it */
	assert_int_equal(twheel_add(W, &a.t, 15100), 0);
	twheel_get_stats(W, &st0);
	assert_int_equal(twheel_mod(W, &a.t, 15200), 1);
	twheel_get_stats(W, &st1);
	assert_int_equal(st1.mods_fast - st0.mods_fast, 0);
	check_ok();
	assert_int_equal(adv(15199), 0);
	assert_int_equal(adv(15200), 1);
}

/*
 * A timer re-armed later without moving waits in its old slot; that slot's
 * cascade re-inserts it wherever its expiry now belongs, on any level, and
 * it fires exactly on its last expiry. Re-arms earlier again, while it sits
 * in the old slot, are exact too.
 */
static void mod_later_moves_at_its_slots_cascade(void **state)
{
	(void)state;
	static const tw_tick_t to[][4] = {
		/* first, then re-arms; 0 ends a row */
		{ 300, 1000, 100000, 0 },                 /* level 1 -> 1 -> 3 */
		{ 5000, 5001, 2000000000, 0 },            /* level 1 -> level 4 */
		{ 20000, UINT64_C(1) << 40, 70000, 0 },  /* later, then earlier again */
		{ 20000, 20500, 36000, 36001 },           /* level 2, several slots */
		{ 300, TW_TICK_MAX - 5, 0, 0 },           /* to the top level */
	};
	for (size_t r = 0; r < sizeof(to) / sizeof(to[0]); r++) {
		struct rec_timer a;
		struct twheel_stats st;
		twheel_destroy(W);
		W = twheel_create(0);
		rec_init(&a, 1);
		assert_int_equal(twheel_add(W, &a.t, to[r][0]), 0);
		tw_tick_t last = to[r][0];
		for (int i = 1; i < 4 && to[r][i]; i++) {
			assert_int_equal(twheel_mod(W, &a.t, to[r][i]), 1);
			last = to[r][i];
			check_ok();
		}
		/* chase it: every step moves or fires it, and it fires on its tick */
		int steps = 0;
		while (!a.fired) {
			tw_tick_t n = twheel_next_expiry(W);
			assert_true(n > twheel_now(W) && n <= last);
			assert_true(twheel_advance(W, n) >= 0);
			check_ok();
			assert_true(++steps <= TWHEEL_LEVELS + 2);
		}
		assert_int_equal(twheel_now(W), last);
		assert_int_equal(a.fired, 1);
		twheel_get_stats(W, &st);
		assert_int_equal(st.fires, 1);
	}
}

/* ---- del ---------------------------------------------------------------------- */

/*
 * twheel_next_expiry()'s bound with timers re-armed later: each may add one
 * step (the cascade of the slot it waits in), never more, and the earliest
 * timer still fires exactly.
 */
static void chase_bound_counts_timers_rearmed_later(void **state)
{
	(void)state;
	enum { K = 20 };
	struct rec_timer lazy[K], e;
	twheel_destroy(W);
	W = twheel_create(0);
	rec_init(&e, 99);
	assert_int_equal(twheel_add(W, &e.t, 100000), 0);
	for (int i = 0; i < K; i++) {
		rec_init(&lazy[i], i);
		/* level 1, one slot each (span 256) */
		assert_int_equal(twheel_add(W, &lazy[i].t, 300 + 256 * (tw_tick_t)i), 0);
		assert_int_equal(twheel_mod(W, &lazy[i].t, 200000 + (tw_tick_t)i), 1);
	}
	check_ok();
	int steps = 0;
	while (!e.fired) {
		tw_tick_t n = twheel_next_expiry(W);
		assert_true(n > twheel_now(W) && n <= 100000);
		assert_int_equal(adv(n), n == 100000);
		steps++;
	}
	assert_true(steps > TWHEEL_LEVELS + 1); /* the old slots were visited */
	assert_true(steps <= TWHEEL_LEVELS + 1 + K);
	for (int i = 0; i < K; i++)
		assert_int_equal(lazy[i].fired, 0);
	for (int i = 0; i < K; i++) {
		assert_int_equal(adv(200000 + (tw_tick_t)i), 1);
		assert_int_equal(lazy[i].fired, 1);
	}
}

static void del_returns_whether_it_was_pending(void **state)
{
	(void)state;
	struct rec_timer a, never;
	rec_init(&a, 1);
	rec_init(&never, 2);
	assert_int_equal(twheel_del(NULL, &a.t), -EINVAL);
	assert_int_equal(twheel_del(W, NULL), -EINVAL);
	assert_int_equal(twheel_del(W, &never.t), 0); /* never armed */
	assert_int_equal(twheel_add(W, &a.t, 10), 0);
	assert_int_equal(twheel_del(W, &a.t), 1);
	assert_false(tw_timer_pending(&a.t));
	assert_int_equal(twheel_del(W, &a.t), 0); /* twice is harmless */
	assert_int_equal(twheel_count(W), 0);
	assert_int_equal(adv(1000), 0);
	assert_int_equal(a.fired, 0);
	assert_int_equal(twheel_add(W, &a.t, 1001), 0);
	assert_int_equal(adv(1001), 1);
	assert_int_equal(twheel_del(W, &a.t), 0); /* already fired */
	/* deleting a due timer (armed in the past) */
	assert_int_equal(twheel_add(W, &a.t, 5), 0);
	assert_int_equal(twheel_del(W, &a.t), 1);
	assert_int_equal(adv(1001), 0);
	check_ok();
}

/* ---- advance ------------------------------------------------------------------ */

static void advance_errors(void **state)
{
	(void)state;
	assert_int_equal(twheel_advance(NULL, 5), -EINVAL);
	assert_int_equal(adv(10), 0);
	assert_int_equal(twheel_advance(W, 9), -EINVAL);
	assert_true(twheel_now(W) == 10);
	assert_int_equal(adv(10), 0);
}

static long reentrant_rc;
static void call_advance(struct rec_timer *r)
{
	(void)r;
	reentrant_rc = twheel_advance(W, target + 1);
}

static void advance_from_callback_is_ebusy(void **state)
{
	(void)state;
	struct rec_timer a;
	rec_init(&a, 1);
	a.action = call_advance;
	twheel_add(W, &a.t, 5);
	assert_int_equal(adv(5), 1);
	assert_int_equal(reentrant_rc, -EBUSY);
	assert_true(twheel_now(W) == 5);
}

/*
 * twheel_destroy() from one of the wheel's callbacks does nothing, in every
 * build: the advance still runs on the wheel (it used to be freed under
 * it, and a wheel created meanwhile in the same memory was overwritten by
 * the rest of the advance). A debug_checks build reports it first.
 */
static struct twheel *other_wheel;
static void destroy_own_wheel(struct rec_timer *r)
{
	(void)r;
	twheel_destroy(W);
	other_wheel = twheel_create(12345); /* malloc's reuse of a freed wheel */
	assert_non_null(other_wheel);
}

static void destroy_from_callback_does_nothing(void **state)
{
	(void)state;
	struct rec_timer a, b, c;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	a.action = destroy_own_wheel;
	assert_int_equal(twheel_add(W, &a.t, 5), 0);
	assert_int_equal(twheel_add(W, &b.t, 5), 0);
	assert_int_equal(twheel_add(W, &c.t, 600), 0);
	assert_int_equal(adv(700), 3); /* b still fired, c after it */
	assert_int_equal(a.fired + b.fired + c.fired, 3);
	assert_true(twheel_now(W) == 700);
	assert_true(twheel_now(other_wheel) == 12345);
	assert_int_equal(twheel_count(other_wheel), 0);
	assert_int_equal(twheel_add(W, &a.t, 800), 0);
	assert_int_equal(twheel_count(W), 1);
	check_ok();
	twheel_destroy(other_wheel);
}

static void fires_in_expiry_order_exactly_on_tick(void **state)
{
	(void)state;
	enum { N = 3000 };
	static struct rec_timer r[N];
	uint64_t x = 42;
	for (int i = 0; i < N; i++) {
		rec_init(&r[i], i);
		xorshift64(&x);
		assert_int_equal(twheel_add(W, &r[i].t, 1 + x % 20000), 0);
	}
	/* tick by tick: each timer fires exactly in the advance to its expiry */
	for (tw_tick_t now = 1; now <= 20000; now++) {
		adv(now);
		if (now % 997 == 0)
			check_ok();
	}
	assert_int_equal(norder, N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(r[i].fired, 1);
		assert_true(r[i].fired_now == tw_timer_expires(&r[i].t));
		if (i)
			assert_true(order_exp[i - 1] <= order_exp[i]);
	}
}

/* Expiries around every level's wrap and cascade point, from several starts. */
static void exact_at_every_level_boundary(void **state)
{
	(void)state;
	tw_tick_t starts[] = { 0, 1, 63, 64, 4095, (UINT64_C(1) << 36) - 3, UINT64_C(0x123456789abcdef) };
	twheel_destroy(W);
	for (size_t si = 0; si < sizeof(starts) / sizeof(starts[0]); si++) {
		for (int lvl = 0; lvl < TWHEEL_LEVELS; lvl++) {
			/* level k: slots of 2^shift(k) ticks, 256 slots at level 0, 64 above */
			unsigned shift = lvl ? TWHEEL_LEVEL_BITS * lvl + TWHEEL_LEVEL0_BITS - TWHEEL_LEVEL_BITS : 0;
			tw_tick_t span = UINT64_C(1) << shift;
			tw_tick_t slots = lvl ? UINT64_C(1) << TWHEEL_LEVEL_BITS : UINT64_C(1) << TWHEEL_LEVEL0_BITS;
			tw_tick_t range = shift + 6 >= 64 ? TW_TICK_MAX : span * slots;
			tw_tick_t deltas[] = { span - 1, span, span + 1, 2 * span - 1, range - span, range - 1,
					       range, range + 1 };
			for (size_t di = 0; di < sizeof(deltas) / sizeof(deltas[0]); di++) {
				tw_tick_t start = starts[si], d = deltas[di];
				if (d == 0 || start + d <= start)
					continue;
				struct twheel *w = twheel_create(start);
				struct rec_timer a, b;
				rec_init(&a, 1);
				rec_init(&b, 2);
				tw_tick_t e = start + d;
				twheel_add(w, &a.t, e);
				/* a second timer aligned to a cascade tick at the same level */
				tw_tick_t c = (e & ~(span - 1));
				twheel_add(w, &b.t, c > start ? c : e);
				/* jump to just before, check, then the exact tick */
				W = w;
				tw_tick_t first = tw_timer_expires(&b.t) < e ? tw_timer_expires(&b.t) : e;
				assert_int_equal(adv(first - 1), 0);
				check_ok();
				assert_true(adv(first) >= 1);
				if (first < e) {
					assert_int_equal(a.fired, 0);
					assert_int_equal(adv(e - 1), 0);
					assert_int_equal(adv(e), 1);
				}
				assert_int_equal(a.fired, 1);
				assert_int_equal(b.fired, 1);
				assert_true(a.fired_now == e);
				check_ok();
				twheel_destroy(w);
			}
		}
	}
	W = twheel_create(0); /* for teardown */
}

static void wheel_near_end_of_time(void **state)
{
	(void)state;
	twheel_destroy(W);
	W = twheel_create(TW_TICK_MAX - 100);
	struct rec_timer a, b, c;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	twheel_add(W, &a.t, TW_TICK_MAX);
	twheel_add(W, &b.t, TW_TICK_MAX - 1);
	twheel_add(W, &c.t, TW_TICK_MAX - 100); /* at now: due */
	assert_true(twheel_next_expiry(W) <= TW_TICK_MAX - 100);
	assert_int_equal(adv(TW_TICK_MAX - 2), 1);
	assert_int_equal(adv(TW_TICK_MAX - 1), 1);
	assert_true(twheel_next_expiry(W) == TW_TICK_MAX);
	assert_int_equal(twheel_count(W), 1);
	assert_int_equal(adv(TW_TICK_MAX), 1);
	assert_int_equal(order[0], 3);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 1);
	/* at the end of time every timer is due */
	twheel_add(W, &a.t, 5);
	twheel_add(W, &b.t, TW_TICK_MAX);
	assert_int_equal(adv(TW_TICK_MAX), 2);
	check_ok();
}

static void expiry_at_tick_max_from_zero(void **state)
{
	(void)state;
	struct rec_timer a;
	rec_init(&a, 1);
	twheel_add(W, &a.t, TW_TICK_MAX);
	check_ok();
	assert_int_equal(adv(TW_TICK_MAX - 1), 0);
	assert_int_equal(a.fired, 0);
	assert_int_equal(adv(TW_TICK_MAX), 1);
}

static void jumps_of_one_and_two_to_the_forty(void **state)
{
	(void)state;
	struct rec_timer a, b, c;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	tw_tick_t big = UINT64_C(1) << 40;
	twheel_add(W, &a.t, 1);
	twheel_add(W, &b.t, big);
	twheel_add(W, &c.t, big + 1);
	assert_int_equal(adv(1), 1);
	assert_int_equal(adv(big), 1); /* one jump of 2^40 - 1 */
	assert_true(b.fired_now == big);
	assert_int_equal(adv(big + 1), 1);
	assert_true(c.fired_now == big + 1);
	/* jump over a timer by far: it fires, in the advance, once */
	twheel_add(W, &a.t, big + 1000);
	assert_int_equal(adv(big + 1 + big), 1);
	assert_int_equal(a.fired, 2);
}

static void idle_skip_costs_few_steps(void **state)
{
	(void)state;
	struct rec_timer a;
	struct twheel_stats st;
	rec_init(&a, 1);
	tw_tick_t e = UINT64_C(1) << 32;
	twheel_add(W, &a.t, e);
	assert_int_equal(adv(e - 1), 0);
	assert_int_equal(adv(e), 1);
	twheel_get_stats(W, &st);
	/* moved at most once per level on its way down */
	assert_true(st.cascades <= TWHEEL_LEVELS);
	assert_true(st.cascaded <= TWHEEL_LEVELS);
}

/* ---- callbacks ------------------------------------------------------------------ */

static void rearm_self(struct rec_timer *r)
{
	if (r->fired < 3)
		assert_int_equal(twheel_mod(W, &r->t, r->arg), 0);
}

static void callback_rearms_itself_into_the_past(void **state)
{
	(void)state;
	struct rec_timer a;
	rec_init(&a, 1);
	a.action = rearm_self;
	a.arg = 2; /* in the past once time is 10 */
	twheel_add(W, &a.t, 10);
	/* fires once per advance: a timer armed from a callback waits */
	assert_int_equal(adv(10), 1);
	assert_true(tw_timer_pending(&a.t));
	assert_int_equal(adv(10), 1);
	assert_int_equal(adv(11), 1);
	assert_int_equal(adv(12), 0);
	assert_int_equal(a.fired, 3);
}

static void callback_rearms_itself_into_the_future(void **state)
{
	(void)state;
	struct rec_timer a;
	rec_init(&a, 1);
	a.action = rearm_self;
	a.arg = 15; /* <= the advance's target: fires in the next advance */
	twheel_add(W, &a.t, 10);
	assert_int_equal(adv(20), 1);
	assert_true(tw_timer_pending(&a.t));
	a.arg = 100;
	assert_int_equal(adv(20), 1); /* the re-arm at 15 */
	assert_true(a.fired_now == 20);
	assert_int_equal(adv(99), 0);
	assert_int_equal(adv(100), 1); /* the re-arm at 100; fired == 3: no more */
	assert_int_equal(a.fired, 3);
	assert_false(tw_timer_pending(&a.t));
}

static void del_other(struct rec_timer *r)
{
	assert_int_equal(twheel_del(W, &r->other->t), 1);
}

static void callback_deletes_timer_due_in_same_advance(void **state)
{
	(void)state;
	struct rec_timer a, b, c;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	a.action = del_other;
	a.other = &b;
	twheel_add(W, &a.t, 5);
	twheel_add(W, &b.t, 5); /* same tick: on the list being fired */
	twheel_add(W, &c.t, 7);
	b.action = del_other; /* if b ran first, it deletes a */
	b.other = &a;
	assert_int_equal(adv(10), 2);
	assert_int_equal(a.fired + b.fired, 1);
	assert_int_equal(c.fired, 1);
	/* and one due later in the same advance */
	rec_init(&a, 1);
	rec_init(&b, 2);
	a.action = del_other;
	a.other = &b;
	twheel_add(W, &a.t, 11);
	twheel_add(W, &b.t, 5000);
	assert_int_equal(adv(10000), 1);
	assert_int_equal(b.fired, 0);
	check_ok();
}

/*
 * The timers of a level-0 slot fire off the work list but keep their slot's
 * index: a callback that arms a timer for the next round of the same slot
 * (256 ticks on), then deletes the last timer left on the work list, must
 * not clear that slot's bit; deleting the next-round timers again must.
 */
static struct rec_timer round_next[2];
static int round_first;

static void act_same_slot_next_round(struct rec_timer *r)
{
	if (round_first++)
		return; /* the second of the pair was deleted by the first */
	tw_tick_t e = tw_timer_expires(&r->t) + 256; /* the same level-0 slot */
	rec_init(&round_next[0], 10);
	rec_init(&round_next[1], 11);
	assert_int_equal(twheel_add(W, &round_next[0].t, e), 0);
	assert_int_equal(twheel_add(W, &round_next[1].t, e), 0);
	/* the other timer of the pair: the only one left on the work list */
	assert_int_equal(twheel_del(W, &r->other->t), 1);
	check_ok();
	if (r->arg) { /* second round: empty the next-round slot again */
		assert_int_equal(twheel_del(W, &round_next[0].t), 1);
		assert_int_equal(twheel_del(W, &round_next[1].t), 1);
		check_ok();
	}
}

static void callback_arms_same_slot_next_round_and_deletes_last_fired(void **state)
{
	(void)state;
	struct rec_timer a, b;
	for (int round = 0; round < 2; round++) {
		tw_tick_t at = 5 + 1000 * (tw_tick_t)round;
		rec_init(&a, 1);
		rec_init(&b, 2);
		a.action = b.action = act_same_slot_next_round;
		a.other = &b;
		b.other = &a;
		a.arg = b.arg = (tw_tick_t)round;
		round_first = 0;
		assert_int_equal(twheel_add(W, &a.t, at), 0);
		assert_int_equal(twheel_add(W, &b.t, at), 0);
		assert_int_equal(adv(at), 1);
		assert_int_equal(a.fired + b.fired, 1);
		check_ok();
		if (round == 0) {
			assert_int_equal(twheel_count(W), 2);
			assert_int_equal(twheel_next_expiry(W), at + 256);
			norder = 0;
			assert_int_equal(adv(at + 300), 2); /* both on their exact tick */
			assert_int_equal(order_exp[0], at + 256);
			assert_int_equal(order_exp[1], at + 256);
		} else {
			assert_int_equal(twheel_count(W), 0);
			assert_int_equal(twheel_next_expiry(W), TW_TICK_MAX);
		}
		check_ok();
	}
}

static void mod_other(struct rec_timer *r)
{
	assert_int_equal(twheel_mod(W, &r->other->t, r->arg), 1);
}

static void callback_modifies_others(void **state)
{
	(void)state;
	struct rec_timer a, b, c;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	a.action = mod_other;
	a.other = &b;
	a.arg = 500; /* beyond the advance's target: fires later, on time */
	twheel_add(W, &a.t, 5);
	twheel_add(W, &b.t, 50);
	assert_int_equal(adv(100), 1);
	assert_int_equal(b.fired, 0);
	assert_int_equal(adv(499), 0);
	assert_int_equal(adv(500), 1);
	/* re-armed to the same expiry from a callback: deferred to the next advance */
	rec_init(&a, 1);
	rec_init(&b, 2);
	a.action = mod_other;
	a.other = &b;
	a.arg = 700;
	twheel_add(W, &a.t, 600);
	twheel_add(W, &b.t, 700);
	assert_int_equal(adv(800), 1);
	assert_int_equal(b.fired, 0);
	assert_true(tw_timer_pending(&b.t));
	assert_int_equal(adv(800), 1);
	assert_int_equal(b.fired, 1);
	check_ok();
}

static void free_self(struct tw_timer *t)
{
	free(tw_container_of(t, struct rec_timer, t));
}

static void callback_frees_its_own_memory(void **state)
{
	(void)state;
	for (int i = 0; i < 100; i++) {
		struct rec_timer *r = malloc(sizeof(*r));
		assert_non_null(r);
		memset(r, 0, sizeof(*r));
		tw_timer_init(&r->t, free_self);
		twheel_add(W, &r->t, (tw_tick_t)(i % 7) * 100);
	}
	assert_int_equal(adv(1000), 100); /* ASan would catch a later touch */
	assert_int_equal(twheel_count(W), 0);
	check_ok();
}

static void add_due(struct rec_timer *r)
{
	assert_int_equal(twheel_add(W, &r->other->t, r->arg), 0);
}

static void timer_armed_in_callback_fires_in_later_advance(void **state)
{
	(void)state;
	struct rec_timer a, b;
	rec_init(&a, 1);
	rec_init(&b, 2);
	a.action = add_due;
	a.other = &b;
	a.arg = 1; /* long past */
	twheel_add(W, &a.t, 3);
	assert_int_equal(adv(50), 1);
	assert_int_equal(b.fired, 0);
	assert_true(twheel_next_expiry(W) <= 50);
	assert_int_equal(adv(50), 1);
	assert_int_equal(b.fired, 1);
}

/* ---- next_expiry ------------------------------------------------------------------ */

static void next_expiry_is_exact_in_level_zero_and_bounded_beyond(void **state)
{
	(void)state;
	struct rec_timer a;
	rec_init(&a, 1);
	assert_true(twheel_next_expiry(W) == TW_TICK_MAX);
	twheel_add(W, &a.t, 40);
	assert_true(twheel_next_expiry(W) == 40);
	twheel_mod(W, &a.t, 100000);
	tw_tick_t n = twheel_next_expiry(W);
	assert_true(n > 0 && n <= 100000);
	twheel_del(W, &a.t);
	assert_true(twheel_next_expiry(W) == TW_TICK_MAX);
}

/* Advancing to next_expiry() reaches the earliest timer in <= LEVELS + 1 steps. */
/* From a callback, timers of the same advance that have not run yet are
 * still pending: next_expiry must see them (at or before the wheel's time). */
static struct twheel *ne_w;
static tw_tick_t ne_seen[4];
static size_t ne_count[4];
static int ne_n;

static void ne_record(struct tw_timer *t)
{
	(void)t;
	ne_count[ne_n] = twheel_count(ne_w);
	ne_seen[ne_n++] = twheel_next_expiry(ne_w);
}

static void next_expiry_from_callback_sees_timers_of_same_advance(void **state)
{
	(void)state;
	struct tw_timer t[3];
	for (int round = 0; round < 2; round++) {
		/* round 0: same tick (fired from one slot); round 1: due list */
		ne_w = twheel_create(100);
		ne_n = 0;
		for (int i = 0; i < 3; i++) {
			tw_timer_init(&t[i], ne_record);
			twheel_add(ne_w, &t[i], round ? 90 + (tw_tick_t)i : 150);
		}
		assert_int_equal(twheel_advance(ne_w, 200), 3);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(ne_count[i], (size_t)(2 - i));
			if (ne_count[i])
				assert_true(ne_seen[i] <= twheel_now(ne_w));
			else
				assert_true(ne_seen[i] == TW_TICK_MAX);
		}
		twheel_destroy(ne_w);
	}
}

/* A timer armed from a callback on the due list must not hide an earlier
 * wheel timer of the same advance. */
static struct tw_timer ne_late;
static tw_tick_t ne_after;

static void ne_arm_late(struct tw_timer *t)
{
	(void)t;
	twheel_add(ne_w, &ne_late, 190); /* <= target: waits for a later advance */
	ne_after = twheel_next_expiry(ne_w);
}

static void next_expiry_from_callback_is_not_hidden_by_due_list(void **state)
{
	(void)state;
	struct tw_timer a, b;
	ne_w = twheel_create(100);
	tw_timer_init(&a, ne_arm_late);
	tw_timer_init(&b, noop);
	tw_timer_init(&ne_late, noop);
	twheel_add(ne_w, &a, 120);
	twheel_add(ne_w, &b, 130);
	assert_int_equal(twheel_advance(ne_w, 200), 2);
	assert_true(ne_after <= 130);
	assert_int_equal(twheel_advance(ne_w, 200), 1);
	twheel_destroy(ne_w);
}

static void next_expiry_chase_is_bounded_by_levels(void **state)
{
	(void)state;
	static struct rec_timer r[64];
	uint64_t x = 7;
	for (int round = 0; round < 200; round++) {
		twheel_destroy(W);
		xorshift64(&x);
		W = twheel_create(x >> (x % 64));
		tw_tick_t now = twheel_now(W), min = TW_TICK_MAX;
		for (int i = 0; i < 64; i++) {
			rec_init(&r[i], i);
			xorshift64(&x);
			tw_tick_t d = 1 + (x >> (x % 64));
			tw_tick_t e = now + d < now ? TW_TICK_MAX : now + d;
			twheel_add(W, &r[i].t, e);
			if (e < min)
				min = e;
		}
		norder = 0;
		int steps = 0;
		while (norder == 0) {
			tw_tick_t n = twheel_next_expiry(W);
			assert_true(n > twheel_now(W) && n <= min);
			adv(n);
			steps++;
			assert_true(steps <= TWHEEL_LEVELS + 1);
		}
		assert_true(order_exp[0] == min);
	}
}

/* ---- drain / destroy ----------------------------------------------------------------- */

static int drained[64];
static void on_drain(struct tw_timer *t, void *arg)
{
	assert_false(tw_timer_pending(t));
	(*(int *)arg)++;
	drained[tw_container_of(t, struct rec_timer, t)->id]++;
}

static void drain_hands_back_each_timer_once(void **state)
{
	(void)state;
	struct rec_timer r[64];
	int n = 0;
	for (int i = 0; i < 64; i++) {
		rec_init(&r[i], i);
		twheel_add(W, &r[i].t, i % 3 == 0 ? 0 : (tw_tick_t)1 << i); /* due, near, far */
	}
	adv(0 + 0); /* nothing: the due ones were armed at now and run here */
	int still = (int)twheel_count(W);
	memset(drained, 0, sizeof(drained));
	twheel_drain(W, on_drain, &n);
	assert_int_equal(n, still);
	assert_int_equal(twheel_count(W), 0);
	for (int i = 0; i < 64; i++) {
		assert_int_equal(drained[i] + r[i].fired, 1);
		assert_false(tw_timer_pending(&r[i].t));
	}
	assert_true(twheel_next_expiry(W) == TW_TICK_MAX);
	check_ok();
	twheel_drain(W, NULL, NULL); /* no-op */
	twheel_drain(NULL, on_drain, &n);
}

/*
 * twheel_drain()'s @fn counts as one of the wheel's callbacks: a
 * twheel_destroy() there does nothing and twheel_advance() returns -EBUSY
 * (the destroy used to free the wheel under the drain, which went on
 * counting its timers down in the freed memory: in a wheel created there
 * meanwhile). A drain from an advance's callback leaves that advance
 * running.
 */
static struct twheel *drain_other;
static long drain_adv_rc;
static void drain_misuse(const char *what)
{
	assert_true(strstr(what, "twheel_drain()") || strstr(what, "twheel_destroy()"));
}
static void drain_destroys(struct tw_timer *t, void *arg)
{
	(void)t;
	(*(int *)arg)++;
	drain_adv_rc = twheel_advance(W, twheel_now(W) + 1);
	twheel_destroy(W);
	if (!drain_other)
		drain_other = twheel_create(777); /* malloc's reuse of a freed wheel */
}

static void drain_in_callback(struct rec_timer *r)
{
	int n = 0;
	twheel_drain(W, drain_destroys, &n);
	r->arg = (tw_tick_t)n;
}

static void drain_fn_is_a_callback(void **state)
{
	(void)state;
	struct rec_timer r[4];
	int n = 0;
	for (int i = 0; i < 4; i++) {
		rec_init(&r[i], i);
		assert_int_equal(twheel_add(W, &r[i].t, 10 + (tw_tick_t)i * 1000), 0);
	}
	drain_other = NULL;
	twheel_drain(W, drain_destroys, &n);
	assert_int_equal(n, 4);
	assert_int_equal(drain_adv_rc, -EBUSY);
	assert_int_equal(twheel_count(W), 0);
	assert_true(twheel_now(W) == 0);
	check_ok();
	assert_non_null(drain_other);
	assert_int_equal(twheel_count(drain_other), 0);
	assert_true(twheel_now(drain_other) == 777);
	twheel_destroy(drain_other);
	drain_other = NULL;

	/* from an advance's callback: the advance goes on (a debug_checks
	 * build refuses that drain, after reporting it) */
	twheel_misuse_fn old = twheel_set_misuse_handler(drain_misuse);
	rec_init(&r[0], 0);
	rec_init(&r[1], 1);
	r[0].action = drain_in_callback;
	assert_int_equal(twheel_add(W, &r[0].t, 5), 0);
	assert_int_equal(twheel_add(W, &r[1].t, 5000), 0);
	assert_int_equal(adv(6), 1);
	assert_int_equal(twheel_advance(W, 7), 0); /* not left "running" */
	assert_true(twheel_now(W) == 7);
	check_ok();
	/* r[1]: handed back by the drain, or still pending where the debug
	 * build refused it; it lives on this stack */
	assert_int_equal(twheel_del(W, &r[1].t), TWHEEL_DEBUG_CHECKS ? 1 : 0);
	twheel_set_misuse_handler(old);
	twheel_destroy(drain_other);
	drain_other = NULL;
}

/* Hands its timer back and acts on the other of its pair (->other) by ->arg. */
static tw_tick_t place_at_value(uint64_t value, void *arg);
static void drain_acts_on_pair(struct tw_timer *t, void *arg)
{
	struct rec_timer *r = tw_container_of(t, struct rec_timer, t), *o = r->other;

	on_drain(t, arg);
	if (!o)
		return;
	o->other = NULL; /* the other acts on nothing */
	switch (r->arg) {
	case 0: /* an idle timeout pushed back: only stores the expiry */
		assert_int_equal(twheel_mod(W, &o->t, o->t.expires + 100), 1);
		break;
	case 1:
		assert_int_equal(twheel_mod(W, &o->t, 300), 1);
		break;
	case 2:
		assert_int_equal(twheel_park(W, &o->t, 7000), 1);
		break;
	case 3:
		assert_int_equal(twheel_park_hint(W, &o->t, 7000, 6900), 1);
		break;
	default:
		assert_int_equal(twheel_add(W, &o->t, 5), -EBUSY);
		break;
	}
}

/*
 * A drain's function may act on a timer not handed back yet (the other
 * timer of its object): re-armed or parked, it stays pending and is not
 * handed back; merely tried (add: -EBUSY), it is handed back in its turn.
 */
static void drain_fn_rearms_timer_not_handed_yet(void **state)
{
	(void)state;
	struct rec_timer r[2];

	for (tw_tick_t how = 0; how < 5; how++) {
		int n = 0;

		twheel_destroy(W);
		W = twheel_create(0);
		memset(drained, 0, sizeof(drained));
		for (int i = 0; i < 2; i++) {
			rec_init(&r[i], i);
			r[i].other = &r[1 - i];
			r[i].arg = how;
			/* far: parked in place, by the first case's fast re-arm */
			assert_int_equal(twheel_add(W, &r[i].t, 5000), 0);
		}
		twheel_drain(W, drain_acts_on_pair, &n);
		check_ok();
		if (how == 4) {
			assert_int_equal(n, 2);
			assert_int_equal(twheel_count(W), 0);
			continue;
		}
		assert_int_equal(n, 1);
		assert_int_equal(twheel_count(W), 1);
		struct rec_timer *o = drained[0] ? &r[1] : &r[0];
		assert_true(tw_timer_pending(&o->t));
		if (how >= 2) {
			assert_int_equal(twheel_place(W, place_at_value, NULL), 1);
			check_ok();
		}
		tw_tick_t e = o->t.expires;
		assert_int_equal(e, how == 0 ? 5100 : how == 1 ? 300 : 7000);
		assert_int_equal(adv(e - 1), 0);
		assert_int_equal(adv(e), 1);
		assert_int_equal(o->fired, 1);
		adv(e + 1);
		check_ok();
	}
}

static void destroy_unlinks_without_firing(void **state)
{
	(void)state;
	struct rec_timer r[10];
	twheel_destroy(W);
	struct twheel *w = twheel_create(0);
	W = w;
	for (int i = 0; i < 10; i++) {
		rec_init(&r[i], i);
		twheel_add(w, &r[i].t, (tw_tick_t)i * 1000);
	}
	twheel_destroy(w);
	for (int i = 0; i < 10; i++) {
		assert_false(tw_timer_pending(&r[i].t));
		assert_int_equal(r[i].fired, 0);
	}
	W = twheel_create(0);
}

/* ---- stats, check, version ---------------------------------------------------------- */

static void stats_count_what_happened(void **state)
{
	(void)state;
	struct rec_timer a, b;
	struct twheel_stats st;
	rec_init(&a, 1);
	rec_init(&b, 2);
	assert_int_equal(twheel_get_stats(NULL, &st), -EINVAL);
	assert_int_equal(twheel_get_stats(W, NULL), -EINVAL);
	twheel_add(W, &a.t, 100000);
	twheel_mod(W, &b.t, 5);
	twheel_mod(W, &b.t, 6);
	twheel_del(W, &b.t);
	adv(100000);
	twheel_get_stats(W, &st);
	assert_int_equal(st.adds, 2);
	assert_int_equal(st.mods, 1);
	assert_int_equal(st.dels, 1);
	assert_int_equal(st.fires, 1);
	assert_int_equal(st.advances, 1);
	assert_true(st.cascades >= 1 && st.cascaded >= 1);
}

static void check_reports_corruption(void **state)
{
	(void)state;
	struct rec_timer a;
	char msg[256];
	rec_init(&a, 1);
	twheel_add(W, &a.t, 1000);
	check_ok();
	assert_int_equal(twheel_check(NULL, msg, sizeof(msg)), -EINVAL);
	a.t.expires = 3; /* scribbled on: now in the wrong slot */
	int rc = twheel_check(W, msg, sizeof(msg));
	assert_true(rc < 0 && rc != -EINVAL);
	assert_true(strlen(msg) > 0);
	print_message("twheel_check says: %s\n", msg);
	a.t.expires = 1000;
	check_ok();
	a.t.entry.prev = &a.t.entry; /* broken link */
	assert_true(twheel_check(W, NULL, 0) < 0);
	a.t.entry.prev = a.t.entry.next; /* the slot head: it is alone there */
	check_ok();
}

static void inspect_reports_levels(void **state)
{
	(void)state;
	struct twheel_level_info li[TWHEEL_LEVELS];
	struct rec_timer a, b, c, d;
	size_t due = 99;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	rec_init(&d, 4);
	assert_int_equal(twheel_inspect(NULL, li, TWHEEL_LEVELS, &due), -EINVAL);
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS - 1, &due), -EINVAL);
	adv(1000);
	twheel_add(W, &a.t, 1010);    /* level 0 */
	twheel_add(W, &b.t, 1000 + 5000); /* level 1: distance < 2^14 */
	twheel_add(W, &c.t, TW_TICK_MAX); /* level 10 */
	twheel_add(W, &d.t, 10);      /* due */
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	assert_int_equal(due, 1);
	assert_int_equal(li[0].slots, 256);
	assert_int_equal(li[1].slots, 64);
	assert_int_equal(li[10].slots, 4);
	assert_int_equal(li[0].timers, 1);
	assert_int_equal(li[0].slots_used, 1);
	assert_true(li[0].next == 1010);
	assert_int_equal(li[1].timers, 1);
	assert_true(li[1].span == 256 && li[1].next <= 6000 && li[1].next > 1000);
	assert_int_equal(li[10].timers, 1);
	assert_true(li[10].span == UINT64_C(1) << 62);
	assert_int_equal(li[5].timers, 0);
	assert_true(li[5].next == TW_TICK_MAX);
	assert_true(twheel_next_expiry(W) <= 10);
	twheel_del(W, &c.t);
}

static void version_matches_macros(void **state)
{
	(void)state;
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", TWHEEL_VERSION_MAJOR, TWHEEL_VERSION_MINOR,
		 TWHEEL_VERSION_PATCH);
	assert_string_equal(twheel_version(), want);
	assert_string_equal(twheel_version(), TWHEEL_VERSION_STRING);
	assert_int_equal(twheel_version_number(),
			 TWHEEL_VERSION_MAJOR * 10000 + TWHEEL_VERSION_MINOR * 100 + TWHEEL_VERSION_PATCH);
}

/* ---- twheel_move ------------------------------------------------------------- */

static void move_not_pending_copies_the_timer(void **state)
{
	(void)state;
	struct rec_timer a, b;
	rec_init(&a, 1);
	rec_init(&b, 2);
	a.t.expires = 77;
	a.t.flags = 5;
	/* no wheel needed for a timer that is not pending */
	assert_int_equal(twheel_move(NULL, &b.t, &a.t), 0);
	assert_int_equal(b.t.expires, 77);
	assert_int_equal(b.t.flags, 5);
	assert_ptr_equal(b.t.func, on_rec);
	assert_false(tw_timer_pending(&a.t));
	assert_false(tw_timer_pending(&b.t));
	assert_int_equal(twheel_add(W, &b.t, 3), 0);
	assert_int_equal(adv(3), 1);
	assert_int_equal(b.fired, 1);
}

static void move_pending_keeps_its_place_and_fires_once(void **state)
{
	(void)state;
	struct rec_timer a, b, c, moved;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	rec_init(&moved, 2);
	assert_int_equal(twheel_add(W, &a.t, 300), 0);
	assert_int_equal(twheel_add(W, &b.t, 300), 0);
	assert_int_equal(twheel_add(W, &c.t, 300), 0);
	assert_int_equal(twheel_move(W, &moved.t, &b.t), 1);
	assert_false(tw_timer_pending(&b.t));
	assert_true(tw_timer_pending(&moved.t));
	assert_int_equal(tw_timer_expires(&moved.t), 300);
	assert_int_equal(twheel_count(W), 3);
	check_ok();
	/* the old address is free: deleting it is harmless, the moved one stays */
	assert_int_equal(twheel_del(W, &b.t), 0);
	assert_int_equal(adv(299), 0);
	assert_int_equal(adv(300), 3);
	assert_int_equal(a.fired + b.fired + c.fired + moved.fired, 3);
	assert_int_equal(moved.fired, 1);
	assert_int_equal(b.fired, 0);
	check_ok();
}

static void move_errors(void **state)
{
	(void)state;
	struct rec_timer a, b;
	rec_init(&a, 1);
	rec_init(&b, 2);
	assert_int_equal(twheel_move(W, NULL, &a.t), -EINVAL);
	assert_int_equal(twheel_move(W, &a.t, NULL), -EINVAL);
	assert_int_equal(twheel_add(W, &a.t, 10), 0);
	assert_int_equal(twheel_move(NULL, &b.t, &a.t), -EINVAL); /* pending needs its wheel */
	assert_int_equal(twheel_move(W, &a.t, &a.t), 1);         /* to itself: nothing */
	/* to itself without its wheel: still refused, as twheel_loop_move() does */
	assert_int_equal(twheel_move(NULL, &a.t, &a.t), -EINVAL);
	assert_int_equal(twheel_move(NULL, &b.t, &b.t), 0); /* not pending: @w may be NULL */
	assert_int_equal(twheel_add(W, &b.t, 20), 0);
	assert_int_equal(twheel_move(W, &b.t, &a.t), -EBUSY);    /* would lose b */
	assert_true(tw_timer_pending(&a.t));
	assert_true(tw_timer_pending(&b.t));
	assert_int_equal(adv(20), 2);
	assert_int_equal(a.fired + b.fired, 2);
}

/* A C owner whose timers live in an array that grows: move each, free the old. */
static void move_into_a_grown_array(void **state)
{
	(void)state;
	enum { N = 300 };
	struct rec_timer *v = calloc(N, sizeof(*v));
	assert_non_null(v);
	for (int i = 0; i < N; i++) {
		rec_init(&v[i], i);
		assert_int_equal(twheel_add(W, &v[i].t, 1 + (tw_tick_t)i * 37), 0);
	}
	struct rec_timer *bigger = calloc(2 * N, sizeof(*bigger));
	assert_non_null(bigger);
	for (int i = 0; i < N; i++) {
		rec_init(&bigger[i], i);
		assert_int_equal(twheel_move(W, &bigger[i].t, &v[i].t), 1);
	}
	free(v);
	check_ok();
	assert_int_equal(adv(N * 37), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(bigger[i].fired, 1);
	for (int i = 1; i < N; i++)
		assert_true(order[i - 1] < order[i]); /* distinct expiries, in order */
	free(bigger);
}

/* From a callback, move a timer that is due in the same advance. */
static struct rec_timer move_dst;

static void act_move_other(struct rec_timer *r)
{
	rec_init(&move_dst, r->other->id);
	assert_int_equal(twheel_move(W, &move_dst.t, &r->other->t), 1);
}

static void move_from_callback_while_its_slot_fires(void **state)
{
	(void)state;
	struct rec_timer a, b;
	rec_init(&a, 1);
	rec_init(&b, 2);
	/* equal expiries: whichever fires first moves the other one */
	a.action = act_move_other;
	a.other = &b;
	b.action = act_move_other;
	b.other = &a;
	assert_int_equal(twheel_add(W, &a.t, 5), 0);
	assert_int_equal(twheel_add(W, &b.t, 5), 0);
	assert_int_equal(adv(10), 2);
	assert_int_equal(a.fired + b.fired, 1);
	assert_int_equal(move_dst.fired, 1);
	assert_int_equal(twheel_count(W), 0);
	check_ok();
}

/*
 * Destroying a wheel with pending timers is legal (they are unlinked) and
 * some tests do it on purpose; a debug_checks build reports it, so accept
 * that one report here and fail on any other.
 */
static void misuse(const char *what)
{
	if (!strstr(what, "twheel_destroy()"))
		fail_msg("unexpected misuse report: %s", what);
}

/* ---- parking ------------------------------------------------------------------ */

static int parked_drained;
static void count_drained(struct tw_timer *t, void *arg)
{
	(void)arg;
	assert_false(tw_timer_pending(t));
	parked_drained++;
}

/* Hands one timer of a pair back and cancels the other (->other). */
static void drain_cancels_pair(struct tw_timer *t, void *arg)
{
	(void)arg;
	count_drained(t, NULL);
	assert_int_equal(twheel_del(W, &tw_container_of(t, struct rec_timer, t)->other->t), 1);
}

/*
 * A parked timer is pending (count, del, mod, drain see it) but never
 * fires, and the wheel says work is due while one waits; unpark hands them
 * back, not pending, with their value.
 */
static void park_is_pending_never_fires(void **state)
{
	struct rec_timer r[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		rec_init(&r[i], i);
	assert_int_equal(twheel_add(W, &r[0].t, 5000), 0);
	assert_int_equal(twheel_next_expiry(W) > 0, 1);
	assert_int_equal(twheel_park(W, &r[1].t, 111), 0);
	assert_int_equal(twheel_park(W, &r[0].t, 222), 1); /* leaves its slot */
	assert_int_equal(twheel_park(W, &r[2].t, 333), 0);
	assert_int_equal(twheel_park(W, &r[1].t, 444), 1); /* to the back */
	assert_true(tw_timer_pending(&r[0].t));
	assert_int_equal(twheel_count(W), 3);
	assert_int_equal(twheel_next_expiry(W), 0);
	check_ok();
	assert_int_equal(adv(100000), 0);
	assert_int_equal(twheel_next_expiry(W), 100000);
	assert_int_equal(twheel_del(W, &r[2].t), 1);
	assert_int_equal(twheel_del(W, &r[2].t), 0);
	assert_int_equal(twheel_mod(W, &r[0].t, 100005), 1); /* placed by mod */
	check_ok();
	assert_ptr_equal(twheel_unpark(W), &r[1].t);
	assert_false(tw_timer_pending(&r[1].t));
	assert_int_equal(r[1].t.expires, 444);
	assert_null(twheel_unpark(W));
	assert_int_equal(twheel_count(W), 1);
	assert_int_equal(adv(100005), 1);
	assert_int_equal(r[0].fired, 1);
	assert_int_equal(twheel_park(W, &r[1].t, 1), 0);
	assert_int_equal(twheel_park(W, &r[3].t, 2), 0);
	check_ok();
	parked_drained = 0;
	twheel_drain(W, count_drained, NULL);
	assert_int_equal(parked_drained, 2);
	assert_int_equal(twheel_count(W), 0);
	assert_int_equal(twheel_park(W, &r[1].t, 1), 0); /* destroy unlinks it */
	assert_int_equal(twheel_park(NULL, &r[2].t, 1), -EINVAL);
	assert_int_equal(twheel_park(W, NULL, 1), -EINVAL);
	assert_null(twheel_unpark(NULL));
	r[3].t.func = NULL;
	assert_int_equal(twheel_park(W, &r[3].t, 1), -EINVAL);
	twheel_del(W, &r[1].t);
}

static tw_tick_t place_at_value(uint64_t value, void *arg)
{
	(void)arg;
	return value;
}

/*
 * A timer pending far off (here on level 1) is parked in place: parking it
 * and placing it at a later expiry leave it linked where it was, between
 * the same neighbours (what a re-arm by deadline costs: no other timer is
 * written), and it fires at its new expiry all the same. The wheel parks
 * 64 in place between two placements; the 65th goes to the parked list.
 */
static void park_in_place_keeps_links(void **state)
{
	static struct rec_timer r[67];
	struct tw_list *next, *prev;

	(void)state;
	for (int i = 0; i < 3; i++) {
		rec_init(&r[i], i);
		assert_int_equal(twheel_add(W, &r[i].t, 5000), 0);
	}
	next = r[1].t.entry.next;
	prev = r[1].t.entry.prev;
	assert_int_equal(twheel_park(W, &r[1].t, 7000), 1);
	assert_ptr_equal(r[1].t.entry.next, next);
	assert_ptr_equal(r[1].t.entry.prev, prev);
	assert_int_equal(r[1].t.expires, 7000);
	assert_int_equal(twheel_park(W, &r[1].t, 7001), 1); /* a new value, still in place */
	assert_ptr_equal(r[1].t.entry.next, next);
	check_ok();
	assert_int_equal(twheel_place(W, place_at_value, NULL), 1);
	assert_ptr_equal(r[1].t.entry.next, next);
	assert_ptr_equal(r[1].t.entry.prev, prev);
	assert_int_equal(r[1].t.expires, 7001);
	check_ok();
	assert_int_equal(adv(7000), 2);
	assert_int_equal(adv(7001), 1);
	assert_int_equal(r[1].fired, 1);

	/* 64 in place, then the table is full: the 65th leaves its slot */
	for (int i = 0; i < 65; i++) {
		rec_init(&r[i], i);
		assert_int_equal(twheel_add(W, &r[i].t, 9000), 0);
	}
	for (int i = 0; i < 65; i++) {
		next = r[i].t.entry.next;
		assert_int_equal(twheel_park(W, &r[i].t, 9500 + (tw_tick_t)i), 1);
		if (i < 64)
			assert_ptr_equal(r[i].t.entry.next, next);
		else
			assert_ptr_not_equal(r[i].t.entry.next, next);
	}
	check_ok();
	assert_int_equal(twheel_place(W, place_at_value, NULL), 65);
	check_ok();
	assert_int_equal(adv(9564), 65);
	for (int i = 0; i < 65; i++) {
		assert_int_equal(r[i].fired, 1);
		assert_int_equal(r[i].t.expires, 9500 + i);
	}
	for (int i = 1; i < norder; i++)
		assert_true(order_exp[i - 1] <= order_exp[i]);
}

/*
 * twheel_park_hint(): a timer that is not pending is linked at once in the
 * slot of its hint (above level 0), and the placement at an expiry at or
 * after the hint only stores it (same links); one placed before its hint
 * (the clock stepped back) moves and fires exactly on its tick, as does
 * one whose hint's slot an advance cascades before the placement. A hint
 * on the first level or at the wheel's time is no hint. Parked so, a timer
 * is pending: del, mod, drain and unpark see it; 64 between two
 * placements, the 65th waits on the parked list.
 */
static void park_hint_links_at_once(void **state)
{
	static struct rec_timer r[66];
	struct tw_list *next, *prev;
	struct twheel_level_info li[TWHEEL_LEVELS];
	size_t due;

	(void)state;
	for (int i = 0; i < 66; i++)
		rec_init(&r[i], i);
	/* at the hint's slot (level 1) at once, placed by a store */
	assert_int_equal(twheel_park_hint(W, &r[0].t, 7000, 6990), 0);
	assert_true(tw_timer_pending(&r[0].t));
	assert_int_equal(r[0].t.expires, 7000);
	assert_int_equal(twheel_count(W), 1);
	assert_int_equal(twheel_next_expiry(W), 0);
	assert_int_equal(twheel_inspect(W, li, TWHEEL_LEVELS, &due), 0);
	assert_int_equal(li[1].timers + li[0].timers + due, 0); /* parked: counted nowhere */
	next = r[0].t.entry.next;
	prev = r[0].t.entry.prev;
	assert_non_null(next);
	check_ok();
	assert_int_equal(twheel_place(W, place_at_value, NULL), 1);
	assert_ptr_equal(r[0].t.entry.next, next);
	assert_ptr_equal(r[0].t.entry.prev, prev);
	assert_int_equal(r[0].t.expires, 7000);
	check_ok();
	assert_int_equal(adv(6999), 0);
	assert_int_equal(adv(7000), 1);
	assert_int_equal(r[0].fired, 1);

	/* the clock stepped back: placed before its hint, exact all the same */
	assert_int_equal(twheel_park_hint(W, &r[1].t, 7300, 20000), 0);
	check_ok();
	assert_int_equal(twheel_place(W, place_at_value, NULL), 1);
	check_ok();
	assert_int_equal(adv(7299), 0);
	assert_int_equal(adv(7300), 1);
	assert_int_equal(r[1].fired, 1);

	/* the hint's slot cascaded before the placement: parked, never fired */
	assert_int_equal(twheel_park_hint(W, &r[2].t, 9000, 7700), 0);
	assert_int_equal(twheel_park_hint(W, &r[3].t, 9000, 7700), 0);
	assert_int_equal(adv(7690), 0); /* passes 7680, that slot's cascade */
	check_ok();
	assert_int_equal(twheel_next_expiry(W), 7690);
	assert_int_equal(twheel_del(W, &r[3].t), 1); /* cancelled while parked */
	assert_int_equal(twheel_place(W, place_at_value, NULL), 1);
	assert_int_equal(adv(8999), 0);
	assert_int_equal(adv(9000), 1);
	assert_int_equal(r[2].fired, 1);
	assert_int_equal(r[3].fired, 0);

	/* del, mod (placed at once), drain and unpark of timers parked so */
	assert_int_equal(twheel_park_hint(W, &r[4].t, 11000, 10900), 0);
	assert_int_equal(twheel_park_hint(W, &r[5].t, 11000, 10900), 0);
	assert_int_equal(twheel_park_hint(W, &r[6].t, 12000, 11900), 0);
	assert_int_equal(twheel_park_hint(W, &r[7].t, 12000, 11900), 0);
	assert_int_equal(twheel_park_hint(W, &r[8].t, 9100, 9001), 0); /* first level: no hint */
	assert_int_equal(twheel_park_hint(W, &r[9].t, 9100, 9000), 0); /* the wheel's time: none */
	assert_int_equal(twheel_count(W), 6);
	check_ok();
	assert_int_equal(twheel_del(W, &r[4].t), 1);
	assert_int_equal(twheel_del(W, &r[4].t), 0);
	assert_int_equal(twheel_mod(W, &r[5].t, 9500), 1);
	assert_int_equal(r[5].t.expires, 9500);
	assert_int_equal(twheel_park_hint(W, &r[6].t, 12500, 1), 1); /* a new value */
	assert_int_equal(r[6].t.expires, 12500);
	check_ok();
	assert_ptr_equal(twheel_unpark(W), &r[7].t); /* the table (its last first), then the list */
	assert_false(tw_timer_pending(&r[7].t));
	assert_int_equal(r[7].t.expires, 12000);
	assert_ptr_equal(twheel_unpark(W), &r[6].t);
	assert_int_equal(r[6].t.expires, 12500);
	assert_int_equal(twheel_count(W), 3);
	check_ok();
	parked_drained = 0;
	twheel_drain(W, count_drained, NULL);
	assert_int_equal(parked_drained, 3);
	assert_int_equal(r[8].t.expires, 9100);
	assert_int_equal(twheel_count(W), 0);
	check_ok();

	/* a drain whose fn cancels the other timer of its object, parked in
	 * place (then frees the object): the table stays right for the parks,
	 * dels and unparks that follow */
	r[10].other = &r[11];
	r[11].other = &r[10];
	assert_int_equal(twheel_park_hint(W, &r[10].t, 11000, 10900), 0);
	assert_int_equal(twheel_park_hint(W, &r[11].t, 12000, 11900), 0);
	parked_drained = 0;
	twheel_drain(W, drain_cancels_pair, NULL);
	assert_int_equal(parked_drained, 1);
	assert_false(tw_timer_pending(&r[10].t) || tw_timer_pending(&r[11].t));
	check_ok();
	assert_int_equal(twheel_park_hint(W, &r[12].t, 13000, 12900), 0);
	assert_int_equal(twheel_park_hint(W, &r[13].t, 14000, 13900), 0);
	assert_int_equal(twheel_del(W, &r[13].t), 1);
	check_ok();
	assert_ptr_equal(twheel_unpark(W), &r[12].t);
	assert_null(twheel_unpark(W));
	assert_int_equal(twheel_count(W), 0);
	check_ok();

	/* 64 in place, each alone in its slot; the 65th on the parked list */
	for (int i = 0; i < 65; i++) {
		rec_init(&r[i], i);
		tw_tick_t h = i < 64 ? 9000 + (UINT64_C(1) << 14) * (tw_tick_t)(i + 1) : UINT64_C(1) << 30;
		assert_int_equal(twheel_park_hint(W, &r[i].t, h + 7, h), 0);
	}
	check_ok();
	for (int i = 0; i < 65; i++)
		assert_true(r[i].t.entry.next == r[i].t.entry.prev); /* alone, in a slot or the list */
	next = r[64].t.entry.next;
	struct tw_list *first = r[0].t.entry.next;
	assert_int_equal(twheel_place(W, place_at_value, NULL), 65);
	check_ok();
	assert_ptr_equal(r[0].t.entry.next, first); /* stayed */
	assert_ptr_not_equal(r[64].t.entry.next, next); /* left the list for its slot */
	assert_int_equal(adv(9000 + (UINT64_C(1) << 14) + 6), 0);
	assert_int_equal(adv(9000 + (UINT64_C(1) << 14) + 7), 1);
	assert_int_equal(r[0].fired, 1);
	assert_int_equal(adv(UINT64_C(1) << 31), 64);
	for (int i = 0; i < 65; i++)
		assert_int_equal(r[i].fired, 1);
	for (int i = 1; i < norder; i++)
		assert_true(order_exp[i - 1] <= order_exp[i]);

	/* destroy unlinks one parked so (teardown) */
	assert_int_equal(twheel_park_hint(W, &r[65].t, UINT64_C(1) << 32, UINT64_C(1) << 32), 0);
	assert_int_equal(twheel_park_hint(NULL, &r[65].t, 1, 1 << 20), -EINVAL);
	assert_int_equal(twheel_park_hint(W, NULL, 1, 1 << 20), -EINVAL);
	r[64].t.func = NULL;
	assert_int_equal(twheel_park_hint(W, &r[64].t, 1, UINT64_C(1) << 33), -EINVAL);
	check_ok();
}

/* twheel__catch_up_cascades() (twheel-uring's, not API): cascades on the
 * way to its target, stops just before the first expiry, fires nothing. */
static void catch_up_cascades_fires_nothing(void **state)
{
	struct rec_timer a, b, c, d, e;

	(void)state;
	rec_init(&a, 1);
	rec_init(&b, 2);
	rec_init(&c, 3);
	rec_init(&d, 4);
	rec_init(&e, 5);
	assert_int_equal(twheel_add(W, &a.t, 302), 0); /* level 1, cascade at 256 */
	assert_true(twheel__catch_up_cascades(W, 300));
	assert_int_equal(twheel_now(W), 300);
	assert_int_equal(twheel_next_expiry(W), 302); /* on level 0 now */
	assert_int_equal(a.fired, 0);
	check_ok();
	assert_int_equal(adv(302), 1);
	/* two on one level-1 slot: stops just before the first one's tick */
	assert_int_equal(twheel_add(W, &b.t, 600), 0);
	assert_int_equal(twheel_add(W, &c.t, 530), 0);
	assert_false(twheel__catch_up_cascades(W, 302)); /* not after now */
	assert_true(twheel__catch_up_cascades(W, 700));
	assert_int_equal(twheel_now(W), 529);
	assert_int_equal(twheel_next_expiry(W), 530);
	assert_int_equal(b.fired + c.fired, 0);
	check_ok();
	assert_int_equal(adv(700), 2);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 2);
	/* an expiry on a cascade tick: cascaded onto it, stops before it */
	assert_int_equal(twheel_add(W, &d.t, 1024), 0);
	assert_true(twheel__catch_up_cascades(W, 1100));
	assert_int_equal(twheel_now(W), 1023);
	assert_int_equal(d.fired, 0);
	check_ok();
	assert_int_equal(adv(1024), 1);
	/* a timer due (armed in the past): nothing moves */
	assert_int_equal(twheel_add(W, &e.t, 1000), 0);
	assert_false(twheel__catch_up_cascades(W, 2000));
	assert_int_equal(twheel_now(W), 1024);
	assert_false(twheel__catch_up_cascades(NULL, 2000));
	assert_int_equal(adv(1024), 1);
	/* an empty wheel: straight to the target */
	assert_true(twheel__catch_up_cascades(W, 5000));
	assert_int_equal(twheel_now(W), 5000);
	check_ok();
}

int main(void)
{
	twheel_set_misuse_handler(misuse);
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(timer_init_leaves_not_pending),
		T(timer_is_at_most_40_bytes),
		T(zeroed_timer_is_refused),
		T(destroy_from_callback_does_nothing),
		T(drain_fn_is_a_callback),
		T(park_is_pending_never_fires),
		T(park_in_place_keeps_links),
		T(park_hint_links_at_once),
		T(create_starts_at_now),
		T(add_errors),
		T(add_in_past_or_at_now_fires_on_next_advance),
		T(mod_returns_whether_it_was_pending),
		T(mod_within_slot_only_stores_expiry),
		T(mod_later_moves_at_its_slots_cascade),
		T(chase_bound_counts_timers_rearmed_later),
		T(del_returns_whether_it_was_pending),
		T(advance_errors),
		T(catch_up_cascades_fires_nothing),
		T(advance_from_callback_is_ebusy),
		T(fires_in_expiry_order_exactly_on_tick),
		T(exact_at_every_level_boundary),
		T(wheel_near_end_of_time),
		T(expiry_at_tick_max_from_zero),
		T(jumps_of_one_and_two_to_the_forty),
		T(idle_skip_costs_few_steps),
		T(callback_rearms_itself_into_the_past),
		T(callback_rearms_itself_into_the_future),
		T(callback_deletes_timer_due_in_same_advance),
		T(callback_arms_same_slot_next_round_and_deletes_last_fired),
		T(callback_modifies_others),
		T(callback_frees_its_own_memory),
		T(timer_armed_in_callback_fires_in_later_advance),
		T(next_expiry_is_exact_in_level_zero_and_bounded_beyond),
		T(next_expiry_chase_is_bounded_by_levels),
		T(next_expiry_from_callback_sees_timers_of_same_advance),
		T(next_expiry_from_callback_is_not_hidden_by_due_list),
		T(drain_hands_back_each_timer_once),
		T(drain_fn_rearms_timer_not_handed_yet),
		T(destroy_unlinks_without_firing),
		T(stats_count_what_happened),
		T(check_reports_corruption),
		T(inspect_reports_levels),
		T(version_matches_macros),
		T(move_not_pending_copies_the_timer),
		T(move_pending_keeps_its_place_and_fires_once),
		T(move_errors),
		T(move_into_a_grown_array),
		T(move_from_callback_while_its_slot_fires),
	};
	return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
