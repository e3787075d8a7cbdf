// SPDX-License-Identifier: MIT
// GoogleTest suite for tw::Wheel, tw::Timer and tw::TimerHook
// (<twheel/twheel.hpp>): firing, moves, lifetime (handles that outlive their
// wheel), callables, cancellation callbacks, exceptions, chrono rounding.
#include <twheel/twheel.hpp>

#include <gtest/gtest.h>

#include "caught.h"
#include "count_new.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using Timer = tw::Timer<tw::Wheel>;
using tw::Wheel;

namespace {

// Tick @k of a wheel of 1 ms ticks; tick @k of a wheel of tick @d; a
// wheel's time in ticks; a timer's expiry in ticks if pending.
tw::Wheel::time_point T(std::int64_t k) { return tw::Wheel::time_point(std::chrono::milliseconds(k)); }
tw::Wheel::time_point S(std::int64_t k, std::chrono::nanoseconds d) { return tw::Wheel::time_point(k * d); }
tw::tick_t NOW(const tw::Wheel &w) { return static_cast<tw::tick_t>(w.now().time_since_epoch() / w.tick()); }
template <class H>
std::optional<tw::tick_t> EXP(const H &h)
{
	if (!h.pending())
		return std::nullopt;
	return static_cast<tw::tick_t>(h.expiry().time_since_epoch() / std::chrono::milliseconds(1));
}

} // namespace

// ---- Wheel -------------------------------------------------------------------

TEST(Wheel, StartsEmptyAtItsStartTime)
{
	Wheel w(5ms, S(100, 5ms));
	EXPECT_EQ(NOW(w), 100u);
	EXPECT_EQ(w.size(), 0u);
	EXPECT_EQ(w.tick(), 5ms);
	EXPECT_EQ(w.next_expiry(), std::nullopt);
	EXPECT_THROW(Wheel(0ms, S(0, 0ms)), tw::error);
}

TEST(Wheel, AdvanceErrorsAreSystemErrors)
{
	Wheel w(1ms, T(10));
	try {
		w.advance(T(9));
		FAIL() << "advance backwards did not throw";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
	}
	int code = 0;
	std::string what;
	Timer t(w, [&] {
		try {
			w.advance(T(20));
		} catch (const std::system_error &e) {
			code = e.code().value();
			what = e.what();
		}
	});
	t.arm_at(T(11));
	w.advance(T(11));
	EXPECT_EQ(code, EBUSY);
	EXPECT_EQ(what, "tw: advance() from a callback"); // was "before now()"
}

TEST(Wheel, MoveKeepsTimersPendingAndMovedFromIsEmpty)
{
	Wheel a;
	int fired = 0;
	Timer t(a, [&] { fired++; });
	t.arm_at(T(5));
	Wheel b(std::move(a));
	EXPECT_EQ(a.size(), 0u);
	EXPECT_EQ(a.native_handle(), nullptr);
	EXPECT_THROW(a.advance(T(1)), tw::error);
	EXPECT_TRUE(t.pending());
	EXPECT_EQ(b.advance(T(5)), 1u);
	EXPECT_EQ(fired, 1);
}

// Assigning a wheel over another closes the target as its destructor does
// (its timers cancelled, their cancellation callbacks run once, what they
// arm dropped), then takes the source's timers, which stay pending.
TEST(Wheel, MoveAssignClosesTheTargetThenTakesTheSource)
{
	Wheel a, b;
	int fired = 0, cancelled = 0;
	Timer ta(a, [&] { fired++; });
	Timer tb(b, [&] { fired += 100; });
	tb.on_cancel([&] {
		cancelled++;
		EXPECT_FALSE(tb.arm_in(1ms)); // the target is closing: dropped
	});
	ta.arm_at(T(5));
	tb.arm_at(T(5));
	b = std::move(a);
	EXPECT_EQ(cancelled, 1);
	EXPECT_FALSE(tb.pending());
	EXPECT_FALSE(tb); // its owner is gone
	EXPECT_EQ(a.native_handle(), nullptr);
	EXPECT_TRUE(ta.pending());
	EXPECT_EQ(b.size(), 1u);
	EXPECT_EQ(b.advance(T(5)), 1u);
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(cancelled, 1);
}

// ---- Timer -------------------------------------------------------------------

TEST(Timer, FiresExactlyOnItsTickAndArmReportsPending)
{
	Wheel w;
	std::vector<tw::tick_t> at;
	Timer t(w, [&] { at.push_back(NOW(w)); });
	EXPECT_FALSE(t.arm_at(T(300)));
	EXPECT_TRUE(t.arm_at(T(70)));
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(70));
	EXPECT_EQ(w.next_expiry(), T(70));
	w.advance(T(69));
	EXPECT_TRUE(at.empty());
	w.advance(T(1000));
	ASSERT_EQ(at.size(), 1u);
	EXPECT_FALSE(t.pending());
	EXPECT_EQ(EXP(t), std::nullopt);
	EXPECT_TRUE(t.cancel() == false);
}

// A class derived from an owner (a program's own wheel type) makes that
// owner's timers, its type deduced: it did not compile.
struct MyWheel : Wheel {
	using Wheel::Wheel;
};

TEST(Timer, DeducedOnAClassDerivedFromAnOwner)
{
	MyWheel w;
	int fired = 0;
	tw::Timer t(w, [&] { fired++; });
	static_assert(std::is_same_v<decltype(t), tw::Timer<tw::Wheel>>);
	tw::Timer u(static_cast<Wheel &>(w), [] {});
	static_assert(std::is_same_v<decltype(u), tw::Timer<tw::Wheel>>);
	EXPECT_FALSE(t.arm_at(T(5)));
	w.advance(T(5));
	EXPECT_EQ(fired, 1);
}

TEST(Timer, CancelReturnsWhetherItWasPendingAndNeverFires)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	Timer t(w, [&] { fired++; });
	t.on_cancel([&] { cancelled++; });
	EXPECT_FALSE(t.cancel());
	t.arm_at(T(3));
	EXPECT_TRUE(t.cancel());
	EXPECT_FALSE(t.cancel());
	w.advance(T(10));
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(cancelled, 1);
	t.arm_at(T(20)); // re-arm is not a cancellation, nor is expiry
	t.arm_at(T(30));
	w.advance(T(30));
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(cancelled, 1);
	t.on_cancel(nullptr);
	t.arm_at(T(40));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(cancelled, 1);
}

TEST(Timer, EmptyHandlesAndEmptyCallablesAreRejected)
{
	Wheel w;
	Timer t;
	EXPECT_FALSE(t);
	EXPECT_FALSE(t.pending());
	EXPECT_FALSE(t.cancel());
	EXPECT_THROW(t.arm_at(T(1)), tw::error);
	EXPECT_THROW(t.on_cancel([] {}), tw::error);
	void (*null_fn)() = nullptr;
	EXPECT_THROW((void)Timer(w, null_fn), tw::error);
	EXPECT_THROW((void)Timer(w, std::function<void()>()), tw::error);
	struct Wrapper { // any callable that converts to false is empty (docs/cpp.md)
		bool set;
		explicit operator bool() const { return set; }
		void operator()() {}
	};
	EXPECT_THROW((void)Timer(w, Wrapper{false}), tw::error);
	EXPECT_NO_THROW((void)Timer(w, Wrapper{true}));
	Wheel gone(std::move(w));
	EXPECT_THROW((void)Timer(w, [] {}), tw::error);
}

TEST(Timer, CallbackGetsItsHandleAndMayReArmIt)
{
	Wheel w;
	int fired = 0;
	Timer t(w, [&](Timer &self) {
		EXPECT_FALSE(self.pending());
		if (++fired < 3)
			self.arm_at(T(NOW(w) + 10));
	});
	t.arm_at(T(10));
	for (tw::tick_t now = 10; now <= 100; now += 10)
		w.advance(T(now)); // each re-arm fires in a later advance
	EXPECT_EQ(fired, 3);
}

TEST(Timer, ArmedFromACallbackFiresInALaterAdvance)
{
	Wheel w;
	int fired_b = 0;
	Timer b(w, [&] { fired_b++; });
	Timer a(w, [&] { b.arm_at(T(NOW(w))); });
	a.arm_at(T(5));
	w.advance(T(10));
	EXPECT_EQ(fired_b, 0);
	w.advance(T(10));
	EXPECT_EQ(fired_b, 1);
}

// advance() returns how many timers came due: a periodic one that skips
// its late deadlines (misfire::skip) counts, though its callable did not
// run. The manual said "how many ran".
TEST(Timer, AdvanceCountsAPeriodicTimerThatSkips)
{
	Wheel w;
	int runs = 0;
	Timer t = w.every(1ms, [&] { runs++; });
	EXPECT_EQ(w.advance(T(5)), 1u); // late by 4 periods: skipped
	EXPECT_EQ(runs, 0);
	EXPECT_EQ(w.advance(T(6)), 1u);
	EXPECT_EQ(runs, 1);
}

// ---- Lifetime ----------------------------------------------------------------

