/* What both drivers check of the callout program's run. 0 pass, 1 fail. */
#include <stdio.h>

#include "arp_watchdog.h"

static int check_arp(const char *where, const struct arp_report *r)
{
	/* 14 requests when every callout runs within its margins; a loaded
	 * machine that delivers a reply after the 100 ms retransmission timer
	 * adds requests (a late timer, never an early one), nothing else. */
	int ok = r->requests >= 14 && r->resolved == 7 && r->expired == 7 && r->drained == 7 && r->dropped == 1 &&
		 r->early == 0 && r->bad_returns == 0 && r->stop_rc == 1 && r->drain_rc == -1 && r->pending == 0 &&
		 r->watchdog_runs > 0;

	printf("%s: %d ARP requests, %d resolved, %d expired (%d freed by the drain function), %d dropped after 5 tries;"
	       " %d watchdog runs, stopped under its lock (callout_stop() = %d) and drained"
	       " (callout_drain() = %d); %d ticks in all;"
	       " early fires %d, unexpected return values %d\n",
	       where, r->requests, r->resolved, r->expired, r->drained, r->dropped, r->watchdog_runs,
	       r->stop_rc, r->drain_rc, r->end - r->start, r->early, r->bad_returns);
	if (!ok)
		printf("FAIL: expected 14 requests (more only if late), 7 resolved, expired and drained, 1 dropped, stop 1, drain -1,"
		       " no early fire\n");
	return ok ? 0 : 1;
}
