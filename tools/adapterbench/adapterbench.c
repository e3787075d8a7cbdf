/* SPDX-License-Identifier: MIT */
/*
 * tools/adapterbench/adapterbench.c - the rearm and add_cancel workloads of
 * tools/bench (same sizes, seeds and line protocol, see peer.h) run through
 * a host-loop adapter: libtwheel driven by one host timer, the way an
 * application on that loop would use it. Compiled once per host
 * (-DHOST_UV, -DHOST_EV, -DHOST_EVENT, -DHOST_EPOLL, or -DHOST_ASIO with
 * host_asio.cpp); the host's native
 * timers are measured by tools/bench's bench-peer-<host> on the same
 * workloads, and run.sh puts the two side by side.
 *
 * rearm: N live timers 30 s out, then M re-arms of a random timer to 30 s
 * from now, the host loop run once without blocking every 1,000 re-arms;
 * none fires. add_cancel: N timers 1..65,536 ms out, then each cancelled in
 * a random order (twheel_host_del()). Figure: wall ns per operation on the
 * calling thread, host loop included.
 *
 * Two implementations per host: IMPL arms by delay (twheel_host_mod(),
 * twheel_host_add(): a fresh clock reading each, so a timer never counts
 * from an old time); IMPL-at arms by deadline from one clock reading per
 * host loop iteration (twheel_host_mod_at(), twheel_host_add_at(): no
 * reading per operation), which is what the hosts' own timers do with
 * their cached time (uv_now(), libev's monotonic now, libevent's cache).
 */
#include <stdbool.h>
#include <stdlib.h>

#include "../bench/peer.h"

#if defined(HOST_UV)
#include <twheel/uv.h>
#define IMPL "twheel-uv"
static uv_loop_t uvl;
static struct twheel_host *host_open(void)
{
	uv_loop_init(&uvl);
	return twheel_uv_create(&uvl, NULL);
}
static void host_pump(void)
{
	uv_run(&uvl, UV_RUN_NOWAIT);
}
static void host_close(struct twheel_host *h)
{
	twheel_uv_destroy(h, NULL, NULL);
	uv_run(&uvl, UV_RUN_DEFAULT);
	uv_loop_close(&uvl);
}
#elif defined(HOST_EV)
#include <twheel/ev.h>
#define IMPL "twheel-ev"
static struct ev_loop *evl;
static struct twheel_host *host_open(void)
{
	evl = ev_loop_new(EVFLAG_AUTO);
	return twheel_ev_create(evl, NULL);
}
static void host_pump(void)
{
	ev_run(evl, EVRUN_NOWAIT);
}
static void host_close(struct twheel_host *h)
{
	twheel_ev_destroy(h, NULL, NULL);
	ev_loop_destroy(evl);
}
#elif defined(HOST_EVENT)
#include <twheel/event.h>
#define IMPL "twheel-event"
static struct event_base *base;
static struct twheel_host *host_open(void)
{
	base = event_base_new();
	return twheel_event_create(base, NULL);
}
static void host_pump(void)
{
	event_base_loop(base, EVLOOP_NONBLOCK);
}
static void host_close(struct twheel_host *h)
{
	twheel_event_destroy(h, NULL, NULL);
	event_base_free(base);
}
#elif defined(HOST_EPOLL)
#include <sys/epoll.h>
#include <unistd.h>
#include <twheel/epoll.h>
#define IMPL "twheel-epoll"
static int epfd;
static struct twheel_host *host_open(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct twheel_host *h = twheel_epoll_create(NULL);

	epfd = epoll_create1(0);
	ev.data.ptr = h;
	if (h)
		epoll_ctl(epfd, EPOLL_CTL_ADD, twheel_epoll_fd(h), &ev);
	return h;
}
static void host_pump(void)
{
	struct epoll_event ev;

	if (epoll_wait(epfd, &ev, 1, 0) == 1)
		twheel_epoll_dispatch(ev.data.ptr);
}
static void host_close(struct twheel_host *h)
{
	twheel_epoll_destroy(h, NULL, NULL);
	close(epfd);
}
#elif defined(HOST_ASIO)
/* host_asio.cpp: a tw::AsioHost on a boost::asio::io_context */
#include <twheel/host.h>
#define IMPL "twheel-asio"
struct twheel_host *host_open(void);
void host_pump(void);
void host_close(struct twheel_host *h);
#else
#error "define one of HOST_UV, HOST_EV, HOST_EVENT, HOST_EPOLL, HOST_ASIO"
#endif

#define NS_PER_MS UINT64_C(1000000)

static uint64_t fired;
static void cb(struct tw_timer *t)
{
	(void)t;
	fired++;
}

static struct tw_timer *timers(uint32_t n)
{
	struct tw_timer *t = calloc(n, sizeof(*t));

