/*
 * run_loop - a legacy program (legacy/: arp_watchdog.c, FreeBSD-style, or
 * rtx_keepalive.c, kernel-style, each compiled unchanged; the argument
 * says which) on the io_uring loop, bound with twheel_loop_compat_bind().
 * Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <twheel/compat.h>
#include <twheel/loop.h>

#include "legacy/programs.h"

int main(int argc, char **argv)
{
	const struct legacy_program *p = legacy_program(argc == 2 ? argv[1] : NULL);
	struct twheel_loop *loop;
	char msg[128];
	int rc;

	if (!p)
		return 1;
	rc = twheel_loop_create(&loop, NULL, msg, sizeof(msg));
	if (rc < 0) {
		printf("FAIL: twheel_loop_create: %s\n", msg);
		return 1;
	}
	if (twheel_loop_compat_bind(loop, TWHEEL_COMPAT_TICK_NS) < 0)
		return 1;
	p->start();
	uint64_t give_up = twheel_loop_clock(loop) + 20000000000ull;
	while (!p->done() && twheel_loop_clock(loop) < give_up)
		if (twheel_loop_run_once(loop, 0) < 0)
			return 1;
	rc = p->judge((twheel_loop_features(loop) & TW_LOOP_FEAT_FALLBACK) ? "io_uring loop (fallback mode)"
									  : "io_uring loop");
	if (twheel_compat_unbind() < 0)
		rc = 1;
	twheel_loop_destroy(loop, NULL, NULL, NULL);
	return rc;
}