// Destroying a wheel leaves every handle safe to observe; those not pending
// at the time used to keep a dangling pointer that operator bool accepted.
TEST(Lifetime, HandlesAreSafeAfterTheWheelIsDestroyed)
{
	int cancelled = 0, fired = 0;
	auto w = std::make_unique<Wheel>(0);
	Timer idle(*w, [&] { fired++; });
	Timer pending(*w, [&] { fired++; });
	idle.on_cancel([&] { cancelled += 10; });
	pending.on_cancel([&] { cancelled++; });
	pending.arm_at(T(50));
	Timer moved_later(*w, [&] { fired++; });
	w.reset();
	EXPECT_EQ(cancelled, 1); // only the pending one was cancelled
	for (Timer *t : {&idle, &pending, &moved_later}) {
		EXPECT_FALSE(*t);
		EXPECT_FALSE(t->pending());
		EXPECT_FALSE(t->cancel());
		EXPECT_EQ(EXP(*t), std::nullopt);
		if (*t)
			t->arm_at(T(1)); // the careless user's pattern: must not run
		EXPECT_THROW(t->arm_at(T(1)), tw::error);
		EXPECT_THROW(t->arm_in(1ms), tw::error);
	}
	Timer m(std::move(moved_later));
	EXPECT_FALSE(m);
	m = std::move(idle);
	EXPECT_FALSE(m);
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(cancelled, 1);
}

TEST(Lifetime, DestroyPendingNeverFiresAndRunsItsCancellation)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	{
		Timer t(w, [&] { fired++; });
		t.on_cancel([&] { cancelled++; });
		t.arm_at(T(5));
	}
	EXPECT_EQ(w.size(), 0u);
	w.advance(T(10));
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(cancelled, 1);
}

// A cancellation callback that re-arms its own timer: the destructor and
// an assignment over it drop that re-arm (no node of a freed handle, or of
// an unbound one, is left on the wheel).
TEST(Lifetime, ReArmByTheCancellationCallbackIsDroppedByDestroyAndAssign)
{
	Wheel w;
	int fired = 0, g_runs = 0;
	auto t = std::make_unique<Timer>(w, [&] { fired++; });
	Timer *tp = t.get();
	t->on_cancel([&, tp] {
		g_runs++;
		tp->arm_at(T(50));
	});
	t->arm_at(T(10));
	t.reset();
	EXPECT_EQ(g_runs, 1);
	EXPECT_EQ(w.size(), 0u);

	auto u = std::make_unique<Timer>(w, [&] { fired += 10; });
	Timer *up = u.get();
	u->on_cancel([&, up] {
		g_runs++;
		up->arm_at(T(60));
	});
	u->arm_at(T(10));
	Timer other(w, [&] { fired += 100; });
	other.arm_at(T(20));
	*u = std::move(other);
	EXPECT_EQ(g_runs, 2);
	EXPECT_EQ(w.size(), 1u);
	EXPECT_TRUE(u->pending());
	EXPECT_EQ(EXP(*u), std::optional<tw::tick_t>(20));
	w.advance(T(100));
	EXPECT_EQ(fired, 100);
	EXPECT_EQ(w.size(), 0u);
}

// The cancellation callback, or the old callable's destructor, of the
// timer assigned over destroys the source: the assignment has already
// moved the source's timer out of it.
TEST(Lifetime, AssignmentWhoseCancellationOrOldCallableDestroysTheSource)
{
	Wheel w;
	int fired = 0;
	auto src = std::make_unique<Timer>(w, [&] { fired++; });
	src->arm_at(T(3));
	Timer t(w, [] {});
	t.arm_at(T(2));
	t.on_cancel([&] { src.reset(); });
	t = std::move(*src);
	EXPECT_EQ(src, nullptr);
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(3));

	struct Killer {
		std::unique_ptr<Timer> *victim;
		void operator()() {}
		explicit Killer(std::unique_ptr<Timer> *v) : victim(v) {}
		Killer(Killer &&k) noexcept : victim(std::exchange(k.victim, nullptr)) {}
		~Killer()
		{
			if (victim)
				victim->reset();
		}
	};
	auto src2 = std::make_unique<Timer>(w, [&] { fired += 10; });
	src2->arm_at(T(4));
	Timer u(w, Killer(&src2));
	u = std::move(*src2);
	EXPECT_EQ(src2, nullptr);
	EXPECT_EQ(EXP(u), std::optional<tw::tick_t>(4));
	w.advance(T(10));
	EXPECT_EQ(fired, 11);
}

TEST(Lifetime, DestroyInsideOwnCallbackKeepsCapturesAlive)
{
	Wheel w;
	auto big = std::make_shared<std::string>(100, 'x'); // a capture with a destructor
	std::string seen;
	std::unique_ptr<Timer> t;
	t = std::make_unique<Timer>(w, [&t, big, &seen] {
		t.reset(); // the handle is gone...
		seen = *big; // ...its captures are not, until the callback returns
	});
	t->arm_at(T(1));
	w.advance(T(1));
	EXPECT_EQ(seen, std::string(100, 'x'));
	EXPECT_EQ(big.use_count(), 1);
}

TEST(Lifetime, DestroyAnotherPendingTimerFromACallback)
{
	Wheel w;
	int fired = 0;
	auto victim = std::make_unique<Timer>(w, [&] { fired += 100; });
	Timer killer(w, [&] { victim.reset(); });
	victim->arm_at(T(5)); // due in the same advance as the killer
	killer.arm_at(T(5));
	w.advance(T(5));
	EXPECT_TRUE(fired == 0 || fired == 100); // fired first, or destroyed first
	EXPECT_EQ(w.size(), 0u);
}

TEST(Lifetime, MovePendingFiresOnceFromTheNewHandle)
{
	Wheel w;
	std::vector<int> from;
	Timer a(w, [&](Timer &self) { from.push_back(EXP(self) ? 1 : 0); });
	a.arm_at(T(7));
	Timer b(std::move(a));
	EXPECT_FALSE(a.pending());
	EXPECT_FALSE(a);
	EXPECT_TRUE(b.pending());
	EXPECT_EQ(EXP(b), std::optional<tw::tick_t>(7));
	a.cancel(); // harmless on the moved-from handle
	w.advance(T(7));
	EXPECT_EQ(from.size(), 1u);
}

TEST(Lifetime, MoveAssignOverPendingCancelsTheTargetAndSelfMoveIsANoOp)
{
	Wheel w;
	int fired_a = 0, fired_b = 0, cancelled_b = 0;
	Timer a(w, [&] { fired_a++; });
	Timer b(w, [&] { fired_b++; });
	b.on_cancel([&] { cancelled_b++; });
	a.arm_at(T(5));
	b.arm_at(T(6));
	b = std::move(a);
	EXPECT_EQ(cancelled_b, 1);
	Timer &alias = b;
	b = std::move(alias);
	EXPECT_TRUE(b.pending());
	w.advance(T(10));
	EXPECT_EQ(fired_a, 1);
	EXPECT_EQ(fired_b, 0);
}

TEST(Lifetime, MoveInsideOwnCallbackThenReArmFromTheNewHandle)
{
	Wheel w;
	int fired = 0;
	Timer keep;
	Timer t(w, [&](Timer &self) {
		fired++;
		if (fired == 1) {
			keep = std::move(self); // the callable goes back into keep
			keep.arm_at(T(NOW(w) + 5));
		}
	});
	t.arm_at(T(1));
	w.advance(T(1));
	EXPECT_FALSE(t);
	EXPECT_TRUE(keep.pending());
	w.advance(T(6));
	EXPECT_EQ(fired, 2);
}

TEST(Lifetime, MovePendingTimersAcrossVectorGrowthAndDueInTheSameAdvance)
{
	Wheel w;
	std::vector<int> fired(200);
	std::vector<Timer> v;
	for (int i = 0; i < 200; i++) {
		v.emplace_back(w, [&fired, i] { fired[i]++; });
		v.back().arm_at(T(static_cast<tw::tick_t>(1 + i % 7))); // growth moves them
	}
	// a callback that moves a timer due in the same advance
	Timer mover(w, [&] {
		Timer tmp(std::move(v[100]));
		v[100] = std::move(tmp);
	});
	mover.arm_at(T(1));
	w.advance(T(10));
	for (int i = 0; i < 200; i++)
		EXPECT_EQ(fired[i], 1) << i;
}

TEST(Lifetime, RandomisedMovesAgainstAModel)
{
	Wheel w;
	constexpr int n = 64;
	std::vector<int> fired(n), expect(n);
	std::vector<Timer> slots(n);
	std::vector<tw::tick_t> armed(n, 0); // 0: not pending; indexed by id
	std::vector<int> id_at(n, -1);
	std::mt19937 rng(7);
	for (int i = 0; i < n; i++) {
		slots[i] = Timer(w, [&fired, i] { fired[i]++; });
		id_at[i] = i;
	}
	for (int step = 0; step < 20000; step++) {
		const int s = static_cast<int>(rng() % n), d = static_cast<int>(rng() % n);
		const tw::tick_t now = NOW(w);
		switch (rng() % 4) {
		case 0: // arm the timer in slot s
			slots[s].arm_at(T(now + 1 + rng() % 500));
			armed[id_at[s]] = *EXP(slots[s]);
			break;
		case 1: // swap two slots
			std::swap(slots[s], slots[d]);
			std::swap(id_at[s], id_at[d]);
			break;
		case 2:
			slots[s].cancel();
			armed[id_at[s]] = 0;
			break;
		default: {
			const tw::tick_t to = now + rng() % 50;
			w.advance(T(to));
			for (int i = 0; i < n; i++)
				if (armed[i] && armed[i] <= to) {
					expect[i]++;
					armed[i] = 0;
				}
		}
		}
		ASSERT_EQ(fired, expect) << "step " << step;
	}
}

