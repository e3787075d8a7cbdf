/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/bench.c - the driver of the virtual-time benchmarks: every
 * workload of workload.c over every table of operations (libtwheel,
 * ops_wheel.c; a 4-ary and a binary heap, heap.c) in this process, the
 * floors, memory, a scaling run, the peers a user would pick instead (libev,
 * libuv, libevent, Boost.Asio, Netty's HashedWheelTimer, each in its own
 * helper process, see peer.h), a Markdown table, CSV and gnuplot charts.
 * docs/bench.md says what each figure measures.
 *
 * Usage: bench [--n N] [--m M] [--reps R] [--workload LIST] [--csv FILE]
 *              [--md FILE] [--plot DIR] [--quick] [--no-peers] [--peers]
 *              [--impl NAME] [--loopbench-csv FILE]
 * LIST is comma-separated from: add_expire, add_cancel, rearm, long_range,
 * advance_spike, idle_skip, memory, scaling, peers, all (default); the
 * floors run with rearm (floor_rearm) and add_expire (floor_chase).
 *
 * Exit status: 0 if every workload passed its check, 1 if one failed (its
 * figure is not printed), 2 on a usage error.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <twheel/twheel.h>

#include "bench.h"
#include "common.h"

#ifndef BENCH_SOURCE_ROOT
#define BENCH_SOURCE_ROOT "."
#endif

/* Where tools/loopbench/run.sh writes its CSV unless told otherwise. */
#define LOOPBENCH_DEFAULT_CSV "/tmp/twheel-loopbench/loopbench.csv"

#define MAX_REPS 64
#define MAX_ROWS 512

static const struct bench_ops *const impls[] = { &ops_wheel, &ops_heap4, &ops_heap2 };
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* ---- options -------------------------------------------------------------- */

static struct {
	uint32_t n, m, reps;
	bool quick;
	int peers; /* -1: default (on unless --quick) */
	const char *csv, *md, *plot, *loopbench_csv;
	const char *impl; /* --impl: run only this in-process implementation */
	char workloads[512];
	char self[PATH_MAX]; /* this executable, to find the peer helpers */
} opt = { .peers = -1 };

static bool want(const char *name)
{
	char buf[600];
	snprintf(buf, sizeof(buf), ",%s,", opt.workloads);
	char key[64];
	snprintf(key, sizeof(key), ",%s,", name);
	return strstr(buf, key) || strstr(buf, ",all,");
}

/* ---- results -------------------------------------------------------------- */

struct row {
	char section[16];  /* "main", "scaling", "memory" */
	char workload[40];
	char impl[40];
	uint64_t n;
	char unit[16];
	double v[MAX_REPS];
	int nv;
	bool failed;
	char note[240];
	double med, min, max;
};

static struct row rows[MAX_ROWS];
static int nrows;
static int failures;

/* What was not measured, and why, printed under the tables. */
static char skips[32][320];
static int nskips;

static void skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (nskips < 32)
		vsnprintf(skips[nskips++], sizeof(skips[0]), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  skip: %s\n", skips[nskips - 1]);
}

static struct row *row_get(const char *section, const char *workload, const char *impl,
			   uint64_t n, const char *unit)
{
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		if (!strcmp(r->section, section) && !strcmp(r->workload, workload) &&
		    !strcmp(r->impl, impl) && r->n == n)
			return r;
	}
	if (nrows == MAX_ROWS) {
		fprintf(stderr, "bench: too many result rows\n");
		exit(1);
	}
	struct row *r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->section, sizeof(r->section), "%s", section);
	snprintf(r->workload, sizeof(r->workload), "%s", workload);
	snprintf(r->impl, sizeof(r->impl), "%s", impl);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->n = n;
	return r;
}

static void row_add(struct row *r, double v)
{
	if (r->nv < MAX_REPS)
		r->v[r->nv++] = v;
}

static void row_fail(struct row *r, const char *why)
{
	if (!r->failed)
		fprintf(stderr, "FAIL %s/%s N=%llu: %s (no figure printed)\n", r->workload, r->impl,
			(unsigned long long)r->n, why);
	r->failed = true;
	failures++;
}

static void row_note(struct row *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void row_stats(struct row *r)
{
	if (!r->nv)
		return;
	double s[MAX_REPS];
	memcpy(s, r->v, sizeof(double) * (size_t)r->nv);
	qsort(s, (size_t)r->nv, sizeof(double), cmpd);
	r->min = s[0];
	r->max = s[r->nv - 1];
	r->med = r->nv % 2 ? s[r->nv / 2] : (s[r->nv / 2 - 1] + s[r->nv / 2]) / 2;
}

static const struct row *row_find(const char *section, const char *workload, const char *impl,
				  uint64_t n)
{
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		if (!strcmp(r->section, section) && !strcmp(r->workload, workload) &&
		    !strcmp(r->impl, impl) && r->n == n && !r->failed && r->nv)
			return r;
	}
	return NULL;
}

