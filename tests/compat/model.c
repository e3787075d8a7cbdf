/*
 * model.c - the legacy timer headers against a plain model of what the
 * kernel-doc of kernel/time/timer.c and callout(9) promise, over random
 * sequences: 48 timers (then 48 callouts), a few random calls a tick
 * (mod_timer(), mod_timer_pending(), timer_reduce(), add_timer(),
 * timer_delete(), try_to_del_timer_sync(), the shutdown and set-up;
 * callout_reset(), callout_schedule(), callout_stop(), callout_drain(),
 * callout_deactivate(), callout_init()), expiries from 20 ticks past to
 * 400 ahead and, now and then, at the ends of the arithmetic (jiffies +
 * LONG_MAX and past it, INT_MAX and INT_MIN ticks), advances of one tick
 * and, one in twenty, of up to 300 at once, on a plain wheel (two seeds)
 * or on a host whose clock the test moves, its readings anywhere inside
 * a tick, as an adapter's host (two more). Each callback re-arms,
 * stops, drains or deactivates its own timer at random, as drivers'
 * handlers do. Every return value, timer_pending(), expires,
 * callout_pending() and callout_active() after each call, and which
 * timers each advance runs, are checked against the model:
 *
 *   - an arm for expiry e at jiffies J is due at e if e is after J, else
 *     at J + 1 (inside a callback J is the time the advance or the
 *     host's run reaches: the clock's tick); mod_timer() returns whether
 *     it was pending, 1 without change for the same expiry
 *     (timer_reduce(): or a later one), 0 and nothing on a timer shut
 *     down; mod_timer_pending() does nothing to an idle one;
 *   - an advance to T runs once every timer due at or before T;
 *   - callout_reset() counts from the current tick, non-positive as 1;
 *     callout_stop() and callout_drain() return 1 if pending, 0 from the
 *     callout's own function, -1 otherwise, and clear the active flag,
 *     which an arm sets and a run leaves.
 *
 * 4 seeds of 100,000 ticks each (TWHEEL_MODEL_SEED, if set, is added to
 * them): 0.15 s, 0.35 s under ASan. Exit 0 if all agree, 1 with a line
 * per difference. (Built at HZ 1000 and 300: meson.build.)
 */
#include <limits.h>
#include <stdlib.h>

#include <twheel/compat/callout.h>
#include <twheel/compat/timer_list.h>
#include <twheel/host.h>

#include "../common/check.h"

#define N 48
#define TICKS 100000

static struct twheel *w;
static unsigned long long rng;

static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/*
 * Where the timers run: a plain wheel the test advances, or a host (an
 * adapter's, with no loop) whose clock the test sets, in ns.
 */
static int on_host;
static struct twheel_host host;
static struct twheel_rt host_rt;
static uint64_t host_ns, bind_tick, since_bind;

static uint64_t read_clock(void *arg)
{
	(void)arg;
	return host_ns;
}

static void host_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h, (void)wake_ns, (void)now_ns;
}

static void host_stop(struct twheel_host *h)
{
	(void)h;
}

static void bind(void)
{
	static const struct twheel_host_ops ops = { .arm = host_arm, .stop = host_stop };

	since_bind = 0;
	if (!on_host) {
		w = twheel_create(1000);
		REQUIRE(w && twheel_compat_bind_wheel(w) == 0, "bind a wheel");
		return;
	}
	host_ns = (1000 + rnd(1000)) * TWHEEL_COMPAT_TICK_NS + rnd((unsigned)TWHEEL_COMPAT_TICK_NS);
	bind_tick = host_ns / TWHEEL_COMPAT_TICK_NS;
	host_rt = (struct twheel_rt){ .tick_ns = TWHEEL_COMPAT_TICK_NS, .clock = read_clock };
	REQUIRE(twheel_host_init(&host, &host_rt, &ops) == 0 &&
			twheel_compat_bind_host(&host, TWHEEL_COMPAT_TICK_NS) == 0,
		"bind a host");
}

static void unbind(void)
{
	REQUIRE(twheel_compat_unbind() == 0, "unbind");
	if (on_host)
		REQUIRE(twheel_host_fini(&host, NULL, NULL) == 0, "host_fini");
	else
		twheel_destroy(w);
}

/* Move the time one tick on, or one in twenty up to 300 at once (the
 * clock: to anywhere in that tick); the ticks since the bind. */
static uint64_t move_time(void)
{
	unsigned long k = rnd(20) == 0 ? 1 + rnd(300) : 1;
	unsigned jitter = rnd((unsigned)TWHEEL_COMPAT_TICK_NS);

	if (on_host) {
		host_ns += k * TWHEEL_COMPAT_TICK_NS + jitter - TWHEEL_COMPAT_TICK_NS / 2;
		return since_bind = host_ns / TWHEEL_COMPAT_TICK_NS - bind_tick;
	}
	return since_bind += k;
}

/* Run what is due at that time. */
static void run_due(void)
{
	if (on_host)
		twheel_host_run(&host);
	else
		twheel_advance(w, 1000 + since_bind);
}

/* ---- timer_list ------------------------------------------------------- */

