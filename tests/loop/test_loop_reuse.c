/* SPDX-License-Identifier: MIT */
/*
 * Timer memory handed back across threads: worker threads free() (or
 * memset and re-initialise and schedule again) a timer's heap memory the
 * instant the API says they may, while the loop thread arms, re-arms,
 * deletes and fires it and an executor thread runs it:
 *
 *   - as soon as tw_loop_timer_busy() turns false, polled while the loop
 *     thread adds, mods and deletes the timer (from posted work) or fires
 *     it, and after a cancel that won;
 *   - as soon as twheel_loop_cancel() returns -ENOENT because the loop
 *     thread deleted the timer first;
 *   - from inside the release hook (the second test case);
 *   - executor timers: a one-shot freed by its own callback or after busy()
 *     turns false, a periodic one cancelled and freed after busy();
 *   - a periodic callback that deletes and frees its own timer.
 *
 * Any access by the loop to memory it gave back is a use-after-free (ASan)
 * or a data race with free()/memset() (TSan). Every schedule is accounted
 * for exactly once: a one-shot by one fire, one delete that returned 1 or
 * one cancel that returned 1; a periodic timer by one release, its own
 * delete, or the drain at the end. Runs in the 'tsan' suite too, and in
 * both modes (TWHEEL_TEST_FALLBACK=1: fallback mode).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../common/check.h" /* REQUIRE: cmocka's asserts are not thread-safe */
#include "common.h"

#define NW 2                  /* worker threads */
#define TICK (50 * US)
#define RUN_NS (500 * MS)     /* per test case */
#define WAIT_NS (60000 * MS)  /* a condition that takes longer is a hang */
#define FAR (10000 * MS)      /* a deadline that never comes during a round */
#define MAX_SELFDEL 4         /* self-deleting periodic timers in flight per worker */

enum round_kind {
	R_ADD_DEL,        /* loop: add, del at once (returns 1) */
	R_ADD_FIRE,       /* loop: add; it fires */
	R_ADD_MOD,        /* loop: add far, mod near; it fires */
	R_ADD_LATER_DEL,  /* loop: add far; a later work item deletes it */
	R_ADD_RACE_DEL,   /* loop: add near; a later work item's del races the fire */
	R_SCHED_FIRE,     /* worker: schedule; it fires */
	R_SCHED_CANCEL,   /* worker: schedule, cancel (won or lost to the fire) */
	R_CANCEL_VS_DEL,  /* worker: schedule far, cancel racing the loop's del */
	R_X_ONESHOT_SELF, /* executor one-shot that frees itself */
	R_X_ONESHOT_POLL, /* executor one-shot freed once busy() is false */
	R_X_PERIODIC,     /* executor periodic, cancelled after a few runs */
	R_P_CANCEL,       /* loop periodic, cancelled after a few runs */
	R_P_SELFDEL,      /* loop periodic that deletes and frees itself */
	R_NKINDS
};

struct worker;

/* One timer and its work items, in malloc()ed memory. */
struct obj {
	struct tw_loop_timer t;
	struct tw_loop_work w1, w2;
	struct worker *wk;
	uint32_t round;
	uint32_t kind;
	uint64_t delay;
	uint32_t runs;        /* periodic: runs so far (atomic: read by the worker) */
	uint32_t stop_at;     /* R_P_SELFDEL: the run that deletes the timer */
	uint64_t scratch[8];  /* written by periodic runs */
};

struct worker {
	int id;
	uint64_t seed;
	uint32_t round;
	/* written by the loop or executor thread: atomic */
	uint32_t started, done2;
	int del_ret;
	uint64_t fires;         /* one-shot callbacks that ran */
	uint64_t selfdel;       /* periodic timers that deleted themselves */
	uint64_t hook_released; /* releases seen by a freeing hook */
	/* the worker's own counts */
	uint64_t oneshot, expect_fires, del_won, cancel_won;
	uint64_t periodic, per_cancelled, selfdel_sched, drained;
	uint64_t enoent, cancel_lost;  /* outcomes of the races */
	uint64_t kinds[R_NKINDS];
	pthread_t th;
};

