/* SPDX-License-Identifier: MIT */
/*
 * Cross-thread stress: several producers schedule, cancel and re-schedule
 * timers and post work onto one running loop, then another thread stops
 * it. Every item must be accounted for exactly once:
 *
 *   each successful schedule  = one fire  + one winning cancel + one drain
 *   each winning cancel       = one release (hook) and no fire
 *   each successful post      = one run   + one drain
 *   a cancelled periodic timer never fires after the loop released it
 *
 * And twheel_loop_destroy() right after the loop acted on another
 * thread's post, schedule or stop, while that call is still waking it.
 *
 * Runs in the 'tsan' suite too (CI builds it with -Db_sanitize=thread).
 */
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/check.h" /* CHECK: cmocka's asserts are not thread-safe */
#include "common.h"

#define NPROD 3
#define NT 1500       /* one-shot timers per producer */
#define NPER 8        /* periodic timers per producer */
#define NWORK 64      /* work items per producer */
#define RUN_NS (1200 * MS)

struct item {
	struct tw_loop_timer t;
	uint32_t scheduled;  /* producer only */
	uint32_t won;        /* producer only */
	uint32_t lost;       /* producer only */
	uint32_t fired;      /* atomic: loop thread */
	uint32_t released;   /* atomic: loop thread (release hook) */
	uint32_t drained;    /* main thread, after the end */
	uint32_t fired_at_release; /* periodic: fire count when released */
};

struct witem {
	struct tw_loop_work w;
	uint32_t posted;     /* producer only */
	uint32_t ran;        /* loop thread */
	uint32_t drained;
};

struct prod {
	struct twheel_loop *l;
	struct item t[NT];
	struct item p[NPER];
	struct witem w[NWORK];
	uint64_t seed;
	uint64_t delay_unit; /* delay = 16 random bits * this */
	uint64_t long_unit;  /* ... or, for one timer in 4, * this (if not 0) */
	uint64_t enospc, busy;
	pthread_t th;
};

static struct prod prods[NPROD];

static void fire_fn(struct tw_loop_timer *t)
{
	struct item *it = tw_container_of(t, struct item, t);

	__atomic_fetch_add(&it->fired, 1, __ATOMIC_RELAXED);
}

static void release_fn(struct tw_loop_timer *t, void *arg)
{
	struct item *it = tw_container_of(t, struct item, t);

	(void)arg;
	/* runs on the loop thread, after which the loop never touches @t */
	it->fired_at_release = __atomic_load_n(&it->fired, __ATOMIC_RELAXED);
	__atomic_fetch_add(&it->released, 1, __ATOMIC_RELEASE);
}

static void work_fn(struct tw_loop_work *w)
{
	struct witem *x = tw_container_of(w, struct witem, w);

	__atomic_fetch_add(&x->ran, 1, __ATOMIC_RELAXED);
}

static void *producer(void *arg)
{
	struct prod *p = arg;
	uint64_t start = mono_now();
	unsigned i;
	int ret;

	for (i = 0; i < NPER; i++) {
		ret = twheel_loop_schedule(p->l, &p->p[i].t, MS);
		if (ret == 0)
			p->p[i].scheduled++;
	}
	while (mono_now() - start < RUN_NS) {
		for (i = 0; i < NT; i++) {
			struct item *it = &p->t[i];
			uint64_t r = splitmix64(&p->seed);
			uint64_t unit = p->long_unit && !((r >> 40) & 3) ? p->long_unit : p->delay_unit;

			ret = twheel_loop_schedule(p->l, &it->t, (r & 0xffff) * unit);
			if (ret == -ENOSPC) {
				p->enospc++;
				continue;
			}
			if (ret == -EBUSY) {
				p->busy++;
				continue;
			}
			CHECK(ret == 0, "schedule returned %d", ret);
			if (ret)
				continue;
			it->scheduled++;
			if ((r >> 20) % 3 == 0) {
				if (r & (1u << 30))
					sched_yield(); /* let the loop maybe take it */
				ret = twheel_loop_cancel(p->l, &it->t);
				CHECK(ret == 0 || ret == 1, "cancel returned %d", ret);
				if (ret == 1)
					it->won++;
				else if (ret == 0)
					it->lost++;
			}
			if (i % 64 == 0) {
				struct witem *w = &p->w[(i / 64) % NWORK];

				if (twheel_loop_post(p->l, &w->w) == 0)
					w->posted++;
			}
		}
	}
	/* cancel the periodic ones: each either wins or loses to a running
	 * callback; both stop it */
	for (i = 0; i < NPER; i++) {
		if (!p->p[i].scheduled)
			continue;
		ret = twheel_loop_cancel(p->l, &p->p[i].t);
		CHECK(ret == 0 || ret == 1, "periodic cancel returned %d", ret);
		if (ret == 1)
			p->p[i].won++;
		else
			p->p[i].lost++;
	}
	return NULL;
}

static void drain_fn(struct tw_loop_timer *t, void *arg)
{
	struct item *it = tw_container_of(t, struct item, t);

	(void)arg;
	it->drained++;
}

static void work_drain_fn(struct tw_loop_work *w, void *arg)
{
	struct witem *x = tw_container_of(w, struct witem, w);

	(void)arg;
	x->drained++;
}

struct looper {
	struct twheel_loop *l;
	int ret;
};

static void *loop_thread(void *arg)
{
	struct looper *lp = arg;

	lp->ret = twheel_loop_run(lp->l);
	return NULL;
}

