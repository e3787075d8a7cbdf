// SPDX-License-Identifier: MIT
// GoogleTest suite for twheel::Wheel and twheel::Timer (<twheel/twheel.hpp>).
#include <twheel/twheel.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using twheel::tick_t;
using twheel::Timer;
using twheel::Wheel;

// ---- counting allocator: proves what is and is not heap-allocated ---------
static std::atomic<long> g_allocs{0};

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete" // malloc/free pair by design
#endif

void *operator new(std::size_t n)
{
	g_allocs.fetch_add(1, std::memory_order_relaxed);
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

namespace {

// Fails the test if the C wheel's invariants do not hold.
void expect_consistent(const Wheel &w)
{
	char msg[256] = "";
	EXPECT_EQ(twheel_check(w.native_handle(), msg, sizeof msg), 0) << msg;
}

// Collects the exceptions a wheel reports.
struct Caught {
	std::vector<std::string> what;
	twheel::exception_handler handler()
	{
		return [this](std::exception_ptr e) {
			try {
				std::rethrow_exception(e);
			} catch (const std::exception &x) {
				what.push_back(x.what());
			} catch (...) {
				what.push_back("?");
			}
		};
	}
};

} // namespace

// ---- Wheel ------------------------------------------------------------------

TEST(Wheel, StartsEmptyAtItsStartTime)
{
	Wheel w(1000);
	EXPECT_EQ(w.now(), 1000u);
	EXPECT_EQ(w.size(), 0u);
	EXPECT_FALSE(w.next_expiry().has_value());
	EXPECT_EQ(w.tick_length(), 1ms);
	EXPECT_EQ(w.advance(5000), 0u);
	EXPECT_EQ(w.now(), 5000u);
}

TEST(Wheel, AdvanceBackwardsThrowsEinval)
{
	Wheel w(10);
	try {
		w.advance(9);
		FAIL() << "no exception";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
	}
	EXPECT_EQ(w.now(), 10u);
}

TEST(Wheel, AdvanceFromACallbackIsReportedAsEbusy)
{
	Wheel w;
	Caught c;
	w.on_exception(c.handler());
	Timer t(w, [&] { w.advance(100); });
	t.arm_at(1);
	EXPECT_EQ(w.advance(5), 1u);
	ASSERT_EQ(c.what.size(), 1u);
	EXPECT_NE(c.what[0].find("from a callback"), std::string::npos);
}

TEST(Wheel, NonPositiveTickLengthIsRejected)
{
	EXPECT_THROW(Wheel(0, 0ns), std::invalid_argument);
	EXPECT_THROW(Wheel(0, -1ms), std::invalid_argument);
}

TEST(Wheel, NextExpiryReachesTheEarliestTimer)
{
	Wheel w;
	int fired = 0;
	Timer t(w, [&] { fired++; });
	t.arm_at(123456);
	int advances = 0;
	while (auto n = w.next_expiry()) {
		ASSERT_LE(*n, 123456u);
		w.advance(*n);
		advances++;
	}
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(w.now(), 123456u);
	EXPECT_LE(advances, TWHEEL_LEVELS + 1);
}

TEST(Wheel, NextExpiryAtTickMaxIsNotNullopt)
{
	Wheel w;
	Timer t(w, [] {});
	t.arm_at(twheel::tick_max);
	EXPECT_TRUE(w.next_expiry().has_value());
}

TEST(Wheel, MoveKeepsTimersPending)
{
	Wheel a;
	int fired = 0;
	Timer t(a, [&] { fired++; });
	t.arm_at(7);
	Wheel b(std::move(a));
	EXPECT_EQ(a.size(), 0u); // NOLINT(bugprone-use-after-move): documented state
	EXPECT_EQ(a.native_handle(), nullptr);
	EXPECT_THROW(a.advance(1), std::logic_error);
	EXPECT_EQ(b.size(), 1u);
	EXPECT_TRUE(t.pending());
	b.advance(7);
	EXPECT_EQ(fired, 1);
	Wheel c;
	c = std::move(b);
	t.arm_at(20);
	c.advance(20);
	EXPECT_EQ(fired, 2);
}

TEST(Wheel, DestructionCancelsPendingTimersAndEmptiesThem)
{
	int fired = 0, cancelled = 0;
	Timer pending, idle;
	{
		Wheel w;
		pending = Timer(w, [&] { fired++; });
		pending.on_cancel([&] { cancelled++; });
		pending.arm_at(10);
		idle = Timer(w, [&] { fired++; });
		idle.on_cancel([&] { cancelled++; });
	}
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(cancelled, 1);
	EXPECT_FALSE(pending.pending());
	EXPECT_FALSE(static_cast<bool>(pending));
	EXPECT_THROW(pending.arm_at(1), std::logic_error);
	EXPECT_FALSE(pending.cancel());
	// idle was not pending: it may still be destroyed (here, at scope end).
}

// ---- Timer basics -------------------------------------------------------------

TEST(Timer, FiresExactlyOnItsTickNeverEarly)
{
	Wheel w;
	std::vector<tick_t> at;
	Timer t(w, [&] { at.push_back(w.now()); });
	EXPECT_FALSE(t.arm_at(100));
	EXPECT_TRUE(t.pending());
	EXPECT_EQ(t.expiry(), std::optional<tick_t>(100));
	w.advance(99);
	EXPECT_TRUE(at.empty());
	w.advance(100);
	ASSERT_EQ(at.size(), 1u);
	EXPECT_EQ(at[0], 100u);
	EXPECT_FALSE(t.pending());
	EXPECT_FALSE(t.expiry().has_value());
}

TEST(Timer, ArmAtReturnsWhetherItWasPending)
{
	Wheel w;
	int fired = 0;
	Timer t(w, [&] { fired++; });
	EXPECT_FALSE(t.arm_at(10));
	EXPECT_TRUE(t.arm_at(20));
	EXPECT_EQ(w.size(), 1u);
	w.advance(15);
	EXPECT_EQ(fired, 0);
	w.advance(20);
	EXPECT_EQ(fired, 1);
}

TEST(Timer, CancelReturnsWhetherItWasPending)
{
	Wheel w;
	int fired = 0;
	Timer t(w, [&] { fired++; });
	EXPECT_FALSE(t.cancel());
	t.arm_at(5);
	EXPECT_TRUE(t.cancel());
	EXPECT_FALSE(t.cancel());
	EXPECT_FALSE(t.pending());
	w.advance(10);
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(w.size(), 0u);
}

TEST(Timer, EmptyTimerCannotBeArmed)
{
	Timer t;
	EXPECT_FALSE(static_cast<bool>(t));
	EXPECT_FALSE(t.pending());
	EXPECT_FALSE(t.cancel());
	EXPECT_THROW(t.arm_at(1), std::logic_error);
	EXPECT_THROW(t.arm_in(1ms), std::logic_error);
}

TEST(Timer, NullFunctionPointerIsRejected)
{
	Wheel w;
	void (*f)() = nullptr;
	EXPECT_THROW(Timer(w, f), std::invalid_argument);
}

TEST(Timer, PendingIsFalseInsideItsOwnCallback)
{
	Wheel w;
	std::optional<bool> seen;
	Timer t(w, [&](Timer &self) { seen = self.pending(); });
	t.arm_at(3);
	w.advance(3);
	EXPECT_EQ(seen, std::optional<bool>(false));
}

TEST(Timer, ArmedFromACallbackFiresInALaterAdvance)
{
	Wheel w;
	int fired = 0;
	Timer t(w, [&](Timer &self) {
		if (++fired < 3)
			self.arm_at(w.now()); // due, but not in this advance
	});
	t.arm_at(1);
	EXPECT_EQ(w.advance(1), 1u);
	EXPECT_EQ(w.advance(1), 1u);
	EXPECT_EQ(w.advance(1), 1u);
	EXPECT_EQ(w.advance(1), 0u);
	EXPECT_EQ(fired, 3);
}

// ---- Lifetimes ---------------------------------------------------------------

TEST(Lifetime, DestroyPendingTimerNeverFires)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	{
		Timer t(w, [&] { fired++; });
		t.on_cancel([&] { cancelled++; });
		t.arm_at(10);
		EXPECT_EQ(w.size(), 1u);
	}
	EXPECT_EQ(w.size(), 0u);
	EXPECT_EQ(cancelled, 1);
	w.advance(100);
	EXPECT_EQ(fired, 0);
	expect_consistent(w);
}

