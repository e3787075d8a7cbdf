/* SPDX-License-Identifier: MIT */
/*
 * idle_load.h - what the parts of idle-load share: the options, one
 * result per connection and one stats block per process (both in memory
 * the processes share), the report the run comes to, and each part's entry
 * points. Read idle_load.c's head first: it says what each part holds.
 *
 *   idle_load.c          options, processes (fork, start and finish line),
 *                        progress line, main
 *   idle_load_gen.c      the generator: connections on io_uring, the loop;
 *                        fills struct result and struct proc_stats
 *   idle_load_referee.c  the referee: results -> struct report, the verdict
 *   idle_load_stats.c    the server's STATS and CPU time -> struct report
 *   idle_load_report.c   the summary and the plot, from struct report
 */
#ifndef IDLE_LOAD_H
#define IDLE_LOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "demo_common.h"

enum kind { K_SILENT, K_CHATTY, K_RESET, K_HALF, K_VANISH, K_FLOOD, K__N };

enum outcome {
	O_PENDING,
	O_ON_TIME,      /* silent, closed within the tolerance */
	O_LATE,         /* silent, closed after the tolerance */
	O_EARLY,        /* silent, closed before the timeout */
	O_NEVER,        /* silent, not closed within the grace period */
	O_WRONG,        /* chatty closed by the server, or data on a silent one */
	O_STARVED,      /* chatty closed after we let it go silent for a timeout */
	O_UNSURE,       /* chatty closed within a timeout of a ping the server may not have had:
			   judge_run() makes it O_WRONG, or O_STARVED if we fell behind */
	O_ECHO,         /* chatty or half-close: the reply did not match */
	O_UNANSWERED,   /* chatty: at the end, a ping unanswered (no reply byte) for --grace-ms */
	O_KEPT,         /* chatty, open until we closed it */
	O_ABRUPT_OK,    /* abrupt client played out as planned */
	O_ABRUPT_FAIL,  /* half-close not answered and closed in time */
	O_CONNECT_FAIL,
	O__N
};

/* One per connection, in memory shared with the parent. */
struct result {
	uint64_t t_submit; /* connect about to be submitted (ns, CLOCK_MONOTONIC) */
	uint64_t t_est;    /* connect completion reaped */
	uint64_t t_close;  /* server's close (EOF or error) reaped */
	uint64_t t_fin_in; /* the FIN's arrival, estimated (referee_fin_bound()), 0 unknown */
	int32_t err;       /* errno of a failed connect or recv */
	uint8_t kind;
	uint8_t outcome;
};

/* One per process, shared with the parent. */
struct proc_stats {
	uint64_t pings;
	uint64_t pings_skipped; /* previous ping's send still in flight */
	uint64_t bytes_echoed;
	uint64_t t_first_submit, t_last_est;
	uint64_t t_ready;        /* its set-up done (before the start line) */
	uint64_t fin_margin_ns;  /* what referee_fin_bound() adds to the kernel's FIN stamp */
	uint64_t t_loop_end, t_teardown; /* its loop ended; its tear-down began (the finish line between) */
	struct demo_hist lag;    /* our own timers: handled - due (our lag) */
	struct demo_hist stall;  /* our loop away from the ring, beyond its wait */
	uint64_t stall_worst_ns, stall_worst_at; /* the longest stall, and when (since the start) */
	/* connections established and not yet closed: now, and at most (what
	 * the server held at once, which a paced run keeps below --conns) */
	uint32_t held, held_max;
	/* connects that went to the kernel without their link timeout (its
	 * completion -EINVAL): submitted before they were stamped; ours */
	uint64_t unlinked;
	int fatal; /* the child could not run: message already printed */
	/* read by the progress line while the run goes on (relaxed atomics) */
	uint32_t connected, connect_failed, silent_done, silent_late;
};

struct opts {
	struct demo_addr host; /* the server, port included */
	unsigned family;       /* --family: 4 or 6, 0 = as --host says */
	uint16_t port;
	uint32_t conns;
	uint32_t silent_pct;
	uint32_t abrupt;
	uint64_t idle_ms, ping_ms, tolerance_ms, grace_ms, hold_ms;
	uint64_t connect_timeout_ms;
	uint32_t inflight;
	uint32_t rate;         /* --rate: connects a second over all processes, 0 = no limit */
	uint32_t per_proc, per_src;
	bool heartbeat;
	bool http;             /* --http: HTTP/1.1 keep-alive, GET answered by 204 */
	bool stats;
	uint32_t server_pid;
	uint64_t seed;
	bool quiet;
	bool dry_run;          /* --dry-run: check the options, do nothing */
	const char *trace;
	const char *plot; /* --plot PREFIX */
	uint64_t stall_ms; /* --debug-stall-ms: stop once, all connections open */
	uint32_t sq_entries; /* --debug-sq-entries: each ring's submission queue (4096) */
};