static struct worker workers[NW];
static struct twheel_loop *g_loop;
static bool g_hook_frees;      /* the release hook frees the timer */
static uint64_t g_hook_calls;  /* atomic: releases seen by a counting hook */
static uint64_t g_end;         /* workers stop starting rounds after this */

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define INC(p) __atomic_fetch_add((p), 1, __ATOMIC_ACQ_REL)

/* Spin (yielding now and then) until @cond; a hang is a failure. */
#define WAIT_FOR(cond)                                                          \
	do {                                                                    \
		uint64_t t0_ = mono_now();                                      \
		unsigned n_ = 0;                                                \
		while (!(cond)) {                                               \
			if (++n_ % 64 == 0) {                                   \
				REQUIRE(mono_now() - t0_ < WAIT_NS, "hang: %s", #cond); \
				sched_yield();                                  \
			}                                                       \
		}                                                               \
	} while (0)

/* ---- Callbacks ------------------------------------------------------------ */

/*
 * A one-shot callback whose timer the worker frees once busy() is false:
 * it must not touch the timer, so the worker's identity is in the function.
 */
static void fire_w0(struct tw_loop_timer *t)
{
	(void)t;
	INC(&workers[0].fires);
}

static void fire_w1(struct tw_loop_timer *t)
{
	(void)t;
	INC(&workers[1].fires);
}

static void (*const fire_fn[NW])(struct tw_loop_timer *) = { fire_w0, fire_w1 };

/* An executor one-shot that owns its timer once it runs: frees it. */
static void self_free_fn(struct tw_loop_timer *t)
{
	struct obj *o = tw_container_of(t, struct obj, t);
	struct worker *wk = o->wk;

	memset(o, 0x5a, sizeof(*o));
	free(o);
	INC(&wk->fires);
}

/* A periodic run: the loop owns the timer, so it may be read and written. */
static void periodic_fn(struct tw_loop_timer *t)
{
	struct obj *o = tw_container_of(t, struct obj, t);
	uint32_t runs = o->runs + 1;
	unsigned i;

	for (i = 0; i < 8; i++)
		o->scratch[i] += runs;
	STORE(&o->runs, runs);
	if (o->kind == R_P_SELFDEL && runs == o->stop_at) {
		struct worker *wk = o->wk;
		int r = twheel_loop_del(g_loop, t);

		REQUIRE(r == 1, "periodic del of itself returned %d", r);
		memset(o, 0x5a, sizeof(*o));
		free(o);
		INC(&wk->selfdel);
	}
}

static void release_fn(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	if (g_hook_frees) {
		struct obj *o = tw_container_of(t, struct obj, t);
		struct worker *wk = o->wk;

		memset(o, 0x5a, sizeof(*o));
		free(o);
		INC(&wk->hook_released);
	} else {
		/* a worker frees it once busy() is false: do not touch it */
		INC(&g_hook_calls);
	}
}

static void drain_fn(struct tw_loop_timer *t, void *arg)
{
	struct obj *o = tw_container_of(t, struct obj, t);

	(void)arg;
	REQUIRE(o->kind == R_P_SELFDEL, "drained a timer of round kind %u", o->kind);
	o->wk->drained++;
	free(o);
}

/* First work item: what the loop thread does with the timer. Everything it
 * needs is read before the call that may hand the timer back. */
static void work1_fn(struct tw_loop_work *w)
{
	struct obj *o = tw_container_of(w, struct obj, w1);
	struct worker *wk = o->wk;
	struct tw_loop_timer *t = &o->t;
	uint32_t round = o->round, kind = o->kind;
	uint64_t delay = o->delay;
	int r;

	switch (kind) {
	case R_ADD_DEL:
		r = twheel_loop_add(g_loop, t, delay);
		REQUIRE(r == 0, "add returned %d", r);
		STORE(&wk->started, round);
		r = twheel_loop_del(g_loop, t); /* the worker may free it now */
		REQUIRE(r == 1, "del of an armed timer returned %d", r);
		break;
	case R_ADD_FIRE:
	case R_ADD_RACE_DEL:
		r = twheel_loop_add(g_loop, t, delay);
		REQUIRE(r == 0, "add returned %d", r);
		STORE(&wk->started, round);
		break;
	case R_ADD_MOD:
		r = twheel_loop_add(g_loop, t, FAR);
		REQUIRE(r == 0, "add returned %d", r);
		STORE(&wk->started, round);
		r = twheel_loop_mod(g_loop, t, delay);
		REQUIRE(r == 1, "mod of an armed timer returned %d", r);
		break;
	case R_ADD_LATER_DEL:
		r = twheel_loop_add(g_loop, t, FAR);
		REQUIRE(r == 0, "add returned %d", r);
		STORE(&wk->started, round);
		break;
	default:
		REQUIRE(0, "work1 for round kind %u", kind);
	}
}

/* Second work item: a delete from a later iteration (or the same one). */
static void work2_fn(struct tw_loop_work *w)
{
	struct obj *o = tw_container_of(w, struct obj, w2);
	struct worker *wk = o->wk;
	uint32_t round = o->round;
	int r = twheel_loop_del(g_loop, &o->t);

	/* @o may be freed from here on */
	STORE(&wk->del_ret, r);
	STORE(&wk->done2, round);
}

/* ---- The executor: one thread, a queue ----------------------------------- */

#define XQ 1024
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tw_loop_timer *q[XQ];
	unsigned head, tail;
	bool quit;
	pthread_t th;
} xq = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void executor_fn(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&xq.mu);
	REQUIRE(xq.tail - xq.head < XQ, "executor queue full");
	xq.q[xq.tail++ % XQ] = t;
	pthread_cond_signal(&xq.cv);
	pthread_mutex_unlock(&xq.mu);
}