TEST(Lifetime, DestroyInsideOwnCallbackKeepsCapturesAlive)
{
	Wheel w;
	auto owner = std::make_unique<Timer>();
	std::string log;
	std::string name(64, 'x'); // a heap-allocated capture: ASan sees misuse
	*owner = Timer(w, [&owner, &log, name] {
		owner.reset(); // destroys the Timer that holds this lambda
		log = name;    // the captures are still alive: the callable was lent
	});
	owner->arm_at(4);
	EXPECT_EQ(w.advance(4), 1u);
	EXPECT_EQ(owner, nullptr);
	EXPECT_EQ(log, name);
	expect_consistent(w);
}

TEST(Lifetime, DestroyInsideOwnCallbackHeapStoredCallable)
{
	Wheel w;
	auto owner = std::make_unique<Timer>();
	std::array<char, 200> big{};
	big[199] = 'z';
	char seen = 0;
	auto lam = [&owner, &seen, big] {
		owner.reset();
		seen = big[199];
	};
	static_assert(!Timer::stores_inline<decltype(lam)>);
	*owner = Timer(w, std::move(lam));
	owner->arm_at(1);
	w.advance(1);
	EXPECT_EQ(seen, 'z');
}

TEST(Lifetime, DestroyAnotherPendingTimerFromACallback)
{
	Wheel w;
	int fired_b = 0, cancelled_b = 0;
	auto b = std::make_unique<Timer>(w, [&] { fired_b++; });
	b->on_cancel([&] { cancelled_b++; });
	Timer a(w, [&] { b.reset(); });
	a.arm_at(10);
	b->arm_at(10); // same tick: b is on the list being fired right now
	// Whichever order the wheel picks, b is either destroyed before its
	// turn or has already fired; never both, never twice.
	EXPECT_GE(w.advance(10), 1u);
	EXPECT_EQ(fired_b + cancelled_b, 1);
	EXPECT_EQ(b, nullptr);
	expect_consistent(w);
}

