/* SPDX-License-Identifier: MIT */
/*
 * host_model.c - the host driver on a clock that jumps forward, stands
 * still and steps back, checked against host.h.
 *
 * The fake host timer is one-shot and fires exactly when the clock reaches
 * the time it was armed for (the clock is the only time there is). The
 * model keeps, per timer, whether it is pending, its deadline d, whether d
 * had come when it was armed ("passed": the clock read d or later), and a
 * bound b, the tick by which it must have fired:
 *
 *   b = max(ceil(d / tick), T + 1)
 *
 * where T is the tick the wheel is at, or, from a callback, the tick the
 * running advance goes to: max(the wheel's tick, floor(r / tick)) for the
 * run's reading r. The checks:
 *
 *   - never early: a timer that was not passed fires only in a run whose
 *     reading r >= d, whatever the clock did meanwhile (a callback of that
 *     run may step it back: r is what the run was judged by);
 *   - never in the run that armed it; exactly once per arming;
 *   - at most one tick late once the clock is back: when a run ends with
 *     the wheel at or past b, a timer armed before that run has fired;
 *   - the host timer: armed whenever a timer is pending, for a time no
 *     later than max(the reading it was armed at, min(b) * tick), stopped
 *     when none is; twheel_host_run() returns the callbacks it ran; the
 *     wheel's count is the model's; nested run and fini give -EBUSY; fini
 *     hands back each pending timer once, but one its function re-armed
 *     or cancelled before its turn (re-armed, it is dropped);
 *   - twheel_host_get_stats(), after every operation and after fini: the
 *     runs (wakeups), those that ran no callback (idle_wakeups), the
 *     callbacks, the host timer's arms and its stops (fini's stop not
 *     counted) as the model counted them.
 *
 * Callbacks arm, re-arm, cancel and move timers (themselves too) and move
 * the clock, back included. A move (twheel_move() on the host's wheel, to
 * the timer's other place) leaves a timer as it was: pending or not,
 * parked (in place or not) or placed, at the same twheel_host_expires().
 * Delays run from 0 and 1 ns to UINT64_MAX, ticks from 1 ns to 1 s.
 * Outside runs, the wheel's next expiry is its time while a timer is
 * parked, else no later than any timer's bound.
 *
 * Outside runs, a clock reading of the host (an arm, a placement, the end
 * of a run) may also bring the wheel's tick up to the clock's, where that
 * processes nothing; the model takes the wheel's tick after each, and
 * checks that it moved only forward, to the clock's tick at most.
 *
 * A delay armed from a callback, or while twheel_host_defer() is on and
 * the host timer armed, is parked: pending, but its deadline is not known until it is
 * placed, by the run's end (from the clock after the last callback), by
 * the next run's start (from that run's reading), by twheel_host_place()
 * (from the clock then) or by the 64th park since the last placement. The model resolves it there: d = that reading
 * plus the delay, which is after the call whatever the clock did, and
 * then checks it as any other deadline. A parked timer must not fire, the
 * host timer stays armed while one waits (outside runs), and
 * twheel_host_place() returns the number of timers parked. At each
 * twheel_host_place(), twheel_host_expires() of a placed timer is its tick,
 * and of a parked one no later than the tick the placement gives it (while
 * the clock has never stepped back: the placement's reading is the later).
 * A timer cancelled while parked keeps the twheel_host_expires() it had,
 * and fini hands a parked one back at that tick.
 *
 * Half the hosts are made with twheel_host_init_ext(): the fake adapter's
 * parked op marks a placement scheduled (or, now and then, refuses, as
 * when it is out of memory: the host then places at once); the scheduled
 * placement runs as an operation. The host must call it at exactly the
 * first park after each placement outside runs, and outside runs no timer
 * may wait parked without a placement scheduled.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/host.h>

#include "host_model.h"

#define NT 16

/* ---- State --------------------------------------------------------------- */

