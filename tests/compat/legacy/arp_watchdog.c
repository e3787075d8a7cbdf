/*
 * arp_watchdog.c - a legacy-style program, written as FreeBSD network code
 * is: address resolution with a per-entry callout that retransmits the
 * request (arp_maxtries, then the entry is dropped) and later expires the
 * resolved entry, a wire whose packets are delayed by callout_reset_sbt(),
 * and an interface watchdog that reschedules itself with the manual's
 * pending/active/deactivate pattern and is drained on detach. The only
 * line that is not FreeBSD code is the include of
 * <twheel/compat/callout.h>; the same file is compiled, unchanged, into a
 * driver for the io_uring loop and one for libuv (run_loop.c, run_uv.c).
 *
 * Deterministic in what happens: 8 addresses; 6 answer the first request,
 * one the third, one never (dropped after 5 tries): 14 requests, 7
 * entries resolved, then expired; the watchdog is still pending when the
 * interface detaches. Each handler checks with ticks that it did not fire
 * early.
 */
#include <stdlib.h>
#include <twheel/compat/callout.h>

#include "arp_watchdog.h"

#define	NADDR		8
#define	ARP_REXMIT	(hz / 10)		/* 100 ms */
#define	ARP_MAXTRIES	5
#define	ARPT_KEEP	(hz / 5)		/* 200 ms */
#define	WIRE_DELAY	(3 * SBT_1MS)
#define	WD_PERIOD	(hz / 20)		/* 50 ms */

struct llentry {
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

struct nic_softc {
	int		sc_wd_due;
	struct callout	sc_watchdog;
};

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

	if (la == NULL || la->la_resolved)
		return;
	la->la_resolved = 1;
	rep.resolved++;
	la->la_due = ticks + ARPT_KEEP;
	if (callout_reset(&la->la_timer, ARPT_KEEP, arptimer, la) != 1)
		rep.bad_returns++;	/* the rexmit callout was pending */
}

static void
llentry_free(struct llentry *la)
{
	lltable[la->la_addr] = NULL;
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

	check_due(la->la_due);
	if (callout_pending(&la->la_timer) || !callout_active(&la->la_timer))
		return;
	callout_deactivate(&la->la_timer);
	if (la->la_resolved) {
		rep.expired++;
		if (callout_stop(&la->la_timer) != 0)	/* being serviced: 0 */
			rep.bad_returns++;
		llentry_free(la);
		return;
	}
	if (la->la_asked >= ARP_MAXTRIES) {
		rep.dropped++;
		llentry_free(la);
		return;
	}
	arprequest(la);
}

static void
nic_watchdog(void *arg)
{
	struct nic_softc *sc = arg;

	check_due(sc->sc_wd_due);
	if (callout_pending(&sc->sc_watchdog))
		return;			/* callout was reset */
	if (!callout_active(&sc->sc_watchdog))
		return;			/* callout was stopped */
	callout_deactivate(&sc->sc_watchdog);
	rep.watchdog_runs++;
	sc->sc_wd_due = ticks + WD_PERIOD;
	callout_schedule(&sc->sc_watchdog, WD_PERIOD);
}

void
arp_start(void)
{
	struct llentry *la;
	int i;

	callout_init(&nic.sc_watchdog, 1);
	nic.sc_wd_due = ticks + WD_PERIOD;
	callout_reset(&nic.sc_watchdog, WD_PERIOD, nic_watchdog, &nic);
	rep.start = ticks;
	for (i = 0; i < NADDR; i++) {
		la = calloc(1, sizeof(*la));
		if (la == NULL)
			abort();
		la->la_addr = i;
		callout_init(&la->la_timer, 1);
		lltable[i] = la;
		arprequest(la);
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
	rep.drain_rc = callout_drain(&nic.sc_watchdog);
	rep.pending = callout_pending(&nic.sc_watchdog) || callout_active(&nic.sc_watchdog);
	*out = rep;
}
