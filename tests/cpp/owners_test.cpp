// SPDX-License-Identifier: MIT
//
// One scenario, every owner: typed tests that run the same program on
// tw::Wheel, tw::Loop and tw::AsioHost, each on a clock the test moves by
// hand, and expect the same observable behaviour (docs/cpp.md: "the two
// types are the same on every owner"). step(d) moves the clock by d and
// makes one pass of the owner: one advance(), one loop iteration, one
// host run (started at once by a timer of the driver's own, due then).
#include <twheel/asio.hpp>
#include <twheel/loop.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "caught.h"

using namespace std::chrono_literals;

namespace {

std::atomic<std::int64_t> g_ns{1'000'000'000}; // the clock of every owner here

template <class O>
struct Drive;

template <>
struct Drive<tw::Wheel> {
	std::unique_ptr<tw::Wheel> o =
		std::make_unique<tw::Wheel>(1ms, tw::Wheel::time_point(std::chrono::nanoseconds(g_ns.load())));
	void settle() {}
	void pump()
	{
		if (o)
			o->advance(tw::Wheel::time_point(std::chrono::nanoseconds(g_ns.load())));
	}
};

template <>
struct Drive<tw::Loop> {
	std::unique_ptr<tw::Loop> o;
	Drive()
	{
		tw::loop_options opt;
		opt.clock = [] { return tw::Loop::time_point(std::chrono::nanoseconds(g_ns.load())); };
		o = std::make_unique<tw::Loop>(opt);
		settle();
	}
	// an arm_in() counts from the loop's next reading: let it place it
	void settle()
	{
		if (o)
			o->run_once(false);
	}
	void pump() { settle(); }
};

template <>
struct Drive<tw::AsioHost> {
	boost::asio::io_context io;
	twheel_rt rt{};
	std::unique_ptr<tw::AsioHost> o;
	Drive()
	{
		twheel_rt_init(&rt, 1000000, [](void *) { return static_cast<std::uint64_t>(g_ns.load()); }, nullptr);
		o = std::make_unique<tw::AsioHost>(io, &rt);
	}
	// an arm_in() waits for its placement, a posted handler
	void settle()
	{
		io.restart();
		io.poll();
	}
	// The host's wait is on the real clock: a timer due now makes it run,
	// once (its arm re-arms the wait: one that came due on the real clock
	// meanwhile runs nothing).
	void pump()
	{
		if (!o)
			return settle();
		bool ran = false;
		tw::Timer<tw::AsioHost> kick(*o, [&] { ran = true; });
		kick.arm_at(tw::AsioHost::time_point(std::chrono::nanoseconds(g_ns.load())));
		for (int i = 0; i < 500 && !ran && kick; i++) {
			io.restart();
			io.run_one_for(10ms);
		}
		ASSERT_TRUE(ran || !kick);
	}
};

template <class O>
struct Owners : ::testing::Test {
	using T = tw::Timer<O>;
	using tp = typename O::time_point;
	std::unique_ptr<Drive<O>> d;
	std::int64_t t0 = 0;
	void SetUp() override
	{
		try {
			d = std::make_unique<Drive<O>>();
		} catch (const std::system_error &e) {
			GTEST_SKIP() << "no owner here: " << e.what();
		}
		t0 = g_ns.load();
	}
	O &o() { return *d->o; }
	void step(std::chrono::nanoseconds by)
	{
		g_ns += by.count();
		d->pump();
	}
	// the clock, ms since the test began
	std::int64_t ms() const { return (g_ns.load() - t0) / 1000000; }
	// a time point @by after the clock
	tp at(std::chrono::nanoseconds by) const { return tp(std::chrono::nanoseconds(g_ns.load()) + by); }
};

using OwnerTypes = ::testing::Types<tw::Wheel, tw::Loop, tw::AsioHost>;
struct OwnerName {
	template <class O>
	static std::string GetName(int)
	{
		return std::is_same_v<O, tw::Wheel> ? "Wheel" : std::is_same_v<O, tw::Loop> ? "Loop" : "AsioHost";
	}
};
TYPED_TEST_SUITE(Owners, OwnerTypes, OwnerName);

} // namespace

// A callback re-arms its own timer: each run one period after the last.
TYPED_TEST(Owners, ReArmInTheCallback)
{
	using T = typename TestFixture::T;
	std::vector<std::int64_t> ran;
	T t(this->o(), [&](T &self) {
		ran.push_back(this->ms());
		if (ran.size() < 3)
			self.arm_in(10ms);
	});
	t.arm_in(10ms);
	this->d->settle();
	for (int i = 0; i < 5; i++)
		this->step(10ms);
	EXPECT_EQ(ran, (std::vector<std::int64_t>{10, 20, 30}));
	EXPECT_FALSE(t.pending());
	EXPECT_EQ(this->o().size(), 0u);
}

// A callback moves its own timer, re-armed, over another pending one: the
// target's cancellation callback runs once, the target now holds the
// timer, which goes on firing from there; its own callback then moving it
// over itself changes nothing.
TYPED_TEST(Owners, MoveAPendingTimerOverAnotherFromItsOwnCallback)
{
	using T = typename TestFixture::T;
	int a = 0, b = 0, b_cancelled = 0;
	T target(this->o(), [&] { b++; });
	target.on_cancel([&] { b_cancelled++; });
	target.arm_in(50ms);
	T src(this->o(), [&](T &self) {
		a++;
		self.arm_in(10ms);
		if (&self == &src)
			target = std::move(self);
		else
			self = std::move(self);
	});
	src.arm_in(10ms);
	this->d->settle();
	this->step(10ms);
	EXPECT_EQ(a, 1);
	EXPECT_EQ(b_cancelled, 1);
	EXPECT_FALSE(src);
	EXPECT_FALSE(src.pending());
	EXPECT_TRUE(target.pending());
	EXPECT_EQ(this->o().size(), 1u);
	EXPECT_EQ(target.expiry(), this->at(10ms));
	this->step(10ms);
	this->step(10ms);
	EXPECT_EQ(a, 3);
	EXPECT_EQ(b, 0);
	EXPECT_TRUE(target.pending());
	EXPECT_TRUE(target.cancel());
	EXPECT_EQ(b_cancelled, 1); // the timer moved in has no cancellation callback
	EXPECT_EQ(this->o().size(), 0u);
}

// The same with periodic timers, the moved one moving itself out of its
// running frame: it runs on at its period from the target.
TYPED_TEST(Owners, MoveAPeriodicTimerOverAnotherFromItsOwnCallback)
{
	using T = typename TestFixture::T;
	std::vector<std::int64_t> ran;
	int other = 0, cancelled = 0;
	T target = this->o().every(7ms, [&] { other++; });
	target.on_cancel([&] { cancelled++; });
	T src = this->o().every(10ms, [&](T &self) {
		ran.push_back(this->ms());
		if (&self == &src)
			target = std::move(self);
	});
	for (int i = 0; i < 4; i++)
		this->step(5ms);
	// target ran at 7 ms; src at 10 ms moved over it (cancelled once)
	EXPECT_EQ(other, 1);
	EXPECT_EQ(cancelled, 1);
	EXPECT_FALSE(src);
	EXPECT_EQ(target.period(), 10ms);
	for (int i = 0; i < 4; i++)
		this->step(5ms);
	EXPECT_EQ(ran, (std::vector<std::int64_t>{10, 20, 30, 40}));
	EXPECT_EQ(other, 1);
	EXPECT_TRUE(target.cancel());
	EXPECT_EQ(this->o().size(), 0u);
}

// A cancellation callback destroys the owner: outside a run it closes at
// once (the other pending timers' cancellation callbacks run); inside one,
// when the run returns, after the timers due in it.
TYPED_TEST(Owners, OwnerDestroyedFromACancellationCallback)
{
	using T = typename TestFixture::T;
	int other_cancelled = 0;
	T other(this->o(), [] { ADD_FAILURE() << "fired after its owner was destroyed"; });
	other.on_cancel([&] { other_cancelled++; });
	other.arm_in(1h);
	T t(this->o(), [] { ADD_FAILURE(); });
	t.on_cancel([&] { this->d->o.reset(); });
	t.arm_in(1h);
	this->d->settle();
	EXPECT_TRUE(t.cancel());
	EXPECT_FALSE(this->d->o);
	EXPECT_EQ(other_cancelled, 1);
	EXPECT_FALSE(t);
	EXPECT_FALSE(other.pending());
	EXPECT_FALSE(t.cancel());
	EXPECT_THROW(t.arm_in(1ms), tw::error);
}

TYPED_TEST(Owners, OwnerDestroyedFromACancellationCallbackInARun)
{
	using T = typename TestFixture::T;
	std::vector<char> log;
	T later(this->o(), [&] { log.push_back('L'); });
	later.on_cancel([&] { log.push_back('l'); });
	later.arm_in(1h);
	T victim(this->o(), [&] { log.push_back('V'); });
	victim.on_cancel([&] {
		log.push_back('v');
		this->d->o.reset();
	});
	victim.arm_in(1h);
	T first(this->o(), [&] {
		log.push_back('F');
		victim.cancel();
		// arming is dropped from then on
		EXPECT_FALSE(later.arm_in(1ms));
		EXPECT_FALSE(victim.arm_in(1ms));
	});
	T second(this->o(), [&] { log.push_back('S'); });
	first.arm_at(this->at(10ms));
	second.arm_at(this->at(10ms)); // due in the same run: it still runs
	this->step(10ms);
	EXPECT_FALSE(this->d->o);
	ASSERT_FALSE(log.empty());
	EXPECT_EQ(log.back(), 'l'); // when the run returned
	std::sort(log.begin(), log.end());
	EXPECT_EQ(log, (std::vector<char>{'F', 'S', 'l', 'v'}));
	EXPECT_FALSE(later);
	EXPECT_FALSE(victim.pending());
}

// A periodic timer after a long stall: misfire::all runs once per pass for
// each deadline passed, missed() counting down; once runs once; skip none.
TYPED_TEST(Owners, PeriodicAfterALongStall)
{
	using T = typename TestFixture::T;
	for (const tw::misfire m : {tw::misfire::all, tw::misfire::once, tw::misfire::skip}) {
		std::vector<std::uint32_t> missed;
		std::vector<std::int64_t> when;
		const std::int64_t start = this->ms();
		T t = this->o().every(10ms, [&](T &self) {
			missed.push_back(self.missed());
			when.push_back(this->ms() - start);
		}, m);
		this->step(10ms);
		this->step(100ms);
		for (int i = 0; i < 12; i++)
			this->step(0ms);
		this->step(10ms);
		SCOPED_TRACE(static_cast<int>(m));
		if (m == tw::misfire::all) {
			EXPECT_EQ(missed, (std::vector<std::uint32_t>{0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0}));
			EXPECT_EQ(when, (std::vector<std::int64_t>{10, 110, 110, 110, 110, 110, 110, 110, 110, 110, 110, 120}));
		} else if (m == tw::misfire::once) {
			EXPECT_EQ(missed, (std::vector<std::uint32_t>{0, 9, 0}));
			EXPECT_EQ(when, (std::vector<std::int64_t>{10, 110, 120}));
		} else {
			EXPECT_EQ(missed, (std::vector<std::uint32_t>{0, 0}));
			EXPECT_EQ(when, (std::vector<std::int64_t>{10, 120}));
		}
		EXPECT_TRUE(t.cancel());
	}
}

// arm_every() then arm_in(): the next run moves, the grid counts from it.
TYPED_TEST(Owners, ArmEveryThenArmIn)
{
	using T = typename TestFixture::T;
	std::vector<std::int64_t> ran;
	T t(this->o(), [&] { ran.push_back(this->ms()); });
	t.arm_every(10ms);
	EXPECT_TRUE(t.arm_in(25ms));
	this->d->settle();
	for (int i = 0; i < 12; i++)
		this->step(5ms);
	EXPECT_EQ(ran, (std::vector<std::int64_t>{25, 35, 45, 55}));
	EXPECT_EQ(t.period(), 10ms);
	// and arm_at() from its own callback
	T u(this->o(), [&](T &self) {
		ran.push_back(this->ms());
		if (ran.size() == 1)
			self.arm_at(this->at(3ms));
	});
	ran.clear();
	t.cancel();
	u.arm_every(10ms);
	for (int i = 0; i < 6; i++)
		this->step(5ms);
	EXPECT_EQ(ran, (std::vector<std::int64_t>{70, 75, 85}));
}

// What callbacks and cancellation callbacks throw goes to the handler, the
// run carries on, the callable stays; without a handler, and from a
// handler that throws, it is printed.
TYPED_TEST(Owners, ExceptionsFromCallbacksAndCancellationCallbacks)
{
	using T = typename TestFixture::T;
	Caught caught;
	this->o().on_exception(caught.handler());
	int ran = 0;
	T thrower(this->o(), [] { throw std::runtime_error("fire"); });
	thrower.on_cancel([] { throw std::runtime_error("cancel"); });
	T after(this->o(), [&] { ran++; });
	thrower.arm_at(this->at(10ms));
	after.arm_at(this->at(10ms));
	this->step(10ms);
	EXPECT_EQ(caught.what, (std::vector<std::string>{"fire"}));
	EXPECT_EQ(ran, 1);
	thrower.arm_at(this->at(10ms));
	this->step(10ms);
	thrower.arm_at(this->at(10ms));
	EXPECT_TRUE(thrower.cancel());
	EXPECT_EQ(caught.what, (std::vector<std::string>{"fire", "fire", "cancel"}));

	// no handler: printed
	this->o().on_exception(nullptr);
	thrower.arm_at(this->at(10ms));
	after.arm_at(this->at(10ms));
	::testing::internal::CaptureStderr();
	this->step(10ms);
	EXPECT_TRUE(thrower.arm_at(this->at(10ms)) == false);
	EXPECT_TRUE(thrower.cancel());
	std::string err = ::testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("twheel: a callback threw: fire"), std::string::npos) << err;
	EXPECT_NE(err.find("twheel: a callback threw: cancel"), std::string::npos) << err;
	EXPECT_EQ(ran, 2);