	for (uint32_t i = 0; t && i < n; i++)
		tw_timer_init(&t[i], cb);
	return t;
}

/*
 * @at: re-arm by deadline, the loop iteration's clock reading plus the
 * delay (twheel_host_mod_at(), no clock reading per re-arm), the way the
 * host loops' own timers count from their cached time; otherwise by delay
 * (twheel_host_mod(), a fresh reading per re-arm).
 */
static int rearm_impl(const struct peer_input *in, double *ns, bool at)
{
	uint32_t c = in->n, m = in->m;
	struct twheel_host *h = host_open();
	struct tw_timer *t = timers(c);
	int rc = 0;

	if (!h || !t)
		return -1;
	fired = 0;
	for (uint32_t i = 0; i < c; i++)
		rc |= twheel_host_add(h, &t[i], BENCH_REARM_DELTA * NS_PER_MS);
	struct rng r = rng_seed(3);
	uint32_t blocks = m / BENCH_REARM_BLOCK;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		if (at) {
			uint64_t deadline = twheel_host_now(h) + BENCH_REARM_DELTA * NS_PER_MS;

			for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
				twheel_host_mod_at(h, &t[rng_below(&r, c)], deadline);
		} else {
			for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
				twheel_host_mod(h, &t[rng_below(&r, c)], BENCH_REARM_DELTA * NS_PER_MS);
		}
		host_pump();
	}
	uint64_t t1 = clock_ns();
	if (rc || fired || twheel_count(twheel_host_wheel(h)) != c)
		rc = -1;
	host_close(h);
	free(t);
	*ns = (double)(t1 - t0) / ((double)blocks * BENCH_REARM_BLOCK);
	return rc;
}

static int rearm(const struct peer_input *in, double *ns)
{
	return rearm_impl(in, ns, false);
}

static int rearm_at(const struct peer_input *in, double *ns)
{
	return rearm_impl(in, ns, true);
}

/* @at: add by deadline from one clock reading, else by delay (a reading each). */
static int add_cancel_impl(const struct peer_input *in, double *ns, bool at)
{
	uint32_t n = in->n;
	const uint32_t *off = in->off, *perm = in->perm;
	struct twheel_host *h = host_open();
	struct tw_timer *t = timers(n);
	int rc = 0;

	if (!h || !t)
		return -1;
	fired = 0;
	uint64_t t0 = clock_ns();
	if (at) {
		uint64_t base = twheel_host_now(h);

		for (uint32_t i = 0; i < n; i++)
			rc |= twheel_host_add_at(h, &t[i], base + off[i] * NS_PER_MS);
	} else {
		for (uint32_t i = 0; i < n; i++)
			rc |= twheel_host_add(h, &t[i], off[i] * NS_PER_MS);
	}
	for (uint32_t i = 0; i < n; i++)
		rc |= twheel_host_del(h, &t[perm[i]]) != 1;
	uint64_t t1 = clock_ns();
	if (rc || fired || twheel_count(twheel_host_wheel(h)))
		rc = -1;
	host_close(h);
	free(t);
	*ns = (double)(t1 - t0) / n;
	return rc;
}

static int add_cancel(const struct peer_input *in, double *ns)
{
	return add_cancel_impl(in, ns, false);
}

static int add_cancel_at(const struct peer_input *in, double *ns)
{
	return add_cancel_impl(in, ns, true);
}

static const struct peer_ops adapter_ops = {
	.name = IMPL,
	.rearm = { rearm,
		   "twheel_host_mod(30 s) (one clock reading each) on a pending timer, the host loop "
		   "run once without blocking every 1,000 re-arms (none fires); wall ns per re-arm",
		   "an operation failed or a timer fired" },
	.add_cancel = { add_cancel,
			"twheel_host_add (ms offsets), then twheel_host_del in random order; "
			"wall ns per pair",
			"an operation failed or a timer fired" },
	.add_expire = { NULL, "real-time adapters: the span would be 65 s of waiting", NULL },
};

static const struct peer_ops adapter_at_ops = {
	.name = IMPL "-at",
	.rearm = { rearm_at,
		   "twheel_host_mod_at(the iteration's clock reading + 30 s) on a pending timer: "
		   "one clock reading per host loop iteration, as the hosts' cached time; the host "
		   "loop run once without blocking every 1,000 re-arms (none fires); wall ns per re-arm",
		   "an operation failed or a timer fired" },
	.add_cancel = { add_cancel_at,
			"twheel_host_add_at (one clock reading + ms offsets), then twheel_host_del in "
			"random order; wall ns per pair",
			"an operation failed or a timer fired" },
	.add_expire = { NULL, "real-time adapters: the span would be 65 s of waiting", NULL },
};

int main(int argc, char **argv)
{
	const struct peer_ops *ops[] = { &adapter_ops, &adapter_at_ops };

	return peer_main(argc, argv, ops, 2);
}
