/*
 * figures_layout - the layout of the public structs as a program sees them,
 * compiled once per value of TWHEEL_DEBUG_CHECKS (FIGURES_SUFFIX names the
 * function: release or debug). Only sizes: nothing here calls the library.
 */
#include <stddef.h>
#include <stdio.h>

#include <twheel/compat/callout.h>
#include <twheel/compat/timer_list.h>
#include <twheel/twheel.h>
#ifdef FIGURES_LOOP
#include <twheel/loop.h>
#endif

#define CAT(a, b) a##b
#define NAME(s) CAT(figures_layout_, s)

void NAME(FIGURES_SUFFIX)(void);

void NAME(FIGURES_SUFFIX)(void)
{
	const char *s = TWHEEL_DEBUG_CHECKS ? "debug" : "release";

	printf("tw_timer_%s %zu\n", s, sizeof(struct tw_timer));
	printf("timer_list_%s %zu\n", s, sizeof(struct timer_list));
	printf("callout_%s %zu\n", s, sizeof(struct callout));
#ifdef FIGURES_LOOP
	printf("tw_loop_timer_%s %zu\n", s, sizeof(struct tw_loop_timer));
	printf("tw_loop_deadline_%s %zu\n", s, sizeof(struct tw_loop_deadline));
	/* what firing a one-shot timer reads: the node, func, the state */
	printf("tw_loop_timer_hot_end_%s %zu\n", s,
	       offsetof(struct tw_loop_timer, _node) + sizeof(struct tw_loop_node));
#endif
}
