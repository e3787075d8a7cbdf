/* SPDX-License-Identifier: MIT */
/*
 * deadline.c - a deadline on one I/O request (twheel_loop_io_deadline()).
 *
 * The request's user_data becomes the deadline's own handler (dl->_req),
 * and a second completion source serves the deadline:
 *
 *   linked timeout  an IORING_OP_LINK_TIMEOUT SQE at the absolute deadline,
 *                   linked to the request (IOSQE_IO_LINK). The kernel posts
 *                   a CQE for it in every case: -ETIME when it fired and
 *                   cancelled the request, -ECANCELED (or -ENOENT, -EALREADY)
 *                   when the request finished first.
 *   loop timer      where the kernel lacks linked timeouts, the loop clock
 *                   is not CLOCK_MONOTONIC, TW_LOOP_NO_LINK_TIMEOUT asks for
 *                   it, or the SQ is full: dl->_timer at the deadline; when
 *                   it fires, an IORING_OP_ASYNC_CANCEL SQE for the request,
 *                   whose CQE comes back too. The request finishing first
 *                   deletes the timer (O(1), no SQE).
 *
 * The user's handler runs once both the request's CQE and the second SQE's
 * CQE (when there is one in flight) have arrived, in either order; so the
 * user may reuse @dl, and the request's user_data, from the handler: no
 * CQE of the old request can come after. res is -ETIME when the deadline
 * fired and the request ended cancelled (-ECANCELED, -EINTR), the
 * request's own result otherwise.
 */
#include "loop_impl.h"

#define DL_ACTIVE 1u   /* between twheel_loop_io_deadline() and the handler */
#define DL_REQ 2u      /* the request's CQE arrived (_res, _cflags) */
#define DL_AUX 4u      /* a linked timeout or a cancel is in flight */
#define DL_TIMER 8u    /* dl->_timer is armed */
#define DL_FIRED 16u   /* the deadline passed: the request is being cancelled */

static struct tw_loop_deadline *dl_of_req(struct tw_loop_io *io)
{
	return tw_container_of(io, struct tw_loop_deadline, _req);
}

static void dl_deliver(struct tw_loop_deadline *dl, const struct io_uring_cqe *req)
{
	struct tw_loop_io *user = dl->_user;
	struct io_uring_cqe c = *req;

	c.user_data = (uint64_t)(uintptr_t)user;
	c.res = dl->_res;
	c.flags = dl->_cflags;
	if ((dl->_state & DL_FIRED) && (c.res == -ECANCELED || c.res == -EINTR))
		c.res = -ETIME;
	dl->_state = 0;
	dl->_user = NULL;
	user->func(user, &c);
}

static void dl_req_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct tw_loop_deadline *dl = dl_of_req(io);

	dl->_res = cqe->res;
	dl->_cflags = cqe->flags;
	dl->_state |= DL_REQ;
	if (dl->_state & DL_TIMER) {
		twheel_loop_del(dl->_loop, &dl->_timer);
		dl->_state &= ~DL_TIMER;
	}
	if (!(dl->_state & DL_AUX))
		dl_deliver(dl, cqe);
}

static void dl_aux_done(struct tw_loop_io *io, const struct io_uring_cqe *cqe)
{
	struct tw_loop_deadline *dl = tw_container_of(io, struct tw_loop_deadline, _aux);

	if (cqe->res == -ETIME)
		dl->_state |= DL_FIRED; /* the linked timeout fired */
	dl->_state &= ~DL_AUX;
	if (dl->_state & DL_REQ) {
		struct io_uring_cqe c = *cqe;

		dl_deliver(dl, &c);
	}
}

