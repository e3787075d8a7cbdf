/* SPDX-License-Identifier: MIT */
/*
 * loop_model.c - the loop's API, single-threaded on a fake clock, checked
 * against a model of what loop.h promises.
 *
 * The model keeps, per timer, the state the header describes (idle, fired,
 * queued, armed, cancelled and not yet released, handed to the executor,
 * handed back by it) and, while armed, the wheel tick it fires at:
 *
 *   - the clock moves forward, stands still and steps back, between
 *     iterations and from inside timer callbacks (on the loop and on the
 *     executor) and posted work. An iteration reads it (now) and goes to
 *     tick T = max(floor(now / tick), W), W being the wheels' tick, which
 *     is T afterwards: the wheels never step back;
 *   - a deadline d is linked with a reference time ref: the iteration's
 *     time (twheel_loop_now()) for add_at/mod_at, and the reading taken
 *     after the inbox pops (one per chunk) for a schedule's delay or
 *     deadline. An add/mod by delay is parked (pending, deadline
 *     twheel_loop_now() + delay until placed) and placed from one reading
 *     taken after it: before the next iteration's wait, at the end of the
 *     iteration that armed it, at the 64th park since the last placement,
 *     before a del of a parked timer and before the drain; the clock may
 *     move (forward, back) between the arm and that reading. A d at or before ref but after a fresh reading (the clock
 *     stepped back) is judged against that reading. A d still ahead fires
 *     in the first iteration whose T reaches ceil(d / tick), or T' + 1 if
 *     that tick is not after the current one T' (W outside an iteration,
 *     T inside): never before the clock reads d, at most one tick late
 *     once it is back. One that has come fires at the first iteration whose
 *     T reaches min(ceil(d / tick), floor(ref / tick));
 *   - an iteration runs the inbox items in order (work, schedules,
 *     cancels), then the due normal timers by expiry tick, then the due
 *     deferrable ones; timers armed by callbacks wait for a later
 *     iteration (checked: the inbox part in exact order, the timers as a
 *     set whose expiry ticks do not decrease, normal before deferrable);
 *   - periodic timers follow the schedule, fixed rate or fixed delay, and
 *     the misfire policy; the callback sees t->deadline and t->missed;
 *   - every return value, tw_loop_timer_busy(), twheel_loop_pending(),
 *     twheel_loop_count(), and that the drain hands back each owned timer
 *     exactly once;
 *   - twheel_loop_get_stats() after every operation: the iterations run
 *     (not those refused), the timers run or handed to the executor, the
 *     periodic runs found a period or more late (misfires: not while a
 *     backlog is paid), the inbox items handled; no wait, wake-up or
 *     completion (every iteration is TW_LOOP_NOWAIT, there is no I/O),
 *     nor a wake-up by the eventfd (no other thread posts).
 *
 * Callbacks act on their own timer (delete, re-arm, cancel, schedule) and
 * work items re-post themselves, stop the loop or call run_once (-EBUSY).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/loop.h>

#include "loop_model.h"


#define NT 8      /* timers */
#define NW 3      /* work items */
#define MAXEV 512 /* events per step */
#define MAXQ 64   /* inbox entries */

/* ---- State ------------------------------------------------------------- */

enum mstate { S_IDLE, S_DONE, S_QUEUED, S_ARMED, S_CANCELLED, S_XRUN, S_PXRUN, S_RETURNED };

/* What a callback does with its own timer (or a work item with itself). */
enum action { A_NONE, A_DEL, A_MOD, A_ADD, A_CANCEL, A_SCHED, A_CLOCK, A_NACTIONS };
enum waction { W_NONE, W_REPOST, W_RUN_ONCE, W_STOP, W_NACTIONS };

struct mtimer {
	struct tw_loop_timer t;
	int idx;
	bool inited;
	bool periodic;
	unsigned flags;
	uint64_t period;
	int action;
	uint64_t action_arg;
	int64_t move;      /* the callback moves the clock by this first */
	/* the model */
	enum mstate st;
	bool linked;
	bool come;         /* linked with a deadline that had come */
	bool parked;       /* armed by delay, not yet placed (no tick yet) */
	uint64_t pdelay;   /* parked: the delay */
	uint64_t parked_at; /* parked: the clock at the arm */
	uint64_t link_iter; /* linked during this iteration (0: between two) */
	uint64_t exp;      /* wheel tick, while linked */
	uint64_t deadline; /* what t->deadline is */
	uint64_t qdl;      /* queued: the deadline to arm, or the delay (qdelay) */
	bool qdelay;
	uint32_t missed, backlog;
	bool cancel_req;   /* periodic on the executor, cancelled during its run */
};

struct mwork {
	struct tw_loop_work w;
	int idx;
	bool queued;
	int action;  /* the model's copy */
	int raction; /* the callback's copy (a re-post happens once) */
	int64_t move; /* the clock moves by this before the action */
};

enum evkind { EV_WORK, EV_FIRE, EV_HANDOFF, EV_RELEASE, EV_DRAIN, EV_WDRAIN };

struct ev {
	int kind, idx;
	uint64_t deadline;
	uint32_t missed;
	int ret;
	uint64_t key; /* expected events of the wheel phase: wheel and expiry */
};

struct evlog {
	struct ev e[MAXEV];
	int n;
};

struct lm {
	struct byte_src *src;
	struct lm_result *res;
	struct twheel_loop *l;
	uint64_t rclk;      /* the fake clock the loop reads (callbacks move it) */
	uint64_t clk;       /* the model's idea of it */
	uint64_t tick, now; /* model: the last iteration's time */
	uint64_t wtick;     /* model: the wheels' tick W; T during an iteration */
	unsigned nparked;   /* arms by delay parked since the last placement */
	size_t max_pending;
	unsigned batch;
	bool executor, hook, stopped, in_iter;
	struct mtimer t[NT];
	struct mwork w[NW];
	/* the inbox: timers (0..NT-1) and work items (NT..) in push order */
	int q[MAXQ];
	int qn;
	/* handed to the executor, in order: the real one and the model's */
	int xq[NT], xn;
	struct tw_loop_timer *rxq[NT];
	int rxn;
	struct evlog got, want;
	/* what twheel_loop_get_stats() must count */
	uint64_t s_iters, s_fired, s_misfires, s_inbox;
	bool failed;
};

static struct lm *M; /* the callbacks' way back */
static int trace;    /* TWHEEL_LOOP_MODEL_TRACE=1: print each operation */

#define TRACE(...)                                    \
	do {                                          \
		if (trace)                            \
			fprintf(stderr, __VA_ARGS__); \
	} while (0)

static void failf(struct lm *m, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (m->failed)
		return;
	m->failed = true;
	n = (size_t)snprintf(m->res->failure, sizeof(m->res->failure), "op %llu: ",
			     (unsigned long long)m->res->ops);
	va_start(ap, fmt);
	if (n < sizeof(m->res->failure))
		vsnprintf(m->res->failure + n, sizeof(m->res->failure) - n, fmt, ap);
	va_end(ap);
}

#define EXPECT_RET(m, got, want, what)                                              \
	do {                                                                        \
		long g_ = (long)(got), w_ = (long)(want);                            \
		TRACE("  %s -> %ld (model %ld)\n", (what), g_, w_);                 \
		if (g_ != w_)                                                       \
			failf((m), "%s returned %ld, the model says %ld", (what), g_, w_); \
	} while (0)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The clock after a move by @d ns (saturating; it cannot go below 0). */
