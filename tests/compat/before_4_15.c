/*
 * before_4_15.c - Linux before 4.15's initialisers, whose functions take
 * unsigned long data. Built with -Werror: with TWHEEL_COMPAT_TIMER_DATA
 * each NAME compiles; without it each is a compile-time error that says
 * "Linux before 4.15" and names TWHEEL_COMPAT_TIMER_DATA, not an implicit
 * declaration (a warning only, in gnu89) that fails at link time.
 */
#include <twheel/compat/timer_list.h>

struct adapter {
	struct timer_list watchdog;
	int polls;
};

static void adapter_watchdog(unsigned long data)
{
	struct adapter *adapter = (struct adapter *)data;

	adapter->polls++;
}

#if NAME == 1
static struct timer_list poll_timer = TIMER_INITIALIZER(adapter_watchdog, 0, 0);
#elif NAME == 2
static struct timer_list poll_timer = TIMER_DEFERRED_INITIALIZER(adapter_watchdog, 0, 0);
#else
static struct timer_list poll_timer;
#endif

void adapter_start(struct adapter *adapter);
void adapter_start(struct adapter *adapter)
{
#if NAME == 3
	init_timer(&adapter->watchdog);
	adapter->watchdog.function = adapter_watchdog;
	adapter->watchdog.data = (unsigned long)adapter;
#elif NAME == 4
	setup_timer(&adapter->watchdog, adapter_watchdog, (unsigned long)adapter);
#elif NAME == 5
	setup_deferrable_timer(&adapter->watchdog, adapter_watchdog, (unsigned long)adapter);
#elif NAME == 6
	init_timer_on_stack(&adapter->watchdog);
	adapter->watchdog.function = adapter_watchdog;
#elif NAME == 7
	__setup_timer(&adapter->watchdog, adapter_watchdog, (unsigned long)adapter, TIMER_PINNED);
#elif NAME == 8
	if (!adapter->polls)
		setup_pinned_timer_on_stack(&adapter->watchdog, adapter_watchdog, (unsigned long)adapter);
#endif
	adapter->polls = 0;
	mod_timer(&poll_timer, jiffies + HZ);
}
