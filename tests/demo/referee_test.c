/* SPDX-License-Identifier: MIT */
/*
 * referee_test.c - idle-load's referee and report on made-up samples
 * (demo/idle_load_referee.c, demo/idle_load_report.c): no server, no
 * network, no clock.
 *
 *   fin_bound      the FIN's arrival from TCP_INFO is never put before the
 *                  truth, for ticks of 1, 3.33, 4 and 10 ms, any phase, a
 *                  tick late to stamp the FIN, any reaping delay; the old
 *                  reckoning (the batch's earlier clock reading - ago, no
 *                  margin) put it before the truth. A tick 2 to 5 ticks late
 *                  (Linux's MAX_STALLED_JIFFIES; a virtual CPU held by its
 *                  host) puts it before the truth too, but then no close
 *                  seen after its deadline is judged before it.
 *   silent_close   judged on the close seen, pulled back to the FIN's
 *                  estimate where earlier, but not before the deadline: a
 *                  close seen 1 ms (one server tick) or 1 us early is early
 *                  whatever the FIN; one seen after the deadline is not,
 *                  whatever the FIN (the FIN 1.5 ms early, the close seen
 *                  0.11 ms late: what a passing server drew under stress-ng
 *                  --cpu 2 --vm 2, judged early until this test); our
 *                  reaping lag is not late.
 *   chatty_close   a chatty close within a timeout of a ping whose reply
 *                  came in is wrong; of a later ping only, wrong if the
 *                  generator kept up, starved (INVALID) if it fell behind
 *                  or if that ping, sent as late as keeping up allows, may
 *                  have come after the server's deadline.
 *   plot_and_verdict  a run with an early close: the referee FAILs it, the
 *                  csv draws it below zero; a run without, a FIN stamped
 *                  before the deadline among them: nothing below zero; an
 *                  INVALID run's plot title says INVALID.
 *   invalid_why    an INVALID run's summary names each cause with its own
 *                  figure: one invalid for its starved chatty connections
 *                  alone (lag 567 ms, stalls 551 ms, tolerance 800 ms: a
 *                  demo.sh retry beside stress-ng --cpu 2) is not said to
 *                  have fallen behind beyond the 800 ms, as it was.
 *
 * Exit 0 pass, 1 fail.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "../common/check.h"
#include "idle_load.h"

struct opts o = { .idle_ms = 1000, .tolerance_ms = 50, .grace_ms = 1000, .stats = false };

/* The kernel's jiffies_to_msecs(): exact for whole-ms ticks, else rounded up. */
static uint32_t jiffies_to_ms(uint64_t j, uint64_t tick_ns)
{
	return (uint32_t)((j * tick_ns + 999999u) / 1000000u);
}

