/* SPDX-License-Identifier: MIT */
/*
 * compat.c - the per-thread binding under the legacy timer headers
 * (<twheel/compat.h> says what each call promises). A thread's binding is
 * a plain wheel, or one or two hosts (normal and deferrable timers). A
 * timer records the wheel it is pending on (_wheel, relaxed atomics: the
 * only field another thread may read); that is how a call from a thread
 * that does not own the timer's wheel is told apart and refused.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#define TWHEEL__COMPAT_NO_HZ_CHECK /* no HZ of its own: the program's */
#include "twheel/compat.h"

struct binding {
	struct twheel *w;          /* plain wheel, or NULL */
	struct twheel_host *h[2];  /* normal, deferrable hosts (h[0] NULL: none) */
	tw_tick_t base;            /* the tick at bind time */
	uint64_t last;             /* a host's latest time: it never goes back */
	int (*unbind)(void *arg);
	void *arg;
	bool gone;                 /* its wheel (a host's) was destroyed: time stays at last */
};

/*
 * Initial-exec TLS: every call reads the binding, and a shared library's
 * default model fetches the address with a call to __tls_get_addr() each
 * time. The two take 56 bytes of the static TLS that glibc keeps for
 * libraries loaded later with dlopen() (as rt.c's last reading does).
 */
static _Thread_local struct binding bound __attribute__((tls_model("initial-exec")));
static _Thread_local const struct twheel_compat_timer *running
	__attribute__((tls_model("initial-exec")));

static bool is_bound(void)
{
	return bound.w || bound.h[0];
}

/*
 * An arm refused for want of a wheel: legacy code often ignores the
 * return (add_timer() has none), so the timer would be lost silently.
 * Said on stderr, once per thread, as the kernel's WARN_ONCE() would.
 * @err: -ENXIO (nothing bound), -EINVAL (the bound wheel or host was
 * destroyed) or -ESHUTDOWN (the bound host is lost: twheel_host_lost()),
 * which the legacy headers do not name: -EINVAL is returned for it.
 */
static int refuse_arm(int err)
{
	static _Thread_local bool said __attribute__((tls_model("initial-exec")));
	const char *why = err == -ENXIO ? "that bound no wheel (twheel_compat_bind_wheel(), "
					  "twheel_compat_bind_host(), twheel_loop_compat_bind())"
			  : err == -ESHUTDOWN ? "whose bound host lost its loop or loop timer (twheel_compat_unbind(), then bind again)"
					      : "whose bound wheel was destroyed (twheel_compat_unbind(), then bind again)";

	if (err != -ENXIO)
		err = -EINVAL;
	if (!said) {
		said = true;
		fprintf(stderr, "libtwheel: a legacy timer (add_timer(), mod_timer(), callout_reset()...) was "
				"armed on a thread %s: it is not armed (%s)\n",
			why, err == -ENXIO ? "-ENXIO" : "-EINVAL");
	}
	return err;
}

static struct twheel *wheel_of(const struct twheel_compat_timer *ct)
{
	return __atomic_load_n(&ct->_wheel, __ATOMIC_RELAXED);
}

static void set_wheel(struct twheel_compat_timer *ct, struct twheel *w)
{
	__atomic_store_n(&ct->_wheel, w, __ATOMIC_RELAXED);
}

/* The host of this thread whose wheel is @w, or NULL. */
static struct twheel_host *host_of(const struct twheel *w)
{
	for (int i = 0; i < 2; i++)
		if (bound.h[i] && twheel_host_wheel(bound.h[i]) == w)
			return bound.h[i];
	return NULL;
}

static bool mine(const struct twheel *w)
{
	return w && !bound.gone && (w == bound.w || host_of(w));
}

extern void (*twheel__destroy_hook)(const struct twheel *w); /* twheel.c */
extern void twheel__check_initialised(const struct tw_timer *t); /* twheel.c */

static void compat_gone(const struct twheel *w);

/* A binding from now on: twheel_destroy() tells compat_gone(). */
static void hook_destroy(void)
{
	__atomic_store_n(&twheel__destroy_hook, compat_gone, __ATOMIC_RELAXED);
}

int twheel_compat_bind_wheel(struct twheel *w)
{
	if (!w)
		return -EINVAL;
	if (is_bound())
		return -EBUSY;
	bound = (struct binding){ .w = w, .base = twheel_now(w) };
	hook_destroy();
	return 0;
}

int twheel_compat_bind_hosts(struct twheel_host *h, struct twheel_host *deferrable,
			     int (*unbind)(void *arg), void *arg)
{
	const struct twheel_rt *rt, *drt;

	if (!deferrable)
		deferrable = h;
	if (!h || !twheel_host_wheel(h) || !twheel_host_wheel(deferrable))
		return -EINVAL;
	rt = twheel_host_rt(h);
	drt = twheel_host_rt(deferrable);
	if (rt->tick_ns != drt->tick_ns || rt->clock != drt->clock || rt->clock_arg != drt->clock_arg)
		return -EINVAL;
	if (is_bound())
		return -EBUSY;
	bound = (struct binding){
		.h = { h, deferrable },
		.base = twheel_rt_floor(rt, twheel_host_now(h)),
		.unbind = unbind,
		.arg = arg,
	};
	hook_destroy();
	return 0;
}