/* ---- in-process workloads ------------------------------------------------- */

static void run_one(const char *section, const char *workload, const struct bench_ops *im, wl_fn fn,
		    const struct wl_params *p, uint64_t n_label, const char *unit)
{
	struct wl_out o;
	memset(&o, 0, sizeof(o));
	struct row *r = row_get(section, workload, im->name, n_label, unit);
	if (fn(im, p, &o)) {
		row_fail(r, o.why);
		return;
	}
	row_add(r, o.value);
	if (!strcmp(workload, "rearm") && im == &ops_wheel)
		row_note(r, "%.1f%% of re-arms only stored the expiry (did not move the timer)", 100 * o.extra[0]);
	if (!strcmp(workload, "long_range") && im == &ops_wheel) {
		struct row *m = row_get(section, "long_range_ns_per_moved", im->name, n_label, "ns/moved");
		row_add(m, o.extra[1]);
		row_note(m, "whole long_range time / timers moved by cascades (%.2f moves per timer, "
			    "from twheel_get_stats): an upper bound on one move", o.extra[0]);
		row_note(r, "%.2f cascade moves per timer; %.0f advances", o.extra[0], o.extra[2]);
	}
	if (!strcmp(workload, "advance_spike")) {
		struct row *m = row_get(section, "advance_spike_p99.9", im->name, n_label, "us");
		row_add(m, o.extra[0]);
	}
	if (!strcmp(workload, "idle_skip") && im == &ops_wheel)
		row_note(r, "add + one advance over 2^32 idle ticks; %.0f timer moves per skip", o.extra[0]);
}

static void run_floor(const char *section, const char *name, uint32_t n, uint32_t m)
{
	struct row *r = row_get(section, name, "floor", n, "ns/op");
	double ns;
	int rc = !strcmp(name, "floor_rearm") ? floor_rearm(n, m, &ns) : floor_chase(n, &ns);
	if (rc)
		row_fail(r, "floor check failed");
	else
		row_add(r, ns);
}

/* Run @workload for every implementation, alternating them rep by rep. */
static void run_workload(const char *section, const char *workload, uint32_t n, uint32_t m)
{
	struct wl_params p = { n, m };
	const char *unit = "ns/op";
	uint64_t label = n;
	for (uint32_t rep = 0; rep < opt.reps; rep++) {
		for (size_t i = 0; i < NIMPLS; i++) {
			const struct bench_ops *im = impls[(i + rep) % NIMPLS]; /* rotate who goes first */
			wl_fn fn = NULL;
			if (opt.impl && strcmp(opt.impl, im->name))
				continue;
			if (!strcmp(workload, "add_expire"))
				fn = wl_add_expire;
			else if (!strcmp(workload, "add_cancel"))
				fn = wl_add_cancel;
			else if (!strcmp(workload, "rearm"))
				fn = wl_rearm;
			else if (!strcmp(workload, "long_range"))
				fn = wl_long_range;
			else if (!strcmp(workload, "advance_spike"))
				fn = wl_advance_spike, unit = "us";
			else if (!strcmp(workload, "idle_skip"))
				fn = wl_idle_skip, unit = "ns/skip", label = 1;
			run_one(section, !strcmp(workload, "advance_spike") ? "advance_spike_max" : workload,
				im, fn, &p, label, unit);
		}
		if (!strcmp(workload, "rearm"))
			run_floor(section, "floor_rearm", n, m);
		if (!strcmp(workload, "add_expire"))
			run_floor(section, "floor_chase", n, m);
	}
	fprintf(stderr, "  done: %s N=%u\n", workload, n);
}

/* ---- memory --------------------------------------------------------------- */

/* In a fresh process (exec of ourselves): run add_expire once, report peak RSS. */
static int memory_child(const char *impl, uint32_t n)
{
	struct wl_out o;
	memset(&o, 0, sizeof(o));
	struct wl_params p = { n, 0 };
	for (size_t i = 0; i < NIMPLS; i++)
		if (!strcmp(impls[i]->name, impl) && wl_add_expire(impls[i], &p, &o)) {
			printf("FAIL %s\n", o.why);
			return 1;
		}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("maxrss_kb %ld\n", ru.ru_maxrss);
	return 0;
}

static long spawn_memory_child(const char *impl, uint32_t n, char *why, size_t whylen)
{
	char nbuf[32], cmd[PATH_MAX + 128];
	snprintf(nbuf, sizeof(nbuf), "%u", n);
	snprintf(cmd, sizeof(cmd), "'%s' --memory-child %s %s", opt.self, impl, nbuf);
	FILE *f = popen(cmd, "r");
	if (!f) {
		snprintf(why, whylen, "popen: %s", strerror(errno));
		return -1;
	}
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "maxrss_kb %ld", &kb) == 1)
			continue;
		if (!strncmp(line, "FAIL ", 5))
			snprintf(why, whylen, "%s", line + 5);
	}
	if (pclose(f) != 0 && kb >= 0)
		kb = -1;
	if (kb < 0 && !why[0])
		snprintf(why, whylen, "child reported nothing");
	return kb;
}

