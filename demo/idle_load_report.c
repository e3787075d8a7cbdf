/* SPDX-License-Identifier: MIT */
/*
 * idle_load_report.c - what idle-load prints at the end, from struct
 * report (idle_load.h) alone: the summary (lines under 100 characters,
 * figures first, then what the verdict is made of), the RESULT line (the
 * same for scripts, key=value) and, with --plot, the lateness plot
 * (lateness_plot.c: csv, gnuplot script, png; its title says the verdict).
 *
 * Every lateness printed or drawn has one baseline, and none is below zero
 * unless the close was seen before the deadline, a close the server really
 * made early (and the referee then judged it early: the run FAILs):
 *
 *   baseline  connect submitted + idle timeout. The connect is stamped
 *             before it goes to the kernel; the server arms its timer when
 *             it accepts, later: its deadline is no earlier than ours.
 *   seen      when idle-load reaped the close: it takes the completions,
 *             then reads the clock, so every close it handles happened
 *             before that reading. Resolution: the clock's (ns); our own
 *             reaping lag is in it (the generator lag line says how much).
 *   FIN       when our kernel took in the server's FIN: TCP_INFO's
 *             tcpi_last_ack_recv, the ms since then counted in kernel ticks
 *             (jiffies, 4 ms at HZ 250). Subtracted from a clock reading
 *             taken after getsockopt() returned, never from an earlier one
 *             (the loop's reading for its batch of completions, which can
 *             be tens of ms older on a busy machine: that made FIN values
 *             6 to 26 ms early in passing runs), plus two ticks (one for the
 *             count rounding down, one for a tick late to stamp the FIN),
 *             plus 1 ms where the tick is not whole ms, it is no earlier
 *             than the FIN came in if the kernel's tick came at most one
 *             tick late. It can come later: on a loaded 2-vCPU VM,
 *             CLOCK_MONOTONIC_COARSE (updated with jiffies) was measured
 *             up to 49.6 ms (12 ticks at HZ 250) behind CLOCK_MONOTONIC
 *             beside stress-ng --cpu 2 --vm 2 (13.7 ms without it);
 *             Linux lets jiffies stall up to 5 ticks before a CPU other
 *             than the timekeeper takes over (MAX_STALLED_JIFFIES), and a
 *             host may hold a virtual CPU longer. Then the FIN's stamp is
 *             before its arrival, and a passing server's close was judged
 *             1.5 ms early on it. So it is an estimate, not a bound.
 *             Resolution: that margin (8 ms at HZ 250; the tick is
 *             CLOCK_MONOTONIC_COARSE's resolution).
 *   judged    seen, or the FIN where that is earlier, but not before the
 *             deadline unless seen is: the FIN keeps our reaping lag out
 *             (seen is the closer one unless we reaped more than the FIN's
 *             margin late) and never makes a close early; an early close is
 *             one seen early. A FIN stamped before the deadline of a close
 *             seen after it is counted apart: a late tick, or an early close
 *             we reaped late, which we cannot tell apart.
 *
 * The summary's "lateness ms" and the plot's solid curve are the judged
 * values of every silent connection the server closed (early ones
 * included); its dotted curve is seen.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "idle_load.h"
#include "lateness_plot.h"

double pct_ms(const int64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t k = (size_t)(p * (double)n + 0.999999); /* nearest rank */
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e6;
}

/* The protocol spoken, for the summary and the plot. */
const char *mode_name(void)
{
	return o.heartbeat ? "heartbeat" : o.http ? "http" : "echo";
}

/* The verdict in a few words, for the plot's title. */
static void verdict_words(const struct report *r, char *buf, size_t len)
{
	if (r->invalid)
		snprintf(buf, len, "INVALID RUN: idle-load fell behind (lag max %.1f ms, stalls max %.1f ms, "
			 "starved %" PRIu64 "): this says nothing of the server", r->sum.lag.max_us / 1e3,
			 r->sum.stall.max_us / 1e3, r->count[K_CHATTY][O_STARVED]);
	else
		snprintf(buf, len, "%s: early %" PRIu64 ", late %" PRIu64 " (over %" PRIu64 " ms), never %" PRIu64,
			 r->pass ? "PASS" : "FAIL", r->count[K_SILENT][O_EARLY], r->count[K_SILENT][O_LATE],
			 o.tolerance_ms, r->count[K_SILENT][O_NEVER]);
}

/*
 * --plot PREFIX: each silent connection the server closed, its lateness
 * as judged and as seen (this file's head), drawn as the share of closes
 * by lateness; r->plot says what was made.
 */
