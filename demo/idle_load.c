/* SPDX-License-Identifier: MIT */
/*
 * idle_load.c - load generator and referee for the idle-timeout servers
 * (the idle_conns workload, docs/demo.md): its options, its processes and
 * its progress line, and main().
 *
 * Opens N TCP connections to a server on loopback with io_uring, keeps a
 * fraction of them chatty and leaves the rest silent, judges how the
 * server closed each one, then prints a summary (and with --plot draws
 * the lateness of the closes). The parts, each in its own file:
 *
 *   idle_load_gen.c      the generator: opens and plays out the connections
 *                        (silent, chatty, abrupt), stamps each event, and
 *                        writes one struct result per connection
 *   idle_load_referee.c  the referee: what is judged and how (early, late,
 *                        kept; the generator's own lag; INVALID)
 *   idle_load_stats.c    the server's own account: its STATS line, its CPU
 *   idle_load_report.c   the summary, the RESULT line and the plot
 *
 * They meet in idle_load.h: struct result (one per connection) and struct
 * proc_stats (one per process) live in memory shared by the processes; the
 * referee and the server's account turn them into a struct report, which
 * the report prints.
 *
 * Above --per-proc connections the work is split over several processes
 * (a process cannot hold more descriptors than RLIMIT_NOFILE); above
 * --per-src connections, over several loopback source addresses
 * (127.0.0.1, .2, ...) so the ephemeral ports do not run out. The
 * processes set up, then start together and finish together (the start
 * line, below).
 *
 * Exit: 0 pass; 1 a connection closed early or wrongly, a silent one never
 * closed, a connect failed or the server kept connections or timers;
 * 2 usage; 3 invalid run (the generator fell behind); 77 io_uring refused
 * by the kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "idle_load.h"

struct opts o = {
	.port = DEMO_DEFAULT_PORT,
	.conns = 10000,
	.silent_pct = 50,
	.idle_ms = DEMO_DEFAULT_IDLE_MS,
	.tolerance_ms = 50,
	.connect_timeout_ms = 5000,
	.inflight = 256,
	.per_proc = 0,
	.per_src = 10000,
	.stats = true,
	.seed = 42,
	.sq_entries = 4096,
};

/*
 * ---- Progress ----------------------------------------------------------------
 * One line at most once a second while connections are made and while the
 * server's idle closes come in, from the counters of every process: on a
 * terminal it overwrites itself (\r), elsewhere (a pipe, a log) it is a
 * line of its own, printed when it changed and at least every 5 s.
 */
static struct {
	struct proc_stats *ps;
	uint32_t nprocs, total, nsilent;
	uint64_t t0, next, last_print;
	bool on, tty, printed;
	char last[128];
} prog;

void progress(uint64_t now, bool force)
{
	if (!prog.on || (now < prog.next && !force))
		return;
	prog.next = now + ms_ns(1000);
	uint32_t conn = 0, failed = 0, done = 0, late = 0;
	for (uint32_t p = 0; p < prog.nprocs; p++) {
		conn += __atomic_load_n(&prog.ps[p].connected, __ATOMIC_RELAXED);
		failed += __atomic_load_n(&prog.ps[p].connect_failed, __ATOMIC_RELAXED);
		done += __atomic_load_n(&prog.ps[p].silent_done, __ATOMIC_RELAXED);
		late += __atomic_load_n(&prog.ps[p].silent_late, __ATOMIC_RELAXED);
	}
	char line[128];
	if (conn + failed < prog.total)
		snprintf(line, sizeof(line), "connecting: %u of %u connected, %u failed", conn, prog.total, failed);
	else if (done < prog.nsilent)
		snprintf(line, sizeof(line), "waiting for idle closes: %u of %u silent closed, %u late", done,
			 prog.nsilent, late);
	else
		snprintf(line, sizeof(line), "all %u silent closed, %u late; closing the chatty ones", prog.nsilent,
			 late);
	/* a pipe: a line when it changed, and every 5 s that it did not */
	if (!prog.tty && !strcmp(line, prog.last) && (force || now < prog.last_print + ms_ns(5000)))
		return;
	snprintf(prog.last, sizeof(prog.last), "%s", line);
	prog.last_print = now;
	printf(prog.tty ? "\r[%4.0f s] %s\033[K" : "[%4.0f s] %s\n", (double)(now - prog.t0) / 1e9, line);
	fflush(stdout);
	prog.printed = true;
}

