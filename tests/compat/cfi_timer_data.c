/*
 * cfi_timer_data - the timers of Linux before 4.15
 * (TWHEEL_COMPAT_TIMER_DATA) under clang's control-flow integrity
 * (-fsanitize=cfi-icall): every indirect call the header makes is through
 * a pointer of the callee's own type, timer_setup()'s included, so the
 * program runs to its end (exit 0). Built with -DKERNEL_CAST it also sets
 * a timer up as 4.14's timer_setup() did, casting a function that takes
 * struct timer_list * to one that takes unsigned long: CFI stops that
 * call (a trap), as meson.build expects.
 */
#define TWHEEL_COMPAT_TIMER_DATA
#include <twheel/compat/timer_list.h>

struct dev {
	int old_calls, new_calls, static_calls;
	struct timer_list by_hand, by_setup, by_timer_setup;
#ifdef KERNEL_CAST
	struct timer_list cast;
#endif
};

static struct dev dev;

static void old_style(unsigned long data)
{
	((struct dev *)data)->old_calls++;
}

static void new_style(struct timer_list *t)
{
	struct dev *d = from_timer(d, t, by_timer_setup);

	d->new_calls++;
}

static void on_static(unsigned long data)
{
	dev.static_calls += (int)data;
}

static DEFINE_TIMER(static_timer, on_static, 0, 1);

#ifdef KERNEL_CAST
static void cast_style(struct timer_list *t)
{
	(void)t;
}
#endif

int main(void)
{
	struct twheel *w = twheel_create(0);

	if (!w || twheel_compat_bind_wheel(w) < 0)
		return 2;
	init_timer(&dev.by_hand);
	dev.by_hand.function = old_style;
	dev.by_hand.data = (unsigned long)&dev;
	dev.by_hand.expires = jiffies + 1;
	add_timer(&dev.by_hand);
	setup_deferrable_timer(&dev.by_setup, old_style, (unsigned long)&dev);
	mod_timer(&dev.by_setup, jiffies + 2);
	timer_setup(&dev.by_timer_setup, new_style, 0);
	mod_timer(&dev.by_timer_setup, jiffies + 3);
	mod_timer(&static_timer, jiffies + 4);
#ifdef KERNEL_CAST
	__setup_timer(&dev.cast, (void (*)(unsigned long))cast_style, (unsigned long)&dev.cast, 0);
	mod_timer(&dev.cast, jiffies + 5);
#endif
	while (twheel_count(w))
		twheel_advance(w, twheel_next_expiry(w));
	twheel_compat_unbind();
	twheel_destroy(w);
	return dev.old_calls == 2 && dev.new_calls == 1 && dev.static_calls == 1 ? 0 : 1;
}
