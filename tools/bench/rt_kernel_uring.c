/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_kernel_uring.c - the kernel's own timers on io_uring as
 * two tables of operations (rt.h): what a server that already has a ring
 * would use instead of a timer library.
 *
 *   uring-timeout  one IORING_OP_TIMEOUT per timer (relative, count 0).
 *                  del = IORING_OP_TIMEOUT_REMOVE, mod = IORING_TIMEOUT_UPDATE.
 *   uring-link     one request that never completes (a recv on a socketpair
 *                  nobody writes to) per timer, IORING_OP_LINK_TIMEOUT linked
 *                  to it (IOSQE_IO_LINK). del = IORING_OP_ASYNC_CANCEL of the
 *                  recv; mod = IORING_LINK_TIMEOUT_UPDATE, or where the
 *                  kernel lacks it, a cancel and a new pair.
 *
 * Both batch the way a user would: an operation fills one SQE (a pair: two),
 * and the SQ (4,096 entries) is submitted when it is full and once per poll
 * or loop iteration, so every io_uring_enter is inside the timed region. The
 * ring has SINGLE_ISSUER | DEFER_TASKRUN where the kernel has them, and a
 * 65,536-entry CQ. Removes and cancels post no CQE on success
 * (IOSQE_CQE_SKIP_SUCCESS); updates post one, which the re-arm of a timer
 * that fired in the kernel before its update reached it needs (ku_cqe()).
 *
 * user_data: kind (3 bits) | generation (29 bits) | timer index (32 bits).
 * A del bumps the timer's generation, so that a fire already on its way is
 * ignored. The kernel keeps the timeouts, and the linked timeouts, on lists
 * that a remove or an update walks from the front: O(pending timeouts) per
 * operation; a cancel finds a recv in a hash of at most 256 chains. unable()
 * declines the runs whose walks would exceed KU_MAX_STEPS (about 30 s).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <liburing.h>

#include "rt.h"

#define KU_SQ 4096u
#define KU_CQ 65536u
#define KU_BATCH 256u
/* The most list steps (removes or updates times pending timeouts) one run may take. */
#define KU_MAX_STEPS 3e8

enum ku_kind { K_TIMEOUT, K_REQ, K_UPDATE, K_REMOVE, K_WAKE };

#define GEN_MASK 0x1fffffffu
#define UD(k, g, i) ((uint64_t)(k) << 61 | (uint64_t)((g) & GEN_MASK) << 32 | (uint64_t)(i))
#define UD_KIND(u) ((unsigned)((u) >> 61))
#define UD_GEN(u) ((uint32_t)((u) >> 32) & GEN_MASK)
#define UD_IDX(u) ((size_t)(uint32_t)(u))

struct ku {
	struct io_uring ring;
	bool link, stop, wake_armed;
	int efd, sock[2];   /* wake_stop's eventfd; uring-link's socketpair */
	uint64_t efd_val;
	char buf[8];        /* every recv's buffer: nothing ever arrives */
	size_t n;
	uint32_t *gen;      /* bumped by del and re-add: an older generation's fire is stale */
	uint32_t *upd;      /* updates whose CQE has not been reaped */
	uint8_t *pend;
	uint64_t *delay;    /* the latest delay asked for */
	uint64_t enters, sqes;
	struct __kernel_timespec ts[KU_SQ]; /* one per SQ slot: the kernel reads it at submit */
};

/* What the kernel has, probed once. */
static struct {
	bool done, skip, defer, lupdate;
	char why[200]; /* empty: io_uring timeouts usable */
} feat;

static void ku_arm(struct ku *l, size_t i, uint64_t delay);

static void ku_die(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(err));
	exit(1);
}