static void fin_bound(void)
{
	const uint64_t ticks[] = { 1000000, 3333333, 4000000, 10000000 };
	struct demo_rng rng = demo_rng_seed(7, 0);
	unsigned old_early = 0, stalled_early = 0;
	for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
		uint64_t J = ticks[t];
		for (int i = 0; i < 200000; i++) {
			uint64_t fin = 1000000000u + demo_rng_below(&rng, 1000000000u); /* arrival, ns */
			uint64_t kread = fin + demo_rng_below(&rng, 30000000u);         /* getsockopt's reading */
			uint64_t stale = demo_rng_below(&rng, 2);                       /* tick late at the FIN */
			uint64_t stalled = 2 + demo_rng_below(&rng, 4);                 /* 2-5 ticks late */
			uint64_t jf = fin / J - (fin / J > 0 ? stale : 0), jr = kread / J;
			uint32_t ago = jiffies_to_ms(jr - jf, J);
			uint64_t after = kread + demo_rng_below(&rng, 50000u);          /* our reading after it */
			uint64_t bound = referee_fin_bound(after, ago, J);
			CHECK(bound >= fin, "tick %llu ns: FIN at %llu, bound %llu", (unsigned long long)J,
			      (unsigned long long)fin, (unsigned long long)bound);
			CHECK(bound <= after + referee_fin_margin(J), "bound past the reading plus the margin");
			/* the old reckoning: the batch's reading, taken before getsockopt */
			uint64_t batch = kread - demo_rng_below(&rng, 10000000u);
			old_early += batch - (uint64_t)ago * 1000000u < fin;
			/* the tick stalled longer: the stamp is no bound, and the
			 * referee must not judge a close seen after its deadline early */
			uint64_t js = fin / J > stalled ? fin / J - stalled : 0;
			uint64_t est = referee_fin_bound(after, jiffies_to_ms(jr - js, J), J);
			stalled_early += est < fin;
			uint64_t submit = fin - ms_ns(o.idle_ms) - demo_rng_below(&rng, 3 * J); /* deadline <= fin */
			struct result x = { .t_submit = submit, .t_est = submit + 100000, .kind = K_SILENT,
					    .t_close = after, .t_fin_in = est };
			CHECK(referee_silent_close(&x) != O_EARLY && referee_lateness(&x) >= 0,
			      "tick %llu ns, %llu ticks late: a close seen after its deadline judged %lld ns late",
			      (unsigned long long)J, (unsigned long long)stalled, (long long)referee_lateness(&x));
		}
	}
	CHECK(old_early > 0, "the old reckoning was never early: this test would not catch it");
	CHECK(stalled_early > 0, "a stalled tick never put the stamp before the FIN: this test proves nothing");
	CHECK(referee_fin_margin(4000000) == 8000000, "HZ 250: %llu", (unsigned long long)referee_fin_margin(4000000));
	CHECK(referee_fin_margin(3333333) == 7666666, "HZ 300: %llu", (unsigned long long)referee_fin_margin(3333333));
}

static struct result silent(uint64_t submit, int64_t seen_late_us, int64_t fin_late_us)
{
	uint64_t deadline = submit + ms_ns(o.idle_ms);
	struct result x = { .t_submit = submit, .t_est = submit + 100000, .kind = K_SILENT };
	x.t_close = (uint64_t)((int64_t)deadline + seen_late_us * 1000);
	x.t_fin_in = fin_late_us == INT64_MIN ? 0 : (uint64_t)((int64_t)deadline + fin_late_us * 1000);
	return x;
}

static void silent_close(void)
{
	uint64_t t = 5000000000u;
	struct result x = silent(t, 110, -1530); /* seen 0.11 ms late, the FIN stamped 1.53 ms early */
	CHECK(referee_silent_close(&x) == O_ON_TIME, "a FIN stamp alone made it early: %d", referee_silent_close(&x));
	CHECK(referee_lateness(&x) == 0, "lateness %lld, not 0 (the deadline)", (long long)referee_lateness(&x));
	CHECK(referee_fin_only_early(&x), "not counted as a FIN stamped before the deadline");
	x = silent(t, -1000, 5000); /* seen one server tick (1 ms) early, whatever the FIN */
	CHECK(referee_silent_close(&x) == O_EARLY && referee_lateness(&x) == -1000000, "one tick early: %d %lld",
	      referee_silent_close(&x), (long long)referee_lateness(&x));
	x = silent(t, -1000, -3000);
	CHECK(referee_silent_close(&x) == O_EARLY && referee_lateness(&x) == -1000000, "seen early, FIN earlier: %lld",
	      (long long)referee_lateness(&x));
	CHECK(!referee_fin_only_early(&x), "seen early counted as a FIN stamp alone");
	x = silent(t, 40000, 20000); /* we reaped 40 ms late, the FIN was in at 20 ms */
	CHECK(referee_lateness(&x) == 20000000, "the FIN after the deadline: lateness %lld", (long long)referee_lateness(&x));
	x = silent(t, 500, 9000); /* the FIN's bound later than the close seen: seen */
	CHECK(referee_silent_close(&x) == O_ON_TIME && referee_lateness(&x) == 500000, "seen");
	x = silent(t, 300000, 10000); /* we reaped 300 ms late, the FIN was in at 10 ms */
	CHECK(referee_silent_close(&x) == O_ON_TIME, "our reaping lag blamed on the server");
	x = silent(t, 300000, INT64_MIN); /* no FIN stamp: the close seen */
	CHECK(referee_silent_close(&x) == O_LATE, "late: %d", referee_silent_close(&x));
	x = silent(t, -1, INT64_MIN);
	CHECK(referee_silent_close(&x) == O_EARLY, "seen 1 us early: %d", referee_silent_close(&x));
}