	// a handler that throws: printed, the run carries on
	int handled = 0;
	this->o().on_exception([&](std::exception_ptr) {
		handled++;
		throw std::runtime_error("handler");
	});
	thrower.arm_at(this->at(10ms));
	after.arm_at(this->at(10ms));
	::testing::internal::CaptureStderr();
	this->step(10ms);
	err = ::testing::internal::GetCapturedStderr();
	EXPECT_EQ(handled, 1);
	EXPECT_EQ(ran, 3);
	EXPECT_NE(err.find("twheel: a callback threw: handler"), std::string::npos) << err;
	// a handler that destroys the owner: the run still ends cleanly
	this->o().on_exception([&](std::exception_ptr) { this->d->o.reset(); });
	thrower.arm_at(this->at(10ms));
	after.arm_at(this->at(10ms));
	this->step(10ms);
	EXPECT_FALSE(this->d->o);
	EXPECT_FALSE(thrower);
}

// call_after(): fire and forget; the owner destroyed first destroys the
// callable uncalled; one armed while the owner closes is dropped.
TYPED_TEST(Owners, CallAfterAndTheOwnerDestroyedFirst)
{
	auto token = std::make_shared<int>(0);
	int ran = 0;
	this->o().call_after(10ms, [token, &ran] { ran++; });
	this->d->settle();
	EXPECT_EQ(token.use_count(), 2);
	EXPECT_EQ(this->o().size(), 1u);
	this->step(10ms);
	EXPECT_EQ(ran, 1);
	EXPECT_EQ(token.use_count(), 1);
	EXPECT_EQ(this->o().size(), 0u);
	this->o().call_after(1h, [token] { ADD_FAILURE(); });
	// and one made from the cancellation callback of the owner's close
	{
		typename TestFixture::T t(this->o(), [] {});
		t.on_cancel([o = &this->o(), token] { o->call_after(1ms, [token] { ADD_FAILURE(); }); });
		t.arm_in(1h);
		this->d->settle();
		EXPECT_EQ(token.use_count(), 3);
		this->d->o.reset();
		EXPECT_EQ(token.use_count(), 2); // t's cancellation callback
	}
	EXPECT_EQ(token.use_count(), 1);
}

