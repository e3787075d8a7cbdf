/* SPDX-License-Identifier: MIT */
/*
 * tools/loopbench/loopbench.c - the driver of the real-time workloads on
 * event loops, side by side: twheel-uring, libuv, libev (one table of
 * operations each, loopbench.h) and Netty's HashedWheelTimer.
 *
 *   lateness      N timers, deadlines uniform in [1, span] ms after their
 *                 add; fire - deadline: p50, p99, max, min (min < 0 = early)
 *   idle_wakeups  one timer far away; the loop thread's wake-ups (voluntary
 *                 context switches) and CPU per second over the window
 *   xthread       2 producer threads schedule N timers each onto one loop
 *                 thread; schedules per second, each timer fired once
 *   add_expire    N timers (random delays in [1, span] ms) added and fired
 *                 on one loop thread: process CPU ns per timer
 *
 * Delays are whole milliseconds from splitmix64 seeded with 42 (xthread's
 * second producer: 43); every loop ends a run when its last timer fires.
 * The C loops run in this process, alternating repetition by repetition;
 * Netty runs in one JVM afterwards (its own warm-up first). Each figure is
 * the median of the repetitions with min and max; a repetition that fails
 * its check (count, once-only) is reported and left out.
 *
 * usage: loopbench [--reps R] [--quick] [--impl twheel,libuv,libev,netty]
 *                  [--workload lateness,idle_wakeups,xthread,add_expire]
 *                  [--tick-ns NS] [--csv FILE] [--java-src DIR]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "loopbench.h"

#ifndef LOOPBENCH_SRCDIR
#define LOOPBENCH_SRCDIR "."
#endif

/* One repetition's figures: name=value pairs; ok false = failed its check. */
#define LB_MAX_METRICS 8
struct lb_result {
	bool ok;
	int n;
	const char *name[LB_MAX_METRICS];
	double val[LB_MAX_METRICS];
	char note[160];
};

static void lb_put(struct lb_result *r, const char *name, double v)
{
	if (r->n < LB_MAX_METRICS) {
		r->name[r->n] = name;
		r->val[r->n] = v;
		r->n++;
	}
}

/* ---- helpers ----------------------------------------------------------- */