void write_plot(struct report *r, const struct result *res)
{
	size_t n = 0, cap = r->nlate ? r->nlate : 1;
	int64_t *judged = malloc(sizeof(int64_t) * cap), *seen = malloc(sizeof(int64_t) * cap);
	if (!judged || !seen) {
		snprintf(r->plot, sizeof(r->plot), "out of memory for the plot");
		free(judged);
		free(seen);
		return;
	}
	int64_t idle = (int64_t)ms_ns(o.idle_ms);
	for (uint32_t i = 0; i < r->total && n < cap; i++) {
		if (!referee_closed_silent(&res[i]))
			continue;
		judged[n] = referee_lateness(&res[i]);
		seen[n++] = (int64_t)(res[i].t_close - res[i].t_submit) - idle;
	}
	char what[200], how[200], verdict[200], fin[120];
	snprintf(what, sizeof(what), "idle-load: when the server closed %zu silent connections", n);
	snprintf(how, sizeof(how), "%s mode, idle timeout %" PRIu64 " ms, %u connections in all", mode_name(),
		 o.idle_ms, r->total);
	verdict_words(r, verdict, sizeof(verdict));
	snprintf(fin, sizeof(fin), "judged: the earlier of close seen and FIN stamp + %.0f ms (not below 0)",
		 r->sum.fin_margin_ns / 1e6);
	struct lateness_plot p = {
		.prefix = o.plot, .what = what, .how = how, .verdict = verdict,
		.xlabel = "lateness, ms: close - (connect submitted + idle timeout); below 0: closed early",
		.tolerance_ms = o.tolerance_ms, .n = n, .ncurves = 2,
		.curve = { { fin, judged }, { "close seen by idle-load", seen } },
	};
	lateness_plot_write(&p, r->plot, sizeof(r->plot));
	free(judged);
	free(seen);
}

/* "p50 A  p99 B  max C" of sorted ns values, in ms. */
static const char *pcts(char *buf, size_t len, const int64_t *v, size_t n)
{
	snprintf(buf, len, "p50 %.2f  p99 %.2f  max %.2f", pct_ms(v, n, 0.50), pct_ms(v, n, 0.99),
		 n ? (double)v[n - 1] / 1e6 : 0.0);
	return buf;
}

/* The summary's first lines: the run, and what became of each kind of connection. */
static void print_counts(const struct report *r)
{
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	printf("\nidle_conns summary: %s mode, idle timeout %" PRIu64 " ms, tolerance %" PRIu64
	       " ms, grace %" PRIu64 " ms\n", mode_name(), o.idle_ms, o.tolerance_ms, o.grace_ms);
	char rate[40];
	if (o.rate)
		snprintf(rate, sizeof(rate), "at most %u/s (--rate)", o.rate);
	else
		snprintf(rate, sizeof(rate), "no --rate");
	printf("  connections    %u opened in %.2f s, %s, by %u process%s, %" PRIu64 " failed%s%s\n", r->total,
	       r->open_s, rate, r->nprocs, r->nprocs == 1 ? "" : "es", r->connect_fail, r->err_connect ? ": " : "",
	       r->err_connect ? strerror(r->err_connect) : "");
	printf("  silent         %u: on time %" PRIu64 ", late %" PRIu64 ", early %" PRIu64 ", never %" PRIu64
	       ", sent data %" PRIu64 "\n", r->nsilent, s[O_ON_TIME], s[O_LATE], s[O_EARLY], s[O_NEVER], s[O_WRONG]);
	printf("  chatty         %u: kept open %" PRIu64 ", closed %" PRIu64 ", bad replies %" PRIu64
	       ", unanswered %" PRIu64 "\n", o.conns - r->nsilent, c[O_KEPT] + c[O_UNANSWERED], c[O_WRONG], c[O_ECHO],
	       c[O_UNANSWERED]);
	printf("                 %" PRIu64 " pings (%" PRIu64 " skipped), %" PRIu64 " reply bytes checked\n",
	       r->sum.pings, r->sum.pings_skipped, r->sum.bytes_echoed);
	if (o.abrupt) {
		const uint64_t (*k)[O__N] = r->count;
		printf("  abrupt         %u: played out %" PRIu64 ", misbehaved %" PRIu64 "\n", o.abrupt, r->abrupt_ok,
		       r->abrupt_fail);
		printf("                 reset %" PRIu64 ", half-close %" PRIu64 " of %" PRIu64 " answered, vanish %" PRIu64
		       ", flood %" PRIu64 "\n", k[K_RESET][O_ABRUPT_OK], k[K_HALF][O_ABRUPT_OK],
		       k[K_HALF][O_ABRUPT_OK] + k[K_HALF][O_ABRUPT_FAIL] + k[K_HALF][O_ECHO], k[K_VANISH][O_ABRUPT_OK],
		       k[K_FLOOD][O_ABRUPT_OK]);
	}
	if (c[O_STARVED])
		printf("  starved        %" PRIu64 " chatty ones closed after idle-load left them silent a whole\n"
		       "                 timeout (it fell behind: machine overloaded?)\n", c[O_STARVED]);
}