struct htimer {
	struct tw_timer tt[2]; /* the timer lives in tt[cur]; twheel_move() swaps */
	int cur;
	int idx;
	bool pending;
	bool passed;       /* its deadline had come when it was armed */
	bool held;         /* armed while the clock stood behind the wheel */
	uint64_t deadline;
	uint64_t bound;    /* the tick by which it must have fired */
	uint64_t run;      /* the run that armed it (0: outside runs) */
	bool parked;       /* armed by delay, not placed yet: deadline unknown */
	bool was_parked;   /* ...since it was armed */
	uint64_t delay;    /* ...its delay */
	int handed;        /* times fini handed it back */
	bool rearmed;      /* ...and armed again by fini's function (to be dropped) */
	tw_tick_t fini_expires; /* twheel_host_expires() before fini */
};

struct hm {
	struct byte_src *src;
	struct hm_result *res;
	struct twheel_host h;
	uint64_t tick;
	uint64_t clk;       /* the fake clock */
	bool armed;         /* the fake host timer */
	uint64_t arms, stops; /* ...its arms and stops (but fini's) */
	uint64_t idle_runs; /* runs that ran no callback */
	bool in_fini;       /* twheel_host_fini() runs (its stop is not counted) */
	uint64_t wake, armed_at;
	uint64_t w;         /* model: the wheel's tick */
	uint64_t target;    /* ...and during a run, the tick it goes to */
	uint64_t run;       /* the running run's number, 0 outside runs */
	uint64_t nruns;
	uint64_t reading;   /* the running run's clock reading */
	bool defer;         /* twheel_host_defer() is on */
	int nparked;        /* parks since the last placement: 64 place them */
	bool ext;           /* made with twheel_host_init_ext() */
	bool scheduled;     /* ...its parked op scheduled a placement */
	int notified;       /* ...calls of the parked op */
	bool refuse;        /* ...the next call refuses */
	bool backed;        /* the clock has stepped back in this run of the model */
	long fired;         /* callbacks of the running run */
	int depth;          /* callbacks' own operations nest this deep */
	struct htimer t[NT];
	bool failed;
};

static struct hm *M; /* the callbacks' way back */

/* Where timer @x lives now, and the timer @t is (in either place). */
static struct tw_timer *T(struct htimer *x)
{
	return &x->tt[x->cur];
}

static struct htimer *of(struct hm *m, struct tw_timer *t)
{
	size_t i = (size_t)((char *)t - (char *)m->t) / sizeof(struct htimer);

	return &m->t[i];
}

static void failf(struct hm *m, const char *fmt, ...)
{
	va_list ap;

	if (m->failed)
		return;
	m->failed = true;
	va_start(ap, fmt);
	vsnprintf(m->res->failure, sizeof(m->res->failure), fmt, ap);
	va_end(ap);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t ceil_tick(const struct hm *m, uint64_t ns)
{
	return ns / m->tick + (ns % m->tick != 0);
}

/* ---- The fake clock and host timer --------------------------------------- */

static uint64_t fake_clock(void *arg)
{
	return ((struct hm *)arg)->clk;
}

static void fake_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	(void)h;
	if (wake_ns < now_ns)
		failf(M, "host armed for %llu, before its reading %llu",
		      (unsigned long long)wake_ns, (unsigned long long)now_ns);
	if (now_ns != M->clk)
		failf(M, "host armed from a reading %llu that is not the clock's %llu",
		      (unsigned long long)now_ns, (unsigned long long)M->clk);
	M->armed = true;
	M->arms++;
	M->wake = wake_ns;
	M->armed_at = now_ns;
}

static void fake_stop(struct twheel_host *h)
{
	(void)h;
	if (!M->armed)
		failf(M, "host timer stopped while not armed");
	M->armed = false;
	M->stops += !M->in_fini;
}

static const struct twheel_host_ops fake_ops = { fake_arm, fake_stop };

