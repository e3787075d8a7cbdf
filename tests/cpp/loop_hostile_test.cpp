// SPDX-License-Identifier: MIT
// GoogleTest suite for what a hostile caller does to tw::Loop and
// tw::Timer<tw::Loop>: empty callables, callables whose copy throws, a Loop
// destroyed from each kind of its callbacks, handles destroyed or moved
// from their own callbacks. Run under ASan+UBSan too: most of these failed
// there as use-after-free or leaks before the fixes.
#include <twheel/loop.hpp>

#include <gtest/gtest.h>

#include "caught.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <functional>
#include <map>
#include <memory>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using tw::Loop;
using LoopTimer = tw::Timer<tw::Loop>;

namespace {

// Open descriptors of this process.
int count_fds()
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0;
	while (const dirent *e = readdir(d))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; // the DIR's own
}

bool has_ring(const Loop &loop)
{
	return !(twheel_loop_features(loop.native_handle()) & TW_LOOP_FEAT_FALLBACK);
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

// What a destroyed Loop must have finished: the cancellation callback of a
// pending timer run once, a queued post run, an I/O handler in flight
// destroyed, every descriptor of the loop closed.
struct Doomed {
	int fds_before = -1;
	int pipe_fds[2] = {-1, -1};
	int cancelled = 0, posted = 0;
	std::shared_ptr<int> io_alive = std::make_shared<int>(0);
	std::unique_ptr<Loop> loop;
	tw::Timer<tw::Loop> pending;

	Doomed()
	{
		EXPECT_EQ(pipe(pipe_fds), 0);
		fds_before = count_fds();
		loop = std::make_unique<Loop>();
		pending = loop->after(1h, [] { ADD_FAILURE() << "fired"; });
		pending.on_cancel([this] { cancelled++; });
		if (has_ring(*loop))
			loop->submit([this](io_uring_sqe &sqe) { io_uring_prep_poll_add(&sqe, pipe_fds[0], POLLIN); },
				     [a = io_alive](const io_uring_cqe &) { ADD_FAILURE() << "never completes"; });
	}
	~Doomed()
	{
		close(pipe_fds[0]);
		close(pipe_fds[1]);
	}
	// From a callback: queue a post, then destroy the loop.
	void destroy_from_callback()
	{
		loop->post([this] { posted++; });
		loop.reset();
	}
	void check()
	{
		EXPECT_EQ(loop, nullptr);
		EXPECT_EQ(cancelled, 1);
		EXPECT_EQ(posted, 1);
		EXPECT_EQ(io_alive.use_count(), 1);
		EXPECT_EQ(count_fds(), fds_before);
		EXPECT_FALSE(static_cast<bool>(pending));
	}
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
	void (*null_timer_fn)(tw::Timer<tw::Loop> &) = nullptr;
	std::function<void()> empty;
	EXPECT_THROW(loop.post(null_fn), tw::error);
	EXPECT_THROW(loop.post(empty), tw::error);
	EXPECT_THROW((void)loop.after(1ms, null_fn), tw::error);
	EXPECT_THROW((void)loop.at(loop.now(), empty), tw::error);
	EXPECT_THROW((void)loop.every(1ms, null_timer_fn), tw::error);
	EXPECT_THROW((void)tw::Timer(loop, std::function<void(tw::Timer<tw::Loop> &)>()), tw::error);
	if (has_ring(loop)) {
		void (*null_prep)(io_uring_sqe &) = nullptr;
		void (*null_handler)(const io_uring_cqe &) = nullptr;
		auto prep = [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); };
		EXPECT_THROW(loop.submit(null_prep, [](const io_uring_cqe &) {}), tw::error);
		EXPECT_THROW(loop.submit(prep, null_handler), tw::error);
		EXPECT_THROW(loop.submit(prep, std::function<void(const io_uring_cqe &)>()), tw::error);
		EXPECT_THROW(loop.submit(std::function<void(io_uring_sqe &)>(), [](const io_uring_cqe &) {}),
			     tw::error);
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
	tw::Timer<tw::Loop> t = loop.after(1h, [] {});
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
	EXPECT_THROW((void)loop.after(1ms, bad), std::runtime_error);
	EXPECT_THROW((void)loop.every(1ms, bad), std::runtime_error);
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

// ---- ~Loop ------------------------------------------------------------------

// What a cancellation callback arms while ~Loop cancels its timer is
// dropped: no exception (ESHUTDOWN reached the handler), nothing left.
TEST(LoopClose, ArmingFromACancellationCallbackDuringDestroyIsDropped)
{
	auto loop = std::make_unique<Loop>();
	Loop *lp = loop.get();
	Caught caught;
	loop->on_exception(caught.handler());
	int g = 0;
	bool posted = false;
	std::vector<tw::Timer<tw::Loop>> made;
	tw::Timer<tw::Loop> t = loop->after(1h, [] {});
	tw::Timer<tw::Loop> *tp = &t;
	t.on_cancel([&, tp, lp] {
		g++;
		EXPECT_FALSE(tp->arm_in(1ms));
		EXPECT_FALSE(tp->arm_at(lp->now()));
		made.push_back(lp->after(1ms, [] {}));
		made.push_back(lp->every(1ms, [] {}));
		EXPECT_FALSE(lp->post([&] { posted = true; }));
	});
	loop.reset();
	EXPECT_EQ(g, 1);
	EXPECT_EQ(caught.what, std::vector<std::string>{});
	EXPECT_FALSE(posted);
	for (const tw::Timer<tw::Loop> &m : made)
		EXPECT_FALSE(m.pending());
}

// run_once() and run() from a cancellation callback run by ~Loop: EBUSY,
// and the destruction goes on. That run's end closed the loop a second
// time, inside the first (its request records freed under it), and the
// cancellation callbacks after it found the loop gone: their arms thrown
// as ESHUTDOWN instead of dropped.
TEST(LoopClose, RunFromACancellationCallbackDuringDestroy)
{
	auto loop = std::make_unique<Loop>();
	Loop *lp = loop.get();
	Caught caught;
	loop->on_exception(caught.handler());
	std::vector<int> busy;
	int dropped = 0;
	std::vector<std::unique_ptr<tw::Timer<tw::Loop>>> ts;
	for (int i = 0; i < 4; i++) {
		ts.push_back(std::make_unique<tw::Timer<tw::Loop>>(loop->after(1h, [] {})));
		tw::Timer<tw::Loop> *t = ts.back().get();
		t->on_cancel([&, t, lp, i] {
			try {
				if (i % 2)
					lp->run();
				else
					lp->run_once(false);
			} catch (const tw::error &e) {
				busy.push_back(e.code().value());
			}
			dropped += !t->arm_in(1ms);
		});
	}
	loop.reset();
	EXPECT_EQ(busy, std::vector<int>(4, EBUSY));
	EXPECT_EQ(dropped, 4);
	EXPECT_EQ(caught.what, std::vector<std::string>{});
}

TEST(LoopClose, DestroyFromATimerCallback)
{
	Doomed d;
	tw::Timer<tw::Loop> killer = d.loop->after(1ms, [&] { d.destroy_from_callback(); });
	d.loop->run();
	d.check();
	EXPECT_FALSE(static_cast<bool>(killer));
}

TEST(LoopClose, DestroyFromATimerCallbackUnderRunOnce)
{
	Doomed d;
	bool fired = false;
	tw::Timer<tw::Loop> killer = d.loop->after(1ms, [&] {
		fired = true;
		d.destroy_from_callback();
	});
	while (!fired)
		d.loop->run_once();
	d.check();
}

TEST(LoopClose, DestroyFromAPeriodicCallback)
{
	Doomed d;
	int runs = 0, g = 0;
	tw::Timer<tw::Loop> killer = d.loop->every(
		2ms,
		[&] {
			if (++runs == 3)
				d.destroy_from_callback();
		},
		tw::misfire::once);
	killer.on_cancel([&] { g++; });
	d.loop->run();
	d.check();
	EXPECT_EQ(runs, 3);
	EXPECT_EQ(g, 1); // it was to run again: cancelled by the destruction
}

// A periodic timer whose callback stops the loop cannot run again: it is
// cancelled then, once. It stayed periodic and unarmed: ~Loop did not cancel
// it, and cancel() ran its cancellation callback after the loop was gone.
TEST(LoopClose, PeriodicTimerThatStopsTheLoop)
{
	int runs = 0, g = 0;
	LoopTimer t;
	{
		Loop loop;
		t = loop.every(1ms, [&] { loop.stop(); runs++; });
		t.on_cancel([&] { g++; });
		loop.run();
		EXPECT_EQ(g, 1);
		EXPECT_EQ(t.period(), 0ns);
	}
	EXPECT_FALSE(t.cancel());
	EXPECT_EQ(runs, 1);
	EXPECT_EQ(g, 1);
}

TEST(LoopClose, DestroyFromAnIoHandler)
{
	Doomed d;
	if (!has_ring(*d.loop))
		GTEST_SKIP() << "io_uring refused: fallback mode";
	auto alive = std::make_shared<int>(0);
	d.loop->submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); },
		       [&, alive](const io_uring_cqe &) { d.destroy_from_callback(); });
	d.loop->run();
	d.check();
	EXPECT_EQ(alive.use_count(), 1);
}