static void run_memory(const uint32_t *ns, int nn)
{
	/* the counting allocator sees the library's own allocation */
	uint64_t a0 = bench_alloc_calls;
	struct twheel *w = twheel_create(0);
	uint64_t a1 = bench_alloc_calls;
	size_t wheel_bytes = bench_alloc_last_size;
	twheel_destroy(w);
	struct row *r = row_get("memory", "node_bytes", "twheel", 1, "bytes");
	row_add(r, (double)ops_wheel.timer_size);
#if TWHEEL_DEBUG_CHECKS
	row_note(r, "-Ddebug_checks build: the timer carries its owner and a magic number");
#else
	if (ops_wheel.timer_size > 40)
		row_fail(r, "struct tw_timer is larger than 40 bytes");
#endif
	for (size_t i = 1; i < NIMPLS; i++) { /* the heaps */
		r = row_get("memory", "node_bytes", impls[i]->name, 1, "bytes");
		row_add(r, (double)(impls[i]->timer_size + impls[i]->per_timer_extra));
		row_note(r, "%zu-byte node + %zu-byte heap entry", impls[i]->timer_size,
			 impls[i]->per_timer_extra);
	}
	r = row_get("memory", "wheel_bytes", "twheel", 1, "bytes");
	if (!bench_alloc_hooked) {
		row_add(r, -1);
		row_note(r, "not measured: sanitizer build, malloc is not counted");
	} else if (a1 - a0 != 1) {
		row_fail(r, "twheel_create() was not seen making exactly one allocation");
	} else {
		row_add(r, (double)wheel_bytes);
		row_note(r, "the one allocation of twheel_create(), seen by the counting malloc");
		if (wheel_bytes > 16384)
			row_fail(r, "the wheel is larger than 16 KiB");
	}
	r = row_get("memory", "allocs_after_create", "twheel", 0, "calls");
	row_add(r, 0); /* every wheel workload failed its check otherwise */
	if (!bench_alloc_hooked)
		row_note(r, "NOT CHECKED: sanitizer build, malloc is not counted");
	else
		row_note(r, "every workload fails its check if malloc/calloc/realloc/aligned_alloc is called "
		    "between twheel_create() and twheel_destroy()");

	for (int k = 0; k < nn; k++) {
		uint32_t n = ns[k];
		for (uint32_t rep = 0; rep < opt.reps; rep++) {
			char why[256] = "";
			long base = spawn_memory_child("none", n, why, sizeof(why));
			for (size_t i = 0; i < NIMPLS; i++) {
				const char *name = impls[i]->name;
				struct row *pr = row_get("memory", "peak_rss_add_expire", name, n, "MiB");
				struct row *br = row_get("memory", "rss_bytes_per_timer", name, n, "bytes");
				why[0] = '\0';
				long kb = spawn_memory_child(name, n, why, sizeof(why));
				if (kb < 0 || base < 0) {
					row_fail(pr, why[0] ? why : "no baseline");
					continue;
				}
				row_add(pr, (double)kb / 1024.0);
				row_add(br, (double)(kb - base) * 1024.0 / n);
				row_note(pr, "getrusage ru_maxrss of a fresh process running add_expire once "
					     "(baseline process: %.1f MiB)", (double)base / 1024.0);
				row_note(br, "(peak - baseline) / N; includes the benchmark's own array of N "
					     "expiries (8 bytes per timer)");
			}
		}
		fprintf(stderr, "  done: memory N=%u\n", n);
	}
}

/* ---- peers ---------------------------------------------------------------- */

/*
 * Each peer is a helper program that speaks lines:
 *   RESULT <workload> <impl> <n> <unit> <v1> <v2> ...   one value per rep
 *   SKIP <workload> <impl> <reason>
 *   FAIL <workload> <impl> <reason>
 *   NOTE <workload> <impl> <what the figure measures>
 */