/* The adapter's parked op: schedules a placement, unless told to refuse. */
static int fake_parked(struct twheel_host *h)
{
	(void)h;
	M->notified++;
	if (M->refuse)
		return -1;
	M->scheduled = true;
	return 0;
}

static const struct twheel_host_ops_ext fake_ext = { { fake_arm, fake_stop }, fake_parked };

/* ---- Operations ---------------------------------------------------------- */

static void op(struct hm *m);

/* The tick the wheel is at, or goes to in the running run. */
static uint64_t cur_tick(const struct hm *m)
{
	return m->run ? m->target : m->w;
}

/* A delay: 0, 1 ns, within a tick, a few ticks, far (cascades), and huge
 * (up to UINT64_MAX: a deadline that saturates). */
static uint64_t pick_delay(struct hm *m)
{
	uint8_t k = u8(m->src);

	/* now and then 1 ns, or huge (not with 1 ns ticks: the host timer
	 * would be armed for the end of time, which the clock then reaches
	 * for good) */
	if (k >= 252)
		return k & 1 || m->tick == 1 ? 1 : UINT64_MAX - (k & 2 ? u64(m->src, 8) : 0);
	switch (k % 6) {
	case 0:
		return 0;
	case 1:
		return u64(m->src, 4) % m->tick;
	case 2:
		return u64(m->src, 4) % (3 * m->tick) + 1;
	case 3:
		return u64(m->src, 4) % (256 * m->tick) + 1;
	case 4:
		return u64(m->src, 4) % (16384 * m->tick) + 1;
	default:
		return u64(m->src, 4) % (1u << 24) * m->tick + u8(m->src);
	}
}

/*
 * Outside runs, the host may have brought the wheel's time up to the
 * clock's tick (by @what: where that processes nothing, which timer_cb
 * checks): only forward, and no further than the clock's tick.
 */
static void m_caught_up(struct hm *m, const char *what)
{
	uint64_t w = twheel_now(twheel_host_wheel(&m->h));

	if (w != m->w && (w < m->w || w > m->clk / m->tick))
		failf(m, "%s moved the wheel from tick %llu to %llu, the clock at %llu", what,
		      (unsigned long long)m->w, (unsigned long long)w, (unsigned long long)m->clk);
	m->w = w;
}

/* The model's side of a successful arm of @x for deadline @d. */
static void m_armed(struct hm *m, struct htimer *x, uint64_t d)
{
	uint64_t e = ceil_tick(m, d), t = cur_tick(m);

	x->pending = true;
	x->deadline = d;
	/* (a wheel at TW_TICK_MAX, reached with 1 ns ticks, has no later tick:
	 * after a step back, a deadline ahead is due at once, rt.h) */
	x->passed = d <= m->clk || t == UINT64_MAX;
	x->held = !x->passed && e <= t;
	x->bound = e > t ? e : t < UINT64_MAX ? t + 1 : t; /* the end of time: t */
	x->run = m->run;
}

/* The host placed every parked timer from a reading of the clock as it is now. */
static void m_placed(struct hm *m)
{
	m->nparked = 0;
	for (int i = 0; i < NT; i++) {
		struct htimer *x = &m->t[i];

		if (x->pending && x->parked) {
			x->parked = false;
			x->was_parked = true;
			m_armed(m, x, add_sat(m->clk, x->delay));
		}
	}
}

static int m_parked(const struct hm *m)
{
	int n = 0;

	for (int i = 0; i < NT; i++)
		n += m->t[i].pending && m->t[i].parked;
	return n;
}

