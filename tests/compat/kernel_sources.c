/*
 * kernel_sources.c - what Linux's own sources (the 6.1 tree) do with the
 * timer API and <twheel/compat/timer_list.h> once lacked, each carried as
 * the kernel writes it: the few lines a check exercises, not the sources.
 * Built as Linux 6.1 builds (gnu11, -Wdeclaration-after-statement), its
 * warnings made errors, on a plain wheel stepped tick by tick.
 *
 *   - <linux/workqueue.h>'s delayed work: INIT_DELAYED_WORK() and
 *     INIT_DELAYED_WORK_ONSTACK() set their timer up with the
 *     three-argument __init_timer() and __init_timer_on_stack() of
 *     Linux 4.15 on (TIMER_IRQSAFE added); kernel/workqueue.c's
 *     __queue_delayed_work() arms it with add_timer() or add_timer_on().
 *   - <linux/usb/otg-fsm.h>'s operations table has members named
 *     add_timer and del_timer, called as fsm->ops->del_timer(fsm, timer):
 *     the kernel's del_timer() and del_timer_sync() are functions, not
 *     function-like macros that would take that call for theirs (nor are
 *     timer_destroy_on_stack() and timer_delete_sync_try()).
 *
 * Exit 0 pass, 1 fail, with a line for each check that failed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <twheel/compat/timer_list.h>

static int bad;
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); bad++; } } while (0)

static struct twheel *w;

static void step(unsigned long n)
{
	while (n--)
		twheel_advance(w, twheel_now(w) + 1);
}

/* The work queue itself, which is not the timer API: a work item runs
 * when it is queued. */
#define WARN_ON_ONCE(c) CHECK(!(c))
#define unlikely(c) (c)
#define NR_CPUS 64
struct list_head { struct list_head *next, *prev; };
#define INIT_LIST_HEAD(l) ((l)->next = (l)->prev = (l))
#define list_empty(l) ((l)->next == (l))
struct work_struct;
typedef void (*work_func_t)(struct work_struct *work);
struct work_struct { struct list_head entry; work_func_t func; };
#define __WORK_INITIALIZER(n, f) { .entry = { &(n).entry, &(n).entry }, .func = (f) }
#define INIT_WORK(_work, _func) do { INIT_LIST_HEAD(&(_work)->entry); (_work)->func = (_func); } while (0)
#define INIT_WORK_ONSTACK(_work, _func) INIT_WORK(_work, _func)
struct workqueue_struct { int queued, cpu; };
static void __queue_work(int cpu, struct workqueue_struct *wq, struct work_struct *work)
{
	wq->queued++;
	wq->cpu = cpu;
	work->func(work);
}
enum { WORK_CPU_UNBOUND = NR_CPUS };

/* include/linux/workqueue.h (6.1), as written there */
struct delayed_work {
	struct work_struct work;
	struct timer_list timer;

	/* target workqueue and CPU ->timer uses to queue ->work */
	struct workqueue_struct *wq;
	int cpu;
};

#define __DELAYED_WORK_INITIALIZER(n, f, tflags) {			\
	.work = __WORK_INITIALIZER((n).work, (f)),			\
	.timer = __TIMER_INITIALIZER(delayed_work_timer_fn,\
				     (tflags) | TIMER_IRQSAFE),		\
	}

#define DECLARE_DELAYED_WORK(n, f)					\
	struct delayed_work n = __DELAYED_WORK_INITIALIZER(n, f, 0)

#define __INIT_DELAYED_WORK(_work, _func, _tflags)			\
	do {								\
		INIT_WORK(&(_work)->work, (_func));			\
		__init_timer(&(_work)->timer,				\
			     delayed_work_timer_fn,			\
			     (_tflags) | TIMER_IRQSAFE);		\
	} while (0)

#define __INIT_DELAYED_WORK_ONSTACK(_work, _func, _tflags)		\
	do {								\
		INIT_WORK_ONSTACK(&(_work)->work, (_func));		\
		__init_timer_on_stack(&(_work)->timer,			\
				      delayed_work_timer_fn,		\
				      (_tflags) | TIMER_IRQSAFE);	\
	} while (0)

#define INIT_DELAYED_WORK(_work, _func)					\
	__INIT_DELAYED_WORK(_work, _func, 0)

#define INIT_DELAYED_WORK_ONSTACK(_work, _func)				\
	__INIT_DELAYED_WORK_ONSTACK(_work, _func, 0)

