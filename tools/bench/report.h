/* SPDX-License-Identifier: MIT */
/*
 * tools/bench/report.h - the results of a benchmark run, shared by both
 * drivers (bench.c, rt.c): one row per (section, workload, implementation,
 * N, unit) holding every repetition's figure, its median with min and max,
 * a note, or the failure that left it without a figure; printed as
 * Markdown tables and written as CSV.
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_MAX_REPS 64

struct row {
	char section[16]; /* "main", "memory", "scaling", "rt" */
	char workload[40];
	char impl[40];
	uint64_t n;
	char unit[24];    /* or the metric's name: "ns/op", "p99_ms" */
	double v[REPORT_MAX_REPS];
	int nv;
	bool failed;
	char note[240];
	double med, min, max; /* report_stats() */
};

/* Two ratio columns of a table: their titles and how a row's are found (0: none). */
struct report_ratios {
	const char *title[2]; /* in the Markdown table */
	const char *csv[2];   /* in the CSV header */
	void (*get)(const struct row *r, double *a, double *b);
};

/* The row of these keys, made empty if new (exits 1 past the table's room). */
struct row *row_get(const char *section, const char *workload, const char *impl, uint64_t n,
		    const char *unit);
/* The row with a figure, or NULL. */
const struct row *row_find(const char *section, const char *workload, const char *impl,
			   uint64_t n);
void row_add(struct row *r, double v);
/* The row's check failed: it prints no figure, and report_failures() counts it. */
void row_fail(struct row *r, const char *why);
__attribute__((format(printf, 2, 3))) void row_note(struct row *r, const char *fmt, ...);

/* What was not measured, and why: on stderr now, under the tables later. */
__attribute__((format(printf, 1, 2))) void report_skip(const char *fmt, ...);
int report_failures(void);

/* Median, min and max of every row. */
void report_stats(void);
/* The rows of @section as a Markdown table under "### @title"; nothing if none. */
void report_table(FILE *out, const char *section, const char *title, const struct report_ratios *x);
/* The skips, as a Markdown list. */
void report_skips(FILE *out);
/* Every row as CSV into @path; 0, or -1 (said on stderr). */
int report_csv(const char *path, const struct report_ratios *x);

extern struct row report_rows[];
extern int report_nrows;

/* A median of @n values (sorted in place). */
double report_median(double *v, int n);

#endif /* BENCH_REPORT_H */