static void do_arm(struct hm *m, struct htimer *x, bool deadline, bool mod)
{
	bool parks = !deadline && (m->run || (m->defer && m->armed));
	/* the host tells the adapter of the first park after a placement */
	bool notify = parks && m->ext && !m->run && m->nparked == 0;
	int notified = m->notified;
	uint64_t d, v;
	int rc, want;

	m->refuse = m->ext && u8(m->src) % 8 == 0;

	if (deadline) {
		uint64_t base = u8(m->src) & 1 ? m->clk : m->reading;

		v = pick_delay(m);
		d = u8(m->src) & 1 ? add_sat(base, v) : (base > v ? base - v : 0);
		rc = mod ? twheel_host_mod_at(&m->h, T(x), d) : twheel_host_add_at(&m->h, T(x), d);
	} else {
		v = pick_delay(m);
		d = add_sat(m->clk, v);
		rc = mod ? twheel_host_mod(&m->h, T(x), v) : twheel_host_add(&m->h, T(x), v);
	}
	if (!m->run)
		m_caught_up(m, "an arm");
	want = mod ? x->pending : x->pending ? -EBUSY : 0;
	if (rc != want) {
		failf(m, "timer %d: %s%s returned %d, the model says %d", x->idx,
		      mod ? "mod" : "add", deadline ? "_at" : "", rc, want);
		return;
	}
	if (m->notified - notified != (rc >= 0 && notify))
		failf(m, "timer %d: the parked op was called %d times, the model says %d", x->idx,
		      m->notified - notified, rc >= 0 && notify);
	if (rc < 0)
		return;
	if (parks) {
		x->pending = true;
		x->parked = true;
		x->was_parked = false;
		x->delay = v;
		x->run = m->run;
		if (++m->nparked == 64 || (notify && m->refuse))
			m_placed(m); /* the host places a batch of 64, or what the
				      * adapter could not schedule, at once */
		return;
	}
	x->parked = false;
	x->was_parked = false;
	m_armed(m, x, d);
}

static void do_del(struct hm *m, struct htimer *x)
{
	tw_tick_t pre = twheel_host_expires(&m->h, T(x));
	int rc = twheel_host_del(&m->h, T(x));

	if (rc != x->pending)
		failf(m, "timer %d: del returned %d, the model says %d", x->idx, rc, x->pending);
	/* cancelled while parked, it keeps the tick twheel_host_expires() gave */
	if (x->pending && x->parked && twheel_host_expires(&m->h, T(x)) != pre)
		failf(m, "timer %d: cancelled while parked, twheel_host_expires() %llu, before %llu",
		      x->idx, (unsigned long long)twheel_host_expires(&m->h, T(x)),
		      (unsigned long long)pre);
	x->pending = false;
}

/*
 * Move @x to its other place (twheel_move() on the host's wheel): pending
 * or not, parked (in place or not) or placed, it stays as it was, its
 * tick (twheel_host_expires()) and the count too.
 */
static void do_move(struct hm *m, struct htimer *x)
{
	struct twheel *w = twheel_host_wheel(&m->h);
	struct tw_timer *src = T(x), *dst = &x->tt[!x->cur];
	tw_tick_t pre = twheel_host_expires(&m->h, src);
	size_t n = twheel_count(w);
	int rc = twheel_move(w, dst, src);

	if (rc != x->pending) {
		failf(m, "timer %d: move returned %d, the model says %d", x->idx, rc, x->pending);
		return;
	}
	x->cur = !x->cur;
	m->res->moves += (uint64_t)rc;
	if (tw_timer_pending(src) || tw_timer_pending(dst) != x->pending)
		failf(m, "timer %d: moved, pending %d (it was %d), the place it left %d", x->idx,
		      tw_timer_pending(dst), x->pending, tw_timer_pending(src));
	if (x->pending && twheel_host_expires(&m->h, dst) != pre)
		failf(m, "timer %d: moved, twheel_host_expires() %llu, before %llu", x->idx,
		      (unsigned long long)twheel_host_expires(&m->h, dst), (unsigned long long)pre);
	if (twheel_count(w) != n)
		failf(m, "a move changed the count from %zu to %zu", n, twheel_count(w));
}