static void parse_peer_output(FILE *f, const char *who)
{
	char line[4096];
	bool any = false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char wl[64], im[64], unit[32];
		unsigned long long n;
		int off = 0;
		if (sscanf(line, "RESULT %63s %63s %llu %31s%n", wl, im, &n, unit, &off) == 4) {
			struct row *r = row_get("main", wl, im, n, unit);
			char *p = line + off, *end;
			for (;;) {
				double v = strtod(p, &end);
				if (end == p)
					break;
				row_add(r, v);
				p = end;
			}
			any = true;
		} else if (sscanf(line, "FAIL %63s %63s %n", wl, im, &off) == 2) {
			row_fail(row_get("main", wl, im, opt.n, "ns/op"), line + off);
			any = true;
		} else if (sscanf(line, "NOTE %63s %63s %n", wl, im, &off) == 2) {
			for (int i = 0; i < nrows; i++)
				if (!strcmp(rows[i].workload, wl) && !strcmp(rows[i].impl, im) &&
				    !strcmp(rows[i].section, "main"))
					row_note(&rows[i], "%s", line + off);
		} else if (!strncmp(line, "SKIP ", 5)) {
			skip("%s", line + 5);
			any = true;
		} else if (line[0]) {
			fprintf(stderr, "  %s: %s\n", who, line);
		}
	}
	if (!any)
		fprintf(stderr, "  %s: produced no result\n", who);
}

static void self_dir(char *dir, size_t len)
{
	snprintf(dir, len, "%s", opt.self);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, len, ".");
}

static void run_peer_cmd(const char *who, const char *cmd)
{
	fprintf(stderr, "  peer %s...\n", who);
	fflush(stdout);
	FILE *f = popen(cmd, "r");
	if (!f) {
		fprintf(stderr, "  %s: popen failed\n", who);
		return;
	}
	parse_peer_output(f, who);
	int st = pclose(f);
	if (st != 0)
		fprintf(stderr, "  %s: exit status %d\n", who, st);
}

static void peer_workloads(char *buf, size_t len)
{
	buf[0] = '\0';
	const char *all[] = { "rearm", "add_cancel", "add_expire" };
	for (size_t i = 0; i < 3; i++)
		if (want(all[i]) || want("peers"))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", all[i]);
}

static void run_peers(void)
{
	char dir[PATH_MAX], cmd[3 * PATH_MAX], wls[128];
	self_dir(dir, sizeof(dir));
	peer_workloads(wls, sizeof(wls));
	const char *c_peers[] = { "libev", "libuv", "libevent", "asio" };
	for (size_t i = 0; i < 4; i++) {
		char exe[PATH_MAX + 32];
		snprintf(exe, sizeof(exe), "%s/bench-peer-%s", dir, c_peers[i]);
		if (access(exe, X_OK)) {
			skip("%s: helper %s was not built (library or compiler missing)", c_peers[i], exe);
			continue;
		}
		snprintf(cmd, sizeof(cmd), "'%s' --n %u --m %u --reps %u --workload %s", exe, opt.n, opt.m,
			 opt.reps, wls);
		run_peer_cmd(c_peers[i], cmd);
	}

	/* Netty: compile the Java driver at run time into a temporary directory */
	const char *jar = "/usr/share/java/netty-common.jar";
	char src[PATH_MAX + 32];
	snprintf(src, sizeof(src), "%s/NettyBench.java", dir);
	if (access(src, R_OK))
		snprintf(src, sizeof(src), "%s/tools/bench/NettyBench.java", BENCH_SOURCE_ROOT);
	if (system("command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1") != 0) {
		skip("netty: java or javac not found (install default-jdk-headless)");
		return;
	}
	if (access(jar, R_OK)) {
		skip("netty: %s not found (install libnetty-java)", jar);
		return;
	}
	char tmp[] = "/tmp/twheel-netty-XXXXXX";
	if (!mkdtemp(tmp)) {
		skip("netty: mkdtemp failed");
		return;
	}
	snprintf(cmd, sizeof(cmd), "javac -nowarn -d '%s' -cp '%s' '%s' >&2", tmp, jar, src);
	if (system(cmd) != 0) {
		skip("netty: javac failed on %s", src);
	} else {
		snprintf(cmd, sizeof(cmd),
			 "java -Xms4g -Xmx8g -XX:+UseParallelGC -cp '%s:%s' NettyBench --n %u --m %u --reps %u --workload %s",
			 tmp, jar, opt.n, opt.m, opt.reps, wls);
		run_peer_cmd("netty", cmd);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "  could not remove %s\n", tmp);
}

/* ---- output --------------------------------------------------------------- */

static const char *floor_of(const char *workload)
{
	if (!strcmp(workload, "rearm"))
		return "floor_rearm";
	if (!strcmp(workload, "add_expire"))
		return "floor_chase";
	return NULL;
}