/* The summary's timing lines: lateness, connects, the server's own figures, our lag. */
static void print_timing(const struct report *r)
{
	const uint64_t *t = r->sv.tm;
	char b[100];
	if (r->nlate) {
		printf("  lateness ms    %s  min %.2f\n", pcts(b, sizeof(b), r->late, r->nlate),
		       (double)r->late[0] / 1e6);
		printf("                 (close - (connect submitted + timeout), %zu closes; the close seen,\n"
		       "                 or its FIN if earlier but not below 0: below 0 only if seen early)\n",
		       r->nlate);
		printf("  close seen     %s  min %.2f  (when idle-load reaped it)\n",
		       pcts(b, sizeof(b), r->seen, r->nlate), (double)r->seen[0] / 1e6);
		printf("  FIN stamp      %zu of %zu, by our kernel, to %.1f ms (2 of its ticks); %zu judged on it\n",
		       r->nfin, r->nlate, r->sum.fin_margin_ns / 1e6, r->nfin_judged);
		if (r->nfin_early)
			printf("                 %zu stamped before the deadline, seen after it: the kernel's tick\n"
			       "                 late, or closed early and reaped late; not judged early\n",
			       r->nfin_early);
	}
	if (r->nsetup)
		printf("  connect ms     %s  (submitted -> established; in the lateness)\n",
		       pcts(b, sizeof(b), r->setup, r->nsetup));
	if (o.stats && r->sv.timing) {
		printf("  server's part  timer fired p50 %.2f  p99 %.2f  max %.2f ms after its deadline\n",
		       t[ST_FIRE_P50] / 1e3, t[ST_FIRE_P99] / 1e3, t[ST_FIRE_MAX] / 1e3);
		printf("                 FIN sent p99 %.2f  max %.2f, accept queue p99 %.2f  max %.2f ms\n",
		       t[ST_FIN_P99] / 1e3, t[ST_FIN_MAX] / 1e3, t[ST_ACC_P99] / 1e3, t[ST_ACC_MAX] / 1e3);
		printf("                 (%" PRIu64 " idle timers, the worst of %u worker%s for each figure)\n",
		       t[ST_FIRE_N], r->sv.workers, r->sv.workers == 1 ? "" : "s");
	}
	if (r->sum.lag.n)
		printf("  generator lag  p50 %.2f  p99 %.2f  max %.2f  (ms: our own timers, handled - due)\n",
		       demo_hist_pct(&r->sum.lag, 0.5) / 1e3, demo_hist_pct(&r->sum.lag, 0.99) / 1e3,
		       r->sum.lag.max_us / 1e3);
	if (r->sum.stall.n)
		printf("  our stalls     p50 %.2f  p99 %.2f  max %.2f ms, at %.1f s  (our loop away from its ring)\n",
		       demo_hist_pct(&r->sum.stall, 0.5) / 1e3, demo_hist_pct(&r->sum.stall, 0.99) / 1e3,
		       r->sum.stall.max_us / 1e3, (double)r->sum.stall_worst_at / 1e9);
}

/* The load the run was measured under (the machine's, from /proc). */
static struct demo_load machine_load(const struct report *r)
{
	double ours = r->gen_cpu + (r->cpu_user >= 0 ? r->cpu_user + r->cpu_sys : 0);
	return demo_machine_load(&r->m_start, &r->m_end, ours);
}