TYPED_TEST(Owners, CallAfterWhoseCallableDestroysTheOwner)
{
	auto token = std::make_shared<int>(0);
	int ran = 0;
	this->o().call_after(10ms, [this, token, &ran] {
		ran++;
		this->d->o.reset();
	});
	this->o().call_after(10ms, [token, &ran] { ran++; });
	this->o().call_after(20ms, [token] { ADD_FAILURE(); });
	this->d->settle();
	EXPECT_EQ(token.use_count(), 4);
	this->step(10ms);
	EXPECT_FALSE(this->d->o);
	EXPECT_EQ(ran, 2);
	EXPECT_EQ(token.use_count(), 1);
}

// Time points and durations of extreme values, on every owner alike.
TYPED_TEST(Owners, ExtremeTimesAndDurations)
{
	using T = typename TestFixture::T;
	using tp = typename TestFixture::tp;
	using clk = typename tp::clock;
	int ran = 0;
	T t(this->o(), [&] { ran++; });
	// the end of time: pending, never fires, expiry() saturated
	t.arm_at(tp::max());
	this->step(1h);
	EXPECT_TRUE(t.pending());
	EXPECT_EQ(t.expiry(), tp::max());
	EXPECT_EQ(ran, 0);
	t.arm_in(std::chrono::hours::max());
	this->d->settle();
	EXPECT_EQ(t.expiry(), tp::max());
	t.arm_in(std::chrono::duration<double>(INFINITY));
	this->d->settle();
	EXPECT_EQ(t.expiry(), tp::max());
	this->step(1h);
	EXPECT_EQ(ran, 0);
	// before the epoch, negative, NaN, -inf: due at once
	const std::vector<std::function<void()>> past = {
		[&] { t.arm_at(tp::min()); },
		[&] { t.arm_at(std::chrono::time_point<clk, std::chrono::milliseconds>(-5ms)); },
		[&] { t.arm_in(-5ms); },
		[&] { t.arm_in(std::chrono::nanoseconds::min()); },
		[&] { t.arm_in(std::chrono::duration<double>(NAN)); },
		[&] { t.arm_in(std::chrono::duration<double>(-INFINITY)); },
		[&] { t.arm_at(std::chrono::time_point<clk, std::chrono::duration<double>>(std::chrono::duration<double>(NAN))); },
	};
	for (std::size_t i = 0; i < past.size(); i++) {
		SCOPED_TRACE(i);
		past[i]();
		EXPECT_TRUE(t.pending());
		this->step(1ms);
		EXPECT_EQ(ran, static_cast<int>(i + 1));
		EXPECT_FALSE(t.pending());
	}
	// floating durations round up, never early
	ran = 0;
	t.arm_in(std::chrono::duration<double, std::milli>(2.5));
	this->d->settle();
	this->step(2ms);
	EXPECT_EQ(ran, 0);
	this->step(1ms);
	EXPECT_EQ(ran, 1);
	// bad periods
	for (auto bad : {std::chrono::duration<double>(NAN), std::chrono::duration<double>(-1),
			 std::chrono::duration<double>(0), std::chrono::duration<double>(-INFINITY),
			 std::chrono::duration<double>(1e-7)}) {
		try {
			t.arm_every(bad);
			ADD_FAILURE() << bad.count();
		} catch (const tw::error &e) {
			EXPECT_EQ(e.code().value(), EINVAL);
			EXPECT_STREQ(e.what(), "tw: bad duration");
		}
		EXPECT_FALSE(t.pending());
		EXPECT_EQ(t.period(), 0ns);
	}
	// an infinite period: armed at the end of time, never runs
	t.arm_every(std::chrono::duration<double>(INFINITY));
	EXPECT_TRUE(t.pending());
	EXPECT_EQ(t.expiry(), tp::max());
	this->step(1h);
	EXPECT_EQ(ran, 1);
	t.arm_every(std::chrono::hours::max());
	EXPECT_TRUE(t.pending());
	this->step(1h);
	EXPECT_EQ(ran, 1);
	EXPECT_TRUE(t.cancel());
}

