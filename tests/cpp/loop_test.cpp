// SPDX-License-Identifier: MIT
// GoogleTest suite for tw::Loop and tw::Timer<tw::Loop> (<twheel/loop.hpp>),
// on a real io_uring and with an injected clock. The tests of I/O requests
// are skipped (GTEST_SKIP) where the kernel refuses io_uring.
#include <twheel/loop.hpp>
#include <twheel/twheel.hpp>

#include <gtest/gtest.h>

#include "caught.h"
#include "count_new.h"
#include "slow_write.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <cerrno>
#include <functional>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using tw::Loop;
using LoopTimer = tw::Timer<tw::Loop>;
using time_point = Loop::time_point;

namespace {

// Creates a loop, or tells the caller to skip when io_uring is refused.
std::optional<Loop> make_loop(const tw::loop_options &opt, std::string *why)
{
	try {
		return Loop(opt);
	} catch (const std::system_error &e) {
		const int c = e.code().value();
		if (c == EPERM || c == ENOSYS || c == EOPNOTSUPP || c == ENOMEM || c == EACCES) {
			*why = e.what();
			return std::nullopt;
		}
		throw;
	}
}

#define MAKE_LOOP(var, opt)                                       \
	std::string why_##var;                                    \
	auto var##_opt = make_loop((opt), &why_##var);             \
	if (!var##_opt)                                           \
		GTEST_SKIP() << "io_uring refused: " << why_##var; \
	Loop &var = *var##_opt

// As MAKE_LOOP, for a test that needs the ring: skips in fallback mode (the
// default Loop falls back to it where io_uring is refused).
#define MAKE_RING(var, opt)                                                          \
	MAKE_LOOP(var, opt);                                                         \
	if (var.features() & TW_LOOP_FEAT_FALLBACK)                                     \
		GTEST_SKIP() << "io_uring refused: the loop runs in fallback mode"

// A clock the test moves by hand (any thread may read it).
struct FakeClock {
	std::atomic<std::int64_t> ns{1'000'000'000};
	tw::loop_options options(std::chrono::nanoseconds tick = 1ms)
	{
		tw::loop_options o;
		o.tick = tick;
		o.clock = [this] { return time_point(std::chrono::nanoseconds(ns.load())); };
		return o;
	}
	void set(std::chrono::nanoseconds t) { ns.store(1'000'000'000 + t.count()); }
	time_point at(std::chrono::nanoseconds t) const { return time_point(std::chrono::nanoseconds(1'000'000'000) + t); }
};

} // namespace

// ---- Real ring ----------------------------------------------------------------

TEST(LoopReal, AfterFiresNeverEarly)
{
	MAKE_LOOP(loop, tw::loop_options());
	const time_point start = loop.clock_now();
	time_point fired{};
	tw::Timer<tw::Loop> t = loop.after(20ms, [&] {
		fired = loop.clock_now();
		loop.stop();
	});
	EXPECT_TRUE(t.pending());
	loop.run();
	EXPECT_GE(fired - start, 20ms);
	EXPECT_LT(fired - start, 2s);
	EXPECT_FALSE(t.pending());
}

TEST(LoopReal, PostFromSeveralThreads)
{
	MAKE_LOOP(loop, tw::loop_options());
	constexpr int threads = 4, per_thread = 5000;
	long ran = 0; // touched only on the loop thread: TSan checks the handoff
	std::vector<int> last(threads, -1);
	bool in_order = true;
	std::vector<std::thread> producers;
	for (int i = 0; i < threads; i++) {
		producers.emplace_back([&, i] {
			for (int k = 0; k < per_thread; k++) {
				auto payload = std::make_unique<int>(k); // move-only capture
				EXPECT_TRUE(loop.post([&, i, p = std::move(payload)] {
					if (*p != last[static_cast<size_t>(i)] + 1)
						in_order = false;
					last[static_cast<size_t>(i)] = *p;
					if (++ran == threads * per_thread)
						loop.stop();
				}));
			}
		});
	}
	loop.run();
	for (auto &t : producers)
		t.join();
	EXPECT_EQ(ran, threads * per_thread);
	EXPECT_TRUE(in_order); // posts from one thread run in order
	EXPECT_FALSE(loop.post([] {}));
}

// Threads post as fast as they can while the loop is stopped, by one of
// its posts or by another thread, then destroyed: each post() that
// returned true ran exactly once (in run(), or in ~Loop, which runs the
// posts not yet run), each refused one was destroyed uncalled, and every
// callable was destroyed once.
TEST(LoopReal, PostsRacingStopRunOnceOrAreRefused)
{
	struct Count { // counts its destruction, once, wherever the callable goes
		std::atomic<long> *n;
		explicit Count(std::atomic<long> *x) : n(x) {}
		Count(Count &&o) noexcept : n(std::exchange(o.n, nullptr)) {}
		~Count()
		{
			if (n)
				n->fetch_add(1);
		}
	};
	for (const bool from_loop : {true, false}) {
		constexpr int threads = 4;
		std::atomic<long> accepted{0}, refused{0}, destroyed{0};
		long ran = 0; // the loop thread only
		std::vector<std::thread> producers;
		{
			MAKE_LOOP(loop, tw::loop_options());
			for (int i = 0; i < threads; i++)
				producers.emplace_back([&, i] {
					for (long k = 0;; k++) {
						const bool ok = loop.post([&, c = Count(&destroyed)] {
							if (++ran == 2000 && from_loop)
								loop.stop();
						});
						(ok ? accepted : refused).fetch_add(1);
						if (!ok)
							break;
						if (!from_loop && i == 0 && k == 500)
							loop.stop();
					}
				});
			loop.run();
			for (auto &t : producers)
				t.join();
		}
		SCOPED_TRACE(from_loop ? "stopped by a post" : "stopped by another thread");
		EXPECT_EQ(ran, accepted.load());
		EXPECT_EQ(refused.load(), threads);
		EXPECT_EQ(destroyed.load(), accepted.load() + refused.load());
	}
}

// The loop may act on a post() or stop() of another thread, return and
// be destroyed before that call returns: ~Loop waits for the call, which
// else wakes a freed loop through a closed (or reused) eventfd.
TEST(LoopReal, DestroyedWhileAnotherThreadIsStillInPostOrStop)
{
	for (const bool post : {true, false}) {
		g_wrote_closed_fd = false;
		std::thread t;
		{
			MAKE_LOOP(loop, tw::loop_options());
			auto wake = loop.after(10ms, [] {}); // wakes the loop while the write waits
			t = std::thread([&loop, post] {
				g_slow_writes = true;
				std::this_thread::sleep_for(2ms); // the loop sleeps: a post or stop writes
				if (post)
					loop.post([&loop] { loop.stop(); });
				else
					loop.stop();
			});
			loop.run();
		}
		t.join();
		EXPECT_FALSE(g_wrote_closed_fd) << (post ? "post()" : "stop()");
	}
}

TEST(LoopReal, TimersCreatedFromPostedWork)
{
	MAKE_LOOP(loop, tw::loop_options());
	std::vector<tw::Timer<tw::Loop>> timers; // loop thread only
	std::atomic<int> fired{0};
	std::thread producer([&] {
		for (int i = 0; i < 50; i++)
			loop.post([&, i] {
				timers.push_back(loop.after(std::chrono::milliseconds(1 + i % 5), [&] {
					if (fired.fetch_add(1) + 1 == 50)
						loop.stop();
				}));
			});
	});
	loop.run();
	producer.join();
	EXPECT_EQ(fired.load(), 50);
}

TEST(LoopReal, EveryRunsPeriodicallyAndCancelsFromItsCallback)
{
	MAKE_LOOP(loop, tw::loop_options());
	int runs = 0;
	tw::Timer<tw::Loop> t = loop.every(2ms, [&](tw::Timer<tw::Loop> &self) {
		if (++runs == 5) {
			EXPECT_TRUE(self.cancel()); // running periodic: will not run again
		}
	});
	tw::Timer<tw::Loop> guard = loop.after(5s, [&] { loop.stop(); }); // in case it never stops
	tw::Timer<tw::Loop> stopper;
	t.on_cancel([&] { stopper = loop.after(10ms, [&] { loop.stop(); }); });
	loop.run();
	EXPECT_EQ(runs, 5);
	EXPECT_FALSE(t.pending());
}

TEST(LoopReal, IoNopAndPipeRead)
{
	MAKE_RING(loop, tw::loop_options());
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	ASSERT_EQ(write(fds[1], "hi", 2), 2);
	char buf[8] = {};
	int nop_res = -1, read_res = -1;
	loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); },
		    [&](const io_uring_cqe &cqe) { nop_res = cqe.res; });
	loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_read(&sqe, fds[0], buf, sizeof buf, 0); },
		    [&, keep = std::string(100, 'k')](const io_uring_cqe &cqe) {
			    read_res = cqe.res;
			    EXPECT_EQ(keep.size(), 100u);
			    loop.stop();
		    });
	loop.run();
	EXPECT_EQ(nop_res, 0);
	EXPECT_EQ(read_res, 2);
	EXPECT_EQ(std::string(buf, 2), "hi");
	close(fds[0]);
	close(fds[1]);
}

// The multishot accept of docs/cpp.md: the fd of every CQE with res >= 0
// is a connection, the last CQE's (no IORING_CQE_F_MORE) too, and a request
// the kernel ended is submitted again.
struct Acceptor {
	Loop &loop;
	int lfd;
	std::function<void(int)> on_conn;
	bool stopping = false;
	int failed = 0; // the error that ended accepting (the loop then stops)
	tw::Timer<tw::Loop> backoff;

	Acceptor(Loop &l, int fd, std::function<void(int)> f) : loop(l), lfd(fd), on_conn(std::move(f)) {}

	void arm()
	{
		loop.submit([this](io_uring_sqe &sqe) {
			io_uring_prep_multishot_accept(&sqe, lfd, nullptr, nullptr, SOCK_CLOEXEC);
		}, [this](const io_uring_cqe &cqe) { on_cqe(cqe); });
	}
	void on_cqe(const io_uring_cqe &cqe)
	{
		if (cqe.res >= 0)
			on_conn(cqe.res); // the last CQE may carry one too
		if ((cqe.flags & IORING_CQE_F_MORE) || stopping)
			return;
		if (cqe.res >= 0)
			arm(); // the kernel ended it (CQ overflow): accept on
		else if (cqe.res == -EMFILE || cqe.res == -ENFILE)
			backoff = loop.after(100ms, [this] {
				if (!stopping)
					arm();
			});
		else {
			std::fprintf(stderr, "accept: %s\n", std::strerror(-cqe.res));
			failed = cqe.res;
			loop.stop();
		}
	}
};

TEST(LoopReal, MultishotAcceptKeepsTheLastCqesFdAndAcceptsAgain)
{
	MAKE_RING(loop, tw::loop_options());
	const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(lfd, 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof a;
	ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
	ASSERT_EQ(listen(lfd, 16), 0);
	ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &len), 0);
	std::vector<int> conns, clients;
	Acceptor acc(loop, lfd, [&](int fd) {
		conns.push_back(fd);
		if (conns.size() == 3)
			loop.stop();
	});
	// As if the kernel ended a multishot accept with a connection in its
	// last CQE: the handler keeps the fd and submits the accept again.
	io_uring_cqe last{};
	last.res = dup(lfd);
	last.flags = 0;
	acc.on_cqe(last);
	ASSERT_EQ(conns.size(), 1u);
	for (int i = 0; i < 2; i++) {
		clients.push_back(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
		ASSERT_EQ(connect(clients.back(), reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
	}
	tw::Timer<tw::Loop> guard = loop.after(5s, [&] { loop.stop(); });
	loop.run();
	// the first real accept refused: the kernel has no multishot accept
	// (before Linux 5.19; the test waited 5 s and failed there)
	const bool refused = acc.failed == -EINVAL && conns.size() == 1;
	if (!refused) {
		EXPECT_EQ(conns.size(), 3u); // both clients, accepted by the re-armed request
	}
	acc.stopping = true;
	for (int fd : conns)
		close(fd);
	for (int fd : clients)
		close(fd);
	close(lfd);
	if (refused)
		GTEST_SKIP() << "no multishot accept here (Linux 5.19 has it)";
}

TEST(LoopReal, IoPrepThrowingNeverCallsTheHandler)
{
	MAKE_RING(loop, tw::loop_options());
	bool called = false;
	EXPECT_THROW(loop.submit([](io_uring_sqe &) { throw std::runtime_error("prep"); },
				 [&](const io_uring_cqe &) { called = true; }),
		     std::runtime_error);
	tw::Timer<tw::Loop> t = loop.after(5ms, [&] { loop.stop(); });
	loop.run();
	EXPECT_FALSE(called);
}

// submit() with a deadline: a read that never completes ends with -ETIME,
// never before its deadline; one whose data is there gets its data; a
// multishot request is refused and its handler never runs.
TEST(LoopReal, SubmitWithADeadline)
{
	for (const unsigned flags : {0u, unsigned(TW_LOOP_NO_LINK_TIMEOUT)}) {
		tw::loop_options o;
		o.flags = flags;
		MAKE_RING(loop, o);
		int fds[2];
		ASSERT_EQ(pipe(fds), 0);
		char buf[8] = {};
		int silent_res = 0, data_res = 0, done = 0;
		const Loop::time_point deadline = loop.clock_now() + 30ms;
		Loop::time_point silent_at{};
		loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_read(&sqe, fds[0], buf, sizeof buf, 0); },
			    deadline, [&](const io_uring_cqe &cqe) {
				    silent_res = cqe.res;
				    silent_at = loop.clock_now();
				    if (++done == 2)
					    loop.stop();
			    });
		int p2[2];
		ASSERT_EQ(pipe(p2), 0);
		ASSERT_EQ(write(p2[1], "ok", 2), 2);
		char buf2[8] = {};
		loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_read(&sqe, p2[0], buf2, sizeof buf2, 0); },
			    loop.clock_now() + 10s, [&](const io_uring_cqe &cqe) {
				    data_res = cqe.res;
				    if (++done == 2)
					    loop.stop();
			    });
		bool called = false;
		try {
			loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_poll_multishot(&sqe, fds[0], POLLIN); },
				    loop.clock_now() + 10ms, [&](const io_uring_cqe &) { called = true; });
			ADD_FAILURE() << "a multishot request with a deadline was accepted";
		} catch (const tw::error &e) {
			EXPECT_EQ(e.code().value(), EINVAL);
		}
		tw::Timer<tw::Loop> guard = loop.after(5s, [&] { loop.stop(); });
		loop.run();
		EXPECT_EQ(silent_res, -ETIME) << "flags " << flags;
		EXPECT_GE(silent_at, deadline) << "the deadline cancelled the read early";
		EXPECT_EQ(data_res, 2);
		EXPECT_FALSE(called);
		for (int fd : {fds[0], fds[1], p2[0], p2[1]})
			close(fd);
	}
}

