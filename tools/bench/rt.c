/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/rt.c - the driver of the real-time benchmarks (rt.h): every
 * workload asked for over every table of this executable (rt_tables[],
 * the list meson generates for it from rt_list.c.in), alternating the
 * tables repetition by repetition, then Netty's HashedWheelTimer (Netty.java,
 * compiled at run time) with --netty; Markdown on stdout (and --md), CSV
 * with --csv, in the format of bench's (report.h).
 *
 * Exit status: 0 if every check passed, 1 if one failed (that repetition
 * gives no figure), 2 on a usage error (one line on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "common.h"
#include "report.h"
#include "rt_wl.h"

extern const struct rt_ops *const rt_tables[]; /* NULL-terminated */
extern const char rt_exe[];                    /* this executable's name */

static struct {
	struct rt_params p;
	bool quick;
	const char *impls, *workloads, *csv, *md, *netty;
} opt;

/* The N a workload's rows are labelled with. */
static uint64_t wl_n(enum rt_wl w)
{
	const struct rt_params *p = &opt.p;
	uint64_t n[RT_NWL] = { p->n, p->n, p->n, p->late_n, 1, 2 * (uint64_t)p->x_n, p->ae_n };
	return n[w];
}

/* NULL if @ops can run workload @w; else why not. */
static const char *why_not(const struct rt_ops *o, enum rt_wl w, char *buf, size_t len)
{
	static const char *const needs[RT_NWL] = { "add, mod, poll and pending", "add, del, poll and pending",
		"add, run and stop", "add, run and stop", "add, run, stop and wake_stop",
		"schedule, run and stop", "add, run and stop" };
	bool loop = o->run && o->stop, ok[RT_NWL] = {
		o->add && o->mod && o->poll && o->pending, o->add && o->del && o->poll && o->pending,
		o->add && loop && rt_expire_tick(o) <= 1000, o->add && loop,
		o->add && loop && o->wake_stop, o->schedule && loop, o->add && loop,
	};
	if (o->only && !(o->only & (1u << w)))
		return "not one of the workloads this table is for";
	if (ok[w])
		return o->unable ? o->unable(&opt.p, (int)w, wl_n(w), buf, len) : NULL;
	if (o->note[w])
		return o->note[w];
	if (w == RT_ADD_EXPIRE && loop && o->add)
		snprintf(buf, len, "delays of %.0f us at the finest: the 65,536-tick span would be %.0f s "
			 "of real waiting", o->res_ns / 1e3, 65536.0 * (double)o->res_ns / 1e9);
	else
		snprintf(buf, len, "the table has no %s", needs[w]);
	return buf;
}

static void record(enum rt_wl w, const struct rt_ops *o, const struct rt_res *r)
{
	const char *wl = rt_wls[w].name;
	if (!r->ok) {
		row_fail(row_get("rt", wl, o->name, wl_n(w), "check"), r->note[0] ? r->note : "could not run");
		return;
	}
	for (int i = 0; i < r->n; i++) {
		struct row *row = row_get("rt", wl, o->name, wl_n(w), r->name[i]);
		row_add(row, r->val[i]);
		if (o->note[w] && i == 0)
			row_note(row, "%s", o->note[w]);
	}
}

/* One repetition of workload @w on @o: run it, print it, record it. */
static void run_rep(enum rt_wl w, const struct rt_ops *o, uint32_t rep)
{
	struct rt_res r = { .ok = false };
	rt_wls[w].run(o, &opt.p, &r);
	fprintf(stderr, "  %s/%s rep %u:", rt_wls[w].name, o->name, rep + 1);
	for (int m = 0; m < r.n; m++)
		fprintf(stderr, " %s=%.4g", r.name[m], r.val[m]);
	fprintf(stderr, "%s%s\n", r.ok ? "" : " FAILED ", r.ok ? "" : r.note);
	record(w, o, &r);
}

/* Every workload asked for on every table asked for, alternating the tables rep by rep. */
static void run_tables(void)
{
	char buf[200];
	for (int w = 0; w < RT_NWL; w++) {
		if (!bench_listed(opt.workloads, rt_wls[w].name))
			continue;
		for (uint32_t rep = 0; rep < opt.p.reps; rep++)
			for (size_t k = 0; rt_tables[k]; k++) {
				const struct rt_ops *o = rt_tables[k];
				const char *why = why_not(o, (enum rt_wl)w, buf, sizeof(buf));
				if (!bench_listed(opt.impls, o->name) && strcmp(opt.impls, "all"))
					continue;
				if (!why)
					run_rep((enum rt_wl)w, o, rep);
				else if (rep == 0)
					report_skip("%s on %s: %s", rt_wls[w].name, o->name, why);
			}
	}
}

/* ---- Netty: the Java drivers, compiled at run time -------------------------- */

/*
 * Their lines: RESULT <workload> <impl> <n> <unit> <v1> <v2> ... (one value
 * per rep), FAIL <workload> <impl> <reason>, SKIP <reason>, NOTE <workload>
 * <impl> <text>; anything else goes to stderr.
 */
static void parse_java(FILE *f)
{
	char line[4096], wl[64], im[64], unit[32];
	unsigned long long n;
	int off = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "RESULT %63s %63s %llu %31s%n", wl, im, &n, unit, &off) == 4) {
			struct row *r = row_get("rt", wl, im, n, unit);
			char *p = line + off, *end;
			for (double v = strtod(p, &end); end != p; v = strtod(p, &end))
				row_add(r, v), p = end;
		} else if (sscanf(line, "FAIL %63s %63s %n", wl, im, &off) == 2) {
			row_fail(row_get("rt", wl, im, 0, "check"), line + off);
		} else if (sscanf(line, "NOTE %63s %63s %n", wl, im, &off) == 2) {
			for (int i = 0; i < report_nrows; i++)
				if (!strcmp(report_rows[i].workload, wl) && !strcmp(report_rows[i].impl, im))
					row_note(&report_rows[i], "%s", line + off);
		} else if (!strncmp(line, "SKIP ", 5)) {
			report_skip("%s", line + 5);
		} else if (line[0]) {
			fprintf(stderr, "  netty: %s\n", line);
		}
	}
}

