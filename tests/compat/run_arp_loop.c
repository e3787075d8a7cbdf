/*
 * run_arp_loop - the FreeBSD-style legacy program (legacy/arp_watchdog.c,
 * compiled unchanged) on the io_uring loop, bound with
 * twheel_loop_compat_bind(). Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <twheel/compat.h>
#include <twheel/loop.h>

#include "legacy/check_arp.h"

int main(void)
{
	struct twheel_loop *loop;
	struct arp_report r;
	char msg[128];
	int rc;

	rc = twheel_loop_create(&loop, NULL, msg, sizeof(msg));
	if (rc < 0) {
		printf("FAIL: twheel_loop_create: %s\n", msg);
		return 1;
	}
	if (twheel_loop_compat_bind(loop, TWHEEL_COMPAT_TICK_NS) < 0)
		return 1;
	arp_start();
	uint64_t give_up = twheel_loop_clock(loop) + 20000000000ull;
	while (!arp_idle() && twheel_loop_clock(loop) < give_up)
		if (twheel_loop_run_once(loop, 0) < 0)
			return 1;
	arp_detach(&r);
	rc = check_arp((twheel_loop_features(loop) & TW_LOOP_FEAT_FALLBACK) ? "io_uring loop (fallback mode)"
									     : "io_uring loop",
		       &r);
	if (twheel_compat_unbind() < 0)
		rc = 1;
	twheel_loop_destroy(loop, NULL, NULL, NULL);
	return rc;
}
