/* SPDX-License-Identifier: MIT */
/*
 * wait.c - one iteration of twheel-uring: the kernel wait, I/O
 * completions, the inbox, and advancing the wheels.
 *
 * One loop is one io_uring, two wheels and one inbox, driven by one thread:
 *
 *	other threads ──push──▶ inbox (inbox.c)
 *	                             │ ≤ cfg.batch items per iteration
 *	                             ▼
 *	io_uring CQEs ──▶ loop thread ──▶ wheel   (normal timers: decide the wait)
 *	                             └──▶ dwheel  (deferrable timers: never do)
 *
 * One iteration (twheel_loop_run_once):
 *   1. place the timers armed by delay since the last placement (timer.c)
 *      from a clock reading (on the default clock, the loop's tick moved
 *      on to it and the wheels caught up to it first, through cascades,
 *      firing nothing: twl_catch_up_reading(), also where no timer is
 *      parked),
 *      then compute the wait from it: 0 if anything
 *      is due or queued, else until the
 *      tick twheel_next_expiry(wheel) returns (a cascade tick or the first
 *      expiry: at most TWHEEL_LEVELS + 1 wake-ups for a lone far timer), or
 *      forever when the normal wheel is empty;
 *   2. submit SQEs and sleep in io_uring_enter(); the timeout is an
 *      argument of the wait (IORING_FEAT_EXT_ARG), so it costs no SQE;
 *      another thread wakes the loop through an eventfd read kept armed on
 *      the ring (the handshake is in inbox.c);
 *   3. read the clock and catch the wheels up to its tick, firing nothing
 *      (twl_catch_up()), run up to CQE_BATCH I/O handlers, handle up to
 *      cfg.batch inbox items, then advance both wheels to the tick of the
 *      reading, unless completions that were waiting at that reading have
 *      not all run yet (below). Both batches are bounded, so that a loop
 *      that is behind (a CPU-starved process with thousands of
 *      completions waiting) still returns from every run_once() and
 *      handles other threads' requests every few hundred completions.
 *      What is left over is run by the next iteration, which then does
 *      not sleep. Last, the timers the iteration's callbacks armed by
 *      delay are placed from one reading taken after them all.
 *
 * I/O before timers. A timer must not fire while the completion it times
 * out already waits in the CQ: an idle timer due now must not close a
 * connection whose data sits in the CQ behind CQE_BATCH other completions.
 * So the wheels are advanced to the tick of a reading r only once every CQE
 * that was in the CQ ring at r has run. An iteration notes its reading and
 * the CQ's tail right after it (the mark); while the CQEs before the mark
 * do not fit in an iteration's batch, the iterations run I/O and the inbox
 * and leave the wheels where they are (no timer fires, not even one due
 * from before); the iteration whose batch reaches the mark advances them to
 * the mark's reading, and the next one takes a new mark. The rule that
 * used to hold (due timers run every CQE_BATCH completions) becomes: due
 * timers run once the completions that were waiting when they were found
 * due have run, at most one CQ ring of them (CQ_MIN_ENTRIES or more; two
 * when the ring was full, below), never behind completions that arrived
 * later, so a steady flood delays them by one ring's worth of handlers
 * (two) and no more. Completions the kernel holds as deferred task work at
 * r are posted to the ring before the mark is taken (taskrun_flush()).
 *
 * Completions the ring could not take. When the ring is full, the kernel
 * keeps further CQEs on its overflow list (IORING_SQ_CQ_OVERFLOW in the SQ
 * flags; IORING_FEAT_NODROP, 5.5, which every kernel with EXT_ARG has),
 * and deferred task work that taskrun_flush() could not post waits as
 * task work (IORING_SQ_TASKRUN). Those came before r too, and the kernel
 * does not say how many there are. A mark taken while the kernel holds
 * completions back moves on, once the batches reach it, to the ring's
 * tail after a flush (io_uring_get_events(): IORING_ENTER_GETEVENTS, which
 * every kernel and liburing 2.3 have, runs the task work and moves the
 * list into the room the batches made, oldest first), and again while the
 * kernel still holds some back after a flush, by at most one CQ ring of
 * CQEs in all (cq_mark_move()). So due timers wait for every completion
 * of a burst up to two rings deep (2,048 CQEs at the least ring), and a
 * flood that keeps the list from emptying delays them by two rings of
 * handlers at most: that is the bound. Of a deeper burst, what lies past
 * the second ring is not waited for. A kernel that lets a later CQE into
 * the ring's room ahead of its list (5.10 did) only uses up the bound
 * sooner. A ring that never fills pays one test of the SQ flags per mark,
 * as it did before.
 */
