/* SPDX-License-Identifier: MIT */
/*
 * idle_load_stats.c - the server's own account of the run: once the
 * generator is done, idle-load asks the server for its STATS line (see
 * demo_common.h) until every server worker reports no connection and no
 * pending timer, and takes the server's CPU seconds from it (or from
 * /proc/<pid>/stat with --server-pid and --no-stats). measure_cpu() puts
 * both in struct report (r->sv, r->cpu_*), with the generator's own CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "idle_load.h"

/*
 * One STATS request, given up at @end_ns (CLOCK_MONOTONIC, demo_now_ns())
 * or 1 s after it began, whichever comes first, however the server
 * trickles its reply; returns 0 and fills @line, or -errno (-ETIMEDOUT).
 */
static int stats_once(char *line, size_t len, uint64_t end_ns)
{
	uint64_t now = demo_now_ns();
	if (end_ns > now + 1000000000u)
		end_ns = now + 1000000000u;
	int fd = socket(demo_addr_family(&o.host), SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	int ret = -ETIMEDOUT;
	for (bool sent = false; (now = demo_now_ns()) < end_ns;) {
		uint64_t left_us = (end_ns - now) / 1000u + 1;
		struct timeval tv = { (time_t)(left_us / 1000000u), (suseconds_t)(left_us % 1000000u) };
		if (setsockopt(fd, SOL_SOCKET, sent ? SO_RCVTIMEO : SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
			ret = -errno;
			break;
		}
		if (!sent) {
			if (connect(fd, &o.host.u.sa, o.host.len) != 0 ||
			    send(fd, DEMO_STATS_REQ, DEMO_STATS_REQ_LEN, MSG_NOSIGNAL) != DEMO_STATS_REQ_LEN) {
				ret = errno == EINPROGRESS ? -ETIMEDOUT : -errno;
				break;
			}
			sent = true;
			continue;
		}
		if (got + 1 >= len) {
			ret = -EPROTO; /* no line end in DEMO_STATS_MAX bytes */
			break;
		}
		ssize_t r = recv(fd, line + got, len - 1 - got, 0);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue; /* the time is checked above */
		if (r <= 0) {
			ret = r == 0 ? -EPROTO : -errno;
			break;
		}
		got += (size_t)r;
		if (memchr(line, '\n', got)) {
			ret = 0;
			break;
		}
	}
	line[got] = '\0';
	close(fd);
	if (!ret && strncmp(line, "STATS ", 6) != 0)
		ret = -EPROTO;
	return ret;
}

/* What one server worker said in its last STATS line. */
struct worker_said {
	bool heard;  /* a line from it came */
	bool counts; /* its last line gave conns and timers, whole numbers */
	bool done;   /* no connection, no pending timer */
	bool has_tm; /* every timing field there */
	uint64_t conns, timers, emfile, accepted, idle_closed, utime_us, stime_us;
	uint64_t tm[ST__N];
};

static void read_worker(const char *line, struct worker_said *x)
{
	x->heard = true;
	x->counts = demo_stats_get(line, "conns", &x->conns) == 0 && demo_stats_get(line, "timers", &x->timers) == 0;
	demo_stats_get(line, "emfile", &x->emfile);
	demo_stats_get(line, "accepted", &x->accepted);
	demo_stats_get(line, "idle_closed", &x->idle_closed);
	demo_stats_get(line, "utime_us", &x->utime_us);
	demo_stats_get(line, "stime_us", &x->stime_us);
	x->has_tm = true;
	for (int k = 0; k < ST__N; k++)
		if (demo_stats_get(line, st_keys[k], &x->tm[k]) != 0)
			x->has_tm = false;
	x->done = x->counts && x->conns == 0 && x->timers == 0;
}

/* The workers' counters summed into @v, their timing the worst of them. */
static void sum_workers(struct server_view *v, const struct worker_said *ws)
{
	v->timing = v->workers > 0;
	for (uint32_t i = 0; i < v->workers; i++) {
		const struct worker_said *x = &ws[i];
		v->heard += x->heard;
		v->uncounted += x->heard && !x->counts;
		v->conns += x->conns;
		v->timers += x->timers;
		v->emfile += x->emfile;
		v->accepted += x->accepted;
		v->idle_closed += x->idle_closed;
		v->cpu_user += (double)x->utime_us / 1e6;
		v->cpu_sys += (double)x->stime_us / 1e6;
		v->timing = v->timing && x->has_tm;
		for (int k = 0; k < ST__N; k++) {
			if (k == ST_FIRE_N)
				v->tm[k] += x->tm[k];
			else if (x->tm[k] > v->tm[k])
				v->tm[k] = x->tm[k];
		}
	}
	v->ok = v->workers > 0 && v->seen == v->workers;
}

/*
 * Ask the server until each of its workers has reported no connection and
 * no pending timer, for up to @ms milliseconds, or 100 ms a worker when
 * that is longer. A worker is chosen by the kernel (SO_REUSEPORT) for each
 * request, so we keep asking until we have heard from all of them.
 */
static struct server_view query_server(uint64_t ms)
{
	struct server_view v = { 0 };
	enum { MAXW = 256 };
	static struct worker_said ws[MAXW];
	memset(ws, 0, sizeof(ws));
	uint64_t deadline = demo_now_ns() + ms_ns(ms);
	char line[DEMO_STATS_MAX];
	while (demo_now_ns() < deadline) {
		int ret = stats_once(line, sizeof(line), deadline);
		uint64_t wk = 0, nw = 0;
		if (ret == 0 && demo_stats_get(line, "worker", &wk) == 0 &&
		    demo_stats_get(line, "workers", &nw) == 0 && nw > 0 && nw <= MAXW && wk < nw) {
			if (!v.workers) {
				/* SO_REUSEPORT picks the worker that answers: seeing
				 * each of nw takes about nw * ln(nw) requests */
				uint64_t need = demo_now_ns() + ms_ns(100 * nw);
				if (need > deadline)
					deadline = need;
			}
			v.workers = (uint32_t)nw;
			read_worker(line, &ws[wk]);
			uint32_t seen = 0;
			for (uint32_t i = 0; i < nw; i++)
				seen += ws[i].done;
			v.seen = seen;
			/* a worker that leaves its counts out will not give them
			 * if asked again: the server cannot be shown clean */
			if (seen == nw || !ws[wk].counts)
				break;
		} else if (ret != 0 && ret != -EINTR && !o.quiet) { /* EINTR: just ask again */
			fprintf(stderr, "idle-load: STATS request: %s\n", strerror(-ret));
		}
		usleep(5000);
	}
	sum_workers(&v, ws);
	return v;
}

/* utime and stime of @pid and of its children (its worker processes), in seconds. */
static int proc_cpu(long pid, double *user, double *sys)
{
	long hz = sysconf(_SC_CLK_TCK);
	DIR *d = opendir("/proc");
	if (!d || hz <= 0)
		return -errno;
	struct dirent *de;
	int found = 0;
	*user = *sys = 0;
	while ((de = readdir(d)) != NULL) {
		char path[300], buf[1024];
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *p = strrchr(buf, ')'); /* the command name may hold spaces */
		long self = strtol(de->d_name, NULL, 10), ppid;
		unsigned long ut, st;
		if (!p || sscanf(p + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				 &ppid, &ut, &st) != 3)
			continue;
		if (self == pid || ppid == pid) {
			*user += (double)ut / (double)hz;
			*sys += (double)st / (double)hz;
			found = 1;
		}
	}
	closedir(d);
	return found ? 0 : -ESRCH;
}

/*
 * CPU seconds: the server's from its STATS (unless --no-stats), else from
 * /proc with --server-pid, else unknown (-1); the generator's own,
 * children included, from getrusage().
 */
void measure_cpu(struct report *r)
{
	r->cpu_user = r->cpu_sys = -1;
	if (o.stats) {
		r->sv = query_server(5000);
		if (r->sv.workers) {
			r->cpu_user = r->sv.cpu_user;
			r->cpu_sys = r->sv.cpu_sys;
		}
	}
	if (o.server_pid && (!o.stats || !r->sv.workers) && proc_cpu(o.server_pid, &r->cpu_user, &r->cpu_sys) != 0) {
		fprintf(stderr, "idle-load: cannot read /proc/%u/stat\n", o.server_pid);
		r->cpu_user = r->cpu_sys = -1;
	}
	struct rusage ru_self, ru_kids;
	getrusage(RUSAGE_SELF, &ru_self);
	getrusage(RUSAGE_CHILDREN, &ru_kids);
	r->gen_cpu = (double)(ru_self.ru_utime.tv_sec + ru_self.ru_stime.tv_sec + ru_kids.ru_utime.tv_sec +
			      ru_kids.ru_stime.tv_sec) +
		     (double)(ru_self.ru_utime.tv_usec + ru_self.ru_stime.tv_usec + ru_kids.ru_utime.tv_usec +
			      ru_kids.ru_stime.tv_usec) / 1e6;
}