/* A chatty close: wrong within a timeout of a ping the server surely had
 * (its reply in), else of a later ping only if we kept up, else starved. */
static void chatty_close(void)
{
	uint64_t acked = 5000000000u, idle = ms_ns(o.idle_ms), late_ping = acked + idle / 2;
	CHECK(referee_chatty_close(acked + idle - 1, acked, late_ping) == O_WRONG, "within a timeout of acked");
	CHECK(referee_chatty_close(acked + idle, acked, late_ping) == O_UNSURE, "of the late ping only");
	CHECK(referee_chatty_close(late_ping + idle, acked, late_ping) == O_STARVED, "a timeout after both");
	/* a ping so late that, sent up to the lag bound (tolerance 50 ms) after
	 * its stamp, it may have come after the server's deadline (acked + idle) */
	uint64_t later = acked + idle - ms_ns(40);
	CHECK(referee_chatty_close(acked + idle + 1, acked, later) == O_STARVED, "a ping within the lag bound of it");
	for (int behind = 0; behind < 2; behind++) {
		struct report r = { .total = 1, .nprocs = 1 };
		r.count[K_CHATTY][O_UNSURE] = 1;
		r.sum.stall.max_us = behind ? 1000000 : 0;
		judge_run(&r);
		CHECK(r.count[K_CHATTY][behind ? O_STARVED : O_WRONG] == 1 && !r.count[K_CHATTY][O_UNSURE],
		      "unsure, behind %d: starved %llu wrong %llu", behind,
		      (unsigned long long)r.count[K_CHATTY][O_STARVED], (unsigned long long)r.count[K_CHATTY][O_WRONG]);
		CHECK(behind ? r.invalid && r.wrong == 0 : !r.pass && !r.invalid && r.wrong == 1,
		      "unsure, behind %d: invalid %d pass %d wrong %llu", behind, r.invalid, r.pass,
		      (unsigned long long)r.wrong);
	}
}

/* Lines of @path below zero in any column (after the comment lines). */
static int below_zero(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && (line[0] == '-' || strstr(line, ",-")))
			n++;
	fclose(f);
	return n;
}

static bool file_has(const char *path, const char *what)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	char line[1024];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

/* Tally, judge and draw @n made-up results; the verdict in @r. */
static void run(struct report *r, struct result *res, uint32_t n, const char *prefix)
{
	for (uint32_t i = 0; i < n; i++)
		res[i].outcome = (uint8_t)referee_silent_close(&res[i]);
	*r = (struct report){ .total = n, .nsilent = n, .nprocs = 1 };
	struct proc_stats ps = { .fin_margin_ns = 8000000 };
	CHECK(tally(r, res, &ps) == 0, "tally");
	judge_run(r);
	o.plot = prefix;
	write_plot(r, res);
}

