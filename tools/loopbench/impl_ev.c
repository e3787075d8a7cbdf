/* SPDX-License-Identifier: MIT */
/*
 * loopbench: libev (its default backend, epoll here). Timers are ev_timer
 * with timeouts in seconds (double); ev_now_update() before every add so
 * the cached loop time does not lag the request. Cross-thread scheduling
 * uses the idiomatic ev_async + mutex-protected queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "loopbench.h"

struct eitem {
	ev_timer w;
	uint64_t delay_ns;      /* xthread: handed over through the queue */
	struct eitem *next;
};

static struct eitem *base;
static struct lb_rec *recs;
#define REC(it) (&recs[(it) - base])

static size_t left;
static uint64_t t_all;

static void fire_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct eitem *it = (struct eitem *)w;

	(void)revents;
	REC(it)->late = (int64_t)(lb_now() - REC(it)->due);
	REC(it)->fired++;
	if (--left == 0) {
		t_all = lb_now();
		ev_break(loop, EVBREAK_ALL);
	}
}

static void items_free(struct eitem *it)
{
	free(it);
	free(recs);
	recs = NULL;
}

static bool check(struct eitem *it, size_t n, int64_t *late, struct lb_result *r)
{
	(void)it;
	return lb_check_recs(recs, n, late, r);
}

static struct eitem *items_new(size_t n)
{
	struct eitem *it = calloc(n, sizeof(*it));

	recs = calloc(n, sizeof(*recs));
	base = it;
	if (!it || !recs) {
		perror("calloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		ev_init(&it[i].w, fire_cb);
	return it;
}

static void add_all(struct ev_loop *loop, struct eitem *it, const uint64_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* the request time first, as a caller sees it; then the loop's */
		recs[i].due = lb_now() + d[i];
		ev_now_update(loop);
		ev_timer_set(&it[i].w, (double)d[i] / 1e9, 0.);
		ev_timer_start(loop, &it[i].w);
	}
}

static int lbev_lateness(const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->late_n, p->late_span_ms, 42, true);
	int64_t *late = malloc(p->late_n * sizeof(*late));
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct eitem *it = items_new(p->late_n);

	add_all(loop, it, d, p->late_n);
	left = p->late_n;
	ev_run(loop, 0);
	r->ok = check(it, p->late_n, late, r);
	if (r->ok)
		lb_lateness_stats(late, p->late_n, r);
	ev_loop_destroy(loop);
	items_free(it);
	free(late);
	free(d);
	return 0;
}

/* ---- idle ---- */

static ev_async stop_async;
static struct ev_loop *idle_loop;

static void stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static void stop_loop(void *arg)
{
	(void)arg;
	ev_async_send(idle_loop, &stop_async);
}

static int far_fired;
static void far_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	far_fired++;
}

static int lbev_idle(const struct lb_params *p, struct lb_result *r)
{
	struct eitem far;
	struct lb_idle c = { .p = p, .r = r, .stop = stop_loop };

	memset(&far, 0, sizeof(far));
	idle_loop = ev_loop_new(EVFLAG_AUTO);
	ev_async_init(&stop_async, stop_cb);
	ev_async_start(idle_loop, &stop_async);
	far_fired = 0;
	ev_timer_init(&far.w, far_cb, (double)p->idle_far_s, 0.);
	ev_timer_start(idle_loop, &far.w);
	lb_idle_begin(&c);
	ev_run(idle_loop, 0);
	lb_idle_end(&c);
	ev_loop_destroy(idle_loop);
	if (far_fired) {
		r->ok = false;
		snprintf(r->note, sizeof(r->note), "the far timer fired early");
	}
	return 0;
}

/* ---- xthread ---- */

static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static struct eitem *qhead, **qtail = &qhead;
static ev_async q_async;
static struct ev_loop *x_loop;

static void q_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct eitem *it;

	(void)w;
	(void)revents;
	pthread_mutex_lock(&qmu);
	it = qhead;
	qhead = NULL;
	qtail = &qhead;
	pthread_mutex_unlock(&qmu);
	ev_now_update(loop);
	for (; it; it = it->next) {
		ev_timer_set(&it->w, (double)it->delay_ns / 1e9, 0.);
		ev_timer_start(loop, &it->w);
	}
}

struct producer {
	pthread_t th;
	struct eitem *it;
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
		struct eitem *it = &pr->it[i];

		it->delay_ns = pr->d[i];
		it->next = NULL;
		pthread_mutex_lock(&qmu);
		*qtail = it;
		qtail = &it->next;
		pthread_mutex_unlock(&qmu);
		ev_async_send(x_loop, &q_async);
	}
	pr->t_end = lb_now();
	return NULL;
}

static int lbev_xthread(const struct lb_params *p, struct lb_result *r)
{
	struct producer pr[2];
	pthread_barrier_t bar;
	struct eitem *it = items_new(2 * p->x_n);
	uint64_t t0, t_prod = 0;
	int k;

	x_loop = ev_loop_new(EVFLAG_AUTO);
	ev_async_init(&q_async, q_cb);
	ev_async_start(x_loop, &q_async);
	pthread_barrier_init(&bar, NULL, 3);
	for (k = 0; k < 2; k++) {
		pr[k] = (struct producer){ .it = it + (size_t)k * p->x_n, .n = p->x_n, .bar = &bar,
					   .d = lb_delays_ms(p->x_n, p->x_span_ms, 42 + (uint64_t)k, false) };
		pthread_create(&pr[k].th, NULL, produce, &pr[k]);
	}
	left = 2 * p->x_n;
	t0 = lb_now();
	pthread_barrier_wait(&bar);
	ev_run(x_loop, 0); /* until the last timer breaks out */
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
	ev_async_stop(x_loop, &q_async);
	ev_loop_destroy(x_loop);
	items_free(it);
	return 0;
}

static int lbev_add_expire(const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->ae_n, p->ae_span_ms, 42, false);
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct eitem *it = items_new(p->ae_n);
	uint64_t cpu0, cpu1, w0, w1;
	size_t early = 0;

	cpu0 = lb_cpu_process();
	w0 = lb_now();
	add_all(loop, it, d, p->ae_n);
	left = p->ae_n;
	ev_run(loop, 0);
	cpu1 = lb_cpu_process();
	w1 = lb_now();
	r->ok = check(it, p->ae_n, NULL, r);
	for (size_t i = 0; i < p->ae_n; i++)
		early += recs[i].late < 0;
	lb_put(r, "cpu_ns_per_timer", (double)(cpu1 - cpu0) / (double)p->ae_n);
	lb_put(r, "wall_s", (w1 - w0) / 1e9);
	lb_put(r, "early_pct", 100.0 * (double)early / (double)p->ae_n);
	ev_loop_destroy(loop);
	items_free(it);
	free(d);
	return 0;
}

const struct lb_impl lb_libev = {
	.name = "libev",
	.lateness = lbev_lateness,
	.idle = lbev_idle,
	.xthread = lbev_xthread,
	.add_expire = lbev_add_expire,
};