/* The last progress line, and the end of an overwritten one. */
static void progress_end(void)
{
	if (!prog.on || !prog.printed)
		return;
	progress(demo_now_ns(), true);
	if (prog.tty)
		putchar('\n');
}

uint64_t rate_t0;

/*
 * The start line, in the memory the processes share: every process sets up
 * (its ring, its wheel, its connection table) before any starts, and they
 * start together, a little after the last is ready. Forked at once on one
 * core, the first ones' loops would otherwise wait for the others' set-up:
 * stalls of 170-600 ms at the start of a million-connection run, when no
 * connection can be late yet, that made the run INVALID.
 */
struct start_line {
	uint32_t ready;  /* processes set up */
	uint32_t done;   /* processes whose loop has ended (the finish line) */
	uint64_t go;     /* the start (CLOCK_MONOTONIC ns), 0 until all are ready */
};
struct start_line *the_start;

/* Wait at the start line (10 s at most: a process that failed its set-up
 * exits and never arrives); rate_t0 becomes the common start. */
void start_together(uint32_t nprocs)
{
	struct start_line *l = the_start;
	if (!l || nprocs == 1)
		return;
	if (__atomic_add_fetch(&l->ready, 1, __ATOMIC_ACQ_REL) == nprocs)
		__atomic_store_n(&l->go, demo_now_ns() + ms_ns(20), __ATOMIC_RELEASE);
	uint64_t go, give_up = demo_now_ns() + ms_ns(10000);
	while (!(go = __atomic_load_n(&l->go, __ATOMIC_ACQUIRE))) {
		if (demo_now_ns() >= give_up) {
			fprintf(stderr, "idle-load: not every process got ready in 10 s: starting anyway\n");
			return;
		}
		usleep(1000);
	}
	struct timespec ts = { .tv_sec = (time_t)(go / 1000000000u), .tv_nsec = (long)(go % 1000000000u) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	rate_t0 = go;
}
/*
 * The finish line: a process whose loop has ended (everything it opened
 * judged) waits for the others before it tears down its ring and its
 * connections and exits. Tearing down on the one core the others share,
 * while they still wait for their last closes, stalled them (118 ms at the
 * end of a million-connection run). 120 s at most (a process that died
 * never arrives; every loop ends by its own hard stop).
 */
void finish_together(uint32_t nprocs)
{
	struct start_line *l = the_start;
	if (!l || nprocs == 1)
		return;
	__atomic_add_fetch(&l->done, 1, __ATOMIC_ACQ_REL);
	uint64_t give_up = demo_now_ns() + ms_ns(120000);
	while (__atomic_load_n(&l->done, __ATOMIC_ACQUIRE) < nprocs) {
		if (demo_now_ns() >= give_up) {
			fprintf(stderr, "idle-load: not every process finished in 120 s: tearing down anyway\n");
			return;
		}
		usleep(2000);
	}
}

/* Generator processes: at most this many (each has a ring, a wheel and a
 * connection table, and forks on one machine as a fork bomb would). */
#define MAX_PROCS 4096u

/* The processes that @total connections take at @per_proc each. */
static uint32_t procs_for(uint32_t total, uint32_t per_proc)
{
	return total ? (uint32_t)(((uint64_t)total + per_proc - 1) / per_proc) : 1;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [options]\n"
		"  --host ADDR          server address, loopback only: 127.x.y.z or ::1\n"
		"                       (127.0.0.1, or ::1 with --family 6)\n"
		"  --family 4|6         address family: IPv4 or IPv6 (as --host says; 4)\n"
		"  --port N             server port (%d)\n"
		"  --conns N            connections to open (10000)\n"
		"  --silent PCT         percent of them left silent (50)\n"
		"  --abrupt N           extra abrupt clients: reset, half-close, vanish, flood in turn (0)\n"
		"  --idle-ms MS         the server's idle timeout (%d)\n"
		"  --ping-ms MS         chatty ping interval, +-25%% jitter (idle/4)\n"
		"  --tolerance-ms MS    lateness still counted on time (50)\n"
		"  --grace-ms MS        a silent connection open this long past the timeout was never closed (max(1000, idle))\n"
		"  --hold-ms MS         keep chatty connections this long past the timeout after the last connect\n"
		"                       (idle; 0 with --silent 100)\n"
		"  --heartbeat          speak the heartbeat protocol (PING/PONG) instead of echo\n"
		"  --http               speak HTTP/1.1 keep-alive: the ping is GET / and the reply a\n"
		"                       head starting \"HTTP/1.1 204 \" (headers read up to its blank line)\n"
		"  --inflight N         connects in flight at once (256)\n"
		"  --rate N             open at most N connections a second, over all processes\n"
		"                       (0: as fast as --inflight allows; 0)\n"
		"  --connect-timeout-ms MS  (5000)\n"
		"  --per-proc N         connections per generator process (RLIMIT_NOFILE - 256,\n"
		"                       or half of a limit of 512 or less)\n"
		"  --per-src N          connections per loopback source address (10000);\n"
		"                       IPv6 has one (::1), so at most N connections in all\n"
		"  --no-stats           do not query the server's STATS (a foreign server)\n"
		"  --server-pid PID     take server CPU from /proc/PID/stat (and its children)\n"
		"  --seed N             PRNG seed (42)\n"
		"  --quiet              only the summary (no progress lines)\n"
		"  --plot PREFIX        write PREFIX.csv (each silent close's lateness), PREFIX.gp and,\n"
		"                       with gnuplot installed, PREFIX.png: the share of closes by lateness\n"
		"  --trace PREFIX       write each silent connection to PREFIX.<process>:\n"
		"                       addr:port connect_submitted_ns established_ns close_seen_ns fin_arrived_ns\n"
		"                       (demo/trace_join.py joins it with idle-server --trace)\n"
		"  --debug-stall-ms MS  once every connection is open, stop for MS (tests the INVALID verdict)\n"
		"  --debug-sq-entries N  each ring's submission queue, 2 to 4096 (4096; tests a full one)\n"
		"  --dry-run            check the options and exit 0 (2 and one line if one is wrong)\n"
		"a run is INVALID when idle-load's timers ran late or its loop stalled longer than\n"
		"--tolerance-ms (10 at least), or it left a chatty connection silent a timeout,\n"
		"and no close or reply was wrong whatever that lag (an early close fails any run)\n"
		"exit: 0 pass, 1 fail, 2 usage, 3 invalid run (idle-load fell behind), 77 io_uring unavailable\n",
		prog, DEMO_DEFAULT_PORT, DEMO_DEFAULT_IDLE_MS);
}