static void run_java(const char *cmd)
{
	fprintf(stderr, "  %s\n", cmd);
	FILE *f = popen(cmd, "r");
	if (!f) {
		report_skip("netty: popen failed");
		return;
	}
	parse_java(f);
	if (pclose(f) != 0)
		row_fail(row_get("rt", "java", "netty", 0, "check"), "the Java driver failed");
}

/* The workloads of @first..@last asked for, comma-separated into @buf ("none" if none). */
static const char *wl_list(int first, int last, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int w = first; w <= last; w++)
		if (bench_listed(opt.workloads, rt_wls[w].name))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "," : "", rt_wls[w].name);
	return buf[0] ? buf : "none";
}

/*
 * Compile --netty's Netty.java into a temporary directory and run it twice,
 * with the JVM flags of each kind of workload: the throughput ones (a
 * large heap, the parallel collector) and the loop ones.
 */
static void run_netty(const struct rt_params *p)
{
	const char *jar = "/usr/share/java/netty-common.jar";
	char dir[] = "/tmp/twheel-netty-XXXXXX", cmd[4096], wls[128], args[256];
	if (system("command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1") ||
	    access(jar, R_OK) || !mkdtemp(dir)) {
		report_skip("netty: needs java, javac (default-jdk-headless) and %s (libnetty-java)", jar);
		return;
	}
	snprintf(cmd, sizeof(cmd), "javac -nowarn -cp %s -d %s '%s'/Netty.java >&2", jar, dir, opt.netty);
	snprintf(args, sizeof(args), "%u %u %u %u %u %g %u %u %u %u %u %llu", p->reps, p->n, p->m,
		 p->late_n, p->late_span_ms, p->idle_ms / 1e3, p->idle_far_s, p->x_n, p->x_span_ms, p->ae_n,
		 p->ae_span_ms, (unsigned long long)p->tick_ns);
	if (system(cmd)) {
		report_skip("netty: javac failed: %s", cmd);
	} else {
		snprintf(cmd, sizeof(cmd), "java -Xms4g -Xmx8g -XX:+UseParallelGC -cp %s:%s Netty %s %s", dir,
			 jar, wl_list(RT_REARM, RT_ADD_EXPIRE, wls, sizeof(wls)), args);
		run_java(cmd);
		snprintf(cmd, sizeof(cmd), "java -Xms2g -Xmx8g -Dio.netty.leakDetection.level=disabled -cp %s:%s "
			 "Netty %s %s", dir, jar, wl_list(RT_LATENESS, RT_EXPIRE_CPU, wls, sizeof(wls)), args);
		run_java(cmd);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- main ---------------------------------------------------------------- */

/* The header: the parameters of each workload and the tables. */
static void print_params(FILE *out)
{
	const struct rt_params *p = &opt.p;
	fprintf(out, "## %s: real-time workloads (docs/bench.md)\n\n", rt_exe);
	fprintf(out, "- reps %u, seed 42; tables:", p->reps);
	for (size_t k = 0; rt_tables[k]; k++)
		fprintf(out, " %s", rt_tables[k]->name);
	fprintf(out, "\n- rearm: N=%u live timers at +30 s, M=%u re-arms, the loop polled every 1,000; "
		     "add_cancel: N timers at +[1, 65,536] ms; add_expire: N timers at +[1, 65,536] "
		     "ticks of 100 ns (or the table's resolution up to 1 us)\n", p->n, p->m);
	fprintf(out, "- lateness: N=%u, deadlines uniform in [1, %u] ms after each add (integer ms, "
		     "added in descending order); idle_wakeups: one timer at +%u s, window %u ms\n",
		p->late_n, p->late_span_ms, p->idle_far_s, p->idle_ms);
	fprintf(out, "- xthread: 2 producers x N=%u timers, delays in [1, %u] ms; expire_cpu: N=%u "
		     "timers, delays in [1, %u] ms, one thread; loop tick %.3f ms (twheel, netty)\n",
		p->x_n, p->x_span_ms, p->ae_n, p->ae_span_ms, (double)p->tick_ns / 1e6);
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [--reps R] [--quick] [--impl LIST] [--workload LIST] [--n N] [--m M]\n"
		   "          [--tick-ns NS] [--csv FILE] [--md FILE] [--netty DIR]\n"
		   "  --workload L  comma-separated: rearm,add_cancel,add_expire,lateness,idle_wakeups,\n"
		   "                xthread,expire_cpu (default all)\n"
		   "  --impl L      tables of this executable (default all):", prog);
	for (size_t k = 0; rt_tables[k]; k++)
		fprintf(f, " %s", rt_tables[k]->name);
	fprintf(f, "\n  --quick       scaled-down sizes, short windows (a smoke run)\n"
		   "  --netty DIR   also run Netty's HashedWheelTimer (DIR/Netty.java)\n");
}

static void parse_args(int argc, char **argv)
{
	struct rt_params *p = &opt.p;
	const struct args_opt opts[] = {
		ARGS_NUM("reps", &p->reps, 1, REPORT_MAX_REPS), ARGS_FLAG("quick", &opt.quick),
		ARGS_STR("impl", &opt.impls), ARGS_STR("workload", &opt.workloads),
		ARGS_NUM("n", &p->n, 1, 100000000), ARGS_NUM("m", &p->m, BENCH_REARM_BLOCK, 4000000000u),
		ARGS_NUM("tick-ns", &p->tick_ns, 1000, 1000000000), ARGS_STR("csv", &opt.csv),
		ARGS_STR("md", &opt.md), ARGS_STR("netty", &opt.netty), ARGS_END,
	};
	const char *names[RT_NWL + 1] = { NULL }, *known[64] = { "netty", NULL }, *bad;
	*p = (struct rt_params){ 0, 0, 100000, 2000, 5000, 10, 1000000, 1000, 1000000, 1000, NS_PER_MS, 0 };
	opt.impls = opt.workloads = "all";
	args_parse(rt_exe, argc, argv, opts, usage);
	if (opt.quick) /* n, m, reps and tick_ns stay as given */
		*p = (struct rt_params){ p->n, p->m, 2000, 200, 300, 10, 20000, 50, 20000, 50, p->tick_ns, p->reps };
	p->n = p->n ? p->n : opt.quick ? 20000 : BENCH_N;
	p->m = p->m ? p->m : opt.quick ? 200000 : BENCH_M;
	p->reps = p->reps ? p->reps : 5;
	for (int w = 0; w < RT_NWL; w++)
		names[w] = rt_wls[w].name;
	for (size_t k = 0; rt_tables[k] && k < 62; k++)
		known[k + 1] = rt_tables[k]->name;
	if (!strcmp(opt.workloads, "all"))
		opt.workloads = "rearm,add_cancel,add_expire,lateness,idle_wakeups,xthread,expire_cpu";
	if ((bad = bench_unknown(opt.workloads, names, "")))
		args_fail(rt_exe, "--workload: no workload '%s' (%s --help lists them)", bad, rt_exe);
	if ((bad = bench_unknown(opt.impls, known, "all")))
		args_fail(rt_exe, "--impl: no table '%s' in %s (--help lists them)", bad, rt_exe);
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	print_params(stdout);
	fflush(stdout);
	run_tables();
	if (opt.netty)
		run_netty(&opt.p);
	report_stats();
	FILE *md = opt.md ? fopen(opt.md, "w") : NULL;
	for (FILE *out = stdout; out; out = out == stdout ? md : NULL) {
		if (out == md)
			print_params(md);
		report_table(out, "rt", "Real-time workloads (median, min, max over the reps)", NULL);
		report_skips(out);
	}
	if (md)
		fclose(md);
	if (opt.csv)
		report_csv(opt.csv, NULL);
	return report_failures() ? 1 : 0;
}
