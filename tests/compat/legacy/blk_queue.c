/*
 * blk_queue.c - a legacy-style program on a plain wheel, written as the
 * block layer's request timeouts and a driver's per-CPU pollers are: one
 * timeout timer per queue, pulled earlier with timer_reduce() as requests
 * come and re-armed from its handler for the earliest deadline left
 * (round_jiffies_up()); per-CPU pollers started with add_timer_on() and
 * re-armed from their callbacks, CPU 0's stopping the others with
 * timer_delete_sync(); a TIMER_DEFERRABLE statistics timer on
 * round_jiffies_relative(); a keepalive pushed with mod_timer_pending()
 * only while armed (sk_reset_timer()'s pattern) and started with
 * add_timer_global(); a shut-down queue that ignores a later arm. It
 * runs across the low 32 bits' wrap of jiffies, tick by tick, and checks
 * every return value the kernel-doc gives and that no request timed out
 * before its deadline or after its rounded expiry. Built with the
 * kernel's warnings as errors, at HZ 1000 and 300 (meson.build).
 * Exit 0 pass, 1 fail, with a line of what happened.
 */
#include <stdio.h>
#include <twheel/compat/timer_list.h>

#define NR_REQ 64
#define NR_CPU 4
/* A return value or a time the kernel would not give: said, and counted. */
#define BAD(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); q->bad++; } } while (0)

struct request {
	unsigned long deadline, expiry;
	unsigned long done_at;
	int state; /* 0 free, 1 in flight, 2 completed, 3 timed out */
};

struct poller {
	struct timer_list timer;
	struct queue *q;
	int cpu, polls;
};

struct queue {
	struct timer_list timeout;
	struct timer_list stats;
	struct poller poll[NR_CPU];
	struct request rq[NR_REQ];
	int timeouts, completed, stats_runs, bad, handler_runs, keepalive_pushes;
	unsigned long last_stats;
	struct timer_list keepalive;
	int keepalive_fired;
};

static void blk_add_timer(struct queue *q, struct request *rq, unsigned long timeout)
{
	unsigned long expiry;

	rq->deadline = jiffies + timeout;
	rq->state = 1;
	expiry = round_jiffies_up(rq->deadline);
	rq->expiry = expiry;
	BAD(time_after_eq(expiry, rq->deadline));
	if (!timer_pending(&q->timeout) || time_before(expiry, q->timeout.expires)) {
		int was = timer_pending(&q->timeout);
		int rc = timer_reduce(&q->timeout, expiry);
		BAD(rc == was);
		BAD(q->timeout.expires == expiry);
	} else {
		unsigned long before = q->timeout.expires;
		BAD(timer_reduce(&q->timeout, expiry) == 1);
		BAD(q->timeout.expires == before);
	}
}

static void blk_timeout_work(struct timer_list *t)
{
	struct queue *q = from_timer(q, t, timeout);
	unsigned long next = 0, now = jiffies;
	int have_next = 0, i;

	q->handler_runs++;
	BAD(!timer_pending(t));
	BAD(try_to_del_timer_sync(t) == -1);
	for (i = 0; i < NR_REQ; i++) {
		struct request *rq = &q->rq[i];

		if (rq->state != 1)
			continue;
		if (time_after_eq(now, rq->deadline)) {
			rq->state = 3;
			rq->done_at = now;
			q->timeouts++;
		} else if (!have_next || time_after(next, rq->deadline)) {
			next = rq->deadline;
			have_next = 1;
		}
	}
	if (have_next)
		BAD(mod_timer(&q->timeout, round_jiffies_up(next)) == 0);
}

static void poll_fn(struct timer_list *t)
{
	struct poller *p = timer_container_of(p, t, timer);
	struct queue *q = p->q;
	int i;

	p->polls++;
	for (i = p->cpu; i < NR_REQ; i += NR_CPU) {
		struct request *rq = &q->rq[i];

		/* requests with an even index complete after 3 polls of their CPU */
		if (rq->state == 1 && !(i & 1) && p->polls % 3 == 0) {
			rq->state = 2;
			rq->done_at = jiffies;
			q->completed++;
		}
	}
	if (p->polls < 40)
		BAD(mod_timer(t, jiffies + usecs_to_jiffies(2500)) == 0);
	else if (p->cpu == 0) /* CPU 0 stops the others */
		for (i = 1; i < NR_CPU; i++)
			BAD(timer_delete_sync(&q->poll[i].timer) >= 0);
}