static void *executor_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct tw_loop_timer *t;

		pthread_mutex_lock(&xq.mu);
		while (xq.head == xq.tail && !xq.quit)
			pthread_cond_wait(&xq.cv, &xq.mu);
		if (xq.head == xq.tail) {
			pthread_mutex_unlock(&xq.mu);
			return NULL;
		}
		t = xq.q[xq.head++ % XQ];
		pthread_mutex_unlock(&xq.mu);
		REQUIRE(tw_loop_timer_call(t) == 0, "tw_loop_timer_call refused a hand-off");
	}
}

/* ---- Workers ----------------------------------------------------------------- */

static void spin_until_idle(struct tw_loop_timer *t)
{
	WAIT_FOR(!tw_loop_timer_busy(t));
}

/* Give the memory back: free it, or scrub it for the next round. */
static struct obj *let_go(struct worker *wk, struct obj *o)
{
	if (splitmix64(&wk->seed) & 1) {
		memset(o, 0x5a, sizeof(*o));
		free(o);
		return NULL;
	}
	memset(o, 0xa5, sizeof(*o));
	return o;
}

static void wait_fires(struct worker *wk)
{
	WAIT_FOR(LOAD(&wk->fires) >= wk->expect_fires);
	REQUIRE(LOAD(&wk->fires) == wk->expect_fires, "worker %d: %llu fires, %llu expected",
	      wk->id, (unsigned long long)LOAD(&wk->fires),
	      (unsigned long long)wk->expect_fires);
}

static unsigned pick_kind(struct worker *wk)
{
	/* every kind once first, then at random */
	unsigned k = wk->round < R_NKINDS ? wk->round : (unsigned)(splitmix64(&wk->seed) % R_NKINDS);

	for (;;) {
		if (!(k == R_CANCEL_VS_DEL && g_hook_frees) && /* the hook would free it under the del */
		    !(k == R_P_SELFDEL && wk->selfdel_sched - LOAD(&wk->selfdel) >= MAX_SELFDEL))
			return k;
		k = (unsigned)(splitmix64(&wk->seed) % R_NKINDS);
	}
}

/* One round on @o (fresh or scrubbed memory); returns the memory if the
 * worker still has it, NULL once it is freed or handed to someone else. */
static struct obj *round_run(struct worker *wk, struct obj *o)
{
	uint64_t r64 = splitmix64(&wk->seed);
	unsigned kind = pick_kind(wk);
	struct tw_loop_timer *t = &o->t;
	uint32_t runs;
	int r;

