// SPDX-License-Identifier: MIT
//
// <twheel/co.hpp>: coroutines on tw::Loop. Never early (nor wrapped past
// the clock's end); values and exceptions across co_await; a flat stack
// over tasks done at once and tasks awaiting tasks 100,000 deep; a
// detached task's exception to the loop's handler; a task destroyed while suspended on a timer (the timer goes
// with it) or on resume_on(); the loop destroyed with tasks suspended
// (frames freed, destructors run: LSan-clean under ASan); spawn() while
// it is destroyed; resume_on() from another thread; a task ending on
// another Loop's thread (its own Loop stopped: ended by ~Loop); I/O with a deadline:
// -ETIME never early (a deadline of any duration), data first, a frame destroyed with its request in
// flight (the data after it left to the next reader), the loop destroyed
// with requests in flight, a request on a stopped loop, a multishot one,
// data racing the deadline, no allocation in the steady state.
#include <twheel/co.hpp>

#include <gtest/gtest.h>

#include "count_new.h"
#include "slow_write.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

namespace {

// A coroutine that starts at once and is destroyed by its holder: drives
// a task<> held outside, so that a test can destroy that task mid-way.
struct driver {
	struct promise_type {
		driver get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
		std::suspend_never initial_suspend() noexcept { return {}; }
		std::suspend_always final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		void unhandled_exception() { std::terminate(); }
	};
	std::coroutine_handle<promise_type> h;
	driver(std::coroutine_handle<promise_type> x) noexcept : h(x) {}
	driver(driver &&o) noexcept : h(std::exchange(o.h, {})) {}
	~driver()
	{
		if (h)
			h.destroy();
	}
};

tw::co::task<void> sleeper(tw::Loop &loop, std::chrono::milliseconds d, bool *early, int *done)
{
	const auto from = loop.clock_now();
	co_await tw::co::sleep_for(loop, d);
	if (loop.clock_now() < from + d)
		*early = true;
	++*done;
}

TEST(Co, SleepNeverEarly)
{
	tw::Loop loop;
	bool early = false;
	int done = 0;
	for (int i = 0; i < 200; i++)
		tw::co::spawn(loop, sleeper(loop, std::chrono::milliseconds(1 + i % 37), &early, &done));
	const auto end = clk::now() + 5s;
	while (done < 200 && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(done, 200);
	EXPECT_FALSE(early);
	EXPECT_EQ(loop.size(), 0u); // every anchor and sleeper gone
}

template <class TP>
tw::co::task<void> sleeps_until(tw::Loop &loop, TP tp, bool *early, int *done)
{
	co_await tw::co::sleep_until(loop, tp);
	if (loop.clock_now() < tp)
		*early = true;
	++*done;
}

// sleep_until() of any duration of the loop clock (whole ms, double s),
// rounded up as arm_at()'s: never early. A floating-point one did not
// compile; one of another clock does not, with a message
// (cpp-co-sleep-until-other-clock).
TEST(Co, SleepUntilAnyDurationOfTheLoopClockNeverEarly)
{
	tw::Loop loop;
	bool early = false;
	int done = 0;
	using dsec = std::chrono::duration<double>;
	for (int i = 0; i < 20; i++) {
		const auto now = loop.clock_now();
		tw::co::spawn(loop, sleeps_until(loop, std::chrono::time_point_cast<std::chrono::milliseconds>(now) + 1ms * (1 + i % 3),
						 &early, &done));
		tw::co::spawn(loop, sleeps_until(loop, std::chrono::time_point<clk, dsec>(now) + dsec(0.0001 * (1 + i)), &early, &done));
	}
	const auto end = clk::now() + 5s;
	while (done < 40 && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(done, 40);
	EXPECT_FALSE(early);
}

template <class D>
tw::co::task<void> sleep_long(tw::Loop &loop, D d, int *resumed)
{
	co_await tw::co::sleep_for(loop, d);
	++*resumed;
}

// Durations past the clock's end: sleep_for() converted them to ns and
// added them to the clock in int64_t (UBSan: signed overflow), wrapped
// into the past and woke at once.
TEST(Co, SleepForPastTheClocksEndNeverWakes)
{
	tw::Loop loop;
	int resumed = 0;
	tw::co::spawn(loop, sleep_long(loop, std::chrono::hours::max(), &resumed));
	tw::co::spawn(loop, sleep_long(loop, std::chrono::hours(24 * 365 * 300), &resumed));
	tw::co::spawn(loop, sleep_long(loop, std::chrono::duration<double>(1e300), &resumed));
	for (int i = 0; i < 3; i++)
		loop.run_once(false);
	EXPECT_EQ(resumed, 0);
	EXPECT_EQ(loop.size(), 6u); // three anchors, three sleeps
}

tw::co::task<int> twice(tw::Loop &loop, int x)
{
	co_await tw::co::sleep_for(loop, 1ms);
	co_return 2 * x;
}

tw::co::task<int> thrower(tw::Loop &loop)
{
	co_await tw::co::sleep_for(loop, 1ms);
	throw std::runtime_error("boom");
}

// co_return of a braced list: return_value() could not deduce it
tw::co::task<std::pair<int, std::string>> braced()
{
	co_return {1, ""};
}

tw::co::task<void> parent(tw::Loop &loop, int *sum, std::string *caught)
{
	*sum = co_await twice(loop, 20) + co_await twice(loop, 1) - (co_await braced()).first + 1;
	try {
		co_await thrower(loop);
	} catch (const std::runtime_error &e) {
		*caught = e.what();
	}
	try { // a moved-from task: the await read the promise of a null handle
		tw::co::task<int> t = twice(loop, 1), moved = std::move(t);
		co_await std::move(t);
	} catch (const tw::error &e) {
		*caught += std::string(", ") + e.what();
	}
	loop.stop();
}

TEST(Co, ValuesAndExceptionsAcrossAwait)
{
	tw::Loop loop;
	int sum = 0;
	std::string caught;
	tw::co::spawn(loop, parent(loop, &sum, &caught));
	loop.run();
	EXPECT_EQ(sum, 42);
	EXPECT_EQ(caught, "boom, tw: the task is empty");
}

struct no_default {
	explicit no_default(int x) : v(x) {}
	int v;
};
tw::co::task<int &> ref_to(int &x)
{
	co_return x;
}
tw::co::task<const std::string &> cref_to(const std::string &s)
{
	co_return s;
}
tw::co::task<std::unique_ptr<int>> move_only()
{
	co_return std::make_unique<int>(5);
}
tw::co::task<no_default> no_default_made()
{
	co_return no_default(3);
}

// task<T &>: std::optional<T &> does not compile (the header failed to
// compile for it). A reference is returned as the same object; move-only
// types and types with no default constructor as values.
TEST(Co, TaskValueTypes)
{
	int x = 1, v = 0;
	const std::string s = "s";
	const std::string *got = nullptr;
	auto drive = [](int *x, const std::string *s, const std::string **got, int *v) -> driver {
		co_await ref_to(*x) = 2;
		*got = &co_await cref_to(*s);
		*v = *co_await move_only() + (co_await no_default_made()).v;
	};
	driver d = drive(&x, &s, &got, &v);
	EXPECT_EQ(x, 2);
	EXPECT_EQ(got, &s);
	EXPECT_EQ(v, 8);
}

[[gnu::noinline]] std::uintptr_t stack_here()
{
	return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
}

tw::co::task<std::uintptr_t> here()
{
	co_return stack_here();
}

tw::co::task<void> awaits_done_tasks(int n, std::uintptr_t *first, std::uintptr_t *last)
{
	for (int i = 0; i < n; i++)
		*(i ? last : first) = co_await here();
}

// Tasks that end without suspending, awaited one after another: the stack
// stays where it was. It grew by a frame or two each (symmetric transfer
// without a tail call: GCC 12 at -O0 or -O1, or with ASan) and overflowed
// after some 10,000 of them.
TEST(Co, TasksDoneAtOnceKeepTheStackFlat)
{
	tw::Loop loop;
	std::uintptr_t first = 0, last = 0;
	tw::co::spawn(loop, awaits_done_tasks(2000, &first, &last));
	ASSERT_NE(first, 0u);
	EXPECT_LT(first > last ? first - last : last - first, 4096u);
}

struct span {
	std::uintptr_t lo = UINTPTR_MAX, hi = 0;
	void mark()
	{
		const std::uintptr_t at = stack_here();
		lo = std::min(lo, at), hi = std::max(hi, at);
	}
};

// rec(n) awaits rec(n - 1); the last ends at once or after a sleep.
tw::co::task<int> rec(tw::Loop &loop, int n, bool sleep, span *s)
{
	s->mark();
	if (n == 0 && sleep)
		co_await tw::co::sleep_for(loop, 0ms);
	int r = 0; // not n ? co_await ... : 0, which GCC 12 gets wrong
	if (n)
		r = co_await rec(loop, n - 1, sleep, s) + 1;
	s->mark();
	co_return r;
}

// Tasks awaiting tasks, as deep as a recursive function: the stack stays
// where it was, on the way down and back, from a task or another kind of
// coroutine. It grew by each level's frames (the awaiter resumed the task
// inside await_suspend()), 176 B at -O0 and 1.2 KB under ASan at -O2: 100,000
// levels overflowed 8 MB.
TEST(Co, TasksAwaitingTasks100000DeepKeepTheStackFlat)
{
	tw::Loop loop;
	auto top = [](tw::Loop &l, int n, bool sleep, span *s, int *got) -> tw::co::task<void> {
		*got = co_await rec(l, n, sleep, s);
	};
	const std::pair<int, bool> runs[] = {{2000, false}, {2000, true}, {100000, true}}; // (depth, sleep)
	for (auto [depth, sleep] : runs) { // 100,000 once 2,000 held
		span s;
		int got = -1;
		tw::co::spawn(loop, top(loop, depth, sleep, &s, &got));
		while (got < 0)
			loop.run_once();
		EXPECT_EQ(got, depth);
		ASSERT_LT(s.hi - s.lo, 4096u) << depth << " deep, sleep " << sleep;
	}
	span s;
	int got = -1;
	auto drive = [](tw::Loop &l, span *s, int *got) -> driver { *got = co_await rec(l, 2000, false, s); };
	driver d = drive(loop, &s, &got);
	EXPECT_EQ(got, 2000);
	EXPECT_LT(s.hi - s.lo, 4096u) << "from a driver";
}

tw::co::task<void> detached_thrower(tw::Loop &loop)
{
	co_await tw::co::sleep_for(loop, 1ms);
	throw std::logic_error("detached");
}

TEST(Co, DetachedExceptionGoesToTheLoopHandler)
{
	tw::Loop loop;
	std::string got;
	loop.on_exception([&](std::exception_ptr e) {
		try {
			std::rethrow_exception(e);
		} catch (const std::logic_error &x) {
			got = x.what();
		}
	});
	tw::co::spawn(loop, detached_thrower(loop));
	const auto end = clk::now() + 5s;
	while (got.empty() && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(got, "detached");
	EXPECT_EQ(loop.size(), 0u);
}

tw::co::task<void> throws_at_once(std::shared_ptr<int>)
{
	throw std::logic_error("at once");
	co_return;
}

// Before its first suspension: to the handler from inside spawn(), which
// throws nothing; a handler that destroys the Loop there closes it when
// spawn() returns.
TEST(Co, DetachedExceptionBeforeTheFirstSuspensionGoesToTheHandlerInSpawn)
{
	auto own = std::make_unique<tw::Loop>();
	auto token = std::make_shared<int>(0);
	std::vector<std::string> got;
	own->on_exception([&](std::exception_ptr e) {
		try {
			std::rethrow_exception(e);
		} catch (const std::logic_error &x) {
			got.push_back(x.what());
		}
	});
	EXPECT_NO_THROW(tw::co::spawn(*own, throws_at_once(token)));
	EXPECT_EQ(got, std::vector<std::string>{"at once"});
	EXPECT_EQ(token.use_count(), 1);
	EXPECT_EQ(own->size(), 0u);
	own->on_exception([&](std::exception_ptr) { own.reset(); });
	tw::co::spawn(*own, throws_at_once(token));
	EXPECT_FALSE(own);
	EXPECT_EQ(token.use_count(), 1);
}

// A coroutine type of the user's whose unhandled_exception() rethrows, as
// some do: its exception leaves resume(), which the loop calls. It went
// through the noexcept callback of sleep_until and of resume_on's work
// item: std::terminate. It goes to the loop's handler, as a task's does.
struct rethrower {
	struct promise_type {
		rethrower get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
		std::suspend_never initial_suspend() noexcept { return {}; }
		std::suspend_always final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		void unhandled_exception() { throw; }
	};
	std::coroutine_handle<promise_type> h;
	rethrower(std::coroutine_handle<promise_type> x) noexcept : h(x) {}
	rethrower(rethrower &&o) noexcept : h(std::exchange(o.h, {})) {}
	~rethrower()
	{
		if (h)
			h.destroy();
	}
};

TEST(Co, RethrowingCoroutineTypeThrowsToTheLoopHandler)
{
#if defined(__clang__)
	// clang (14, and later versions too) leaves such a coroutine at the
	// suspend point it last passed, not the final one, and destroying
	// the frame then destroys its locals twice, with or without this
	// library: a compiler bug, shown at -O1 and above.
	GTEST_SKIP() << "clang destroys a rethrowing coroutine's locals twice";
#endif
	tw::Loop loop;
	std::vector<std::string> got;
	loop.on_exception([&](std::exception_ptr e) {
		try {
			std::rethrow_exception(e);
		} catch (const std::runtime_error &x) {
			got.push_back(x.what());
		}
	});
	auto after_sleep = [](tw::Loop &l) -> rethrower {
		co_await tw::co::sleep_for(l, 1ms);
		throw std::runtime_error("after sleep");
	};
	auto after_hop = [](tw::Loop &l) -> rethrower {
		co_await tw::co::resume_on(l);
		throw std::runtime_error("after resume_on");
	};
	rethrower a = after_sleep(loop), b = after_hop(loop);
	const auto end = clk::now() + 5s;
	while (got.size() < 2 && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(got, (std::vector<std::string>{"after resume_on", "after sleep"}));
	EXPECT_TRUE(a.h.done() && b.h.done());
	EXPECT_EQ(loop.size(), 0u);
}

struct counted {
	int *n;
	~counted() { ++*n; }
};

tw::co::task<void> long_sleeper(tw::Loop &loop, int *destroyed, int *resumed)
{
	counted c{destroyed};
	std::vector<char> heap(1000); // LSan would see it leak
	co_await tw::co::sleep_for(loop, 1h);
	++*resumed;
}

tw::co::task<void> nested(tw::Loop &loop, int *destroyed, int *resumed)
{
	counted c{destroyed};
	co_await long_sleeper(loop, destroyed, resumed);
	++*resumed;
}

TEST(Co, LoopDestroyedWithTasksSuspended)
{
	int destroyed = 0, resumed = 0;
	{
		tw::Loop loop;
		for (int i = 0; i < 50; i++)
			tw::co::spawn(loop, long_sleeper(loop, &destroyed, &resumed));
		for (int i = 0; i < 50; i++)
			tw::co::spawn(loop, nested(loop, &destroyed, &resumed));
		loop.run_once(false);
		EXPECT_EQ(destroyed, 0);
		// each detached task counts one timer until it ends (its anchor),
		// beside the sleep it awaits
		EXPECT_EQ(loop.size(), 200u);
	}
	EXPECT_EQ(destroyed, 150); // 50 + 2 * 50 frames' locals
	EXPECT_EQ(resumed, 0);
}

tw::co::task<void> short_sleeps(tw::Loop &loop, int *destroyed, int *resumed)
{
	counted c{destroyed};
	auto first = tw::co::sleep_for(loop, 2ms); // made before the move: the Loop & dangles after
	co_await first;
	++*resumed;
	co_await first; // again, on the moved Loop through its control block
	++*resumed;
}

// The Loop moved while tasks sleep: they wake on the Loop moved to and
// end there. Then stopped while they sleep: nothing resumes them, the
// Loop's destruction destroys their frames.
TEST(Co, LoopMovedOrStoppedWhileTasksAreSuspended)
{
	int destroyed = 0, resumed = 0;
	{
		auto a = std::make_unique<tw::Loop>();
		for (int i = 0; i < 20; i++)
			tw::co::spawn(*a, short_sleeps(*a, &destroyed, &resumed));
		EXPECT_EQ(a->size(), 40u);
		tw::Loop b(std::move(*a));
		a.reset();
		const auto end = clk::now() + 5s;
		while (b.size() && clk::now() < end)
			b.run_once();
		EXPECT_EQ(resumed, 40);
		EXPECT_EQ(destroyed, 20);
		for (int i = 0; i < 20; i++)
			tw::co::spawn(b, long_sleeper(b, &destroyed, &resumed));
		b.stop();
		EXPECT_EQ(b.run_once(false), 0u);
		EXPECT_THROW(tw::co::spawn(b, long_sleeper(b, &destroyed, &resumed)), tw::error);
		EXPECT_EQ(destroyed, 20); // the one spawn() refused never started
	}
	EXPECT_EQ(destroyed, 40);
	EXPECT_EQ(resumed, 40);
}

TEST(Co, TaskDestroyedWhileSuspendedOnATimer)
{
	tw::Loop loop;
	int destroyed = 0, resumed = 0;
	auto t = std::make_unique<tw::co::task<void>>(long_sleeper(loop, &destroyed, &resumed));
	auto drive = [](tw::co::task<void> &t) -> driver { co_await std::move(t); };
	driver d = drive(*t);
	EXPECT_EQ(loop.size(), 1u); // the sleeper's timer
	t.reset();                  // the frame goes, and its timer with it
	EXPECT_EQ(destroyed, 1);
	EXPECT_EQ(loop.size(), 0u);
	loop.run_once(false);
	EXPECT_EQ(resumed, 0);
}

tw::co::task<std::string> two_steps(tw::Loop &loop, int *steps)
{
	co_await tw::co::sleep_for(loop, 2ms);
	++*steps;
	co_await tw::co::sleep_for(loop, 2ms);
	++*steps;
	co_return std::string(40, 'x'); // on the heap: a moved-from one is empty
}

driver await_into(tw::co::task<std::string> &t, std::string *out)
{
	try {
		*out = co_await std::move(t);
	} catch (const tw::error &e) {
		*out = std::to_string(e.code().value()) + " " + e.what();
	}
}

// A task awaited a second time, while suspended or once ended, or spawned
// while awaited: the second co_await resumed the task where it waited on
// a sleep (the first awaiter was never resumed, the second got the value),
// or after it ended returned its value moved from (an empty string); and
// spawn() resumed it where it waited, its first awaiter then hung.
TEST(Co, TaskAwaitedTwiceThrows)
{
	const std::string value(40, 'x'), again = std::to_string(EINVAL) + " tw: the task was awaited already";
	tw::Loop loop;
	int steps = 0;
	tw::co::task<std::string> t = two_steps(loop, &steps);
	std::string first, second, third;
	driver d1 = await_into(t, &first), d2 = await_into(t, &second);
	EXPECT_EQ(second, again);
	const auto end = clk::now() + 5s;
	while (!t.done() && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(steps, 2);
	EXPECT_EQ(first, value);
	driver d3 = await_into(t, &third);
	EXPECT_EQ(third, again);
	// spawned while awaited: refused, and the frame goes with the task
	int destroyed = 0, resumed = 0;
	tw::co::task<void> u = long_sleeper(loop, &destroyed, &resumed);
	auto drive = [](tw::co::task<void> &t, int *resumed) -> driver {
		co_await std::move(t);
		++*resumed;
	};
	driver d4 = drive(u, &resumed);
	try {
		tw::co::spawn(loop, std::move(u));
		ADD_FAILURE() << "spawn() of a task being awaited";
	} catch (const tw::error &e) {
		EXPECT_EQ(std::to_string(e.code().value()) + " " + e.what(), again);
	}
	EXPECT_EQ(destroyed, 1);
	EXPECT_EQ(loop.size(), 0u);
	loop.run_once(false);
	EXPECT_EQ(resumed, 0);
}

tw::co::task<int> awaits_ref(tw::co::task<int> &t, int *resumed)
{
	const int v = co_await std::move(t);
	++*resumed;
	co_return v;
}

// The awaiting coroutine destroyed while the task it awaits, held
// elsewhere, goes on: the task, ending, resumed the freed frame (ASan:
// heap-use-after-free). And the other way round: the task destroyed
// while awaited, then the coroutine awaiting it.
TEST(Co, AwaiterDestroyedBeforeTheTaskItAwaits)
{
	tw::Loop loop;
	int resumed = 0;
	auto drive = [](tw::co::task<int> &t) -> driver { (void)co_await std::move(t); };
	tw::co::task<int> child = twice(loop, 21);
	{
		tw::co::task<int> parent = awaits_ref(child, &resumed);
		driver d = drive(parent);
		EXPECT_EQ(loop.size(), 1u); // the child's sleep
	} // the driver goes, then the parent, suspended
	const auto end = clk::now() + 5s;
	while (!child.done() && clk::now() < end)
		loop.run_once();
	EXPECT_TRUE(child.done());
	EXPECT_EQ(resumed, 0);
	tw::co::task<int> child2 = twice(loop, 1);
	auto parent2 = std::make_unique<tw::co::task<int>>(awaits_ref(child2, &resumed));
	driver d2 = drive(*parent2);
	child2 = tw::co::task<int>(); // the child goes first, with its sleep
	EXPECT_EQ(loop.size(), 0u);
	parent2.reset();
	EXPECT_EQ(resumed, 0);
}

tw::co::task<void> drops(std::unique_ptr<tw::co::task<void>> *owner, int depth, int *ran)
{
	if (depth)
		co_await drops(owner, depth - 1, ran);
	else
		owner->reset(); // the coroutine awaiting this chain goes, while it runs
	++*ran;
}

tw::co::task<void> awaits_void(tw::co::task<void> *t, int *resumed)
{
	co_await std::move(*t);
	++*resumed;
}

// A task that, in the co_await that starts it (or in a task it starts so),
// destroys the coroutine awaiting it, then ends: the co_await resumed
// that freed coroutine (ASan: heap-use-after-free in await_resume()).
TEST(Co, TaskDestroysItsAwaiterBeforeItFirstSuspends)
{
	for (int depth : {0, 1, 3}) {
		int ran = 0, resumed = 0;
		auto owner = std::make_unique<tw::co::task<void>>();
		tw::co::task<void> child = drops(&owner, depth, &ran);
		*owner = awaits_void(&child, &resumed);
		auto drive = [](tw::co::task<void> &t) -> driver { co_await std::move(t); };
		driver d = drive(*owner);
		EXPECT_FALSE(owner);
		EXPECT_EQ(ran, depth + 1);
		EXPECT_EQ(resumed, 0);
		EXPECT_TRUE(child.done());
	}
}

// A task released (release()) and resumed by hand, as by another
// executor, outside any coroutine and from a task: at its end it resumed
// the awaiter it never had, a null handle (SIGSEGV).
TEST(Co, ReleasedTaskResumedByHandEndsAtItsFinalSuspend)
{
	tw::Loop loop;
	auto h = twice(loop, 4).release();
	h.resume(); // to its sleep
	while (!h.done())
		loop.run_once();
	auto g = braced().release();
	g.resume(); // ends at once
	EXPECT_TRUE(g.done());
	g.destroy();
	auto drive = [](tw::co::task<int> &t, std::coroutine_handle<> *rel) -> tw::co::task<int> {
		*rel = braced().release();
		rel->resume(); // from a task the trampoline runs
		co_return co_await std::move(t);
	};
	std::coroutine_handle<> rel;
	tw::co::task<int> t = twice(loop, 1);
	int got = 0;
	auto top = [](tw::co::task<int> d, int *got) -> driver { *got = co_await std::move(d); };
	driver d = top(drive(t, &rel), &got);
	while (!got)
		loop.run_once();
	EXPECT_EQ(got, 2);
	EXPECT_TRUE(rel.done());
	rel.destroy();
	EXPECT_EQ(*h.promise().value, 8);
	h.destroy();
}

tw::co::task<void> holds(tw::Loop &loop, std::shared_ptr<int>, bool *started)
{
	*started = true;
	co_await tw::co::sleep_for(loop, 1h);
}

// spawn() from a post that ~Loop runs: the anchor's arm is dropped there,
// so the task ran, suspended, and nothing ever destroyed its frame. And a
// task that has ended already: spawn() resumed it at its final suspend
// point (undefined behaviour: a crash).
TEST(Co, SpawnDropsATaskItCannotRun)
{
	auto token = std::make_shared<int>(0);
	bool started = false;
	{
		tw::Loop loop;
		loop.post([&] { tw::co::spawn(loop, holds(loop, token, &started)); });
	}
	EXPECT_FALSE(started);
	EXPECT_EQ(token.use_count(), 1); // the frame's copy went with it
	tw::Loop loop;
	tw::co::task<int> t = twice(loop, 1);
	auto drive = [](tw::co::task<int> &t) -> driver { co_await std::move(t); };
	driver d = drive(t);
	while (!t.done())
		loop.run_once();
	tw::co::spawn(loop, std::move(t));
	EXPECT_EQ(loop.size(), 0u);
}

tw::co::task<void> ends_loop_at_once(std::unique_ptr<tw::Loop> *own, int *destroyed, bool *after)
{
	struct counted {
		int *n;
		~counted() { ++*n; }
	} local{destroyed};
	own->reset();
	*after = true;
	co_return;
}

tw::co::task<void> runs_its_loop(tw::Loop &loop, std::unique_ptr<tw::Loop> *own, int *destroyed, bool *after)
{
	struct counted {
		int *n;
		~counted() { ++*n; }
	} local{destroyed};
	tw::Timer t(loop, [own] { own->reset(); });
	t.arm_in(1ms);
	loop.run(); // returns once the Loop is destroyed
	*after = true;
	co_await std::suspend_always{}; // destroyed here, with the Loop
}

// A spawned task destroys its Loop before it first suspends, in spawn(),
// itself or from a run it starts there: ~Loop destroyed the frame that
// was still running (ASan: heap-use-after-free). The Loop now closes
// when that first step returns, as from any callback.
TEST(Co, TaskDestroysItsLoopBeforeItFirstSuspends)
{
	int destroyed = 0;
	bool after = false;
	auto own = std::make_unique<tw::Loop>();
	tw::co::spawn(*own, ends_loop_at_once(&own, &destroyed, &after));
	EXPECT_FALSE(own);
	EXPECT_TRUE(after);
	EXPECT_EQ(destroyed, 1);
	destroyed = 0, after = false;
	own = std::make_unique<tw::Loop>();
	tw::co::spawn(*own, runs_its_loop(*own, &own, &destroyed, &after));
	EXPECT_FALSE(own);
	EXPECT_TRUE(after);
	EXPECT_EQ(destroyed, 1); // the frame went with the Loop, suspended
}

tw::co::task<void> ends_loop(tw::Loop &loop, std::unique_ptr<tw::Loop> *own, tw::Loop::time_point at, bool hop)
{
	co_await tw::co::sleep_until(loop, at);
	if (hop)
		co_await tw::co::resume_on(loop);
	own->reset();
}

tw::co::task<void> uses_loop(tw::Loop &loop, tw::Loop::time_point at, bool hop, int *resumed)
{
	co_await tw::co::sleep_until(loop, at);
	if (hop)
		co_await tw::co::resume_on(loop);
	++*resumed;
	co_await tw::co::sleep_for(loop, 1ms); // reads the Loop
}

tw::co::task<void> nop_uses_loop(tw::Loop &loop, int *resumed)
{
	co_await tw::co::io(loop, [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); });
	++*resumed;
	co_await tw::co::sleep_for(loop, 1ms);
}

// A coroutine destroys the Loop; another due in that iteration after it
// (a sleep of the next tick, a resume_on() posted after its own) was
// resumed and used its Loop & (ASan: heap-use-after-free in clock_now()).
TEST(Co, NothingResumesOnceTheLoopIsDestroyed)
{
	for (bool hop : {false, true}) {
		auto own = std::make_unique<tw::Loop>();
		tw::Loop &loop = *own;
		const auto at = loop.clock_now() + 2ms;
		int resumed = 0;
		tw::co::spawn(loop, uses_loop(loop, at + 1ms, hop, &resumed));
		tw::co::spawn(loop, ends_loop(loop, &own, at, hop));
		std::this_thread::sleep_for(5ms); // both due in the first iteration, in order
		const auto end = clk::now() + 5s;
		while (own && clk::now() < end)
			loop.run_once();
		EXPECT_FALSE(own);
		EXPECT_EQ(resumed, 0);
	}
	// and a CQE after the one whose handler destroys the Loop (nops end in
	// the order submitted)
	auto own = std::make_unique<tw::Loop>();
	tw::Loop &loop = *own;
	if (loop.features() & TW_LOOP_FEAT_FALLBACK)
		return;
	int resumed = 0;
	loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); }, [&own](const io_uring_cqe &) { own.reset(); });
	tw::co::spawn(loop, nop_uses_loop(loop, &resumed));
	const auto end = clk::now() + 5s;
	while (own && clk::now() < end)
		loop.run_once();
	EXPECT_FALSE(own);
	EXPECT_EQ(resumed, 0);
}

tw::co::task<void> hop(tw::Loop &loop, std::thread::id *ran_on, std::atomic<bool> *done)
{
	co_await tw::co::resume_on(loop);
	*ran_on = std::this_thread::get_id();
	done->store(true);
	loop.stop();
}

// The loop resumes the coroutine, stops and is destroyed while the other
// thread is still in its post (slow_write.h): ~Loop waits for it, which
// else wrote to the destroyed loop's closed eventfd.
TEST(Co, ResumeOnFromAnotherThread)
{
	std::optional<tw::Loop> own(std::in_place);
	tw::Loop &loop = *own;
	std::thread::id ran_on;
	std::atomic<bool> done{false};
	tw::co::task<void> t = hop(loop, &ran_on, &done);
	std::optional<driver> d; // its frame ends on the loop thread: freed there
	auto wake = loop.after(10ms, [] {}); // wakes the loop while the post's write waits
	g_wrote_closed_fd = false;
	std::thread other([&] {
		g_slow_writes = true;
		std::this_thread::sleep_for(2ms); // the loop sleeps: the post writes
		auto drive = [](tw::co::task<void> &t) -> driver { co_await std::move(t); };
		d.emplace(drive(t));
	});
	loop.run();
	own.reset();
	other.join();
	EXPECT_FALSE(g_wrote_closed_fd);
	EXPECT_TRUE(done.load());
	d.reset();
	EXPECT_EQ(ran_on, std::this_thread::get_id());
}

// Threads send coroutines to the loop (resume_on()) as fast as they can
// while the loop thread stops the loop, after 500 of them ran, and
// destroys it: each coroutine ran on the loop thread, or got ESHUTDOWN
// on its own thread, or (posted, but the loop stopped first) was never
// resumed, and is destroyed by its thread once the loop is gone.
TEST(Co, ResumeOnFromThreadsWhileTheLoopStops)
{
	struct hop_state {
		std::atomic<long> ran{0}, refused{0};
		std::thread::id loop_thread;
	} st;
	struct one { // a coroutine of the test's own type: started at once, kept
		struct promise_type {
			one get_return_object() { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
			std::suspend_never initial_suspend() noexcept { return {}; }
			std::suspend_always final_suspend() noexcept { return {}; }
			void return_void() noexcept {}
			void unhandled_exception() { std::terminate(); }
		};
		std::coroutine_handle<promise_type> h;
	};
	constexpr int threads = 3;
	std::vector<std::vector<std::coroutine_handle<>>> frames(threads);
	std::vector<std::thread> senders;
	{
		tw::Loop loop;
		st.loop_thread = std::this_thread::get_id();
		auto go = [](tw::Loop &loop, hop_state &st) -> one {
			try {
				co_await tw::co::resume_on(loop);
			} catch (const tw::error &e) {
				EXPECT_EQ(e.code().value(), ESHUTDOWN);
				st.refused.fetch_add(1);
				co_return;
			}
			EXPECT_EQ(std::this_thread::get_id(), st.loop_thread);
			if (st.ran.fetch_add(1) + 1 == 500)
				loop.stop();
		};
		for (int i = 0; i < threads; i++)
			senders.emplace_back([&, i] {
				for (int k = 0; k < 5000 && !loop.stopped(); k++)
					frames[static_cast<std::size_t>(i)].push_back(go(loop, st).h);
			});
		loop.run();
		for (auto &t : senders)
			t.join();
	}
	long total = 0, suspended = 0;
	for (auto &v : frames)
		for (std::coroutine_handle<> h : v) {
			total++;
			suspended += !h.done();
			h.destroy();
		}
	EXPECT_GE(st.ran.load(), 500);
	EXPECT_EQ(st.ran.load() + st.refused.load() + suspended, total);
}

tw::co::task<void> ends_elsewhere(tw::Loop &b, std::atomic<int> *n, bool throws)
{
	std::vector<char> heap(100); // LSan: freed wherever it ends
	co_await tw::co::resume_on(b);
	n->fetch_add(1);
	if (throws)
		throw std::runtime_error("on b");
}

// A task spawned on Loop a that goes to Loop b's thread (resume_on) and
// ends there: its end (the anchor's twheel_loop_del() on a, the control
// block's count, a's exception handler) ran on b's thread, racing with
// a's (TSan: data races in retain(), release() and twheel_del()). It is
// posted to a's thread, where the frame goes and the exception is handled.
TEST(Co, SpawnedTaskEndingOnAnotherLoopsThreadEndsOnItsOwn)
{
	tw::Loop a, b;
	std::atomic<int> n{0};
	int caught = 0;
	bool handled_elsewhere = false;
	std::thread::id a_thread;
	a.on_exception([&](std::exception_ptr) {
		++caught;
		handled_elsewhere |= std::this_thread::get_id() != a_thread;
	});
	auto wa = a.every(1ms, [] {});
	auto wb = b.every(1ms, [] {});
	std::thread tb([&] { b.run(); });
	std::thread ta([&] {
		a_thread = std::this_thread::get_id();
		for (int i = 0; i < 200; i++)
			a.post([&, i] { tw::co::spawn(a, ends_elsewhere(b, &n, i % 2)); });
		a.run();
	});
	const auto end = clk::now() + 10s;
	std::atomic<bool> all{false};
	while (!all.load() && clk::now() < end) {
		std::this_thread::sleep_for(1ms);
		a.post([&] { all.store(n.load() == 200 && a.size() == 1); }); // the wake timer alone left
	}
	a.post([&] { wa.cancel(), a.stop(); });
	b.post([&] { wb.cancel(), b.stop(); });
	ta.join();
	tb.join();
	EXPECT_TRUE(all.load());
	EXPECT_EQ(caught, 100);
	EXPECT_FALSE(handled_elsewhere);
}

// (a parameter: destroyed with the frame, not at the end of the body)
tw::co::task<void> ends_after_a_stopped(tw::Loop &a, tw::Loop &b, std::shared_ptr<int>, bool throws)
{
	co_await tw::co::resume_on(b);
	while (!a.stopped())
		co_await tw::co::sleep_for(b, 1ms);
	b.stop();
	if (throws)
		throw std::runtime_error("on b");
}

// The same, its Loop a stopped (not yet destroyed) before it ends on b:
// the post of its end was refused, and it ended on b's thread (the frame
// freed, a's handler called, the anchor unlinked from a's wheel there:
// TSan data races with a's last run). ~a ends it, on a's side.
TEST(Co, SpawnedTaskEndingOnAnotherThreadAfterItsLoopStoppedEndsInItsDestructor)
{
	for (bool throws : {false, true}) {
		auto token = std::make_shared<int>(0);
		int caught = 0;
		std::thread::id handled_on;
		{
			tw::Loop a, b;
			a.on_exception([&](std::exception_ptr) {
				++caught;
				handled_on = std::this_thread::get_id();
			});
			std::thread tb([&] { b.run(); });
			std::thread ta([&] {
				a.post([&] { tw::co::spawn(a, ends_after_a_stopped(a, b, token, throws)); });
				a.post([&] { a.stop(); });
				a.run();
			});
			ta.join();
			tb.join(); // the task has ended on b
			EXPECT_EQ(token.use_count(), 2); // its frame is left for ~a
			EXPECT_EQ(caught, 0);
			EXPECT_EQ(a.size(), 1u); // its anchor
		}
		EXPECT_EQ(token.use_count(), 1);
		EXPECT_EQ(caught, throws ? 1 : 0);
		EXPECT_EQ(handled_on, throws ? std::this_thread::get_id() : std::thread::id());
	}
}

tw::co::task<void> ends_on(tw::Loop &b, std::atomic<int> *n)
{
	co_await tw::co::resume_on(b);
	n->fetch_add(1);
}

// Tasks spawned on Loop a by the thread that made it, which then hands a
// to a thread of its own, while they end on b's thread: the end read which
// thread last ran a as that thread's run() wrote it (TSan: a data race).
TEST(Co, LoopHandedToItsThreadWhileItsTasksEndElsewhere)
{
	tw::Loop a, b;
	std::atomic<int> n{0};
	std::atomic<bool> empty{false};
	std::thread tb([&] { b.run(); });
	for (int i = 0; i < 50; i++)
		tw::co::spawn(a, ends_on(b, &n));
	std::thread ta([&] { a.run(); });
	const auto end = clk::now() + 10s;
	while (!empty.load() && clk::now() < end) {
		std::this_thread::sleep_for(1ms);
		a.post([&] { empty.store(n.load() == 50 && a.size() == 0); });
	}
	a.stop(), b.stop();
	ta.join(), tb.join();
	EXPECT_TRUE(empty.load());
}

tw::co::task<void> hops_to(tw::Loop &b, std::shared_ptr<int>)
{
	co_await tw::co::resume_on(b);
	b.stop();
}

// The same, Loop a run through its C loop (native_handle()) by another
// thread than the one that spawned on it: the posted end, run there, took
// that thread for a stranger and posted itself again, each iteration,
// the frame never freed (and the loop never slept).
TEST(Co, SpawnedTaskEndingElsewhereOnALoopRunThroughItsCHandle)
{
	tw::Loop a, b;
	auto token = std::make_shared<int>(0);
	std::thread tb([&] { b.run(); });
	tw::co::spawn(a, hops_to(b, token)); // this thread last spawned on a
	tb.join();                           // the task ended on b's thread
	std::thread x([&] {
		for (int i = 0; i < 20 && token.use_count() > 1; i++)
			twheel_loop_run_once(a.native_handle(), TW_LOOP_NOWAIT);
	});
	x.join();
	EXPECT_EQ(token.use_count(), 1);
	EXPECT_EQ(a.size(), 0u);
}

tw::co::task<void> yielder(tw::Loop &loop, int *destroyed, int *resumed)
{
	counted c{destroyed};
	co_await tw::co::resume_on(loop); // from the loop thread: a yield
	++*resumed;
}

// A frame destroyed while its resume_on() post is queued: the loop ran the
// work item in the freed frame (ASan: heap-use-after-free), in an
// iteration and in ~Loop alike.
TEST(Co, TaskDestroyedWhileWaitingOnResumeOn)
{
	int destroyed = 0, resumed = 0;
	auto drive = [](tw::co::task<void> &t) -> driver { co_await std::move(t); };
	for (bool in_dtor : {false, true}) {
		std::optional<tw::Loop> loop(std::in_place);
		auto t = std::make_unique<tw::co::task<void>>(yielder(*loop, &destroyed, &resumed));
		driver d = drive(*t);
		t.reset();
		if (in_dtor)
			loop.reset();
		else
			loop->run_once(false);
	}
	EXPECT_EQ(destroyed, 2);
	EXPECT_EQ(resumed, 0);
}

// resume_on() a moved-from Loop throws as every other call on it does: it
// said "twheel_loop_post() failed" (its -EINVAL for a null loop).
TEST(Co, ResumeOnAMovedFromLoopThrowsMovedFrom)
{
	tw::Loop a;
	tw::Loop b(std::move(a));
	std::string what;
	auto drive = [](tw::Loop &l, std::string *w) -> driver {
		try {
			co_await tw::co::resume_on(l);
		} catch (const tw::error &x) {
			*w = x.what();
		}
	};
	driver d = drive(a, &what);
	EXPECT_EQ(what, "tw: the owner was moved from");
}

template <class A>
tw::co::task<void> awaits_shared(A *a, int *resumed, std::string *what)
{
	try {
		co_await *a;
		++*resumed;
	} catch (const tw::error &e) {
		*what = std::to_string(e.code().value()) + " " + e.what();
	}
}

// A sleep or an io kept in a variable, awaited by a second coroutine while
// a first waits on it: the second took it over and the first was never
// resumed (its anchor left in size()). The second is refused.
TEST(Co, AwaitableAwaitedByTwoCoroutinesAtOnce)
{
	tw::Loop loop;
	const std::string again = std::to_string(EINVAL) + " tw: the awaitable is awaited already";
	auto s = tw::co::sleep_for(loop, 2ms);
	auto op = tw::co::io(loop, [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); });
	int resumed[2] = {0, 0};
	std::string what[4];
	tw::co::spawn(loop, awaits_shared(&s, &resumed[0], &what[0]));
	tw::co::spawn(loop, awaits_shared(&s, &resumed[0], &what[1]));
	tw::co::spawn(loop, awaits_shared(&op, &resumed[1], &what[2]));
	tw::co::spawn(loop, awaits_shared(&op, &resumed[1], &what[3]));
	EXPECT_EQ(what[1], again);
	const bool uring = !(loop.features() & TW_LOOP_FEAT_FALLBACK);
	EXPECT_EQ(what[3], uring ? again : ""); // fallback: the first io ended at once
	auto wake = loop.every(1ms, [] {}); // a first coroutine never resumed ends nothing
	const auto end = clk::now() + 1s;
	while ((resumed[0] < 1 || resumed[1] < (uring ? 1 : 2)) && clk::now() < end)
		loop.run_once();
	wake.cancel();
	EXPECT_EQ(resumed[0], 1);
	EXPECT_EQ(resumed[1], uring ? 1 : 2);
	EXPECT_EQ(what[0] + what[2], "");
	EXPECT_EQ(loop.size(), 0u);
}

// sleep_for(), sleep_until() and io() on a moved-from Loop throw as every
// call on it does (docs/cpp.md), from the call itself.
TEST(Co, AwaitablesOfAMovedFromLoopThrowEINVAL)
{
	tw::Loop a;
	tw::Loop b(std::move(a));
	std::vector<std::string> what;
	auto drive = [](tw::Loop &l, std::vector<std::string> *w) -> driver {
		for (int i = 0; i < 3; i++) {
			try {
				if (i == 0)
					co_await tw::co::sleep_for(l, 1ms);
				else if (i == 1)
					co_await tw::co::sleep_until(l, l.now());
				else
					co_await tw::co::io(l, [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); });
			} catch (const tw::error &x) {
				w->push_back(std::to_string(x.code().value()) + " " + x.what());
			}
		}
	};
	driver d = drive(a, &what);
	const std::string moved = std::to_string(EINVAL) + " tw: the owner was moved from";
	EXPECT_EQ(what, (std::vector<std::string>{moved, moved, moved}));
}

// An empty prep: a null function pointer was called (SIGSEGV), an empty
// std::function threw std::bad_function_call. Both throw tw::error EINVAL,
// as submit() does, nothing submitted.
TEST(Co, IoWithAnEmptyPrepThrowsEINVAL)
{
	tw::Loop loop;
	std::vector<std::string> what;
	auto drive = [](tw::Loop &l, std::vector<std::string> *w) -> driver {
		for (int i = 0; i < 2; i++) {
			try {
				if (i == 0)
					co_await tw::co::io(l, static_cast<void (*)(io_uring_sqe &)>(nullptr));
				else
					co_await tw::co::io(l, std::function<void(io_uring_sqe &)>(), l.clock_now() + 1h);
			} catch (const tw::error &x) {
				w->push_back(std::to_string(x.code().value()) + " " + x.what());
			} catch (const std::exception &x) {
				w->push_back(x.what());
			}
		}
	};
	driver d = drive(loop, &what);
	const std::string empty = std::to_string(EINVAL) + " tw: empty callable";
	EXPECT_EQ(what, (std::vector<std::string>{empty, empty}));
	EXPECT_EQ(loop.size(), 0u);
}

// A prep whose move throws: the co_await throws it, and the io keeps no
// reference to the loop's control block (LeakSanitizer: the io took one
// before moving the prep, and never gave it back).
struct prep_throwing_move {
	prep_throwing_move() = default;
	prep_throwing_move(const prep_throwing_move &) = default;
	prep_throwing_move(prep_throwing_move &&) { throw std::runtime_error("prep move"); }
	void operator()(io_uring_sqe &sqe) const { io_uring_prep_nop(&sqe); }
};

TEST(Co, IoWhosePrepMoveThrowsLeaksNothing)
{
	tw::Loop loop;
	std::string what;
	auto drive = [](tw::Loop &l, std::string *w) -> driver {
		const prep_throwing_move prep;
		try {
			co_await tw::co::io(l, prep);
		} catch (const std::runtime_error &x) {
			*w = x.what();
		}
	};
	driver d = drive(loop, &what);
	EXPECT_EQ(what, "prep move");
}

// Fallback mode (test cpp-co-no-uring runs this program where io_uring is
// refused): io() ends with -EOPNOTSUPP, with or without a deadline, its
// prep never called; sleeps, resume_on() and spawn() work as in io_uring mode.
TEST(Co, FallbackModeIoEndsWithEOPNOTSUPP)
{
	tw::Loop loop;
	if (!(loop.features() & TW_LOOP_FEAT_FALLBACK))
		GTEST_SKIP() << "io_uring mode";
	int res[2] = {1000, 1000}, preps = 0, steps = 0;
	auto go = [](tw::Loop &l, int *res, int *preps, int *steps) -> tw::co::task<void> {
		auto prep = [preps](io_uring_sqe &) { ++*preps; };
		res[0] = co_await tw::co::io(l, prep);
		res[1] = co_await tw::co::io(l, prep, l.clock_now() + 1h);
		co_await tw::co::sleep_for(l, 1ms);
		++*steps;
		co_await tw::co::resume_on(l);
		++*steps;
		l.stop();
	};
	tw::co::spawn(loop, go(loop, res, &preps, &steps));
	EXPECT_EQ(res[0], -EOPNOTSUPP);
	EXPECT_EQ(res[1], -EOPNOTSUPP);
	EXPECT_EQ(preps, 0);
	const auto end = clk::now() + 5s;
	while (!loop.stopped() && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(steps, 2);
	EXPECT_EQ(loop.size(), 0u);
}

struct sockpair {
	int fd[2];
	sockpair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
	~sockpair()
	{
		close(fd[0]);
		close(fd[1]);
	}
};

bool have_uring(tw::Loop &loop)
{
	return !(loop.features() & TW_LOOP_FEAT_FALLBACK);
}

tw::co::task<int> recv_by(tw::Loop &loop, int fd, char *buf, tw::Loop::time_point dl, clk::time_point *at)
{
	const int r = co_await tw::co::io(
		loop, [=](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, fd, buf, 64, 0); }, dl);
	*at = loop.clock_now();
	co_return r;
}

tw::co::task<void> silent(tw::Loop &loop, int fd, std::chrono::milliseconds d, bool *early, int *timeouts)
{
	char buf[64];
	clk::time_point at;
	const auto dl = loop.clock_now() + d;
	const int r = co_await recv_by(loop, fd, buf, dl, &at);
	if (r == -ETIME)
		++*timeouts;
	if (at < dl)
		*early = true;
}

class CoIo : public ::testing::TestWithParam<unsigned> {};

TEST_P(CoIo, SilentRecvTimesOutNeverEarly)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	std::vector<std::unique_ptr<sockpair>> socks;
	bool early = false;
	int timeouts = 0;
	for (int i = 0; i < 100; i++) {
		socks.push_back(std::make_unique<sockpair>());
		tw::co::spawn(loop, silent(loop, socks.back()->fd[0], std::chrono::milliseconds(1 + i % 29), &early,
					   &timeouts));
	}
	const auto end = clk::now() + 5s;
	while (timeouts < 100 && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(timeouts, 100);
	EXPECT_FALSE(early);
	EXPECT_EQ(loop.size(), 0u);
}

using dsec = std::chrono::duration<double>;

tw::co::task<void> silent_until(tw::Loop &loop, int fd, std::chrono::time_point<clk, dsec> dl, bool *early,
				int *timeouts)
{
	char buf[64], *p = buf;
	const int r = co_await tw::co::io(loop, [=](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, fd, p, 64, 0); }, dl);
	if (r == -ETIME)
		++*timeouts;
	if (loop.clock_now() < dl)
		*early = true;
}