TEST(LoopReal, DestroyWithIoInFlightFreesTheHandler)
{
	auto alive = std::make_shared<int>(0);
	int fds[2];
	ASSERT_EQ(pipe(fds), 0);
	{
		MAKE_RING(loop, tw::loop_options());
		loop.submit([&](io_uring_sqe &sqe) { io_uring_prep_poll_add(&sqe, fds[0], POLLIN); },
			    [alive](const io_uring_cqe &) { ADD_FAILURE() << "never completes"; });
		tw::Timer<tw::Loop> t = loop.after(2ms, [&] { loop.stop(); });
		loop.run();
		EXPECT_EQ(alive.use_count(), 2);
	}
	EXPECT_EQ(alive.use_count(), 1); // handler destroyed with the loop (and ASan: no leak)
	close(fds[0]);
	close(fds[1]);
}

// A finished request's record serves the next one: in the steady state
// submit() allocates nothing (a handler of at most 32 bytes), with a
// deadline or without, and each handler is destroyed when its request ends.
TEST(LoopReal, SubmitReusesRequestRecords)
{
	MAKE_RING(loop, tw::loop_options());
	auto alive = std::make_shared<int>(0);
	int done = 0;
	auto one = [&](bool deadline) {
		auto prep = [](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); };
		auto h = [&done, alive](const io_uring_cqe &cqe) { done += cqe.res == 0; };
		const int want = done + 1;
		if (deadline)
			loop.submit(prep, loop.clock_now() + 1h, h);
		else
			loop.submit(prep, h);
		for (int i = 0; i < 100 && done < want; i++)
			loop.run_once(false);
	};
	one(false);
	one(true); // the record's struct tw_loop_deadline is made once
	const long before = g_allocs.load();
	for (int i = 0; i < 20; i++)
		one(i % 2);
	EXPECT_EQ(g_allocs.load() - before, 0);
	EXPECT_EQ(done, 22);
	EXPECT_EQ(alive.use_count(), 1);
	EXPECT_EQ(loop.size(), 0u); // no deadline timer left behind
}