/* twheel_host_place(), or from a callback its refusal; or defer on/off. */
static void do_place(struct hm *m, bool toggle)
{
	long want = m->run ? -EBUSY : m_parked(m), rc;
	tw_tick_t pre[NT];

	if (toggle) {
		rc = twheel_host_defer(&m->h, !m->defer);
		if (m->run ? rc != -EBUSY : rc != 0)
			failf(m, "twheel_host_defer(%d) returned %ld", !m->defer, rc);
		if (m->run)
			return;
		m->defer = !m->defer;
		if (!m->defer) {
			m_caught_up(m, "twheel_host_defer(false)");
			m_placed(m);
		}
		return;
	}
	/* twheel_host_expires(): a placed timer's tick; a parked one's, the
	 * earliest it can be placed at (with the clock never stepped back) */
	for (int i = 0; i < NT; i++) {
		struct htimer *x = &m->t[i];

		pre[i] = twheel_host_expires(&m->h, T(x));
		if (x->pending && !x->parked && pre[i] != tw_timer_expires(T(x)))
			failf(m, "timer %d: twheel_host_expires() %llu, its tick %llu", i,
			      (unsigned long long)pre[i], (unsigned long long)tw_timer_expires(T(x)));
	}
	rc = twheel_host_place(&m->h);
	if (rc != want)
		failf(m, "twheel_host_place() returned %ld, the model says %ld", rc, want);
	if (m->run)
		return;
	for (int i = 0; i < NT; i++) {
		struct htimer *x = &m->t[i];

		/* (a reading of UINT64_MAX is the end of time: every delay counted
		 * from it saturates to it and is due, rt.h) */
		if (x->pending && x->parked && !m->backed && m->clk < UINT64_MAX &&
		    tw_timer_expires(T(x)) < pre[i])
			failf(m, "timer %d: placed at tick %llu, twheel_host_expires() said %llu", i,
			      (unsigned long long)tw_timer_expires(T(x)), (unsigned long long)pre[i]);
	}
	m_caught_up(m, "twheel_host_place()");
	m_placed(m);
}

/* Forward, standing still, or back; or to the host timer's wake time. */
static void move_clock(struct hm *m)
{
	uint64_t t = m->tick, v;

	switch (u8(m->src) % 9) {
	case 0:
		break; /* stands still */
	case 1:
		m->clk = add_sat(m->clk, u64(m->src, 4) % t);
		break;
	case 2:
		m->clk = add_sat(m->clk, u64(m->src, 4) % (3 * t) + 1);
		break;
	case 3:
		m->clk = add_sat(m->clk, u64(m->src, 4) % (300 * t));
		break;
	case 4:
		m->clk = add_sat(m->clk, u64(m->src, 4) % (65536 * t));
		break;
	case 5:
		v = u64(m->src, 4) % (2 * t) + 1;
		m->clk = m->clk > v ? m->clk - v : 0;
		m->res->backs++;
		m->backed = true;
		break;
	case 6:
		v = u64(m->src, 4) % (50 * t) + 1;
		m->clk = m->clk > v ? m->clk - v : 0;
		m->res->backs++;
		m->backed = true;
		break;
	default:
		if (m->armed && m->wake > m->clk)
			m->clk = m->wake;
		else
			m->clk = add_sat(m->clk, t);
		break;
	}
}

/* The fake host timer fires: the host runs the wheel. */
static void host_fires(struct hm *m)
{
	uint64_t run, target;
	long n;

	m->armed = false;
	m_placed(m); /* the run's reading places what was parked before it */
	m->nruns++;
	run = m->run = m->nruns;
	m->reading = m->clk;
	target = m->clk / m->tick;
	m->target = target > m->w ? target : m->w;
	m->fired = 0;
	n = twheel_host_run(&m->h);
	m->w = m->target;
	/* the run's last reading, outside the run (the wheel may catch up to
	 * it), places what its callbacks parked (armed by this run: at the
	 * end of time, due in the next) */
	m_caught_up(m, "the run's last reading");
	m->target = m->w;
	m_placed(m);
	m->run = 0;
	m->res->runs++;
	m->idle_runs += n == 0;
	if (n != m->fired)
		failf(m, "run %llu returned %ld, %ld callbacks ran", (unsigned long long)run, n,
		      m->fired);
	for (int i = 0; i < NT; i++) {
		struct htimer *x = &m->t[i];

		if (x->pending && x->run != run && x->bound <= m->w)
			failf(m, "timer %d late: deadline %llu, bound tick %llu, the wheel at %llu "
				 "after run %llu (reading %llu)",
			      i, (unsigned long long)x->deadline, (unsigned long long)x->bound,
			      (unsigned long long)m->w, (unsigned long long)run,
			      (unsigned long long)m->reading);
	}
}

