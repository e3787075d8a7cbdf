/* SPDX-License-Identifier: MIT */
/* tools/loopbench/ops_twheel.c - the twheel-uring loop as a table of operations. */
#include <stdio.h>
#include <stdlib.h>

#include <twheel/loop.h>

#include "loopbench.h"

struct tw {
	struct twheel_loop *loop;
	struct tw_loop_timer *t;
};

static struct tw *cur; /* the one loop that exists */

static void fire_cb(struct tw_loop_timer *t)
{
	lb_fired((size_t)(t - cur->t));
}

static void *tw_create(const struct lb_params *p, size_t n, char *err, size_t errlen)
{
	struct twheel_loop_config cfg;
	struct tw *l = lb_calloc(1, sizeof(*l));

	l->t = lb_calloc(n, sizeof(*l->t));
	for (size_t i = 0; i < n; i++)
		tw_loop_timer_init(&l->t[i], fire_cb, 0);
	twheel_loop_config_init(&cfg);
	cfg.tick_ns = p->tick_ns;
	cfg.flags = TW_LOOP_URING_ONLY; /* measure the io_uring loop, nothing else */
	if (twheel_loop_create(&l->loop, &cfg, err, errlen)) {
		free(l->t);
		free(l);
		return NULL;
	}
	cur = l;
	return l;
}

/* twheel: by delay, from a fresh reading of the loop clock (never early from the call) */
static void tw_add(void *l, size_t i, uint64_t delay_ns, uint64_t due_ns)
{
	struct tw *t = l;
	(void)due_ns;
	twheel_loop_add(t->loop, &t->t[i], delay_ns);
}

/* twheel-at: by deadline, the caller's own reading plus the delay (no clock read) */
static void tw_add_at(void *l, size_t i, uint64_t delay_ns, uint64_t due_ns)
{
	struct tw *t = l;
	(void)delay_ns;
	twheel_loop_add_at(t->loop, &t->t[i], due_ns);
}

static int tw_schedule(void *l, size_t i, uint64_t delay_ns)
{
	struct tw *t = l;
	return twheel_loop_schedule(t->loop, &t->t[i], delay_ns);
}

static void tw_run(void *l) { twheel_loop_run(((struct tw *)l)->loop); }
static void tw_stop(void *l) { twheel_loop_stop(((struct tw *)l)->loop); }

static void tw_destroy(void *l)
{
	struct tw *t = l;
	twheel_loop_destroy(t->loop, NULL, NULL, NULL);
	free(t->t);
	free(t);
	cur = NULL;
}

const struct lb_ops lb_twheel = {
	.name = "twheel",
	.create = tw_create,
	.add = tw_add,
	.schedule = tw_schedule,
	.run = tw_run,
	.stop = tw_stop,
	.wake_stop = tw_stop, /* twheel_loop_stop() may be called from any thread */
	.destroy = tw_destroy,
	.never_early = true,
};

/* The same loop, armed with twheel_loop_add_at() from the harness's request time. */
const struct lb_ops lb_twheel_at = {
	.name = "twheel-at",
	.create = tw_create,
	.add = tw_add_at,
	.schedule = tw_schedule,
	.run = tw_run,
	.stop = tw_stop,
	.wake_stop = tw_stop,
	.destroy = tw_destroy,
	.never_early = true,
};