namespace {
struct TagA {};
struct TagB {};
template <class O>
struct Two : tw::Hook<O, Two<O>, TagA>, tw::Hook<O, Two<O>, TagB> {
	using A = tw::Hook<O, Two<O>, TagA>;
	using B = tw::Hook<O, Two<O>, TagB>;
	std::vector<char> *log;
	Two(O &o, std::vector<char> *l) : A(o), B(o), log(l) {}
	void on_timer(TagA) { log->push_back('a'); }
	void on_timer(TagB) { log->push_back('b'); }
	void on_cancel(TagA) { log->push_back('A'); }
	void on_cancel(TagB) { log->push_back('B'); }
};
} // namespace

// Two hooks in one object, told apart by their tag; the object moved while
// both are pending, each moved over itself; the owner's end cancels both.
TYPED_TEST(Owners, TwoTaggedHooksMovedWhilePending)
{
	using O = TypeParam;
	using Obj = Two<O>;
	std::vector<char> log;
	auto x = std::make_unique<Obj>(this->o(), &log);
	x->Obj::A::arm_in(10ms);
	x->Obj::B::arm_in(20ms);
	this->d->settle();
	Obj y(std::move(*x));
	x.reset();
	EXPECT_TRUE(y.Obj::A::pending());
	EXPECT_TRUE(y.Obj::B::pending());
	auto &ya = static_cast<typename Obj::A &>(y);
	ya = std::move(ya);
	EXPECT_TRUE(ya.pending());
	this->step(10ms);
	EXPECT_EQ(log, (std::vector<char>{'a'}));
	EXPECT_FALSE(y.Obj::A::cancel());
	EXPECT_TRUE(y.Obj::B::cancel());
	EXPECT_EQ(log, (std::vector<char>{'a', 'B'}));
	y.Obj::A::arm_in(1h);
	y.Obj::B::arm_in(1h);
	this->d->settle();
	EXPECT_EQ(this->o().size(), 2u);
	this->d->o.reset();
	std::sort(log.begin(), log.end());
	EXPECT_EQ(log, (std::vector<char>{'A', 'B', 'B', 'a'}));
	EXPECT_FALSE(y.Obj::A::pending());
}