static void stress(size_t max_pending)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	struct twheel_loop_stats st;
	struct looper lp;
	pthread_t lth;
	uint64_t sched = 0, fired = 0, won = 0, lost = 0, drained = 0, posts = 0, runs = 0;
	uint64_t enospc = 0;
	int i, j;

	twheel_loop_config_init(&cfg);
	cfg.tick_ns = 100 * US;
	cfg.release = release_fn;
	cfg.max_pending = max_pending;
	cfg.batch = 256;
	cfg.flags = test_loop_flags();
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);

	memset(prods, 0, sizeof(prods));
	for (i = 0; i < NPROD; i++) {
		prods[i].l = l;
		prods[i].seed = 42 + (uint64_t)i;
		/* 0..2.6 ms; with a limit, 0..52 ms or (one timer in 4)
		 * 0..2.6 s, so that the limit is hit however slowly the
		 * producers run: about 2,000 schedules keep 300 pending */
		prods[i].delay_unit = max_pending ? 800 : 40;
		prods[i].long_unit = max_pending ? 40 * 1000 : 0;
		for (j = 0; j < NT; j++)
			tw_loop_timer_init(&prods[i].t[j].t, fire_fn, j % 7 == 0 ? TW_LOOP_DEFERRABLE : 0);
		for (j = 0; j < NPER; j++)
			tw_loop_timer_init_periodic(&prods[i].p[j].t, fire_fn, 500 * US,
						    j % 2 ? TW_LOOP_FIXED_DELAY : 0);
		for (j = 0; j < NWORK; j++)
			tw_loop_work_init(&prods[i].w[j].w, work_fn);
	}

	/* the loop thread creates nothing: it becomes the issuer on first run */
	lp.l = l;
	lp.ret = -1;
	pthread_create(&lth, NULL, loop_thread, &lp);
	for (i = 0; i < NPROD; i++)
		pthread_create(&prods[i].th, NULL, producer, &prods[i]);
	for (i = 0; i < NPROD; i++)
		pthread_join(prods[i].th, NULL);
	usleep(20000); /* let most timers fire; the rest are drained */
	assert_int_equal(twheel_loop_stop(l), 0);
	pthread_join(lth, NULL);
	assert_int_equal(lp.ret, 0);
	assert_int_equal(__atomic_load_n(&check_failures, __ATOMIC_RELAXED), 0);
	twheel_loop_get_stats(l, &st);

	/* The loop thread has finished: this thread owns the loop now. */
	twheel_loop_destroy(l, drain_fn, work_drain_fn, NULL);

	for (i = 0; i < NPROD; i++) {
		struct prod *p = &prods[i];

		enospc += p->enospc;
		for (j = 0; j < NT; j++) {
			struct item *it = &p->t[j];
			uint32_t f = __atomic_load_n(&it->fired, __ATOMIC_ACQUIRE);
			uint32_t rel = __atomic_load_n(&it->released, __ATOMIC_ACQUIRE);

			if (it->scheduled != f + it->won + it->drained)
				fail_msg("timer %d/%d: scheduled %u != fired %u + won %u + drained %u",
					 i, j, it->scheduled, f, it->won, it->drained);
			assert_int_equal(rel, it->won); /* every win released once */
			assert_true(it->lost <= f);     /* a lost cancel saw a fire */
			assert_false(tw_loop_timer_busy(&it->t));
			sched += it->scheduled;
			fired += f;
			won += it->won;
			lost += it->lost;
			drained += it->drained;
		}
		for (j = 0; j < NPER; j++) {
			struct item *it = &p->p[j];
			uint32_t f = __atomic_load_n(&it->fired, __ATOMIC_ACQUIRE);

			if (!it->scheduled)
				continue; /* ENOSPC at the start */
			assert_int_equal(it->won + it->lost, 1);
			/* released once by the loop (won, or lost-while-running),
			 * or still armed at the stop and drained */
			assert_int_equal(__atomic_load_n(&it->released, __ATOMIC_ACQUIRE) + it->drained, 1);
			if (it->released)
				assert_int_equal(f, it->fired_at_release);
		}
		for (j = 0; j < NWORK; j++) {
			struct witem *w = &p->w[j];

			assert_int_equal(w->posted, w->ran + w->drained);
			posts += w->posted;
			runs += w->ran;
		}
	}
	printf("# max_pending %zu: %llu schedules, %llu fired, %llu cancels won, %llu lost, "
	       "%llu drained, %llu ENOSPC; %llu posts (%llu run); loop: %llu iterations, "
	       "%llu wake-ups (%llu by eventfd)\n", max_pending,
	       (unsigned long long)sched, (unsigned long long)fired, (unsigned long long)won,
	       (unsigned long long)lost, (unsigned long long)drained,
	       (unsigned long long)enospc, (unsigned long long)posts, (unsigned long long)runs,
	       (unsigned long long)st.iterations, (unsigned long long)st.wakeups,
	       (unsigned long long)st.eventfd_wakes);
	assert_true(sched > 0 && fired > 0 && won > 0);
	if (max_pending)
		assert_true(enospc > 0);
	else
		assert_int_equal(enospc, 0);
}

static void test_xthread_every_item_once(void **state)
{
	(void)state;
	stress(0);
}

static void test_xthread_max_pending(void **state)
{
	(void)state;
	stress(300);
}

