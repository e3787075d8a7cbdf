/* SPDX-License-Identifier: MIT */
/* tools/bench/report.c - the rows of a run, their statistics, Markdown and CSV; see report.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define MAX_ROWS 512
#define MAX_SKIPS 48

struct row report_rows[MAX_ROWS];
int report_nrows;
static int failures;
static char skips[MAX_SKIPS][320];
static int nskips;

static bool same(const struct row *r, const char *section, const char *workload, const char *impl,
		 uint64_t n)
{
	return !strcmp(r->section, section) && !strcmp(r->workload, workload) &&
	       !strcmp(r->impl, impl) && r->n == n;
}

struct row *row_get(const char *section, const char *workload, const char *impl, uint64_t n,
		    const char *unit)
{
	for (int i = 0; i < report_nrows; i++) {
		struct row *r = &report_rows[i];
		if (same(r, section, workload, impl, n) && !strcmp(r->unit, unit))
			return r;
	}
	if (report_nrows == MAX_ROWS) {
		fprintf(stderr, "bench: too many result rows\n");
		exit(1);
	}
	struct row *r = &report_rows[report_nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->section, sizeof(r->section), "%s", section);
	snprintf(r->workload, sizeof(r->workload), "%s", workload);
	snprintf(r->impl, sizeof(r->impl), "%s", impl);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->n = n;
	return r;
}

const struct row *row_find(const char *section, const char *workload, const char *impl, uint64_t n)
{
	for (int i = 0; i < report_nrows; i++) {
		const struct row *r = &report_rows[i];
		if (same(r, section, workload, impl, n) && !r->failed && r->nv)
			return r;
	}
	return NULL;
}

void row_add(struct row *r, double v)
{
	if (r->nv < REPORT_MAX_REPS)
		r->v[r->nv++] = v;
}

void row_fail(struct row *r, const char *why)
{
	if (!r->failed)
		fprintf(stderr, "FAIL %s/%s N=%llu: %s (no figure printed)\n", r->workload, r->impl,
			(unsigned long long)r->n, why);
	if (!r->note[0] || !r->failed)
		snprintf(r->note, sizeof(r->note), "%s", why);
	r->failed = true;
	failures++;
}

void row_note(struct row *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
}

void report_skip(const char *fmt, ...)
{
	if (nskips == MAX_SKIPS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(skips[nskips], sizeof(skips[0]), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  skip: %s\n", skips[nskips++]);
}

int report_failures(void)
{
	return failures;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double report_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void report_stats(void)
{
	for (int i = 0; i < report_nrows; i++) {
		struct row *r = &report_rows[i];
		double s[REPORT_MAX_REPS];
		if (!r->nv)
			continue;
		memcpy(s, r->v, sizeof(double) * (size_t)r->nv);
		r->med = report_median(s, r->nv);
		r->min = s[0];
		r->max = s[r->nv - 1];
	}
}

static void fmt_num(char *buf, size_t len, double v)
{
	double a = v < 0 ? -v : v;
	snprintf(buf, len, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f", v);
}

static void ratio_cells(const struct row *r, const struct report_ratios *x, char c[2][32])
{
	double v[2] = { 0, 0 };
	c[0][0] = c[1][0] = '\0';
	if (x && x->get)
		x->get(r, &v[0], &v[1]);
	if (v[0] > 0)
		snprintf(c[0], 32, "%.2fx", v[0]);
	if (v[1] > 0)
		snprintf(c[1], 32, "%.2f", v[1]);
}

static void table_row(FILE *out, const struct row *r, const struct report_ratios *x)
{
	char med[32], mn[32], mx[32], c[2][32];
	if (r->failed) {
		fprintf(out, "| %s | %s | FAILED | | | %s | %llu | |%s check failed, no figure: %s |\n",
			r->workload, r->impl, r->unit, (unsigned long long)r->n, x ? " | |" : "", r->note);
		return;
	}
	fmt_num(med, sizeof(med), r->med);
	fmt_num(mn, sizeof(mn), r->min);
	fmt_num(mx, sizeof(mx), r->max);
	ratio_cells(r, x, c);
	fprintf(out, "| %s | %s | %s | %s | %s | %s | %llu | %d |", r->workload, r->impl, med, mn, mx,
		r->unit, (unsigned long long)r->n, r->nv);
	if (x)
		fprintf(out, " %s | %s |", c[0], c[1]);
	fprintf(out, " %s |\n", r->note);
}

void report_table(FILE *out, const char *section, const char *title, const struct report_ratios *x)
{
	bool any = false;
	for (int i = 0; i < report_nrows; i++)
		any |= !strcmp(report_rows[i].section, section);
	if (!any)
		return;
	fprintf(out, "\n### %s\n\n| workload | impl | median | min | max | unit | N | reps |", title);
	if (x)
		fprintf(out, " %s | %s |", x->title[0], x->title[1]);
	fprintf(out, " notes |\n| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |%s --- |\n",
		x ? " ---: | ---: |" : "");
	for (int i = 0; i < report_nrows; i++) {
		const struct row *r = &report_rows[i];
		if (!strcmp(r->section, section) && (r->failed || r->nv))
			table_row(out, r, x);
	}
}

void report_skips(FILE *out)
{
	if (nskips)
		fprintf(out, "\n### Not measured\n\n");
	for (int i = 0; i < nskips; i++)
		fprintf(out, "- %s\n", skips[i]);
}

static void csv_row(FILE *f, const struct row *r, const struct report_ratios *x)
{
	double a = 0, b = 0;
	if (x && x->get && !r->failed && r->nv)
		x->get(r, &a, &b);
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

int report_csv(const char *path, const struct report_ratios *x)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "section,workload,impl,n,unit,median,min,max,reps,%s,%s,values,status,note\n",
		x ? x->csv[0] : "ratio_a", x ? x->csv[1] : "ratio_b");
	for (int i = 0; i < report_nrows; i++)
		csv_row(f, &report_rows[i], x);
	fclose(f);
	return 0;
}
