/*
 * run_uv - a legacy program (legacy/: arp_watchdog.c, FreeBSD-style, or
 * rtx_keepalive.c, kernel-style, each compiled unchanged; the argument
 * says which) on libuv, through the libuv adapter's host, bound with
 * twheel_compat_bind_host(). Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <twheel/compat.h>
#include <twheel/uv.h>

#include "legacy/programs.h"

int main(int argc, char **argv)
{
	const struct legacy_program *p = legacy_program(argc == 2 ? argv[1] : NULL);
	uv_loop_t loop;
	struct twheel_host *h;
	int rc;

	if (!p || uv_loop_init(&loop) != 0)
		return 1;
	h = twheel_uv_create(&loop, NULL);
	if (!h || twheel_compat_bind_host(h, TWHEEL_COMPAT_TICK_NS) < 0)
		return 1;
	p->start();
	uint64_t give_up = twheel_host_now(h) + 20000000000ull;
	while (!p->done() && twheel_host_now(h) < give_up)
		uv_run(&loop, UV_RUN_ONCE);
	rc = p->judge("libuv");
	if (twheel_compat_unbind() < 0)
		rc = 1;
	twheel_uv_destroy(h, NULL, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop) != 0)
		rc = 1;
	return rc;
}