static uint64_t clock_moved(uint64_t c, int64_t d)
{
	uint64_t back = 0 - (uint64_t)d;

	if (d >= 0)
		return add_sat(c, (uint64_t)d);
	return c > back ? c - back : 0;
}

static uint64_t clock_read(void *arg)
{
	return ((struct lm *)arg)->rclk;
}

static bool owned(enum mstate s)
{
	return s != S_IDLE && s != S_DONE;
}

static size_t owned_count(const struct lm *m)
{
	size_t n = 0;

	for (int i = 0; i < NT; i++)
		n += owned(m->t[i].st);
	return n;
}

static void ev_add(struct evlog *g, int kind, int idx, uint64_t deadline, uint32_t missed,
		   int ret, uint64_t key)
{
	if (g->n < MAXEV)
		g->e[g->n++] = (struct ev){ kind, idx, deadline, missed, ret, key };
}

static void q_push(struct lm *m, int item)
{
	if (m->qn < MAXQ)
		m->q[m->qn++] = item;
	else
		failf(m, "model inbox overflow");
}

/* ---- The model's rules --------------------------------------------------- */

static uint64_t ceil_tick(const struct lm *m, uint64_t d)
{
	return d / m->tick + (d % m->tick != 0);
}

/*
 * Link @x for deadline @d with reference time @ref (a reading taken no
 * earlier than the request). A d at or before ref has come, unless the
 * clock stepped back since and reads less than d now (m->clk: the loop's
 * fresh reading at this moment). One that has come is due at once, at a
 * tick no later than ref's (so that due timers still run in deadline
 * order). One still ahead goes on ceil(d / tick), or, if the clock stepped
 * back behind the current tick (W, or T during an iteration), on the next
 * one: the wheels are there already, and what a callback arms never fires
 * in the advance that runs it.
 */
static void m_link_ref(struct lm *m, struct mtimer *x, uint64_t d, uint64_t ref, bool fresh)
{
	uint64_t up = ceil_tick(m, d);

	if (!fresh && d <= ref && d > m->clk)
		ref = m->clk;
	x->parked = false;
	x->deadline = d;
	x->come = d <= ref;
	x->link_iter = m->in_iter ? m->res->iterations : 0;
	x->linked = true;
	if (x->come) {
		x->exp = up < ref / m->tick ? up : ref / m->tick;
		return;
	}
	x->exp = up;
	if (up <= m->wtick) {
		x->exp = m->wtick < UINT64_MAX ? m->wtick + 1 : UINT64_MAX;
		m->res->held++;
	}
}

static void m_link(struct lm *m, struct mtimer *x, uint64_t d, uint64_t ref)
{
	m_link_ref(m, x, d, ref, false);
}

/*
 * The placement of the timers parked by delay, from the reading @ref taken
 * after every park: before an iteration's wait and at its end, at the 64th
 * park since the last placement, before a del of a parked timer and before
 * the drain. Each gets the deadline ref + its delay.
 */
static void m_place(struct lm *m, uint64_t ref)
{
	m->nparked = 0;
	for (int i = 0; i < NT; i++) {
		struct mtimer *x = &m->t[i];

		if (!x->parked)
			continue;
		m->res->placed++;
		m->res->late_placed += ref != x->parked_at;
		/* a deadline that saturated when parked stays saturated */
		m_link_ref(m, x, x->deadline == UINT64_MAX ? UINT64_MAX : add_sat(ref, x->pdelay),
			   ref, true);
	}
}

/* An arm by delay (> 0) reads no clock: the timer is parked, pending, its
 * deadline twheel_loop_now() + the delay until placed. */
static void m_park(struct lm *m, struct mtimer *x, uint64_t delay)
{
	x->parked = true;
	x->pdelay = delay;
	x->parked_at = m->clk;
	x->linked = true;
	x->come = false;
	x->deadline = add_sat(m->now, delay);
	if (++m->nparked >= 64) {
		m->res->batches++;
		m_place(m, m->clk);
	}
}

/* Link @x for an arm: the deadline @v (judged against the iteration's
 * reading), or (@delay) @v after the call: parked, or a delay of 0 from a
 * reading. */
static void m_arm(struct lm *m, struct mtimer *x, uint64_t v, bool delay)
{
	if (!delay)
		m_link(m, x, v, m->now);
	else if (v)
		m_park(m, x, v);
	else
		m_link_ref(m, x, m->clk, m->clk, true);
}

/* The errors an arming call checks before the timer's state. */
static int arm_check(const struct lm *m, const struct mtimer *x)
{
	if ((x->flags & TW_LOOP_EXECUTOR) && !m->executor)
		return -EINVAL;
	if (x->periodic && x->period < m->tick)
		return -EINVAL;
	if (m->stopped)
		return -ESHUTDOWN;
	return 0;
}

/* add / mod (@delay: @v is a delay) / add_at / mod_at (@v is a deadline). */
static int m_add(struct lm *m, struct mtimer *x, uint64_t v, bool delay, bool mod,
		 bool self_running)
{
	int ret = arm_check(m, x);

	if (ret)
		return ret;
	if (self_running) { /* a periodic timer re-armed by its own callback */
		x->backlog = 0;
		x->st = S_ARMED;
		m_arm(m, x, v, delay);
		return 0;
	}
	if (x->st == S_ARMED && mod) {
		m_arm(m, x, v, delay);
		return 1;
	}
	if (owned(x->st))
		return -EBUSY;
	if (m->max_pending && owned_count(m) >= m->max_pending)
		return -ENOSPC;
	x->backlog = 0;
	x->st = S_ARMED;
	m_arm(m, x, v, delay);
	return 0;
}

/* schedule (@delay: @v is a delay) / schedule_at (@v is a deadline) */
static int m_schedule(struct lm *m, struct mtimer *x, uint64_t v, bool delay)
{
	int ret = arm_check(m, x);

	if (ret)
		return ret;
	if (owned(x->st))
		return -EBUSY;
	if (m->max_pending && owned_count(m) >= m->max_pending)
		return -ENOSPC;
	x->st = S_QUEUED;
	x->qdl = v;
	x->qdelay = delay;
	x->deadline = v;
	x->backlog = 0;
	q_push(m, x->idx);
	return 0;
}

static int m_del(struct lm *m, struct mtimer *x, bool self_running)
{
	if (self_running) {
		x->st = S_IDLE;
		x->linked = false;
		x->parked = false;
		return 1;
	}
	switch (x->st) {
	case S_ARMED:
		if (x->parked) /* its deadline first; a placed one's del places nothing */
			m_place(m, m->clk);
		x->st = S_IDLE;
		x->linked = false;
		x->parked = false;
		return 1;
	case S_QUEUED:
	case S_RETURNED:
		x->st = S_CANCELLED;
		return 1;
	case S_PXRUN:
		if (x->cancel_req)
			return 0;
		x->cancel_req = true;
		return 1;
	default: /* idle, fired, cancelled, a one-shot on the executor */
		return 0;
	}
}

static int m_cancel(struct lm *m, struct mtimer *x, bool self_running)
{
	if (self_running) { /* lost to the running callback: no run after it */
		x->cancel_req = true;
		return 0;
	}
	switch (x->st) {
	case S_IDLE:
		return -ENOENT;
	case S_DONE:
	case S_XRUN:
		return 0;
	case S_CANCELLED:
		return -EALREADY;
	case S_QUEUED:
	case S_RETURNED:
		x->st = S_CANCELLED;
		return 1;
	case S_ARMED:
		x->st = S_CANCELLED; /* stays linked until the loop takes the cancel */
		q_push(m, x->idx);
		return 1;
	case S_PXRUN:
		if (x->cancel_req)
			return -EALREADY;
		x->cancel_req = true;
		return 0;
	}
	return -EINVAL;
}