TEST(Lifetime, MovePendingFiresOnceFromTheNewHandle)
{
	Wheel w;
	int fired = 0;
	Timer a(w, [&] { fired++; });
	a.arm_at(500);
	Timer b(std::move(a));
	EXPECT_FALSE(a.pending()); // NOLINT(bugprone-use-after-move)
	EXPECT_FALSE(static_cast<bool>(a));
	EXPECT_TRUE(b.pending());
	EXPECT_EQ(b.expiry(), std::optional<tick_t>(500));
	EXPECT_EQ(w.size(), 1u);
	expect_consistent(w);
	w.advance(499);
	EXPECT_EQ(fired, 0);
	w.advance(500);
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(w.size(), 0u);
}

TEST(Lifetime, MovePendingAcrossVectorGrowth)
{
	Wheel w;
	std::vector<int> fired(1000, 0);
	std::vector<Timer> v;
	for (int i = 0; i < 1000; i++) {
		v.emplace_back(w, [&fired, i] { fired[static_cast<size_t>(i)]++; });
		v.back().arm_at(static_cast<tick_t>(1 + (i * 7919) % 70000));
	}
	expect_consistent(w);
	EXPECT_EQ(w.size(), 1000u);
	w.advance(70000);
	for (int f : fired)
		ASSERT_EQ(f, 1);
}

TEST(Lifetime, MoveAssignOverPendingCancelsTheTarget)
{
	Wheel w;
	int fired_a = 0, fired_b = 0, cancelled_a = 0, cancelled_b = 0;
	Timer a(w, [&] { fired_a++; });
	a.on_cancel([&] { cancelled_a++; });
	Timer b(w, [&] { fired_b++; });
	b.on_cancel([&] { cancelled_b++; });
	a.arm_at(10);
	b.arm_at(20);
	a = std::move(b);
	EXPECT_EQ(cancelled_a, 1);
	EXPECT_EQ(cancelled_b, 0);
	EXPECT_EQ(w.size(), 1u);
	EXPECT_EQ(a.expiry(), std::optional<tick_t>(20));
	expect_consistent(w);
	w.advance(100);
	EXPECT_EQ(fired_a, 0);
	EXPECT_EQ(fired_b, 1);
	a.arm_at(200);
	EXPECT_TRUE(a.cancel());
	EXPECT_EQ(cancelled_b, 1); // b's cancellation callback moved with it
}

TEST(Lifetime, SelfMoveAssignIsANoOp)
{
	Wheel w;
	int fired = 0;
	Timer t(w, [&] { fired++; });
	t.arm_at(3);
	Timer &alias = t;
	t = std::move(alias);
	EXPECT_TRUE(t.pending());
	EXPECT_EQ(w.size(), 1u);
	w.advance(3);
	EXPECT_EQ(fired, 1);
}

TEST(Lifetime, MoveInsideOwnCallbackThenReArm)
{
	Wheel w;
	std::optional<Timer> holder;
	std::vector<tick_t> at;
	Timer first(w, [&, tag = std::string(40, 't')](Timer &self) {
		at.push_back(w.now());
		if (!holder) {
			holder.emplace(std::move(self)); // move the running timer
			holder->arm_at(w.now() + 5);
			EXPECT_EQ(tag.size(), 40u); // captures still alive
		}
	});
	first.arm_at(1);
	w.advance(1);
	EXPECT_FALSE(static_cast<bool>(first));
	ASSERT_TRUE(holder.has_value());
	EXPECT_TRUE(holder->pending());
	w.advance(100);
	EXPECT_EQ(at, (std::vector<tick_t>{1, 6}));
	// The callable came back into the new handle: it can fire again.
	holder->arm_at(200);
	w.advance(200);
	EXPECT_EQ(at.size(), 3u);
}