/* One completion: a fire, a re-arm that came too late, the wake-up. */
static void ku_cqe(struct ku *l, uint64_t ud, int res)
{
	size_t i = UD_IDX(ud);
	bool cur = i < l->n && UD_GEN(ud) == (l->gen[i] & GEN_MASK);
	switch (UD_KIND(ud)) {
	case K_TIMEOUT: /* fired: -ETIME; removed, cancelled or its request done: -ECANCELED */
		if (res == -ETIME && cur && l->pend[i] && !l->upd[i]) {
			l->pend[i] = 0;
			rt_fired(i);
		} else if (res != -ETIME && res != -ECANCELED) {
			ku_die("timeout completion", -res);
		}
		break;
	case K_UPDATE:
		l->upd[i]--;
		if ((res == -ENOENT || res == -EALREADY) && cur && l->pend[i]) { /* it fired first */
			l->gen[i]++;
			ku_arm(l, i, l->delay[i]);
		} else if (res < 0 && res != -ENOENT && res != -EALREADY) {
			ku_die("timeout update", -res);
		}
		break;
	case K_REQ: /* the recv: only ever cancelled */
		if (res != -ECANCELED && res != -EINTR)
			ku_die("recv completed", res < 0 ? -res : EPROTO);
		break;
	case K_WAKE:
		l->stop = true;
		l->wake_armed = false;
		break;
	default: /* a remove or cancel that failed: the timer had already fired (-ENOENT) */
		break;
	}
}

/* Reap every CQE (copied out first: handling one may submit, and reap again). */
static void ku_reap(struct ku *l)
{
	struct io_uring_cqe *cqes[KU_BATCH];
	uint64_t ud[KU_BATCH];
	int res[KU_BATCH];
	unsigned k;
	while ((k = io_uring_peek_batch_cqe(&l->ring, cqes, KU_BATCH)) > 0) {
		for (unsigned j = 0; j < k; j++) {
			ud[j] = cqes[j]->user_data;
			res[j] = cqes[j]->res;
		}
		io_uring_cq_advance(&l->ring, k);
		for (unsigned j = 0; j < k; j++)
			ku_cqe(l, ud[j], res[j]);
	}
}

enum ku_enter { KU_SUBMIT, KU_POLL, KU_WAIT };

/*
 * One io_uring_enter: submit what is queued; KU_POLL also takes the
 * completions there are and KU_WAIT waits for one, and both reap. A full SQ
 * is only submitted (KU_SUBMIT): completions are handled at the next poll or
 * loop iteration, as a loop would, so a timer deleted before then does not
 * fire even if the kernel had already expired it.
 */
static void ku_enter(struct ku *l, enum ku_enter how)
{
	int r;
	do {
		l->enters++;
		r = how == KU_WAIT ? io_uring_submit_and_wait(&l->ring, 1)
		  : how == KU_POLL ? io_uring_submit_and_get_events(&l->ring) : io_uring_submit(&l->ring);
		if (how != KU_SUBMIT || r == -EBUSY)
			ku_reap(l);
	} while (r == -EBUSY || r == -EAGAIN);
	if (r < 0 && r != -EINTR && r != -ETIME)
		ku_die("io_uring_enter", -r);
}

/* An SQE, with @need free slots in a row (a linked pair must go in one submit). */
static struct io_uring_sqe *ku_sqe(struct ku *l, unsigned need)
{
	if (io_uring_sq_space_left(&l->ring) < need)
		ku_enter(l, KU_SUBMIT);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (!sqe)
		ku_die("io_uring_get_sqe", EBUSY);
	l->sqes++;
	return sqe;
}

/* @delay as the timespec of @sqe's slot, stable until the submit that reads it. */
static struct __kernel_timespec *ku_ts(struct ku *l, struct io_uring_sqe *sqe, uint64_t delay)
{
	struct __kernel_timespec *ts = &l->ts[sqe - l->ring.sq.sqes];
	ts->tv_sec = (long long)(delay / 1000000000u);
	ts->tv_nsec = (long long)(delay % 1000000000u);
	return ts;
}

static void ku_arm(struct ku *l, size_t i, uint64_t delay)
{
	struct io_uring_sqe *sqe;
	uint32_t g = l->gen[i];
	if (l->link) {
		sqe = ku_sqe(l, 2);
		io_uring_prep_recv(sqe, l->sock[0], l->buf, sizeof(l->buf), 0);
		sqe->flags |= IOSQE_IO_LINK;
		io_uring_sqe_set_data64(sqe, UD(K_REQ, g, i));
		sqe = ku_sqe(l, 1);
		io_uring_prep_link_timeout(sqe, ku_ts(l, sqe, delay), 0);
	} else {
		sqe = ku_sqe(l, 1);
		io_uring_prep_timeout(sqe, ku_ts(l, sqe, delay), 0, 0);
	}
	io_uring_sqe_set_data64(sqe, UD(K_TIMEOUT, g, i));
	l->pend[i] = 1;
	l->delay[i] = delay;
}

