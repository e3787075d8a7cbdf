// The C header first, then the C++ one, in one translation unit: struct
// twheel (seen as twheel_c in C++) and namespace twheel must not collide, and
// the C API must stay usable beside the C++ layer.
#include <twheel/twheel.h>
#include <twheel/list.h>

#include <twheel/twheel.hpp>

#include <gtest/gtest.h>

namespace twheel {
int answer_in_namespace() { return 42; }
} // namespace twheel

static int fired;
static void on_fire(tw_timer *) { fired++; }

TEST(IncludeOrder, CHeaderFirstThenCppHeader)
{
	twheel_c *w = twheel_create(0); // the C API, in C++
	tw_timer t;
	tw_timer_init(&t, on_fire);
	ASSERT_EQ(twheel_add(w, &t, 5), 0);
	ASSERT_EQ(twheel_advance(w, 5), 1);
	twheel_destroy(w);
	EXPECT_EQ(fired, 1);

	twheel::Wheel cw(0); // and the C++ layer
	int n = 0;
	twheel::Timer ct(cw, [&n] { n++; });
	ct.arm_at(3);
	cw.advance(3);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(twheel::answer_in_namespace(), 42);
}
