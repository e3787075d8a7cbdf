/* What both drivers check of the legacy program's run (one header, so that
 * the two runs are judged alike). Exit status: 0 pass, 1 fail. */
#include <stdio.h>

#include "rtx_keepalive.h"

static int check_rtx(const char *where, const struct rtx_report *r)
{
	/* 7 retransmissions when every timer runs within its margins; on a
	 * loaded machine an acknowledgement handled after the retransmission
	 * timer adds spurious ones (late, never early), each at most one
	 * duplicate at the receiver. */
	int ok = r->delivered == r->segments && r->retransmissions >= 7 &&
		 r->duplicates <= r->retransmissions - 7 &&
		 r->transmissions == r->segments + r->retransmissions && r->probes == 6 && r->dead_at_probe == 3 &&
		 r->early == 0 && r->pending == 0 && r->gc_runs > 0;

	printf("%s: %u segments delivered (%u duplicates) in %u transmissions, %u retransmitted;"
	       " %u keepalive probes, dead after %u unanswered; %u housekeeping runs;"
	       " %lu jiffies in all; early fires %u, latest fire %lu jiffies late\n",
	       where, r->delivered, r->duplicates, r->transmissions, r->retransmissions, r->probes,
	       r->dead_at_probe, r->gc_runs, r->end - r->start, r->early, r->max_late);
	if (!ok)
		printf("FAIL: expected 20 delivered, 7 retransmissions (more, with as many duplicates, only if late), 6 probes, "
		       "dead after 3, no early fire, nothing pending\n");
	return ok ? 0 : 1;
}
