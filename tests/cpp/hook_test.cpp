// SPDX-License-Identifier: MIT
// GoogleTest suite for twheel::TimerHook (the intrusive, zero-overhead timer)
// and for the parts of twheel::BasicTimer that the hook shares with it:
// lifetimes, moves, the wheel's destruction, exceptions.
#include <twheel/twheel.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using twheel::tick_t;
using twheel::TimerHook;
using twheel::Wheel;

namespace {

void expect_consistent(const Wheel &w)
{
	char msg[256] = "";
	EXPECT_EQ(twheel_check(w.native_handle(), msg, sizeof msg), 0) << msg;
}

struct Log {
	std::vector<std::pair<int, tick_t>> fired; // (id, wheel time)
};

// The typical owner: data plus a hook; movable because the base is.
struct Conn : TimerHook<Conn> {
	Wheel *w = nullptr;
	Log *log = nullptr;
	int id = 0;
	std::function<void(Conn &)> then; // what on_timer() does afterwards

	Conn() = default;
	Conn(Wheel &wh, Log *l, int i) : TimerHook(wh), w(&wh), log(l), id(i) {}
	void on_timer()
	{
		log->fired.emplace_back(id, w->now());
		if (then) {
			auto f = then; // this object may be moved or destroyed by f
			f(*this);
		}
	}
};

} // namespace

TEST(Hook, FiresExactlyOnceAtItsTick)
{
	Wheel w;
	Log log;
	Conn c(w, &log, 7);
	EXPECT_TRUE(static_cast<bool>(c));
	EXPECT_FALSE(c.arm_at(100));
	EXPECT_TRUE(c.pending());
	EXPECT_EQ(c.expiry(), std::optional<tick_t>(100));
	EXPECT_TRUE(c.arm_at(120)); // re-arm
	w.advance(119);
	EXPECT_TRUE(log.fired.empty());
	w.advance(1000);
	EXPECT_EQ(log.fired, (std::vector<std::pair<int, tick_t>>{{7, 120}}));
	EXPECT_FALSE(c.pending());
	EXPECT_FALSE(c.expiry().has_value());
}

TEST(Hook, CancelReturnsWhetherItWasPending)
{
	Wheel w;
	Log log;
	Conn c(w, &log, 1);
	EXPECT_FALSE(c.cancel());
	c.arm_at(5);
	EXPECT_TRUE(c.cancel());
	EXPECT_FALSE(c.cancel());
	w.advance(10);
	EXPECT_TRUE(log.fired.empty());
	EXPECT_EQ(w.size(), 0u);
}

TEST(Hook, UnboundHookCannotBeArmedUntilBound)
{
	Wheel w;
	Log log;
	Conn c; // default: unbound
	EXPECT_FALSE(static_cast<bool>(c));
	EXPECT_FALSE(c.pending());
	EXPECT_FALSE(c.cancel());
	EXPECT_THROW(c.arm_at(1), std::logic_error);
	EXPECT_THROW(c.arm_in(std::chrono::milliseconds(1)), std::logic_error);
	c.w = &w;
	c.log = &log;
	c.bind(w);
	c.arm_in(std::chrono::microseconds(1500)); // 2 ticks of 1 ms, rounded up
	EXPECT_EQ(c.expiry(), std::optional<tick_t>(2));
	w.advance(2);
	EXPECT_EQ(log.fired.size(), 1u);
	Wheel moved_from;
	Wheel other(std::move(moved_from));
	EXPECT_THROW(c.bind(moved_from), std::logic_error); // NOLINT(bugprone-use-after-move)
	EXPECT_THROW(Conn(moved_from, &log, 1), std::logic_error);
}

TEST(HookLifetime, DestroyPendingNeverFires)
{
	Wheel w;
	Log log;
	{
		Conn c(w, &log, 1);
		c.arm_at(10);
		EXPECT_EQ(w.size(), 1u);
	}
	EXPECT_EQ(w.size(), 0u);
	w.advance(100);
	EXPECT_TRUE(log.fired.empty());
	expect_consistent(w);
}

TEST(HookLifetime, DestroyInsideOwnCallback)
{
	Wheel w;
	Log log;
	auto owner = std::make_unique<Conn>(w, &log, 3);
	owner->then = [&owner](Conn &self) {
		EXPECT_EQ(&self, owner.get());
		owner.reset(); // deletes the object whose on_timer() runs
	};
	owner->arm_at(4);
	EXPECT_EQ(w.advance(4), 1u);
	EXPECT_EQ(owner, nullptr);
	EXPECT_EQ(log.fired.size(), 1u);
	expect_consistent(w);
}

namespace {
struct SelfDeleting : TimerHook<SelfDeleting> {
	int *fired;
	SelfDeleting(Wheel &w, int *f) : TimerHook(w), fired(f) {}
	void on_timer() noexcept
	{
		++*fired;
		delete this; // nothing touches the object afterwards
	}
};
} // namespace