// Periodic timers against a model written from docs/cpp.md: random
// arm_every() (every misfire policy and schedule; periods of whole ticks
// and not), arm_in(), arm_at() (in the past too), cancel() and advance()
// (stalls of many periods too), on a wheel of 1 ms ticks. A timer fires
// once per advance() whose target reached its tick; fixed_rate keeps to
// a grid of exact deadlines, each rounded up to its tick, and counts
// those passed by the target (missed()): skip runs none of them (not
// this one either) and goes to the first ahead, once runs once and goes
// there too, all runs once and goes to the next deadline; fixed_delay
// goes one period from the target; arm_in()/arm_at() that move the next
// run move the grid to its expiry(); a one-shot timer fires once, its
// missed() 0.
TEST(Differential, PeriodicTimersAgainstAModel)
{
	struct model {
		bool pending = false;
		std::int64_t at = 0, armed = 0;   // ms: the tick it fires on; as the grid armed it
		std::int64_t grid = 0, period = 0; // us; period 0: one-shot
		tw::misfire m = tw::misfire::skip;
		tw::schedule s = tw::schedule::fixed_rate;
	};
	struct run {
		std::int64_t at;
		std::uint32_t missed;
		bool operator==(const run &o) const { return at == o.at && missed == o.missed; }
	};
	auto show = [](const std::vector<run> &v) {
		std::string r;
		for (const run &x : v)
			r += std::to_string(x.at) + "/" + std::to_string(x.missed) + " ";
		return r;
	};
	auto ms_ceil = [](std::int64_t us) { return (us + 999) / 1000; };
	const std::int64_t periods[] = {1000, 2000, 3000, 5000, 1100, 1500, 2300, 3700}; // us
	constexpr int n = 8;
	for (unsigned seed = 1; seed <= 12; seed++) {
		Wheel w;
		std::string trace;
		std::mt19937 rng(seed);
		auto pick = [&](unsigned k) { return static_cast<std::int64_t>(rng() % k); };
		std::vector<model> mod(n);
		std::vector<std::vector<run>> got(n), want(n);
		std::vector<Timer> t;
		t.reserve(n);
		for (int i = 0; i < n; i++)
			t.push_back(Timer(w, [&got, &w, i](Timer &self) {
				got[i].push_back({static_cast<std::int64_t>(NOW(w)), self.missed()});
			}));
		for (int op = 0; op < 2000; op++) {
			const int i = static_cast<int>(pick(n));
			const std::int64_t now = static_cast<std::int64_t>(NOW(w));
			model &y = mod[i];
			switch (pick(8)) {
			case 0: {
				const std::int64_t p = periods[pick(8)];
				const auto m = static_cast<tw::misfire>(pick(3));
				const auto s = static_cast<tw::schedule>(pick(2));
				t[i].arm_every(std::chrono::microseconds(p), m, s);
				trace += "every " + std::to_string(i) + " " + std::to_string(p) + "us m" +
					 std::to_string(static_cast<int>(m)) + " s" + std::to_string(static_cast<int>(s));
				y = {true, ms_ceil(now * 1000 + p), ms_ceil(now * 1000 + p), now * 1000 + p, p, m, s};
				break;
			}
			case 1: {
				const auto d = 1 + pick(20);
				t[i].arm_in(std::chrono::milliseconds(d));
				trace += "in " + std::to_string(i) + " " + std::to_string(d);
				y.pending = true, y.at = now + d;
				break;
			}
			case 2: {
				const auto at = std::max<std::int64_t>(0, now - 10 + pick(30));
				t[i].arm_at(T(at));
				trace += "at " + std::to_string(i) + " " + std::to_string(at);
				y.pending = true, y.at = at;
				break;
			}
			case 3:
				EXPECT_EQ(t[i].cancel(), y.pending);
				trace += "cancel " + std::to_string(i);
				y.pending = false, y.period = 0;
				break;
			default: {
				const std::int64_t to = now + (pick(10) == 0 ? pick(200) : pick(6));
				std::size_t due = 0;
				trace += "advance " + std::to_string(to);
				for (int k = 0; k < n; k++) {
					model &x = mod[k];
					if (!x.pending || x.at > to)
						continue;
					due++;
					const std::int64_t ran = std::max(x.at, now);
					if (!x.period) {
						want[k].push_back({ran, 0});
						x.pending = false;
						continue;
					}
					if (x.s == tw::schedule::fixed_delay) {
						want[k].push_back({ran, 0});
						x.grid = to * 1000 + x.period;
					} else {
						if (x.at != x.armed) // moved by arm_in() or arm_at()
							x.grid = x.at * 1000;
						const std::int64_t missed = to * 1000 > x.grid ? (to * 1000 - x.grid) / x.period : 0;
						if (!missed || x.m != tw::misfire::skip)
							want[k].push_back({ran, static_cast<std::uint32_t>(missed)});
						x.grid += (x.m == tw::misfire::all ? 1 : missed + 1) * x.period;
					}
					x.at = x.armed = ms_ceil(x.grid);
				}
				EXPECT_EQ(w.advance(T(to)), due) << "seed " << seed << " op " << op;
			}
			}
			trace += " @" + std::to_string(now) + "\n";
			for (int k = 0; k < n; k++) {
				ASSERT_EQ(t[k].pending(), mod[k].pending) << "seed " << seed << " op " << op << " timer " << k;
				if (mod[k].pending) {
					ASSERT_EQ(*EXP(t[k]), static_cast<tw::tick_t>(mod[k].at)) << "seed " << seed << " op " << op;
				}
				ASSERT_EQ(t[k].period(), std::chrono::microseconds(mod[k].period));
				ASSERT_TRUE(got[k].size() == want[k].size() && (got[k].empty() || got[k].back() == want[k].back()))
					<< "seed " << seed << " op " << op << " timer " << k << "\n"
					<< show(got[k]) << "\n" << show(want[k]) << "\n" << trace;
			}
		}
	}
}

// ---- Callables ---------------------------------------------------------------

TEST(Callables, SmallCapturesAreInlineLargeOnesAllocateOnce)
{
	Wheel w;
	int n = 0;
	auto small = [p = &n] { ++*p; };
	static_assert(Timer::stores_inline<decltype(small)>);
	auto two = [&n, p = &n] { n += *p; };
	static_assert(!Timer::stores_inline<decltype(two)>); // two pointers
	static_assert(sizeof(Timer) == sizeof(tw_timer) + 3 * sizeof(void *)); // 64 bytes on LP64
	long before = g_allocs.load();
	Timer s(w, small);
	EXPECT_EQ(g_allocs.load() - before, 0);
	struct Big {
		char data[64];
		int *n;
		void operator()() const { ++*n; }
	};
	static_assert(!Timer::stores_inline<Big>);
	before = g_allocs.load();
	Timer b(w, Big{{}, &n});
	EXPECT_EQ(g_allocs.load() - before, 1);
	before = g_allocs.load();
	Timer moved(std::move(b)); // moving a heap-stored callable allocates nothing
	EXPECT_EQ(g_allocs.load() - before, 0);
	s.arm_at(T(1));
	moved.arm_at(T(1));
	w.advance(T(1));
	EXPECT_EQ(n, 2);
	before = g_allocs.load();
	w.call_after(1ms, small); // the timer and its cancellation block
	EXPECT_EQ(g_allocs.load() - before, 2);
	before = g_allocs.load();
	w.call_after(1ms, two); // and the callable's block
	EXPECT_EQ(g_allocs.load() - before, 3);
	w.advance(T(2));
	EXPECT_EQ(n, 5);
}

TEST(Callables, FunctionPointerMoveOnlyAndMutableState)
{
	Wheel w;
	static int plain = 0;
	Timer f(w, +[] { plain++; });
	auto owned = std::make_unique<int>(0);
	int *seen = owned.get();
	Timer m(w, [o = std::move(owned)]() mutable { ++*o; });
	Timer c(w, [k = 0](Timer &self) mutable {
		if (++k < 3)
			self.arm_at(T(self.native_handle()->expires + 1));
	});
	f.arm_at(T(1));
	m.arm_at(T(1));
	c.arm_at(T(1));
	for (tw::tick_t now = 1; now <= 5; now++)
		w.advance(T(now));
	EXPECT_EQ(plain, 1);
	EXPECT_EQ(*seen, 1);
	EXPECT_FALSE(c.pending()); // it re-armed itself twice, then stopped
}

