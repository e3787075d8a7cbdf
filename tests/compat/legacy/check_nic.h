/* What both drivers check of the pre-4.15 program's run (one header, so
 * that the two runs are judged alike). Exit status: 0 pass, 1 fail. */
#include <stdio.h>

#include "nic_watchdog.h"

static int check_nic(const char *where, const struct nic_report *r)
{
	/* 8 packets, the stuck one and the three after it sent again after
	 * one reset; on a loaded machine a late completion can make the
	 * watchdog see the ring stuck before the real hang too (late, never
	 * early), each reset sending at most 8 again. */
	int ok = r->completed == 8 && r->resets >= 1 && r->packets >= 8 + 4 &&
		 r->packets <= 8 + 8 * r->resets && r->link_polls >= 3 && r->led_blinks == 3 &&
		 r->stats_runs > 0 && r->cmd_timeouts == 0 && r->wrong_returns == 0 && r->early == 0 &&
		 r->pending == 0;

	printf("%s: %u packets completed of %u sent, %u resets, %u link polls, %u LED blinks,"
	       " %u statistics runs; command timeouts %u, unexpected return values %u;"
	       " early fires %u, latest fire %lu jiffies late\n",
	       where, r->completed, r->packets, r->resets, r->link_polls, r->led_blinks, r->stats_runs,
	       r->cmd_timeouts, r->wrong_returns, r->early, r->max_late);
	if (!ok)
		printf("FAIL: expected 8 completed, at least 1 reset with 4 packets sent again, 3 blinks, "
		       "no command timeout, the kernel's return values, no early fire, nothing pending\n");
	return ok ? 0 : 1;
}