TEST(Lifetime, MovePendingTimerDueInTheSameAdvanceFromAnotherCallback)
{
	// a and b fire in the same advance; whichever runs first moves the other
	// (which is then on the list being fired, or in a level-0 slot ahead).
	for (tick_t b_at : {10u, 11u, 70u, 5000u}) {
		Wheel w;
		std::optional<Timer> moved;
		std::vector<tick_t> fired_a, fired_b;
		Timer b(w, [&] { fired_b.push_back(w.now()); });
		Timer a(w, [&] {
			fired_a.push_back(w.now());
			if (b.pending())
				moved.emplace(std::move(b));
		});
		a.arm_at(10);
		b.arm_at(b_at);
		w.advance(10000);
		EXPECT_EQ(fired_a, std::vector<tick_t>{10});
		EXPECT_EQ(fired_b, std::vector<tick_t>{b_at}) << "b at " << b_at;
		expect_consistent(w);
	}
}

TEST(Lifetime, AssignANewCallbackFromInsideTheRunningOne)
{
	Wheel w;
	std::vector<int> calls;
	Timer t;
	t = Timer(w, [&, s = std::string(30, 's')] {
		calls.push_back(1);
		t = Timer(w, [&] { calls.push_back(2); }); // replaces the running callable
		calls.push_back(static_cast<int>(s.size()));
	});
	t.arm_at(1);
	w.advance(1);
	t.arm_at(2);
	w.advance(2);
	EXPECT_EQ(calls, (std::vector<int>{1, 30, 2}));
}

TEST(Lifetime, RandomisedMovesAgainstAModel)
{
	// Timers live in a vector that is shuffled with moves, erased and
	// appended to between advances; each must fire exactly at its expiry.
	Wheel w;
	std::mt19937_64 rng(42);
	struct Rec {
		tick_t expiry = 0;
		int fires = 0;
		bool armed = false;
	};
	std::vector<Rec> recs(2000);
	std::vector<std::pair<size_t, Timer>> live;
	long bad = 0;
	for (size_t id = 0; id < recs.size(); id++) {
		live.emplace_back(id, Timer(w, [&, id] {
					  Rec &r = recs[id];
					  if (!r.armed || w.now() != r.expiry)
						  bad++;
					  r.fires++;
					  r.armed = false;
				  }));
	}
	for (int round = 0; round < 200; round++) {
		for (int k = 0; k < 50; k++) {
			auto &[id, t] = live[rng() % live.size()];
			tick_t e = w.now() + 1 + rng() % 5000;
			t.arm_at(e);
			recs[id].expiry = e;
			recs[id].armed = true;
		}
		for (int k = 0; k < 20; k++) {
			size_t i = rng() % live.size(), j = rng() % live.size();
			std::swap(live[i], live[j]); // three moves, pending or not
		}
		if (round % 7 == 0) {
			size_t i = rng() % live.size();
			if (live[i].second.cancel())
				recs[live[i].first].armed = false;
		}
		expect_consistent(w);
		w.advance(w.now() + rng() % 100);
	}
	w.advance(w.now() + 10000);
	EXPECT_EQ(bad, 0);
	for (const Rec &r : recs)
		EXPECT_FALSE(r.armed);
	expect_consistent(w);
}

// ---- Callable kinds ----------------------------------------------------------

namespace {
int g_fn_calls = 0;
void plain_function() { g_fn_calls++; }

struct MoveOnly {
	std::unique_ptr<int> p;
	int *out;
	void operator()() { *out += *p; }
};
} // namespace

TEST(Callables, SmallCaptureIsStoredInlineWithoutAllocation)
{
	Wheel w;
	int a = 0, b = 0;
	auto two_ptrs = [&a, &b] { a++, b++; };
	static_assert(sizeof(two_ptrs) == Timer::inline_capacity);
	static_assert(Timer::stores_inline<decltype(two_ptrs)>);
	long before = g_allocs.load();
	{
		Timer t(w, two_ptrs);
		t.arm_at(1);
		w.advance(1);
		t.arm_in(5ms);
		Timer u(std::move(t));
		w.advance(10);
	}
	EXPECT_EQ(g_allocs.load() - before, 0);
	EXPECT_EQ(a + b, 4);
}

TEST(Callables, BasicTimerWithLargerInlineCapacity)
{
	using Timer48 = twheel::BasicTimer<48>;
	Wheel w;
	int a = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
	auto six_ptrs = [&a, &b, &c, &d, &e, &f] { a++, b++, c++, d++, e++, f++; };
	static_assert(sizeof(six_ptrs) == Timer48::inline_capacity);
	static_assert(Timer48::stores_inline<decltype(six_ptrs)>);
	static_assert(!Timer::stores_inline<decltype(six_ptrs)>);
	long before = g_allocs.load();
	{
		Timer48 t(w, six_ptrs);
		t.arm_at(1);
		w.advance(1);
		t.arm_in(5ms);
		Timer48 u(std::move(t));
		w.advance(10);
	}
	EXPECT_EQ(g_allocs.load() - before, 0);
	EXPECT_EQ(a + b + c + d + e + f, 12);
}