// A member named kind_tag in a callable is the program's own: one with a
// data member of that name did not compile, and one whose static
// kind_tag was 1 was taken for the timer's cancellation block (whose
// fields on_cancel() then wrote through the callable's pointer).
namespace {
struct Counted {
	int n = 0;
	unsigned char canary[128];
};
struct Job {
	int kind_tag;
	Counted *c;
	void operator()() { c->n += kind_tag; }
};
struct Tagged {
	static constexpr int kind_tag = 1;
	Counted *c;
	void operator()() { c->n++; }
};
} // namespace

TEST(Callables, AMemberNamedKindTagIsTheCallablesOwn)
{
	Wheel w;
	auto c = std::make_unique<Counted>();
	std::memset(c->canary, 0xaa, sizeof c->canary);
	int cancelled = 0;
	Timer job(w, Job{2, c.get()});
	Timer tagged(w, Tagged{c.get()});
	for (Timer *t : {&job, &tagged}) {
		t->on_cancel([&cancelled] { cancelled++; });
		t->arm_at(T(1));
	}
	w.advance(T(1));
	EXPECT_EQ(c->n, 3);
	tagged.arm_at(T(2));
	EXPECT_TRUE(tagged.cancel());
	EXPECT_EQ(cancelled, 1);
	for (unsigned char b : c->canary)
		ASSERT_EQ(b, 0xaa);
}

TEST(Callables, ReassignFromInsideTheRunningCallback)
{
	Wheel w;
	int first = 0, second = 0;
	Timer t(w, [&](Timer &self) {
		first++;
		self = Timer(w, [&] { second++; });
		self.arm_at(T(NOW(w) + 1));
	});
	t.arm_at(T(1));
	w.advance(T(1));
	w.advance(T(2));
	EXPECT_EQ(first, 1);
	EXPECT_EQ(second, 1);
}

TEST(Callables, OnCancelAllocatesOneBlockAndKeepsTheCallable)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	Timer t(w, [&fired] { fired++; });
	long before = g_allocs.load();
	t.on_cancel([&cancelled] { cancelled++; });
	EXPECT_EQ(g_allocs.load() - before, 1);
	before = g_allocs.load();
	t.on_cancel([&cancelled] { cancelled += 2; }); // replaced in place
	EXPECT_EQ(g_allocs.load() - before, 0);
	t.arm_at(T(1));
	w.advance(T(1));
	EXPECT_EQ(fired, 1);
	Timer moved(std::move(t)); // the block moves with the handle
	moved.arm_at(T(5));
	EXPECT_TRUE(moved.cancel());
	EXPECT_EQ(cancelled, 2);
}

TEST(Callables, OnCancelAndCancelFromInsideTheRunningCallback)
{
	Wheel w;
	int fired = 0, cancelled = 0;
	Timer t(w, [&](Timer &self) {
		fired++;
		self.on_cancel([&cancelled] { cancelled++; }); // the callable is lent out
		self.arm_at(T(NOW(w) + 5));
		EXPECT_TRUE(self.cancel());
		self.arm_at(T(NOW(w) + 1));
	});
	t.arm_at(T(1));
	w.advance(T(1));
	EXPECT_EQ(cancelled, 1);
	w.advance(T(2)); // the callable came back into the handle, beside on_cancel
	EXPECT_EQ(fired, 2);
	EXPECT_EQ(cancelled, 2);
}

// ---- Exceptions --------------------------------------------------------------

TEST(Exceptions, GoToTheHandlerTheAdvanceCarriesOnTheCallableStays)
{
	Wheel w;
	Caught caught;
	w.on_exception(caught.handler());
	int after = 0, runs = 0;
	Timer bad(w, [&] {
		runs++;
		throw std::runtime_error("boom");
	});
	Timer good(w, [&] { after++; });
	bad.on_cancel([] { throw std::runtime_error("cancel"); });
	bad.arm_at(T(1));
	good.arm_at(T(2));
	EXPECT_EQ(w.advance(T(5)), 2u);
	EXPECT_EQ(after, 1);
	bad.arm_at(T(6)); // its callable survived the throw
	w.advance(T(6));
	EXPECT_EQ(runs, 2);
	bad.arm_at(T(9));
	bad.cancel();
	EXPECT_EQ(caught.what, (std::vector<std::string>{"boom", "boom", "cancel"}));
}

TEST(Exceptions, DefaultAndThrowingHandlersAreContained)
{
	Wheel w;
	int after = 0;
	Timer bad(w, [] { throw std::runtime_error("default handler"); });
	Timer good(w, [&] { after++; });
	bad.arm_at(T(1));
	good.arm_at(T(1));
	testing::internal::CaptureStderr();
	w.advance(T(1));
	w.on_exception([](std::exception_ptr) { throw 42; });
	bad.arm_at(T(2));
	w.advance(T(2));
	const std::string err = testing::internal::GetCapturedStderr();
	EXPECT_NE(err.find("default handler"), std::string::npos);
	EXPECT_EQ(after, 1);
}

// A handler that replaces or removes itself: its closure was destroyed
// under it, while it ran (the captures gone: ASan heap-use-after-free).
// The statics are read without the closure.
bool handler_closure_gone, handler_saw_gone;
TEST(Exceptions, HandlerReplacesOrRemovesItselfFromWithin)
{
	struct probe {
		std::string big = std::string(64, 'x'); // std::function keeps it on the heap
		~probe() { handler_closure_gone = true; }
	};
	for (bool remove : {true, false}) {
		handler_closure_gone = handler_saw_gone = false;
		Wheel w;
		int replaced = 0;
		w.on_exception([&w, &replaced, remove, p = std::make_shared<probe>()](std::exception_ptr) {
			if (remove)
				w.on_exception(nullptr);
			else
				w.on_exception([&replaced](std::exception_ptr) { replaced++; });
			handler_saw_gone = handler_closure_gone;
			EXPECT_EQ(p->big.size(), 64u);
		});
		Timer bad(w, [] { throw std::runtime_error("handler replaced"); });
		bad.arm_at(T(1));
		w.advance(T(1));
		EXPECT_FALSE(handler_saw_gone);
		EXPECT_TRUE(handler_closure_gone);
		bad.arm_at(T(2));
		testing::internal::CaptureStderr();
		w.advance(T(2));
		const std::string err = testing::internal::GetCapturedStderr();
		EXPECT_EQ(replaced, remove ? 0 : 1);
		EXPECT_EQ(err.find("handler replaced") != std::string::npos, remove);
	}
}

// ---- Chrono ------------------------------------------------------------------

TEST(Chrono, TicksCeilRoundsUpAndSaturates)
{
	using tw::ticks_ceil;
	EXPECT_EQ(ticks_ceil(0ms, 1ms), 0u);
	EXPECT_EQ(ticks_ceil(-5ms, 1ms), 0u);
	EXPECT_EQ(ticks_ceil(1ns, 1ms), 1u);
	EXPECT_EQ(ticks_ceil(1000us, 1ms), 1u);
	EXPECT_EQ(ticks_ceil(1001us, 1ms), 2u);
	EXPECT_EQ(ticks_ceil(std::chrono::duration<double, std::milli>(2.5), 1ms), 3u);
	EXPECT_EQ(ticks_ceil(std::chrono::duration<double>(std::nan("")), 1ms), 0u);
	EXPECT_EQ(ticks_ceil(std::chrono::duration<double>(1e300), 1ms), tw::tick_max);
	EXPECT_EQ(ticks_ceil(std::chrono::hours::max(), 1ns), tw::tick_max);
	EXPECT_EQ(ticks_ceil(std::chrono::nanoseconds::max(), 1ns),
		  static_cast<tw::tick_t>(std::chrono::nanoseconds::max().count()));
	EXPECT_EQ(ticks_ceil(std::chrono::duration<std::uint64_t, std::nano>(UINT64_MAX), 1ns), tw::tick_max);
	// periods finer than a nanosecond
	EXPECT_EQ(ticks_ceil(std::chrono::duration<std::int64_t, std::pico>(1), 1ns), 1u);
	EXPECT_EQ(ticks_ceil(std::chrono::duration<std::int64_t, std::pico>(2001), 1ns), 3u);
}

// The standard's floating literals (2.5ms, 0.1s) are durations of long
// double in libstdc++: they used to fail to compile. 0.1s is 100 ms.
TEST(Chrono, FloatingLiteralsAreDurationsToo)
{
	EXPECT_EQ(tw::ticks_ceil(2.5ms, 1ms), 3u);
	EXPECT_EQ(tw::ticks_ceil(std::chrono::duration<long double>(1e300L), 1ms), tw::tick_max);
	Wheel w;
	int fired = 0;
	Timer t = w.after(0.1s, [&] { fired++; });
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(100));
	t.arm_at(Wheel::time_point() + 0.25s);
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(250));
	Timer p(w, [&] { fired++; });
	p.arm_every(0.5s);
	EXPECT_EQ(p.period(), 500ms);
	w.advance(Wheel::time_point() + 0.5s);
	EXPECT_EQ(fired, 2);
}