TEST(LoopClose, DestroyFromPostedWork)
{
	Doomed d;
	d.loop->post([&] { d.destroy_from_callback(); });
	d.loop->run();
	d.check();
}

// A cancellation callback run by cancel() in a timer callback.
TEST(LoopClose, DestroyFromACancellationCallback)
{
	Doomed d;
	tw::Timer<tw::Loop> victim = d.loop->after(1h, [] {});
	victim.on_cancel([&] { d.destroy_from_callback(); });
	tw::Timer<tw::Loop> killer = d.loop->after(1ms, [&] { EXPECT_TRUE(victim.cancel()); });
	d.loop->run();
	d.check();
}

// The exception handler is one of the loop's callbacks too.
TEST(LoopClose, DestroyFromTheExceptionHandler)
{
	Doomed d;
	d.loop->on_exception([&](std::exception_ptr) { d.destroy_from_callback(); });
	tw::Timer<tw::Loop> thrower = d.loop->after(1ms, [] { throw std::runtime_error("boom"); });
	d.loop->run();
	d.check();
}

// Outside any callback (the loop does not run), a cancellation callback
// run by cancel() may destroy the loop at once.
TEST(LoopClose, DestroyFromACancellationCallbackOutsideTheLoop)
{
	Doomed d;
	tw::Timer<tw::Loop> victim = d.loop->after(1h, [] {});
	victim.on_cancel([&] {
		d.loop->post([&] { d.posted++; });
		d.loop.reset();
	});
	EXPECT_TRUE(victim.cancel());
	d.check();
}

