/* SPDX-License-Identifier: MIT */
/*
 * drain.c - handing back everything a stopped loop still owns.
 *
 * A program that shuts down must not lose a timer: drain empties the inbox
 * first (queued timers and periodic runs the executor handed back go to
 * the caller, cancelled ones are released, posted work runs or goes to the
 * caller), then the two wheels (twheel_drain()), each timer made idle
 * before the caller sees it, so that the caller may free it at once. A
 * queued delay becomes a deadline, counted from a clock reading taken after
 * the pop as the loop would have, so that every timer handed back carries
 * one in t->deadline; so does a periodic timer whose run the executor
 * handed back: the deadline of its next run, as the loop would re-arm it.
 */
#include "loop_impl.h"

struct drain_ctx {
	struct twheel_loop *l;
	void (*fn)(struct tw_loop_timer *t, void *arg);
	void *arg;
	size_t n;
};

static void drain_one(struct tw_timer *tt, void *arg)
{
	struct drain_ctx *c = arg;
	struct tw_loop_timer *t = tw_container_of(tt, struct tw_loop_timer, timer);

	if (state_cas(&t->_node, TW__T_ARMED, TW__T_IDLE)) {
		pending_dec(c->l, t);
		/* the loop's own: an I/O deadline's, dropped with its request;
		 * a bound legacy host's, whose timers stay on the host */
		if (t->func == twl_deadline_fire || t->func == twl_compat_fire)
			return;
		c->n++;
		if (c->fn)
			c->fn(t, c->arg);
	}
}

/* Hand back (or run, or release) one node popped from the inbox, @ref
 * being a clock reading taken after its pop. */
static void drain_node(struct drain_ctx *c, struct tw_loop_node *n, uint64_t ref,
		       void (*work_fn)(struct tw_loop_work *w, void *arg))
{
	struct twheel_loop *l = c->l;
	struct tw_loop_timer *t;
	uint32_t s;

	if (n->_kind == TW__NODE_WORK) {
		struct tw_loop_work *w = tw_container_of(n, struct tw_loop_work, _node);

		if (work_fn) {
			state_store(n, 0);
			work_fn(w, c->arg);
		} else {
			twl_work_run(w);
		}
		return;
	}
	t = tw_container_of(n, struct tw_loop_timer, _node);
	s = state_load(n);
	/* a deadline, the one the loop would have armed it for, as a drained
	 * armed timer has */
	if (s == TW__T_QUEUED_DELAY)
		t->deadline = add_sat(ref, t->deadline);
	else if (s == TW__T_RETURNED) /* a periodic run ended: the next one's */
		t->deadline = twl_timer_returned_next(l, t, ref);
	if ((s == TW__T_QUEUED || s == TW__T_QUEUED_DELAY || s == TW__T_RETURNED) &&
	    state_cas(n, s, TW__T_IDLE)) {
		pending_dec(l, t);
		c->n++;
		if (c->fn)
			c->fn(t, c->arg);
	} else if (state_load(n) == TW__T_CANCELLED) {
		twl_timer_release(l, t);
	}
}

size_t twheel_loop_drain(struct twheel_loop *l,
			 void (*timer_fn)(struct tw_loop_timer *t, void *arg),
			 void (*work_fn)(struct tw_loop_work *w, void *arg), void *arg)
{
	struct drain_ctx c = { .l = l, .fn = timer_fn, .arg = arg, .n = 0 };
	struct tw_loop_node *chunk[INBOX_CHUNK], *n;
	bool cut = false; /* a push cut in two by fork() (below) */
	unsigned k, i;

	if (!l || l->in_callback)
		return 0;
	/* What drain calls (work items, @timer_fn, @work_fn, the release hook)
	 * is one of the loop's callbacks: a nested destroy, drain or run_once
	 * must find the loop in use. */
	l->in_callback = true;
	/* Timers armed by delay and not yet placed get their deadline. */
	twl_timers_place_now(l);
	/* The inbox first: cancels in it unlink timers from the wheels. In
	 * chunks, as the loop takes them (wait.c): one reading per chunk,
	 * after its pops, for the queued delays. Then the wheels; what their
	 * callbacks cancel is pushed onto the inbox: again, until it stays
	 * empty, so that every cancel that won is released. */
	do {
		do {
			k = 0;
			while (k < INBOX_CHUNK && (n = twl_inbox_pop(l))) {
				if (n != &twl_inbox_retry) {
					chunk[k++] = n;
				} else if (getpid() != l->pid) {
					/* a child made by fork() in the middle of
					 * a push: the thread that would finish it
					 * is not here; what follows is lost to
					 * this copy (the parent's loop has it) */
					cut = true;
					break;
				} else {
					sched_yield(); /* a push in flight */
				}
			}
			if (k) {
				uint64_t ref = loop_clock(l);

				for (i = 0; i < k; i++)
					drain_node(&c, chunk[i], ref, work_fn);
			}
		} while (k);
		twheel_drain(l->wheel, drain_one, &c);
		twheel_drain(l->dwheel, drain_one, &c);
	} while (!cut && twl_inbox_maybe_nonempty(l));
	l->in_callback = false;
	return c.n;
}