static uint64_t lb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t lb_cpu_process(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

static uint64_t *lb_delays_ms(size_t n, unsigned span_ms, uint64_t seed, bool descending)
{
	uint64_t *d = malloc(n * sizeof(*d)), s = seed;

	if (!d) {
		perror("malloc");
		exit(1);
	}
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

static void lb_lateness_stats(int64_t *late, size_t n, struct lb_result *r)
{
	size_t early = 0;

	qsort(late, n, sizeof(*late), cmp_i64);
	for (size_t i = 0; i < n; i++)
		early += late[i] < 0;
	lb_put(r, "p50_ms", late[n / 2] / 1e6);
	lb_put(r, "p99_ms", late[n * 99 / 100] / 1e6);
	lb_put(r, "max_ms", late[n - 1] / 1e6);
	lb_put(r, "min_ms", late[0] / 1e6);
	lb_put(r, "early_pct", 100.0 * (double)early / (double)n);
}

static long lb_thread_vcsw(pid_t tid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			v = strtol(line + 24, NULL, 10);
	fclose(f);
	return v;
}

static uint64_t thread_cpu(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The idle controller: call lb_idle_begin() on the loop thread just before
 * it enters its loop; a helper thread waits 100 ms, samples the loop
 * thread's context switches and CPU time, sleeps idle_s, samples again,
 * stores the figures in @r and calls @stop(@arg) (which must be
 * thread-safe for the loop). lb_idle_end() joins it.
 */
struct lb_idle {
	const struct lb_params *p;
	struct lb_result *r;
	void (*stop)(void *arg);
	void *arg;
	pid_t tid;
	clockid_t cpu;
	pthread_t th;
};

static void *idle_controller(void *arg)
{
	struct lb_idle *c = arg;
	uint64_t t0, t1, cpu0, cpu1;
	long v0, v1;

	usleep(100000); /* let the loop settle into its sleep */
	t0 = lb_now();
	v0 = lb_thread_vcsw(c->tid);
	cpu0 = thread_cpu(c->cpu);
	usleep((useconds_t)(c->p->idle_s * 1e6));
	v1 = lb_thread_vcsw(c->tid);
	cpu1 = thread_cpu(c->cpu);
	t1 = lb_now();
	c->r->ok = v0 >= 0 && v1 >= v0;
	lb_put(c->r, "wakeups_per_s", (double)(v1 - v0) / ((t1 - t0) / 1e9));
	lb_put(c->r, "cpu_ms_per_s", (cpu1 - cpu0) / 1e6 / ((t1 - t0) / 1e9));
	c->stop(c->arg);
	return NULL;
}

static void lb_idle_begin(struct lb_idle *c)
{
	c->tid = gettid();
	pthread_getcpuclockid(pthread_self(), &c->cpu);
	pthread_create(&c->th, NULL, idle_controller, c);
}

static void lb_idle_end(struct lb_idle *c)
{
	pthread_join(c->th, NULL);
}

/* ---- the run in progress: what lb_fired() records -------------------------- */

/*
 * The harness's own per-timer bookkeeping, kept apart from each library's
 * timer object in one array for every loop, so that all loops pay the same
 * for it (one 24-byte record touched at add and at fire).
 */
struct lb_rec {
	uint64_t due;   /* request time + delay */
	int64_t late;   /* fire time - due (a lower bound unless run.exact) */
	uint32_t fired;
};

static struct {
	const struct lb_ops *ops;
	void *loop;
	struct lb_rec *recs;
	size_t left;     /* timers still to fire; the last one stops the loop */
	bool late;       /* record fire time - due (not in xthread, which has no due time) */
	bool exact;      /* read the clock at every fire (lateness); else see lb_fired() */
	uint64_t seen;   /* the latest clock reading taken in lb_fired() */
	uint64_t t_all;  /* when the last timer fired */
} run;

void lb_fired(size_t i)
{
	struct lb_rec *rec = &run.recs[i];

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
			run.seen = lb_now();
		rec->late = (int64_t)(run.seen - rec->due);
	}
	rec->fired++;
	if (--run.left == 0) {
		run.t_all = lb_now();
		run.ops->stop(run.loop);
	}
}

/* A loop with n timers and their records; NULL with r->note if it cannot. */
static void *run_begin(const struct lb_ops *ops, const struct lb_params *p, size_t n,
		       struct lb_result *r)
{
	run.recs = calloc(n, sizeof(*run.recs));
	if (!run.recs) {
		perror("calloc");
		exit(1);
	}
	run.ops = ops;
	run.late = true;
	run.exact = true;
	run.seen = 0;
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

/* Arm timers 0..n-1 with delays @d, recording each one's due time first. */
static void add_all(const uint64_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* the request time first, as a caller sees it; then the loop's */
		run.recs[i].due = lb_now() + d[i];
		run.ops->add(run.loop, i, d[i], run.recs[i].due);
	}
}

/*
 * The check every run ends with: each of the n timers fired exactly once
 * (else false, with the culprit in r->note); copies their lateness into
 * @late when it is not NULL.
 */
static bool check_recs(size_t n, int64_t *late, struct lb_result *r)
{
	for (size_t i = 0; i < n; i++) {
		if (run.recs[i].fired != 1) {
			snprintf(r->note, sizeof(r->note), "timer %zu fired %u times", i,
				 run.recs[i].fired);
			return false;
		}
		if (late)
			late[i] = run.recs[i].late;
	}
	return true;
}

/* ---- the workloads --------------------------------------------------------- */

/* lateness: N timers added in descending order of delay; fire - due. */
static int wl_lateness(const struct lb_ops *ops, const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->late_n, p->late_span_ms, 42, true);
	int64_t *late = malloc(p->late_n * sizeof(*late));

	if (run_begin(ops, p, p->late_n, r)) {
		add_all(d, p->late_n);
		ops->run(run.loop);
		r->ok = check_recs(p->late_n, late, r);
		if (r->ok)
			lb_lateness_stats(late, p->late_n, r);
		run_end();
	}
	free(late);
	free(d);
	return r->ok ? 0 : -1;
}

/* idle_wakeups: one timer far away; the controller samples and stops the loop. */
static int wl_idle(const struct lb_ops *ops, const struct lb_params *p, struct lb_result *r)
{
	struct lb_idle c = { .p = p, .r = r, .stop = ops->wake_stop };
	uint64_t far = p->idle_far_s * 1000 * NS_PER_MS;

	if (!run_begin(ops, p, 1, r))
		return -1;
	run.left = SIZE_MAX; /* the far timer does not stop the loop */
	c.arg = run.loop;
	add_all(&far, 1);
	lb_idle_begin(&c);
	ops->run(run.loop);
	lb_idle_end(&c);
	if (run.recs[0].fired) {
		r->ok = false;
		snprintf(r->note, sizeof(r->note), "the far timer fired early");
	}
	run_end();
	return 0;
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
	pr->t_end = lb_now();
	return NULL;
}

/* xthread: 2 producer threads schedule N timers each; this thread runs the loop. */
static int wl_xthread(const struct lb_ops *ops, const struct lb_params *p, struct lb_result *r)
{
	struct producer pr[2];
	pthread_barrier_t bar;
	uint64_t t0, t_prod = 0;
	int k;

	if (!run_begin(ops, p, 2 * p->x_n, r))
		return -1;
	run.late = false;
	pthread_barrier_init(&bar, NULL, 3);
	for (k = 0; k < 2; k++) {
		pr[k] = (struct producer){ .first = (size_t)k * p->x_n, .n = p->x_n, .bar = &bar,
					   .d = lb_delays_ms(p->x_n, p->x_span_ms, 42 + (uint64_t)k, false) };
		pthread_create(&pr[k].th, NULL, produce, &pr[k]);
	}
	t0 = lb_now();
	pthread_barrier_wait(&bar);
	ops->run(run.loop); /* this thread is the loop thread */
	for (k = 0; k < 2; k++) {
		pthread_join(pr[k].th, NULL);
		if (pr[k].t_end > t_prod)
			t_prod = pr[k].t_end;
		free(pr[k].d);
	}
	pthread_barrier_destroy(&bar);
	r->ok = !pr[0].errors && !pr[1].errors && check_recs(2 * p->x_n, NULL, r);
	if (pr[0].errors || pr[1].errors)
		snprintf(r->note, sizeof(r->note), "schedule failed");
	lb_put(r, "Mschedules_per_s", 2.0 * (double)p->x_n / ((t_prod - t0) / 1e9) / 1e6);
	lb_put(r, "Mfired_per_s_e2e", 2.0 * (double)p->x_n / ((run.t_all - t0) / 1e9) / 1e6);
	run_end();
	return 0;
}

/* add_expire: N timers added and fired on this thread; process CPU per timer. */
static int wl_add_expire(const struct lb_ops *ops, const struct lb_params *p, struct lb_result *r)
{
	uint64_t *d = lb_delays_ms(p->ae_n, p->ae_span_ms, 42, false);
	uint64_t cpu0, cpu1, w0, w1;
	size_t early = 0;

	if (run_begin(ops, p, p->ae_n, r)) {
		run.exact = false; /* only never-early is checked here */
		cpu0 = lb_cpu_process();
		w0 = lb_now();
		add_all(d, p->ae_n);
		ops->run(run.loop);
		cpu1 = lb_cpu_process();
		w1 = lb_now();
		r->ok = check_recs(p->ae_n, NULL, r);
		for (size_t i = 0; i < p->ae_n; i++)
			early += run.recs[i].late < 0;
		if (early && ops->never_early) {
			r->ok = false;
			snprintf(r->note, sizeof(r->note), "%zu timers fired early", early);
		}
		lb_put(r, "cpu_ns_per_timer", (double)(cpu1 - cpu0) / (double)p->ae_n);
		lb_put(r, "wall_s", (w1 - w0) / 1e9);
		if (!ops->never_early)
			lb_put(r, "early_pct", 100.0 * (double)early / (double)p->ae_n);
		run_end();
	}
	free(d);
	return r->ok ? 0 : -1;
}

void *lb_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		perror("calloc");
		exit(1);
	}
	return p;
}