// ---- tw::Timer<tw::Loop> handles in their own callbacks ------------------------------

// io_uring_enter() refused (a seccomp filter, in a child process): run()
// and run_once() threw its EPERM as "tw: run() from a callback", the
// message of the EBUSY misuse. Now the C call's error with its name.
TEST(LoopClose, RunWhoseSystemCallFailsSaysSo)
{
	std::fflush(stdout);
	const pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		Loop loop;
		if (loop.features() & TW_LOOP_FEAT_FALLBACK)
			_exit(77);
		sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		sock_fprog prog = {static_cast<unsigned short>(sizeof f / sizeof f[0]), f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(77);
		int wrong = 0;
		for (bool once : {true, false}) {
			const std::string want = once ? "tw: twheel_loop_run_once() failed" : "tw: twheel_loop_run() failed";
			loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); }, [](const io_uring_cqe &) {});
			try {
				once ? (void)loop.run_once() : loop.run();
				wrong++;
			} catch (const tw::error &e) {
				if (e.code().value() != EPERM || e.what() != want) {
					std::printf("%d: %s, not %s\n", e.code().value(), e.what(), want.c_str());
					wrong++;
				}
			}
		}
		std::fflush(stdout);
		_exit(wrong);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		GTEST_SKIP() << "no io_uring, or no seccomp filter here";
	EXPECT_EQ(WEXITSTATUS(status), 0);
}

