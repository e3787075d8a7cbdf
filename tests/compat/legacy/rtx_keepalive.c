/*
 * rtx_keepalive.c - a legacy-style program, written as kernel protocol code
 * is: a stop-and-wait sender with an exponential retransmission timer, a
 * keepalive timer that re-arms itself for the idle time that is left
 * (tcp_keepalive_timer()'s pattern), delayed-ACK and link-delay timers on
 * the receiving side, and a deferrable housekeeping timer. The only line
 * that is not kernel code is the include of <twheel/compat/timer_list.h>;
 * the same file is compiled, unchanged, into a driver for the io_uring
 * loop and one for libuv (run_loop.c, run_uv.c).
 *
 * The scenario is deterministic in what happens, not in when: 20 segments
 * cross a link of 5 ms each way; the first transmission of every fourth
 * segment is lost, and the first two of segment 10: 7 retransmissions.
 * Then the connection idles: each keepalive probe is answered 3 times,
 * then the peer goes silent and 3 unanswered probes kill the connection.
 * The code checks, with jiffies, that no timer fired early.
 */
#include <stdlib.h>
#include <twheel/compat/timer_list.h>

#include "rtx_keepalive.h"

#define NSEGS		20
#define LINK_DELAY	msecs_to_jiffies(5)
#define RTO_INIT	msecs_to_jiffies(100)
#define RTO_MAX		msecs_to_jiffies(800)
#define RTX_MAX		5
#define KA_IDLE		msecs_to_jiffies(100)
#define KA_INTVL	msecs_to_jiffies(30)
#define KA_PROBES	3
#define KA_ANSWERED	3
#define GC_PERIOD	msecs_to_jiffies(50)

enum sk_state { SK_ESTABLISHED, SK_IDLE, SK_DEAD };

struct sock {
	enum sk_state		state;
	unsigned int		snd_una;	/* first unacked segment */
	unsigned int		tx_count;	/* transmissions of snd_una */
	unsigned long		rto;
	unsigned long		sent_at;	/* jiffies of the last send */
	unsigned long		last_rcv;	/* jiffies of the last segment in */
	unsigned int		probes_out;
	unsigned int		probes_answered;
	struct timer_list	rtx_timer;
	struct timer_list	ka_timer;
};

/* A segment in flight: one timer per packet, like a qdisc's delay line. */
struct pkt {
	int			is_ack;
	unsigned int		seq;
	unsigned long		due;
	struct timer_list	timer;
};

static struct sock sk;
static struct rtx_report rep;
static unsigned int rcv_nxt;		/* the receiver's next expected seq */
static struct timer_list gc_timer;
static unsigned long gc_due;

static void late(unsigned long due)
{
	long l = (long)(jiffies - due);

	if (time_before(jiffies, due))
		rep.early++;
	else if ((unsigned long)l > rep.max_late)
		rep.max_late = l;
}

static void deliver(struct timer_list *t);

static void link_send(int is_ack, unsigned int seq)
{
	struct pkt *p = calloc(1, sizeof(*p));

	if (!p)
		abort();
	p->is_ack = is_ack;
	p->seq = seq;
	timer_setup(&p->timer, deliver, 0);
	p->due = jiffies + LINK_DELAY;
	p->timer.expires = p->due;
	add_timer(&p->timer);
}

static int lost(unsigned int seq, unsigned int tx)
{
	if (seq == 10)
		return tx <= 2;
	return seq % 4 == 3 && tx == 1;
}

static void xmit(struct sock *s)
{
	s->tx_count++;
	s->sent_at = jiffies;
	rep.transmissions++;
	if (s->tx_count > 1)
		rep.retransmissions++;
	if (!lost(s->snd_una, s->tx_count))
		link_send(0, s->snd_una);
	mod_timer(&s->rtx_timer, jiffies + s->rto);
}

static void ka_arm(struct sock *s, unsigned long when)
{
	mod_timer(&s->ka_timer, when);
}