TEST(Callables, LargeCaptureIsHeapAllocatedOnce)
{
	Wheel w;
	std::array<long, 7> big{1, 2, 3, 4, 5, 6, 7};
	long sum = 0;
	auto lam = [big, &sum] { for (long x : big) sum += x; };
	static_assert(twheel::BasicTimer<48>::stores_inline<decltype(lam)> == false);
	static_assert(sizeof(lam) > Timer::inline_capacity);
	static_assert(!Timer::stores_inline<decltype(lam)>);
	long before = g_allocs.load();
	{
		Timer t(w, lam);
		EXPECT_EQ(g_allocs.load() - before, 1);
		t.arm_at(1);
		Timer u(std::move(t)); // moves the pointer, not the callable
		w.advance(1);
		u.arm_at(2);
		w.advance(2);
	}
	EXPECT_EQ(g_allocs.load() - before, 1); // freed by ~Timer (ASan checks)
	EXPECT_EQ(sum, 56);
}

TEST(Callables, FunctionPointer)
{
	Wheel w;
	g_fn_calls = 0;
	Timer t(w, &plain_function);
	Timer u(w, plain_function);
	t.arm_at(1);
	u.arm_at(1);
	w.advance(1);
	EXPECT_EQ(g_fn_calls, 2);
}

TEST(Callables, MoveOnlyCallable)
{
	Wheel w;
	int out = 0;
	Timer t(w, MoveOnly{std::make_unique<int>(7), &out});
	t.arm_at(1);
	Timer u = std::move(t);
	w.advance(1);
	u.arm_at(2);
	w.advance(2);
	EXPECT_EQ(out, 14);
}

TEST(Callables, MoveOnlyLambda)
{
	Wheel w;
	int out = 0;
	Timer t(w, [p = std::make_unique<int>(3), &out] { out = *p; });
	t.arm_at(1);
	w.advance(1);
	EXPECT_EQ(out, 3);
}

TEST(Callables, MutableStateSurvivesBetweenFires)
{
	Wheel w;
	std::vector<int> seen;
	Timer t(w, [n = 0, &seen](Timer &self) mutable {
		seen.push_back(++n);
		if (n < 4)
			self.arm_at(self.native_handle()->expires + 10);
	});
	t.arm_at(10);
	while (auto n = w.next_expiry())
		w.advance(*n);
	EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4}));
	EXPECT_EQ(w.now(), 40u);
}

TEST(Callables, StdFunctionAndNonVoidResult)
{
	Wheel w;
	int n = 0;
	std::function<void()> f = [&] { n++; };
	Timer t(w, f);
	Timer u(w, [&] { return ++n; }); // the result is ignored
	t.arm_at(1);
	u.arm_at(1);
	w.advance(1);
	EXPECT_EQ(n, 2);
}

TEST(Callables, NonNothrowMovableGoesToTheHeap)
{
	struct Throwy {
		Throwy() = default;
		Throwy(Throwy &&) noexcept(false) {}
		Throwy(const Throwy &) = default;
		void operator()() {}
	};
	static_assert(!Timer::stores_inline<Throwy>);
	struct alignas(32) Overaligned {
		void operator()() {}
	};
	static_assert(!Timer::stores_inline<Overaligned>);
	Wheel w;
	Timer t(w, Throwy{});
	Timer u(w, Overaligned{});
	t.arm_at(1);
	u.arm_at(1);
	EXPECT_EQ(w.advance(1), 2u);
}

// ---- Cancellation callback -------------------------------------------------

TEST(OnCancel, NeverCalledOnExpiryOrReArm)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	Timer t(w, [&] { fired++; });
	t.on_cancel([&] { cancelled++; });
	t.arm_at(5);
	t.arm_at(6); // re-arm: not a cancellation
	w.advance(10);
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(cancelled, 0);
	EXPECT_FALSE(t.cancel()); // already fired: nothing to cancel
	EXPECT_EQ(cancelled, 0);
	t.arm_at(20);
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(cancelled, 1);
	t.on_cancel(nullptr);
	t.arm_at(30);
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(cancelled, 1);
}

TEST(OnCancel, LargeCancellationCallbackIsFreed)
{
	Wheel w;
	std::string s(100, 'c');
	std::string got;
	Timer t(w, [] {});
	t.on_cancel([s, &got] { got = s; });
	t.arm_at(1);
	t.cancel();
	EXPECT_EQ(got, s);
}