// A deadline of any duration of the loop clock (double seconds, whole ms),
// rounded up to whole ns as sleep_until()'s: never early. io() and
// submit() took only the loop's own time_point: with one of double
// seconds neither compiled (cpp-discarded-awaitable-compiles holds that
// too, and cpp-co-sleep-until-other-clock the message for another clock).
TEST_P(CoIo, DeadlineOfAnyDurationOfTheLoopClockNeverEarly)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	sockpair a, b, c;
	bool early = false;
	int timeouts = 0;
	tw::co::spawn(loop, silent_until(loop, a.fd[0], std::chrono::time_point<clk, dsec>(loop.clock_now()) + dsec(0.0015),
					 &early, &timeouts));
	char buf[2][64];
	const auto ms = std::chrono::time_point_cast<std::chrono::milliseconds>(loop.clock_now()) + 2ms;
	loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, b.fd[0], buf[0], 64, 0); }, ms,
		    [&](const io_uring_cqe &cqe) {
			    timeouts += cqe.res == -ETIME;
			    early |= loop.clock_now() < ms;
		    });
	const auto ds = std::chrono::time_point<clk, dsec>(loop.clock_now()) + dsec(0.0025);
	loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, c.fd[0], buf[1], 64, 0); }, ds,
		    [&](const io_uring_cqe &cqe) {
			    timeouts += cqe.res == -ETIME;
			    early |= loop.clock_now() < ds;
		    });
	const auto end = clk::now() + 5s;
	while (timeouts < 3 && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(timeouts, 3);
	EXPECT_FALSE(early);
	EXPECT_EQ(loop.size(), 0u);
}

