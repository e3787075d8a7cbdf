/*
 * arp_watchdog.c - a legacy-style program, written as FreeBSD network code
 * is: address resolution with a per-entry callout that retransmits the
 * request (arp_maxtries, then the entry is dropped) and later expires the
 * resolved entry, a wire whose packets are delayed by callout_reset_sbt(),
 * and an interface watchdog that reschedules itself and is stopped and
 * drained on detach. Each entry's callout runs with the entry's write
 * lock held and releases it itself (callout_init_rw() with
 * CALLOUT_RETURNUNLOCKED, as FreeBSD 10's arptimer() does), and still
 * uses the manual's pending/active/deactivate pattern; an expired entry
 * is unlinked by its callout, which asks callout_async_drain() to free
 * it once the callout has returned (as TCP frees its tcpcb through
 * tcp_timer_discard()); the watchdog runs
 * with the softc mutex held (callout_init_mtx(), as most drivers' tick
 * does). The only lines that are not FreeBSD code are the includes of
 * "bsd_locks.h" (the port's <sys/mutex.h> and <sys/rwlock.h>, which tells
 * the callout layer how to lock) and <twheel/compat/callout.h>; the same
 * file is compiled, unchanged, into a driver for the io_uring loop and
 * one for libuv (run_loop.c, run_uv.c).
 *
 * Deterministic in what happens: 8 addresses; 6 answer the first request,
 * one the third, one never (dropped after 5 tries): 14 requests, 7
 * entries resolved, then expired; the watchdog is still pending when the
 * interface detaches. Each handler checks with ticks that it did not fire
 * early.
 */
#include <stdlib.h>

#include "bsd_locks.h"
#include <twheel/compat/callout.h>

#include "arp_watchdog.h"

#define	NADDR		8
#define	ARP_REXMIT	(hz / 10)		/* 100 ms */
#define	ARP_MAXTRIES	5
#define	ARPT_KEEP	(hz / 5)		/* 200 ms */
#define	WIRE_DELAY	(3 * SBT_1MS)
#define	WD_PERIOD	(hz / 20)		/* 50 ms */

struct llentry {
	struct rwlock	lle_lock;
	int		la_addr;
	int		la_asked;	/* requests sent */
	int		la_resolved;
	int		la_due;		/* ticks the callout is due at */
	struct callout	la_timer;
};

struct mbuf {				/* a packet on the wire */
	int		m_reply;
	int		m_addr;
	int		m_sent;		/* ticks */
	struct callout	m_co;
};

#define	LLE_WLOCK(la)		rw_wlock(&(la)->lle_lock)
#define	LLE_WUNLOCK(la)		rw_wunlock(&(la)->lle_lock)
#define	LLE_WLOCK_ASSERT(la)	rw_assert(&(la)->lle_lock, RA_WLOCKED)

struct nic_softc {
	struct mtx	sc_mtx;
	int		sc_wd_due;
	struct callout	sc_watchdog;
};

#define	NIC_LOCK(sc)		mtx_lock(&(sc)->sc_mtx)
#define	NIC_UNLOCK(sc)		mtx_unlock(&(sc)->sc_mtx)
#define	NIC_LOCK_ASSERT(sc)	mtx_assert(&(sc)->sc_mtx, MA_OWNED)

static struct nic_softc nic;
static struct llentry *lltable[NADDR];
static struct arp_report rep;
static int peer_asked[NADDR];

static void
check_due(int due)
{
	if (ticks - due < 0)
		rep.early++;
}

static void wire_deliver(void *arg);
static void arptimer(void *arg);

static void
wire_send(int reply, int addr)
{
	struct mbuf *m;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		abort();
	m->m_reply = reply;
	m->m_addr = addr;
	m->m_sent = ticks;
	callout_init(&m->m_co, 1);
	callout_reset_sbt(&m->m_co, WIRE_DELAY, 0, wire_deliver, m, 0);
}

static void
arprequest(struct llentry *la)
{
	LLE_WLOCK_ASSERT(la);
	la->la_asked++;
	rep.requests++;
	wire_send(0, la->la_addr);
	la->la_due = ticks + ARP_REXMIT;
	callout_reset(&la->la_timer, ARP_REXMIT, arptimer, la);
}

/* The peers: address 6 answers its third request, 7 never answers. */
static void
peer_input(int addr)
{
	peer_asked[addr]++;
	if (addr == 7 || (addr == 6 && peer_asked[addr] < 3))
		return;
	wire_send(1, addr);
}