static int ku_add(void *p, size_t i, uint64_t d, uint64_t due)
{
	(void)due;
	ku_arm(p, i, d);
	return 0;
}

static int ku_del(void *p, size_t i)
{
	struct ku *l = p;
	if (!l->pend[i])
		return 0;
	struct io_uring_sqe *sqe = ku_sqe(l, 1);
	if (l->link)
		io_uring_prep_cancel64(sqe, UD(K_REQ, l->gen[i], i), 0);
	else
		io_uring_prep_timeout_remove(sqe, UD(K_TIMEOUT, l->gen[i], i), 0);
	io_uring_sqe_set_data64(sqe, UD(K_REMOVE, l->gen[i], i));
	if (feat.skip)
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	l->gen[i]++;
	l->pend[i] = 0;
	return 1;
}

static int ku_mod(void *p, size_t i, uint64_t d, uint64_t due)
{
	struct ku *l = p;
	(void)due;
	if (!l->pend[i] || (l->link && !feat.lupdate)) {
		int was = ku_del(l, i);
		ku_arm(l, i, d);
		return was;
	}
	struct io_uring_sqe *sqe = ku_sqe(l, 1);
	io_uring_prep_timeout_update(sqe, ku_ts(l, sqe, d), UD(K_TIMEOUT, l->gen[i], i),
				     l->link ? IORING_LINK_TIMEOUT_UPDATE : 0);
	io_uring_sqe_set_data64(sqe, UD(K_UPDATE, l->gen[i], i));
	l->upd[i]++;
	l->delay[i] = d;
	return 1;
}

static bool ku_pending(void *p, size_t i) { return ((struct ku *)p)->pend[i]; }
static void ku_poll(void *p) { ku_enter(p, KU_POLL); }
static void ku_stop(void *p) { ((struct ku *)p)->stop = true; }

static void ku_wake_stop(void *p)
{
	uint64_t one = 1;
	if (write(((struct ku *)p)->efd, &one, sizeof(one)) != sizeof(one))
		ku_die("eventfd write", errno);
}

static void ku_run(void *p)
{
	struct ku *l = p;
	if (!l->wake_armed) { /* a read of the eventfd: wake_stop's way in */
		struct io_uring_sqe *sqe = ku_sqe(l, 1);
		io_uring_prep_read(sqe, l->efd, &l->efd_val, sizeof(l->efd_val), 0);
		io_uring_sqe_set_data64(sqe, UD(K_WAKE, 0, 0));
		l->wake_armed = true;
	}
	l->stop = false;
	while (!l->stop)
		ku_enter(l, KU_WAIT);
}

/* 0, or -errno with the reason in @err: the ring, the eventfd, the socketpair. */
static int ku_setup(struct ku *l, char *err, size_t errlen)
{
	struct io_uring_params ip = { .flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL,
				      .cq_entries = KU_CQ };
	int r;
	if (feat.defer)
		ip.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	l->efd = l->sock[0] = l->sock[1] = -1;
	if ((r = io_uring_queue_init_params(KU_SQ, &l->ring, &ip)) < 0) {
		snprintf(err, errlen, "io_uring_queue_init_params: %s", strerror(-r));
		return r;
	}
	l->efd = eventfd(0, EFD_CLOEXEC);
	if (l->efd < 0 || (l->link && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, l->sock))) {
		r = -errno;
		snprintf(err, errlen, "eventfd or socketpair: %s", strerror(errno));
		return r;
	}
	return 0;
}

static void ku_free(struct ku *l)
{
	if (l->ring.ring_fd > 0)
		io_uring_queue_exit(&l->ring);
	for (int k = 0; k < 2; k++)
		if (l->sock[k] >= 0)
			close(l->sock[k]);
	if (l->efd >= 0)
		close(l->efd);
	free(l->gen);
	free(l->upd);
	free(l->pend);
	free(l->delay);
	free(l);
}

