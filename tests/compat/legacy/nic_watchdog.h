/* The pre-4.15 legacy program's entry points, for its drivers
 * (legacy/programs.h). */
#ifndef NIC_WATCHDOG_H
#define NIC_WATCHDOG_H

struct nic_report {
	unsigned int packets, completed, resets, link_polls, led_blinks, stats_runs;
	unsigned int cmd_timeouts;     /* the on-stack command timer fired */
	unsigned int wrong_returns;    /* mod_timer()/del_timer() returned otherwise */
	unsigned int early;            /* timers that fired before their expiry */
	unsigned long max_late;        /* jiffies */
	int pending;                   /* timers still pending at the end */
};

void nic_start(void);
int nic_done(void);
void nic_result(struct nic_report *out);

#endif