/*
 * twheel_loop_del() on the loop thread racing the executor's run of a
 * periodic timer (tw_loop_timer_call() on another thread starting the run
 * or handing the timer back): the timer is armed, running or handed back,
 * never idle nor cancelled, so the delete must return 1 and the timer must
 * then stop for good (not busy once the executor has returned, no run
 * handed over after that). A delete that lost a compare-and-swap to the
 * executor and returned 0 would leave it running forever.
 */
#define DX_ROUNDS 20000
#define DX_NS (1500 * MS) /* or until DX_ROUNDS, whichever comes first */

static struct {
	struct twheel_loop *l;
	struct tw_loop_timer t;
	struct tw_loop_work w;
	struct tw_loop_timer *slot; /* atomic: the executor's mailbox */
	uint32_t handed;            /* atomic: hand-offs so far */
	uint32_t go;                /* atomic: the round whose delete starts */
	uint32_t done;              /* atomic: the round whose delete returned */
	uint32_t round;             /* atomic */
	int del_ret;                /* atomic */
	bool quit;                  /* atomic */
	uint64_t seed_x, seed_w;
} dx;

static void dx_spin(uint64_t *seed)
{
	for (unsigned i = (unsigned)(splitmix64(seed) % 256); i; i--)
		__asm__ __volatile__("" ::: "memory");
}

static void dx_fn(struct tw_loop_timer *t)
{
	(void)t;
}

static void dx_executor(struct tw_loop_timer *t, void *arg)
{
	(void)arg;
	__atomic_store_n(&dx.slot, t, __ATOMIC_RELEASE);
	__atomic_fetch_add(&dx.handed, 1, __ATOMIC_RELEASE);
}

static void *dx_executor_thread(void *arg)
{
	(void)arg;
	for (;;) {
		struct tw_loop_timer *t = __atomic_exchange_n(&dx.slot, NULL, __ATOMIC_ACQ_REL);
		uint32_t round;
		int ret;

		if (!t) {
			if (__atomic_load_n(&dx.quit, __ATOMIC_ACQUIRE))
				return NULL;
			continue;
		}
		/* start the call when the round's delete starts, give or take */
		round = __atomic_load_n(&dx.round, __ATOMIC_ACQUIRE);
		while (__atomic_load_n(&dx.go, __ATOMIC_ACQUIRE) != round &&
		       __atomic_load_n(&dx.done, __ATOMIC_ACQUIRE) != round &&
		       !__atomic_load_n(&dx.quit, __ATOMIC_ACQUIRE))
			;
		dx_spin(&dx.seed_x);
		ret = tw_loop_timer_call(t);
		CHECK(ret == 0, "tw_loop_timer_call returned %d", ret);
	}
}

static void dx_work(struct tw_loop_work *w)
{
	uint32_t round = __atomic_load_n(&dx.round, __ATOMIC_ACQUIRE);

	(void)w;
	__atomic_store_n(&dx.go, round, __ATOMIC_RELEASE);
	dx_spin(&dx.seed_w);
	__atomic_store_n(&dx.del_ret, twheel_loop_del(dx.l, &dx.t), __ATOMIC_RELEASE);
	__atomic_store_n(&dx.done, round, __ATOMIC_RELEASE);
}

static void test_xthread_del_vs_executor_run(void **state)
{
	struct twheel_loop_config cfg;
	struct looper lp;
	pthread_t lth, xth;
	uint64_t start = mono_now();
	uint32_t round, handed, won = 0;

	(void)state;
	memset(&dx, 0, sizeof(dx));
	dx.seed_x = 1;
	dx.seed_w = 2;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = 10 * US;
	cfg.executor = dx_executor;
	cfg.flags = test_loop_flags();
	assert_int_equal(twheel_loop_create(&dx.l, &cfg, NULL, 0), 0);
	tw_loop_work_init(&dx.w, dx_work);
	lp.l = dx.l;
	lp.ret = -1;
	assert_int_equal(pthread_create(&lth, NULL, loop_thread, &lp), 0);
	assert_int_equal(pthread_create(&xth, NULL, dx_executor_thread, NULL), 0);

	for (round = 1; round <= DX_ROUNDS && mono_now() - start < DX_NS; round++) {
		uint64_t t0;

		__atomic_store_n(&dx.round, round, __ATOMIC_RELEASE);
		assert_int_equal(tw_loop_timer_init_periodic(&dx.t, dx_fn, 10 * US,
							     TW_LOOP_EXECUTOR | TW_LOOP_MISFIRE_ONCE), 0);
		handed = __atomic_load_n(&dx.handed, __ATOMIC_ACQUIRE);
		assert_int_equal(twheel_loop_schedule(dx.l, &dx.t, 0), 0);
		/* its first run is on the executor, which waits for the delete */
		while (__atomic_load_n(&dx.handed, __ATOMIC_ACQUIRE) == handed)
			sched_yield();
		assert_int_equal(twheel_loop_post(dx.l, &dx.w), 0);
		while (__atomic_load_n(&dx.done, __ATOMIC_ACQUIRE) != round)
			sched_yield();
		if (__atomic_load_n(&dx.del_ret, __ATOMIC_ACQUIRE) != 1)
			fail_msg("round %u: del of a periodic timer running on the executor "
				 "returned %d", round, __atomic_load_n(&dx.del_ret, __ATOMIC_ACQUIRE));
		/* stopped for good: idle once the executor gives it back */
		t0 = mono_now();
		while (tw_loop_timer_busy(&dx.t)) {
			if (mono_now() - t0 > 5000 * MS)
				fail_msg("round %u: still busy after its delete", round);
			sched_yield();
		}
		handed = __atomic_load_n(&dx.handed, __ATOMIC_ACQUIRE);
		won++;
	}
	printf("# %u rounds: each delete stopped a periodic timer on the executor\n", won);
	assert_int_equal(twheel_loop_stop(dx.l), 0);
	pthread_join(lth, NULL);
	__atomic_store_n(&dx.quit, true, __ATOMIC_RELEASE);
	pthread_join(xth, NULL);
	assert_int_equal(lp.ret, 0);
	assert_int_equal(__atomic_load_n(&check_failures, __ATOMIC_RELAXED), 0);
	assert_int_equal(twheel_loop_drain(dx.l, NULL, NULL, NULL), 0);
	twheel_loop_destroy(dx.l, NULL, NULL, NULL);
}