tw::co::task<void> echo_once(tw::Loop &loop, int fd, int *res, std::string *got)
{
	char buf[64];
	clk::time_point at;
	*res = co_await recv_by(loop, fd, buf, loop.clock_now() + 10s, &at);
	if (*res > 0)
		got->assign(buf, static_cast<std::size_t>(*res));
}

TEST_P(CoIo, DataBeforeTheDeadline)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	sockpair sp;
	int res = 1000;
	std::string got;
	tw::co::spawn(loop, echo_once(loop, sp.fd[0], &res, &got));
	loop.run_once(false);
	ASSERT_EQ(write(sp.fd[1], "hi", 2), 2);
	const auto end = clk::now() + 5s;
	while (res == 1000 && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(res, 2);
	EXPECT_EQ(got, "hi");
	EXPECT_EQ(loop.size(), 0u); // no deadline timer left behind
}

tw::co::task<void> reader_forever(tw::Loop &loop, int fd, int *destroyed, int *resumed, bool deadline)
{
	counted c{destroyed};
	char buf[64];
	const auto dl = deadline ? loop.clock_now() + 1h : tw::Loop::time_point::max();
	co_await tw::co::io(loop, [&](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, fd, buf, sizeof buf, 0); }, dl);
	++*resumed;
}

TEST_P(CoIo, FrameDestroyedWithItsRequestInFlight)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	for (bool deadline : {false, true}) {
		sockpair sp;
		int destroyed = 0, resumed = 0;
		auto t = std::make_unique<tw::co::task<void>>(reader_forever(loop, sp.fd[0], &destroyed, &resumed, deadline));
		auto drive = [](tw::co::task<void> &t) -> driver { co_await std::move(t); };
		driver d = drive(*t);
		loop.run_once(false); // submitted
		t.reset();            // the frame goes; the request is cancelled
		EXPECT_EQ(destroyed, 1);
		for (int i = 0; i < 20; i++)
			loop.run_once(false);
		// the buffer was in the frame: data now must not land there (ASan)
		ASSERT_EQ(write(sp.fd[1], "late", 4), 4);
		for (int i = 0; i < 5; i++)
			loop.run_once(false);
		EXPECT_EQ(resumed, 0);
		char b[8];
		EXPECT_EQ(recv(sp.fd[0], b, sizeof b, MSG_DONTWAIT), 4); // the cancelled recv took nothing
	}
}