static void parse_args(int argc, char **argv)
{
	const char *host = NULL;
	bool no_stats = false;
	/* UINT64_MAX: not given, derived from --idle-ms below */
	o.ping_ms = o.grace_ms = o.hold_ms = UINT64_MAX;
	const struct args_opt opts[] = {
		ARGS_STR("host", &host),
		ARGS_NUM("family", &o.family, 4, 6),
		ARGS_NUM("port", &o.port, 1, 65535),
		ARGS_NUM("conns", &o.conns, 0, 10000000),
		ARGS_NUM("silent", &o.silent_pct, 0, 100),
		ARGS_NUM("abrupt", &o.abrupt, 0, 1000000),
		ARGS_NUM("idle-ms", &o.idle_ms, 10, 3600000),
		ARGS_NUM("ping-ms", &o.ping_ms, 1, 3600000),
		ARGS_NUM("tolerance-ms", &o.tolerance_ms, 0, 3600000),
		ARGS_NUM("grace-ms", &o.grace_ms, 1, 3600000),
		ARGS_NUM("hold-ms", &o.hold_ms, 0, 3600000),
		ARGS_FLAG("heartbeat", &o.heartbeat),
		ARGS_FLAG("http", &o.http),
		ARGS_NUM("inflight", &o.inflight, 1, 65536),
		ARGS_NUM("rate", &o.rate, 0, 100000000),
		ARGS_NUM("connect-timeout-ms", &o.connect_timeout_ms, 1, 600000),
		ARGS_NUM("per-proc", &o.per_proc, 1, 10000000),
		ARGS_NUM("per-src", &o.per_src, 1, 60000),
		ARGS_FLAG("no-stats", &no_stats),
		ARGS_NUM("server-pid", &o.server_pid, 1, 1u << 30),
		ARGS_NUM("seed", &o.seed, 0, UINT64_MAX),
		ARGS_FLAG("quiet", &o.quiet),
		ARGS_STR("trace", &o.trace),
		ARGS_STR("plot", &o.plot),
		ARGS_NUM("debug-stall-ms", &o.stall_ms, 0, 3600000),
		ARGS_NUM("debug-sq-entries", &o.sq_entries, 2, 4096),
		ARGS_FLAG("dry-run", &o.dry_run),
		ARGS_END,
	};
	args_parse("idle-load", argc, argv, opts, usage);
	o.stats = !no_stats;
	if (o.heartbeat && o.http)
		args_fail("idle-load", "--heartbeat and --http are two protocols: one at most");
	if (o.family == 5)
		args_fail("idle-load", "--family needs 4 or 6, not '5'");
	if (!host)
		host = o.family == 6 ? "::1" : "127.0.0.1";
	if (demo_addr_parse(host, o.port, &o.host) != 0)
		args_fail("idle-load", "--host needs a loopback address (127.x.y.z or ::1), not '%s'", host);
	if (o.family && (o.family == 6) != (demo_addr_family(&o.host) == AF_INET6))
		args_fail("idle-load", "--host %s is not an IPv%u address (--family %u)", host, o.family, o.family);
	if (o.ping_ms == UINT64_MAX)
		o.ping_ms = o.idle_ms / 4 ? o.idle_ms / 4 : 1;
	if (o.grace_ms == UINT64_MAX)
		o.grace_ms = o.idle_ms > 1000 ? o.idle_ms : 1000;
	if (o.hold_ms == UINT64_MAX) /* no chatty connection: nothing to hold */
		o.hold_ms = o.silent_pct == 100 ? 0 : o.idle_ms;
	if (o.ping_ms * 5 / 4 >= o.idle_ms)
		args_fail("idle-load", "--ping-ms %" PRIu64 " (+25%% jitter) must stay below --idle-ms %" PRIu64,
			  o.ping_ms, o.idle_ms);
	unsigned nsrc = demo_addr_family(&o.host) == AF_INET6 ? 1 : 254;
	if ((uint64_t)o.conns + o.abrupt > (uint64_t)o.per_src * nsrc) /* source i / per_src */
		args_fail("idle-load", "--conns %u plus --abrupt %u are too many for --per-src %u%s", o.conns,
			  o.abrupt, o.per_src, nsrc == 1 ? " (IPv6 has one loopback source address)" : "");
	if (o.per_proc && procs_for(o.conns + o.abrupt, o.per_proc) > MAX_PROCS)
		args_fail("idle-load", "--conns %u plus --abrupt %u at --per-proc %u take %u processes, at most %u",
			  o.conns, o.abrupt, o.per_proc, procs_for(o.conns + o.abrupt, o.per_proc), MAX_PROCS);
}