#include <sys/epoll.h>

#include "loop_impl.h"

static struct io_uring_sqe *loop_sqe(struct twheel_loop *l, void *data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe && l->started) {
		twl_multishot_scan(l);
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (sqe)
		io_uring_sqe_set_data(sqe, data);
	return sqe;
}

struct io_uring_sqe *twheel_loop_get_sqe(struct twheel_loop *l, struct tw_loop_io *io)
{
	/* a stopped loop submits nothing again: the SQE would be lost */
	if (!l || !io || !io->func || loop_fallback(l) || twheel_loop_stopped(l))
		return NULL;
	return loop_sqe(l, io);
}

int twheel_loop_submit(struct twheel_loop *l)
{
	if (!l)
		return -EINVAL;
	if (loop_fallback(l))
		return -EOPNOTSUPP;
	if (!l->started)
		return -EBADFD;
	if (twheel_loop_stopped(l))
		return -ESHUTDOWN; /* no iteration will reap what it would start */
	twl_multishot_scan(l);
	return io_uring_submit(&l->ring);
}

struct io_uring *twheel_loop_ring(struct twheel_loop *l)
{
	return l && !loop_fallback(l) ? &l->ring : NULL;
}

/* Keep one read of the eventfd in flight: that is how producers wake us. */
static void efd_arm(struct twheel_loop *l)
{
	struct io_uring_sqe *sqe = loop_sqe(l, &l->efd_io);

	l->efd_armed = sqe != NULL;
	if (sqe)
		io_uring_prep_read(sqe, l->efd, &l->efd_buf, sizeof(l->efd_buf), 0);
	/* else: the SQ is full of the user's SQEs; loop_wait() retries */
}

void twl_efd_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct twheel_loop *l = tw_container_of(io, struct twheel_loop, efd_io);

	(void)cqe;
	l->st.eventfd_wakes++;
	l->efd_armed = false;
	__atomic_store_n(&l->wake_pending, 0, __ATOMIC_SEQ_CST);
	efd_arm(l);
}

/*
 * Run the handlers of the CQEs available now; returns how many user ones.
 * A CQE without IORING_CQE_F_MORE of a request submitted as multishot
 * counts an end (multishot.c). A ring found overflowed (completions kept on
 * the kernel's list because the CQ was full) is counted; liburing's peek
 * enters the kernel to flush that list once the ring is empty, the next
 * loop_wait() does so at once, and cq_mark_move() when the held
 * completions keep the timers waiting.
 */
static int cqes_run(struct twheel_loop *l)
{
	unsigned budget = CQE_BATCH;
	struct io_uring_cqe *cqe;
	int ran = 0;

	l->cq_more = false;
	if (loop_fallback(l))
		return 0;
	if (IO_URING_READ_ONCE(*l->ring.sq.kflags) & IORING_SQ_CQ_OVERFLOW)
		l->st.cq_overflows++;
	for (;;) {
		if (io_uring_peek_cqe(&l->ring, &cqe) != 0)
			break;
		if (!budget--) {
			l->cq_more = true; /* the rest next iteration, no sleep */
			break;
		}
		struct io_uring_cqe c = *cqe;
		struct tw_loop_io *io = io_uring_cqe_get_data(&c);

		io_uring_cqe_seen(&l->ring, cqe);
		if (!io)
			continue;
		if (io != &l->efd_io) {
			l->st.io_completions++;
			ran++;
		}
		if (!(c.flags & IORING_CQE_F_MORE) && l->ms_len &&
		    twl_multishot_end(l, c.user_data))
			l->st.multishot_ends++;
		io->func(io, &c);
	}
	return ran;
}