static void timer_cb(struct tw_timer *t)
{
	struct hm *m = M;
	struct htimer *x = of(m, t);
	int n;

	if (!m->run) {
		failf(m, "timer %d ran outside a run", x->idx);
		return;
	}
	if (!x->pending)
		failf(m, "timer %d ran while not pending", x->idx);
	else if (x->parked)
		failf(m, "timer %d ran while parked", x->idx);
	else if (x->run == m->run)
		failf(m, "timer %d ran in the run that armed it", x->idx);
	else if (!x->passed && m->reading < x->deadline)
		failf(m, "timer %d early: deadline %llu, run %llu read %llu", x->idx,
		      (unsigned long long)x->deadline, (unsigned long long)m->run,
		      (unsigned long long)m->reading);
	if (x->held)
		m->res->held++;
	if (x->was_parked)
		m->res->parked++;
	x->pending = false;
	m->fired++;
	m->res->fires++;
	/* what the callback does: a few operations, clock moves included */
	if (m->depth)
		return;
	m->depth++;
	for (n = u8(m->src) % 4; n > 0 && !m->failed; n--)
		op(m);
	m->depth--;
}

/* One operation, from the top or from a callback. */
static void op(struct hm *m)
{
	struct htimer *x = &m->t[u8(m->src) % NT];
	uint8_t k = u8(m->src) % 15;

	m->res->ops++;
	switch (k) {
	case 0:
	case 1:
		do_arm(m, x, false, k == 1);
		break;
	case 2:
	case 3:
		do_arm(m, x, true, k == 3);
		break;
	case 4:
		do_arm(m, x, u8(m->src) & 1, false);
		break;
	case 5:
		do_del(m, x);
		break;
	case 6:
	case 7:
	case 8:
		move_clock(m);
		break;
	case 12:
		if (m->scheduled && !m->run)
			m->scheduled = false; /* the adapter's scheduled placement runs */
		do_place(m, false);
		break;
	case 13:
		do_place(m, u8(m->src) % 4 == 0);
		break;
	case 14:
		do_move(m, x);
		break;
	default:
		if (m->run) {
			/* from a callback: refused */
			if (twheel_host_run(&m->h) != -EBUSY)
				failf(m, "twheel_host_run() from a callback was not -EBUSY");
			if (twheel_host_fini(&m->h, NULL, NULL) != -EBUSY)
				failf(m, "twheel_host_fini() from a callback was not -EBUSY");
		} else if (m->armed) {
			if (m->clk < m->wake)
				m->clk = m->wake;
			host_fires(m);
		}
		break;
	}
}

/* twheel_host_get_stats(): the counts the model kept. */
static void check_stats(struct hm *m)
{
	struct twheel_host_stats st;
	int rc = twheel_host_get_stats(&m->h, &st);

	if (rc)
		failf(m, "twheel_host_get_stats: %d", rc);
	else if (st.wakeups != m->res->runs || st.idle_wakeups != m->idle_runs ||
		 st.fired != m->res->fires || st.host_arms != m->arms || st.host_stops != m->stops)
		failf(m, "stats: wakeups %llu, idle %llu, fired %llu, host arms %llu, stops %llu; "
			 "the model %llu, %llu, %llu, %llu, %llu",
		      (unsigned long long)st.wakeups, (unsigned long long)st.idle_wakeups,
		      (unsigned long long)st.fired, (unsigned long long)st.host_arms,
		      (unsigned long long)st.host_stops, (unsigned long long)m->res->runs,
		      (unsigned long long)m->idle_runs, (unsigned long long)m->res->fires,
		      (unsigned long long)m->arms, (unsigned long long)m->stops);
}

