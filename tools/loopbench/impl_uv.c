/* SPDX-License-Identifier: MIT */
/*
 * loopbench: libuv. Timers are uv_timer_t with millisecond timeouts; the
 * loop time is refreshed (uv_update_time) before every add so that the
 * cached loop time does not lag the request. Cross-thread scheduling uses
 * the idiomatic uv_async_t + mutex-protected queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "loopbench.h"

struct uitem {
	uv_timer_t h;
	uint64_t delay_ms;      /* xthread: handed over through the queue */
	struct uitem *next;
};

static struct uitem *base;
static struct lb_rec *recs;
#define REC(it) (&recs[(it) - base])

static size_t left;
static uint64_t t_all;

static void fire_cb(uv_timer_t *h)
{
	struct uitem *it = (struct uitem *)h;

	REC(it)->late = (int64_t)(lb_now() - REC(it)->due);
	REC(it)->fired++;
	if (--left == 0)
		t_all = lb_now();
}

static void close_one(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void close_all(uv_loop_t *loop)
{
	/* close what is still open, let the loop run the close callbacks */
	uv_walk(loop, close_one, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
}

static void items_free(struct uitem *it)
{
	free(it);
	free(recs);
	recs = NULL;
}

static bool check(struct uitem *it, size_t n, int64_t *late, struct lb_result *r)
{
	(void)it;
	return lb_check_recs(recs, n, late, r);
}

static struct uitem *items_new(uv_loop_t *loop, size_t n)
{
	struct uitem *it = calloc(n, sizeof(*it));

	recs = calloc(n, sizeof(*recs));
	base = it;
	if (!it || !recs) {
		perror("calloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		uv_timer_init(loop, &it[i].h);
	return it;
}

static void add_all(uv_loop_t *loop, struct uitem *it, const uint64_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* the request time first, as a caller sees it; then the loop's */
		recs[i].due = lb_now() + d[i];
		uv_update_time(loop);
		uv_timer_start(&it[i].h, fire_cb, d[i] / NS_PER_MS, 0);
	}
}

static int lbuv_lateness(const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->late_n, p->late_span_ms, 42, true);
	int64_t *late = malloc(p->late_n * sizeof(*late));
	uv_loop_t loop;
	struct uitem *it;

	uv_loop_init(&loop);
	it = items_new(&loop, p->late_n);
	add_all(&loop, it, d, p->late_n);
	left = p->late_n;
	uv_run(&loop, UV_RUN_DEFAULT); /* returns when no timer is active */
	r->ok = check(it, p->late_n, late, r);
	if (r->ok)
		lb_lateness_stats(late, p->late_n, r);
	close_all(&loop);
	items_free(it);
	free(late);
	free(d);
	return 0;
}

/* ---- idle ---- */

static uv_async_t stop_async;
static void stop_cb(uv_async_t *a)
{
	uv_stop(a->loop);
}

static void stop_loop(void *arg)
{
	(void)arg;
	uv_async_send(&stop_async);
}

static int far_fired;
static void far_cb(uv_timer_t *h)
{
	(void)h;
	far_fired++;
}

static int lbuv_idle(const struct lb_params *p, struct lb_result *r)
{
	uv_loop_t loop;
	struct uitem far;
	struct lb_idle c = { .p = p, .r = r, .stop = stop_loop };

	memset(&far, 0, sizeof(far));
	uv_loop_init(&loop);
	uv_async_init(&loop, &stop_async, stop_cb);
	uv_timer_init(&loop, &far.h);
	far_fired = 0;
	uv_timer_start(&far.h, far_cb, p->idle_far_s * 1000ull, 0);
	lb_idle_begin(&c);
	uv_run(&loop, UV_RUN_DEFAULT);
	lb_idle_end(&c);
	close_all(&loop);
	if (far_fired) {
		r->ok = false;
		snprintf(r->note, sizeof(r->note), "the far timer fired early");
	}
	return 0;
}

/* ---- xthread ---- */

static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static struct uitem *qhead, **qtail = &qhead;
static uv_async_t q_async;

static void x_fire_cb(uv_timer_t *h)
{
	fire_cb(h);
	if (!left)
		uv_stop(h->loop); /* the producers are joined before the async closes */
}

static void q_cb(uv_async_t *a)
{
	struct uitem *it;

	pthread_mutex_lock(&qmu);
	it = qhead;
	qhead = NULL;
	qtail = &qhead;
	pthread_mutex_unlock(&qmu);
	uv_update_time(a->loop);
	for (; it; it = it->next)
		uv_timer_start(&it->h, x_fire_cb, it->delay_ms, 0);
}

struct producer {
	pthread_t th;
	struct uitem *it;
	uint64_t *d;
	size_t n;
	uint64_t t_end;
	pthread_barrier_t *bar;
};

static void *produce(void *arg)
{
	struct producer *pr = arg;

	pthread_barrier_wait(pr->bar);
	for (size_t i = 0; i < pr->n; i++) {
		struct uitem *it = &pr->it[i];

		it->delay_ms = pr->d[i] / NS_PER_MS;
		it->next = NULL;
		pthread_mutex_lock(&qmu);
		*qtail = it;
		qtail = &it->next;
		pthread_mutex_unlock(&qmu);
		uv_async_send(&q_async);
	}
	pr->t_end = lb_now();
	return NULL;
}

static int lbuv_xthread(const struct lb_params *p, struct lb_result *r)
{
	struct producer pr[2];
	pthread_barrier_t bar;
	uv_loop_t loop;
	struct uitem *it;
	uint64_t t0, t_prod = 0;
	int k;

	uv_loop_init(&loop);
	uv_async_init(&loop, &q_async, q_cb);
	it = items_new(&loop, 2 * p->x_n);
	pthread_barrier_init(&bar, NULL, 3);
	for (k = 0; k < 2; k++) {
		pr[k] = (struct producer){ .it = it + (size_t)k * p->x_n, .n = p->x_n, .bar = &bar,
					   .d = lb_delays_ms(p->x_n, p->x_span_ms, 42 + (uint64_t)k, false) };
		pthread_create(&pr[k].th, NULL, produce, &pr[k]);
	}
	left = 2 * p->x_n;
	t0 = lb_now();
	pthread_barrier_wait(&bar);
	uv_run(&loop, UV_RUN_DEFAULT); /* until every timer fired */
	for (k = 0; k < 2; k++) {
		pthread_join(pr[k].th, NULL);
		if (pr[k].t_end > t_prod)
			t_prod = pr[k].t_end;
		free(pr[k].d);
	}
	pthread_barrier_destroy(&bar);
	r->ok = check(it, 2 * p->x_n, NULL, r);
	lb_put(r, "Mschedules_per_s", 2.0 * (double)p->x_n / ((t_prod - t0) / 1e9) / 1e6);
	lb_put(r, "Mfired_per_s_e2e", 2.0 * (double)p->x_n / ((t_all - t0) / 1e9) / 1e6);
	close_all(&loop);
	items_free(it);
	return 0;
}

static int lbuv_add_expire(const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->ae_n, p->ae_span_ms, 42, false);
	uint64_t cpu0, cpu1, w0, w1;
	uv_loop_t loop;
	struct uitem *it;
	size_t early = 0;

	uv_loop_init(&loop);
	it = items_new(&loop, p->ae_n);
	cpu0 = lb_cpu_process();
	w0 = lb_now();
	add_all(&loop, it, d, p->ae_n);
	left = p->ae_n;
	uv_run(&loop, UV_RUN_DEFAULT);
	cpu1 = lb_cpu_process();
	w1 = lb_now();
	r->ok = check(it, p->ae_n, NULL, r);
	for (size_t i = 0; i < p->ae_n; i++)
		early += recs[i].late < 0;
	lb_put(r, "cpu_ns_per_timer", (double)(cpu1 - cpu0) / (double)p->ae_n);
	lb_put(r, "wall_s", (w1 - w0) / 1e9);
	lb_put(r, "early_pct", 100.0 * (double)early / (double)p->ae_n);
	close_all(&loop);
	items_free(it);
	free(d);
	return 0;
}

const struct lb_impl lb_libuv = {
	.name = "libuv",
	.lateness = lbuv_lateness,
	.idle = lbuv_idle,
	.xthread = lbuv_xthread,
	.add_expire = lbuv_add_expire,
};
