/* SPDX-License-Identifier: MIT */
/*
 * adapters/adapter.h - what the adapters' create and destroy functions
 * share: an adapter struct that starts with a struct twheel_host, allocated
 * and initialised, or checked and shut down. Private to adapters/ (not
 * installed); each adapter adds only its host timer.
 */
#ifndef TWHEEL_ADAPTER_H
#define TWHEEL_ADAPTER_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "twheel/host.h"

/*
 * Allocate @size zeroed bytes whose first member is a struct twheel_host
 * and initialise that with @rt and @ops (twheel_host_init()), or with @ext
 * if not NULL (twheel_host_init_ext()). Returns the host, or NULL with
 * errno ENOMEM or what the init refused.
 */
static inline struct twheel_host *twheel__adapter_new_ext(size_t size, const struct twheel_rt *rt,
							  const struct twheel_host_ops *ops,
							  const struct twheel_host_ops_ext *ext)
{
	struct twheel_host *h = calloc(1, size);
	int rc;

	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	rc = ext ? twheel_host_init_ext(h, rt, ext) : twheel_host_init(h, rt, ops);
	if (rc) {
		free(h);
		errno = -rc;
		return NULL;
	}
	return h;
}

static inline struct twheel_host *twheel__adapter_new(size_t size, const struct twheel_rt *rt,
						      const struct twheel_host_ops *ops)
{
	return twheel__adapter_new_ext(size, rt, ops, NULL);
}

/*
 * Undo twheel__adapter_new() when the adapter's own set-up failed with
 * errno @err. Returns NULL with errno @err.
 */
static inline struct twheel_host *twheel__adapter_abort(struct twheel_host *h, int err)
{
	twheel_host_fini(h, NULL, NULL);
	free(h);
	errno = err;
	return NULL;
}

/*
 * The common half of an adapter's destroy: -EINVAL unless @h was made with
 * @ops, else twheel_host_fini(@h, @fn, @arg)'s result, or 0 if @h was shut
 * down already (twheel_host_fini() called on it: the adapter's own part is
 * left). On 0 the caller releases its host timer and frees the adapter
 * struct.
 */
static inline int twheel__adapter_fini(struct twheel_host *h, const struct twheel_host_ops *ops,
				       void (*fn)(struct tw_timer *t, void *arg), void *arg)
{
	if (twheel_host_get_ops(h) != ops)
		return -EINVAL;
	if (!twheel_host_wheel(h))
		return 0; /* shut down already: no timer to hand back */
	return twheel_host_fini(h, fn, arg);
}

#endif /* TWHEEL_ADAPTER_H */
