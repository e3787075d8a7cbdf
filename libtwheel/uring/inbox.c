/* SPDX-License-Identifier: MIT */
/*
 * inbox.c - the cross-thread inbox of twheel-uring: the queue (push, pop),
 * waking the loop, and work items (post one, run one popped). It calls
 * nothing in the other files: the loop thread pops the items and hands
 * them out (wait.c), and drains them (drain.c).
 *
 * Other threads reach the loop only through the inbox: an intrusive Vyukov
 * MPSC queue whose link is embedded in every loop timer and work item
 * (struct tw_loop_node), so a schedule, a cancel or a post allocates
 * nothing and costs one atomic exchange. Producers exchange the head and
 * then link the previous head to the new node: wait-free. The consumer (the
 * loop thread) follows the links from its private tail. Between a
 * producer's exchange and its link store the chain is broken; the consumer
 * then sees "retry" (never a lost node) and tries again on its next
 * iteration. The stub node keeps the queue non-empty so that the last real
 * node can be handed out. A node is on the inbox at most once at a time
 * (timer.c's state machine guarantees it for timers, a flag for work).
 *
 * Waking a sleeping loop. Producers push, then write the loop's eventfd
 * only if the loop announced that it may sleep and nobody else has written
 * since it last woke:
 *
 *	producer                          loop (wait.c)
 *	xchg(q_head, n)       [seq_cst]   store(sleeping, 1)       [seq_cst]
 *	if load(sleeping)     [seq_cst]   if inbox looks non-empty [seq_cst]
 *	  && !xchg(wake_pending, 1)           don't sleep
 *	    write(eventfd)                else sleep (an eventfd read is armed)
 *
 * Sequential consistency of the four marked accesses means at least one
 * side sees the other (Dekker), so no wake-up is lost; wake_pending keeps
 * the number of eventfd writes to one per sleep however many producers.
 */
#include "loop_impl.h"

struct tw_loop_node twl_inbox_retry;

_Thread_local unsigned twl_slot_plus1 __attribute__((tls_model("initial-exec")));

/* The calling thread's first call: its slot of twheel_loop.callers (the
 * shared one once the first CALLER_SLOTS threads have theirs). */
unsigned twl_caller_slot_new(void)
{
	static unsigned next;
	unsigned s = __atomic_load_n(&next, __ATOMIC_RELAXED) < CALLER_SLOTS
			     ? __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED)
			     : CALLER_SLOTS;

	if (s > CALLER_SLOTS)
		s = CALLER_SLOTS;
	twl_slot_plus1 = s + 1;
	return s;
}

void twl_inbox_push(struct twheel_loop *l, struct tw_loop_node *n)
{
	struct tw_loop_node *prev;

	__atomic_store_n(&n->_next, NULL, __ATOMIC_RELAXED);
	prev = __atomic_exchange_n(&l->q_head, n, __ATOMIC_SEQ_CST);
	__atomic_store_n(&prev->_next, n, __ATOMIC_RELEASE);
}

/* Returns a node, NULL when empty, or &twl_inbox_retry while a push is in flight. */
struct tw_loop_node *twl_inbox_pop(struct twheel_loop *l)
{
	struct tw_loop_node *tail = l->q_tail;
	struct tw_loop_node *next = __atomic_load_n(&tail->_next, __ATOMIC_ACQUIRE);

	if (tail == &l->stub) {
		if (!next) {
			if (__atomic_load_n(&l->q_head, __ATOMIC_ACQUIRE) == &l->stub)
				return NULL;
			return &twl_inbox_retry;
		}
		l->q_tail = next;
		tail = next;
		next = __atomic_load_n(&next->_next, __ATOMIC_ACQUIRE);
	}
	if (next) {
		l->q_tail = next;
		return tail;
	}
	if (tail != __atomic_load_n(&l->q_head, __ATOMIC_ACQUIRE))
		return &twl_inbox_retry;
	twl_inbox_push(l, &l->stub);
	next = __atomic_load_n(&tail->_next, __ATOMIC_ACQUIRE);
	if (next) {
		l->q_tail = next;
		return tail;
	}
	return &twl_inbox_retry;
}

/* Whether the inbox may hold something (the loop's half of Dekker). */
bool twl_inbox_maybe_nonempty(struct twheel_loop *l)
{
	return l->q_tail != &l->stub ||
	       __atomic_load_n(&l->q_head, __ATOMIC_SEQ_CST) != &l->stub;
}

/* Producer side of the wake-up handshake (see the design comment). */
void twl_wake(struct twheel_loop *l)
{
	static const uint64_t one = 1;

	if (!__atomic_load_n(&l->sleeping, __ATOMIC_SEQ_CST))
		return;
	if (__atomic_exchange_n(&l->wake_pending, 1, __ATOMIC_ACQ_REL))
		return;
	while (write(l->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

/* Run a popped work item; it may be posted again once its func started. */
void twl_work_run(struct tw_loop_work *w)
{
	void (*func)(struct tw_loop_work *) = w->func;

	state_store(&w->_node, 0);
	func(w);
}

static int post(struct twheel_loop *l, struct tw_loop_work *w)
{
	if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (!state_cas(&w->_node, 0, 1))
		return -EBUSY;
	w->_node._kind = TW__NODE_WORK;
	twl_inbox_push(l, &w->_node);
	twl_wake(l);
	return 0;
}

int twheel_loop_post(struct twheel_loop *l, struct tw_loop_work *w)
{
	int ret;

	if (!l || !w || !w->func)
		return -EINVAL;
	callers_enter(l);
	ret = post(l, w);
	callers_leave(l);
	return ret;
}