TEST(LoopReal, ExceptionsGoToTheLoopHandler)
{
	MAKE_RING(loop, tw::loop_options());
	Caught c;
	loop.on_exception(c.handler());
	tw::Timer<tw::Loop> t = loop.after(1ms, [] { throw std::runtime_error("timer"); });
	loop.post([] { throw std::runtime_error("post"); });
	loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); },
		    [](const io_uring_cqe &) { throw std::runtime_error("io"); });
	tw::Timer<tw::Loop> s = loop.after(20ms, [&] { loop.stop(); });
	loop.run();
	std::sort(c.what.begin(), c.what.end());
	EXPECT_EQ(c.what, (std::vector<std::string>{"io", "post", "timer"}));
}

// ---- Injected clock -----------------------------------------------------------

TEST(LoopClock, AfterRoundsUpAndNeverFiresEarly)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	int fired = 0;
	tw::Timer<tw::Loop> t = loop.after(std::chrono::microseconds(10'500), [&] { fired++; });
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	// deadline 10.5 ms -> tick 11
	clk.set(10'999us);
	loop.run_once(false);
	EXPECT_EQ(fired, 0);
	EXPECT_TRUE(t.pending());
	clk.set(11ms);
	loop.run_once(false);
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(loop.now(), clk.at(11ms));
}

TEST(LoopClock, AtAndReArm)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	std::vector<time_point> at;
	tw::Timer<tw::Loop> t = loop.at(clk.at(5ms), [&] { at.push_back(loop.now()); });
	EXPECT_EQ(t.expiry(), clk.at(5ms));
	EXPECT_TRUE(t.arm_at(clk.at(8ms))); // re-arm a pending timer
	clk.set(6ms);
	loop.run_once(false);
	EXPECT_TRUE(at.empty());
	clk.set(8ms);
	loop.run_once(false);
	ASSERT_EQ(at.size(), 1u);
	EXPECT_FALSE(t.arm_in(2ms)); // fired: arming again is not a re-arm
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(10ms);
	loop.run_once(false);
	EXPECT_EQ(at.size(), 2u);
}

// expiry() of an arm by delay not yet placed is the earliest it can fire,
// counted from the loop's last reading, here 100 ms past; once placed,
// from a fresh reading, it is when it fires. The manual said "when it
// fires" alone: a time long past, for a timer due 10 ms ahead.
TEST(LoopClock, ExpiryOfAnArmByDelayBeforeItIsPlaced)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	loop.run_once(false); // the loop's last reading: 0
	clk.set(100ms);
	int fired = 0;
	tw::Timer<tw::Loop> t(loop, [&] { fired++; });
	t.arm_in(10ms);
	EXPECT_EQ(t.expiry(), clk.at(10ms)); // the earliest: from the last reading
	loop.run_once(false);               // placed from 100 ms
	EXPECT_EQ(t.expiry(), clk.at(110ms));
	clk.set(109ms);
	loop.run_once(false);
	EXPECT_EQ(fired, 0);
	clk.set(110ms);
	loop.run_once(false);
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(t.expiry(), clk.at(110ms));
}

