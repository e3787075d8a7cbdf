// SPDX-License-Identifier: MIT
// asio_fail_test - tw::AsioHost when the steady_timer's wait cannot be
// started: operator new fails on demand (Asio's recycling of handler
// memory is off in this program, so every wait allocates). std::bad_alloc
// used to escape through the C host: out of the noexcept add() (terminate)
// and out of twheel_host_run(). Now add() and mod() undo their arm and
// return -ENOMEM, a failure after a run or a placement is thrown out of
// io_context::run() (outside any C frame), a placement that cannot be
// posted is made at once, and no pending timer is lost: the wait is
// retried.
#define BOOST_ASIO_DISABLE_SMALL_BLOCK_RECYCLING 1
#include <twheel/asio.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>

using namespace std::chrono_literals;

static std::atomic<int> g_fail{0}; // fail this many of the next allocations
static std::atomic<int> g_skip{0}; // ...after letting this many succeed

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete" // malloc/free pair by design

void *operator new(std::size_t n)
{
	if (g_skip > 0)
		g_skip--;
	else
		for (int f = g_fail.load(); f > 0;)
			if (g_fail.compare_exchange_weak(f, f - 1))
				throw std::bad_alloc();
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

struct Rec : tw::Hook<tw::AsioHost, Rec> {
	using Hook::Hook;
	int fired = 0;
	int fail_after = 0; // fail this many allocations when it fires
	void on_timer()
	{
		fired++;
		g_fail = fail_after;
	}
};

// Arms hook @r @d from now: 0, or the -errno of the tw::error it throws.
template <class R, class D>
int arm(R &r, D d)
{
	try {
		r.arm_in(d);
		return 0;
	} catch (const tw::error &e) {
		return -e.code().value();
	}
}

// Runs @arm with the next allocation failing: 0, or the -errno of the
// tw::error it throws.
template <class F>
int without_memory(F arm)
{
	g_fail = 1;
	int rc = 0;
	try {
		arm();
	} catch (const tw::error &e) {
		rc = -e.code().value();
	}
	g_fail = 0;
	return rc;
}

// A clock that stands still (ns) unless the test moves it: the rt of a
// host whose test must not depend on how long the machine takes between
// two of its statements (a stall that made a later timer due).
std::uint64_t g_still_ns;
std::uint64_t still_ns(void *) { return g_still_ns; }
twheel_rt still_rt()
{
	twheel_rt rt;
	g_still_ns = 1000000000;
	twheel_rt_init(&rt, 1000000, still_ns, nullptr);
	return rt;
}

} // namespace

// The arming that needs a new wait cannot start it: -ENOMEM, the timer is
// not pending, and the timer that was pending still fires (its wait,
// cancelled by the failed re-arm, is started again). (An arm by delay
// while a timer is pending first posts its placement: that post fails
// too, and the host places at once.)
TEST(AsioHostFailure, AddWhoseWaitCannotStartFailsCleanly)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec late(h), early(h);
	// early must come first: a run stalled until late was due (at 30 ms,
	// 1 of 40 runs under load) needs no new wait, so no failure; then
	// the second failing allocation was the test's own (std::bad_alloc
	// out of the test). Such a run is made again.
	for (int tries = 1;; tries++) {
		const auto t0 = std::chrono::steady_clock::now();
		ASSERT_EQ(arm(late, 300ms), 0);
		g_fail = 2;
		const int rc = arm(early, 1ms);
		const int unused = g_fail.exchange(0);
		if (std::chrono::steady_clock::now() - t0 >= 250ms && tries < 3) {
			early.cancel();
			continue;
		}
		EXPECT_EQ(rc, -ENOMEM);
		EXPECT_EQ(unused, 0);
		break;
	}
	EXPECT_FALSE(early.pending());
	EXPECT_TRUE(late.pending());
	io.run(); // returns once late has fired: its wait was started again
	EXPECT_EQ(late.fired, 1);
	EXPECT_EQ(early.fired, 0);

	// the first timer of an idle host, and a re-arm: the same
	g_fail = 1;
	EXPECT_EQ(arm(early, 1ms), -ENOMEM);
	EXPECT_FALSE(early.pending());
	EXPECT_EQ(arm(early, 1ms), 0);
	io.restart();
	io.run();
	EXPECT_EQ(early.fired, 1);
}