/* After a misfire, skip to the first deadline ahead of the clock's @now as
 * well (the iteration's tick may lag it); without one, skip nothing. */
static uint64_t m_skip_ahead(uint64_t d, uint64_t p, uint64_t missed, uint64_t now)
{
	uint64_t passed = now > d ? (now - d) / p : 0;

	return missed && passed > missed ? passed : missed;
}

/* The deadline after a run of periodic @x served at x->deadline, and in
 * *@ref its reference time: the iteration's, or for a fixed delay the
 * reading it counts from, @fresh_now (then *@fresh). */
static uint64_t m_periodic_next(struct lm *m, const struct mtimer *x, uint64_t *ref,
				bool *fresh, uint64_t fresh_now)
{
	unsigned policy = x->flags & TW_LOOP_MISFIRE_MASK;

	*ref = m->now;
	*fresh = false;
	if (!(x->flags & TW_LOOP_FIXED_DELAY))
		return add_sat(x->deadline,
			       mul_sat(1 + m_skip_ahead(x->deadline, x->period,
							policy == TW_LOOP_MISFIRE_ALL ? 0 : x->missed,
							m->now),
				       x->period));
	if (x->backlog)
		return m->now; /* an owed run: due, if the clock confirms it */
	*ref = fresh_now;
	*fresh = true;
	return add_sat(fresh_now, x->period);
}

static void m_release(struct lm *m, struct mtimer *x)
{
	x->st = S_IDLE;
	x->linked = false;
	x->parked = false;
	x->cancel_req = false;
	if (m->hook)
		ev_add(&m->want, EV_RELEASE, x->idx, 0, 0, 0, 0);
}

/* ---- The callbacks -------------------------------------------------------- */

static void record_fire(struct mtimer *x, int ret)
{
	ev_add(&M->got, EV_FIRE, x->idx, x->t.deadline, x->periodic ? x->t.missed : 0, ret, 0);
	M->res->fires++;
}

/* Do the callback's action on the real loop; returns what it returned. */
static int act_real(struct mtimer *x)
{
	struct twheel_loop *l = M->l;

	M->rclk = clock_moved(M->rclk, x->move);
	M->res->steps_back += x->move < 0;
	switch (x->action) {
	case A_DEL:
		return twheel_loop_del(l, &x->t);
	case A_MOD:
		return twheel_loop_mod(l, &x->t, x->action_arg);
	case A_ADD:
		return twheel_loop_add(l, &x->t, x->action_arg);
	case A_CANCEL:
		return twheel_loop_cancel(l, &x->t);
	case A_SCHED:
		return twheel_loop_schedule(l, &x->t, x->action_arg);
	}
	return 0; /* A_CLOCK: the move only */
}

static void timer_cb(struct tw_loop_timer *t)
{
	struct mtimer *x = tw_container_of(t, struct mtimer, t);

	/* busy() as the header promises: false in a one-shot's callback, true
	 * in a periodic one's (the loop still owns it) */
	if (tw_loop_timer_busy(t) != x->periodic)
		failf(M, "timer %d: busy() %d inside its callback", x->idx, !x->periodic);
	record_fire(x, act_real(x));
}

static void work_cb(struct tw_loop_work *w)
{
	struct mwork *y = tw_container_of(w, struct mwork, w);
	int ret = 0;

	M->rclk = clock_moved(M->rclk, y->move);
	M->res->steps_back += y->move < 0;
	switch (y->raction) {
	case W_REPOST:
		y->raction = W_NONE;
		ret = twheel_loop_post(M->l, w);
		break;
	case W_RUN_ONCE:
		ret = twheel_loop_run_once(M->l, TW_LOOP_NOWAIT);
		break;
	case W_STOP:
		ret = twheel_loop_stop(M->l);
		break;
	}
	ev_add(&M->got, EV_WORK, NT + y->idx, 0, 0, ret, 0);
}

static void release_cb(struct tw_loop_timer *t, void *arg)
{
	struct mtimer *x = tw_container_of(t, struct mtimer, t);

	(void)arg;
	if (tw_loop_timer_busy(t))
		failf(M, "timer %d: busy() in the release hook", x->idx);
	ev_add(&M->got, EV_RELEASE, x->idx, 0, 0, 0, 0);
	M->res->releases++;
}

static void executor_cb(struct tw_loop_timer *t, void *arg)
{
	struct mtimer *x = tw_container_of(t, struct mtimer, t);

	(void)arg;
	if (M->rxn < NT)
		M->rxq[M->rxn++] = t;
	else
		failf(M, "executor handed more timers than there are");
	ev_add(&M->got, EV_HANDOFF, x->idx, 0, 0, 0, 0);
}

static void drain_cb(struct tw_loop_timer *t, void *arg)
{
	struct mtimer *x = tw_container_of(t, struct mtimer, t);

	(void)arg;
	if (tw_loop_timer_busy(t))
		failf(M, "timer %d: busy() when the drain hands it back", x->idx);
	ev_add(&M->got, EV_DRAIN, x->idx, t->deadline, 0, 0, 0);
	M->res->drained++;
}

static void work_drain_cb(struct tw_loop_work *w, void *arg)
{
	struct mwork *y = tw_container_of(w, struct mwork, w);

	(void)arg;
	ev_add(&M->got, EV_WDRAIN, NT + y->idx, 0, 0, 0, 0);
}

/* ---- Model of a callback's action ------------------------------------------ */

/* A one-shot's callback: the timer is fired (idle) while it runs. */
static int m_oneshot_act(struct lm *m, struct mtimer *x)
{
	m->clk = clock_moved(m->clk, x->move);
	switch (x->action) {
	case A_DEL:
		return m_del(m, x, false);
	case A_MOD:
		return m_add(m, x, x->action_arg, true, true, false);
	case A_ADD:
		return m_add(m, x, x->action_arg, true, false, false);
	case A_CANCEL:
		return m_cancel(m, x, false);
	case A_SCHED:
		return m_schedule(m, x, x->action_arg, true);
	}
	return 0;
}

/* A periodic timer's run on the loop thread, then what the loop does after. */
static void m_periodic_run(struct lm *m, struct mtimer *x, uint64_t key)
{
	uint64_t next, ref;
	int ret = 0;
	bool gone = false, fresh;

	m->clk = clock_moved(m->clk, x->move);
	switch (x->action) {
	case A_DEL:
		ret = m_del(m, x, true);
		gone = true;
		break;
	case A_MOD:
	case A_ADD:
		if (m->stopped) {
			ret = -ESHUTDOWN;
			break;
		}
		ret = m_add(m, x, x->action_arg, true, x->action == A_MOD, true);
		gone = true;
		break;
	case A_CANCEL:
		ret = m_cancel(m, x, true);
		break;
	case A_SCHED: /* it is owned: a loop runs it */
		ret = m->stopped ? -ESHUTDOWN : -EBUSY;
		break;
	}
	ev_add(&m->want, EV_FIRE, x->idx, x->deadline, x->missed, ret, key);
	if (gone)
		return;
	if (x->cancel_req) {
		m_release(m, x);
		return;
	}
	next = m_periodic_next(m, x, &ref, &fresh, m->clk);
	m_link_ref(m, x, next, ref, fresh);
	x->st = S_ARMED;
}