static void fmt_num(char *buf, size_t len, double v)
{
	if (v >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (v >= 10)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

/* speed-up vs heap4 (heap4 / this, >1 means faster) and multiple of the floor */
static void ratios(const struct row *r, double *vs_heap4, double *x_floor)
{
	*vs_heap4 = 0;
	*x_floor = 0;
	if (strcmp(r->unit, "ns/op") && strcmp(r->unit, "ns/skip") && strcmp(r->unit, "us"))
		return;
	const struct row *h = row_find(r->section, r->workload, "heap4", r->n);
	if (h && h->med > 0 && r->med > 0 && strcmp(r->impl, "floor"))
		*vs_heap4 = h->med / r->med;
	const char *fl = floor_of(r->workload);
	const struct row *f = fl ? row_find(r->section, fl, "floor", r->n) : NULL;
	if (f && f->med > 0)
		*x_floor = r->med / f->med;
}

static void print_table(FILE *out, const char *section, const char *title)
{
	bool any = false;
	for (int i = 0; i < nrows; i++)
		any |= !strcmp(rows[i].section, section);
	if (!any)
		return;
	fprintf(out, "\n### %s\n\n", title);
	fprintf(out, "| workload | impl | median | min | max | unit | N | reps | vs heap4 | x floor | notes |\n");
	fprintf(out, "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |\n");
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		if (strcmp(r->section, section))
			continue;
		if (r->failed) {
			fprintf(out, "| %s | %s | FAILED | | | | %llu | | | | check failed: no figure |\n",
				r->workload, r->impl, (unsigned long long)r->n);
			continue;
		}
		if (!r->nv)
			continue;
		char med[32], mn[32], mx[32], vh[32] = "", xf[32] = "";
		fmt_num(med, sizeof(med), r->med);
		fmt_num(mn, sizeof(mn), r->min);
		fmt_num(mx, sizeof(mx), r->max);
		double a, b;
		ratios(r, &a, &b);
		if (a > 0)
			snprintf(vh, sizeof(vh), "%.2fx", a);
		if (b > 0)
			snprintf(xf, sizeof(xf), "%.2f", b);
		fprintf(out, "| %s | %s | %s | %s | %s | %s | %llu | %d | %s | %s | %s |\n", r->workload,
			r->impl, med, mn, mx, r->unit, (unsigned long long)r->n, r->nv, vh, xf, r->note);
	}
}

static void write_csv(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "section,workload,impl,n,unit,median,min,max,reps,speedup_vs_heap4,x_floor,values,status,note\n");
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double a, b;
		ratios(r, &a, &b);
		fprintf(f, "%s,%s,%s,%llu,%s,", r->section, r->workload, r->impl, (unsigned long long)r->n,
			r->unit);
		if (r->failed || !r->nv) {
			fprintf(f, ",,,%d,,,,%s,", r->nv, r->failed ? "failed" : "empty");
		} else {
			fprintf(f, "%.4f,%.4f,%.4f,%d,", r->med, r->min, r->max, r->nv);
			if (a > 0)
				fprintf(f, "%.4f", a);
			fputc(',', f);
			if (b > 0)
				fprintf(f, "%.4f", b);
			fputc(',', f);
			for (int k = 0; k < r->nv; k++)
				fprintf(f, "%s%.4f", k ? ";" : "", r->v[k]);
			fprintf(f, ",ok,");
		}
		fputc('"', f);
		for (const char *p = r->note; *p; p++)
			fputs(*p == '"' ? "\"\"" : (char[]){ *p, 0 }, f);
		fputs("\"\n", f);
	}
	fclose(f);
}

/* ---- plots ---------------------------------------------------------------- */

static int write_scaling_dat(const char *dir, const char *workload, const char *impl)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/scaling_%s_%s.dat", dir, workload, impl);
	FILE *f = fopen(path, "w");
	if (!f)
		return 0;
	int k = 0;
	fprintf(f, "# N median min max (%s, %s)\n", workload, impl);
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		if (!strcmp(r->section, "scaling") && !strcmp(r->workload, workload) &&
		    !strcmp(r->impl, impl) && !r->failed && r->nv) {
			fprintf(f, "%llu %.4f %.4f %.4f\n", (unsigned long long)r->n, r->med, r->min, r->max);
			k++;
		}
	}
	fclose(f);
	return k;
}