// cancel() runs g, which destroys g's own handle: the block (and g's
// captures) live until g returns (they were freed under it: ASan
// use-after-free).
TEST(LoopHandle, CancellationCallbackDestroysItsHandleFromCancel)
{
	Loop loop;
	auto t = std::make_unique<tw::Timer<tw::Loop>>(loop.after(1h, [] {}));
	std::string seen;
	const std::string tag(40, 'g'); // g on the heap, beside the block
	t->on_cancel([&, tag] {
		t.reset();
		seen = tag;
	});
	EXPECT_TRUE(t->cancel());
	EXPECT_EQ(t, nullptr);
	EXPECT_EQ(seen, tag);
	EXPECT_EQ(loop.size(), 0u);
}

// The common clean-up: each connection's cancellation callback erases the
// connection, its timer included, while ~Loop cancels them.
TEST(LoopHandle, CancellationCallbacksEraseTheirOwnersDuringDestroy)
{
	std::map<int, tw::Timer<tw::Loop>> conns;
	std::vector<std::string> seen;
	{
		Loop loop;
		for (int fd = 3; fd < 8; fd++) {
			tw::Timer<tw::Loop> &t = conns[fd];
			t = loop.after(std::chrono::seconds(fd), [] {});
			t.on_cancel([&conns, &seen, fd, tag = std::string(32, char('a' + fd))] {
				conns.erase(fd);
				seen.push_back(tag);
			});
		}
	}
	EXPECT_TRUE(conns.empty());
	std::sort(seen.begin(), seen.end()); // g's captures were alive: each saw its tag
	std::vector<std::string> want;
	for (int fd = 3; fd < 8; fd++)
		want.emplace_back(32, char('a' + fd));
	EXPECT_EQ(seen, want);
}

// g moves its handle while the destructor runs g: the timer lives on in
// the new handle (the destructor read the emptied handle: SIGSEGV).
TEST(LoopHandle, CancellationCallbackMovesItsHandleDuringItsDestructor)
{
	Loop loop;
	tw::Timer<tw::Loop> rescued;
	int g = 0;
	auto t = std::make_unique<tw::Timer<tw::Loop>>(loop.after(1h, [] {}));
	tw::Timer<tw::Loop> *tp = t.get();
	t->on_cancel([&, tp] {
		if (g++ == 0)
			rescued = std::move(*tp);
	});
	t.reset();
	EXPECT_EQ(g, 1);
	EXPECT_TRUE(static_cast<bool>(rescued));
	EXPECT_FALSE(rescued.pending());
	EXPECT_FALSE(rescued.arm_in(1h));
	EXPECT_TRUE(rescued.cancel());
	EXPECT_EQ(g, 2);
}

// A one-shot callback moves its handle away, then assigns a new timer to
// the moved-to handle, then destroys it: each step from inside its own
// callback.
TEST(LoopHandle, OneShotMovedAssignedAndDestroyedFromItsOwnCallback)
{
	Loop loop;
	std::unique_ptr<tw::Timer<tw::Loop>> moved;
	int next = 0;
	const std::string tag(60, 'f'); // a heap-stored callable
	std::string seen;
	tw::Timer<tw::Loop> t = loop.after(0ms, [&, tag](tw::Timer<tw::Loop> &self) {
		moved = std::make_unique<tw::Timer<tw::Loop>>(std::move(self));
		*moved = loop.after(0ms, [&] { next++; });
		moved.reset();
		seen = tag;
		loop.stop();
	});
	loop.run();
	EXPECT_FALSE(static_cast<bool>(t));
	EXPECT_EQ(seen, tag);
	EXPECT_EQ(next, 0);
}

// What each kind of callback throws goes to the handler, the loop goes on.
TEST(LoopHandle, ThrowingCallablesReachTheHandler)
{
	Loop loop;
	Caught caught;
	loop.on_exception(caught.handler());
	tw::Timer<tw::Loop> c = loop.after(1h, [] {});
	c.on_cancel([] { throw std::runtime_error("on_cancel"); });
	int runs = 0;
	tw::Timer<tw::Loop> p = loop.every(
		2ms,
		[&] {
			if (++runs == 2) {
				c.cancel();
				loop.stop();
			}
			throw std::runtime_error("periodic");
		},
		tw::misfire::once);
	loop.post([] { throw std::runtime_error("post"); });
	loop.run();
	EXPECT_EQ(caught.what, (std::vector<std::string>{"post", "periodic", "on_cancel", "periodic"}));
}