#define INIT_DEFERRABLE_WORK(_work, _func)				\
	__INIT_DELAYED_WORK(_work, _func, TIMER_DEFERRABLE)

/* kernel/workqueue.c (6.1), as written there */
void delayed_work_timer_fn(struct timer_list *t);
void delayed_work_timer_fn(struct timer_list *t)
{
	struct delayed_work *dwork = from_timer(dwork, t, timer);

	/* should have been called from irqsafe timer with irq already off */
	__queue_work(dwork->cpu, dwork->wq, &dwork->work);
}

static void __queue_delayed_work(int cpu, struct workqueue_struct *wq,
				struct delayed_work *dwork, unsigned long delay)
{
	struct timer_list *timer = &dwork->timer;
	struct work_struct *work = &dwork->work;

	WARN_ON_ONCE(!wq);
	WARN_ON_ONCE(timer->function != delayed_work_timer_fn);
	WARN_ON_ONCE(timer_pending(timer));
	WARN_ON_ONCE(!list_empty(&work->entry));

	/*
	 * If @delay is 0, queue @dwork->work immediately.  This is for
	 * both optimization and correctness.  The earliest @timer can
	 * expire is on the closest next tick and delayed_work users depend
	 * on that there's no such delay when @delay is 0.
	 */
	if (!delay) {
		__queue_work(cpu, wq, &dwork->work);
		return;
	}

	dwork->wq = wq;
	dwork->cpu = cpu;
	timer->expires = jiffies + delay;

	if (unlikely(cpu != WORK_CPU_UNBOUND))
		add_timer_on(timer, cpu);
	else
		add_timer(timer);
}

static int runs;
static unsigned long ran_at;

static void work_fn(struct work_struct *work)
{
	(void)work;
	runs++;
	ran_at = jiffies;
}

static DECLARE_DELAYED_WORK(static_work, work_fn);

static void delayed_work(void)
{
	struct delayed_work dw, deferrable;
	struct workqueue_struct wq = { 0, 0 };
	unsigned long t0 = jiffies;

	INIT_DELAYED_WORK(&dw, work_fn);
	CHECK(dw.timer.function == delayed_work_timer_fn && dw.timer.flags == TIMER_IRQSAFE);
	CHECK(!timer_pending(&dw.timer));
	INIT_DEFERRABLE_WORK(&deferrable, work_fn);
	CHECK(deferrable.timer.flags == (TIMER_IRQSAFE | TIMER_DEFERRABLE));
	CHECK(static_work.timer.flags == TIMER_IRQSAFE);

	__queue_delayed_work(WORK_CPU_UNBOUND, &wq, &dw, 7);
	__queue_delayed_work(3, &wq, &deferrable, 4); /* add_timer_on() */
	__queue_delayed_work(WORK_CPU_UNBOUND, &wq, &static_work, 2);
	CHECK(timer_pending(&dw.timer) && dw.timer.expires == t0 + 7);
	step(2);
	CHECK(runs == 1 && ran_at == t0 + 2);
	step(2);
	CHECK(runs == 2 && ran_at == t0 + 4 && wq.cpu == 3);
	step(3);
	CHECK(runs == 3 && ran_at == t0 + 7 && wq.cpu == WORK_CPU_UNBOUND);
	__queue_delayed_work(WORK_CPU_UNBOUND, &wq, &dw, 0); /* no timer */
	CHECK(runs == 4 && !timer_pending(&dw.timer));
	{
		struct delayed_work onstack;

		INIT_DELAYED_WORK_ONSTACK(&onstack, work_fn);
		CHECK(onstack.timer.flags == TIMER_IRQSAFE);
		__queue_delayed_work(WORK_CPU_UNBOUND, &wq, &onstack, 100);
		CHECK(timer_delete_sync(&onstack.timer) == 1);
		destroy_timer_on_stack(&onstack.timer);
	}
	step(200);
	CHECK(runs == 4 && wq.queued == 4);
}

/* include/linux/usb/otg-fsm.h (6.1), as written there; the
 * enum and struct otg_fsm cut to what these lines use */
enum otg_fsm_timer { A_WAIT_VRISE, A_WAIT_VFALL, NUM_OTG_FSM_TIMERS };
struct otg_fsm;