TEST(LoopClock, CancelAndOnCancel)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	int fired = 0, cancelled = 0;
	tw::Timer<tw::Loop> t = loop.after(5ms, [&] { fired++; });
	t.on_cancel([&] { cancelled++; });
	EXPECT_TRUE(t.cancel());
	EXPECT_FALSE(t.cancel());
	EXPECT_EQ(cancelled, 1);
	t.arm_in(5ms);
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(10ms);
	loop.run_once(false);
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(cancelled, 1); // never on expiry
}

TEST(LoopClock, DestroyPendingAndDestroyInsideOwnCallback)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	int fired = 0, cancelled = 0;
	{
		tw::Timer<tw::Loop> t = loop.after(5ms, [&] { fired++; });
		t.on_cancel([&] { cancelled++; });
	}
	EXPECT_EQ(cancelled, 1);
	EXPECT_EQ(loop.size(), 0u);
	auto self_owned = std::make_unique<tw::Timer<tw::Loop>>();
	std::string tag(50, 'x'), seen;
	*self_owned = loop.after(5ms, [&, tag] {
		self_owned.reset();
		seen = tag; // captures alive until the callback returns
	});
	auto periodic = std::make_unique<tw::Timer<tw::Loop>>();
	int runs = 0;
	*periodic = loop.every(1ms, [&, tag] {
		if (++runs == 2)
			periodic.reset(); // a running periodic timer destroyed: no more runs
		seen += tag.substr(0, 1);
	});
	for (int ms = 1; ms <= 10; ms++) {
		clk.set(std::chrono::milliseconds(ms));
		loop.run_once(false);
	}
	EXPECT_EQ(fired, 0);
	EXPECT_EQ(self_owned, nullptr);
	EXPECT_EQ(periodic, nullptr);
	EXPECT_EQ(runs, 2);
	EXPECT_EQ(seen, tag);
}

// A cancellation callback that re-arms its own timer: the destructor and
// an assignment over it drop that re-arm (nothing of a freed block is left
// armed on the loop).
TEST(LoopClock, ReArmByTheCancellationCallbackIsDroppedByDestroyAndAssign)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	int fired = 0, g_runs = 0;
	auto t = std::make_unique<tw::Timer<tw::Loop>>(loop.after(5ms, [&] { fired++; }));
	tw::Timer<tw::Loop> *tp = t.get();
	t->on_cancel([&, tp] {
		g_runs++;
		tp->arm_in(1ms);
	});
	t.reset();
	EXPECT_EQ(g_runs, 1);
	EXPECT_EQ(loop.size(), 0u);

	tw::Timer<tw::Loop> u = loop.after(5ms, [&] { fired += 10; });
	tw::Timer<tw::Loop> *up = &u;
	u.on_cancel([&, up] {
		g_runs++;
		up->arm_in(1ms);
	});
	u = loop.after(2ms, [&] { fired += 100; });
	EXPECT_EQ(g_runs, 2);
	EXPECT_EQ(loop.size(), 1u);
	for (int ms = 1; ms <= 10; ms++) {
		clk.set(std::chrono::milliseconds(ms));
		loop.run_once(false);
	}
	EXPECT_EQ(fired, 100);
	EXPECT_EQ(loop.size(), 0u);
}

// The cancellation callback of the timer assigned over destroys the
// source: the assignment has already taken the source's timer.
TEST(LoopClock, AssignmentWhoseCancellationDestroysTheSource)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	int fired = 0;
	auto src = std::make_unique<tw::Timer<tw::Loop>>(loop.after(3ms, [&] { fired++; }));
	tw::Timer<tw::Loop> t = loop.after(2ms, [] {});
	t.on_cancel([&] { src.reset(); });
	t = std::move(*src);
	EXPECT_EQ(src, nullptr);
	EXPECT_TRUE(t.pending());
	for (int ms = 1; ms <= 5; ms++) {
		clk.set(std::chrono::milliseconds(ms));
		loop.run_once(false);
	}
	EXPECT_EQ(fired, 1);
}

// loop_options: a zero tick is the C default (1 ms); a period beyond
// nanoseconds::max() reads back saturated, never negative.
TEST(LoopClock, ZeroTickIsTheDefaultAndHugePeriodsSaturate)
{
	FakeClock clk;
	tw::loop_options opt = clk.options();
	opt.tick = 0ns;
	MAKE_LOOP(loop, opt);
	EXPECT_EQ(loop.tick(), 1ms);
	tw::Timer<tw::Loop> p = loop.every(std::chrono::hours::max(), [] {});
	EXPECT_EQ(p.period(), std::chrono::nanoseconds::max());
	tw::Timer<tw::Loop> q = loop.every(std::chrono::duration<double>(1e300), [] {});
	EXPECT_EQ(q.period(), std::chrono::nanoseconds::max());
	tw::Timer<tw::Loop> r = loop.every(3ms, [] {});
	EXPECT_EQ(r.period(), 3ms);
	EXPECT_THROW((void)loop.after(1ms, std::function<void()>()), tw::error);
}