TEST(OnCancel, FirstCallAllocatesTheBoxOnceLaterCallsReuseIt)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	Timer t(w, [&fired] { fired++; });
	long before = g_allocs.load();
	t.on_cancel([&cancelled] { cancelled++; }); // the box: one allocation
	EXPECT_EQ(g_allocs.load() - before, 1);
	t.on_cancel([&cancelled] { cancelled += 10; }); // fits the box: none
	EXPECT_EQ(g_allocs.load() - before, 1);
	t.arm_at(5);
	Timer u(std::move(t)); // a boxed timer moves its pointer
	EXPECT_TRUE(u.pending());
	EXPECT_TRUE(u.cancel());
	EXPECT_EQ(cancelled, 10);
	u.arm_at(6);
	w.advance(6);
	EXPECT_EQ(fired, 1); // the callable moved into the box and still works
	EXPECT_EQ(g_allocs.load() - before, 1);
	u.on_cancel(nullptr);
	u.arm_at(7);
	EXPECT_TRUE(u.cancel());
	EXPECT_EQ(cancelled, 10);
}

TEST(OnCancel, OnAHandleWithoutCallbackThrows)
{
	Timer t;
	EXPECT_THROW(t.on_cancel([] {}), std::logic_error);
	t.on_cancel(nullptr); // removing nothing is fine
}

TEST(OnCancel, SetInsideTheRunningCallbackOfAnInlineCallable)
{
	// The callable is lent out while it runs; boxing the timer then must
	// bring it back into the box when it returns.
	Wheel w;
	int fired = 0, cancelled = 0;
	Timer t(w, [&fired, &cancelled](Timer &self) {
		fired++;
		if (fired == 1) {
			self.on_cancel([&cancelled] { cancelled++; });
			self.arm_at(100);
		}
	});
	t.arm_at(1);
	w.advance(1);
	EXPECT_EQ(fired, 1);
	EXPECT_TRUE(t.pending());
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(cancelled, 1);
	t.arm_at(2);
	w.advance(2);
	EXPECT_EQ(fired, 2);
	expect_consistent(w);
}

TEST(OnCancel, SetInsideTheRunningCallbackThenMovedThenDestroyed)
{
	Wheel w;
	std::optional<Timer> holder;
	auto owner = std::make_unique<Timer>();
	int fired = 0, cancelled = 0;
	*owner = Timer(w, [&](Timer &self) {
		fired++;
		self.on_cancel([&cancelled] { cancelled++; });
		holder.emplace(std::move(self)); // boxed and lent: the guard follows
		owner.reset();
		holder->arm_at(50);
	});
	owner->arm_at(1);
	w.advance(1);
	ASSERT_TRUE(holder.has_value());
	EXPECT_TRUE(holder->pending());
	holder.reset(); // pending: cancellation callback runs
	EXPECT_EQ(cancelled, 1);
	w.advance(100);
	EXPECT_EQ(fired, 1);
}

TEST(OnCancel, SetInsideTheRunningCallbackThenDestroyed)
{
	Wheel w;
	auto owner = std::make_unique<Timer>();
	int cancelled = 0;
	std::string name(50, 'n');
	std::string seen;
	*owner = Timer(w, [&owner, &cancelled, &seen](Timer &self) {
		self.on_cancel([&cancelled] { cancelled++; });
		owner.reset(); // not pending: no cancellation; box freed
		seen = "alive";
	});
	owner->arm_at(1);
	w.advance(1);
	EXPECT_EQ(owner, nullptr);
	EXPECT_EQ(cancelled, 0);
	EXPECT_EQ(seen, "alive");
}

TEST(OnCancel, HeapCallableDestroyedInsideItsOwnCallbackWithCancel)
{
	Wheel w;
	auto owner = std::make_unique<Timer>();
	std::array<char, 100> big{};
	big[99] = 'q';
	char seen = 0;
	*owner = Timer(w, [&owner, &seen, big] {
		owner.reset(); // the box is orphaned, freed when this returns
		seen = big[99];
	});
	owner->on_cancel([] {});
	owner->arm_at(1);
	w.advance(1);
	EXPECT_EQ(seen, 'q');
}

// ---- Every inline capacity behaves the same ---------------------------------

template <class T>
class AnyCapacity : public testing::Test {};
using Capacities = testing::Types<twheel::BasicTimer<8>, twheel::BasicTimer<16>, twheel::BasicTimer<24>,
				  twheel::BasicTimer<48>>;
TYPED_TEST_SUITE(AnyCapacity, Capacities);