/* ---- Never early across threads -------------------------------------- */

/*
 * Two producers schedule timers with delays of 0..300 us (not whole ticks)
 * onto a running loop with a 1 us tick, noting the clock just before each
 * call. The delay counts from a reading the loop takes after it popped the
 * timer, never from an earlier one: each callback runs at call + delay or
 * later (its own reading), and for a delay ahead of that reading, in an
 * iteration whose time (twheel_loop_now()) is at least call + delay. A
 * delay of 0 has come at that reading and may fire in the iteration that
 * took it (<twheel/loop.h>), whose time was read before the pop, and so
 * may be before the call.
 */
#define NE_PROD 2
#define NE_N 20000

struct ne_item {
	struct tw_loop_timer t;
	uint64_t called; /* the clock before the schedule call (producer) */
	uint64_t delay;
};

static struct ne_item ne_items[NE_PROD][NE_N];
static struct twheel_loop *ne_loop;
static uint32_t ne_fired;

static void ne_fire(struct tw_loop_timer *t)
{
	struct ne_item *it = tw_container_of(t, struct ne_item, t);
	uint64_t now = twheel_loop_now(ne_loop), real = mono_now();

	CHECK(real >= it->called + it->delay, "ran %llu ns early (delay %llu)",
	      (unsigned long long)(it->called + it->delay - real), (unsigned long long)it->delay);
	CHECK(!it->delay || now >= it->called + it->delay,
	      "fired %llu ns early by the iteration's time (delay %llu)",
	      (unsigned long long)(it->called + it->delay - now), (unsigned long long)it->delay);
	__atomic_fetch_add(&ne_fired, 1, __ATOMIC_RELEASE);
}

static void *ne_producer(void *arg)
{
	struct ne_item *items = arg;
	uint64_t seed = (uint64_t)(uintptr_t)arg;

	for (int i = 0; i < NE_N; i++) {
		struct ne_item *it = &items[i];

		it->delay = splitmix64(&seed) % (300 * US);
		it->called = mono_now();
		CHECK(twheel_loop_schedule(ne_loop, &it->t, it->delay) == 0, "schedule failed");
	}
	return NULL;
}

static void test_xthread_schedule_never_early(void **state)
{
	struct twheel_loop_config cfg;
	struct looper lp;
	pthread_t lth, pth[NE_PROD];
	uint64_t t0;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = 1 * US; /* the finest: rounding up hides little */
	cfg.flags = test_loop_flags();
	assert_int_equal(twheel_loop_create(&ne_loop, &cfg, NULL, 0), 0);
	for (int k = 0; k < NE_PROD; k++)
		for (int i = 0; i < NE_N; i++)
			tw_loop_timer_init(&ne_items[k][i].t, ne_fire, 0);
	lp.l = ne_loop;
	lp.ret = -1;
	assert_int_equal(pthread_create(&lth, NULL, loop_thread, &lp), 0);
	for (int k = 0; k < NE_PROD; k++)
		assert_int_equal(pthread_create(&pth[k], NULL, ne_producer, ne_items[k]), 0);
	for (int k = 0; k < NE_PROD; k++)
		pthread_join(pth[k], NULL);
	t0 = mono_now();
	while (__atomic_load_n(&ne_fired, __ATOMIC_ACQUIRE) < NE_PROD * NE_N) {
		if (mono_now() - t0 > 10000 * MS)
			fail_msg("%u of %d timers fired", __atomic_load_n(&ne_fired, __ATOMIC_ACQUIRE),
				 NE_PROD * NE_N);
		usleep(1000);
	}
	assert_int_equal(twheel_loop_stop(ne_loop), 0);
	pthread_join(lth, NULL);
	assert_int_equal(lp.ret, 0);
	assert_int_equal(__atomic_load_n(&check_failures, __ATOMIC_RELAXED), 0);
	twheel_loop_destroy(ne_loop, NULL, NULL, NULL);
}

/*
 * twheel_loop_move() against twheel_loop_cancel() from another thread: the
 * loop thread arms a timer and moves it from one address to the other and
 * back while a second thread cancels both addresses (every other round).
 * The compare-and-swap that ends a move leaves exactly one winner: a move
 * refused -EBUSY only after a winning cancel, each winning cancel
 * released once (hook), never a moved timer lost, counted twice or freed
 * under the loop.
 */
