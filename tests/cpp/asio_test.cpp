// asio_test - tw::AsioHost (<twheel/asio.hpp>) on a real io_context: no
// timer before its deadline on CLOCK_MONOTONIC, each exactly once, re-arms
// and cancels from callbacks, an earlier timer moves the steady_timer
// earlier, io_context::run() returns once the wheel is empty (no wait left
// outstanding), shutdown hands timers back, and a wait still outstanding
// when the host is destroyed does nothing.
#include <twheel/asio.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <time.h>
#include <vector>

using namespace std::chrono_literals;

namespace {

std::uint64_t mono_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

struct Rec {
	tw_timer t{};
	std::uint64_t deadline = 0;
	std::uint64_t fired_at = 0;
	int fired = 0;
	int rearms = 0;             // re-arm itself this many more times (5 ms)
	Rec *victim = nullptr;      // cancel when firing
	tw::AsioHost *host = nullptr;

	static void cb(tw_timer *t)
	{
		Rec *r = tw_container_of(t, Rec, t);
		r->fired_at = mono_ns();
		r->fired++;
		EXPECT_GE(r->fired_at, r->deadline) << "fired early";
		if (r->victim) {
			EXPECT_EQ(r->host->del(r->victim->t), 1);
		}
		if (r->rearms > 0) {
			r->rearms--;
			r->fired = 0;
			r->deadline = mono_ns() + 5000000;
			EXPECT_EQ(r->host->mod(r->t, 5ms), 0);
		}
	}
	void arm(tw::AsioHost &h, std::chrono::milliseconds d)
	{
		host = &h;
		deadline = mono_ns() + static_cast<std::uint64_t>(d.count()) * 1000000u;
		ASSERT_EQ(h.add(t, d), 0);
	}
	Rec() { tw_timer_init(&t, cb); }
};

TEST(AsioHost, NeverEarlyEachOnceAndRunReturnsWhenEmpty)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	std::vector<Rec> r(200);
	for (std::size_t i = 0; i < r.size(); i++)
		r[i].arm(h, std::chrono::milliseconds(1 + (i * 7) % 60));
	const auto t0 = mono_ns();
	io.run(); // returns only once nothing is outstanding: the wheel emptied
	EXPECT_LT(mono_ns() - t0, 5000000000u);
	for (auto &x : r) {
		EXPECT_EQ(x.fired, 1);
		EXPECT_LE(x.fired_at - x.deadline, 200000000u) << "grossly late";
	}
	EXPECT_EQ(twheel_count(twheel_host_wheel(h.get())), 0u);
}

TEST(AsioHost, CallbacksRearmAndCancel)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec a, b, victim;
	a.rearms = 3;
	b.victim = &victim;
	a.arm(h, 2ms);
	b.arm(h, 3ms);
	victim.arm(h, 40ms);
	io.run();
	EXPECT_EQ(a.fired, 1);
	EXPECT_EQ(a.rearms, 0);
	EXPECT_EQ(b.fired, 1);
	EXPECT_EQ(victim.fired, 0);
}

TEST(AsioHost, EarlierTimerMovesTheWaitEarlier)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec late, early;
	late.arm(h, 300ms);
	early.arm(h, 5ms);
	io.run_for(100ms); // the early one must not wait for the late one's wait
	EXPECT_EQ(early.fired, 1);
	EXPECT_EQ(late.fired, 0);
	EXPECT_EQ(h.del(late.t), 1);
	io.restart();
	const auto t0 = mono_ns();
	io.run(); // the cancel emptied the wheel: nothing outstanding
	EXPECT_LT(mono_ns() - t0, 100000000u);
	EXPECT_EQ(late.fired, 0);
}

TEST(AsioHost, WaitOutstandingAtDestructionDoesNothing)
{
	boost::asio::io_context io;
	Rec r;
	{
		tw::AsioHost h(io);
		r.arm(h, 1ms);
		std::this_thread::sleep_for(20ms); // due, but the io_context has not run
	}                                          // destroyed with its wait outstanding
	io.run(); // the aborted wait must not touch the destroyed host (ASan would say so)
	EXPECT_EQ(r.fired, 0);
	EXPECT_FALSE(tw_timer_pending(&r.t));
}

TEST(AsioHost, ShutdownHandsBackPendingTimersOnce)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	std::vector<Rec> r(10);
	for (auto &x : r)
		x.arm(h, 10s);
	int handed = 0;
	ASSERT_EQ(h.shutdown([](tw_timer *t, void *arg) {
		EXPECT_FALSE(tw_timer_pending(t));
		++*static_cast<int *>(arg);
	}, &handed), 0);
	EXPECT_EQ(handed, 10);
	EXPECT_EQ(h.get(), nullptr);
	EXPECT_EQ(h.add(r[0].t, 1ms), -EINVAL);
	EXPECT_EQ(h.del(r[0].t), -EINVAL);
	EXPECT_EQ(h.shutdown(nullptr, nullptr), -EINVAL);
	io.run(); // nothing outstanding
	for (auto &x : r)
		EXPECT_EQ(x.fired, 0);
}