// A pending timer re-armed earlier while its wait cannot start: the arm
// is undone, and the timer is no longer pending, so that is its
// cancellation. Its cancellation callback did not run (a hook's
// on_cancel() neither), and a periodic timer stayed periodic, never to
// run again (cancel() said true later and ran the callback then). Also
// when an owed wait cannot be resumed before the arm. The clock stands
// still: on the steady clock a stall of a millisecond between the two
// arms put the second at or after the wait the first left (for its 1 ms),
// which needs no new wait and so succeeds, and one of 400 ms before
// io.run() made c due in the run of other, so not pending to cancel
// (under load, 38 of 28,500 runs).
struct Closing : tw::Hook<tw::AsioHost, Closing> {
	using Hook::Hook;
	int cancels = 0;
	void on_timer() {}
	void on_cancel() { cancels++; }
};
TEST(AsioHostFailure, PendingTimerWhoseReArmFailsIsCancelled)
{
	for (int owed : {0, 1}) {
		boost::asio::io_context io;
		const twheel_rt rt = still_rt();
		tw::AsioHost h(io, &rt);
		int cancels = 0;
		tw::Timer<tw::AsioHost> t(h, [] {});
		t.on_cancel([&] { cancels++; });
		Closing c(h);
		Rec other(h);
		t.arm_every(300ms); // never due: the clock stands still
		c.arm_at(h.now() + 400ms);
		if (owed) { // the re-arm after a run failed: the wait is owed
			other.fail_after = 1;
			other.arm_at(h.now());
			EXPECT_THROW(io.run(), std::bad_alloc);
		}
		// the wait each arm needs (earlier), or the owed one first
		EXPECT_EQ(without_memory([&] { t.arm_at(h.now() + 1ms); }), -ENOMEM);
		EXPECT_EQ(without_memory([&] { c.arm_at(h.now()); }), -ENOMEM);
		EXPECT_FALSE(t.pending());
		EXPECT_EQ(cancels, 1);
		EXPECT_EQ(t.period(), 0ns); // ended
		EXPECT_FALSE(t.cancel());
		EXPECT_EQ(cancels, 1);
		EXPECT_FALSE(c.pending());
		EXPECT_EQ(c.cancels, 1);
	}
}

// The re-arm after a run fails: io_context::run() throws std::bad_alloc
// (not through twheel_host_run()), the next timer stays pending, and
// resume() starts its wait.
TEST(AsioHostFailure, ReArmAfterARunFailsOutOfRunAndResumes)
{
	boost::asio::io_context io;
	const twheel_rt rt = still_rt();
	tw::AsioHost h(io, &rt);
	Rec first(h), second(h);
	first.fail_after = 1;
	ASSERT_EQ(arm(first, 1ms), 0);
	ASSERT_EQ(arm(second, 200ms), 0);
	g_still_ns += 2000000; // first due, second not, whatever the machine's stalls
	EXPECT_THROW(io.run(), std::bad_alloc);
	g_fail = 0;
	EXPECT_EQ(first.fired, 1);
	EXPECT_TRUE(second.pending());
	io.restart();
	EXPECT_EQ(io.run_for(50ms), 0u); // no wait: nothing runs
	EXPECT_EQ(second.fired, 0);
	g_fail = 1;
	EXPECT_EQ(h.resume(), -ENOMEM); // still owed
	EXPECT_EQ(h.resume(), 0);
	EXPECT_EQ(h.resume(), 0); // nothing owed
	g_still_ns += 200000000;
	io.restart();
	io.run();
	EXPECT_EQ(second.fired, 1);
}