// Self-move-assignment of a pending Timer, from outside and from its own
// callback, keeps it as it was.
TYPED_TEST(Owners, SelfMoveAssignment)
{
	using T = typename TestFixture::T;
	int ran = 0, cancelled = 0;
	T t = this->o().every(10ms, [&](T &self) {
		ran++;
		self = std::move(self);
	});
	t.on_cancel([&] { cancelled++; });
	T &alias = t;
	t = std::move(alias);
	EXPECT_TRUE(t.pending());
	this->step(10ms);
	this->step(10ms);
	EXPECT_EQ(ran, 2);
	EXPECT_EQ(cancelled, 0);
	EXPECT_TRUE(t.pending());
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(cancelled, 1);
}

// missed() of a timer that is no longer periodic (cancelled, then armed
// once) is 0: it was the last periodic run's count, stale.
TYPED_TEST(Owners, MissedOfATimerNoLongerPeriodicIsZero)
{
	using T = typename TestFixture::T;
	std::vector<std::uint32_t> missed;
	T t = this->o().every(10ms, [&](T &self) { missed.push_back(self.missed()); }, tw::misfire::once);
	this->step(10ms);
	this->step(50ms);
	EXPECT_EQ(missed, (std::vector<std::uint32_t>{0, 4}));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(t.period(), 0ns);
	EXPECT_EQ(t.missed(), 0u);
	t.arm_in(10ms);
	this->d->settle();
	this->step(10ms);
	EXPECT_EQ(missed, (std::vector<std::uint32_t>{0, 4, 0}));
}

// What a callback does to the other timers due in the same pass: one
// cancelled or re-armed later does not run in it; one moved to another
// handle (a vector growing) runs in it, from there; one armed by the
// callback for now or the past runs in the next pass, not this one.
TYPED_TEST(Owners, CallbacksActOnTimersDueInTheSamePass)
{
	using T = typename TestFixture::T;
	std::vector<std::string> log;
	std::vector<T> moved;
	T cancelled(this->o(), [&] { log.push_back("cancelled"); });
	T later(this->o(), [&] { log.push_back("later@" + std::to_string(this->ms())); });
	T mover(this->o(), [&] { log.push_back("mover"); });
	T now(this->o(), [&] { log.push_back("now@" + std::to_string(this->ms())); });
	T past(this->o(), [&] { log.push_back("past@" + std::to_string(this->ms())); });
	T first(this->o(), [&] {
		log.push_back("first");
		EXPECT_TRUE(cancelled.cancel());
		EXPECT_TRUE(later.arm_in(5ms));
		moved.push_back(std::move(mover));
		EXPECT_TRUE(moved.back().pending());
		EXPECT_FALSE(now.arm_in(0ms));
		EXPECT_FALSE(past.arm_at(this->at(-5ms)));
	});
	first.arm_at(this->at(10ms));
	for (T *t : {&cancelled, &later, &mover})
		t->arm_at(this->at(11ms));
	this->step(11ms);
	std::sort(log.begin(), log.end());
	EXPECT_EQ(log, (std::vector<std::string>{"first", "mover"}));
	EXPECT_TRUE(now.pending());
	EXPECT_TRUE(past.pending());
	log.clear();
	this->step(0ms);
	std::sort(log.begin(), log.end());
	EXPECT_EQ(log, (std::vector<std::string>{"now@11", "past@11"}));
	log.clear();
	this->step(5ms);
	EXPECT_EQ(log, (std::vector<std::string>{"later@16"}));
	EXPECT_EQ(this->o().size(), 0u);
}