int twheel_compat_bind_host(struct twheel_host *h, uint64_t tick_ns)
{
	if (!h || !twheel_host_wheel(h) || twheel_host_rt(h)->tick_ns != tick_ns)
		return -EINVAL;
	return twheel_compat_bind_hosts(h, NULL, NULL, NULL);
}

int twheel_compat_unbind(void)
{
	int rc;

	if (!is_bound())
		return -ENXIO;
	if (bound.unbind) {
		rc = bound.unbind(bound.arg);
		if (rc < 0)
			return rc;
	}
	bound = (struct binding){ 0 };
	return 0;
}

uint64_t twheel_compat_now(void)
{
	if (bound.gone)
		return bound.last;
	if (bound.w) /* inside a callback: the running advance's target, the
		      * time the wheel has reached, as the kernel's jiffies
		      * while its softirq catches up */
		return twheel_target(bound.w) - bound.base;
	if (bound.h[0]) {
		/* a host's clock may step back (<twheel/host.h>): below the
		 * latest reading, even below the bind's, the time stays */
		tw_tick_t t = twheel_rt_floor(twheel_host_rt(bound.h[0]), twheel_host_now(bound.h[0]));

		if (t > bound.base + bound.last)
			bound.last = t - bound.base;
		return bound.last;
	}
	return 0;
}

int twheel_compat_mod(struct twheel_compat_timer *ct, uint64_t when, unsigned flags)
{
	struct twheel *at;
	tw_tick_t tick;
	int was = 0, rc;

	if (!ct)
		return -EINVAL;
	if (!ct->tw.func) {
		/* never set up (all zero): a debug build reports it, as
		 * the wheel's arms do, for the return is often ignored */
		twheel__check_initialised(&ct->tw);
		return -EINVAL;
	}
	at = wheel_of(ct);
	if (at && !mine(at))
		return -EXDEV;
	if (!is_bound())
		return refuse_arm(-ENXIO);
	if (bound.gone)
		return refuse_arm(-EINVAL); /* no wheel to arm on until the thread unbinds */
	tick = when > TW_TICK_MAX - bound.base ? TW_TICK_MAX : bound.base + when;
	if (bound.w) {
		rc = twheel_mod(bound.w, &ct->tw, tick);
		if (rc >= 0)
			set_wheel(ct, bound.w);
		return rc;
	}

	struct twheel_host *h = bound.h[(flags & TWHEEL_COMPAT_DEFERRABLE) ? 1 : 0];
	uint64_t tick_ns = twheel_host_rt(h)->tick_ns;
	uint64_t ns = tick > UINT64_MAX / tick_ns ? UINT64_MAX : tick * tick_ns;

	if (at && at != twheel_host_wheel(h)) { /* pending on the other host */
		twheel_host_del(host_of(at), &ct->tw);
		set_wheel(ct, NULL);
		was = 1;
	}
	rc = twheel_host_mod_at(h, &ct->tw, ns);
	if (rc == -ESHUTDOWN) /* the host is lost (its loop or loop timer gone): as if destroyed */
		return refuse_arm(rc);
	if (rc < 0)
		return rc;
	set_wheel(ct, twheel_host_wheel(h));
	return rc | was;
}

int twheel_compat_owned(const struct twheel_compat_timer *ct)
{
	struct twheel *at;

	if (!ct)
		return -EINVAL;
	at = wheel_of(ct);
	if (!at)
		return 0;
	return mine(at) ? 1 : -EXDEV;
}

int twheel_compat_del(struct twheel_compat_timer *ct)
{
	struct twheel *at;
	int rc;

	if (!ct)
		return -EINVAL;
	at = wheel_of(ct);
	if (!at)
		return 0;
	if (!mine(at))
		return -EXDEV;
	rc = at == bound.w ? twheel_del(at, &ct->tw) : twheel_host_del(host_of(at), &ct->tw);
	if (rc >= 0)
		set_wheel(ct, NULL);
	return rc;
}

/*
 * twheel_destroy() calls it (twheel__destroy_hook) before @w is freed (a
 * host's wheel too: twheel_host_fini()). If the calling thread's binding
 * is @w or a host on it, the binding must not reach them any more: it
 * stays, gone, until the thread unbinds (its time stays at the destroy's,
 * an arm returns -EINVAL, a timer left pending on it is no longer the
 * thread's).
 */
static void compat_gone(const struct twheel *w)
{
	if (bound.gone || !w || (w != bound.w && !host_of(w)))
		return;
	bound.last = twheel_compat_now();
	bound.gone = true;
}

const struct twheel_compat_timer *twheel_compat_enter(struct twheel_compat_timer *ct)
{
	const struct twheel_compat_timer *prev = running;

	if (ct)
		set_wheel(ct, NULL);
	running = ct;
	return prev;
}

void twheel_compat_leave(const struct twheel_compat_timer *prev)
{
	running = prev;
}

bool twheel_compat_running(const struct twheel_compat_timer *ct)
{
	return ct && running == ct;
}