// The placement of an arm by delay cannot be posted: the host places it at
// once (the timer is not lost, and fires), and nothing throws.
TEST(AsioHostFailure, PlacementThatCannotBePostedIsMadeAtOnce)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec late(h), early(h);
	ASSERT_EQ(arm(late, 30ms), 0);
	g_fail = 1; // the post
	EXPECT_EQ(arm(early, 1ms), 0);
	EXPECT_EQ(g_fail, 0);
	EXPECT_TRUE(early.pending());
	EXPECT_EQ(twheel_host_place(h.get()), 0); // already placed
	io.run();
	EXPECT_EQ(early.fired, 1);
	EXPECT_EQ(late.fired, 1);
}

// The placement runs, but the wait its batch needs cannot start:
// io_context::run() throws std::bad_alloc (out of the handler, not through
// the C host), the timer stays pending, and resume() starts its wait.
TEST(AsioHostFailure, WaitAfterAPlacementFailsOutOfRunAndResumes)
{
	boost::asio::io_context io;
	const twheel_rt rt = still_rt();
	tw::AsioHost h(io, &rt);
	Rec late(h), early(h);
	ASSERT_EQ(arm(late, 300ms), 0); // not due at the placement: the clock stands still
	EXPECT_EQ(arm(early, 1ms), 0);  // parked, its placement posted
	g_fail = 1;                     // the wait the placement starts
	EXPECT_THROW(io.run_one(), std::bad_alloc);
	g_fail = 0;
	EXPECT_TRUE(early.pending());
	EXPECT_EQ(early.fired, 0);
	EXPECT_EQ(h.resume(), 0);
	g_still_ns += 300000000;
	io.restart();
	io.run();
	EXPECT_EQ(early.fired, 1);
	EXPECT_EQ(late.fired, 1);
}

// A placement still queued when the host is destroyed, with no wait
// outstanding (the re-arm after a run failed: its wait is owed; the
// timers outlive the host, so that no cancel starts it again), so that
// nothing but the placement handler refers to the host's state: the
// handler must find it gone (ASan: a handler that kept a plain pointer
// reads freed memory here).
TEST(AsioHostFailure, PlacementQueuedWhenTheHostIsDestroyedWithNoWait)
{
	boost::asio::io_context io;
	tw_timer c;
	tw_timer_init(&c, [](tw_timer *) { ADD_FAILURE() << "ran after its host was destroyed"; });
	std::unique_ptr<Rec> first, second;
	{
		const twheel_rt rt = still_rt();
		tw::AsioHost h(io, &rt);
		first = std::make_unique<Rec>(h);
		second = std::make_unique<Rec>(h);
		first->fail_after = 1;
		ASSERT_EQ(arm(*first, 1ms), 0);
		ASSERT_EQ(arm(*second, 200ms), 0);
		g_still_ns += 2000000; // first due, second not, whatever the stalls
		EXPECT_THROW(io.run(), std::bad_alloc); // the wait for second is owed
		g_fail = 0;
		EXPECT_EQ(twheel_host_mod(h.get(), &c, 1000000), 0); // parked, placement posted
		EXPECT_TRUE(tw_timer_pending(&c));
	}
	EXPECT_FALSE(tw_timer_pending(&c));
	EXPECT_FALSE(second->pending());
	io.restart();
	EXPECT_EQ(io.run(), 1u); // the placement handler, which does nothing
}

// Each allocation of the constructor failing in turn: std::bad_alloc,
// and nothing leaks (LeakSanitizer). The control block was allocated
// after the C host, whose wheel leaked when that allocation failed.
TEST(AsioHostFailure, ConstructorOutOfMemoryLeaksNothing)
{
	boost::asio::io_context io;
	int failed = 0;
	for (int k = 0; k < 20; k++) {
		g_skip = k;
		g_fail = 1;
		try {
			tw::AsioHost h(io);
			tw::Timer<tw::AsioHost> t(h, [] {});
			g_fail = 0;
			t.arm_in(1ms);
			io.run();
			break;
		} catch (const std::bad_alloc &) {
			failed++;
		}
	}
	g_fail = 0;
	g_skip = 0;
	EXPECT_GE(failed, 3); // the state, the host's wheel, the control block at least
}