/* ---- the hand-over queue of loops without a thread-safe add ------------------ */

void lb_queue_init(struct lb_queue *q)
{
	pthread_mutex_init(&q->mu, NULL);
	q->head = NULL;
	q->tail = &q->head;
}

void lb_queue_push(struct lb_queue *q, struct lb_qent *e)
{
	e->next = NULL;
	pthread_mutex_lock(&q->mu);
	*q->tail = e;
	q->tail = &e->next;
	pthread_mutex_unlock(&q->mu);
}

struct lb_qent *lb_queue_take(struct lb_queue *q)
{
	struct lb_qent *e;

	pthread_mutex_lock(&q->mu);
	e = q->head;
	q->head = NULL;
	q->tail = &q->head;
	pthread_mutex_unlock(&q->mu);
	return e;
}

/* ---- results ------------------------------------------------------------- */

#define MAX_SERIES 128
#define MAX_REPS 64

struct series {
	char workload[16], impl[16], metric[24];
	double v[MAX_REPS];
	int n, failed;
	char note[160];
};

static struct series series[MAX_SERIES];
static int nseries;

static struct series *series_get(const char *wl, const char *impl, const char *metric)
{
	for (int i = 0; i < nseries; i++)
		if (!strcmp(series[i].workload, wl) && !strcmp(series[i].impl, impl) &&
		    !strcmp(series[i].metric, metric))
			return &series[i];
	if (nseries == MAX_SERIES)
		return NULL;
	struct series *s = &series[nseries++];