struct otg_fsm_ops {
	void	(*chrg_vbus)(struct otg_fsm *fsm, int on);
	void	(*drv_vbus)(struct otg_fsm *fsm, int on);
	void	(*loc_conn)(struct otg_fsm *fsm, int on);
	void	(*loc_sof)(struct otg_fsm *fsm, int on);
	void	(*start_pulse)(struct otg_fsm *fsm);
	void	(*start_adp_prb)(struct otg_fsm *fsm);
	void	(*start_adp_sns)(struct otg_fsm *fsm);
	void	(*add_timer)(struct otg_fsm *fsm, enum otg_fsm_timer timer);
	void	(*del_timer)(struct otg_fsm *fsm, enum otg_fsm_timer timer);
	int	(*start_host)(struct otg_fsm *fsm, int on);
	int	(*start_gadget)(struct otg_fsm *fsm, int on);
};

struct otg_fsm { const struct otg_fsm_ops *ops; struct timer_list timers[NUM_OTG_FSM_TIMERS]; };
#define EOPNOTSUPP 95

static inline int otg_add_timer(struct otg_fsm *fsm, enum otg_fsm_timer timer)
{
	if (!fsm->ops->add_timer)
		return -EOPNOTSUPP;
	fsm->ops->add_timer(fsm, timer);
	return 0;
}

static inline int otg_del_timer(struct otg_fsm *fsm, enum otg_fsm_timer timer)
{
	if (!fsm->ops->del_timer)
		return -EOPNOTSUPP;
	fsm->ops->del_timer(fsm, timer);
	return 0;
}

/* a driver's operations on the timer API, as drivers write them */
static int otg_expired;

static void otg_timer_fn(struct timer_list *t)
{
	(void)t;
	otg_expired++;
}

static void drv_add_timer(struct otg_fsm *fsm, enum otg_fsm_timer t)
{
	mod_timer(&fsm->timers[t], jiffies + 10);
}

static void drv_del_timer(struct otg_fsm *fsm, enum otg_fsm_timer t)
{
	CHECK(del_timer(&fsm->timers[t]) == 1);
}

static const struct otg_fsm_ops drv_ops = {
	.add_timer = drv_add_timer,
	.del_timer = drv_del_timer,
};

static void otg_ops_named_after_the_api(void)
{
	struct otg_fsm fsm;
	int (*del)(struct timer_list *) = del_timer;
	int (*del_sync)(struct timer_list *) = del_timer_sync;
	int (*del_try)(struct timer_list *) = timer_delete_sync_try;
	void (*destroy)(struct timer_list *) = timer_destroy_on_stack;

	memset(&fsm, 0, sizeof(fsm));
	fsm.ops = &drv_ops;
	timer_setup(&fsm.timers[A_WAIT_VRISE], otg_timer_fn, 0);
	timer_setup(&fsm.timers[A_WAIT_VFALL], otg_timer_fn, 0);
	CHECK(otg_add_timer(&fsm, A_WAIT_VRISE) == 0 && timer_pending(&fsm.timers[A_WAIT_VRISE]));
	CHECK(otg_add_timer(&fsm, A_WAIT_VFALL) == 0);
	CHECK(otg_del_timer(&fsm, A_WAIT_VRISE) == 0 && !timer_pending(&fsm.timers[A_WAIT_VRISE]));
	step(10);
	CHECK(otg_expired == 1);
	/* the functions by address, as a table of teardown calls would */
	mod_timer(&fsm.timers[A_WAIT_VRISE], jiffies + 5);
	CHECK(del(&fsm.timers[A_WAIT_VRISE]) == 1 && del(&fsm.timers[A_WAIT_VRISE]) == 0);
	mod_timer(&fsm.timers[A_WAIT_VRISE], jiffies + 5);
	CHECK(del_sync(&fsm.timers[A_WAIT_VRISE]) == 1);
	mod_timer(&fsm.timers[A_WAIT_VRISE], jiffies + 5);
	CHECK(del_try(&fsm.timers[A_WAIT_VRISE]) == 1);
	mod_timer(&fsm.timers[A_WAIT_VRISE], jiffies + 5);
	destroy(&fsm.timers[A_WAIT_VRISE]);
	CHECK(!timer_pending(&fsm.timers[A_WAIT_VRISE]));
}

int main(void)
{
	w = twheel_create(0);
	if (!w || twheel_compat_bind_wheel(w) < 0)
		return 1;
	delayed_work();
	otg_ops_named_after_the_api();
	CHECK(twheel_count(w) == 0);
	twheel_compat_unbind();
	twheel_destroy(w);
	printf("kernel_sources, HZ %d: %s\n", HZ, bad ? "FAIL" : "ok");
	return bad != 0;
}