static void *ku_create(size_t n, bool link, char *err, size_t errlen)
{
	struct ku *l = rt_calloc(1, sizeof(*l));
	l->link = link;
	l->n = n;
	l->gen = rt_calloc(n, sizeof(*l->gen));
	l->upd = rt_calloc(n, sizeof(*l->upd));
	l->pend = rt_calloc(n, sizeof(*l->pend));
	l->delay = rt_calloc(n, sizeof(*l->delay));
	if (ku_setup(l, err, errlen) < 0) {
		ku_free(l);
		return NULL;
	}
	return l;
}

static void *kt_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	(void)p;
	return ku_create(n, false, err, errlen);
}

static void *kl_create(const struct rt_params *p, size_t n, char *err, size_t errlen)
{
	(void)p;
	return ku_create(n, true, err, errlen);
}

/* The syscalls are in the timed figures; their count goes to stderr, per run. */
static void ku_destroy(void *p)
{
	struct ku *l = p;
	fprintf(stderr, "    %s: %llu io_uring_enter for %llu SQEs\n", l->link ? "uring-link" : "uring-timeout",
		(unsigned long long)l->enters, (unsigned long long)l->sqes);
	ku_free(l);
}

/* ---- the run-time probe ---------------------------------------------------- */

/* The CQE of @ud on @r after one submit and wait (the probe's few SQEs). */
static int probe_res(struct io_uring *r, uint64_t ud)
{
	struct io_uring_cqe *cqe;
	int res = -ETIMEDOUT;
	while (io_uring_wait_cqe(r, &cqe) == 0) {
		bool it = cqe->user_data == ud;
		res = cqe->res;
		io_uring_cqe_seen(r, cqe);
		if (it)
			return res;
	}
	return res;
}

/*
 * Whether flag @flags of IORING_OP_TIMEOUT_REMOVE is known: an update of a
 * timeout that does not exist fails with -ENOENT if it is, -EINVAL if not.
 */
static bool probe_update(struct io_uring *r, unsigned flags)
{
	static struct __kernel_timespec ts = { .tv_sec = 1 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	io_uring_prep_timeout_update(sqe, &ts, 12345, flags);
	io_uring_sqe_set_data64(sqe, 1);
	return io_uring_submit(r) == 1 && probe_res(r, 1) == -ENOENT;
}

static void probe_ops(struct io_uring *r)
{
	static const struct { int op; const char *name; } ops[] = {
		{ IORING_OP_TIMEOUT, "IORING_OP_TIMEOUT" }, { IORING_OP_TIMEOUT_REMOVE, "IORING_OP_TIMEOUT_REMOVE" },
		{ IORING_OP_LINK_TIMEOUT, "IORING_OP_LINK_TIMEOUT" }, { IORING_OP_ASYNC_CANCEL, "IORING_OP_ASYNC_CANCEL" },
		{ IORING_OP_RECV, "IORING_OP_RECV" }, { IORING_OP_READ, "IORING_OP_READ" },
	};
	struct io_uring_probe *pr = io_uring_get_probe_ring(r);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]) && !feat.why[0]; k++)
		if (!pr || !io_uring_opcode_supported(pr, ops[k].op))
			snprintf(feat.why, sizeof(feat.why), "the kernel lacks %s", ops[k].name);
	io_uring_free_probe(pr);
	if (!feat.why[0] && !probe_update(r, 0))
		snprintf(feat.why, sizeof(feat.why), "the kernel lacks IORING_TIMEOUT_UPDATE (Linux 5.11)");
	feat.lupdate = !feat.why[0] && probe_update(r, IORING_LINK_TIMEOUT_UPDATE);
}

static void probe(void)
{
	struct io_uring r;
	struct io_uring_params ip = { .flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN };
	int e;
	feat.done = true;
	feat.defer = (e = io_uring_queue_init_params(8, &r, &ip)) == 0;
	if (!feat.defer) {
		memset(&ip, 0, sizeof(ip));
		e = io_uring_queue_init_params(8, &r, &ip);
	}
	if (e < 0) {
		snprintf(feat.why, sizeof(feat.why), "io_uring refused: %s", strerror(-e));
		return;
	}
	if (!(ip.features & IORING_FEAT_NODROP))
		snprintf(feat.why, sizeof(feat.why), "the kernel lacks IORING_FEAT_NODROP: CQEs could be lost");
	feat.skip = ip.features & IORING_FEAT_CQE_SKIP;
	if (!feat.why[0])
		probe_ops(&r);
	io_uring_queue_exit(&r);
}