TYPED_TEST(AnyCapacity, LifetimesWithSmallAndLargeCallables)
{
	using T = TypeParam;
	Wheel w;
	std::vector<int> fired(4, 0);
	int cancelled = 0;
	std::string s(20, 's'); // non-trivial capture: relocated by the trampoline
	std::vector<T> v;
	v.emplace_back(w, [&fired] { fired[0]++; });
	v.emplace_back(w, [&fired, s] { fired[1] += static_cast<int>(s.size()); });
	v.emplace_back(w, [&fired, big = std::array<long, 8>{}] { fired[2] += static_cast<int>(big.size()); });
	v.emplace_back(w, [&fired](T &self) {
		if (++fired[3] < 3)
			self.arm_at(self.native_handle()->expires + 1);
	});
	for (T &t : v)
		t.arm_at(10);
	v[1].on_cancel([&cancelled] { cancelled++; });
	for (int i = 0; i < 20; i++)
		v.emplace_back(w, [] {}); // growth moves the pending ones
	T moved(std::move(v[0]));
	v[0] = std::move(v[2]); // v[0] was empty; v[2] is now empty
	T &self_alias = v[0];
	v[0] = std::move(self_alias);
	EXPECT_TRUE(moved.pending() && v[0].pending() && v[1].pending() && v[3].pending());
	expect_consistent(w);
	w.advance(10);
	w.advance(11);
	w.advance(12);
	EXPECT_EQ(fired, (std::vector<int>{1, 20, 8, 3}));
	v[1].arm_at(50);
	v.clear(); // destroys pending v[1]: its cancellation callback runs
	EXPECT_EQ(cancelled, 1);
	EXPECT_EQ(w.size(), 0u);
}

// ---- Exceptions --------------------------------------------------------------

TEST(Exceptions, GoToTheHandlerAndTheAdvanceCarriesOn)
{
	Wheel w;
	Caught c;
	w.on_exception(c.handler());
	int after = 0;
	Timer t1(w, [] { throw std::runtime_error("boom"); });
	Timer t2(w, [] { throw 42; });
	Timer t3(w, [&] { after++; });
	t1.arm_at(1);
	t2.arm_at(2);
	t3.arm_at(3);
	EXPECT_EQ(w.advance(3), 3u);
	EXPECT_EQ(after, 1);
	EXPECT_EQ(c.what, (std::vector<std::string>{"boom", "?"}));
	expect_consistent(w);
}

TEST(Exceptions, DefaultHandlerPrintsWhatAndCarriesOn)
{
	Wheel w;
	int after = 0;
	Timer t1(w, [] { throw std::runtime_error("printed to stderr"); });
	Timer t2(w, [&] { after++; });
	t1.arm_at(1);
	t2.arm_at(1);
	testing::internal::CaptureStderr();
	w.advance(1);
	std::string err = testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("printed to stderr"), std::string::npos) << err;
	EXPECT_EQ(after, 1);
}

TEST(Exceptions, ThrowingHandlerIsContained)
{
	Wheel w;
	w.on_exception([](std::exception_ptr) { throw std::logic_error("handler"); });
	Timer t(w, [] { throw std::runtime_error("cb"); });
	t.arm_at(1);
	testing::internal::CaptureStderr();
	EXPECT_NO_THROW(w.advance(1));
	EXPECT_NE(testing::internal::GetCapturedStderr().find("handler threw"), std::string::npos);
}

TEST(Exceptions, FromCancellationCallbacks)
{
	Caught c;
	{
		Wheel w;
		w.on_exception(c.handler());
		Timer t(w, [] {});
		t.on_cancel([] { throw std::runtime_error("cancel"); });
		t.arm_at(1);
		EXPECT_TRUE(t.cancel());
		t.arm_at(2);
		// destruction of the wheel with t pending also reports
		Timer u(w, [] {});
		u.on_cancel([] { throw std::runtime_error("drain"); });
		u.arm_at(3);
		Wheel moved(std::move(w));
		(void)moved;
		// ~moved: t's and u's cancellation callbacks throw, reported
		// through the handler the context carries.
	}
	std::sort(c.what.begin(), c.what.end());
	EXPECT_EQ(c.what, (std::vector<std::string>{"cancel", "cancel", "drain"}));
}

TEST(Exceptions, ExceptionDoesNotLoseTheCallable)
{
	Wheel w;
	Caught c;
	w.on_exception(c.handler());
	int n = 0;
	Timer t(w, [&n] {
		if (++n == 1)
			throw std::runtime_error("first");
	});
	t.arm_at(1);
	w.advance(1);
	t.arm_at(2);
	w.advance(2);
	EXPECT_EQ(n, 2);
	EXPECT_EQ(c.what.size(), 1u);
}

// ---- chrono conversion ----------------------------------------------------

