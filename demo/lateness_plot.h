/* SPDX-License-Identifier: MIT */
/*
 * lateness_plot.h - the demo's lateness plot, shared by both load
 * generators (idle-load, udp-load): PREFIX.csv (one row per closed
 * connection or session, one column per curve, in ms), PREFIX.gp (a
 * gnuplot script that draws each column as the share of closes by
 * lateness, the tolerance marked) and, where gnuplot is installed,
 * PREFIX.png.
 *
 * What a curve holds is the caller's to state, in its title: every value
 * must be an upper bound of the server's lateness measured from a
 * baseline no later than the server's own (so that a value below zero is
 * an early close, which fails the run). The plot's title says the
 * verdict; an INVALID run's says that it measures nothing.
 */
#ifndef DEMO_LATENESS_PLOT_H
#define DEMO_LATENESS_PLOT_H

#include <stddef.h>
#include <stdint.h>

#define LATENESS_PLOT_CURVES 2

/* One curve: @n lateness values in ns (any order), and what they are. */
struct lateness_curve {
	const char *title;
	const int64_t *ns;
};

struct lateness_plot {
	const char *prefix;   /* PREFIX of the three files */
	const char *what;     /* the title's first line, e.g. "idle-load: 5000 silent connections closed" */
	const char *how;      /* its second line: mode, timeout, connections */
	const char *verdict;  /* its third: "PASS", "FAIL", "INVALID RUN: ..." */
	const char *xlabel;   /* the lateness's baseline, e.g. "close - (connect + idle timeout)" */
	uint64_t tolerance_ms;
	size_t n;             /* values in each curve */
	unsigned ncurves;     /* 1 or 2; the first is drawn solid, the second dotted */
	struct lateness_curve curve[LATENESS_PLOT_CURVES];
};

/*
 * Write @p's csv and gnuplot script and run gnuplot (its errors to
 * /dev/null). What was made, or why not, goes to @said (one line, for
 * the summary). Returns 0 when the png was drawn, -ENOENT without
 * gnuplot, -errno when a file could not be written, -ENODATA with no
 * value to draw (the csv and script are still written), -EIO when
 * gnuplot failed. Blocks until gnuplot ends; not thread-safe (forks).
 */
int lateness_plot_write(const struct lateness_plot *p, char *said, size_t len);

#endif