/* The summary's last figures: the server's counters, CPU time, the load, the plot. */
static void print_resources(const struct report *r)
{
	if (o.stats && r->sv.workers)
		printf("  server         %u worker%s: %" PRIu64 " accepted, %" PRIu64 " idle-closed, %" PRIu64 " EMFILE\n",
		       r->sv.workers, r->sv.workers == 1 ? "" : "s", r->sv.accepted, r->sv.idle_closed, r->sv.emfile);
	else if (o.stats)
		printf("  server         did not answer STATS\n");
	if (r->cpu_user >= 0)
		printf("  CPU            server %.2f s (user %.2f, sys %.2f), idle-load %.2f s; %.2f s wall\n",
		       r->cpu_user + r->cpu_sys, r->cpu_user, r->cpu_sys, r->gen_cpu, r->wall_s);
	else
		printf("  CPU            server unknown, idle-load %.2f s; %.2f s wall\n", r->gen_cpu, r->wall_s);
	struct demo_load l = machine_load(r);
	demo_load_print(&l, "the server and idle-load");
	if (o.plot)
		printf("  plot           %s\n", r->plot);
}

/* The RESULT line: the summary's figures for scripts, key=value. */
static void print_result_line(const struct report *r)
{
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY], *t = r->sv.tm;
	struct demo_load l = machine_load(r);
	printf("RESULT conns=%u silent=%u on_time=%" PRIu64 " late=%" PRIu64 " early=%" PRIu64 " never=%" PRIu64
	       " wrong=%" PRIu64 " starved=%" PRIu64 " chatty_kept=%" PRIu64 " abrupt_ok=%" PRIu64 " abrupt_fail=%" PRIu64
	       " connect_fail=%" PRIu64 " server_conns=%" PRIu64 " server_timers=%" PRIu64
	       " server_clean=%d late_min_us=%.0f late_p50_us=%.0f late_p99_us=%.0f late_max_us=%.0f"
	       " seen_min_us=%.0f seen_p50_us=%.0f seen_p99_us=%.0f seen_max_us=%.0f fin_stamped=%zu fin_judged=%zu fin_early=%zu"
	       " fin_margin_us=%" PRIu64 " server_fire_p99_us=%" PRIu64 " server_fire_max_us=%" PRIu64
	       " server_cpu_s=%.3f lag_max_us=%" PRIu64 " stall_max_us=%" PRIu64 " rate=%u open_s=%.3f held_max=%" PRIu64 " connect_unlinked=%" PRIu64 " wall_s=%.3f start_overlap_us=%" PRIu64 " end_overlap_us=%" PRIu64
	       " load_busy_pct=%.0f load_others_cpus=%.2f load_steal_pct=%.1f load_wait_pct=%.0f invalid=%d pass=%d\n",
	       r->total, r->nsilent, s[O_ON_TIME], s[O_LATE], s[O_EARLY], s[O_NEVER], r->wrong, c[O_STARVED], c[O_KEPT],
	       r->abrupt_ok, r->abrupt_fail, r->connect_fail, r->sv.conns, r->sv.timers, r->server_clean ? 1 : 0,
	       r->nlate ? (double)r->late[0] / 1e3 : 0.0, pct_ms(r->late, r->nlate, 0.50) * 1e3,
	       pct_ms(r->late, r->nlate, 0.99) * 1e3, r->nlate ? (double)r->late[r->nlate - 1] / 1e3 : 0.0,
	       r->nlate ? (double)r->seen[0] / 1e3 : 0.0, pct_ms(r->seen, r->nlate, 0.50) * 1e3,
	       pct_ms(r->seen, r->nlate, 0.99) * 1e3, r->nlate ? (double)r->seen[r->nlate - 1] / 1e3 : 0.0,
	       r->nfin, r->nfin_judged, r->nfin_early, r->sum.fin_margin_ns / 1000, t[ST_FIRE_P99], t[ST_FIRE_MAX],
	       r->cpu_user >= 0 ? r->cpu_user + r->cpu_sys : -1.0, r->sum.lag.max_us, r->sum.stall.max_us, o.rate,
	       r->open_s, r->held_max, r->sum.unlinked, r->wall_s, r->start_overlap_us, r->end_overlap_us, l.busy_pct, l.others_cpus, l.steal_pct,
	       l.wait_pct, r->invalid ? 1 : 0, r->pass ? 1 : 0);
}

/*
 * Why the generator fell behind (judge_run()'s terms), a line for each
 * cause, each with its own figure: its timers' lag or its stalls beyond
 * the lateness it judges by, or chatty connections it starved (a run may
 * be invalid for those alone, its lag within that bound: at a 500 ms
 * timeout judged to 800 ms, a lag of 567 ms starves pings).
 */
