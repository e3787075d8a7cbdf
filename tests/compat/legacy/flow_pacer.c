/*
 * flow_pacer.c - a legacy-style program on a plain wheel, written as
 * FreeBSD network code is: a flow table behind a read-mostly lock that a
 * callout scans under the read lock (callout_init_rm(),
 * CALLOUT_SHAREDLOCK), re-armed with mstosbt() and C_HARDCLOCK; a packet
 * pacer re-armed from its function for gaps of ustosbt() with C_PREL();
 * a keepalive whose time callout_when() computes and C_PRECALC arms; a
 * statistics tick in callout(9)'s handler pattern (callout_pending(),
 * callout_active(), callout_deactivate(), callout_schedule()). It runs
 * across the sign flip of ticks, tick by tick, and checks that each
 * function runs with its lock as asked, at or after its time by
 * sbinuptime(), and the return values of callout(9). Built as
 * sys/conf/kern.mk builds (c99, -fwrapv), warnings as errors, at hz
 * 1000 and 100 (meson.build). Exit 0 pass, 1 fail, with a line of what
 * happened.
 */
#include <stdio.h>
#include <pthread.h>

/* The port's <sys/rmlock.h>: a read-mostly lock, and how callouts take it. */
struct rmlock {
	pthread_rwlock_t l;
	int readers, writer;
};
struct rm_priotracker {
	int unused;
};

static void rm_rlock(struct rmlock *rm, struct rm_priotracker *tr)
{
	(void)tr;
	pthread_rwlock_rdlock(&rm->l);
	__atomic_add_fetch(&rm->readers, 1, __ATOMIC_RELAXED);
}

static void rm_runlock(struct rmlock *rm, struct rm_priotracker *tr)
{
	(void)tr;
	__atomic_sub_fetch(&rm->readers, 1, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&rm->l);
}

static void rm_wlock(struct rmlock *rm)
{
	pthread_rwlock_wrlock(&rm->l);
	rm->writer = 1;
}

static void rm_wunlock(struct rmlock *rm)
{
	rm->writer = 0;
	pthread_rwlock_unlock(&rm->l);
}

#define TWHEEL_CALLOUT_RM_WLOCK(rm) rm_wlock(rm)
#define TWHEEL_CALLOUT_RM_WUNLOCK(rm) rm_wunlock(rm)
#define TWHEEL_CALLOUT_RM_RLOCK(rm, tr) rm_rlock(rm, tr)
#define TWHEEL_CALLOUT_RM_RUNLOCK(rm, tr) rm_runlock(rm, tr)
#include <twheel/compat/callout.h>

/* A return value, lock or time FreeBSD would not give: said, and counted. */
#define BAD(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); sc->bad++; } } while (0)

struct softc {
	struct rmlock table_lock;
	struct callout scan, pace, keepalive, stats;
	int scans, paced, keepalives, stats_runs, bad, sent;
	int last_stats_ticks;
	sbintime_t pace_last, pace_gap, ka_at;
};

static void scan_fn(void *arg)
{
	struct softc *sc = arg;

	BAD(sc->table_lock.readers == 1 && !sc->table_lock.writer);
	if (++sc->scans < 5)
		BAD(callout_reset_sbt(&sc->scan, mstosbt(100), 0, scan_fn, sc, C_HARDCLOCK) == 0);
}

static void pace_fn(void *arg)
{
	struct softc *sc = arg;
	sbintime_t now = sbinuptime();

	if (sc->pace_last)
		BAD(now - sc->pace_last >= sc->pace_gap);
	BAD(sbttous(now - sc->pace_last) >= 0);
	sc->pace_last = now;
	sc->paced++;
	if (++sc->sent < 50) {
		sc->pace_gap = ustosbt(1500 + 700 * (sc->sent % 5));
		BAD(callout_reset_sbt(&sc->pace, sc->pace_gap, SBT_1US * 100, pace_fn, sc, C_PREL(3)) == 0);
	}
}

static void ka_fn(void *arg)
{
	struct softc *sc = arg;

	BAD(sbinuptime() >= sc->ka_at);
	BAD(sbinuptime() - sc->ka_at < tick_sbt + 2);
	sc->keepalives++;
}

static void stats_fn(void *arg)
{
	struct softc *sc = arg;

	if (callout_pending(&sc->stats))
		return;
	if (!callout_active(&sc->stats))
		return;
	callout_deactivate(&sc->stats);
	BAD(ticks - sc->last_stats_ticks == hz / 4);
	sc->last_stats_ticks = ticks;
	if (++sc->stats_runs < 8)
		callout_schedule(&sc->stats, hz / 4);
}

int main(void)
{
	static struct softc s;
	struct softc *sc = &s;
	struct twheel *w = twheel_create(99);
	sbintime_t when, prec;
	int start;

	pthread_rwlock_init(&sc->table_lock.l, NULL);
	twheel_compat_bind_wheel(w);
	twheel_advance(w, twheel_now(w) + (tw_tick_t)(600 * hz - hz / 2)); /* ticks turns negative in 0.5 s */
	start = ticks;
	callout_init_rm(&sc->scan, &sc->table_lock, CALLOUT_SHAREDLOCK);
	callout_init(&sc->pace, 1);
	callout_init(&sc->keepalive, 1);
	callout_init(&sc->stats, 1);
	BAD(callout_reset_sbt(&sc->scan, mstosbt(100), 0, scan_fn, sc, C_HARDCLOCK) == 0);
	sc->pace_gap = ustosbt(1500);
	BAD(callout_reset_sbt_on(&sc->pace, sc->pace_gap, 0, pace_fn, sc, 2, C_PREL(3)) == 0);
	callout_when(mstosbt(750), 0, C_HARDCLOCK, &when, &prec);
	sc->ka_at = when;
	BAD(prec == mstosbt(750) >> 4);
	BAD(callout_reset_sbt(&sc->keepalive, when, prec, ka_fn, sc, C_PRECALC | C_HARDCLOCK) == 0);
	sc->last_stats_ticks = ticks;
	BAD(callout_reset(&sc->stats, hz / 4, stats_fn, sc) == 0);
	while (twheel_count(w))
		twheel_advance(w, twheel_now(w) + 1);
	BAD(sc->scans == 5 && sc->paced == 50 && sc->keepalives == 1 && sc->stats_runs == 8);
	BAD(callout_stop(&sc->stats) == -1 && callout_drain(&sc->scan) == -1);
	BAD(!callout_active(&sc->stats) && !callout_active(&sc->scan));
	BAD(start > 0 && ticks < 0);
	printf("flow_pacer, hz %d: ticks %d to %d; %d scans under the read lock, %d packets paced, %d keepalive,"
	       " %d statistics ticks; %d unexpected\n",
	       hz, start, ticks, sc->scans, sc->paced, sc->keepalives, sc->stats_runs, sc->bad);
	twheel_compat_unbind();
	twheel_destroy(w);
	return sc->bad != 0;
}