static int gnuplot(const char *dir, const char *script_name, const char *script)
{
	char path[PATH_MAX + 64], cmd[2 * PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, script_name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot '%s'", dir, script_name);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * The scaling chart of @wl (rearm or add_cancel): each implementation's
 * ns per operation against N, and floor_rearm's for rearm, into
 * DIR/scaling_WL.png.
 */
static void plot_scaling(const char *dir, const char *wl)
{
	const char *ims[] = { "twheel", "heap4", "heap2", "floor" };
	char script[4096];
	int have[4];
	for (int i = 0; i < 4; i++)
		have[i] = write_scaling_dat(dir, wl, i == 3 ? "floor" : ims[i]);
	if (!strcmp(wl, "rearm"))
		have[3] = 0;
	/* floor_rearm is stored under its own workload name */
	if (!strcmp(wl, "rearm"))
		have[3] = write_scaling_dat(dir, "floor_rearm", "floor");
	if (!have[0]) {
		printf("SKIP plot %s: no scaling data (run with --workload scaling or all)\n", wl);
		return;
	}
	int o = snprintf(script, sizeof(script),
			 "set terminal pngcairo size 900,560 font 'DejaVu Sans,11'\n"
			 "set output 'scaling_%s.png'\n"
			 "set title '%s: ns per operation against N (virtual time, median of runs; bars: min-max)' noenhanced\n"
			 "set logscale x\nset logscale y\nset format x '10^{%%L}'\n"
			 "set xlabel 'N (timers)'\nset ylabel 'ns per %s'\n"
			 "set key top left\nset grid\nset offsets graph 0.04, graph 0.04, 0, 0\n"
			 "plot 'scaling_%s_twheel.dat' u 1:2:3:4 w yerrorlines lw 2 pt 7 t 'libtwheel', \\\n"
			 "     'scaling_%s_heap4.dat' u 1:2:3:4 w yerrorlines lw 2 pt 5 t '4-ary heap', \\\n"
			 "     'scaling_%s_heap2.dat' u 1:2:3:4 w yerrorlines lw 2 pt 9 t 'binary heap'",
			 wl, wl, !strcmp(wl, "rearm") ? "re-arm" : "add+cancel pair",
			 wl, wl, wl);
	if (have[3])
		snprintf(script + o, sizeof(script) - (size_t)o,
			 ", \\\n     'scaling_floor_rearm_floor.dat' u 1:2 w lines dt 2 lw 2 lc 'black' "
			 "t 'floor: read+write a random node'\n");
	else
		snprintf(script + o, sizeof(script) - (size_t)o, "\n");
	char name[64];
	snprintf(name, sizeof(name), "scaling_%s.gp", wl);
	if (gnuplot(dir, name, script))
		printf("SKIP plot %s: gnuplot failed\n", wl);
	else
		printf("PLOT %s/scaling_%s.png\n", dir, wl);
}

/*
 * DIR/main_ns.dat: the rearm, add_cancel and add_expire medians at the
 * main N of every implementation and peer (-1: not measured). Returns the
 * rows written, 0 if the file cannot be written.
 */
static int write_main_dat(const char *dir)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/main_ns.dat", dir);
	FILE *f = fopen(path, "w");
	int k = 0;
	if (!f)
		return 0;
	fprintf(f, "# impl rearm_median add_cancel_median add_expire_median (ns; -1: not measured)\n");
	const char *seen[32];
	int ns = 0;
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		if (strcmp(r->section, "main") || strcmp(r->unit, "ns/op") ||
		    (strcmp(r->workload, "rearm") && strcmp(r->workload, "add_cancel")) ||
		    !strcmp(r->impl, "floor"))
			continue;
		bool dup = false;
		for (int j = 0; j < ns; j++)
			dup |= !strcmp(seen[j], r->impl);
		if (dup || ns == 32)
			continue;
		seen[ns++] = r->impl;
		const struct row *a = row_find("main", "rearm", r->impl, opt.n);
		const struct row *b = row_find("main", "add_cancel", r->impl, opt.n);
		const struct row *c = row_find("main", "add_expire", r->impl, opt.n);
		fprintf(f, "\"%s\" %.2f %.2f %.2f\n", r->impl, a ? a->med : -1, b ? b->med : -1,
			c ? c->med : -1);
		k++;
	}
	fclose(f);
	return k;
}

/* rearm and add_cancel at the main N, every implementation and peer: DIR/main_ns.png. */
static void plot_main(const char *dir)
{
	char script[4096];
	if (!write_main_dat(dir)) {
		printf("SKIP plot main_ns: no rearm/add_cancel rows at the main N in this run\n");
		return;
	}
	snprintf(script, sizeof(script),
		 "set terminal pngcairo size 1000,560 font 'DejaVu Sans,11'\n"
		 "set output 'main_ns.png'\n"
		 "set title 'ns per operation at N = %u (median; lower is better; peers: caller-thread cost on a real loop)'\n"
		 "set style data histogram\nset style histogram cluster gap 1\n"
		 "set style fill solid 0.8 border -1\nset boxwidth 0.9\n"
		 "set logscale y\nset yrange [1:*]\nset ylabel 'ns per operation (log)'\n"
		 "set xtics rotate by -30\nset grid ytics\nset key top left\n"
		 "plot 'main_ns.dat' u ($2 > 0 ? $2 : 1/0):xtic(1) t 'rearm (per re-arm)', \\\n"
		 "     '' u ($3 > 0 ? $3 : 1/0) t 'add\\_cancel (per pair)', \\\n"
		 "     '' u ($4 > 0 ? $4 : 1/0) t 'add\\_expire (per timer)'\n",
		 opt.n);
	if (gnuplot(dir, "main_ns.gp", script))
		printf("SKIP plot main_ns: gnuplot failed\n");
	else
		printf("PLOT %s/main_ns.png\n", dir);
}