/*
 * Completions the kernel holds as deferred task work (DEFER_TASKRUN) are
 * not in the CQ yet: a wait may return before it has run all of that
 * work, and a loop away from its ring (busy, stopped) posts none; its
 * timers then closed connections whose data had come (the C++ echo
 * server, stopped 250 ms twice, 804 of 1,000 active ones). Before a mark
 * is taken they are posted, so that the mark covers every completion that
 * came before the reading: entering the kernel while it says task work
 * waits (IORING_SQ_TASKRUN), until the CQ is full or for at most one CQ
 * ring of calls (what is left, cq_mark_move() waits for, bounded).
 * Returns the SQ flags that say the kernel still holds completions back
 * (IORING_SQ_CQ_OVERFLOW; IORING_SQ_TASKRUN with the flag on), or 0.
 */
static unsigned taskrun_flush(struct twheel_loop *l)
{
	unsigned n = l->ring.cq.ring_entries, f = IO_URING_READ_ONCE(*l->ring.sq.kflags);

	if (!(f & l->held_flags))
		return 0; /* nearly every mark */
	for (unsigned k = 0; k < n && (f & IORING_SQ_TASKRUN) && l->taskrun_flag; k++) {
		if (io_uring_cq_ready(&l->ring) >= n || io_uring_get_events(&l->ring) < 0)
			break;
		f = IO_URING_READ_ONCE(*l->ring.sq.kflags);
	}
	return f & l->held_flags;
}

/*
 * Whether the kernel holds completions back from the CQ ring: on its
 * overflow list (the ring was full), or as deferred task work that
 * taskrun_flush() left there (it stops when the ring is full).
 */
static bool cq_held_back(const struct twheel_loop *l)
{
	return IO_URING_READ_ONCE(*l->ring.sq.kflags) & l->held_flags;
}

/*
 * The batches reached a mark taken while the kernel held completions back
 * (cq_mark_reached()): they are not in the ring, and are not covered by
 * it. Move the mark on to the ring's tail after a flush
 * (io_uring_get_events(): the kernel runs the task work and moves its
 * overflow list into the room the batches made, oldest first), and again
 * while the kernel still holds some back, by cq_held CQEs in all: one CQ
 * ring (CQ_MIN_ENTRIES or more). The held completions leave the list
 * before any posted after the reading, so a burst of up to two rings runs
 * whole before the timers, and a flood that keeps the list from emptying
 * delays them by two rings of handlers at most (the bound). Returns
 * whether this iteration's batch reaches the mark where it now is.
 */
static __attribute__((noinline)) bool cq_mark_move(struct twheel_loop *l)
{
	/* signed: a head past the mark (CQEs the user reaped) has reached it */
	while ((int)(l->cq_mark - IO_URING_READ_ONCE(*l->ring.cq.khead)) <= (int)CQE_BATCH) {
		unsigned more;

		if (!l->cq_held)
			return true;
		/* the ring before the mark holds a batch at most: room */
		if (cq_held_back(l))
			io_uring_get_events(&l->ring); /* failed: nothing moves (below) */
		more = io_uring_smp_load_acquire(l->ring.cq.ktail) - l->cq_mark;
		more = more < l->cq_held ? more : l->cq_held;
		l->cq_mark += more;
		l->cq_held -= more;
		if (!more || !cq_held_back(l))
			l->cq_held = 0; /* all it held is before the mark, or nothing comes */
	}
	return false;
}

