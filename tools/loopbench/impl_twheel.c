/* SPDX-License-Identifier: MIT */
/* loopbench: the twheel-uring loop. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <twheel/loop.h>

#include "loopbench.h"

struct item {
	struct tw_loop_timer t;
};

static struct item *base;
static struct lb_rec *recs;
#define REC(it) (&recs[(it) - base])

static struct twheel_loop *loop;
static size_t left;

static struct twheel_loop *mk(const struct lb_params *p, struct lb_result *r)
{
	struct twheel_loop_config cfg;
	struct twheel_loop *l = NULL;
	int ret;

	twheel_loop_config_init(&cfg);
	cfg.tick_ns = p->tick_ns;
	ret = twheel_loop_create(&l, &cfg, r->note, sizeof(r->note));
	return ret ? NULL : l;
}

static void fire_cb(struct tw_loop_timer *t)
{
	struct item *it = tw_container_of(t, struct item, t);

	REC(it)->late = (int64_t)(lb_now() - REC(it)->due);
	REC(it)->fired++;
	if (--left == 0)
		twheel_loop_stop(loop);
}

static struct item *items_new(size_t n)
{
	struct item *it = calloc(n, sizeof(*it));

	recs = calloc(n, sizeof(*recs));
	base = it;
	if (!it || !recs) {
		perror("calloc");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		tw_loop_timer_init(&it[i].t, fire_cb, 0);
	return it;
}

/* Check every timer fired once and collect lateness. */
static void items_free(struct item *it)
{
	free(it);
	free(recs);
	recs = NULL;
}

static bool check_items(struct item *it, size_t n, int64_t *late, struct lb_result *r)
{
	(void)it;
	return lb_check_recs(recs, n, late, r);
}

static int tw_lateness(const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->late_n, p->late_span_ms, 42, true);
	struct item *it = items_new(p->late_n);
	int64_t *late = malloc(p->late_n * sizeof(*late));

	loop = mk(p, r);
	if (!loop)
		goto out;
	for (size_t i = 0; i < p->late_n; i++) {
		recs[i].due = lb_now() + d[i];
		twheel_loop_add(loop, &it[i].t, d[i]);
	}
	left = p->late_n;
	twheel_loop_run(loop);
	r->ok = check_items(it, p->late_n, late, r);
	if (r->ok)
		lb_lateness_stats(late, p->late_n, r);
	twheel_loop_destroy(loop, NULL, NULL, NULL);
out:
	free(late);
	items_free(it);
	free(d);
	return r->ok ? 0 : -1;
}

static void stop_loop(void *arg)
{
	twheel_loop_stop(arg);
}

static int far_fired;
static void far_cb(struct tw_loop_timer *t)
{
	(void)t;
	far_fired++;
}

static int tw_idle(const struct lb_params *p, struct lb_result *r)
{
	struct item far;
	struct lb_idle c = { .p = p, .r = r, .stop = stop_loop };

	loop = mk(p, r);
	if (!loop)
		return -1;
	c.arg = loop;
	far_fired = 0;
	tw_loop_timer_init(&far.t, far_cb, 0);
	twheel_loop_add(loop, &far.t, p->idle_far_s * 1000 * NS_PER_MS);
	lb_idle_begin(&c);
	twheel_loop_run(loop);
	lb_idle_end(&c);
	twheel_loop_destroy(loop, NULL, NULL, NULL);
	if (far_fired) {
		r->ok = false;
		snprintf(r->note, sizeof(r->note), "the far timer fired early");
	}
	return 0;
}

/* ---- xthread ---- */

struct producer {
	pthread_t th;
	struct item *it;
	uint64_t *d;
	size_t n;
	uint64_t t_end;
	pthread_barrier_t *bar;
	int errors;
};

static void *produce(void *arg)
{
	struct producer *pr = arg;

	pthread_barrier_wait(pr->bar);
	for (size_t i = 0; i < pr->n; i++)
		if (twheel_loop_schedule(loop, &pr->it[i].t, pr->d[i]))
			pr->errors++;
	pr->t_end = lb_now();
	return NULL;
}