/* Outside runs: the wheel's count and the host timer as the model says. */
static void check_host(struct hm *m)
{
	uint64_t bound = UINT64_MAX;
	size_t n = 0, placed = 0;

	for (int i = 0; i < NT; i++) {
		if (!m->t[i].pending)
			continue;
		n++;
		if (m->t[i].parked)
			continue;
		placed++;
		if (m->t[i].bound < bound)
			bound = m->t[i].bound;
	}
	check_stats(m);
	if (twheel_count(twheel_host_wheel(&m->h)) != n)
		failf(m, "the wheel holds %zu timers, the model %zu",
		      twheel_count(twheel_host_wheel(&m->h)), n);
	/* (stopped is right when every timer waits for a tick whose boundary
	 * no 64-bit clock reading reaches: rt.h's "forever") */
	if (n && !m->armed && !(n == placed && bound > UINT64_MAX / m->tick))
		failf(m, "%zu timers pending (%zu placed), the host timer stopped", n, placed);
	if (!n && m->armed)
		failf(m, "no timer pending, the host timer armed");
	/* the wheel's next expiry: due now while one is parked (it must be
	 * placed first), else no later than any placed timer's bound */
	{
		struct twheel *w = twheel_host_wheel(&m->h);
		tw_tick_t next = twheel_next_expiry(w);

		if (n > placed && next > twheel_now(w))
			failf(m, "%zu timers parked, the wheel's next expiry %llu after its time %llu",
			      n - placed, (unsigned long long)next, (unsigned long long)twheel_now(w));
		if (placed && next > bound)
			failf(m, "the wheel's next expiry %llu after a timer's bound %llu",
			      (unsigned long long)next, (unsigned long long)bound);
		if (!n && next != TW_TICK_MAX)
			failf(m, "no timer pending, the wheel's next expiry %llu", (unsigned long long)next);
	}
	if (m->ext && n > placed && !m->scheduled)
		failf(m, "%zu timers parked, no placement scheduled", n - placed);
	if (placed && m->armed) {
		uint64_t by = bound > UINT64_MAX / m->tick ? UINT64_MAX : bound * m->tick;

		if (m->wake > (by > m->armed_at ? by : m->armed_at))
			failf(m, "host timer armed for %llu (at %llu), a timer is due by tick "
				 "%llu",
			      (unsigned long long)m->wake, (unsigned long long)m->armed_at,
			      (unsigned long long)bound);
	}
}

static void hand_back(struct tw_timer *t, void *arg)
{
	struct hm *m = arg;
	struct htimer *x = of(m, t);

	if (!x->pending)
		failf(m, "fini handed back timer %d, which was not pending", x->idx);
	/* handed back while parked: with the tick twheel_host_expires() gave */
	else if (x->parked && tw_timer_expires(t) != x->fini_expires)
		failf(m, "fini handed back timer %d, parked, at tick %llu; twheel_host_expires() "
			 "said %llu",
		      x->idx, (unsigned long long)tw_timer_expires(t),
		      (unsigned long long)x->fini_expires);
	x->handed++;
	x->pending = false;
	/* arming from here is dropped */
	if (u8(m->src) & 1)
		x->rearmed = twheel_host_add(&m->h, t, m->tick) == 0;
	/* so is re-arming another timer, handed back or not yet (then it
	 * is not), by delay (parked: a run goes on) or deadline */
	struct htimer *y = &m->t[u8(m->src) % NT];
	int rc, want = y->pending || y->rearmed, how = u8(m->src) % 5;

	switch (how) {
	case 0:
		rc = twheel_host_mod(&m->h, T(y), m->tick * (1 + u8(m->src)) * 300);
		break;
	case 1:
		rc = twheel_host_mod_at(&m->h, T(y), m->reading + m->tick * (1 + u8(m->src)) * 300);
		break;
	case 2:
		rc = twheel_host_del(&m->h, T(y));
		break;
	case 3:
		/* moved: one not handed back yet is handed back from there */
		rc = twheel_move(twheel_host_wheel(&m->h), &y->tt[!y->cur], T(y));
		y->cur = !y->cur;
		if (rc != want)
			failf(m, "fini's function moved timer %d: %d, pending %d", y->idx, rc, want);
		return;
	default:
		return;
	}
	if (rc != want)
		failf(m, "fini's function re-armed or cancelled timer %d: %d, pending %d", y->idx, rc,
		      want);
	y->pending = false;
	y->rearmed = how != 2; /* mod: armed again, del: not */
}