static void stats_fn(struct timer_list *t)
{
	struct queue *q = from_timer(q, t, stats);

	q->stats_runs++;
	BAD(time_in_range(jiffies, q->last_stats + HZ - HZ / 4, q->last_stats + 2 * HZ));
	q->last_stats = jiffies;
	if (q->stats_runs < 3)
		mod_timer(t, jiffies + round_jiffies_relative(HZ));
}

static void keepalive_fn(struct timer_list *t)
{
	struct queue *q = from_timer(q, t, keepalive);

	q->keepalive_fired++;
	BAD(mod_timer_pending(t, jiffies + HZ) == 0); /* not pending in its handler */
	BAD(!timer_pending(t));
}

int main(void)
{
	static struct queue qq;
	struct queue *q = &qq;
	struct twheel *w = twheel_create(12345);
	int i, cpu;
	unsigned long start;

	twheel_compat_bind_wheel(w);
	/* start 3 s before the 32-bit wrap */
	twheel_advance(w, twheel_now(w) + 297 * HZ);
	start = jiffies;
	timer_setup(&q->timeout, blk_timeout_work, 0);
	timer_setup(&q->stats, stats_fn, TIMER_DEFERRABLE);
	timer_setup(&q->keepalive, keepalive_fn, 0);
	for (cpu = 0; cpu < NR_CPU; cpu++) {
		q->poll[cpu].q = q;
		q->poll[cpu].cpu = cpu;
		timer_setup(&q->poll[cpu].timer, poll_fn, TIMER_PINNED);
		q->poll[cpu].timer.expires = jiffies + usecs_to_jiffies(100) + cpu;
		add_timer_on(&q->poll[cpu].timer, cpu);
		BAD(q->poll[cpu].timer.flags & TIMER_PINNED);
	}
	q->last_stats = jiffies;
	BAD(mod_timer(&q->stats, jiffies + round_jiffies_relative(HZ)) == 0);
	BAD(mod_timer_pending(&q->keepalive, jiffies + HZ) == 0); /* not started */
	BAD(!timer_pending(&q->keepalive));
	add_timer_global(&q->keepalive); /* expires is 0: long past, next tick */
	BAD(timer_pending(&q->keepalive));
	for (i = 0; i < NR_REQ; i++) {
		blk_add_timer(q, &q->rq[i], msecs_to_jiffies(300 + 37 * (NR_REQ - i)));
		twheel_advance(w, twheel_now(w) + 1);
	}
	while (twheel_count(w))
		twheel_advance(w, twheel_now(w) + 1);
	for (i = 0; i < NR_REQ; i++) {
		struct request *rq = &q->rq[i];
		BAD(rq->state == 2 || rq->state == 3);
		if (rq->state == 3) {
			BAD(time_after_eq(rq->done_at, rq->deadline));
			BAD(time_before_eq(rq->done_at, rq->expiry));
		}
	}
	BAD(q->keepalive_fired == 1);
	BAD(q->stats_runs == 3);
	BAD(q->poll[0].polls == 40);
	BAD(timer_shutdown_sync(&q->timeout) == 0);
	BAD(mod_timer(&q->timeout, jiffies + 1) == 0 && !timer_pending(&q->timeout));
	BAD((unsigned int)start > (unsigned int)jiffies); /* the low 32 bits wrapped */
	printf("blk_queue, HZ %d: jiffies %lu to %lu; %d timeout handler runs, %d requests timed out, %d completed;"
	       " %d statistics runs; polls %d/%d/%d/%d; %d unexpected\n",
	       HZ, start, jiffies, q->handler_runs, q->timeouts, q->completed, q->stats_runs, q->poll[0].polls,
	       q->poll[1].polls, q->poll[2].polls, q->poll[3].polls, q->bad);
	twheel_compat_unbind();
	twheel_destroy(w);
	return q->bad != 0;
}