// arm_at() moves a periodic timer's grid to its deadline as expiry()
// reports it: on a Wheel or an AsioHost rounded up to the tick, on a Loop
// exact. A period that is not a whole number of ticks shows it: each
// owner runs at the ticks its own expiry() gives, never early.
TYPED_TEST(Owners, ArmAtMovesTheGridToItsExpiry)
{
	using T = typename TestFixture::T;
	std::vector<std::int64_t> ran, want;
	T t(this->o(), [&] { ran.push_back(this->ms()); });
	t.arm_every(1500us);
	t.arm_at(this->at(10300us));
	const std::int64_t e = t.expiry().time_since_epoch().count() - this->t0; // ns since the test began
	EXPECT_EQ(e, (std::is_same_v<TypeParam, tw::Loop> ? 10300000 : 11000000));
	for (std::int64_t at = e; at <= 20000000; at += 1500000)
		want.push_back((at + 999999) / 1000000);
	this->d->settle();
	for (int i = 0; i < 20; i++)
		this->step(1ms);
	EXPECT_EQ(ran, want);
}

namespace {
// A periodic hook as docs/cpp.md shows it: it keeps its own next deadline.
template <class O>
struct Beat : tw::Hook<O, Beat<O>> {
	typename O::time_point next;
	std::function<void()> seen;
	explicit Beat(O &o) : tw::Hook<O, Beat<O>>(o) {}
	void on_timer()
	{
		seen();
		this->arm_at(next += 1500us);
	}
};
} // namespace

// The documented periodic hook, period 1.5 ms on 1 ms ticks: it runs on
// the ticks of its exact grid on every owner, ceil(1.5 k) ms, where
// arm_at(expiry() + period) would run every 2 ms on a Wheel or an
// AsioHost (their expiry() is rounded up to the tick).
TYPED_TEST(Owners, PeriodicHookKeepsItsOwnGrid)
{
	std::vector<std::int64_t> ran, want;
	Beat<TypeParam> b(this->o());
	b.seen = [&] { ran.push_back(this->ms()); };
	b.arm_at(b.next = this->at(1500us));
	this->d->settle();
	for (int i = 0; i < 30; i++)
		this->step(1ms);
	for (std::int64_t k = 1; k * 1500 <= 30000; k++)
		want.push_back((k * 1500 + 999) / 1000);
	EXPECT_EQ(ran, want);
	EXPECT_TRUE(b.pending());
}

// An owner whose clock is near its end (10 ms before steady_clock's last
// whole ms; the clock of these tests stays on whole ticks): timers due
// before the end run, one due after it is pending at time_point::max()
// and never runs, periodic ones run up to the end, nothing overflows.
TYPED_TEST(Owners, ClockNearItsEnd)
{
	using T = typename TestFixture::T;
	using tp = typename TestFixture::tp;
	const std::int64_t saved = g_ns.load();
	constexpr std::int64_t start = std::numeric_limits<std::int64_t>::max() / 1000000 * 1000000 - 10'000'000;
	g_ns = start;
	{
		Drive<TypeParam> d;
		std::vector<std::int64_t> ran, beats;
		auto rel = [] { return (g_ns.load() - start) / 1000000; };
		T soon(*d.o, [&] { ran.push_back(rel()); });
		T never(*d.o, [&] { ran.push_back(-1); });
		T beat = d.o->every(2ms, [&] { beats.push_back(rel()); });
		soon.arm_in(5ms);
		never.arm_in(1h);
		d.settle();
		EXPECT_EQ(never.expiry(), tp::max());
		for (int i = 0; i < 10; i++) { // to the last whole ms
			g_ns += 1000000;
			d.pump();
		}
		EXPECT_EQ(ran, (std::vector<std::int64_t>{5}));
		EXPECT_TRUE(never.pending());
		EXPECT_EQ(beats, (std::vector<std::int64_t>{2, 4, 6, 8, 10}));
		EXPECT_TRUE(beat.cancel());
		EXPECT_TRUE(never.cancel());
	}
	g_ns = saved;
}

namespace {
// A record with a hook whose on_cancel() erases another record and then
// its own: the owner's destruction meets records freed under it.
template <class O>
struct Rec : tw::Hook<O, Rec<O>> {
	std::vector<std::unique_ptr<Rec>> *all;
	std::size_t i;
	int *cancels;
	Rec(O &o, std::vector<std::unique_ptr<Rec>> *a, std::size_t k, int *c) : tw::Hook<O, Rec>(o), all(a), i(k), cancels(c) {}
	void on_timer() {}
	void on_cancel()
	{
		++*cancels;
		auto &v = *all;
		v[(i * 7 + 3) % v.size()].reset(); // another one, pending or not (or this)
		v[i].reset();                     // this one
	}
};
} // namespace