tw::co::task<int> recv_into(tw::Loop &loop, int fd, char *buf, bool deadline)
{
	co_return co_await tw::co::io(loop, [=](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, fd, buf, 64, 0); },
				      deadline ? loop.clock_now() + 1h : tw::Loop::time_point::max());
}

// Data that comes right after the frame went, before the loop's next
// iteration: the request, not yet submitted (its SQE went with the cancel,
// and took the data) or in flight on a ring that runs task work at every
// system call's return (the data landed before the cancel was submitted),
// wrote into the buffer after the destructor and left the next reader
// nothing. The buffer may be the frame's (docs/cpp.md's example).
TEST_P(CoIo, DataRightAfterTheFrameWentIsLeftForTheNextReader)
{
	for (unsigned mode = 0; mode < 8; mode++) { // deadline, submitted, plain ring
		tw::loop_options o;
		o.flags = GetParam() | (mode & 4 ? unsigned{TW_LOOP_NO_DEFER_TASKRUN} : 0u);
		tw::Loop loop(o);
		if (!have_uring(loop))
			GTEST_SKIP() << "no io_uring";
		sockpair sp;
		char buf[64] = "untouched";
		auto t = std::make_unique<tw::co::task<int>>(recv_into(loop, sp.fd[0], buf, mode & 1));
		auto drive = [](tw::co::task<int> &t) -> driver { co_await std::move(t); };
		driver d = drive(*t);
		if (mode & 2)
			loop.run_once(false);
		t.reset();
		ASSERT_EQ(write(sp.fd[1], "late", 4), 4);
		for (int i = 0; i < 3; i++)
			loop.run_once(false);
		EXPECT_STREQ(buf, "untouched") << "mode " << mode;
		char b[8];
		EXPECT_EQ(recv(sp.fd[0], b, sizeof b, MSG_DONTWAIT), 4) << "mode " << mode;
		EXPECT_EQ(loop.size(), 0u);
	}
}

