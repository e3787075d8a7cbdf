/*
 * nic_watchdog.c - a legacy-style program written as network drivers were
 * before Linux 4.15, when a timer's function took unsigned long data:
 * setup_timer() with the adapter as data, init_timer() and the fields
 * filled in by hand, a DEFINE_TIMER() of that era, an
 * on-stack timer guarding a command, one descriptor timer per packet with
 * an index as data, and, as 4.14 drivers mixed them, one timer_setup().
 * The only line that is not kernel code is the include of
 * <twheel/compat/timer_list.h>; it is built with TWHEEL_COMPAT_TIMER_DATA
 * on the command line (a Makefile's ccflags), compiled unchanged into a
 * driver for the io_uring loop and one for libuv.
 *
 * The scenario: the link comes up at the third poll; 8 packets go out,
 * each completed by the "hardware" 2 ms later, except the fifth, which
 * hangs; the watchdog sees the ring stuck twice and resets the adapter
 * (a command guarded by an on-stack timer), which sends the rest again;
 * then the driver tears its timers down.
 */
#include <twheel/compat/timer_list.h>

#include "nic_watchdog.h"

#define TX_RING		8
#define LINK_POLL	msecs_to_jiffies(10)
#define WATCHDOG_PERIOD	msecs_to_jiffies(20)
#define TX_LATENCY	msecs_to_jiffies(2)
#define CMD_TIMEOUT	msecs_to_jiffies(500)
#define STATS_PERIOD	msecs_to_jiffies(15)
#define LED_PERIOD	msecs_to_jiffies(5)
#define LED_BLINKS	3
#define STUCK_PACKET	4

struct nic_adapter {
	struct timer_list	watchdog_timer;
	struct timer_list	phy_info_timer;
	struct timer_list	led_timer;
	struct timer_list	tx_timer[TX_RING];	/* the "hardware" */
	unsigned long		tx_due[TX_RING];
	unsigned long		watchdog_due;
	unsigned long		phy_due;
	unsigned long		led_due;
	unsigned int		tx_next;		/* next to send */
	unsigned int		tx_clean;		/* next to complete */
	unsigned int		tx_done_mask;
	unsigned int		stuck_checks;
	unsigned int		last_clean;
	int			link_up;
	int			hung;			/* the stuck packet */
	int			down;
};

static struct nic_adapter nic;
static struct nic_report rep;
static unsigned long stats_due;

static void nic_update_stats(unsigned long data);
static DEFINE_TIMER(stats_timer, nic_update_stats, 0, 0);

static void late(unsigned long due)
{
	long l = (long)(jiffies - due);

	if (time_before(jiffies, due))
		rep.early++;
	else if ((unsigned long)l > rep.max_late)
		rep.max_late = l;
}

static void expect(int got, int want)
{
	if (got != want)
		rep.wrong_returns++;
}

static void nic_tx_complete(unsigned long data)
{
	struct nic_adapter *adapter = &nic;
	unsigned int i = (unsigned int)data;

	late(adapter->tx_due[i]);
	adapter->tx_done_mask |= 1u << i;
	while (adapter->tx_clean < adapter->tx_next &&
	       (adapter->tx_done_mask & (1u << adapter->tx_clean))) {
		adapter->tx_clean++;
		rep.completed++;
	}
}

static void nic_xmit(struct nic_adapter *adapter)
{
	unsigned int i = adapter->tx_next++;

	rep.packets++;
	if ((int)i == STUCK_PACKET && !adapter->hung) {
		adapter->hung = 1;	/* never completes */
		return;
	}
	setup_timer(&adapter->tx_timer[i], nic_tx_complete, i);
	adapter->tx_due[i] = jiffies + TX_LATENCY;
	adapter->tx_timer[i].expires = adapter->tx_due[i];
	add_timer(&adapter->tx_timer[i]);
}

static void nic_cmd_timeout(unsigned long data)
{
	int *timed_out = (int *)data;

	*timed_out = 1;
	rep.cmd_timeouts++;
}

/* A command to the "hardware", guarded as drivers guarded them: an
 * on-stack timer, deleted once the command completes. */
static void nic_hw_reset(struct nic_adapter *adapter)
{
	struct timer_list timer;
	int timed_out = 0;
	unsigned int i;

	setup_timer_on_stack(&timer, nic_cmd_timeout, (unsigned long)&timed_out);
	expect(mod_timer(&timer, jiffies + CMD_TIMEOUT), 0);
	for (i = 0; i < TX_RING; i++)
		del_timer_sync(&adapter->tx_timer[i]);
	adapter->tx_done_mask = 0;
	expect(del_singleshot_timer_sync(&timer), 1);
	destroy_timer_on_stack(&timer);
	if (timed_out)
		return;
	rep.resets++;
}