static struct tl_model {
	int pending, shutdown;
	unsigned long expires, due;
} tm[N];
static struct timer_list tl[N];
static int tl_runs[N];
static unsigned long model_jiffies; /* inside a callback: the target */

enum { MOD, MOD_PENDING_ONLY, REDUCE, NOT_PENDING };

static int tl_model_mod(int i, unsigned long e, int how)
{
	struct tl_model *x = &tm[i];
	int was = x->pending;

	if (x->shutdown)
		return 0;
	if (how != NOT_PENDING && x->pending) {
		long diff = (long)(x->expires - e);

		if (!diff || (how == REDUCE && diff <= 0))
			return 1;
	} else if (how == MOD_PENDING_ONLY) {
		return 0;
	}
	x->expires = e;
	x->due = (long)(e - model_jiffies) > 0 ? e : model_jiffies + 1;
	x->pending = 1;
	return was;
}

static void tl_check(int i)
{
	CHECK(timer_pending(&tl[i]) == tm[i].pending, "timer %d: pending %d, model %d", i,
	      timer_pending(&tl[i]), tm[i].pending);
	if (tm[i].pending)
		CHECK(tl[i].expires == tm[i].expires, "timer %d: expires %lu, model %lu", i, tl[i].expires,
		      tm[i].expires);
}

static void tl_callback(struct timer_list *t)
{
	int i = (int)(t - tl);
	unsigned long e = jiffies + rnd(60) - 5;

	tl_runs[i]++;
	CHECK(jiffies == model_jiffies, "jiffies %lu inside, model %lu", jiffies, model_jiffies);
	tl_check(i);
	switch (rnd(4)) {
	case 0:
		CHECK(mod_timer(t, e) == tl_model_mod(i, e, MOD), "mod_timer() from its callback");
		break;
	case 1:
		CHECK(timer_delete(t) == 0, "timer_delete() from its callback");
		break;
	case 2:
		CHECK(timer_reduce(t, e) == tl_model_mod(i, e, REDUCE), "timer_reduce() from its callback");
		if (rnd(2)) {
			CHECK(timer_delete_sync(t) == tm[i].pending, "timer_delete_sync() of the re-arm");
			tm[i].pending = 0;
		}
		break;
	}
	tl_check(i);
}

static void timer_list_model(unsigned long long seed)
{
	int i;

	rng = seed;
	bind();
	model_jiffies = jiffies;
	for (i = 0; i < N; i++) {
		tm[i] = (struct tl_model){ 0 };
		timer_setup(&tl[i], tl_callback, 0);
	}
	while (model_jiffies - INITIAL_JIFFIES < TICKS) {
		int due[N], runs[N], calls = (int)rnd(6);

		while (calls--) {
			unsigned long e = model_jiffies + rnd(420) - 20;

			i = (int)rnd(N);
			if (rnd(50) == 0) /* now, LONG_MAX ahead, or ULONG_MAX - 1: 2 past */
				e = model_jiffies + (unsigned long)rnd(3) * (ULONG_MAX / 2);
			switch (rnd(8)) {
			case 0:
				CHECK(mod_timer(&tl[i], e) == tl_model_mod(i, e, MOD), "mod_timer()");
				break;
			case 1:
				CHECK(mod_timer_pending(&tl[i], e) == tl_model_mod(i, e, MOD_PENDING_ONLY),
				      "mod_timer_pending()");
				break;
			case 2:
				CHECK(timer_reduce(&tl[i], e) == tl_model_mod(i, e, REDUCE), "timer_reduce()");
				break;
			case 3:
				CHECK(timer_delete(&tl[i]) == tm[i].pending, "timer_delete()");
				tm[i].pending = 0;
				break;
			case 4:
				if (!tm[i].pending) {
					tl[i].expires = e;
					add_timer(&tl[i]);
					tl_model_mod(i, e, NOT_PENDING);
				}
				break;
			case 5:
				CHECK(try_to_del_timer_sync(&tl[i]) == tm[i].pending, "try_to_del_timer_sync()");
				tm[i].pending = 0;
				break;
			case 6:
				if (rnd(10) == 0) {
					CHECK(timer_shutdown_sync(&tl[i]) == tm[i].pending, "timer_shutdown_sync()");
					tm[i].pending = 0;
					tm[i].shutdown = 1;
				}
				break;
			case 7: /* (not on a pending timer, if the two differ) */
				if (!tm[i].pending && !timer_pending(&tl[i])) {
					timer_setup(&tl[i], tl_callback, 0);
					tm[i].shutdown = 0;
				}
				break;
			}
			tl_check(i);
		}
		model_jiffies = INITIAL_JIFFIES + (unsigned long)move_time();
		for (i = 0; i < N; i++) {
			runs[i] = tl_runs[i];
			due[i] = tm[i].pending && (long)(tm[i].due - model_jiffies) <= 0;
			if (due[i])
				tm[i].pending = 0; /* its callback's re-arm sets it again */
		}
		run_due();
		for (i = 0; i < N; i++) {
			CHECK(tl_runs[i] - runs[i] == due[i], "timer %d ran %d times at jiffies %lu, model %d", i,
			      tl_runs[i] - runs[i], model_jiffies, due[i]);
			tl_check(i);
		}
	}
	for (i = 0; i < N; i++)
		timer_delete(&tl[i]);
	unbind();
}

