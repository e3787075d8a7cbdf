/* SPDX-License-Identifier: MIT */
/*
 * idle_load_referee.c - idle-load's referee: what the run is judged on.
 *
 * Each connection's outcome (enum outcome) is decided as its events come
 * in: the generator (idle_load_gen.c) records them in struct result and
 * asks the referee_*() functions below, which hold these rules:
 *
 *   silent  must be closed by the server after the idle timeout. Lateness
 *           is close - (connect submitted + timeout), where the close is
 *           when we saw it (an upper bound of its arrival: we take the
 *           completion, then read the clock), pulled back to the kernel's
 *           stamp of the FIN plus two ticks where that is earlier, but no
 *           further back than the deadline (referee_close_at();
 *           idle_load_report.c's head says why). The server cannot have
 *           armed its timer before we submitted the connect, so a close
 *           seen before connect submitted + timeout is a certain
 *           violation, however far behind we were; the FIN's stamp is the
 *           kernel's tick, which may come more than a tick late (a
 *           virtual CPU held by its host), so it is an estimate that keeps
 *           our reaping lag out of the lateness, never a proof of an early
 *           close. Lateness also holds the time the connection took to be
 *           set up and accepted, reported apart as "connect ms":
 *           early   lateness < 0 (the close seen before the deadline);
 *           on time lateness at most --tolerance-ms;
 *           late    closed after that, but within --grace-ms;
 *           never   still open --grace-ms after the timeout;
 *           wrong   the server sent data on a silent connection.
 *   chatty  must never be closed by the server while we keep talking; the
 *           reply must match what we sent. A close less than the timeout
 *           after the submission of a ping the server surely had (every
 *           reply up to it received in full; or the connect) is certainly
 *           wrong. One less than the timeout after a later ping only is
 *           wrong if we kept up (within the lag bound, which must also
 *           leave that ping before the server's deadline), else starved:
 *           that ping may have reached the server after its deadline (a
 *           generator stopped longer than the timeout stamps and sends its
 *           overdue pings before it reaps the closes that came
 *           meanwhile). A later one means the
 *           generator itself fell behind and let the connection go silent
 *           ("starved": the run is invalid, not the server wrong). Open at
 *           the end: kept, unless a ping had no reply byte for --grace-ms
 *           (unanswered: wrong, but not whatever our lag: a reply may
 *           wait unreaped).
 *   abrupt  played out as planned, or not (a half-close not answered in
 *           full and closed within half the timeout).
 *
 * The interface (idle_load.h), each function reading the options (o) and
 * its arguments only, so that each can be tried on made-up values:
 *
 *   referee_fin_bound()     the FIN's arrival, estimated from TCP_INFO
 *   referee_lateness()      a silent one's lateness, as judged and drawn
 *   referee_silent_close()  a silent one's close: early, on time or late
 *   referee_chatty_close()  a chatty one's close: wrong or starved
 *   referee_http_reply(), referee_echo_reply()  the bytes of a reply
 *   tally()                 every result and process -> struct report
 *   judge_run()             struct report -> fell_behind, certain, invalid, pass:
 *
 *   PASS     no early, never, wrong or failed connect, no connection left
 *            undecided, the server left with no connection and no timer;
 *   INVALID  the generator fell behind: one of its timers handled, or its
 *            loop away from its ring, later than the lateness it judges
 *            (--tolerance-ms, at least MIN_LAG_BOUND_MS), or a chatty
 *            connection starved. Its closes could have been seen that late
 *            for its own sake: the run says nothing of the server (exit 3),
 *            unless a close or reply was wrong whatever that lag (certain:
 *            an early close, a chatty one closed within a timeout of a
 *            ping the server surely had, a reply that differs, data on a
 *            silent one): a lag
 *            only makes closes seen later, so such a run is a FAIL;
 *   FAIL     anything else.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "idle_load.h"

uint64_t referee_fin_margin(uint64_t tick_ns)
{
	/* one tick for the stamps' rounding down, one for a tick that came
	 * late to the FIN's stamp; and 1 ms where a tick is not whole ms,
	 * which jiffies_to_msecs() rounds up */
	return 2 * tick_ns + (tick_ns % 1000000u ? 1000000u : 0);
}

uint64_t referee_fin_bound(uint64_t read_ns, uint32_t ago_ms, uint64_t tick_ns)
{
	return read_ns - (uint64_t)ago_ms * 1000000u + referee_fin_margin(tick_ns);
}

uint64_t referee_close_at(const struct result *x)
{
	uint64_t deadline = x->t_submit + ms_ns(o.idle_ms);
	if (!x->t_fin_in || x->t_fin_in >= x->t_close || x->t_close < deadline)
		return x->t_close;
	/* seen after the deadline: the FIN's stamp takes our reaping lag out,
	 * but a tick that came late can put it before the truth, so it may
	 * not make the close early */
	return x->t_fin_in > deadline ? x->t_fin_in : deadline;
}