/*
 * The kernel's features, and the runs whose list walks (a remove or an
 * update walks the pending timeouts from the oldest) exceed KU_MAX_STEPS.
 */
static const char *ku_unable(const struct rt_params *p, int w, uint64_t n, bool link, char *buf, size_t len)
{
	double steps = 0;
	if (!feat.done)
		probe();
	if (feat.why[0])
		return feat.why;
	if (w == RT_REARM && (!link || feat.lupdate))
		steps = (double)p->m * (double)n / 2;
	else if (w == RT_ADD_CANCEL && !link)
		steps = (double)n * (double)n / 4;
	else if (link && w != RT_IDLE) /* a cancel, or a fire, finds its recv in a hash of 256 chains */
		steps = (double)n * (double)n / 1024;
	if (steps <= KU_MAX_STEPS)
		return NULL;
	snprintf(buf, len, "each %s walks %s: %.1e steps at this N%s, over %.0e s at 100 ns a step",
		 w == RT_REARM ? "update" : w != RT_ADD_CANCEL ? "fire (it cancels its recv)" : link ? "cancel"
		 : "remove", w != RT_REARM && link ? "a chain of the kernel's 256-bucket cancel hash"
		 : link ? "the kernel's list of linked timeouts" : "the kernel's list of timeouts",
		 steps, w == RT_REARM ? " and M" : "", steps * 1e-7);
	return buf;
}

static const char *kt_unable(const struct rt_params *p, int w, uint64_t n, char *buf, size_t len)
{
	return ku_unable(p, w, n, false, buf, len);
}

static const char *kl_unable(const struct rt_params *p, int w, uint64_t n, char *buf, size_t len)
{
	return ku_unable(p, w, n, true, buf, len);
}

#define KU_XTHREAD "the SQ has one producer: a cross-thread add needs the caller's lock or " \
		   "IORING_OP_MSG_RING; not measured"

const struct rt_ops rt_kernel_timeout = {
	.name = "uring-timeout",
	.note = { [RT_REARM] = "IORING_TIMEOUT_UPDATE (30 s, relative) of a pending IORING_OP_TIMEOUT, "
			       "SQ submitted every 1,000 re-arms and when full; wall ns per re-arm",
		  [RT_ADD_CANCEL] = "IORING_OP_TIMEOUT, then IORING_OP_TIMEOUT_REMOVE (no CQE on success) in "
				    "random order, batched; wall ns per pair",
		  [RT_XTHREAD] = KU_XTHREAD },
	.res_ns = 1, .never_early = true,
	.create = kt_create, .destroy = ku_destroy, .add = ku_add, .mod = ku_mod, .del = ku_del,
	.pending = ku_pending, .poll = ku_poll, .run = ku_run, .stop = ku_stop, .wake_stop = ku_wake_stop,
	.unable = kt_unable,
};

const struct rt_ops rt_kernel_link = {
	.name = "uring-link",
	.note = { [RT_REARM] = "IORING_LINK_TIMEOUT_UPDATE (30 s) of a recv's linked timeout (a cancel "
			       "and a new recv + timeout pair where the kernel lacks it); wall ns per re-arm",
		  [RT_ADD_CANCEL] = "a recv that never completes + IORING_OP_LINK_TIMEOUT, then "
				    "IORING_OP_ASYNC_CANCEL of the recv in random order; wall ns per pair",
		  [RT_XTHREAD] = KU_XTHREAD },
	.res_ns = 1, .never_early = true,
	.create = kl_create, .destroy = ku_destroy, .add = ku_add, .mod = ku_mod, .del = ku_del,
	.pending = ku_pending, .poll = ku_poll, .run = ku_run, .stop = ku_stop, .wake_stop = ku_wake_stop,
	.unable = kl_unable,
};