static void
arpintr(int addr)
{
	struct llentry *la = lltable[addr];

	if (la == NULL)
		return;
	LLE_WLOCK(la);
	if (la->la_resolved) {
		LLE_WUNLOCK(la);
		return;
	}
	la->la_resolved = 1;
	rep.resolved++;
	la->la_due = ticks + ARPT_KEEP;
	if (callout_reset(&la->la_timer, ARPT_KEEP, arptimer, la) != 1)
		rep.bad_returns++;	/* the rexmit callout was pending */
	LLE_WUNLOCK(la);
}

/* Called with the entry locked: unlocks and frees it. */
static void
llentry_free(struct llentry *la)
{
	LLE_WLOCK_ASSERT(la);
	lltable[la->la_addr] = NULL;
	LLE_WUNLOCK(la);
	rw_destroy(&la->lle_lock);
	free(la);
}

/* The expiry callout's drain function: the entry is unlinked and its
 * callout has returned, unlocked; nothing touches it after this. */
static void
llentry_drained(void *arg)
{
	struct llentry *la = arg;

	rep.drained++;
	rw_destroy(&la->lle_lock);
	free(la);
}

static void
wire_deliver(void *arg)
{
	struct mbuf *m = arg;

	if (ticks - m->m_sent < WIRE_DELAY / tick_sbt)
		rep.early++;
	if (m->m_reply)
		arpintr(m->m_addr);
	else
		peer_input(m->m_addr);
	free(m);			/* freed from its own function */
}

static void
arptimer(void *arg)
{
	struct llentry *la = arg;

	LLE_WLOCK_ASSERT(la);
	check_due(la->la_due);
	if (callout_pending(&la->la_timer) || !callout_active(&la->la_timer)) {
		LLE_WUNLOCK(la);
		return;
	}
	callout_deactivate(&la->la_timer);
	if (la->la_resolved) {
		rep.expired++;
		/* being serviced: 0, and llentry_drained() once we return */
		if (callout_async_drain(&la->la_timer, llentry_drained) != 0)
			rep.bad_returns++;
		lltable[la->la_addr] = NULL;
		LLE_WUNLOCK(la);
		return;
	}
	if (la->la_asked >= ARP_MAXTRIES) {
		rep.dropped++;
		llentry_free(la);
		return;
	}
	arprequest(la);
	LLE_WUNLOCK(la);
}

static void
nic_watchdog(void *arg)
{
	struct nic_softc *sc = arg;

	NIC_LOCK_ASSERT(sc);
	check_due(sc->sc_wd_due);
	rep.watchdog_runs++;
	sc->sc_wd_due = ticks + WD_PERIOD;
	callout_reset(&sc->sc_watchdog, WD_PERIOD, nic_watchdog, sc);
}

void
arp_start(void)
{
	struct llentry *la;
	int i;

	mtx_init(&nic.sc_mtx);
	callout_init_mtx(&nic.sc_watchdog, &nic.sc_mtx, 0);
	NIC_LOCK(&nic);
	nic.sc_wd_due = ticks + WD_PERIOD;
	callout_reset(&nic.sc_watchdog, WD_PERIOD, nic_watchdog, &nic);
	NIC_UNLOCK(&nic);
	rep.start = ticks;
	for (i = 0; i < NADDR; i++) {
		la = calloc(1, sizeof(*la));
		if (la == NULL)
			abort();
		la->la_addr = i;
		rw_init(&la->lle_lock);
		callout_init_rw(&la->la_timer, &la->lle_lock,
		    CALLOUT_RETURNUNLOCKED);
		lltable[i] = la;
		LLE_WLOCK(la);
		arprequest(la);
		LLE_WUNLOCK(la);
	}
}

int
arp_idle(void)
{
	int i;

	for (i = 0; i < NADDR; i++)
		if (lltable[i] != NULL)
			return (0);
	return (1);
}

void
arp_detach(struct arp_report *out)
{
	rep.end = ticks;
	NIC_LOCK(&nic);
	rep.stop_rc = callout_stop(&nic.sc_watchdog);
	NIC_UNLOCK(&nic);
	rep.drain_rc = callout_drain(&nic.sc_watchdog);
	rep.pending = callout_pending(&nic.sc_watchdog) || callout_active(&nic.sc_watchdog);
	mtx_destroy(&nic.sc_mtx);
	*out = rep;
}
