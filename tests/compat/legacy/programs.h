/*
 * programs.h - the legacy programs as their drivers (run_loop.c, run_uv.c)
 * see them: started, run until done, then judged (check_arp.h,
 * check_rtx.h: one judge per program, whatever the host). Each driver
 * links both programs and runs the one its argument names.
 */
#include <string.h>

#include "check_arp.h"
#include "check_rtx.h"

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

static int rtx_judge(const char *where)
{
	struct rtx_report r;

	rtx_result(&r);
	return check_rtx(where, &r);
}

/* The program @name ("arp": arp_watchdog.c, "rtx": rtx_keepalive.c), or
 * NULL with a line saying which there are. */
static const struct legacy_program *legacy_program(const char *name)
{
	static const struct legacy_program programs[] = {
		{ "arp", arp_start, arp_idle, arp_judge },
		{ "rtx", rtx_start, rtx_finished, rtx_judge },
	};

	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (name && strcmp(name, programs[i].name) == 0)
			return &programs[i];
	printf("usage: the legacy program to run, arp or rtx\n");
	return NULL;
}