/* A due periodic timer found by the wheel; returns whether it ran (or was
 * handed to the executor). */
static bool m_fire_periodic(struct lm *m, struct mtimer *x, uint64_t key)
{
	uint64_t now = m->now, d = x->deadline, p = x->period, missed;
	unsigned policy = x->flags & TW_LOOP_MISFIRE_MASK;
	bool rate = !(x->flags & TW_LOOP_FIXED_DELAY), run = true;

	/* the further deadlines due in this iteration too: their tick
	 * reached (rounding up to the tick is no misfire) */
	missed = mul_sat(m->wtick, m->tick) > d ? (mul_sat(m->wtick, m->tick) - d) / p : 0;
	if (x->backlog) {
		x->backlog--;
		missed = x->backlog;
	} else if (missed) {
		m->s_misfires++;
		if (policy == TW_LOOP_MISFIRE_SKIP)
			run = false;
		else if (policy == TW_LOOP_MISFIRE_ALL && !rate)
			x->backlog = clamp32(missed);
	}
	x->missed = clamp32(missed);
	if (!run) {
		/* the first deadline of the schedule that lies in the future */
		m_link(m, x, rate ? add_sat(d, mul_sat(m_skip_ahead(d, p, missed, now) + 1, p))
				  : add_sat(now, p),
		       now);
		return false; /* expired, no callback: not counted */
	}
	x->linked = false;
	if (x->flags & TW_LOOP_EXECUTOR) {
		x->st = S_PXRUN;
		x->cancel_req = false;
		ev_add(&m->want, EV_HANDOFF, x->idx, 0, 0, 0, key);
		m->xq[m->xn++] = x->idx;
		return true;
	}
	m_periodic_run(m, x, key);
	return true;
}

/* A due timer found by the wheel; returns whether a callback ran (or was
 * handed to the executor). */
static bool m_fire(struct lm *m, struct mtimer *x, uint64_t key)
{
	int ret;

	if (x->st == S_CANCELLED) {
		x->linked = false; /* released by the next inbox run */
		return false; /* expired, no callback: not counted */
	}
	/* never early: one whose deadline had not come when it was linked
	 * fires only once a later iteration's reading has reached it */
	if (!x->come && (m->now < x->deadline || x->link_iter == m->res->iterations))
		failf(m, "the model fires timer %d early: the iteration read %llu, its deadline "
		      "is %llu", x->idx, (unsigned long long)m->now, (unsigned long long)x->deadline);
	if (x->periodic)
		return m_fire_periodic(m, x, key);
	x->linked = false;
	if (x->flags & TW_LOOP_EXECUTOR) {
		x->st = S_XRUN;
		ev_add(&m->want, EV_HANDOFF, x->idx, 0, 0, 0, key);
		m->xq[m->xn++] = x->idx;
		return true;
	}
	x->st = S_DONE;
	ret = m_oneshot_act(m, x);
	ev_add(&m->want, EV_FIRE, x->idx, x->deadline, 0, ret, key);
	return true;
}

/* ---- Comparing -------------------------------------------------------------- */

static bool ev_eq(const struct ev *a, const struct ev *b)
{
	return a->kind == b->kind && a->idx == b->idx && a->deadline == b->deadline &&
	       a->missed == b->missed && a->ret == b->ret;
}

static int ev_cmp(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->idx != b->idx)
		return a->idx < b->idx ? -1 : 1;
	return a->kind - b->kind;
}

static const char *ev_name(int k)
{
	static const char *names[] = { "work", "fire", "handoff", "release", "drain", "wdrain" };

	return names[k];
}

static void ev_fmt(char *buf, size_t len, const struct ev *e)
{
	snprintf(buf, len, "%s(%d dl=%llu missed=%u ret=%d)", ev_name(e->kind), e->idx,
		 (unsigned long long)e->deadline, e->missed, e->ret);
}

/*
 * The first @ordered expected events must come first and in that order;
 * the rest are compared as a set, and in the real order their keys (wheel,
 * expiry) must not decrease.
 */
static void compare(struct lm *m, int ordered, const char *what)
{
	struct evlog *g = &m->got, *w = &m->want;
	struct ev a[MAXEV], b[MAXEV];
	char x[128], y[128];
	int i, n;

	for (i = 0; trace && (i < g->n || i < w->n); i++) {
		x[0] = y[0] = '\0';
		if (i < g->n)
			ev_fmt(x, sizeof(x), &g->e[i]);
		if (i < w->n)
			ev_fmt(y, sizeof(y), &w->e[i]);
		TRACE("  %s %d: loop %s, model %s\n", what, i, x, y);
	}
	if (g->n != w->n) {
		x[0] = y[0] = '\0';
		for (i = 0; i < g->n && i < w->n && ev_eq(&g->e[i], &w->e[i]); i++)
			;
		if (i < g->n)
			ev_fmt(x, sizeof(x), &g->e[i]);
		if (i < w->n)
			ev_fmt(y, sizeof(y), &w->e[i]);
		failf(m, "%s: %d callbacks, the model says %d; first difference at %d: "
		      "loop %s, model %s", what, g->n, w->n, i, x, y);
		return;
	}
	for (i = 0; i < ordered; i++) {
		if (!ev_eq(&g->e[i], &w->e[i])) {
			ev_fmt(x, sizeof(x), &g->e[i]);
			ev_fmt(y, sizeof(y), &w->e[i]);
			failf(m, "%s: callback %d is %s, the model says %s", what, i, x, y);
			return;
		}
	}
	n = g->n - ordered;
	memcpy(a, g->e + ordered, (size_t)n * sizeof(a[0]));
	memcpy(b, w->e + ordered, (size_t)n * sizeof(b[0]));
	/* the keys of the real events, from the model's matching ones */
	for (i = 0; i < n; i++) {
		int j;

		for (j = 0; j < n; j++)
			if (b[j].idx == a[i].idx)
				break;
		if (j < n)
			a[i].key = b[j].key;
		if (i && a[i].key < a[i - 1].key) {
			ev_fmt(x, sizeof(x), &a[i - 1]);
			ev_fmt(y, sizeof(y), &a[i]);
			failf(m, "%s: %s ran before %s, out of expiry order", what, x, y);
			return;
		}
	}
	qsort(a, (size_t)n, sizeof(a[0]), ev_cmp);
	qsort(b, (size_t)n, sizeof(b[0]), ev_cmp);
	for (i = 0; i < n; i++) {
		if (!ev_eq(&a[i], &b[i])) {
			ev_fmt(x, sizeof(x), &a[i]);
			ev_fmt(y, sizeof(y), &b[i]);
			failf(m, "%s: loop ran %s, the model says %s", what, x, y);
			return;
		}
	}
}

static void logs_reset(struct lm *m)
{
	m->got.n = 0;
	m->want.n = 0;
}

