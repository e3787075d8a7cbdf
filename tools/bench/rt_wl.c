/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt_wl.c - the real-time workloads (rt.h), written once over
 * any struct rt_ops, and the bookkeeping every table's fires go through.
 *
 * Each workload creates the loop and its timers (untimed), runs, checks its
 * result and tears down; it returns its figures in struct rt_res, with ok
 * false and the reason in note when the check failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common.h"
#include "rt_wl.h"

void rt_put(struct rt_res *r, const char *name, double v)
{
	if (r->n < RT_MAX_METRICS) {
		r->name[r->n] = name;
		r->val[r->n++] = v;
	}
}

void *rt_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

/* ---- the run in progress: what rt_fired() records -------------------------- */

/*
 * The harness's own per-timer bookkeeping, kept apart from each library's
 * timer object in one array for every loop, so that all loops pay the same
 * for it (one 24-byte record touched at add and at fire).
 */
struct rt_rec {
	uint64_t due;  /* request time + delay */
	int64_t late;  /* fire time - due (a lower bound unless run.exact) */
	uint32_t fired;
};

static struct {
	const struct rt_ops *ops;
	void *loop;
	struct rt_rec *recs;
	size_t left;    /* timers still to fire; the last one stops the loop */
	bool late;      /* record fire time - due */
	bool exact;     /* read the clock at every fire (lateness); else see rt_fired() */
	uint64_t seen;  /* the latest clock reading taken in rt_fired() */
	uint64_t fires; /* every fire of the run */
	uint64_t t_all; /* when the last timer fired */
} run;

void rt_fired(size_t i)
{
	struct rt_rec *rec = &run.recs[i];
	/*
	 * Never early is proven with any clock reading taken before this
	 * fire: if one is already at or past the due time, so is the fire.
	 * Only when the last reading does not prove it (the first fire of a
	 * loop iteration, typically) is the clock read again, so the check is
	 * as strict as a reading per fire and costs one per iteration, for
	 * every loop alike. Where lateness itself is measured (run.exact), the
	 * clock is read at every fire.
	 */
	if (run.late) {
		if (run.exact || run.seen < rec->due)
			run.seen = clock_ns();
		rec->late = (int64_t)(run.seen - rec->due);
	}
	rec->fired++;
	run.fires++;
	if (--run.left == 0) {
		run.t_all = clock_ns();
		run.ops->stop(run.loop);
	}
}

/* A loop with n timers and their records; NULL with r->note if it cannot. */
static void *run_begin(const struct rt_ops *ops, const struct rt_params *p, size_t n, struct rt_res *r)
{
	run.recs = rt_calloc(n, sizeof(*run.recs));
	run.ops = ops;
	run.late = true;
	run.exact = true;
	run.seen = 0;
	run.fires = 0;
	run.left = n;
	run.loop = ops->create(p, n, r->note, sizeof(r->note));
	if (!run.loop) {
		free(run.recs);
		run.recs = NULL;
	}
	return run.loop;
}

static void run_end(void)
{
	run.ops->destroy(run.loop);
	free(run.recs);
	run.recs = NULL;
	run.loop = NULL;
}

/* Arm timers 0..n-1 with delays @d (sync first where asked), recording each one's due time first. */
static int add_all(const uint64_t *d, size_t n, bool sync)
{
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		if (sync && run.ops->sync)
			run.ops->sync(run.loop);
		/* the request time first, as a caller sees it; then the loop's */
		run.recs[i].due = clock_ns() + d[i];
		bad |= run.ops->add(run.loop, i, d[i], run.recs[i].due) < 0;
	}
	return bad;
}

/*
 * The check every run that fires ends with: each of the n timers fired
 * exactly once (else false, with the culprit in r->note); copies their
 * lateness into @late when it is not NULL.
 */
static bool check_recs(size_t n, int64_t *late, struct rt_res *r)
{
	for (size_t i = 0; i < n; i++) {
		if (run.recs[i].fired != 1) {
			snprintf(r->note, sizeof(r->note), "timer %zu fired %u times", i, run.recs[i].fired);
			return false;
		}
		if (late)
			late[i] = run.recs[i].late;
	}
	return true;
}

static bool fail(struct rt_res *r, const char *why)
{
	snprintf(r->note, sizeof(r->note), "%s", why);
	return r->ok = false;
}

/* ---- rearm, add_cancel, add_expire: the virtual-time workloads on a real loop ---- */

