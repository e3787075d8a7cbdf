/* SPDX-License-Identifier: MIT */
/*
 * old_kernel_shim.c - LD_PRELOAD'ed into a demo server by
 * old_kernel_test.py: liburing's functions, wrapped, answer as an older
 * kernel's io_uring does, so that the servers' refusals and fallbacks run
 * on this machine's kernel, which has everything.
 *
 * OLD_KERNEL=MAJOR.MINOR: the kernel to answer as. Below
 *   6.1   a ring asked for IORING_SETUP_SINGLE_ISSUER or DEFER_TASKRUN
 *         is refused with EINVAL (6.0 has the first, 6.1 the second; a
 *         flag unknown to the kernel is EINVAL);
 *   5.19  IORING_SETUP_TASKRUN_FLAG is refused so, a provided-buffer ring
 *         (io_uring_register_buf_ring()) too, and every multishot accept
 *         is spoiled so that the kernel fails it with EINVAL, as the
 *         kernels before 5.19 fail it (they take no accept flags);
 *   5.13  every multishot poll is spoiled so (a poll flag no kernel knows:
 *         EINVAL, as a kernel before 5.13 takes no poll flags);
 *   5.11  the ring's params lack IORING_FEAT_EXT_ARG (timed waits);
 *   5.5   a ring asked for any flag but IOPOLL, SQPOLL and SQ_AFF
 *         (IORING_SETUP_CQSIZE is 5.5's) is refused with EINVAL.
 * POLL_REFUSE=ebadf: every multishot poll polls descriptor -1 instead
 * (EBADF: an error that is not the kernel's refusal).
 * FORK_FAIL_AFTER=N: fork() succeeds N times, then fails with EAGAIN, as
 * at RLIMIT_NPROC or pid_max (load_procs_test.py, on idle-load).
 */
#define _GNU_SOURCE 1 /* RTLD_NEXT */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>
#include <unistd.h>

/* The kernel answered as, major * 100 + minor; a large value without
 * OLD_KERNEL (nothing is refused). */
static unsigned kernel(void)
{
	const char *v = getenv("OLD_KERNEL");
	unsigned major, minor;

	if (!v || sscanf(v, "%u.%u", &major, &minor) != 2)
		return ~0u;
	return major * 100 + minor;
}

/* real: liburing's @name, taking @params. */
#define REAL(name, params)                                        \
	static int(*real) params;                                 \
	if (!real)                                                \
		*(void **)&real = dlsym(RTLD_NEXT, #name)

static void spoil(struct io_uring *ring)
{
	const char *mode = getenv("POLL_REFUSE");
	bool ebadf = mode && strcmp(mode, "ebadf") == 0;
	struct io_uring_sq *sq = &ring->sq;
	unsigned k = kernel();

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *sqe = &sq->sqes[i & sq->ring_mask];

		if (sqe->opcode == IORING_OP_POLL_ADD && (sqe->len & IORING_POLL_ADD_MULTI)) {
			if (ebadf)
				sqe->fd = -1;
			else if (k < 513)
				sqe->len |= 1u << 31;
		} else if (sqe->opcode == IORING_OP_ACCEPT && (sqe->ioprio & IORING_ACCEPT_MULTISHOT) &&
			   k < 519) {
			sqe->ioprio |= 1u << 15; /* an accept flag no kernel knows */
		}
	}
}

#define WRAP(name, params, args)                               \
	int name params                                        \
	{                                                      \
		REAL(name, params);                             \
		spoil(ring);                                   \
		return real args;                              \
	}

WRAP(io_uring_submit, (struct io_uring *ring), (ring))
WRAP(io_uring_submit_and_wait, (struct io_uring *ring, unsigned wait_nr), (ring, wait_nr))
WRAP(io_uring_submit_and_get_events, (struct io_uring *ring), (ring))
WRAP(io_uring_submit_and_wait_timeout,
     (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr, struct __kernel_timespec *ts,
      sigset_t *sigmask),
     (ring, cqe_ptr, wait_nr, ts, sigmask))

int io_uring_queue_init_params(unsigned entries, struct io_uring *ring, struct io_uring_params *p)
{
	unsigned k = kernel();
	int ret;

	REAL(io_uring_queue_init_params, (unsigned, struct io_uring *, struct io_uring_params *));
	if ((k < 601 && (p->flags & (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN))) ||
	    (k < 519 && (p->flags & IORING_SETUP_TASKRUN_FLAG)) ||
	    (k < 505 && (p->flags & ~(IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF))))
		return -EINVAL;
	ret = real(entries, ring, p);
	if (ret == 0 && k < 511) {
		p->features &= ~IORING_FEAT_EXT_ARG;
		ring->features &= ~IORING_FEAT_EXT_ARG;
	}
	return ret;
}

int io_uring_register_buf_ring(struct io_uring *ring, struct io_uring_buf_reg *reg, unsigned int flags)
{
	REAL(io_uring_register_buf_ring, (struct io_uring *, struct io_uring_buf_reg *, unsigned));
	if (kernel() < 519)
		return -EINVAL;
	return real(ring, reg, flags);
}

pid_t fork(void)
{
	static unsigned forks;
	const char *after = getenv("FORK_FAIL_AFTER");

	REAL(fork, (void));
	if (after && forks >= (unsigned)atoi(after)) {
		errno = EAGAIN;
		return -1;
	}
	forks++;
	return real();
}