/* twheel_loop_get_stats(): the counts the model kept. */
static void check_stats(struct lm *m)
{
	struct twheel_loop_stats st;
	int ret = twheel_loop_get_stats(m->l, &st);

	if (ret)
		failf(m, "get_stats: %d", ret);
	else if (st.iterations != m->s_iters || st.timers_fired != m->s_fired ||
		 st.misfires != m->s_misfires || st.inbox_items != m->s_inbox)
		failf(m, "stats: %llu iterations, %llu timers fired, %llu misfires, %llu inbox "
			 "items; the model %llu, %llu, %llu, %llu",
		      (unsigned long long)st.iterations, (unsigned long long)st.timers_fired,
		      (unsigned long long)st.misfires, (unsigned long long)st.inbox_items,
		      (unsigned long long)m->s_iters, (unsigned long long)m->s_fired,
		      (unsigned long long)m->s_misfires, (unsigned long long)m->s_inbox);
	else if (st.waits || st.wakeups || st.eventfd_wakes || st.io_completions ||
		 st.multishot_ends || st.cq_overflows || st.cq_dropped)
		failf(m, "stats: %llu waits, %llu wake-ups (%llu by the eventfd), %llu completions, "
			 "%llu multishot ends, %llu overflows, %llu dropped, without a wait, another "
			 "thread or I/O",
		      (unsigned long long)st.waits, (unsigned long long)st.wakeups,
		      (unsigned long long)st.eventfd_wakes,
		      (unsigned long long)st.io_completions, (unsigned long long)st.multishot_ends,
		      (unsigned long long)st.cq_overflows, (unsigned long long)st.cq_dropped);
}

/* After every operation: what other threads and the loop thread can see. */
static void check_all(struct lm *m)
{
	size_t count = 0;

	for (int i = 0; i < NT && !m->failed; i++) {
		struct mtimer *x = &m->t[i];

		if (!x->inited)
			continue;
		count += x->linked;
		if (tw_loop_timer_busy(&x->t) != owned(x->st))
			failf(m, "timer %d: busy() %d, the model says state %d", i,
			      tw_loop_timer_busy(&x->t), x->st);
		/* a cancelled timer still on a wheel is left out: "armed"? */
		if (x->st != S_CANCELLED && twheel_loop_pending(m->l, &x->t) != x->linked)
			failf(m, "timer %d: pending() %d, the model says %d", i,
			      twheel_loop_pending(m->l, &x->t), x->linked);
		if (x->linked && x->t.deadline != x->deadline)
			failf(m, "timer %d: deadline %llu, the model says %llu", i,
			      (unsigned long long)x->t.deadline, (unsigned long long)x->deadline);
	}
	if (!m->failed && m->rclk != m->clk)
		failf(m, "callbacks moved the clock to %llu, the model says %llu",
		      (unsigned long long)m->rclk, (unsigned long long)m->clk);
	if (!m->failed && twheel_loop_count(m->l) != count)
		failf(m, "count() %zu, the model says %zu", twheel_loop_count(m->l), count);
	if (!m->failed)
		check_stats(m);
}

/* ---- Operations ---------------------------------------------------------------- */

/* A delay: 0, within a tick, whole ticks, ticks +- 1 ns, far, saturating. */
static uint64_t pick_delay(struct lm *m)
{
	uint8_t b = u8(m->src);
	uint64_t k = 1 + (u8(m->src) & 7), r = u64(m->src, 3);

	switch (b % 8) {
	case 0:
		return 0;
	case 1:
		return 1 + r % m->tick;
	case 2:
		return k * m->tick;
	case 3:
		return k * m->tick + (b & 8 ? 1 : -1ull);
	case 4:
		return r % (16 * m->tick);
	case 5:
		return (r << 8 | u8(m->src)) % (m->tick << 20);
	case 6:
		return UINT64_MAX - r;
	default:
		return r % (3 * m->tick);
	}
}

/* An absolute deadline around twheel_loop_now(), or around the clock
 * when it stepped back behind that: before, at, after. */
static uint64_t pick_deadline(struct lm *m)
{
	uint8_t b = u8(m->src);
	uint64_t base = (b & 16) && m->clk < m->now ? m->clk : m->now;

	switch (b % 4) {
	case 0:
		return base - (u64(m->src, 3) % (base + 1));
	case 1:
		return base;
	default:
		return add_sat(base, pick_delay(m));
	}
}

/* The size of a step back: a few ns, within a tick, whole ticks +- 1 ns,
 * many ticks (the clock stops at 0). */
static uint64_t pick_back(struct lm *m)
{
	uint8_t b = u8(m->src);
	uint64_t t = m->tick, r = u64(m->src, 2);

	switch (b % 4) {
	case 0:
		return 1 + r % 3;
	case 1:
		return 1 + r % t;
	case 2:
		return (1 + r % 8) * t + (b & 4 ? 1 : -1ull);
	default:
		return (1 + r % 4096) * t + u8(m->src);
	}
}

/* How a callback or a work item moves the clock before its action:
 * forward (within 4 ticks), not at all, or back. */
static int64_t pick_move(struct lm *m)
{
	uint8_t b = u8(m->src);

	switch (b % 8) {
	case 0:
		return 0;
	case 1:
	case 2:
		return -(int64_t)pick_back(m);
	default:
		return (int64_t)(u64(m->src, 2) % (4 * m->tick));
	}
}

static void op_init(struct lm *m, struct mtimer *x)
{
	uint8_t b = u8(m->src), c = u8(m->src);
	int ret;

	if (x->inited && owned(x->st))
		return; /* not allowed while a loop owns it */
	memset(&x->t, 0x5a, sizeof(x->t));
	x->periodic = b & 1;
	x->flags = ((b & 2) ? TW_LOOP_DEFERRABLE : 0) | ((b & 4) ? TW_LOOP_EXECUTOR : 0);
	if (x->periodic) {
		unsigned policy = (b >> 4) % 3;

		x->flags |= (b & 8 ? TW_LOOP_FIXED_DELAY : 0) |
			    (policy == 1 ? TW_LOOP_MISFIRE_ONCE :
			     policy == 2 ? TW_LOOP_MISFIRE_ALL : TW_LOOP_MISFIRE_SKIP);
		switch (c % 4) {
		case 0:
			x->period = m->tick;
			break;
		case 1:
			x->period = m->tick * (1 + c / 4 % 8);
			break;
		case 2:
			x->period = m->tick * (1 + c / 4 % 4) + 1 + u8(m->src);
			break;
		default:
			x->period = m->tick - 1; /* too short: -EINVAL when armed */
		}
		ret = tw_loop_timer_init_periodic(&x->t, timer_cb, x->period, x->flags);
	} else {
		x->period = 0;
		ret = tw_loop_timer_init(&x->t, timer_cb, x->flags);
	}
	EXPECT_RET(m, ret, 0, "init");
	TRACE("  init timer %d: periodic %d flags %#x period %llu\n", x->idx, x->periodic,
	      x->flags, (unsigned long long)x->period);
	x->inited = true;
	x->st = S_IDLE;
	x->linked = false;
	x->deadline = 0;
	x->cancel_req = false;
	x->backlog = x->missed = 0;
	x->action = A_NONE;
	x->move = 0;
}

/* What the timer's callback will do with it. */
static void op_action(struct lm *m, struct mtimer *x)
{
	uint8_t b = u8(m->src);
	int a = b % A_NACTIONS;

	if (x->flags & TW_LOOP_EXECUTOR) /* runs on "another thread": cancel only */
		a = (a == A_CANCEL || a == A_CLOCK) ? a : A_NONE;
	x->action = a;
	x->action_arg = pick_delay(m);
	x->move = a == A_CLOCK || u8(m->src) % 4 == 0 ? pick_move(m) : 0;
	TRACE("  action of timer %d: %d arg %llu, clock move %lld first\n", x->idx, a,
	      (unsigned long long)x->action_arg, (long long)x->move);
}

/* Where a due timer sorts in an iteration: normal wheel first, by expiry. */
static uint64_t timer_key(const struct mtimer *x)
{
	return (uint64_t)((x->flags & TW_LOOP_DEFERRABLE) != 0) << 63 | x->exp;
}