static uint64_t t_all;
static void x_fire_cb(struct tw_loop_timer *t)
{
	struct item *it = tw_container_of(t, struct item, t);

	REC(it)->fired++;
	if (--left == 0) {
		t_all = lb_now();
		twheel_loop_stop(loop);
	}
}

static int tw_xthread(const struct lb_params *p, struct lb_result *r)
{
	struct producer pr[2];
	pthread_barrier_t bar;
	struct item *it = items_new(2 * p->x_n);
	uint64_t t0, t_prod = 0;
	int k;

	loop = mk(p, r);
	if (!loop) {
		items_free(it);
		return -1;
	}
	for (size_t i = 0; i < 2 * p->x_n; i++)
		it[i].t.func = x_fire_cb;
	pthread_barrier_init(&bar, NULL, 3);
	for (k = 0; k < 2; k++) {
		pr[k] = (struct producer){ .it = it + (size_t)k * p->x_n, .n = p->x_n, .bar = &bar,
					   .d = lb_delays_ms(p->x_n, p->x_span_ms, 42 + (uint64_t)k, false) };
		pthread_create(&pr[k].th, NULL, produce, &pr[k]);
	}
	left = 2 * p->x_n;
	t0 = lb_now();
	pthread_barrier_wait(&bar);
	twheel_loop_run(loop); /* this thread is the loop thread */
	for (k = 0; k < 2; k++) {
		pthread_join(pr[k].th, NULL);
		if (pr[k].t_end > t_prod)
			t_prod = pr[k].t_end;
		free(pr[k].d);
	}
	pthread_barrier_destroy(&bar);
	r->ok = !pr[0].errors && !pr[1].errors && check_items(it, 2 * p->x_n, NULL, r);
	if (pr[0].errors || pr[1].errors)
		snprintf(r->note, sizeof(r->note), "schedule failed");
	lb_put(r, "Mschedules_per_s", 2.0 * (double)p->x_n / ((t_prod - t0) / 1e9) / 1e6);
	lb_put(r, "Mfired_per_s_e2e", 2.0 * (double)p->x_n / ((t_all - t0) / 1e9) / 1e6);
	twheel_loop_destroy(loop, NULL, NULL, NULL);
	items_free(it);
	return 0;
}

static int tw_add_expire(const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->ae_n, p->ae_span_ms, 42, false);
	struct item *it = items_new(p->ae_n);
	uint64_t cpu0, cpu1, w0, w1;
	size_t early = 0;

	loop = mk(p, r);
	if (!loop)
		goto out;
	cpu0 = lb_cpu_process();
	w0 = lb_now();
	for (size_t i = 0; i < p->ae_n; i++) {
		recs[i].due = lb_now() + d[i];
		twheel_loop_add(loop, &it[i].t, d[i]);
	}
	left = p->ae_n;
	twheel_loop_run(loop);
	cpu1 = lb_cpu_process();
	w1 = lb_now();
	r->ok = check_items(it, p->ae_n, NULL, r);
	for (size_t i = 0; i < p->ae_n; i++)
		early += recs[i].late < 0;
	if (early) {
		r->ok = false;
		snprintf(r->note, sizeof(r->note), "%zu timers fired early", early);
	}
	lb_put(r, "cpu_ns_per_timer", (double)(cpu1 - cpu0) / (double)p->ae_n);
	lb_put(r, "wall_s", (w1 - w0) / 1e9);
	twheel_loop_destroy(loop, NULL, NULL, NULL);
out:
	items_free(it);
	free(d);
	return r->ok ? 0 : -1;
}

const struct lb_impl lb_twheel = {
	.name = "twheel",
	.lateness = tw_lateness,
	.idle = tw_idle,
	.xthread = tw_xthread,
	.add_expire = tw_add_expire,
};