/*
 * Kinds: the first @nsilent of a seeded shuffle are silent, the rest of
 * the --conns chatty; the abrupt clients are spread among them. Returns 0,
 * or -1 out of memory (message printed).
 */
static int assign_kinds(struct result *res, uint32_t total, uint32_t nsilent)
{
	struct demo_rng rng = demo_rng_seed(o.seed, 0);
	for (uint32_t i = 0; i < total; i++)
		res[i].kind = K_CHATTY;
	uint32_t *perm = malloc(sizeof(*perm) * (total ? total : 1));
	if (!perm) {
		perror("idle-load: malloc");
		return -1;
	}
	for (uint32_t i = 0; i < total; i++) {
		uint32_t j = (uint32_t)demo_rng_below(&rng, (uint64_t)i + 1);
		perm[i] = perm[j];
		perm[j] = i;
	}
	for (uint32_t i = 0; i < total; i++) {
		if (i < nsilent)
			res[perm[i]].kind = K_SILENT;
		else if (i >= o.conns)
			res[perm[i]].kind = (uint8_t)(K_RESET + (i - o.conns) % 4);
	}
	free(perm);
	return 0;
}

/* The progress line's counters and clock, from @t0 (on unless --quiet). */
static void progress_start(struct proc_stats *ps, uint32_t nprocs, uint32_t total, uint32_t nsilent,
			   uint64_t t0)
{
	prog.ps = ps;
	prog.nprocs = nprocs;
	prog.total = total;
	prog.nsilent = nsilent;
	prog.t0 = t0;
	prog.next = t0 + ms_ns(1000);
	prog.on = !o.quiet;
	prog.tty = isatty(STDOUT_FILENO);
}

