/* SPDX-License-Identifier: MIT */
/*
 * lateness_plot.c - the demo's lateness plot (see lateness_plot.h): the
 * csv, the gnuplot script, and gnuplot run on it.
 *
 * The x axis runs from 0 (or, when a value is below 0, a little below the
 * lowest: an early close must be seen) to past the first curve's 99th
 * percentile and its largest value; and to past the tolerance where that
 * is at most 4 times further (else the curves would be squeezed against
 * the axis: the tolerance is then said in the key, not drawn).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lateness_plot.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* @s as a gnuplot double-quoted string ("\n" stays a line break). */
static void gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || (*s == '\\' && s[1] != 'n'))
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The x range, in ms: [*lo, *hi]. */
static void x_range(const struct lateness_plot *p, double *lo, double *hi)
{
	int64_t min = 0;
	for (unsigned c = 0; c < p->ncurves; c++)
		for (size_t i = 0; i < p->n; i++)
			if (p->curve[c].ns[i] < min)
				min = p->curve[c].ns[i];
	*lo = min < 0 ? (double)min / 1e6 - 1 : 0;
	double p99 = 0;
	int64_t *v = p->n ? malloc(sizeof(*v) * p->n) : NULL;
	if (v) {
		memcpy(v, p->curve[0].ns, sizeof(*v) * p->n);
		qsort(v, p->n, sizeof(*v), cmp_i64);
		p99 = (double)v[(p->n * 99 + 99) / 100 - 1] / 1e6;
		free(v);
	}
	double max = 0;
	for (size_t i = 0; i < p->n; i++)
		if ((double)p->curve[0].ns[i] / 1e6 > max)
			max = (double)p->curve[0].ns[i] / 1e6;
	*hi = p99 * 1.5 > max * 1.1 ? p99 * 1.5 : max * 1.1;
	if (*hi < 1)
		*hi = 1;
	if ((double)p->tolerance_ms * 1.5 > *hi && (double)p->tolerance_ms <= 4 * *hi)
		*hi = (double)p->tolerance_ms * 1.5;
}

static int write_csv(const struct lateness_plot *p, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "# %s: lateness in ms, one row per close\n# ", p->what);
	for (unsigned c = 0; c < p->ncurves; c++)
		fprintf(f, "%s%s", c ? "," : "", p->curve[c].title);
	fputc('\n', f);
	for (size_t i = 0; i < p->n; i++)
		for (unsigned c = 0; c < p->ncurves; c++)
			fprintf(f, "%.3f%c", (double)p->curve[c].ns[i] / 1e6, c + 1 < p->ncurves ? ',' : '\n');
	return fclose(f) == 0 ? 0 : -errno;
}

static int write_gp(const struct lateness_plot *p, const char *path, const char *csv, const char *png)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	double lo, hi;
	x_range(p, &lo, &hi);
	fprintf(f, "set terminal pngcairo noenhanced size 900,560 font 'DejaVu Sans,11'\nset output '%s'\n"
		   "set datafile separator ','\nset title ", png);
	char title[1024];
	snprintf(title, sizeof(title), "%s\\n%s\\n%s", p->what, p->how, p->verdict);
	gp_str(f, title);
	fprintf(f, "\nset xlabel ");
	gp_str(f, p->xlabel);
	fprintf(f, "\nset ylabel 'share of the closes'\n"
		   "set xrange [%.1f:%.1f]\nset yrange [0:1.02]\nset grid\nset key below\n", lo, hi);
	if ((double)p->tolerance_ms <= hi)
		fprintf(f, "set arrow from %" PRIu64 ", graph 0 to %" PRIu64 ", graph 1 nohead dt 2 lc rgb '#c00000'\n"
			   "set label 'tolerance %" PRIu64 " ms: later is \"late\"' at %" PRIu64 ", graph 0.1 "
			   "offset 0.5,0 tc rgb '#c00000'\n",
			p->tolerance_ms, p->tolerance_ms, p->tolerance_ms, p->tolerance_ms);
	else
		fprintf(f, "set key title 'tolerance %" PRIu64 " ms, beyond this axis: later is \"late\"'\n",
			p->tolerance_ms);
	if (lo < 0) /* below zero: an early close, which failed the run */
		fprintf(f, "set arrow from 0, graph 0 to 0, graph 1 nohead lw 2 lc rgb '#c00000'\n");
	for (unsigned c = 0; c < p->ncurves; c++) {
		fprintf(f, "%s'%s' using %u:(1) smooth cnormal lw 2%s title ", c ? ", \\\n     " : "plot ",
			c ? "" : csv, c + 1, c ? " dt 3" : "");
		gp_str(f, p->curve[c].title);
	}
	fputc('\n', f);
	return fclose(f) == 0 ? 0 : -errno;
}

/* gnuplot @gp: 0, -ENOENT (no gnuplot), -EIO (it failed). */
static int run_gnuplot(const char *gp)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		execlp("gnuplot", "gnuplot", gp, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -errno;
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 127 ? -ENOENT : -EIO;
}

int lateness_plot_write(const struct lateness_plot *p, char *said, size_t len)
{
	char csv[4200], gp[4200], png[4200];
	snprintf(csv, sizeof(csv), "%s.csv", p->prefix);
	snprintf(gp, sizeof(gp), "%s.gp", p->prefix);
	snprintf(png, sizeof(png), "%s.png", p->prefix);
	int ret = write_csv(p, csv);
	const char *failed = csv;
	if (ret == 0) {
		ret = write_gp(p, gp, csv, png);
		failed = gp;
	}
	if (ret < 0) {
		snprintf(said, len, "%s: %s", failed, strerror(-ret));
		return ret;
	}
	if (!p->n) {
		snprintf(said, len, "nothing was closed: nothing to draw");
		return -ENODATA;
	}
	ret = run_gnuplot(gp);
	if (ret == 0)
		snprintf(said, len, "%s (and .csv, .gp)", png);
	else if (ret == -ENOENT)
		snprintf(said, len, "%s (no gnuplot here: \"gnuplot %s\" draws it)", csv, gp);
	else
		snprintf(said, len, "%s (gnuplot failed on %s)", csv, gp);
	return ret;
}