static void plot_and_verdict(void)
{
	char dir[] = "/tmp/twheel-referee-test.XXXXXX", prefix[64], csv[80], gp[80];
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(prefix, sizeof(prefix), "%s/p", dir);
	snprintf(csv, sizeof(csv), "%s.csv", prefix);
	snprintf(gp, sizeof(gp), "%s.gp", prefix);
	uint64_t t = 5000000000u;
	struct result res[5] = { silent(t, 400, INT64_MIN), silent(t, 900, 6000), silent(t, 300000, 12000),
				 silent(t, 110, -1530), silent(t, -1000, -3000) };
	struct report r;

	run(&r, res, 4, prefix); /* none early, one FIN stamped before the deadline */
	CHECK(r.pass && !r.invalid, "a clean run: pass %d invalid %d", r.pass, r.invalid);
	CHECK(below_zero(csv) == 0, "a passing run drew %d values below zero", below_zero(csv));
	CHECK(file_has(gp, "PASS"), "the title says PASS");
	CHECK(r.late[0] >= 0, "summary min %lld", (long long)r.late[0]);
	CHECK(r.nfin_early == 1, "FINs stamped before the deadline: %zu", r.nfin_early);

	free(r.late);
	free(r.seen);
	free(r.setup);
	run(&r, res, 5, prefix); /* the last one seen 1 ms early */
	CHECK(!r.pass && r.count[K_SILENT][O_EARLY] == 1, "an early close: pass %d early %llu", r.pass,
	      (unsigned long long)r.count[K_SILENT][O_EARLY]);
	CHECK(below_zero(csv) == 1, "the early close drawn below zero: %d", below_zero(csv));
	CHECK(file_has(gp, "FAIL"), "the title says FAIL");
	CHECK(r.late[0] == -1000000, "summary min %lld", (long long)r.late[0]);

	r.invalid = true; /* as judge_run() says when the generator fell behind */
	write_plot(&r, res);
	CHECK(file_has(gp, "INVALID RUN"), "an invalid run's title says INVALID");
	CHECK(file_has(gp, "set xrange [-2.0:"), "the x axis shows the early close");

	free(r.late);
	free(r.seen);
	free(r.setup);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "rm");
}

/* print_summary() of @r into @buf (its stdout taken to a file). */
static void summary_text(const struct report *r, char *buf, size_t len)
{
	char path[] = "/tmp/twheel-referee-summary.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	fflush(stdout);
	int saved = dup(1);
	dup2(fd, 1);
	print_summary(r);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	ssize_t n = pread(fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	unlink(path);
}

/* An INVALID run's summary says why, each cause with its own figure. */
static void invalid_why(void)
{
	struct opts saved = o;
	o.idle_ms = 500;
	o.tolerance_ms = 800;
	o.conns = 10000;
	o.plot = NULL;
	struct report r = { .total = 10000, .nsilent = 5000, .nprocs = 1, .cpu_user = -1 };
	r.count[K_SILENT][O_ON_TIME] = 5000;
	r.count[K_CHATTY][O_KEPT] = 4288;
	r.count[K_CHATTY][O_STARVED] = 712;
	r.sum.lag.max_us = 567087;
	r.sum.stall.max_us = 551445;
	judge_run(&r);
	CHECK(r.invalid && !r.pass, "starved: invalid %d pass %d", r.invalid, r.pass);
	static char text[16384];
	summary_text(&r, text, sizeof(text));
	CHECK(strstr(text, "INVALID RUN") && strstr(text, "\nINVALID\n"), "no INVALID verdict:\n%s", text);
	CHECK(!strstr(text, "beyond the 800 ms"), "a lag of 567 ms said to be beyond 800 ms:\n%s", text);
	CHECK(strstr(text, "left 712 chatty connections silent a whole 500 ms timeout"), "starved not said:\n%s", text);

	/* fell behind by its lag alone: that said, with the bound, and no starving */
	r = (struct report){ .total = 10000, .nsilent = 5000, .nprocs = 1, .cpu_user = -1 };
	r.count[K_SILENT][O_ON_TIME] = 5000;
	r.count[K_CHATTY][O_KEPT] = 5000;
	r.sum.lag.max_us = 900000;
	r.sum.stall.max_us = 20000;
	judge_run(&r);
	summary_text(&r, text, sizeof(text));
	CHECK(r.invalid && strstr(text, "its timers ran up to 900.0 ms late, beyond the 800 ms"), "lag:\n%s", text);
	CHECK(!strstr(text, "away from its ring up to") && !strstr(text, "(starved)"), "causes it lacks:\n%s", text);
	o = saved;
}

int main(void)
{
	fin_bound();
	silent_close();
	chatty_close();
	plot_and_verdict();
	invalid_why();
	if (check_failures) {
		printf("%d checks failed\n", check_failures);
		return 1;
	}
	printf("referee: all checks passed\n");
	return 0;
}