	memset(o, 0, sizeof(*o));
	o->wk = wk;
	o->round = ++wk->round;
	o->kind = kind;
	o->delay = (r64 & 0xff) * TICK / 64; /* 0 .. 4 ticks */
	wk->kinds[kind]++;
	tw_loop_work_init(&o->w1, work1_fn);
	tw_loop_work_init(&o->w2, work2_fn);

	switch (kind) {
	case R_ADD_DEL:
	case R_ADD_FIRE:
	case R_ADD_MOD:
	case R_ADD_LATER_DEL:
	case R_ADD_RACE_DEL:
		REQUIRE(tw_loop_timer_init(t, fire_fn[wk->id], 0) == 0, "init");
		REQUIRE(twheel_loop_post(g_loop, &o->w1) == 0, "post");
		wk->oneshot++;
		WAIT_FOR(LOAD(&wk->started) == o->round);
		if (kind == R_ADD_DEL) {
			spin_until_idle(t);
			wk->del_won++;
			return let_go(wk, o);
		}
		if (kind == R_ADD_LATER_DEL) {
			REQUIRE(twheel_loop_post(g_loop, &o->w2) == 0, "post");
			spin_until_idle(t); /* only the delete lets it go */
			wk->del_won++;
			return let_go(wk, o);
		}
		if (kind == R_ADD_RACE_DEL) {
			for (unsigned i = (unsigned)(r64 >> 8) % 2048; i; i--)
				__asm__ __volatile__("" ::: "memory");
			REQUIRE(twheel_loop_post(g_loop, &o->w2) == 0, "post");
			spin_until_idle(t);
			WAIT_FOR(LOAD(&wk->done2) == o->round); /* w2 lives in @o */
			r = LOAD(&wk->del_ret);
			REQUIRE(r == 0 || r == 1, "del returned %d", r);
			if (r)
				wk->del_won++;
			else
				wk->expect_fires++;
			o = let_go(wk, o);
			wait_fires(wk);
			return o;
		}
		spin_until_idle(t);
		wk->expect_fires++;
		o = let_go(wk, o);
		wait_fires(wk);
		return o;

	case R_SCHED_FIRE:
	case R_X_ONESHOT_POLL:
		REQUIRE(tw_loop_timer_init(t, fire_fn[wk->id],
					 kind == R_X_ONESHOT_POLL ? TW_LOOP_EXECUTOR : 0) == 0, "init");
		REQUIRE(twheel_loop_schedule(g_loop, t, o->delay) == 0, "schedule");
		wk->oneshot++;
		wk->expect_fires++;
		spin_until_idle(t);
		o = let_go(wk, o);
		wait_fires(wk);
		return o;

	case R_X_ONESHOT_SELF:
		REQUIRE(tw_loop_timer_init(t, self_free_fn, TW_LOOP_EXECUTOR) == 0, "init");
		REQUIRE(twheel_loop_schedule(g_loop, t, o->delay) == 0, "schedule");
		wk->oneshot++;
		wk->expect_fires++;
		wait_fires(wk); /* the callback freed it */
		return NULL;

	case R_SCHED_CANCEL:
		REQUIRE(tw_loop_timer_init(t, fire_fn[wk->id], 0) == 0, "init");
		REQUIRE(twheel_loop_schedule(g_loop, t, o->delay) == 0, "schedule");
		wk->oneshot++;
		for (unsigned i = (unsigned)(r64 >> 8) % 4096; i; i--)
			__asm__ __volatile__("" ::: "memory");
		r = twheel_loop_cancel(g_loop, t);
		if (r == 1) {
			wk->cancel_won++;
			if (g_hook_frees)
				return NULL;
			spin_until_idle(t);
			return let_go(wk, o);
		}
		REQUIRE(r == 0, "cancel returned %d", r);
		wk->cancel_lost++;
		wk->expect_fires++;
		spin_until_idle(t);
		o = let_go(wk, o);
		wait_fires(wk);
		return o;

	case R_CANCEL_VS_DEL:
		REQUIRE(tw_loop_timer_init(t, fire_fn[wk->id], 0) == 0, "init");
		REQUIRE(twheel_loop_schedule(g_loop, t, FAR) == 0, "schedule");
		REQUIRE(twheel_loop_post(g_loop, &o->w2) == 0, "post");
		wk->oneshot++;
		for (unsigned i = (unsigned)(r64 >> 8) % 8192; i; i--)
			__asm__ __volatile__("" ::: "memory");
		r = twheel_loop_cancel(g_loop, t);
		if (r == -ENOENT) {
			/* the loop's delete won: the memory is ours at once */
			uint32_t round = o->round;

			o = let_go(wk, o);
			WAIT_FOR(LOAD(&wk->done2) == round);
			REQUIRE(LOAD(&wk->del_ret) == 1, "del lost to nothing: %d", LOAD(&wk->del_ret));
			wk->del_won++;
			wk->enoent++;
			return o;
		}
		REQUIRE(r == 1, "cancel of a far timer returned %d", r);
		wk->cancel_won++;
		spin_until_idle(t);
		WAIT_FOR(LOAD(&wk->done2) == o->round); /* w2 lives in @o */
		REQUIRE(LOAD(&wk->del_ret) == 0, "del after a winning cancel returned %d",
		      LOAD(&wk->del_ret));
		return let_go(wk, o);

	case R_X_PERIODIC:
	case R_P_CANCEL:
		/* MISFIRE_ONCE: a loop that is late by a period (2 ticks, 100 us:
		 * easily, under a sanitizer on a busy machine) still runs it, where
		 * the default SKIP would drop every run and the wait below hang */
		REQUIRE(tw_loop_timer_init_periodic(t, periodic_fn, 2 * TICK,
						  (kind == R_X_PERIODIC ? TW_LOOP_EXECUTOR : 0) |
						  (r64 & 0x100 ? TW_LOOP_FIXED_DELAY : 0) |
						  TW_LOOP_MISFIRE_ONCE) == 0,
		      "init");
		REQUIRE(twheel_loop_schedule(g_loop, t, o->delay) == 0, "schedule");
		wk->periodic++;
		WAIT_FOR(LOAD(&o->runs) >= 1 + (r64 >> 16) % 3);
		r = twheel_loop_cancel(g_loop, t);
		REQUIRE(r == 0 || r == 1, "periodic cancel returned %d", r);
		wk->per_cancelled++; /* released either way */
		if (g_hook_frees)
			return NULL;
		runs = LOAD(&o->runs);
		spin_until_idle(t);
		/* a winning cancel: no run after it */
		REQUIRE(r == 0 || LOAD(&o->runs) == runs, "ran after a winning cancel");
		return let_go(wk, o);

	case R_P_SELFDEL:
		REQUIRE(tw_loop_timer_init_periodic(t, periodic_fn, 2 * TICK,
						  (r64 & 0x100 ? TW_LOOP_FIXED_DELAY : 0) |
						  TW_LOOP_MISFIRE_ONCE) == 0, "init");
		o->stop_at = 1 + (uint32_t)((r64 >> 16) % 8);
		REQUIRE(twheel_loop_schedule(g_loop, t, o->delay) == 0, "schedule");
		wk->periodic++;
		wk->selfdel_sched++;
		return NULL; /* it frees itself (or the drain does) */
	}
	REQUIRE(0, "round kind %u", kind);
	return NULL;
}