/* The least lag bound: the wheel ticks in ms, a wait overruns by a few. */
#define MIN_LAG_BOUND_MS 10

/* Timing fields of the STATS line (demo_common.h), in this order. */
enum { ST_FIRE_N, ST_FIRE_P50, ST_FIRE_P99, ST_FIRE_MAX, ST_FIN_P50, ST_FIN_P99, ST_FIN_MAX,
       ST_CLOSE_P50, ST_CLOSE_P99, ST_CLOSE_MAX, ST_ACC_P50, ST_ACC_P99, ST_ACC_MAX, ST__N };
static const char *const st_keys[ST__N] = {
	"fire_n", "fire_p50_us", "fire_p99_us", "fire_max_us", "fin_p50_us", "fin_p99_us", "fin_max_us",
	"close_p50_us", "close_p99_us", "close_max_us", "accept_p50_us", "accept_p99_us", "accept_max_us",
};

struct server_view {
	uint32_t workers;     /* 0: unknown */
	uint32_t seen;        /* workers that answered with conns=0 timers=0 */
	uint32_t heard;       /* workers that answered */
	uint32_t uncounted;   /* of those, the ones whose last line lacked a whole conns= or timers= */
	uint64_t conns, timers, emfile, accepted, idle_closed;
	double cpu_user, cpu_sys;
	bool ok;
	/* the servers' own timing (STATS *_us fields), the worst worker's for
	 * each figure; timing = false if the server does not report it */
	bool timing;
	uint64_t tm[ST__N];
};

/* What the run came to: every connection's result and every process's stats. */
struct report {
	uint32_t total, nsilent, nprocs;
	int fail_procs;
	uint64_t count[K__N][O__N];
	uint64_t wrong, abrupt_ok, abrupt_fail, connect_fail, pending;
	int err_connect;
	/* sorted, ns, of the silent connections the server closed (early, on
	 * time or late): lateness as judged (referee_lateness()) and as the
	 * close was seen; and every connection's connect time */
	int64_t *late, *seen, *setup;
	size_t nlate, nsetup;
	size_t nfin, nfin_judged; /* FINs the kernel stamped; of them, judged on the stamp */
	size_t nfin_early;        /* stamped before the deadline, the close seen after it */
	struct proc_stats sum;
	double open_s, wall_s, gen_cpu, cpu_user, cpu_sys;
	uint64_t held_max; /* the processes' held_max summed: at least the most held at once */
	struct demo_machine m_start, m_end; /* the machine before and after the run */
	uint64_t start_overlap_us; /* first connect submitted -> last process set up, if after */
	uint64_t end_overlap_us;   /* first tear-down -> last loop's end, if after */
	struct server_view sv;
	bool server_clean, pass;
	bool fell_behind;  /* the generator's lag beyond lag_bound_ms, or starved */
	uint64_t certain;  /* closes and replies wrong whatever that lag (early ones among them) */
	bool invalid;      /* fell behind, and nothing certain: the run says nothing (exit 3) */
	uint64_t lag_bound_ms;
	char plot[9000]; /* what write_plot() made, for the summary */
};

/* The options (idle_load.c reads them; every part reads o). */
extern struct opts o;

static inline uint64_t ms_ns(uint64_t ms)
{
	return ms * 1000000u;
}

/* ---- idle_load.c: processes and progress ---- */

/* The start line of the processes (in shared memory), and --rate's start. */
struct start_line;
extern struct start_line *the_start;
extern uint64_t rate_t0;
/* Wait until every process is set up, then start together (rate_t0 set). */
void start_together(uint32_t nprocs);
/* Wait until every process's loop has ended (before tearing down). */
void finish_together(uint32_t nprocs);
/* The progress line, at most once a second (@force: now). */
void progress(uint64_t now, bool force);

/* ---- idle_load_gen.c: the generator ---- */

/*
 * Run connections [lo, hi) of @res in this process (process @pidx of
 * @nprocs), stats in @ps; @report: print the progress line. Returns 0,
 * or exits the process on a fatal error (message printed).
 */
int run_worker(struct result *res, struct proc_stats *ps, uint32_t lo, uint32_t hi,
	       uint32_t pidx, uint32_t nprocs, bool report);

/* ---- idle_load_referee.c: the referee ---- */

