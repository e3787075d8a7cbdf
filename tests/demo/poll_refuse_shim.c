/* SPDX-License-Identifier: MIT */
/*
 * poll_refuse_shim.c - LD_PRELOAD'ed into a demo server by
 * udp_poll_error_test.py: liburing's submit functions, wrapped, spoil
 * every multishot poll about to be submitted, so that the kernel fails it
 * at once, every time. POLL_REFUSE=einval sets a poll flag no kernel
 * knows (EINVAL, as every multishot poll fails before Linux 5.13, which
 * takes no flags); POLL_REFUSE=ebadf polls descriptor -1 (EBADF: an error
 * that is not the kernel's refusal).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

static void spoil(struct io_uring *ring)
{
	const char *mode = getenv("POLL_REFUSE");
	struct io_uring_sq *sq = &ring->sq;

	for (unsigned i = sq->sqe_head; i != sq->sqe_tail; i++) {
		struct io_uring_sqe *sqe = &sq->sqes[i & sq->ring_mask];

		if (sqe->opcode != IORING_OP_POLL_ADD || !(sqe->len & IORING_POLL_ADD_MULTI) || !mode)
			continue;
		if (strcmp(mode, "ebadf") == 0)
			sqe->fd = -1;
		else
			sqe->len |= 1u << 31;
	}
}

#define WRAP(name, params, args)                                      \
	int name params                                               \
	{                                                             \
		static int(*real) params;                             \
		if (!real)                                            \
			*(void **)&real = dlsym(RTLD_NEXT, #name);    \
		spoil(ring);                                          \
		return real args;                                     \
	}

WRAP(io_uring_submit, (struct io_uring *ring), (ring))
WRAP(io_uring_submit_and_wait, (struct io_uring *ring, unsigned wait_nr), (ring, wait_nr))
WRAP(io_uring_submit_and_get_events, (struct io_uring *ring), (ring))
WRAP(io_uring_submit_and_wait_timeout,
     (struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr, struct __kernel_timespec *ts,
      sigset_t *sigmask),
     (ring, cqe_ptr, wait_nr, ts, sigmask))
