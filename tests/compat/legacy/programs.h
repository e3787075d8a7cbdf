/*
 * programs.h - the legacy programs as their drivers (run_loop.c, run_uv.c)
 * see them: started, run until done, then judged (check_arp.h,
 * check_rtx.h, check_nic.h: one judge per program, whatever the host).
 * Each driver links the programs and runs the one its argument names.
 * nic_watchdog.c is built with TWHEEL_COMPAT_TIMER_DATA (Linux before
 * 4.15), which no file of a program built without it may be linked
 * with: its drivers (LEGACY_PRE_4_15) link it and arp_watchdog.c, which
 * does not include <twheel/compat/timer_list.h>, and not rtx_keepalive.c.
 */
#include <string.h>

#include "check_arp.h"
#ifdef LEGACY_PRE_4_15
#include "check_nic.h"
#else
#include "check_rtx.h"
#endif

struct legacy_program {
	const char *name;
	void (*start)(void);
	int (*done)(void);
	int (*judge)(const char *where);   /* after done: 0 pass, 1 fail */
};

static int arp_judge(const char *where)
{
	struct arp_report r;

	arp_detach(&r);
	return check_arp(where, &r);
}

#ifdef LEGACY_PRE_4_15
static int nic_judge(const char *where)
{
	struct nic_report r;

	nic_result(&r);
	return check_nic(where, &r);
}
#else
static int rtx_judge(const char *where)
{
	struct rtx_report r;

	rtx_result(&r);
	return check_rtx(where, &r);
}
#endif

/* The program @name ("arp": arp_watchdog.c, "rtx": rtx_keepalive.c,
 * "nic": nic_watchdog.c), or NULL with a line saying which there are. */
static const struct legacy_program *legacy_program(const char *name)
{
	static const struct legacy_program programs[] = {
		{ "arp", arp_start, arp_idle, arp_judge },
#ifdef LEGACY_PRE_4_15
		{ "nic", nic_start, nic_done, nic_judge },
#else
		{ "rtx", rtx_start, rtx_finished, rtx_judge },
#endif
	};

	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (name && strcmp(name, programs[i].name) == 0)
			return &programs[i];
	printf("usage: the legacy program to run, arp or %s\n", programs[1].name);
	return NULL;
}