TEST(Chrono, RoundsUpToWholeTicks)
{
	using namespace std::chrono;
	const nanoseconds ms = 1ms;
	EXPECT_EQ(twheel::ticks_ceil(0ns, ms), 0u);
	EXPECT_EQ(twheel::ticks_ceil(-5s, ms), 0u);
	EXPECT_EQ(twheel::ticks_ceil(1ns, ms), 1u);
	EXPECT_EQ(twheel::ticks_ceil(1ms, ms), 1u);
	EXPECT_EQ(twheel::ticks_ceil(1001us, ms), 2u);
	EXPECT_EQ(twheel::ticks_ceil(2s, ms), 2000u);
	EXPECT_EQ(twheel::ticks_ceil(duration<double>(0.0015), ms), 2u);
	EXPECT_EQ(twheel::ticks_ceil(duration<double, std::milli>(3.0), ms), 3u);
	EXPECT_EQ(twheel::ticks_ceil(duration<double>(std::nan("")), ms), 0u);
	EXPECT_EQ(twheel::ticks_ceil(duration<long long, std::pico>(1), ms), 1u);
	EXPECT_EQ(twheel::ticks_ceil(duration<long long, std::pico>(1'000'000'000), ms), 1u);
	EXPECT_EQ(twheel::ticks_ceil(duration<long long, std::pico>(1'000'000'001), ms), 2u);
	EXPECT_EQ(twheel::ticks_ceil(15ms, 10ms), 2u);
	EXPECT_EQ(twheel::ticks_ceil(hours::max(), ms), twheel::tick_max);
	EXPECT_EQ(twheel::ticks_ceil(hours(1'000'000), ms), 3'600'000'000'000u);
	EXPECT_EQ(twheel::ticks_ceil(duration<double>(1e300), ms), twheel::tick_max);
	EXPECT_EQ(twheel::ticks_ceil(duration<unsigned, std::ratio<86400>>(3), 1h), 72u);
	EXPECT_EQ(twheel::ticks_ceil(nanoseconds::max(), 1ns), static_cast<tick_t>(nanoseconds::max().count()));
}

TEST(Chrono, RandomDurationsNeverFireEarlyNorATickLate)
{
	using namespace std::chrono;
	std::mt19937_64 rng(42);
	for (nanoseconds tick : {nanoseconds(1ms), nanoseconds(7), nanoseconds(1s), nanoseconds(333us)}) {
		for (int i = 0; i < 20000; i++) {
			const nanoseconds d(static_cast<long long>(rng() % 10'000'000'000ull));
			const tick_t n = twheel::ticks_ceil(d, tick);
			ASSERT_GE(static_cast<long double>(n) * tick.count(), d.count());
			if (n > 0) {
				ASSERT_LT(static_cast<long double>(n - 1) * tick.count(), d.count());
			}
			const duration<double, std::micro> f(static_cast<double>(d.count()) / 1000.0);
			const tick_t nf = twheel::ticks_ceil(f, tick);
			ASSERT_GE(static_cast<long double>(nf) * tick.count(), f.count() * 1000.0L - 1e-3L);
		}
	}
}

TEST(Chrono, ArmInFromTheWheelsTimeNeverEarly)
{
	Wheel w(1000, 10ms);
	tick_t at = 0;
	Timer t(w, [&] { at = w.now(); });
	t.arm_in(25ms); // 2.5 ticks -> 3
	EXPECT_EQ(t.expiry(), std::optional<tick_t>(1003));
	w.advance(1002);
	EXPECT_EQ(at, 0u);
	w.advance(1003);
	EXPECT_EQ(at, 1003u);
	t.arm_in(-1s); // in the past: fires on the next advance
	EXPECT_EQ(w.advance(w.now()), 1u);
	t.arm_in(std::chrono::hours::max());
	EXPECT_EQ(t.expiry(), std::optional<tick_t>(twheel::tick_max));
	EXPECT_EQ(w.to_ticks(std::chrono::milliseconds(20)), 2u);
}

// ---- Layout ---------------------------------------------------------------

TEST(Layout, DocumentedSizes)
{
	EXPECT_EQ(Timer::inline_capacity, 16u);
	EXPECT_EQ(Timer::cancel_inline_capacity, 16u);
	EXPECT_EQ(twheel::BasicTimer<48>::inline_capacity, 48u);
#if !TWHEEL_DEBUG_CHECKS && UINTPTR_MAX == UINT64_MAX
	// the C node (40) + the wheel's context pointer (8) + inline storage
	EXPECT_EQ(sizeof(tw_timer), 40u);
	EXPECT_EQ(sizeof(Timer), 64u);
	EXPECT_EQ(sizeof(twheel::BasicTimer<8>), 56u);
	EXPECT_EQ(sizeof(twheel::BasicTimer<24>), 72u);
	EXPECT_EQ(sizeof(twheel::BasicTimer<48>), 96u);
	// the C node + the wheel's context pointer, nothing else
	EXPECT_EQ(sizeof(twheel::TimerHook<struct LayoutHookOwner>), 48u);
#endif
	EXPECT_EQ(sizeof(Timer), sizeof(tw_timer) + sizeof(void *) + Timer::inline_capacity);
	EXPECT_TRUE(std::is_nothrow_move_constructible_v<Timer>);
	EXPECT_FALSE(std::is_copy_constructible_v<Timer>);
	EXPECT_FALSE(std::is_copy_constructible_v<Wheel>);
}