bool referee_fin_only_early(const struct result *x)
{
	return x->t_fin_in && x->t_fin_in < x->t_submit + ms_ns(o.idle_ms) &&
	       x->t_close >= x->t_submit + ms_ns(o.idle_ms);
}

int64_t referee_lateness(const struct result *x)
{
	return (int64_t)(referee_close_at(x) - x->t_submit) - (int64_t)ms_ns(o.idle_ms);
}

enum outcome referee_silent_close(const struct result *x)
{
	int64_t late = referee_lateness(x);
	if (late < 0)
		return O_EARLY;
	if (late > (int64_t)ms_ns(o.tolerance_ms))
		return O_LATE;
	return O_ON_TIME;
}

bool referee_closed_silent(const struct result *x)
{
	return x->kind == K_SILENT && (x->outcome == O_EARLY || x->outcome == O_ON_TIME || x->outcome == O_LATE);
}

/* How far behind the generator may fall and the run still judge the server. */
static uint64_t lag_bound_ms(void)
{
	return o.tolerance_ms > MIN_LAG_BOUND_MS ? o.tolerance_ms : MIN_LAG_BOUND_MS;
}

enum outcome referee_chatty_close(uint64_t closed, uint64_t acked, uint64_t last_ping)
{
	uint64_t idle = ms_ns(o.idle_ms);
	if (closed - acked < idle)
		return O_WRONG;
	/* the last ping reached the server before its deadline (acked +
	 * idle, at the earliest) if it went out within the lag bound of its
	 * stamp, which a run that did not fall behind ensures */
	if (closed - last_ping < idle && last_ping - acked + ms_ns(lag_bound_ms()) < idle)
		return O_UNSURE;
	return O_STARVED;
}

bool referee_http_reply(struct http_reply *h, uint32_t asked, const char *p, size_t n)
{
	static const char end[4] = { '\r', '\n', '\r', '\n' };
	for (size_t i = 0; i < n; i++) {
		char ch = p[i];
		if (!h->head_off && h->replies >= asked)
			return false; /* nothing was asked for */
		if (h->head_off < DEMO_HTTP_STATUS_LEN && ch != DEMO_HTTP_STATUS[h->head_off])
			return false;
		if (++h->head_off > DEMO_HTTP_MAX_HEAD)
			return false;
		h->head_end = ch == end[h->head_end] ? (uint8_t)(h->head_end + 1) : ch == '\r' ? 1 : 0;
		if (h->head_end == 4) { /* the head is complete: the next byte starts another */
			h->replies++;
			h->head_off = 0;
			h->head_end = 0;
		}
	}
	return true;
}

bool referee_echo_reply(uint32_t id, uint64_t rcvd, const char *p, size_t n)
{
	/* one message is formatted per DEMO_ECHO_MSG_LEN bytes, not per byte:
	 * the referee must stay cheap, it shares the CPU with the server */
	char msg[DEMO_ECHO_MSG_LEN + 1];
	uint64_t cur = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = rcvd + i;
		char want;
		if (o.heartbeat) {
			want = DEMO_PONG[off % DEMO_PING_LEN];
		} else {
			if (off / DEMO_ECHO_MSG_LEN != cur) {
				cur = off / DEMO_ECHO_MSG_LEN;
				demo_echo_msg(msg, id, (uint32_t)cur);
			}
			want = msg[off % DEMO_ECHO_MSG_LEN];
		}
		if (p[i] != want)
			return false;
	}
	return true;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void hist_merge(struct demo_hist *sum, const struct demo_hist *h)
{
	for (unsigned i = 0; i < DEMO_HIST_N; i++)
		sum->b[i] += h->b[i];
	sum->n += h->n;
	if (h->max_us > sum->max_us)
		sum->max_us = h->max_us;
}

/* The processes' stats summed in r->sum, and when they started and finished. */
static void tally_procs(struct report *r, const struct proc_stats *ps)
{
	uint64_t first_submit = UINT64_MAX, last_est = 0, last_ready = 0, last_loop_end = 0,
		 first_teardown = UINT64_MAX;
	struct proc_stats *sum = &r->sum;
	for (uint32_t p = 0; p < r->nprocs; p++) {
		hist_merge(&sum->lag, &ps[p].lag);
		hist_merge(&sum->stall, &ps[p].stall);
		if (ps[p].stall_worst_ns > sum->stall_worst_ns) {
			sum->stall_worst_ns = ps[p].stall_worst_ns;
			sum->stall_worst_at = ps[p].stall_worst_at;
		}
		sum->pings += ps[p].pings;
		sum->pings_skipped += ps[p].pings_skipped;
		sum->bytes_echoed += ps[p].bytes_echoed;
		r->held_max += ps[p].held_max;
		sum->unlinked += ps[p].unlinked;
		if (ps[p].fin_margin_ns > sum->fin_margin_ns)
			sum->fin_margin_ns = ps[p].fin_margin_ns;
		if (ps[p].t_first_submit && ps[p].t_first_submit < first_submit)
			first_submit = ps[p].t_first_submit;
		if (ps[p].t_last_est > last_est)
			last_est = ps[p].t_last_est;
		if (ps[p].t_ready > last_ready)
			last_ready = ps[p].t_ready;
		if (ps[p].t_loop_end > last_loop_end)
			last_loop_end = ps[p].t_loop_end;
		if (ps[p].t_teardown && ps[p].t_teardown < first_teardown)
			first_teardown = ps[p].t_teardown;
	}
	/* a process tore down while another's loop still ran: they did not finish together */
	r->end_overlap_us = first_teardown != UINT64_MAX && last_loop_end > first_teardown
				    ? (last_loop_end - first_teardown) / 1000 : 0;
	/* a connect submitted before the last process was set up: they did not start together */
	r->start_overlap_us = first_submit != UINT64_MAX && last_ready > first_submit ? (last_ready - first_submit) / 1000 : 0;
	r->open_s = last_est > first_submit && first_submit != UINT64_MAX ? (double)(last_est - first_submit) / 1e9 : 0;
}

