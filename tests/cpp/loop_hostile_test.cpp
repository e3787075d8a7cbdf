// SPDX-License-Identifier: MIT
// GoogleTest suite for what a hostile caller does to tw::Loop and
// tw::LoopTimer: empty callables, callables whose copy throws, a Loop
// destroyed from each kind of its callbacks, handles destroyed or moved
// from their own callbacks. Run under ASan+UBSan too: most of these failed
// there as use-after-free or leaks before the fixes.
#include <twheel/loop.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <functional>
#include <map>
#include <memory>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using tw::Loop;
using tw::LoopTimer;

namespace {

bool has_ring(const Loop &loop)
{
	return !(twheel_loop_features(loop.native_handle()) & TW_LOOP_FEAT_EPOLL);
}

// A callable whose copies throw once armed (its moves do not).
struct ThrowsOnCopy {
	static inline bool armed = false;
	ThrowsOnCopy() = default;
	ThrowsOnCopy(const ThrowsOnCopy &)
	{
		if (armed)
			throw std::runtime_error("copy");
	}
	ThrowsOnCopy(ThrowsOnCopy &&) noexcept = default;
	void operator()() const {}
	Loop::time_point now() const { return Loop::time_point(1s); }
};

} // namespace

// ---- Empty callables -----------------------------------------------------------

// Every entry point that takes a callable refuses an empty one before
// anything is queued (they were queued, and the loop thread called a null
// pointer: SIGSEGV).
TEST(LoopEmpty, EveryEntryPointRefusesAnEmptyCallable)
{
	Loop loop;
	void (*null_fn)() = nullptr;
	void (*null_timer_fn)(LoopTimer &) = nullptr;
	std::function<void()> empty;
	EXPECT_THROW(loop.post(null_fn), std::invalid_argument);
	EXPECT_THROW(loop.post(empty), std::invalid_argument);
	EXPECT_THROW(loop.after(1ms, null_fn), std::invalid_argument);
	EXPECT_THROW(loop.at(loop.now(), empty), std::invalid_argument);
	EXPECT_THROW(loop.every(1ms, null_timer_fn), std::invalid_argument);
	EXPECT_THROW(loop.timer(std::function<void(LoopTimer &)>()), std::invalid_argument);
	if (has_ring(loop)) {
		void (*null_prep)(io_uring_sqe &) = nullptr;
		void (*null_handler)(const io_uring_cqe &) = nullptr;
		auto prep = [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); };
		EXPECT_THROW(loop.submit(null_prep, [](const io_uring_cqe &) {}), std::invalid_argument);
		EXPECT_THROW(loop.submit(prep, null_handler), std::invalid_argument);
		EXPECT_THROW(loop.submit(prep, std::function<void(const io_uring_cqe &)>()), std::invalid_argument);
		EXPECT_THROW(loop.submit(std::function<void(io_uring_sqe &)>(), [](const io_uring_cqe &) {}),
			     std::invalid_argument);
	}
	EXPECT_EQ(loop.size(), 0u);
	EXPECT_EQ(loop.run_once(false), 0u); // nothing was queued
}

// An empty cancellation callback removes it, as nullptr does (as for
// tw::Timer); one whose copy throws leaves the previous one in place.
TEST(LoopEmpty, OnCancelEmptyRemovesAndAThrowingCopyKeepsThePreviousOne)
{
	Loop loop;
	int g = 0;
	LoopTimer t = loop.after(1h, [] {});
	t.on_cancel([&] { g++; });
	ThrowsOnCopy bad;
	ThrowsOnCopy::armed = true;
	EXPECT_THROW(t.on_cancel(bad), std::runtime_error);
	ThrowsOnCopy::armed = false;
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(g, 1);
	for (int i = 0; i < 3; i++) {
		t.on_cancel([&] { g += 100; });
		t.arm_in(1h);
		if (i == 0)
			t.on_cancel(nullptr);
		else if (i == 1)
			t.on_cancel(std::function<void()>());
		else
			t.on_cancel(static_cast<void (*)()>(nullptr));
		EXPECT_TRUE(t.cancel());
	}
	EXPECT_EQ(g, 1);
}

// Callables whose copy throws: the exception comes out of the call and
// nothing is queued or leaked (LSan).
TEST(LoopEmpty, CallablesWhoseCopyThrowsQueueNothing)
{
	Loop loop;
	ThrowsOnCopy bad;
	ThrowsOnCopy::armed = true;
	EXPECT_THROW(loop.post(bad), std::runtime_error);
	EXPECT_THROW(loop.after(1ms, bad), std::runtime_error);
	EXPECT_THROW(loop.every(1ms, bad), std::runtime_error);
	if (has_ring(loop)) {
		EXPECT_THROW(loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); },
					 [bad](const io_uring_cqe &) {}),
			     std::runtime_error);
	}
	ThrowsOnCopy::armed = false;
	EXPECT_EQ(loop.size(), 0u);
	EXPECT_EQ(loop.run_once(false), 0u);
}

// A clock whose copy throws: Loop() throws it and leaks nothing (the
// control block leaked: LSan).
TEST(LoopEmpty, ClockWhoseCopyThrowsLeaksNothing)
{
	tw::loop_options opt;
	opt.clock = [c = ThrowsOnCopy()] { return c.now(); };
	ThrowsOnCopy::armed = true;
	EXPECT_THROW(Loop{opt}, std::runtime_error);
	ThrowsOnCopy::armed = false;
}