// A period that is not a whole number of nanoseconds used to overflow
// (UBSan: signed overflow) and give a timer 65 years away an expiry now.
TEST(Chrono, PeriodsThatAreNotWholeNanosecondsNeverFireEarly)
{
	using frames = std::chrono::duration<std::int64_t, std::ratio<1, 90>>;
	const std::int64_t years65 = std::int64_t{65} * 365 * 86400;
	const frames d(years65 * 90);
	EXPECT_EQ(tw::ticks_ceil(d, 1ms), static_cast<tw::tick_t>(years65) * 1000);
	EXPECT_EQ(tw::ticks_ceil(d + frames(1), 1ms), static_cast<tw::tick_t>(years65) * 1000 + 12);
	EXPECT_EQ(tw::ticks_ceil(frames::max(), 1ms), tw::tick_max);
	using thirds = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;
	EXPECT_EQ(tw::ticks_ceil(thirds(1), 1ns), 333'333'334u);
	EXPECT_EQ(tw::ticks_ceil(thirds(std::numeric_limits<std::int64_t>::max()), 1s),
		  3'074'457'345'618'258'603u);

	Wheel w;
	int fired = 0;
	Timer t(w, [&] { fired++; });
	t.arm_in(d);
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(static_cast<tw::tick_t>(years65) * 1000));
	w.advance(T(1'000'000));
	EXPECT_EQ(fired, 0);
	t.arm_in(frames::max()); // saturates at the last time point
	EXPECT_EQ(t.expiry(), tw::Wheel::time_point::max());
}

TEST(Chrono, RandomDurationsNeverFireEarlyNorATickLate)
{
	Wheel w(250us, S(1000, 250us));
	std::mt19937_64 rng(3);
	for (int i = 0; i < 2000; i++) {
		const std::chrono::nanoseconds d(static_cast<std::int64_t>(rng() % 100'000'000));
		tw::tick_t fired_at = 0;
		Timer t(w, [&] { fired_at = NOW(w); });
		const tw::tick_t start = NOW(w);
		t.arm_in(d);
		const tw::tick_t want = start + static_cast<tw::tick_t>((d.count() + 249'999) / 250'000);
		if (want > start)
			w.advance(S(static_cast<std::int64_t>(want) - 1, 250us));
		EXPECT_EQ(fired_at, 0u);
		w.advance(S(static_cast<std::int64_t>(want), 250us));
		EXPECT_EQ(fired_at, want);
	}
}

// advance() to a time inside a tick runs the timers due up to that time,
// not those of the rest of the tick: it rounded up and ran a timer armed
// for 1.7 ms at 1.5 ms (early), and its now() was past the time given.
TEST(Chrono, AdvanceInsideATickIsNeverEarly)
{
	Wheel w(1ms, Wheel::time_point(2500us)); // the start rounds down as well
	EXPECT_EQ(NOW(w), 2u);
	int fired = 0;
	Timer t(w, [&] { fired++; });
	t.arm_at(Wheel::time_point(3700us)); // tick 4
	EXPECT_EQ(w.advance(Wheel::time_point(3500us)), 0u);
	EXPECT_EQ(w.now(), T(3));
	EXPECT_EQ(w.advance(Wheel::time_point() + 3.999ms), 0u);
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(w.advance(Wheel::time_point(4000us)), 1u);
	EXPECT_EQ(fired, 1);
	EXPECT_THROW(w.advance(Wheel::time_point(3999us)), tw::error); // before now()
}

// A time point or duration in the wheel's tick is taken as a tick count
// (no arithmetic); every other unit is rounded up as before: both must
// give the same tick, on a 1 ms wheel and on a 5 ms one.
TEST(Chrono, TickUnitsAndOtherUnitsGiveTheSameTick)
{
	using ms_point = std::chrono::time_point<Wheel::clock, std::chrono::milliseconds>;
	using us_point = std::chrono::time_point<Wheel::clock, std::chrono::microseconds>;
	using five = std::chrono::duration<std::int64_t, std::ratio<5, 1000>>;
	using five_point = std::chrono::time_point<Wheel::clock, five>;
	Wheel w(1ms, T(10)), w5(5ms, S(10, 5ms));
	int fired = 0;
	Timer t(w, [&] { fired++; }), t5(w5, [&] { fired++; });
	for (std::int64_t k : {0, 9, 10, 11, 1000, 123456789}) {
		t.arm_at(ms_point(std::chrono::milliseconds(k)));
		const auto a = t.expiry();
		t.arm_at(T(k));
		EXPECT_EQ(t.expiry(), a) << k;
		t.arm_at(us_point(std::chrono::microseconds(k * 1000 - 1))); // rounds up to k
		EXPECT_EQ(t.expiry(), a) << k;
		t5.arm_at(five_point(five(k)));
		EXPECT_EQ(t5.expiry(), S(k, 5ms)) << k;
		t5.arm_at(ms_point(std::chrono::milliseconds(k * 5 - 4)));
		EXPECT_EQ(t5.expiry(), S(k, 5ms)) << k;
	}
	t.arm_at(ms_point(std::chrono::milliseconds(-3))); // before the epoch: tick 0, due now
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(0));
	t.arm_in(7ms);
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(17));
	t.arm_in(-7ms);
	EXPECT_EQ(EXP(t), std::optional<tw::tick_t>(10));
	t5.arm_in(five(3));
	EXPECT_EQ(t5.expiry(), S(13, 5ms));
	EXPECT_EQ(w.advance(ms_point(std::chrono::milliseconds(10))), 1u);
	EXPECT_EQ(w5.advance(five_point(five(13))), 1u);
	EXPECT_EQ(fired, 2);
	EXPECT_EQ(NOW(w5), 13u);
}

// The wheel's clock starts at tick 0. A start before it was taken as 0
// (now() then lied), and advance() to a time before it (or NaN) as tick
// 0, which ran the timers armed for tick 0, among them one armed for a
// later time before the epoch (-8 ms ran one due at -5 ms: early).
TEST(Chrono, TimesBeforeTheEpoch)
{
	for (auto start : {T(-10), S(-1, 1ns)}) {
		try {
			Wheel w(1ms, start);
			FAIL() << "a start before the epoch was taken";
		} catch (const tw::error &e) {
			EXPECT_EQ(e.code().value(), EINVAL);
			EXPECT_STREQ(e.what(), "tw: bad duration");
		}
	}
	Wheel w(1ms);
	int fired = 0;
	Timer t(w, [&] { fired++; });
	t.arm_at(T(-5));
	EXPECT_TRUE(t.pending());
	using dtp = std::chrono::time_point<Wheel::clock, std::chrono::duration<double, std::milli>>;
	for (dtp at : {dtp(T(-8)), dtp(std::chrono::duration<double, std::milli>(std::nan(""))),
		       dtp(-std::chrono::duration<double, std::milli>(0.5))}) {
		try {
			w.advance(at);
			FAIL() << "advance() before the epoch was taken";
		} catch (const tw::error &e) {
			EXPECT_EQ(e.code().value(), EINVAL);
			EXPECT_STREQ(e.what(), "tw: advance() before now()");
		}
	}
	EXPECT_EQ(fired, 0);
	w.advance(T(0));
	EXPECT_EQ(fired, 1); // past due: in the first advance
}

// A timer at the wheel's last tick (a time point of unsigned count in the
// tick's unit reaches it): the next expiry saturates as expiry() does, it
// does not wrap to an early time.
TEST(Chrono, NextExpiryOfTheLastTickSaturates)
{
	using last_point = std::chrono::time_point<Wheel::clock, std::chrono::duration<std::uint64_t, std::milli>>;
	Wheel w;
	Timer t(w, [] {});
	t.arm_at(last_point(std::chrono::duration<std::uint64_t, std::milli>(UINT64_MAX)));
	EXPECT_EQ(t.native_handle()->expires, tw::tick_max);
	EXPECT_EQ(t.expiry(), Wheel::time_point::max());
	ASSERT_TRUE(w.next_expiry());
	EXPECT_EQ(*w.next_expiry(), Wheel::time_point::max());
	t.cancel();
	EXPECT_EQ(w.next_expiry(), std::nullopt);
}

// A timer past the last tick time_point::max() is in (arm_at(max) rounds
// up into the next one; hours::max() and 2^64 - 1 ns saturate beyond):
// its expiry() and next_expiry() saturate at time_point::max(), and
// advance(time_point::max()) went to the tick that time is in, before
// the timer's: the driver loop of docs/cpp.md, advance(*next_expiry()),
// spun for ever. time_point::max() stands for every time from it on.
TEST(Chrono, AdvanceToTheSaturatedTimeRunsWhatSaturated)
{
	using u64ns = std::chrono::duration<std::uint64_t, std::nano>;
	for (auto tick : {std::chrono::nanoseconds(1ms), std::chrono::nanoseconds(3), std::chrono::nanoseconds(1)}) {
		Wheel w(tick);
		int fired = 0;
		Timer a(w, [&] { fired++; }), b(w, [&] { fired++; }), c(w, [&] { fired++; });
		a.arm_at(Wheel::time_point::max());
		b.arm_in(std::chrono::hours::max());
		c.arm_in(u64ns(UINT64_MAX));
		int steps = 0;
		while (auto t = w.next_expiry()) {
			w.advance(*t);
			if (++steps == 100) // a far timer's next_expiry() is a bound: a few steps
				break;
		}
		EXPECT_EQ(fired, 3) << "tick " << tick.count() << " ns";
		EXPECT_LT(steps, 100) << "tick " << tick.count() << " ns";
		EXPECT_EQ(w.now(), Wheel::time_point::max());
	}
}