// The owner destroyed with many pending hooks and timers whose
// cancellation callbacks destroy others still pending, and themselves:
// each that is still there when its turn comes runs once, nothing is
// touched after it is freed (ASan), nothing leaks.
TYPED_TEST(Owners, DestructionWhoseCancellationsEraseOtherPendingTimers)
{
	using O = TypeParam;
	using T = typename TestFixture::T;
	for (const bool in_run : {false, true}) {
		SCOPED_TRACE(in_run ? "from a callback" : "outside a run");
		if (in_run)
			this->d = std::make_unique<Drive<O>>();
		constexpr std::size_t n = 64;
		int hook_cancels = 0, timer_cancels = 0;
		std::vector<std::unique_ptr<Rec<O>>> recs(n);
		std::vector<std::unique_ptr<T>> timers(n);
		for (std::size_t i = 0; i < n; i++) {
			recs[i] = std::make_unique<Rec<O>>(this->o(), &recs, i, &hook_cancels);
			recs[i]->arm_in(std::chrono::milliseconds(101 + i % 9));
			timers[i] = std::make_unique<T>(this->o(), [] {});
			timers[i]->on_cancel([&timers, &timer_cancels, i] {
				timer_cancels++;
				timers[(i * 5 + 1) % n].reset();
				timers[i].reset();
			});
			timers[i]->arm_in(std::chrono::milliseconds(101 + i % 13));
		}
		T killer(this->o(), [this] { this->d->o.reset(); });
		killer.arm_in(100ms);
		this->d->settle();
		EXPECT_EQ(this->o().size(), 2 * n + 1);
		if (in_run)
			this->step(100ms);
		else
			this->d->o.reset();
		EXPECT_FALSE(this->d->o);
		EXPECT_GT(hook_cancels, 0);
		EXPECT_GT(timer_cancels, 0);
		EXPECT_LT(hook_cancels, static_cast<int>(n)); // some were erased before their turn
		EXPECT_EQ(std::count(recs.begin(), recs.end(), nullptr), static_cast<std::ptrdiff_t>(n));
		EXPECT_EQ(std::count(timers.begin(), timers.end(), nullptr), static_cast<std::ptrdiff_t>(n));
	}
}

// A periodic callback destroys the owner: the run finishes (a timer due
// in it still runs), the periodic timer ends (its cancellation callback
// runs once), what is armed from then on is dropped (arm_every() false
// and not periodic), and a call_after() made before is destroyed uncalled.
TYPED_TEST(Owners, PeriodicCallbackDestroysTheOwner)
{
	using T = typename TestFixture::T;
	auto token = std::make_shared<int>(0);
	int beats = 0, cancelled = 0, other = 0;
	T late(this->o(), [] { ADD_FAILURE(); });
	T beat = this->o().every(10ms, [&](T &self) {
		if (++beats < 2)
			return;
		const typename TestFixture::tp when = self.expiry();
		this->o().call_after(1ms, [token] { ADD_FAILURE(); });
		this->d->o.reset();
		EXPECT_FALSE(late.arm_in(1ms));
		EXPECT_FALSE(self.arm_every(5ms));
		EXPECT_EQ(self.expiry(), when);
	});
	beat.on_cancel([&] { cancelled++; });
	T same(this->o(), [&] { other++; }); // due in the run that destroys the owner
	same.arm_at(this->at(20ms));
	this->step(10ms);
	this->step(10ms);
	EXPECT_FALSE(this->d->o);
	EXPECT_EQ(beats, 2);
	EXPECT_EQ(other, 1);
	EXPECT_EQ(cancelled, 1);
	EXPECT_FALSE(beat.pending());
	EXPECT_EQ(beat.period(), 0ns);
	EXPECT_FALSE(beat.cancel());
	EXPECT_EQ(token.use_count(), 1);
}

// Cancellation callbacks that throw while the owner is destroyed: each
// exception goes to the handler (or is printed without one), and every
// other pending timer is still cancelled.
TYPED_TEST(Owners, CancellationCallbacksThrowWhileTheOwnerIsDestroyed)
{
	using T = typename TestFixture::T;
	for (const bool handler : {true, false}) {
		if (!handler)
			this->d = std::make_unique<Drive<TypeParam>>();
		Caught caught;
		if (handler)
			this->o().on_exception(caught.handler());
		int quiet = 0;
		std::vector<std::unique_ptr<T>> ts;
		for (int i = 0; i < 6; i++) {
			ts.push_back(std::make_unique<T>(this->o(), [] {}));
			if (i % 2)
				ts.back()->on_cancel([] { throw std::runtime_error("g"); });
			else
				ts.back()->on_cancel([&] { quiet++; });
			ts.back()->arm_in(std::chrono::milliseconds(10 + i));
		}
		this->d->settle();
		::testing::internal::CaptureStderr();
		this->d->o.reset();
		const std::string err = ::testing::internal::GetCapturedStderr();
		EXPECT_EQ(quiet, 3);
		if (handler) {
			EXPECT_EQ(caught.what, (std::vector<std::string>(3, "g")));
			EXPECT_EQ(err, "");
		} else {
			EXPECT_EQ(err, "twheel: a callback threw: g\ntwheel: a callback threw: g\ntwheel: a callback threw: g\n");
		}
		for (auto &t : ts)
			EXPECT_FALSE(t->pending());
	}
}