/* Each connection's outcome counted, its times gathered (sorted, ns). */
static void tally_conns(struct report *r, const struct result *res)
{
	int64_t idle = (int64_t)ms_ns(o.idle_ms);
	for (uint32_t i = 0; i < r->total; i++) {
		const struct result *x = &res[i];
		r->count[x->kind][x->outcome]++;
		if (x->outcome == O_CONNECT_FAIL && !r->err_connect)
			r->err_connect = x->err;
		if (referee_closed_silent(x)) {
			r->late[r->nlate] = referee_lateness(x);
			r->seen[r->nlate++] = (int64_t)(x->t_close - x->t_submit) - idle;
			r->nfin += x->t_fin_in != 0;
			r->nfin_judged += x->t_fin_in && x->t_fin_in < x->t_close;
			r->nfin_early += referee_fin_only_early(x);
		}
		if (x->t_est)
			r->setup[r->nsetup++] = (int64_t)(x->t_est - x->t_submit);
	}
	qsort(r->late, r->nlate, sizeof(int64_t), cmp_i64);
	qsort(r->seen, r->nlate, sizeof(int64_t), cmp_i64);
	qsort(r->setup, r->nsetup, sizeof(int64_t), cmp_i64);
	for (int k = 0; k < K__N; k++) {
		r->connect_fail += r->count[k][O_CONNECT_FAIL];
		r->pending += r->count[k][O_PENDING];
		if (k >= K_RESET) {
			r->abrupt_ok += r->count[k][O_ABRUPT_OK];
			r->abrupt_fail += r->count[k][O_ABRUPT_FAIL] + r->count[k][O_WRONG] + r->count[k][O_ECHO];
		}
	}
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	r->wrong = s[O_WRONG] + c[O_WRONG] + c[O_ECHO] + c[O_UNANSWERED] + r->abrupt_fail;
}

int tally(struct report *r, const struct result *res, const struct proc_stats *ps)
{
	size_t ns = r->nsilent ? r->nsilent : 1;
	r->late = malloc(sizeof(int64_t) * ns);
	r->seen = malloc(sizeof(int64_t) * ns);
	r->setup = malloc(sizeof(int64_t) * (r->total ? r->total : 1));
	if (!r->late || !r->seen || !r->setup)
		return -ENOMEM;
	tally_procs(r, ps);
	tally_conns(r, res);
	return 0;
}

/* The verdict: no process failed, no connection judged wrongly or left undecided, the server clean. */
void judge_run(struct report *r)
{
	r->server_clean = !o.stats || r->sv.ok;
	const uint64_t *s = r->count[K_SILENT], *c = r->count[K_CHATTY];
	r->lag_bound_ms = lag_bound_ms();
	r->fell_behind = c[O_STARVED] != 0 || r->sum.lag.max_us > r->lag_bound_ms * 1000u ||
			 r->sum.stall.max_us > r->lag_bound_ms * 1000u;
	/* chatty closes within a timeout of a ping the server may not have
	 * had: wrong if we kept up (the ping went out when stamped), starved
	 * if we fell behind */
	uint64_t *cc = r->count[K_CHATTY];
	cc[r->fell_behind ? O_STARVED : O_WRONG] += cc[O_UNSURE];
	r->wrong += r->fell_behind ? 0 : cc[O_UNSURE];
	cc[O_UNSURE] = 0;
	/* What no lag of ours can make up: a close seen before its deadline
	 * (a silent one's connect submitted + timeout, a chatty one's ping
	 * the server surely had submitted + timeout) came before it, for our
	 * lag only makes a
	 * close seen later; a reply that differs, or data on a silent one, is
	 * wrong whenever it came. */
	r->certain = s[O_EARLY] + s[O_WRONG] + c[O_WRONG] + c[O_ECHO];
	r->invalid = r->fell_behind && r->certain == 0;
	r->pass = !r->fail_procs && s[O_EARLY] == 0 && s[O_NEVER] == 0 && r->wrong == 0 && r->connect_fail == 0 &&
		  r->pending == 0 && r->server_clean && !r->fell_behind;
}