static void print_behind(const struct report *r)
{
	uint64_t bound = r->lag_bound_ms * 1000u, starved = r->count[K_CHATTY][O_STARVED];
	if (r->sum.lag.max_us > bound)
		printf("  its timers ran up to %.1f ms late, beyond the %" PRIu64 " ms it judges lateness by\n",
		       r->sum.lag.max_us / 1e3, r->lag_bound_ms);
	if (r->sum.stall.max_us > bound)
		printf("  its loop was away from its ring up to %.1f ms, beyond the %" PRIu64 " ms it judges\n"
		       "  lateness by\n", r->sum.stall.max_us / 1e3, r->lag_bound_ms);
	if (starved)
		printf("  it left %" PRIu64 " chatty connection%s silent a whole %" PRIu64 " ms timeout (starved)\n",
		       starved, starved == 1 ? "" : "s", o.idle_ms);
}

/* What the verdict is made of: exactly the terms of r->pass, then what "late" means. */
static void print_verdict(const struct report *r)
{
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	char b[100];
	bool zero = s[O_EARLY] == 0 && s[O_NEVER] == 0 && r->wrong == 0 && r->connect_fail == 0 &&
		    r->server_clean && !r->pending && !r->fail_procs && !c[O_STARVED];
	if (r->invalid)
		printf("Each of these must be 0%s; but idle-load fell behind (below):\n", zero ? ", and is" : "");
	else
		printf("%s: each of these must be 0%s\n", r->pass ? "PASS" : "FAIL", zero ? ", and is" : "");
	printf("  early %-8" PRIu64 " silent, closed before the idle timeout\n", s[O_EARLY]);
	printf("  never %-8" PRIu64 " silent, still open %" PRIu64 " ms (--grace-ms) past the timeout\n", s[O_NEVER],
	       o.grace_ms);
	printf("  wrong %-8" PRIu64 " a chatty one closed or unanswered, a reply that differs, data on a silent one\n",
	       r->wrong);
	printf("  failed %-7" PRIu64 " connects that failed\n", r->connect_fail);
	if (o.stats && r->sv.uncounted) {
		printf("  left ?         %u of %u workers' STATS lines gave no whole conns= and timers=\n",
		       r->sv.uncounted, r->sv.workers);
	} else if (o.stats && r->sv.workers && r->sv.heard < r->sv.workers) {
		printf("  left ?         %u of %u workers did not answer STATS\n", r->sv.workers - r->sv.heard,
		       r->sv.workers);
	} else if (o.stats && r->sv.workers) {
		snprintf(b, sizeof(b), "%" PRIu64 "/%" PRIu64, r->sv.conns, r->sv.timers);
		printf("  left %-9s connections/timers the server still held at the end\n", b);
	} else if (o.stats) {
		printf("  left ?         the server did not answer STATS\n");
	}
	if (c[O_STARVED])
		printf("  starved %-6" PRIu64 " chatty ones idle-load itself left silent (an invalid run)\n", c[O_STARVED]);
	if (r->pending || r->fail_procs)
		printf("  undecided %-4" PRIu64 " connections never judged (%d generator process%s failed)\n", r->pending,
		       r->fail_procs, r->fail_procs == 1 ? "" : "es");
	printf("late: %" PRIu64 " of %u closed more than %" PRIu64 " ms (--tolerance-ms) after the idle timeout,\n"
	       "  judged as the lateness above; counted, not a failure\n", s[O_LATE], r->nsilent, o.tolerance_ms);
	if (r->invalid) {
		printf("INVALID RUN: idle-load fell behind (lag max %.1f ms, stalls max %.1f ms, starved %" PRIu64
		       "):\n", r->sum.lag.max_us / 1e3, r->sum.stall.max_us / 1e3, c[O_STARVED]);
		print_behind(r);
		printf("  this run says nothing of the server\nINVALID\n");
		return;
	}
	if (r->fell_behind)
		printf("idle-load fell behind (lag max %.1f ms, stalls max %.1f ms, starved %" PRIu64 "), but %" PRIu64
		       "\n  closes or replies were wrong whatever its lag (a close seen before its deadline\n"
		       "  was early: a lag only makes it seen later)\n",
		       r->sum.lag.max_us / 1e3, r->sum.stall.max_us / 1e3, c[O_STARVED], r->certain);
	printf("%s\n", r->pass ? "PASS" : "FAIL");
}

/*
 * The summary: lines under 100 characters, figures first, then what PASS
 * judged and what "late" means; the RESULT line holds the same for scripts.
 */
void print_summary(const struct report *r)
{
	print_counts(r);
	print_timing(r);
	print_resources(r);
	print_result_line(r);
	print_verdict(r);
}