	snprintf(s->workload, sizeof(s->workload), "%s", wl);
	snprintf(s->impl, sizeof(s->impl), "%s", impl);
	snprintf(s->metric, sizeof(s->metric), "%s", metric);
	return s;
}

static void record(const char *wl, const char *impl, const struct lb_result *r)
{
	if (!r->ok) {
		struct series *s = series_get(wl, impl, "FAILED");

		if (s) {
			s->failed++;
			snprintf(s->note, sizeof(s->note), "%s", r->note);
		}
		fprintf(stderr, "  %s/%s: repetition FAILED its check: %s\n", wl, impl, r->note);
		return;
	}
	for (int i = 0; i < r->n; i++) {
		struct series *s = series_get(wl, impl, r->name[i]);

		if (s && s->n < MAX_REPS)
			s->v[s->n++] = r->val[i];
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void print_results(const struct lb_params *p, const char *csv_path)
{
	FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
	const char *last = "";

	if (csv_path && !csv)
		perror(csv_path);
	printf("\n| workload | loop | metric | median | min | max | reps |\n");
	printf("| --- | --- | --- | ---: | ---: | ---: | ---: |\n");
	if (csv)
		fprintf(csv, "case,median,min,max,reps\n");
	for (int i = 0; i < nseries; i++) {
		struct series *s = &series[i];
		double v[MAX_REPS], med;

		if (!strcmp(s->metric, "FAILED")) {
			printf("| %s | %s | FAILED | %d repetition(s) | | | %s |\n", s->workload,
			       s->impl, s->failed, s->note);
			continue;
		}
		memcpy(v, s->v, sizeof(double) * (size_t)s->n);
		qsort(v, (size_t)s->n, sizeof(double), cmp_d);
		med = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
		printf("| %s | %s | %s | %.4g | %.4g | %.4g | %d |\n",
		       strcmp(last, s->workload) ? s->workload : "", s->impl, s->metric, med,
		       v[0], v[s->n - 1], s->n);
		last = s->workload;
		if (csv)
			fprintf(csv, "%s/%s/%s,%.6g,%.6g,%.6g,%d\n", s->workload, s->impl,
				s->metric, med, v[0], v[s->n - 1], s->n);
	}
	if (csv) {
		fclose(csv);
		printf("\nCSV written to %s\n", csv_path);
	}
	(void)p;
}

/* ---- Netty: a Java driver compiled at run time ------------------------------ */

static const char *netty_jar = "/usr/share/java/netty-common.jar";

static void run_netty(const struct lb_params *p, const char *workloads, const char *java_src)
{
	char dir[] = "/tmp/loopbench-java-XXXXXX", cmd[2048], line[1024];
	FILE *f;

	if (system("command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1")) {
		printf("netty: SKIPPED: java/javac not found (install default-jdk-headless)\n");
		return;
	}
	if (access(netty_jar, R_OK)) {
		printf("netty: SKIPPED: %s not found (install libnetty-java)\n", netty_jar);
		return;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return;
	}
	snprintf(cmd, sizeof(cmd), "javac -nowarn -cp %s -d %s %s/LoopBenchNetty.java",
		 netty_jar, dir, java_src);
	if (system(cmd)) {
		printf("netty: SKIPPED: javac failed: %s\n", cmd);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "java -Xms2g -Xmx8g -Dio.netty.leakDetection.level=disabled -cp %s:%s "
		 "LoopBenchNetty %s %d %zu %u %g %u %zu %u %zu %u %llu",
		 dir, netty_jar, workloads, p->reps, p->late_n, p->late_span_ms, p->idle_s,
		 p->idle_far_s, p->x_n, p->x_span_ms, p->ae_n, p->ae_span_ms,
		 (unsigned long long)p->tick_ns);
	printf("netty: %s\n", cmd);
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f) {
		perror("popen");
		return;
	}
	/* RESULT <workload> <ok> name=value ... | NOTE text */
	while (fgets(line, sizeof(line), f)) {
		struct lb_result r = { .ok = false };
		char wl[32], *tok, *save = NULL;
		int ok;
		static char names[4096];
		static size_t used;

		if (strncmp(line, "RESULT ", 7)) {
			fputs(line, stdout);
			continue;
		}
		if (sscanf(line + 7, "%31s %d", wl, &ok) != 2)
			continue;
		r.ok = ok;
		tok = strtok_r(line + 7, " \n", &save); /* workload */
		tok = strtok_r(NULL, " \n", &save);     /* ok */
		while ((tok = strtok_r(NULL, " \n", &save))) {
			char *eq = strchr(tok, '=');
			size_t len;

			if (!eq)
				continue;
			*eq = '\0';
			if (!strcmp(tok, "note")) {
				snprintf(r.note, sizeof(r.note), "%s", eq + 1);
				continue;
			}
			len = strlen(tok) + 1;
			if (used + len > sizeof(names))
				break;
			memcpy(names + used, tok, len);
			lb_put(&r, names + used, strtod(eq + 1, NULL));
			used += len;
		}
		printf("  %s/netty: rep done\n", wl);
		record(wl, "netty", &r);
	}
	pclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- main ---------------------------------------------------------------- */

static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; (s = strstr(s, name)); s += n)
		if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))
			return true;
	return false;
}

