/* The legacy program's entry points, for its drivers (legacy/programs.h). */
#ifndef RTX_KEEPALIVE_H
#define RTX_KEEPALIVE_H

struct rtx_report {
	unsigned long start, end;      /* jiffies */
	unsigned int segments, delivered, duplicates;
	unsigned int transmissions, retransmissions;
	unsigned int probes, dead_at_probe, gc_runs;
	unsigned int early;            /* timers that fired before their expiry */
	unsigned long max_late;        /* jiffies, of the non-deferrable timers */
	int pending;                   /* timers still pending at the end */
};

void rtx_start(void);
int rtx_finished(void);
void rtx_result(struct rtx_report *out);

#endif