// In fallback mode there is no ring: submit() says so (EOPNOTSUPP), not "queue full".
TEST(LoopClock, SubmitInEpollModeSaysThereIsNoRing)
{
	tw::loop_options opt;
	opt.flags = TW_LOOP_NO_URING;
	MAKE_LOOP(loop, opt);
	try {
		loop.submit([](io_uring_sqe &sqe) { io_uring_prep_nop(&sqe); }, [](const io_uring_cqe &) {});
		FAIL() << "submit() in fallback mode did not throw";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EOPNOTSUPP);
	}
}

TEST(LoopClock, MovePendingAndMoveAssignOverPending)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	int a = 0, b = 0, cancelled_a = 0;
	tw::Timer<tw::Loop> ta = loop.after(5ms, [&] { a++; });
	ta.on_cancel([&] { cancelled_a++; });
	tw::Timer<tw::Loop> tb = loop.after(7ms, [&] { b++; });
	std::vector<tw::Timer<tw::Loop>> v;
	v.push_back(std::move(tb)); // pending: the handle moves, the timer does not
	EXPECT_FALSE(tb.pending()); // NOLINT(bugprone-use-after-move)
	EXPECT_TRUE(v[0].pending());
	for (int i = 0; i < 20; i++)
		v.emplace_back(); // force reallocation moves
	ta = std::move(v[0]);
	EXPECT_EQ(cancelled_a, 1);
	EXPECT_EQ(loop.size(), 1u);
	tw::Timer<tw::Loop> &alias = ta;
	ta = std::move(alias); // self-move: no-op
	EXPECT_TRUE(ta.pending());
	clk.set(20ms);
	loop.run_once(false);
	EXPECT_EQ(a, 0);
	EXPECT_EQ(b, 1);
}

TEST(LoopClock, MovePeriodicInsideItsOwnCallback)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	std::optional<tw::Timer<tw::Loop>> moved;
	std::vector<time_point> runs;
	tw::Timer<tw::Loop> t = loop.every(10ms, [&](tw::Timer<tw::Loop> &self) {
		runs.push_back(self.expiry());
		if (!moved)
			moved.emplace(std::move(self));
	});
	for (int ms = 1; ms <= 35; ms++) {
		clk.set(std::chrono::milliseconds(ms));
		loop.run_once(false);
	}
	EXPECT_FALSE(static_cast<bool>(t));
	ASSERT_TRUE(moved.has_value());
	EXPECT_EQ(runs, (std::vector<time_point>{clk.at(10ms), clk.at(20ms), clk.at(30ms)}));
	EXPECT_TRUE(moved->pending());
}

TEST(LoopClock, MisfirePolicies)
{
	struct Case {
		tw::misfire m;
		std::vector<std::uint32_t> missed; // one entry per run
	};
	for (const Case &c : {Case{tw::misfire::skip, {}}, Case{tw::misfire::once, {4}},
			      Case{tw::misfire::all, {4, 3, 2, 1, 0}}}) {
		FakeClock clk;
		MAKE_LOOP(loop, clk.options());
		std::vector<std::uint32_t> missed;
		tw::Timer<tw::Loop> t = loop.every(10ms, [&](tw::Timer<tw::Loop> &self) { missed.push_back(self.missed()); }, c.m);
		clk.set(55ms); // deadlines 10..50 all passed: 4 more than the first
		std::size_t counted = 0;
		for (int i = 0; i < 8; i++)
			counted += loop.run_once(false);
		EXPECT_EQ(missed, c.missed) << static_cast<int>(c.m);
		// run_once() counts a skipping run as one callback run
		EXPECT_EQ(counted, c.m == tw::misfire::skip ? 1u : missed.size()) << static_cast<int>(c.m);
		EXPECT_TRUE(t.pending());
		EXPECT_EQ(t.expiry(), clk.at(60ms)) << static_cast<int>(c.m);
	}
}

// A periodic timer counts from a fresh reading of the clock, not from the
// iteration's time: the first deadline a period after every() (made here
// outside any run), the next one of fixed_delay a period after the end of
// the run. Both counted from the last iteration's time: the first ran at
// once, the next came 5 ms early.
TEST(LoopClock, PeriodicCountsFromAFreshReading)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	clk.set(50ms); // loop.now() is still 0: it has not run
	int runs = 0;
	LoopTimer t = loop.every(10ms, [&] { runs++, clk.set(65ms); }, tw::misfire::once, tw::schedule::fixed_delay);
	EXPECT_EQ(t.expiry(), clk.at(60ms));
	loop.run_once(false);
	EXPECT_EQ(runs, 0);
	clk.set(60ms);
	loop.run_once(false);
	EXPECT_EQ(runs, 1);
	EXPECT_EQ(t.expiry(), clk.at(75ms));
}

// A period of one tick whose deadlines lie just past a tick's start: each
// runs in an iteration a little into the tick after (the rounding up), and
// the next deadline, passed in ns but its tick not begun, is no miss. It
// was: misfire::skip dropped every run.
TEST(LoopClock, RoundingUpToTheTickIsNoMiss)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	clk.set(50us);
	loop.run_once(false);
	std::vector<std::uint32_t> missed;
	LoopTimer t = loop.every(1ms, [&](LoopTimer &self) { missed.push_back(self.missed()); });
	for (int i = 1; i <= 20; i++) {
		clk.set(i * 1ms + 50us);
		loop.run_once(false);
	}
	EXPECT_EQ(missed, std::vector<std::uint32_t>(19, 0));
}