/* rearm: N timers at +30 s, then M re-arms of a random one, the loop polled every 1,000. */
static void wl_rearm(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	uint64_t d = BENCH_REARM_DELTA * NS_PER_MS;
	uint32_t blocks = p->m / BENCH_REARM_BLOCK;
	struct rng g = rng_seed(3);
	int bad = 0;
	if (!run_begin(ops, p, p->n, r))
		return;
	run.late = false;
	for (uint32_t i = 0; i < p->n; i++)
		bad |= ops->add(run.loop, i, d, clock_ns() + d) < 0;
	uint64_t t0 = clock_ns();
	for (uint32_t b = 0; b < blocks; b++) {
		uint64_t due = clock_ns() + d; /* one reading per loop iteration, for the -at tables */
		for (uint32_t k = 0; k < BENCH_REARM_BLOCK; k++)
			bad |= ops->mod(run.loop, rng_below(&g, p->n), d, due) < 0;
		ops->poll(run.loop);
	}
	uint64_t t1 = clock_ns();
	r->ok = !bad && !run.fires;
	for (uint32_t i = 0; i < p->n && r->ok; i++)
		r->ok = ops->pending(run.loop, i);
	if (!r->ok)
		fail(r, "an operation failed, a timer fired or one was not pending");
	rt_put(r, "ns/op", (double)(t1 - t0) / ((double)blocks * BENCH_REARM_BLOCK));
	run_end();
}

/* n offsets uniform in [1, SPAN] (stream 1, as add_expire and add_cancel). */
static uint32_t *offsets(uint32_t n)
{
	uint32_t *o = rt_calloc(n, sizeof(*o));
	struct rng g = rng_seed(1);
	for (uint32_t i = 0; i < n; i++)
		o[i] = 1 + rng_below(&g, BENCH_SPAN);
	return o;
}

/* add_cancel: N timers 1..65,536 ms out, then each deleted in a random order (stream 2). */
static void wl_add_cancel(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	uint32_t *off = offsets(p->n), *perm = rt_calloc(p->n, sizeof(*perm));
	long dels = 0;
	int bad = 0;
	rng_permutation(perm, p->n, 2);
	if (run_begin(ops, p, p->n, r)) {
		run.late = false;
		uint64_t t0 = clock_ns(), base = clock_ns();
		for (uint32_t i = 0; i < p->n; i++)
			bad |= ops->add(run.loop, i, off[i] * NS_PER_MS, base + off[i] * NS_PER_MS) < 0;
		for (uint32_t i = 0; i < p->n; i++)
			dels += ops->del(run.loop, perm[i]) == 1;
		ops->poll(run.loop); /* what a cancel leaves for the loop (Asio's aborted handlers) */
		uint64_t t1 = clock_ns();
		r->ok = !bad && dels == p->n && !run.fires;
		for (uint32_t i = 0; i < p->n && r->ok; i++)
			r->ok = !ops->pending(run.loop, i);
		if (!r->ok)
			fail(r, "an operation failed, a timer fired or one stayed pending");
		rt_put(r, "ns/op", (double)(t1 - t0) / p->n);
		run_end();
	}
	free(off);
	free(perm);
}

/* The tick of add_expire's compressed time: 100 ns, or the table's resolution. */
uint64_t rt_expire_tick(const struct rt_ops *ops)
{
	return ops->res_ns > 100 ? ops->res_ns : 100;
}

/* add_expire: N timers 1..65,536 ticks out, time compressed; run until all fired. */
static void wl_add_expire(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	uint64_t tick = rt_expire_tick(ops);
	uint32_t *off = offsets(p->n);
	int bad = 0;
	if (run_begin(ops, p, p->n, r)) {
		run.late = false;
		if (ops->sync)
			ops->sync(run.loop);
		uint64_t t0 = clock_ns(), base = clock_ns();
		for (uint32_t i = 0; i < p->n; i++)
			bad |= ops->add(run.loop, i, off[i] * tick, base + off[i] * tick) < 0;
		ops->run(run.loop);
		uint64_t t1 = clock_ns();
		r->ok = !bad && check_recs(p->n, NULL, r);
		rt_put(r, "ns/op", (double)(t1 - t0) / p->n);
		run_end();
	}
	free(off);
}

/* ---- the workloads on the real clock --------------------------------------- */

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