#define MX_ROUNDS 2000
static struct {
	struct tw_loop_timer t[2];
	uint32_t stop;     /* atomic */
	uint64_t attempts; /* atomic: cancels made */
	uint32_t allow;    /* atomic: cancel in this round */
	uint64_t won;      /* canceller only, read after the join */
	uint64_t released; /* loop thread (hook) */
} mx;

static void mx_fn(struct tw_loop_timer *t)
{
	(void)t;
	fail_msg("a timer armed an hour ahead fired");
}

static void mx_release(struct tw_loop_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	mx.released++;
}

static void *mx_canceller(void *arg)
{
	struct twheel_loop *l = arg;

	for (unsigned i = 0; !__atomic_load_n(&mx.stop, __ATOMIC_ACQUIRE); i++) {
		int r;

		if (!__atomic_load_n(&mx.allow, __ATOMIC_ACQUIRE) && i > 0) {
			sched_yield();
			continue;
		}
		r = twheel_loop_cancel(l, &mx.t[i & 1]);

		__atomic_add_fetch(&mx.attempts, 1, __ATOMIC_RELEASE);
		if (r == 1)
			mx.won++;
		else if (r != 0 && r != -ENOENT && r != -EALREADY)
			fail_msg("cancel returned %d", r);
	}
	return NULL;
}

