// SPDX-License-Identifier: MIT
// vis_b - plugin B of vis_test (see vis_plugin.h).
#include "vis_plugin.h"

void vis_b_destroy_wheel(tw::Wheel *w)
{
	delete w;
}

void vis_b_destroy_timer(tw::Timer<> *t)
{
	delete t;
}

bool vis_b_cancel(tw::Timer<> *t)
{
	return t->cancel();
}

std::size_t vis_b_advance(tw::Wheel *w, tw::tick_t tick)
{
	return w->advance(tw::Wheel::time_point(tick * w->tick()));
}

void vis_b_on_cancel(tw::Timer<> *t, vis_counts *n)
{
	t->on_cancel([n] { n->cancelled++; });
}

tw::Timer<> *vis_b_move(tw::Timer<> *t)
{
	auto *m = new tw::Timer<>(std::move(*t));
	delete t;
	return m;
}