// arm_at() moves a periodic timer's next run and its grid (it counted from
// the old grid: skip dropped the run, once and all ran it as missed).
TEST(LoopClock, ArmAtMovesAPeriodicTimersGrid)
{
	for (const tw::misfire m : {tw::misfire::skip, tw::misfire::once, tw::misfire::all}) {
		FakeClock clk;
		MAKE_LOOP(loop, clk.options());
		std::vector<std::uint32_t> missed;
		LoopTimer t = loop.every(10ms, [&](LoopTimer &self) { missed.push_back(self.missed()); }, m);
		clk.set(5ms);
		loop.run_once(false);
		t.arm_at(clk.at(55ms));
		clk.set(55ms);
		for (int i = 0; i < 3; i++)
			loop.run_once(false);
		EXPECT_EQ(missed, std::vector<std::uint32_t>{0}) << static_cast<int>(m);
		EXPECT_EQ(t.expiry(), clk.at(65ms)) << static_cast<int>(m);
	}
}

TEST(LoopClock, PeriodShorterThanTickIsRejected)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(10ms));
	try {
		tw::Timer<tw::Loop> t = loop.every(1ms, [] {});
		FAIL() << "accepted";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), EINVAL);
	}
}

// Every observer of a handle is correct once its loop is gone, whether the
// timer was armed then or not (not-armed handles used to keep a dangling
// pointer that operator bool accepted).
TEST(LoopClock, HandlesAreSafeAfterTheLoopIsDestroyed)
{
	FakeClock clk;
	int cancelled = 0, posted = 0, fired = 0;
	tw::Timer<tw::Loop> survivor, fired_one, never_armed;
	{
		MAKE_LOOP(loop, clk.options());
		survivor = loop.after(5ms, [] {});
		survivor.on_cancel([&] { cancelled++; });
		fired_one = loop.after(1ms, [&] { fired++; });
		fired_one.on_cancel([&] { cancelled += 100; });
		never_armed = tw::Timer(loop, [&] { fired += 10; });
		clk.set(2ms);
		loop.run_once(false);
		long before = g_allocs.load();
		loop.post([&] { posted++; });
		EXPECT_EQ(g_allocs.load() - before, 1);
		before = g_allocs.load();
		loop.post([&, big = std::array<char, 40>{}] { posted += 1 + big[0]; }); // and its own block
		EXPECT_EQ(g_allocs.load() - before, 2);
	}
	EXPECT_EQ(fired, 1);
	EXPECT_EQ(cancelled, 1); // the armed one only
	EXPECT_EQ(posted, 2);    // a post promises a call
	for (tw::Timer<tw::Loop> *t : {&survivor, &fired_one, &never_armed}) {
		EXPECT_FALSE(static_cast<bool>(*t));
		EXPECT_FALSE(t->pending());
		EXPECT_FALSE(t->cancel());
		if (*t)
			t->arm_in(1ms); // the careless user's pattern: must not run
		EXPECT_THROW(t->arm_in(1ms), tw::error);
		EXPECT_THROW(t->arm_at(clk.at(1ms)), tw::error);
	}
	tw::Timer<tw::Loop> moved(std::move(never_armed));
	EXPECT_FALSE(static_cast<bool>(moved));
	EXPECT_EQ(cancelled, 1);
}

// A zero or negative delay runs in the next iteration, even between ticks.
TEST(LoopClock, ArmInZeroOrNegativeRunsInTheNextIteration)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	clk.set(10'400us); // not on a tick boundary
	loop.run_once(false);
	int fired = 0;
	tw::Timer<tw::Loop> zero = loop.after(0ms, [&] { fired++; });
	tw::Timer<tw::Loop> negative = tw::Timer(loop, [&] { fired += 10; });
	negative.arm_in(-5ms);
	loop.run_once(false);
	EXPECT_EQ(fired, 11);
	zero.arm_in(std::chrono::duration<double>(-1.0));
	loop.run_once(false);
	EXPECT_EQ(fired, 12);
}

// Durations whose period is not a whole number of nanoseconds convert
// exactly and saturate: a timer 65 years away does not fire now.
TEST(LoopClock, OddPeriodsNeverFireEarly)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	using frames = std::chrono::duration<std::int64_t, std::ratio<1, 90>>;
	const frames years65(std::int64_t{65} * 365 * 86400 * 90);
	int fired = 0;
	tw::Timer<tw::Loop> far = loop.after(years65, [&] { fired++; });
	tw::Timer<tw::Loop> max = loop.after(frames::max(), [&] { fired++; });
	tw::Timer<tw::Loop> third = loop.after(std::chrono::duration<std::int64_t, std::ratio<1, 3000>>(1), [&] { fired += 10; });
	EXPECT_EQ(far.expiry(), clk.at(std::chrono::hours(24 * 365 * 65)));
	clk.set(333us); // 1/3000 s is 333,333.3 ns: not yet
	loop.run_once(false);
	EXPECT_EQ(fired, 0);
	clk.set(1ms);
	loop.run_once(false);
	EXPECT_EQ(fired, 10);
	EXPECT_TRUE(far.pending());
	EXPECT_TRUE(max.pending());
}

TEST(LoopClock, TheLoopTimerIsTheNodeAPointerAndTheCallable)
{
	static_assert(sizeof(tw::Timer<tw::Loop>) == sizeof(tw_loop_timer) + 3 * sizeof(void *));
	EXPECT_EQ(tw::Timer<tw::Loop>::inline_capacity, tw::Timer<tw::Wheel>::inline_capacity);
}

// ---- tw::LoopTimerHook --------------------------------------------------------

namespace {

// A connection record holding its idle timer.
struct HookedConn : tw::Hook<tw::Loop, HookedConn> {
	Loop &loop;
	std::vector<time_point> *fired;
	std::unique_ptr<HookedConn> *self = nullptr; // set: on_timer() destroys this object
	bool throw_once = false;
	HookedConn(Loop &l, std::vector<time_point> *f) : Hook(l), loop(l), fired(f) {}
	void on_timer()
	{
		fired->push_back(loop.now());
		if (throw_once) {
			throw_once = false;
			throw std::runtime_error("hook threw");
		}
		if (self)
			self->reset();
	}
};

struct IdleTag {};
struct WriteTag {};
struct TwoHooks;
using IdleLoopHook = tw::Hook<tw::Loop, TwoHooks, IdleTag>;
using WriteLoopHook = tw::Hook<tw::Loop, TwoHooks, WriteTag>;
struct TwoHooks : IdleLoopHook, WriteLoopHook {
	int idle = 0, write = 0;
	explicit TwoHooks(Loop &l) : IdleLoopHook(l), WriteLoopHook(l) {}
	void on_timer(IdleTag) { idle++; }
	void on_timer(WriteTag) { write++; }
};

} // namespace