/* A work item taken from the inbox: its move of the clock, its action. */
static void m_work_run(struct lm *m, struct mwork *y)
{
	int item = NT + y->idx, r = 0;

	y->queued = false;
	m->clk = clock_moved(m->clk, y->move);
	switch (y->action) {
	case W_REPOST:
		y->action = W_NONE; /* once */
		r = m->stopped ? -ESHUTDOWN : 0;
		if (!r) {
			y->queued = true;
			q_push(m, item);
		}
		break;
	case W_RUN_ONCE:
		r = -EBUSY;
		break;
	case W_STOP:
		m->stopped = true;
		break;
	}
	ev_add(&m->want, EV_WORK, item, 0, 0, r, 0);
}

/*
 * The inbox part of an iteration: up to batch items in order, including
 * ones pushed meanwhile, taken in chunks: the loop pops what is there (up
 * to 64, more than this inbox ever holds, and what is left of the batch),
 * reads the clock once, then handles the chunk. A queued delay counts from
 * that reading, even if a work item of the chunk moved the clock before
 * the timer's turn. Returns the callbacks run.
 */
static int m_inbox_run(struct lm *m)
{
	unsigned left = m->batch;
	int ran = 0;

	while (left && m->qn) {
		unsigned k = (unsigned)m->qn < left ? (unsigned)m->qn : left;
		uint64_t ref = m->clk, next, pref;
		bool fresh;

		left -= k;
		while (k--) {
			int item = m->q[0];
			struct mtimer *x = &m->t[item < NT ? item : 0];

			memmove(m->q, m->q + 1, (size_t)--m->qn * sizeof(m->q[0]));
			m->s_inbox++;
			if (item >= NT) {
				m_work_run(m, &m->w[item - NT]);
				ran++;
			} else if (x->st == S_QUEUED) {
				/* after the request: no second reading */
				m_link_ref(m, x, x->qdelay ? add_sat(ref, x->qdl) : x->qdl, ref, true);
				x->st = S_ARMED;
			} else if (x->st == S_RETURNED) {
				next = m_periodic_next(m, x, &pref, &fresh, ref);
				m_link_ref(m, x, next, pref, fresh);
				x->st = S_ARMED;
			} else if (x->st == S_CANCELLED) {
				m_release(m, x);
			}
		}
	}
	return ran;
}

/*
 * Never early, on what the loop did, before the model replays its wheels
 * (so that a wrong tick in the model cannot hide it): a timer linked (before
 * the iteration, or by its inbox), not cancelled, with a deadline that had
 * not come, runs or is handed off only in an iteration whose reading, taken
 * after it was linked, has reached its deadline.
 */
static void check_never_early(struct lm *m)
{
	for (int i = 0; i < m->got.n; i++) {
		const struct ev *e = &m->got.e[i];
		const struct mtimer *x = &m->t[e->idx < NT ? e->idx : 0];

		if (e->idx >= NT || (e->kind != EV_FIRE && e->kind != EV_HANDOFF))
			continue;
		if (x->st != S_ARMED || !x->linked || x->come)
			continue;
		if (x->link_iter == m->res->iterations)
			failf(m, "timer %d fired early: armed by this iteration, which read %llu "
			      "before, by a clock behind its deadline %llu", x->idx,
			      (unsigned long long)m->now, (unsigned long long)x->deadline);
		else if (m->now < x->deadline)
			failf(m, "timer %d fired early: the iteration read %llu, its deadline is %llu",
			      x->idx, (unsigned long long)m->now, (unsigned long long)x->deadline);
	}
}

/* One iteration: run_once(TW_LOOP_NOWAIT) on the loop, the same on the model. */
static void op_run_once(struct lm *m)
{
	int ran, ordered, ret, i, j, order[NT], no = 0;
	uint64_t tick;
	bool isdue[NT];

	logs_reset(m);
	ret = twheel_loop_run_once(m->l, TW_LOOP_NOWAIT);
	m->res->iterations++;
	if (m->stopped) {
		EXPECT_RET(m, ret, -ESHUTDOWN, "run_once");
		compare(m, 0, "stopped run_once");
		return;
	}
	m->s_iters++;
	/* before its wait, the loop places what was armed by delay since */
	if (m->nparked)
		m_place(m, m->clk);
	m->now = m->clk; /* the reading at the start of the iteration */
	if (twheel_loop_now(m->l) != m->now)
		failf(m, "now() %llu, the clock read %llu", (unsigned long long)twheel_loop_now(m->l),
		      (unsigned long long)m->now);
	/* the tick this iteration goes to, known before any callback runs:
	 * the wheels stay where they are while the clock is behind them */
	tick = m->now / m->tick;
	if (tick < m->wtick)
		tick = m->wtick;
	m->wtick = tick;
	m->in_iter = true;

	ran = m_inbox_run(m);
	ordered = m->want.n;
	check_never_early(m);

	/*
	 * The wheels: what is due now, armed before the advance. Where the
	 * header leaves the order open (equal expiries) the model follows the
	 * loop's order, which compare() checks against the expiry ticks:
	 * callbacks that move the clock or arm timers depend on it.
	 */
	for (i = 0; i < NT; i++)
		isdue[i] = m->t[i].linked && !m->t[i].parked && m->t[i].exp <= tick;
	for (j = ordered; j < m->got.n; j++) {
		const struct ev *e = &m->got.e[j];

		if (e->idx < NT && (e->kind == EV_FIRE || e->kind == EV_HANDOFF) && isdue[e->idx]) {
			isdue[e->idx] = false;
			order[no++] = e->idx;
		}
	}
	for (;;) { /* the rest (no callback), by wheel and expiry */
		int best = -1;

		for (i = 0; i < NT; i++)
			if (isdue[i] && (best < 0 || timer_key(&m->t[i]) < timer_key(&m->t[best])))
				best = i;
		if (best < 0)
			break;
		isdue[best] = false;
		order[no++] = best;
	}
	for (i = 0; i < no; i++) {
		struct mtimer *x = &m->t[order[i]];
		bool fired = m_fire(m, x, timer_key(x));

		ran += fired;
		m->s_fired += fired;
	}
	/* at its end, what its callbacks armed by delay */
	if (m->nparked)
		m_place(m, m->clk);
	m->in_iter = false;
	compare(m, ordered, "run_once");
	EXPECT_RET(m, ret, ran, "run_once");
}

/* The executor runs the first timer it was handed. */
static void op_call(struct lm *m)
{
	struct mtimer *x;
	struct tw_loop_timer *t;
	int ret;

	if (!m->xn)
		return;
	if (!m->rxn) {
		failf(m, "the model handed timer %d to the executor, the loop nothing", m->xq[0]);
		return;
	}
	x = &m->t[m->xq[0]];
	t = m->rxq[0];
	memmove(m->xq, m->xq + 1, (size_t)--m->xn * sizeof(m->xq[0]));
	memmove(m->rxq, m->rxq + 1, (size_t)--m->rxn * sizeof(m->rxq[0]));
	if (t != &x->t) {
		failf(m, "executor: the loop handed timer %d, the model %d",
		      tw_container_of(t, struct mtimer, t)->idx, x->idx);
		return;
	}
	logs_reset(m);
	EXPECT_RET(m, tw_loop_timer_call(t), 0, "tw_loop_timer_call");
	/* the hand-off allows one call: a second one is refused, changes nothing */
	EXPECT_RET(m, tw_loop_timer_call(t), -EINVAL, "second tw_loop_timer_call");
	if (!x->periodic) {
		x->st = S_DONE;
		ret = m_oneshot_act(m, x);
		ev_add(&m->want, EV_FIRE, x->idx, x->deadline, 0, ret, 0);
	} else {
		m->clk = clock_moved(m->clk, x->move);
		ret = x->action == A_CANCEL ? m_cancel(m, x, false) : 0;
		ev_add(&m->want, EV_FIRE, x->idx, x->deadline, x->missed, ret, 0);
		x->st = x->cancel_req ? S_CANCELLED : S_RETURNED;
		x->cancel_req = false;
		q_push(m, x->idx);
	}
	compare(m, m->want.n, "tw_loop_timer_call");
}