TEST(AsioHost, StrandOfAMultiThreadedContext)
{
	boost::asio::io_context io;
	auto strand = boost::asio::make_strand(io);
	tw::AsioHost h(strand);
	std::vector<Rec> r(50);
	boost::asio::post(strand, [&] {
		for (std::size_t i = 0; i < r.size(); i++)
			r[i].arm(h, std::chrono::milliseconds(1 + i % 20));
	});
	std::thread other([&] { io.run(); });
	io.run();
	other.join();
	for (auto &x : r)
		EXPECT_EQ(x.fired, 1);
}

TEST(AsioHost, ChronoIsRoundedUpAndSaturated)
{
	boost::asio::io_context io;
	tw::AsioHost h(io);
	Rec r;
	r.host = &h;
	// a negative delay is 0: due at once, never before the call
	r.deadline = mono_ns();
	ASSERT_EQ(h.add(r.t, -5ms), 0);
	io.run();
	EXPECT_EQ(r.fired, 1);
	// a huge one saturates: pending, far away, no busy loop
	ASSERT_EQ(h.add(r.t, std::chrono::hours::max()), 0);
	EXPECT_EQ(io.run_for(30ms), 0u);
	EXPECT_EQ(r.fired, 1);
	EXPECT_EQ(h.del(r.t), 1);
}

} // namespace

// Destroyed from one of its timers' callbacks with no timer left pending:
// the wheel is shut down when that run returns (LeakSanitizer sees no
// wheel left behind).
TEST(AsioHost, DestroyedFromItsOwnCallback)
{
	boost::asio::io_context io;
	struct Killer {
		tw_timer t{};
		std::unique_ptr<tw::AsioHost> *host = nullptr;
		tw_timer *far = nullptr;
		int fired = 0;
	} k;
	auto host = std::make_unique<tw::AsioHost>(io);
	k.host = &host;
	tw_timer_init(&k.t, [](tw_timer *t) {
		Killer *k = tw_container_of(t, Killer, t);
		k->fired++;
		EXPECT_EQ((*k->host)->del(*k->far), 1);
		k->host->reset();
	});
	Rec far;
	k.far = &far.t;
	far.arm(*host, 1h);
	ASSERT_EQ(host->add(k.t, 1ms), 0);
	io.run_for(10s); // returns once no work is left: at once when the host is gone
	EXPECT_EQ(k.fired, 1);
	EXPECT_EQ(host, nullptr);
	EXPECT_FALSE(tw_timer_pending(&far.t));
	EXPECT_EQ(far.fired, 0);
	io.run(); // nothing outstanding
}

namespace {

// An object that owns an AsioHost and its timers, and deletes itself from
// one of them ("delete this"). With @tidy its destructor cancels its
// timers first, as ~AsioHost from a callback requires.
struct Conn {
	tw_timer bye{}; // first: a tw_timer * is a Conn *
	tw_timer idle{};
	tw::AsioHost host;
	bool tidy;
	int *gone;
	Conn(boost::asio::io_context &io, bool tidy, int *gone) : host(io), tidy(tidy), gone(gone)
	{
		tw_timer_init(&bye, [](tw_timer *t) { delete reinterpret_cast<Conn *>(t); });
		tw_timer_init(&idle, [](tw_timer *) {});
	}
	~Conn()
	{
		if (tidy)
			host.del(idle);
		++*gone;
	}
};

void delete_this(bool tidy)
{
	boost::asio::io_context io;
	int gone = 0;
	auto *c = new Conn(io, tidy, &gone);
	ASSERT_EQ(c->host.add(c->bye, 1ms), 0);
	ASSERT_EQ(c->host.add(c->idle, 1h), 0);
	io.run(); // returns once the host is gone
	EXPECT_EQ(gone, 1);
}

} // namespace

// The idiom with the owner's timers cancelled in its destructor: ASan and
// LSan clean, io_context::run() returns.
TEST(AsioHost, DeleteThisFromACallbackAfterCancellingItsTimers)
{
	delete_this(true);
}

// The idiom with a timer still pending: the deferred shutdown used to
// unlink it from the freed object (ASan: heap-use-after-free). A timer
// pending then cannot be unlinked from inside the callback, so ~AsioHost
// refuses loudly.
TEST(AsioHostDeathTest, DeleteThisFromACallbackWithATimerPendingIsRefused)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_DEATH(delete_this(false), "destroyed from one of its callbacks with 1 timer\\(s\\) pending");
}

// shutdown()'s fn destroys the AsioHost (its last timer handed back): the
// shutdown finishes on the state it holds (it wrote to the destroyed
// AsioHost: ASan heap-use-after-free).
TEST(AsioHost, ShutdownWhoseFnDestroysTheHost)
{
	boost::asio::io_context io;
	auto host = std::make_unique<tw::AsioHost>(io);
	Rec r;
	r.arm(*host, 1h);
	struct Ctx {
		std::unique_ptr<tw::AsioHost> *host;
		int handed;
	} ctx{&host, 0};
	EXPECT_EQ(host->shutdown(
			  [](tw_timer *, void *arg) {
				  auto *c = static_cast<Ctx *>(arg);
				  c->handed++;
				  c->host->reset();
			  },
			  &ctx),
		  0);
	EXPECT_EQ(ctx.handed, 1);
	EXPECT_EQ(host, nullptr);
	EXPECT_FALSE(tw_timer_pending(&r.t));
	io.run(); // nothing outstanding
}