TEST_P(CoIo, LoopDestroyedWithRequestsInFlight)
{
	int destroyed = 0, resumed = 0;
	std::vector<std::unique_ptr<sockpair>> socks;
	{
		tw::loop_options o;
		o.flags = GetParam();
		tw::Loop loop(o);
		if (!have_uring(loop))
			GTEST_SKIP() << "no io_uring";
		for (int i = 0; i < 40; i++) {
			socks.push_back(std::make_unique<sockpair>());
			tw::co::spawn(loop, reader_forever(loop, socks.back()->fd[0], &destroyed, &resumed, i % 2));
		}
		loop.run_once(false);
		// and one orphan: a frame destroyed, its cancel not yet reaped
		sockpair sp;
		auto t = std::make_unique<tw::co::task<void>>(reader_forever(loop, sp.fd[0], &destroyed, &resumed, true));
		auto drive = [](tw::co::task<void> &t) -> driver { co_await std::move(t); };
		driver d = drive(*t);
		loop.run_once(false);
		t.reset();
	}
	EXPECT_EQ(destroyed, 41); // every frame freed (LSan: nothing leaked)
	EXPECT_EQ(resumed, 0);
}

tw::co::task<void> read_after_stop(tw::Loop &loop, int fd, bool deadline, int *res)
{
	char buf[8];
	loop.stop();
	const auto dl = deadline ? loop.clock_now() + 1h : tw::Loop::time_point::max();
	*res = co_await tw::co::io(loop, [&](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, fd, buf, sizeof buf, 0); }, dl);
}