/* --http: where a connection's replies stand (referee_http_reply()). */
struct http_reply {
	uint32_t replies;  /* complete replies received */
	uint16_t head_off; /* bytes of the reply head being received */
	uint8_t head_end;  /* bytes of its "\r\n\r\n" seen */
};

/*
 * The FIN's arrival (ns): @read_ns a clock reading taken after the
 * kernel's (after getsockopt(TCP_INFO) returned), @ago_ms its
 * tcpi_last_ack_recv, @tick_ns the kernel's tick (one jiffy). An upper
 * bound when the kernel's tick came at most one tick late to stamp the
 * FIN; it can come later (a virtual CPU held by its host), so it is an
 * estimate (idle_load_report.c's head).
 */
uint64_t referee_fin_bound(uint64_t read_ns, uint32_t ago_ms, uint64_t tick_ns);
/* What referee_fin_bound() adds for a tick of @tick_ns: the resolution. */
uint64_t referee_fin_margin(uint64_t tick_ns);
/*
 * When silent @x's close arrived (ns), as judged: t_close (seen, an upper
 * bound), or t_fin_in (the FIN's estimate) where that is earlier, but not
 * before the deadline (t_submit + the idle timeout) unless t_close is.
 */
uint64_t referee_close_at(const struct result *x);
/*
 * Did silent @x's FIN estimate fall before the deadline while its close
 * was seen after it? (The kernel's tick came late, or the server closed
 * early and we reaped late: not told apart, not judged early.)
 */
bool referee_fin_only_early(const struct result *x);
/*
 * Silent @x's lateness as judged (ns): referee_close_at() - (t_submit +
 * the idle timeout). Below 0 only when the close was seen before the
 * deadline: the server closed early.
 */
int64_t referee_lateness(const struct result *x);
/*
 * A silent connection closed by the server (EOF), @x's t_submit, t_close
 * and t_fin_in filled: O_EARLY (referee_lateness() < 0), O_ON_TIME (up to
 * --tolerance-ms) or O_LATE.
 */
enum outcome referee_silent_close(const struct result *x);
/* Is @x a silent connection the server closed (early, on time or late)? */
bool referee_closed_silent(const struct result *x);
/*
 * A chatty connection closed by the server at @closed (ns), @acked the
 * submission of the last ping the server surely had (every reply up to it
 * received in full), or of the connect, @last_ping that of the last ping:
 * O_WRONG (within a timeout of @acked), O_UNSURE (of @last_ping only: it
 * may have reached the server after its deadline, if we fell behind), or
 * O_STARVED (we left it silent a whole timeout ourselves).
 */
enum outcome referee_chatty_close(uint64_t closed, uint64_t acked, uint64_t last_ping);
/*
 * --http: @n more reply bytes at @p, @asked requests sent so far. Each
 * reply is a head that starts with DEMO_HTTP_STATUS and ends at its blank
 * line ("\r\n\r\n"), whatever its headers (nginx adds Server, Date,
 * Connection), at most DEMO_HTTP_MAX_HEAD bytes, and no body (a 204). A
 * byte when every request has its reply already, a wrong status or an
 * overlong head is a bad reply: returns false. Updates @h.
 */
bool referee_http_reply(struct http_reply *h, uint32_t asked, const char *p, size_t n);
/*
 * Echo (or with --heartbeat, PONG) mode: are the @n reply bytes at @p,
 * after @rcvd already checked, what connection @id was sent?
 */
bool referee_echo_reply(uint32_t id, uint64_t rcvd, const char *p, size_t n);

/* Count @res (r->total of them) and @ps (r->nprocs) into @r: -ENOMEM or 0. */
int tally(struct report *r, const struct result *res, const struct proc_stats *ps);
/* The verdict: r->invalid, r->pass (after tally() and measure_cpu()). */
void judge_run(struct report *r);

/* ---- idle_load_stats.c: the server's own account ---- */

/* r->sv from the server's STATS, r->cpu_* and r->gen_cpu. */
void measure_cpu(struct report *r);

/* ---- idle_load_report.c: summary and plot ---- */

/* The protocol spoken: "echo", "heartbeat" or "http". */
const char *mode_name(void);
/* The @p-th percentile (nearest rank) of @n sorted ns values, in ms. */
double pct_ms(const int64_t *v, size_t n, double p);
/* --plot: the csv, gnuplot script and png; r->plot says what was made. */
void write_plot(struct report *r, const struct result *res);
/* The summary, the RESULT line and the verdict, on stdout. */
void print_summary(const struct report *r);

#endif