/* n delays in whole ms uniform in [1, span], splitmix64 from @seed, in ns. */
static uint64_t *delays_ms(size_t n, unsigned span_ms, uint64_t seed, bool descending)
{
	uint64_t *d = rt_calloc(n, sizeof(*d)), s = seed;
	for (size_t i = 0; i < n; i++)
		d[i] = (1 + splitmix64(&s) % span_ms) * NS_PER_MS;
	if (descending)
		qsort(d, n, sizeof(*d), cmp_desc);
	return d;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void lateness_stats(int64_t *late, size_t n, struct rt_res *r)
{
	size_t early = 0;
	qsort(late, n, sizeof(*late), cmp_i64);
	for (size_t i = 0; i < n; i++)
		early += late[i] < 0;
	rt_put(r, "p50_ms", (double)late[n / 2] / 1e6);
	rt_put(r, "p99_ms", (double)late[n * 99 / 100] / 1e6);
	rt_put(r, "max_ms", (double)late[n - 1] / 1e6);
	rt_put(r, "min_ms", (double)late[0] / 1e6);
	rt_put(r, "early_pct", 100.0 * (double)early / (double)n);
}

/* lateness: N timers added in descending order of delay; fire - due. */
static void wl_lateness(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	uint64_t *d = delays_ms(p->late_n, p->late_span_ms, 42, true);
	int64_t *late = rt_calloc(p->late_n, sizeof(*late));
	if (run_begin(ops, p, p->late_n, r)) {
		bool bad = add_all(d, p->late_n, true);
		ops->run(run.loop);
		r->ok = check_recs(p->late_n, late, r) && (!bad || fail(r, "an add failed"));
		if (r->ok)
			lateness_stats(late, p->late_n, r);
		run_end();
	}
	free(late);
	free(d);
}

/* expire_cpu: N timers added and fired on this thread; process CPU per timer. */
static void wl_expire_cpu(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	uint64_t *d = delays_ms(p->ae_n, p->ae_span_ms, 42, false);
	size_t early = 0;
	if (run_begin(ops, p, p->ae_n, r)) {
		run.exact = false; /* only never-early is checked here */
		uint64_t cpu0 = clock_of(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_ns();
		bool bad = add_all(d, p->ae_n, true);
		ops->run(run.loop);
		uint64_t cpu1 = clock_of(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_ns();
		r->ok = check_recs(p->ae_n, NULL, r) && (!bad || fail(r, "an add failed"));
		for (size_t i = 0; i < p->ae_n; i++)
			early += run.recs[i].late < 0;
		if (early && ops->never_early) {
			r->ok = false;
			snprintf(r->note, sizeof(r->note), "%zu timers fired early", early);
		}
		rt_put(r, "cpu_ns_per_timer", (double)(cpu1 - cpu0) / (double)p->ae_n);
		rt_put(r, "wall_s", (double)(w1 - w0) / 1e9);
		if (!ops->never_early)
			rt_put(r, "early_pct", 100.0 * (double)early / (double)p->ae_n);
		run_end();
	}
	free(d);
}

static long thread_vcsw(pid_t tid)
{
	char path[64], line[256];
	long v = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			v = strtol(line + 24, NULL, 10);
	fclose(f);
	return v;
}

/*
 * idle_wakeups' controller: a helper thread waits 100 ms, samples the loop
 * thread's context switches and CPU time, sleeps the window, samples
 * again, stores the figures and stops the loop with wake_stop.
 */
struct idle {
	const struct rt_params *p;
	struct rt_res *r;
	pid_t tid;
	clockid_t cpu;
};

static void *idle_controller(void *arg)
{
	struct idle *c = arg;
	usleep(100000); /* let the loop settle into its sleep */
	uint64_t t0 = clock_ns(), cpu0 = clock_of(c->cpu);
	long v0 = thread_vcsw(c->tid);
	usleep((useconds_t)c->p->idle_ms * 1000);
	long v1 = thread_vcsw(c->tid);
	uint64_t cpu1 = clock_of(c->cpu), t1 = clock_ns();
	c->r->ok = v0 >= 0 && v1 >= v0;
	rt_put(c->r, "wakeups_per_s", (double)(v1 - v0) / ((double)(t1 - t0) / 1e9));
	rt_put(c->r, "cpu_ms_per_s", (double)(cpu1 - cpu0) / 1e6 / ((double)(t1 - t0) / 1e9));
	run.ops->wake_stop(run.loop);
	return NULL;
}

/* idle_wakeups: one timer far away; the controller samples and stops the loop. */
static void wl_idle(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	struct idle c = { .p = p, .r = r, .tid = gettid() };
	uint64_t far = (uint64_t)p->idle_far_s * 1000 * NS_PER_MS;
	pthread_t th;
	if (!run_begin(ops, p, 1, r))
		return;
	run.left = SIZE_MAX; /* the far timer does not stop the loop */
	add_all(&far, 1, true);
	pthread_getcpuclockid(pthread_self(), &c.cpu);
	pthread_create(&th, NULL, idle_controller, &c);
	ops->run(run.loop);
	pthread_join(th, NULL);
	if (run.recs[0].fired)
		fail(r, "the far timer fired early");
	run_end();
}

struct producer {
	pthread_t th;
	size_t first, n; /* timers first .. first+n-1 */
	uint64_t *d;
	uint64_t t_end;
	pthread_barrier_t *bar;
	int errors;
};

static void *produce(void *arg)
{
	struct producer *pr = arg;
	pthread_barrier_wait(pr->bar);
	for (size_t i = 0; i < pr->n; i++)
		if (run.ops->schedule(run.loop, pr->first + i, pr->d[i]))
			pr->errors++;
	pr->t_end = clock_ns();
	return NULL;
}

/* xthread: 2 producer threads schedule N timers each; this thread runs the loop. */
static void wl_xthread(const struct rt_ops *ops, const struct rt_params *p, struct rt_res *r)
{
	struct producer pr[2];
	pthread_barrier_t bar;
	uint64_t t_prod = 0;
	if (!run_begin(ops, p, 2 * (size_t)p->x_n, r))
		return;
	run.late = false;
	pthread_barrier_init(&bar, NULL, 3);
	for (int k = 0; k < 2; k++) {
		pr[k] = (struct producer){ .first = (size_t)k * p->x_n, .n = p->x_n, .bar = &bar,
					   .d = delays_ms(p->x_n, p->x_span_ms, 42 + (uint64_t)k, false) };
		pthread_create(&pr[k].th, NULL, produce, &pr[k]);
	}
	uint64_t t0 = clock_ns();
	pthread_barrier_wait(&bar);
	ops->run(run.loop); /* this thread is the loop thread */
	for (int k = 0; k < 2; k++) {
		pthread_join(pr[k].th, NULL);
		t_prod = pr[k].t_end > t_prod ? pr[k].t_end : t_prod;
		free(pr[k].d);
	}
	pthread_barrier_destroy(&bar);
	r->ok = check_recs(2 * (size_t)p->x_n, NULL, r);
	if (pr[0].errors || pr[1].errors)
		fail(r, "schedule failed");
	rt_put(r, "Mschedules_per_s", 2.0 * p->x_n / ((double)(t_prod - t0) / 1e9) / 1e6);
	rt_put(r, "Mfired_per_s_e2e", 2.0 * p->x_n / ((double)(run.t_all - t0) / 1e9) / 1e6);
	run_end();
}

const struct rt_wl_def rt_wls[RT_NWL] = {
	[RT_REARM] = { "rearm", wl_rearm },
	[RT_ADD_CANCEL] = { "add_cancel", wl_add_cancel },
	[RT_ADD_EXPIRE] = { "add_expire", wl_add_expire },
	[RT_LATENESS] = { "lateness", wl_lateness },
	[RT_IDLE] = { "idle_wakeups", wl_idle },
	[RT_XTHREAD] = { "xthread", wl_xthread },
	[RT_EXPIRE_CPU] = { "expire_cpu", wl_expire_cpu },
};

/* ---- the hand-over queue of loops without a thread-safe add ------------------ */

struct rt_queue {
	pthread_mutex_t mu;
	struct rt_qent *head, **tail;
};

struct rt_queue *rt_queue_new(void)
{
	struct rt_queue *q = rt_calloc(1, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	q->tail = &q->head;
	return q;
}

void rt_queue_free(struct rt_queue *q)
{
	pthread_mutex_destroy(&q->mu);
	free(q);
}

void rt_queue_push(struct rt_queue *q, struct rt_qent *e)
{
	e->next = NULL;
	pthread_mutex_lock(&q->mu);
	*q->tail = e;
	q->tail = &e->next;
	pthread_mutex_unlock(&q->mu);
}

struct rt_qent *rt_queue_take(struct rt_queue *q)
{
	pthread_mutex_lock(&q->mu);
	struct rt_qent *e = q->head;
	q->head = NULL;
	q->tail = &q->head;
	pthread_mutex_unlock(&q->mu);
	return e;
}