/* ---- callout ---------------------------------------------------------- */

static struct co_model {
	int pending, active, armed;
	uint64_t due;
} cm[N];
static struct callout co[N];
static int co_runs[N];
static uint64_t model_ticks; /* since the bind */
static int running = -1;     /* the callout whose function runs */

static int co_model_reset(int i, int to)
{
	int was = cm[i].pending;

	cm[i].pending = cm[i].active = cm[i].armed = 1;
	cm[i].due = model_ticks + (uint64_t)(to > 0 ? to : 1);
	return was;
}

static int co_model_stop(int i)
{
	int rc = running == i ? 0 : cm[i].pending ? 1 : -1;

	cm[i].pending = cm[i].active = 0;
	return rc;
}

static void co_check(int i)
{
	CHECK(!!callout_pending(&co[i]) == cm[i].pending, "callout %d: pending %d, model %d", i,
	      callout_pending(&co[i]), cm[i].pending);
	CHECK(!!callout_active(&co[i]) == cm[i].active, "callout %d: active %d, model %d", i,
	      !!callout_active(&co[i]), cm[i].active);
}

static void co_function(void *arg)
{
	int i = (int)((struct callout *)arg - co), to = (int)rnd(60) - 5;

	co_runs[i]++;
	running = i;
	co_check(i);
	switch (rnd(6)) {
	case 0:
		CHECK(callout_reset(&co[i], to, co_function, &co[i]) == co_model_reset(i, to),
		      "callout_reset() from its function");
		break;
	case 1:
		CHECK(callout_stop(&co[i]) == co_model_stop(i), "callout_stop() from its function");
		break;
	case 2:
		CHECK(callout_schedule(&co[i], to) == co_model_reset(i, to), "callout_schedule() there");
		CHECK(callout_stop(&co[i]) == co_model_stop(i), "callout_stop() of the re-arm");
		break;
	case 3: /* callout(9)'s handler pattern */
		if (callout_pending(&co[i]) || !callout_active(&co[i]))
			break;
		callout_deactivate(&co[i]);
		cm[i].active = 0;
		break;
	case 4:
		CHECK(callout_drain(&co[i]) == co_model_stop(i), "callout_drain() from its function");
		break;
	}
	co_check(i);
	running = -1;
}

static void callout_model(unsigned long long seed)
{
	int i;

	rng = seed;
	bind();
	model_ticks = 0;
	for (i = 0; i < N; i++) {
		cm[i] = (struct co_model){ 0 };
		callout_init(&co[i], 1);
	}
	while (model_ticks < TICKS) {
		int due[N], runs[N], calls = (int)rnd(6);

		while (calls--) {
			int to = (int)rnd(420) - 20;

			i = (int)rnd(N);
			if (rnd(100) == 0)
				to = rnd(2) ? INT_MIN : INT_MAX;
			switch (rnd(6)) {
			case 0:
				CHECK(callout_reset(&co[i], to, co_function, &co[i]) == co_model_reset(i, to),
				      "callout_reset()");
				break;
			case 1:
				if (cm[i].armed)
					CHECK(callout_schedule(&co[i], to) == co_model_reset(i, to),
					      "callout_schedule()");
				break;
			case 2:
				CHECK(callout_stop(&co[i]) == co_model_stop(i), "callout_stop()");
				break;
			case 3:
				CHECK(callout_drain(&co[i]) == co_model_stop(i), "callout_drain()");
				break;
			case 4:
				callout_deactivate(&co[i]);
				cm[i].active = 0;
				break;
			case 5:
				if (!cm[i].pending && !callout_pending(&co[i]) && rnd(20) == 0) {
					callout_init(&co[i], 1);
					cm[i] = (struct co_model){ 0 };
				}
				break;
			}
			co_check(i);
		}
		model_ticks = move_time();
		for (i = 0; i < N; i++) {
			runs[i] = co_runs[i];
			due[i] = cm[i].pending && cm[i].due <= model_ticks;
			if (due[i])
				cm[i].pending = 0;
		}
		run_due();
		for (i = 0; i < N; i++) {
			CHECK(co_runs[i] - runs[i] == due[i], "callout %d ran %d times at tick %llu, model %d", i,
			      co_runs[i] - runs[i], (unsigned long long)model_ticks, due[i]);
			co_check(i);
		}
	}
	for (i = 0; i < N; i++)
		callout_stop(&co[i]);
	unbind();
}

int main(void)
{
	const char *s = getenv("TWHEEL_MODEL_SEED");
	unsigned long long add = s ? strtoull(s, NULL, 0) : 0;

	for (unsigned long long seed = 1; seed <= 4; seed++) {
		unsigned long long x = (seed + add) * 0x9e3779b97f4a7c15ull;

		on_host = seed > 2;
		timer_list_model(x ? x : 1);
		callout_model(x ? x : 1);
	}
	printf("%d checks, %d failed\n", check_passes + check_failures, check_failures);
	return check_failures ? 1 : 0;
}
