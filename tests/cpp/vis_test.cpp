// SPDX-License-Identifier: MIT
// vis_test - a tw::Timer made in one shared object built with
// -fvisibility=hidden (the norm for plugins) and cancelled, destroyed,
// fired or given its cancellation callback in another: the layer must not
// tell its own objects by the address of an inline function or table,
// which differs between the two (each cancellation callback ran 0 times).
#include "vis_plugin.h"

#include <gtest/gtest.h>

TEST(Plugins, WheelDestroyedInTheOtherRunsTheCancellationOnce)
{
	vis_counts n;
	tw::Wheel *w = vis_a_wheel();
	tw::Timer<> *t = vis_a_timer(w, &n);
	vis_b_destroy_wheel(w);
	EXPECT_EQ(n.cancelled, 1);
	EXPECT_EQ(n.fired, 0);
	EXPECT_FALSE(t->pending());
	vis_b_destroy_timer(t);
	EXPECT_EQ(n.cancelled, 1);
}

TEST(Plugins, CancelledInTheOtherRunsTheCancellationOnce)
{
	vis_counts n;
	tw::Wheel *w = vis_a_wheel();
	tw::Timer<> *t = vis_a_timer(w, &n);
	EXPECT_TRUE(vis_b_cancel(t));
	EXPECT_EQ(n.cancelled, 1);
	EXPECT_FALSE(vis_b_cancel(t));
	vis_b_destroy_timer(t);
	vis_b_destroy_wheel(w);
	EXPECT_EQ(n.cancelled, 1);
	EXPECT_EQ(n.fired, 0);
}

TEST(Plugins, DestroyedInTheOtherRunsTheCancellationOnce)
{
	vis_counts n;
	tw::Wheel *w = vis_a_wheel();
	tw::Timer<> *t = vis_a_timer(w, &n);
	vis_b_destroy_timer(t);
	EXPECT_EQ(n.cancelled, 1);
	EXPECT_EQ(w->size(), 0u);
	vis_b_destroy_wheel(w);
	EXPECT_EQ(n.cancelled, 1);
}

// The cancellation callback set in B, on a timer made in A, moved in B,
// fired by B's advance, then cancelled in A and destroyed with the wheel.
TEST(Plugins, OnCancelSetInTheOtherFireAndCancelAcross)
{
	vis_counts n;
	tw::Wheel *w = vis_a_wheel();
	tw::Timer<> *t = vis_a_timer_without_cancel(w, &n);
	vis_b_on_cancel(t, &n);
	t = vis_b_move(t);
	EXPECT_EQ(vis_b_advance(w, 10), 1u);
	EXPECT_EQ(n.fired, 1);
	t->arm_at(tw::Wheel::time_point(std::chrono::milliseconds(20)));
	EXPECT_TRUE(vis_a_cancel(t));
	EXPECT_EQ(n.cancelled, 1);
	t->arm_at(tw::Wheel::time_point(std::chrono::milliseconds(30)));
	vis_b_destroy_wheel(w);
	EXPECT_EQ(n.cancelled, 2);
	vis_b_destroy_timer(t);
	EXPECT_EQ(n.cancelled, 2);
	EXPECT_EQ(n.fired, 1);
}