static void nic_watchdog(unsigned long data)
{
	struct nic_adapter *adapter = (struct nic_adapter *)data;
	unsigned int resend, i;

	late(adapter->watchdog_due);
	if (adapter->tx_clean < adapter->tx_next && adapter->tx_clean == adapter->last_clean) {
		if (++adapter->stuck_checks >= 2) {
			/* the transmit ring is stuck: reset and resend */
			resend = adapter->tx_next - adapter->tx_clean;
			nic_hw_reset(adapter);
			adapter->tx_next = adapter->tx_clean;
			for (i = 0; i < resend; i++)
				nic_xmit(adapter);
			adapter->stuck_checks = 0;
		}
	} else {
		adapter->stuck_checks = 0;
	}
	adapter->last_clean = adapter->tx_clean;
	if (adapter->link_up && adapter->tx_clean == TX_RING) {
		adapter->down = 1;	/* all sent: the interface goes down */
		expect(del_timer_sync(&adapter->phy_info_timer), 1);
		expect(del_timer_sync(&stats_timer), 1);
		del_timer(&adapter->led_timer);
		return;
	}
	adapter->watchdog_due = jiffies + WATCHDOG_PERIOD;
	expect(mod_timer(&adapter->watchdog_timer, adapter->watchdog_due), 0);
}

static void nic_led_blink(struct timer_list *t)
{
	struct nic_adapter *adapter = from_timer(adapter, t, led_timer);

	late(adapter->led_due);
	if (++rep.led_blinks < LED_BLINKS) {
		adapter->led_due = jiffies + LED_PERIOD;
		mod_timer(&adapter->led_timer, adapter->led_due);
	}
}

static void nic_phy_poll(unsigned long data)
{
	struct nic_adapter *adapter = (struct nic_adapter *)data;
	unsigned int i;

	late(adapter->phy_due);
	rep.link_polls++;
	if (!adapter->link_up && rep.link_polls == 3) {
		adapter->link_up = 1;
		adapter->led_due = jiffies + LED_PERIOD;
		mod_timer(&adapter->led_timer, adapter->led_due);
		for (i = 0; i < TX_RING; i++)
			nic_xmit(adapter);
	}
	adapter->phy_due = jiffies + LINK_POLL;
	adapter->phy_info_timer.expires = adapter->phy_due;
	add_timer(&adapter->phy_info_timer);
}

static void nic_update_stats(unsigned long data)
{
	(void)data;
	late(stats_due);
	rep.stats_runs++;
	stats_due = jiffies + STATS_PERIOD;
	expect(mod_timer(&stats_timer, stats_due), 0);
	/* a second mod_timer() to the same expiry: pending, unchanged */
	expect(mod_timer(&stats_timer, stats_due), 1);
}

void nic_start(void)
{
	struct nic_adapter *adapter = &nic;

	setup_timer(&adapter->watchdog_timer, nic_watchdog, (unsigned long)adapter);
	init_timer(&adapter->phy_info_timer);
	adapter->phy_info_timer.function = nic_phy_poll;
	adapter->phy_info_timer.data = (unsigned long)adapter;
	timer_setup(&adapter->led_timer, nic_led_blink, 0);

	adapter->phy_due = jiffies + LINK_POLL;
	adapter->phy_info_timer.expires = adapter->phy_due;
	add_timer(&adapter->phy_info_timer);
	adapter->watchdog_due = jiffies + WATCHDOG_PERIOD;
	expect(mod_timer(&adapter->watchdog_timer, adapter->watchdog_due), 0);
	stats_due = jiffies + STATS_PERIOD;
	expect(mod_timer(&stats_timer, stats_due), 0);
}

int nic_done(void)
{
	return nic.down;
}

void nic_result(struct nic_report *out)
{
	unsigned int i;

	rep.pending = timer_pending(&nic.watchdog_timer) + timer_pending(&nic.phy_info_timer) +
		      timer_pending(&nic.led_timer) + timer_pending(&stats_timer);
	for (i = 0; i < TX_RING; i++)
		rep.pending += timer_pending(&nic.tx_timer[i]);
	*out = rep;
}