/*
 * Wait for the @nprocs worker processes @pids, printing the progress line
 * meanwhile; count in *@fail_procs those that failed, and set each one
 * reaped to 0 in @pids. Returns 0, or DEMO_EXIT_NO_URING as soon as one
 * reports io_uring refused.
 */
static int wait_procs(pid_t *pids, uint32_t nprocs, int *fail_procs)
{
	for (uint32_t left = nprocs; left > 0;) {
		int st;
		pid_t pid = waitpid(-1, &st, WNOHANG);
		if (pid == 0 || (pid < 0 && errno == EINTR)) {
			progress(demo_now_ns(), false);
			usleep(100000);
			continue;
		}
		if (pid < 0)
			break;
		for (uint32_t p = 0; p < nprocs; p++)
			if (pids[p] == pid)
				pids[p] = 0;
		left--;
		if (WIFEXITED(st) && WEXITSTATUS(st) == DEMO_EXIT_NO_URING)
			return DEMO_EXIT_NO_URING;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			(*fail_procs)++;
	}
	return 0;
}

/* Kill the first @n worker processes and reap them (0: reaped already,
 * its pid maybe another process's now). They would wait at the start
 * line for the others, then run their connections with no one to judge
 * them. */
static void stop_procs(const pid_t *pids, uint32_t n)
{
	for (uint32_t p = 0; p < n; p++)
		if (pids[p] > 0)
			kill(pids[p], SIGKILL);
	for (uint32_t p = 0; p < n; p++)
		while (pids[p] > 0 && waitpid(pids[p], NULL, 0) < 0 && errno == EINTR)
			;
}

/*
 * Run the @total connections: in this process, or split over @nprocs
 * forked ones while this one reports their progress. Returns 0 with the
 * failed processes counted in *@fail_procs, or the exit status when the
 * run cannot go on (message printed).
 */
static int run_procs(struct result *res, struct proc_stats *ps, uint32_t total, uint32_t nprocs,
		     int *fail_procs)
{
	if (nprocs == 1) {
		run_worker(res, &ps[0], 0, total, 0, 1, true);
		return 0;
	}
	pid_t *pids = calloc(nprocs, sizeof(*pids));
	if (!pids) {
		perror("idle-load: calloc");
		return 1;
	}
	pid_t parent = getpid();
	for (uint32_t p = 0; p < nprocs; p++) {
		uint32_t lo = (uint32_t)((uint64_t)total * p / nprocs);
		uint32_t hi = (uint32_t)((uint64_t)total * (p + 1) / nprocs);
		pids[p] = fork();
		if (pids[p] < 0) {
			int e = errno;
			stop_procs(pids, p);
			fprintf(stderr, "idle-load: fork: %s (%u of %u processes started, stopped again)\n",
				strerror(e), p, nprocs);
			free(pids);
			return 1;
		}
		if (pids[p] == 0) {
			/* killed (demo.sh's SIGKILL 5 s after a SIGTERM, a crash),
			 * this process leaves no one to judge the run: its
			 * workers ran on, orphaned, to their own end */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
				_exit(1);
			_exit(run_worker(res, &ps[p], lo, hi, p, nprocs, false));
		}
	}
	/* the children work; this process reports their progress */
	int ret = wait_procs(pids, nprocs, fail_procs);
	if (ret)
		stop_procs(pids, nprocs); /* not left running, orphaned, when we give up */
	free(pids);
	return ret;
}
/* What the run is, before it starts (unless --quiet). */
static void print_banner(uint32_t total, uint32_t nsilent, uint32_t nprocs)
{
	if (!o.quiet) {
		printf("idle-load: %u connections to %s:%u, idle timeout %" PRIu64 " ms, %u process%s\n"
		       "  %u silent, %u chatty, %u abrupt, ",
		       total, o.host.text, o.port, o.idle_ms, nprocs, nprocs == 1 ? "" : "es", nsilent,
		       o.conns - nsilent, o.abrupt);
		if (o.rate)
			printf("opened at %u a second (--rate)\n", o.rate);
		else
			printf("opened as fast as %u connects in flight allow\n", o.inflight);
	}
	fflush(stdout);
}

