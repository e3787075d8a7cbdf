/* SPDX-License-Identifier: MIT */
/*
 * compat.c - bind the calling thread's legacy timers (<twheel/compat.h>)
 * to an io_uring loop. Built on the public APIs only: two hosts
 * (<twheel/host.h>), each driven by one loop timer, as an adapter drives a
 * host from a libuv timer. The second host's loop timer is
 * TW_LOOP_DEFERRABLE, so TIMER_DEFERRABLE timers never wake an idle loop,
 * as the kernel's deferrable base never wakes an idle CPU. Those two loop
 * timers are the loop's own, not the user's: a drain while the hosts are
 * bound drops them, as it drops an I/O deadline's (drain.c knows them by
 * their callback, twl_compat_fire()), and the legacy timers stay pending
 * on their hosts until twheel_compat_unbind(); and cfg.max_pending does
 * not count them (TW__LOOP_UNCOUNTED): the host's arm returns nothing, so
 * an -ENOSPC would stall the legacy timers silently.
 *
 * A loop timer fires once the loop's tick (cfg.tick_ns) reaches its
 * deadline, up to a loop tick after it; a legacy timer must fire in the
 * first iteration whose clock has reached its deadline (jiffies at or
 * past its expiry), which a loop tick that does not divide 1/HZ s (1 ms
 * and HZ 300 or 400) would miss. So each iteration that runs its timers
 * also runs a host whose deadline its clock reading has reached
 * (twl_compat_poll()); the loop timer stays for the wake-up of an idle
 * loop.
 */
#define TWHEEL__COMPAT_NO_HZ_CHECK /* no HZ of its own: the program's */
#include "twheel/compat.h"
#include "twheel/host.h"

#include "loop_impl.h"

struct loop_host {
	struct twheel_host h;      /* first: the ops get it back with a cast */
	struct tw_loop_timer lt;   /* the host timer */
	struct loop_compat *lc;
	uint64_t wake_ns;          /* the host timer's deadline, if armed */
	bool armed;
};

struct loop_compat {
	struct twheel_loop *loop;  /* NULL once the loop was destroyed, still bound */
	struct loop_host host[2];  /* normal, deferrable */
	bool in_run;               /* inside a host run: cannot be unbound */
	uint64_t gone_ns;          /* the loop's clock when it was destroyed */
};

static void lh_arm(struct twheel_host *h, uint64_t wake_ns, uint64_t now_ns)
{
	struct loop_host *lh = (struct loop_host *)h;

	(void)now_ns;
	lh->wake_ns = wake_ns;
	lh->armed = true;
	twheel_loop_mod_at(lh->lc->loop, &lh->lt, wake_ns);
}

static void lh_stop(struct twheel_host *h)
{
	struct loop_host *lh = (struct loop_host *)h;

	lh->armed = false;
	twheel_loop_del(lh->lc->loop, &lh->lt);
}

static const struct twheel_host_ops lh_ops = { .arm = lh_arm, .stop = lh_stop };

void twl_compat_fire(struct tw_loop_timer *lt)
{
	struct loop_host *lh = tw_container_of(lt, struct loop_host, lt);

	lh->armed = false; /* the host re-arms if it has timers left */
	lh->lc->in_run = true;
	twheel_host_run(&lh->h);
	lh->lc->in_run = false;
}

void twl_compat_poll(struct twheel_loop *l, uint64_t upto)
{
	struct loop_compat *lc = l->compat;

	for (int i = 0; lc && i < 2; i++) {
		struct loop_host *lh = &lc->host[i];

		if (lh->armed && lh->wake_ns <= upto) {
			twheel_loop_del(l, &lh->lt);
			l->st.timers_fired++; /* as if its loop timer had fired */
			twl_compat_fire(&lh->lt); /* (its callbacks cannot unbind: -EBUSY) */
		}
	}
}

/* The loop's clock; once the loop is gone, the time it went (the binding
 * outlives it until the thread unbinds: jiffies and ticks stop there). */
static uint64_t compat_clock(void *arg)
{
	const struct loop_compat *lc = arg;

	return lc->loop ? twheel_loop_clock(lc->loop) : lc->gone_ns;
}

/* A timer handed back at unbind: not pending any more. */
static void dropped(struct tw_timer *t, void *arg)
{
	struct twheel_compat_timer *ct = tw_container_of(t, struct twheel_compat_timer, tw);

	(void)arg;
	__atomic_store_n(&ct->_wheel, NULL, __ATOMIC_RELAXED);
}

static int loop_unbind(void *arg)
{
	struct loop_compat *lc = arg;

	if (lc->in_run)
		return -EBUSY;
	if (lc->loop) { /* else destroyed already: twl_compat_detach() did this */
		for (int i = 0; i < 2; i++) {
			twheel_host_fini(&lc->host[i].h, dropped, NULL);
			twheel_loop_del(lc->loop, &lc->host[i].lt);
		}
		lc->loop->compat = NULL;
	}
	free(lc);
	return 0;
}

/*
 * The loop is destroyed while the hosts are still bound: hand their
 * timers back, not pending, as an unbind does, and leave the binding to
 * the thread's unbind, harmless meanwhile (the hosts are shut down: an
 * arm returns -EINVAL; their clock stays at this reading). The loop
 * thread, from the destroy, before the loop is freed.
 */
void twl_compat_detach(struct twheel_loop *l)
{
	struct loop_compat *lc = l->compat;

	if (!lc)
		return;
	lc->gone_ns = twheel_loop_clock(l);
	for (int i = 0; i < 2; i++) {
		twheel_host_fini(&lc->host[i].h, dropped, NULL);
		twheel_loop_del(l, &lc->host[i].lt);
	}
	lc->loop = NULL;
	l->compat = NULL;
}

int twheel_loop_compat_bind(struct twheel_loop *loop, uint64_t tick_ns)
{
	struct twheel_rt rt = { .tick_ns = tick_ns, .clock = compat_clock };
	struct loop_compat *lc;
	int rc = 0, made = 0;

	if (!loop || tick_ns < 1000 || tick_ns > 1000000000)
		return -EINVAL;
	if (loop->compat) /* bound on another thread */
		return -EBUSY;
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return -ENOMEM;
	lc->loop = loop;
	rt.clock_arg = lc;
	for (; made < 2 && rc == 0; made++) {
		struct loop_host *lh = &lc->host[made];

		lh->lc = lc;
		rc = tw_loop_timer_init(&lh->lt, twl_compat_fire, made ? TW_LOOP_DEFERRABLE : 0);
		/* cfg.max_pending is the program's: an arm the host cannot
		 * report failing (-ENOSPC) would stall its timers for good */
		lh->lt.timer.flags |= TW__LOOP_UNCOUNTED;
		if (rc == 0)
			rc = twheel_host_init(&lh->h, &rt, &lh_ops);
	}
	if (rc == 0)
		rc = twheel_compat_bind_hosts(&lc->host[0].h, &lc->host[1].h, loop_unbind, lc);
	if (rc == 0)
		loop->compat = lc;
	if (rc < 0) {
		for (int i = 0; i < made; i++)
			twheel_host_fini(&lc->host[i].h, NULL, NULL);
		free(lc);
	}
	return rc;
}