/* Between iterations: forward in many ways, stand still, or step back. */
static void op_clock(struct lm *m, uint8_t b)
{
	uint64_t t = m->tick, c = m->clk;
	const struct mtimer *x;

	switch (b % 8) {
	case 0: /* small */
		m->clk += u64(m->src, 2) % (2 * t + 1);
		break;
	case 1: /* to the next tick boundary */
		m->clk = (c / t + 1) * t;
		break;
	case 2: /* just before it */
		m->clk = (c / t + 1) * t - 1 > c ? (c / t + 1) * t - 1 : c;
		break;
	case 3: /* mid-tick */
		m->clk = (c / t + 1) * t + t / 2;
		break;
	case 4: /* many ticks: cascades */
		m->clk += (u64(m->src, 3) % (1u << 22)) * t + u8(m->src);
		break;
	case 5: /* whole periods of the first timer */
		m->clk += m->t[0].period ? (1 + u8(m->src) % 5) * m->t[0].period : t;
		break;
	case 6: /* stand still */
		break;
	default: /* back: by some size, or to just before a timer's deadline */
		x = &m->t[u8(m->src) % NT];
		if (b & 8 && x->linked && x->deadline <= c)
			m->clk = x->deadline - (x->deadline > 2 ? u8(m->src) % 3 : 0);
		else
			m->clk = clock_moved(c, -(int64_t)pick_back(m));
	}
	m->res->steps_back += m->clk < c;
	m->rclk = m->clk;
}

/* A run of re-arms by delay with the clock moving between them (forward,
 * standing, back): long enough, often, for the 64th park to place them. */
static void op_mod_burst(struct lm *m)
{
	int n = 1 + u8(m->src) % 96;

	for (int k = 0; k < n && !m->failed; k++) {
		struct mtimer *x = &m->t[u8(m->src) % NT];
		uint8_t b = u8(m->src);
		uint64_t v;

		if (!x->inited)
			continue;
		if (b % 4 == 0) {
			m->clk = clock_moved(m->clk, b & 4 ? -(int64_t)pick_back(m)
							  : (int64_t)(u8(m->src) * m->tick / 64));
			m->res->steps_back += (b & 4) != 0;
			m->rclk = m->clk;
		}
		v = 1 + pick_delay(m) % (64 * m->tick);
		EXPECT_RET(m, twheel_loop_mod(m->l, &x->t, v), m_add(m, x, v, true, true, false),
			   "mod (burst)");
	}
}

/* twheel_loop_move() there and back (or onto itself): an armed timer stays
 * armed for the same tick (one parked is placed first, as a del does); an
 * owned one that is not on the wheels is refused, unchanged. */
static void op_move(struct lm *m, struct mtimer *x)
{
	static struct tw_loop_timer spare;
	int want = x->st == S_ARMED ? 1 : x->st == S_IDLE || x->st == S_DONE ? 0 : -EBUSY;

	if (!x->inited)
		return;
	if (u8(m->src) % 4 == 0) {
		EXPECT_RET(m, twheel_loop_move(m->l, &x->t, &x->t), want, "move onto itself");
		return;
	}
	tw_loop_timer_init(&spare, timer_cb, 0);
	EXPECT_RET(m, twheel_loop_move(m->l, &spare, &x->t), want, "move");
	if (want < 0)
		return;
	if (want && x->parked)
		m_place(m, m->clk);
	x->parked = false;
	m->res->moved += (uint64_t)want;
	EXPECT_RET(m, tw_loop_timer_busy(&x->t), false, "busy after a move");
	EXPECT_RET(m, twheel_loop_move(m->l, &x->t, &spare), want, "move back");
}

static void op_one(struct lm *m)
{
	uint8_t op = u8(m->src);
	struct mtimer *x = &m->t[u8(m->src) % NT];
	struct mwork *y = &m->w[op % NW];
	uint64_t v;
	int ret, want;

	m->res->ops++;
	if (!x->inited && op % 24 < 10)
		op_init(m, x);
	TRACE("op %llu: %u on timer %d (state %d) / work %d, clock %llu\n",
	      (unsigned long long)m->res->ops, op % 24, x->idx, x->st, y->idx,
	      (unsigned long long)m->clk);
	switch (op % 24) {
	case 0:
		v = pick_delay(m);
		ret = twheel_loop_add(m->l, &x->t, v);
		want = m_add(m, x, v, true, false, false);
		EXPECT_RET(m, ret, want, "add");
		break;
	case 1:
		v = pick_deadline(m);
		ret = twheel_loop_add_at(m->l, &x->t, v);
		want = m_add(m, x, v, false, false, false);
		EXPECT_RET(m, ret, want, "add_at");
		break;
	case 2:
		v = pick_delay(m);
		ret = twheel_loop_mod(m->l, &x->t, v);
		want = m_add(m, x, v, true, true, false);
		EXPECT_RET(m, ret, want, "mod");
		if (u8(m->src) % 8 == 0)
			op_mod_burst(m);
		break;
	case 3:
		v = pick_deadline(m);
		ret = twheel_loop_mod_at(m->l, &x->t, v);
		want = m_add(m, x, v, false, true, false);
		EXPECT_RET(m, ret, want, "mod_at");
		break;
	case 4:
		ret = twheel_loop_del(m->l, &x->t);
		EXPECT_RET(m, ret, m_del(m, x, false), "del");
		break;
	case 5:
		v = pick_delay(m);
		ret = twheel_loop_schedule(m->l, &x->t, v);
		EXPECT_RET(m, ret, m_schedule(m, x, v, true), "schedule");
		break;
	case 6:
		v = pick_deadline(m);
		ret = twheel_loop_schedule_at(m->l, &x->t, v);
		EXPECT_RET(m, ret, m_schedule(m, x, v, false), "schedule_at");
		break;
	case 7:
	case 8:
		ret = twheel_loop_cancel(m->l, &x->t);
		EXPECT_RET(m, ret, m_cancel(m, x, false), "cancel");
		break;
	case 9:
		op_action(m, x);
		break;
	case 10:
		op_init(m, x);
		break;
	case 11:
	case 12:
		v = u8(m->src) % 8 < 5 ? W_NONE : 1 + u8(m->src) % (W_NACTIONS - 1);
		if (v == W_STOP && u8(m->src) != 0)
			v = W_NONE;
		if (!y->queued) { /* before it can run */
			y->raction = (int)v;
			y->move = u8(m->src) % 3 == 0 ? pick_move(m) : 0;
		}
		ret = twheel_loop_post(m->l, &y->w);
		want = m->stopped ? -ESHUTDOWN : y->queued ? -EBUSY : 0;
		if (!want) {
			y->action = (int)v;
			y->queued = true;
			q_push(m, NT + y->idx);
		}
		EXPECT_RET(m, ret, want, "post");
		break;
	case 13:
	case 14:
	case 15:
		op_clock(m, u8(m->src));
		break;
	case 16:
	case 17:
	case 18:
	case 19:
	case 20:
		op_run_once(m);
		break;
	case 21:
		if (u8(m->src) & 1) {
			op_call(m);
			break;
		}
		/* not handed to the executor now (unless it is, in the queue) */
		for (v = 0; v < (uint64_t)m->xn; v++)
			if (m->xq[v] == x->idx)
				break;
		if (v == (uint64_t)m->xn && x->inited) {
			logs_reset(m);
			EXPECT_RET(m, tw_loop_timer_call(&x->t), -EINVAL, "stray tw_loop_timer_call");
			compare(m, 0, "stray tw_loop_timer_call");
		}
		break;
	case 22: /* rare: the rest of the run is about a stopped loop */
		if (u8(m->src) == 0 && u8(m->src) < 64) {
			EXPECT_RET(m, twheel_loop_stop(m->l), 0, "stop");
			m->stopped = true;
		}
		break;
	case 23:
		if (u8(m->src) & 1) {
			op_move(m, x);
			break;
		}
		/* fall through */
	default:
		op_clock(m, 0);
		op_run_once(m);
	}
	check_all(m);
}