namespace {
// One random program (seeded) of arm_at(), arm_every(), cancel(), moves
// and steps over six slots; returns its operations and each timer's runs
// ("id@ms/missed").
template <class O>
std::vector<std::string> random_program(unsigned seed, int ops)
{
	using T = tw::Timer<O>;
	Drive<O> d;
	const std::int64_t t0 = g_ns.load();
	std::mt19937 rng(seed);
	auto pick = [&](unsigned k) { return static_cast<int>(rng() % k); };
	std::vector<std::string> runs;
	std::vector<T> slot;
	std::vector<int> count(6);
	for (int i = 0; i < 6; i++) {
		// the callback acts on its own timer only (a pass's order is the
		// owner's), by its count: re-arm, cancel, make periodic, nothing
		slot.emplace_back(*d.o, [&runs, &count, t0, i](T &self) {
			const std::int64_t ms = (g_ns.load() - t0) / 1000000;
			runs.push_back(std::to_string(i) + "@" + std::to_string(ms) + "/" + std::to_string(self.missed()));
			const auto now = typename O::time_point(std::chrono::nanoseconds(g_ns.load()));
			switch ((count[static_cast<std::size_t>(i)]++ * 7 + i) % 9) {
			case 0: self.arm_at(now + std::chrono::milliseconds(i % 4)); break;
			case 1: self.cancel(); break;
			case 2: self.arm_every(std::chrono::milliseconds(1 + i % 3), static_cast<tw::misfire>(i % 3)); break;
			default: break;
			}
		});
		slot.back().on_cancel([&runs, i] { runs.push_back(std::to_string(i) + " cancelled"); });
	}
	for (int op = 0; op < ops; op++) {
		const int si = pick(6);
		T &t = slot[static_cast<std::size_t>(si)];
		const std::string when = "@" + std::to_string((g_ns.load() - t0) / 1000000);
		const auto at = typename O::time_point(std::chrono::nanoseconds(g_ns.load()));
		switch (pick(8)) {
		case 0:
			if (t) {
				const int dd = 1 + pick(20);
				t.arm_at(at + std::chrono::milliseconds(dd));
				runs.push_back("slot" + std::to_string(si) + " at+" + std::to_string(dd) + when);
			}
			break;
		case 1:
			if (t) {
				const int p = 1 + pick(5), m = pick(3), sc = pick(2);
				t.arm_every(std::chrono::milliseconds(p), static_cast<tw::misfire>(m), static_cast<tw::schedule>(sc));
				runs.push_back("slot" + std::to_string(si) + " every " + std::to_string(p) + " m" + std::to_string(m) + " s" + std::to_string(sc) + when);
			}
			break;
		case 2:
			t.cancel();
			runs.push_back("cancel slot" + std::to_string(si));
			break;
		case 3: {
			const int to = pick(6);
			slot[static_cast<std::size_t>(to)] = std::move(t);
			runs.push_back("move slot" + std::to_string(si) + " to " + std::to_string(to));
			break;
		}
		default:
			g_ns += (pick(12) ? pick(6) : 40 + pick(40)) * 1000000;
			runs.push_back("step to " + std::to_string((g_ns.load() - t0) / 1000000));
			const std::size_t from = runs.size();
			d.pump();
			std::sort(runs.begin() + static_cast<std::ptrdiff_t>(from), runs.end()); // a tick's order is the owner's
		}
	}
	return runs;
}
} // namespace

// The same random program (arm_at(), arm_every() of every policy and
// schedule, cancel(), moves over pending timers, steps and stalls; each
// callback re-arms, cancels or makes periodic its own timer; cancellation
// callbacks logged) runs the same timers in each pass with the same
// missed() counts on every owner as on a Wheel (in a pass, in the
// owner's order). 3 seeds; 300 held on the Loop and 30 on the AsioHost.
TYPED_TEST(Owners, RandomProgramsRunAsOnAWheel)
{
	const int ops = std::is_same_v<TypeParam, tw::AsioHost> ? 150 : 600;
	for (unsigned seed = 1; seed <= 3; seed++) {
		const auto want = random_program<tw::Wheel>(seed, ops);
		const auto got = random_program<TypeParam>(seed, ops);
		for (std::size_t i = 0; i < std::min(got.size(), want.size()); i++)
			ASSERT_EQ(got[i], want[i]) << "seed " << seed << " run " << i << [&] {
				std::string w;
				for (std::size_t k = i > 25 ? i - 25 : 0; k <= i; k++)
					w += "\n  " + want[k] + " | " + got[k];
				return w;
			}();
		ASSERT_EQ(got.size(), want.size()) << "seed " << seed;
	}
}