// The deprecated advance(tick_t) saturates tick * tick length as the rest
// of the layer does: 2^64 ns / 1 ms + 1 ticks wrapped to under 1 ms (tick 0),
// and the timer due at 1 s did not run.
TEST(Chrono, DeprecatedAdvanceByTicksSaturates)
{
	Wheel w(1ms);
	int ran = 0;
	Timer t = w.after(1s, [&] { ran++; });
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	EXPECT_EQ(w.advance(tw::tick_t(UINT64_MAX / 1000000 + 1)), 1u);
#pragma GCC diagnostic pop
	EXPECT_EQ(ran, 1);
	EXPECT_GT(w.now(), Wheel::time_point::max() - 1ms);
	// ...and so does the deprecated Wheel(start tick, tick): it overflowed
	// (undefined: a signed product) and started at a wrapped time.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	Wheel late(tw::tick_t(UINT64_MAX / 1000000 + 1), 1ms);
#pragma GCC diagnostic pop
	EXPECT_GT(late.now(), Wheel::time_point::max() - 1ms);
}

// A periodic timer's first deadline counts from the wheel's time, saturated
// at its end (past 2^64 ns): it wrapped to an early time.
TEST(Chrono, PeriodicAtTheLastTickSaturates)
{
	Wheel w(3ms);
	w.advance(std::chrono::time_point<Wheel::clock, std::chrono::hours>::max());
	Timer p = w.every(3ms, [] {});
	EXPECT_EQ(p.expiry(), Wheel::time_point::max());
}

// A periodic schedule whose next deadline lies past 2^64 ns ends there, as
// cancel() ends it (its cancellation callback runs once): saturated at the
// clock's end, it ran again at each advance to the last tick, under every
// misfire policy and with a fixed delay (on a Loop, every iteration).
TEST(Chrono, PeriodicEndsWhereItsNextDeadlinePassesTheClocksEnd)
{
	const auto p = std::chrono::hours(3000000); // 1.08e19 ns: the second deadline is past 2^64 ns
	for (const tw::schedule s : {tw::schedule::fixed_rate, tw::schedule::fixed_delay})
		for (const tw::misfire m : {tw::misfire::skip, tw::misfire::once, tw::misfire::all}) {
			Wheel w(1ms);
			int fired = 0, cancelled = 0;
			Timer t(w, [&] { fired++; });
			t.on_cancel([&] { cancelled++; });
			t.arm_every(p, m, s);
			for (int i = 0; i < 4; i++)
				w.advance(Wheel::time_point::max()); // to the last tick
			EXPECT_EQ(fired, 1) << static_cast<int>(m) << " " << static_cast<int>(s);
			EXPECT_EQ(cancelled, 1);
			EXPECT_FALSE(t.pending());
			EXPECT_EQ(t.period(), 0ns);
			EXPECT_FALSE(t.cancel());
		}
}