/*
 * The real-time workloads: --loopbench-csv, else every CSV in
 * tools/loopbench/, else the default output of tools/loopbench/run.sh,
 * drawn by plot_loopbench.sh into @dir.
 */
static void plot_loopbench(const char *dir)
{
	char cmd[4 * PATH_MAX];
	if (opt.loopbench_csv)
		snprintf(cmd, sizeof(cmd), "'%s/tools/bench/plot_loopbench.sh' '%s' '%s' || true",
			 BENCH_SOURCE_ROOT, opt.loopbench_csv, dir);
	else
		snprintf(cmd, sizeof(cmd),
			 "found=0; for f in '%s'/tools/loopbench/*.csv " LOOPBENCH_DEFAULT_CSV "; do "
			 "[ -r \"$f\" ] || continue; found=1; "
			 "'%s/tools/bench/plot_loopbench.sh' \"$f\" '%s' || true; done; "
			 "[ $found = 1 ] || echo 'SKIP plot loopbench: no CSV from tools/loopbench "
			 "(looked for %s/tools/loopbench/*.csv and " LOOPBENCH_DEFAULT_CSV "; run "
			 "tools/loopbench/run.sh first, or give one with --loopbench-csv FILE)'",
			 BENCH_SOURCE_ROOT, BENCH_SOURCE_ROOT, dir, BENCH_SOURCE_ROOT);
	fflush(stdout);
	if (system(cmd) != 0)
		printf("SKIP plot loopbench: the plot command failed\n");
}

/* --plot DIR: every chart, with gnuplot, into DIR (created if need be). */
static void plot_all(const char *dir)
{
	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		printf("SKIP plots: gnuplot not found (install gnuplot-nox)\n");
		return;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		printf("SKIP plots: cannot create %s: %s\n", dir, strerror(errno));
		return;
	}
	const char *wls[] = { "rearm", "add_cancel" };
	for (int w = 0; w < 2; w++)
		plot_scaling(dir, wls[w]);
	plot_main(dir);
	plot_loopbench(dir);
}

/* ---- main ----------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench [--n N] [--m M] [--reps R] [--workload LIST] [--csv FILE] [--md FILE]\n"
		"             [--plot DIR] [--quick] [--peers|--no-peers] [--impl NAME]\n"
		"             [--loopbench-csv FILE]\n"
		"  --n N          timers (default 1000000; --quick 20000)\n"
		"  --m M          re-arms in rearm (default 10000000; --quick 200000)\n"
		"  --reps R       repetitions of everything (default 5; --quick 3)\n"
		"  --workload L   comma-separated: add_expire,add_cancel,rearm,long_range,advance_spike,\n"
		"                 idle_skip,memory,scaling,peers,all (default all)\n"
		"  --csv FILE     write every row as CSV\n"
		"  --md FILE      write the Markdown tables to FILE as well as stdout\n"
		"  --plot DIR     draw PNG charts with gnuplot into DIR\n"
		"  --impl NAME    run only twheel, heap4 or heap2 (e.g. under perf stat)\n"
		"  --quick        scaled-down sizes for a smoke test; peers off unless --peers\n");
}

static uint32_t parse_u32(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || v < 1 || v > 4e9) {
		fprintf(stderr, "bench: bad number '%s'\n", s);
		exit(2);
	}
	return (uint32_t)v;
}

/*
 * bench --memory-child IMPL N: the helper process of run_memory(); IMPL
 * "none" reports the baseline maxrss. Returns its exit status.
 */
static int memory_child_main(char **argv)
{
	if (!strcmp(argv[2], "none")) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		printf("maxrss_kb %ld\n", ru.ru_maxrss);
		return 0;
	}
	return memory_child(argv[2], parse_u32(argv[3]));
}

/*
 * Read the command line into opt, sizes left 0 when not given (in *@n,
 * *@m, *@reps). Returns -1 to go on, or the exit status: 0 after --help,
 * 2 after a usage error (usage printed).
 */
