/* SPDX-License-Identifier: MIT */
/*
 * adapters/uv/uv.c - one uv_timer_t drives a wheel (see <twheel/uv.h>).
 *
 * libuv fires a timer when its loop time, uv_now() = floor(CLOCK_MONOTONIC
 * (or its _COARSE variant, which never runs ahead of it) / 1 ms), reaches
 * the start time plus the timeout. With the default clock the timeout is
 * therefore ceil(wake / 1 ms) - uv_now(): however stale uv_now() is, the
 * uv_timer_t fires only once the monotonic clock has reached @wake. With
 * an injected clock the epochs differ: @wake is first moved to the
 * CLOCK_MONOTONIC time that lies as far after a fresh uv_hrtime() reading
 * (counting from uv_now() instead, truncated to the millisecond, would
 * wake up to 1 ms before the tick boundary, for nothing).
 *
 * Arms by delay are parked (twheel_host_defer()) and placed from one clock
 * reading per iteration instead of one per arm. The first arm parked after
 * a placement starts a uv_idle_t (twheel_host_init_ext()'s parked op),
 * whose callback places them and stops it. libuv polls without waiting
 * while an idle handle is active, and runs idle handles before it polls:
 * an arm parked anywhere, even from a prepare handle that runs after the
 * adapter's would have (libuv computes its poll timeout after the prepare
 * handles), is placed before the loop waits. The idle handle does not keep
 * the loop alive (uv_unref()), and costs nothing in an iteration that
 * parks nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "adapter.h"
#include "twheel/uv.h"

#define NS_PER_MS UINT64_C(1000000)

struct twheel_uv {
	struct twheel_host h; /* first: a host pointer is an adapter pointer */
	uv_timer_t timer;
	uv_idle_t place;      /* active while arms by delay wait to be placed */
	uv_loop_t *loop;
	bool armed;           /* timer started (host_arm()), not fired or stopped since */
	uv_idle_t reap;       /* closed by destroy if someone else closed one */
	int open_handles;     /* that destroy closed: freed when none is left */
	bool still_listed;    /* find_closing() found one of @other */
	uv_handle_t *other[2]; /* the handles someone else closed before destroy */
};

static inline uint64_t ceil_ms(uint64_t ns)
{
	return ns / NS_PER_MS + (ns % NS_PER_MS != 0);
}

static void on_timer(uv_timer_t *timer)
{
	struct twheel_uv *u = timer->data;

	u->armed = false;
	twheel_host_run(&u->h);
}

/*
 * The uv_timer_t was started for pending timers but is no longer active:
 * the program stopped it (uv_timer_stop() of every timer of the loop,
 * through uv_walk()). Start it to fire at once: its run re-arms it.
 */
static void restart_stopped(struct twheel_uv *u)
{
	if (u->armed && !uv_is_active((uv_handle_t *)&u->timer))
		uv_timer_start(&u->timer, on_timer, 0, 0);
}

static void on_place(uv_idle_t *place)
{
	struct twheel_uv *u = place->data;

	uv_idle_stop(place);
	restart_stopped(u);
	twheel_host_place(&u->h);
}

/*
 * Someone else closed the adapter's handles (a uv_walk() that closes every
 * handle of the loop; libuv runs no callback of the adapter's for it): no
 * timer can fire any more. The host then refuses every arm
 * (twheel_host_lost()). An arm asks about the uv_timer_t alone (one call
 * into libuv: a uv_walk() closes both; libuv before 1.32 or so would even
 * start a closing timer, which then keeps uv_run() from returning), the
 * parked op about both.
 */
static void host_arm(struct twheel_host *h, uint64_t wake, uint64_t now)
{
	struct twheel_uv *u = (struct twheel_uv *)h;
	uint64_t wake_ms, lnow;

	if (uv_is_closing((uv_handle_t *)&u->timer)) {
		twheel_host_lost(h);
		return;
	}
	if (twheel_host_rt(h)->clock != twheel_rt_clock_monotonic) {
		/* another epoch: the CLOCK_MONOTONIC time (uv_hrtime()) that
		 * lies wake - now after a reading taken now (no earlier than
		 * the injected clock's reading @now) */
		uint64_t mono = uv_hrtime();

		wake = wake - now > UINT64_MAX - mono ? UINT64_MAX : mono + (wake - now);
	}
	wake_ms = ceil_ms(wake);
	lnow = uv_now(u->loop);
	uv_timer_start(&u->timer, on_timer, wake_ms > lnow ? wake_ms - lnow : 0, 0);
	u->armed = true;
}

static void host_stop(struct twheel_host *h)
{
	struct twheel_uv *u = (struct twheel_uv *)h;

	u->armed = false;
	uv_timer_stop(&u->timer);
}