// A request on a stopped loop is refused: its SQE would never be
// submitted. It was queued, and the coroutine hung until ~Loop (but for a
// deadline on the loop's own timer, which refused it), and submit()
// returned a key whose handler would never run.
TEST_P(CoIo, RequestOnAStoppedLoopIsRefused)
{
	for (bool deadline : {false, true}) {
		tw::loop_options o;
		o.flags = GetParam();
		tw::Loop loop(o);
		if (!have_uring(loop))
			GTEST_SKIP() << "no io_uring";
		sockpair sp;
		int res = 1000;
		tw::co::spawn(loop, read_after_stop(loop, sp.fd[0], deadline, &res));
		EXPECT_EQ(res, -ESHUTDOWN);
		try {
			loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); }, [](const io_uring_cqe &) {});
			ADD_FAILURE() << "submit() on a stopped loop";
		} catch (const tw::error &e) {
			EXPECT_EQ(e.code().value(), ESHUTDOWN);
			EXPECT_STREQ(e.what(), "tw: the event loop is stopped or gone");
		}
	}
}

tw::co::task<void> read_without_memory(tw::Loop &loop, int fd, bool deadline, int *res)
{
	char b[8];
	auto prep = [&](io_uring_sqe &sqe) { io_uring_prep_recv(&sqe, fd, b, sizeof b, 0); };
	g_fail_allocs = true; // the frame is made: the request's record is the next allocation
	res[0] = deadline ? co_await tw::co::io(loop, prep, loop.clock_now() + 1h) : co_await tw::co::io(loop, prep);
	g_fail_allocs = false;
	res[1] = deadline ? co_await tw::co::io(loop, prep, loop.clock_now() + 1h) : co_await tw::co::io(loop, prep);
}