static int parse_args(int argc, char **argv, uint32_t *n, uint32_t *m, uint32_t *reps)
{
	snprintf(opt.workloads, sizeof(opt.workloads), "all");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quick")) {
			opt.quick = true;
		} else if (!strcmp(a, "--peers")) {
			opt.peers = 1;
		} else if (!strcmp(a, "--no-peers")) {
			opt.peers = 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (v && !strcmp(a, "--n")) {
			*n = parse_u32(v), i++;
		} else if (v && !strcmp(a, "--m")) {
			*m = parse_u32(v), i++;
		} else if (v && !strcmp(a, "--reps")) {
			*reps = parse_u32(v), i++;
		} else if (v && !strcmp(a, "--workload")) {
			snprintf(opt.workloads, sizeof(opt.workloads), "%s", v), i++;
		} else if (v && !strcmp(a, "--csv")) {
			opt.csv = v, i++;
		} else if (v && !strcmp(a, "--md")) {
			opt.md = v, i++;
		} else if (v && !strcmp(a, "--plot")) {
			opt.plot = v, i++;
		} else if (v && !strcmp(a, "--impl")) {
			opt.impl = v, i++;
		} else if (v && !strcmp(a, "--loopbench-csv")) {
			opt.loopbench_csv = v, i++;
		} else {
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

/*
 * The sizes: those given, else the defaults (--quick: scaled down), within
 * bounds; the peers on unless --quick; and where this executable is, to
 * find the peer helpers (@argv0 if /proc says nothing).
 */
static void finish_options(uint32_t n, uint32_t m, uint32_t reps, const char *argv0)
{
	opt.n = n ? n : opt.quick ? 20000 : BENCH_N;
	opt.m = m ? m : opt.quick ? 200000 : BENCH_M;
	opt.reps = reps ? reps : opt.quick ? 3 : 5;
	if (opt.reps > MAX_REPS)
		opt.reps = MAX_REPS;
	if (opt.m < BENCH_REARM_BLOCK)
		opt.m = BENCH_REARM_BLOCK;
	if (opt.peers < 0)
		opt.peers = !opt.quick;
	ssize_t sl = readlink("/proc/self/exe", opt.self, sizeof(opt.self) - 1);
	if (sl <= 0)
		snprintf(opt.self, sizeof(opt.self), "%s", argv0);
	else
		opt.self[sl] = '\0';
}

/* Every workload asked for: the main ones, memory, scaling, then the peers. */
static void run_all(void)
{
	const char *main_wls[] = { "add_expire", "add_cancel", "rearm", "long_range", "advance_spike",
				   "idle_skip" };
	for (size_t i = 0; i < 6; i++) {
		if (!want(main_wls[i]))
			continue;
		uint32_t nn = opt.n, mm = opt.m;
		if (!strcmp(main_wls[i], "idle_skip"))
			mm = opt.quick ? 1000 : 10000;
		run_workload("main", main_wls[i], nn, mm);
	}
	if (want("memory")) {
		uint32_t ns[2] = { opt.n, opt.n * 10 };
		run_memory(ns, 2);
	}
	if (want("scaling")) {
		uint32_t top = opt.quick ? 100000 : 10000000;
		for (uint32_t sn = 1000; sn <= top; sn *= 10) {
			run_workload("scaling", "add_cancel", sn, opt.m);
			run_workload("scaling", "rearm", sn, opt.m);
		}
	}
	if (opt.peers && (want("peers") || want("rearm") || want("add_cancel") || want("add_expire")))
		run_peers();
}

/* The Markdown report: on stdout, and into --md FILE when given. */
static void print_report(void)
{
	FILE *outs[2] = { stdout, NULL };
	if (opt.md && !(outs[1] = fopen(opt.md, "w")))
		fprintf(stderr, "bench: %s: %s\n", opt.md, strerror(errno));
	for (int k = 0; k < 2; k++) {
		FILE *out = outs[k];
		if (!out)
			continue;
		fprintf(out, "## libtwheel benchmarks (virtual time; N=%u, M=%u, %u reps, seed %d)\n", opt.n,
			opt.m, opt.reps, BENCH_SEED);
		fprintf(out, "\nmedian, min and max over the reps; \"vs heap4\" = heap4 median / this median "
			     "(above 1: faster than the 4-ary heap); \"x floor\" = this median / the floor's "
			     "median (rearm: floor_rearm, add_expire: floor_chase).\n");
		print_table(out, "main", "Workloads");
		print_table(out, "memory", "Memory");
		print_table(out, "scaling", "Scaling (rearm: M re-arms over N live timers; add_cancel: N pairs)");
		if (nskips)
			fprintf(out, "\n### Not measured\n\n");
		for (int i = 0; i < nskips; i++)
			fprintf(out, "- %s\n", skips[i]);
		if (k)
			fclose(out);
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--memory-child"))
		return memory_child_main(argv);
	uint32_t n = 0, m = 0, reps = 0;
	int ret = parse_args(argc, argv, &n, &m, &reps);
	if (ret >= 0)
		return ret;
	finish_options(n, m, reps, argv[0]);

	if (ops_selftest(&ops_heap4) || ops_selftest(&ops_heap2)) {
		fprintf(stderr, "FAIL heap self-check: a heap disagrees with the model\n");
		return 1;
	}

	fprintf(stderr, "bench: N=%u M=%u reps=%u (libtwheel %s)\n", opt.n, opt.m, opt.reps,
		twheel_version());
	run_all();
	for (int i = 0; i < nrows; i++)
		row_stats(&rows[i]);
	print_report();
	if (opt.csv)
		write_csv(opt.csv);
	if (opt.plot)
		plot_all(opt.plot);
	if (failures)
		fprintf(stderr, "bench: %d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