/*
 * After the run: the referee's tally, the server's account, the verdict,
 * the plot and the summary. Returns the exit status (0 pass, 1 fail,
 * 3 invalid).
 */
static int judge_and_report(struct report *r, const struct result *res, const struct proc_stats *ps)
{
	if (tally(r, res, ps) != 0) {
		fprintf(stderr, "idle-load: out of memory for the summary\n");
		return 1;
	}
	measure_cpu(r);
	judge_run(r);
	if (o.plot)
		write_plot(r, res);
	print_summary(r);
	free(r->late);
	free(r->seen);
	free(r->setup);
	return r->invalid ? 3 : r->pass ? 0 : 1;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	if (o.dry_run)
		return 0;
	signal(SIGPIPE, SIG_IGN);

	rlim_t nofile = demo_raise_nofile(1u << 20);
	if (!o.per_proc)
		/* what a process may hold, less room for its other descriptors
		 * (a fixed 256 of a small limit left it none: EMFILE) */
		o.per_proc = nofile > 512 ? (uint32_t)(nofile - 256) : nofile > 2 ? (uint32_t)(nofile / 2) : 1;

	uint32_t total = o.conns + o.abrupt;
	uint32_t nsilent = (uint32_t)(((uint64_t)o.conns * o.silent_pct + 50) / 100);
	uint32_t nprocs = procs_for(total, o.per_proc);
	if (nprocs > MAX_PROCS) { /* the default --per-proc, from a low RLIMIT_NOFILE */
		fprintf(stderr, "idle-load: %u connections at %u a process (RLIMIT_NOFILE %llu) take %u processes, "
			"at most %u: raise ulimit -n or --per-proc\n", total, o.per_proc, (unsigned long long)nofile,
			nprocs, MAX_PROCS);
		return 2;
	}

	size_t res_bytes = sizeof(struct result) * (total ? total : 1);
	size_t ps_bytes = sizeof(struct proc_stats) * nprocs;
	void *shm = mmap(NULL, res_bytes + ps_bytes + sizeof(struct start_line), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("idle-load: mmap");
		return 1;
	}
	struct result *res = shm;
	struct proc_stats *ps = (struct proc_stats *)((char *)shm + res_bytes);
	the_start = (struct start_line *)((char *)ps + ps_bytes);
	if (assign_kinds(res, total, nsilent) != 0)
		return 1;

	print_banner(total, nsilent, nprocs);

	struct demo_machine m_start = demo_machine_read();
	uint64_t t0 = demo_now_ns();
	rate_t0 = t0; /* --rate's schedule, the same in every process */
	progress_start(ps, nprocs, total, nsilent, t0);
	int fail_procs = 0;
	int ret = run_procs(res, ps, total, nprocs, &fail_procs);
	if (ret)
		return ret;
	progress_end();
	uint64_t t_end = demo_now_ns();

	struct report r = { .total = total, .nsilent = nsilent, .nprocs = nprocs, .fail_procs = fail_procs,
			    .wall_s = (double)(t_end - t0) / 1e9, .m_start = m_start, .m_end = demo_machine_read() };
	ret = judge_and_report(&r, res, ps);
	munmap(shm, res_bytes + ps_bytes);
	return ret;
}