TEST(LoopHook, ArmsRearmsCancelsAndNeverFiresEarly)
{
	static_assert(sizeof(tw::Hook<tw::Loop, HookedConn>) == sizeof(tw_loop_timer) + sizeof(void *));
	static_assert(!std::is_copy_constructible_v<HookedConn>);
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	std::vector<time_point> fired;
	HookedConn c(loop, &fired);
	EXPECT_TRUE(c);
	EXPECT_FALSE(c.pending());
	EXPECT_FALSE(c.cancel());
	EXPECT_FALSE(c.arm_in(std::chrono::microseconds(10'500))); // deadline 10.5 ms: tick 11
	EXPECT_TRUE(c.pending());
	EXPECT_EQ(c.expiry(), clk.at(10'500us));
	EXPECT_EQ(loop.size(), 1u);
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(10'999us);
	loop.run_once(false);
	EXPECT_TRUE(fired.empty());
	EXPECT_TRUE(c.arm_in(5ms)); // re-armed while pending, from 11 ms: due at 16
	loop.run_once(false);
	clk.set(15ms);
	loop.run_once(false);
	EXPECT_TRUE(fired.empty());
	clk.set(16ms);
	loop.run_once(false);
	ASSERT_EQ(fired.size(), 1u);
	EXPECT_EQ(fired[0], clk.at(16ms));
	EXPECT_FALSE(c.pending());
	EXPECT_FALSE(c.arm_at(clk.at(20ms)));
	EXPECT_TRUE(c.cancel());
	EXPECT_FALSE(c.cancel());
	EXPECT_EQ(loop.size(), 0u);
	clk.set(30ms);
	loop.run_once(false);
	EXPECT_EQ(fired.size(), 1u);
}

// Making, arming, firing, cancelling (on_cancel() run), moving and
// destroying hooks allocate nothing, after the loop's first iteration.
struct LoopCancels : tw::Hook<tw::Loop, LoopCancels> {
	int fired = 0, cancelled = 0;
	using Hook::Hook;
	void on_timer() { fired++; }
	void on_cancel() { cancelled++; }
};

TEST(LoopHook, NothingAllocatedToMakeArmFireCancelOrMove)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options());
	loop.run_once(false);
	const long before = g_allocs.load();
	{
		LoopCancels a(loop);
		TwoHooks two(loop);
		a.arm_in(3ms);
		a.arm_at(clk.at(2ms));
		static_cast<IdleLoopHook &>(two).arm_in(1ms); // placed by the next iteration: due at 1 ms
		static_cast<WriteLoopHook &>(two).arm_at(clk.at(5ms));
		loop.run_once(false);
		clk.set(4ms);
		loop.run_once(false);
		EXPECT_EQ(a.fired, 1);
		EXPECT_EQ(two.idle, 1);
		a.arm_in(1ms);
		EXPECT_TRUE(a.cancel());
		EXPECT_EQ(a.cancelled, 1);
		a.arm_in(1ms);
		LoopCancels moved(std::move(a));
		EXPECT_TRUE(moved.pending());
	}
	EXPECT_EQ(g_allocs.load() - before, 0);
}

namespace {
struct Mover : tw::Hook<tw::Loop, Mover> {
	using Hook::Hook;
	int fired = 0, cancelled = 0;
	void on_timer() { fired++; }
	void on_cancel() { cancelled++; }
};
} // namespace

// The same rules on every owner: both timer types move and never copy. A
// Loop hook moved while pending keeps its deadline (re-armed at its new
// address) and fires once, from there; its on_cancel() runs on cancel()
// and when the Loop is destroyed, not on expiry.
TEST(LoopHook, MovesPendingKeepsItsDeadlineAndRunsOnCancel)
{
	static_assert(std::is_nothrow_move_constructible_v<tw::Timer<tw::Loop>> &&
		      !std::is_copy_constructible_v<tw::Timer<tw::Loop>>);
	static_assert(std::is_nothrow_move_constructible_v<tw::Timer<tw::Wheel>> &&
		      !std::is_copy_constructible_v<tw::Timer<tw::Wheel>>);
	static_assert(std::is_nothrow_move_constructible_v<Mover> && !std::is_copy_constructible_v<Mover>);
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	Mover a(loop), c(loop);
	a.arm_in(5ms);
	Mover b(std::move(a));
	EXPECT_FALSE(a.pending()); // NOLINT(bugprone-use-after-move)
	EXPECT_TRUE(b.pending());
	EXPECT_EQ(b.expiry(), clk.at(5ms));
	EXPECT_EQ(loop.size(), 1u);
	clk.set(5ms);
	loop.run_once(false);
	EXPECT_EQ(b.fired, 1);
	EXPECT_EQ(b.cancelled, 0);
	b.arm_in(5ms);
	EXPECT_TRUE(b.cancel());
	EXPECT_EQ(b.cancelled, 1);
	c.arm_in(1h);
	loop_opt.reset(); // ~Loop cancels c
	EXPECT_EQ(c.cancelled, 1);
	EXPECT_FALSE(c);
	EXPECT_FALSE(c.cancel());
	EXPECT_THROW(c.arm_in(1ms), tw::error);
}

// The rule of every owner, on a stopped Loop too: a pending timer or hook
// moved after stop() stays pending at its new address, and ~Loop cancels
// it there (its cancellation callback runs once). It used to be lost:
// not pending, and no cancellation callback.
TEST(LoopHook, MovedPendingOnAStoppedLoopIsCancelledByTheLoop)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	Mover a(loop);
	int cancelled = 0;
	LoopTimer t(loop, [] {});
	t.on_cancel([&cancelled] { cancelled++; });
	a.arm_in(1h);
	t.arm_at(clk.at(2h));
	loop.stop();
	Mover b(std::move(a));
	LoopTimer u(std::move(t));
	EXPECT_FALSE(a.pending()); // NOLINT(bugprone-use-after-move)
	EXPECT_TRUE(b.pending());
	EXPECT_TRUE(u.pending());
	EXPECT_EQ(u.expiry(), clk.at(2h));
	EXPECT_EQ(loop.size(), 2u);
	loop_opt.reset();
	EXPECT_EQ(b.cancelled, 1);
	EXPECT_EQ(a.cancelled, 0);
	EXPECT_EQ(cancelled, 1);
}

TEST(LoopHook, DestroyedPendingOrInsideItsOwnCallback)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	std::vector<time_point> fired;
	{
		HookedConn gone(loop, &fired);
		gone.arm_in(1ms);
		EXPECT_EQ(loop.size(), 1u);
	}
	EXPECT_EQ(loop.size(), 0u); // the destructor cancelled it
	auto self = std::make_unique<HookedConn>(loop, &fired);
	self->self = &self;
	self->arm_in(2ms);
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(5ms);
	loop.run_once(false);
	EXPECT_EQ(fired.size(), 1u); // only the second one ran
	EXPECT_EQ(self, nullptr);    // and destroyed itself (ASan checks the rest)
	EXPECT_EQ(loop.size(), 0u);
}

TEST(LoopHook, SeveralHooksInOneObjectByTag)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	TwoHooks t(loop);
	static_cast<IdleLoopHook &>(t).arm_in(3ms);
	static_cast<WriteLoopHook &>(t).arm_in(1ms);
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(1ms);
	loop.run_once(false);
	EXPECT_EQ(t.write, 1);
	EXPECT_EQ(t.idle, 0);
	static_cast<WriteLoopHook &>(t).cancel();
	clk.set(3ms);
	loop.run_once(false);
	EXPECT_EQ(t.idle, 1);
	EXPECT_EQ(t.write, 1);
}

TEST(LoopHook, ExceptionsGoToTheLoopHandler)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	Caught caught;
	loop.on_exception(caught.handler());
	std::vector<time_point> fired;
	HookedConn c(loop, &fired);
	c.throw_once = true;
	c.arm_in(1ms);
	loop.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(1ms);
	loop.run_once(false);
	ASSERT_EQ(caught.what.size(), 1u);
	EXPECT_EQ(caught.what[0], "hook threw");
	c.arm_in(1ms); // still usable
	loop.run_once(false);
	clk.set(2ms);
	loop.run_once(false);
	EXPECT_EQ(fired.size(), 2u);
}