static void test_xthread_move_vs_cancel(void **state)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l;
	pthread_t th;
	uint64_t moved = 0, refused = 0;

	(void)state;
	memset(&mx, 0, sizeof(mx));
	twheel_loop_config_init(&cfg);
	cfg.flags = test_loop_flags();
	cfg.release = mx_release;
	assert_int_equal(twheel_loop_create(&l, &cfg, NULL, 0), 0);
	tw_loop_timer_init(&mx.t[0], mx_fn, 0);
	tw_loop_timer_init(&mx.t[1], mx_fn, 0);
	assert_int_equal(pthread_create(&th, NULL, mx_canceller, l), 0);
	while (!__atomic_load_n(&mx.attempts, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int round = 0; round < MX_ROUNDS; round++) {
		int from = round & 1, r;
		uint64_t seen;

		/* both idle: released by the loop, or moved from */
		while (tw_loop_timer_busy(&mx.t[0]) || tw_loop_timer_busy(&mx.t[1]))
			assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
		/* the canceller races every other round, and tries first in one in four */
		__atomic_store_n(&mx.allow, round % 2 == 0, __ATOMIC_RELEASE);
		assert_int_equal(twheel_loop_add(l, &mx.t[from], 3600 * 1000 * MS), 0);
		seen = __atomic_load_n(&mx.attempts, __ATOMIC_ACQUIRE);
		while (round % 4 == 0 && __atomic_load_n(&mx.attempts, __ATOMIC_ACQUIRE) - seen < 2)
			sched_yield();
		for (int k = 0; k < 3; k++, from ^= 1) {
			r = twheel_loop_move(l, &mx.t[from ^ 1], &mx.t[from]);
			if (r == -EBUSY) { /* a cancel won: nothing moved */
				refused++;
				assert_true(tw_loop_timer_busy(&mx.t[from]));
				assert_false(tw_loop_timer_busy(&mx.t[from ^ 1]));
				break;
			}
			assert_int_equal(r, 1);
			moved++;
			assert_false(twheel_loop_pending(l, &mx.t[from]));
		}
		twheel_loop_del(l, &mx.t[0]);
		twheel_loop_del(l, &mx.t[1]);
	}
	__atomic_store_n(&mx.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	while (tw_loop_timer_busy(&mx.t[0]) || tw_loop_timer_busy(&mx.t[1]))
		assert_true(twheel_loop_run_once(l, TW_LOOP_NOWAIT) >= 0);
	print_message("%d rounds: %llu moves, %llu refused after a winning cancel, "
		      "%llu cancels won\n", MX_ROUNDS, (unsigned long long)moved,
		      (unsigned long long)refused, (unsigned long long)mx.won);
	assert_int_equal(mx.released, mx.won);
	assert_int_equal(twheel_loop_count(l), 0);
	assert_true(moved > 0 && refused > 0);
	twheel_loop_destroy(l, NULL, NULL, NULL);
}

/* ---- destroy while another thread is still in its call ------------------- */

/*
 * write(), which the loop's wake-up reaches through the PLT: on a thread
 * that sets slow_writes it waits 50 ms first, so that the loop, woken by
 * something else, acts on the call before it returns, and it notes a
 * write to a closed descriptor (the eventfd of a loop destroyed meanwhile).
 */
static _Thread_local bool slow_writes;
static bool wrote_closed_fd; /* atomic */
static bool slow_write_began; /* atomic */

ssize_t write(int fd, const void *buf, size_t n)
{
	long r;

	if (slow_writes) {
		__atomic_store_n(&slow_write_began, true, __ATOMIC_RELEASE);
		usleep(50 * 1000);
	}
	r = syscall(SYS_write, fd, buf, n);
	if (r < 0 && errno == EBADF && slow_writes)
		__atomic_store_n(&wrote_closed_fd, true, __ATOMIC_RELAXED);
	return r;
}

enum { DR_POST, DR_SCHEDULE, DR_STOP, DR_EXECUTOR, DR_CASES };

struct dr {
	struct twheel_loop *l;
	int kind;
	struct tw_loop_work w;
	struct tw_loop_timer t, wake, p;
	struct tw_loop_timer *handed; /* atomic: the executor's mailbox */
	bool call_returned;           /* atomic */
	bool run_over;                /* atomic: the periodic callback's end */
};

static void dr_stop_work(struct tw_loop_work *w)
{
	twheel_loop_stop(tw_container_of(w, struct dr, w)->l);
}

static void dr_stop_timer(struct tw_loop_timer *t)
{
	twheel_loop_stop(tw_container_of(t, struct dr, t)->l);
}

static void dr_nothing(struct tw_loop_timer *t)
{
	(void)t;
}

/* A periodic run on the executor that stops the loop, then still works a
 * while before tw_loop_timer_call() hands the timer back. */
static void dr_stop_periodic(struct tw_loop_timer *t)
{
	struct dr *x = tw_container_of(t, struct dr, p);

	twheel_loop_stop(x->l);
	usleep(20 * 1000);
	__atomic_store_n(&x->run_over, true, __ATOMIC_RELEASE);
}

static void dr_executor(struct tw_loop_timer *t, void *arg)
{
	__atomic_store_n(&((struct dr *)arg)->handed, t, __ATOMIC_RELEASE);
}

static void *dr_caller(void *arg)
{
	struct dr *x = arg;

	slow_writes = true;
	usleep(2 * 1000); /* the loop sleeps: the call writes its eventfd */
	switch (x->kind) {
	case DR_POST:
		assert_int_equal(twheel_loop_post(x->l, &x->w), 0);
		break;
	case DR_SCHEDULE:
		assert_int_equal(twheel_loop_schedule(x->l, &x->t, 0), 0);
		break;
	case DR_EXECUTOR: {
		struct tw_loop_timer *t;

		for (int i = 0; !(t = __atomic_load_n(&x->handed, __ATOMIC_ACQUIRE)); i++) {
			assert_true(i < 2000);
			usleep(1000);
		}
		assert_int_equal(tw_loop_timer_call(t), 0);
		break;
	}
	default:
		assert_int_equal(twheel_loop_stop(x->l), 0);
	}
	return NULL;
}

static void *dr_stop_other(void *arg)
{
	assert_int_equal(twheel_loop_stop(arg), 0);
	return NULL;
}

/*
 * Another thread posts the work that stops the loop, schedules the timer
 * that does, or stops it; a timer wakes the loop while that call waits in
 * its eventfd write, the loop acts on it and returns, and is destroyed at
 * once: the destroy waits for the call, which else read the freed loop
 * and wrote to its closed eventfd. Or the executor runs a periodic timer
 * whose callback stops the loop and works on: the destroy waits until
 * tw_loop_timer_call() has handed the timer back (so the callback has
 * ended, checked), which else wrote to the freed loop (its inbox).
 */
static void dr_cases(void)
{
	for (int kind = 0; kind < DR_CASES; kind++) {
		struct twheel_loop_config cfg;
		struct dr x = { .kind = kind };
		pthread_t th;

		twheel_loop_config_init(&cfg);
		cfg.flags = test_loop_flags();
		cfg.executor = dr_executor;
		cfg.executor_arg = &x;
		assert_int_equal(twheel_loop_create(&x.l, &cfg, NULL, 0), 0);
		tw_loop_work_init(&x.w, dr_stop_work);
		tw_loop_timer_init(&x.t, dr_stop_timer, 0);
		tw_loop_timer_init(&x.wake, dr_nothing, 0);
		assert_int_equal(twheel_loop_add(x.l, &x.wake, 10 * MS), 0);
		if (kind == DR_EXECUTOR) {
			assert_int_equal(tw_loop_timer_init_periodic(&x.p, dr_stop_periodic,
								     1000 * MS, TW_LOOP_EXECUTOR), 0);
			assert_int_equal(twheel_loop_add(x.l, &x.p, 1 * MS), 0);
		}
		__atomic_store_n(&wrote_closed_fd, false, __ATOMIC_RELAXED);
		assert_int_equal(pthread_create(&th, NULL, dr_caller, &x), 0);
		assert_int_equal(twheel_loop_run(x.l), 0);
		twheel_loop_destroy(x.l, NULL, NULL, NULL);
		if (kind == DR_EXECUTOR)
			assert_true(__atomic_load_n(&x.run_over, __ATOMIC_ACQUIRE));
		assert_int_equal(pthread_join(th, NULL), 0);
		assert_false(__atomic_load_n(&wrote_closed_fd, __ATOMIC_RELAXED));
	}
}

/* Run first, so that its callers count in slots of their own (a thread
 * each); then again once more threads than there are such slots (16)
 * have called, so that its callers count in the slot the rest share. */
static void test_xthread_destroy_after_call(void **state)
{
	struct twheel_loop *other;

	(void)state;
	dr_cases();
	assert_int_equal(twheel_loop_create(&other, NULL, NULL, 0), 0);
	for (int i = 0; i < 20; i++) {
		pthread_t th;

		assert_int_equal(pthread_create(&th, NULL, dr_stop_other, other), 0);
		assert_int_equal(pthread_join(th, NULL), 0);
	}
	twheel_loop_destroy(other, NULL, NULL, NULL);
	dr_cases();
}

/* ---- fork() while another thread is in a call ---------------------------- */

static void *fk_run(void *arg)
{
	assert_int_equal(twheel_loop_run(arg), 0);
	return NULL;
}

static void *fk_post(void *arg)
{
	struct dr *x = arg;

	int ret;

	slow_writes = true;
	ret = twheel_loop_post(x->l, &x->w); /* -EBUSY: the last one not run yet */
	assert_true(ret == 0 || ret == -EBUSY);
	__atomic_store_n(&x->call_returned, true, __ATOMIC_RELEASE);
	return NULL;
}

static void fk_work(struct tw_loop_work *w)
{
	(void)w;
}

/*
 * The process forks while another thread is in a post (waking the
 * sleeping loop): the child, which has only the forking thread, destroys
 * its copy of the loop (the one call loop.h allows it) and exits, rather
 * than wait for a call that no thread of its own is making. The parent's
 * loop runs the work and stops as usual.
 */
static void test_xthread_fork_during_call(void **state)
{
	struct twheel_loop_config cfg;
	struct dr x = { .kind = DR_POST };
	pthread_t loop_th, post_th;
	int status;
	pid_t pid;

	(void)state;
	twheel_loop_config_init(&cfg);
	cfg.flags = test_loop_flags();
	assert_int_equal(twheel_loop_create(&x.l, &cfg, NULL, 0), 0);
	tw_loop_work_init(&x.w, fk_work);
	assert_int_equal(pthread_create(&loop_th, NULL, fk_run, x.l), 0);
	__atomic_store_n(&slow_write_began, false, __ATOMIC_RELAXED);
	/* post until a post finds the loop asleep and writes its eventfd */
	for (int tries = 0;; tries++) {
		assert_true(tries < 100);
		usleep(2 * 1000);
		x.call_returned = false;
		assert_int_equal(pthread_create(&post_th, NULL, fk_post, &x), 0);
		while (!__atomic_load_n(&slow_write_began, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&x.call_returned, __ATOMIC_ACQUIRE))
			usleep(200);
		if (__atomic_load_n(&slow_write_began, __ATOMIC_ACQUIRE))
			break;
		assert_int_equal(pthread_join(post_th, NULL), 0);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(5); /* a destroy that waits for the post never returns */
		twheel_loop_destroy(x.l, NULL, NULL, NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(pthread_join(post_th, NULL), 0);
	assert_int_equal(twheel_loop_stop(x.l), 0);
	assert_int_equal(pthread_join(loop_th, NULL), 0);
	twheel_loop_destroy(x.l, NULL, NULL, NULL);
}

/* ---- a cancel whose timer moved to another loop -------------------------- */

/*
 * The canceller is held at its compare-and-swap: the timer lives alone on
 * a read-only page, and the write faults into this handler, which waits
 * for mc.go, then 5 ms (for the other loop to fall asleep); the main
 * thread has made the page writable again by then, so the swap is retried
 * and succeeds.
 */
static struct {
	struct tw_loop_timer *t; /* alone on its page */
	struct twheel_loop *l1, *l2;
	struct tw_loop_timer wake;
	bool held, go;           /* atomic */
} mc;

static void mc_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if ((char *)si->si_addr < (char *)mc.t || (char *)si->si_addr >= (char *)mc.t + 4096) {
		signal(sig, SIG_DFL);
		return; /* a real fault: it recurs, and kills */
	}
	__atomic_store_n(&mc.held, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&mc.go, __ATOMIC_ACQUIRE))
		;
	usleep(5 * 1000);
}

static void *mc_canceller(void *arg)
{
	(void)arg;
	slow_writes = true;
	assert_int_equal(twheel_loop_cancel(mc.l1, mc.t), 1);
	return NULL;
}

static void mc_release(struct tw_loop_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	twheel_loop_stop(mc.l2);
}

/*
 * The tests that hold a thread on a read-only page run where their own
 * SIGSEGV handler does: not under TSan, not under ASan's own handler.
 */
static void skip_unless_our_segv_handler_runs(void)
{
#if defined(__SANITIZE_THREAD__)
	skip();
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	skip();
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
	const char *o = getenv("ASAN_OPTIONS");

	if (o && strstr(o, "allow_user_segv_handler=0"))
		skip();
#endif
}

/*
 * A cancel naming loop 1 finds the timer armed there; before its swap the
 * timer is deleted and armed on loop 2, so the swap cancels it on loop 2
 * and the cancel pushes it there and wakes loop 2, its eventfd write held
 * 50 ms. Loop 2, woken by a timer meanwhile, releases the timer, its
 * release hook stops it, and it is destroyed at once: the destroy waits
 * for the cancel, which else wrote to its closed eventfd. Not under
 * TSan: its atomics fault inside the runtime, holding a lock that the
 * main thread's next atomic on the timer then waits for. Nor under ASan
 * told to keep SIGSEGV for itself (allow_user_segv_handler=0, as
 * scripts/test.sh runs it, so that a crash is ASan's report and not
 * cmocka's): the fault would be its report, not this test's handler.
 */
static void test_xthread_cancel_moved_destroy(void **state)
{
	struct twheel_loop_config cfg;
	struct sigaction sa = { .sa_sigaction = mc_segv, .sa_flags = SA_SIGINFO }, old;
	pthread_t th;
	void *page;

	(void)state;
	skip_unless_our_segv_handler_runs();
	assert_int_equal(posix_memalign(&page, 4096, 4096), 0);
	mc.t = page;
	twheel_loop_config_init(&cfg);
	cfg.flags = test_loop_flags();
	assert_int_equal(twheel_loop_create(&mc.l1, &cfg, NULL, 0), 0);
	cfg.release = mc_release;
	assert_int_equal(twheel_loop_create(&mc.l2, &cfg, NULL, 0), 0);
	cfg.release = NULL;
	tw_loop_timer_init(mc.t, dr_nothing, 0);
	tw_loop_timer_init(&mc.wake, dr_nothing, 0);
	assert_int_equal(twheel_loop_add(mc.l1, mc.t, 1000 * MS), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	assert_int_equal(mprotect(page, 4096, PROT_READ), 0);
	__atomic_store_n(&wrote_closed_fd, false, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&th, NULL, mc_canceller, NULL), 0);
	while (!__atomic_load_n(&mc.held, __ATOMIC_ACQUIRE))
		usleep(200);
	assert_int_equal(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(twheel_loop_del(mc.l1, mc.t), 1);
	assert_int_equal(twheel_loop_add(mc.l2, mc.t, 1000 * MS), 0);
	assert_int_equal(twheel_loop_add(mc.l2, &mc.wake, 20 * MS), 0);
	__atomic_store_n(&mc.go, true, __ATOMIC_RELEASE);
	assert_int_equal(twheel_loop_run(mc.l2), 0);
	twheel_loop_destroy(mc.l2, NULL, NULL, NULL);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	assert_false(__atomic_load_n(&wrote_closed_fd, __ATOMIC_RELAXED));
	twheel_loop_destroy(mc.l1, NULL, NULL, NULL);
	free(page);
}

/* ---- two threads arming one timer at once, with max_pending -------------- */

/*
 * A thread held in its claim of a timer that lives alone on a read-only
 * page, as above: the write of its compare-and-swap faults into this
 * handler, which waits for cr.go (the main thread has made the page
 * writable by then, so the swap is retried).
 */
static struct {
	struct twheel_loop *l;
	struct tw_loop_timer *t; /* alone on its page */
	int ret;                 /* the held thread's schedule */
	bool held, go;           /* atomic */
} cr;

static void cr_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if ((char *)si->si_addr < (char *)cr.t || (char *)si->si_addr >= (char *)cr.t + 4096) {
		signal(sig, SIG_DFL);
		return; /* a real fault: it recurs, and kills */
	}
	__atomic_store_n(&cr.held, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&cr.go, __ATOMIC_ACQUIRE))
		;
}

