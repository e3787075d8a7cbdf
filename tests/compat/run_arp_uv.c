/*
 * run_arp_uv - the FreeBSD-style legacy program (legacy/arp_watchdog.c,
 * compiled unchanged) on libuv, through the libuv adapter's host, bound
 * with twheel_compat_bind_host(). Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <twheel/compat.h>
#include <twheel/uv.h>

#include "legacy/check_arp.h"

int main(void)
{
	uv_loop_t loop;
	struct twheel_host *h;
	struct arp_report r;
	int rc;

	if (uv_loop_init(&loop) != 0)
		return 1;
	h = twheel_uv_create(&loop, NULL);
	if (!h || twheel_compat_bind_host(h, TWHEEL_COMPAT_TICK_NS) < 0)
		return 1;
	arp_start();
	uint64_t give_up = twheel_host_now(h) + 20000000000ull;
	while (!arp_idle() && twheel_host_now(h) < give_up)
		uv_run(&loop, UV_RUN_ONCE);
	arp_detach(&r);
	rc = check_arp("libuv", &r);
	if (twheel_compat_unbind() < 0)
		rc = 1;
	twheel_uv_destroy(h, NULL, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop) != 0)
		rc = 1;
	return rc;
}