// A request whose record cannot be allocated ends with -ENOMEM, as the
// other errors do, and nothing is submitted; the next one works. It threw
// std::bad_alloc out of the co_await.
TEST_P(CoIo, RequestWithoutMemoryEndsWithENOMEM)
{
	for (bool deadline : {false, true}) {
		tw::loop_options o;
		o.flags = GetParam();
		tw::Loop loop(o);
		if (!have_uring(loop))
			GTEST_SKIP() << "no io_uring";
		sockpair sp;
		int res[2] = {1000, 1000};
		tw::co::spawn(loop, read_without_memory(loop, sp.fd[0], deadline, res));
		EXPECT_EQ(res[0], -ENOMEM);
		EXPECT_EQ(res[1], 1000); // in flight
		ASSERT_EQ(::write(sp.fd[1], "x", 1), 1);
		for (int i = 0; i < 10 && res[1] == 1000; i++)
			loop.run_once();
		EXPECT_EQ(res[1], 1);
	}
}

tw::co::task<void> sets_user_data(tw::Loop &loop, int *token, int *res)
{
	auto prep = [token](io_uring_sqe &sqe) {
		io_uring_prep_nop(&sqe);
		io_uring_sqe_set_data(&sqe, token); // as io_uring programs do; the loop's own
	};
	res[0] = co_await tw::co::io(loop, prep);
	res[1] = co_await tw::co::io(loop, prep, loop.clock_now() + 1h);
	res[2] = co_await tw::co::io(loop, [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); });
}