/* The loop's timer reached the deadline: cancel the request. */
void twl_deadline_fire(struct tw_loop_timer *t)
{
	struct tw_loop_deadline *dl = tw_container_of(t, struct tw_loop_deadline, _timer);
	struct io_uring_sqe *sqe;

	dl->_state &= ~DL_TIMER;
	sqe = twheel_loop_get_sqe(dl->_loop, &dl->_aux);
	if (!sqe) {
		/* The SQ stays full even after a submission: try again a
		 * tick later (the request is cancelled late, never early).
		 * The retry is not counted against max_pending: the slot
		 * this timer just gave back may be taken (by another
		 * thread's arm), and a refused retry would never cancel
		 * the request. The next twheel_loop_io_deadline() clears
		 * the mark (tw_loop_timer_init()). */
		dl->_timer.timer.flags |= TW__LOOP_UNCOUNTED;
		if (twheel_loop_add(dl->_loop, &dl->_timer, twheel_loop_tick(dl->_loop)) == 0)
			dl->_state |= DL_TIMER;
		return;
	}
	io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)&dl->_req, 0);
	io_uring_sqe_set_data(sqe, &dl->_aux);
	dl->_state |= DL_FIRED | DL_AUX;
}

/* True when @sqe is the last SQE taken from the ring and not submitted. */
static bool sqe_last_pending(const struct io_uring_sq *sq, const struct io_uring_sqe *sqe)
{
	return sq->sqe_tail != sq->sqe_head &&
	       sqe == &sq->sqes[(sq->sqe_tail - 1) & sq->ring_mask];
}

int twheel_loop_io_deadline(struct twheel_loop *l, struct io_uring_sqe *sqe,
			    struct tw_loop_deadline *dl, uint64_t deadline_ns)
{
	struct io_uring_sqe *lt = NULL;
	struct tw_loop_io *user;
	int ret;

	if (!l || !sqe || !dl)
		return -EINVAL;
	if (loop_fallback(l))
		return -EOPNOTSUPP;
	if (twheel_loop_stopped(l))
		return -ESHUTDOWN; /* on either path: the request never starts */
	/* a request that posts no CQE on success could never be delivered */
	if (!sqe_last_pending(&l->ring.sq, sqe) || !sqe->user_data || twl_sqe_multishot(sqe) ||
	    (sqe->flags & IOSQE_CQE_SKIP_SUCCESS))
		return -EINVAL;
	if (dl->_state & DL_ACTIVE)
		return -EBUSY;
	user = (struct tw_loop_io *)(uintptr_t)sqe->user_data;
	/* a request with a deadline already (this one's or another's): a
	 * second one on the loop-timer path would cancel by a user_data the
	 * request no longer has (-ENOENT), and its deadline would pass
	 * unseen; on the linked-timeout path the last SQE is the timeout */
	if (user == &dl->_req || user == &dl->_aux || !user->func || user->func == dl_req_done)
		return -EINVAL;
	dl->_req.func = dl_req_done;
	dl->_aux.func = dl_aux_done;
	dl->_loop = l;
	if ((l->features & TW_LOOP_FEAT_LINK_TIMEOUT) && io_uring_sq_space_left(&l->ring))
		lt = io_uring_get_sqe(&l->ring); /* right after @sqe: linked to it */
	if (lt) {
		dl->_ts[0] = (int64_t)(deadline_ns / 1000000000u);
		dl->_ts[1] = (int64_t)(deadline_ns % 1000000000u);
		io_uring_prep_link_timeout(lt, (struct __kernel_timespec *)(void *)dl->_ts,
					   IORING_TIMEOUT_ABS);
		io_uring_sqe_set_data(lt, &dl->_aux);
		/* a chain the request belongs to goes on after its timeout,
		 * as it does after the request in the loop-timer case */
		lt->flags |= sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
		sqe->flags |= IOSQE_IO_LINK;
		dl->_state = DL_ACTIVE | DL_AUX;
	} else {
		ret = tw_loop_timer_init(&dl->_timer, twl_deadline_fire, 0);
		if (!ret)
			ret = twheel_loop_add_at(l, &dl->_timer, deadline_ns);
		if (ret)
			return ret;
		dl->_state = DL_ACTIVE | DL_TIMER;
	}
	dl->_user = user;
	io_uring_sqe_set_data(sqe, &dl->_req);
	return 0;
}