/* What the command line chose besides the parameters. */
struct lb_cli {
	const char *impls, *workloads, *csv, *java_src;
};

/*
 * Read the command line into @p and @cli (left at their defaults where not
 * given). Returns 0, or 2 after a usage error (message printed).
 */
static int parse_args(int argc, char **argv, struct lb_params *p, struct lb_cli *cli)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			p->reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--quick")) {
			/* a smoke run: scaled-down N, short windows */
			p->late_n = 2000;
			p->late_span_ms = 200;
			p->idle_s = 0.3;
			p->x_n = 20000;
			p->x_span_ms = 50;
			p->ae_n = 20000;
			p->ae_span_ms = 50;
		} else if (!strcmp(argv[i], "--tick-ns") && i + 1 < argc) {
			p->tick_ns = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--impl") && i + 1 < argc) {
			cli->impls = argv[++i];
		} else if (!strcmp(argv[i], "--workload") && i + 1 < argc) {
			cli->workloads = argv[++i];
		} else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			cli->csv = argv[++i];
		} else if (!strcmp(argv[i], "--java-src") && i + 1 < argc) {
			cli->java_src = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [--reps R] [--quick] [--impl LIST] "
				"[--workload LIST] [--tick-ns NS] [--csv FILE] [--java-src DIR]\n",
				argv[0]);
			return 2;
		}
	}
	if (p->reps < 1 || p->reps > MAX_REPS) {
		fprintf(stderr, "--reps must be 1..%d\n", MAX_REPS);
		return 2;
	}
	return 0;
}

