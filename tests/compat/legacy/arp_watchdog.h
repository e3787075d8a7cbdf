/* The legacy program's entry points, for its drivers (legacy/programs.h). */
#ifndef ARP_WATCHDOG_H
#define ARP_WATCHDOG_H

struct arp_report {
	int start, end;               /* ticks */
	int requests, resolved, expired, dropped;
	int drained;                  /* entries freed by callout_async_drain()'s function */
	int watchdog_runs;
	int early;                    /* callouts that fired before their time */
	int bad_returns;              /* callout(9) return values not as documented */
	int stop_rc;                  /* callout_stop() of the pending watchdog, its lock held */
	int drain_rc;                 /* callout_drain() after it */
	int pending;                  /* watchdog pending or active after the drain */
};

void arp_start(void);
int arp_idle(void);
void arp_detach(struct arp_report *out);

#endif
