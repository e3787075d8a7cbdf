/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/bench.c - the driver of the virtual-time benchmarks: every
 * workload of workload.c over every table of operations (struct bench_ops:
 * libtwheel, ops_wheel.c; its kernel timer API, ops_timer_list.c; the C++
 * layer, ops_cpp.cpp, when built; a 4-ary
 * and a binary heap, heap.c) in this process, the floors, memory and a
 * scaling run, as Markdown tables and CSV (report.h). The real-time
 * workloads are rt.c's; run.sh runs both. docs/bench.md says what each
 * figure measures.
 *
 * Usage: bench [--n N] [--m M] [--reps R] [--workload LIST] [--impl LIST]
 *              [--csv FILE] [--md FILE] [--quick]
 *
 * Exit status: 0 if every workload passed its check, 1 if one failed (its
 * figure is not printed), 2 on a usage error (one line on stderr).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <twheel/twheel.h>

#include "args.h"
#include "bench.h"
#include "common.h"
#include "report.h"

static const struct bench_ops *const impls[] = {
	&ops_wheel, &ops_wheel_padded,
	&ops_timer_list,
#ifdef BENCH_HAVE_CPP
	&ops_cpp, &ops_cpp_hook,
#endif
	&ops_heap4, &ops_heap2,
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

static const char *const workloads[] = { "add_expire", "add_cancel", "rearm", "long_range",
					 "advance_spike", "idle_skip", "memory", "scaling", NULL };

static struct {
	uint32_t n, m, reps;
	bool quick;
	const char *csv, *md, *impl, *workloads;
	char self[PATH_MAX]; /* this executable, for the memory children */
} opt;

static bool want(const char *name)
{
	return bench_listed(opt.workloads, name) || bench_listed(opt.workloads, "all");
}

/* ---- in-process workloads ------------------------------------------------- */

/* The notes and second figures some workloads add to their row. */
static void run_notes(const char *section, const char *workload, const struct bench_ops *im,
		      const struct wl_out *o, uint64_t n, struct row *r)
{
	bool c_wheel = im == &ops_wheel;
	if (!strcmp(workload, "rearm") && c_wheel)
		row_note(r, "%.1f%% of re-arms only stored the expiry (did not move the timer)", 100 * o->extra[0]);
	if (!strcmp(workload, "long_range") && c_wheel) {
		struct row *m = row_get(section, "long_range_ns_per_moved", im->name, n, "ns/moved");
		row_add(m, o->extra[1]);
		row_note(m, "whole long_range time / timers moved by cascades (%.2f moves per timer, "
			    "from twheel_get_stats): an upper bound on one move", o->extra[0]);
		row_note(r, "%.2f cascade moves per timer; %.0f advances", o->extra[0], o->extra[2]);
	}
	if (!strcmp(workload, "advance_spike_max"))
		row_add(row_get(section, "advance_spike_p99.9", im->name, n, "us"), o->extra[0]);
	if (!strcmp(workload, "idle_skip") && c_wheel)
		row_note(r, "add + one advance over 2^32 idle ticks; %.0f timer moves per skip", o->extra[0]);
}

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
	run_notes(section, workload, im, &o, n_label, r);
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

static const struct {
	const char *name, *row, *unit;
	wl_fn fn;
} wls[] = {
	{ "add_expire", "add_expire", "ns/op", wl_add_expire },
	{ "add_cancel", "add_cancel", "ns/op", wl_add_cancel },
	{ "rearm", "rearm", "ns/op", wl_rearm },
	{ "long_range", "long_range", "ns/op", wl_long_range },
	{ "advance_spike", "advance_spike_max", "us", wl_advance_spike },
	{ "idle_skip", "idle_skip", "ns/skip", wl_idle_skip },
};

/* Run @workload for every implementation, alternating them rep by rep. */
static void run_workload(const char *section, const char *workload, uint32_t n, uint32_t m)
{
	struct wl_params p = { n, m };
	size_t w = 0;
	while (strcmp(wls[w].name, workload))
		w++;
	for (uint32_t rep = 0; rep < opt.reps; rep++) {
		for (size_t i = 0; i < NIMPLS; i++) {
			const struct bench_ops *im = impls[(i + rep) % NIMPLS]; /* rotate who goes first */
			if (opt.impl && !bench_listed(opt.impl, im->name))
				continue;
			run_one(section, wls[w].row, im, wls[w].fn, &p,
				!strcmp(workload, "idle_skip") ? 1 : n, wls[w].unit);
		}
		if (!strcmp(workload, "rearm"))
			run_floor(section, "floor_rearm", n, m);
		if (!strcmp(workload, "add_expire"))
			run_floor(section, "floor_chase", n, m);
	}
	fprintf(stderr, "  done: %s N=%u\n", workload, n);
}

/* ---- memory --------------------------------------------------------------- */

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* bench --memory-child IMPL N: run add_expire once in this fresh process ("none": the baseline). */
static int memory_child(const char *impl, const char *ns)
{
	struct wl_out o;
	struct wl_params p = { (uint32_t)strtoul(ns, NULL, 10), 0 };
	memset(&o, 0, sizeof(o));
	for (size_t i = 0; i < NIMPLS; i++)
		if (!strcmp(impls[i]->name, impl) && wl_add_expire(impls[i], &p, &o)) {
			printf("FAIL %s\n", o.why);
			return 1;
		}
	printf("maxrss_kb %ld\n", maxrss_kb());
	return 0;
}

static long spawn_memory_child(const char *impl, uint32_t n, char *why, size_t whylen)
{
	char cmd[PATH_MAX + 128], line[256];
	snprintf(cmd, sizeof(cmd), "'%s' --memory-child %s %u", opt.self, impl, n);
	FILE *f = popen(cmd, "r");
	long kb = -1;
	if (!f) {
		snprintf(why, whylen, "popen: %s", strerror(errno));
		return -1;
	}
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

/* The bytes per timer and of the wheel, seen by sizeof and by the counting malloc. */
static void memory_sizes(void)
{
	uint64_t a0 = bench_alloc_calls;
	struct twheel *w = twheel_create(0);
	uint64_t a1 = bench_alloc_calls;
	size_t wheel_bytes = bench_alloc_last_size;
	twheel_destroy(w);
	for (size_t i = 0; i < NIMPLS; i++) {
		struct row *r = row_get("memory", "node_bytes", impls[i]->name, 1, "bytes");
		row_add(r, (double)(impls[i]->timer_size + impls[i]->per_timer_extra));
		if (impls[i]->per_timer_extra)
			row_note(r, "%zu-byte node + %zu-byte heap entry", impls[i]->timer_size,
				 impls[i]->per_timer_extra);
	}
	struct row *r = row_get("memory", "node_bytes", "twheel", 1, "bytes");
#if TWHEEL_DEBUG_CHECKS
	row_note(r, "-Ddebug_checks build: the timer carries its owner and a magic number");
#else
	if (ops_wheel.timer_size > 40)
		row_fail(r, "struct tw_timer is larger than 40 bytes");
#endif
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
	row_note(r, bench_alloc_hooked ? "every workload fails its check if malloc/calloc/realloc/"
					 "aligned_alloc is called between create and destroy"
				       : "NOT CHECKED: sanitizer build, malloc is not counted");
}

/* Peak RSS of a fresh process running add_expire once, at @n timers, for each table. */
static void memory_rss(uint32_t n)
{
	for (uint32_t rep = 0; rep < opt.reps; rep++) {
		char why[256] = "";
		long base = spawn_memory_child("none", n, why, sizeof(why));
		for (size_t i = 0; i < NIMPLS; i++) {
			struct row *pr = row_get("memory", "peak_rss_add_expire", impls[i]->name, n, "MiB");
			struct row *br = row_get("memory", "rss_bytes_per_timer", impls[i]->name, n, "bytes");
			why[0] = '\0';
			long kb = spawn_memory_child(impls[i]->name, n, why, sizeof(why));
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

/* ---- output --------------------------------------------------------------- */

static const char *floor_of(const char *workload)
{
	if (!strcmp(workload, "rearm"))
		return "floor_rearm";
	return !strcmp(workload, "add_expire") ? "floor_chase" : NULL;
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

static const struct report_ratios bench_ratios = {
	{ "vs heap4", "x floor" }, { "speedup_vs_heap4", "x_floor" }, ratios,
};

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
		report_table(out, "main", "Workloads", &bench_ratios);
		report_table(out, "memory", "Memory", &bench_ratios);
		report_table(out, "scaling", "Scaling (rearm: M re-arms over N live timers; add_cancel: N pairs)",
			     &bench_ratios);
		report_skips(out);
		if (k)
			fclose(out);
	}
}

/* ---- main ----------------------------------------------------------------- */

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--n N] [--m M] [--reps R] [--workload LIST] [--impl LIST] [--csv FILE]\n"
		"             [--md FILE] [--quick]\n"
		"  --n N          timers (default 1000000; --quick 20000)\n"
		"  --m M          re-arms in rearm (default 10000000; --quick 200000)\n"
		"  --reps R       repetitions of everything (default 5; --quick 3)\n"
		"  --workload L   comma-separated: add_expire,add_cancel,rearm,long_range,advance_spike,\n"
		"                 idle_skip,memory,scaling,all (default all)\n"
		"  --impl L       comma-separated: run only these tables (twheel, twheel-padded,\n"
		"                 timer_list, twheel-cpp, twheel-cpp-hook, heap4, heap2), e.g. under perf\n"
		"  --csv FILE     write every row as CSV\n"
		"  --md FILE      write the Markdown tables to FILE as well as stdout\n"
		"  --quick        scaled-down sizes for a smoke test\n", prog);
}

/* Read the command line into opt; the sizes not given get their defaults. */
static void parse_args(int argc, char **argv)
{
	const struct args_opt opts[] = {
		ARGS_NUM("n", &opt.n, 1, 100000000), ARGS_NUM("m", &opt.m, BENCH_REARM_BLOCK, 4000000000u),
		ARGS_NUM("reps", &opt.reps, 1, REPORT_MAX_REPS), ARGS_STR("workload", &opt.workloads),
		ARGS_STR("impl", &opt.impl), ARGS_STR("csv", &opt.csv), ARGS_STR("md", &opt.md),
		ARGS_FLAG("quick", &opt.quick), ARGS_END,
	};
	opt.workloads = "all";
	args_parse("bench", argc, argv, opts, usage);
	const char *bad = bench_unknown(opt.workloads, workloads, "all");
	if (bad)
		args_fail("bench", "--workload: no workload '%s' (bench --help lists them)", bad);
	const char *names[NIMPLS + 1] = { NULL };
	for (size_t i = 0; i < NIMPLS; i++)
		names[i] = impls[i]->name;
	if (opt.impl && (bad = bench_unknown(opt.impl, names, "")))
		args_fail("bench", "--impl: no table '%s' in this build", bad);
	opt.n = opt.n ? opt.n : opt.quick ? 20000 : BENCH_N;
	opt.m = opt.m ? opt.m : opt.quick ? 200000 : BENCH_M;
	opt.reps = opt.reps ? opt.reps : opt.quick ? 3 : 5;
	ssize_t sl = readlink("/proc/self/exe", opt.self, sizeof(opt.self) - 1);
	snprintf(opt.self + (sl > 0 ? sl : 0), sizeof(opt.self) - (size_t)(sl > 0 ? sl : 0), "%s",
		 sl > 0 ? "" : argv[0]);
}

/* Every workload asked for: the main ones, memory, then scaling. */
static void run_all(void)
{
	for (size_t i = 0; i < sizeof(wls) / sizeof(wls[0]); i++)
		if (want(wls[i].name))
			run_workload("main", wls[i].name, opt.n,
				     strcmp(wls[i].name, "idle_skip") ? opt.m : opt.quick ? 1000 : 10000);
	if (want("memory")) {
		memory_sizes();
		memory_rss(opt.n);
		memory_rss(opt.n * 10);
	}
	if (want("scaling")) {
		uint32_t top = opt.quick ? 100000 : 10000000;
		for (uint32_t sn = 1000; sn <= top; sn *= 10) {
			run_workload("scaling", "add_cancel", sn, opt.m);
			run_workload("scaling", "rearm", sn, opt.m);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--memory-child"))
		return memory_child(argv[2], argv[3]);
	parse_args(argc, argv);
	for (size_t i = 0; i < NIMPLS; i++) {
		/* the heaps against a model (the wheels' next_expiry is a bound, not exact) */
		if (!strncmp(impls[i]->name, "heap", 4) && ops_selftest(impls[i])) {
			fprintf(stderr, "FAIL self-check: %s disagrees with the model\n", impls[i]->name);
			return 1;
		}
	}
	fprintf(stderr, "bench: N=%u M=%u reps=%u (libtwheel %s)\n", opt.n, opt.m, opt.reps,
		twheel_version());
	run_all();
	report_stats();
	print_report();
	if (opt.csv)
		report_csv(opt.csv, &bench_ratios);
	if (report_failures())
		fprintf(stderr, "bench: %d check(s) failed\n", report_failures());
	return report_failures() ? 1 : 0;
}