/*
 * Whether this iteration's batch of CQEs reaches the mark (see the top of
 * the file), taking a new mark from this iteration's reading if none is
 * set; if so, *@upto is the mark's reading, the time the wheels may be
 * advanced to. cqes_run() reaps min(CQE_BATCH, ready) CQEs, and the CQEs
 * before the mark are all ready, so this is known before any runs. A mark
 * taken while the kernel held completions back moves on over them
 * (cq_mark_move()).
 */
static bool cq_mark_reached(struct twheel_loop *l, uint64_t *upto)
{
	if (loop_fallback(l)) {
		*upto = l->now;
		return true;
	}
	if (!l->cq_marked) {
		/* what came before the reading, into the CQ */
		unsigned held = taskrun_flush(l);

		l->cq_mark_ns = l->now;
		l->cq_mark = io_uring_smp_load_acquire(l->ring.cq.ktail);
		l->cq_marked = true;
		if (held) {
			l->cq_held = l->ring.cq.ring_entries;
			goto move;
		}
	} else if (l->cq_held) {
		goto move;
	}
	/* signed: a head past the mark (CQEs the user reaped) has reached it */
	if ((int)(l->cq_mark - IO_URING_READ_ONCE(*l->ring.cq.khead)) > (int)CQE_BATCH)
		return false;
reached:
	l->cq_marked = false;
	*upto = l->cq_mark_ns;
	return true;
move:
	if (cq_mark_move(l))
		goto reached;
	return false;
}

/* Handle one popped node, @ref being a clock reading taken after its pop;
 * returns 1 if a user callback ran. */
static int inbox_handle(struct twheel_loop *l, struct tw_loop_node *n, uint64_t ref)
{
	if (n->_kind == TW__NODE_WORK) {
		twl_work_run(tw_container_of(n, struct tw_loop_work, _node));
		return 1;
	}
	twl_timer_from_inbox(l, tw_container_of(n, struct tw_loop_timer, _node), ref);
	return 0;
}

/*
 * Step 3's inbox part: handle at most cfg.batch items, so that a flood of
 * cross-thread requests cannot starve due timers and I/O, in chunks of up
 * to INBOX_CHUNK: pop a chunk, read the clock once, hand out the chunk
 * (work runs, timers go to timer.c). A delay queued by
 * twheel_loop_schedule() counts from that reading, which comes after the
 * pop and so after the schedule call. Returns the callbacks run.
 */
static int inbox_run(struct twheel_loop *l)
{
	struct tw_loop_node *chunk[INBOX_CHUNK], *n = NULL;
	unsigned left = l->batch;
	int ran = 0;

	l->inbox_more = false;
	if (!twl_inbox_maybe_nonempty(l))
		return 0; /* most iterations: nothing from other threads */
	while (left) {
		unsigned k = 0, i;
		uint64_t ref;

		while (k < INBOX_CHUNK && k < left) {
			n = twl_inbox_pop(l);
			if (!n || n == &twl_inbox_retry)
				break;
			chunk[k++] = n;
		}
		if (k) {
			ref = loop_clock(l); /* after the pops: queued delays count from here */
			l->st.inbox_items += k;
			left -= k;
			for (i = 0; i < k; i++)
				ran += inbox_handle(l, chunk[i], ref);
		}
		if (n == &twl_inbox_retry) {
			/* A producer was preempted mid-push: let it finish. */
			l->inbox_more = true;
			sched_yield();
			return ran;
		}
		if (!k)
			return ran; /* empty, also of what the chunk's items pushed */
	}
	l->inbox_more = true; /* batch used up: more next iteration, no sleep */
	return ran;
}

