// SPDX-License-Identifier: MIT
// vis_plugin.h - the two plugins of vis_test: shared objects built with
// -fvisibility=hidden, so each has its own copy of every inline function
// and table of <twheel/twheel.hpp>. A makes timers, B cancels, destroys
// and advances them.
#ifndef TWHEEL_VIS_PLUGIN_H
#define TWHEEL_VIS_PLUGIN_H

#include <twheel/twheel.hpp>

#define VIS_API extern "C" __attribute__((visibility("default")))

struct vis_counts {
	int fired = 0;
	int cancelled = 0;
};

// A: a wheel; a pending Timer on @w (armed at tick 10) counting into @n,
// with a cancellation callback; a Timer whose on_cancel() is left to B.
VIS_API tw::Wheel *vis_a_wheel();
VIS_API tw::Timer<> *vis_a_timer(tw::Wheel *w, vis_counts *n);
VIS_API tw::Timer<> *vis_a_timer_without_cancel(tw::Wheel *w, vis_counts *n);
VIS_API bool vis_a_cancel(tw::Timer<> *t);

// B: destroy a wheel or a timer, cancel, advance, set on_cancel().
VIS_API void vis_b_destroy_wheel(tw::Wheel *w);
VIS_API void vis_b_destroy_timer(tw::Timer<> *t);
VIS_API bool vis_b_cancel(tw::Timer<> *t);
VIS_API std::size_t vis_b_advance(tw::Wheel *w, tw::tick_t tick);
VIS_API void vis_b_on_cancel(tw::Timer<> *t, vis_counts *n);
VIS_API tw::Timer<> *vis_b_move(tw::Timer<> *t);

#endif