// A prep that sets user_data, which leads the loop back to the request's
// record: the loop took the program's pointer for its record when the CQE
// came (ASan: stack-buffer-overflow in the C loop, or a crash), and the
// coroutine never resumed. It is refused (EINVAL), the SQE a no-op.
TEST_P(CoIo, PrepThatSetsUserDataIsRefused)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	int token = 0, res[3] = {1000, 1000, 1000};
	bool called = false;
	auto prep = [&token](io_uring_sqe &sqe) {
		io_uring_prep_nop(&sqe);
		io_uring_sqe_set_data(&sqe, &token);
	};
	auto h = [&called](const io_uring_cqe &) { called = true; };
	for (bool deadline : {false, true}) {
		try {
			deadline ? loop.submit(prep, loop.clock_now() + 1h, h) : loop.submit(prep, h);
			ADD_FAILURE() << "a prep that set user_data was accepted";
		} catch (const tw::error &e) {
			EXPECT_EQ(e.code().value(), EINVAL);
		}
	}
	tw::co::spawn(loop, sets_user_data(loop, &token, res));
	EXPECT_EQ(res[0], -EINVAL);
	EXPECT_EQ(res[1], -EINVAL);
	for (int i = 0; i < 10 && res[2] == 1000; i++)
		loop.run_once(false);
	EXPECT_EQ(res[2], 0);
	EXPECT_FALSE(called);
	EXPECT_EQ(token, 0);
	EXPECT_EQ(loop.size(), 0u);
}

tw::co::task<void> nop_into(tw::Loop &loop, int *res)
{
	*res = co_await tw::co::io(loop, [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); });
}

tw::co::task<void> starts_one_in_prep(tw::Loop &loop, int *res, int *inner)
{
	*res = co_await tw::co::io(
		loop,
		[&](io_uring_sqe &sqe) {
			io_uring_prep_nop(&sqe);
			tw::co::spawn(loop, nop_into(loop, inner)); // an SQE of its own, after this one
		},
		loop.clock_now() + 1h);
}

// A prep that starts a request of its own, with a deadline: the request's
// SQE is no longer the last, which twheel_loop_io_deadline() needs. -EINVAL
// (submit(): tw::error EINVAL), as documented now; the other request runs.
TEST_P(CoIo, PrepThatStartsARequestGetsNoDeadline)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	int res = 1000, inner = 1000, called = 0;
	tw::co::spawn(loop, starts_one_in_prep(loop, &res, &inner));
	EXPECT_EQ(res, -EINVAL);
	try {
		loop.submit([&](io_uring_sqe &sqe) {
			io_uring_prep_nop(&sqe);
			loop.submit([](io_uring_sqe &s) { io_uring_prep_nop(&s); }, [&](const io_uring_cqe &) { ++called; });
		}, loop.clock_now() + 1h, [](const io_uring_cqe &) { ADD_FAILURE() << "handler of a refused request"; });
		ADD_FAILURE() << "submit() with a deadline and a request started in prep";
	} catch (const tw::error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
	}
	for (int i = 0; i < 10 && (inner == 1000 || !called); i++)
		loop.run_once(false);
	EXPECT_EQ(inner, 0);
	EXPECT_EQ(called, 1);
	EXPECT_EQ(loop.size(), 0u);
}

tw::co::task<void> poll_twice(tw::Loop &loop, int fd, int *res)
{
	*res = co_await tw::co::io(loop, [&](io_uring_sqe &sqe) { io_uring_prep_poll_multishot(&sqe, fd, POLLIN); });
}

// A multishot request: its second CQE called the handler of the io that
// went with the first (ASan: heap-use-after-free) and resumed the frame.
TEST_P(CoIo, MultishotRequestResumesWithItsFirstCqe)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	sockpair sp;
	int res = 1000;
	tw::co::spawn(loop, poll_twice(loop, sp.fd[0], &res));
	char b[8];
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(write(sp.fd[1], "x", 1), 1);
		for (int k = 0; k < 5; k++)
			loop.run_once(false);
		EXPECT_EQ(read(sp.fd[0], b, sizeof b), 1);
	}
	if (res == -EINVAL)
		GTEST_SKIP() << "no multishot poll here (Linux 5.13 has it)";
	EXPECT_EQ(res, POLLIN);
}

// A multishot request awaited through a named io that outlives the
// co_await: its later CQEs resumed the frame where it waited on something
// else (here a recv on another socket, which the test alone ends: a sleep
// there would end by itself in a stall of the test, and the frame would
// go on to its second request, which takes the CQEs). Awaited again, the
// io is a new request.
tw::co::task<void> poll_then_recv(tw::Loop &loop, int fd, int other, int *res, int *woke)
{
	auto op = tw::co::io(loop, [fd](io_uring_sqe &sqe) { io_uring_prep_poll_multishot(&sqe, fd, POLLIN); });
	*res = co_await op;
	char b[8];
	*woke = co_await tw::co::io(loop, [other, &b](io_uring_sqe &sqe) {
		io_uring_prep_recv(&sqe, other, b, sizeof b, 0);
	}) == 1 ? 1 : -1;
	*res = co_await op; // a new request
}

TEST_P(CoIo, LaterCqesOfANamedMultishotIoResumeNothing)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	sockpair sp, wake;
	int res = 1000, woke = 0;
	tw::co::spawn(loop, poll_then_recv(loop, sp.fd[0], wake.fd[0], &res, &woke));
	char b[8];
	ASSERT_EQ(write(sp.fd[1], "x", 1), 1);
	for (int k = 0; k < 5 && res == 1000; k++)
		loop.run_once(false);
	if (res == -EINVAL)
		GTEST_SKIP() << "no multishot poll here (Linux 5.13 has it)";
	ASSERT_EQ(res, POLLIN);
	ASSERT_EQ(read(sp.fd[0], b, sizeof b), 1);
	for (int i = 0; i < 3; i++) { // more CQEs of the same poll, during the recv
		ASSERT_EQ(write(sp.fd[1], "y", 1), 1);
		for (int k = 0; k < 5; k++)
			loop.run_once(false);
		ASSERT_EQ(read(sp.fd[0], b, sizeof b), 1);
		EXPECT_EQ(woke, 0) << "resumed by a CQE while waiting on the recv";
	}
	ASSERT_EQ(write(wake.fd[1], "w", 1), 1);
	const auto end = clk::now() + 5s;
	while (!woke && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(woke, 1); // the recv's own CQE, its byte
	res = 1000;
	ASSERT_EQ(write(sp.fd[1], "z", 1), 1);
	for (int k = 0; k < 5 && res == 1000; k++)
		loop.run_once(false);
	EXPECT_EQ(res, POLLIN); // the task has ended: its io cancelled the rest
	EXPECT_EQ(loop.size(), 0u);
}

tw::co::task<void> racer(tw::Loop &loop, int fd, tw::Loop::time_point dl, int *res, clk::time_point *at)
{
	char buf[64];
	*res = co_await recv_by(loop, fd, buf, dl, at);
}

TEST_P(CoIo, DataRacingTheDeadline)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	int data = 0, timeouts = 0;
	for (int i = 0; i < 100; i++) {
		sockpair sp;
		int res = 1000;
		clk::time_point at;
		const auto dl = loop.clock_now() + 2ms;
		tw::co::spawn(loop, racer(loop, sp.fd[0], dl, &res, &at));
		auto w = loop.at(dl - 1ms + std::chrono::microseconds(i * 20),
				 [fd = sp.fd[1]] { EXPECT_EQ(write(fd, "r", 1), 1); });
		const auto end = clk::now() + 5s;
		while ((res == 1000 || w.pending()) && clk::now() < end)
			loop.run_once();
		if (res == 1) {
			data++;
		} else {
			EXPECT_EQ(res, -ETIME);
			EXPECT_GE(at, dl);
			char b;
			EXPECT_EQ(read(sp.fd[0], &b, 1), 1); // the byte was not lost
			timeouts++;
		}
	}
	EXPECT_EQ(data + timeouts, 100);
	std::printf("race: %d data, %d timeouts\n", data, timeouts);
}

// Requests one after another, with deadlines and without: once the loop
// has a request record (and its deadline), nothing is allocated.
tw::co::task<void> nops(tw::Loop &loop, int n, long *allocs, int *ok)
{
	for (int i = 0; i < n; i++) {
		if (i == 2)
			*allocs = g_allocs.load();
		const auto dl = i % 2 ? loop.clock_now() + 1h : tw::Loop::time_point::max();
		*ok += co_await tw::co::io(loop, [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); }, dl) == 0;
	}
	*allocs = g_allocs.load() - *allocs;
	loop.stop();
}

TEST_P(CoIo, NothingAllocatedInTheSteadyState)
{
	tw::loop_options o;
	o.flags = GetParam();
	tw::Loop loop(o);
	if (!have_uring(loop))
		GTEST_SKIP() << "no io_uring";
	long allocs = -1;
	int ok = 0;
	tw::co::spawn(loop, nops(loop, 40, &allocs, &ok));
	const auto end = clk::now() + 5s;
	while (!loop.stopped() && clk::now() < end)
		loop.run_once();
	EXPECT_EQ(ok, 40);
	EXPECT_EQ(allocs, 0);
	EXPECT_EQ(loop.size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, CoIo, ::testing::Values(0u, unsigned{TW_LOOP_NO_LINK_TIMEOUT}));

} // namespace