// ~Loop drops a pending hook uncalled, and leaves every hook safe: the
// hook keeps the control block, is false, and arming it throws. Beside
// LoopTimers, whose cancellation callbacks still run (the loop tells the
// two kinds apart by the pointer each stores, not by its callback).
TEST(LoopHook, SafeAfterTheLoopIsDestroyed)
{
	FakeClock clk;
	std::vector<time_point> fired;
	int cancelled = 0;
	std::unique_ptr<HookedConn> pending, idle;
	tw::Timer<tw::Loop> beside;
	{
		MAKE_LOOP(loop, clk.options(1ms));
		pending = std::make_unique<HookedConn>(loop, &fired);
		idle = std::make_unique<HookedConn>(loop, &fired);
		pending->arm_in(5ms);
		beside = loop.after(5ms, [] {});
		beside.on_cancel([&] { cancelled++; });
	}
	EXPECT_TRUE(fired.empty());
	EXPECT_EQ(cancelled, 1);
	for (HookedConn *h : {pending.get(), idle.get()}) {
		EXPECT_FALSE(static_cast<bool>(*h));
		EXPECT_FALSE(h->pending());
		EXPECT_FALSE(h->cancel());
		EXPECT_THROW(h->arm_in(1ms), tw::error);
		EXPECT_THROW(h->arm_at(clk.at(1ms)), tw::error);
	}
	pending.reset();
	idle.reset(); // the last owner frees the control block (ASan/LSan check)
}

TEST(LoopHook, ArmingWhileTheLoopIsStoppedOrClosing)
{
	FakeClock clk;
	std::vector<time_point> fired;
	MAKE_LOOP(loop, clk.options(1ms));
	HookedConn c(loop, &fired);
	loop.stop();
	try {
		c.arm_in(1ms);
		ADD_FAILURE() << "armed on a stopped loop";
	} catch (const std::system_error &e) {
		EXPECT_EQ(e.code().value(), ESHUTDOWN);
	}
	EXPECT_FALSE(c.pending());
}

TEST(LoopHook, FromAMovedFromLoopThrows)
{
	FakeClock clk;
	MAKE_LOOP(loop, clk.options(1ms));
	Loop other(std::move(loop));
	std::vector<time_point> fired;
	EXPECT_THROW(HookedConn(loop, &fired), tw::error);
	HookedConn c(other, &fired); // the moved-to loop works
	c.arm_in(1ms);
	other.run_once(false); // an arm by delay counts from the loop's next reading: let it place it
	clk.set(1ms);
	other.run_once(false);
	EXPECT_EQ(fired.size(), 1u);
}

// ~Loop hands back the timers one by one; a tw::Timer<tw::Loop>'s cancellation
// callback run there destroys hooks that are still pending (their
// destructors cancel them inside the C loop's drain) and one already
// handed back.
TEST(LoopHook, DestroyedByACancellationCallbackDuringLoopDestruction)
{
	FakeClock clk;
	std::vector<time_point> fired;
	std::vector<std::unique_ptr<HookedConn>> hooks;
	int cancelled = 0;
	std::vector<tw::Timer<tw::Loop>> timers;
	{
		MAKE_LOOP(loop, clk.options(1ms));
		for (int i = 0; i < 8; i++) {
			hooks.push_back(std::make_unique<HookedConn>(loop, &fired));
			hooks.back()->arm_in(std::chrono::milliseconds(1 + i * 300)); // both wheels' levels
			timers.push_back(loop.after(std::chrono::milliseconds(2 + i * 300), [] {}));
			timers.back().on_cancel([&] {
				cancelled++;
				hooks.clear();
			});
		}
	}
	EXPECT_EQ(cancelled, 8);
	EXPECT_TRUE(hooks.empty());
	EXPECT_TRUE(fired.empty());
}