static void *cr_scheduler(void *arg)
{
	(void)arg;
	cr.ret = twheel_loop_schedule(cr.l, cr.t, 1000 * MS);
	return NULL;
}

static void cr_count(struct tw_loop_timer *t, void *arg)
{
	(void)t;
	++*(int *)arg;
}

/*
 * max_pending 2, one timer owned. A thread schedules timer T and is held
 * in the middle of its claim (the loser of two threads arming T at once,
 * or a thread preempted there, is in the same place). Another thread's
 * timer W fits (2 owned with it), so its schedule must succeed: the claim
 * under way must not hold a place in the count before it owns T. It did
 * (-ENOSPC, for as long as the claim was held). Then T's claim ends
 * -ENOSPC (W took the place) and leaves T idle. No loop thread: schedules
 * only queue.
 */
static void test_xthread_claim_under_way_takes_no_place(void **state)
{
	struct twheel_loop_config cfg;
	struct sigaction sa = { .sa_sigaction = cr_segv, .sa_flags = SA_SIGINFO }, old;
	struct tw_loop_timer f, w;
	pthread_t th;
	void *page;
	int drained = 0;

	(void)state;
	skip_unless_our_segv_handler_runs();
	assert_int_equal(posix_memalign(&page, 4096, 4096), 0);
	cr.t = page;
	twheel_loop_config_init(&cfg);
	cfg.flags = test_loop_flags();
	cfg.max_pending = 2;
	assert_int_equal(twheel_loop_create(&cr.l, &cfg, NULL, 0), 0);
	tw_loop_timer_init(cr.t, dr_nothing, 0);
	tw_loop_timer_init(&f, dr_nothing, 0);
	tw_loop_timer_init(&w, dr_nothing, 0);
	assert_int_equal(twheel_loop_add(cr.l, &f, 1000 * MS), 0);
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	assert_int_equal(mprotect(page, 4096, PROT_READ), 0);
	assert_int_equal(pthread_create(&th, NULL, cr_scheduler, NULL), 0);
	while (!__atomic_load_n(&cr.held, __ATOMIC_ACQUIRE))
		usleep(200);
	assert_int_equal(twheel_loop_schedule(cr.l, &w, 1000 * MS), 0);
	assert_int_equal(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
	__atomic_store_n(&cr.go, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	assert_int_equal(cr.ret, -ENOSPC);
	assert_false(tw_loop_timer_busy(cr.t));
	assert_int_equal(twheel_loop_cancel(cr.l, cr.t), -ENOENT);
	twheel_loop_destroy(cr.l, cr_count, NULL, &drained);
	assert_int_equal(drained, 2); /* f and w */
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xthread_destroy_after_call), /* first: see there */
		cmocka_unit_test(test_xthread_every_item_once),
		cmocka_unit_test(test_xthread_max_pending),
		cmocka_unit_test(test_xthread_del_vs_executor_run),
		cmocka_unit_test(test_xthread_schedule_never_early),
		cmocka_unit_test(test_xthread_move_vs_cancel),
		cmocka_unit_test(test_xthread_fork_during_call),
		cmocka_unit_test(test_xthread_cancel_moved_destroy),
		cmocka_unit_test(test_xthread_claim_under_way_takes_no_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