TEST(HookLifetime, DeleteThisInsideOwnCallback)
{
	Wheel w;
	int fired = 0;
	for (int i = 0; i < 10; i++)
		(new SelfDeleting(w, &fired))->arm_at(static_cast<tick_t>(1 + i % 3));
	EXPECT_EQ(w.advance(5), 10u);
	EXPECT_EQ(fired, 10);
	EXPECT_EQ(w.size(), 0u);
}

TEST(HookLifetime, DestroyAnotherPendingHookFromACallback)
{
	Wheel w;
	Log log;
	auto b = std::make_unique<Conn>(w, &log, 2);
	Conn a(w, &log, 1);
	a.then = [&b](Conn &) { b.reset(); };
	a.arm_at(10);
	b->arm_at(10); // same tick: on the list being fired
	w.advance(10);
	EXPECT_EQ(b, nullptr);
	EXPECT_GE(log.fired.size(), 1u);
	EXPECT_LE(log.fired.size(), 2u);
	expect_consistent(w);
}

TEST(HookLifetime, MovePendingFiresOnceFromTheNewObject)
{
	Wheel w;
	Log log;
	Conn a(w, &log, 1);
	a.arm_at(500);
	Conn b(std::move(a));
	EXPECT_FALSE(a.pending()); // NOLINT(bugprone-use-after-move)
	EXPECT_FALSE(static_cast<bool>(a));
	EXPECT_THROW(a.arm_at(1), std::logic_error);
	EXPECT_TRUE(b.pending());
	EXPECT_EQ(b.expiry(), std::optional<tick_t>(500));
	b.id = 2; // the callback runs on the new object
	expect_consistent(w);
	w.advance(1000);
	EXPECT_EQ(log.fired, (std::vector<std::pair<int, tick_t>>{{2, 500}}));
}

TEST(HookLifetime, MoveAssignOverPendingCancelsTheTarget)
{
	Wheel w;
	Log log;
	Conn a(w, &log, 1), b(w, &log, 2);
	a.arm_at(10);
	b.arm_at(20);
	a = std::move(b); // a's own timer (10) is cancelled; a takes b's (20)
	EXPECT_EQ(w.size(), 1u);
	EXPECT_EQ(a.expiry(), std::optional<tick_t>(20));
	EXPECT_FALSE(b.pending()); // NOLINT(bugprone-use-after-move)
	expect_consistent(w);
	w.advance(100);
	ASSERT_EQ(log.fired.size(), 1u);
	EXPECT_EQ(log.fired[0], (std::pair<int, tick_t>{2, 20})); // id moved with it
}

TEST(HookLifetime, SelfMoveAssignIsANoOp)
{
	Wheel w;
	Log log;
	Conn a(w, &log, 1);
	a.arm_at(3);
	Conn &alias = a;
	a = std::move(alias);
	EXPECT_TRUE(a.pending());
	EXPECT_EQ(w.size(), 1u);
	w.advance(3);
	EXPECT_EQ(log.fired.size(), 1u);
}

TEST(HookLifetime, MoveInsideOwnCallbackThenReArm)
{
	Wheel w;
	Log log;
	std::optional<Conn> holder;
	Conn first(w, &log, 1);
	first.then = [&](Conn &self) {
		if (!holder) {
			holder.emplace(std::move(self)); // move the running object
			holder->arm_at(w.now() + 5);
		}
	};
	first.arm_at(1);
	w.advance(1);
	EXPECT_FALSE(static_cast<bool>(first));
	ASSERT_TRUE(holder.has_value());
	EXPECT_TRUE(holder->pending());
	w.advance(100);
	EXPECT_EQ(log.fired, (std::vector<std::pair<int, tick_t>>{{1, 1}, {1, 6}}));
}

TEST(HookLifetime, MovePendingHooksAcrossVectorGrowth)
{
	Wheel w;
	Log log;
	std::vector<Conn> v;
	for (int i = 0; i < 1000; i++) {
		v.emplace_back(w, &log, i); // reallocation moves pending hooks
		v.back().arm_at(static_cast<tick_t>(1 + (i * 7919) % 70000));
	}
	expect_consistent(w);
	w.advance(70000);
	EXPECT_EQ(log.fired.size(), 1000u);
	for (const auto &[id, at] : log.fired)
		EXPECT_EQ(at, static_cast<tick_t>(1 + (id * 7919) % 70000));
}

TEST(HookLifetime, RandomisedSwapsAgainstAModel)
{
	Wheel w;
	Log log;
	std::mt19937_64 rng(7);
	std::vector<Conn> v;
	v.reserve(500);
	std::vector<tick_t> expect(500, 0);
	for (int i = 0; i < 500; i++)
		v.emplace_back(w, &log, i);
	for (int round = 0; round < 100; round++) {
		for (int k = 0; k < 40; k++) {
			Conn &c = v[rng() % v.size()];
			const tick_t e = w.now() + 1 + rng() % 3000;
			c.arm_at(e);
			expect[static_cast<size_t>(c.id)] = e;
		}
		for (int k = 0; k < 20; k++)
			std::swap(v[rng() % v.size()], v[rng() % v.size()]); // moves, pending or not
		expect_consistent(w);
		const size_t before = log.fired.size();
		w.advance(w.now() + rng() % 50);
		for (size_t i = before; i < log.fired.size(); i++) {
			auto [id, at] = log.fired[i];
			EXPECT_EQ(at, expect[static_cast<size_t>(id)]);
			expect[static_cast<size_t>(id)] = 0;
		}
	}
}