static void *worker_thread(void *arg)
{
	struct worker *wk = arg;
	struct obj *o = NULL;

	while (mono_now() < g_end || wk->round < R_NKINDS) {
		if (!o) {
			o = malloc(sizeof(*o));
			REQUIRE(o, "malloc");
		}
		o = round_run(wk, o);
	}
	free(o);
	return NULL;
}

static void *loop_thread(void *arg)
{
	int *ret = arg;

	*ret = twheel_loop_run(g_loop);
	return NULL;
}

static void reuse_stress(bool hook_frees)
{
	struct twheel_loop_config cfg;
	uint64_t released = 0, expect_released = 0;
	pthread_t lth;
	int lret = -1, i, k;

	twheel_loop_config_init(&cfg);
	cfg.flags = test_loop_flags();
	cfg.tick_ns = TICK;
	cfg.release = release_fn;
	cfg.executor = executor_fn;
	assert_int_equal(twheel_loop_create(&g_loop, &cfg, NULL, 0), 0);
	g_hook_frees = hook_frees;
	g_hook_calls = 0;
	xq.head = xq.tail = 0;
	xq.quit = false;
	memset(workers, 0, sizeof(workers));

	g_end = mono_now() + RUN_NS;
	assert_int_equal(pthread_create(&xq.th, NULL, executor_thread, NULL), 0);
	assert_int_equal(pthread_create(&lth, NULL, loop_thread, &lret), 0);
	for (i = 0; i < NW; i++) {
		workers[i].id = i;
		workers[i].seed = 7 + (uint64_t)i + (hook_frees ? 100 : 0);
		assert_int_equal(pthread_create(&workers[i].th, NULL, worker_thread, &workers[i]), 0);
	}
	for (i = 0; i < NW; i++)
		assert_int_equal(pthread_join(workers[i].th, NULL), 0);

	/* Every round has ended but the self-deleting periodic timers and,
	 * with a freeing hook, the cancelled timers not yet released. */
	assert_int_equal(twheel_loop_stop(g_loop), 0);
	assert_int_equal(pthread_join(lth, NULL), 0);
	assert_int_equal(lret, 0);
	pthread_mutex_lock(&xq.mu);
	xq.quit = true;
	pthread_cond_signal(&xq.cv);
	pthread_mutex_unlock(&xq.mu);
	assert_int_equal(pthread_join(xq.th, NULL), 0);
	/* The executor has returned every timer: this thread owns the loop. */
	twheel_loop_destroy(g_loop, drain_fn, NULL, NULL);
	g_loop = NULL;

	for (i = 0; i < NW; i++) {
		struct worker *wk = &workers[i];

		assert_int_equal(LOAD(&wk->fires), wk->expect_fires);
		/* each one-shot schedule: one fire, one delete or one cancel */
		assert_int_equal(wk->oneshot, wk->expect_fires + wk->del_won + wk->cancel_won);
		/* each self-deleting periodic timer: deleted itself or drained */
		assert_int_equal(wk->selfdel_sched, LOAD(&wk->selfdel) + wk->drained);
		expect_released += wk->cancel_won + wk->per_cancelled;
		released += LOAD(&wk->hook_released);
		print_message("worker %d: %u rounds; one-shots %llu (fired %llu, del %llu, "
			      "cancelled %llu; cancels lost %llu, -ENOENT %llu), periodic %llu "
			      "(cancelled %llu, self-deleted %llu, drained %llu); kinds:", i, wk->round,
			      (unsigned long long)wk->oneshot, (unsigned long long)wk->expect_fires,
			      (unsigned long long)wk->del_won, (unsigned long long)wk->cancel_won,
			      (unsigned long long)wk->cancel_lost, (unsigned long long)wk->enoent,
			      (unsigned long long)wk->periodic, (unsigned long long)wk->per_cancelled,
			      (unsigned long long)wk->selfdel, (unsigned long long)wk->drained);
		for (k = 0; k < R_NKINDS; k++)
			print_message(" %llu", (unsigned long long)wk->kinds[k]);
		print_message("\n");
		for (k = 0; k < R_NKINDS; k++)
			if (!(hook_frees && k == R_CANCEL_VS_DEL))
				assert_true(wk->kinds[k] > 0);
	}
	/* each winning cancel and each cancelled periodic timer: one release */
	if (!hook_frees)
		released = LOAD(&g_hook_calls);
	assert_int_equal(released, expect_released);
}

static void test_reuse_when_not_busy(void **state)
{
	(void)state;
	reuse_stress(false);
}

static void test_reuse_free_in_release_hook(void **state)
{
	(void)state;
	reuse_stress(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reuse_when_not_busy),
		cmocka_unit_test(test_reuse_free_in_release_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
