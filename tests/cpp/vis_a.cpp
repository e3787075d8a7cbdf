// SPDX-License-Identifier: MIT
// vis_a - plugin A of vis_test (see vis_plugin.h).
#include "vis_plugin.h"

tw::Wheel *vis_a_wheel()
{
	return new tw::Wheel;
}

tw::Timer<> *vis_a_timer(tw::Wheel *w, vis_counts *n)
{
	auto *t = new tw::Timer<>(*w, [n] { n->fired++; });
	t->on_cancel([n] { n->cancelled++; });
	t->arm_at(tw::Wheel::time_point(std::chrono::milliseconds(10)));
	return t;
}

tw::Timer<> *vis_a_timer_without_cancel(tw::Wheel *w, vis_counts *n)
{
	auto *t = new tw::Timer<>(*w, [n] { n->fired++; });
	t->arm_at(tw::Wheel::time_point(std::chrono::milliseconds(10)));
	return t;
}

bool vis_a_cancel(tw::Timer<> *t)
{
	return t->cancel();
}