int hm_run(struct byte_src *src, struct hm_result *res)
{
	static const uint64_t ticks[] = { 1000000, 1000, 1, 7, 3000001, 1000000000 };
	struct twheel_rt rt;
	struct hm *m = calloc(1, sizeof(*m));
	unsigned how;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!m) {
		snprintf(res->failure, sizeof(res->failure), "out of memory");
		return -1;
	}
	M = m;
	m->src = src;
	m->res = res;
	m->tick = ticks[u8(src) % 6];
	how = u8(src);
	m->clk = u64(src, 5) * (how & 1 ? 1 : m->tick);
	/* a quarter of the runs near the end of time (with ticks of 1 ns the
	 * wheel could reach TW_TICK_MAX, which has no tick after it: test_rt) */
	if ((how & 6) == 6 && m->tick > 1)
		m->clk = UINT64_MAX - m->clk;
	m->reading = m->clk;
	twheel_rt_init(&rt, m->tick, fake_clock, m);
	m->ext = u8(src) & 1;
	rc = m->ext ? twheel_host_init_ext(&m->h, &rt, &fake_ext)
		    : twheel_host_init(&m->h, &rt, &fake_ops);
	if (rc) {
		snprintf(res->failure, sizeof(res->failure), "twheel_host_init: %d", rc);
		free(m);
		return -1;
	}
	m->w = m->clk / m->tick;
	for (int i = 0; i < NT; i++) {
		m->t[i].idx = i;
		tw_timer_init(&m->t[i].tt[0], timer_cb);
		tw_timer_init(&m->t[i].tt[1], timer_cb);
	}
	if (u8(src) & 1)
		do_place(m, true); /* defer from the start */
	while (src_more(src) && !m->failed) {
		op(m);
		check_host(m);
	}
	/* half the time, place what is parked and let everything run out
	 * before the shutdown */
	if (u8(src) & 1) {
		do_place(m, false);
		check_host(m);
		for (int i = 0; i < 100000 && m->armed && !m->failed; i++) {
			if (m->clk < m->wake)
				m->clk = m->wake;
			host_fires(m);
			check_host(m);
		}
	}
	for (int i = 0; i < NT; i++)
		m->t[i].fini_expires = twheel_host_expires(&m->h, T(&m->t[i]));
	m->in_fini = true;
	rc = twheel_host_fini(&m->h, hand_back, m);
	m->in_fini = false;
	if (rc)
		failf(m, "twheel_host_fini: %d", rc);
	check_stats(m);
	if (!m->failed) {
		for (int i = 0; i < NT; i++) {
			if (m->t[i].pending || m->t[i].handed > 1)
				failf(m, "timer %d: fini handed it back %d times", i, m->t[i].handed);
			if (tw_timer_pending(T(&m->t[i])))
				failf(m, "timer %d pending after fini", i);
		}
		if (m->armed)
			failf(m, "the host timer is armed after fini");
	}
	rc = m->failed ? -1 : 0;
	free(m);
	M = NULL;
	return rc;
}