/* Stop, let the executor finish, drain: each owned timer handed back once. */
static void finish(struct lm *m)
{
	size_t n, want_n = 0;
	uint64_t ref;
	int i, ordered;

	while (m->xn && !m->failed) {
		op_call(m);
		check_all(m);
	}
	if (m->failed)
		return;
	twheel_loop_stop(m->l);
	m->stopped = true;
	logs_reset(m);
	n = twheel_loop_drain(m->l, drain_cb, m->res->ops & 1 ? work_drain_cb : NULL, NULL);
	/* the parked timers get their deadline first, then the inbox in order
	 * (one reading for its one chunk, after the pops), then the wheels */
	if (m->nparked)
		m_place(m, m->clk);
	ref = m->clk;
	for (i = 0; i < m->qn; i++) {
		int item = m->q[i];

		if (item >= NT) {
			struct mwork *y = &m->w[item - NT];

			y->queued = false;
			if (m->res->ops & 1) {
				ev_add(&m->want, EV_WDRAIN, item, 0, 0, 0, 0);
			} else {
				/* run: a post promises a call; drain's calls are
				 * the loop's callbacks (run_once: -EBUSY) */
				int r = y->action == W_REPOST ? -ESHUTDOWN :
					y->action == W_RUN_ONCE ? -EBUSY : 0;

				m->clk = clock_moved(m->clk, y->move);
				ev_add(&m->want, EV_WORK, item, 0, 0, r, 0);
			}
			continue;
		}
		struct mtimer *x = &m->t[item];

		if (x->st == S_QUEUED || x->st == S_RETURNED) {
			uint64_t pref;
			bool fresh;

			/* the deadline the loop would have armed it for */
			if (x->st == S_QUEUED)
				x->deadline = x->qdelay ? add_sat(ref, x->qdl) : x->qdl;
			else
				x->deadline = m_periodic_next(m, x, &pref, &fresh, ref);
			x->st = S_IDLE;
			x->linked = false;
			ev_add(&m->want, EV_DRAIN, x->idx, x->deadline, 0, 0, 0);
			want_n++;
		} else if (x->st == S_CANCELLED) {
			m_release(m, x);
		}
	}
	m->qn = 0;
	ordered = m->want.n;
	for (i = 0; i < NT; i++) {
		struct mtimer *x = &m->t[i];

		if (x->linked && x->st == S_ARMED) {
			x->st = S_IDLE;
			x->linked = false;
			ev_add(&m->want, EV_DRAIN, x->idx, x->deadline, 0, 0, 1);
			want_n++;
		}
	}
	EXPECT_RET(m, n, want_n, "drain");
	compare(m, ordered, "drain");
	check_all(m);
	for (i = 0; i < NT && !m->failed; i++)
		if (m->t[i].inited && owned(m->t[i].st))
			failf(m, "timer %d still owned (state %d) after the drain", i, m->t[i].st);
	logs_reset(m);
	EXPECT_RET(m, twheel_loop_drain(m->l, drain_cb, NULL, NULL), 0, "second drain");
	if (m->got.n)
		failf(m, "the second drain ran %d callbacks", m->got.n);
}

int lm_run(struct byte_src *src, struct lm_result *res)
{
	static const uint64_t ticks[] = { 1000, 1000000, 3000, 250000, 1000000000, 7919 };
	struct twheel_loop_config cfg;
	struct lm *m = calloc(1, sizeof(*m));
	uint8_t b;
	int ret, i;

	memset(res, 0, sizeof(*res));
	trace = getenv("TWHEEL_LOOP_MODEL_TRACE") != NULL;
	if (!m) {
		snprintf(res->failure, sizeof(res->failure), "out of memory");
		return -1;
	}
	M = m;
	m->src = src;
	m->res = res;
	b = u8(src);
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = ticks[b % 6];
	cfg.max_pending = (b >> 3) % 4 == 0 ? 1 + u8(src) % NT : 0;
	cfg.batch = (b >> 5) % 4 == 0 ? 1 + u8(src) % 3 : 0;
	m->executor = !(b & 0x80);
	b = u8(src);
	m->hook = (b & 3) != 0;
	cfg.flags = (b & 4) ? TW_LOOP_NO_URING : 0; /* fallback mode */
	cfg.clock = clock_read;
	cfg.clock_arg = m;
	cfg.executor = m->executor ? executor_cb : NULL;
	cfg.release = m->hook ? release_cb : NULL;
	TRACE("tick %llu max_pending %zu batch %u executor %d hook %d flags %#x\n",
	      (unsigned long long)cfg.tick_ns, cfg.max_pending, cfg.batch, m->executor, m->hook,
	      cfg.flags);
	m->tick = cfg.tick_ns;
	m->max_pending = cfg.max_pending;
	m->batch = cfg.batch ? cfg.batch : 4096;
	/* a start off the tick grid, or on it */
	m->clk = 1000000000ull * (1 + u8(src) % 4) + (u8(src) & 1 ? u64(src, 3) % m->tick : 0);
	m->now = m->rclk = m->clk;
	m->wtick = m->clk / m->tick;
	ret = twheel_loop_create(&m->l, &cfg, NULL, 0);
	if (ret) {
		free(m);
		M = NULL;
		snprintf(res->failure, sizeof(res->failure), "twheel_loop_create: %d", ret);
		return -1;
	}
	if (twheel_loop_now(m->l) != m->now)
		failf(m, "now() %llu after create, the clock read %llu",
		      (unsigned long long)twheel_loop_now(m->l), (unsigned long long)m->now);
	for (i = 0; i < NT; i++)
		m->t[i].idx = i;
	for (i = 0; i < NW; i++) {
		m->w[i].idx = i;
		tw_loop_work_init(&m->w[i].w, work_cb);
	}

	while (src_more(src) && !m->failed)
		op_one(m);
	if (!m->failed)
		finish(m);
	/* hand back whatever is left (after a failure) without checking */
	while (m->rxn)
		(void)tw_loop_timer_call(m->rxq[--m->rxn]);
	twheel_loop_destroy(m->l, NULL, NULL, NULL);
	ret = m->failed ? -1 : 0;
	free(m);
	M = NULL;
	return ret;
}