/*
 * The first arm by delay parked after a placement: schedule one (0 even if
 * scheduled already), unless a handle was closed under the adapter: the
 * host is lost, and refuses the arm.
 */
static int host_parked(struct twheel_host *h)
{
	struct twheel_uv *u = (struct twheel_uv *)h;

	if (uv_is_closing((uv_handle_t *)&u->timer) || uv_is_closing((uv_handle_t *)&u->place)) {
		twheel_host_lost(h);
		return -1;
	}
	restart_stopped(u);
	return uv_idle_start(&u->place, on_place);
}

static const struct twheel_host_ops_ext uv_ops = { { host_arm, host_stop }, host_parked };

/*
 * uv_loop_close() succeeded on @loop: its backend descriptor (epoll's,
 * kqueue's) is gone. Where libuv has no such descriptor (Windows) this
 * cannot tell, and says no.
 */
static bool loop_closed(uv_loop_t *loop)
{
#ifdef _WIN32
	(void)loop;
	return false;
#else
	return uv_backend_fd(loop) < 0;
#endif
}

struct twheel_host *twheel_uv_create(uv_loop_t *loop, const struct twheel_rt *rt)
{
	struct twheel_uv *u;

	if (!loop || loop_closed(loop)) {
		errno = EINVAL;
		return NULL;
	}
	u = (struct twheel_uv *)twheel__adapter_new_ext(sizeof(*u), rt, NULL, &uv_ops);
	if (!u)
		return NULL;
	if (uv_timer_init(loop, &u->timer))
		return twheel__adapter_abort(&u->h, EINVAL);
	u->timer.data = u;
	u->loop = loop;
	uv_idle_init(loop, &u->place); /* cannot fail */
	u->place.data = u;
	uv_unref((uv_handle_t *)&u->place);
	twheel_host_defer(&u->h, true);
	return &u->h;
}

static void on_close(uv_handle_t *handle)
{
	struct twheel_uv *u = handle->data;

	if (--u->open_handles == 0)
		free(u);
}

/*
 * uv_walk() callback: a handle someone else closed that the loop still
 * lists has its close callback still due (libuv drops a handle from its
 * list right before that callback).
 */
static void find_closing(uv_handle_t *handle, void *arg)
{
	struct twheel_uv *u = arg;

	if (handle == u->other[0] || handle == u->other[1])
		u->still_listed = true;
}

/*
 * The reaper's close callback, in a close phase of the loop: done once
 * the close callbacks of the handles someone else closed have run. libuv
 * runs a phase's close callbacks newest close first, so one due in this
 * phase runs after this: then close the reaper again, for the next one.
 */
static void on_reap(uv_handle_t *handle)
{
	struct twheel_uv *u = handle->data;

	u->still_listed = false;
	uv_walk(u->loop, find_closing, u);
	if (!u->still_listed) {
		on_close(handle);
		return;
	}
	uv_idle_init(u->loop, &u->reap); /* cannot fail */
	u->reap.data = u;
	uv_close((uv_handle_t *)&u->reap, on_reap);
}

/* Close one of the adapter's handles, unless someone else already did. */
static void close_handle(struct twheel_uv *u, uv_handle_t *handle, int i)
{
	if (uv_is_closing(handle)) {
		u->other[i] = handle;
	} else {
		u->open_handles++;
		uv_close(handle, on_close);
	}
}

int twheel_uv_destroy(struct twheel_host *h, void (*fn)(struct tw_timer *t, void *arg), void *arg)
{
	struct twheel_uv *u = (struct twheel_uv *)h;
	int rc;

	rc = twheel__adapter_fini(h, &uv_ops.ops, fn, arg);
	if (rc)
		return rc;
	close_handle(u, (uv_handle_t *)&u->timer, 0);
	close_handle(u, (uv_handle_t *)&u->place, 1);
	/* someone else closed both, and the loop was closed since: their close
	 * callbacks have run (uv_loop_close() fails while a handle is listed),
	 * and libuv may have overwritten the loop (every byte 0xff unless
	 * built with NDEBUG; the backend descriptor reads -1 either way): it
	 * must not be touched again */
	if (!u->open_handles && loop_closed(u->loop)) {
		free(u);
		return 0;
	}
	/* someone else closed one (uv_walk()): its close callback, not ours,
	 * may still be due, and must find it; the reaper, a handle of the
	 * adapter's own, is closed to look once the loop runs */
	if (u->other[0] || u->other[1]) {
		uv_idle_init(u->loop, &u->reap); /* cannot fail */
		u->reap.data = u;
		u->open_handles++;
		uv_close((uv_handle_t *)&u->reap, on_reap);
	}
	return 0;
}