TEST(HookLifetime, WheelDestructionUnbindsPendingHooks)
{
	Log log;
	Conn pending, idle;
	{
		Wheel w;
		pending = Conn(w, &log, 1);
		pending.w = &w;
		pending.arm_at(10);
		idle = Conn(w, &log, 2);
	}
	EXPECT_TRUE(log.fired.empty());
	EXPECT_FALSE(pending.pending());
	EXPECT_FALSE(static_cast<bool>(pending));
	EXPECT_THROW(pending.arm_at(1), std::logic_error);
	// idle was not pending: it may still be destroyed (at scope end).
}

namespace {
struct Throwing : TimerHook<Throwing> {
	explicit Throwing(Wheel &w) : TimerHook(w) {}
	void on_timer() { throw std::runtime_error("hook"); }
};

struct IdleTag {};
struct WriteTag {};
struct TwoTimers : TimerHook<TwoTimers, IdleTag>, TimerHook<TwoTimers, WriteTag> {
	std::vector<std::string> seen;
	explicit TwoTimers(Wheel &w) : TimerHook<TwoTimers, IdleTag>(w), TimerHook<TwoTimers, WriteTag>(w) {}
	void on_timer(IdleTag) { seen.push_back("idle"); }
	void on_timer(WriteTag) { seen.push_back("write"); }
	TimerHook<TwoTimers, IdleTag> &idle() { return *this; }
	TimerHook<TwoTimers, WriteTag> &write() { return *this; }
};
} // namespace

TEST(Hook, ExceptionsGoToTheWheelsHandler)
{
	Wheel w;
	std::vector<std::string> what;
	w.on_exception([&](std::exception_ptr e) {
		try {
			std::rethrow_exception(e);
		} catch (const std::exception &x) {
			what.push_back(x.what());
		}
	});
	Throwing t(w);
	Log log;
	Conn after(w, &log, 1);
	t.arm_at(1);
	after.arm_at(2);
	EXPECT_EQ(w.advance(2), 2u);
	EXPECT_EQ(what, std::vector<std::string>{"hook"});
	EXPECT_EQ(log.fired.size(), 1u);
}

TEST(Hook, SeveralHooksInOneObjectByTag)
{
	Wheel w;
	TwoTimers o(w);
	o.idle().arm_at(20);
	o.write().arm_at(10);
	EXPECT_EQ(w.size(), 2u);
	w.advance(100);
	EXPECT_EQ(o.seen, (std::vector<std::string>{"write", "idle"}));
}

TEST(Hook, LayoutIsTheCNodePlusAPointer)
{
#if !TWHEEL_DEBUG_CHECKS && UINTPTR_MAX == UINT64_MAX
	EXPECT_EQ(sizeof(TimerHook<Conn>), 48u);
#endif
	EXPECT_EQ(sizeof(TimerHook<Conn>), sizeof(tw_timer) + sizeof(void *));
	EXPECT_TRUE(std::is_nothrow_move_constructible_v<TimerHook<Conn>>);
	EXPECT_FALSE(std::is_copy_constructible_v<TimerHook<Conn>>);
}

// ---- Mixed handles on one wheel --------------------------------------------

TEST(Mixed, WheelDestructionReachesEveryKindOfHandle)
{
	// Timers of several inline capacities, hooks and a plain C timer on one
	// wheel: ~Wheel hands each C++ node to its own trampoline and leaves
	// the C node alone.
	int cancelled = 0;
	Log log;
	twheel::Timer t16;
	twheel::BasicTimer<8> t8;
	twheel::BasicTimer<64> t64;
	Conn hook;
	tw_timer c_node;
	tw_timer_init(&c_node, [](tw_timer *) { ADD_FAILURE() << "C timer fired"; });
	{
		Wheel w;
		t16 = twheel::Timer(w, [] {});
		t16.on_cancel([&] { cancelled += 1; });
		t8 = twheel::BasicTimer<8>(w, [] {});
		t8.on_cancel([&] { cancelled += 10; });
		t64 = twheel::BasicTimer<64>(w, [s = std::string(100, 'x')] {});
		t64.on_cancel([&] { cancelled += 100; });
		hook = Conn(w, &log, 1);
		t16.arm_at(5);
		t8.arm_at(6);
		t64.arm_at(7);
		hook.arm_at(8);
		ASSERT_EQ(twheel_add(w.native_handle(), &c_node, 9), 0);
	}
	EXPECT_EQ(cancelled, 111);
	EXPECT_FALSE(static_cast<bool>(t16) || static_cast<bool>(t8) || static_cast<bool>(t64) ||
		     static_cast<bool>(hook));
	EXPECT_FALSE(tw_timer_pending(&c_node));
	EXPECT_TRUE(log.fired.empty());
}