/* The header: the parameters of each workload and the CPUs we may run on. */
static void print_params(const struct lb_params *p)
{
	printf("# loopbench: real-time workloads (docs/bench.md)\n");
	printf("# parameters: reps=%d tick=%.3f ms (twheel, netty); seed 42 (splitmix64)\n",
	       p->reps, p->tick_ns / 1e6);
	printf("#   lateness: N=%zu, deadlines uniform in [1, %u] ms after each add "
	       "(integer ms, added in descending order)\n", p->late_n, p->late_span_ms);
	printf("#   idle_wakeups: one timer at +%u s, window %.1f s\n", p->idle_far_s, p->idle_s);
	printf("#   xthread: 2 producers x N=%zu timers, delays uniform in [1, %u] ms\n",
	       p->x_n, p->x_span_ms);
	printf("#   add_expire: N=%zu timers, delays uniform in [1, %u] ms, one thread\n",
	       p->ae_n, p->ae_span_ms);
	printf("# CPUs allowed: ");
	fflush(stdout);
	if (system("grep Cpus_allowed_list /proc/self/status | cut -f2"))
		printf("?\n");
}

/*
 * One repetition of workload @wl on @im (@w: 0 lateness, 1 idle_wakeups,
 * 2 xthread, 3 add_expire): run it, print it, record it.
 */
static void run_rep(size_t w, const char *wl, const struct lb_ops *im, const struct lb_params *p,
		    int rep)
{
	int (*fn)(const struct lb_ops *, const struct lb_params *, struct lb_result *) =
		w == 0 ? wl_lateness : w == 1 ? wl_idle : w == 2 ? wl_xthread : wl_add_expire;
	struct lb_result r = { .ok = false };

	if (fn(im, p, &r) < 0 && !r.note[0])
		snprintf(r.note, sizeof(r.note), "could not run");
	printf("  %s/%s rep %d:", wl, im->name, rep + 1);
	for (int m = 0; m < r.n; m++)
		printf(" %s=%.4g", r.name[m], r.val[m]);
	printf("%s%s\n", r.ok ? "" : " FAILED ", r.note);
	fflush(stdout);
	record(wl, im->name, &r);
}

/*
 * Every workload in @cli->workloads on every C loop in @cli->impls,
 * alternating the loops repetition by repetition.
 */
static void run_c_loops(const struct lb_params *p, const struct lb_cli *cli)
{
	const struct lb_ops *all[] = {
		&lb_twheel,
		&lb_twheel_at,
#ifdef LB_HAVE_LIBUV
		&lb_libuv,
#endif
#ifdef LB_HAVE_LIBEV
		&lb_libev,
#endif
	};
	static const char *wls[] = { "lateness", "idle_wakeups", "xthread", "add_expire" };

	for (size_t w = 0; w < sizeof(wls) / sizeof(wls[0]); w++) {
		if (!listed(cli->workloads, wls[w]))
			continue;
		printf("== %s\n", wls[w]);
		for (int rep = 0; rep < p->reps; rep++) {
			for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
				if (!listed(cli->impls, all[k]->name))
					continue;
				run_rep(w, wls[w], all[k], p, rep);
			}
		}
	}
}

int main(int argc, char **argv)
{
	struct lb_params p = {
		.late_n = 100000, .late_span_ms = 2000,
		.idle_s = 5, .idle_far_s = 10,
		.x_n = 1000000, .x_span_ms = 1000,
		.ae_n = 1000000, .ae_span_ms = 1000,
		.tick_ns = NS_PER_MS, .reps = 5,
	};
	struct lb_cli cli = {
		.impls = "twheel,twheel-at,libuv,libev,netty",
		.workloads = "lateness,idle_wakeups,xthread,add_expire",
		.csv = NULL,
		.java_src = LOOPBENCH_SRCDIR,
	};
	int ret = parse_args(argc, argv, &p, &cli);

	if (ret)
		return ret;
	print_params(&p);
	run_c_loops(&p, &cli);
	if (listed(cli.impls, "netty"))
		run_netty(&p, cli.workloads, cli.java_src);
	print_results(&p, cli.csv);
	return 0;
}