/* The receiver: in-order delivery, an ACK for every segment; probes are
 * answered while the peer is reachable. */
static void receiver(struct pkt *p)
{
	if (p->seq == (unsigned int)-1) {		/* keepalive probe */
		if (sk.probes_answered < KA_ANSWERED) {
			sk.probes_answered++;
			link_send(1, (unsigned int)-1);
		}
		return;
	}
	if (p->seq == rcv_nxt) {
		rcv_nxt++;
		rep.delivered++;
	} else {
		rep.duplicates++;
	}
	link_send(1, rcv_nxt);
}

static void sender_ack(struct sock *s, unsigned int ack)
{
	s->last_rcv = jiffies;
	s->probes_out = 0;
	if (ack == (unsigned int)-1 || ack <= s->snd_una)
		return;
	s->snd_una = ack;
	s->tx_count = 0;
	s->rto = RTO_INIT;
	if (s->snd_una == NSEGS) {
		del_timer(&s->rtx_timer);
		s->state = SK_IDLE;
		ka_arm(s, jiffies + KA_IDLE);
		return;
	}
	xmit(s);
}

static void deliver(struct timer_list *t)
{
	struct pkt *p = from_timer(p, t, timer);

	late(p->due);
	if (p->is_ack) {
		if (sk.state != SK_DEAD)
			sender_ack(&sk, p->seq);
	} else {
		receiver(p);
	}
	free(p);			/* freed from its own callback */
}

static void rtx_timeout(struct timer_list *t)
{
	struct sock *s = from_timer(s, t, rtx_timer);

	late(s->sent_at + s->rto);
	if (s->tx_count > RTX_MAX) {
		s->state = SK_DEAD;
		return;
	}
	s->rto = s->rto * 2 > RTO_MAX ? RTO_MAX : s->rto * 2;
	xmit(s);
}

static void ka_timeout(struct timer_list *t)
{
	struct sock *s = from_timer(s, t, ka_timer);
	unsigned long idle_until = s->last_rcv + KA_IDLE;

	if (s->state != SK_IDLE)
		return;
	if (s->probes_out == 0 && time_before(jiffies, idle_until)) {
		/* Something came in meanwhile: wait for the rest. */
		ka_arm(s, idle_until);
		return;
	}
	if (s->probes_out == 0)
		late(idle_until);
	if (s->probes_out >= KA_PROBES) {
		s->state = SK_DEAD;
		rep.dead_at_probe = s->probes_out;
		timer_shutdown_sync(&s->rtx_timer);
		timer_shutdown_sync(&s->ka_timer);
		timer_shutdown_sync(&gc_timer);
		return;
	}
	s->probes_out++;
	rep.probes++;
	link_send(0, (unsigned int)-1);
	ka_arm(s, jiffies + KA_INTVL);
}

static void gc_run(struct timer_list *t)
{
	if (time_before(jiffies, gc_due))	/* deferrable: late is fine */
		rep.early++;
	rep.gc_runs++;
	gc_due = jiffies + GC_PERIOD;
	mod_timer(t, gc_due);
}

void rtx_start(void)
{
	sk.state = SK_ESTABLISHED;
	sk.rto = RTO_INIT;
	sk.last_rcv = jiffies;
	timer_setup(&sk.rtx_timer, rtx_timeout, 0);
	timer_setup(&sk.ka_timer, ka_timeout, 0);
	timer_setup(&gc_timer, gc_run, TIMER_DEFERRABLE);
	gc_due = jiffies + GC_PERIOD;
	mod_timer(&gc_timer, gc_due);
	rep.start = jiffies;
	xmit(&sk);
}

int rtx_finished(void)
{
	return sk.state == SK_DEAD;
}

void rtx_result(struct rtx_report *out)
{
	rep.end = jiffies;
	rep.segments = NSEGS;
	rep.pending = timer_pending(&sk.rtx_timer) + timer_pending(&sk.ka_timer) +
		      timer_pending(&gc_timer);
	*out = rep;
}