// A periodic timer behind by more deadlines than missed() can count (2^32
// and more, after one long advance) goes on from the first deadline after
// the wheel's time, as behind by a few does: its grid moved 2^32 periods
// at most, so misfire::skip skipped one such step per advance and once ran
// again at the next advance.
TEST(Chrono, PeriodicBehindByMoreThanMissedCounts)
{
	for (const tw::misfire m : {tw::misfire::skip, tw::misfire::once}) {
		Wheel w;
		int runs = 0;
		std::uint32_t missed = 0;
		Timer p = w.every(1ms, [&](Timer &self) { runs++, missed = self.missed(); }, m);
		const auto far = T(5'000'000'000); // 5 * 10^9 periods later
		w.advance(far);
		EXPECT_EQ(runs, m == tw::misfire::once ? 1 : 0) << static_cast<int>(m);
		if (m == tw::misfire::once) {
			EXPECT_EQ(missed, UINT32_MAX); // saturated: more than it can say
		}
		EXPECT_EQ(p.expiry(), far + 1ms) << static_cast<int>(m);
		w.advance(far + 1ms);
		EXPECT_EQ(runs, m == tw::misfire::once ? 2 : 1) << static_cast<int>(m);
		EXPECT_EQ(missed, 0u);
	}
}

// A periodic timer re-armed by arm_in() (outside its callback) or arm_at()
// (inside it) runs at that deadline, and its grid counts on from there: it
// counted from the old grid, so misfire::skip dropped the run, once and all
// reported the deadlines between as missed (all ran each).
TEST(Chrono, ArmInOrArmAtMovesAPeriodicTimersGrid)
{
	for (const tw::misfire m : {tw::misfire::skip, tw::misfire::once, tw::misfire::all}) {
		Wheel w;
		std::vector<std::int64_t> runs; // expiry in ms, plus 1000 per missed
		Timer p = w.every(10ms, [&](Timer &self) {
			runs.push_back(self.expiry().time_since_epoch() / 1ms + 1000 * self.missed());
			if (runs.size() == 1)
				self.arm_at(T(100));
		}, m);
		w.advance(T(5));
		p.arm_in(50ms);
		for (int k = 6; k <= 110; k++)
			w.advance(T(k));
		EXPECT_EQ(runs, (std::vector<std::int64_t>{55, 100, 110})) << static_cast<int>(m);
		EXPECT_EQ(EXP(p), 120u);
	}
}

// ---- TimerHook ---------------------------------------------------------------

namespace {

struct Conn : tw::Hook<tw::Wheel, Conn> {
	int fired = 0;
	std::vector<int> *log = nullptr;
	explicit Conn(Wheel &w) : Hook(w) {}
	Conn() = default;
	void on_timer()
	{
		fired++;
		if (log)
			log->push_back(fired);
	}
};

struct Idle {};
struct Keepalive {};
struct Two;
using IdleHook = tw::Hook<tw::Wheel, Two, Idle>;
using KeepaliveHook = tw::Hook<tw::Wheel, Two, Keepalive>;
struct Two : IdleHook, KeepaliveHook {
	int idle = 0, keepalive = 0;
	explicit Two(Wheel &w) : IdleHook(w), KeepaliveHook(w) {}
	void on_timer(Idle) { idle++; }
	void on_timer(Keepalive) { keepalive++; }
};

} // namespace

TEST(Hook, FiresCancelsMovesAndIsTheCNodePlusAPointer)
{
	static_assert(sizeof(tw::Hook<tw::Wheel, Conn>) == sizeof(tw_timer) + sizeof(void *));
	Wheel w;
	Conn c(w);
	EXPECT_TRUE(c);
	EXPECT_FALSE(c.arm_at(T(10)));
	EXPECT_TRUE(c.cancel());
	EXPECT_FALSE(c.cancel());
	c.arm_in(5ms);
	Conn d(std::move(c));
	EXPECT_FALSE(c.pending());
	EXPECT_TRUE(d.pending());
	w.advance(T(5));
	EXPECT_EQ(c.fired, 0);
	EXPECT_EQ(d.fired, 1);
	Conn unbound;
	EXPECT_FALSE(unbound);
	EXPECT_THROW(unbound.arm_at(T(1)), tw::error);
}

TEST(Hook, SeveralHooksInOneObjectByTag)
{
	Wheel w;
	Two t(w);
	t.IdleHook::arm_at(T(3));
	t.KeepaliveHook::arm_at(T(4));
	w.advance(T(3));
	EXPECT_EQ(t.idle, 1);
	EXPECT_EQ(t.keepalive, 0);
	w.advance(T(4));
	EXPECT_EQ(t.keepalive, 1);
}

// Making, arming, firing, cancelling (on_cancel() run), moving and
// destroying hooks allocate nothing: one kind with on_cancel(), one
// without, one with two tags, within the four kinds the wheel makes
// room for.
struct Cancels : tw::Hook<tw::Wheel, Cancels> {
	int fired = 0, cancelled = 0;
	using Hook::Hook;
	Cancels() = default;
	void on_timer() { fired++; }
	void on_cancel() { cancelled++; }
};

TEST(Hook, NothingAllocatedToMakeArmFireCancelOrMove)
{
	Wheel w;
	const long before = g_allocs.load();
	{
		Cancels a(w);
		Conn b(w);
		Two two(w);
		a.arm_in(3ms);
		a.arm_at(T(2));
		b.arm_in(2.5ms);
		static_cast<IdleHook &>(two).arm_in(1ms);
		static_cast<KeepaliveHook &>(two).arm_in(5ms);
		w.advance(T(4));
		EXPECT_EQ(a.fired, 1);
		EXPECT_EQ(b.fired, 1);
		a.arm_in(1ms);
		EXPECT_TRUE(a.cancel());
		EXPECT_EQ(a.cancelled, 1);
		a.arm_in(1ms);
		Cancels moved(std::move(a));
		a = std::move(moved);
		EXPECT_TRUE(a.pending());
	}
	EXPECT_EQ(g_allocs.load() - before, 0);
}

TEST(Hook, PendingHooksAcrossVectorGrowthAndAfterTheWheelDies)
{
	auto w = std::make_unique<Wheel>(0);
	std::vector<Conn> v;
	for (int i = 0; i < 100; i++) {
		v.emplace_back(*w);
		v.back().arm_at(T(static_cast<tw::tick_t>(1 + i)));
	}
	w->advance(T(50));
	for (int i = 0; i < 100; i++)
		EXPECT_EQ(v[i].fired, i < 50 ? 1 : 0) << i;
	w.reset(); // 50 pending hooks, 50 idle ones
	for (Conn &c : v) {
		EXPECT_FALSE(c);
		EXPECT_FALSE(c.pending());
		EXPECT_FALSE(c.cancel());
		EXPECT_THROW(c.arm_at(T(1)), tw::error);
	}
}

TEST(Hook, ExceptionsGoToTheWheelsHandler)
{
	struct Thrower : tw::Hook<tw::Wheel, Thrower> {
		using Hook::Hook;
		void on_timer() { throw std::runtime_error("hook"); }
	};
	Wheel w;
	Caught caught;
	w.on_exception(caught.handler());
	Thrower t(w);
	t.arm_at(T(1));
	w.advance(T(1));
	EXPECT_EQ(caught.what, std::vector<std::string>{"hook"});
}

TEST(Mixed, WheelDestructionReachesEveryKindOfHandle)
{
	int cancelled = 0;
	auto w = std::make_unique<Wheel>(0);
	Conn hook(*w);
	Timer t(*w, [] {});
	Timer victim(*w, [] {});
	// a cancellation callback that destroys another pending timer and
	// re-arms its own: the first is cancelled once, the second dropped
	t.on_cancel([&] {
		cancelled++;
		victim = Timer();
		t.arm_at(T(1));
	});
	victim.on_cancel([&] { cancelled += 10; });
	hook.arm_at(T(5));
	t.arm_at(T(5));
	victim.arm_at(T(6));
	w.reset();
	EXPECT_EQ(cancelled, 11); // each pending Timer's cancellation once
	EXPECT_FALSE(hook.pending());
	EXPECT_FALSE(t.pending());
}

// ---- Hostile: copies that throw, owners destroyed from callbacks ----------

namespace {

// A callable whose copy throws once *armed is true (two pointers: stored
// inline in a cancellation callback's 16 bytes).
struct ThrowOnCopy {
	bool *armed;
	int *runs;
	ThrowOnCopy(bool *a, int *r) : armed(a), runs(r) {}
	ThrowOnCopy(const ThrowOnCopy &o) : armed(o.armed), runs(o.runs)
	{
		if (*armed)
			throw std::runtime_error("copy");
	}
	ThrowOnCopy(ThrowOnCopy &&) noexcept = default;
	void operator()() { ++*runs; }
};

} // namespace

// on_cancel(g) whose copy throws keeps the cancellation callback it had
// (the old one was destroyed before the copy: it ran 0 times), and the
// timer callback.
TEST(Hostile, OnCancelWhoseCopyThrowsKeepsThePreviousOne)
{
	Wheel w;
	int fired = 0, old_runs = 0, new_runs = 0;
	bool armed = true;
	Timer t(w, [&fired] { fired++; });
	t.on_cancel([&old_runs] { old_runs++; });
	const ThrowOnCopy g(&armed, &new_runs);
	EXPECT_THROW(t.on_cancel(g), std::runtime_error);
	t.arm_at(T(1));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(old_runs, 1);
	EXPECT_EQ(new_runs, 0);

	Timer u(w, [&fired] { fired++; }); // no cancellation callback yet
	EXPECT_THROW(u.on_cancel(g), std::runtime_error);
	u.arm_at(T(2));
	EXPECT_TRUE(u.cancel());
	u.arm_at(T(3));
	w.advance(T(3));
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(new_runs, 0);

	armed = false;
	t.on_cancel(g);
	t.arm_at(T(5));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(old_runs, 1);
	EXPECT_EQ(new_runs, 1);
}

// The object that owns a Wheel and its Timers deletes itself from one of
// those timers' callbacks: its Timers unlink themselves, the wheel closes
// when the advance returns (a timer due in the same advance still runs,
// the others are cancelled then). It used to drain and free the C wheel
// from inside the advance (ASan: use-after-free; a misuse report with
// debug checks; the timer due in the same advance did not run).
TEST(Hostile, WheelDestroyedFromATimerCallbackClosesWhenTheAdvanceReturns)
{
	struct Owner {
		Wheel w;
		Timer bye, other;
		int *gone;
		~Owner() { ++*gone; }
	};
	int gone = 0, fired = 0, cancelled = 0, cancelled_before_same = -1;
	auto *o = new Owner{Wheel(), Timer(), Timer(), &gone};
	o->bye = Timer(o->w, [o] { delete o; });
	o->other = Timer(o->w, [&fired] { fired += 100; });
	o->other.on_cancel([&cancelled] { cancelled += 100; });
	Timer same(o->w, [&] { // due in the same advance, after the delete
		fired++;
		cancelled_before_same = cancelled;
	});
	Timer later(o->w, [&fired] { fired += 10; }); // pending when it closes
	later.on_cancel([&] {
		cancelled++;
		later.arm_at(T(100)); // dropped
	});
	o->bye.arm_at(T(5));
	o->other.arm_at(T(6));
	same.arm_at(T(7));
	later.arm_at(T(50));
	EXPECT_EQ(o->w.advance(T(10)), 2u); // o->w is gone once this returns
	EXPECT_EQ(gone, 1);
	EXPECT_EQ(fired, 1);        // same ran; other was cancelled by its ~Timer
	EXPECT_EQ(cancelled, 101);  // other when destroyed, later when closed
	EXPECT_EQ(cancelled_before_same, 100); // later was cancelled after it
	EXPECT_FALSE(later);
	EXPECT_FALSE(later.pending());
	EXPECT_FALSE(same);
}

// Arming in the wheel's tick unit (the fast path) after the wheel was
// destroyed from a callback is dropped as any other arm, for both handles;
// and so is arm_every() (it left the timer periodic: cancel() true and its
// cancellation callback run once the wheel was gone).
TEST(Hostile, ArmsAfterTheWheelIsDestroyedFromACallbackAreDropped)
{
	using ms_point = std::chrono::time_point<Wheel::clock, std::chrono::milliseconds>;
	const ms_point at(std::chrono::milliseconds(50));
	auto *w = new Wheel;
	Conn c(*w);
	Timer pending(*w, [] {}), idle(*w, [] {});
	pending.arm_at(at);
	int cancelled = 0;
	idle.on_cancel([&] { cancelled++; });
	bool rearmed = true, armed = true, hooked = true, periodic = true;
	Timer bye(*w, [&] {
		delete w;
		rearmed = pending.arm_at(at + std::chrono::milliseconds(1));
		armed = idle.arm_at(at);
		hooked = c.arm_at(at) || c.pending();
		periodic = idle.arm_every(5ms) || idle.pending();
		EXPECT_FALSE(idle.pending());
	});
	bye.arm_at(ms_point(std::chrono::milliseconds(5)));
	w->advance(T(10));
	EXPECT_FALSE(rearmed);
	EXPECT_FALSE(armed);
	EXPECT_FALSE(hooked);
	EXPECT_FALSE(periodic);
	EXPECT_EQ(idle.period(), 0ns);
	EXPECT_FALSE(pending.pending());
	EXPECT_FALSE(idle);
	EXPECT_THROW(idle.arm_at(at), tw::error);
	EXPECT_FALSE(idle.cancel());
	EXPECT_EQ(cancelled, 0);
}

// A cancellation callback run by the wheel's destruction that calls
// advance(): EBUSY (one of its callbacks), and the destruction goes on.
// That advance's end closed the wheel a second time, inside the first:
// the wheel leaked (a -Ddebug_checks build aborted: twheel_drain() from a
// callback) and the cancellation callbacks after it found the wheel gone,
// their arms thrown as ESHUTDOWN instead of dropped.
TEST(Hostile, AdvanceFromACancellationCallbackOfTheDestruction)
{
	auto *w = new Wheel;
	Caught caught;
	w->on_exception(caught.handler());
	std::vector<int> busy;
	int dropped = 0;
	std::vector<std::unique_ptr<Timer>> ts;
	for (int i = 0; i < 3; i++) {
		ts.push_back(std::make_unique<Timer>(w->after(5ms, [] {})));
		Timer *t = ts.back().get();
		t->on_cancel([&, t] {
			try {
				w->advance(T(10));
			} catch (const tw::error &e) {
				busy.push_back(e.code().value());
			}
			dropped += !t->arm_in(1ms);
		});
	}
	delete w;
	EXPECT_EQ(busy, std::vector<int>(3, EBUSY));
	EXPECT_EQ(dropped, 3);
	EXPECT_EQ(caught.what, std::vector<std::string>{});
}

// A cancellation callback destroys its own Timer, run by cancel() or by the
// wheel's destruction: g is lent to the frame, so its captures live until
// it returns (they were destroyed under it: ASan use-after-free).
TEST(Hostile, CancellationCallbackDestroysItsOwnTimer)
{
	auto big = std::make_shared<std::string>(100, 'x');
	std::string seen;
	auto w = std::make_unique<Wheel>(0);
	auto t = std::make_unique<Timer>(*w, [] {});
	t->on_cancel([&t, big, &seen] {
		t.reset();
		seen = *big;
	});
	t->arm_at(T(5));
	EXPECT_TRUE(t->cancel()); // t is gone when this returns
	EXPECT_EQ(t, nullptr);
	EXPECT_EQ(seen, *big);
	EXPECT_EQ(big.use_count(), 1);

	seen.clear();
	t = std::make_unique<Timer>(*w, [] {});
	t->on_cancel([&t, big, &seen] {
		t.reset();
		seen = *big;
	});
	t->arm_at(T(5));
	w.reset();
	EXPECT_EQ(t, nullptr);
	EXPECT_EQ(seen, *big);
	EXPECT_EQ(big.use_count(), 1);
}

// A cancellation callback that replaces or removes itself, or moves its
// timer away: what it set stays (on_cancel(nullptr) destroyed the running
// g: ASan use-after-free).
TEST(Hostile, CancellationCallbackReplacesRemovesOrMovesItself)
{
	Wheel w;
	int first = 0, second = 0;
	Timer t(w, [] {});
	auto big = std::make_shared<int>(7);
	t.on_cancel([&, big] {
		t.on_cancel(nullptr);
		first += *big; // its captures live until it returns
	});
	t.arm_at(T(1));
	EXPECT_TRUE(t.cancel());
	t.arm_at(T(2));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(first, 7);
	EXPECT_EQ(big.use_count(), 1);

	t.on_cancel([&] {
		first++;
		t.on_cancel([&] { second++; });
	});
	t.arm_at(T(3));
	EXPECT_TRUE(t.cancel());
	t.arm_at(T(4));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(first, 8);
	EXPECT_EQ(second, 1);

	Timer keep;
	t.on_cancel([&] {
		first++;
		keep = std::move(t);
	});
	t.arm_at(T(5));
	EXPECT_TRUE(t.cancel());
	EXPECT_FALSE(t);
	keep.arm_at(T(6));
	EXPECT_TRUE(keep.cancel()); // g came back into the handle that owns it now
	EXPECT_EQ(first, 10);
}

// Empty cancellation callbacks remove the one set, as nullptr does.
TEST(Hostile, EmptyCancellationCallbacksRemoveIt)
{
	Wheel w;
	int runs = 0;
	Timer t(w, [] {});
	void (*null_fn)() = nullptr;
	t.on_cancel([&] { runs++; });
	t.on_cancel(null_fn);
	t.arm_at(T(1));
	EXPECT_TRUE(t.cancel());
	t.on_cancel([&] { runs++; });
	t.on_cancel(std::function<void()>());
	t.arm_at(T(1));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(runs, 0);
}

// A cancellation callback run by cancel() destroys the Wheel: the other
// timers are cancelled, this one stays usable as an orphan.
TEST(Hostile, CancellationCallbackDestroysTheWheel)
{
	auto w = std::make_unique<Wheel>(0);
	int cancelled = 0;
	Timer t(*w, [] {});
	Timer other(*w, [] {});
	other.on_cancel([&] { cancelled += 10; });
	t.on_cancel([&] {
		cancelled++;
		w.reset();
	});
	t.arm_at(T(1));
	other.arm_at(T(2));
	EXPECT_TRUE(t.cancel());
	EXPECT_EQ(cancelled, 11);
	EXPECT_FALSE(t);
	EXPECT_FALSE(other.pending());
}

// A move assignment closes the target's old wheel, whose cancellation
// callbacks may destroy the target itself (its holder lets it go): the
// assignment then went on in the freed object (ASan: heap-use-after-free
// in close(), and the source's wheel leaked into freed memory). It takes
// the source's wheel first now, and closes the old one last.
TEST(Hostile, CancellationCallbackDestroysTheTargetOfAMoveAssignment)
{
	auto w = std::make_unique<Wheel>();
	Wheel src;
	int cancelled = 0, fired = 0;
	Timer t(*w, [] {});
	t.on_cancel([&] {
		cancelled++;
		w.reset(); // the wheel that src's moves into
	});
	Timer s(src, [&] { fired++; });
	t.arm_at(T(1));
	s.arm_at(T(1));
	*w = std::move(src);
	EXPECT_EQ(cancelled, 1);
	EXPECT_FALSE(w);
	EXPECT_FALSE(t);
	EXPECT_FALSE(s); // src's wheel went with the target
	EXPECT_EQ(src.native_handle(), nullptr);
	EXPECT_EQ(fired, 0);
}

// Random operations from callbacks, cancellation callbacks and hooks, as
// the rules allow them: arm, cancel, destroy, move, assign over, make
// periodic, call_after, advance() (refused in a callback) and destroying
// the wheel, also while it cancels its timers. Under ASan nothing touches
// freed memory and nothing leaks; everywhere the wheel's count matches
// the handles pending. It found advance() from a cancellation callback
// of the destruction closing the wheel twice.
namespace {
struct Chaos;
struct ChaosHook : tw::Hook<tw::Wheel, ChaosHook> {
	Chaos *w;
	ChaosHook(Wheel &o, Chaos *c) : Hook(o), w(c) {}
	void on_timer();
	void on_cancel();
};
struct Chaos {
	std::mt19937 rng;
	Wheel *wheel;
	std::vector<std::unique_ptr<Timer>> ts;
	std::vector<std::unique_ptr<ChaosHook>> hs;
	std::vector<const Timer *> assigned; // an assignment over them runs: their g may not destroy them
	int depth = 0;
	bool gone = false, closing = false, stop = false;

	std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }
	bool free_(const Timer *t) { return std::find(assigned.begin(), assigned.end(), t) == assigned.end(); }
	void add_timer()
	{
		ts.push_back(std::make_unique<Timer>(*wheel, [this] { act(true); }));
		if (pick(2))
			ts.back()->on_cancel([this] { act(false); });
	}
	void act(bool)
	{
		if (stop || depth > 2)
			return;
		depth++;
		const auto d = std::chrono::microseconds(pick(5000));
		for (std::size_t n = 1 + pick(3); n > 0; n--) {
			std::unique_ptr<Timer> &t = ts[pick(ts.size())], &o = ts[pick(ts.size())];
			std::unique_ptr<ChaosHook> &h = hs[pick(hs.size())];
			switch (pick(13)) {
			case 0: if (t && *t) t->arm_in(d); break;
			case 1: if (t) t->cancel(); break;
			case 2: if (free_(t.get())) t.reset(); break;
			case 3:
				if (t && o && t != o && free_(t.get())) {
					assigned.push_back(t.get());
					*t = std::move(*o);
					assigned.pop_back();
				}
				break;
			case 4: if (t && free_(t.get())) t = std::make_unique<Timer>(std::move(*t)); break;
			case 5: if (!gone && ts.size() < 40) add_timer(); break;
			case 6: if (h && *h) h->arm_in(d); break;
			case 7: if (h) h->cancel(); break;
			case 8: if (h && pick(2)) h.reset(); else if (h) h = std::make_unique<ChaosHook>(std::move(*h)); break;
			case 9: if (t && *t) t->arm_every(std::chrono::milliseconds(1 + pick(3)), tw::misfire(pick(3)), tw::schedule(pick(2))); break;
			case 10: if (!gone && pick(4) == 0) wheel->call_after(d, [this] { act(true); }); break;
			case 11:
				if (!gone || closing) {
					try { // refused from a callback, run elsewhere
						wheel->advance(wheel->now() + 1ms);
						EXPECT_FALSE(closing);
					} catch (const tw::error &e) {
						EXPECT_EQ(e.code().value(), EBUSY);
					}
				}
				break;
			case 12:
				if (!gone && pick(30) == 0) {
					gone = closing = true;
					delete wheel;
					closing = false;
				}
				break;
			}
		}
		depth--;
	}
};
void ChaosHook::on_timer() { w->act(true); }
void ChaosHook::on_cancel() { w->act(false); }
} // namespace

TEST(Hostile, RandomOperationsFromCallbacks)
{
	for (unsigned seed = 0; seed < 300; seed++) {
		Chaos c;
		c.rng.seed(seed);
		c.wheel = new Wheel;
		for (int i = 0; i < 20; i++)
			c.add_timer();
		for (int i = 0; i < 10; i++)
			c.hs.push_back(std::make_unique<ChaosHook>(*c.wheel, &c));
		for (int step = 0; step < 100 && !c.gone; step++) {
			if (c.pick(3) == 0) {
				c.depth = 0;
				c.act(false);
			}
			if (c.gone)
				break;
			std::size_t pending = 0;
			for (const auto &t : c.ts)
				pending += t && t->pending();
			for (const auto &h : c.hs)
				pending += h && h->pending();
			ASSERT_LE(pending, c.wheel->size()) << seed; // the rest: call_after()'s
			c.wheel->advance(c.wheel->now() + 1ms);
		}
		if (!c.gone) {
			c.gone = c.closing = true;
			delete c.wheel;
			c.closing = false;
		}
		c.stop = true;
		for (const auto &t : c.ts)
			EXPECT_FALSE(t && (*t || t->pending())) << seed;
		c.ts.clear();
		c.hs.clear();
	}
}