/* Clear the eventfd after a wake-up; producers may write again. */
static void efd_reset(struct twheel_loop *l)
{
	uint64_t v;

	if (read(l->efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		l->st.eventfd_wakes++;
	__atomic_store_n(&l->wake_pending, 0, __ATOMIC_SEQ_CST);
}

/*
 * Fallback mode's wait: the eventfd is the only file in the epoll set. The
 * timeout goes in nanoseconds to epoll_pwait2() (5.11); where that is
 * missing or refused (found once: not tried again), epoll_wait() gets it
 * rounded up to a millisecond, so the loop never wakes before the tick
 * boundary it waits for.
 */
static int wait_fallback(struct twheel_loop *l, uint64_t timeout)
{
	struct epoll_event ev;
	struct timespec ts = {
		.tv_sec = (time_t)(timeout / 1000000000u),
		.tv_nsec = (long)(timeout % 1000000000u),
	};
	int n = -1;

	if (timeout)
		l->st.waits++;
	if (!l->no_pwait2) {
		n = epoll_pwait2(l->epfd, &ev, 1, timeout == NO_TIMEOUT ? NULL : &ts, NULL);
		l->no_pwait2 = n < 0 && (errno == ENOSYS || errno == EPERM);
	}
	if (l->no_pwait2) {
		uint64_t ms = timeout / 1000000u + (timeout % 1000000u != 0);

		n = epoll_wait(l->epfd, &ev, 1,
			       timeout == NO_TIMEOUT ? -1 : ms > INT32_MAX ? INT32_MAX : (int)ms);
	}
	if (timeout) {
		__atomic_store_n(&l->sleeping, 0, __ATOMIC_RELAXED);
		l->st.wakeups++;
	}
	if (n > 0)
		efd_reset(l);
	return n < 0 && errno != EINTR ? -errno : 0;
}

/*
 * Step 1 and 2 of an iteration: submit, and sleep unless @nowait or
 * something is due. Returns 0 or a negative errno from io_uring_enter().
 */
static int loop_wait(struct twheel_loop *l, bool nowait)
{
	uint64_t timeout = NO_TIMEOUT, now = 0;
	bool have_now = false; /* now is a reading (0 is one too) */
	int ret;

	/* arms by delay since the last iteration (timer.c): placed from a
	 * reading after them, the one the wait is computed from */
	if (l->nparked) {
		now = loop_clock(l);
		have_now = true;
		twl_timers_place(l, now);
	}
	if (!l->efd_armed)
		efd_arm(l); /* without it another thread could not wake us */
	if (nowait || !l->efd_armed || l->inbox_more || l->cq_more ||
	    __atomic_load_n(&l->stop, __ATOMIC_RELAXED)) {
		timeout = 0;
	} else {
		if (!have_now) {
			now = loop_clock(l);
			twl_catch_up_reading(l, now); /* what was armed by deadline */
		}
		/* until the next tick with work (0 when one is due; "forever",
		 * NO_TIMEOUT, when the wheel is empty) */
		timeout = twheel_rt_timeout_ns(&l->rt, l->wheel, now);
	}

	if (timeout) {
		__atomic_store_n(&l->sleeping, 1, __ATOMIC_SEQ_CST);
		if (twl_inbox_maybe_nonempty(l) || __atomic_load_n(&l->stop, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&l->sleeping, 0, __ATOMIC_RELAXED);
			timeout = 0;
		}
	}

	if (loop_fallback(l))
		return wait_fallback(l, timeout);
	twl_multishot_scan(l);
	if (!timeout) {
		/* Poll: enter the kernel only to submit, to flush completions
		 * the kernel kept on its overflow list, or when completions
		 * wait as deferred task work (or we cannot tell). */
		unsigned sqf = IO_URING_READ_ONCE(*l->ring.sq.kflags);
		bool enter = io_uring_sq_ready(&l->ring) || (sqf & IORING_SQ_CQ_OVERFLOW) ||
			     ((l->features & TW_LOOP_FEAT_DEFER_TASKRUN) &&
			      (!l->taskrun_flag || (sqf & IORING_SQ_TASKRUN)));

		ret = enter ? io_uring_submit_and_get_events(&l->ring) : 0;
		return ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY ? ret : 0;
	}

	l->st.waits++;
	if (timeout == NO_TIMEOUT) {
		ret = io_uring_submit_and_wait(&l->ring, 1);
	} else {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = {
			.tv_sec = (long long)(timeout / 1000000000ull),
			.tv_nsec = (long long)(timeout % 1000000000ull),
		};

		ret = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
	}
	__atomic_store_n(&l->sleeping, 0, __ATOMIC_RELAXED);
	l->st.wakeups++;
	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
		return ret;
	return 0;
}

static int loop_start(struct twheel_loop *l)
{
	if (l->r_disabled) {
		/* io_uring_enable_rings() is declared but not exported by
		 * liburing 2.3: issue the register opcode directly. */
		int ret = io_uring_register(l->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
					    NULL, 0);

		if (ret < 0)
			return ret;
		l->r_disabled = false;
	}
	l->started = true;
	if (!loop_fallback(l))
		efd_arm(l);
	return 0;
}

int twheel_loop_run_once(struct twheel_loop *l, unsigned flags)
{
	struct twheel_loop *prev;
	uint64_t upto;
	tw_tick_t tick;
	long fired;
	int ret, ran;
	bool advance;

	if (!l || (flags & ~TW_LOOP_NOWAIT))
		return -EINVAL;
	if (l->in_callback)
		return -EBUSY;
	if (__atomic_load_n(&l->stop, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (!l->started) {
		ret = loop_start(l);
		if (ret)
			return ret;
	}
	l->st.iterations++;
	l->out_fresh = false; /* the arms after it read again (timer.c) */

	ret = loop_wait(l, flags & TW_LOOP_NOWAIT);
	if (ret)
		return ret;

	l->in_callback = true;
	l->now = loop_clock(l);
	/* A replaced clock might step back; the wheels never do. Known
	 * before any callback runs: what they arm goes after it. */
	advance = cq_mark_reached(l, &upto);
	if (advance) {
		tick = twheel_rt_floor(&l->rt, upto);
		l->tick = tick > l->tick ? tick : l->tick;
	}
	tick = l->tick;
	/* what the handlers and the inbox arm is placed from there */
	twl_catch_up(l, tick);
	ran = cqes_run(l);
	ran += inbox_run(l);
	if (!advance) {
		twl_timers_place_now(l); /* what the handlers armed by delay */
		l->in_callback = false;
		return ran; /* completions from before the reading still wait */
	}

	/* timer.c fires them for the loop this thread advances; a callback
	 * of another loop may be running this one */
	prev = twl_firing_loop;
	twl_firing_loop = l;
	/* callbacks run (or handed to the executor), not timers expired: a
	 * skipped misfire or a timer cancelled meanwhile runs nothing */
	fired = (long)l->st.timers_fired;
	twheel_advance(l->wheel, tick);
	twheel_advance(l->dwheel, tick);
	twl_compat_poll(l, upto); /* legacy timers: on time, not on the loop's tick */
	ran += (int)((long)l->st.timers_fired - fired);
	/* what the iteration's callbacks armed by delay, from a reading after
	 * them all (timer.c) */
	twl_timers_place_now(l);
	twl_firing_loop = prev;
	l->in_callback = false;
	return ran;
}

int twheel_loop_run(struct twheel_loop *l)
{
	for (;;) {
		int ret = twheel_loop_run_once(l, 0);

		if (ret == -ESHUTDOWN)
			return 0;
		if (ret < 0)
			return ret;
	}
}

int twheel_loop_stop(struct twheel_loop *l)
{
	if (!l)
		return -EINVAL;
	callers_enter(l);
	__atomic_store_n(&l->stop, 1, __ATOMIC_SEQ_CST);
	twl_wake(l);
	callers_leave(l);
	return 0;
}

bool twheel_loop_stopped(const struct twheel_loop *l)
{
	return l && __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
}
